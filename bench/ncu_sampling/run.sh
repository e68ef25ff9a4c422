#!/bin/bash
# run.sh: issue 15's numbers on a GPU machine (README.md here has what they were). Run from the
# tree root with a prebuilt build/ (bin/llmprof, bin/llmprof-llm, lib/libllmprof_inject.so):
#   OUT=/tmp/out bash bench/ncu_sampling/run.sh
# 0. ncu's --kernel-id semantics, probed directly on the tiny reference model (does the invocation
#    regex work, does it count per launch configuration)
# 1. a deep run of llama-3.2-1b (prompt 512, 128 new tokens, regions prefill layers + decode_all)
# 2. sampled vs unsampled ncu on a smaller selection (decode_all of 2 new tokens), compare.py
# 3. the cache: the sampled run of 2 again with profiling.ncu.cache=true, twice (CACHE=1)
# 4. the same as 1 for examples/hf_generate.py (last: it gets the time left of HF_BY seconds)
set -u
OUT=${OUT:-/tmp/lp-ncu-sampling}
mkdir -p "$OUT"
ROOT=$PWD
L=$ROOT/build/bin/llmprof
W=/tmp/lp-ncs
rm -rf "$W"
mkdir -p "$W"
export XDG_CACHE_HOME=$W/cache
S=$OUT/summary.txt
: >"$S"
T0=$(date +%s)
say() { echo "$*" | tee -a "$S"; }
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort | tail -1)
say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
say "ncu: $NCU ($("$NCU" --version 2>&1 | tail -1))"
say "torch: $(python3 -c 'import torch, transformers; print(torch.__version__, transformers.__version__)' 2>&1 | tail -1)"

# 0. --kernel-id probe (PROBE=1): k_rmsnorm of the tiny model, invocations 2 and 5 of each configuration
[ -n "${PROBE:-}" ] && "$NCU" --kernel-name-base function --kernel-id '::regex:^(k_rmsnorm)$:^(2|5)$' --metrics gpu__time_duration.sum \
  --nvtx "$ROOT/build/bin/llmprof-llm" --model tiny --device cuda --iters 1 --warmup 0 --new-tokens 4 --prompt-len 16 \
  >"$OUT/probe_kernel_id.log" 2>&1
[ -n "${PROBE:-}" ] && say "probe --kernel-id: rc=$? profiled $(grep -c '==PROF== Profiling' "$OUT/probe_kernel_id.log") launches"
[ -n "${PROBE:-}" ] && grep '==PROF== Profiling\|==ERROR==\|==WARNING==' "$OUT/probe_kernel_id.log" | head -8 | tee -a "$S"

run() {  # run NAME LIMIT args...: one llmprof run in $W/NAME; summary lines; folder to $OUT/NAME.tgz
  local name=$1 limit=$2
  shift 2
  local start end rc d
  start=$(date +%s.%N)
  (cd "$W" && timeout "$limit" "$L" run run.id="$name" "$@" >"$OUT/$name.stdout" 2>"$OUT/$name.stderr")
  rc=$?
  end=$(date +%s.%N)
  say "$name: rc=$rc wall=$(python3 -c "print(f'{$end - $start:.1f}')")s: llmprof run $*"
  d=$W/tmp/stage2/$name
  [ -d "$d" ] || return
  (cd "$W/tmp/stage2" && tar czf "$OUT/$name.tgz" --exclude='*.ncu-rep' --exclude='*.lptrace' "$name")
  python3 - "$d" <<'PY' | tee -a "$S"
import json, os, sys
d = sys.argv[1]
ph = json.load(open(d + "/phases.json"))["phases"] if os.path.exists(d + "/phases.json") else []
for p in ph:
    print(f"  phase {p['name']:<10} {p['status']:<8} {p['reason'][:300]}")
sp = d + "/ncu/sampling.json"
if os.path.exists(sp):
    s = json.load(open(sp))
    c = s.get("coverage", {})
    print(f"  sampling: groups {s['groups_total']} wanted {s['groups_wanted']} cached {s['groups_cached']} "
          f"dropped {s['groups_dropped_budget']} K {s['k_used']}/{s['k']} processes {len(s['processes'])} run "
          f"{s.get('processes_run')} predicted {s['predicted_launches']} eta {s['eta_s']:.1f}s elapsed "
          f"{s.get('elapsed_s', 0):.1f}s per_launch est {s['per_launch_s']:.3f} measured {s.get('measured_per_launch_s')}")
    print(f"  coverage: {100 * c.get('share', 0):.2f}% met={c.get('met')} groups with metrics "
          f"{c.get('groups_with_metrics')}/{c.get('groups')} reused {c.get('groups_reused')}")
    for r in c.get("regions", []):
        print(f"    region {r['region']:<24} {r['kernel_ms']:10.3f} ms coverage {100 * r['share']:.2f}% "
              f"({r['groups_with_metrics']}/{r['groups']} groups) met={r['met']}")
    got = sum(g.get("profiled", 0) for g in s["groups"])
    planned = sum(len(g["picks"]) for g in s["groups"] if g["status"] == "planned")
    print(f"  launches: planned picks {planned}, results kept {got}, predicted incl. extras {s['predicted_launches']}")
    for p in s["processes"]:
        print(f"    process: {p['groups']} groups, {p['planned_launches']} picks, {p['predicted_launches']} predicted, "
              f"est {p['est_s']:.1f}s, kernel-id {p['kernel_id'][:160]}")
PY
}

# 1. the reference workload
run deep_llama 100 --mode deep model=llama-3.2-1b inputs.prompt_len=512 inputs.new_tokens=128 run.repeats=1 \
  'profiling.ncu.regions.include=[LLM@prefill/layer/,LLM@decode_all/]' profiling/ncu=ncu.light
# 2. sampled against unsampled on a smaller selection (decode_all of 2 new tokens)
CMP="--mode deep model=llama-3.2-1b inputs.prompt_len=64 inputs.new_tokens=2 run.repeats=1 run.warmup=0 profiling/ncu=ncu.light 'profiling.ncu.regions.include=[LLM@decode_all/]' profiling.ncu.coverage=1.0"
eval run cmp_sampled 40 $CMP
eval run cmp_full 60 $CMP profiling.ncu.sample_per_group=0 profiling.ncu.budget_s=0
python3 "$ROOT/bench/ncu_sampling/compare.py" "$W/tmp/stage2/cmp_sampled" "$W/tmp/stage2/cmp_full" >"$OUT/compare.txt" 2>&1
tail -1 "$OUT/compare.txt" | tee -a "$S"
# 3. the cache (CACHE=1): the sampled run of 2 again with profiling.ncu.cache=true, twice
if [ -n "${CACHE:-}" ]; then
  eval run cache_1 40 $CMP profiling.ncu.cache=true
  eval run cache_2 40 $CMP profiling.ncu.cache=true
fi
# 4. Hugging Face generate, with what is left of ${HF_BY:-215} s
left=$(( ${HF_BY:-215} - ( $(date +%s) - T0 ) ))
[ "$left" -gt 200 ] && left=200
[ "$left" -lt 30 ] && say "deep_hf: skipped (HF_BY=${HF_BY:-215} s spent)"
[ "$left" -ge 30 ] && run deep_hf "$left" --mode deep 'profiling.ncu.regions.include=[LLM@prefill/layer/,LLM@decode_all/]' profiling/ncu=ncu.light \
  -- python3 "$ROOT/examples/hf_generate.py" --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 1 --warmup 1
say "total: $(( $(date +%s) - T0 ))s"
(cd "$OUT" && tar czf all.tgz --exclude=all.tgz ./*.txt ./*.log ./*.stdout ./*.stderr 2>/dev/null)
