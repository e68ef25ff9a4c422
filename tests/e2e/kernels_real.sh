#!/bin/bash
# `llmprof kernels` on every kind of REAL source captured on an H200 (tests/fixtures/*/h200_*,
# READMEs there), Markdown and JSON, against golden outputs (tests/fixtures/golden/
# kernels_h200.md and kernels_h200.json: one section per command). LP_UPDATE_GOLDEN=1 rewrites
# them. Also the exit statuses a real source can give (2: a stage on a whole-run summary, or no
# stage on a per-NVTX summary; 3: a report that is not a kernel table).
set -u
. "$(dirname "$0")/lib.bash"
G="$LP_SRC/tests/fixtures/golden"
cases=(
  "ncu/h200_llm_raw.csv"
  "ncu/h200_llm_raw_units.csv"
  "ncu/h200_llm_details.csv"
  "ncu/h200_llm_summary_per_kernel.csv"
  "--stage LLM@decode_all ncu/h200_llm_summary_per_nvtx.csv"
  "ncu/h200_torch_raw.csv"
  "ncu/h200_torch_details.csv"
  "regions/h200_demo_kernel_raw.csv"
  "regions/h200_torch_kernel_raw.csv"
  "regions/h200_llm_kernel_raw.csv"
  "--stage LLM@decode_all regions/h200_llm_kernel_raw.csv"
  "--stage LLM@prefill regions/h200_llm_kernel_raw.csv"
  "regions/h200_demo_apprange_raw.csv"
  "nsys/h200_llm.sqlite"
  "--stage LLM@prefill nsys/h200_llm.sqlite"
  "--stage LLM@decode_all nsys/h200_llm.sqlite"
  "nsys/h200_torch.sqlite"
  "--stage decode_all nsys/h200_torch.sqlite"
  "nsys/h200_llm_capture.sqlite"
  "nsys/h200_llm_cuda_gpu_kern_sum.csv"
  "nsys/h200_torch_cuda_gpu_kern_sum.csv"
  "nsys/h200_llm_capture_cuda_gpu_kern_sum.csv"
  "trace/h200_cuda_demo"
  "--stage LLM@decode_all trace/h200_cuda_demo"
)
for fmt in md json; do
  : >"got.$fmt"
  for c in "${cases[@]}"; do
    # raw pages carry 270-1400 metrics per kernel: JSON for one of them only (the values are
    # checked one by one in tests/unit/test_real_ncu.c and test_real_regions.c)
    case "$fmt $c" in "json ncu/h200_"*"_raw"*.csv|"json "*"regions/h200_llm_kernel_raw.csv"|"json regions/h200_torch_kernel_raw.csv") continue ;; esac
    echo "### llmprof kernels --format $fmt $c" >>"got.$fmt"
    # shellcheck disable=SC2086
    (cd "$LP_SRC/tests/fixtures" && "$LLMPROF" kernels --format "$fmt" $c) >>"got.$fmt" 2>"err.txt" ||
      fail "kernels --format $fmt $c exited $?: $(cat err.txt)"
  done
  if [ -n "${LP_UPDATE_GOLDEN:-}" ]; then cp "got.$fmt" "$G/kernels_h200.$fmt"; fi
  diff -u "$G/kernels_h200.$fmt" "got.$fmt" >"diff.$fmt" || fail "$fmt differs from the golden output: $(head -40 "diff.$fmt")"
done
# the same numbers in both formats: totals of the nsys export vs nsys's own summary
j1=$(cd "$LP_SRC/tests/fixtures" && "$LLMPROF" kernels --format csv nsys/h200_llm.sqlite | tail -n +2 | cut -d, -f1 | sort | md5sum)
j2=$(cd "$LP_SRC/tests/fixtures" && "$LLMPROF" kernels --format csv nsys/h200_llm_cuda_gpu_kern_sum.csv | tail -n +2 | cut -d, -f1 | sort | md5sum)
[ "$j1" = "$j2" ] || fail "the export and cuda_gpu_kern_sum list different kernels"

F="$LP_SRC/tests/fixtures"
expect_exit 2 "$LLMPROF" kernels "$F/ncu/h200_llm_summary_per_nvtx.csv"
grep -q "per-NVTX summary: give --stage" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
expect_exit 2 "$LLMPROF" kernels --stage LLM@decode_all "$F/ncu/h200_llm_summary_per_kernel.csv"
expect_exit 2 "$LLMPROF" kernels --stage decode_all "$F/nsys/h200_torch_cuda_gpu_kern_sum.csv"
expect_exit 3 "$LLMPROF" kernels "$F/nsys/h200_llm_cuda_api_sum.csv"
grep -q "h200_llm_cuda_api_sum.csv" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$F/nsys/h200_torch_nvtx_gpu_proj_sum.csv"
expect_exit 3 "$LLMPROF" kernels "$F/ncu/h200_torch_nomatch_ncu.log"
pass
