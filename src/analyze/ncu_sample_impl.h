/* ncu_sample_impl.h: what the planner's files share (analyze/ncu_sample.c groups the launches,
 * ncu_sample_sched.c splits them over ncu processes, ncu_sample_result.c attaches the results and
 * writes the JSON, ncu_sample_input.c reads the capture). Private to analyze/ncu_sample*.c. */
#ifndef LP_ANALYZE_NCU_SAMPLE_IMPL_H
#define LP_ANALYZE_NCU_SAMPLE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/ncu_sample.h"

struct lp_sample_config {
	const char *name;            /* a kernel name (ncu counts invocations per name) */
	uint32_t grid[3], block[3];  /* of its first launch (unused) */
	uint32_t shared_bytes;
	uint64_t count;              /* launches of this name in the process */
	uint64_t wcount;             /* of which inside the warm-up range */
	size_t offset;               /* into priv.inv_launch: invocation u is at offset + u - 1 (and
	                                warm-up invocation u at priv.winv_launch[offset + u - 1]) */
};

/* What scheduling needs about every launch (lp_sample_group fills it). */
struct lp_sample_priv {
	const struct lp_sample_launch *launches;
	size_t n;
	uint32_t *name_of;           /* per launch: index into configs (names) */
	uint64_t *inv_of;            /* per launch: its invocation number */
	int32_t *group_of;           /* per launch: its group, -1 not selected */
	int32_t *rank_of;            /* per launch: its step rank in its group (position when no steps) among
	                                the candidates of its picks; -1: not a candidate */
	uint32_t *inv_launch;        /* per name, per invocation: the launch */
	uint64_t *winv_of;           /* per launch: its number among its name's warm-up launches (0: none) */
	uint32_t *winv_launch;       /* per name, per warm-up invocation: the launch */
	uint32_t *members;           /* launches of each group (group->first_member ..), launch order */
	uint32_t *stand;             /* warm-up stand-ins of each group (group->first_stand ..), launch order */
};

/* Where group g's picks come from: its stand-ins (picks_from_warmup), else its launches (launch
 * order; those with rank_of < 0 are not candidates). */
const uint32_t *lp_sample_cands(const struct lp_sample_plan *p, const struct lp_sample_group *g, size_t *n);

/* -1, 0, 1 over three unsigned values (grid or block), first difference first. */
int lp_sample_cmp_dim3(const uint32_t *a, const uint32_t *b);
/* qsort comparator over uint64_t, ascending. */
int lp_sample_cmp_u64(const void *a, const void *b);
/* Frees the plan's ncu processes (a new schedule replaces them; the plan's release too):
 * procs NULL, n_procs 0. */
void lp_sample_procs_free(struct lp_sample_plan *p);

#endif
