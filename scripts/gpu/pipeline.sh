#!/bin/bash
# pipeline.sh: `llmprof run` end to end on a GPU machine (issues 6 and 7), with a prebuilt build/.
# Deep runs of the reference model (llama-3.2-1b) with nsys on, of examples/hf_generate.py, an NVTX
# region run, and the stage-time cross-check against the workloads' own CUDA-event timings.
# Outputs (run folders without the large binary reports) go to $OUT; a summary is printed last.
set -u
OUT=${OUT:-/tmp/lp-pipeline}
mkdir -p "$OUT"
L=$PWD/build/bin/llmprof
W=/tmp/lp-pipe; rm -rf "$W"; mkdir -p "$W"
NSYS_LIBS=${LP_NSYS_LIBS:-$PWD/.carry/nsyslibs}
summary=$OUT/summary.txt; : >"$summary"
say() { echo "$*" | tee -a "$summary"; }

"$L" check >"$OUT/check.txt" 2>&1; say "check: rc=$?"

run() {  # run NAME args...: one llmprof run in $W/NAME, its folder copied to $OUT/NAME
  local name=$1; shift
  local start=$(date +%s)
  (cd "$W" && "$L" run run.id="$name" "$@" >"$OUT/$name.stdout" 2>"$OUT/$name.stderr")
  local rc=$?
  say "$name: rc=$rc in $(( $(date +%s) - start ))s"
  local d=$W/tmp/stage2/$name
  if [ -d "$d" ]; then
    (cd "$W/tmp/stage2" && tar czf "$OUT/$name.tgz" --exclude='*.ncu-rep' --exclude='*.nsys-rep' --exclude='*.qdstrm' "$name")
    python3 - "$d" <<'PY' | tee -a "$summary"
import json, sys, os
d = sys.argv[1]
s = json.load(open(d + "/summary.json")) if os.path.exists(d + "/summary.json") else None
if not s:
    print("  no summary.json; phases:", open(d + "/phases.json").read() if os.path.exists(d + "/phases.json") else "none"); sys.exit()
for p in s["phases"]:
    print(f"  phase {p['name']:<10} {p['status']:<8} {p['reason'][:150]}")
st = {x["name"]: x for x in s["stages"]}
for name, x in st.items():
    g = x["gpu_busy_ms"]; h = x["host_ms"]
    print(f"  stage {name:<11} host {h['mean']:.3f} ms  gpu_busy {g['mean'] if g else 'n/a'}  kernels {x['kernels']['mean'] if x['kernels'] else 'n/a'}")
for p in s["perf"]:
    print(f"  perf {p['stage']:<8} mfu {p['mfu']} mbu {p['mbu']} ncu_flops {p['ncu_flops']}")
rows = s["kernels"]["rows"]
print(f"  kernels: {len(rows)} distinct, ncu records {s['kernels']['ncu_records']}, joined {s['kernels']['ncu_joined_kernels']}")
for r in rows[:5]:
    n = r["ncu"]
    print(f"    {r['total_ms']:9.3f} ms {r['calls']:6} {r['short_name'][:50]:<50} {('ncu dram%% %.1f sm%% %.1f %s' % (n['dram_throughput_pct'] or -1, n['sm_throughput_pct'] or -1, n['roofline'])) if n else ''}")
# the workload's own timings (JSON lines with prefill_ms/decode_ms) vs the tracer's stage times
own = []
if os.path.exists(d + "/trace/workload.stdout"):
    for l in open(d + "/trace/workload.stdout"):
        l = l.strip()
        if l.startswith("{") and '"iter"' in l:
            own.append(json.loads(l))
if own:
    for key, stage in (("prefill_ms", "prefill"), ("decode_ms", "decode_all")):
        if stage not in st: continue
        theirs = sum(o[key] for o in own) / len(own)
        for kind in ("host_ms", "gpu_busy_ms", "gpu_span_ms"):
            v = st[stage][kind]
            if not v: continue
            diff = (v["mean"] - theirs) / theirs * 100
            print(f"  crosscheck {stage:<10} {kind:<11} {v['mean']:.3f} vs workload {theirs:.3f} ms: {diff:+.2f}%")
PY
    ls -R "$d/ncu" 2>/dev/null | head -30 >"$OUT/$name.ncu_files.txt"
  fi
}

# 1. the reference model, deep, nsys on (issue 6's llama-3.2-1b run)
run llama1b --mode deep model=llama-3.2-1b inputs.prompt_len=512 inputs.new_tokens=128 run.repeats=3 \
  profiling.nsys.enable=true tools.nsys_lib_dir="$NSYS_LIBS"
# 2. a PyTorch program (transformers, random weights) after --
run hf --mode deep model=llama-3.2-1b inputs.batch=1 inputs.prompt_len=128 inputs.new_tokens=32 run.repeats=3 -- \
  python3 "$PWD/examples/hf_generate.py" --model llama-3.2-1b --prompt-len 128 --new-tokens 32 --iters 3 --warmup 1
# 3. NVTX regions on the reference model (kernel replay), and on PyTorch with range replay
#    (expected to fall back to app-range)
run regions_llm --mode deep model=tiny inputs.new_tokens=4 run.repeats=1 run.warmup=0 \
  'profiling.ncu.regions.include=[LLM@prefill/,LLM@decode_all/]' profiling/ncu=ncu.light
run regions_torch --mode deep model=tiny inputs.new_tokens=4 run.repeats=1 \
  'profiling.ncu.regions.include=[LLM@prefill/,LLM@decode_all/]' profiling/ncu=ncu.light profiling.ncu.replay_mode=range -- \
  python3 "$PWD/examples/hf_generate.py" --model tiny --prompt-len 32 --new-tokens 4 --iters 1 --warmup 0
# 4. `llmprof report` reproduces the reports of run 1 byte for byte
d=$W/tmp/stage2/llama1b
if [ -d "$d" ]; then
  mkdir -p "$W/before" && cp "$d"/*.md "$d"/summary.json "$W/before/"
  "$L" report "$d" >/dev/null 2>"$OUT/report.stderr"; rc=$?
  same=1; for f in "$W"/before/*; do cmp -s "$f" "$d/$(basename "$f")" || { same=0; say "report changed $(basename "$f")"; }; done
  say "report: rc=$rc identical=$same"
fi
echo "===== summary ====="; cat "$summary"
