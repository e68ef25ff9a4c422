#!/bin/bash
# The CLI's frame: version, help for every command, unknown commands and options.
set -u
. "$(dirname "$0")/lib.bash"

out=$("$LLMPROF" --version) || fail "--version exited $?"
[[ "$out" =~ ^llmprof\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-f]+ ]] || fail "bad --version output: $out"

# The command list comes from `llmprof help` itself (the table in src/main.c): every command it
# lists answers -h, --help and `llmprof help CMD` with its usage line, on stdout, exit 0.
"$LLMPROF" help >"$LP_TMP/help.txt" || fail "help exited $?"
cmds=$(sed -n '/^commands:$/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p' "$LP_TMP/help.txt")
[ "$(echo "$cmds" | wc -w)" -ge 8 ] || fail "help lists too few commands: '$cmds'"
for c in run report kernels diff; do   # a few that must be there, so a broken list cannot pass
  echo "$cmds" | grep -qx "$c" || fail "help does not list '$c'"
done
for c in $cmds; do
  for h in "$c -h" "$c --help" "help $c"; do
    # shellcheck disable=SC2086
    "$LLMPROF" $h >"$LP_TMP/h.txt" 2>"$LP_TMP/h.err" || fail "'llmprof $h' exited $?"
    grep -q "^usage: llmprof $c" "$LP_TMP/h.txt" || fail "'llmprof $h' prints no usage line on stdout"
    grep -q "^  -h, --help " "$LP_TMP/h.txt" || fail "'llmprof $h' lists no options"
    [ -s "$LP_TMP/h.err" ] && fail "'llmprof $h' wrote to stderr: $(cat "$LP_TMP/h.err")"
  done
done
expect_exit 2 "$LLMPROF" help frobnicate

expect_exit 2 "$LLMPROF" frobnicate
grep -q "^error: 'frobnicate' is not an llmprof command$" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
expect_exit 2 "$LLMPROF" --bogus
expect_exit 2 "$LLMPROF"
pass
