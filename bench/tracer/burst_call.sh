#!/bin/bash
# burst_call.sh: run 23's device calls (bench/tracer/README.md "Run 23"): sampled tracing in
# bursts, CUPTI detached between them. Steps (LP_BURST_STEPS, in this order, default
# "alone light turns"):
#   alone  one process at a time, LLMPROF_TRACE_LOG_CYCLES=1 (every attach and detach and their
#          parts in the tracer's log): hf with $LP_BURST, the same with lead=2, the unmodified
#          program with $LP_BURST; their step times and logs, the first one's trace kept
#   light  `llmprof run --mode light` of hf with trace.sample=$LP_BURST and with trace.sample=off,
#          and of the unmodified program with $LP_BURST (summary.json self_check; the kernel
#          tables, sampled with intervals against exact)
#   turns  cost_call.sh's turns: plain, the burst modes, the current sampled mode, exact, Kineto
#          and nsys on both programs (LP_BURST_TURNS; LP_COST_* as cost_call.sh reads them)
# Run from the repo root on the GPU machine with build/ (Release). Everything lands in $OUT:
# alone.tgz, light.tgz, cost.tgz (+ cost_call.txt), env.txt.
set -u
cd "$(dirname "$0")/../.."
R=${OUT:-/tmp/lp-burst-out}
mkdir -p "$R"
SRC=$PWD
LIB=$SRC/build/lib/libllmprof_inject.so
L=$SRC/build/bin/llmprof
BURST=${LP_BURST:-every=64,burst=4}
STEPS=${LP_BURST_STEPS:-alone light turns}
HF="python3 examples/hf_generate.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --step-times"
PLAIN="python3 examples/hf_generate_plain.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --step-times"
export PYTHONUNBUFFERED=1
case " $STEPS " in *" alone "*)
	A=/tmp/lba; rm -rf "$A"; mkdir -p "$A"
	alone() { # TAG SPEC CMD...: one traced process alone
		local tag=$1 spec=$2 t0
		shift 2
		t0=$(date +%s)
		env CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_SAMPLE=$spec LLMPROF_TRACE_LOG_CYCLES=1 \
			LLMPROF_TRACE_DIR=$A/trace_$tag LLMPROF_TRACE_LOG=$A/inject_$tag.log PYTHONPATH=$SRC/python/llmprof_auto/site:$SRC/python \
			taskset -c 1-15 timeout -k 5 120 "$@" >"$A/$tag.txt" 2>"$A/$tag.err"
		echo "$tag rc=$? $(( $(date +%s) - t0 ))s" >>"$A/progress.txt"
	}
	alone hf_burst "$BURST" $HF --iters 3 --warmup 1
	alone hf_lead "$BURST,lead=2" $HF --iters 3 --warmup 1
	alone plain_burst "$BURST" $PLAIN --iters 4
	rm -rf "$A/trace_hf_lead" "$A/trace_plain_burst"
	tar -C "$A" -cf - . | xz -T0 -6 >"$R/alone.tar.xz"
	;;
esac
case " $STEPS " in *" light "*)
	W=/tmp/lbl; rm -rf "$W"; mkdir -p "$W/keep"
	light() { # ID SPEC "PROGRAM ARGS" (the program's path from the tree's root)
		local t0=$(date +%s) d
		(cd "$W" && timeout -k 5 170 "$L" run --mode light run.id=$1 "trace.sample=$2" -- $3 \
			>"$W/$1.term" 2>&1)
		echo "$1 rc=$? $(( $(date +%s) - t0 ))s" >>"$W/keep/progress.txt"
		d=$W/tmp/stage2/$1; mkdir -p "$W/keep/$1"; cp "$W/$1.term" "$W/keep/$1/terminal.txt"
		cp "$d"/*.md "$d"/*.json "$W/keep/$1/" 2>/dev/null
		cp "$d"/trace/workload.stdout "$W/keep/$1/" 2>/dev/null
	}
	light hfburst "$BURST" "${HF/examples/$SRC/examples} --iters 3 --warmup 1"
	light hfexact off "${HF/examples/$SRC/examples} --iters 3 --warmup 1"
	light plainburst "$BURST" "${PLAIN/examples/$SRC/examples} --iters 4"
	cp -a "$W/tmp/stage2/hfburst/trace" "$W/keep/hfburst/trace" 2>/dev/null
	tar -C "$W/keep" -cf - . | xz -T0 -6 >"$R/light.tar.xz"
	;;
esac
case " $STEPS " in *" turns "*)
	OUT=$R LP_COST_WORK=${LP_COST_WORK:-/tmp/lb} LP_COST_STEPS=turns LP_BURST=$BURST LP_COST_PLAIN_ITERS=${LP_COST_PLAIN_ITERS:-7} \
		LP_COST_HF_ITERS=${LP_COST_HF_ITERS:-6} LP_COST_CPUS=${LP_COST_CPUS:-1-15} \
		LP_COST_TURN_STOP_S=${LP_COST_TURN_STOP_S:-190} LP_COST_TURN_PROC_S=${LP_COST_TURN_PROC_S:-250} \
		LP_COST_TURNS=${LP_BURST_TURNS:-"hf_plain_t hf_plain_u hf_burst_t hf_burst_u hf_burst2_t hf_sampled_t hf_exact_t \
hf_kineto_t hf_nsys_t plain_plain_t plain_plain_u plain_burst_t plain_burst_u plain_burst2_t plain_sampled_t \
plain_exact_t plain_nsys_t"} bash bench/tracer/cost_call.sh >"$R/cost_call.txt" 2>&1
	;;
esac
ls -la "$R"
