/* rank.c: where this process stands in a multi-process job, read from its launcher's variables
 * for the RANK record (docs/trace-format.md). Plain getenv, no allocation: called while the
 * writer opens the file (process start, a fork child's first record) and when CUDA creates a
 * context (a program may set RANK itself, e.g. before init_process_group, after we started). */
#include <stdlib.h>
#include <string.h>

#include "inject.h"

/* One launcher's names: rank, local rank, world size, local world size (NULL: it has none). */
static const char *const families[][4] = {
	{ "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE" },    /* torchrun, accelerate, DeepSpeed */
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
		"OMPI_COMM_WORLD_LOCAL_SIZE" },                         /* Open MPI */
	{ "PMIX_RANK", NULL, NULL, NULL },                              /* PMIx launchers */
	{ "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS" }, /* MPICH / Hydra */
	{ "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_SIZE",
		"MV2_COMM_WORLD_LOCAL_SIZE" },                          /* MVAPICH2 */
	{ "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", NULL },       /* srun */
};

/* A non-negative decimal integer below 2^31, else -1. */
static int32_t env_int(const char *name)
{
	const char *s = name ? getenv(name) : NULL;
	char *end;
	long v;
	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > 0x7fffffffL)
		return -1;
	return (int32_t)v;
}

int lp_inj_rank_read(struct lp_inj_rank *out)
{
	size_t i;
	memset(out, 0, sizeof(*out));
	out->rank = out->local_rank = out->world_size = out->local_world_size = -1;
	out->visible_devices = getenv("CUDA_VISIBLE_DEVICES");
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		int32_t r = env_int(families[i][0]);
		if (r < 0)
			continue;
		out->rank = r;
		out->local_rank = env_int(families[i][1]);
		out->world_size = env_int(families[i][2]);
		out->local_world_size = env_int(families[i][3]);
		out->source = families[i][0];
		break;
	}
	return out->source || out->visible_devices;
}
