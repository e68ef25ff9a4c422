/* kernels.h: the kernel table of the analysis: the seed's KernelRecord rows (kernel_name, device,
 * total_ms, calls, mean_ms) over the measured iterations, plus share of GPU time, per-stage split,
 * a family (GEMM, attention, norm, ...), and in deep mode the Nsight Compute metrics joined by name
 * with FLOPs, arithmetic intensity and a roofline class.
 *
 * Joining: ncu prints a function-style name or a demangled one with its return type ("void
 * k<1, 0>(const T *)"), the tracer a demangled one without it ("k<1, 0>(T const*)"). A row joins the
 * ncu records with the same function name and template arguments (up to a leading "void " and
 * spaces; argument lists are not compared) when there are any, so template variants keep their own
 * metrics; else, unless both names carry template arguments (then they are different variants),
 * those whose short name matches
 * (parse/kname.h: return type, argument list and template arguments dropped). ncu
 * metrics are per launch (a record standing for several launches holds their mean); several
 * matching records are averaged weighted by their calls.
 *
 * Overlap: with concurrent streams or programmatic dependent launch kernels overlap and summed
 * durations exceed the busy time. Each row's busy_ms splits every instant of busy time equally among
 * the kernels running then (a sweep over the measured launches, per device), so the shares add up to
 * 100% of busy time; total_ms keeps the plain durations. Warm-up launches are left out of both.
 *
 * Roofline: intensity I = FLOP / DRAM byte against the ridge R = peak FLOP/s / peak B/s:
 * I < R/2 memory-bound, I > 2R compute-bound, otherwise balanced (docs/metrics.md).
 *
 * Ownership: the set owns its rows and strings; lp_kernel_set_release frees them. Not thread-safe.
 */
#ifndef LP_ANALYZE_KERNELS_H
#define LP_ANALYZE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/peaks.h"
#include "analyze/stages.h"
#include "core/buf.h"
#include "parse/kname.h"

enum lp_roofline {
	LP_ROOF_NA = 0,
	LP_ROOF_MEMORY,
	LP_ROOF_BALANCED,
	LP_ROOF_COMPUTE,
};

#define LP_ROOF_BAND 2.0   /* balanced within a factor of 2 of the ridge point */

/* ncu metrics of one kernel, per launch; NAN when not collected. */
struct lp_kernel_ncu {
	int joined;
	uint64_t records;            /* ncu rows (launches) joined */
	double duration_ns;
	double sm_pct, dram_pct, occupancy_pct;
	double dram_bytes;           /* read + write */
	double tensor_flops, fp32_flops, flops;
	double intensity;            /* FLOP / byte */
	double achieved_flops_per_s, achieved_bytes_per_s;
	enum lp_roofline roofline;
};

struct lp_kernel_row {
	const char *name;            /* full demangled name */
	const char *short_name;
	const char *label;           /* short_name, or when another row shares it, the full name from the
	                              * short name on (template arguments), shortened in the middle */
	int32_t device;
	double total_ms, mean_ms, min_ms, max_ms;
	double std_ms;               /* sample standard deviation of one launch's duration */
	uint64_t calls;
	double busy_ms;              /* its share of GPU busy time: time it ran alone on its device, plus
	                              * an equal split of time shared with concurrent kernels; equals
	                              * total_ms when nothing overlaps */
	double share;                /* busy_ms / the set's busy_ms: shares add up to 100% of busy time */
	double stage_ms[3];          /* prefill, decode, other */
	double stage_busy_ms[3];     /* busy_ms split the same way */
	uint64_t stage_calls[3];
	enum lp_kernel_family family;
	struct lp_kernel_ncu ncu;
	/* a sampled trace (analyze/sampling.h lp_tsample_scale_kernels): total_ms, calls, busy_ms and
	 * the stage split are estimates for every sampling unit, not only the recorded ones */
	int sampled;                 /* 1: this row has kernels inside sampling units: scaled */
	uint8_t stage_sampled[3];    /* sampled: which of stage_ms[] hold scaled units (the others exact) */
	double ci_ms;                /* half width of total_ms's 95% interval; 0 exact; < 0 unknown (n < 2) */
	double rerun_ms;             /* sampled: half width of the 95% interval for the total_ms a separate
	                              * exact run would record (lp_tsample_rerun_ms); 0 exact; < 0 unknown */
};

struct lp_kernel_set {
	struct lp_kernel_row *rows;  /* busy_ms descending (the GPU time each stands for; total_ms when
	                              * nothing overlaps), then total_ms, then name */
	size_t n_rows;
	double total_ms;             /* summed durations */
	double busy_ms;              /* union of the measured kernels' intervals, per device, summed */
	double family_ms[3][LP_FAM_COUNT];   /* per stage kind (prefill, decode, other) */
	size_t n_ncu_records, n_joined_rows;
	double ridge_flop_per_byte;  /* 0 when the peaks are unknown */
	int sampled;                 /* the rows come from a sampled trace, scaled (see lp_kernel_row) */
	uint32_t sample_n, sample_N; /* recorded / all units of the sampled stratum (measured iterations) */
	uint32_t sample_exact;       /* units of the exact stratum (the first ones under each parent) */
	uint32_t sample_missing;     /* a sampled trace none of whose units past the first ones was
	                              * recorded (no burst fell inside its short generations): those
	                              * units, which the rows estimate from the first ones
	                              * (lp_tsample_weights.from_first: no interval) */
	struct lp_arena arena;
};

/* `ncu` may be NULL (light mode). */
int lp_kernels_compute(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_kernel_record *ncu, size_t n_ncu, const struct lp_peak *peak,
	struct lp_kernel_set *out, struct lp_err *err);
void lp_kernel_set_release(struct lp_kernel_set *s);
/* qsort order of kernel rows: busy time, then total time, descending; then name and device. */
int lp_kernel_row_cmp(const void *a, const void *b);

const char *lp_roofline_name(enum lp_roofline r);

#endif
