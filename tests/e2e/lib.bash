# lib.bash: helpers for the end-to-end tests (sourced, not run).
# Every test gets a clean scratch folder $LP_TMP and runs from it.
: "${LLMPROF:?}" "${LP_TMP:?}" "${LP_SRC:?}" "${LP_BUILD:?}"
rm -rf "$LP_TMP" && mkdir -p "$LP_TMP" && cd "$LP_TMP" || exit 1
export NO_COLOR=1

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok"; exit 0; }
skip() { echo "skipped: $*" >&2; exit 77; }

# expect_exit CODE cmd...: runs cmd with stdout/stderr captured to $LP_TMP/stdout, $LP_TMP/stderr.
expect_exit() {
  local want=$1; shift
  "$@" >"$LP_TMP/stdout" 2>"$LP_TMP/stderr"
  local got=$?
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(head -c 2000 "$LP_TMP/stderr")"
}

have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }

# run_dir_from_stdout: the run folder named on the first line of `llmprof run`'s summary
# ("run: DIR (exit N)").
run_dir_from_stdout() { sed -n '1s/^run: \(.*\) (exit [0-9]*)$/\1/p' "$LP_TMP/stdout"; }

# sample_check_results TARBALL CMD OUT: bench/tracer/sample_check.py CMD on a committed results
# tarball (bench/tracer/results/TARBALL, unpacked into OUT.d), its JSON written to OUT.
sample_check_results() {
	rm -rf "$3.d" && mkdir -p "$3.d" || fail "cannot make $3.d"
	tar -C "$3.d" -xJf "$LP_SRC/bench/tracer/results/$1" || fail "cannot unpack $1"
	python3 "$LP_SRC/bench/tracer/sample_check.py" "$2" "$3.d" >"$3" || fail "sample_check.py $2 failed on $1"
}

# need_cost_tools: skips a test of bench/tracer/cost_call.sh without python3 or taskset (its
# processes are pinned), and keeps its stand-in programs' bytecode out of the tree.
need_cost_tools() {
	command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
	command -v taskset >/dev/null 2>&1 || skip "taskset is not installed"
	export PYTHONDONTWRITEBYTECODE=1
}

# cost_turns TAGS HF_CMD PLAIN_CMD [VAR=VALUE...]: bench/tracer/cost_call.sh's turns on stand-in
# programs (one CPU, no nsys), its work folder in $LP_TMP/work; fails unless every process took its
# turns to the end (none released at the deadline).
cost_turns() {
	local tags=$1 hf=$2 plain=$3
	shift 3
	env "$@" OUT=$LP_TMP/out LP_COST_WORK=$LP_TMP/work LP_COST_STEPS=turns LP_COST_CPUS=0 LP_COST_TURNS="$tags" \
		LP_COST_HF_CMD="$hf" LP_COST_PLAIN_CMD="$plain" LP_NSYS=/nonexistent \
		timeout 120 bash "$LP_SRC/bench/tracer/cost_call.sh" >"$LP_TMP/log" 2>&1 ||
		fail "cost_call.sh failed: $(tail -n 20 "$LP_TMP/log")"
	[ -f "$LP_TMP/out/cost.tgz" ] || fail "no cost.tgz"
	grep -q "turns: done" "$LP_TMP/work/progress.txt" || fail "turns did not finish: $(cat "$LP_TMP/work/progress.txt")"
	grep -q "released" "$LP_TMP/work/progress.txt" &&
		fail "a process was released at the deadline: $(cat "$LP_TMP/work/progress.txt")"
	return 0
}
