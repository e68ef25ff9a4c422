#!/bin/bash
# parent_call.sh: run 24's device calls (bench/tracer/README.md "Run 24"): bursts that attach CUPTI
# again at the pop of the units' parent (decode_all), so the next prefill finds it attached.
# Steps (LP_PARENT_STEPS, in this order, default "light turns"):
#   alone  one traced process at a time (the tracer injected directly, LLMPROF_TRACE_LOG_CYCLES=1:
#          every attach, detach and stage push/pop with its time), the variants of LP_PARENT_ALONE
#          (entries as LP_PARENT_LIGHT's); step times, logs, the first one's trace
#   light  `llmprof run --mode light` on hf_generate.py and the unmodified program (summary.json
#          self_check against the program's CUDA events), the tracer's log with every attach and
#          detach (LLMPROF_TRACE_LOG_CYCLES=1); the variants of LP_PARENT_LIGHT, entries
#          "ID|ENV|SPEC|PROG" (ENV - or entries joined by +, each VAR=VAL or a config key=value
#          (a dot in the key: an override, e.g. run.auto_warmup=1+trace.warmup=graphs); SPEC trace.sample's value; PROG hf, plain,
#          short: hf_generate.py with 24 new tokens and 6 generations, shorter than one block,
#          serve: examples/serve_plain.py with stage hooks by name, decode_step units under no
#          decode_all; run 25's edge cases, e.g. "serve|-|auto|serve short|-|auto|short"; or
#          graph: examples/graph_decode.py capturing its decode graph inside its warmup range
#          under op ranges, run 31; static: the unmodified program, tiny shape, with a static KV
#          cache, whose decode forward transformers compiles with CUDA graphs in the first
#          generation; kvfg / kvfgn: examples/kv_loop_plain.py, tiny shape, under
#          torch.compile(model, fullgraph=True), with / without its own stage ranges; kvtw: kvfgn
#          with the model compiled twice, the loop on the first wrapper (run 33); kvn: the
#          same loop eager on the llama-3.2-1b shape without ranges; static1b: static on the
#          llama-3.2-1b shape; cwrap: the unmodified program calling generate() on
#          torch.compile(model), llama-3.2-1b; cfwd: model.forward = torch.compile(model.forward),
#          tiny shape, run 32; plainnc: plain with cuDNN's attention off, --sdpa nocudnn, run 34;
#          kvfgs / kvfgrs: kvfgn / kvfg with each decode forward's CUDA events, --step-times, run 35;
#          short1: short with one measured generation, run 35; static1b64, graph256: static1b with 64
#          new tokens, graph with 256, run 38; tp1: examples/tp_decode.py's 2-layer fixture shape on
#          one rank under torchrun);
#          per run also gens.json (sample_check.py gens: each generation's kernel totals),
#          steps.txt (sample_check.py steps) and the capture's stderr (the tracer's log);
#          LP_PARENT_HF_ITERS (3) / LP_PARENT_PLAIN_ITERS (4) generations; LP_PARENT_LIGHT_RM=1
#          removes each run's trace after it (disk); LP_PARENT_UNITS=1 adds units.json
#          (sample_check.py units: every decode step's kernels), LP_PARENT_CLOCKS=1 clocks.csv
#          (nvidia-smi's SM and memory clocks, power, utilization every 100 ms during the run)
#   turns  cost_call.sh's turns (LP_PARENT_TURNS; LP_BURST=$LP_PARENT_SPEC; LP_COST_* as
#          cost_call.sh reads them, from the environment: e.g. LP_COST_TURN_STEPS=K for
#          step-level turns, README "Step-level turns")
# Run from the repo root on the GPU machine with build/ (Release). Results in $OUT: light.tar.xz,
# cost.tgz, cost_call.txt, env.txt.
set -u
cd "$(dirname "$0")/../.."
R=${OUT:-/tmp/lp-parent-out}
mkdir -p "$R"
SRC=$PWD
L=$SRC/build/bin/llmprof
SPEC=${LP_PARENT_SPEC:-every=64,burst=4,lead=2}
STEPS=${LP_PARENT_STEPS:-light turns}
HF="python3 $SRC/examples/hf_generate.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --step-times --iters ${LP_PARENT_HF_ITERS:-3} --warmup 1"
PLAIN="python3 $SRC/examples/hf_generate_plain.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --step-times --iters ${LP_PARENT_PLAIN_ITERS:-4}"
SHORT="python3 $SRC/examples/hf_generate.py --model llama-3.2-1b --prompt-len 512 --new-tokens 24 --step-times --iters 6 --warmup 1"
SERVE="python3 $SRC/examples/serve_plain.py --model llama-3.2-1b"
STATIC="python3 $SRC/examples/hf_generate_plain.py --model tiny --prompt-len 128 --new-tokens 64 --step-times --iters 4 --cache static"
STATIC1B="python3 $SRC/examples/hf_generate_plain.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --step-times --iters 4 --cache static"
CWRAP="$PLAIN --compile module"
CFWD="python3 $SRC/examples/hf_generate_plain.py --model tiny --prompt-len 128 --new-tokens 64 --step-times --iters 4 --compile forward"
KVFG="python3 $SRC/examples/kv_loop_plain.py --model tiny --prompt-len 128 --new-tokens 32 --iters 4 --compile fullgraph"
KVN="python3 $SRC/examples/kv_loop_plain.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 4 --ranges off"
GRAPH="python3 $SRC/examples/graph_decode.py --prompt-len 512 --new-tokens 128 --iters 3 --capture-at warmup --op-ranges"
HOOKS='stages.hooks=[__main__:Engine.warmup=warmup, __main__:Engine.forward_prefill=prefill@arg1.num_tokens, __main__:Engine.forward_decode=decode_step@arg1.num_tokens, __main__:Engine.forward_mixed=mixed@arg1.num_tokens]'
cmd_of() { case $1 in plain) cmd=$PLAIN ;; plainnc) cmd="$PLAIN --sdpa nocudnn" ;; short) cmd=$SHORT ;; short1) cmd=${SHORT/--iters 6/--iters 1} ;; serve) cmd=$SERVE ;; graph) cmd=$GRAPH ;; static) cmd=$STATIC ;; static1b) cmd=$STATIC1B ;; static1b64) cmd=${STATIC1B/--new-tokens 128/--new-tokens 64} ;; graph256) cmd=${GRAPH/--new-tokens 128/--new-tokens 256} ;; tp1) cmd="torchrun --nproc-per-node 1 $SRC/examples/tp_decode.py --model llama-3.2-1b --layers 2 --prompt-len 512 --new-tokens 16 --iters 2 --warmup 1" ;; cwrap) cmd=$CWRAP ;; cfwd) cmd=$CFWD ;; kvfg) cmd=$KVFG ;; kvfgn) cmd="$KVFG --ranges off" ;; kvfgs) cmd="$KVFG --ranges off --step-times" ;; kvfgrs) cmd="$KVFG --step-times" ;; kvtw) cmd="${KVFG%--compile fullgraph}--compile twice --ranges off" ;; kvn) cmd=$KVN ;; *) cmd=$HF ;; esac; }
LIGHT=${LP_PARENT_LIGHT:-"hfpar|LLMPROF_TRACE_BURST_REATTACH=parent|$SPEC|hf plainpar|LLMPROF_TRACE_BURST_REATTACH=parent|$SPEC|plain hfexact|-|off|hf"}
export PYTHONUNBUFFERED=1
case " $STEPS " in *" alone "*)
	A=/tmp/lpa; rm -rf "$A"; mkdir -p "$A"
	k=0
	for v in ${LP_PARENT_ALONE:-"hfpar|LLMPROF_TRACE_BURST_REATTACH=parent|$SPEC|hf"}; do
		IFS='|' read -r id envv spec prog <<<"$v"
		cmd_of "$prog"
		e=(LLMPROF_TRACE_LOG_CYCLES=1); [ "$envv" != - ] && e+=("$envv")
		[ "$prog" = plain ] && e+=(PYTHONPATH=$SRC/python/llmprof_auto/site:$SRC/python LLMPROF_AUTO_DIR=$A/auto_$id)
		t0=$(date +%s)
		env "${e[@]}" CUDA_INJECTION64_PATH=$SRC/build/lib/libllmprof_inject.so NVTX_INJECTION64_PATH=$SRC/build/lib/libllmprof_inject.so \
			LLMPROF_TRACE_SAMPLE=$spec LLMPROF_TRACE_DIR=$A/trace_$id LLMPROF_TRACE_LOG=$A/inject_$id.log \
			taskset -c 1-15 timeout -k 5 100 $cmd >"$A/$id.txt" 2>"$A/$id.err"
		echo "$id rc=$? $(( $(date +%s) - t0 ))s ${e[*]} $spec" >>"$A/progress.txt"
		k=$((k + 1)); [ $k -gt 1 ] && rm -rf "$A/trace_$id"
	done
	rm -rf "$A"/auto_*
	tar -C "$A" -cf - . | xz -T0 -6 >"$R/alone.tar.xz"
	;;
esac
case " $STEPS " in *" light "*)
	W=/tmp/lpl; rm -rf "$W"; mkdir -p "$W/keep"
	for v in $LIGHT; do
		IFS='|' read -r id envv spec prog <<<"$v"
		cmd_of "$prog"
		over=("trace.sample=$spec"); [ "$prog" = serve ] && over+=("$HOOKS")
		e=(LLMPROF_TRACE_LOG_CYCLES=1)
		IFS=+ read -r -a parts <<<"$envv"
		for x in "${parts[@]}"; do case $x in -) ;; *.*=*) over+=("$x") ;; *) e+=("$x") ;; esac; done
		t0=$(date +%s)
		mkdir -p "$W/keep/$id"; CLK=
		if [ -n "${LP_PARENT_CLOCKS:-}" ]; then # the GPU's clocks and power every 100 ms (read only)
			nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu \
				--format=csv,noheader -lms 100 >"$W/keep/$id/clocks.csv" 2>&1 &
			CLK=$!
		fi
		(cd "$W" && env "${e[@]}" timeout -k 5 "${LP_PARENT_LIGHT_S:-120}" "$L" run --mode light run.id="$id" \
			"${over[@]}" -- $cmd >"$W/$id.term" 2>&1)
		echo "$id rc=$? $(( $(date +%s) - t0 ))s ${e[*]} ${over[*]}" >>"$W/keep/progress.txt"
		[ -n "$CLK" ] && kill "$CLK" 2>/dev/null
		d=$W/tmp/stage2/$id; cp "$W/$id.term" "$W/keep/$id/terminal.txt"
		cp "$d"/*.md "$d"/*.json "$W/keep/$id/" 2>/dev/null
		cp "$d"/trace/workload.stdout "$W/keep/$id/" 2>/dev/null
		find "$d" -name '*.log' -size -2M -exec cp {} "$W/keep/$id/" \; 2>/dev/null
		# the tracer's log (attaches and detaches with LLMPROF_TRACE_LOG_CYCLES) and every step's
		# GPU latency against the program's own CUDA events (issue 24: within 2%)
		tail -c 300000 "$d/logs/capture.stderr" >"$W/keep/$id/capture.stderr" 2>/dev/null
		python3 "$SRC/bench/tracer/sample_check.py" steps "$d/trace" "$d/trace/workload.stdout" \
			>"$W/keep/$id/steps.txt" 2>&1
		# per generation kernel totals (the generation-to-generation spread inside the process)
		python3 "$SRC/bench/tracer/sample_check.py" gens "$d/trace" >"$W/keep/$id/gens.json" 2>"$W/keep/$id/gens.err"
		[ -n "${LP_PARENT_UNITS:-}" ] && python3 "$SRC/bench/tracer/sample_check.py" units "$d/trace" \
			>"$W/keep/$id/units.json" 2>>"$W/keep/$id/gens.err"
		[ -n "${LP_PARENT_LIGHT_RM:-}" ] && rm -rf "$d/trace"
	done
	tar -C "$W/keep" -cf - . | xz -T0 -6 >"$R/light.tar.xz"
	;;
esac
case " $STEPS " in *" turns "*)
	OUT=$R LP_COST_WORK=${LP_COST_WORK:-/tmp/lpt} LP_COST_STEPS=turns LP_BURST=$SPEC LP_COST_PLAIN_ITERS=${LP_COST_PLAIN_ITERS:-7} \
		LP_COST_HF_ITERS=${LP_COST_HF_ITERS:-6} LP_COST_CPUS=${LP_COST_CPUS:-1-15} \
		LP_COST_TURN_STOP_S=${LP_COST_TURN_STOP_S:-150} LP_COST_TURN_PROC_S=${LP_COST_TURN_PROC_S:-200} \
		LP_COST_TURNS=${LP_PARENT_TURNS:-"hf_plain_t hf_plain_u hf_burstparent_t hf_burstparent_u hf_exact_t hf_kineto_t \
hf_nsys_t plain_plain_t plain_plain_u plain_burstparent_t plain_burstparent_u plain_exact_t plain_nsys_t"} \
		bash bench/tracer/cost_call.sh >"$R/cost_call.txt" 2>&1
	;;
esac
ls -la "$R"
