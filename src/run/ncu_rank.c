/* ncu_rank.c: which rank Nsight Compute profiles in a multi-rank job (see ncu_rank.h). */
#include "run/ncu_rank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/fs.h"

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

int lp_ncu_rank_resolve(const struct lp_profile *capture, int64_t rank, const char *lib_dir, struct lp_ncu_rank *out,
	struct lp_err *err)
{
	int32_t *ranks;
	size_t i, j, n = 0;
	struct lp_buf seen = LP_BUF_INIT;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	out->rank = (int)rank;
	if (rank < 0 || rank > 0x7fffffff)
		return lp_err_set(err, LP_EUSAGE, "profiling.ncu.rank=%lld: expected an integer >= 0", (long long)rank);
	ranks = malloc((capture->n_processes + 1) * sizeof(*ranks));
	if (!ranks)
		return lp_oom(err);
	for (i = 0; i < capture->n_processes; i++) {
		const struct lp_process *pr = &capture->processes[i];
		if (pr->rank < 0)
			continue;
		for (j = 0; j < n && ranks[j] != pr->rank; j++)
			;
		if (j == n)
			ranks[n++] = pr->rank;
		if (pr->rank == rank && out->n_pids < LP_NCU_RANK_PIDS_MAX)
			out->pids[out->n_pids++] = pr->pid;
	}
	out->n_ranks = n;
	out->multi = n >= 2;
	if (!out->multi) {
		out->n_pids = 0;
		goto done;
	}
	if (!out->n_pids) {
		qsort(ranks, n, sizeof(*ranks), cmp_i32);
		for (i = 0; i < n && i < 16; i++)
			lp_buf_addf(&seen, "%s%d", i ? ", " : "", (int)ranks[i]);
		if (n > 16)
			lp_buf_addf(&seen, ", ... (%zu ranks)", n);
		rc = lp_err_set(err, LP_EUSAGE, "profiling.ncu.rank=%lld: the capture saw ranks %s", (long long)rank,
			seen.oom ? "?" : seen.data);
		goto done;
	}
	snprintf(out->gate, sizeof(out->gate), "%s/libllmprof_ncu_gate.so", lib_dir ? lib_dir : ".");
	if (!lp_fs_is_file(out->gate)) {
		rc = lp_err_set(err, LP_EENV, "libllmprof_ncu_gate.so is not next to the tracer library ('%s'): ncu cannot "
			"profile one rank of this %zu-rank job", out->gate, n);
		lp_err_hint(err, "build the target llmprof_ncu_gate (make, or cmake --build ... --target llmprof_ncu_gate)");
	}
done:
	free(ranks);
	lp_buf_release(&seen);
	return rc;
}
