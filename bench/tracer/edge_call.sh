#!/bin/bash
# edge_call.sh: issue 24's sampled tracer (trace.sample=auto, bursts) on programs off the main
# path, as one device call (bench/tracer/README.md run 25): `llmprof run --mode light` on
#   serve   examples/serve_plain.py, a server-like loop with stage hooks by name (decode_step units
#           with no decode_all parent; prefill, decode and mixed forwards)
#   short   examples/hf_generate.py with 24 new tokens (generations shorter than one block of 64)
# and keeps each run's summary.json, report.md's Tracing mode and self-check, the program's output
# and the tracer's log (LLMPROF_TRACE_LOG_CYCLES=1) in $OUT/edge.tgz. Run from the tree root on
# the GPU machine with build/ (Release).
set -u
cd "$(dirname "$0")/../.."
R=${OUT:-/tmp/lp-edge-out}
W=/tmp/lpe; rm -rf "$W"; mkdir -p "$W/keep" "$R"
L=$PWD/build/bin/llmprof
HOOKS='stages.hooks=[__main__:Engine.warmup=warmup, __main__:Engine.forward_prefill=prefill@arg1.num_tokens, __main__:Engine.forward_decode=decode_step@arg1.num_tokens, __main__:Engine.forward_mixed=mixed@arg1.num_tokens]'
run() { # ID ARGS...: one light run, kept
	local id=$1 t0=$(date +%s)
	shift
	(cd "$W" && LLMPROF_TRACE_LOG_CYCLES=1 timeout -k 5 "${LP_EDGE_S:-120}" "$L" run --mode light run.id="$id" "$@" \
		>"$W/$id.term" 2>&1)
	echo "$id rc=$? $(( $(date +%s) - t0 ))s" >>"$W/keep/progress.txt"
	local d=$W/tmp/stage2/$id
	mkdir -p "$W/keep/$id"
	cp "$W/$id.term" "$W/keep/$id/terminal.txt"
	cp "$d"/summary.json "$d"/report.md "$d"/kernels.md "$W/keep/$id/" 2>/dev/null
	cp "$d"/trace/workload.stdout "$W/keep/$id/" 2>/dev/null
	find "$d" -name '*.log' -size -2M -exec cp {} "$W/keep/$id/" \; 2>/dev/null
}
run serve "$HOOKS" -- python3 "$PWD/examples/serve_plain.py" --model llama-3.2-1b
run short -- python3 "$PWD/examples/hf_generate.py" --model llama-3.2-1b --prompt-len 512 --new-tokens 24 \
	--iters 6 --warmup 1 --step-times
tar -C "$W/keep" -czf "$R/edge.tgz" .
cat "$W/keep/progress.txt"
