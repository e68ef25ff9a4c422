#!/bin/bash
# truth_call.sh: run 39's device call (bench/tracer/README.md "Run 39"): which reading of a kernel
# an unprofiled process matches, the one of a module loaded with CUPTI attached (exact mode) or
# without (the default, CUPTI detached for the warm-up).
#   1. bench/tracer/kernel_truth.py (each op of a llama-3.2-1b decode layer in a CUDA graph of
#      REPS copies, loaded inside `warmup`, timed by the program's own CUDA events every step) in
#      LP_TRUTH_ROUNDS (2) rounds of: plain (no tracer), exact (off), burst ($SPEC) and burstrec
#      ($SPEC with LLMPROF_TRACE_WARMUP=record: the default's schedule, modules loaded with CUPTI
#      attached), the order reversed in every other round; then Nsight Compute's
#      gpu__time_duration of its kernels in a plain process (--clock-control none
#      --cache-control none: as they run); `sample_check.py truth`
#   2. examples/hf_generate.py (llama-3.2-1b, 512-token prompt, 2 new tokens: every decode step is
#      one the default records, first=2) traced exact, burst and burstrec (6 generations each),
#      and under ncu (2 generations); `sample_check.py ncuvs`: per kernel name each trace's mean
#      against ncu's in the same steps
# Run from the repo root on the GPU machine with build/lib/libllmprof_inject.so (Release). Results
# in $OUT: truth.json, hf_ncuvs.json, progress.txt, truth.tar.xz (program outputs, logs, traces,
# ncu CSVs).
set -u
cd "$(dirname "$0")/../.."
R=${OUT:-/tmp/lp-truth-out}
mkdir -p "$R"
SRC=$PWD
INJ=$SRC/build/lib/libllmprof_inject.so
W=/tmp/lp-truth
rm -rf "$W"
mkdir -p "$W/truth" "$W/hf"
export PYTHONUNBUFFERED=1 LC_ALL=C
SPEC=${LP_TRUTH_SPEC:-every=16,burst=4,lead=2}
TRUTH="python3 $SRC/bench/tracer/kernel_truth.py --steps ${LP_TRUTH_STEPS:-150} --reps 20"
HF="python3 $SRC/examples/hf_generate.py --model llama-3.2-1b --prompt-len 512 --new-tokens 2 --warmup 1"
NCU=(ncu --nvtx --nvtx-include "LLM@decode_step/" --metrics gpu__time_duration.sum --clock-control none
	--cache-control none)
log() { echo "$(date +%T) $*" >>"$R/progress.txt"; }

run_mode() { # mode tag dir command...
	local mode=$1 tag=$2 dir=$3 wu=graphs spec=off
	shift 3
	case $mode in
	plain)
		timeout -k 5 300 "$@" >"$dir/$tag.txt" 2>"$dir/$tag.err"
		log "$tag rc=$?"
		return ;;
	exact) ;;
	burst) spec=$SPEC ;;
	burstrec) spec=$SPEC wu=record ;;
	esac
	env LLMPROF_TRACE_WARMUP=$wu LLMPROF_TRACE_SAMPLE=$spec CUDA_INJECTION64_PATH=$INJ \
		NVTX_INJECTION64_PATH=$INJ LLMPROF_TRACE_DIR="$dir/$tag" LLMPROF_TRACE_LOG="$dir/$tag.log" \
		timeout -k 5 300 "$@" >"$dir/$tag.txt" 2>"$dir/$tag.err"
	log "$tag rc=$? $spec warmup=$wu"
}

ncu_csv() { # name dir command...
	local name=$1 dir=$2
	shift 2
	"${NCU[@]}" -f -o "$dir/$name" "$@" >"$dir/$name.log" 2>&1
	log "$name ncu rc=$? $(grep -c '==PROF== Profiling' "$dir/$name.log") kernels"
	ncu -i "$dir/$name.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled \
		>"$dir/$name.csv" 2>>"$dir/$name.log"
	rm -f "$dir/$name.ncu-rep"
}

log "start $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $(ncu --version | tail -1)"
for r in $(seq 1 "${LP_TRUTH_ROUNDS:-2}"); do
	order="plain exact burst burstrec"
	[ $((r % 2)) = 0 ] && order="burstrec burst exact plain"
	for m in $order; do
		run_mode "$m" "${m}_$r" "$W/truth" $TRUTH
	done
done
ncu_csv ncu_truth "$W/truth" $TRUTH --steps 2
python3 bench/tracer/sample_check.py truth "$W/truth" >"$R/truth.json" 2>"$R/truth.err"
log "truth rc=$?"

for m in exact burst burstrec; do
	run_mode "$m" "$m" "$W/hf" $HF --iters 6
done
ncu_csv ncu_hf "$W/hf" $HF --iters 2
python3 bench/tracer/sample_check.py ncuvs "$W/hf/ncu_hf.csv" "$W/hf/exact" "$W/hf/burst" \
	"$W/hf/burstrec" >"$R/hf_ncuvs.json" 2>"$R/hf_ncuvs.err"
log "ncuvs rc=$?"
tar -C "$W" -cf - . | xz -T0 -6 >"$R/truth.tar.xz"
log "done"
