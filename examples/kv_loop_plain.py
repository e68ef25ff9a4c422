#!/usr/bin/env python3
"""kv_loop_plain.py: a hand-written KV-cache generation loop as people write it: greedy argmax on
the GPU, no host sync per step, and default-domain NVTX ranges named the usual way
(torch.cuda.nvtx: "prefill", "decode" around the steps, "decode_step" per token), no warm-up
marked. llmprof's default stage mapping takes them as prefill / decode_all / decode_step and
leaves the first (cold) iteration out (docs/nvtx.md); llmprof_auto sees the ranges and pushes
none of its own, but still reports the model's shape and token counts. Random weights from a
config (plain_common.py); CUDA-event timing at the range boundaries; the self-check JSON lines of
docs/metrics.md.

    llmprof run --mode light -- python3 examples/kv_loop_plain.py --model llama-3.2-1b
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plain_common  # noqa: E402


class _NoRanges(object):
    range_push = range_pop = staticmethod(lambda *a: None)


def iteration(model, prompt, new_tokens, torch, ranges=True, steps=None):
    """(prefill_ms, decode_ms, decode steps) of one generation; with steps (a dict), also each
    decode forward's CUDA-event time (steps["step_ms"]: the model's call, not the argmax) and the
    decode window's time before the first forward and after the last (head_ms, tail_ms), and the
    host's wall clock (time.time_ns, CLOCK_REALTIME as llmprof's trace) right after the prefill's
    start event and right before its end event (prefill_host_ns), and around each forward's events
    (step_host_ns): where the program's timing spends host time outside the model's hooks."""
    nvtx = torch.cuda.nvtx if ranges else _NoRanges
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    marks = []
    ev[0].record()
    t0 = time.time_ns()
    nvtx.range_push("prefill")
    out = model(input_ids=prompt, use_cache=True)
    nxt = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
    nvtx.range_pop()
    t1 = time.time_ns()
    ev[1].record()
    host = [(t0, t1)]
    past = out.past_key_values
    nvtx.range_push("decode")
    for s in range(new_tokens - 1):
        nvtx.range_push("decode_step")
        if steps is not None:
            marks.append((torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)))
            marks[-1][0].record()
            host.append([time.time_ns()])
        out = model(input_ids=nxt, past_key_values=past, use_cache=True)
        if steps is not None:
            host[-1].append(time.time_ns())
            marks[-1][1].record()
        past = out.past_key_values
        nxt = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
        nvtx.range_pop()
    nvtx.range_pop()
    ev[2].record()
    ev[2].synchronize()
    if steps is not None and marks:
        steps["step_ms"] = [a.elapsed_time(b) for a, b in marks]
        steps["head_ms"] = ev[1].elapsed_time(marks[0][0])
        steps["tail_ms"] = marks[-1][1].elapsed_time(ev[2])
        steps["prefill_host_ns"] = list(host[0])
        steps["step_host_ns"] = [list(h) for h in host[1:]]
    return ev[0].elapsed_time(ev[1]), ev[1].elapsed_time(ev[2]), new_tokens - 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    plain_common.add_args(p)
    p.add_argument("--compile", default="off", choices=["off", "fullgraph", "twice"],
                   help="fullgraph: torch.compile(model, fullgraph=True), the model's hooks inside; "
                        "twice: the model compiled twice (fullgraph), the loop on the first wrapper")
    p.add_argument("--ranges", default="on", choices=["on", "off"],
                   help="off: no NVTX range (llmprof_auto then pushes the stages from the model's hooks)")
    args = p.parse_args()
    plain_common.check_args(p, args)
    import torch
    import transformers
    plain_common.need_cuda(torch)
    model, cfg = plain_common.build_model(args, torch, transformers)
    if args.compile == "fullgraph":
        model = torch.compile(model, fullgraph=True)
    elif args.compile == "twice":
        first = torch.compile(model, fullgraph=True)
        _second = torch.compile(model, fullgraph=True, dynamic=True)  # kept alive, never called
        model = first
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    prompt = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt_len), generator=gen).to("cuda")
    with torch.inference_mode():
        gens = [{} if args.step_times else None for _ in range(args.iters)]
        results = [iteration(model, prompt, args.new_tokens, torch, args.ranges == "on", g) for g in gens]
    step_ms = [g["step_ms"] for g in gens] if args.step_times else None
    edges = [{"decode_head_ms": round(g["head_ms"], 5), "decode_tail_ms": round(g["tail_ms"], 5),
              "prefill_host_ns": g["prefill_host_ns"], "step_host_ns": g["step_host_ns"]}
             for g in gens] if args.step_times else None
    plain_common.report(results, args.batch, {
        "model": args.model_config or args.model, "batch": args.batch,
        "prompt_len": args.prompt_len, "new_tokens": args.new_tokens, "compile": args.compile,
        "torch": torch.__version__, "transformers": transformers.__version__},
        step_ms=step_ms, line_extra=edges)
    return 0


if __name__ == "__main__":
    sys.exit(main())
