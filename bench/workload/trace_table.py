#!/usr/bin/env python3
"""trace_table.py TRACE.json.gz [STEPS]: the decode kernels of an `llmprof trace perfetto` export
of llmprof-llm, per kernel (calls, total and mean time, and what it adds to a step: its end minus
the latest end of the kernels before it, which under programmatic dependent launch is not its
duration) and per decode step: the sum of kernel durations against the step's span (first kernel
start to last kernel end), i.e. how much of the step the GPU spent between kernels. Used by
bench/workload/probe.sh and moe_probe.sh."""
import collections
import gzip
import json
import re
import sys


def short(name):
    name = re.sub(r"^void ", "", name)
    return re.sub(r"\(.*", "", name)[:60]


def main():
    d = json.load(gzip.open(sys.argv[1], "rt"))
    allk = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    ks = [e for e in allk if e["args"].get("nvtx", "").startswith("decode_all")]
    if not ks:  # graph replays carry their capture-time ranges: take what follows the last prefill
        pre = [float(e["ts"]) for e in allk if e["args"].get("nvtx", "").startswith("prefill")]
        ks = [e for e in allk if pre and float(e["ts"]) > max(pre)
              and not e["args"].get("nvtx", "").startswith("prefill")]
    if not ks:
        print("no decode kernels found")
        return
    per = collections.defaultdict(lambda: [0, 0.0])
    for k in ks:  # by name and grid (the modes of one kernel at different shapes)
        key = "%s [%s]" % (short(k["name"]), k["args"].get("grid", "?"))
        per[key][0] += 1
        per[key][1] += float(k["dur"])
    ks.sort(key=lambda k: float(k["ts"]))
    # steps: each ends with its sampling kernel (k_argmax, or the fused lm_head: mode 3)
    steps, cur = [], []
    for k in ks:
        cur.append(k)
        if re.match(r"k_argmax|k_dec_gemv<\d, 3>", short(k["name"])):
            steps.append(cur)
            cur = []
    if cur:
        steps.append(cur)
    nsteps = len(steps)
    busy = sum(sum(float(k["dur"]) for k in s) for s in steps)
    span = sum(max(float(k["ts"]) + float(k["dur"]) for k in s) - float(s[0]["ts"]) for s in steps)
    overlap = 0.0  # time two kernels ran at once (programmatic dependent launch)
    for a, b in zip(ks, ks[1:]):
        overlap += max(0.0, min(float(a["ts"]) + float(a["dur"]), float(b["ts"]) + float(b["dur"])) - float(b["ts"]))
    print("| kernel | calls/step | total ms | mean us | share |")
    print("|---|---:|---:|---:|---:|")
    tot = sum(v[1] for v in per.values())
    for name, (n, us) in sorted(per.items(), key=lambda x: -x[1][1])[:25]:
        print("| %s | %.1f | %.3f | %.2f | %.1f%% |" % (name, n / nsteps, us / 1e3, us / n, 100 * us / tot))
    # what each kernel adds to the step: its end minus the latest end before it (the step before's
    # for a step's first kernel) (under programmatic
    # dependent launch kernels overlap, so their durations do not add up to the step), and the idle
    # time before it (its start after every earlier kernel's end)
    add = collections.defaultdict(lambda: [0, 0.0, 0.0])
    last = None  # across steps: a step's first kernel adds the time since the step before ended
    for s in steps:
        for k in s:
            t0, t1 = float(k["ts"]), float(k["ts"]) + float(k["dur"])
            key = "%s [%s]" % (short(k["name"]), k["args"].get("grid", "?"))
            a = add[key]
            a[0] += 1
            if last is not None:
                a[1] += max(0.0, t1 - last)
                a[2] += max(0.0, t0 - last)
            last = t1 if last is None else max(last, t1)
    print("\n| kernel | calls/step | adds to the step, us/step | mean us a call | idle before, us/step |")
    print("|---|---:|---:|---:|---:|")
    for name, (n, us, idle) in sorted(add.items(), key=lambda x: -x[1][1]):
        print("| %s | %.1f | %.1f | %.2f | %.1f |" % (name, n / nsteps, us / nsteps, us / n, idle / nsteps))
    gaps = [float(b[0]["ts"]) - max(float(k["ts"]) + float(k["dur"]) for k in a) for a, b in zip(steps, steps[1:])]
    if gaps:
        print("\nbetween steps (last kernel's end to the next step's first start): mean %.1f us, min %.1f, max %.1f"
              % (sum(gaps) / len(gaps), min(gaps), max(gaps)))
    print("\n%d steps, %.1f kernels/step; per step: kernel time %.1f us, span %.1f us, overlapped %.1f us, idle %.1f us"
          % (nsteps, len(ks) / nsteps, busy / nsteps, span / nsteps, overlap / nsteps,
             (span - busy + overlap) / nsteps))


if __name__ == "__main__":
    main()
