#!/usr/bin/env bash
# run.sh: runs libFuzzer targets for a time budget each and fails on the first crash of any.
#
#   fuzz/run.sh [-b BUILD] [-t SECONDS] [-j JOBS] [-o OUT] [-s SEEDS] [-T INPUT_TIMEOUT] [TARGET...]
#
# Every target (default: all built in BUILD/fuzz, e.g. fuzz_ncu_raw) runs SECONDS seconds under
# nice 19 on OUT/<target>/corpus, a copy of fuzz/corpus/<name> (plus SEEDS/<name> when given), so
# the committed corpus is never written; fuzz/<target>.options adds flags (one a line). One input
# may run INPUT_TIMEOUT seconds (25: a loaded machine stalled ASan's allocator past 10 s). Crash,
# leak, timeout and OOM inputs land in OUT/<target>/ (libFuzzer's crash-*, leak-*, timeout-*,
# oom-*); each is named on stderr with the command that reproduces it, and the exit status is 1
# when any target failed. One line per target gives execs, exec/s, cov/ft and libFuzzer's corpus
# (inputs/bytes), also in OUT/summary.tsv.
# `make fuzz-run FUZZ_SECONDS=N FUZZ_JOBS=2` is the usual way in (docs/fuzzing.md).
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=build-fuzz
SECONDS_EACH=60
JOBS=1
TIMEOUT=25
OUT=
SEEDS=
while getopts "b:t:j:o:s:T:h" opt; do
	case $opt in
	b) BUILD=$OPTARG ;;
	t) SECONDS_EACH=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	s) SEEDS=$OPTARG ;;
	T) TIMEOUT=$OPTARG ;;
	*) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$OUT" ] || OUT=$BUILD/fuzz-run
BUILD=$(realpath -m "$BUILD")
OUT=$(realpath -m "$OUT")
[ -z "$SEEDS" ] || SEEDS=$(realpath -m "$SEEDS")
case $SECONDS_EACH in ''|*[!0-9]*) echo "fuzz-run: -t wants whole seconds, got '$SECONDS_EACH'" >&2; exit 2 ;; esac
if [ $# -eq 0 ]; then
	set -- $(cd "$BUILD/fuzz" 2>/dev/null && ls fuzz_* 2>/dev/null)
fi
if [ $# -eq 0 ]; then
	echo "fuzz-run: no fuzz target in '$BUILD/fuzz'" >&2
	echo "hint: build them first with 'make fuzz' (needs clang)" >&2
	exit 2
fi
mkdir -p "$OUT"

# one target: prints its summary line; exit status 1 on a crash or an unusable fuzzer
run_one() {
	local t=$1 name=${1#fuzz_} bin=$BUILD/fuzz/$1 work=$OUT/$1 rc dirs
	if [ ! -x "$bin" ]; then
		echo "fuzz-run: $t: no such fuzzer '$bin'" >&2
		return 1
	fi
	rm -rf "$work"
	mkdir -p "$work/corpus"
	if [ -d "$SRC/fuzz/corpus/$name" ]; then
		cp -p "$SRC/fuzz/corpus/$name"/. "$work/corpus/" -R
	fi
	# per-target libFuzzer flags, one per line (e.g. -max_len=16384): fuzz/<target>.options
	local opts=()
	if [ -f "$SRC/fuzz/$t.options" ]; then
		mapfile -t opts < <(grep -v '^#' "$SRC/fuzz/$t.options" | grep .)
	fi
	dirs=("$work/corpus")
	if [ -n "$SEEDS" ] && [ -d "$SEEDS/$name" ]; then
		dirs+=("$SEEDS/$name")
	fi
	(cd "$work" && nice -n 19 timeout -k 10 $((SECONDS_EACH + 120)) "$bin" \
		-max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/" "${opts[@]}" "${dirs[@]}" >"$work/log" 2>&1)
	rc=$?
	local last execs rate cov ft corp
	last=$(grep -E '^#[0-9]+' "$work/log" | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")  # libFuzzer's: inputs/bytes
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$corp" "$rc" \
		>"$work/summary.tsv"
	printf 'fuzz-run: %-18s %ss  execs %-9s exec/s %-6s cov %-5s ft %-6s corpus %-5s %s\n' "$t" \
		"$SECONDS_EACH" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$corp" \
		"$([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)")"
	if [ $rc -ne 0 ]; then
		local a found=0
		for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$work"/slow-unit-*; do
			[ -e "$a" ] || continue
			found=1
			echo "fuzz-run: $t: crash input $a" >&2
			echo "  reproduce: $bin $a" >&2
		done
		[ $found -eq 1 ] || echo "fuzz-run: $t: exit $rc without a crash input; see $work/log" >&2
		grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/log" | sed "s/^/fuzz-run: $t: /" >&2
		return 1
	fi
	return 0
}

failed=0
running=0
for t in "$@"; do
	run_one "$t" &
	running=$((running + 1))
	if [ $running -ge "$JOBS" ]; then
		wait -n || failed=1
		running=$((running - 1))
	fi
done
while [ $running -gt 0 ]; do
	wait -n || failed=1
	running=$((running - 1))
done
printf 'target\texecs\texec_per_s\tcov\tft\tcorpus\texit\n' >"$OUT/summary.tsv"
for t in "$@"; do
	cat "$OUT/$t/summary.tsv" 2>/dev/null >>"$OUT/summary.tsv"
done
if [ $failed -ne 0 ]; then
	echo "fuzz-run: FAILED: a target crashed (inputs named above)" >&2
	exit 1
fi
echo "fuzz-run: ${SECONDS_EACH}s each, no crash ($# targets; $OUT/summary.tsv)"
