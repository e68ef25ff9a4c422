#!/bin/bash
# scripts/gpu/workload.sh: the reference workload's checks on a GPU machine (issue 3).
# Run from anywhere with a prebuilt build/ in the repo root (nothing is rebuilt); everything it
# makes goes to "$OUT" (small files); a PASS/FAIL summary is printed last. About 3-5 minutes.
#   OUT=/tmp/out bash scripts/gpu/workload.sh
# Steps: GPU unit tests (every kernel vs its CPU reference, CUDA engine vs CPU engine), the e2e
# tests, llmprof-llm --device cuda on tiny and llama-3.2-1b, the CPU-vs-GPU token check, ncu with
# --nvtx-include "LLM@decode_all/" (only decode kernels, the expected count), the benchmark.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/llmprof-gpu-workload}
mkdir -p "$OUT"
B=${LP_BUILD:-build}
LLM=$B/bin/llmprof-llm
SUMMARY=()
ok() { SUMMARY+=("PASS $*"); echo "PASS $*"; }
ko() { SUMMARY+=("FAIL $*"); echo "FAIL $*"; }
finish() {
  echo
  echo "===== workload summary ====="
  printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/summary.txt"
  exit 0
}

[ -x "$LLM" ] || { ko "no $LLM: build first (make dist)"; finish; }
export LLMPROF_CONF_DIR=$PWD/conf
export LC_ALL=C

# cuBLAS: the system toolkit or the pip wheels that come with torch, when ld cannot find it
if ldd "$LLM" | grep -q "not found"; then
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib $(python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
for p in site.getsitepackages() + [site.getusersitepackages()]:
    for d in glob.glob(os.path.join(p, "nvidia", "*", "lib")):
        print(d)
PY
); do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
  done
fi
ldd "$LLM" >"$OUT/ldd.txt" 2>&1
if grep -q "not found" "$OUT/ldd.txt"; then
  ko "llmprof-llm libraries: $(grep 'not found' "$OUT/ldd.txt" | tr -s ' \t' ' ' | head -3)"
  finish
fi
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; } >"$OUT/gpu.txt" 2>&1
python3 -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__)" >>"$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

# 1. unit tests (CPU ones too: the conf dir is taken from LLMPROF_CONF_DIR) and GPU kernel tests
for t in test_gpu_workload test_gpu_workload_decode test_workload_ops test_workload_engine; do
  if [ -x "$B/tests/$t" ]; then
    if timeout 300 "$B/tests/$t" >"$OUT/$t.txt" 2>&1; then ok "$t"; else ko "$t (rc $?, see $t.txt)"; tail -n 30 "$OUT/$t.txt"; fi
  else
    ko "$t not built"
  fi
done
grep -E "logits|tokens cpu/gpu" "$OUT/test_gpu_workload.txt" 2>/dev/null

# 2. e2e tests with the environment CTest would give them
for t in gpu_workload workload_cpu; do
  if LLMPROF=$B/bin/llmprof LP_BUILD=$PWD/$B LP_SRC=$PWD LP_TMP=/tmp/lp-e2e-$t timeout 300 bash "tests/e2e/$t.sh" >"$OUT/e2e_$t.txt" 2>&1; then
    ok "e2e $t"
  else
    ko "e2e $t (see e2e_$t.txt)"; tail -n 5 "$OUT/e2e_$t.txt"
  fi
done

# 3. the CUDA path on tiny and llama-3.2-1b (graph on and off), the CPU-vs-GPU tokens
run_llm() { # name args...
  local name=$1; shift
  if timeout 300 "$LLM" "$@" >"$OUT/$name.jsonl" 2>"$OUT/$name.err" && tail -n 1 "$OUT/$name.jsonl" | grep -q '"summary":true'; then
    ok "llmprof-llm $name: $(tail -n 1 "$OUT/$name.jsonl" | grep -o '"decode_ms_per_step":[0-9.e+-]*,"tokens_per_s":[0-9.e+-]*')"
  else
    ko "llmprof-llm $name: $(head -c 300 "$OUT/$name.err")"
  fi
}
run_llm tiny_cuda --model tiny --device cuda
run_llm tiny_cuda_eager --model tiny --device cuda --cuda-graph off
run_llm tiny_cpu --model tiny --device cpu
run_llm tinymoe_cuda --model tiny-moe --device cuda
run_llm tinymoe_cpu --model tiny-moe --device cpu
run_llm llama1b_cuda --model llama-3.2-1b --device cuda --prompt-len 512 --new-tokens 128
run_llm llama1b_cuda_own_gemv --model llama-3.2-1b --device cuda --prompt-len 512 --new-tokens 128 --gemv own
run_llm dsocr_cuda --model deepseek-ocr-lm --device cuda --prompt-len 512 --new-tokens 64 --iters 2
run_llm qwen15_cuda --model qwen2.5-1.5b --device cuda --prompt-len 256 --new-tokens 32 --iters 2
first() { tail -n 1 "$OUT/$1.jsonl" 2>/dev/null | grep -o '"first_tokens":\[[0-9,]*' | cut -d'[' -f2; }
for m in tiny tinymoe; do
  c=$(first ${m}_cpu); g=$(first ${m}_cuda); e=$(first tiny_cuda_eager)
  echo "$m first tokens: cpu [$c] cuda [$g]"
  if [ -n "$c" ] && [ "$(echo "$c" | cut -d, -f1-4)" = "$(echo "$g" | cut -d, -f1-4)" ]; then
    ok "$m: the first 4 greedy tokens agree on CPU and GPU ($(echo "$c" | cut -d, -f1-8) vs $(echo "$g" | cut -d, -f1-8))"
  else
    ko "$m: CPU and GPU tokens differ: cpu [$c] cuda [$g]"
  fi
done
[ "$(first tiny_cuda)" = "$(first tiny_cuda_eager)" ] && ok "tiny: graph and eager decode give the same tokens" ||
  ko "tiny: graph [$(first tiny_cuda)] vs eager [$(first tiny_cuda_eager)]"

# 4. ncu: only decode kernels under LLM@decode_all/, as many as expected
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | tail -n 1)
STEPS=4
if [ -z "$NCU" ] || [ ! -x "$NCU" ]; then
  ko "ncu not found"
else
  "$NCU" --version >"$OUT/ncu_version.txt" 2>&1
  for graph in on off; do
    rep=/tmp/lp-ncu-decode-$graph
    rm -f "$rep.ncu-rep"
    timeout 300 "$NCU" --nvtx --nvtx-include "LLM@decode_all/" --metrics gpu__time_duration.sum \
      --clock-control none -f -o "$rep" "$LLM" --model tiny --device cuda --cuda-graph $graph \
      --warmup 0 --iters 1 --prompt-len 16 --new-tokens $STEPS >"$OUT/ncu_run_$graph.jsonl" 2>"$OUT/ncu_run_$graph.err"
    if [ ! -f "$rep.ncu-rep" ]; then
      ko "ncu (graph $graph): no report; $(grep -m2 -E 'ERR|rror|WARNING' "$OUT/ncu_run_$graph.err")"
      continue
    fi
    "$NCU" -i "$rep.ncu-rep" --csv --page raw --print-units base >"$OUT/ncu_decode_$graph.csv" 2>&1
    python3 - "$OUT/ncu_decode_$graph.csv" "$OUT/ncu_run_$graph.jsonl" "$graph" $STEPS <<'PY' >"$OUT/ncu_check_$graph.txt" 2>&1
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
head, body = rows[hdr], [r for r in rows[hdr + 2:] if len(r) == len(rows[hdr])]
name = head.index("Kernel Name")
# the NVTX columns (their header names vary by version): any column whose cells name a domain
nvtx = [i for i, h in enumerate(head) if "nvtx" in h.lower()] or \
       [i for i in range(len(head)) if any("LLM:" in r[i] for r in body)]
print("nvtx columns:", [head[i] for i in nvtx])
summ = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]
steps, graph = int(sys.argv[4]), sys.argv[3]
outside = [r[name] for r in body if not any("LLM:decode_all" in r[i] for i in nvtx)]
kinds = sorted(set(r[name] for r in body))
print("profiled kernels:", len(body), "graph kernel nodes per step:", summ["graph_kernel_nodes"])
print("kernels outside LLM:decode_all:", len(outside), outside[:5])
print("kernel names:", kinds)
per_step = len(body) / steps if steps else 0
print("kernels per decode step:", per_step)
ok = body and not outside and len(body) % steps == 0
if graph == "on":
    ok = ok and len(body) == steps * summ["graph_kernel_nodes"]
print("RESULT", "ok" if ok else "bad")
PY
    if grep -q "RESULT ok" "$OUT/ncu_check_$graph.txt"; then
      ok "ncu LLM@decode_all/ (graph $graph): $(head -n 1 "$OUT/ncu_check_$graph.txt"); all inside decode_all"
    else
      ko "ncu LLM@decode_all/ (graph $graph): $(head -n 2 "$OUT/ncu_check_$graph.txt" | tr '\n' ' ')"
    fi
  done
  grep -h "kernels per decode step" "$OUT"/ncu_check_*.txt
fi

# 5. the benchmark (llmprof-llm vs PyTorch eager, decode MBU, prefill TFLOP/s)
mkdir -p "$OUT/bench"
if OUT=$OUT/bench LLM=$LLM timeout 400 bash bench/workload/run.sh >"$OUT/bench.txt" 2>&1; then
  cat "$OUT/bench.txt"
  ok "bench: $(grep -o 'llmprof-llm / PyTorch eager: .*' "$OUT/bench.txt")"
else
  ko "bench (see bench.txt)"; tail -n 5 "$OUT/bench.txt"
fi
finish
