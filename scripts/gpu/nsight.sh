#!/bin/bash
# nsight.sh: real Nsight Systems / Nsight Compute captures on a GPU machine, driven by llmprof's
# own code, parsed by llmprof's parsers; everything lands in "$OUT" (real fixtures for
# tests/fixtures/{ncu,nsys}). Run from the repo root with a prebuilt build/ (tests included):
#   OUT=/tmp/out bash scripts/gpu/nsight.sh            (or: scripts/gpu/run-all.sh nsight:900)
# Needs: build/bin/llmprof, build/tests/test_{ncu,nsys}_collect; ncu (PATH or /opt/nvidia);
# nsys (PATH, or the one inside ncu); the nsys importer's libdw.so.1/libelf.so.1 in
# $LP_NSYS_LIBS (default .carry/nsyslibs). Workloads: build/bin/llmprof-llm when present, and a
# PyTorch program (python3 + torch) under torch.cuda.nvtx ranges when torch imports.
# Each step is independent: a failing step is reported and the next one runs. Summary last.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-/tmp/lp-nsight-out}
mkdir -p "$OUT"
L="$ROOT/build/bin/llmprof"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
step() {  # step NAME cmd...: runs, logs to $OUT/NAME.log, notes the exit status
  local name=$1; shift
  echo "== $name: $*" >"$OUT/$name.log"
  local t0=$(date +%s)
  "$@" >>"$OUT/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc ($(( $(date +%s) - t0 ))s)"
  return $rc
}

NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort | tail -1)
NSYS=$(command -v nsys || ls -d /opt/nvidia/nsight-systems*/*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort | tail -1)
NSYSLIBS=${LP_NSYS_LIBS:-$ROOT/.carry/nsyslibs}
export LP_REAL_PRESET_NCU="$ROOT/conf/profiling/ncu/ncu.default.yaml"
note "ncu: ${NCU:-none} ($([ -n "$NCU" ] && "$NCU" --version 2>&1 | grep -i version | tail -1))"
note "nsys: ${NSYS:-none} ($([ -n "$NSYS" ] && "$NSYS" --version 2>&1 | tail -1))"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
note "nsys importer libs: $NSYSLIBS ($(ls "$NSYSLIBS" 2>/dev/null | tr '\n' ' '))"

# 1. llmprof check (mode deep, then with nsys)
LD_LIBRARY_PATH="$NSYSLIBS:${LD_LIBRARY_PATH:-}" "$L" check --nsys tools.ncu="$NCU" tools.nsys="$NSYS" >"$OUT/check.txt" 2>&1
note "check: rc=$? (0 = deep mode can run)"
LD_LIBRARY_PATH="$NSYSLIBS:${LD_LIBRARY_PATH:-}" "$L" check --format json tools.ncu="$NCU" tools.nsys="$NSYS" >"$OUT/check.json" 2>&1

# 2. workloads
WL=""
if [ -x build/bin/llmprof-llm ]; then
  WL="$ROOT/build/bin/llmprof-llm --model tiny --device cuda --iters 2 --new-tokens 8"
fi
HAVE_TORCH=0
python3 -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1 && HAVE_TORCH=1
cat >"$OUT/torch_nvtx.py" <<'PY'
# A PyTorch program with default-domain NVTX ranges (torch.cuda.nvtx): decode_all > decode_step.
import torch
x = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
w = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
torch.cuda.nvtx.range_push("warmup"); y = x @ w; torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("decode_all")
for i in range(3):
    torch.cuda.nvtx.range_push("decode_step")
    y = torch.relu(x @ w) + 1.0
    y = torch.softmax(y.float(), dim=-1)
    torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("ok", float(y.sum()))
PY
note "workloads: llmprof-llm=$([ -n "$WL" ] && echo yes || echo no) torch=$HAVE_TORCH"

run_nsys() {  # run_nsys NAME WORKLOAD [NVTX_CAPTURE]
  local name=$1 wl=$2 cap=${3:-}
  mkdir -p "$OUT/$name"
  LD_LIBRARY_PATH="$NSYSLIBS:${LD_LIBRARY_PATH:-}" LP_REAL_NSYS="$NSYS" LP_REAL_OUT="$OUT/$name" \
    LP_REAL_PRESET="$ROOT/conf/profiling/nsys/nsys.default.yaml" \
    LP_REAL_WORKLOAD="$wl" LP_REAL_NVTX_CAPTURE="$cap" \
    step "$name" build/tests/test_nsys_collect
  local db="$OUT/$name/nsys/run.sqlite"
  if [ -f "$db" ]; then
    "$L" kernels "$db" >"$OUT/$name/kernels_all.md" 2>&1
    "$L" kernels --stage decode_all "$db" >"$OUT/$name/kernels_decode.md" 2>&1
    "$L" kernels "$OUT/$name/nsys/summary_cuda_gpu_kern_sum.csv" >"$OUT/$name/kernels_stats.md" 2>&1
    note "$name sqlite: $(du -h "$db" | cut -f1), $(sqlite3 "$db" 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL' 2>/dev/null) kernel rows"
    # keep the fixture small: drop the bulky tables nobody here reads
    if [ "$(stat -c %s "$db")" -gt 20000000 ] && command -v sqlite3 >/dev/null; then
      sqlite3 "$db" "DROP TABLE IF EXISTS OSRT_API; DROP TABLE IF EXISTS SCHED_EVENTS; DROP TABLE IF EXISTS COMPOSITE_EVENTS; VACUUM;" 2>/dev/null
    fi
  fi
  rm -f "$OUT/$name"/nsys/*.qdstrm
}

# 3. nsys: the reference workload (whole run, then gated by NVTX), and the PyTorch program
[ -n "$NSYS" ] && [ -n "$WL" ] && run_nsys nsys_llm "$WL"
[ -n "$NSYS" ] && [ -n "$WL" ] && run_nsys nsys_llm_capture "$WL" "decode_all@LLM"
[ -n "$NSYS" ] && [ "$HAVE_TORCH" = 1 ] && run_nsys nsys_torch "python3 $OUT/torch_nvtx.py"

# 4. ncu: default preset on the reference workload; then top-N from the nsys export
if [ -n "$NCU" ] && [ -n "$WL" ]; then
  mkdir -p "$OUT/ncu_llm"
  LP_REAL_NCU="$NCU" LP_REAL_PRESET="$LP_REAL_PRESET_NCU" LP_REAL_OUT="$OUT/ncu_llm" LP_REAL_WORKLOAD="$WL" step ncu_llm build/tests/test_ncu_collect
  if [ -f "$OUT/nsys_llm/nsys/run.sqlite" ]; then
    mkdir -p "$OUT/ncu_llm_topn"
    LP_REAL_NCU="$NCU" LP_REAL_PRESET="$LP_REAL_PRESET_NCU" LP_REAL_OUT="$OUT/ncu_llm_topn" LP_REAL_WORKLOAD="$WL" \
      LP_REAL_SQLITE="$OUT/nsys_llm/nsys/run.sqlite" step ncu_llm_topn build/tests/test_ncu_collect
  fi
  for f in "$OUT"/ncu_llm/ncu/*_raw.csv "$OUT"/ncu_llm/ncu/*_details.csv; do
    [ -f "$f" ] && "$L" kernels "$f" >"${f%.csv}.kernels.md" 2>&1
  done
  rep=$(ls "$OUT"/ncu_llm/ncu/*.ncu-rep 2>/dev/null | head -1)
  if [ -n "$rep" ]; then
    LC_ALL=C "$NCU" -i "$rep" --csv --print-summary per-kernel --print-units base >"$OUT/ncu_llm/ncu/summary_per_kernel.csv" 2>&1
    LC_ALL=C "$NCU" -i "$rep" --csv --print-summary per-nvtx --print-units base >"$OUT/ncu_llm/ncu/summary_per_nvtx.csv" 2>&1
    LC_ALL=C "$NCU" -i "$rep" --csv --page raw >"$OUT/ncu_llm/ncu/raw_default_units.csv" 2>&1
  fi
fi

# 5. ncu on PyTorch: kernel replay with a default-domain range (torch's names need no domain),
#    range replay (expected: "Unsupported API during capture" -> retried in app-range)
if [ -n "$NCU" ] && [ "$HAVE_TORCH" = 1 ]; then
  mkdir -p "$OUT/ncu_torch" "$OUT/ncu_torch_range"
  LP_REAL_NCU="$NCU" LP_REAL_PRESET="$LP_REAL_PRESET_NCU" LP_REAL_OUT="$OUT/ncu_torch" LP_REAL_WORKLOAD="python3 $OUT/torch_nvtx.py" \
    LP_REAL_NVTX_INCLUDE="decode_all/" step ncu_torch build/tests/test_ncu_collect
  LP_REAL_NCU="$NCU" LP_REAL_PRESET="$LP_REAL_PRESET_NCU" LP_REAL_OUT="$OUT/ncu_torch_range" LP_REAL_WORKLOAD="python3 $OUT/torch_nvtx.py" \
    LP_REAL_NVTX_INCLUDE="decode_all/" LP_REAL_REPLAY=range step ncu_torch_range build/tests/test_ncu_collect
  # the NVTX trap: the domain form does not match torch's default-domain ranges
  mkdir -p "$OUT/ncu_torch_nomatch"
  LP_REAL_NCU="$NCU" LP_REAL_PRESET="$LP_REAL_PRESET_NCU" LP_REAL_OUT="$OUT/ncu_torch_nomatch" LP_REAL_WORKLOAD="python3 $OUT/torch_nvtx.py" \
    LP_REAL_NVTX_INCLUDE="LLM@decode_all/" step ncu_torch_nomatch build/tests/test_ncu_collect
  for f in "$OUT"/ncu_torch*/ncu/*_raw.csv; do
    [ -f "$f" ] && "$L" kernels "$f" >"${f%.csv}.kernels.md" 2>&1
  done
fi

# 6. drop the binary reports (large, and the CSVs carry what the parsers read)
find "$OUT" -name '*.ncu-rep' -size +20M -delete
find "$OUT" -name '*.nsys-rep' -size +20M -delete
echo "===== parsed tables ====="
for f in $(find "$OUT" -name '*.md' | sort); do echo "--- $f"; head -n 12 "$f"; done
echo "===== driver output ====="
for f in "$OUT"/ncu_*.log "$OUT"/nsys_*.log; do [ -f "$f" ] && { echo "--- $f"; grep -v '^\[' "$f" | tail -n 25; }; done
echo "===== summary ====="
cat "$SUMMARY"
du -sh "$OUT"
