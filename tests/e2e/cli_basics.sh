#!/bin/bash
# The CLI's frame: version, help for every command, unknown commands and options.
set -u
. "$(dirname "$0")/lib.bash"

out=$("$LLMPROF" --version) || fail "--version exited $?"
[[ "$out" =~ ^llmprof\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-f]+ ]] || fail "bad --version output: $out"

"$LLMPROF" help >"$LP_TMP/help.txt" || fail "help exited $?"
for c in run report artifacts runs check kernels trace; do
  grep -q "^  $c " "$LP_TMP/help.txt" || fail "help does not list '$c'"
  "$LLMPROF" "$c" -h >"$LP_TMP/h.txt" 2>&1 || fail "'$c -h' exited $?"
  grep -q "usage: llmprof $c" "$LP_TMP/h.txt" || fail "'$c -h' prints no usage line"
done

expect_exit 2 "$LLMPROF" frobnicate
grep -q "^error: 'frobnicate' is not an llmprof command$" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
expect_exit 2 "$LLMPROF" --bogus
expect_exit 2 "$LLMPROF"
pass
