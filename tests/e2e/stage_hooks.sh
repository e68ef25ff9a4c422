#!/bin/bash
# Stage hooks by name (issue 23), on the CPU: the shim's own tests (tests/python/test_hooks.py:
# grammar, lazy wrapping, methods, main-script classes, spawn children, unmatched hooks), then
# `llmprof run` of a server-like loop with no NVTX in it (tests/python/fake_server.py) with
# stages.hooks naming its methods: prefill, mixed and free decode_step stages with tokens/s from
# the payloads, a warning for a hook that never matched, hook calls summed over a spawned child,
# the self-check within tolerance; a bad entry is a usage error naming the key; stages=sglang loads.
# The run part needs the NVTX interop library (CUDA toolkit) for ranges to reach the tracer.
set -u
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
export PYTHONDONTWRITEBYTECODE=1
(cd "$LP_SRC/tests/python" && python3 -W error::ResourceWarning -m unittest -v test_hooks) >"$LP_TMP/unittest.log" 2>&1 ||
  fail "python3 -m unittest test_hooks failed: $(tail -n 40 "$LP_TMP/unittest.log")"
grep -q "^OK" "$LP_TMP/unittest.log" || fail "unittest did not say OK: $(tail -n 5 "$LP_TMP/unittest.log")"

# config errors come before anything runs, naming the key
expect_exit 2 "$LLMPROF" run --dry-run 'stages.hooks=[m:f=decode]' -- python3 -c 1
grep -q "invalid entry 'm:f=decode' in 'stages.hooks': unknown stage 'decode'" "$LP_TMP/stderr" ||
  fail "no one-line error naming stages.hooks: $(cat "$LP_TMP/stderr")"
expect_exit 0 "$LLMPROF" run --dry-run stages=sglang -- python3 -c 1
grep -q "LLMPROF_AUTO_HOOKS='sglang.srt.model_executor.model_runner:ModelRunner.forward_extend=prefill" "$LP_TMP/stdout" ||
  fail "stages=sglang did not reach the workload's environment: $(cat "$LP_TMP/stdout")"

ldconfig -p 2>/dev/null | grep -q libnvtx3interop.so.1 || [ -e /usr/local/cuda/lib64/libnvtx3interop.so.1 ] ||
  skip "libnvtx3interop.so.1 (CUDA toolkit) not found: Python NVTX ranges cannot be recorded"
prog="$LP_SRC/tests/python/fake_server.py"
hooks='stages.hooks=[__main__:Engine.forward_prefill=prefill@arg1.num_tokens, __main__:Engine.forward_decode=decode_step@len(arg1.seqs), __main__:Engine.forward_mixed=mixed@arg1.num_tokens, nosuch.engine:Runner.forward=prefill]'
expect_exit 0 "$LLMPROF" run --mode light run.id=hooks "$hooks" -- python3 "$prog" spawn
dir=tmp/stage2/hooks
python3 - "$dir" <<'PY' || fail "summary check failed in $dir: $(sed -n '/Per-stage/,/Self-check/p' "$dir/report.md")"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
st = {x["name"]: x for x in s["stages"]}
assert set(st) == {"prefill", "mixed", "decode_step"}, list(st)
assert st["mixed"]["kind"] == "mixed" and st["decode_step"]["kind"] == "decode_steps", st
# 9 iterations in the parent + 3 in the child: 8 prefill + 4 mixed, 36 decode steps; first of each skipped
assert st["prefill"]["iterations"] == 7 and st["mixed"]["iterations"] == 3, (st["prefill"]["iterations"], st["mixed"]["iterations"])
assert st["decode_step"]["iterations"] == 35, st["decode_step"]["iterations"]
assert st["decode_step"]["step_latency_ms"]["p90"] >= st["decode_step"]["step_latency_ms"]["p50"] > 1.5, st["decode_step"]
for n in st:
    assert st[n]["tokens_per_s"] and st[n]["tokens_per_s"] > 0, st[n]
assert s["stage_mapping"]["ranges"]["mixed"][0]["name"] == "mixed", s["stage_mapping"]
h = {x["hook"]: x for x in s["stage_hooks"]}
assert h["__main__:Engine.forward_decode=decode_step@len(arg1.seqs)"]["calls"] == 36, h
assert h["__main__:Engine.forward_decode=decode_step@len(arg1.seqs)"]["found"] == 2, h
assert h["nosuch.engine:Runner.forward=prefill"]["matched"] is False, h
assert h["nosuch.engine:Runner.forward=prefill"]["warning"] == "its module was never imported", h
checks = {c["what"]: c for c in s["self_check"]["checks"]}
assert "mixed forward latency (ms)" in checks and "time to first token (ms)" in checks, checks
PY
grep -q 'Warning: stage hook `nosuch.engine:Runner.forward=prefill` never matched: its module was never imported' "$dir/report.md" ||
  fail "no hook warning in report.md: $(grep -n hook "$dir/report.md")"
mkdir -p before && cp "$dir"/*.md "$dir"/summary.json before/
expect_exit 0 "$LLMPROF" report "$dir"
for f in before/*; do cmp -s "$f" "$dir/$(basename "$f")" || fail "llmprof report changed $(basename "$f")"; done
pass
