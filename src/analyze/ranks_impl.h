/* ranks_impl.h: what ranks.c (grouping, the merged view, advice) and ranks_comm.c (communication
 * against compute, collectives) share; not for use outside them. See ranks.h for the rules. */
#ifndef LP_ANALYZE_RANKS_IMPL_H
#define LP_ANALYZE_RANKS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/ranks.h"

#define LP_RANKS_MAX_WALK 512        /* parent links followed at most (a corrupt profile may loop) */

/* One collective on one rank, in issue order. */
struct lp_ranks_coll {
	uint64_t start_ns, dur_ns;
	int32_t occ;                 /* flat occurrence of its stage iteration, -1 outside stages */
	int32_t socc;                /* flat occurrence of its decode step, -1 none */
};

/* One rank's occurrences (stage iterations, then decode steps) and collectives. Occurrence i
 * belongs to rstages[occ_row[i]]. */
struct lp_ranks_work {
	struct lp_ranks_coll *kcoll, *hcoll;  /* communication kernels, host collective ranges */
	size_t n_kcoll, n_hcoll;
	int32_t *occ_row;            /* flat occurrence -> index in rk->rstages */
	size_t n_occ;
	double *occ_wait_ns;         /* flat occurrence -> wait in collectives */
};

/* Fills rk->rstages / n_rstages (a row per stage, then a decode-step row per stage with steps:
 * communication split, latencies) and w from the rank's own profile and stage set. -1 on out of
 * memory. */
int lp_ranks_comm(struct lp_rank_view *v, struct lp_rank *rk, const struct lp_profile *sub, struct lp_ranks_work *w);
/* Lines up the j-th collective (kernels, or host ranges) of every rank; adds each rank's wait to
 * the rank and to its occurrences. Returns the count aligned. */
size_t lp_ranks_align_collectives(struct lp_rank_view *v, struct lp_ranks_work *w, int host);
void lp_ranks_work_release(struct lp_ranks_work *w);
/* A sampled trace, after the waits: each stage row holding unrecorded steps adds them at its step
 * row's means (ranks.h, lp_rank_stage); counts the view's steps and unrecorded ones. */
void lp_ranks_scale_sampled(struct lp_rank_view *v, struct lp_rank *rk);

#endif
