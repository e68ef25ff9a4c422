#!/usr/bin/env python3
"""cost_brief.py: a short table of sample_check.py cost results (cost.json, or a cost.tgz that
holds one), for the end of a device call's output:

    python3 bench/tracer/cost_brief.py [NAME=]PATH [[NAME=]PATH ...]

One line per (result, program, metric, mode): the mean over generations of the per-generation
difference against plain with its 95% interval, the median step pair, and the placebo (a second
plain process against the first) beside it. Metrics: time (wall, the programs' CUDA events) and,
with LLMPROF_BENCH_COUNTERS=1, cpu_ms / cycles / instr (paired_steps_<metric>)."""

import io
import json
import os
import sys
import tarfile


def load(path):
    if path.endswith((".tgz", ".tar.gz")):
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.name.endswith("cost.json"):
                    return json.load(io.TextIOWrapper(t.extractfile(m)))
        raise SystemExit("%s: no cost.json inside" % path)
    with open(path) as f:
        return json.load(f)


def fmt(g):
    if not g:
        return "-"
    lo, hi = g["ci95"]
    return "%+.2f%% [%s, %s] n=%d" % (g["mean"], "%+.2f" % lo if lo is not None else "?",
                                      "%+.2f" % hi if hi is not None else "?", g["n"])


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for arg in argv:
        name, eq, path = arg.partition("=")
        if not eq:  # a bare path: named after itself
            name, path = os.path.basename(arg), arg
        try:
            d = load(path)
        except (OSError, ValueError, tarfile.TarError) as e:
            raise SystemExit("cost_brief.py: %s: %s" % (path, e))
        for key in sorted(k for k in d if k.startswith("paired_steps") and not k.endswith("cycle_ms")):
            metric = key[len("paired_steps_"):] or "time"
            for prog, r in sorted((d[key] or {}).items()):
                pl = (r.get("placebo") or {}).get("per_generation_pct")
                for mode, row in sorted(r["modes"].items()):
                    print("%-8s %-6s %-7s %-10s %-34s pairs %+6.2f%%  placebo %s" % (
                        name, prog, metric, mode, fmt(row["per_generation_pct"]),
                        row["step_pairs"]["median_pct"], fmt(pl)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
