/* sampling.h: honest statistics for sampled traces (issue 24; docs/tracer.md "Sampled tracing").
 *
 * In sampled mode the tracer records kernels only inside some instances of the sampling unit
 * (`decode_step`): under each parent range the first `first` instances (the exact stratum), then
 * one unit in each block of `every` of the others (the sampled stratum), at a random position per
 * block (trace_format.h lp_trace_sample_pick; older tracers took the block's first unit). Kernels
 * outside every unit are all recorded. A table from such a trace is scaled here, row by row (a
 * kernel name, an operator ...), as a stratified sample with one unit per stratum (the design,
 * lp_tsample_design below):
 *
 *   strata   = the blocks; a block without a recorded unit (the last, partial block of a parent
 *              whose position fell past its end; a block cut by auto's decision) is collapsed into
 *              the previous stratum of its parent (else the next, else the previous of any parent),
 *   estimate = sum over the exact stratum + sum over strata h of N_h * mean_h (N_h its units, the
 *              mean over its recorded units; a unit without the row counts 0),
 *   variance = sum over strata of N_h^2 * v_h, v_h the variance of one unit drawn from stratum h,
 *              which one draw cannot give: it is estimated from the neighbouring strata of the same
 *              parent by balanced second differences (Yates; Wolter, Introduction to Variance
 *              Estimation, ch. 8, estimator v5): d_j = (y_{j-1} - 2 y_j + y_{j+1})^2 / 6, v_h the
 *              mean of the d_j next to h; a linear drift with the context length cancels, a jump
 *              inflates the two d_j around it (conservative there). Parents with two strata use
 *              successive differences (y_j - y_{j+1})^2 / 2; a parent with one stratum the others'
 *              pooled value. A stratum with several recorded units uses its own sample variance,
 *   interval = estimate +- t(1 - alpha/2, df) * sqrt(variance), df the number of differences.
 *
 * What the interval covers: the error of sampling the units of this run, nothing else (two runs of
 * a program differ by more: docs/tracer.md). A row with no variance estimate (a single stratum)
 * gets no interval (half_ci < 0: unknown).
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
	uint8_t pick;                    /* LP_TRACE_SAMPLE_PICK_*: 0 the block's first unit, 1 random */
	uint64_t seed;                   /* pick 1: the seed of the positions */
	uint32_t offset;                 /* pick 0: the recorded cluster in each block (the tracer's is
	                                  * 0; lp_tsample_coverage varies it) */
	uint32_t burst;                  /* 0: one unit per block, CUPTI attached between units (the
	                                  * work between them all recorded); >= 1: one cluster of
	                                  * `burst` consecutive units per block (every / burst clusters),
	                                  * CUPTI detached between bursts, so the work between two units
	                                  * is recorded only before a recorded unit (lp_tsample_weights
	                                  * gives it that unit's weight) */
};

/* The plan of a loaded trace (its processes' SAMPLING records): 1 and the plan of the first
 * process traced in sampled mode, else 0 and an exact plan (unit: the record's, or decode_step). */
int lp_tsample_plan_of(const struct lp_profile *p, struct lp_tsample_plan *plan);

/* 1 when the plan records instance `index` (0-based under its parent) of the unit under its
 * thread's `ordinal`-th parent (trace_format.h lp_trace_sample_pick: the times the thread's unit
 * parent changed). The tracer's own schedule (inject/sample.c) is the same expression. */
int lp_tsample_recorded(const struct lp_tsample_plan *plan, uint32_t ordinal, uint32_t index);
/* splitmix64's finalizer, the hash of the schedule's positions (trace_format.h). */
uint64_t lp_tsample_mix64(uint64_t x);

struct lp_tsample_est {
	double total;                    /* estimate over all units of both strata */
	double half_ci;                  /* half width of the interval; 0 exact; < 0 unknown (n < 2) */
	double exact_part;               /* the exact stratum's sum (and whatever needs no scaling) */
	uint32_t n, N;                   /* recorded / all units of the sampled stratum */
};

/* The estimate of one row under simple random sampling (n of N units, no strata): `exact_sum`
 * over the exact stratum, `x` the n per-unit values of the recorded units of the sampled stratum,
 * N >= n its units; `conf` the interval's level (0.95); variance N^2 (1 - n/N) s^2 / n. The
 * tables use the stratified design below; this is the estimator the first sampled tracer was read
 * with (kept for the coverage comparison, lp_tsample_coverage). */
void lp_tsample_estimate(double exact_sum, const double *x, uint32_t n, uint32_t N, double conf,
	struct lp_tsample_est *out);

/* ---- the design: strata of the sampled stratum's units (sampling_design.c) ---- */

/* One unit of the sampled stratum: its chain (the units of one thread under one parent range, in
 * index order), its index under the parent, and its recorded slot (0..n-1), or -1 when skipped. */
struct lp_tsample_unit_ref {
	uint32_t chain;
	uint32_t index;
	int32_t slot;
	uint8_t srs;                     /* a stage instance (lp_tsample_units.stage_unit): its chain is one
	                                  * stratum, a simple random sample, never merged with another */
};

enum lp_tsample_var {
	LP_TSAMPLE_VAR_BALANCED = 0,      /* balanced second differences (the default, above) */
	LP_TSAMPLE_VAR_SUCCESSIVE = 1,    /* successive differences (y_j - y_{j+1})^2 / 2 */
	LP_TSAMPLE_VAR_SRS = 2,           /* no strata: N x the mean, the simple-random-sampling
	                                   * variance (lp_tsample_estimate; for comparisons only) */
};

struct lp_tsample_design {
	uint32_t n, N;                   /* recorded units (slots) / all units of the sampled stratum */
	uint32_t n_strata;
	enum lp_tsample_var var;
	int cluster;                     /* 1: a stratum's recorded units are one cluster (bursts): its
	                                  * variance comes from the differences of the strata's means,
	                                  * never from the spread inside the cluster */
	double *w;                       /* per slot: the units it stands for (N_h / n_h) */
	uint32_t *slot_stratum;          /* per slot: its stratum (strata in (chain, index) order) */
	uint32_t *st_N, *st_n, *st_chain; /* per stratum: units, recorded units, chain */
	uint8_t *st_srs;                 /* per stratum: a chain of stage instances (unit_ref.srs) */
};

/* Cuts `n_units` units (any order) into strata (blocks of `every` after `first`, empty blocks
 * collapsed, sampling.h) for `n_slots` recorded slots (every slot must appear once among the
 * units). out is released by lp_tsample_design_release (also after a failure). */
int lp_tsample_design_build(const struct lp_tsample_unit_ref *units, size_t n_units, uint32_t n_slots,
	uint32_t every, uint32_t first, struct lp_tsample_design *out, struct lp_err *err);
/* The estimate of one row from its per-slot values x[0..n-1], plus `exact_sum`. */
void lp_tsample_design_estimate(const struct lp_tsample_design *d, double exact_sum, const double *x,
	double conf, struct lp_tsample_est *out);
void lp_tsample_design_release(struct lp_tsample_design *d);

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
	uint8_t *stage_unit;             /* per range index: 1 a stage instance sampled on its own (below) */
	uint32_t *unit_index;            /* per range index: the unit's index under its parent */
	uint32_t *chain;                 /* per range index: its chain (lp_tsample_unit_ref), units only */
	uint32_t *ordinal;               /* per range index: its parent ordinal on its thread (the pick) */
	uint32_t n_exact, n_recorded, n_skipped;   /* all units, the stage instances among them */
	uint32_t n_stage_recorded, n_stage_skipped; /* the stage instances alone */
	uint32_t n_chains;
};

/* Finds the units (ranges named plan->unit, in any domain, not nested in another unit) and their
 * strata, and the stage instances the tracer sampled on their own (bursts: a serving loop's
 * prefill or mixed ranges with a STAGE record that says recorded or skipped, not in a unit; only
 * names with at least one skipped instance on a thread, whose instances then are units too, of
 * stratum RECORDED or SKIPPED, one chain per thread and name, a simple random sample of it): from the tracer's flags (lp_range.sample, sample_index) where present, else by replaying
 * its schedule (the index restarts whenever a thread's next unit has another parent than its last;
 * a random pick uses the seed of the unit's process). replay != 0 ignores the flags and replays
 * `plan` on any trace, e.g. an exact one (lp_tsample_coverage). */
int lp_tsample_units_find(const struct lp_profile *p, const struct lp_tsample_plan *plan, int replay,
	struct lp_tsample_units *out, struct lp_err *err);
void lp_tsample_units_release(struct lp_tsample_units *u);
/* The unit range r is in (r itself or its nearest ancestor that is a unit or a stage instance of
 * `units`), or -1. */
int32_t lp_tsample_unit_of(const struct lp_profile *p, const struct lp_tsample_plan *plan,
	const struct lp_tsample_units *units, int32_t r);
/* The design of the units found: per range, slot[i] >= 0 a recorded unit of the sampled stratum
 * (its slot), -1 a skipped unit of it, -2 anything left out (exact units, warm-up, not a unit). */
int lp_tsample_units_design(const struct lp_tsample_units *units, size_t n_ranges, const int32_t *slot,
	const struct lp_tsample_plan *plan, struct lp_tsample_design *out, struct lp_err *err);

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

/* ---- the coverage of the intervals on an exact trace (sampling_check.c) ----
 *
 * The schedule of `plan` (every, first, pick) applied `trials` times to an exact trace, each time
 * with another seed (pick random: seed = a hash of seed0 and the trial) or offset (pick first:
 * trial % every, the systematic sample with a random start): the units on the schedule play the
 * recorded ones, and each kernel's estimate (`var`) is compared with its exact total over the same
 * units. Units under warm-up (stages, NULL: none) are left out as from the tables. Rows: kernel
 * names (inside units), by exact time, descending; share = exact time / all kernel time in units. */
struct lp_tsample_cov_row {
	const char *key;                 /* kernel name (points into the profile) */
	double exact_ns, share;
	uint32_t covered, unknown;       /* trials whose interval held the exact total / had none */
	double bias, rmse;               /* of estimate - exact over the trials, relative to exact */
	double half_rel;                 /* mean half width of the interval, relative to exact */
};

struct lp_tsample_coverage {
	struct lp_tsample_cov_row *rows;
	size_t n_rows;
	uint32_t trials;
	uint32_t units, units_exact;     /* measured units: all, of the exact stratum */
	double units_ns;                 /* kernel time inside measured units */
};

/* The per-unit values it works from: for each unit of the sampled stratum (chain, index under its
 * parent, parent ordinal) each kernel name's GPU time in it, plus each name's sum over the exact
 * stratum and over all measured units. keys are not owned (the profile's names, or the caller's
 * when it fills the struct itself, e.g. from a file); the arrays are, released by _release. */
struct lp_tsample_values {
	size_t n_units, n_keys;
	struct lp_tsample_unit_ref *refs;  /* per unit: chain, index (slot unused) */
	uint32_t *ordinal;               /* per unit: its parent ordinal (the pick) */
	double *val;                     /* n_units x n_keys, row-major, ns */
	const char **keys;
	double *exact_part, *total;      /* per key, ns */
	uint32_t units, units_exact;     /* measured units: all, of the exact stratum */
	double units_ns;
};

int lp_tsample_values_of(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_plan *plan, struct lp_tsample_values *out, struct lp_err *err);
void lp_tsample_values_release(struct lp_tsample_values *v);
int lp_tsample_coverage_of(const struct lp_tsample_values *v, const struct lp_tsample_plan *plan,
	enum lp_tsample_var var, uint32_t trials, uint64_t seed0, double conf, struct lp_tsample_coverage *out,
	struct lp_err *err);
int lp_tsample_coverage(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_plan *plan, enum lp_tsample_var var, uint32_t trials, uint64_t seed0, double conf,
	struct lp_tsample_coverage *out, struct lp_err *err);
void lp_tsample_coverage_release(struct lp_tsample_coverage *c);

/* ---- scaling the analysis's tables (issue 24: Top Kernels, Operators, summary.json, HTML) ----
 *
 * A kernel launched inside a recorded unit of the sampled stratum stands for design.w[slot] units'
 * worth (the same estimate as above: exact part + sum of N_h x the stratum's mean); every other
 * measured kernel stands for itself. Warm-up (kernel_stage -2, excluded ranges) is left out of
 * the units as it is out of the tables. Calls are rounded estimates; busy_ms and its stage split
 * are scaled by the row's total_ms ratio (busy time of unrecorded units is not known, only
 * estimated); a row's interval is the one of its time inside the units (Student t, 95%). */
struct lp_tsample_weights {
	int sampled;                     /* 0: nothing to scale (exact trace, or no unit in the sample) */
	uint32_t n, N;                   /* recorded / all measured units of the sampled stratum */
	uint32_t stage_n, stage_N;       /* ... the stage instances among them (lp_tsample_units_find) */
	struct lp_tsample_design design; /* their strata: design.w[slot] is what a recorded unit stands for */
	uint32_t n_exact;                /* measured units of the exact stratum */
	int32_t *kernel_slot;            /* per kernel: its recorded unit (0..n-1), -1 otherwise */
	int32_t *range_slot;             /* per range: the recorded unit it is in (or is), -1 otherwise */
	uint8_t *kernel_in_unit;         /* per kernel: 1 inside a measured unit (any stratum) */
	int from_first;                  /* no unit of the sampled stratum was recorded (blocks longer than
	                                  * the generations): the exact stratum's units, slots 0..n-1, stand
	                                  * for them (a ratio estimate: the first steps taken for the later
	                                  * ones, no interval) */
};

/* 1 when range r or an ancestor is warm-up / a left-out first iteration (stages NULL: 0). */
int lp_tsample_range_warm(const struct lp_profile *p, const struct lp_stage_set *stages, int32_t r);

int lp_tsample_weights_build(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_plan *plan, struct lp_tsample_weights *out, struct lp_err *err);
void lp_tsample_weights_release(struct lp_tsample_weights *w);

/* trace.rerun_sd's default, percent: how much one run's total of a kernel lies off the totals of
 * other runs of the same program (a standard deviation per run; docs/tracer.md "A rerun's
 * interval", measured in bench/tracer/README.md run 25). */
#define LP_TSAMPLE_RERUN_SD_PCT 0.2

/* The half width of a 95% interval for the exact total a separate run would record, from a sampled
 * total's own interval ci_ms (sampling error) and two runs' own spread, rerun_sd_pct of total_ms each
 * (normal, in quadrature): sqrt(ci^2 + 2 (1.96 sd total)^2). ci_ms < 0 (unknown) gives -1;
 * rerun_sd_pct <= 0 gives ci_ms. */
double lp_tsample_rerun_ms(double ci_ms, double total_ms, double rerun_sd_pct);

/* Scales a kernel set computed by lp_kernels_compute from the same profile and stages; rows are
 * re-sorted and shares recomputed. Nothing happens when !w->sampled. */
int lp_tsample_scale_kernels(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_weights *w, double conf, struct lp_kernel_set *set, struct lp_err *err);
/* Scales the stages' per-iteration kernel sums (kernel_ns, kernels; gpu_busy_ns by the same ratio)
 * and recomputes their statistics and bound verdicts; latencies and host times are exact and stay.
 * A stage whose iterations are the units themselves (decode steps with no decode range) is not
 * scaled per iteration: its GPU busy and kernel statistics are taken over the recorded iterations
 * (lp_stage.recorded_iters). Nothing happens when !w->sampled. */
int lp_tsample_scale_stages(const struct lp_profile *p, const struct lp_tsample_weights *w,
	struct lp_stage_set *stages, struct lp_err *err);
/* Scales an operator table computed by lp_operators_compute (gpu_incl_ms, gpu_excl_ms, kernels,
 * share; calls and host_ms are exact). Nothing happens when !w->sampled. */
int lp_tsample_scale_ops(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_weights *w, double conf, struct lp_op_table *ops, struct lp_err *err);

#endif
