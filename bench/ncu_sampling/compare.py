#!/usr/bin/env python3
"""compare.py: do the sampled groups' ncu metrics agree with an unsampled profile of the same
selection, within what the counters themselves repeat to?

    python3 compare.py SAMPLED_RUN FULL_RUN [FULL_RUN_AGAIN]

SAMPLED_RUN is a sampled run folder (ncu/sampling.json + ncu/<name>_raw.csv), FULL_RUN one of the
same selection with profiling.ncu.sample_per_group=0 (every launch of the selection, in launch
order), FULL_RUN_AGAIN the same unsampled run repeated: the same launches profiled twice.

Launches are matched exactly: a sampled result's `ordinal` in sampling.json (its position among
the selected launches) is the row of the full profile that profiled the same launch (checked by
kernel name, grid and block). A warm-up stand-in (profiling.ncu.warmup_picks: `warmup` true,
`ordinal` null) is another launch of the same kernel, grid, block and region path: it is compared
with the group's launches (no `same` value). Per (group, metric):

- full:   the values of every launch of the group in FULL_RUN: mean, min..max, sd
- repeat: r = the largest |FULL_RUN - FULL_RUN_AGAIN| of one launch of the group (the counter's
          run-to-run difference for the very same launch: clocks, cache and DRAM state, replay);
          0 when no second full run is given
- same:   the largest |sampled - full| of one launch (the same launch, profiled in the sampled run)

Criterion (README.md): the group agrees when every sampled value lies inside the full profile's
per-launch range widened by the measured repeatability, [min - r, max + r]. The older test (inside
min..max alone) is printed too: with few launches in a group (lm_head: 2) min..max is narrower than
the counter's own run-to-run noise, so it fails for reasons that are not sampling.
"""
import csv
import glob
import json
import math
import sys

METRICS = ["gpu__time_duration.sum", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
           "sm__throughput.avg.pct_of_peak_sustained_elapsed"]


def raw_rows(run):
    path = sorted(glob.glob(run + "/ncu/*_raw.csv"))[0]
    rows = list(csv.reader(open(path)))
    h = rows[0]
    out = []
    for r in rows[2:]:
        d = {"id": int(r[h.index("ID")]), "name": r[h.index("Kernel Name")], "grid": r[h.index("Grid Size")],
             "block": r[h.index("Block Size")]}
        for m in METRICS:
            if m in h:
                try:
                    d[m] = float(r[h.index(m)].replace(",", ""))
                except ValueError:
                    pass
        out.append(d)
    return out


def stats(v):
    n = len(v)
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    return mean, min(v), max(v), sd


def main():
    sampled_dir, full_dir = sys.argv[1], sys.argv[2]
    again_dir = sys.argv[3] if len(sys.argv) > 3 else None
    plan = json.load(open(sampled_dir + "/ncu/sampling.json"))
    srows = {r["id"]: r for r in raw_rows(sampled_dir)}
    full = raw_rows(full_dir)
    again = raw_rows(again_dir) if again_dir else None
    if again is not None and len(again) != len(full):
        print(f"note: the two full profiles have {len(full)} and {len(again)} rows: repeatability from the common prefix")
    n = ok_widened = ok_minmax = 0
    worst_mean = 0.0
    mismatched = 0
    print(f"{'group':<44} {'metric':<22} {'K':>2} {'sampled mean':>13} {'full mean':>12} {'full min..max':>23} "
          f"{'sd%':>5} {'repeat%':>7} {'same%':>6} {'diff%':>6}  minmax  widened")
    for g in plan["groups"]:
        res = [r for r in g.get("results", []) if r.get("ordinal") is not None or r.get("warmup")]
        if not res or g.get("status") != "planned":
            continue
        # the group's launches in the full profile: its kernel (exported name), grid and block (a
        # group is also split by shared memory and region; the selection here is one region)
        first = next((srows[r["id"]] for r in res if r["id"] in srows), None)
        if first is None:
            continue
        members = [k for k, f in enumerate(full)
                   if (f["name"], f["grid"], f["block"]) == (first["name"], first["grid"], first["block"])]
        # groups that share even the exported name, grid and block (llmprof-llm's o_proj and
        # down_proj: k_dec_gemv<1, 1> at grid 128, told apart by shared memory) alternate in a
        # fixed order: with c such groups, a group is the launches whose occurrence index j among
        # that configuration's rows has the class j mod c of its sampled launches
        def exported(h):
            row = next((srows[r["id"]] for r in h.get("results", []) if r["id"] in srows), None)
            return row["name"] if row else None
        c = sum(1 for h in plan["groups"] if h["function"] == g["function"] and h["grid"] == g["grid"]
                and h["block"] == g["block"] and h["region"] == g["region"] and exported(h) == first["name"])
        if c > 1:
            occ = {k: j for j, k in enumerate(members)}
            classes = {occ[r["ordinal"]] % c for r in res if r.get("ordinal") in occ}
            if len(classes) == 1 and all(r.get("ordinal") is not None for r in res):
                cls = classes.pop()
                members = [k for k in members if occ[k] % c == cls]
            elif not classes:
                # warm-up stand-ins carry no ordinal: the class whose durations' mean is nearest
                # the sampled one (the classes of llmprof-llm's k_dec_gemv<1, 1> differ 2.5x)
                sd = [srows[r["id"]][METRICS[0]] for r in res if r["id"] in srows and METRICS[0] in srows[r["id"]]]
                if sd:
                    sm = sum(sd) / len(sd)
                    def cmean(cl):
                        v = [full[k][METRICS[0]] for k in members if occ[k] % c == cl and METRICS[0] in full[k]]
                        return abs(sum(v) / len(v) - sm) if v else float("inf")
                    cls = min(range(c), key=cmean)
                    members = [k for k in members if occ[k] % c == cls]
                    print(f"note: {g['function']} {g['grid']}: warm-up stand-ins: compared with class {cls} of {c} "
                          f"(the nearest mean duration)")
            else:
                print(f"note: {g['function']} {g['grid']}: sampled launches of several classes {sorted(classes)}: compared as one")
        key = f"{g['function'][:20]} {tuple(g['grid'])} smem {g['shared_bytes']}"
        for m in METRICS:
            fv = [full[k][m] for k in members if k < len(full) and m in full[k]]
            sv, same, rep = [], [], []
            for r in res:
                row = srows.get(r["id"])
                k = r.get("ordinal")
                if row and m in row and k is None:   # a warm-up stand-in: no same launch in the full run
                    sv.append(row[m])
                    continue
                if not row or m not in row or k >= len(full):
                    continue
                if (full[k]["name"], full[k]["grid"], full[k]["block"]) != (row["name"], row["grid"], row["block"]):
                    mismatched += 1
                    continue
                sv.append(row[m])
                same.append(abs(row[m] - full[k][m]))
            if again is not None:
                rep = [abs(full[k][m] - again[k][m]) for k in members
                       if k < len(full) and k < len(again) and m in full[k] and m in again[k]
                       and again[k]["name"] == full[k]["name"]]
            if not sv or not fv:
                continue
            fmean, lo, hi, sd = stats(fv)
            smean = sum(sv) / len(sv)
            r_abs = max(rep) if rep else 0.0
            minmax = all(lo - 1e-9 <= x <= hi + 1e-9 for x in sv)
            widened = all(lo - r_abs - 1e-9 <= x <= hi + r_abs + 1e-9 for x in sv)
            diff = abs(smean - fmean) / fmean * 100 if fmean else 0.0
            pct = (lambda x: x / fmean * 100 if fmean else 0.0)
            n += 1
            ok_minmax += minmax
            ok_widened += widened
            worst_mean = max(worst_mean, diff)
            print(f"{key:<44} {m[:22]:<22} {len(sv):>2} {smean:>13.3f} {fmean:>12.3f} [{lo:>10.3f},{hi:>10.3f}] "
                  f"{pct(sd):>5.1f} {pct(r_abs):>7.2f} {pct(max(same)) if same else float('nan'):>6.2f} {diff:>6.2f}  "
                  f"{'in' if minmax else 'OUT':<6}  "
                  f"{'in' if widened else 'OUT'}")
    if mismatched:
        print(f"note: {mismatched} sampled results did not match the full profile's row at their ordinal")
    print(f"TOTAL: {ok_widened}/{n} (group, metric) pairs agree (every sampled value inside the full profile's "
          f"per-launch min..max widened by the same launch's run-to-run difference); {ok_minmax}/{n} inside min..max "
          f"alone; largest difference of means {worst_mean:.2f}%")


if __name__ == "__main__":
    main()
