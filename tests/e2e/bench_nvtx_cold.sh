#!/bin/bash
# bench/tracer/nvtx_cold.sh (run 28): lp_nvtx_cold's ranges with and without the tracer as NVTX
# injection, in alternating order: every round has both sides and each KB asked for, the tracer's
# side wrote a trace holding every range (push and pop records), and the table has a row per KB.
# lp_nvtx_cold refuses a bad count in one line. Timings are not checked (a benchmark, not a test).
# Skipped without python3 or a build with the injection library.
set -u
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -x "$LP_BUILD/tests/lp_nvtx_cold" ] && [ -f "$LP_BUILD/lib/libllmprof_inject.so" ] ||
	skip "no libllmprof_inject.so (NVTX headers not found at build time)"
expect_exit 0 bash "$LP_SRC/bench/tracer/nvtx_cold.sh" 2 300 0 64
python3 - "$LP_TMP/stdout" <<'PY' || fail "nvtx_cold.sh: $(cat "$LP_TMP/stdout")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [json.loads(l) for l in lines if l.startswith("{")]
assert len(rows) == 8, rows
assert [(r["round"], r["side"]) for r in rows[::2]] == [(1, "none"), (1, "tracer"), (2, "tracer"), (2, "none")], rows
assert all(r["pairs"] == 300 and r["kb"] in (0, 64) and r["p90_ns"] >= r["median_ns"] for r in rows), rows
table = lines[len(rows):]
assert table[0].split() == ["KB", "no", "tool", "ns", "tracer", "ns", "tracer", "adds"], table
assert [t.split()[0] for t in table[1:]] == ["0", "64"], table
PY
# the tracer's side was traced: one run by hand, its trace read back (300 ranges, each closed)
NVTX_INJECTION64_PATH=$LP_BUILD/lib/libllmprof_inject.so LLMPROF_TRACE_DIR=$LP_TMP/trace \
	"$LP_BUILD/tests/lp_nvtx_cold" 300 0 >/dev/null || fail "lp_nvtx_cold under the tracer failed"
python3 - "$LP_TMP/trace" "$LP_SRC/bench/tracer" <<'PY' || fail "the trace does not hold the ranges"
import glob, sys
sys.path.insert(0, sys.argv[2])
from sample_check import read_trace
t = read_trace(glob.glob(sys.argv[1] + "/*.lptrace")[0])
r = list(t["ranges"].values())
assert len(r) == 300 and all(x[3] >= x[2] > 0 for x in r), len(r)
assert {t["strings"][x[0]] for x in r} == {"layer", "attn_norm", "attention", "mlp_norm", "mlp"}, r[:5]
PY
expect_exit 2 "$LP_BUILD/tests/lp_nvtx_cold" 3
grep -q "^lp_nvtx_cold: PAIRS must be 10 to 10000000, not '3'$" "$LP_TMP/stderr" || fail "bad count: $(cat "$LP_TMP/stderr")"
pass
