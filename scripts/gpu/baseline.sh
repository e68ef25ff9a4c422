#!/bin/bash
# baseline.sh: run.baseline=reference on a GPU machine (issue 22), with a prebuilt build/:
# examples/hf_generate.py (llama-3.2-1b shape, eager, bf16, random weights; prompt 512, 128 new
# tokens) under `llmprof run --mode light run.baseline=reference`, so the reference workload runs
# the shape the shim reported (a refused shape is tested on the CPU: tests/e2e/baseline.sh). The program/reference ratios, the
# program's self-check and the nested reference run's own self-check go to $OUT/summary.txt; the
# run folders' reports to $OUT/baseline.tgz.
set -u
OUT=${OUT:-/tmp/lp-baseline}
mkdir -p "$OUT"
L=$PWD/build/bin/llmprof
SRC=$PWD
W=/tmp/lp-baseline-w; rm -rf "$W"; mkdir -p "$W"
summary=$OUT/summary.txt; : >"$summary"
say() { echo "$*" | tee -a "$summary"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$summary"
start=$(date +%s)
(cd "$W" && "$L" run --mode light run.id=hf run.repeats=3 run.baseline=reference -- python3 "$SRC/examples/hf_generate.py" \
  --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 3 >"$W/hf.stdout" 2>"$W/hf.stderr")
say "== hf with baseline: rc=$? in $(( $(date +%s) - start ))s"
cat "$W/hf.stdout" | tee -a "$summary"
tail -5 "$W/hf.stderr" | tee -a "$summary"
d=$W/tmp/stage2/hf
python3 - "$d" <<'PY' | tee -a "$summary"
import json, sys
d = sys.argv[1]
ph = {p["name"]: p for p in json.load(open(d + "/phases.json"))["phases"]}
print("baseline phase:", ph["baseline"]["status"], ph["baseline"]["reason"])
s = json.load(open(d + "/summary.json"))
print("program self-check:", [(c["what"], c["llmprof"], c["workload"], c["diff"]) for c in s["self_check"]["checks"]])
print("baseline:", json.dumps(s.get("baseline"), indent=1))
b = json.load(open(d + "/baseline/summary.json"))
print("reference self-check:", [(c["what"], c["llmprof"], c["workload"], c["diff"]) for c in b["self_check"]["checks"]])
print("reference tokens:", b["tokens"])
print("reference perf:", [(p["stage"], p["mbu_latency"], p["mfu_latency"]) for p in b["perf"]])
PY
sed -n '/^## Against the reference/,/^## MFU/p' "$d/report.md" | tee -a "$summary"
rm -rf "$W"/tmp/stage2/*/trace "$W"/tmp/stage2/*/baseline/trace
tar czf "$OUT/baseline.tgz" -C "$W" tmp hf.stdout hf.stderr 2>/dev/null
