#!/bin/bash
# run27_places.sh: bench/tracer/results/run27_places.txt from run 27's cost_run27_*.tgz (README run
# 27): sample_check.py places for every traced process of calls 1, 3, 4 and 6, then the groups the
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
# row CALL TAG SPEC [BEFORE]: one JSON line (sample_check.py places, compacted, the call added)
row() {
	python3 bench/tracer/sample_check.py places "$T/$1" "$2" "$3" 2 ${4:-} |
		python3 -c "import json, sys; d = json.load(sys.stdin); d['call'] = '$1'; print(json.dumps(d))"
}
{
	for t in delay_t delay_u delay_v; do row call1_hf hf_$t every=64,burst=4,first=2 4; done
	for t in delay2_t delay2_u delay2_v; do row call1_hf hf_$t every=128,burst=4,first=2 4; done
	for t in auto_t auto_u auto_v; do row call3_hf hf_$t every=128,burst=4,first=2; done
	for t in delay2_t delay2_u delay2_v delay2_w; do row call4_hf hf_$t every=128,burst=4,first=2 4; done
	for t in auto_t auto_u auto_v; do row call4_plain plain_$t every=128,burst=4,first=2; done
	for t in delay2_t delay2_u delay2_v; do row call6_hf hf_$t every=128,burst=4,first=2 3; done
} >"$T/rows.jsonl"
python3 - "$T/rows.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("# sample_check.py places on run 27's calls (bench/tracer/run27_places.sh, from the cost_run27_*.tgz beside this):")
print("#   sample_check.py places DIR TAG SPEC 2 [BEFORE]: summary (total, detached level, what the other places add")
print("#   above it); for the LLMPROF_TRACE_CUPTI_DELAY processes (delay, delay2) over the generations from BEFORE on")
print("#   (CUPTI started) only, and the mean over generations before BEFORE and from it on (all steps; detached")
print("#   steps), and after less before; % against the mean of the call's plain processes")
print("%-12s %-14s %-18s %8s %9s %8s   %s" % ("call", "process", "schedule", "total", "detached", "above",
                                          "delay: before / after (detached) / after-before"))
for d in rows:
    s, x = d["summary"], d.get("delay")
    dl = "%+.2f / %+.2f (%+.2f) / %+.2f" % (x["before_pct"], x["after_pct"], x["after_detached_pct"],
                                            x["after_less_before_pct"]) if x else ""
    print("%-12s %-14s %-18s %+7.2f%% %+8.2f%% %+7.2f%%   %s" % (d["call"], d["tag"], d["spec"].replace(",first=2", ""),
          s["total_pct"], s["detached_pct"], s["above_detached_pct"], dl))
def group(name, vals):
    print("#   %-58s n=%-2d %+6.2f to %+6.2f, mean %+6.2f" % (name, len(vals), min(vals), max(vals), sum(vals) / len(vals)))
late = [d for d in rows if d.get("delay") and "every=128" in d["spec"]]
late64 = [d for d in rows if d.get("delay") and "every=64" in d["spec"]]
landed = [d for d in rows if not d.get("delay")]
print("# groups (per process, % against plain):")
group("late starters, every=128: total (generations with CUPTI)", [d["summary"]["total_pct"] for d in late])
group("late starters, every=128: detached level", [d["summary"]["detached_pct"] for d in late])
group("late starters, every=128: above the detached level", [d["summary"]["above_detached_pct"] for d in late])
group("late starters, every=128: after less before", [d["delay"]["after_less_before_pct"] for d in late])
group("late starters, every=64: after less before", [d["delay"]["after_less_before_pct"] for d in late64])
group("late starters, every=64: above the detached level", [d["summary"]["above_detached_pct"] for d in late64])
group("late starters, both: before CUPTI's start", [d["delay"]["before_pct"] for d in late + late64])
group("landed default (CUPTI at cuInit), every=128: total", [d["summary"]["total_pct"] for d in landed])
group("landed default, every=128: detached level", [d["summary"]["detached_pct"] for d in landed])
group("landed default, every=128: above the detached level", [d["summary"]["above_detached_pct"] for d in landed])
PY
