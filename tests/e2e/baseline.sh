#!/bin/bash
# run.baseline=reference (issue 22) on the CPU: a program whose model the reference workload cannot
# run (multi-head latent attention) gets the baseline phase skipped with the reader's reason, also
# on the terminal; a shape it can run is skipped on a CPU run with that reason; a bad value is a
# usage error naming the key. The report side: a run folder with a baseline/summary.json (here the
# same run's, so every ratio is 1.00) gets the "Against the reference workload" section in
# report.md and report.html and summary.json's "baseline" rows; without the nested run the section
# says why (the phase's reason). Runs without run.baseline have no such section or key.
set -u
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
prog="$LP_SRC/tests/python/baseline_account.py"

expect_exit 2 "$LLMPROF" run --dry-run run.baseline=yes -- python3 -c 1
grep -q "run.baseline" "$LP_TMP/stderr" || fail "no error naming run.baseline: $(cat "$LP_TMP/stderr")"

phase_reason() {  # phase_reason RUN_DIR: the baseline phase's "status: reason"
  python3 -c 'import json,sys; p={x["name"]: x for x in json.load(open(sys.argv[1]+"/phases.json"))["phases"]}; print(p["baseline"]["status"]+": "+p["baseline"]["reason"])' "$1"
}
"$LLMPROF" run --mode light run.id=mla run.baseline=reference -- python3 "$prog" mla >"$LP_TMP/stdout" 2>"$LP_TMP/stderr"
r=$(phase_reason tmp/stage2/mla)
case "$r" in
  "skipped: the reference workload cannot run this shape: "*"multi-head latent attention is not supported (field 'kv_lora_rank' is set)") ;;
  *) fail "mla: baseline phase says '$r'" ;;
esac
grep -q "run.baseline: the reference workload cannot run this shape" "$LP_TMP/stderr" ||
  fail "no terminal warning for the refused shape: $(cat "$LP_TMP/stderr")"
"$LLMPROF" run --mode light run.id=llama run.device=cpu run.baseline=reference -- python3 "$prog" llama >"$LP_TMP/stdout" 2>"$LP_TMP/stderr"
r=$(phase_reason tmp/stage2/llama)
[ "$r" = "skipped: not a GPU run: the reference runs on the GPU" ] || fail "llama on the CPU: baseline phase says '$r'"
"$LLMPROF" run --mode light run.id=off -- python3 "$prog" llama >"$LP_TMP/stdout" 2>"$LP_TMP/stderr"
r=$(phase_reason tmp/stage2/off)
[ "$r" = "skipped: not asked (run.baseline=reference turns it on)" ] || fail "default: baseline phase says '$r'"

# the report side, on a real H100 run folder
cp -r "$LP_SRC/tests/fixtures/runs/h100_llm_tiny_graph" plain
expect_exit 0 "$LLMPROF" report plain
grep -q "reference workload" plain/report.md && fail "a run without run.baseline has a baseline section"
python3 -c 'import json,sys; assert "baseline" not in json.load(open(sys.argv[1]))' plain/summary.json ||
  fail "a run without run.baseline has a baseline key"
cp -r "$LP_SRC/tests/fixtures/runs/h100_llm_tiny_graph" with
sed -i 's/^run:$/run:\n  baseline: reference/' with/config.yaml
mkdir with/baseline && cp plain/summary.json with/baseline/summary.json
expect_exit 0 "$LLMPROF" report with
grep -q "^## Against the reference workload (run.baseline=reference)" with/report.md ||
  fail "no baseline section in report.md: $(cat with/report.md | head -40)"
grep -q "| decode latency per step (ms) | .* | 1.00x slower |" with/report.md ||
  fail "the decode row is not 1.00x: $(grep -A8 'Against the reference' with/report.md)"
grep -q '<h2 id="baseline">Against the reference workload</h2>' with/report.html || fail "no baseline section in report.html"
python3 - with/summary.json <<'PY' || fail "summary.json baseline check failed: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("baseline"))' with/summary.json)"
import json, sys
s = json.load(open(sys.argv[1]))
b = s["baseline"]
assert b["valid"] and b["source"] == "baseline/summary.json", b
rows = {r["what"]: r for r in b["rows"]}
step = rows["decode latency per step (ms)"]
assert abs(step["ratio"] - 1.0) < 1e-9 and step["program"] == step["reference"] == s["tokens"]["decode_step_ms"], step
assert abs(rows["time to first token (ms)"]["reference"] - s["tokens"]["ttft_ms"]) < 1e-9, rows
perf = {p["stage"]: p for p in s["perf"]}
assert abs(step["reference_mbu_latency"] - perf["decode"]["mbu_latency"]) < 1e-12, (step, perf["decode"])
PY
# asked but the nested run is missing: the section says why
rm -r with/baseline
expect_exit 0 "$LLMPROF" report with
grep -q "No comparison: baseline/summary.json is missing or unreadable" with/report.md ||
  fail "no reason for the missing baseline: $(grep -A3 'Against the reference' with/report.md)"
pass
