/* ncu_gate.c: libllmprof_ncu_gate.so, preloaded (LD_PRELOAD) into every process of a multi-rank
 * job that llmprof runs under Nsight Compute, so that ncu profiles one chosen rank only
 * (`profiling.ncu.rank`, docs/ranks.md): ncu serializes kernels across processes, and ranks it
 * slows down unevenly make their collectives wait or hang.
 *
 * How: ncu reaches a process through the CUDA driver's tool variable, CUDA_INJECTION64_PATH, read
 * when CUDA initializes (and NVTX's, NVTX_INJECTION64_PATH). In a process whose launcher rank
 * (RANK, OMPI_COMM_WORLD_RANK, ... as in rank.c) is known and differs from LLMPROF_NCU_RANK,
 * this constructor removes both before main, while the process is single-threaded: that rank runs
 * without ncu. The chosen rank, and processes without a rank (the launcher), are left alone.
 * The decision is written to LLMPROF_NCU_GATE_LOG when set (never to the host's stdout/stderr).
 * No other symbol is exported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject.h"

__attribute__((constructor)) static void ncu_gate(void)
{
	const char *want = getenv("LLMPROF_NCU_RANK"), *logp = getenv("LLMPROF_NCU_GATE_LOG");
	struct lp_inj_rank rk;
	char *end;
	long chosen;
	int gated;
	if (!want || !*want)
		return;
	chosen = strtol(want, &end, 10);
	if (*end || chosen < 0)
		return;
	lp_inj_rank_read(&rk);
	gated = rk.source && rk.rank != chosen;
	if (gated) {
		unsetenv("CUDA_INJECTION64_PATH");
		unsetenv("NVTX_INJECTION64_PATH");
	}
	if (logp && *logp) {
		FILE *f = fopen(logp, "a");
		if (f) {
			fprintf(f, "pid %ld rank %d (%s): %s\n", (long)getpid(), (int)rk.rank,
				rk.source ? rk.source : "no rank variable", gated ? "not profiled" : "profiled");
			fclose(f);
		}
	}
}
