#!/bin/bash
# bench/tracer/sampled.sh [ROUNDS]: issue 24's measurement of sampled tracing, side by side in one
# run, ROUNDS rounds (default 3) alternating the order of the modes (as listed in odd rounds,
# reversed in even ones), on two programs:
#   hf     examples/hf_generate.py (llama-3.2-1b shape, eager, random weights, its own NVTX stages)
#   plain  examples/hf_generate_plain.py (an unmodified generate(); under the tracer its stages come
#          from python/llmprof_auto, as under `llmprof run`; in mode plain neither is loaded)
# Modes: plain (nothing), sampled (LLMPROF_TRACE_SAMPLE=$LP_SAMPLE, default auto), exact
# (LLMPROF_TRACE_SAMPLE=off), auto (LLMPROF_TRACE_SAMPLE=auto), nvtx (the tracer without CUPTI:
# LLMPROF_TRACE_CUPTI=0, the floor of NVTX ranges and the auto-stage shim), kineto (hf only:
# --kineto), nsys (LP_NSYS, LP_NSYS_LIBS); LP_SAMPLED_MODES picks them (default "plain sampled
# exact"), LP_SAMPLED_ONCE adds modes run in round 1 only (e.g. "auto nvtx").
# Size: LP_SAMPLED_TOKENS new tokens (128), LP_SAMPLED_HF_ITERS measured iterations of hf after
# one warm-up (3), LP_SAMPLED_PLAIN_ITERS generations of plain, the first left out (4); each
# process is stopped after LP_SAMPLED_PROC_S seconds (180); LP_SAMPLED_STOP_S: no new process
# after that many seconds (the checks still run). After each process the small outputs are packed
# into $LP_SAMPLED_PACK (when set), so a call stopped at its limit still brings them back.
# Both programs time themselves with CUDA events (--step-times: every decode step too). Writes
# under $OUT (default /tmp/lp-sampled): <prog>_<mode>_<round>.txt (the program's output),
# inject_<prog>_<mode>_<round>.log, then sample_check.py's summary.json, kernels_<prog>.json
# (sampled estimate against the exact run of the same round), subsample_<prog>.json (the schedule
# applied afterwards to the exact run: sampling error alone) and steps_<prog>_<mode>.json
# (per-step latencies against the program's own). Traces are deleted after the checks unless
# LP_KEEP_TRACES=1. Run from the repo root with build/ (LP_BUILD) on the GPU machine.
set -u
cd "$(dirname "$0")/../.."
B=${LP_BUILD:-build}
OUT=${OUT:-/tmp/lp-sampled}
ROUNDS=${1:-3}
MODES=${LP_SAMPLED_MODES:-plain sampled exact}
SAMPLE=${LP_SAMPLE:-auto}
case $B in /*) LIB=$B/lib/libllmprof_inject.so ;; *) LIB=$PWD/$B/lib/libllmprof_inject.so ;; esac
[ -f "$LIB" ] || { echo "sampled: $LIB missing (build first)"; exit 2; }
mkdir -p "$OUT"
TOKENS=${LP_SAMPLED_TOKENS:-128}
HF="python3 examples/hf_generate.py --model llama-3.2-1b --prompt-len 512 --new-tokens $TOKENS --iters ${LP_SAMPLED_HF_ITERS:-3} --warmup 1 --step-times"
PLAIN="python3 examples/hf_generate_plain.py --model llama-3.2-1b --prompt-len 512 --new-tokens $TOKENS --iters ${LP_SAMPLED_PLAIN_ITERS:-4} --step-times"
PROC_S=${LP_SAMPLED_PROC_S:-180}
T0=$(date +%s)

pack() { # the small outputs so far, for a call that may be stopped
  [ -n "${LP_SAMPLED_PACK:-}" ] || return 0
  (cd "$OUT" && tar czf "$LP_SAMPLED_PACK.tmp" --exclude='trace_*' --exclude='auto_*' --exclude='nsys_*' . 2>/dev/null \
    && mv "$LP_SAMPLED_PACK.tmp" "$LP_SAMPLED_PACK")
}
NSYS=${LP_NSYS:-$(command -v nsys || true)}
SITE=$PWD/python/llmprof_auto/site:$PWD/python

run() { # run PROG MODE ROUND
  local prog=$1 mode=$2 i=$3 tag=$1_$2_$3 cmd base t1
  if [ -n "${LP_SAMPLED_STOP_S:-}" ] && [ $(( $(date +%s) - T0 )) -gt "$LP_SAMPLED_STOP_S" ]; then
    echo "$(date +%T) $tag skipped: past LP_SAMPLED_STOP_S"; return 0
  fi
  [ "$mode" = kineto ] && [ "$prog" != hf ] && return 0
  case " ${LP_SAMPLED_ONCE:-} " in *" $mode "*) case " ${LP_SAMPLED_ONCE_PROGS:-hf plain} " in *" $prog "*) ;; *) return 0 ;; esac ;; esac
  base=$HF; [ "$prog" = plain ] && base=$PLAIN
  cmd="timeout -k 5 $PROC_S $base"
  t1=$(date +%s)
  local out=$OUT/$tag.txt auto=()
  [ "$prog" = plain ] && [ "$mode" != plain ] && auto=(PYTHONPATH=$SITE LLMPROF_AUTO_DIR=$OUT/auto_$tag)
  case $mode in
    plain) $cmd >"$out" 2>"$OUT/$tag.err" ;;
    sampled|exact|auto|nvtx)
      local s=$SAMPLE cupti=1; [ "$mode" = exact ] && s=off; [ "$mode" = auto ] && s=auto
      [ "$mode" = nvtx ] && { s=off; cupti=0; }
      env "${auto[@]}" CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_DIR=$OUT/trace_$tag \
        LLMPROF_TRACE_LOG=$OUT/inject_$tag.log LLMPROF_TRACE_SAMPLE=$s LLMPROF_TRACE_CUPTI=$cupti $cmd \
        >"$out" 2>"$OUT/$tag.err" ;;
    kineto) $cmd --kineto >"$out" 2>"$OUT/$tag.err" ;;
    nsys)
      [ -n "$NSYS" ] || return 0
      env "${auto[@]}" LD_LIBRARY_PATH=${LP_NSYS_LIBS:+$LP_NSYS_LIBS:}${LD_LIBRARY_PATH:-} timeout -k 5 "$PROC_S" "$NSYS" profile \
        -o "$OUT/nsys_$tag" --force-overwrite true --trace=cuda,nvtx --sample=none --cpuctxsw=none $base \
        >"$out" 2>"$OUT/$tag.err"
      rm -f "$OUT/nsys_$tag".* ;;
  esac
  local rc=$?
  echo "$(date +%T) $tag rc=$rc $(grep -c '"iter"' "$out" 2>/dev/null) iterations in $(( $(date +%s) - t1 ))s" | tee -a "$OUT/progress.txt"
  pack
}

order() { if [ $(( $1 % 2 )) = 1 ]; then echo "$2"; else echo "$2" | tr ' ' '\n' | tac | tr '\n' ' '; fi; }

# LP_SAMPLED_DEADLINE_S: no new round after that many seconds (the device's time is counted);
# LP_SAMPLED_KINETO_ONCE=1: one Kineto run of hf in round 1 (the earlier rounds' numbers are in README)
for i in $(seq 1 "$ROUNDS"); do
  if [ -n "${LP_SAMPLED_DEADLINE_S:-}" ] && [ $(( $(date +%s) - T0 )) -gt "$LP_SAMPLED_DEADLINE_S" ]; then
    echo "sampled: deadline reached before round $i"; break
  fi
  [ "$i" = 1 ] && [ "${LP_SAMPLED_KINETO_ONCE:-0}" = 1 ] && run hf kineto 1
  modes=$MODES; [ "$i" = 1 ] && modes="$MODES ${LP_SAMPLED_ONCE:-}"
  for prog in hf plain; do
    for m in $(order "$i" "$modes"); do
      run "$prog" "$m" "$i"
    done
  done
done

python3 bench/tracer/sample_check.py summary "$OUT" >"$OUT/summary.json"
for prog in hf plain; do
  for m in sampled auto; do   # the first sampled run (auto only when it sampled) against the exact one
    if [ -d "$OUT/trace_${prog}_exact_1" ] && [ -d "$OUT/trace_${prog}_${m}_1" ] && [ ! -f "$OUT/kernels_$prog.json" ] &&
       { [ $m = sampled ] || grep -q 'auto sampling on' "$OUT/inject_${prog}_auto_1.log" 2>/dev/null; }; then
      python3 bench/tracer/sample_check.py kernels "$OUT/trace_${prog}_exact_1" "$OUT/trace_${prog}_${m}_1" \
        >"$OUT/kernels_$prog.json" 2>&1
    fi
  done
  [ -d "$OUT/trace_${prog}_exact_1" ] && python3 bench/tracer/sample_check.py subsample "$OUT/trace_${prog}_exact_1" 8 2 \
    >"$OUT/subsample_$prog.json" 2>&1
  for m in sampled exact auto; do
    [ -d "$OUT/trace_${prog}_${m}_1" ] && python3 bench/tracer/sample_check.py steps "$OUT/trace_${prog}_${m}_1" \
      "$OUT/${prog}_${m}_1.txt" >"$OUT/steps_${prog}_$m.json" 2>&1
  done
done
du -sh "$OUT"/trace_* 2>/dev/null | head -20 >"$OUT/trace_sizes.txt"
grep -H 'sampling switches\|auto sampling' "$OUT"/inject_*.log >"$OUT/switches.txt" 2>/dev/null
pack
[ "${LP_KEEP_TRACES:-0}" = 1 ] || rm -rf "$OUT"/trace_*
cat "$OUT/summary.json"
