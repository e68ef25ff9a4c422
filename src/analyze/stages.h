/* stages.h: per-iteration stage timings (prefill, decode) from a profile's NVTX ranges.
 *
 * A stage occurrence is a range named `prefill` or `decode_all` (any domain; when some are in the
 * `LLM` domain only those count) that is not under a `warmup` range and not nested in a range of
 * the same name. Each occurrence is one measured iteration: host time = push to pop; GPU busy time =
 * the union of the intervals of the kernels attributed to it or its descendants (launch-time
 * attribution, profile.h); kernel count and summed kernel time; for decode the number of
 * `decode_step` ranges inside; for prefill the payload (prompt tokens x batch). Statistics across
 * iterations use the sample standard deviation (n - 1).
 *
 * Latency (latency.c), the clock the user sees: from the later of the push and the end of the GPU
 * work still queued on the stream of the occurrence's first launch (launched before the push: what a
 * CUDA event recorded at the push waits for) to the later of the pop and the end of the last GPU
 * work launched inside (kernels, copies, memsets; graph replays included). TTFT, tokens/s and ms/step
 * come from it. Each outermost `decode_step` inside a decode occurrence gets the same rule; their
 * latencies are pooled per stage with nearest-rank percentiles. Kernels and copies with an unknown
 * launch time (launch_ns 0) never count as queued work. The bound verdict compares the three clocks:
 * GPU idle share of the latency (1 - busy / latency) <= LP_STAGE_GPU_BOUND_IDLE is GPU-bound; >=
 * LP_STAGE_LAUNCH_BOUND_IDLE with the host busy >= LP_STAGE_HOST_BUSY of the latency is
 * CPU/launch-bound (the GPU waits for launches); idle that high with the host mostly waiting too is
 * "GPU idle (waits)" (synchronizations, host work outside the range); anything between is mixed.
 * overlap = summed kernel durations / GPU busy time (> 1 when kernels run concurrently: streams, PDL).
 *
 * Workloads without those names: the top-level ranges (depth 0, not `warmup`, not op ranges) are
 * the stages, grouped by name; repeats are their repeated occurrences.
 *
 * Ranges nested in a stage that are neither op ranges (analyze/operators.h) nor the structural
 * names (`decode_step`, ...) - a vision encoder's `sam`, `clip`, `projector` - become notes of the
 * stage, never stage rows.
 *
 * Synthetic ranges (lp_range.synthetic: copies of capture-time ranges placed under a CUDA graph
 * launch by the trace reader) carry GPU work into the stage they were launched in; they are never
 * occurrences, decode steps or host time.
 *
 * Ownership: lp_stages_compute fills a caller-owned lp_stage_set; strings and arrays live in its
 * arena and malloc'd arrays; lp_stage_set_release frees them. The set does not point into the
 * profile. Not thread-safe.
 *
 *   struct lp_stage_set st;
 *   if (lp_stages_compute(profile, &st, err) < 0) return -1;
 *   for (i = 0; i < st.n_stages; i++) printf("%s %.3f\n", st.stages[i].name, st.stages[i].host_ms.mean);
 *   lp_stage_set_release(&st);
 */
#ifndef LP_ANALYZE_STAGES_H
#define LP_ANALYZE_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/err.h"
#include "profile/profile.h"

enum lp_stage_kind {
	LP_STAGE_PREFILL = 0,
	LP_STAGE_DECODE = 1,
	LP_STAGE_OTHER = 2,
};

/* Mean, sample standard deviation (n - 1; 0 when n < 2), min and max of n values. */
struct lp_stat {
	size_t n;
	double mean, std, min, max;
};
void lp_stat_compute(const double *x, size_t n, struct lp_stat *out);

struct lp_stage_iter {
	int32_t range;               /* index in the profile */
	uint64_t start_ns, host_ns;
	uint64_t latency_ns;          /* the user's clock (see above) */
	uint64_t wait_ns;             /* of it: from the push until earlier queued GPU work ended (not counted) */
	uint64_t gpu_end_ns;          /* end of the last GPU work launched inside; 0 none */
	uint64_t gpu_busy_ns;        /* union of attributed kernel intervals */
	uint64_t gpu_span_ns;        /* first attributed kernel start to last end (what CUDA events
	                              * around the stage measure; busy time leaves out idle gaps) */
	uint64_t kernel_ns;          /* sum of attributed kernel durations */
	uint64_t kernels;
	uint64_t steps;              /* decode_step ranges inside */
	int has_payload;
	uint64_t payload;            /* prefill: prompt tokens x batch */
};

struct lp_stage_note {
	const char *name;
	uint64_t calls;              /* over all iterations */
	uint64_t host_ns;            /* summed over all iterations */
	uint64_t kernel_ns;
	uint64_t kernels;
};

struct lp_stage {
	const char *name;
	const char *domain;
	enum lp_stage_kind kind;
	struct lp_stage_iter *iters;
	size_t n_iters;
	struct lp_stat host_ms, gpu_ms, gpu_span_ms, kernel_ms, kernels, steps;
	struct lp_stat lat_ms;       /* latency per iteration */
	double *step_lat_ms;         /* decode: every measured decode_step's latency, in trace order */
	size_t n_step_lat;
	struct lp_stat step_ms;      /* over step_lat_ms */
	double step_p50, step_p90, step_p99;   /* nearest rank; NAN without steps */
	double overlap;              /* kernel_ms.mean / gpu_ms.mean; 0 without GPU time */
	double idle_frac;            /* 1 - gpu busy / latency; NAN when not applicable */
	const char *bound;           /* "GPU-bound", "CPU/launch-bound", "GPU idle (waits)", "mixed", "no GPU work", "n/a" */
	struct lp_stage_note *notes;
	size_t n_notes;
	uint64_t excluded_warmup;    /* occurrences under `warmup`, left out */
	uint64_t unclosed;           /* occurrences never popped, left out */
};

#define LP_STAGES_MAX 32
#define LP_STAGE_GPU_BOUND_IDLE 0.10
#define LP_STAGE_LAUNCH_BOUND_IDLE 0.30
#define LP_STAGE_HOST_BUSY 0.80

struct lp_stage_set {
	struct lp_stage *stages;
	size_t n_stages;
	int have_gpu;                /* the profile holds at least one kernel */
	int top_level_fallback;      /* no prefill/decode_all ranges: top-level ranges used */
	size_t n_kernels;            /* profile kernels (size of the arrays below) */
	int32_t *kernel_stage;       /* per kernel: stage index, -1 outside stages, -2 under warmup */
	uint64_t measured_kernel_ns; /* kernels not under warmup */
	uint64_t warmup_kernel_ns;
	struct lp_arena arena;
};

int lp_stages_compute(const struct lp_profile *p, struct lp_stage_set *out, struct lp_err *err);
void lp_stage_set_release(struct lp_stage_set *s);
/* The stage of a kind (first one), NULL when absent. */
const struct lp_stage *lp_stages_find(const struct lp_stage_set *s, enum lp_stage_kind kind);
/* Latencies, step percentiles, overlap and verdicts of a computed set (latency.c; called by
 * lp_stages_compute). -1 on out of memory. */
int lp_stage_latency_compute(const struct lp_profile *p, struct lp_stage_set *s);
/* Nearest-rank percentile p (0..100) of n ascending values; NAN when n is 0. */
double lp_percentile_sorted(const double *x, size_t n, double p);
/* 1 for structural range names that are neither stages nor notes (decode_step, warmup, ...). */
int lp_stage_is_structural(const char *name);

#endif
