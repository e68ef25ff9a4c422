#!/bin/bash
# `llmprof artifacts` and `llmprof runs` on run folders made by `llmprof run` (no GPU needed).
set -u
. "$(dirname "$0")/lib.bash"

expect_exit 0 "$LLMPROF" runs
grep -q "no runs under 'tmp/stage2'" "$LP_TMP/stderr" || fail "runs on nothing: $(cat "$LP_TMP/stderr")"
expect_exit 2 "$LLMPROF" artifacts
grep -q "^error: no runs under 'tmp/stage2'$" "$LP_TMP/stderr" || fail "$(cat "$LP_TMP/stderr")"

expect_exit 0 "$LLMPROF" run
first=$(run_dir_from_stdout)
expect_exit 0 "$LLMPROF" run run.id=second
second=$(run_dir_from_stdout)

expect_exit 0 "$LLMPROF" runs
[ "$(grep -c ' ok ' "$LP_TMP/stdout")" -eq 2 ] || fail "runs does not list two ok runs: $(cat "$LP_TMP/stdout")"
sed -n 2p "$LP_TMP/stdout" | grep -q "^second " || fail "newest run not first: $(cat "$LP_TMP/stdout")"
sed -n 3p "$LP_TMP/stdout" | grep -q "^$(basename "$first") " || fail "older run not second: $(cat "$LP_TMP/stdout")"
# folders whose manifest is missing or corrupt are listed as damaged, with the reason, not left out
mkdir -p tmp/stage2/lost tmp/stage2/garbled && printf '{"run_id": ' > tmp/stage2/garbled/manifest.json
expect_exit 0 "$LLMPROF" runs
grep -q "^lost  *damaged  *- " "$LP_TMP/stdout" || fail "runs omits a folder without manifest: $(cat "$LP_TMP/stdout")"
grep -q "^garbled  *damaged  *- " "$LP_TMP/stdout" || fail "runs omits a corrupt manifest: $(cat "$LP_TMP/stdout")"
grep -q "^warning: run folder 'tmp/stage2/lost' is damaged: no manifest.json$" "$LP_TMP/stderr" || fail "$(cat "$LP_TMP/stderr")"
grep -q "^warning: run folder 'tmp/stage2/garbled' is damaged: corrupt manifest.json: " "$LP_TMP/stderr" || fail "$(cat "$LP_TMP/stderr")"
rm -rf tmp/stage2/lost tmp/stage2/garbled

# by folder path: every file with its size and phase
expect_exit 0 "$LLMPROF" artifacts "$first"
for f in config.yaml env.json inputs.yaml manifest.json; do
  grep -q " $f\$" "$LP_TMP/stdout" || fail "artifacts lacks $f: $(cat "$LP_TMP/stdout")"
done
grep -q " provenance  *config.yaml$" "$LP_TMP/stdout" || fail "artifacts lacks the phase: $(cat "$LP_TMP/stdout")"
grep -q " -  *manifest.json$" "$LP_TMP/stdout" || fail "manifest.json has a phase: $(cat "$LP_TMP/stdout")"
# by run id, exact sizes
expect_exit 0 "$LLMPROF" artifacts --bytes "$(basename "$first")"
size=$(stat -c %s "$first/env.json")
grep -q "^ *$size  provenance  *env.json$" "$LP_TMP/stdout" || fail "artifacts --bytes: $(cat "$LP_TMP/stdout")"
# no run given: the newest
expect_exit 0 "$LLMPROF" artifacts
head -1 "$LP_TMP/stdout" | grep -q "^run second (ok): $second$" || fail "default run: $(head -1 "$LP_TMP/stdout")"
# a file that vanished is reported
rm "$second/inputs.yaml"
expect_exit 0 "$LLMPROF" artifacts second
grep -q "inputs.yaml" "$LP_TMP/stdout" && fail "a deleted file is listed"
grep -q "^warning: 'inputs.yaml' is in the manifest but missing" "$LP_TMP/stderr" || fail "no warning: $(cat "$LP_TMP/stderr")"

expect_exit 2 "$LLMPROF" artifacts no-such-run
grep -q "^error: no run 'no-such-run' under 'tmp/stage2'$" "$LP_TMP/stderr" || fail "$(cat "$LP_TMP/stderr")"
expect_exit 2 "$LLMPROF" artifacts "$first" "$second"
expect_exit 2 "$LLMPROF" artifacts run.top_n_kernel=2
grep -q "did you mean 'run.top_n_kernels'" "$LP_TMP/stderr" || fail "$(cat "$LP_TMP/stderr")"

# another root through an override
mkdir -p other && mv "$second" other/
expect_exit 0 "$LLMPROF" runs artifacts.stage2_dir=other
grep -q "^second " "$LP_TMP/stdout" || fail "runs artifacts.stage2_dir=other: $(cat "$LP_TMP/stdout")"
grep -q "^$(basename "$first") " "$LP_TMP/stdout" && fail "runs looked in the default root"
expect_exit 0 "$LLMPROF" artifacts second artifacts.stage2_dir=other
pass
