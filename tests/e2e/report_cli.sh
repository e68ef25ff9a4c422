#!/bin/bash
# `llmprof report RUN_DIR`: bad run folders exit 2 and write nothing; a run folder whose trace
# can be read gets the reports (exit 0), and a second `report` reproduces them byte for byte.
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

# An empty trace folder: nothing to analyze, the inputs cannot be read: exit 2 (docs/reports.md),
# nothing written.
mkdir -p run1/trace
expect_exit 2 "$LLMPROF" report run1
grep -q "^error: cannot analyze 'run1': no trace files (\*.lptrace) in 'run1/trace'$" "$LP_TMP/stderr" ||
  fail "bad message: $(cat "$LP_TMP/stderr")"
[ -e run1/report.md ] && fail "report.md written although the trace could not be read"

# A readable trace (the committed NVTX demo trace, tests/fixtures/trace/README.md): exit 0, the
# reports, and a second `report` reproduces them byte for byte.
cp "$LP_SRC/tests/fixtures/trace/nvtx_demo.lptrace" run1/trace/
expect_exit 0 "$LLMPROF" report run1
for f in kernels.md operators.md report.md stakeholder_summary.md summary.json report.html; do
  [ -s "run1/$f" ] || fail "run1/$f missing"
  grep -qx "run1/$f" "$LP_TMP/stdout" || fail "'run1/$f' not printed: $(cat "$LP_TMP/stdout")"
done
cp run1/summary.json first.json && cp run1/stakeholder_summary.md first.md
expect_exit 0 "$LLMPROF" report run1
cmp -s first.json run1/summary.json || fail "summary.json differs on a second report"
cmp -s first.md run1/stakeholder_summary.md || fail "stakeholder_summary.md differs on a second report"
pass
