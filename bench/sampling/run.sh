#!/usr/bin/env bash
# bench/sampling/run.sh: the empirical coverage of sampled tracing's intervals on exact traces
# (bench/sampling/README.md). CPU only; needs a build with tests (build/tests/lp-sample-coverage).
#
#   bench/sampling/run.sh EXACT_TRACE_DIR [SAMPLED_TRACE_DIR] [OUT_DIR]
#
# Writes OUT_DIR (default bench/sampling/results) /coverage_<design>.txt for the default design
# (random pick, balanced differences; 1000 seeds), the first tracer's (first unit of each block,
# simple-random-sampling variance; all 8 offsets, and offset 0 alone, the schedule it ran), and the
# two mixed ones; with a sampled trace of the same program, compare.txt (two processes).
set -euo pipefail
exact=${1:?usage: run.sh EXACT_TRACE_DIR [SAMPLED_TRACE_DIR] [OUT_DIR]}
sampled=${2:-}
out=${3:-$(dirname "$0")/results}
tool=${LP_SAMPLE_COVERAGE:-$(dirname "$0")/../../build/tests/lp-sample-coverage}
mkdir -p "$out"
run() { # name args...
	local name=$1
	shift
	"$tool" "$@" "$exact" > "$out/coverage_$name.txt"
	tail -1 "$out/coverage_$name.txt" | sed "s/^/$name: /"
}
run random_balanced --pick random --var balanced --trials 1000
run random_successive --pick random --var successive --trials 1000
run random_srs --pick random --var srs --trials 1000
run first_srs_offsets --pick first --var srs --trials 8
run first_srs_offset0 --pick first --var srs --trials 1
run first_balanced_offsets --pick first --var balanced --trials 8
run random_balanced_every4 --pick random --var balanced --trials 1000 --every 4
run random_balanced_every16 --pick random --var balanced --trials 1000 --every 16
# bursts (bench/tracer/README.md run 23): one cluster of B consecutive steps per block
run burst_every32_b4 --pick random --var balanced --trials 1000 --every 32 --burst 4
run burst_every64_b4 --pick random --var balanced --trials 1000 --every 64 --burst 4
run burst_every64_b8 --pick random --var balanced --trials 1000 --every 64 --burst 8
if [[ -n $sampled ]]; then
	"$tool" --compare "$sampled" "$exact" > "$out/compare.txt"
	tail -1 "$out/compare.txt" | sed 's/^/compare: /'
fi
