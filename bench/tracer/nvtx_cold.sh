#!/bin/bash
# nvtx_cold.sh: one NVTX range's cost on the calling thread, with the caches warm and cold, without
# a tool and with llmprof's tracer as NVTX injection, side by side in one run (bench/tracer/README.md
# run 28): ROUNDS rounds (default 3), each running build/tests/lp_nvtx_cold once without the tracer
# and once with it, the order alternating round by round; per KB the median over rounds of each
# side's median ns a range (push + pop), and the tracer's cost above no tool. Prints JSON lines per
# run, then a table. Needs a build with tests (lp_nvtx_cold, libllmprof_inject.so; LP_BUILD, default
# build) and python3.
#   bash bench/tracer/nvtx_cold.sh [ROUNDS [PAIRS [KB ...]]]    (3, 20000, 0 256 2048 16384)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${LP_BUILD:-build}
[ -d "$B" ] && B=$(cd "$B" && pwd)
BIN=$B/tests/lp_nvtx_cold
LIB=$B/lib/libllmprof_inject.so
ROUNDS=${1:-3}
PAIRS=${2:-20000}
shift $(($# > 2 ? 2 : $#))
[ -x "$BIN" ] && [ -f "$LIB" ] || { echo "nvtx_cold.sh: $BIN or $LIB missing: build with tests (cmake -DLP_BUILD_TESTS=ON)" >&2; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for r in $(seq 1 "$ROUNDS"); do
	order="none tracer"; [ $((r % 2)) = 0 ] && order="tracer none"
	for side in $order; do
		if [ "$side" = tracer ]; then
			rm -rf "$W/trace"
			NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_DIR=$W/trace "$BIN" "$PAIRS" "$@" >"$W/out"
			# the tracer was attached: its trace holds every range (a push and a pop each)
			ls "$W"/trace/*.lptrace >/dev/null 2>&1 || { echo "nvtx_cold.sh: the tracer wrote no trace" >&2; exit 1; }
		else
			"$BIN" "$PAIRS" "$@" >"$W/out"
		fi
		sed "s/^{/{\"side\": \"$side\", \"round\": $r, /" "$W/out" | tee -a "$W/all"
	done
done
python3 - "$W/all" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("%8s %14s %14s %14s" % ("KB", "no tool ns", "tracer ns", "tracer adds"))
for kb in sorted({r["kb"] for r in rows}):
    m = {s: statistics.median(r["median_ns"] for r in rows if r["kb"] == kb and r["side"] == s) for s in ("none", "tracer")}
    print("%8d %14.0f %14.0f %14.0f" % (kb, m["none"] + 0.0, m["tracer"] + 0.0, m["tracer"] - m["none"] + 0.0))  # no -0
EOF
