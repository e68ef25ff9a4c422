#!/bin/bash
# defaults.sh: the default paths of main on a GPU: `llmprof run` (make run), hf_generate light with
# the default trace.sample=auto, and a short hf_generate deep run (auto -> exact capture, ncu sampling).
set -u
SRC=$PWD; L=$SRC/build/bin/llmprof; W=/tmp/lf; rm -rf $W; mkdir -p $W; cd $W
export PYTHONUNBUFFERED=1 LP_NSYS_LIBS=$SRC/.carry-nsyslibs
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/summary.txt
keep() { d=$W/tmp/stage2/$1; mkdir -p $W/keep/$1; cp $W/$1.term $W/keep/$1/terminal.txt
  for f in summary.json report.md stakeholder_summary.md phases.json trace/workload.stdout ncu/sampling.json; do [ -f $d/$f ] && cp $d/$f $W/keep/$1/; done; }
t0=$(date +%s); timeout 120 $L run run.id=default >default.term 2>&1; echo "default rc=$? $(( $(date +%s)-t0 ))s" | tee -a $OUT/summary.txt; keep default
t0=$(date +%s); timeout 150 $L run --mode light run.id=hfl -- python3 $SRC/examples/hf_generate.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 3 --warmup 1 --step-times >hfl.term 2>&1; echo "hfl rc=$? $(( $(date +%s)-t0 ))s" | tee -a $OUT/summary.txt; keep hfl
t0=$(date +%s); timeout 200 $L run --mode deep run.id=hfd profiling.ncu.budget_s=60 -- python3 $SRC/examples/hf_generate.py --model llama-3.2-1b --prompt-len 128 --new-tokens 8 --iters 1 --warmup 1 >hfd.term 2>&1; echo "hfd rc=$? $(( $(date +%s)-t0 ))s" | tee -a $OUT/summary.txt; keep hfd
for r in default hfl hfd; do tail -n 12 $W/$r.term; done; tar czf $OUT/defaults.tgz -C $W keep  # $OUT: at most 8 files come back
