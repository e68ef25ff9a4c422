#!/bin/bash
# bench/workload/run.sh: decode memory-bandwidth utilization (MBU) and prefill throughput of the
# reference workload on llama-3.2-1b (bf16, batch 1, prompt 512, 128 new tokens), side by side with
# the same shape in PyTorch eager (examples/hf_generate.py), on the GPU machine. Run from the repo
# root with a built build/ (not rebuilt here):  OUT=/tmp/bench bash bench/workload/run.sh
# MBU = (weight bytes + KV bytes read and written per decode step) / step time / peak bandwidth;
# the peak is both a measured device-to-device copy (same run) and the datasheet figure.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/llmprof-bench-workload}
mkdir -p "$OUT"
LLM=${LLM:-build/bin/llmprof-llm}
SHAPE=(--model llama-3.2-1b --batch 1 --prompt-len 512 --new-tokens 128 --warmup 2 --iters 5)

python3 bench/workload/peak_bw.py >"$OUT/peak_bw.jsonl" 2>"$OUT/peak_bw.err" ||
  echo "peak_bw.py failed: $(tail -n 3 "$OUT/peak_bw.err")"
"$LLM" "${SHAPE[@]}" --device cuda --nvtx-ops off --cuda-graph on >"$OUT/llm_graph.jsonl" 2>"$OUT/llm_graph.err" ||
  echo "llmprof-llm (graph) failed: $(tail -n 3 "$OUT/llm_graph.err")"
"$LLM" "${SHAPE[@]}" --device cuda --nvtx-ops off --cuda-graph off >"$OUT/llm_eager.jsonl" 2>"$OUT/llm_eager.err" ||
  echo "llmprof-llm (eager) failed: $(tail -n 3 "$OUT/llm_eager.err")"
"$LLM" "${SHAPE[@]}" --device cuda --nvtx-ops off --cuda-graph on --gemv own >"$OUT/llm_own_gemv.jsonl" 2>"$OUT/llm_own_gemv.err" ||
  echo "llmprof-llm (own gemv) failed: $(tail -n 3 "$OUT/llm_own_gemv.err")"
python3 examples/hf_generate.py "${SHAPE[@]}" --device cuda --nvtx-ops off >"$OUT/torch.jsonl" 2>"$OUT/torch.err" ||
  echo "hf_generate.py failed: $(tail -n 3 "$OUT/torch.err")"
python3 bench/workload/report.py "$OUT" | tee "$OUT/bench_workload.md"
