#!/bin/bash
# final.sh: what a user sees on a GPU machine, with a prebuilt build/ (issues 19 and 21): `llmprof run`
# with no arguments (the README's `make run`), and a llama-3.2-1b light run with the bandwidth probe
# (run.probe_bandwidth=true: llmprof-probe, the waterfall's floor at the measured copy rate).
# Terminal output, stakeholder_summary.md, report.md and summary.json of each go to $OUT.
set -u
OUT=${OUT:-/tmp/lp-final}
mkdir -p "$OUT"
L=$PWD/build/bin/llmprof
W=/tmp/lp-final-w; rm -rf "$W"; mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
keep() {  # keep NAME: the run's reports and terminal output
  local d=$W/tmp/stage2/$1
  mkdir -p "$OUT/$1"
  cp "$W/$1.term" "$OUT/$1/terminal.txt" 2>/dev/null
  for f in stakeholder_summary.md report.md summary.json probe.json phases.json; do cp "$d/$f" "$OUT/$1/" 2>/dev/null; done
}
(cd "$W" && "$L" run run.id=default >"$W/default.term" 2>&1); echo "default: rc=$?" | tee -a "$OUT/summary.txt"
keep default
(cd "$W" && "$L" run run.id=probe --mode light model=llama-3.2-1b inputs.prompt_len=512 inputs.new_tokens=128 \
  run.probe_bandwidth=true >"$W/probe.term" 2>&1); echo "probe: rc=$?" | tee -a "$OUT/summary.txt"
keep probe
cat "$OUT/probe/probe.json" | tee -a "$OUT/summary.txt"
python3 - "$OUT/probe/summary.json" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
s = json.load(open(sys.argv[1]))
for w in s["waterfall"]:
    if w["valid"]:
        print(w["stage"], "latency", w["latency_ms"], "floor", w["floor_ms"], "floor at measured bw", w["floor_measured_ms"],
              "bw", w["measured_bw_gbs"], "sum", sum(i["ms"] for i in w["items"]))
print("self-check failed:", s["self_check"]["failed"])
PY
cat "$OUT/default/terminal.txt"
