#!/bin/bash
# bench/workload/probe.sh: one GPU call's worth of measurements for the decode work of issue 3
# (bench/workload/NOTES.md): the GPU kernel tests, llama-3.2-1b decode timings per path, the
# tracer's per-kernel table and launch gaps, and ncu's per-kernel DRAM bytes for one fused step.
# Run from a folder with bin/ lib/ tests/ conf/ bench/ (a build carried to the GPU machine):
#   OUT=/tmp/out bash bench/workload/probe.sh [steps...]   (steps: tests time trace ncu bw; default all)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/llmprof-probe}
mkdir -p "$OUT"
export LLMPROF_CONF_DIR=$PWD/conf LC_ALL=C
STEPS=${*:-tests time trace ncu bw}
LLM=bin/llmprof-llm
SHAPE=(--model llama-3.2-1b --batch 1 --prompt-len 512 --new-tokens 128)
S=()
note() { S+=("$*"); echo "$*"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv; } >"$OUT/gpu.txt" 2>&1
note "gpu: $(tail -n 1 "$OUT/gpu.txt")"

if has tests; then
  for t in test_gpu_workload_decode test_gpu_workload; do
    s=$(date +%s)
    if timeout 120 tests/$t >"$OUT/$t.txt" 2>&1; then note "PASS $t ($(( $(date +%s) - s )) s)"
    else note "FAIL $t (rc $?)"; tail -n 15 "$OUT/$t.txt"; fi
  done
  grep -E "tokens cpu/gpu" "$OUT/test_gpu_workload.txt" | head -3
fi

summ() { tail -n 1 "$1" | python3 -c 'import json,sys; s=json.load(sys.stdin); print("%.4f ms/step %.0f GB/s prefill %.0f tok/s %.1f TFLOP/s kernels %d tokens %s" % (s["decode_ms_per_step"], s["decode_gb_per_s"], s["prefill_tokens_per_s"], s["prefill_tflops"], s["graph_kernel_nodes"], s["first_tokens"][:6]))' 2>/dev/null || echo "failed: $(tail -c 300 "${1%.jsonl}.err")"; }
# variants as "name:args;name:args" (TIME, TRACE) replace the defaults
IFS=';' read -r -a TIMEV <<<"${TIME:-fused:--gemv fused;fused_nopdl:--gemv fused --pdl off;fused_eager:--gemv fused --cuda-graph off;own:--gemv own;cublas:--gemv cublas}"
IFS=';' read -r -a TRACEV <<<"${TRACE:-fused:--gemv fused --pdl off --cuda-graph off;fusedg:--gemv fused;cublas:--gemv cublas --cuda-graph off}"
if has time; then
  for v in "${TIMEV[@]}"; do
    name=${v%%:*}; args=${v#*:}
    timeout 60 $LLM "${SHAPE[@]}" --device cuda --nvtx-ops off --warmup 2 --iters 5 $args >"$OUT/t_$name.jsonl" 2>"$OUT/t_$name.err"
    note "time $name: $(summ "$OUT/t_$name.jsonl")"
  done
fi

if has trace; then
  for v in "${TRACEV[@]}"; do
    name=${v%%:*}; args=${v#*:}
    rm -rf /tmp/lpt_$name
    CUDA_INJECTION64_PATH=$PWD/lib/libllmprof_inject.so NVTX_INJECTION64_PATH=$PWD/lib/libllmprof_inject.so \
      LLMPROF_TRACE_DIR=/tmp/lpt_$name timeout 60 $LLM "${SHAPE[@]}" --device cuda --warmup 0 --iters 1 $args \
      >"$OUT/tr_$name.jsonl" 2>"$OUT/tr_$name.err"
    bin/llmprof trace perfetto /tmp/lpt_$name -o /tmp/lpt_$name.json.gz --no-flows >/dev/null 2>&1
    python3 bench/workload/trace_table.py /tmp/lpt_$name.json.gz >"$OUT/tr_$name.md" 2>&1
    echo "== trace $name ($args)"; cat "$OUT/tr_$name.md"
    note "trace $name: $(tail -n 1 "$OUT/tr_$name.md")"
  done
fi

if has ncu && command -v ncu >/dev/null; then
  timeout 70 ncu --clock-control none --cache-control none --nvtx --nvtx-include "LLM@decode_all/" -c 81 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed \
    --csv --page raw $LLM "${SHAPE[@]}" --device cuda --gemv fused --pdl off --cuda-graph off --warmup 0 --iters 1 \
    >"$OUT/ncu_fused.csv" 2>"$OUT/ncu_fused.err"
  python3 - "$OUT/ncu_fused.csv" <<'PY' | tee "$OUT/ncu_fused.md"
import csv, collections, re, sys
lines = open(sys.argv[1]).read().splitlines()
lines = lines[[i for i, l in enumerate(lines) if l.startswith('"ID"')][0]:]
rows = list(csv.reader(lines))
h = rows[0]; rows = [r for r in rows[2:] if len(r) == len(h)]
i = {k: h.index(k) for k in ("Kernel Name", "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "Grid Size")}
agg = collections.OrderedDict()
for r in rows:
    n = re.sub(r"\(.*", "", r[i["Kernel Name"]]).replace("void ", "")[:40] + " " + r[i["Grid Size"]]
    a = agg.setdefault(n, [0, 0.0, 0.0, 0.0, 0.0])
    a[0] += 1; a[1] += float(r[i["gpu__time_duration.sum"]]); a[2] += float(r[i["dram__bytes_read.sum"]]); a[3] += float(r[i["dram__bytes_write.sum"]]); a[4] += float(r[i["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"]])
print("| kernel grid | n | mean us | MB read | GB/s | dram % |")
print("|---|---:|---:|---:|---:|---:|")
tt = tb = 0
for n, a in agg.items():
    tt += a[1]; tb += a[2] + a[3]
    print("| %s | %d | %.2f | %.2f | %.0f | %.1f |" % (n, a[0], a[1] / a[0] / 1e3, a[2] / a[0] / 1e6, (a[2] + a[3]) / a[1], a[4] / a[0]))
print("ncu: %d kernels, %.1f us, %.1f MB, %.0f GB/s (serialized, no launch overlap)" % (len(rows), tt / 1e3, tb / 1e6, tb / tt))
PY
  note "$(tail -n 1 "$OUT/ncu_fused.md")"
fi

if has bw; then
  timeout 60 python3 bench/workload/peak_bw.py >"$OUT/peak_bw.jsonl" 2>"$OUT/peak_bw.err"
  note "peak: $(cat "$OUT/peak_bw.jsonl" | head -c 300)"
fi
echo; echo "===== probe summary ====="; printf '%s\n' "${S[@]}"
