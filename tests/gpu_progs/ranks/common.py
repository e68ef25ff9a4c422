"""common.py: the per-rank work of the issue-17 GPU checks (ranks_gloo.py, ranks_spawn.py).

Each iteration is one `prefill` NVTX range (default domain) holding `ops` in-place elementwise
kernels on a 16M-float tensor (exactly one CUDA kernel each, counted here), ended by a
synchronize; iteration k of rank r runs (base + k + r * extra) kernels, so the ranks differ and
every iteration differs from the one before (alignment shows). A CUDA event pair around each
iteration gives the program's own latency. The first iteration is under a `warmup` range.
"""
import json
import os
import time

import torch

N = 16 << 20


class Counter:
    def __init__(self):
        self.kernels = 0


def setup(dev, c):
    x = torch.empty(N, device=dev)
    x.fill_(1.0)          # one fill kernel
    c.kernels += 1
    return x


def work(x, ops, c):
    for _ in range(ops):
        x.mul_(1.000001)  # one vectorized elementwise kernel
    c.kernels += ops


def iterations(x, rank, iters, base, extra, c, collective=None):
    """Runs 1 warm-up + `iters` measured iterations; returns the measured ones' own timings."""
    out = []
    for k in range(-1, iters):
        ops = base + max(k, 0) + rank * extra
        if k < 0:
            torch.cuda.nvtx.range_push("warmup")
        torch.cuda.nvtx.range_push("prefill")
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        e0.record()
        work(x, ops, c)
        coll_ms = None
        if collective is not None:
            coll_ms = collective(x)
        e1.record()
        torch.cuda.synchronize()
        host_ms = (time.perf_counter() - t0) * 1e3
        torch.cuda.nvtx.range_pop()
        if k < 0:
            torch.cuda.nvtx.range_pop()
            continue
        out.append({"k": k, "ops": ops, "event_ms": e0.elapsed_time(e1), "host_ms": host_ms,
                    "coll_ms": coll_ms})
    return out


def report(path_dir, rank, c, iters, extra=None):
    rec = {"rank": rank, "pid": os.getpid(), "kernels": c.kernels, "iters": iters}
    if extra:
        rec.update(extra)
    os.makedirs(path_dir, exist_ok=True)
    with open(os.path.join(path_dir, f"own.{os.getpid()}.json"), "w") as f:
        json.dump(rec, f)
    print(json.dumps(rec), flush=True)
