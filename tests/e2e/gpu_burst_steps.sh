#!/bin/bash
# Issue 24's per-step criterion under auto's bursts, on an H100/H200: examples/hf_generate.py
# (random-weight llama-3.2-1b shape, eager, a decode step every ~15 ms: auto samples it in bursts,
# CUPTI attached and detached on the launching thread) profiled by `llmprof run --mode light`;
# every decode step's latency from the trace agrees with the program's own CUDA events within 2%,
# the steps that held a burst's detach included (run 27: before the pop's mark was taken again
# after the detach, those read 18-45% below the program's events). Skips without a GPU or without
# torch + transformers.
set -u
. "$(dirname "$0")/lib.bash"
have_gpu || skip "no GPU"
python3 -c "import torch, transformers; assert torch.cuda.is_available()" 2>/dev/null ||
  skip "python3 lacks torch (with CUDA) or transformers"
expect_exit 0 "$LLMPROF" run --mode light run.id=bursts -- python3 "$LP_SRC/examples/hf_generate.py" \
  --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 2 --warmup 1 --step-times
dir=tmp/stage2/bursts
grep -q '"burst": 4' "$dir/summary.json" || fail "auto did not sample in bursts: $(grep -A8 '"tracing"' "$dir/summary.json")"
python3 "$LP_SRC/bench/tracer/sample_check.py" steps "$dir/trace" "$dir/trace/workload.stdout" >"$LP_TMP/steps.json" ||
  fail "sample_check.py steps failed"
python3 - "$LP_TMP/steps.json" <<'PY' || fail "per-step latencies disagree with the program's events: $(cat "$LP_TMP/steps.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["steps_program"] == 256 and d["steps_matched"] == 256, d
assert d["within_2pct"] == d["steps_matched"], d
PY
pass
