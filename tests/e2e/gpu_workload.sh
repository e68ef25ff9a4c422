#!/bin/bash
# llmprof-llm --device cuda: JSON lines, and the same greedy tokens as the CPU path on tiny.
set -u
. "$(dirname "$0")/lib.bash"
LLM="$LP_BUILD/bin/llmprof-llm"
have_gpu || skip "no GPU"
"$LLM" --help | grep -q cuda-graph || skip "llmprof-llm without options for CUDA"

for model in tiny tiny-moe; do
  for graph in on off; do
    expect_exit 0 "$LLM" --model $model --device cuda --cuda-graph $graph --new-tokens 16 --iters 2
    [ "$(grep -c '"iter":' "$LP_TMP/stdout")" -eq 2 ] || fail "$model: expected 2 iteration lines"
    tail -n 1 "$LP_TMP/stdout" | grep -q '"device":"cuda"' || fail "$model: summary is not for cuda"
    tail -n 1 "$LP_TMP/stdout" | grep -o '"first_tokens":\[[0-9,]*' | cut -d'[' -f2 | cut -d, -f1-4 >"gpu_${model}_${graph}.txt"
    "$LLM" --model $model --device cpu --new-tokens 16 --iters 1 --warmup 0 | tail -n 1 |
      grep -o '"first_tokens":\[[0-9,]*' | cut -d'[' -f2 | cut -d, -f1-4 >"cpu_${model}.txt"
    cmp -s "gpu_${model}_${graph}.txt" "cpu_${model}.txt" ||
      fail "$model (graph $graph): first tokens differ: gpu $(cat "gpu_${model}_${graph}.txt") cpu $(cat "cpu_${model}.txt")"
  done
done
pass
