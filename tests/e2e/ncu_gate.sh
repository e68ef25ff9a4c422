#!/bin/bash
# libllmprof_ncu_gate.so (inject/ncu_gate.c): under LLMPROF_NCU_RANK=r, a process whose launcher
# rank differs from r loses CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH before main (ncu never
# reaches it); rank r, processes without a rank, and runs without LLMPROF_NCU_RANK keep them.
set -u
. "$(dirname "$0")/lib.bash"

gate="$LP_BUILD/lib/libllmprof_ncu_gate.so"
probe="$LP_BUILD/tests/lp_getenv_probe"
[ -f "$gate" ] && [ -x "$probe" ] || fail "libllmprof_ncu_gate.so or lp_getenv_probe not built"

run() {  # run ENV...: the probe under the gate with the tool variables set
  env -u RANK -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u MV2_COMM_WORLD_RANK -u SLURM_PROCID \
    LD_PRELOAD="$gate" CUDA_INJECTION64_PATH=/opt/ncu/libinj.so NVTX_INJECTION64_PATH=/opt/ncu/libnvtx.so \
    LLMPROF_NCU_GATE_LOG="$LP_TMP/gate.log" "$@" "$probe" CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH RANK
}
kept="CUDA_INJECTION64_PATH=/opt/ncu/libinj.so
NVTX_INJECTION64_PATH=/opt/ncu/libnvtx.so"
removed="CUDA_INJECTION64_PATH unset
NVTX_INJECTION64_PATH unset"

out=$(run LLMPROF_NCU_RANK=0 RANK=1) || fail "probe failed"
[ "$out" = "$removed
RANK=1" ] || fail "rank 1 with rank 0 chosen kept the tool variables: $out"
out=$(run LLMPROF_NCU_RANK=0 RANK=0) || fail "probe failed"
[ "$out" = "$kept
RANK=0" ] || fail "the chosen rank lost the tool variables: $out"
out=$(run LLMPROF_NCU_RANK=2 OMPI_COMM_WORLD_RANK=3) || fail "probe failed"
[ "$(echo "$out" | head -2)" = "$removed" ] || fail "Open MPI rank 3 with rank 2 chosen kept them: $out"
out=$(run LLMPROF_NCU_RANK=1 SLURM_PROCID=1) || fail "probe failed"
[ "$(echo "$out" | head -2)" = "$kept" ] || fail "srun rank 1 with rank 1 chosen lost them: $out"
out=$(run LLMPROF_NCU_RANK=0) || fail "probe failed"
[ "$(echo "$out" | head -2)" = "$kept" ] || fail "a process without a rank (the launcher) lost them: $out"
out=$(run RANK=1) || fail "probe failed"
[ "$(echo "$out" | head -2)" = "$kept" ] || fail "without LLMPROF_NCU_RANK the gate acted: $out"
grep -q "rank 1 (RANK): not profiled" "$LP_TMP/gate.log" || fail "no log line: $(cat "$LP_TMP/gate.log")"
grep -q "rank 0 (RANK): profiled" "$LP_TMP/gate.log" || fail "no log line for rank 0"
grep -q "(no rank variable): profiled" "$LP_TMP/gate.log" || fail "no log line for the launcher"
echo "ok"
