#!/usr/bin/env python3
"""overhead.py: what python/llmprof_auto adds per decode step, measured inside one process so that
clocks, GPU boost and host speed are the same for both sides (run-to-run noise on an eager 1B
model is larger than the effect: 15 to 23 ms/step between runs on one H100).

    llmprof run --mode light -- python3 bench/auto_stages/overhead.py --model llama-3.2-1b
    PYTHONPATH=python/llmprof_auto/site python3 bench/auto_stages/overhead.py   # without the tracer

It needs the shim started (the sitecustomize above). Generations alternate between the shim on
(its forward hooks attached, generate() wrapped: prefill / decode_all / decode_step ranges) and
off (hooks removed, the original generate()), in ABBA order, --pairs times each; each generation's
decode is timed with CUDA events around it (per step = decode / steps). Prints one JSON line per
generation and a summary: the median ms/step on and off and their ratio.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import plain_common  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    plain_common.add_args(p)
    p.add_argument("--pairs", type=int, default=6)
    args = p.parse_args()
    import llmprof_auto
    if not llmprof_auto.installed():
        sys.stderr.write("error: llmprof_auto is not running (run under `llmprof run`, or with "
                         "PYTHONPATH=python/llmprof_auto/site)\n")
        return 2
    import torch
    import transformers
    from transformers.generation.utils import GenerationMixin
    plain_common.need_cuda(torch)
    model, cfg = plain_common.build_model(args, torch, transformers)
    orig = getattr(GenerationMixin.generate, "_llmprof_auto_orig", GenerationMixin.generate)
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    prompt = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt_len), generator=gen).to("cuda")
    kw = dict(input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
              max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, pad_token_id=0)
    steps = args.new_tokens - 1
    per = {"on": [], "off": []}
    order = (["on", "off", "off", "on"] * ((args.pairs + 1) // 2))[:2 * args.pairs]
    with torch.inference_mode():
        for i, side in enumerate(["on", "off"] + order):   # one warm-up generation each
            if side == "on":
                llmprof_auto.attach(model)
                call = model.generate
            else:
                llmprof_auto.detach(model)
                call = lambda **k: orig(model, **k)  # noqa: E731
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            a.record()
            call(**kw)
            b.record()
            b.synchronize()
            ms = a.elapsed_time(b) / steps
            if i >= 2:
                per[side].append(ms)
                print(json.dumps({"generation": i - 2, "shim": side, "ms_per_step": ms}), flush=True)
    on, off = statistics.median(per["on"]), statistics.median(per["off"])
    print(json.dumps({"summary": True, "model": args.model, "batch": args.batch,
                      "prompt_len": args.prompt_len, "new_tokens": args.new_tokens,
                      "pairs": args.pairs, "ms_per_step_on": on, "ms_per_step_off": off,
                      "ratio": on / off, "torch": torch.__version__,
                      "transformers": transformers.__version__,
                      "gpu": torch.cuda.get_device_name()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
