#!/bin/bash
# Bad overrides: exit 2, the documented one-line message (docs/config.md), no run folder.
set -u
. "$(dirname "$0")/lib.bash"

check() {  # check 'override' 'error line' ['hint line']
  expect_exit 2 "$LLMPROF" run "$1"
  head -1 "$LP_TMP/stderr" | grep -qxF "error: $2" || fail "'$1': got '$(head -1 "$LP_TMP/stderr")', want 'error: $2'"
  if [ $# -ge 3 ]; then
    sed -n 2p "$LP_TMP/stderr" | grep -qxF "hint: $3" || fail "'$1': hint '$(sed -n 2p "$LP_TMP/stderr")', want 'hint: $3'"
  fi
  [ "$(wc -l <"$LP_TMP/stderr")" -le 2 ] || fail "'$1': more than an error and a hint: $(cat "$LP_TMP/stderr")"
  [ -s "$LP_TMP/stdout" ] && fail "'$1': printed to stdout"
  [ -e "$LP_TMP/tmp" ] && fail "'$1' created a run folder"
  return 0
}

check run.top_n_kernel=3 "unknown key 'run.top_n_kernel'" "did you mean 'run.top_n_kernels'"
check run.repeats=abc "invalid value 'abc' for 'run.repeats': expected an integer"
check run.repeats=0 "invalid value '0' for 'run.repeats': expected an integer >= 1"
check run.mode=fast "invalid value 'fast' for 'run.mode': expected one of deep, light"
check profiling.ncu.replay_mode=kernels \
  "invalid value 'kernels' for 'profiling.ncu.replay_mode': expected one of kernel, application, range, app-range"
check profiling/ncu=ncu.hgh "unknown option 'ncu.hgh' for group 'profiling/ncu'" \
  "available: ncu.default, ncu.high, ncu.light, ncu.rtx3090"
check model=nope "unknown option 'nope' for group 'model'" "available: tiny"
check =x "invalid override '=x': missing key before '='"
check a..b=1 "invalid override 'a..b=1': empty key segment in 'a..b'"
check +run.mode=light "cannot add 'run.mode': the key exists" "set it with 'run.mode=light' (or '++run.mode=light')"
check '~run.nope' "unknown key 'run.nope'"
check run.id=../x "invalid run id '../x': '/' is not allowed" "run ids use letters, digits, '.', '_' and '-'"
check run.id=.. "invalid run id '..': '..' is not allowed"
check artifacts.keep_last=0 "invalid value '0' for 'artifacts.keep_last': expected an integer >= 1"
check 'x=[1' "override 'x=[1':2:1: did not find expected ',' or ']' while parsing a flow sequence"

# --mode is checked like run.mode; a broken conf/ names file:line:col
expect_exit 2 "$LLMPROF" run --mode fast
grep -qxF "error: invalid value 'fast' for 'run.mode': expected one of deep, light" "$LP_TMP/stderr" || fail "--mode fast: $(cat "$LP_TMP/stderr")"
mkdir -p conf && cp -r "$LP_SRC/conf/." conf/ && sed -i "s/  repeats: 3 /  repeats: [3 /" conf/runner/stage2.yaml
grep -q "repeats: \[3" conf/runner/stage2.yaml || fail "test setup: conf/runner/stage2.yaml has no 'repeats: 3 ' line"
expect_exit 2 "$LLMPROF" --config-dir conf run --cfg
grep -qxF "error: conf/runner/stage2.yaml:8:3: did not find expected ',' or ']' while parsing a flow sequence" "$LP_TMP/stderr" || fail "no file:line:col: $(cat "$LP_TMP/stderr")"
[ -e "$LP_TMP/tmp" ] && fail "a run folder was created"
pass
