#!/bin/bash
# The CLI conventions of issue 21: global options after the command, hints that name the command
# to type, --top, a device as a SOURCE, entities only in files, plurals, hints for
# `~key` and unknown sections. (What `run` announces and predicts: run_outlook.sh.)
set -u
. "$(dirname "$0")/lib.bash"

# global options after the command, and the hint names the command as typed
expect_exit 2 "$LLMPROF" run -q --bogus
grep -q "^hint: run 'llmprof run -h' for the options$" "$LP_TMP/stderr" || fail "hint: $(cat "$LP_TMP/stderr")"
expect_exit 0 "$LLMPROF" run -q --cfg
grep -q "^run:" "$LP_TMP/stdout" || fail "run -q --cfg printed no config"
expect_exit 0 "$LLMPROF" check -v --format json
# `--` ends the options: a -q after it belongs to the workload
"$LLMPROF" run --dry-run -- /bin/echo -q >"$LP_TMP/dry.txt" 2>&1
grep -q "/bin/echo -q" "$LP_TMP/dry.txt" || fail "-q after -- was taken: $(cat "$LP_TMP/dry.txt")"

# --top: 0 is all (documented), negative numbers are refused with the same message
expect_exit 2 "$LLMPROF" kernels --top -1 "$LP_SRC/tests/fixtures"
grep -q "^error: --top must be 0 (all kernels) or more, got -1$" "$LP_TMP/stderr" || fail "--top -1: $(cat "$LP_TMP/stderr")"
"$LLMPROF" kernels -h | grep -q -- "--top N .*0: all" || fail "kernels -h does not say what --top 0 does"

# a device is not "no such file"
expect_exit 3 "$LLMPROF" kernels /dev/null
grep -q "'/dev/null' is not a regular file or a folder" "$LP_TMP/stderr" || fail "/dev/null: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels ./no-such-file.csv
grep -q "no such file or folder" "$LP_TMP/stderr" || fail "missing file: $(cat "$LP_TMP/stderr")"

# HTML entities only where the output is Markdown for a file: a terminal sees <4> as it is
src="$LP_SRC/tests/fixtures/ncu/synthetic_raw.csv"   # holds gemv_kernel<float, 4>
"$LLMPROF" kernels "$src" >piped.md 2>/dev/null
grep -q 'gemv_kernel&lt;float, 4&gt;' piped.md || fail "piped Markdown lost its entities: $(head -c 600 piped.md)"
if command -v script >/dev/null; then
  script -qec "'$LLMPROF' kernels '$src'" /dev/null >tty.txt 2>&1
  grep -q 'gemv_kernel<float, 4>' tty.txt || fail "terminal output: $(head -c 600 tty.txt)"
  grep -q '&lt;' tty.txt && fail "terminal output shows HTML entities: $(grep '&lt;' tty.txt | head -n 2)"
  grep -q '^3 kernels shown of 3' tty.txt || fail "count line: $(tail -n 2 tty.txt)"
fi

# override hints
expect_exit 2 "$LLMPROF" run --cfg '~run.nosuch'
grep -q "^hint: '~KEY' deletes a key that exists" "$LP_TMP/stderr" || fail "~run.nosuch: $(cat "$LP_TMP/stderr")"
expect_exit 2 "$LLMPROF" run --cfg '~a.b.c.d'
grep -q "^hint: the configuration has no section 'a' (its sections: run, " "$LP_TMP/stderr" ||
  fail "~a.b.c.d: $(cat "$LP_TMP/stderr")"
grep -q "run.id" "$LP_TMP/stderr" && fail "~a.b.c.d still suggests run.id"

pass
