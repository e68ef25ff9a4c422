#!/bin/bash
# sampled_call.sh: issue 24's GPU measurement as one device call (bench/tracer/README.md "Run 16").
# Run from the repo root on the GPU machine with build/lib/libllmprof_inject.so (Release). Writes
# into $OUT (at most 8 files): env.txt (GPU, driver, torch, transformers, nsys versions),
# fixture.tgz (a small real sampled trace of the tiny model: tests/data/traces/ fixture source),
# sampled.tgz (bench/tracer/sampled.sh's outputs: per-process program output, tracer logs,
# summary.json, kernels_*.json, steps_*.json, switches.txt), log.txt.
# Knobs: ROUNDS (2), LP_SAMPLE (every=8,first=2), LP_SAMPLED_MODES, LP_SAMPLED_ONCE ("auto"),
# LP_SAMPLED_STOP_S (380: no new process after that many seconds of sampled.sh).
set -u
cd "$(dirname "$0")/../.."
R=${OUT:-/tmp/lp-call}
mkdir -p "$R"
export PYTHONUNBUFFERED=1
export LP_NSYS=${LP_NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LP_NSYS_LIBS=${LP_NSYS_LIBS:-$PWD/.carry-nsyslibs}
LIB=$PWD/build/lib/libllmprof_inject.so
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__)"
  LD_LIBRARY_PATH=$LP_NSYS_LIBS "$LP_NSYS" --version
  nproc; uptime
} >"$R/env.txt" 2>&1

# 1. a small real sampled trace (tiny model, every=4 after the first 2 steps, 24 tokens); SKIP_FIXTURE=1: none
F=/tmp/lp-fixture
if [ "${SKIP_FIXTURE:-0}" != 1 ]; then
rm -rf "$F"; mkdir -p "$F"
( cd "$F" && timeout -k 5 120 env CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_DIR=$F/trace \
  LLMPROF_TRACE_LOG=$F/inject.log LLMPROF_TRACE_SAMPLE=every=4,first=2 \
  python3 "$OLDPWD/examples/hf_generate.py" --model tiny --new-tokens 24 --iters 2 --warmup 1 --step-times \
  >"$F/program.txt" 2>"$F/program.err" )
echo "fixture rc=$? $(du -sh "$F/trace" | cut -f1)"
tar czf "$R/fixture.tgz" -C "$F" .
fi

# 2. the side-by-side measurement
OUT=/tmp/lp-sampled LP_SAMPLED_PACK="$R/sampled.tgz" LP_SAMPLE=${LP_SAMPLE:-every=8,first=2} \
  LP_SAMPLED_MODES=${LP_SAMPLED_MODES:-plain sampled exact kineto nsys} LP_SAMPLED_ONCE=${LP_SAMPLED_ONCE:-auto} \
  LP_SAMPLED_STOP_S=${LP_SAMPLED_STOP_S:-380} LP_SAMPLED_PROC_S=${LP_SAMPLED_PROC_S:-90} \
  LP_SAMPLED_HF_ITERS=${LP_SAMPLED_HF_ITERS:-2} LP_SAMPLED_PLAIN_ITERS=${LP_SAMPLED_PLAIN_ITERS:-3} \
  bash bench/tracer/sampled.sh "${ROUNDS:-2}" 2>&1 | tee "$R/log.txt"
for f in /tmp/lp-sampled/kernels_*.json /tmp/lp-sampled/subsample_*.json /tmp/lp-sampled/steps_*.json; do
  [ -f "$f" ] && echo "== $f" && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [print(k, v) for k, v in d.items() if k != 'rows']" "$f"
done 2>&1 | tee -a "$R/log.txt"
cat /tmp/lp-sampled/switches.txt | tee -a "$R/log.txt"
