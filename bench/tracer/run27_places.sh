#!/bin/bash
# run27_places.sh: bench/tracer/results/run27_places.txt from run 27's cost_run27_*.tgz (README run
# 27): sample_check.py's places for every traced process of calls 1, 3, 4 and 6, then the groups the
# README quotes (per process: the late starters' generations with CUPTI and before it, the landed
# default's whole process; min, max, mean). Writes the file to stdout.
#   bash bench/tracer/run27_places.sh >bench/tracer/results/run27_places.txt
set -eu
cd "$(dirname "$0")/../.."
R=bench/tracer/results
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for c in call1_hf call3_hf call4_hf call4_plain call6_hf; do
	mkdir -p "$T/$c"
	tar -xzf "$R/cost_run27_$c.tgz" -C "$T/$c"
done
python3 - "$T" "$PWD/bench/tracer" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[2])
from sample_check import places, places_group, places_header, places_row
T = sys.argv[1]
# (call, process, schedule, BEFORE: the first measured generation with CUPTI started)
runs = ([("call1_hf", "hf_" + t, "every=64,burst=4,first=2", 4) for t in ("delay_t", "delay_u", "delay_v")]
        + [("call1_hf", "hf_" + t, "every=128,burst=4,first=2", 4) for t in ("delay2_t", "delay2_u", "delay2_v")]
        + [("call3_hf", "hf_" + t, "every=128,burst=4,first=2", None) for t in ("auto_t", "auto_u", "auto_v")]
        + [("call4_hf", "hf_" + t, "every=128,burst=4,first=2", 4) for t in ("delay2_t", "delay2_u", "delay2_v", "delay2_w")]
        + [("call4_plain", "plain_" + t, "every=128,burst=4,first=2", None) for t in ("auto_t", "auto_u", "auto_v")]
        + [("call6_hf", "hf_" + t, "every=128,burst=4,first=2", 3) for t in ("delay2_t", "delay2_u", "delay2_v")])
rows = [places(os.path.join(T, c), tag, spec, 2, before) for c, tag, spec, before in runs]
print("# sample_check.py places on run 27's calls (bench/tracer/run27_places.sh, from the cost_run27_*.tgz beside this):")
print("#   places DIR TAG SPEC 2 [BEFORE]: summary (total, detached level, what the other places add above it); for")
print("#   the LLMPROF_TRACE_CUPTI_DELAY processes (delay, delay2) over the generations from BEFORE on (CUPTI started)")
print("#   only, and the mean over generations before BEFORE and from it on (all steps; detached steps), and after")
print("#   less before; % against the mean of the call's plain processes")
print(places_header(28))
for (c, tag, _, _), out in zip(runs, rows):
    print(places_row("%s %s" % (c, tag), out, 28))
late = [d for d in rows if d.get("delay") and "every=128" in d["spec"]]
late64 = [d for d in rows if d.get("delay") and "every=64" in d["spec"]]
landed = [d for d in rows if not d.get("delay")]
groups = [
    ("late starters, every=128: total (generations with CUPTI)", [d["summary"]["total_pct"] for d in late]),
    ("late starters, every=128: detached level", [d["summary"]["detached_pct"] for d in late]),
    ("late starters, every=128: above the detached level", [d["summary"]["above_detached_pct"] for d in late]),
    ("late starters, every=128: after less before", [d["delay"]["after_less_before_pct"] for d in late]),
    ("late starters, every=64: after less before", [d["delay"]["after_less_before_pct"] for d in late64]),
    ("late starters, every=64: above the detached level", [d["summary"]["above_detached_pct"] for d in late64]),
    ("late starters, both: before CUPTI's start", [d["delay"]["before_pct"] for d in late + late64]),
    ("landed default (CUPTI at cuInit), every=128: total", [d["summary"]["total_pct"] for d in landed]),
    ("landed default, every=128: detached level", [d["summary"]["detached_pct"] for d in landed]),
    ("landed default, every=128: above the detached level", [d["summary"]["above_detached_pct"] for d in landed]),
]
print("# groups (per process, % against plain):")
for name, vals in groups:
    print("#   %-58s n=%-2d %s" % (name, len(vals), places_group(vals)))
PY
