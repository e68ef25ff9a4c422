#!/bin/bash
# hooks.sh: issue 23 on a GPU machine with a prebuilt build/: examples/serve_plain.py (a server loop,
# no NVTX, no llmprof) profiled through stage hooks on its own method names, then the checks of
# tests/e2e/gpu_serve_hooks.sh; the run's reports go to $OUT.
set -u
OUT=${OUT:-/tmp/lp-hooks}
mkdir -p "$OUT"
export LLMPROF=$PWD/build/bin/llmprof LP_SRC=$PWD LP_BUILD=$PWD/build LP_TMP=/tmp/lp-hooks-w
start=$(date +%s)
bash tests/e2e/gpu_serve_hooks.sh >"$OUT/test.txt" 2>&1
echo "gpu_serve_hooks.sh: rc=$? in $(( $(date +%s) - start ))s" | tee -a "$OUT/test.txt"
d=$LP_TMP/tmp/stage2/serve
for f in report.md summary.json stakeholder_summary.md; do cp "$d/$f" "$OUT/" 2>/dev/null; done
cp "$LP_TMP/stdout" "$OUT/terminal.txt" 2>/dev/null
sed -n '/## Per-stage/,/## MFU/p' "$d/report.md" | cut -c1-400
cat "$OUT/test.txt"
