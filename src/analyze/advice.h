/* advice.h: takeaways and recommendations derived from an analysis, each rule with a stated
 * threshold and each statement carrying the numbers that triggered it (never fixed text).
 *
 * Rules (ids in summary.json `advice[].rule`; docs/metrics.md lists them):
 *   self-check          llmprof's TTFT / decode numbers differ from the workload's own by > LP_SELF_CHECK_TOL
 *   stage-dominates     a stage takes > LP_ADVICE_DOMINANT of prefill + decode latency
 *   clocks-<stage>      the stage's bound verdict from latency, GPU busy and host time (stages.h)
 *   overlap-<stage>     summed kernel durations > LP_ADVICE_OVERLAP x GPU busy (streams, PDL)
 *   bound-<stage>       memory- vs compute-bound from MBU vs MFU
 *   roofline            time share of ncu roofline classes (deep mode)
 *   decode-idle         GPU idle > LP_ADVICE_IDLE of the decode latency -> CUDA graphs (host busy
 *                       launching) or removing synchronizations (host waiting)
 *   decode-fusion       >= LP_ADVICE_FUSION_KERNELS kernels per step with mean < LP_ADVICE_SHORT_US
 *   families-<stage>    kernel families by time; fusion / attention / copy recommendations above
 *                       LP_ADVICE_SMALL_OPS, LP_ADVICE_ATTENTION, LP_ADVICE_MEMCPY
 *   attention-vs-proj   attention vs projection GPU time (op ranges, else kernel families)
 *   waterfall-<stage>   the gap waterfall's three largest items above the floor with their fixes
 *   cpu-run, dropped    plain facts about the data
 *
 * Ownership: lp_advice_compute fills a->advice / a->n_advice (texts in a->arena).
 */
#ifndef LP_ANALYZE_ADVICE_H
#define LP_ANALYZE_ADVICE_H

#include "analyze/analysis.h"

#define LP_ADVICE_DOMINANT 0.60   /* a margin: 52% vs 48% is no dominance */
#define LP_ADVICE_OVERLAP 1.02
#define LP_ADVICE_IDLE 0.20
#define LP_ADVICE_FUSION_KERNELS 20.0
#define LP_ADVICE_SHORT_US 10.0
#define LP_ADVICE_SMALL_OPS 0.25
#define LP_ADVICE_ATTENTION 0.30
#define LP_ADVICE_MEMCPY 0.10
#define LP_ADVICE_LOW_UTIL 0.50

int lp_advice_compute(struct lp_analysis *a, struct lp_err *err);

#endif
