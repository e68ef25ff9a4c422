#!/usr/bin/env python3
"""trace_table.py TRACE.json.gz [STEPS]: the decode kernels of an `llmprof trace perfetto` export
of llmprof-llm, per kernel (calls, total and mean time) and per decode step: the sum of kernel
durations against the step's span (first kernel start to last kernel end), i.e. how much of the
step the GPU spent between kernels. Used by bench/workload/probe.sh."""
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
    print("\n%d steps, %.1f kernels/step; per step: kernel time %.1f us, span %.1f us, overlapped %.1f us, idle %.1f us"
          % (nsteps, len(ks) / nsteps, busy / nsteps, span / nsteps, overlap / nsteps,
             (span - busy + overlap) / nsteps))


if __name__ == "__main__":
    main()
