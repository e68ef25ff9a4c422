#!/usr/bin/env python3
"""compare.py: do the sampled groups' ncu metrics agree with an unsampled profile of the same
selection? For every (kernel function, grid, block) the sampled run profiled, each metric's values
in the sampled run are compared with the spread (min..max) of all launches of that configuration in
the full run, and their means are compared.

    python3 compare.py SAMPLED_RUN_DIR FULL_RUN_DIR

Reads ncu/<name>_raw.csv of both (base units); prints one line per group and metric, then totals.
"""
import csv
import glob
import re
import sys

METRICS = ["gpu__time_duration.sum", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
           "sm__throughput.avg.pct_of_peak_sustained_elapsed"]


def function_name(k):  # noqa: unused, kept for ad-hoc keys
    # ncu's "function" base, enough for our kernels: the name before '(' and '<', without namespaces
    k = re.sub(r"\(.*$", "", k)
    depth, out = 0, ""
    for ch in k:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out += ch
    return out.split("::")[-1].split(" ")[-1]


def load(run):
    path = sorted(p for p in glob.glob(run + "/ncu/*_raw.csv"))[0]
    rows = list(csv.reader(open(path)))
    h = rows[0]
    groups = {}
    for r in rows[2:]:
        # the whole exported name (template arguments apart: k_dec_gemv<1, 2> and <1, 3> share a
        # function name and a grid); kernels that share even that (two projections of one shape
        # class) are compared as one distribution
        key = (r[h.index("Kernel Name")], r[h.index("Grid Size")], r[h.index("Block Size")])
        vals = groups.setdefault(key, {m: [] for m in METRICS})
        for m in METRICS:
            if m in h:
                v = r[h.index(m)].replace(",", "")
                try:
                    vals[m].append(float(v))
                except ValueError:
                    pass
    return groups


def main():
    sampled, full = load(sys.argv[1]), load(sys.argv[2])
    n = inside = 0
    worst = 0.0
    for key, sv in sorted(sampled.items()):
        fv = full.get(key)
        if not fv:
            print(f"{key}: not in the full profile")
            continue
        for m in METRICS:
            if not sv[m] or not fv[m]:
                continue
            lo, hi = min(fv[m]), max(fv[m])
            fmean = sum(fv[m]) / len(fv[m])
            smean = sum(sv[m]) / len(sv[m])
            ok = all(lo - 1e-9 <= x <= hi + 1e-9 for x in sv[m])
            rel = abs(smean - fmean) / fmean * 100 if fmean else 0.0
            spread = (hi - lo) / fmean * 100 if fmean else 0.0
            n += 1
            inside += ok
            worst = max(worst, rel)
            print(f"{key[0][:34]:<34} {key[1]:<14} {m[:34]:<34} sampled {len(sv[m]):3} mean {smean:12.3f} | full {len(fv[m]):4} "
                  f"mean {fmean:12.3f} [{lo:.3f}, {hi:.3f}] spread {spread:5.1f}% diff {rel:5.2f}% {'inside' if ok else 'OUTSIDE'}")
    print(f"TOTAL: {inside}/{n} (group, metric) pairs with every sampled value inside the full profile's min..max; "
          f"largest difference of means {worst:.2f}%")


if __name__ == "__main__":
    main()
