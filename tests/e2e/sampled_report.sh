#!/bin/bash
# Sampled tracing in the reports (issue 24): `llmprof report` on a run folder holding a real sampled
# trace (tests/fixtures/trace/h100_hf_tiny_sampled: examples/hf_generate.py on an H100 with
# LLMPROF_TRACE_SAMPLE=every=4,first=2; the run folder's other files from
# tests/fixtures/runs/h100_torch_graph, same machine). Every report says which mode ran and why;
# kernels.md, operators.md, report.md, the HTML report and summary.json mark the scaled rows with
# the sample size and an interval; the step latencies stay the program's own (self-check).
set -u
. "$(dirname "$0")/lib.bash"
R=run_sampled
rm -rf "$R"; mkdir -p "$R/trace"
cp "$LP_SRC"/tests/fixtures/runs/h100_torch_graph/{config.yaml,env.json,phases.json} "$R/"
cp "$LP_SRC"/tests/fixtures/trace/h100_hf_tiny_sampled/vm.449.lptrace "$R/trace/"
cp "$LP_SRC"/tests/fixtures/trace/h100_hf_tiny_sampled/program.txt "$R/trace/workload.stdout"
expect_exit 0 "$LLMPROF" report "$R"
grep -q '^## Tracing mode$' "$R/report.md" || fail "report.md has no Tracing mode section"
grep -q 'Sampled: kernels were traced in 24 of 72 decode\\_step ranges (the first 2 under each parent, then 1 in 4, the first of each block), as trace.sample asked' \
  "$R/report.md" || fail "report.md does not say which mode ran and why"
grep -q '## Tracing Mode' "$R/stakeholder_summary.md" || fail "stakeholder summary lacks Tracing Mode"
grep -q 'Kernels were recorded in 12 of the 44 sampled units and in all 4 units of the exact stratum' "$R/kernels.md" \
  || fail "kernels.md does not say what was sampled"
grep -q '| ~[0-9.]* | ~[0-9]* |.*(12 of 44 units) |$' "$R/kernels.md" || fail "kernels.md has no marked row"
grep -q '| exact |$' "$R/kernels.md" || fail "kernels.md has no exact row (kernels outside the units)"
grep -q 'sampled: 95% CI of total_ms' "$R/report.md" || fail "report.md's Top kernels lacks the interval column"
grep -q '| +- [0-9.]* ms, a rerun +- [0-9.]* (12 of 44 units) |$' "$R/kernels.md" || fail "kernels.md has no rerun interval"
grep -q 'A rerun" is the 95% interval for the total a separate exact run would record: the sampling interval and 0.2% of the total per run' \
  "$R/kernels.md" || fail "kernels.md does not explain the rerun interval"
grep -q ', a rerun +- [0-9.]* (12 of 44)</td>' "$R/report.html" || fail "report.html has no rerun interval"
grep -q 'for the totals a separate exact run would record ("a rerun": 0.2% of a total per run added, trace.rerun\\_sd)' \
  "$R/report.md" || fail "report.md's Tracing mode does not name the rerun interval"
grep -q '(12 of 44)</td>' "$R/report.html" || fail "report.html has no marked row"
grep -q 'tracing mode: Sampled' "$R/report.html" || fail "report.html does not say the mode"
# every step against the program's step_ms (3.3 ms steps: the 50-80 us between its events and
# ours is 2-3% here, test_sampling_traces), in report.md and the HTML report
grep -q "Every decode step against the workload's own step times: 37 of 48 within 2% (median 1.95%, largest 5.36% at step 46)." \
  "$R/report.md" || fail "report.md's Self-check lacks the step check: $(grep -A12 '^## Self-check' "$R/report.md")"
grep -q "Every decode step against the workload's own step times: 37 of 48 within 2%" "$R/report.html" ||
  fail "report.html's Self-check lacks the step check"
python3 - "$R" <<'PY' || fail "summary.json: sampled rows"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
t = s["tracing"]
assert t["mode"] == "sampled" and t["why"] == "schedule" and t["every"] == 4 and t["first"] == 2, t
assert t["units"] == 72 and t["units_recorded"] == 24 and t["toggles"] == 96, t
k = s["kernels"]
assert k["sampled"] == {"units_recorded": 12, "units_sampled_stratum": 44, "units_exact_stratum": 4,
                        "confidence": 0.95, "rerun_sd_pct": 0.2}, k["sampled"]
rows = [r for r in k["rows"] if r["sampled"]]
assert len(rows) > 10, len(rows)
assert all(r["ci_ms"] is not None and 0 <= r["ci_ms"] < r["total_ms"] for r in rows)
# a rerun's interval: the sampling interval and 0.2% of the total per run (trace.rerun_sd's default)
for r in rows:
    want = (r["ci_ms"] ** 2 + 2 * (1.959964 * 0.002 * r["total_ms"]) ** 2) ** 0.5
    assert abs(r["rerun_ci_ms"] - want) <= 1e-9 * want, (r["kernel_name"], r["rerun_ci_ms"], want)
assert all(r["rerun_ci_ms"] == 0 for r in k["rows"] if not r["sampled"])
assert any(not r["sampled"] and r["ci_ms"] == 0 for r in k["rows"])
assert abs(sum(r["share"] for r in k["rows"]) - 1) < 1e-6
# step latencies are exact: the self-check against the program's own CUDA events
sc = s["self_check"]
assert sc["workload_reported"], sc
dec = [c for c in sc["checks"] if "decode" in c["what"]]
assert dec and all(abs(c["diff"]) < 0.05 for c in dec), dec
st = sc["steps"]
assert st["compared"] and st["llmprof_steps"] == st["workload_steps"] == 48 and st["within"] == 37, st
assert st["why_not"] is None and st["max_at_step"] == 46 and abs(st["max_abs_diff_pct"] - 5.36) < 0.01, st
assert not sc["failed"], sc
PY
# derived figures: unrecorded steps marked on the timeline, gaps located in the recorded steps only
grep -q 'Sampled trace: the kernels of 16 of the 24 decode steps here were not recorded' "$R/figures/timeline.svg" \
  || fail "timeline.svg does not mark the unrecorded steps"
grep -q 'url(#lp-unrec-0)' "$R/figures/timeline.svg" || fail "timeline.svg has no unrecorded-step band"
grep -q 'Largest idle gaps, located in the 16 recorded decode steps' "$R/report.md" \
  || fail "report.md does not say where the gaps were located"
grep -q '"gaps_recorded_steps": 16' "$R/summary.json" || fail "summary.json waterfall lacks gaps_recorded_steps"
grep -q '"pick": "first"' "$R/summary.json" || fail "summary.json tracing lacks the pick"
# trace.rerun_sd: 0 leaves the sampling interval alone
R0=run_sampled_sd0
rm -rf "$R0"; cp -r "$R" "$R0"
printf 'trace:\n  rerun_sd: 0\n' >>"$R0/config.yaml"
expect_exit 0 "$LLMPROF" report "$R0"
grep -q 'a rerun' "$R0/kernels.md" && fail "rerun_sd 0: kernels.md still shows a rerun interval"
python3 - "$R0" <<'PY' || fail "summary.json with rerun_sd 0"
import json, sys
k = json.load(open(sys.argv[1] + "/summary.json"))["kernels"]
assert k["sampled"]["rerun_sd_pct"] == 0, k["sampled"]
assert all(r["rerun_ci_ms"] == r["ci_ms"] for r in k["rows"] if r["sampled"])
PY
pass
