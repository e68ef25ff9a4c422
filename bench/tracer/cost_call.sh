#!/bin/bash
# cost_call.sh: issue 24's cost measurement as one device call (bench/tracer/README.md "Runs 18+").
# Many short processes instead of one per mode: rounds of every mode, the order reversed in every
# other round, each process pinned to the same CPU cores (taskset -c $LP_COST_CPUS) and under
# `timeout`; the small outputs are packed into $OUT/cost.tgz after every process, so a call stopped
# at its limit still brings back what ran. Run from the repo root on the GPU machine with
# build/lib/libllmprof_inject.so (Release).
#
# Programs (both llama-3.2-1b shape, eager, random weights, 512-token prompt, --step-times):
#   hf     examples/hf_generate.py, its own NVTX stages; 1 warm-up + LP_COST_HF_ITERS measured (2)
#   hfo    the same with --nvtx-ops off (stage ranges only)
#   plain  examples/hf_generate_plain.py, an unmodified generate(); LP_COST_PLAIN_ITERS generations
#          (3), the first left out; in every traced mode (and `shim`) python/llmprof_auto is on
#          PYTHONPATH, as under `llmprof run`
# Modes: plain (nothing loaded), null (a CUDA injection that does nothing: bench/tracer/null_inject.c),
# cudainj (the tracer as CUDA injection only, CUPTI never started), nvtxinj (the tracer as NVTX
# injection only), lazy (NVTX injection only, CUPTI started from it: LLMPROF_TRACE_CUPTI_FROM_NVTX=1,
# skip schedule), skipdet / sampleddet (skip / sampled with CUPTI detached in every skipped unit:
# LLMPROF_TRACE_SKIP_DETACH=1, a diagnostic), shim (plain only: python/llmprof_auto without the tracer), nvtx
# (the tracer without CUPTI: LLMPROF_TRACE_CUPTI=0), skip (every=1000000,first=0: one step a
# generation recorded, the others skipped; skipnoev: without the stage ranges' CUDA events,
# LLMPROF_TRACE_STAGE_EVENTS=0; skipnocb: without the launch callbacks, LLMPROF_TRACE_API_CALLBACKS=0), sampled (LLMPROF_TRACE_SAMPLE=$LP_SAMPLE,
# default every=8,first=2,pick=first), auto, exact (off), kineto (hf only), nsys (LP_NSYS, LP_NSYS_LIBS),
# burst (LLMPROF_TRACE_SAMPLE=$LP_BURST, default every=64,burst=4: CUPTI detached between bursts, run 23),
# burstlead (the same, the flush thread attaching LP_BURST_LEAD (2) units ahead), burst2
# (LP_BURST2, default every=128,burst=8), delay (auto, CUPTI started late:
# LLMPROF_TRACE_CUPTI_DELAY=$LP_COST_CUPTI_DELAY, default 4; delay2: the same with LP_BURST2; delay1: =1),
# late2..late9 (auto, LLMPROF_TRACE_CUPTI_DELAY=2..9), eager1 / eagerauto / eagerplain (delay1 / auto /
# plain with CUDA_MODULE_LOADING=EAGER), afterwu (auto, LLMPROF_TRACE_CUPTI_DELAY=warmup), pwgen / pwcublas
# (delay1 after one generation without stage ranges / one matrix product: LLMPROF_BENCH_PREWARM, hf
# only), autoempty (auto, the allocator's cache emptied after the warm-up), wurec (auto with
# LLMPROF_TRACE_WARMUP=record: CUPTI kept inside the warmup range, the default until run 30), autowu
# (auto, the shim's first generate() call inside a warmup range: LLMPROF_AUTO_WARMUP=1, run.auto_warmup),
# wugraphs (auto with LLMPROF_TRACE_WARMUP=graphs: the graph node callbacks kept inside the warm-up,
# the default since run 31), wudetach (=detach: the default of run 30), autorec (auto with
# LLMPROF_TRACE_BURST_REATTACH=parentrec: the kinds on at decode_all's pop, run 32's next step),
# autolead (auto with LLMPROF_TRACE_REATTACH_LEAD_MS=50: the foreseen-end attach by time),
# autowudec / autowuk4 (autowu with the warm-up range from the first decode step / around the first
# 4 decode steps only: LLMPROF_BENCH_WARMUP_FROM=decode / =steps=4, run 33),
# cuptild (no tracer, libcupti preloaded: LP_CUPTI_LIB or the loader's), burstparent ($LP_BURST with LLMPROF_TRACE_BURST_REATTACH=parent:
# attached again at decode_all's pop, for the next prefill), burstskip (one
# burst of one unit a generation: the detached steady state after a cycle).
# LP_COST_MODES_HF / LP_COST_MODES_PLAIN pick the modes of the rounds, LP_COST_ONCE modes run in
# round 1 only (e.g. "kineto nsys").
#
# Steps, in this order (LP_COST_STEPS, default "traces launch rounds"):
#   traces  round 1 of hf starts with `exact` and `sampled`; their traces are kept and brought back
#           as $OUT/trace_hf_exact.tar.xz and trace_hf_sampled.tar.xz (split into .partNN files of
#           15 MB when larger than that) for the statistics' offline check
#   launch  bench/tracer/launch_cost (built here with nvcc, or LP_COST_LAUNCH_BIN) in the modes
#           plain, nvtx, exact, skip (--skip: the sections run inside an unrecorded unit) and
#           skipold (the same with LLMPROF_TRACE_SKIP_ALL=0), LP_COST_LAUNCH_ROUNDS (2) rounds
#   rounds  rounds of both programs until LP_COST_ROUNDS (6) or LP_COST_STOP_S (500 s after the
#           start: no new process after that)
#   attach  bench/tracer/cupti_attach (CUPTI's cost attached, idle and detached), 2 rounds (run 22)
#   opcost  bench/tracer/torch_opcost.py per mode (LP_COST_OPCOST_MODES), LP_COST_OPCOST_ROUNDS (2)
#           rounds, the order reversed in every other one (run 22)
#   turns   (instead of traces and rounds; run 19) one process per tag of LP_COST_TURNS
#           (PROG_MODE_X, X any letter: a second process of a mode gets another), all started at
#           once; each stops itself after every generation and the measured generations run one
#           at a time, round-robin (turns() below); LP_COST_TURN_STOP_S (460) after the start no
#           new turn is given, the rest run to their end at once and are marked released.
#           LP_COST_TURN_STEPS=K: step-level turns, every K decode steps (README "Step-level
#           turns"; the programs get LLMPROF_BENCH_TURN_STEPS=K), driven by turn_driver.py
# Then bench/tracer/sample_check.py cost writes cost.json (per mode: the generations' decode
# ms/step, median and spread, overhead against plain paired by round and generation, step
# quantiles, recorded vs skipped steps, launch_cost per mode).
set -u
cd "$(dirname "$0")/../.."
R=${OUT:-/tmp/lp-cost-out}
W=${LP_COST_WORK:-/tmp/lp-cost}
mkdir -p "$R" "$W"
T0=$(date +%s)
export PYTHONUNBUFFERED=1
LIB=$PWD/build/lib/libllmprof_inject.so
NULL_LIB=$W/null_inject.so  # bench/tracer/null_inject.c: the injection mechanism alone
cc -O2 -shared -fPIC -o "$NULL_LIB" bench/tracer/null_inject.c 2>"$W/null_build.txt"
CPUS=${LP_COST_CPUS:-2-9}
STOP_S=${LP_COST_STOP_S:-500}
PROC_S=${LP_COST_PROC_S:-90}
SAMPLE=${LP_SAMPLE:-every=8,first=2,pick=first}  # pick=first: the recorded steps follow from the schedule
BURST=${LP_BURST:-every=64,burst=4}  # bursts (run 23): CUPTI detached between them
NSYS=${LP_NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
NSYS_LIBS=${LP_NSYS_LIBS:-$PWD/.carry-nsyslibs}
SITE=$PWD/python/llmprof_auto/site:$PWD/python
# libcupti for mode cuptild: LP_CUPTI_LIB, else the first the loader knows, else CUDA's own
CUPTI_SO=${LP_CUPTI_LIB:-$(ldconfig -p 2>/dev/null | awk '/libcupti\.so/ {print $NF; exit}')}
[ -n "$CUPTI_SO" ] || CUPTI_SO=$(ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda/lib64/libcupti.so* 2>/dev/null | head -n 1)
case " ${LP_COST_TURNS:-} ${LP_COST_MODES_HF:-} ${LP_COST_MODES_PLAIN:-} " in
*cuptild*) echo "cuptild: LD_PRELOAD=${CUPTI_SO:-(none found)}" >>"$W/progress.txt" ;;
esac
HF=${LP_COST_HF_CMD:-"python3 examples/hf_generate.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters ${LP_COST_HF_ITERS:-2} --warmup 1 --step-times"}
PLAIN=${LP_COST_PLAIN_CMD:-"python3 examples/hf_generate_plain.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters ${LP_COST_PLAIN_ITERS:-3} --step-times"}
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu,power.draw --format=csv
	python3 -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__)"
	LD_LIBRARY_PATH=$NSYS_LIBS "$NSYS" --version
	nproc; uptime; lscpu | grep -i 'model name\|^CPU(s)\|Thread'
	echo "cpus for the processes: $CPUS"
	git log --oneline -1 2>/dev/null
} >"$R/env.txt" 2>&1

# the machine's own state while it runs: CPU steal (st), run queue, every 2 s
VMSTAT_PID=
if command -v vmstat >/dev/null; then
	vmstat -t 2 >"$W/vmstat.txt" 2>&1 &
	VMSTAT_PID=$!
fi
trap '[ -n "$VMSTAT_PID" ] && kill "$VMSTAT_PID" 2>/dev/null' EXIT

pack() {
	(cd "$W" && tar czf "$R/cost.tgz.tmp" --exclude='trace_*' --exclude='auto_*' --exclude='nsys_*' . 2>/dev/null &&
		mv "$R/cost.tgz.tmp" "$R/cost.tgz")
}

late() { [ $(( $(date +%s) - T0 )) -gt "$STOP_S" ]; }

# keep TAG NAME: the trace of process TAG as $R/NAME.tar.xz (split when over 15 MB)
keep() {
	local f=$R/$2.tar.xz
	[ -d "$W/trace_$1" ] || return 0
	tar -C "$W" -cf - "trace_$1" | xz -T0 -6 >"$f"
	if [ "$(stat -c %s "$f")" -gt 15728640 ]; then
		split -b 15M -d "$f" "$f.part" && rm -f "$f"
	fi
	ls -la "$R" | grep "$2" >>"$W/kept.txt"
}

# mode_env MODE: sets E to the environment of a traced or injected mode (empty for plain, shim,
# kineto, nsys); returns 1 for a mode it does not know
mode_env() {
	local s=$SAMPLE cupti=1 tr=(LLMPROF_TRACE_DIR=$W/trace_$2 LLMPROF_TRACE_LOG=$W/inject_$2.log)
	E=()
	case $1 in
	plain | shim | kineto | nsys) return 0 ;;
	# eagerplain (run 28's next step): plain with every module loaded at the context's creation
	# (CUDA_MODULE_LOADING=EAGER), the reference of eager1 and eagerauto
	eagerplain) E=(CUDA_MODULE_LOADING=EAGER); return 0 ;;
	null) E=(CUDA_INJECTION64_PATH=$NULL_LIB); return 0 ;;
	# cuptild (run 27's next step): no tracer, libcupti loaded at the start (LD_PRELOAD) and never
	# initialized: whether its presence alone, before the program's set-up, costs the ~3 points
	cuptild) E=(LD_PRELOAD=$CUPTI_SO); return 0 ;;
	cudainj) E=(CUDA_INJECTION64_PATH=$LIB LLMPROF_TRACE_CUPTI=0 LLMPROF_TRACE_SAMPLE=off "${tr[@]}"); return 0 ;;
	nvtxinj) E=(NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_SAMPLE=off "${tr[@]}"); return 0 ;;
	lazy) E=(NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_CUPTI_FROM_NVTX=1 LLMPROF_TRACE_SAMPLE=every=1000000,first=0,pick=first "${tr[@]}"); return 0 ;;
	burst) s=$BURST ;;
	burstlead) s=$BURST,lead=${LP_BURST_LEAD:-2} ;;
	burst2) s=${LP_BURST2:-every=128,burst=8} ;;
	burstparent) E=(LLMPROF_TRACE_BURST_REATTACH=parent); s=$BURST ;;
	burstskip) s=every=1000000,burst=1,first=0,pick=first ;;
	sampled) ;;
	sampleddet) E=(LLMPROF_TRACE_SKIP_DETACH=1) ;;
	exact) s=off ;;
	auto) s=auto ;;
	nvtx) s=off; cupti=0 ;;
	skip) s=every=1000000,first=0,pick=first ;;
	skipnoev) E=(LLMPROF_TRACE_STAGE_EVENTS=0); s=every=1000000,first=0,pick=first ;;
	skipnocb) E=(LLMPROF_TRACE_API_CALLBACKS=0); s=every=1000000,first=0,pick=first ;;
	skipdet) E=(LLMPROF_TRACE_SKIP_DETACH=1); s=every=1000000,first=0,pick=first ;;
	# delay (run 26's next step): auto, CUPTI started only before the LP_COST_CUPTI_DELAY-th
	# generation (4: hf_generate.py's warm-up and 2 measured ones without it), so one process has
	# steps before CUPTI's first attach and detached steps after it (sample_check.py places);
	# delay2: the same with LP_BURST2's schedule (run 27: every=128 beside the default); delay1:
	# auto with CUPTI started at the first stage range's push (LLMPROF_TRACE_CUPTI_DELAY=1, run 27's
	# next step: the program's set-up without CUPTI, its first generation with it)
	delay) E=(LLMPROF_TRACE_CUPTI_DELAY=${LP_COST_CUPTI_DELAY:-4}); s=auto ;;
	delay1) E=(LLMPROF_TRACE_CUPTI_DELAY=1); s=auto ;;
	delay2) E=(LLMPROF_TRACE_CUPTI_DELAY=${LP_COST_CUPTI_DELAY:-4}); s=${LP_BURST2:-every=128,burst=8} ;;
	# run 28's next step: lateN, auto with CUPTI started before the N-th generation (N = 2 to 9,
	# one process each beside the others: which generation's start, under CUPTI, costs); eager1
	# and eagerauto, delay1 and auto with every module loaded at the context's creation
	# (CUDA_MODULE_LOADING=EAGER: before CUPTI's start in eager1, under it in eagerauto): whether
	# kernels first loaded while CUPTI is attached keep a cost after its detach
	late[2-9]) E=(LLMPROF_TRACE_CUPTI_DELAY=${1#late}); s=auto ;;
	eager1) E=(CUDA_MODULE_LOADING=EAGER LLMPROF_TRACE_CUPTI_DELAY=1); s=auto ;;
	eagerauto) E=(CUDA_MODULE_LOADING=EAGER); s=auto ;;
	# run 29's next step: afterwu, auto with CUPTI started at the pop of the program's warmup range
	# (LLMPROF_TRACE_CUPTI_DELAY=warmup; the unmodified program marks none: its first stage range)
	afterwu) E=(LLMPROF_TRACE_CUPTI_DELAY=warmup); s=auto ;;
	# and what the first generation does under CUPTI that costs (hf_generate.py's
	# LLMPROF_BENCH_PREWARM, plain_common.bench_prewarm): pwgen, delay1 after one generation
	# without stage ranges (CUPTI starts after it); pwcublas, delay1 after one matrix product
	# (cuBLAS's handle); autoempty, auto with the allocator's cache emptied after the warm-up
	pwgen) E=(LLMPROF_BENCH_PREWARM=gen LLMPROF_TRACE_CUPTI_DELAY=1); s=auto ;;
	pwcublas) E=(LLMPROF_BENCH_PREWARM=cublas LLMPROF_TRACE_CUPTI_DELAY=1); s=auto ;;
	autoempty) E=(LLMPROF_BENCH_PREWARM=empty); s=auto ;;
	# run 30: auto as it was before CUPTI detached for the warm-up by default
	wurec) E=(LLMPROF_TRACE_WARMUP=record); s=auto ;;
	autowu) E=(LLMPROF_AUTO_WARMUP=1); s=auto ;;
	wugraphs) E=(LLMPROF_TRACE_WARMUP=graphs); s=auto ;;
	wudetach) E=(LLMPROF_TRACE_WARMUP=detach); s=auto ;;
	# run 32's next step: auto with the kinds turned on by the flush thread at decode_all's pop
	# (LLMPROF_TRACE_BURST_REATTACH=parentrec), not at the next prefill's push
	autorec) E=(LLMPROF_TRACE_BURST_REATTACH=parentrec); s=auto ;;
	# and the foreseen-end attach 50 ms ahead of the generation's end instead of 4 units
	autolead) E=(LLMPROF_TRACE_REATTACH_LEAD_MS=50); s=auto ;;
	# run 35: auto whose bursts switch CUPTI's kinds and launch callbacks, attached between them
	# (LLMPROF_TRACE_BURST_SWITCH=kinds), not detached: no attach of 11-17 ms per burst
	autokinds) E=(LLMPROF_TRACE_BURST_SWITCH=kinds); s=auto ;;
	# and the foreseen last unit waiting for the attach ahead of the generation's end (run 35's
	# candidate, the default since run 36: autosettle is auto; autonosettle the former default)
	autosettle) E=(LLMPROF_TRACE_SETTLE_END=1); s=auto ;;
	autonosettle) E=(LLMPROF_TRACE_SETTLE_END=0); s=auto ;;
	# run 38: auto with gen=0 (a generation that auto's gen= would trace exactly, by run 37's 200 ms
	# or by its launch calls since, sampled as any other, its bursts' switches paid): where the cost
	# of exact and of bursts cross
	autog0) s=auto,gen=0 ;;
	# run 33: the shim's warm-up range from the first generation's first decode step (its prefill
	# recorded): is the cost that CUPTI leaves in the first generation its decode's or its prefill's?
	autowudec) E=(LLMPROF_AUTO_WARMUP=1 LLMPROF_BENCH_WARMUP_FROM=decode); s=auto ;;
	# and only its first 4 decode steps in the range (inside decode_all)
	autowuk4) E=(LLMPROF_AUTO_WARMUP=1 LLMPROF_BENCH_WARMUP_FROM=steps=4); s=auto ;;
	*) return 1 ;;
	esac
	# LP_COST_FLUSH_MS: the tracer's flush period (LLMPROF_TRACE_FLUSH_MS, 500 ms; its CUPTI flush
	# period too). In step turns a process runs 1/N of the wall time, so a wall-clock period comes
	# N times as often per step as in a process running alone: N x 500 keeps it per step
	[ -n "${LP_COST_FLUSH_MS:-}" ] && tr+=(LLMPROF_TRACE_FLUSH_MS=$LP_COST_FLUSH_MS)
	case $1 in burst*) E+=(LLMPROF_TRACE_LOG_CYCLES=1 CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_SAMPLE=$s LLMPROF_TRACE_CUPTI=1 "${tr[@]}"); return 0 ;; esac
	E+=(CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_SAMPLE=$s LLMPROF_TRACE_CUPTI=$cupti "${tr[@]}")
}

# spawn PROG MODE TAG: the process of one mode, output in $W/TAG.txt (.err), trace in $W/trace_TAG
spawn() {
	local prog=$1 mode=$2 tag=$3 base out auto=()
	base=$HF; [ "$prog" = plain ] && base=$PLAIN; [ "$prog" = hfo ] && base="$HF --nvtx-ops off"
	[ "$prog" = opcost ] && base="python3 bench/tracer/torch_opcost.py --tag $tag"
	[ "$prog" = plain ] && [ "$mode" != plain ] && [ "$mode" != cuptild ] && [ "$mode" != eagerplain ] &&
		auto=(PYTHONPATH=$SITE LLMPROF_AUTO_DIR=$W/auto_$tag)
	out=$W/$tag.txt
	mode_env "$mode" "$tag" || { echo "unknown mode $mode" >"$W/$tag.err"; return 2; }
	case $mode in
	kineto) taskset -c "$CPUS" timeout -k 5 "$PROC_S" $base --kineto >"$out" 2>"$W/$tag.err" ;;
	nsys)
		env "${auto[@]}" LD_LIBRARY_PATH=$NSYS_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} taskset -c "$CPUS" \
			timeout -k 5 "$PROC_S" "$NSYS" profile -o "$W/nsys_$tag" --force-overwrite true --trace=cuda,nvtx \
			--sample=none --cpuctxsw=none $base >"$out" 2>"$W/$tag.err"
		rm -f "$W/nsys_$tag".* ;;
	*) env "${auto[@]}" "${E[@]}" taskset -c "$CPUS" timeout -k 5 "$PROC_S" $base >"$out" 2>"$W/$tag.err" ;;
	esac
}

run() { # run PROG MODE ROUND
	local prog=$1 mode=$2 i=$3 tag=$1_$2_$3 t1 rc out=$W/$1_$2_$3.txt
	late && { echo "$(date +%T) $tag skipped: past LP_COST_STOP_S" >>"$W/progress.txt"; return 0; }
	[ "$mode" = kineto ] && [ "$prog" = plain ] && return 0
	[ "$mode" = shim ] && [ "$prog" != plain ] && return 0
	t1=$(date +%s.%N)
	spawn "$prog" "$mode" "$tag"
	rc=$?
	echo "$(date +%T) $tag rc=$rc $(grep -c '"iter"' "$out" 2>/dev/null) iterations in $(python3 -c "import time; print(round(time.time() - $t1, 1))")s" >>"$W/progress.txt"
	if [ "$i" = 1 ] && [ "$prog" = hf ] && { [ "$mode" = exact ] || [ "$mode" = sampled ]; } &&
		case " ${LP_COST_STEPS:-traces launch rounds} " in *" traces "*) true ;; *) false ;; esac; then
		keep "$tag" "trace_hf_$mode"
	fi
	rm -rf "$W/trace_$tag"
	pack
}

order() { if [ $(( $1 % 2 )) = 1 ]; then echo "$2"; else echo "$2" | tr ' ' '\n' | tac | tr '\n' ' '; fi; }

launch() {
	local bin=${LP_COST_LAUNCH_BIN:-} i m
	if [ -z "$bin" ]; then
		bin=$W/launch_cost
		nvcc -O2 -arch=native bench/tracer/launch_cost.cu -o "$bin" -ldl -lcuda >"$W/launch_build.txt" 2>&1 ||
			{ echo "launch_cost: build failed" >>"$W/progress.txt"; return 0; }
	fi
	for i in $(seq 1 "${LP_COST_LAUNCH_ROUNDS:-2}"); do
		for m in $(order "$i" "plain nvtx exact skip skipold"); do
			local args=(--batches "${LP_COST_LAUNCH_BATCHES:-150}" --long "${LP_COST_LAUNCH_LONG:-131072}") e=()
			case $m in
			nvtx) e=(LLMPROF_TRACE_CUPTI=0) ;;
			exact) e=(LLMPROF_TRACE_SAMPLE=off) ;;
			skip) e=(LLMPROF_TRACE_SAMPLE=every=2,first=0); args+=(--skip) ;;
			skipold) e=(LLMPROF_TRACE_SAMPLE=every=2,first=0 LLMPROF_TRACE_SKIP_ALL=0); args+=(--skip) ;;
			esac
			if [ "$m" = plain ]; then
				taskset -c "$CPUS" timeout -k 5 60 "$bin" "${args[@]}" >"$W/launch_${m}_$i.json" 2>&1
			else
				env "${e[@]}" CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB LLMPROF_TRACE_DIR=$W/trace_launch \
					LLMPROF_TRACE_LOG=$W/inject_launch_${m}_$i.log taskset -c "$CPUS" timeout -k 5 60 "$bin" "${args[@]}" \
					>"$W/launch_${m}_$i.json" 2>&1
				rm -rf "$W/trace_launch"
			fi
			echo "$(date +%T) launch_${m}_$i rc=$?" >>"$W/progress.txt"
		done
	done
	pack
}

# ---- turns: all processes start together, then take turns of one generation each ----
# Each program stops itself after every generation (examples/plain_common.py bench_turn, with
# LLMPROF_BENCH_TURN set): the start-ups (imports, model, warm-up generation: not measured) run at
# the same time, the measured generations one at a time, round-robin, the order reversed in every
# other cycle, so the machine's slow drifts fall on every mode alike. A process's exit (trace
# written, CUPTI detached, nsys's report) is part of its last turn. turns.txt: one line per turn.
state_of() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
pid_of() { local p _t; read -r p _t <"$TD/$1.stop" 2>/dev/null; echo "${p:-}"; } # the stop file: "PID TIME"
stopped() { # TAG: its stop file is there and its process is stopped (T)
	local f=$TD/$1.stop p
	[ -f "$f" ] || return 1
	p=$(pid_of "$1")
	[ -n "$p" ] && [ "$(state_of "$p")" = T ]
}
tree_of() { local c; echo "$1"; for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree_of "$c"; done; }
gone() { [ "$(state_of "$1")" = "" ] || [ "$(state_of "$1")" = Z ]; }

turns() {
	local specs=($1) tag prog mode pid i c t0 order_list deadline=$(( T0 + ${LP_COST_TURN_STOP_S:-460} ))
	declare -gA ROOT=()
	case ${LP_COST_TURN_STEPS:-} in *[!0-9]* | 0*)
		echo "$(date +%T) turns: LP_COST_TURN_STEPS=$LP_COST_TURN_STEPS: expected a whole number >= 1" >>"$W/progress.txt"
		return 2 ;;
	esac
	TD=$W/turn; rm -rf "$TD"; mkdir -p "$TD"
	for tag in "${specs[@]}"; do
		prog=${tag%%_*}; mode=${tag#*_}; mode=${mode%_*}
		(export LLMPROF_BENCH_TURN=$TD LLMPROF_BENCH_TAG=$tag; PROC_S=${LP_COST_TURN_PROC_S:-560}
			[ -n "${LP_COST_TURN_STEPS:-}" ] && export LLMPROF_BENCH_TURN_STEPS=$LP_COST_TURN_STEPS
			spawn "$prog" "$mode" "$tag") &
		ROOT[$tag]=$!
	done
	echo "$(date +%T) turns: started ${specs[*]}" >>"$W/progress.txt"
	# start-ups: until every process stopped after its first generation (or ended)
	while :; do
		local waiting=0
		for tag in "${specs[@]}"; do
			stopped "$tag" || gone "${ROOT[$tag]}" || waiting=1
		done
		[ $waiting = 0 ] && break
		[ "$(date +%s)" -gt "$deadline" ] && break
		sleep 0.2
	done
	echo "$(date +%T) turns: start-ups done" >>"$W/progress.txt"
	if [ -n "${LP_COST_TURN_STEPS:-}" ]; then
		# step turns: thousands of turns; bench/tracer/turn_driver.py polls without forking (a
		# handoff well under 1 ms) on its own CPU (LP_COST_DRIVER_CPUS, 0: outside the processes'
		# LP_COST_CPUS), one line per cycle in turns_cycles.txt, its summary into progress.txt
		# (packed every 30 s on the driver's CPU meanwhile, so that a call stopped at its limit
		# still brings back the turns so far)
		# LP_COST_THREADS_AT=C,C...: every process's threads and their CPUs after those cycles, in
		# threads.txt (turn_driver.py --threads-at)
		local roots=() dcpu=${LP_COST_DRIVER_CPUS:-0} drv n=0 rc th=()
		for tag in "${specs[@]}"; do roots+=("$tag=${ROOT[$tag]}"); done
		[ -n "${LP_COST_THREADS_AT:-}" ] && th=(--threads-at "$LP_COST_THREADS_AT" --threads-log "$W/threads.txt")
		taskset -c "$dcpu" python3 bench/tracer/turn_driver.py --dir "$TD" --deadline "$deadline" \
			--steps "$LP_COST_TURN_STEPS" --log "$W/turns_cycles.txt" "${th[@]}" "${roots[@]}" >>"$W/progress.txt" 2>&1 &
		drv=$!
		while kill -0 "$drv" 2>/dev/null; do
			sleep 1
			n=$((n + 1))
			[ $((n % 30)) = 0 ] && (taskset -pc "$dcpu" "$BASHPID" >/dev/null 2>&1; pack)
		done
		wait "$drv"
		rc=$?
		echo "$(date +%T) turns: driver done (rc=$rc)" >>"$W/progress.txt"
	else
		order_list="${specs[*]}"
		for c in $(seq 1 200); do
			local alive=0
			for tag in $(order "$c" "$order_list"); do
				gone "${ROOT[$tag]}" && continue
				alive=1
				if [ "$(date +%s)" -gt "$deadline" ]; then
					break 2
				fi
				stopped "$tag" || continue
				pid=$(pid_of "$tag")
				rm -f "$TD/$tag.stop"
				t0=$(date +%s.%N)
				kill -CONT "$pid"
				while ! stopped "$tag" && ! gone "${ROOT[$tag]}" && [ "$(date +%s)" -le $(( deadline + 60 )) ]; do
					sleep 0.02
				done
				echo "$tag $c $t0 $(date +%s.%N)" >>"$W/turns.txt"
			done
			[ $alive = 0 ] && break
			pack
		done
	fi
	# past the deadline: the rest run to their end at once (their later generations overlap)
	touch "$TD/release"
	for tag in "${specs[@]}"; do
		gone "${ROOT[$tag]}" && continue
		echo "$(date +%T) turns: $tag released at the deadline" >>"$W/progress.txt"
		[ -f "$TD/$tag.stop" ] && kill -CONT "$(pid_of "$tag")"
	done
	local until=$(( $(date +%s) + 60 ))
	while [ "$(date +%s)" -le $until ]; do # 60 s at most, then the process trees are ended (by pid)
		local left=0
		for tag in "${specs[@]}"; do gone "${ROOT[$tag]}" || left=1; done
		[ $left = 0 ] && break
		sleep 0.2
	done
	for tag in "${specs[@]}"; do
		gone "${ROOT[$tag]}" && continue
		echo "$(date +%T) turns: $tag ended (TERM) after the deadline" >>"$W/progress.txt"
		kill -TERM $(tree_of "${ROOT[$tag]}") 2>/dev/null
	done
	wait "${ROOT[@]}" 2>/dev/null # not vmstat
	echo "$(date +%T) turns: done" >>"$W/progress.txt"
	pack
}

# ---- opcost: torch_opcost.py (per-operation costs in PyTorch) per mode, in rounds ----
opcost() {
	local i m
	for i in $(seq 1 "${LP_COST_OPCOST_ROUNDS:-2}"); do
		for m in $(order "$i" "${LP_COST_OPCOST_MODES:-plain null cudainj nvtxinj nvtx lazy skip skipnoev exact}"); do
			late && break 2
			PROC_S=${LP_COST_OPCOST_PROC_S:-60} spawn opcost "$m" "opcost_${m}_$i"
			echo "$(date +%T) opcost_${m}_$i rc=$?" >>"$W/progress.txt"
			rm -rf "$W/trace_opcost_${m}_$i"
		done
		pack
	done
}

# ---- attach: cupti_attach (CUPTI attached, idle, detached; attach/detach times), plain and under
# the null injection ----
attach() {
	local i
	nvcc -O2 -arch=native bench/tracer/cupti_attach.cu -o "$W/cupti_attach" -lcupti -lcuda >"$W/attach_build.txt" 2>&1 ||
		{ echo "cupti_attach: build failed" >>"$W/progress.txt"; return 0; }
	for i in 1 2; do
		taskset -c "$CPUS" timeout -k 5 60 "$W/cupti_attach" >"$W/attach_plain_$i.json" 2>&1
		env CUDA_INJECTION64_PATH=$NULL_LIB taskset -c "$CPUS" timeout -k 5 60 "$W/cupti_attach" >"$W/attach_null_$i.json" 2>&1
		echo "$(date +%T) attach round $i done" >>"$W/progress.txt"
	done
	pack
}

STEPS=${LP_COST_STEPS:-traces launch rounds}
case " $STEPS " in *" attach "*) attach ;; esac
case " $STEPS " in *" opcost "*) opcost ;; esac
MH=${LP_COST_MODES_HF:-plain sampled exact}
MP=${LP_COST_MODES_PLAIN:-plain shim sampled exact}
# with the traces step, hf's round 1 starts with exact and sampled (the order then alternates)
case " $STEPS " in *" traces "*) MH="exact sampled $(echo " $MH " | sed 's/ exact / /; s/ sampled / /')" ;; esac
case " $STEPS " in *" turns "*)
	case " $STEPS " in *" launch "*) launch ;; esac
	turns "${LP_COST_TURNS:-hf_plain_t hf_sampled_t hf_exact_t hf_kineto_t hf_nsys_t plain_plain_t plain_shim_t plain_sampled_t plain_exact_t plain_nsys_t}"
	python3 bench/tracer/sample_check.py cost "$W" "$SAMPLE" >"$W/cost.json" 2>&1
	pack
	cat "$W/progress.txt" "$W/cost.json"
	exit 0 ;;
esac
for i in $(seq 1 "${LP_COST_ROUNDS:-6}"); do
	late && break
	hf=$(order "$i" "$MH"); pl=$(order "$i" "$MP")
	if [ "$i" = 1 ]; then
		hf="$hf ${LP_COST_ONCE:-}"
		pl="$pl ${LP_COST_ONCE:-}"
	fi
	case " $STEPS " in *" rounds "* | *" traces "*) for m in $hf; do run hf "$m" "$i"; done ;; esac
	[ "$i" = 1 ] && case " $STEPS " in *" launch "*) launch ;; esac
	case " $STEPS " in *" rounds "*) ;; *) break ;; esac
	for m in $pl; do run plain "$m" "$i"; done
done
python3 bench/tracer/sample_check.py cost "$W" "$SAMPLE" >"$W/cost.json" 2>&1
pack
cat "$W/progress.txt" "$W/cost.json"
