#!/usr/bin/env python3
"""kernel_truth.py: does a kernel run differently when its module was loaded with CUPTI attached?
(issue 24, bench/tracer/README.md run 39)

An exact trace loads every kernel with CUPTI attached; the default (bursts) detaches CUPTI for the
program's `warmup` range, so there its kernels load without it. Run 38 saw small kernels read 1-4%
apart between the two. This program measures the same kernels without any profiler reading: each
op of a llama-3.2-1b decode layer (bf16, batch 1: RMSNorm, rotary, q/k/v/o and MLP projections,
softmax over a 640-token context) is captured REPS times into its own CUDA graph inside the
`warmup` range (so each kernel loads there), then every `decode_step` replays each graph between
two CUDA events: the GPU runs the REPS copies back to back, so elapsed / REPS is the op's kernels
plus their gaps, whatever a tracer reads. Run it plain and under the tracer in several modes; the
events of the same op then say whether the kernels themselves changed (a profiler's timestamps
can not), and `sample_check.py truth` sets the tracer's own kernel readings beside them.

Ranges (domain LLM): `warmup`, then `decode_all` with `decode_step`s, each op replay inside a range
named after the op. Output: one JSON line per step {"step": i, "op_ms": {op: ms per rep}}, then a
summary line.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from llmprof_nvtx import llm_range  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--reps", type=int, default=20, help="copies of each op in its graph")
    p.add_argument("--ctx", type=int, default=640, help="context length of the softmax")
    a = p.parse_args()
    if a.steps < 1 or a.reps < 1 or a.ctx < 1:
        p.error("--steps, --reps and --ctx must be >= 1")

    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    dev, bf = "cuda", torch.bfloat16
    H, I, NH, KV, D = 2048, 8192, 32, 8, 64
    x = torch.randn(1, 1, H, device=dev, dtype=bf)
    wn = torch.randn(H, device=dev, dtype=bf)
    wq = torch.randn(NH * D, H, device=dev, dtype=bf) / 45
    wk = torch.randn(KV * D, H, device=dev, dtype=bf) / 45
    wv = torch.randn(KV * D, H, device=dev, dtype=bf) / 45
    wo = torch.randn(H, NH * D, device=dev, dtype=bf) / 45
    wg = torch.randn(I, H, device=dev, dtype=bf) / 45
    wu = torch.randn(I, H, device=dev, dtype=bf) / 45
    wd = torch.randn(H, I, device=dev, dtype=bf) / 90
    q = torch.randn(1, NH, 1, D, device=dev, dtype=bf)
    cos = torch.randn(1, 1, 1, D, device=dev, dtype=bf)
    sin = torch.randn(1, 1, 1, D, device=dev, dtype=bf)
    scores = torch.randn(1, NH, 1, a.ctx, device=dev, dtype=bf)

    def rmsnorm():  # transformers' LlamaRMSNorm
        h = x.to(torch.float32)
        v = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(v + 1e-5)
        return wn * h.to(bf)

    def rotary():  # apply_rotary_pos_emb on q
        x1, x2 = q[..., : D // 2], q[..., D // 2:]
        return q * cos + torch.cat((-x2, x1), dim=-1) * sin

    def qkv():
        return F.linear(x, wq), F.linear(x, wk), F.linear(x, wv)

    def oproj():
        return F.linear(x.view(1, 1, NH * D), wo)

    def mlp():
        return F.linear(F.silu(F.linear(x, wg)) * F.linear(x, wu), wd)

    def softmax():
        return F.softmax(scores.float(), dim=-1).to(bf)

    ops = dict(rmsnorm=rmsnorm, rotary=rotary, qkv=qkv, oproj=oproj, mlp=mlp, softmax=softmax)
    graphs = {}
    with llm_range("warmup", payload=1):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for fn in ops.values():
                for _ in range(3):
                    fn()
        torch.cuda.current_stream().wait_stream(s)
        for name, fn in ops.items():
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(a.reps):
                    fn()
            graphs[name] = g
        for g in graphs.values():
            g.replay()
        torch.cuda.synchronize()

    evs = {n: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for n in ops}
    sums = {n: [] for n in ops}
    with llm_range("decode_all", payload=a.steps):
        for i in range(a.steps):
            with llm_range("decode_step", payload=i):
                for name, g in graphs.items():
                    e0, e1 = evs[name]
                    with llm_range(name):
                        e0.record()
                        g.replay()
                        e1.record()
            torch.cuda.synchronize()
            row = {n: evs[n][0].elapsed_time(evs[n][1]) / a.reps for n in ops}
            for n, v in row.items():
                sums[n].append(v)
            print(json.dumps({"step": i, "op_ms": row}))
    med = {n: sorted(v)[len(v) // 2] for n, v in sums.items()}
    print(json.dumps({"summary": True, "reps": a.reps, "steps": a.steps, "median_op_ms": med,
                      "gpu": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main()
