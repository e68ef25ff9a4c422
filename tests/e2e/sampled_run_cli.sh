#!/bin/bash
# `llmprof run` on a sampled trace, as a user sees it, without a GPU: the workload is the tracer's
# fixture writer (build/tests/lp_trace_fixture: the tracer's own code, CUPTI and the GPU faked,
# three generations of 48 decode steps), which writes its trace into the run's trace folder under
# trace.sample from the run's config. With bursts in blocks of 8 the terminal's top kernels are
# scaled from the recorded units; with blocks of 128 (longer than the generations) no unit past the
# first ones is recorded, and the terminal, report.md and summary.json say that the first units
# stand for the others (run 36 on the H200: MBU 323% when they stood for nothing but themselves).
set -u
. "$(dirname "$0")/lib.bash"
FX="$LP_BUILD/tests/lp_trace_fixture"
[ -x "$FX" ] || skip "no tracer fixture writer in this build"

expect_exit 0 "$LLMPROF" run --mode light run.id=bursts "trace.sample=every=8,burst=4,first=2,seed=7" -- \
  "$FX" "$LP_TMP/tmp/stage2/bursts/trace"
grep -q '^top kernels (.*; ~ scaled from [0-9]* of 92 sampled units, +- the 95% interval of a rerun' "$LP_TMP/stdout" ||
  fail "terminal: no scaled top kernels: $(cat "$LP_TMP/stdout")"
grep -q '^  1\. gemm_mlp  *~ ' "$LP_TMP/stdout" || fail "terminal: the top kernel is not marked as an estimate"
# under decode_all the prefills find CUPTI attached again (at decode_all's pop): no pause to report
grep -q 'prefill ranges found CUPTI detached' tmp/stage2/bursts/report.md && fail "report.md: a prefill attached CUPTI at its push"
python3 - tmp/stage2/bursts/summary.json <<'PY' || fail "summary.json of the bursts run"
import json, sys
s = json.load(open(sys.argv[1]))
k = s["kernels"]["sampled"]
assert k["units_recorded"] > 0 and k["units_sampled_stratum"] == 92 and "from_first_units" not in k, k
assert s["tracing"]["units_missing"] == 0, s["tracing"]
PY

expect_exit 0 "$LLMPROF" run --mode light run.id=long "trace.sample=every=128,first=2,seed=5" -- \
  "$FX" "$LP_TMP/tmp/stage2/long/trace"
grep -q "^top kernels (.*; ~ estimated from each generation's first units, none of the 92 sampled units recorded" \
  "$LP_TMP/stdout" || fail "terminal: no first-units estimate: $(cat "$LP_TMP/stdout")"
grep -q 'estimate their kernels from the first ones' tmp/stage2/long/report.md ||
  fail "report.md does not say the first units stand for the others"
grep -q 'n/a (0 of 92 units)' tmp/stage2/long/kernels.md || fail "kernels.md: the estimate has an interval"
python3 - tmp/stage2/long/summary.json tmp/stage2/bursts/summary.json <<'PY' || fail "summary.json of the long-block run"
import json, sys
s, b = (json.load(open(f)) for f in sys.argv[1:3])
k = s["kernels"]["sampled"]
assert k["units_recorded"] == 0 and k["from_first_units"] is True, k
assert s["tracing"]["units_missing"] == 92, s["tracing"]
# the decode stage's GPU busy time and kernels per iteration at the scale of the whole stage: near
# the bursts run's (the same program, 48 steps a generation), not 2 steps' worth
dec = {r["name"]: r for r in s["stages"]}["decode_all"]
ref = {r["name"]: r for r in b["stages"]}["decode_all"]
assert abs(dec["kernels"]["mean"] / ref["kernels"]["mean"] - 1) < 0.01, (dec["kernels"], ref["kernels"])
assert abs(dec["gpu_busy_ms"]["mean"] / ref["gpu_busy_ms"]["mean"] - 1) < 0.15, (dec["gpu_busy_ms"], ref["gpu_busy_ms"])
PY

# a serving loop's 144 steps under no parent with blocks of 128: the recorded steps past the first
# 2 lie in one block (seed 1: one burst), so no row has an interval, and the terminal, kernels.md
# and report.md say so (run 39: examples/serve_plain.py on the H200, whose terminal promised one)
LP_FIXTURE_STEPS_ONLY=1 expect_exit 0 "$LLMPROF" run --mode light run.id=oneblock \
  "trace.sample=every=128,burst=4,first=2,seed=1" -- "$FX" "$LP_TMP/tmp/stage2/oneblock/trace"
grep -q '^top kernels (.*; ~ scaled from 4 of 142 sampled units, all in one block: no interval (report.md, Tracing mode)' \
  "$LP_TMP/stdout" || fail "terminal: the one-block run's heading: $(cat "$LP_TMP/stdout")"
grep -q '^  1\. .* ~ *[0-9.]* ms  *[0-9.]*% ~ *[0-9]* calls$' "$LP_TMP/stdout" ||
  fail "terminal: the top kernel is not an estimate without interval: $(cat "$LP_TMP/stdout")"
grep -q 'n/a (4 of 142 units)' tmp/stage2/oneblock/kernels.md || fail "kernels.md: the one-block rows have an interval"
grep -q 'but without an interval: the 4 recorded decode\\\?_step ranges past the first ones lie in one block of the 142' \
  tmp/stage2/oneblock/report.md || fail "report.md does not say why the rows have no interval"
# no decode_all: a prefill that finds CUPTI detached after a burst is left unrecorded rather than
# attaching it at its push (run 39: a pause inside it), and the prefills are sampled on their own
grep -q 'prefill 1 of 2 recorded. Their kernels are scaled to every instance' \
  tmp/stage2/oneblock/report.md || fail "report.md does not say the prefills were sampled on their own"
grep -q '"prefill_push_attached": 0' tmp/stage2/oneblock/summary.json || fail "summary.json: prefill_push_attached is not 0"
tr -d ' \n' < tmp/stage2/oneblock/summary.json | grep -q '"stage_instances":{"prefill":{"recorded":1,"of":2}}' ||
  fail "summary.json: stage_instances is not prefill 1 of 2"
grep -q '"prefill_push_attached": 0' tmp/stage2/bursts/summary.json || fail "summary.json: the bursts run's prefill_push_attached is not 0"
pass
