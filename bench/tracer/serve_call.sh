#!/bin/bash
# serve_call.sh: run 40's device call (bench/tracer/README.md "Run 40"): a serving loop's prefills
# under bursts. examples/serve_plain.py (batched prefill, chunked-prefill mixed and decode forwards
# of a random-weight llama-3.2-1b under no parent range, stage hooks on its methods) with
# --call-times (its own CUDA events around every call), LP_SERVE_ROUNDS (2) rounds of
#   plain   the program alone
#   auto    llmprof run --mode light, the default (bursts; prefill and mixed sampled on their own)
#   auto64  trace.sample=auto,every=64,burst=4 (three bursts in the loop's 190 steps: intervals)
#   stage0  the same with trace.sample=auto,stage=0 (every prefill and mixed recorded, attaching
#           CUPTI at its push when a burst detached it: the tracer before run 40)
#   off     exact (trace.sample=off)
# (LP_SERVE_MODES picks) in alternating order; then sample_check.py serve.
# LP_SERVE_TURNS="plain_t auto_t ... plain_u" instead: one process per tag (its mode before the _),
# started together, then turns round by round (bench/tracer/turn_driver.py; the program syncs and
# stops itself after each measured round, examples/serve_plain.py), so that the same round of every
# process runs within one cycle of the host's speed and the rounds pair (sample_check.py serve's
# `turns`); each process on CPUs LP_SERVE_CPUS (2-15) but its main thread, which runs on
# LP_SERVE_MAIN_CPU (1) alone for the measured rounds: the vCPUs change speed each on its own (run
# 26), so the processes' launching threads see the same one. LP_SERVE_ARGS adds to the program's
# arguments (e.g. --rounds 96). Then the GPU-only e2e tests named in
# LP_SERVE_E2E (gpu_serve_hooks gpu_burst_steps gpu_workload). Run from the repo root on the GPU
# machine with build/ carried. Results in $OUT: serve.json, e2e.txt, progress.txt, serve.tar.xz
# (program outputs, summary.json, report.md, kernels.md, the STAGE records of prefill and mixed).
set -u
cd "$(dirname "$0")/../.."
R=${OUT:-/tmp/lp-serve-out}
mkdir -p "$R"
SRC=$PWD
W=/tmp/lp-serve
rm -rf "$W"
mkdir -p "$W/runs"
export PYTHONUNBUFFERED=1 LC_ALL=C NO_COLOR=1
LLMPROF=$SRC/build/bin/llmprof
PROG=(python3 "$SRC/examples/serve_plain.py" --model llama-3.2-1b --call-times ${LP_SERVE_ARGS:-})
HOOKS='stages.hooks=[__main__:Engine.warmup=warmup, __main__:Engine.forward_prefill=prefill@arg1.num_tokens, __main__:Engine.forward_decode=decode_step@arg1.num_tokens, __main__:Engine.forward_mixed=mixed@arg1.num_tokens]'
log() { echo "$(date +%T) $*" >>"$R/progress.txt"; }

run_mode() { # mode round
	local mode=$1 tag=$1_$2 spec
	case $mode in
	plain)
		"${PROG[@]}" >"$W/$tag.txt" 2>"$W/$tag.err"
		;;
	*)
		spec=auto
		[ "$mode" = auto64 ] && spec=auto,every=64,burst=4
		[ "$mode" = stage0 ] && spec=auto,stage=0
		[ "$mode" = off ] && spec=off
		(cd "$W/runs" && LLMPROF_TRACE_LOG_CYCLES=1 "$LLMPROF" run --mode light run.id="$tag" "$HOOKS" \
			"trace.sample=$spec" -- "${PROG[@]}") >"$W/$tag.run" 2>&1
		local d=$W/runs/tmp/stage2/$tag
		grep -h '"summary": true' "$d/trace/workload.stdout" | tail -1 >"$W/$tag.txt"
		mkdir -p "$W/$tag"
		cp "$d/summary.json" "$d/report.md" "$d/kernels.md" "$W/$tag/" 2>/dev/null
		"$LLMPROF" trace dump "$d/trace" 2>/dev/null | grep -E 'STAGE .*name="(prefill|mixed)"' >"$W/$tag/stages.txt"
		grep -hE "stages: instance|cupti: (attach|detach)" "$d/logs/capture.stderr" | head -400 >"$W/$tag/cycles.log"
		;;
	esac
	log "$tag rc=$? $(tail -c 300 "$W/$tag.txt" | tr -d '\n' | cut -c1-200)"
}

turns() {
	local TD=$W/turn tag waiting procs=() deadline=$(( $(date +%s) + 300 ))
	declare -A ROOT=()
	mkdir -p "$TD"
	for tag in $LP_SERVE_TURNS; do
		(export LLMPROF_BENCH_TURN=$TD LLMPROF_BENCH_TAG=$tag LLMPROF_BENCH_MAIN_CPU=${LP_SERVE_MAIN_CPU:-1}
			taskset -pc "${LP_SERVE_CPUS:-2-15}" $BASHPID >/dev/null; run_mode "${tag%_*}" "${tag##*_}") &
		ROOT[$tag]=$!
		procs+=("$tag=$!")
	done
	while :; do # start-ups: until each stopped after its first round (or ended)
		waiting=0
		for tag in $LP_SERVE_TURNS; do
			[ -f "$TD/$tag.stop" ] || ! kill -0 "${ROOT[$tag]}" 2>/dev/null || waiting=1
		done
		[ $waiting = 0 ] || [ "$(date +%s)" -gt $deadline ] && break
		sleep 0.2
	done
	log "turns: start-ups done"
	python3 "$SRC/bench/tracer/turn_driver.py" --dir "$TD" --deadline $(( $(date +%s) + ${LP_SERVE_TURN_S:-240} )) \
		--log "$W/turns.log" "${procs[@]}" >"$W/turns.json" 2>>"$R/progress.txt"
	touch "$TD/release"
	for tag in $LP_SERVE_TURNS; do
		[ -f "$TD/$tag.stop" ] && kill -CONT "$(cut -d' ' -f1 "$TD/$tag.stop")" 2>/dev/null
	done
	wait
	log "turns: $(head -c 300 "$W/turns.json")"
}

log "start $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
[ -n "${LP_SERVE_TURNS:-}" ] && turns
for i in $(seq 1 "${LP_SERVE_ROUNDS:-2}"); do
	[ -n "${LP_SERVE_TURNS:-}" ] && break
	order=${LP_SERVE_MODES:-plain auto auto64 stage0 off}
	[ $((i % 2)) = 0 ] && order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')
	for m in $order; do run_mode "$m" "$i"; done
done
python3 "$SRC/bench/tracer/sample_check.py" serve "$W" >"$R/serve.json" 2>>"$R/progress.txt"
log "serve.json written"
export LLMPROF LP_BUILD=$SRC/build LP_SRC=$SRC LP_HAVE_INJECT=1
for t in ${LP_SERVE_E2E-gpu_serve_hooks gpu_burst_steps gpu_workload}; do
	echo "### $t" >>"$R/e2e.txt"
	(LP_TMP=/tmp/e2e_$t bash "$SRC/tests/e2e/$t.sh") >>"$R/e2e.txt" 2>&1
	echo "rc=$?" >>"$R/e2e.txt"
	log "e2e $t done"
done
tar -C "$W" --exclude=runs -cJf "$R/serve.tar.xz" .
log "done"
