#!/bin/bash
# `llmprof run --cfg`: the resolved configuration on stdout, nothing written.
set -u
. "$(dirname "$0")/lib.bash"

expect_exit 0 "$LLMPROF" run --cfg
for key in "  mode: deep" "  top_n_kernels: 5" "  stage2_dir: tmp/stage2" "    name: ncu_default" \
           "    replay_mode: kernel" "  name: tiny" "  hf_config: null" "    trace: \[cuda, nvtx, osrt\]"; do
  grep -q "^$key\$" "$LP_TMP/stdout" || fail "--cfg output lacks '$key'"
done
grep -q "defaults" "$LP_TMP/stdout" && fail "--cfg output still has the defaults list"
[ -s "$LP_TMP/stderr" ] && fail "--cfg wrote to stderr: $(cat "$LP_TMP/stderr")"

# a preset: the extra sections of ncu.high, and overrides in the same line
expect_exit 0 "$LLMPROF" run --cfg profiling/ncu=ncu.high run.repeats=7 --mode light
grep -q "^    name: ncu_high$" "$LP_TMP/stdout" || fail "ncu.high not selected"
for s in ComputeWorkloadAnalysis WorkloadDistribution WarpStateStats LaunchStats InstructionStats; do
  grep -q "sections: \[.*$s" "$LP_TMP/stdout" || fail "ncu.high lacks section $s"
done
grep -q "^  repeats: 7$" "$LP_TMP/stdout" || fail "run.repeats=7 not applied"
grep -q "^  mode: light$" "$LP_TMP/stdout" || fail "--mode light not applied"

# the output is the configuration: it loads back as YAML with the same values
expect_exit 0 "$LLMPROF" run --cfg "profiling.ncu.sections=[SpeedOfLight, Occupancy]" "+extra.note='a b: c'"
grep -q "^    sections: \[SpeedOfLight, Occupancy\]$" "$LP_TMP/stdout" || fail "list override not shown"
grep -q "^  note: a b: c$\|^  note: \"a b: c\"$\|^  note: 'a b: c'$" "$LP_TMP/stdout" || fail "added key not shown: $(grep note "$LP_TMP/stdout")"

[ -e "$LP_TMP/tmp" ] && fail "--cfg created $(ls -R "$LP_TMP/tmp")"
"$LLMPROF" run -h | grep -q -- "--cfg" || fail "run -h does not list --cfg"
pass
