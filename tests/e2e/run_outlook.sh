#!/bin/bash
# What `llmprof run` will do, said before it runs and agreed on by `check` and `--dry-run` (issue
# 21): the CPU-run line, the expected exit status, a mistyped workload after `--` (exit 2 naming
# it, no run folder), run.device=cuda without a GPU, the CPU run's fp32, `report RUN_ID`.
set -u
. "$(dirname "$0")/lib.bash"

# a mistyped workload: exit 2 naming it, before a run folder is made
expect_exit 2 "$LLMPROF" run run.id=typo -- ./no-such-program --flag
grep -q "^error: the workload './no-such-program' was not found$" "$LP_TMP/stderr" || fail "typo: $(cat "$LP_TMP/stderr")"
grep -q "llmprof check" "$LP_TMP/stderr" && fail "a mistyped workload points at 'llmprof check'"
[ -e tmp/stage2/typo ] && fail "a run folder was left for a workload that does not exist"
expect_exit 2 "$LLMPROF" run -- no-such-program-on-path
grep -q "not found on PATH" "$LP_TMP/stderr" || fail "PATH lookup: $(cat "$LP_TMP/stderr")"

# report RUN_ID, like artifacts; a run id that does not exist says where it looked
expect_exit 2 "$LLMPROF" report no-such-run
grep -q "^error: no run 'no-such-run' under 'tmp/stage2'" "$LP_TMP/stderr" || fail "report RUN_ID: $(cat "$LP_TMP/stderr")"
if ! have_gpu; then
  # the CPU run says so in one line at the start, exit 0; check and --dry-run agree
  expect_exit 0 "$LLMPROF" run run.id=c1 run.repeats=1 inputs.new_tokens=4 inputs.prompt_len=8
  head -n 1 "$LP_TMP/stderr" | grep -q "^CPU run: stages and operators, no GPU kernels (" ||
    fail "no CPU-run line first on stderr: $(cat "$LP_TMP/stderr")"
  grep -q "^model: .*fp32" tmp/stage2/c1/config.yaml 2>/dev/null ||
    grep -A30 "^model:" tmp/stage2/c1/config.yaml | grep -q "dtype: fp32" || fail "config.yaml: the CPU run is not fp32"
  # the numbers of a CPU run: fp32 bytes, and a model row that sums what the stage rows have
  python3 - tmp/stage2/c1 <<'PY' || fail "summary.json of the CPU run"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert s["model"]["dtype"] == "fp32", s["model"]
perf = {p["stage"]: p for p in s["perf"]}
for k in ("flops", "bytes", "host_s", "latency_s"):
    assert perf["model"][k] is not None, (k, perf["model"])
    assert abs(perf["model"][k] - perf["prefill"][k] - perf["decode"][k]) <= 1e-9 * perf["model"][k], k
assert perf["model"]["gpu_s"] is None and "CPU run" in perf["model"]["gpu_s_why"]
assert "PATH" not in (s["environment"].get("environment") or {}), "summary.json stores PATH"
PY
  grep -q "^- GPU: none used (a CPU run" tmp/stage2/c1/stakeholder_summary.md || fail "Environment section"
  # the tracer's host clock, measured on this machine: its source and one read's cost
  grep -q "^- host clock: .*, [0-9]* ns a read" tmp/stage2/c1/stakeholder_summary.md ||
    fail "no host clock line: $(grep -A8 '## Environment' tmp/stage2/c1/stakeholder_summary.md)"
  grep -q "schema\\_version\|tools.gpu\\_source" tmp/stage2/c1/stakeholder_summary.md && fail "env.json dumped raw"
  expect_exit 0 "$LLMPROF" report c1
  grep -q "^tmp/stage2/c1/report.md$" "$LP_TMP/stdout" || fail "report c1 did not rewrite c1: $(cat "$LP_TMP/stdout")"
  expect_exit 0 "$LLMPROF" check
  grep -q "^run  *CPU  *CPU run: stages and operators, no GPU kernels" "$LP_TMP/stdout" || fail "check: $(cat "$LP_TMP/stdout")"
  expect_exit 0 "$LLMPROF" run --dry-run
  grep -q "^CPU run: " "$LP_TMP/stdout" || fail "dry-run does not say CPU run"
  grep -q "^expected exit: 0" "$LP_TMP/stdout" || fail "dry-run: $(cat "$LP_TMP/stdout")"
  # nsys asked for but missing: all three say 4
  if ! command -v nsys >/dev/null; then
    expect_exit 4 "$LLMPROF" run --dry-run profiling.nsys.enable=true tools.nsys=/nonexistent/nsys
    grep -q "^expected exit: 4 (nsys" "$LP_TMP/stdout" || fail "dry-run nsys: $(cat "$LP_TMP/stdout")"
    expect_exit 4 "$LLMPROF" check --nsys tools.nsys=/nonexistent/nsys
    expect_exit 4 "$LLMPROF" run run.id=n1 run.repeats=1 inputs.new_tokens=2 inputs.prompt_len=4 \
      profiling.nsys.enable=true tools.nsys=/nonexistent/nsys
  fi
  # run.device=cuda without a GPU: refused before anything runs, with the reason
  expect_exit 4 "$LLMPROF" run run.id=d1 run.device=cuda
  grep -q "^error: run.device=cuda, but the GPU cannot be used: " "$LP_TMP/stderr" || fail "device=cuda: $(cat "$LP_TMP/stderr")"
fi
pass
