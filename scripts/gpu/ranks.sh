#!/bin/bash
# ranks.sh: issue 17 on one GPU, with a prebuilt build/: (a) 2 torchrun ranks on the same GPU with
# the gloo backend and (b) 2 multiprocessing-spawn workers, each under `llmprof run --mode light`,
# then nsys over the whole torchrun job once. The trace folders and the programs' own accounts
# (own/*.json: kernels launched, CUDA-event latencies) go to $OUT as ranks_<name>.tgz; the
# checks are made on the CPU (tests/unit/test_ranks_trace.c reads them as fixtures).
set -u
OUT=${OUT:-/tmp/lp-ranks}
mkdir -p "$OUT"
SRC=$PWD
L=$SRC/build/bin/llmprof
W=/tmp/lp-ranks-w; rm -rf "$W"; mkdir -p "$W"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
TORCHRUN=$(command -v torchrun || true)
[ -n "$TORCHRUN" ] || TORCHRUN="python3 -m torch.distributed.run"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

one() {  # one NAME argv...: llmprof run in $W/NAME; falls back to the tracer variables alone
  local name=$1; shift
  local d=$W/$name; mkdir -p "$d"
  local t0=$(date +%s)
  (cd "$d" && timeout 75 "$L" run --mode light run.id="$name" -- "$@" OWN >"$d/llmprof.stdout" 2>"$d/llmprof.stderr")
  local rc=$?
  echo "$name: llmprof run rc=$rc in $(( $(date +%s) - t0 )) s"
  local tr; tr=$(find "$d" -name '*.lptrace' -printf '%h\n' | sort -u | head -1)
  if [ -z "$tr" ]; then
    echo "$name: no trace from llmprof run; stderr:"; tail -20 "$d/llmprof.stderr"
    mkdir -p "$d/direct"
    (cd "$d/direct" && CUDA_INJECTION64_PATH=$SRC/build/lib/libllmprof_inject.so \
      NVTX_INJECTION64_PATH=$SRC/build/lib/libllmprof_inject.so LLMPROF_TRACE_DIR=$d/direct/trace \
      timeout 60 "$@" "$d/direct/OWN" >"$d/direct/stdout" 2>&1); echo "$name: direct rc=$?"
    tr=$d/direct/trace
  fi
  local own; own=$(find "$d" -type d -name OWN | head -1)
  mkdir -p "$W/pack/$name"
  cp -a "$tr" "$W/pack/$name/trace"; cp -a "$own" "$W/pack/$name/own" 2>/dev/null
  cp "$d"/llmprof.std* "$W/pack/$name/" 2>/dev/null
  local rd; rd=$(dirname "$tr")
  for f in summary.json report.md phases.json; do [ -f "$rd/$f" ] && cp "$rd/$f" "$W/pack/$name/"; done
  ls -la "$tr"; cat "$own"/*.json; echo
  "$L" trace dump "$tr" 2>/dev/null | grep -E '^(file|PROCESS|RANK)|type 16' | head -12
  (cd "$W/pack" && tar czf "$OUT/ranks_$name.tgz" "$name")
}

one gloo $TORCHRUN --nproc-per-node 2 "$SRC/tests/gpu_progs/ranks/ranks_gloo.py"
one spawn python3 "$SRC/tests/gpu_progs/ranks/ranks_spawn.py"

# nsys over the whole torchrun job, once: does it see both ranks' kernels?
NSYS=$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  export LD_LIBRARY_PATH=$SRC/.carry-nsyslibs:${LD_LIBRARY_PATH:-}
  mkdir -p "$W/nsys" && cd "$W/nsys"
  timeout 50 "$NSYS" profile -t cuda,nvtx -o job --force-overwrite true \
    $TORCHRUN --nproc-per-node 2 "$SRC/tests/gpu_progs/ranks/ranks_gloo.py" own >nsys.log 2>&1
  echo "nsys rc=$?"; tail -3 nsys.log
  if [ -f job.nsys-rep ]; then
    timeout 30 "$NSYS" export --type sqlite -o job.sqlite job.nsys-rep >/dev/null 2>&1
    python3 - <<'PY'
import sqlite3
c = sqlite3.connect("job.sqlite")
rows = c.execute("select (globalPid >> 24) & 16777215, count(*) from CUPTI_ACTIVITY_KIND_KERNEL group by 1").fetchall()
print("nsys kernels per pid:", rows)
PY
    cat own/*.json; echo
  fi
fi
