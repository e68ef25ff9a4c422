#!/usr/bin/env python3
"""hf_generate_plain.py: a Hugging Face program as people write it, with nothing for llmprof: no
NVTX range, no warm-up marked. It builds a random-weight model from a config (no download) and
calls model.generate() --iters times; it times itself with CUDA events from forward hooks
(plain_common.py) and prints the self-check JSON lines of docs/metrics.md.

    llmprof run --mode light -- python3 examples/hf_generate_plain.py --model llama-3.2-1b
    llmprof run --mode light -- python3 examples/hf_generate_plain.py --model qwen1.5-moe-a2.7b
    llmprof run --mode light run.auto_warmup=1 -- python3 examples/hf_generate_plain.py --cache static
    llmprof run --mode light -- python3 examples/hf_generate_plain.py --compile forward

--compile: the two ways people compile a Hugging Face model for generate(). `module` calls
generate() on torch.compile(model), the wrapper, whose generate() is the model's own and runs the
model uncompiled (a common surprise); `forward` replaces model.forward by torch.compile(model.forward)
(transformers' documentation), so each forward is compiled while the model's call and its hooks
stay eager.

Under `llmprof run` (run.auto_stages, the default) python/llmprof_auto turns each generate() into
prefill / decode_all / decode_step ranges and reports the model's shape and token counts, so the
report has TTFT, tokens/s and MFU/MBU with no model= or inputs.* (docs/nvtx.md).

bench/tracer/cost_call.sh's step-level turns (LLMPROF_BENCH_TURN_STEPS=K beside
LLMPROF_BENCH_TURN): after the first generation the process stops before every K-th decode forward
(plain_common.ForwardClock) and, with --step-times, each line also has step_full_ms (a decode
forward's start to the next one's: HF's logits processing and stopping criteria included, the
stops not) and turn_steps; decode_ms then includes the stops.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plain_common  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    plain_common.add_args(p)
    p.add_argument("--compile", default="off", choices=["off", "module", "forward"],
                   help="module: generate() on torch.compile(model); forward: model.forward = "
                        "torch.compile(model.forward)")
    args = p.parse_args()
    plain_common.check_args(p, args)
    import torch
    import transformers
    plain_common.need_cuda(torch)
    model, cfg = plain_common.build_model(args, torch, transformers)
    clock = plain_common.ForwardClock(torch, model)
    runner = model
    if args.compile == "module":
        runner = torch.compile(model)
    elif args.compile == "forward":
        model.forward = torch.compile(model.forward)
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    prompt = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt_len), generator=gen).to("cuda")
    mask = torch.ones_like(prompt)
    cache = {"cache_implementation": "static"} if args.cache == "static" else {}
    results = []
    step_ms = []
    step_full_ms = []
    step_counts = []
    with torch.inference_mode():
        for _ in range(args.iters):
            clock.start()
            runner.generate(input_ids=prompt, attention_mask=mask, do_sample=False,
                           max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                           pad_token_id=0, **cache)
            r = clock.finish()
            if r is None:
                sys.stderr.write("error: generate() ran fewer than two forwards\n")
                return 1
            results.append(r)
            step_ms.append(clock.step_ms)
            step_full_ms.append(clock.step_full_ms)
            step_counts.append(clock.step_counts)
    plain_common.report(results, args.batch, {
        "model": args.model_config or args.model, "batch": args.batch,
        "prompt_len": args.prompt_len, "new_tokens": args.new_tokens, "cache": args.cache, "sdpa": args.sdpa,
        "compile": args.compile,
        "params": sum(x.numel() for x in model.parameters()),
        "torch": torch.__version__, "transformers": transformers.__version__},
        step_ms if args.step_times else None, step_full_ms if args.step_times else None,
        clock.turn_k, step_counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
