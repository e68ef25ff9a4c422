#!/bin/bash
# bench/tracer/cost_call.sh's modes for run 27's next step (bench/tracer/README.md run 27, "Next"),
# on stand-in programs (bench/tracer/turn_fake.py: no GPU): delay1 (the tracer with
# LLMPROF_TRACE_CUPTI_DELAY=1) and cuptild (no tracer, libcupti preloaded, here a library that is
# not there: ld.so says so and the program runs) take their turns to the end beside plain; the
# unmodified program gets llmprof's shim under delay1 and not under cuptild, and the call's log
# names the library preloaded. Skipped without python3 or taskset.
set -u
. "$(dirname "$0")/lib.bash"
need_cost_tools
FAKE="python3 $LP_SRC/bench/tracer/turn_fake.py --nominal --new-tokens 8"
cost_turns "hf_plain_t hf_cuptild_t hf_delay1_t plain_plain_t plain_cuptild_t plain_delay1_t" \
	"$FAKE --kind hf --iters 2" "$FAKE --kind plain --iters 2" LP_COST_TURN_STEPS=2 LP_CUPTI_LIB=/nonexistent/libcupti.so
W=$LP_TMP/work
# (the unmodified program's first generation is its cold one, not measured)
for t in hf_plain_t hf_cuptild_t hf_delay1_t plain_plain_t plain_cuptild_t plain_delay1_t; do
	want=2; [ "${t%%_*}" = plain ] && want=1
	[ "$(grep -c '"iter"' "$W/$t.txt")" = "$want" ] || fail "$t did not measure $want generation(s): $(tail -c 400 "$W/$t.err")"
done
grep -q "^cuptild: LD_PRELOAD=/nonexistent/libcupti.so$" "$W/progress.txt" || fail "the log does not name the library"
for t in hf_cuptild_t plain_cuptild_t; do
	grep -q "nonexistent/libcupti.so.*cannot be preloaded" "$W/$t.err" || fail "$t was not given LD_PRELOAD"
done
grep -q "cannot be preloaded" "$W/hf_delay1_t.err" && fail "delay1 was given LD_PRELOAD"
[ -d "$W/auto_plain_delay1_t" ] || fail "the unmodified program under delay1 lacks llmprof's shim"
[ -e "$W/auto_plain_cuptild_t" ] && fail "the unmodified program under cuptild got llmprof's shim"
pass
