#!/usr/bin/env python3
"""torch_opcost.py: what the injected tracer costs eager PyTorch per operation, measured in one short
process (bench/tracer/README.md run 22). Run the same script plain and under each injection
configuration (bench/tracer/cost_call.sh `opcost`); the differences are the tracer's cost.

Sections (each: --batches batches of --per-batch calls timed on the CPU clock, the GPU waited for
outside the timed part; the median and 10th percentile over the batches, in ns per call):
  py            an empty Python call (the loop's own cost)
  device        torch.cuda.current_device()
  add           x.add_(1) on 256 floats: one elementwise launch through TensorIterator
  empty         torch.empty(1024) on the GPU and its release (the caching allocator)
  linear        a bf16 [1, 2048] x [2048, 2048]^T linear (cuBLAS: launches with attributes)
  event         torch.cuda.Event(enable_timing=True).record() (what a program's own timing does)
  nvtx          an LLM-domain push/pop through llmprof_nvtx (python/), no GPU work
Then --steps synthetic decode steps (16 "layers" of norm, four linears, an activation and
residual adds, ~26 launches each; an argmax and .item() at the end, as HF's stopping criteria):
host time per step, p5 / p10 / p50, with its range's push and pop (step_ms) and without them
(inner_ms), and the push and pop's own time (push_pop_us_p50). Every step is a `decode_step` range inside `decode_all`, so a
sampled tracer schedules them; the sections run inside the second step range, left open (with
LLMPROF_TRACE_SAMPLE=every=1000000,first=0,pick=first: a skipped unit), as launch_cost --skip does.
Prints one JSON line.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import llmprof_nvtx as nv  # noqa: E402


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batches", type=int, default=30)
    p.add_argument("--per-batch", type=int, default=200)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--tag", default="")
    a = p.parse_args()
    import torch
    dev = "cuda"
    x = torch.zeros(256, device=dev)
    h0 = torch.randn(1, 2048, device=dev, dtype=torch.bfloat16)
    w = torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16) * 0.02
    wu = torch.randn(4096, 2048, device=dev, dtype=torch.bfloat16) * 0.02
    wd = torch.randn(2048, 4096, device=dev, dtype=torch.bfloat16) * 0.02
    wl = torch.randn(8192, 2048, device=dev, dtype=torch.bfloat16) * 0.02
    g = torch.ones(2048, device=dev, dtype=torch.bfloat16)
    F = torch.nn.functional

    def norm(h):
        v = h.float().pow(2).mean(-1, keepdim=True)
        return (h.float() * torch.rsqrt(v + 1e-6)).to(h.dtype) * g

    def step(h):
        for _ in range(16):
            r = h
            n = norm(h)
            q = F.linear(n, w)
            o = F.linear(q, w)
            h = r + o
            r = h
            n = norm(h)
            u = F.silu(F.linear(n, wu))
            h = r + F.linear(u, wd)
        return int(F.linear(norm(h), wl).argmax(-1).item())

    def ev():
        e = torch.cuda.Event(enable_timing=True)
        e.record()

    sections = [
        ("py", lambda: None),
        ("device", torch.cuda.current_device),
        ("add", lambda: x.add_(1)),
        ("empty", lambda: torch.empty(1024, device=dev)),
        ("linear", lambda: F.linear(h0, w)),
        ("event", ev),
        ("nvtx", lambda: (nv.push("op"), nv.pop())),
    ]
    with torch.inference_mode():
        for _ in range(20):  # warm-up: cuBLAS handles, kernels, the allocator's blocks
            step(h0)
        for _, fn in sections:
            for _ in range(50):
                fn()
        torch.cuda.synchronize()
        nv.push("decode_all")
        nv.push("decode_step")  # recorded (the schedule's first)
        nv.pop()
        nv.push("decode_step")  # the sections run in this one
        out = {"tag": a.tag, "batches": a.batches, "per_batch": a.per_batch}
        for name, fn in sections:
            per = []
            for _ in range(a.batches):
                t0 = time.perf_counter_ns()
                for _ in range(a.per_batch):
                    fn()
                t1 = time.perf_counter_ns()
                torch.cuda.synchronize()
                per.append((t1 - t0) / a.per_batch)
            out[name + "_ns"] = round(quantile(per, 0.5), 1)
            out[name + "_ns_p10"] = round(quantile(per, 0.1), 1)
        nv.pop()
        steps, inner, edges = [], [], []
        for _ in range(a.steps):
            t0 = time.perf_counter_ns()  # the range's push and pop included, as in a program
            nv.push("decode_step")
            t1 = time.perf_counter_ns()
            step(h0)
            t2 = time.perf_counter_ns()
            nv.pop()
            t3 = time.perf_counter_ns()
            steps.append((t3 - t0) / 1e6)
            inner.append((t2 - t1) / 1e6)
            edges.append((t1 - t0 + t3 - t2) / 1e3)
        nv.pop()
    for q in (0.05, 0.1, 0.5):
        out["step_ms_p%d" % int(q * 100)] = round(quantile(steps, q), 4)
    for q in (0.05, 0.1, 0.5):  # inside the range: without its push and pop
        out["inner_ms_p%d" % int(q * 100)] = round(quantile(inner, q), 4)
    out["push_pop_us_p50"] = round(quantile(edges, 0.5), 1)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
