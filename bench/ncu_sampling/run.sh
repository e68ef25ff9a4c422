#!/bin/bash
# run.sh: issue 15's numbers on a GPU machine (README.md here has what they were). Run from the
# tree root with a prebuilt build/ (bin/llmprof, bin/llmprof-llm, lib/libllmprof_inject.so):
#   OUT=/tmp/out bash bench/ncu_sampling/run.sh
# 0. ncu's --kill (profiling.ncu.stop_early uses --launch-count N --kill=on): does this ncu take it
# 1. examples/hf_generate.py with llama-3.2-1b, deep, regions over prefill layers + decode_all,
#    with a timeline of the ncu phase (capture, plan, first profiled launch, rate, end)
# 2. sampled vs unsampled ncu on one selection (llmprof-llm llama-3.2-1b, decode_all of 2 new
#    tokens), the unsampled one twice (the same launches profiled twice: the counters' own
#    repeatability), then sampled vs unsampled with locked clocks (clock_control=base); compare.py
# 3. (LLM=1) the llmprof-llm deep run of llama-3.2-1b of the README's section 1
# 4. what ncu costs hf_generate.py when it profiles nothing (a --kernel-id that matches no kernel)
# 5. warm-up stand-ins (profiling.ncu.warmup_picks) against the unsampled profile of the measured
#    iteration: the selection of 2, sampled with run.warmup=1, compare.py against cmp_full/cmp_full2
# PARTS picks the parts (default "0 1 2 4", and 3 with LLM=1), e.g. PARTS="1 3 5".
set -u
PARTS=${PARTS:-0 1 2 4${LLM:+ 3}}
has() { case " $PARTS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
OUT=${OUT:-/tmp/lp-ncu-sampling}
mkdir -p "$OUT"
ROOT=$PWD
L=$ROOT/build/bin/llmprof
W=/tmp/lp-ncs
rm -rf "$W"
mkdir -p "$W/logs"
LG=$W/logs   # logs and run folders; $OUT gets summary.txt, compare*.txt, runs.tgz, logs.tgz
export XDG_CACHE_HOME=$W/cache PYTHONUNBUFFERED=1
S=$OUT/summary.txt
: >"$S"
T0=$(date +%s)
say() { echo "$*" | tee -a "$S"; }
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort | tail -1)
say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
say "ncu: $NCU ($("$NCU" --version 2>&1 | tail -1))"
say "torch: $(python3 -c 'import torch, transformers; print(torch.__version__, transformers.__version__)' 2>&1 | tail -1)"

# 0. --kill
STOP=true   # checked on the H100's ncu 2025.3.1 (part 0)
if has 0; then
"$NCU" --help 2>&1 | grep -A3 -- '--kill' | tee "$LG/ncu_kill_help.txt" | head -4 | tee -a "$S"
timeout 90 "$NCU" --metrics gpu__time_duration.sum --launch-count 3 --kill=on "$ROOT/build/bin/llmprof-llm" --model tiny \
  --device cuda --iters 2 --warmup 0 --new-tokens 16 --prompt-len 16 >"$LG/probe_kill.log" 2>&1
rc=$?
np=$(grep -c '==PROF== Profiling' "$LG/probe_kill.log")
STOP=false
[ "$np" = 3 ] && ! grep -q '"tokens_per_s"' "$LG/probe_kill.log" && STOP=true
say "probe --kill=on: rc=$rc profiled $np, workload summary line printed: $(grep -c tokens_per_s "$LG/probe_kill.log") -> stop_early=$STOP"
grep '==ERROR==\|==WARNING==\|rror' "$LG/probe_kill.log" | head -3 | tee -a "$S"
fi

timeline() {  # timeline NAME: every second, what the run folder shows (capture, plan, ncu progress)
  local d=$W/tmp/stage2/$1 t0 now log
  t0=$(date +%s.%N)
  while :; do
    now=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
    log=$(ls "$d"/logs/ncu_p*/ncu.log 2>/dev/null | tail -1)
    echo "$now trace=$(ls "$d"/trace 2>/dev/null | wc -l) plan=$([ -f "$d/ncu/sampling.json" ] && echo 1 || echo 0)" \
      "ncu_log=$([ -n "$log" ] && stat -c %s "$log" || echo -)" \
      "profiled=$([ -n "$log" ] && grep -c '==PROF== Profiling' "$log" || echo 0)" \
      "report=$(ls "$d"/ncu/parts/*.ncu-rep 2>/dev/null | wc -l) regions=$([ -d "$d/ncu/regions" ] && echo 1 || echo 0)"
    sleep 1
  done
}

run() {  # run NAME LIMIT args...: one llmprof run in $W/NAME; summary lines; folder to $OUT/NAME.tgz
  local name=$1 limit=$2
  shift 2
  local start end rc d tl
  start=$(date +%s.%N)
  timeline "$name" >"$W/$name.timeline" 2>&1 &
  tl=$!
  (cd "$W" && timeout "$limit" "$L" run run.id="$name" "$@" >"$LG/$name.stdout" 2>"$LG/$name.stderr")
  rc=$?
  kill "$tl" 2>/dev/null
  wait "$tl" 2>/dev/null
  end=$(date +%s.%N)
  say "$name: rc=$rc wall=$(python3 -c "print(f'{$end - $start:.1f}')")s: llmprof run $*"
  d=$W/tmp/stage2/$name
  [ -d "$d" ] || return
  cp "$W/$name.timeline" "$d/timeline.txt"
  (cd "$W/tmp/stage2" && tar czf "$W/$name.tgz" --exclude='*.ncu-rep' --exclude='*.lptrace' "$name")
  (cd "$W" && tar czf "$OUT/runs.tgz" ./*.tgz)
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
    print(f"  sampling: launches {s['launches']} groups {s['groups_total']} wanted {s['groups_wanted']} cached {s['groups_cached']} "
          f"dropped {s['groups_dropped_budget']} K {s['k_used']}/{s['k']} processes {len(s['processes'])} run "
          f"{s.get('processes_run')} predicted {s['predicted_launches']} eta {s['eta_s']:.1f}s elapsed "
          f"{s.get('elapsed_s', 0):.1f}s per_launch est {s['per_launch_s']:.3f} measured {s.get('measured_per_launch_s')} "
          f"per_process est {s.get('per_process_s', 0):.1f} runs {s.get('runs')}")
    print(f"  coverage: {100 * c.get('share', 0):.2f}% met={c.get('met')} groups with metrics "
          f"{c.get('groups_with_metrics')}/{c.get('groups')} reused {c.get('groups_reused')} "
          f"from warm-up stand-ins {c.get('groups_from_warmup')} (results {c.get('results_warmup')} of {c.get('results')})")
    picks = [p for g in s["groups"] if g["status"] == "planned" for p in g["picks"]]
    print(f"  picks: {len(picks)}, in the warm-up {sum(1 for p in picks if p.get('warmup'))}, steps "
          f"{sorted(set(p['step'] for p in picks))[:12]}, largest invocation {max((p['invocation'] for p in picks), default=0)}; "
          f"groups with stand-ins {s.get('groups_with_stand_ins')}, program_s {s.get('program_s')} stop_early {s.get('stop_early')}")
    for r in c.get("regions", []):
        print(f"    region {r['region']:<24} {r['kernel_ms']:10.3f} ms coverage {100 * r['share']:.2f}% "
              f"({r['groups_with_metrics']}/{r['groups']} groups) met={r['met']}")
    got = sum(g.get("profiled", 0) for g in s["groups"])
    planned = sum(len(g["picks"]) for g in s["groups"] if g["status"] == "planned")
    print(f"  launches: planned picks {planned}, results kept {got}, predicted incl. extras {s['predicted_launches']}, "
          f"attached by config {s.get('results_attached_by_config')}")
    for p in s["processes"]:
        print(f"    process: {p['groups']} groups, {p['planned_launches']} picks, {p['predicted_launches']} predicted, "
              f"est {p['est_s']:.1f}s, warmup_only {p.get('warmup_only')}, kernel-id {p['kernel_id'][:200]}")
tl = d + "/timeline.txt"
if os.path.exists(tl):
    rows = [l.split() for l in open(tl) if l.strip()]
    def first(pred):
        for r in rows:
            kv = dict(x.split("=", 1) for x in r[1:])
            if pred(kv):
                return r[0]
        return "-"
    print(f"  timeline: plan at {first(lambda k: k['plan'] == '1')} s, ncu log at {first(lambda k: k['ncu_log'] != '-')} s, "
          f"first profiled at {first(lambda k: k['profiled'] not in ('0', '-'))} s, "
          f"report at {first(lambda k: k['report'] != '0')} s, regions at {first(lambda k: k['regions'] == '1')} s, "
          f"end {rows[-1][0] if rows else '-'} s")
PY
}

CAP=${HF_LIMIT:-230}
# 1. Hugging Face generate: the issue's command
has 1 && run deep_hf "$CAP" --mode deep 'profiling.ncu.regions.include=[LLM@prefill/layer/,LLM@decode_all/]' profiling/ncu=ncu.light \
  profiling.ncu.stop_early=$STOP \
  -- python3 "$ROOT/examples/hf_generate.py" --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 1 --warmup 1

# 3. (LLM=1) the reference workload's deep run
has 3 && run deep_llama 100 --mode deep model=llama-3.2-1b inputs.prompt_len=512 inputs.new_tokens=128 run.repeats=1 \
  'profiling.ncu.regions.include=[LLM@prefill/layer/,LLM@decode_all/]' profiling/ncu=ncu.light profiling.ncu.stop_early=$STOP

# 2. sampled against unsampled on one selection (decode_all of 2 new tokens); the unsampled twice
CMP0="--mode deep model=llama-3.2-1b inputs.prompt_len=64 inputs.new_tokens=2 run.repeats=1 profiling/ncu=ncu.light 'profiling.ncu.regions.include=[LLM@decode_all/]' profiling.ncu.coverage=1.0 profiling.ncu.stop_early=$STOP"
CMP="$CMP0 run.warmup=0"
if has 2; then
eval run cmp_sampled 60 $CMP
eval run cmp_full 90 $CMP profiling.ncu.sample_per_group=0 profiling.ncu.budget_s=0
eval run cmp_full2 90 $CMP profiling.ncu.sample_per_group=0 profiling.ncu.budget_s=0
python3 "$ROOT/bench/ncu_sampling/compare.py" "$W/tmp/stage2/cmp_sampled" "$W/tmp/stage2/cmp_full" "$W/tmp/stage2/cmp_full2" \
  >"$OUT/compare.txt" 2>&1
tail -1 "$OUT/compare.txt" | tee -a "$S"
# the same with locked clocks (ncu's --clock-control base)
eval run cmp_sampled_base 60 $CMP profiling.ncu.clock_control=base
eval run cmp_full_base 90 $CMP profiling.ncu.clock_control=base profiling.ncu.sample_per_group=0 profiling.ncu.budget_s=0
python3 "$ROOT/bench/ncu_sampling/compare.py" "$W/tmp/stage2/cmp_sampled_base" "$W/tmp/stage2/cmp_full_base" \
  "$W/tmp/stage2/cmp_full" >"$OUT/compare_base.txt" 2>&1
tail -1 "$OUT/compare_base.txt" | tee -a "$S"
fi

# 5. warm-up stand-ins against the unsampled measured iteration (the same selection, run.warmup=1)
if has 5; then
eval run cmp_warm 60 $CMP0 run.warmup=1
if ! has 2; then
  eval run cmp_full 90 $CMP profiling.ncu.sample_per_group=0 profiling.ncu.budget_s=0
  eval run cmp_full2 90 $CMP profiling.ncu.sample_per_group=0 profiling.ncu.budget_s=0
fi
python3 "$ROOT/bench/ncu_sampling/compare.py" "$W/tmp/stage2/cmp_warm" "$W/tmp/stage2/cmp_full" "$W/tmp/stage2/cmp_full2" \
  >"$OUT/compare_warm.txt" 2>&1
tail -1 "$OUT/compare_warm.txt" | tee -a "$S"
fi

# 4. ncu on hf_generate.py profiling nothing, with what is left of ${BY:-480} s
left=$(( ${BY:-480} - ( $(date +%s) - T0 ) ))
if ! has 4; then
  :
elif [ "$left" -ge 60 ]; then
  s0=$(date +%s.%N)
  timeout "$left" "$NCU" --kernel-id '::regex:^no_such_kernel$:1' --metrics gpu__time_duration.sum \
    python3 "$ROOT/examples/hf_generate.py" --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 1 --warmup 1 \
    >"$LG/hf_ncu_nothing.log" 2>&1
  rc=$?
  say "hf under ncu, nothing profiled: rc=$rc wall=$(python3 -c "print(f'{$(date +%s.%N) - $s0:.1f}')")s; $(grep -h prefill_ms "$LG/hf_ncu_nothing.log" | tail -1 | cut -c1-200)"
  s0=$(date +%s.%N)
  timeout 120 python3 "$ROOT/examples/hf_generate.py" --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 1 \
    --warmup 1 >"$LG/hf_plain.log" 2>&1
  say "hf plain: rc=$? wall=$(python3 -c "print(f'{$(date +%s.%N) - $s0:.1f}')")s; $(grep -h prefill_ms "$LG/hf_plain.log" | tail -1 | cut -c1-200)"
else
  say "hf under ncu, nothing profiled: skipped ($left s left of BY=${BY:-480})"
fi
say "total: $(( $(date +%s) - T0 ))s"
(cd "$LG" && tar czf "$OUT/logs.tgz" .)
