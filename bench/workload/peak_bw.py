#!/usr/bin/env python3
"""peak_bw.py: the achievable HBM bandwidth of GPU 0, from a device-to-device copy (torch).
Prints one JSON line: {"copy_gb_per_s": read+write bytes / time, best of several runs, ...}."""
import json
import sys

import torch


def main():
    n_bytes = int(sys.argv[1]) if len(sys.argv) > 1 else 2 << 30
    src = torch.empty(n_bytes // 2, dtype=torch.bfloat16, device="cuda").fill_(1)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    best = float("inf")
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b))
    print(json.dumps({"device_name": torch.cuda.get_device_name(), "bytes": n_bytes,
                      "best_ms": best, "copy_gb_per_s": 2 * n_bytes / best / 1e6}))


if __name__ == "__main__":
    main()
