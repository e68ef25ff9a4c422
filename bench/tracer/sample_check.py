#!/usr/bin/env python3
"""sample_check.py: issue 24's checks on traces of libllmprof_inject.so, standard library only
(it reads the .lptrace format of docs/trace-format.md itself, so it runs on the GPU machine next
to the traces, which are too large to bring back whole).

    sample_check.py summary OUT            overhead table of bench/tracer/sampled.sh's runs
    sample_check.py kernels EXACT SAMPLED  per-kernel totals of the unit stage (decode_step):
                                           the exact run's against the sampled run's estimate
                                           and its 95% confidence interval
    sample_check.py subsample EXACT [EVERY FIRST]
                                           the schedule applied afterwards to an exact trace:
                                           the estimate from its on-schedule units against the
                                           same run's exact totals (sampling error alone, no
                                           run-to-run difference), per kernel with the interval
    sample_check.py steps TRACE PROGRAM_OUTPUT
                                           per-step GPU latencies (STAGE records) against the
                                           program's own CUDA-event step_ms lines
    sample_check.py places DIR TAG [SPEC [OFFSET [BEFORE]]]
                                           after step turns: a burst process's steps grouped by
                                           their place in its schedule (recorded, lead, end
                                           window, after a detach, detached; SPEC every=128,
                                           burst=4,first=2) against the plain processes' same
                                           steps (run 26); BEFORE (LLMPROF_TRACE_CUPTI_DELAY's
                                           processes): the generations before CUPTI's start
                                           against those after it (run 27)
    sample_check.py serve DIR              serve_call.sh's processes (run 40): per mode the
                                           program's own mean ms per prefill, mixed and decode
                                           call against the unprofiled processes', llmprof's
                                           stage latencies against the program's, the stage
                                           instances recorded, and each kernel row above 1%
                                           of the exact run's time: the default's estimate
                                           against the exact run's total, inside its rerun
                                           interval or not; with turns.json (LP_SERVE_TURNS)
                                           each process's rounds paired with plain_t's
    sample_check.py places_all DIR [BEFORE]
                                           places for every traced process of the call, each
                                           with the schedule its log names (BEFORE for delay
                                           and delay2), then per program and mode the
                                           processes' min, max and mean (run 27)
    sample_check.py pool CALL [CALL ...]    every process of several step-turn calls (their
                                           directories or cost.tgz files), each against its
                                           call's plain processes (a plain one against the
                                           others), pooled per program and mode: n, mean, sd
                                           and the 95% interval over processes (run 28)
    sample_check.py pair A B CALL [CALL ...]
                                           mode A against mode B inside each call that ran
                                           both (their shared plain reference cancels), then
                                           weighted over calls: the difference in points and
                                           its 95% interval (run 29)
    sample_check.py gens TRACE             per generation (each prefill and decode_all range, in
                                           time order, "warmup" marked), the recorded kernels'
                                           calls and total ns per kernel name, and the recorded
                                           and all decode_step units: the generation-to-
                                           generation spread inside one process (JSON)
    sample_check.py units TRACE [TOP]      per decode_step unit with kernels: its generation, index,
                                           place in its run of consecutive recorded units, CPU
                                           span, and calls / ns of the TOP (30) kernels (JSON)
    sample_check.py unitdiff A B [TOP]     two processes' `units` files (A's last 3 generations
                                           against B's): per kernel (B's TOP, 23, largest), the
                                           mean relative difference of its time in the steps both
                                           recorded (same generation, same index), split by the
                                           first 2 steps and a burst's place (run 38: a mode
                                           difference, not the draw)
    sample_check.py cost DIR [SAMPLE]      cost_call.sh's runs: per program and mode the
                                           generations' decode ms/step, their median and spread,
                                           the overhead against plain paired by round, step
                                           quantiles, the recorded against the skipped steps
                                           inside sampled processes (SAMPLE: the schedule, e.g.
                                           every=8,first=2,pick=first; not with pick=random),
                                           and launch_cost's ns per call per mode; after
                                           turns, the step-level pairing (paired_steps: per
                                           mode against plain, and the placebo plain vs plain;
                                           paired_steps_cpu_ms / _cycles / _instr: the same
                                           pairs by the launching thread's counters, where the
                                           programs ran with LLMPROF_BENCH_COUNTERS=1)
    sample_check.py truth DIR              kernel_truth.py's processes (DIR/<mode>_<round>.txt, their
                                           traces in DIR/<mode>_<round>/; mode plain: no tracer):
                                           per op the program's CUDA-event ms per copy, median over
                                           the steps the tracer recorded and those it did not,
                                           against plain's; the tracer's kernel time per copy in
                                           the recorded steps; and per kernel name the mean call
                                           from each trace and from DIR/ncu_truth.csv (Nsight
                                           Compute's gpu__time_duration, run 39)
    sample_check.py ncuvs CSV TRACE [TRACE ...]
                                           per kernel name the mean gpu__time_duration of an ncu
                                           raw CSV (--nvtx, mangled names) in the first STEPS (2)
                                           decode steps of each generation outside `warmup`,
                                           against each trace's mean kernel duration in the same
                                           steps it recorded (run 39)

The estimate is the one src/analyze/sampling_design.c computes (docs/tracer.md "The statistics of
a sampled trace"): the first units under each parent are all recorded (their stratum is exact); the
others are cut into blocks of `every` per parent, one unit recorded per block (a stratum; a block
with none is collapsed into the previous one of its parent, else the next); a kernel's total is
exact part + sum over strata of N_h * mean_h, its variance the sum of N_h^2 * v_h with v_h from
balanced second differences of the strata means along the parent (successive differences with
two strata), and a Student t interval with one degree of freedom per difference. `subsample`
applies the first tracer's schedule (the first unit of each block); build/tests/lp-sample-coverage
replays the current one (a random position per block) over many seeds (bench/sampling/README.md).
"""

import json
import math
import os
import re
import statistics
import struct
import sys

REC = struct.Struct("<HHI")
NVTX = struct.Struct("<BBHIIIQQQII")
LAUNCH = struct.Struct("<IIQQIBBH")
KERNEL = struct.Struct("<QQQIIIIII")
STAGE = struct.Struct("<QQQQIIBBHI")
SAMPLING = struct.Struct("<IIIIIIQQQQQQ")


def read_trace(path):
    """One .lptrace (or the first in a folder): strings, ranges, launches, kernels, stages."""
    if os.path.isdir(path):
        files = sorted(f for f in os.listdir(path) if f.endswith(".lptrace"))
        path = os.path.join(path, files[0])
    data = open(path, "rb").read()
    assert data[:8] == b"LLMPTRC\n", path
    t = {"strings": {}, "ranges": {}, "launch": {}, "kernels": [], "stages": {}, "sampling": None}
    stacks = {}
    off = 16
    while off + 8 <= len(data):
        typ, _flags, size = REC.unpack_from(data, off)
        p = off + 8
        if p + size > len(data):
            break
        if typ == 2:
            sid, n = struct.unpack_from("<II", data, p)
            t["strings"][sid] = data[p + 8:p + 8 + n].decode("utf-8", "replace")
        elif typ == 6:
            ev, _pt, _r, tid, dom, name, rid, ts, _pl, _c, _col = NVTX.unpack_from(data, p)
            st = stacks.setdefault(tid, [])
            if ev == 1:
                t["ranges"][rid] = [name, st[-1] if st else 0, ts, 0]
                st.append(rid)
            elif ev == 2 and rid in st:
                st.remove(rid)
                if rid in t["ranges"]:
                    t["ranges"][rid][3] = ts
        elif typ == 7:
            corr, _tid, rid, _ts, _cbid, _api, _kind, _r = LAUNCH.unpack_from(data, p)
            t["launch"][corr] = rid
        elif typ == 9:
            start, end, _node, name, _dev, _ctx, _stream, corr, _g = KERNEL.unpack_from(data, p)
            t["kernels"].append((name, corr, end - start))
        elif typ == 17:
            t["sampling"] = SAMPLING.unpack_from(data, p)
        elif typ == 18:
            rid, g0, g1, gel, tid, idx, sample, gpu, _r, name = STAGE.unpack_from(data, p)
            t["stages"][rid] = dict(start=g0, end=g1, elapsed=gel, index=idx, sample=sample, gpu=gpu,
                                    name=name)
        off = p + size
    return t


def name_of(t, sid):
    return t["strings"].get(sid, "?")


def unit_of(t, rid, unit):
    """The innermost ancestor range (or rid itself) named `unit` (a name, or a tuple of names), or 0."""
    names = (unit,) if isinstance(unit, str) else unit
    seen = 0
    while rid and seen < 300:
        r = t["ranges"].get(rid)
        if not r:
            return 0
        if name_of(t, r[0]) in names:
            return rid
        rid = r[1]
        seen += 1
    return 0


def per_unit_calls(t, unit):
    """{unit instance: {kernel name: [calls, total ns]}} over the kernels launched inside a unit
    (`unit` as unit_of takes it)."""
    out = {}
    for name, corr, dur in t["kernels"]:
        u = unit_of(t, t["launch"].get(corr, 0), unit)
        if u:
            c = out.setdefault(u, {}).setdefault(name_of(t, name), [0, 0])
            c[0] += 1
            c[1] += dur
    return out


def per_unit(t, unit):
    """{unit instance: {kernel name: total ns}} over the kernels launched inside a unit."""
    return {u: {k: c[1] for k, c in d.items()} for u, d in per_unit_calls(t, unit).items()}


T975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
        12: 2.18, 15: 2.13, 20: 2.09, 25: 2.06, 30: 2.04, 40: 2.02, 60: 2.00, 120: 1.98}


def t975(df):
    if df <= 0:
        return float("inf")
    best = 1.96
    for k in sorted(T975):
        if df <= k:
            return T975[k]
    return best


def strata(t, b_ids, recorded, every, first):
    """The strata of the sampled stratum's units: [(parent, units N_h, recorded rids)] in (parent,
    index) order, blocks of `every` after `first`, a block without a recorded unit collapsed into
    the previous stratum of its parent (else the next one; else the previous of any parent)."""
    blocks = []
    for rid in sorted(b_ids, key=lambda r: (t["ranges"].get(r, [0, 0])[1], t["stages"][r]["index"])):
        parent = t["ranges"].get(rid, [0, 0])[1]
        b = (t["stages"][rid]["index"] - first) // every
        if not blocks or blocks[-1][0] != parent or blocks[-1][1] != b:
            blocks.append([parent, b, 0, []])
        blocks[-1][2] += 1
        if rid in recorded:
            blocks[-1][3].append(rid)
    out = [[p, n, rec] for p, _b, n, rec in blocks if rec]
    for i, (p, _b, n, rec) in enumerate(blocks):
        if rec:
            continue
        prev = [j for j in range(len(out)) if out[j][0] == p and out[j][2][0] in
                [r for q in blocks[:i] for r in q[3]]]
        same = [j for j in range(len(out)) if out[j][0] == p]
        target = prev[-1] if prev else same[0] if same else (len(out) - 1 if out else None)
        if target is not None:
            out[target][1] += n
    return out


def design_estimate(st, ex, value):
    """(estimate, CI half-width) of one kernel: ex its exact part, value(rid) its time in a unit."""
    ys = [sum(value(r) for r in rec) / len(rec) for _p, _n, rec in st]
    est = ex + sum(n * y for (_p, n, _rec), y in zip(st, ys))
    var, df, pooled, lone = 0.0, 0, [], []
    h = 0
    while h < len(st):
        e = h
        while e < len(st) and st[e][0] == st[h][0]:
            e += 1
        y = ys[h:e]
        L = e - h
        if L >= 3:
            d = [(y[j - 1] - 2 * y[j] + y[j + 1]) ** 2 / 6 for j in range(1, L - 1)]
            v = [sum(d[j - 1] for j in (i - 1, i, i + 1) if 1 <= j <= L - 2) /
                 len([j for j in (i - 1, i, i + 1) if 1 <= j <= L - 2]) for i in range(L)]
        elif L == 2:
            d = [(y[0] - y[1]) ** 2 / 2]
            v = [d[0], d[0]]
        else:
            d, v = [], [None]
        pooled += d
        df += len(d)
        for i in range(L):
            n_h, rec = st[h + i][1], st[h + i][2]
            if len(rec) >= n_h:
                continue
            if len(rec) >= 2:
                xs = [value(r) for r in rec]
                var += n_h * n_h * (1 - len(rec) / n_h) * statistics.variance(xs) / len(rec)
                df += len(rec) - 1
            elif v[i] is None:
                lone.append(n_h)
            else:
                var += n_h * n_h * v[i]
        h = e
    if lone:
        if not pooled:
            return est, None
        var += sum(n * n for n in lone) * sum(pooled) / len(pooled)
    return est, (t975(df) * math.sqrt(var) if df else (0.0 if var == 0 else None))


def estimate(t, unit):
    """Per kernel: (estimate ns, CI half-width ns or None), recorded units, units, exact units."""
    units = {rid: s for rid, s in t["stages"].items() if name_of(t, s["name"]) == unit}
    every, first = (t["sampling"][2], t["sampling"][3]) if t["sampling"] else (1, 0)
    data = per_unit(t, unit)
    # exact stratum: the first units, every unit of an exact trace, and units recorded while auto
    # was still measuring (sample 3)
    exact_ids = [r for r, s in units.items() if s["index"] < first or t["sampling"][0] == 1 or s["sample"] == 3]
    b_ids = [r for r in units if r not in set(exact_ids)]
    rec_b = {r for r in b_ids if units[r]["sample"] == 1}
    st = strata(t, b_ids, rec_b, max(every, 1), first)
    names = set()
    for d in data.values():
        names.update(d)
    res = {}
    for k in names:
        ex = sum(data.get(r, {}).get(k, 0) for r in exact_ids)
        res[k] = design_estimate(st, ex, lambda r, k=k: data.get(r, {}).get(k, 0)) if st else (ex, 0.0)
    return res, len(rec_b), len(b_ids), len(exact_ids)


def cmd_kernels(exact_path, sampled_path, unit="decode_step"):
    ex, sa = read_trace(exact_path), read_trace(sampled_path)
    exact = {}
    for d in per_unit(ex, unit).values():
        for k, v in d.items():
            exact[k] = exact.get(k, 0) + v
    total = sum(exact.values())
    est, n, N, n_exact = estimate(sa, unit)
    rows, inside, big = [], 0, 0
    for k, v in sorted(exact.items(), key=lambda kv: -kv[1]):
        e, h = est.get(k, (0.0, 0.0))
        share = v / total if total else 0
        ok = h is not None and abs(e - v) <= h
        if share > 0.01:
            big += 1
            inside += ok
        rows.append(dict(kernel=k[:120], exact_ms=v / 1e6, share=round(share, 4), sampled_ms=e / 1e6,
                         ci_ms=h / 1e6 if h is not None else None, diff_pct=(e - v) / v * 100 if v else None,
                         inside=ok))
    est_total = sum(e for e, _ in est.values())
    # kernels per recorded unit: a switch that lost records of a unit still running would show
    ncount = {}
    for name, corr, dur in sa["kernels"]:
        u = unit_of(sa, sa["launch"].get(corr, 0), unit)
        if u:
            ncount[u] = ncount.get(u, 0) + 1
    ecount = {}
    for name, corr, dur in ex["kernels"]:
        u = unit_of(ex, ex["launch"].get(corr, 0), unit)
        if u:
            ecount[u] = ecount.get(u, 0) + 1
    def mmm(v):
        v = sorted(v)
        return [v[0], statistics.median(v), v[-1]] if v else None
    out = dict(unit=unit, exact_total_ms=total / 1e6, sampled_total_ms=est_total / 1e6,
               units_exact_stratum=n_exact, units_sampled=n, units_sampled_stratum=N,
               kernels_over_1pct=big, inside_ci=inside,
               kernels_per_unit_sampled_min_med_max=mmm(ncount.values()),
               kernels_per_unit_exact_min_med_max=mmm(ecount.values()),
               kernels_outside_units_sampled=sum(1 for n, c, d in sa["kernels"]
                                                 if not unit_of(sa, sa["launch"].get(c, 0), unit)),
               kernels_outside_units_exact=sum(1 for n, c, d in ex["kernels"]
                                               if not unit_of(ex, ex["launch"].get(c, 0), unit)),
               sampling=list(sa["sampling"]) if sa["sampling"] else None, rows=rows[:40])
    print(json.dumps(out, indent=1))
    return out


def cmd_subsample(exact_path, every=8, first=2, unit="decode_step"):
    t = read_trace(exact_path)
    units = {rid: s for rid, s in t["stages"].items() if name_of(t, s["name"]) == unit}
    data = per_unit(t, unit)
    exact_ids = [r for r, s in units.items() if s["index"] < first]
    b_ids = [r for r, s in units.items() if s["index"] >= first]
    rec = {r for r in b_ids if (units[r]["index"] - first) % every == 0}
    st = strata(t, b_ids, rec, every, first)
    names = set()
    for d in data.values():
        names.update(d)
    truth = {k: sum(d.get(k, 0) for d in data.values()) for k in names}
    total = sum(truth.values())
    N, n = len(b_ids), len(rec)
    rows, inside, big = [], 0, 0
    for k in sorted(names, key=lambda k: -truth[k]):
        ex = sum(data.get(r, {}).get(k, 0) for r in exact_ids)
        est, half = design_estimate(st, ex, lambda r, k=k: data.get(r, {}).get(k, 0))
        half = half if half is not None else float("nan")
        share = truth[k] / total if total else 0
        ok = abs(est - truth[k]) <= half
        if share > 0.01:
            big += 1
            inside += ok
        rows.append(dict(kernel=k[:120], exact_ms=truth[k] / 1e6, share=round(share, 4), sampled_ms=est / 1e6,
                         ci_ms=half / 1e6, diff_pct=(est - truth[k]) / truth[k] * 100 if truth[k] else None,
                         inside=ok))
    out = dict(unit=unit, every=every, first=first, units=len(units), units_exact_stratum=len(exact_ids),
               units_sampled=n, units_sampled_stratum=N, exact_total_ms=total / 1e6,
               kernels_over_1pct=big, inside_ci=inside, rows=rows[:40])
    print(json.dumps(out, indent=1))
    return out


def cmd_steps(trace_path, program_out, unit="decode_step"):
    t = read_trace(trace_path)
    prog = []
    prefill_prog = []
    for line in open(program_out):
        if line.startswith("{") and '"step_ms"' in line:
            d = json.loads(line)
            prog.extend(d["step_ms"])
            prefill_prog.append(d.get("prefill_ms"))
    ours = [s for rid, s in sorted(t["stages"].items()) if name_of(t, s["name"]) == unit]
    ours = ours[len(ours) - len(prog):] if len(prog) <= len(ours) else ours
    diffs, outside = [], []
    for j, (s, p) in enumerate(zip(ours, prog)):
        if s["gpu"] == 1 and p > 0:
            diffs.append((s["elapsed"] / 1e6 - p) / p * 100)
            if abs(diffs[-1]) > 2.0:
                outside.append(dict(step=j, index=s.get("index"), sample=s.get("sample"),
                                    ours_ms=round(s["elapsed"] / 1e6, 4), program_ms=round(p, 4)))
    ad = sorted(abs(x) for x in diffs)
    pre = [s for rid, s in sorted(t["stages"].items()) if name_of(t, s["name"]) == "prefill"]
    pre = pre[len(pre) - len(prefill_prog):] if prefill_prog else []
    out = dict(steps_program=len(prog), steps_matched=len(diffs),
               gpu_status=sorted(set(s["gpu"] for s in ours)),
               median_abs_diff_pct=statistics.median(ad) if ad else None,
               p95_abs_diff_pct=ad[int(0.95 * (len(ad) - 1))] if ad else None,
               max_abs_diff_pct=ad[-1] if ad else None,
               within_2pct=sum(1 for x in ad if x <= 2.0),
               sum_ours_ms=sum(s["elapsed"] for s in ours) / 1e6, sum_program_ms=sum(prog),
               prefill_ours_ms=[s["elapsed"] / 1e6 for s in pre], prefill_program_ms=prefill_prog,
               outside_2pct=outside)
    print(json.dumps(out, indent=1))
    return out


def per_step_ms(path):
    vals = []
    for line in open(path):
        if line.startswith("{") and '"iter"' in line:
            vals.append(json.loads(line)["decode_ms_per_step"])
    return statistics.median(vals) if vals else None


def cmd_summary(out):
    runs = {}
    for f in sorted(os.listdir(out)):
        if f.endswith(".txt") and f.count("_") >= 2 and not f.startswith("log"):
            prog, mode, rest = f[:-4].split("_", 2)
            v = per_step_ms(os.path.join(out, f))
            if v is not None:
                runs.setdefault(prog, {}).setdefault(mode, []).append(v)
    res = {}
    for prog, modes in runs.items():
        base = statistics.median(modes["plain"]) if "plain" in modes else None
        res[prog] = {}
        for mode, vals in modes.items():
            med = statistics.median(vals)
            res[prog][mode] = dict(median_ms_per_step=med, runs=vals,
                                   overhead_pct=(med / base - 1) * 100 if base else None)
    print(json.dumps(res, indent=1))
    return res


def program_iters(path):
    """The measured iterations' JSON lines of a program's output."""
    out = []
    for line in open(path):
        if line.startswith("{") and '"iter"' in line:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def parse_sample(spec, every=8, burst=0):
    """(every, first, pick, burst) of an LLMPROF_TRACE_SAMPLE value, `every` and `burst` the
    defaults for what it leaves out; pick defaults to random (the tracer's default since trace
    format 1.2)."""
    first, pick = 2, "random"
    for part in spec.split(","):
        k, _, v = part.partition("=")
        if k == "every":
            every = int(v)
        elif k == "first":
            first = int(v)
        elif k == "pick":
            pick = v
        elif k == "burst":
            burst = int(v)
    return every, first, pick, burst


def spread(vals):
    vals = sorted(vals)
    n = len(vals)
    return dict(n=n, median=statistics.median(vals), min=vals[0], max=vals[-1],
                q1=vals[(n - 1) // 4], q3=vals[(3 * (n - 1) + 3) // 4] if n > 1 else vals[0])


def step_quantiles(steps):
    """p5, p10, p25, p50 of a mode's steps: the low ones see the machine's fast periods, where a
    slow drift of the host adds least (bench/tracer/README.md, run 19)."""
    s = sorted(steps)
    if not s:
        return None
    return {k: s[int(q * (len(s) - 1))] for k, q in (("p5", .05), ("p10", .10), ("p25", .25), ("p50", .5))}


def recorded_skipped(steps, every, first):
    """Inside one generation of a sampled process: (median recorded, median skipped, neighbour
    ratios) over the steps past the first `first`; a neighbour ratio is a recorded step over the
    mean of the skipped steps just before and after it (so slow drifts cancel)."""
    rec = [x for j, x in enumerate(steps) if j >= first and (j - first) % every == 0]
    skip = [x for j, x in enumerate(steps) if j >= first and (j - first) % every != 0]
    nb = []
    for j in range(first + 1, len(steps) - 1):
        if (j - first) % every == 0 and every > 1:
            nb.append((steps[j] / ((steps[j - 1] + steps[j + 1]) / 2) - 1) * 100)
    return rec, skip, nb


def turn_cycles(d):
    """tag -> the cycle of each of its turns, in order, from the turn driver's turns_cycles.txt
    (step turns) or cost_call.sh's bash loop's turns.txt (a generation a turn); (None, None) when
    neither is there. Also the cycles' wall times (ms; turns_cycles.txt only)."""
    cyc, walls = {}, []
    path = os.path.join(d, "turns_cycles.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) < 3 or line.startswith("#"):
                continue
            ms = 0.0
            for part in f[2:]:
                tag, t_ms, _ = part.split(":")
                cyc.setdefault(tag, []).append(int(f[0]))
                ms += float(t_ms)
            walls.append(ms)
        return cyc, walls
    path = os.path.join(d, "turns.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) >= 2:
                cyc.setdefault(f[0], []).append(int(f[1]))
        return cyc, walls
    return None, None


def mean_ci(vals):
    """n, median, mean, sd and the mean's 95% interval (Student t over the values)."""
    n = len(vals)
    if not n:
        return None
    m = statistics.mean(vals)
    sd = statistics.stdev(vals) if n > 1 else float("nan")
    h = t975(n - 1) * sd / math.sqrt(n) if n > 1 else float("inf")
    r = lambda x: round(x, 3) if math.isfinite(x) else None  # noqa: E731
    return dict(n=n, median=r(statistics.median(vals)), mean=r(m), sd=r(sd), ci95=[r(m - h), r(m + h)])


def step_values(it, metric):
    """An iteration line's per-step values of `metric`: "time" the wall time (step_full_ms where
    present, else step_ms), else the list step_<metric> (the programs' StepCounters with
    LLMPROF_BENCH_COUNTERS=1: cpu_ms, cycles, instr); [] when absent."""
    if metric == "time":
        return it.get("step_full_ms") or it.get("step_ms") or []
    return it.get("step_" + metric) or []


def paired_steps(procs, cycles, metric="time"):
    """Step-level pairing (README "Step-level turns"): per program, each process's decode steps
    against the plain processes' steps of the same generation (`iter`) and step index that ran
    in the same cycle of turns (a step's turn: iter * ceil(N/K) + index // K, K the lines'
    turn_steps, N the steps a generation; the n-th turn of a process is its n-th entry in the
    turns log; steps past its last logged turn, released at the deadline, are left out). The
    unmodified program's steps are its step_full_ms where present (a forward's start to the next
    one's), else step_ms. Per process and generation: sum of its paired steps / sum of the
    reference's - 1 (%), and the median of its step pairs' ratios (robust to the pairs that a
    switch of the host's speed fell between); per mode each averaged over its processes per
    generation, then median, mean and the mean's 95% Student t interval over generations
    (per_generation_pct, per_generation_step_median_pct), and the median of all its step pairs'
    ratios (step_pairs). Reference: per step the mean of all plain processes ("ref"), and the first
    plain process alone ("against_first_plain"); the placebo: each further plain process against
    the first (it must come out near 0). metric: what a step is measured by (step_values)."""
    keyed = {}  # tag -> {(iter, index): (cycle, ms)}
    for tag, (prog, mode, its) in procs.items():
        turns = cycles.get(tag, [])
        kd = {}
        for it in its:
            steps = step_values(it, metric)
            n = len(steps)
            if not n:
                continue
            k = it.get("turn_steps") or n
            per_gen = -(-n // k)
            for j, x in enumerate(steps):
                t = it["iter"] * per_gen + j // k
                if t < len(turns):
                    kd[(it["iter"], j)] = (turns[t], x)
        keyed[tag] = kd

    def compare(tags, refs):
        gen_ratios, gen_medians, step_ratios, per_proc = {}, {}, [], {}
        for tag in tags:
            sums = {}
            for key, (c, x) in keyed[tag].items():
                rv = [keyed[r].get(key) for r in refs]
                if any(v is None or v[0] != c for v in rv):
                    continue
                ref = sum(v[1] for v in rv) / len(rv)
                if ref <= 0:
                    continue  # a count that did not move (a stand-in's sleeping step)
                a = sums.setdefault(key[0], [0.0, 0.0, []])
                a[0] += x
                a[1] += ref
                a[2].append((x / ref - 1) * 100)
                step_ratios.append(a[2][-1])
            rows = {g: (a[0] / a[1] - 1) * 100 for g, a in sorted(sums.items())}
            meds = {g: statistics.median(a[2]) for g, a in sorted(sums.items())}
            per_proc[tag] = dict(pairs=sum(len(a[2]) for a in sums.values()),
                                 ratio_of_sums_pct={g: round(v, 3) for g, v in rows.items()},
                                 step_pair_median_pct={g: round(v, 3) for g, v in meds.items()})
            for g, v in rows.items():
                gen_ratios.setdefault(g, []).append(v)
                gen_medians.setdefault(g, []).append(meds[g])
        if not gen_ratios:
            return None
        by_gen = lambda d: [statistics.mean(v) for _, v in sorted(d.items())]  # noqa: E731
        return dict(per_generation_pct=mean_ci(by_gen(gen_ratios)),
                    per_generation_step_median_pct=mean_ci(by_gen(gen_medians)),
                    step_pairs=dict(n=len(step_ratios), median_pct=round(statistics.median(step_ratios), 3)),
                    processes=per_proc)

    res = {}
    for prog in sorted(set(p for p, _, _ in procs.values())):
        tags = {t: m for t, (p, m, _) in procs.items() if p == prog}
        plains = sorted(t for t, m in tags.items() if m == "plain")
        if not plains or not any(keyed[t] for t in tags):
            continue  # no plain process, or no step has this metric
        out = {"reference": plains, "modes": {}}
        for mode in sorted(set(tags.values()) - {"plain"}):
            mt = sorted(t for t, m in tags.items() if m == mode)
            row = compare(mt, plains)
            if row:
                first = compare(mt, plains[:1]) if len(plains) > 1 else None
                if first:
                    row["against_first_plain"] = first["per_generation_pct"]
                out["modes"][mode] = row
        if len(plains) > 1:
            out["placebo"] = compare(plains[1:], plains[:1])
        res[prog] = out
    return res


def cmd_cost(d, sample="every=8,first=2"):
    """cost_call.sh's outputs: <prog>_<mode>_<round>.txt (round: a number for one process per
    round, `t` for the turns of one process per mode), launch_<mode>_<round>.json."""
    every, first, pick, _ = parse_sample(sample)
    # which steps were recorded is known from the schedule only when the block's first unit is
    # picked (pick=first); with pick=random the in-process comparison is left out
    systematic = pick == "first"
    gens = {}      # prog -> mode -> [(round, iter, ms_per_step, step median)]
    inproc = {}
    neighbours = []
    steps_of = {}  # (prog, mode) -> every step's ms (a step over 1 s: stopped in it, left out)
    positions = {}  # position in a block of the schedule -> % against the block's skipped median
    procs = {}      # tag -> (prog, mode, iteration lines)
    step_turns = False
    for f in sorted(os.listdir(d)):
        if not f.endswith(".txt") or f.count("_") != 2 or f.startswith(("launch", "kept", "progress", "turns")):
            continue
        prog, mode, rnd = f[:-4].split("_")
        its = program_iters(os.path.join(d, f))
        procs[f[:-4]] = (prog, mode, its)
        for it in its:
            steps = it.get("step_ms", [])
            steps_of.setdefault((prog, mode), []).extend(x for x in steps if x < 1000.0)
            # with step turns decode_ms includes the stops: the steps' mean instead
            full = it.get("step_full_ms") or steps
            v = statistics.mean(full) if it.get("turn_steps") and full else it["decode_ms_per_step"]
            step_turns = step_turns or bool(it.get("turn_steps"))
            gens.setdefault(prog, {}).setdefault(mode, []).append(
                (rnd, it["iter"], v, statistics.median(steps) if steps else None))
            if mode == "sampled" and steps and systematic:
                rec, skip, nb = recorded_skipped(steps, every, first)
                neighbours.extend(nb)
                # each block of `every` steps (the recorded one first) against its skipped ones'
                # median: a cost spilling into the steps after a recorded one shows at 1, 2 ...
                for b in range(first, len(steps) - every + 1, every):
                    blk = steps[b:b + every]
                    m = statistics.median(blk[1:]) if every > 1 else None
                    for k, x in enumerate(blk):
                        if m:
                            positions.setdefault(k, []).append((x / m - 1) * 100)
                if rec and skip:
                    r, k = statistics.median(rec), statistics.median(skip)
                    inproc.setdefault("%s_%s" % (prog, rnd), []).append(dict(
                        iter=it["iter"], recorded_ms=round(r, 4), skipped_ms=round(k, 4),
                        recorded_over_skipped_pct=round((r / k - 1) * 100, 3),
                        neighbour_pct_median=round(statistics.median(nb), 3) if nb else None,
                        n_recorded=len(rec), n_skipped=len(skip)))
    res = {"sample": sample, "metric": "decode ms per step of each measured generation (the program's "
           "CUDA events: decode time / steps)", "programs": {}, "inproc": inproc}
    if step_turns:
        res["metric"] = ("decode ms per step of each measured generation: with step turns the mean of its "
                         "step_full_ms (the unmodified program) or step_ms (decode_ms includes the stops)")
    cycles, walls = turn_cycles(d)
    if cycles:
        res["paired_steps"] = paired_steps(procs, cycles)
        # the same pairs by the launching thread's work (StepCounters): CPU time, cycles, instructions
        for metric in ("cpu_ms", "cycles", "instr"):
            if any(step_values(it, metric) for _, _, its in procs.values() for it in its):
                res["paired_steps_" + metric] = paired_steps(procs, cycles, metric)
        if walls:
            res["paired_steps_cycle_ms"] = spread(walls)
    for prog, modes in gens.items():
        plain = {(r, i): v for r, i, v, _ in modes.get("plain", [])}
        out = {}
        for mode, rows in modes.items():
            vals = [v for _, _, v, _ in rows]
            row = spread(vals)
            row["per_process"] = {}
            for r in sorted(set(x[0] for x in rows)):
                row["per_process"][r] = [round(v, 4) for rr, _, v, _ in sorted(rows) if rr == r]
            sm = [m for _, _, _, m in rows if m is not None]
            if sm:
                row["step_median_ms"] = statistics.median(sm)
            row["step_quantiles_ms"] = step_quantiles(steps_of.get((prog, mode), []))
            if plain and mode != "plain":
                row["overhead_pct_of_medians"] = (row["median"] / statistics.median(plain.values()) - 1) * 100
                paired = [(v / plain[(r, i)] - 1) * 100 for r, i, v, _ in rows if (r, i) in plain]
                if paired:
                    p = spread(paired)
                    row["overhead_pct_paired"] = {k: round(p[k], 3) for k in ("n", "median", "q1", "q3", "min", "max")}
            out[mode] = row
        pq = out.get("plain", {}).get("step_quantiles_ms")
        for mode, row in out.items():
            q = row.get("step_quantiles_ms")
            if pq and q and mode != "plain":
                row["step_quantiles_overhead_pct"] = {k: round((q[k] / pq[k] - 1) * 100, 2) for k in q if pq.get(k)}
        res["programs"][prog] = out
    if inproc:
        diffs = [g["recorded_over_skipped_pct"] for gl in inproc.values() for g in gl]
        res["inproc_summary"] = spread(diffs)
    if neighbours:
        res["inproc_neighbours"] = spread(neighbours)
    if positions:
        res["inproc_block_positions_pct"] = {k: round(statistics.median(v), 2) for k, v in sorted(positions.items())}
    launch = {}
    for f in sorted(os.listdir(d)):
        if f.startswith("launch_") and f.endswith(".json"):
            mode = f[len("launch_"):-len(".json")].rsplit("_", 1)[0]
            try:
                rec = json.loads(open(os.path.join(d, f)).read().strip().splitlines()[-1])
            except (ValueError, IndexError):
                continue
            for k, v in rec.items():
                if k.endswith("_ns"):
                    launch.setdefault(mode, {}).setdefault(k, []).append(v)
    if launch:
        # per process, the mean over the launch sections (one launch each; launch_cold left out):
        # the processes' spread is the benchmark's noise
        secs = ("launch_ns", "launch_nvtx_ns", "launch_args_ns", "launch_funcs_ns", "launch_torch_ns",
                "launch_ex_ns", "launch_long_ns")
        per = {m: [statistics.mean(keys[k][i] for k in secs) for i in range(len(keys["launch_ns"]))]
               for m, keys in launch.items() if all(k in keys for k in secs)}
        res["launch_process_mean_ns"] = {m: [round(x, 1) for x in v] for m, v in per.items()}
        if "plain" in per:
            base = statistics.median(per["plain"])
            res["launch_mean_over_plain"] = {m: dict(ns=round(statistics.median(v) - base, 1),
                                                     pct=round((statistics.median(v) / base - 1) * 100, 2))
                                             for m, v in per.items() if m != "plain"}
        med = {m: {k: statistics.median(v) for k, v in keys.items()} for m, keys in launch.items()}
        res["launch_ns"] = med
        res["launch_runs"] = {m: len(next(iter(keys.values()))) for m, keys in launch.items()}
        if "plain" in med:
            res["launch_ns_over_plain"] = {m: {k: round(v - med["plain"][k], 1) for k, v in keys.items()
                                               if k in med["plain"]} for m, keys in med.items() if m != "plain"}
    print(json.dumps(res, indent=1))
    return res


MASK64 = (1 << 64) - 1


def mix64(x):
    """splitmix64's finalizer (include/llmprof/trace_format.h)."""
    x = (x + 0x9e3779b97f4a7c15) & MASK64
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & MASK64
    return x ^ (x >> 31)


def burst_schedule(parent, n, every=64, burst=4, first=2, seed=0):
    """Which of the n units under the parent-th parent range a burst schedule records (the tracer's
    on_schedule, pick=random): the first `first`, then one cluster of `burst` per block."""
    out = []
    for j in range(n):
        if j < first:
            out.append(True)
            continue
        b, pos = (j - first) // every, (j - first) % every
        start = burst * (mix64(mix64(mix64(seed) ^ parent) ^ b) % (every // burst))
        out.append(start <= pos < start + burst)
    return out


def step_places(rec, lead=2, end=4):
    """Each unit's place in a burst schedule (`rec`: burst_schedule's list): first (the first
    recorded units), rec_start / rec_mid / rec_end (a burst's first, middle and last unit: the last
    holds the detach), lead (attached ahead of a burst, kinds off), end (the last `end` units of
    the generation: attached ahead of the next prefill), post (the 3 units after a detach), or
    detached."""
    n, out = len(rec), []
    for j in range(n):
        if rec[j]:
            if all(rec[:j + 1]):
                out.append("first")
            elif not rec[j - 1]:
                out.append("rec_start")
            elif j + 1 < n and not rec[j + 1]:
                out.append("rec_end")
            else:
                out.append("rec_mid")
        elif any(j + d < n and rec[j + d] for d in range(1, lead + 1)):
            out.append("lead")
        elif j >= n - end:
            out.append("end")
        elif any(j - d >= 0 and rec[j - d] for d in range(1, 4)):
            out.append("post")
        else:
            out.append("detached")
    return out


def places(d, tag, spec="every=128,burst=4,first=2", offset=2, before=None, exclude=None):
    """Where a burst process's cost lies (run 26): its decode steps grouped by their place in the
    burst schedule (step_places), each against the mean of the plain processes' steps of the same
    generation and index (DIR/<prog>_plain_*.txt), ratio of sums and median of the step ratios in
    %, and the excess in ms per generation. `offset`: the parent ordinal of the first measured
    generation (2: one generation before it, the warm-up or the cold first one). The detached
    steps' ratio is the process's own level (its offset against the plain processes plus what
    CUPTI's detached state costs); the other places' excess over it is what the bursts add.
    summary: all steps' ratio of sums, the detached steps' (the level), and what the other places
    add above that level (their excess over the level, % of all plain time). by_generation: per
    generation, the ratio of sums of its detached steps and of all its steps (with
    LLMPROF_TRACE_CUPTI_DELAY, cost_call.sh's mode `delay`, the generations before CUPTI's start
    against the detached steps after it: one process, no offset between processes). `before`
    (the first measured generation with CUPTI started, the delay's N less 2 for hf_generate.py):
    places and summary count only the generations from it on (those before had no bursts), and
    "delay" gives the mean over generations of all steps' ratio before it and after it, of the
    detached steps' after it, and after less before (the bursts' cost inside the process).
    `exclude`: a plain process left out of the reference (pool's plain processes, each against
    the others)."""
    every, first, _, burst = parse_sample(spec, every=128, burst=4)
    prog = tag.split("_")[0]
    plains = [program_iters(os.path.join(d, f)) for f in sorted(os.listdir(d))
              if f.startswith(prog + "_plain_") and f.endswith(".txt") and f != "%s.txt" % exclude]
    if not plains:
        raise SystemExit("no %s_plain_*.txt in %s" % (prog, d))
    ref = {}
    for its in plains:
        for it in its:
            for j, x in enumerate(step_values(it, "time")):
                ref.setdefault((it["iter"], j), []).append(x)
    groups, gens, by_gen = {}, 0, []
    for it in program_iters(os.path.join(d, tag + ".txt")):
        steps = step_values(it, "time")
        places = step_places(burst_schedule(it["iter"] + offset, len(steps), every, burst, first))
        gens += 1
        sums = [0.0, 0.0, 0.0, 0.0]  # detached: ours, plain's; all: ours, plain's
        for j, (x, place) in enumerate(zip(steps, places)):
            r = ref.get((it["iter"], j))
            if r and len(r) == len(plains):
                y = sum(r) / len(r)
                if before is None or it["iter"] >= before:
                    groups.setdefault(place, []).append((x, y))
                sums[2] += x
                sums[3] += y
                if place == "detached":
                    sums[0] += x
                    sums[1] += y
        by_gen.append(dict(iter=it["iter"], detached_pct=round((sums[0] / sums[1] - 1) * 100, 2) if sums[1] else None,
                           all_pct=round((sums[2] / sums[3] - 1) * 100, 2) if sums[3] else None))
    out = {"tag": tag, "spec": spec, "generations": gens, "plain_processes": len(plains), "places": {},
           "by_generation": by_gen}
    sums = {place: (sum(x for x, _ in v), sum(y for _, y in v)) for place, v in groups.items()}
    for place, v in sorted(groups.items()):
        a, b = sums[place]
        out["places"][place] = dict(n=len(v), ratio_of_sums_pct=round((a / b - 1) * 100, 2),
                                    median_pct=round(statistics.median((x / y - 1) * 100 for x, y in v), 2),
                                    excess_ms_per_generation=round((a - b) / max(1, gens), 2))
    if sums:
        a_all, b_all = sum(a for a, _ in sums.values()), sum(b for _, b in sums.values())
        level = sums["detached"][0] / sums["detached"][1] - 1 if "detached" in sums else 0.0
        above = sum(a - b * (1 + level) for place, (a, b) in sums.items() if place != "detached")
        out["summary"] = dict(total_pct=round((a_all / b_all - 1) * 100, 2), detached_pct=round(level * 100, 2),
                              above_detached_pct=round(above / b_all * 100, 2))
    if before is not None:
        def mean_of(key, after):
            v = [g[key] for g in by_gen if g[key] is not None and (g["iter"] >= before) == after]
            return round(sum(v) / len(v), 2) if v else None
        b, a = mean_of("all_pct", False), mean_of("all_pct", True)
        out["delay"] = dict(before=before, before_pct=b, after_pct=a, after_detached_pct=mean_of("detached_pct", True),
                            after_less_before_pct=round(a - b, 2) if a is not None and b is not None else None)
    return out


def cmd_places(d, tag, spec="every=128,burst=4,first=2", offset=2, before=None):
    out = places(d, tag, spec, offset, before)
    print(json.dumps(out, indent=1))
    return out


def logged_spec(log_path, default="every=128,burst=4,first=2"):
    """The schedule a traced process ran, from its tracer log's "stages: sampling" line ("B in each
    block of N after the first F"), as places' SPEC; `default` without a log or that line (the
    processes of modes without the tracer, whose steps are grouped by it only to be counted)."""
    try:
        text = open(log_path, errors="replace").read()
    except OSError:
        return default
    m = re.search(r"stages: sampling .*?(\d+) in each block of (\d+) after the first (\d+)", text)
    if not m:
        return default
    burst = ",burst=%s" % m.group(1) if "CUPTI detached between bursts" in text else ""
    return "every=%s%s,first=%s" % (m.group(2), burst, m.group(3))


def places_header(width=16):
    """The column heads of places_row's lines (the first column `width` wide)."""
    return "%-*s %-24s %8s %9s %8s   %s" % (width, "process", "schedule", "total", "detached", "above",
                                           "delay: before / after (detached) / after-before")


def places_row(label, out, width=16):
    """One process's line: places' summary (total, detached level, above it) and its delay columns."""
    s, x = out["summary"], out.get("delay")
    f = lambda v: "n/a" if v is None else "%+.2f" % v  # noqa: E731 (no generation before, none detached)
    dl = "%s / %s (%s) / %s" % (f(x["before_pct"]), f(x["after_pct"]), f(x["after_detached_pct"]),
                                f(x["after_less_before_pct"])) if x else ""
    return "%-*s %-24s %+7.2f%% %+8.2f%% %+7.2f%%   %s" % (width, label, out["spec"], s["total_pct"], s["detached_pct"],
                                                        s["above_detached_pct"], dl)


def places_group(vals):
    """A group of processes' values: min to max, mean."""
    return "%+.2f to %+.2f, mean %+.2f" % (min(vals), max(vals), sum(vals) / len(vals))


def call_places(d, before=None, plain=True):
    """places for every process of one step-turn call (DIR/<prog>_<mode>_<x>.txt), each with the
    schedule its log names, BEFORE for the modes delay and delay2 and N - 2 for lateN (its summary
    then counts the generations with CUPTI started, its "delay" the ones before); a plain process
    against the call's other plain processes of its program (where it has at least one; none with
    `plain` false). Returns (program, mode, tag, places' result) for those with a summary."""
    rows, names = [], sorted(os.listdir(d))
    n_plain = lambda prog: sum(n.startswith(prog + "_plain_") and n.endswith(".txt") for n in names)  # noqa: E731
    for f in names:
        parts = f[:-4].split("_") if f.endswith(".txt") else []
        if len(parts) != 3 or parts[0] not in ("hf", "plain", "hfo"):
            continue
        tag, mode = f[:-4], parts[1]
        if mode == "plain" and (not plain or n_plain(parts[0]) < 2):
            continue
        spec = logged_spec(os.path.join(d, "inject_%s.log" % tag))
        late = re.match(r"late([2-9])$", mode)  # cost_call.sh's lateN: CUPTI from parent N, measured gen N - 2
        b = int(late.group(1)) - 2 if late else before if mode in ("delay", "delay2") else None
        out = places(d, tag, spec, 2, b, tag if mode == "plain" else None)
        if "summary" in out:
            rows.append((parts[0], mode, tag, out))
    return rows


def cmd_places_all(d, before=None):
    """places for every process of a step-turn call (DIR/<prog>_<mode>_<x>.txt, plain ones excepted),
    each with the schedule its log names, BEFORE for the modes delay and delay2 (CUPTI started
    before a later generation) and N - 2 for lateN; then per (program, mode) the processes' min, max and mean of the
    total, the detached level and what the other places add above it (% against plain). Prints a
    table."""
    rows = call_places(d, before, plain=False)
    print(places_header())
    for prog, mode, tag, out in rows:
        print(places_row(tag, out))
    print("per program and mode (processes: min to max, mean):")
    for key in sorted({(r[0], r[1]) for r in rows}):
        g = [r[3]["summary"] for r in rows if (r[0], r[1]) == key]
        print("  %-6s %-9s n=%d  %s" % (key[0], key[1], len(g), "; ".join(
            "%s %s" % (k[:-4], places_group([x[k] for x in g])) for k in ("total_pct", "detached_pct", "above_detached_pct"))))


def pool_calls(paths, cmd):
    """call_places of every call (directories, or cost.tgz files as step_call.sh brings them back),
    (path, rows) per call; a path that is neither, or a call without a plain reference, ends
    with a one-line error naming it."""
    import tarfile
    import tempfile
    calls = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, path in enumerate(paths):
            d = path
            if not os.path.isdir(path):
                try:
                    with tarfile.open(path) as t:
                        d = os.path.join(tmp, str(i))
                        if hasattr(tarfile, "data_filter"):  # Python 3.12, and the security releases before it
                            t.extractall(d, filter="data")
                        else:
                            t.extractall(d)
                except (OSError, tarfile.TarError) as e:
                    raise SystemExit("%s: %s: not a directory or a readable tar file (%s)" % (cmd, path, e))
            rows = call_places(d)
            if not rows:
                raise SystemExit("%s: %s: no process with a plain reference (<prog>_<mode>_<x>.txt)" % (cmd, path))
            calls.append((path, rows))
    return calls


def pair_calls(calls, a, b, prog=None):
    """Mode a against mode b inside the calls that ran both (run 29): every process of a call is
    read against the same plain processes, so that reference's own error (its few processes'
    offsets) is shared by the whole call and cancels only in a difference taken inside the call;
    pool's intervals treat it as independent. Per call the difference of the two modes' process
    means; over calls their mean weighted by nA*nB/(nA+nB), its standard error from the
    processes' sd pooled inside each mode and call (Student t, N - 2 x calls degrees of freedom).
    `prog`: one program (hf, plain), else both. None when no call ran both."""
    per, ss, df = [], 0.0, 0
    for path, rows in calls:
        va = [out["summary"]["total_pct"] for p, m, _, out in rows if m == a and prog in (None, p)]
        vb = [out["summary"]["total_pct"] for p, m, _, out in rows if m == b and prog in (None, p)]
        if not va or not vb:
            continue
        for v in (va, vb):
            mu = statistics.mean(v)
            ss += sum((x - mu) ** 2 for x in v)
            df += len(v) - 1
        per.append(dict(call=os.path.basename(path.rstrip("/")), n_a=len(va), n_b=len(vb),
                        diff=statistics.mean(va) - statistics.mean(vb)))
    if not per:
        return None
    w = [c["n_a"] * c["n_b"] / (c["n_a"] + c["n_b"]) for c in per]
    d = sum(wi * c["diff"] for wi, c in zip(w, per)) / sum(w)
    sd = math.sqrt(ss / df) if df else float("nan")
    h = t975(df) * sd / math.sqrt(sum(w)) if df else float("inf")
    r = lambda x: round(x, 3) if math.isfinite(x) else None  # noqa: E731
    return dict(a=a, b=b, calls=per, diff=r(d), sd=r(sd), df=df, ci95=[r(d - h), r(d + h)])


def cmd_pair(a, b, paths):
    """pair_calls over the calls given, per program and both together; prints a table."""
    calls = pool_calls(paths, "pair")
    print("%s against %s inside each call that ran both (decode step, points of plain's time):" % (a, b))
    found = 0
    for prog in ("hf", "plain", None):
        out = pair_calls(calls, a, b, prog)
        if not out or (prog is None and found < 2):  # both programs together: only where both ran
            continue
        found += 1
        for c in out["calls"]:
            print("  %-5s %s: %s n=%d, %s n=%d: %+.2f" % (prog or "all", c["call"], a, c["n_a"], b, c["n_b"],
                                                       c["diff"]))
        ci = "[%+.2f, %+.2f]" % tuple(out["ci95"]) if out["ci95"][0] is not None else "-"
        print("%-5s %d calls: %s - %s = %+.2f points, 95%% interval %s (process sd %s, %d df)" % (
            prog or "all", len(out["calls"]), a, b, out["diff"], ci, out["sd"], out["df"]))
    if not found:
        raise SystemExit("pair: no call ran both %s and %s" % (a, b))


def cmd_pool(paths):
    """Every process of several step-turn calls (directories, or cost.tgz files as step_call.sh
    brings them back), each process's total against its own call's plain processes (places'
    summary; a plain process against the call's other plain ones: the offsets between processes),
    pooled per program and mode and per mode over both programs: n processes, mean, standard
    deviation and the mean's 95% interval (Student t over processes: the offsets between
    processes, 1-3% on the GPU machine, are what a mode's few processes in one call cannot
    average out; run 28). A delay or delay2 process counts all its generations, a lateN process
    those from CUPTI's start on. Prints a table."""
    groups, calls = {}, pool_calls(paths, "pool")
    for _, rows in calls:
        for prog, mode, _, out in rows:
            v = out["summary"]["total_pct"]
            groups.setdefault((prog, mode), []).append(v)
            groups.setdefault(("all", mode), []).append(v)
    print("%d calls; each process's decode steps against its call's plain processes (%%), pooled:" % len(calls))
    print("%-6s %-9s %3s %8s %6s  %-18s %s" % ("prog", "mode", "n", "mean", "sd", "95% interval", "min to max"))
    for prog, mode in sorted(groups, key=lambda k: (k[0] == "all", k[0], k[1] != "plain", k[1])):
        v = groups[(prog, mode)]
        m = mean_ci(v)
        sd = "%6.2f" % m["sd"] if m["sd"] is not None else "     -"
        ci = "[%+.2f, %+.2f]" % tuple(m["ci95"]) if m["ci95"][0] is not None else "-"
        print("%-6s %-9s %3d %+7.2f%% %s  %-18s %+.2f to %+.2f" % (prog, mode, m["n"], m["mean"], sd, ci,
                                                                min(v), max(v)))


def cmd_gens(trace_path):
    t = read_trace(trace_path)
    stages = ("prefill", "decode_all")
    inst = per_unit_calls(t, stages)
    units = {}  # decode_all range -> [decode_step units, recorded]
    for rid, s in t["stages"].items():
        if name_of(t, s["name"]) != "decode_step":
            continue
        r = t["ranges"].get(rid)
        par = unit_of(t, r[1], stages) if r else 0
        u = units.setdefault(par, [0, 0])
        u[0] += 1
        u[1] += s["sample"] in (1, 3) or not t["sampling"] or t["sampling"][0] == 1
    out = []
    for rid in sorted((r for r in t["ranges"] if name_of(t, t["ranges"][r][0]) in stages),
                      key=lambda r: t["ranges"][r][2]):
        r = t["ranges"][rid]
        g = dict(stage=name_of(t, r[0]), warmup=bool(unit_of(t, rid, "warmup")), start_ns=r[2], end_ns=r[3],
                 kernels=inst.get(rid, {}))
        if g["stage"] == "decode_all":
            g["units"], g["units_recorded"] = units.get(rid, [0, 0])
        out.append(g)
    print(json.dumps(dict(trace=trace_path, sampling=list(t["sampling"]) if t["sampling"] else None,
                          generations=out)))


def cmd_units(trace_path, top=30):
    t = read_trace(trace_path)
    data = per_unit_calls(t, "decode_step")
    tot = {}
    for d in data.values():
        for k, c in d.items():
            tot[k] = tot.get(k, 0) + c[1]
    keep = sorted(tot, key=lambda k: -tot[k])[:int(top)]
    rows, prev_par, prev_idx, run = [], None, None, 0
    for rid in sorted(data, key=lambda r: t["ranges"][r][2]):
        r, s = t["ranges"][rid], t["stages"].get(rid, {})
        par, idx = r[1], s.get("index", -1)
        run = run + 1 if par == prev_par and idx == prev_idx + 1 else 0
        prev_par, prev_idx = par, idx
        rows.append(dict(parent=par, index=idx, run=run, cpu_ns=r[3] - r[2], gpu_ns=s.get("elapsed"),
                         sample=s.get("sample"),
                         k=[data[rid].get(k, [0, 0]) for k in keep]))
    print(json.dumps(dict(trace=trace_path, kernels=keep, units=rows)))


def cmd_unitdiff(path_a, path_b, top=23):
    def load(path):
        u = json.load(open(path))
        parents = []
        for x in u["units"]:
            if x["parent"] not in parents:
                parents.append(x["parent"])
        parents = parents[-3:]  # the measured generations (an exact trace also holds the warm-up's)
        return {(parents.index(x["parent"]), x["index"]): (x, dict(zip(u["kernels"], x["k"])))
                for x in u["units"] if x["parent"] in parents}
    a, b = load(path_a), load(path_b)
    both = sorted(set(a) & set(b))
    tot = {}
    for _, kb in b.values():
        for k, (_, ns) in kb.items():
            tot[k] = tot.get(k, 0) + ns
    out = []
    for k in sorted(tot, key=lambda k: -tot[k])[:int(top)]:
        by = {}
        for key in both:
            (xa, ka), (_, kb) = a[key], b[key]
            if k not in ka or k not in kb or ka[k][0] != kb[k][0] or not kb[k][1]:
                continue
            d = ka[k][1] / kb[k][1] - 1
            by.setdefault("all", []).append(d)
            by.setdefault("first2" if key[1] < 2 else "run%d" % min(xa["run"], 3), []).append(d)
        out.append(dict(kernel=k, ms_b=tot[k] / 1e6,
                        **{c: dict(mean_pct=100 * statistics.mean(v), n=len(v)) for c, v in sorted(by.items())}))
    alls = [r["all"]["mean_pct"] for r in out if "all" in r]
    print(json.dumps(dict(a=path_a, b=path_b, steps_both=len(both), kernels=out,
                          all_rms_pct=math.sqrt(sum(x * x for x in alls) / len(alls)) if alls else None,
                          all_max_pct=max((abs(x) for x in alls), default=None)), indent=1))


def ncu_rows(path):
    """An ncu raw CSV (--nvtx): [(mangled or demangled kernel name, ns, NVTX push/pop cell)]."""
    import csv
    rows = []
    with open(path, newline="") as f:
        rd = csv.reader(f)
        head = None
        for r in rd:
            if head is None:
                if "Kernel Name" in r:
                    head = {c: i for i, c in enumerate(r)}
                    if "gpu__time_duration.sum" not in head:
                        raise SystemExit("%s: no gpu__time_duration.sum column (collect with "
                                         "--metrics gpu__time_duration.sum)" % path)
                continue
            if len(r) != len(head) or not r[head["ID"]].strip().isdigit():
                continue  # the units row
            nv = next((r[i] for c, i in head.items() if c.startswith("thread Domain:Push/Pop")), "")
            ns = float(r[head["gpu__time_duration.sum"]].replace(",", ""))
            rows.append((r[head["Kernel Name"]], ns, nv))
    return rows


def ncu_stack(cell):
    """The push/pop stack of an ncu NVTX cell: [(range name, payload or None)], bottom first."""
    out = []
    for lvl in re.findall(r'"([^"]*)"', cell):
        f = lvl.split(":")
        if len(f) >= 8:  # Domain:Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg
            pl = f[-5]
            out.append((":".join(f[1:-6]), int(pl) if pl.isdigit() else None))
    return out


def mean_by_name(pairs):
    acc = {}
    for k, ns in pairs:
        c = acc.setdefault(k, [0, 0.0])
        c[0] += 1
        c[1] += ns
    return {k: (c[1] / c[0], c[0]) for k, c in acc.items()}


def trace_step_kernels(t, first):
    """(kernel name, ns) of the kernels launched in the decode steps with index < first (all when
    first is None) outside `warmup` that the trace recorded, and {step rid: (index, sample)}."""
    steps = {}
    for rid, r in t["ranges"].items():
        if name_of(t, r[0]) == "decode_step" and not unit_of(t, rid, "warmup"):
            st = t["stages"].get(rid, {})
            if first is None or st.get("index", 1 << 30) < first:
                steps[rid] = (st.get("index", -1), st.get("sample", 0))
    out = []
    for name, corr, dur in t["kernels"]:
        if unit_of(t, t["launch"].get(corr, 0), "decode_step") in steps:
            out.append((name_of(t, name), dur))
    return out, steps


def pct(a, b):
    return None if not b else round(100.0 * (a / b - 1), 2)


def cmd_ncuvs(csv_path, traces, first=2):
    rows = []
    for k, ns, cell in ncu_rows(csv_path):
        st = ncu_stack(cell)
        names = [n for n, _ in st]
        if "warmup" in names or "decode_step" not in names:
            continue
        idx = st[names.index("decode_step")][1]
        if idx is not None and idx < first:
            rows.append((k, ns))
    ref = mean_by_name(rows)
    per = {}
    for tp in traces:
        t = read_trace(tp)
        per[tp] = mean_by_name(trace_step_kernels(t, first)[0])
    out = []
    for k in sorted(ref, key=lambda k: -ref[k][0] * ref[k][1]):
        row = dict(kernel=k[:90], ncu_ns=round(ref[k][0], 1), ncu_calls=ref[k][1])
        for tp, m in per.items():
            if k in m:
                row[os.path.basename(tp.rstrip("/"))] = dict(ns=round(m[k][0], 1), calls=m[k][1],
                                                             vs_ncu_pct=pct(m[k][0], ref[k][0]))
        out.append(row)
    summ = {}
    for tp in per:
        tag = os.path.basename(tp.rstrip("/"))
        d = [r[tag]["vs_ncu_pct"] for r in out if tag in r and r[tag]["vs_ncu_pct"] is not None]
        if d:
            summ[tag] = dict(kernels=len(d), mean_pct=round(statistics.mean(d), 2),
                             rms_pct=round(math.sqrt(sum(x * x for x in d) / len(d)), 2))
    print(json.dumps(dict(ncu=csv_path, first=first, ncu_kernels=len(rows), summary=summ, kernels=out),
                     indent=1))


def truth_program(path):
    steps, summ = {}, None
    for line in open(path):
        if line.startswith("{"):
            j = json.loads(line)
            if "step" in j:
                steps[j["step"]] = j["op_ms"]
            elif j.get("summary"):
                summ = j
    return steps, summ


def cmd_truth(d):
    procs = sorted(f[:-4] for f in os.listdir(d) if f.endswith(".txt") and "_" in f and not f.startswith("ncu"))
    plain, modes, names = {}, {}, {}
    for tag in procs:
        mode = tag.rsplit("_", 1)[0]
        steps, summ = truth_program(os.path.join(d, tag + ".txt"))
        if not steps or not summ:
            continue
        reps = summ["reps"]
        ops = sorted(next(iter(steps.values())))
        rec, flags, cupti = set(), {}, {}
        tdir = os.path.join(d, tag)
        if os.path.isdir(tdir) and any(f.endswith(".lptrace") for f in os.listdir(tdir)):
            t = read_trace(tdir)
            kern, units = trace_step_kernels(t, None)
            flags = {idx: smp for idx, smp in units.values()}
            rec = {i for i, smp in flags.items() if smp in (0, 1, 3)}  # 0: exact mode
            for k, v in mean_by_name(kern).items():
                names.setdefault(k, {}).setdefault(mode, []).append(v[0])
            per = {}
            for name, corr, dur in t["kernels"]:
                rid = t["launch"].get(corr, 0)
                u = unit_of(t, rid, "decode_step")
                if u in units and rid in t["ranges"]:
                    op = name_of(t, t["ranges"][rid][0])
                    per.setdefault(op, {}).setdefault(units[u][0], 0)
                    per[op][units[u][0]] += dur
            cupti = {op: statistics.median(v.values()) / reps / 1e6 for op, v in per.items()}
        m = modes.setdefault(mode, {})
        for op in ops:
            all_ = [steps[i][op] for i in steps]
            r = [steps[i][op] for i in steps if i in rec]
            u = [steps[i][op] for i in steps if flags and i not in rec]
            o = m.setdefault(op, dict(all=[], recorded=[], unrecorded=[], cupti=[]))
            o["all"].append(statistics.median(all_))
            if r:
                o["recorded"].append(statistics.median(r))
            if u:
                o["unrecorded"].append(statistics.median(u))
            if op in cupti:
                o["cupti"].append(cupti[op])
        if mode == "plain":
            plain = m
    res = {}
    for op in sorted(next(iter(modes.values()), {})):
        ref = statistics.mean(plain[op]["all"]) if plain else None
        row = {"plain_us": round(1e3 * ref, 3) if ref else None}
        for mode, m in sorted(modes.items()):
            if mode == "plain":
                continue
            o = m[op]
            e = {}
            for part in ("all", "recorded", "unrecorded"):
                if o[part]:
                    v = statistics.mean(o[part])
                    e[part + "_us"] = round(1e3 * v, 3)
                    e[part + "_vs_plain_pct"] = pct(v, ref)
            if o["cupti"]:
                c = statistics.mean(o["cupti"])
                e["tracer_kernels_us"] = round(1e3 * c, 3)
                if o["recorded"]:
                    e["gap_us"] = round(1e3 * (statistics.mean(o["recorded"]) - c), 3)
            e["processes"] = len(o["all"])
            row[mode] = e
        res[op] = row
    ncu = {}
    ncsv = os.path.join(d, "ncu_truth.csv")
    if os.path.exists(ncsv):
        ncu = mean_by_name([(k, ns) for k, ns, cell in ncu_rows(ncsv)
                            if "warmup" not in [n for n, _ in ncu_stack(cell)]])
    kern = []
    for k, by in sorted(names.items(), key=lambda kv: kv[0]):
        row = dict(kernel=k[:90], **{mode: round(statistics.mean(v), 1) for mode, v in sorted(by.items())})
        if k in ncu:
            row["ncu"] = round(ncu[k][0], 1)
        kern.append(row)
    print(json.dumps(dict(dir=d, processes=procs, ops=res, kernels_mean_ns=kern), indent=1))


def serve_program(path):
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("{") and '"summary"' in line:
            return json.loads(line)
    return None


def serve_instances(path, calls):
    """The program's measured prefill calls split by the tracer's STAGE flag (serve_call.sh's
    stages.txt, `llmprof trace dump` lines): recorded (0 exact, 1) and not recorded (2)."""
    if not os.path.exists(path):
        return [], []
    recs = []
    for line in open(path):
        m = re.search(r'range=(\d+) .*sample=(\d) .*name="prefill"', line)
        if m:
            recs.append((int(m.group(1)), int(m.group(2))))
    recs = sorted(recs)[-len(calls):] if calls else []   # the warm-up's prefills come first
    rec = [ms for (r, smp), ms in zip(recs, calls) if smp != 2]
    skp = [ms for (r, smp), ms in zip(recs, calls) if smp == 2]
    return rec, skp


def cmd_serve(d):
    procs = sorted(f[:-4] for f in os.listdir(d) if f.endswith(".txt") and "_" in f)
    modes = {}
    for tag in procs:
        mode = tag.rsplit("_", 1)[0]
        prog = serve_program(os.path.join(d, tag + ".txt"))
        if not prog or "call_ms" not in prog:
            continue
        m = modes.setdefault(mode, dict(calls={}, runs=[]))
        for kind, v in prog["call_ms"].items():
            m["calls"].setdefault(kind, []).append(statistics.mean(v) if v else None)
            m.setdefault("all", {}).setdefault(kind, []).extend(v)
        # the program's prefill and mixed over its decode step, medians of one process: a ratio
        # that cancels the host's speed, which differs by up to 2x between processes
        c = prog["call_ms"]
        if c.get("decode"):
            dm = statistics.median(c["decode"])
            for kind in ("prefill", "mixed"):
                if c.get(kind):
                    m.setdefault("ratio", {}).setdefault(kind, []).append(round(statistics.median(c[kind]) / dm, 3))
            rec, skp = serve_instances(os.path.join(d, tag, "stages.txt"), c.get("prefill", []))
            if rec and skp:
                m.setdefault("ratio", {}).setdefault("prefill_recorded", []).append(round(statistics.median(rec) / dm, 3))
                m["ratio"].setdefault("prefill_unrecorded", []).append(round(statistics.median(skp) / dm, 3))
        sj = os.path.join(d, tag, "summary.json")
        if os.path.exists(sj):
            m["runs"].append((prog, json.load(open(sj))))
    plain = {k: statistics.mean(v) for k, v in modes.get("plain", {}).get("calls", {}).items() if all(v)}
    plain_med = {k: statistics.median(v) for k, v in modes.get("plain", {}).get("all", {}).items() if v}
    res = dict(dir=d, processes=procs, modes={})
    exact = modes.get("off", {}).get("runs", [])
    for mode, m in sorted(modes.items()):
        e = dict(processes=len(m["calls"].get("decode", [])))
        for kind, v in sorted(m["calls"].items()):
            if not all(v):
                continue
            e[kind + "_ms"] = round(statistics.mean(v), 3)
            e[kind + "_median_ms"] = round(statistics.median(m["all"][kind]), 3)
            if kind in plain and mode != "plain":
                e[kind + "_vs_plain_pct"] = pct(statistics.mean(v), plain[kind])
                e[kind + "_median_vs_plain_pct"] = pct(statistics.median(m["all"][kind]), plain_med[kind])
        if m.get("ratio"):
            e["over_decode_step"] = m["ratio"]
        stages, insts, checks = {}, [], []
        for prog, s in m["runs"]:
            for st in s["stages"]:
                stages.setdefault(st["name"], []).append(st["latency_ms"]["mean"])
            tr = s.get("tracing") or {}
            insts.append(dict(mode=tr.get("mode"), stage_instances=tr.get("stage_instances"),
                              prefill_push_attached=tr.get("prefill_push_attached")))
            checks += [round(100 * c["diff"], 2) for c in s["self_check"]["checks"]]
        if stages:
            e["stage_latency_ms"] = {k: round(statistics.mean(v), 3) for k, v in stages.items()}
            e["self_check_pct"] = checks
            e["tracing"] = insts
        if m["runs"] and exact and mode != "off":
            ex = {r["kernel_name"]: r for r in exact[0][1]["kernels"]["rows"]}
            tot = sum(r["total_ms"] for r in ex.values())
            rows, inside = [], 0
            for prog, s in m["runs"][:1]:
                for r in s["kernels"]["rows"]:
                    x = ex.get(r["kernel_name"])
                    if not x or x["total_ms"] < 0.01 * tot:
                        continue
                    ci = r.get("rerun_ci_ms")
                    ok = ci is not None and ci >= 0 and abs(r["total_ms"] - x["total_ms"]) <= ci
                    inside += ok
                    pre = x["stage_ms"]["prefill_ms"] / x["total_ms"] if x["total_ms"] else 0
                    rows.append(dict(kernel=r["kernel_name"][:70], ms=round(r["total_ms"], 3),
                                     prefill_ms=round(r["stage_ms"]["prefill_ms"], 3),
                                     exact_prefill_ms=round(x["stage_ms"]["prefill_ms"], 3),
                                     rerun_ci=round(ci, 3) if ci is not None else None, exact=round(x["total_ms"], 3),
                                     prefill_share=round(pre, 2), inside=ok))
            e["kernels_vs_exact"] = dict(rows=len(rows), inside=inside, detail=rows)
        res["modes"][mode] = e
    res["turns"] = serve_turns(d)
    print(json.dumps(res, indent=1))


def serve_turns(d):
    """serve_call.sh's turns (LP_SERVE_TURNS): each process's rounds paired with plain_t's by
    index, the first left out (the start-ups) and those past the turns a process had (released at
    the deadline: run together); per tag the mean of round / plain round - 1 in %, with Student's
    95% interval, for whole rounds, their decode calls, and their first call (prefill, mixed)."""
    tj = os.path.join(d, "turns.json")
    if not os.path.exists(tj):
        return None
    drv = json.load(open(tj))
    progs = {}
    for f in os.listdir(d):
        if f.endswith(".txt") and f[:-4] in drv["turns"]:
            prog = serve_program(os.path.join(d, f))
            if prog and "round_ms" in prog:
                progs[f[:-4]] = prog
    if "plain_t" not in progs:
        return dict(driver=drv, error="no plain_t rounds")

    def paired(a, b, keep):
        v = [100 * (x / y - 1) for i, (x, y) in enumerate(zip(a, b)) if keep(i) and y > 0]
        if len(v) < 2:
            return None
        m, sd = statistics.mean(v), statistics.stdev(v)
        h = t975(len(v) - 1) * sd / math.sqrt(len(v))
        return dict(n=len(v), pct=round(m, 2), ci=[round(m - h, 2), round(m + h, 2)])

    base = progs["plain_t"]
    out = dict(driver={k: drv[k] for k in ("turn_driver", "cycles", "turns")})
    for tag, prog in sorted(progs.items()):
        if tag == "plain_t":
            continue
        last = min(drv["turns"].get(tag, 0), drv["turns"].get("plain_t", 0))
        inside = lambda i: 1 <= i <= last  # noqa: E731
        first = [r - dd for r, dd in zip(prog["round_ms"], prog["round_decode_ms"])]
        bfirst = [r - dd for r, dd in zip(base["round_ms"], base["round_decode_ms"])]
        kinds = prog.get("round_kind", [])
        e = dict(rounds=paired(prog["round_ms"], base["round_ms"], inside),
                 decode=paired(prog["round_decode_ms"], base["round_decode_ms"], inside))
        for kind in ("prefill", "mixed"):
            e[kind] = paired(first, bfirst, lambda i, k=kind: inside(i) and i < len(kinds) and kinds[i] == k)
        out[tag] = e
    return out


def main(argv):
    if len(argv) >= 2 and argv[0] == "summary":
        cmd_summary(argv[1])
    elif len(argv) >= 3 and argv[0] == "kernels":
        cmd_kernels(argv[1], argv[2], *argv[3:4])
    elif len(argv) >= 2 and argv[0] == "subsample":
        cmd_subsample(argv[1], *(int(x) for x in argv[2:4]))
    elif len(argv) >= 2 and argv[0] == "gens":
        cmd_gens(argv[1])
    elif len(argv) >= 2 and argv[0] == "units":
        cmd_units(*argv[1:3])
    elif len(argv) >= 3 and argv[0] == "unitdiff":
        cmd_unitdiff(*argv[1:4])
    elif len(argv) >= 2 and argv[0] == "cost":
        cmd_cost(argv[1], *argv[2:3])
    elif len(argv) >= 3 and argv[0] == "places":
        cmd_places(argv[1], argv[2], *argv[3:4], *(int(x) for x in argv[4:6]))
    elif len(argv) >= 2 and argv[0] == "places_all":
        cmd_places_all(argv[1], *(int(x) for x in argv[2:3]))
    elif len(argv) >= 4 and argv[0] == "pair":
        cmd_pair(argv[1], argv[2], argv[3:])
    elif len(argv) >= 2 and argv[0] == "pool":
        cmd_pool(argv[1:])
    elif len(argv) >= 2 and argv[0] == "serve":
        cmd_serve(argv[1])
    elif len(argv) >= 2 and argv[0] == "truth":
        cmd_truth(argv[1])
    elif len(argv) >= 3 and argv[0] == "ncuvs":
        cmd_ncuvs(argv[1], argv[2:])
    elif len(argv) >= 3 and argv[0] == "steps":
        cmd_steps(argv[1], argv[2], *argv[3:4])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
