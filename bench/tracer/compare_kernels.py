#!/usr/bin/env python3
"""compare_kernels.py KINETO.json LLMPROF_PERFETTO.json.gz [RANGE]: matches per-kernel counts and
total GPU times between PyTorch's profiler (the last JSON line torch_compare.py --mode kineto
printed, or its "kernels" object) and llmprof's tracer (`llmprof trace perfetto` output; only
kernels whose NVTX path starts with RANGE, default "measure"). Prints a table and a JSON summary
on the last line: names only on one side, count mismatches, the worst relative time difference
among kernels with >= 1% of the total, and the two totals.

KINETO may also be another run's `llmprof trace perfetto` output (.json.gz): our tracer against
itself, the run-to-run spread that a comparison of two separate runs cannot be better than (the
"kineto" fields then hold that run)."""
import gzip
import json
import sys


def load_kineto(path):
    with open(path) as f:
        text = f.read().strip().splitlines()
    for line in reversed(text):
        line = line.strip()
        if line.startswith("{"):
            d = json.loads(line)
            return d.get("kernels", d)
    raise SystemExit("no JSON object in %s" % path)


def load_llmprof(path, prefix):
    with gzip.open(path, "rt") as f:
        ev = json.load(f)["traceEvents"]
    out = {}
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        nvtx = e.get("args", {}).get("nvtx", "")
        if prefix and not (nvtx == prefix or nvtx.startswith(prefix + "/")):
            continue
        k = out.setdefault(e["name"], {"count": 0, "total_us": 0.0})
        k["count"] += 1
        k["total_us"] += float(e["dur"])
    return out


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    prefix = sys.argv[3] if len(sys.argv) > 3 else "measure"
    if sys.argv[1].endswith(".json.gz"):
        kin = load_llmprof(sys.argv[1], prefix)
    else:
        kin = load_kineto(sys.argv[1])
    ours = load_llmprof(sys.argv[2], prefix)
    tk = sum(v["total_us"] for v in kin.values())
    to = sum(v["total_us"] for v in ours.values())
    only_k = sorted(set(kin) - set(ours))
    only_o = sorted(set(ours) - set(kin))
    count_mismatch = []
    worst = 0.0
    rows = []
    for name in sorted(set(kin) & set(ours), key=lambda n: -kin[n]["total_us"]):
        a, b = kin[name], ours[name]
        rel = abs(a["total_us"] - b["total_us"]) / a["total_us"] if a["total_us"] else 0.0
        if a["count"] != b["count"]:
            count_mismatch.append(name)
        if a["total_us"] >= 0.01 * tk:
            worst = max(worst, rel)
        rows.append((name, a["count"], b["count"], a["total_us"], b["total_us"], rel))
    print("%-60s %8s %8s %12s %12s %7s" % ("kernel", "n_kineto", "n_ours", "us_kineto", "us_ours", "diff"))
    for name, ca, cb, ta, tb, rel in rows:
        print("%-60.60s %8d %8d %12.1f %12.1f %6.2f%%" % (name, ca, cb, ta, tb, 100 * rel))
    summary = {
        "kernels_kineto": len(kin), "kernels_ours": len(ours),
        "only_kineto": only_k[:20], "only_ours": only_o[:20],
        "count_mismatches": count_mismatch[:20],
        "worst_rel_diff_over_1pct_kernels": worst,
        "total_us_kineto": tk, "total_us_ours": to,
        "total_rel_diff": abs(tk - to) / tk if tk else None,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
