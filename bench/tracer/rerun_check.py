#!/usr/bin/env python3
"""rerun_check.py [--sd PCT] EXACT.json... -- SAMPLED.json...: issue 24's second criterion on
llmprof summaries (summary.json, or results/light_*_summary.json): every sampled run's decode
kernel totals against every exact run's (separate processes of the same program), for the kernels
above 1% of the exact run's decode kernel time. The intervals are those of a row's total_ms (its
prefill part recorded exactly in both runs); both the decode totals and the row totals are compared.
Per pair: how many lie inside the sampling interval (ci_ms) and inside the rerun interval (rerun_ci_ms; summaries written before it existed get
sqrt(ci^2 + 2 (1.96 sd total)^2) with --sd, default 0.2, as lp_tsample_rerun_ms), the misses, and
the decode kernel totals; then exact against exact (median and largest difference). The last line
is a JSON summary."""
import json
import math
import statistics
import sys


def rows(path):
    s = json.load(open(path))
    return {r["kernel_name"]: r for r in s["kernels"]["rows"]}


def dec(r):
    return r["stage_ms"]["decode_ms"]


def main(argv):
    sd = 0.2
    if argv[:1] == ["--sd"]:
        sd, argv = float(argv[1]), argv[2:]
    if "--" not in argv:
        raise SystemExit(__doc__)
    i = argv.index("--")
    exact, sampled = argv[:i], argv[i + 1:]
    E = {p: rows(p) for p in exact}
    S = {p: rows(p) for p in sampled}
    n_all = n_ci = n_rr = n_tot = 0
    for p in sampled:
        for q in exact:
            e, s = E[q], S[p]
            tot = sum(dec(r) for r in e.values())
            big = [k for k, r in e.items() if tot and dec(r) / tot > 0.01]
            ci_in = rr_in = tot_in = 0
            miss = []
            for k in big:
                r = s.get(k)
                if not r or r.get("ci_ms") is None:
                    miss.append("%s: no interval" % k[:50])
                    continue
                d = dec(r) - dec(e[k])
                rr = r.get("rerun_ci_ms")
                if rr is None:
                    sys_ = 1.959964 * sd / 100 * r["total_ms"]
                    rr = math.sqrt(r["ci_ms"] ** 2 + 2 * sys_ ** 2)
                ci_in += abs(d) <= r["ci_ms"]
                rr_in += abs(d) <= rr
                tot_in += abs(r["total_ms"] - e[k]["total_ms"]) <= rr
                if abs(d) > rr:
                    miss.append("%s: %+.3f%% (rerun interval %.3f%%)" % (k[:50], 100 * d / dec(e[k]), 100 * rr / dec(e[k])))
            n_all += len(big)
            n_ci += ci_in
            n_rr += rr_in
            n_tot += tot_in
            ts = sum(dec(r) for r in s.values())
            print("%s vs %s: %d kernels > 1%%, decode totals: %d inside the sampling interval, %d inside the rerun "
                  "interval; row totals: %d inside the rerun interval; decode kernel time %.2f / %.2f ms (%+.2f%%)" % (
                      p, q, len(big), ci_in, rr_in, tot_in, ts, tot, 100 * (ts / tot - 1)))
            for m in miss:
                print("    outside: " + m)
    ee = []
    for a in range(len(exact)):
        for b in range(a + 1, len(exact)):
            e1, e2 = E[exact[a]], E[exact[b]]
            tot = sum(dec(r) for r in e1.values())
            d = [abs(dec(e1[k]) / dec(e2[k]) - 1) * 100 for k, r in e1.items()
                 if tot and dec(r) / tot > 0.01 and k in e2 and dec(e2[k]) > 0]
            ee += d
            print("exact %s vs %s: %d kernels, |difference| median %.3f%%, largest %.3f%%" % (
                exact[a], exact[b], len(d), statistics.median(d), max(d)))
    print(json.dumps({"pairs_kernels": n_all, "inside_sampling": n_ci, "inside_rerun": n_rr,
                      "inside_rerun_pct": round(100 * n_rr / n_all, 1) if n_all else None,
                      "totals_inside_rerun": n_tot,
                      "exact_vs_exact_median_pct": round(statistics.median(ee), 3) if ee else None}))


if __name__ == "__main__":
    main(sys.argv[1:])
