#!/bin/bash
# The NVTX contract (docs/nvtx.md), checked on the CPU path through a logging NVTX injection
# library: domain LLM, warmup > prefill/decode_all > decode_step, op ranges, payloads; and the
# Python helper's ranges.
set -u
. "$(dirname "$0")/lib.bash"
LLM="$LP_BUILD/bin/llmprof-llm"
PROBE="$LP_BUILD/lib/liblp_nvtx_probe.so"
[ -f "$PROBE" ] || skip "no NVTX headers in this build (ranges compile to nothing)"

LP_NVTX_PROBE_OUT=$LP_TMP/ranges.txt NVTX_INJECTION64_PATH=$PROBE \
  "$LLM" --model tiny --warmup 1 --iters 2 --batch 2 --prompt-len 8 --new-tokens 3 >out.jsonl ||
  fail "llmprof-llm exited $?"
[ -s ranges.txt ] || fail "no ranges recorded"
python3 - ranges.txt <<'PY' || fail "range structure: see above"
import sys
stack, tops, seen = [], [], {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "push":
        assert f[1] == "LLM", "domain %s" % f[1]
        stack.append((f[2], f[3] if len(f) > 3 else None))
        path = "/".join(n for n, _ in stack)
        seen.setdefault(path, []).append(stack[-1][1])
        if len(stack) == 1:
            tops.append(stack[-1])
    else:
        assert stack, "pop without push"
        stack.pop()
assert not stack, "unclosed ranges: %s" % stack
# top level: warmup (payload 1), then 2 x (prefill, decode_all: the 3 steps planned)
assert tops == [("warmup", "1"), ("prefill", "16"), ("decode_all", "3"),
                ("prefill", "16"), ("decode_all", "3")], tops
assert seen["warmup/prefill"] == ["16"] and len(seen["warmup/decode_all"]) == 1
assert seen["decode_all/decode_step"] == ["0", "1", "2"] * 2, seen["decode_all/decode_step"]
ops = ["embed", "layer", "layer/attn_norm", "layer/qkv", "layer/rope", "layer/attention",
       "layer/o_proj", "layer/mlp_norm", "layer/mlp", "final_norm", "lm_head", "sample"]
for base in ("prefill", "decode_all/decode_step"):
    for op in ops:
        assert base + "/" + op in seen, "missing %s/%s" % (base, op)
assert seen["prefill/layer"] == ["0", "1"] * 2, seen["prefill/layer"]
print("ok:", len(seen), "distinct range paths")
PY

# --nvtx-ops off: stage ranges only
LP_NVTX_PROBE_OUT=$LP_TMP/stages.txt NVTX_INJECTION64_PATH=$PROBE \
  "$LLM" --model tiny-moe --warmup 0 --iters 1 --prompt-len 4 --new-tokens 2 --nvtx-ops off >/dev/null ||
  fail "llmprof-llm exited $?"
[ "$(grep -c '^push' stages.txt)" -eq 4 ] || fail "expected 4 stage ranges: $(cat stages.txt)"

# MoE op ranges
LP_NVTX_PROBE_OUT=$LP_TMP/moe.txt NVTX_INJECTION64_PATH=$PROBE \
  "$LLM" --model tiny-moe --warmup 0 --iters 1 --prompt-len 4 --new-tokens 1 >/dev/null || fail "moe run"
for r in moe router experts shared_experts mlp; do
  grep -q "^push LLM $r\$" moe.txt || fail "no '$r' range on tiny-moe"
done

# the Python helper, when the probe can be loaded into python3 (it cannot under ASan)
if command -v python3 >/dev/null && ! ldd "$PROBE" 2>/dev/null | grep -q asan; then
  LP_NVTX_PROBE_OUT=$LP_TMP/py.txt NVTX_INJECTION64_PATH=$PROBE PYTHONPATH=$LP_SRC/python python3 - <<'PY' ||
from llmprof_nvtx import llm_range, llm_ranged, available
@llm_ranged("sample")
def sample():
    return 1
if available():
    with llm_range("prefill", payload=12):
        sample()
PY
    fail "python helper exited $?"
  if [ -s py.txt ]; then
    printf 'push LLM prefill 12\npush LLM sample\npop LLM\npop LLM\n' | cmp -s - py.txt ||
      fail "python ranges: $(cat py.txt)"
  fi
fi
pass
