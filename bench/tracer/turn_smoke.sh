#!/bin/bash
# turn_smoke.sh: does pairing steps across processes resolve a few percent on a host with two
# speeds? cost_call.sh's turns on bench/tracer/turn_fake.py (no GPU, no torch; README "Step-level
# turns"): the fake's steps follow one host shared by all processes that switches between 1x and
# 2x (plateaus of 0.2-1 s, as the GPU machines' hosts), mode auto costs 3% a step, exact 15%.
# Twice on the same processes and host: step-level turns (LP_COST_TURN_STEPS=$LP_SMOKE_K, default 1)
# and generation-level turns (the bash loop), each followed by sample_check.py cost; prints, per
# program, what each statistic says auto and the placebo (plain_u against plain_t, 0 by
# construction) cost. Timing-based (~2.5 minutes with the defaults): not a ctest
# (tests/e2e/bench_stepturn.sh checks the mechanics with exact times). Run from anywhere;
# results in $OUT (default /tmp/lp-turn-smoke): step/ and gen/ (cost_call.sh's work folders),
# smoke.txt (the table).
set -u
cd "$(dirname "$0")/../.."
R=${OUT:-/tmp/lp-turn-smoke}
rm -rf "$R"; mkdir -p "$R"
ITERS=${LP_SMOKE_ITERS:-4}
TAGS=${LP_SMOKE_TAGS:-"hf_plain_t hf_plain_u hf_auto_t plain_plain_t plain_plain_u plain_auto_t"}
HOST="$(date +%s):${LP_SMOKE_SEED:-7}"  # one host for both runs (the plateaus from this epoch on)
FAKE="python3 $PWD/bench/tracer/turn_fake.py --host $HOST --step-ms ${LP_SMOKE_STEP_MS:-12} --new-tokens 128"
for run in step gen; do
	steps=${LP_SMOKE_K:-1}; [ $run = gen ] && steps=
	t0=$(date +%s)
	OUT=$R/$run LP_COST_WORK=$R/$run LP_COST_STEPS=turns LP_COST_CPUS=${LP_SMOKE_CPUS:-0-1} LP_COST_TURN_STEPS=$steps \
		LP_COST_TURNS="$TAGS" LP_COST_HF_CMD="$FAKE --kind hf --iters $ITERS" \
		LP_COST_PLAIN_CMD="$FAKE --kind plain --iters $((ITERS + 1))" LP_COST_TURN_STOP_S=${LP_SMOKE_STOP_S:-600} \
		LP_NSYS=/nonexistent bash bench/tracer/cost_call.sh >"$R/$run.log" 2>&1
	echo "$run turns: rc=$? $(( $(date +%s) - t0 )) s" >>"$R/smoke.txt"
done
python3 - "$R" <<'EOF' | tee -a "$R/smoke.txt"
import json, os, sys
R = sys.argv[1]
f = lambda v: "%+.2f%%" % v if v is not None else "-"  # noqa: E731
for run in ("step", "gen"):
    d = json.load(open(os.path.join(R, run, "cost.json")))
    print("%s-level turns (cycle ms %s)" % (run, d.get("paired_steps_cycle_ms", {}).get("median", "-")))
    for prog, ps in sorted(d.get("paired_steps", {}).items()):
        rows = dict(ps["modes"])
        if ps.get("placebo"):
            rows["placebo"] = ps["placebo"]
        for mode, r in sorted(rows.items()):
            g, m = r["per_generation_pct"], r["per_generation_step_median_pct"]
            old = d["programs"][prog].get(mode, {})
            print("  %-5s %-7s ratio of sums a generation: mean %s [%s, %s] (n=%d); its step pairs' median: "
                  "mean %s [%s, %s]; all step pairs' median %s (%d)%s"
                  % (prog, mode, f(g["mean"]), f(g["ci95"][0]), f(g["ci95"][1]), g["n"],
                     f(m["mean"]), f(m["ci95"][0]), f(m["ci95"][1]), f(r["step_pairs"]["median_pct"]),
                     r["step_pairs"]["n"], "; old statistics: generations paired %s, medians %s" % (
                         f(old["overhead_pct_paired"]["median"]), f(old["overhead_pct_of_medians"]))
                     if "overhead_pct_paired" in old else ""))
EOF
