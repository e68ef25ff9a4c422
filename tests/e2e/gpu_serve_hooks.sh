#!/bin/bash
# Issue 23's done-when, on an H100/H200: examples/serve_plain.py (a server loop with batched
# prefill, decode and chunked-prefill mixed forwards of a random-weight HF Llama; no NVTX, no
# llmprof in it) profiled with stage hooks on its own method names only. The prefill, mixed and
# decode_step stages and the per-step latencies agree with the program's own CUDA-event timings
# within 3%, every hook matched, the warm-up method's forwards are left out, tokens/s come from
# the payloads. Skips without a GPU or without torch + transformers.
set -u
. "$(dirname "$0")/lib.bash"
have_gpu || skip "no GPU"
python3 -c "import torch, transformers; assert torch.cuda.is_available()" 2>/dev/null ||
  skip "python3 lacks torch (with CUDA) or transformers"
hooks='stages.hooks=[__main__:Engine.warmup=warmup, __main__:Engine.forward_prefill=prefill@arg1.num_tokens, __main__:Engine.forward_decode=decode_step@arg1.num_tokens, __main__:Engine.forward_mixed=mixed@arg1.num_tokens]'
expect_exit 0 "$LLMPROF" run --mode light run.id=serve "$hooks" -- python3 "$LP_SRC/examples/serve_plain.py" --model llama-3.2-1b
dir=tmp/stage2/serve
# auto samples this loop (tens of thousands of launches/s): the terminal marks the scaled rows, with
# their rerun interval, or says there is none when the recorded steps lie in one block (its ~190
# steps under no parent against blocks of 128: one burst in run 39, H200)
if grep -q '"mode": "sampled"' "$dir/summary.json"; then
  if grep -q '^top kernels (.*; ~ scaled from [0-9]* of [0-9]* sampled units, all in one block: no interval' "$LP_TMP/stdout"; then
    grep -q '^  1\. .* ~ *[0-9.]* ms  *[0-9.]*% ~ *[0-9]* calls$' "$LP_TMP/stdout" ||
      fail "the terminal's first kernel is not marked as an estimate: $(cat "$LP_TMP/stdout")"
    grep -q 'but without an interval' "$dir/report.md" || fail "report.md does not say why there is no interval"
  else
    grep -q '^top kernels (.*; ~ scaled from [0-9]* of [0-9]* sampled units, +- the 95% interval of a rerun' \
      "$LP_TMP/stdout" || fail "the terminal's top kernels do not say they are sampled: $(cat "$LP_TMP/stdout")"
    grep -q '^  1\. .* ~ *[0-9.]* ms +- [0-9.]* .*% ~ *[0-9]* calls$' "$LP_TMP/stdout" ||
      fail "the terminal's first kernel is not marked as an estimate: $(cat "$LP_TMP/stdout")"
  fi
fi
python3 - "$dir" <<'PY' || fail "stage numbers do not agree: $(sed -n '/Per-stage/,/## Operators/p' "$dir/report.md")"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
st = {x["name"]: x for x in s["stages"]}
assert set(st) == {"prefill", "mixed", "decode_step"}, list(st)
# 24 measured rounds of 8 slots: 16 prefill, 8 mixed, 192 decode steps; warm-up excluded, nothing skipped
assert (st["prefill"]["iterations"], st["mixed"]["iterations"], st["decode_step"]["iterations"]) == (16, 8, 192), st
assert all(st[n]["skipped_first"] == 0 for n in st), st
assert st["prefill"]["excluded_warmup"] >= 2, st["prefill"]
assert st["decode_step"]["step_latency_ms"]["n"] == 192
assert abs(st["decode_step"]["tokens_per_s"] - 8 / (st["decode_step"]["latency_ms"]["mean"] / 1e3)) < 1e-6 * st["decode_step"]["tokens_per_s"]
sc = s["self_check"]
want = {"time to first token (ms)", "decode ms per step", "decode tokens/s", "mixed forward latency (ms)"}
got = {c["what"]: c for c in sc["checks"]}
assert want <= set(got), sorted(got)
for c in sc["checks"]:
    assert abs(c["diff"]) <= 0.03, c
assert all(h["matched"] for h in s["stage_hooks"]), s["stage_hooks"]
PY
pass
