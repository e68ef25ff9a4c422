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
