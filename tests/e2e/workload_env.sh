#!/bin/bash
# The workload's environment keeps NVLink multicast off (issue 18): `llmprof run` sets
# NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 for the capture
# and the tools' runs, unless llmprof's own environment already sets one (then the user's value
# passes through untouched). Checked on the printed plan (--dry-run) and inside a real capture.
set -u
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
expect_exit 0 "$LLMPROF" run --dry-run -- python3 -c 1
for v in NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1; do
  grep -q "capture: .* $v " "$LP_TMP/stdout" || fail "the capture's environment lacks $v: $(grep capture: "$LP_TMP/stdout")"
done
NCCL_NVLS_ENABLE=1 "$LLMPROF" run --dry-run -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "NCCL_NVLS_ENABLE" "$LP_TMP/stdout" && fail "llmprof overrode the user's NCCL_NVLS_ENABLE: $(grep capture: "$LP_TMP/stdout")"
# trace.sample (issue 24): auto by default; deep mode traces exactly (ncu sampling numbers every
# launch of the capture; the terminal says so on a tty, the Tracing mode section always); an explicit
# schedule is kept in deep mode too
"$LLMPROF" run --dry-run --mode light -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "capture: .*LLMPROF_TRACE_SAMPLE=auto " "$LP_TMP/stdout" || fail "light run's capture is not auto: $(grep capture: "$LP_TMP/stdout")"
"$LLMPROF" run --dry-run --mode deep -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "capture: .*LLMPROF_TRACE_SAMPLE=off " "$LP_TMP/stdout" || fail "deep run's capture is not exact: $(grep capture: "$LP_TMP/stdout")"
"$LLMPROF" run --dry-run --mode deep trace.sample=every=4 -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "capture: .*LLMPROF_TRACE_SAMPLE=every=4 " "$LP_TMP/stdout" || fail "an explicit schedule was not kept: $(grep capture: "$LP_TMP/stdout")"
# trace.warmup: CUPTI detached inside the warm-up but for its graph node callbacks by default (graphs), kept with record
"$LLMPROF" run --dry-run --mode light -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "capture: .*LLMPROF_TRACE_WARMUP=graphs " "$LP_TMP/stdout" || fail "the capture's warm-up is not graphs: $(grep capture: "$LP_TMP/stdout")"
"$LLMPROF" run --dry-run --mode light trace.warmup=record -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "capture: .*LLMPROF_TRACE_WARMUP=record " "$LP_TMP/stdout" || fail "trace.warmup=record was not passed: $(grep capture: "$LP_TMP/stdout")"
# deep mode records the warm-up by default (ncu sampling numbers its launches too), unless told otherwise
"$LLMPROF" run --dry-run --mode deep -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "capture: .*LLMPROF_TRACE_WARMUP=record " "$LP_TMP/stdout" || fail "deep run's warm-up is not recorded: $(grep capture: "$LP_TMP/stdout")"
"$LLMPROF" run --dry-run --mode deep trace.warmup=graphs -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "capture: .*LLMPROF_TRACE_WARMUP=graphs " "$LP_TMP/stdout" || fail "an explicit trace.warmup was not kept in deep mode: $(grep capture: "$LP_TMP/stdout")"
# run.auto_warmup: the shim's first generate() calls as warm-up (0 by default)
grep -q "capture: .*LLMPROF_AUTO_WARMUP=0 " "$LP_TMP/stdout" || fail "the shim's warm-up count is not 0: $(grep capture: "$LP_TMP/stdout")"
"$LLMPROF" run --dry-run --mode light run.auto_warmup=2 -- python3 -c 1 >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" || fail "dry run failed"
grep -q "capture: .*LLMPROF_AUTO_WARMUP=2 " "$LP_TMP/stdout" || fail "run.auto_warmup=2 was not passed: $(grep capture: "$LP_TMP/stdout")"
# inside the workload itself
"$LLMPROF" run --mode light run.id=env -- python3 -c '
import os
print("ENV", os.environ.get("NCCL_NVLS_ENABLE"), os.environ.get("TORCH_SYMM_MEM_DISABLE_MULTICAST"), os.environ.get("NVSHMEM_DISABLE_NVLS"))' \
  >"$LP_TMP/stdout" 2>"$LP_TMP/stderr"
grep -q "^ENV 0 1 1$" tmp/stage2/env/trace/workload.stdout || fail "the workload saw: $(cat tmp/stage2/env/trace/workload.stdout)"
pass
