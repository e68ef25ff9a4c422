#!/bin/bash
# `llmprof run` without a GPU: a run folder with provenance, listed by `runs` and `artifacts`;
# run.id names it; keep_last prunes. `runs` and `artifacts`: artifacts.sh.
set -u
. "$(dirname "$0")/lib.bash"

expect_exit 0 "$LLMPROF" run run.repeats=2 -- /bin/true --flag
dir=$(cat "$LP_TMP/stdout")
[[ "$dir" =~ ^tmp/stage2/[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$ ]] || fail "unexpected run folder '$dir'"
for f in config.yaml env.json inputs.yaml manifest.json; do
  [ -s "$dir/$f" ] || fail "$dir/$f missing"
done
for d in nsys ncu trace logs; do
  [ -d "$dir/$d" ] || fail "$dir/$d missing"
done
grep -q "not built yet" "$LP_TMP/stderr" || fail "run does not say that the phases are missing"
grep -q '"status": "ok"' "$dir/manifest.json" || fail "status not ok: $(cat "$dir/manifest.json")"
grep -q '"gpus": \[' "$dir/env.json" || fail "env.json has no gpus"
grep -q "^  repeats: 2$" "$dir/config.yaml" || fail "config.yaml lacks the override"
grep -q "/bin/true" "$dir/inputs.yaml" || fail "inputs.yaml lacks the workload"
# every recorded artifact: size and sha256 match the file, phase provenance
n=$(grep -c '"path": ' "$dir/manifest.json")
[ "$n" -eq 3 ] || fail "manifest lists $n artifacts, want 3"
for f in config.yaml env.json inputs.yaml; do
  sum=$(sha256sum "$dir/$f" | cut -d' ' -f1)
  size=$(stat -c %s "$dir/$f")
  tr -d '\n ' <"$dir/manifest.json" | grep -q "{\"path\":\"$f\",\"size_bytes\":$size,\"sha256\":\"$sum\",\"phase\":\"provenance\"" ||
    fail "manifest entry of $f does not match the file: $(cat "$dir/manifest.json")"
done

expect_exit 0 "$LLMPROF" run run.id=second
[ "$(cat "$LP_TMP/stdout")" = tmp/stage2/second ] || fail "run.id not used: $(cat "$LP_TMP/stdout")"
expect_exit 2 "$LLMPROF" run run.id=second
grep -q "^error: run folder 'tmp/stage2/second' already exists$" "$LP_TMP/stderr" || fail "$(cat "$LP_TMP/stderr")"

# keep_last=1 leaves only the newest
expect_exit 0 "$LLMPROF" run artifacts.keep_last=1
[ "$(ls tmp/stage2 | wc -l)" -eq 1 ] || fail "keep_last=1 left: $(ls tmp/stage2)"
[ -d "$(cat "$LP_TMP/stdout")" ] || fail "keep_last removed the new run"
pass
