#!/bin/bash
# regions.sh: real Nsight Compute captures with NVTX region filters, in every replay mode, read by
# llmprof's region report (issue 7). Everything lands in "$OUT": the raw CSVs (real fixtures for
# tests/fixtures/regions/), ncu logs, the region reports, a summary last. Run from the repo root
# with a prebuilt build/ (configured with tests/gpu_progs added):
#   OUT=/tmp/out bash scripts/gpu/regions.sh          (or: scripts/gpu/run-all.sh regions:300)
# Needs: ncu (/usr/local/cuda/bin/ncu, PATH, or /opt/nvidia/nsight-compute/*/ncu);
# build/tests/gpu_progs/regions_demo (else built here with nvcc) and lp_regions_tool (else the
# reports are skipped); build/bin/llmprof-llm and python3 + torch when present.
# Each step is independent: a failing step is noted and the next one runs. Keep it under 4 min.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
OUT=${OUT:-/tmp/lp-regions-out}
mkdir -p "$OUT/reports"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
export LC_ALL=C

NCU=""
for c in /usr/local/cuda/bin/ncu "$(command -v ncu 2>/dev/null)" $(ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -r); do
  [ -n "$c" ] && [ -x "$c" ] && { NCU=$c; break; }
done
TOOL=$ROOT/build/tests/gpu_progs/lp_regions_tool
DEMO=$ROOT/build/tests/gpu_progs/regions_demo
LLM=$ROOT/build/bin/llmprof-llm
note "ncu: ${NCU:-none} ($([ -n "$NCU" ] && "$NCU" --version 2>&1 | grep -i version | tail -1))"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
[ -n "$NCU" ] || { note "no ncu: nothing to do"; exit 4; }
if [ ! -x "$DEMO" ]; then
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  DEMO=/tmp/lp-regions-demo
  "$NVCC" -O2 -lineinfo -arch=sm_90 -o "$DEMO" tests/gpu_progs/regions_demo.cu -ldl >"$OUT/nvcc.log" 2>&1
  note "regions_demo: built here with $NVCC (rc=$?)"
fi
note "regions_demo: $("$DEMO" 2>&1 | tail -1)"
note "regions_demo again (determinism for app-range): $("$DEMO" 2>&1 | tail -1)"
[ -x "$TOOL" ] || note "lp_regions_tool missing: reports skipped (add tests/gpu_progs to the build)"

METRICS=gpu__time_duration.sum,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
TMP=/tmp/lp-regions-reps
rm -rf "$TMP"; mkdir -p "$TMP"

# prof NAME MODE "NVTX FLAGS" WORKLOAD...: ncu -> $OUT/NAME_raw.csv (+ NAME.log); rc of ncu
prof() {
  local name=$1 mode=$2 nvtx=$3; shift 3
  local t0=$(date +%s) rc
  # shellcheck disable=SC2086
  timeout -k 5 100 "$NCU" --clock-control none --replay-mode "$mode" --nvtx $nvtx --metrics "$METRICS" \
    -f -o "$TMP/$name" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  if [ -f "$TMP/$name.ncu-rep" ]; then
    "$NCU" -i "$TMP/$name.ncu-rep" --csv --page raw --print-units base >"$OUT/${name}_raw.csv" 2>>"$OUT/$name.log"
  fi
  local rows=0
  [ -f "$OUT/${name}_raw.csv" ] && rows=$(( $(wc -l <"$OUT/${name}_raw.csv") - 2 ))
  local flags=""
  grep -q "No kernels were profiled" "$OUT/$name.log" && flags="$flags no-kernels-profiled"
  grep -q "Unsupported API during capture" "$OUT/$name.log" && flags="$flags unsupported-api"
  grep -q "ERR_NVGPUCTRPERM" "$OUT/$name.log" && flags="$flags ERR_NVGPUCTRPERM"
  note "$name: ncu rc=$rc, $rows result rows, $(( $(date +%s) - t0 ))s${flags:+ [$flags ]}"
  return $rc
}

# report NAME MODE INCLUDES...: lp_regions_tool on NAME_raw.csv, the tree into the summary
report() {
  local name=$1 mode=$2; shift 2
  [ -x "$TOOL" ] && [ -f "$OUT/${name}_raw.csv" ] || return 0
  local args=() x
  for x in "$@"; do args+=(--include "$x"); done
  "$TOOL" "$OUT/reports/$name" "$OUT/${name}_raw.csv" --replay "$mode" --metric dram__bytes_read.sum \
    --metric sm__throughput.avg.pct_of_peak_sustained_elapsed ${NOTE:+--note "$NOTE"} "${args[@]}" \
    >"$OUT/reports/$name.txt" 2>&1
  note "$name report: rc=$? -> reports/$name/ncu/regions/"
  grep -E '^ *- \*\*|^regions:|^- `|^Ranges seen|^error' "$OUT/reports/$name.txt" | sed 's/^/    /' | tee -a "$SUMMARY" >/dev/null
}

# 1. regions_demo: default-domain A/ (with A1 nested) and B/ in each replay mode
AB="--nvtx-include A/ --nvtx-include B/"
prof demo_kernel kernel "$AB" "$DEMO"; report demo_kernel kernel A/ B/
prof demo_range range "$AB" "$DEMO"; report demo_range range A/ B/
prof demo_apprange app-range "$AB" "$DEMO"; report demo_apprange app-range A/ B/
# A1 as its own range result too (does ncu give nested range results?)
prof demo_apprange_a1 app-range "$AB --nvtx-include A/A1/" "$DEMO"; report demo_apprange_a1 app-range A/ 'A::A1/' B/
# start/end ranges (no trailing slash) and the LLM domain
prof demo_startend kernel "--nvtx-include S1 --nvtx-include S2" "$DEMO"; report demo_startend kernel S1 S2
prof demo_llm kernel "--nvtx-include LLM@prefill/ --nvtx-include LLM@decode_all/" "$DEMO"
report demo_llm kernel LLM@prefill/ LLM@decode_all/

# 2. the reference workload
if [ -x "$LLM" ]; then
  WL=("$LLM" --model tiny --device cuda --iters 1 --warmup 0 --new-tokens 4)
  LLMF="--nvtx-include LLM@prefill/ --nvtx-include LLM@decode_all/"
  prof llm_kernel kernel "$LLMF" "${WL[@]}"; report llm_kernel kernel LLM@prefill/ LLM@decode_all/
  prof llm_apprange app-range "$LLMF" "${WL[@]}"; report llm_apprange app-range LLM@prefill/ LLM@decode_all/
else
  note "llmprof-llm: missing ($LLM), skipped"
fi

# 3. PyTorch: torch.cuda.nvtx ranges A (A1 inside) and B; range replay expected to fail
if python3 -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
  cat >"$OUT/torch_regions.py" <<'PY'
# torch.cuda.nvtx default-domain ranges A (A1 nested) and B around bf16 matmuls; deterministic.
import torch
torch.manual_seed(0)
x = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
w = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("A")
y = x @ w
torch.cuda.nvtx.range_push("A1")
y = torch.relu(y @ w)
torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.range_push("B")
z = (y.float() * 0.5).sum()
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("ok", float(z))
PY
  prof torch_kernel kernel "$AB" python3 "$OUT/torch_regions.py"; report torch_kernel kernel A/ B/
  if prof torch_range range "$AB" python3 "$OUT/torch_regions.py" && ! grep -q "Unsupported API during capture" "$OUT/torch_range.log"; then
    report torch_range range A/ B/
  else
    note "torch_range: range replay failed; falling back to app-range (lp_regions_replay_fallback)"
    prof torch_apprange app-range "$AB" python3 "$OUT/torch_regions.py"
    NOTE="range replay failed (Unsupported API during capture): reran in app-range" report torch_apprange app-range A/ B/
  fi
else
  note "torch: not importable with CUDA, skipped"
fi

# 4. checks on the demo: only the kernels of each region are attributed to it
python3 - "$OUT" >>"$SUMMARY" 2>&1 <<'PY' || true
import json, os, sys
out = sys.argv[1]
def load(name):
    p = os.path.join(out, "reports", name, "ncu", "regions", "report.json")
    return json.load(open(p)) if os.path.exists(p) else None
want = {"A": {"k_a_scale", "k_a_add", "k_a1_mul"}, "A::A1": {"k_a1_mul"}, "B": {"k_b_scale", "k_b_partial"}}
j = load("demo_kernel")
if j:
    regs = {r["name"]: r for r in j["scopes"][0]["regions"]}
    for name, kernels in want.items():
        got = {k["short_name"] for k in regs.get(name, {}).get("kernels", [])}
        print(f"check demo_kernel {name}: {'ok' if got == kernels else 'MISMATCH'} {sorted(got)}")
    a, a1 = regs.get("A"), regs.get("A::A1")
    if a and a1:
        err = a["total_ms_inclusive"] - a["total_ms_exclusive"] - a1["total_ms_inclusive"]
        print(f"check demo_kernel A reconcile: incl {a['total_ms_inclusive']:.4f} = excl {a['total_ms_exclusive']:.4f} + A1 {a1['total_ms_inclusive']:.4f} (diff {err:.2e})")
    calls = {k["short_name"]: k["calls"] for k in regs.get("A", {}).get("kernels", [])}
    print(f"check demo_kernel A calls: {calls} (want k_a_scale 2, k_a_add 1, k_a1_mul 2)")
for kr, ar in (("demo_kernel", "demo_apprange"), ("llm_kernel", "llm_apprange"), ("torch_kernel", "torch_apprange")):
    k, a = load(kr), load(ar)
    if not (k and a):
        continue
    kt = {r["name"]: r["total_ms_inclusive"] for r in k["scopes"][0]["regions"]}
    at = {r["name"]: r["total_ms_inclusive"] for r in a["scopes"][0]["regions"]}
    for n in sorted(set(kt) & set(at)):
        print(f"compare {kr} vs {ar} {n}: kernel-sum {kt[n]:.4f} ms, range {at[n]:.4f} ms")
PY

rm -rf "$TMP"
echo "===== summary ====="
cat "$SUMMARY"
