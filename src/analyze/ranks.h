/* ranks.h: several processes of one job (torchrun, mpirun, a serving engine's workers,
 * multiprocessing children): per-rank stage tables, a merged view that lines the ranks up by
 * stage instance, and communication against compute (issue 17).
 *
 * Ranks. Each process of the profile carries the rank its launcher gave it (lp_process.rank, from
 * RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID ..., recorded by the tracer). Processes
 * with the same rank form one rank (a rank's fork children, its compile workers). When some
 * processes have a rank, those without one (the launcher: torchrun's agent, mpirun) are not ranks.
 * When none has one (multiprocessing spawn/fork workers), every process with GPU work or a stage
 * range is a rank, numbered by start time (rank_source "process order"). One rank or none: the
 * view says so (n_ranks <= 1) and the reports leave the section out.
 *
 * Per-rank stages: each rank's processes are copied into their own profile and go through the
 * ordinary stage analysis (stages.h) with the same rules, so each rank gets exactly the table a
 * single-process run would get (same skip-first and warm-up rules).
 *
 * Alignment: stage instance k of a stage (same name and domain) is the k-th measured iteration by
 * start time on each rank. Ranks with fewer iterations are aligned on the first min(n) and the
 * stage records the mismatch (iters_min != iters_max). Per instance: the slowest rank (largest
 * latency, lowest rank on ties) and the skew, max - min latency over the ranks. Per stage: the
 * mean and largest skew, and the slowest rank (the one slowest in most instances; ties: the larger
 * mean latency).
 *
 * Communication. A kernel is communication when its name is a collective library's (NCCL's
 * `ncclKernel_*` / `ncclDevKernel_*`, and kernel names carrying allreduce, all_gather,
 * reduce_scatter, alltoall, broadcast, sendrecv: custom all-reduce and symmetric-memory kernels);
 * peer-to-peer copies (LP_COPY_PTOP) are communication too; so are NVTX ranges named like a
 * collective (all_reduce, allgather, barrier, send, recv, ..., also `nccl:`/`gloo:` prefixes):
 * host-side collectives (gloo on the CPU) that a program marks; they count only on a rank without
 * communication kernels (NCCL marks its own calls, `ncclAllReduce` around the enqueue: there the
 * kernel is the collective). Everything else a kernel does is
 * compute. Per stage iteration and rank: comm_ns = the length of the union of its communication
 * intervals (kernels, P2P copies, host collective ranges inside the iteration), compute_ns = the
 * union of its compute kernels, overlap_ns = the part of the communication union during which
 * some compute kernel of the same rank runs (necessarily on another stream), exposed_ns =
 * comm_ns - overlap_ns: communication nothing hides. Stage values are means over the aligned
 * iterations.
 *
 * Waiting in collectives. Collectives are issued in the same order on every rank, so the j-th
 * communication kernel (and the j-th host collective range) of every rank is one collective. Its
 * fastest rank's duration is the transfer itself; each rank waited its own duration minus that
 * (a rank that arrives early waits for the last one). This needs no clock shared between hosts.
 * When the ranks' counts differ the first min(n) are aligned and the view says so.
 *
 * Advice: exposed communication above LP_RANKS_EXPOSED_FRAC of a stage's mean latency (over the
 * ranks), and skew above LP_RANKS_SKEW_FRAC of it, each give one recommendation with the numbers.
 *
 * Ownership: the view owns its arrays and strings (copied into its arena); it does not point
 * into the profile. lp_rank_view_release frees it. Not thread-safe.
 *
 *   struct lp_rank_view v;
 *   if (lp_ranks_compute(&profile, &rules, &v, err) < 0) return -1;
 *   if (v.n_ranks > 1) ... v.stages[s].skew_mean_ns ... v.ranks[r].stages ...
 *   lp_rank_view_release(&v);
 */
#ifndef LP_ANALYZE_RANKS_H
#define LP_ANALYZE_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/stages.h"
#include "core/arena.h"
#include "core/err.h"
#include "profile/profile.h"

#define LP_RANKS_MAX 1024            /* ranks analyzed; more is an error naming the count */
#define LP_RANKS_PIDS_MAX 64         /* processes of one rank */
#define LP_RANKS_EXPOSED_FRAC 0.10   /* exposed communication share of latency that gives advice */
#define LP_RANKS_SKEW_FRAC 0.10      /* skew share of latency that gives advice */

/* Is this NVTX range name a collective (all_reduce, barrier, send, nccl:..., gloo:...)? */
int lp_comm_range_is(const char *name);

/* One stage on one rank: its iterations' clocks and the communication split, per iteration mean.
 * A stage whose iterations hold decode steps also gets a row of its steps (step_of = the stage's
 * name): every measured step is an instance (latencies = the stage's step latencies, stages.h;
 * host = the step range's push to pop; GPU busy = the union of its kernels and copies) with the
 * same communication split, so exposed communication and skew show per decode step. */
struct lp_rank_stage {
	const char *name, *domain;
	const char *step_of;                 /* a row of decode steps: the stage holding them; NULL otherwise */
	size_t n_iters;
	double lat_ms, gpu_ms, host_ms;      /* means over the iterations (stages.h's clocks) */
	double kernels;                      /* kernels per iteration */
	double comm_ms, compute_ms, overlap_ms, exposed_ms;  /* per iteration */
	double wait_ms;                      /* per iteration: waiting in collectives (see above) */
	uint64_t comm_kernels;               /* over all iterations */
	double *lat_iter_ms;                 /* n_iters latencies, by start */
	/* A sampled trace (docs/tracer.md "Sampled tracing"): an unrecorded step has no kernels in it.
	 * A step row's kernel columns (gpu_ms, kernels, comm .. wait) are means over its recorded
	 * steps; a stage row holding such steps adds each unrecorded one at its step row's means. */
	size_t n_recorded;                   /* step row: steps whose kernels were recorded (n_iters exact) */
	size_t n_unrecorded;                 /* stage row: its unrecorded steps, over all iterations */
	size_t of_row;                       /* step row: the row of the stage holding its steps */
};

struct lp_rank {
	int32_t rank;                        /* the launcher's, or the order (rank_source) */
	int32_t local_rank, world_size;      /* -1 unknown */
	const char *rank_source;             /* "RANK", "OMPI_COMM_WORLD_RANK", "process order" */
	const char *host;
	const char *visible_devices;         /* CUDA_VISIBLE_DEVICES at start; "" unset */
	uint32_t pids[LP_RANKS_PIDS_MAX];    /* pids[0]: the first started */
	size_t n_pids;
	int32_t devices[8];                  /* ordinals its kernels ran on, ascending */
	size_t n_devices;
	uint64_t kernels, copies;            /* whole run, warm-up included */
	uint64_t measured_kernels;           /* not under warm-up */
	uint64_t comm_kernels;               /* whole run */
	double comm_kernel_ms;               /* summed durations of the communication kernels */
	double wait_ms;                      /* whole run: waiting in collectives */
	uint64_t collectives;                /* aligned collectives (kernels and host ranges) */
	struct lp_stage_set stages;          /* this rank's own stage table */
	struct lp_rank_stage *rstages;       /* one per stages.stages[], same order; then the step rows */
	size_t n_rstages;
};

/* One stage across the ranks. */
struct lp_rank_merged {
	const char *name, *domain;
	const char *step_of;                 /* a row of decode steps (lp_rank_stage.step_of) */
	size_t n_ranks;                      /* ranks that have the stage */
	size_t iters;                        /* aligned instances: min over those ranks */
	size_t iters_max;                    /* > iters: some rank has more */
	double lat_mean_ms;                  /* over ranks and aligned instances */
	double skew_mean_ms, skew_max_ms;    /* max - min latency per instance */
	size_t skew_max_iter;
	int32_t slowest_rank;                /* most often slowest */
	size_t slowest_count;                /* instances it was slowest in */
	double comm_ms, exposed_ms, overlap_ms, compute_ms, wait_ms;  /* mean over ranks, per iteration */
	double exposed_frac;                 /* exposed_ms / lat_mean_ms; 0 without latency */
	int32_t *slowest_of;                 /* per aligned instance: its slowest rank */
	double *skew_ms;                     /* per aligned instance */
};

struct lp_rank_advice {
	const char *rule;                    /* "exposed-communication", "rank-skew" */
	const char *text;
};

struct lp_rank_view {
	struct lp_rank *ranks;               /* ascending rank */
	size_t n_ranks;
	const char *rank_source;             /* of the first rank */
	int32_t world_size;                  /* the launcher's, -1 unknown */
	size_t n_processes, n_not_ranks;     /* profile processes; those left out (launchers) */
	struct lp_rank_merged *merged;
	size_t n_merged;
	int collectives_mismatch;            /* ranks issued different numbers of collectives */
	size_t steps_unrecorded, steps;      /* a sampled trace: decode steps without kernels, of all */
	struct lp_rank_advice advice[8];
	size_t n_advice;
	struct lp_arena arena;
};

/* Computes the view; rules as for lp_stages_compute_ex (NULL: defaults). A profile of one process
 * gives n_ranks 1 (no merged rows). -1 on out of memory or more than LP_RANKS_MAX ranks. */
int lp_ranks_compute(const struct lp_profile *p, const struct lp_stage_rules *rules, struct lp_rank_view *out,
	struct lp_err *err);
void lp_rank_view_release(struct lp_rank_view *v);
/* The rank a process belongs to in a computed view (its index in ranks[]), -1 when none. */
int lp_rank_of_pid(const struct lp_rank_view *v, uint32_t pid);

#endif
