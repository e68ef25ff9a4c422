#!/bin/bash
# bench/tracer/cost_call.sh's modes for run 27's next step (bench/tracer/README.md run 27, "Next"),
# on stand-in programs (bench/tracer/turn_fake.py: no GPU): delay1 (the tracer with
# LLMPROF_TRACE_CUPTI_DELAY=1) and cuptild (no tracer, libcupti preloaded, here a library that is
# not there: ld.so says so and the program runs) take their turns to the end beside plain; the
# unmodified program gets llmprof's shim under delay1 and not under cuptild, and the call's log
# names the library preloaded; run 28's late3 (LLMPROF_TRACE_CUPTI_DELAY=3), run 29's afterwu
# (=warmup), pwgen, pwcublas and autoempty (LLMPROF_BENCH_PREWARM), run 30's wurec
# (LLMPROF_TRACE_WARMUP=record), wugraphs (=graphs), wudetach (=detach), run 32's autorec
# (LLMPROF_TRACE_BURST_REATTACH=parentrec), autolead (LLMPROF_TRACE_REATTACH_LEAD_MS=50) and autowu (LLMPROF_AUTO_WARMUP=1, the unmodified program),
# run 33's autowudec and autowuk4 (autowu with LLMPROF_BENCH_WARMUP_FROM=decode, =steps=4), eager1, eagerauto and
# eagerplain (CUDA_MODULE_LOADING=EAGER with delay1, auto and no tracer) reach their programs with
# that environment (turn_fake.py --env-log), eagerplain without the shim; plain_common.bench_prewarm
# reads LLMPROF_BENCH_PREWARM. Skipped without python3 or taskset.
set -u
. "$(dirname "$0")/lib.bash"
need_cost_tools
FAKE="python3 $LP_SRC/bench/tracer/turn_fake.py --nominal --new-tokens 8 --env-log $LP_TMP/env.txt"
cost_turns "hf_plain_t hf_cuptild_t hf_delay1_t hf_late3_t hf_afterwu_t hf_pwgen_t hf_pwcublas_t hf_autoempty_t hf_wurec_t hf_wugraphs_t hf_wudetach_t hf_autorec_t hf_autolead_t hf_eager1_t hf_eagerauto_t hf_eagerplain_t plain_plain_t \
plain_cuptild_t plain_delay1_t plain_eagerplain_t plain_late3_t plain_autowu_t plain_autowudec_t plain_autowuk4_t" \
	"$FAKE --kind hf --iters 2" "$FAKE --kind plain --iters 2" LP_COST_TURN_STEPS=2 LP_CUPTI_LIB=/nonexistent/libcupti.so
W=$LP_TMP/work
# (the unmodified program's first generation is its cold one, not measured)
for t in hf_plain_t hf_cuptild_t hf_delay1_t hf_late3_t hf_afterwu_t hf_pwgen_t hf_pwcublas_t hf_autoempty_t hf_wurec_t hf_wugraphs_t hf_wudetach_t hf_autorec_t hf_autolead_t hf_eager1_t hf_eagerauto_t hf_eagerplain_t plain_plain_t \
	plain_cuptild_t plain_delay1_t plain_eagerplain_t plain_late3_t plain_autowu_t plain_autowudec_t plain_autowuk4_t; do
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
# each mode's environment, as its program saw it (LLMPROF_AUTO_DIR: the shim's, the unmodified program's)
envof() { grep "^$1 " "$LP_TMP/env.txt" | head -n 1 | cut -d' ' -f2-; }
[ "$(envof hf_late3_t)" = "LLMPROF_TRACE_CUPTI_DELAY=3 LLMPROF_TRACE_SAMPLE=auto" ] || fail "late3: $(envof hf_late3_t)"
[ "$(envof hf_afterwu_t)" = "LLMPROF_TRACE_CUPTI_DELAY=warmup LLMPROF_TRACE_SAMPLE=auto" ] || fail "afterwu: $(envof hf_afterwu_t)"
[ "$(envof hf_pwgen_t)" = "LLMPROF_BENCH_PREWARM=gen LLMPROF_TRACE_CUPTI_DELAY=1 LLMPROF_TRACE_SAMPLE=auto" ] ||
	fail "pwgen: $(envof hf_pwgen_t)"
[ "$(envof hf_pwcublas_t)" = "LLMPROF_BENCH_PREWARM=cublas LLMPROF_TRACE_CUPTI_DELAY=1 LLMPROF_TRACE_SAMPLE=auto" ] ||
	fail "pwcublas: $(envof hf_pwcublas_t)"
[ "$(envof hf_autoempty_t)" = "LLMPROF_BENCH_PREWARM=empty LLMPROF_TRACE_SAMPLE=auto" ] || fail "autoempty: $(envof hf_autoempty_t)"
[ "$(envof hf_wurec_t)" = "LLMPROF_TRACE_SAMPLE=auto LLMPROF_TRACE_WARMUP=record" ] || fail "wurec: $(envof hf_wurec_t)"
[ "$(envof hf_wugraphs_t)" = "LLMPROF_TRACE_SAMPLE=auto LLMPROF_TRACE_WARMUP=graphs" ] || fail "wugraphs: $(envof hf_wugraphs_t)"
[ "$(envof hf_wudetach_t)" = "LLMPROF_TRACE_SAMPLE=auto LLMPROF_TRACE_WARMUP=detach" ] || fail "wudetach: $(envof hf_wudetach_t)"
[ "$(envof hf_autorec_t)" = "LLMPROF_TRACE_SAMPLE=auto LLMPROF_TRACE_BURST_REATTACH=parentrec" ] || fail "autorec: $(envof hf_autorec_t)"
[ "$(envof hf_autolead_t)" = "LLMPROF_TRACE_SAMPLE=auto LLMPROF_TRACE_REATTACH_LEAD_MS=50" ] || fail "autolead: $(envof hf_autolead_t)"
[ "$(envof hf_eager1_t)" = "CUDA_MODULE_LOADING=EAGER LLMPROF_TRACE_CUPTI_DELAY=1 LLMPROF_TRACE_SAMPLE=auto" ] ||
	fail "eager1: $(envof hf_eager1_t)"
[ "$(envof hf_eagerauto_t)" = "CUDA_MODULE_LOADING=EAGER LLMPROF_TRACE_SAMPLE=auto" ] || fail "eagerauto: $(envof hf_eagerauto_t)"
[ "$(envof hf_eagerplain_t)" = "CUDA_MODULE_LOADING=EAGER" ] || fail "eagerplain: $(envof hf_eagerplain_t)"
[ "$(envof plain_eagerplain_t)" = "CUDA_MODULE_LOADING=EAGER" ] || fail "eagerplain (shim?): $(envof plain_eagerplain_t)"
envof plain_late3_t | grep -q "^LLMPROF_TRACE_CUPTI_DELAY=3 LLMPROF_TRACE_SAMPLE=auto LLMPROF_AUTO_DIR=" ||
	fail "late3 on the unmodified program: $(envof plain_late3_t)"
envof plain_autowu_t | grep -q "^LLMPROF_TRACE_SAMPLE=auto LLMPROF_AUTO_WARMUP=1 LLMPROF_AUTO_DIR=" ||
	fail "autowu on the unmodified program: $(envof plain_autowu_t)"
envof plain_autowudec_t | grep -q "^LLMPROF_TRACE_SAMPLE=auto LLMPROF_AUTO_WARMUP=1 LLMPROF_BENCH_WARMUP_FROM=decode LLMPROF_AUTO_DIR=" ||
	fail "autowudec on the unmodified program: $(envof plain_autowudec_t)"
envof plain_autowuk4_t | grep -q "^LLMPROF_TRACE_SAMPLE=auto LLMPROF_AUTO_WARMUP=1 LLMPROF_BENCH_WARMUP_FROM=steps=4 LLMPROF_AUTO_DIR=" ||
	fail "autowuk4 on the unmodified program: $(envof plain_autowuk4_t)"
[ -z "$(envof hf_plain_t)" ] || fail "plain got an environment: $(envof hf_plain_t)"
# places_all: late3's generations before CUPTI's start (the first measured one) apart from those after
# (no detached step in 8: n/a)
python3 "$LP_SRC/bench/tracer/sample_check.py" places_all "$W" >"$LP_TMP/places_all.txt" || fail "places_all failed"
grep -q '^hf_late3_t  .*  +0.00 / +0.00 (n/a) / +0.00$' "$LP_TMP/places_all.txt" &&
	grep -q '^hf_eagerauto_t  .*%   *$' "$LP_TMP/places_all.txt" || fail "places_all: $(cat "$LP_TMP/places_all.txt")"
# the programs' side of pwgen, pwcublas and autoempty: plain_common.bench_prewarm's words, and
# the error naming an unknown one
pw() { LLMPROF_BENCH_PREWARM=$1 python3 -c "import sys; sys.path.insert(0, '$LP_SRC/examples')
from plain_common import bench_prewarm; print(','.join(sorted(bench_prewarm())))"; }
[ "$(pw gen,cublas,,empty)" = "cublas,empty,gen" ] && [ -z "$(pw '')" ] || fail "bench_prewarm: '$(pw gen,cublas,,empty)'"
expect_exit 1 pw gen,bogus
grep -q "LLMPROF_BENCH_PREWARM='gen,bogus': bogus is not one of gen, cublas, empty" "$LP_TMP/stderr" ||
	fail "bench_prewarm's error: $(cat "$LP_TMP/stderr")"
pass
