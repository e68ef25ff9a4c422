/* sampling.h: honest statistics for sampled traces (issue 24; docs/tracer.md "Sampled tracing").
 *
 * In sampled mode the tracer records kernels only inside some instances of the sampling unit
 * (`decode_step`): under each parent range the first `first` instances (the exact stratum), then
 * one in `every` of the others (the sampled stratum). Kernels outside every unit are all recorded.
 * A table from such a trace is scaled here, row by row (a kernel name, an operator ...):
 *
 *   estimate = sum over the exact stratum + N * mean over the n recorded units of the sampled
 *              stratum (N its units in all),
 *   variance = N^2 (1 - n/N) s^2 / n   (simple random sampling without replacement, s^2 the
 *              sample variance of the per-unit values, a unit without the row counting 0),
 *   interval = estimate +- t(1 - alpha/2, n - 1) * sqrt(variance)  (Student's t).
 *
 * The schedule is systematic (every k-th unit), which for a drifting decode (attention grows with
 * the context) gives a smaller error than the random-sampling variance above says: the interval is
 * conservative there. A row with n < 2 recorded units gets no interval (half_ci < 0: unknown).
 *
 * Ownership: lp_tsample_table owns its rows (and copies nothing else: names point into the profile).
 * Not thread-safe.
 *
 *   struct lp_tsample_plan plan = { .sampled = 1, .every = 8, .first = 2, .unit = "decode_step" };
 *   struct lp_tsample_table t;
 *   if (lp_tsample_kernel_table(profile, &plan, 0.95, &t, err) < 0) return -1;
 *   ... t.rows[i].time_ns.total, .half_ci, t.units_recorded ...
 *   lp_tsample_table_release(&t);
 */
#ifndef LP_ANALYZE_SAMPLING_H
#define LP_ANALYZE_SAMPLING_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/kernels.h"
#include "analyze/operators.h"
#include "analyze/stages.h"
#include "core/err.h"
#include "profile/profile.h"

struct lp_tsample_plan {              /* what the tracer did (its SAMPLING record) */
	int sampled;                     /* 0: exact, every unit recorded */
	uint32_t every, first;
	const char *unit;                /* range name of the sampling unit */
};

/* The plan of a loaded trace (its processes' SAMPLING records): 1 and the plan of the first
 * process traced in sampled mode, else 0 and an exact plan (unit: the record's, or decode_step). */
int lp_tsample_plan_of(const struct lp_profile *p, struct lp_tsample_plan *plan);

/* 1 when the plan records instance `index` (0-based under its parent) of the unit. The tracer's
 * own schedule (inject/sample.c) is the same expression. */
int lp_tsample_recorded(const struct lp_tsample_plan *plan, uint32_t index);

struct lp_tsample_est {
	double total;                    /* estimate over all units of both strata */
	double half_ci;                  /* half width of the interval; 0 exact; < 0 unknown (n < 2) */
	double exact_part;               /* the exact stratum's sum (and whatever needs no scaling) */
	uint32_t n, N;                   /* recorded / all units of the sampled stratum */
};

/* The estimate of one row: `exact_sum` over the exact stratum, `x` the n per-unit values of the
 * recorded units of the sampled stratum, N >= n its units; `conf` the interval's level (0.95). */
void lp_tsample_estimate(double exact_sum, const double *x, uint32_t n, uint32_t N, double conf,
	struct lp_tsample_est *out);

/* Student's t quantile: P(T <= q) = p for df degrees of freedom (df >= 1, 0.5 <= p < 1). */
double lp_student_t_quantile(double p, double df);

/* Unit strata of a profile's ranges (by range index). */
enum lp_tsample_stratum {
	LP_TSAMPLE_OUTSIDE = 0,           /* not a unit */
	LP_TSAMPLE_EXACT = 1,             /* a unit of the exact stratum (or of an exact trace) */
	LP_TSAMPLE_RECORDED = 2,          /* a recorded unit of the sampled stratum */
	LP_TSAMPLE_SKIPPED = 3,           /* an unrecorded unit: its kernels are not in the trace */
};

struct lp_tsample_units {
	uint8_t *stratum;                /* per range index (enum lp_tsample_stratum) */
	uint32_t *unit_index;            /* per range index: the unit's index under its parent */
	uint32_t n_exact, n_recorded, n_skipped;
};

/* Finds the units (ranges named plan->unit, in any domain, not nested in another unit) and their
 * strata: from the tracer's flags (lp_range.sample, sample_index) where present, else by replaying
 * its schedule (the index restarts whenever a thread's next unit has another parent than its last). */
int lp_tsample_units_find(const struct lp_profile *p, const struct lp_tsample_plan *plan,
	struct lp_tsample_units *out, struct lp_err *err);
void lp_tsample_units_release(struct lp_tsample_units *u);

struct lp_tsample_row {
	const char *key;                 /* kernel name (or the key function's) */
	struct lp_tsample_est time_ns;    /* GPU time inside units */
	struct lp_tsample_est calls;      /* kernels inside units */
	double outside_ns;               /* GPU time outside every unit (exact) */
	uint64_t outside_calls;
};

struct lp_tsample_table {
	struct lp_tsample_row *rows;      /* by estimated time inside units, descending */
	size_t n_rows;
	int sampled;                     /* 0: every number is exact */
	uint32_t units_exact, units_recorded, units_sampled_stratum;
	struct lp_tsample_est total_ns;   /* all rows together (its own interval, not a sum of theirs) */
};

/* Groups the kernels of `p` by key(p, kernel index, ctx) (NULL: left out) and scales the time and
 * call count inside units. lp_tsample_kernel_table keys by kernel name. */
typedef const char *(*lp_tsample_key_fn)(const struct lp_profile *p, size_t kernel, void *ctx);
int lp_tsample_table_build(const struct lp_profile *p, const struct lp_tsample_plan *plan, double conf,
	lp_tsample_key_fn key, void *ctx, struct lp_tsample_table *out, struct lp_err *err);
int lp_tsample_kernel_table(const struct lp_profile *p, const struct lp_tsample_plan *plan, double conf,
	struct lp_tsample_table *out, struct lp_err *err);
void lp_tsample_table_release(struct lp_tsample_table *t);

/* ---- scaling the analysis's tables (issue 24: Top Kernels, Operators, summary.json, HTML) ----
 *
 * A kernel launched inside a recorded unit of the sampled stratum stands for N / n units' worth
 * (the same estimate as above: exact part + N x mean over the recorded units); every other
 * measured kernel stands for itself. Warm-up (kernel_stage -2, excluded ranges) is left out of
 * the units as it is out of the tables. Calls are rounded estimates; busy_ms and its stage split
 * are scaled by the row's total_ms ratio (busy time of unrecorded units is not known, only
 * estimated); a row's interval is the one of its time inside the units (Student t, 95%). */
struct lp_tsample_weights {
	int sampled;                     /* 0: nothing to scale (exact trace, or no unit in the sample) */
	uint32_t n, N;                   /* recorded / all measured units of the sampled stratum */
	uint32_t n_exact;                /* measured units of the exact stratum */
	int32_t *kernel_slot;            /* per kernel: its recorded unit (0..n-1), -1 otherwise */
	int32_t *range_slot;             /* per range: the recorded unit it is in (or is), -1 otherwise */
	uint8_t *kernel_in_unit;         /* per kernel: 1 inside a measured unit (any stratum) */
};

int lp_tsample_weights_build(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_plan *plan, struct lp_tsample_weights *out, struct lp_err *err);
void lp_tsample_weights_release(struct lp_tsample_weights *w);

/* Scales a kernel set computed by lp_kernels_compute from the same profile and stages; rows are
 * re-sorted and shares recomputed. Nothing happens when !w->sampled. */
int lp_tsample_scale_kernels(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_weights *w, double conf, struct lp_kernel_set *set, struct lp_err *err);
/* Scales the stages' per-iteration kernel sums (kernel_ns, kernels; gpu_busy_ns by the same ratio)
 * and recomputes their statistics and bound verdicts; latencies and host times are exact and stay.
 * Nothing happens when !w->sampled. */
int lp_tsample_scale_stages(const struct lp_profile *p, const struct lp_tsample_weights *w,
	struct lp_stage_set *stages, struct lp_err *err);
/* Scales an operator table computed by lp_operators_compute (gpu_incl_ms, gpu_excl_ms, kernels,
 * share; calls and host_ms are exact). Nothing happens when !w->sampled. */
int lp_tsample_scale_ops(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_weights *w, double conf, struct lp_op_table *ops, struct lp_err *err);

#endif
