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

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  nvcc --version 2>/dev/null | tail -n 2 | head -n 1
  python3 -c "import torch, transformers; print('torch', torch.__version__, '(CUDA', torch.version.cuda + ')', 'transformers', transformers.__version__)"
} >"$OUT/versions.txt" 2>&1
python3 bench/workload/peak_bw.py >"$OUT/peak_bw.jsonl" 2>"$OUT/peak_bw.err" ||
  echo "peak_bw.py failed: $(tail -n 3 "$OUT/peak_bw.err")"
llm() { # name args...: one llmprof-llm run
  local name=$1; shift
  "$LLM" "${SHAPE[@]}" --device cuda --nvtx-ops off "$@" >"$OUT/$name.jsonl" 2>"$OUT/$name.err" ||
    echo "llmprof-llm $name failed: $(tail -n 3 "$OUT/$name.err")"
}
llm llm_graph --gemv fused --cuda-graph on --pdl on
llm llm_graph_nopdl --gemv fused --cuda-graph on --pdl off
llm llm_eager --gemv fused --cuda-graph off --pdl on
llm llm_own_gemv --gemv own --cuda-graph on
llm llm_cublas --gemv cublas --cuda-graph on
python3 examples/hf_generate.py "${SHAPE[@]}" --device cuda --nvtx-ops off >"$OUT/torch.jsonl" 2>"$OUT/torch.err" ||
  echo "hf_generate.py failed: $(tail -n 3 "$OUT/torch.err")"
python3 bench/workload/report.py "$OUT" | tee "$OUT/bench_workload.md"
