#!/bin/bash
# llmprof-llm on the CPU: JSON lines out, deterministic tokens, HF configs, one-line usage errors.
set -u
. "$(dirname "$0")/lib.bash"
LLM="$LP_BUILD/bin/llmprof-llm"
[ -x "$LLM" ] || fail "$LLM not built"

# json_lines FILE: every line parses as a JSON object (python3 when present, else a shape check)
json_lines() {
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$1" <<'PY' || fail "stdout is not JSON lines: $(head -c 600 "$1")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines, "no output"
for l in lines:
    assert isinstance(json.loads(l), dict), l
PY
  else
    grep -qv '^{.*}$' "$1" && fail "stdout is not JSON lines: $(head -c 600 "$1")"
  fi
  return 0
}

expect_exit 0 "$LLM" --model tiny --device cpu
json_lines "$LP_TMP/stdout"
[ "$(grep -c '"iter":' "$LP_TMP/stdout")" -eq 3 ] || fail "expected 3 iteration lines: $(cat "$LP_TMP/stdout")"
tail -n 1 "$LP_TMP/stdout" | grep -q '"summary":true' || fail "last line is not the summary"
for k in prefill_ms decode_ms tokens tokens_per_s; do
  head -n 1 "$LP_TMP/stdout" | grep -q "\"$k\":" || fail "iteration line lacks '$k'"
done
for k in '"model":"tiny"' '"device":"cpu"' '"batch":1' '"prompt_len":64' '"new_tokens":32' '"first_tokens":\['; do
  tail -n 1 "$LP_TMP/stdout" | grep -q "$k" || fail "summary lacks $k"
done
[ -s "$LP_TMP/stderr" ] && fail "unexpected stderr: $(cat "$LP_TMP/stderr")"

# same seed, same tokens; warm-ups are not printed
"$LLM" --warmup 0 --iters 1 --seed 5 --new-tokens 8 | tail -n 1 | grep -o '"first_tokens".*' >a.txt
"$LLM" --warmup 2 --iters 1 --seed 5 --new-tokens 8 --nvtx-ops off >b.txt
[ "$(grep -c '"iter":' b.txt)" -eq 1 ] || fail "warm-up iterations were printed"
tail -n 1 b.txt | grep -o '"first_tokens".*' | cmp -s - a.txt || fail "same seed gave other tokens"

# MoE model, batch > 1, a Hugging Face config.json
expect_exit 0 "$LLM" --model tiny-moe --batch 2 --prompt-len 8 --new-tokens 4 --iters 1 --warmup 0
json_lines "$LP_TMP/stdout"
expect_exit 0 "$LLM" --model "$LP_SRC/tests/fixtures/hf/tiny-llama.json" --prompt-len 8 --new-tokens 2 --iters 1
grep -q '"family":"llama"' "$LP_TMP/stdout" || fail "HF config not mapped: $(cat "$LP_TMP/stdout")"

# usage errors: one line, exit 2, nothing on stdout
for bad in "--batch 0" "--batch x" "--device tpu" "--nvtx-ops maybe" "--iters 0" "--seed -1" \
           "--model no-such-model" "--prompt-len 1000 --new-tokens 100" "--bogus" "extra" \
           "--model $LP_SRC/tests/fixtures/hf/deepseek-v2-lite.json"; do
  # shellcheck disable=SC2086
  expect_exit 2 "$LLM" $bad
  [ -s "$LP_TMP/stdout" ] && fail "'$bad' printed on stdout"
  head -n 1 "$LP_TMP/stderr" | grep -q '^error: ' || fail "'$bad': no error line: $(cat "$LP_TMP/stderr")"
done
expect_exit 2 "$LLM" --model "$LP_SRC/tests/fixtures/hf/deepseek-v2-lite.json"
grep -q "kv_lora_rank" "$LP_TMP/stderr" || fail "MLA refusal does not name the field"

# --device cuda without a GPU (or without CUDA in the build): environment error
if ! have_gpu; then
  expect_exit 4 "$LLM" --device cuda
  grep -q '^error: ' "$LP_TMP/stderr" || fail "no error line for --device cuda"
fi
expect_exit 0 "$LLM" -h
grep -q "usage: llmprof-llm" "$LP_TMP/stdout" || fail "-h prints no usage"
pass
