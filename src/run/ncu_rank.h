/* ncu_rank.h: which rank Nsight Compute profiles in a multi-rank job (`profiling.ncu.rank`,
 * docs/ranks.md). The ncu phase of `llmprof run` asks before it starts ncu.
 *
 * A job is multi-rank when the capture's processes carry at least two distinct launcher ranks
 * (RANK, OMPI_COMM_WORLD_RANK, ... recorded by the tracer; profile.h lp_process.rank). Then ncu
 * profiles the chosen rank only, through libllmprof_ncu_gate.so (collect/ncu.h "One rank"): the
 * other ranks run at full speed and none of them waits on a collective ncu slowed down. Jobs whose
 * processes have no launcher rank (multiprocessing workers) run under ncu whole, as before.
 *
 * Errors (the phase fails with the message, nothing runs): the chosen rank is not one of the
 * capture's ("profiling.ncu.rank=3: the capture saw ranks 0, 1"), libllmprof_ncu_gate.so missing
 * next to the tracer library.
 */
#ifndef LP_RUN_NCU_RANK_H
#define LP_RUN_NCU_RANK_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "profile/profile.h"

#define LP_NCU_RANK_PIDS_MAX 64

struct lp_ncu_rank {
	int multi;                   /* >= 2 launcher ranks: profile `rank` only */
	int rank;                    /* profiling.ncu.rank */
	size_t n_ranks;              /* distinct launcher ranks in the capture */
	uint32_t pids[LP_NCU_RANK_PIDS_MAX]; /* the capture's processes of that rank */
	size_t n_pids;
	char gate[1024];             /* absolute path of libllmprof_ncu_gate.so (multi only) */
};

/* Fills out from the capture, the configured rank and the folder of the tracer library (its
 * sibling is the gate). -1 with a usage error (wrong rank) or an environment error (no gate). */
int lp_ncu_rank_resolve(const struct lp_profile *capture, int64_t rank, const char *lib_dir, struct lp_ncu_rank *out,
	struct lp_err *err);

#endif
