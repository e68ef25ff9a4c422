#!/bin/bash
# `llmprof report RUN_DIR`: bad run folders exit 2 and write nothing; a run folder whose trace
# can be read gets the five reports, and a second `report` reproduces them byte for byte.
set -u
. "$(dirname "$0")/lib.bash"

expect_exit 2 "$LLMPROF" report
expect_exit 2 "$LLMPROF" report "$LP_TMP/missing"
grep -q "^error: '.*/missing' is not a run folder$" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"

mkdir -p run1
expect_exit 2 "$LLMPROF" report run1
grep -q "it has no config.yaml" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"

printf 'model:\n  name: tiny\n  hidden_size: 128\n' > run1/config.yaml
expect_exit 2 "$LLMPROF" report run1
grep -q "it has no trace/" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
[ -e run1/report.md ] && fail "report.md written for a bad run folder"

# A trace folder: readable once the tracer's reader is built in; until then a clear error, exit 2.
mkdir -p run1/trace
"$LLMPROF" report run1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr"
rc=$?
if [ "$rc" -eq 0 ]; then
  for f in kernels.md operators.md report.md stakeholder_summary.md summary.json; do
    [ -s "run1/$f" ] || fail "run1/$f missing"
  done
  cp run1/summary.json first.json && cp run1/stakeholder_summary.md first.md
  "$LLMPROF" report run1 >/dev/null || fail "second report exited $?"
  cmp -s first.json run1/summary.json || fail "summary.json differs on a second report"
  cmp -s first.md run1/stakeholder_summary.md || fail "stakeholder_summary.md differs on a second report"
else
  [ "$rc" -eq 2 ] || fail "report on an empty trace exited $rc; stderr: $(cat "$LP_TMP/stderr")"
  [ -e run1/report.md ] && fail "report.md written although the trace could not be read"
fi
pass
