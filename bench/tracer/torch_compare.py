#!/usr/bin/env python3
"""torch_compare.py: a small transformer-ish decode loop for checking llmprof's tracer against
PyTorch's own profiler (Kineto) and for measuring tracer overhead (bench/tracer/overhead.sh).

  --mode plain   run the loop; the measured steps sit inside an NVTX range "measure", each step in
                 "step" (run it under the tracer: CUDA_INJECTION64_PATH + NVTX_INJECTION64_PATH)
  --mode kineto  the same loop inside torch.profiler (CPU + CUDA activities); writes the Chrome
                 trace (--trace) and prints per-kernel totals
Prints one JSON object on the last line of stdout: mode, steps, step_ms_median, step_ms (list),
and for kineto: kernels {name: {"count": n, "total_us": t}}.
"""
import argparse
import gzip
import json
import statistics
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.out = torch.nn.Linear(d, d, bias=False)
        self.ln2 = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d, bias=False)
        self.down = torch.nn.Linear(4 * d, d, bias=False)

    def forward(self, x, k_cache, v_cache):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).split(d, dim=-1)
        q = q.view(b, t, self.heads, -1).transpose(1, 2)
        k = torch.cat([k_cache, k.view(b, t, self.heads, -1).transpose(1, 2)], dim=2)
        v = torch.cat([v_cache, v.view(b, t, self.heads, -1).transpose(1, 2)], dim=2)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
        x = x + self.down(F.gelu(self.up(self.ln2(x))))
        return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["plain", "kineto"], default="plain")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--trace", default="kineto_trace.json")
    a = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    dt = torch.bfloat16
    heads = a.dim // 64
    blocks = torch.nn.ModuleList([Block(a.dim, heads) for _ in range(a.layers)]).to(dev, dt).eval()
    kc = [torch.randn(a.batch, heads, a.context, 64, device=dev, dtype=dt) for _ in blocks]
    vc = [torch.randn(a.batch, heads, a.context, 64, device=dev, dtype=dt) for _ in blocks]
    x0 = torch.randn(a.batch, 1, a.dim, device=dev, dtype=dt)

    def step():
        x = x0
        for i, blk in enumerate(blocks):
            torch.cuda.nvtx.range_push("layer")
            x = blk(x, kc[i], vc[i])
            torch.cuda.nvtx.range_pop()
        return x

    times = []

    def run_steps(n, record):
        for _ in range(n):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            torch.cuda.nvtx.range_push("step")
            step()
            torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()
            if record:
                times.append((time.perf_counter() - t0) * 1e3)

    with torch.no_grad():
        run_steps(a.warmup, False)
        result = {"mode": a.mode, "steps": a.steps}
        if a.mode == "kineto":
            acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            with torch.profiler.profile(activities=acts) as prof:
                torch.cuda.nvtx.range_push("measure")
                run_steps(a.steps, True)
                torch.cuda.nvtx.range_pop()
            prof.export_chrome_trace(a.trace)
            opener = gzip.open if a.trace.endswith(".gz") else open
            with opener(a.trace, "rt") as f:
                ev = json.load(f)["traceEvents"]
            kernels = {}
            for e in ev:
                if e.get("cat") == "kernel" and e.get("ph") == "X":
                    k = kernels.setdefault(e["name"], {"count": 0, "total_us": 0.0})
                    k["count"] += 1
                    k["total_us"] += float(e["dur"])
            result["kernels"] = kernels
        else:
            torch.cuda.nvtx.range_push("measure")
            run_steps(a.steps, True)
            torch.cuda.nvtx.range_pop()
    result["step_ms"] = [round(t, 4) for t in times]
    result["step_ms_median"] = statistics.median(times)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
