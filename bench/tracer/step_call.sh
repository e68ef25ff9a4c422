#!/bin/bash
# step_call.sh: issue 24's cost measurement with step-level turns (bench/tracer/README.md run 25),
# one device call. Each argument is one set of processes, cost_call.sh's turn tags (PROG_MODE_X),
# all of one program; the sets run one after the other, each with its processes started together
# and then taking turns of K decode steps (LP_COST_TURN_STEPS=$K, default 1; examples/plain_common.py
# stops each process after its K-th step, bench/tracer/turn_driver.py hands the turn on), so that
# every mode's steps of a cycle run within ~200 ms of each other and are paired by generation and
# step (sample_check.py cost: paired_steps, with the placebo of two plain processes). Results:
# $OUT/<prog>/cost.tgz (cost.json inside), $OUT/cost_<prog>.txt. Run from the tree root on the
# GPU machine with build/ (Release) and .carry-nsyslibs (nsys). Environment: K (1), STOP (190:
# seconds from a set's start after which no turn is given), HF_ITERS (5), PLAIN_ITERS (6), CPUS
# (1-15: the cores every process is pinned to), MAIN_CPU (unset; N: every program's main thread
# runs its measured generations on CPU N alone, LLMPROF_BENCH_MAIN_CPU, run 26), and
# LLMPROF_BENCH_COUNTERS=1 (the programs add each step's thread CPU time, and cycles and
# instructions where the kernel counts them: sample_check.py's paired_steps_<metric>).
#
#   OUT=$OUT bash bench/tracer/step_call.sh \
#     "hf_plain_t hf_auto_t hf_exact_t hf_kineto_t hf_nsys_t hf_auto_u hf_plain_u" \
#     "plain_plain_t plain_auto_t plain_exact_t plain_nsys_t plain_auto_u plain_plain_u"
set -u
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
[ -n "${MAIN_CPU:-}" ] && export LLMPROF_BENCH_MAIN_CPU=$MAIN_CPU
R=${OUT:-/tmp/lp-step-out}
STOP=${STOP:-190}
for set in "$@"; do
	prog=${set%%_*}
	rm -rf "/tmp/lp-step-$prog" # a warm machine keeps the last call's work folder
	mkdir -p "$R/$prog"
	OUT=$R/$prog LP_COST_WORK=/tmp/lp-step-$prog LP_COST_STEPS=turns LP_COST_TURNS="$set" \
		LP_COST_TURN_STEPS=${K:-1} LP_COST_HF_ITERS=${HF_ITERS:-5} LP_COST_PLAIN_ITERS=${PLAIN_ITERS:-6} \
		LP_COST_CPUS=${CPUS:-1-15} LP_COST_TURN_STOP_S=$STOP LP_COST_TURN_PROC_S=$((STOP + 60)) \
		bash bench/tracer/cost_call.sh >"$R/cost_$prog.txt" 2>&1
	echo "$prog done $(date +%T)"
done
