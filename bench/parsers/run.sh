#!/bin/bash
# run.sh: the parser benchmark. Builds bench_parsers against an optimized lpcore, generates a
# large ncu raw page and an nsys-like SQLite export, times llmprof and Python side by side and
# prints the ratios. Rates use CPU time (user + system), so that a busy machine skews less.
# Not a test (timings vary with the machine); results go to bench/README-parsers.md by hand.
#   BENCH_CSV_MB=300 BENCH_SQLITE_ROWS=2000000 bench/parsers/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
BUILD=${BENCH_BUILD:-build-bench}
WORK=${BENCH_DIR:-$SRC/tmp/bench-parsers}
MB=${BENCH_CSV_MB:-300}
ROWS=${BENCH_SQLITE_ROWS:-2000000}
mkdir -p "$WORK"

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLP_BUILD_TESTS=OFF -DLP_WITH_CUDA=OFF >/dev/null
cmake --build "$BUILD" --target lpcore -j"$(nproc)" >/dev/null
LIBS=$(pkg-config --libs jansson yaml-0.1 sqlite3 zlib 2>/dev/null || echo "-ljansson -lyaml -lsqlite3 -lz")
cc -O2 -std=c11 -D_GNU_SOURCE -I src -I "$BUILD/gen" bench/parsers/bench_parsers.c "$BUILD/lib/liblpcore.a" \
  $LIBS -lm -ldl -lpthread -o "$WORK/bench_parsers"

[ -f "$WORK/raw_${MB}.csv" ] || python3 bench/parsers/gen.py ncu-raw "$WORK/raw_${MB}.csv" "$MB"
[ -f "$WORK/nsys_${ROWS}.sqlite" ] || python3 bench/parsers/gen.py nsys-sqlite "$WORK/nsys_${ROWS}.sqlite" "$ROWS"

run() {  # mode file: C then Python, JSON lines, then the ratio
  local c py
  c=$("$WORK/bench_parsers" "$1" "$2")
  echo "$c"
  if [ "$1" != nsys-profile ]; then
    py=$(python3 bench/parsers/ref.py "$1" "$2")
    echo "$py"
    python3 - "$c" "$py" <<'PY'
import json, sys
c, p = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert c["rows"] == p["rows"] and c["distinct_kernels"] == p["distinct_kernels"], (c, p)
print(f'ratio {c["mode"]}: llmprof {p["cpu_seconds"] / c["cpu_seconds"]:.1f}x faster than Python (CPU time) '
      f'({c["mb_per_s"]} vs {p["mb_per_s"]} MB/s, {c["rows_per_s"]:.0f} vs {p["rows_per_s"]} rows/s)')
PY
  fi
}
run ncu-raw "$WORK/raw_${MB}.csv"
run nsys-table "$WORK/nsys_${ROWS}.sqlite"
run nsys-profile "$WORK/nsys_${ROWS}.sqlite"
