#!/bin/bash
# bench/workload/moe_probe.sh: one GPU call's worth of checks and measurements for issue 22 (fast
# MoE decode, dense decode bandwidth; bench/workload/NOTES.md): the GPU tests of the workload, then
# decode ms/step and MBU of llmprof-llm for deepseek-ocr-lm (batch 1, 2, 4), llama-3.2-1b and
# llama-3.1-8b, old binary against new, with tuning variants, and ncu's per-kernel table of one
# deepseek-ocr-lm decode step. Run from a folder with build/bin/llmprof-llm (and optionally
# build/bin/llmprof-llm-base, the binary before the change), build/tests/ (with build/lib/ for
# libraries the device lacks, e.g. libcmocka.so.0), conf/, tests/e2e/ and bench/ (a tree carried
# to the GPU machine):
#   OUT=/tmp/out bash bench/workload/moe_probe.sh [tests] [time] [ncu] [detail] [bw]   (default: all but detail)
# TIME="name:binary:model:batch:args:VAR=value ...;..." replaces the default timing list; NCU_MODELS
# (a list), NCU_ARGS choose what ncu profiles; NCU_DETAIL, the launches whose sections are printed.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/llmprof-moe-probe}
mkdir -p "$OUT"
export LLMPROF_CONF_DIR=$PWD/conf LC_ALL=C PYTHONUNBUFFERED=1
STEPS=${*:-tests time ncu bw}
B=build/bin
S=()
note() { S+=("$*"); echo "$*"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$OUT/gpu.txt" 2>&1
note "gpu: $(tail -n 1 "$OUT/gpu.txt")"

if has tests; then
  for t in test_gpu_workload_decode test_gpu_workload; do
    s=$(date +%s)
    if LD_LIBRARY_PATH=$PWD/build/lib:${LD_LIBRARY_PATH:-} timeout 200 build/tests/$t >"$OUT/$t.txt" 2>&1; then note "PASS $t ($(( $(date +%s) - s )) s)"
    else note "FAIL $t (rc $?)"; tail -n 25 "$OUT/$t.txt"; fi
  done
  grep -E "tokens cpu/gpu|decode logits" "$OUT/test_gpu_workload.txt" | grep moe
  if LLMPROF=/bin/true LP_TMP=/tmp/lp-e2e LP_SRC=$PWD LP_BUILD=$PWD/build timeout 120 \
      bash tests/e2e/gpu_workload.sh >"$OUT/e2e_gpu_workload.txt" 2>&1; then note "PASS e2e gpu_workload.sh"
  else note "FAIL e2e gpu_workload.sh: $(tail -n 3 "$OUT/e2e_gpu_workload.txt")"; fi
fi

# name:binary(new, or X for build/bin/llmprof-llm-X such as base):model:batch:extra args:environment
DEF="ds1_base:base:deepseek-ocr-lm:1:;ds1:new:deepseek-ocr-lm:1:;ds1_nopdl:new:deepseek-ocr-lm:1:--pdl off"
DEF+=";ds1_eager:new:deepseek-ocr-lm:1:--cuda-graph off;ds2_base:base:deepseek-ocr-lm:2:;ds2:new:deepseek-ocr-lm:2:"
DEF+=";ds4_base:base:deepseek-ocr-lm:4:;ds4:new:deepseek-ocr-lm:4:"
DEF+=";l1_base:base:llama-3.2-1b:1:;l1:new:llama-3.2-1b:1:;l8_base:base:llama-3.1-8b:1:;l8:new:llama-3.1-8b:1:"

IFS=';' read -r -a TIMEV <<<"${TIME:-$DEF}"
summ() { tail -n 1 "$1" | python3 -c '
import json, sys
s = json.load(sys.stdin)
peak = 3.35e3 if "H100" in s["device_name"] else 4.8e3 if "H200" in s["device_name"] else 0
print("%.4f ms/step %.0f GB/s %.1f%% of datasheet, %.1f MB/step, kernels %d, tokens %s" % (s["decode_ms_per_step"],
  s["decode_gb_per_s"], 100 * s["decode_gb_per_s"] / peak if peak else 0, s["decode_bytes_per_step"] / 1e6,
  s["graph_kernel_nodes"], s["first_tokens"][:8]))' 2>/dev/null || echo "failed: $(tail -c 300 "${1%.jsonl}.err")"; }
if has time; then
  for v in "${TIMEV[@]}"; do
    IFS=':' read -r name bin model batch args envs <<<"$v"
    exe=$B/llmprof-llm; [ "$bin" = new ] || exe=$B/llmprof-llm-$bin
    [ -x "$exe" ] || { note "time $name: no $exe"; continue; }
    env ${envs:-} timeout 120 $exe --model "$model" --batch "$batch" --prompt-len 512 --new-tokens 128 --device cuda \
      --nvtx-ops off --warmup 2 --iters 5 $args >"$OUT/t_$name.jsonl" 2>"$OUT/t_$name.err"
    note "time $name ($model b$batch $args ${envs:-}): $(summ "$OUT/t_$name.jsonl")"
  done
fi

if has ncu && command -v ncu >/dev/null; then
 for M in ${NCU_MODELS:-deepseek-ocr-lm}; do
  timeout 150 ncu --clock-control none --cache-control none --nvtx --nvtx-include "LLM@decode_all/" -c ${NCU_COUNT:-100} \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed \
    --csv --page raw $B/llmprof-llm --model "$M" --batch 1 --prompt-len 512 --new-tokens 1 --device cuda \
    --pdl off --cuda-graph off --warmup 0 --iters 1 ${NCU_ARGS:-} >"$OUT/ncu_$M.csv" 2>"$OUT/ncu_$M.err"
  python3 - "$OUT/ncu_$M.csv" <<'PY' | tee "$OUT/ncu_$M.md"
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
  note "ncu $M: $(tail -n 1 "$OUT/ncu_$M.md")"
 done
fi

# detail: ncu's sections of chosen launches, one ncu process per entry of
# NCU_DETAIL="name:model:batch:kernel regex (demangled):launches skipped:count;..." (eager, PDL off,
# one decode step; demangled names read k_moe_dec<(int)1, (int)2>): speed of light, memory, warp states, occupancy, and the SASS lines with their
# stall samples (--page source), to see why a kernel is below the bandwidth its bytes allow
DDEF="down:deepseek-ocr-lm:1:k_moe_dec<.int.1, .int.2>:2:1;up:deepseek-ocr-lm:1:k_moe_dec<.int.1, .int.1>:2:1"
DDEF+=";route:deepseek-ocr-lm:1:k_moe_dec<.int.1, .int.0>:2:1;lmh_ds:deepseek-ocr-lm:1:k_dec_gemv<.int.1, .int.3>:0:1"
if has detail && command -v ncu >/dev/null; then
  IFS=';' read -r -a DETV <<<"${NCU_DETAIL:-$DDEF}"
  for v in "${DETV[@]}"; do
    IFS=':' read -r name model batch kre skip cnt <<<"$v"
    rm -f /tmp/det_$name.ncu-rep
    timeout 60 ncu --clock-control none --cache-control none --nvtx --nvtx-include "LLM@decode_all/" \
      --kernel-name-base demangled -k "regex:$kre" --launch-skip "$skip" -c "$cnt" \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
      --section Occupancy --section LaunchStats --section SourceCounters -o /tmp/det_$name \
      $B/llmprof-llm --model "$model" --batch "$batch" --prompt-len 512 --new-tokens 1 --device cuda \
      --pdl off --cuda-graph off --warmup 0 --iters 1 ${NCU_ARGS:-} >"$OUT/det_$name.log" 2>&1
    ncu -i /tmp/det_$name.ncu-rep --page details >"$OUT/det_$name.txt" 2>&1
    ncu -i /tmp/det_$name.ncu-rep --page source --csv --print-source sass >"$OUT/det_${name}_sass.csv" 2>&1
    note "detail $name ($model b$batch $kre): $(grep -E '^ +Duration|Memory Throughput' "$OUT/det_$name.txt" | tr -s ' ' | tr '\n' ';')"
  done
fi

if has bw; then
  timeout 60 python3 bench/workload/peak_bw.py >"$OUT/peak_bw.jsonl" 2>"$OUT/peak_bw.err"
  note "peak: $(head -c 300 "$OUT/peak_bw.jsonl")"
fi
echo; echo "===== moe probe summary ====="; printf '%s\n' "${S[@]}" | tee "$OUT/summary.txt"
# the device tool brings back at most 8 files: everything else goes into one archive
( cd "$OUT" && tar czf /tmp/moe_probe_all.tgz --exclude=all.tgz . && find . -type f ! -name summary.txt ! -name 'ncu_*.md' -delete &&
  mv /tmp/moe_probe_all.tgz all.tgz )
