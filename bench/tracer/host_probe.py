#!/usr/bin/env python3
"""host_probe.py: what moves the GPU machine's host speed (bench/tracer/README.md run 26).

The tracer's cost on an eager decode step is host time, and the host of the lent machines changes
speed by up to a factor 2 for 0.2-0.8 s at a time (runs 18-25), which no pairing of processes has
taken below +-3-9% per measurement. This probe, standard library only, tells which of the usual
causes it is, so that the cost measurement can be built around it:
  - a fixed piece of CPU work (a Python loop, like the launch path's interpreter work) timed
    back to back for SECONDS on each of the CPUS given, all at once, one process per CPU pinned
    there: per CPU the spread of its wall time and of its thread CPU time (wall moving while CPU
    time does not: the vCPU was descheduled; both moving together: the core ran slower, e.g.
    another guest on its hyperthread sibling or a frequency change), and how alike the CPUs'
    slow periods are (the correlation of their time series in 100 ms bins: 1 means the whole
    host slows down at once, near 0 means each vCPU on its own);
  - whether this thread's CPU cycles and instructions can be counted (perf_event_open through
    plain_common.StepCounters): counted work does not move with the host's speed;
  - steal time from /proc/stat over the probe.

    python3 bench/tracer/host_probe.py [--cpus 2,3,9] [--seconds 8]     (prints one JSON object)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))


def work(n=100000):
    s = 0
    for i in range(n):
        s += i * i
    return s


def child(seconds):
    """Times work() back to back: lines 'wall_start_ns wall_ns cpu_ns'."""
    from plain_common import StepCounters  # noqa: E402
    os.environ["LLMPROF_BENCH_COUNTERS"] = "1"
    c = StepCounters()
    end = time.time() + seconds
    out = []
    while time.time() < end:
        t0, c0 = time.time_ns(), c.read()
        work()
        t1, c1 = time.time_ns(), c.read()
        row = [t0, t1 - t0, c1[0] - c0[0]] + [c1[1][n] - c0[1][n] for n in c.names]
        out.append(row)
    print(json.dumps({"counters": c.names, "rows": out}))


def steal():
    with open("/proc/stat") as f:
        v = f.readline().split()
    return int(v[8]) if len(v) > 8 else 0, sum(int(x) for x in v[1:])


def spread(vals):
    q = statistics.quantiles(vals, n=20)
    m = statistics.median(vals)
    return dict(n=len(vals), median=round(m, 4), p5=round(q[0], 4), p95=round(q[-1], 4),
                p95_over_p5=round(q[-1] / q[0], 3), cv_pct=round(statistics.pstdev(vals) / statistics.mean(vals) * 100, 2))


def bins(rows, t0, width_ns=100_000_000):
    """Mean wall ns of the work per 100 ms bin (from t0)."""
    b = {}
    for r in rows:
        b.setdefault((r[0] - t0) // width_ns, []).append(r[1])
    return {k: statistics.mean(v) for k, v in b.items()}


def corr(a, b):
    keys = sorted(set(a) & set(b))
    if len(keys) < 3:
        return None
    x, y = [a[k] for k in keys], [b[k] for k in keys]
    mx, my = statistics.mean(x), statistics.mean(y)
    sx = sum((v - mx) ** 2 for v in x) ** 0.5
    sy = sum((v - my) ** 2 for v in y) ** 0.5
    return round(sum((p - mx) * (q - my) for p, q in zip(x, y)) / (sx * sy), 3) if sx and sy else None


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cpus", default="2,3,9")
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        child(a.seconds)
        return 0
    cpus = [int(x) for x in a.cpus.split(",")]
    s0 = steal()
    procs = [subprocess.Popen(["taskset", "-c", str(c), sys.executable, os.path.abspath(__file__), "--child",
                               "--seconds", str(a.seconds)], stdout=subprocess.PIPE, text=True) for c in cpus]
    outs = [json.loads(pr.communicate()[0]) for pr in procs]
    s1 = steal()
    res = {"cpus": cpus, "counters": outs[0]["counters"],
           "steal_pct": round((s1[0] - s0[0]) / max(1, s1[1] - s0[1]) * 100, 3), "per_cpu": {}}
    t0 = min(o["rows"][0][0] for o in outs)
    series = {}
    for c, o in zip(cpus, outs):
        rows = o["rows"][5:]  # the first few: the interpreter warming up
        d = {"wall_ms": spread([r[1] / 1e6 for r in rows]), "cpu_ms": spread([r[2] / 1e6 for r in rows])}
        for i, n in enumerate(o["counters"]):
            d[n] = spread([r[3 + i] for r in rows])
        # wall against CPU time per piece: near 1 where the vCPU was not descheduled
        d["wall_over_cpu"] = spread([r[1] / r[2] for r in rows if r[2] > 0])
        res["per_cpu"][c] = d
        series[c] = bins(rows, t0)
    res["bin_correlation"] = {"%d-%d" % (x, y): corr(series[x], series[y])
                              for i, x in enumerate(cpus) for y in cpus[i + 1:]}
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
