#!/bin/bash
# A committed trace file (tests/fixtures/trace/README.md) still reads with this llmprof:
# format compatibility of older files.
set -u
. "$(dirname "$0")/lib.bash"
fx="$LP_SRC/tests/fixtures/trace/nvtx_demo.lptrace"
expect_exit 0 "$LLMPROF" trace dump "$fx"
[ "$(grep -c ' NVTX PUSH ' "$LP_TMP/stdout")" -eq 17 ] || fail "expected 17 pushes"
grep -q 'name="decode_all"' "$LP_TMP/stdout" || fail "no decode_all"
grep -q ' END end_ns=' "$LP_TMP/stdout" || fail "no END record"
expect_exit 0 "$LLMPROF" trace perfetto "$fx" -o "$LP_TMP/f.json.gz"
gzip -t "$LP_TMP/f.json.gz" || fail "not gzip"
pass
