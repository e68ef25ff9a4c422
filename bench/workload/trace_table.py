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
    ks = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"
          and e["args"].get("nvtx", "").startswith("decode_all")]
    if not ks:
        print("no kernels under decode_all")
        return
    per = collections.defaultdict(lambda: [0, 0.0])
    for k in ks:
        per[short(k["name"])][0] += 1
        per[short(k["name"])][1] += float(k["dur"])
    ks.sort(key=lambda k: float(k["ts"]))
    # steps: split at the embed kernel that starts each step
    steps, cur = [], []
    for k in ks:
        if short(k["name"]).startswith("k_embed") and cur:
            steps.append(cur)
            cur = []
        cur.append(k)
    if cur:
        steps.append(cur)
    nsteps = len(steps)
    busy = sum(sum(float(k["dur"]) for k in s) for s in steps)
    span = sum(float(s[-1]["ts"]) + float(s[-1]["dur"]) - float(s[0]["ts"]) for s in steps)
    print("| kernel | calls/step | total ms | mean us | share |")
    print("|---|---:|---:|---:|---:|")
    tot = sum(v[1] for v in per.values())
    for name, (n, us) in sorted(per.items(), key=lambda x: -x[1][1])[:25]:
        print("| %s | %.1f | %.3f | %.2f | %.1f%% |" % (name, n / nsteps, us / 1e3, us / n, 100 * us / tot))
    print("\n%d steps, %.1f kernels/step; per step: kernels busy %.1f us, span %.1f us (%.1f us between kernels)"
          % (nsteps, len(ks) / nsteps, busy / nsteps, span / nsteps, (span - busy) / nsteps))


if __name__ == "__main__":
    main()
