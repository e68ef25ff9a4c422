/* ncu_sample.h: which kernel launches Nsight Compute profiles, so that deep mode takes seconds
 * instead of hours (issue 15; docs/ncu-sampling.md).
 *
 * ncu's time grows with the number of profiled launches (about 0.02 s per replay pass per launch
 * on an H100), and most launches of an LLM are repeats of one kernel with one shape. The planner
 * reads the capture's launches of the selected stage or regions and profiles K of each group:
 *
 *   group  = (kernel function name, grid, block, dynamic+static shared memory, region)
 *   picks  = K launches of the group spread over its steps (evenly spaced step instances, and
 *            within a step a different position each time: layer 0, then 5, then 10 ...)
 *   wanted = in each region, the groups that make up `coverage` (0.95) of the region's kernel
 *            time, largest first; the rest is listed as not covered
 *
 * How ncu is told: `--kernel-name-base function --kernel-id ::regex:^(NAMES)$:^(INVOCATIONS)$`.
 * ncu numbers the invocations of each kernel name (1-based, in launch order, whatever the grid,
 * block or NVTX ranges: without a context or stream in --kernel-id, in the global filter mode;
 * measured with ncu 2025.3.1, bench/ncu_sampling/README.md), and so does the planner, over every
 * launch of the process (selected or not). A pick is then exactly one launch. One --kernel-id
 * applies one set of invocation numbers to every named kernel, so a process also profiles, for each
 * of its names, the other names' invocation numbers that it reaches ("extras"). The planner counts
 * them (`predicted`) and splits the groups over several ncu processes when that costs less than the
 * extras: adjacent clusters (ordered by their largest invocation number) are merged while one
 * process costs less than two. At most max_procs processes.
 *
 * Warm-up stand-ins (lp_sample_launch.warmup): launches of the warm-up iteration with a group's
 * configuration and region path are not selected, but when they have the steps the picks need, the
 * picks come from the earliest of them (the first 1/LP_SAMPLE_STAND_IN_SPAN of their steps): the
 * warm-up runs the same kernels earlier in the program, where ncu costs less, and a stand-in that
 * ncu profiles counts for its group.
 *
 * Cost: eta_s = sum over processes of per_process_s + the program's start (program_s less the span
 * of its launches in the capture) + program_factor * its launches' span (all of it, or with
 * stop_early up to the latest launch the process profiles) + predicted launches * per_launch_s.
 * With a budget, the plan is trimmed until it fits: first K is lowered (K-1 ... 1) for every group,
 * then groups are dropped from the smallest up (status LP_SAMPLE_BUDGET), so the kept groups are
 * always the ones with the most kernel time. Cached groups (the caller marks them,
 * collect/ncu_cache.h) cost nothing and are never planned.
 *
 * After the run, lp_sample_attach() tells a group about each ncu result, and lp_sample_coverage()
 * gives the share of the selection's kernel time whose groups got metrics (profiled or cached).
 *
 * Ownership: the plan owns its arrays and strings; group names point into the launches given to
 * lp_sample_group, which must outlive the plan. Not thread-safe. Never prints.
 *
 *   struct lp_sample_opts o = { .k = 3, .coverage = 0.95, .budget_s = 120,
 *                               .per_launch_s = 0.18, .per_process_s = 8 };
 *   struct lp_sample_plan plan;
 *   if (lp_sample_group(launches, n, &o, &plan, err) < 0) return -1;
 *   ... plan.groups[i].cached = 1 for cache hits ...
 *   if (lp_sample_schedule(&plan, &o, err) < 0) goto fail;
 *   for (p = 0; p < plan.n_procs; p++) run ncu with --kernel-id plan.procs[p].kernel_id.data
 *   lp_sample_plan_release(&plan);
 */
#ifndef LP_ANALYZE_NCU_SAMPLE_H
#define LP_ANALYZE_NCU_SAMPLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/regions.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/err.h"
#include "profile/profile.h"

#define LP_SAMPLE_MAX_K 16
#define LP_SAMPLE_DEFAULT_K 3
#define LP_SAMPLE_DEFAULT_COVERAGE 0.95
#define LP_SAMPLE_DEFAULT_MAX_PROCS 4
#define LP_SAMPLE_MAX_LAUNCHES (1u << 26)
/* hf_generate.py ran 60.0 s under ncu profiling nothing, 35.8 s alone, 41 s traced; its start
 * (python, imports, model build) took ~16 s under ncu (bench/ncu_sampling/README.md section 4) */
#define LP_SAMPLE_PROGRAM_FACTOR 1.5
/* Stand-in picks come from the first 1/LP_SAMPLE_STAND_IN_SPAN of the warm-up's steps (at least K):
 * under ncu a profiled launch of hf_generate.py cost ~0.5 s up to warm-up decode step ~56 of 128 and
 * 3-4 s from step ~113 (README sections 4, 4b) */
#define LP_SAMPLE_STAND_IN_SPAN 4

/* One kernel launch of the process, in launch order (what ncu's invocation numbers count). */
struct lp_sample_launch {
	const char *name;            /* ncu's function-name base (lp_kname_ncu_function) */
	const char *kernel_name;     /* demangled, for the report */
	uint32_t grid[3], block[3];
	uint32_t shared_bytes;
	const char *region;          /* the stage or region it counts in; NULL: not selected */
	int32_t step;                /* instance of the step (or layer) range in its region; -1 unknown */
	uint64_t duration_ns;
	uint64_t start_ns;           /* in the capture (0 unknown): where the launch is in the program */
	int warmup;                  /* 1: launched inside the warm-up range. With `region` set too it is a
	                                stand-in: it would be in `region` without the warm-up range; not
	                                selected, but it may stand in for its group's launches (its step
	                                counts the warm-up's instances) */
};

enum lp_sample_status {
	LP_SAMPLE_PLANNED = 0,       /* in a process of the plan */
	LP_SAMPLE_CACHED = 1,        /* metrics come from the cache */
	LP_SAMPLE_BEYOND_TARGET = 2, /* past the coverage target: not profiled */
	LP_SAMPLE_BUDGET = 3,        /* dropped to fit profiling.ncu.budget_s */
	LP_SAMPLE_NOT_RUN = 4,       /* its process was not run (the budget ran out while running) */
};

struct lp_sample_pick {
	uint64_t invocation;         /* 1-based, per kernel name (ncu's --kernel-id numbering) */
	int32_t step;
	uint64_t duration_ns;        /* in the capture */
	int warmup;                  /* a warm-up launch standing in for the group */
};

/* One ncu result kept for a group (lp_sample_record_result): its ID in the merged export, the
 * launch it was (index into the planner's input; -1 not known: attached by configuration, or
 * from the cache). */
struct lp_sample_result {
	uint64_t id;
	int64_t launch;
	double duration_ns;          /* gpu__time_duration; < 0 unknown */
	int warmup;                  /* a warm-up launch (stand-in) */
};

struct lp_sample_group {
	const char *name, *kernel_name, *region;
	uint32_t grid[3], block[3];
	uint32_t shared_bytes;
	uint64_t n_launches;         /* selected launches of the group */
	uint64_t total_ns, min_ns, max_ns;
	double share;                /* of the selection's kernel time */
	double region_share;         /* of its region's kernel time */
	uint32_t n_steps;            /* distinct steps it ran in */
	uint32_t n_ranks;            /* steps, or launches when its steps are unknown: what windows split (with
	                                picks_from_warmup: the stand-ins' first steps the picks come from) */
	size_t first_member, n_members;   /* internal: its launches in the plan's private list */
	size_t first_stand, n_stand;      /* its warm-up stand-ins (launches of the same kernel, grid, block,
	                                     shared memory and region path in the warm-up; internal list,
	                                     launch order) */
	int picks_from_warmup;       /* the picks are among the earliest stand-ins (they have at least
	                                min(K, n_ranks) steps); ncu results of any stand-in count */
	uint64_t config_launches;    /* launches of its kernel name in the whole process */
	int wanted;                  /* inside the coverage target of its region */
	int cached;                  /* set by the caller before lp_sample_schedule */
	int status;                  /* enum lp_sample_status (lp_sample_schedule) */
	int proc;                    /* index into procs; -1 none */
	struct lp_sample_pick picks[LP_SAMPLE_MAX_K];   /* lp_sample_group: spread over steps for the K asked;
	                                                   lp_sample_schedule: as planned (aligned) */
	size_t n_picks;              /* planned (0 when not planned) */
	size_t n_picks_full;         /* chosen by lp_sample_group for the K asked */
	/* filled after the run (lp_sample_attach) */
	uint64_t got;                /* ncu results attributed to it */
	uint64_t got_warmup;         /* of which warm-up launches (stand-ins) */
	double got_min_ns, got_max_ns, got_sum_ns;   /* their gpu__time_duration */
	struct lp_sample_result *results;   /* lp_sample_record_result: the rows of the export */
	size_t n_results, cap_results;
};

struct lp_sample_proc {
	size_t *groups;
	size_t n_groups;
	int warmup_only;             /* every pick is a stand-in: ncu profiles only inside the warm-up range
	                                (--nvtx-include lp_sample_input.warmup_nvtx), and `predicted` counts
	                                the warm-up's launches only */
	uint64_t *invocations;       /* the numbers asked for, sorted */
	size_t n_invocations;
	uint32_t *names;             /* internal: its kernel names */
	size_t n_names;
	struct lp_buf kernel_id;     /* the --kernel-id value */
	uint64_t planned;            /* picks of its groups */
	uint64_t predicted;          /* launches ncu will profile (picks + extras) */
	double est_s;
};

struct lp_sample_opts {
	unsigned k;                  /* launches per group (0: LP_SAMPLE_DEFAULT_K, at most LP_SAMPLE_MAX_K) */
	double coverage;             /* share of kernel time to cover (0: 0.95; >= 1: every group) */
	double budget_s;             /* <= 0: no budget */
	double per_launch_s;         /* estimated cost of one profiled launch */
	double per_process_s;        /* estimated cost of one ncu process (start, exports; with program_s 0 also
	                                the workload) */
	unsigned max_procs;          /* 0: LP_SAMPLE_DEFAULT_MAX_PROCS */
	double program_s;            /* the workload's own wall time (the capture's); 0: counted in per_process_s */
	double program_factor;       /* how much slower its launches' span runs under ncu (0:
	                                LP_SAMPLE_PROGRAM_FACTOR); its start (before the first launch) is not */
	int stop_early;              /* ncu ends the workload after the last predicted launch: only the program
	                                up to there counts (its start + the capture's time to that launch) */
};

struct lp_sample_config;         /* private: one kernel name of the process */
struct lp_sample_priv;           /* private: per launch bookkeeping */

struct lp_sample_plan {
	struct lp_sample_group *groups;   /* by total_ns descending, then name */
	size_t n_groups;
	struct lp_sample_proc *procs;
	size_t n_procs;
	uint64_t n_launches;         /* selected launches */
	uint64_t total_ns;           /* their kernel time */
	unsigned k;                  /* asked */
	unsigned k_used;             /* after the budget (0: nothing planned) */
	double coverage_target;
	size_t n_wanted;             /* groups inside the target */
	size_t n_cached;
	size_t n_budget_dropped;
	double planned_share;        /* kernel time share of planned + cached groups */
	uint64_t predicted;          /* launches ncu will profile, all processes */
	double eta_s;
	double budget_s;
	struct lp_sample_config *configs;   /* private */
	size_t n_configs;
	struct lp_sample_priv *priv;
};

/* ---- from a capture ---- */

/* What is selected: a stage (the run's top-N path: kernels under a range matching `stage`, see
 * lp_profile_range_find_ancestor) or regions (profiling.ncu.regions: kernels under an include
 * expression, not under an exclude one, passing the kernel filters; the region is the include
 * expression's name). Kernels under a `warmup` range are not selected (they still count for the
 * invocation numbers); with stand_ins they may stand in for the selected launches of their group.
 * The step of a launch is the instance of the range just inside the matched one (decode_all ->
 * decode_step, prefill -> layer), or of the matched range itself. */
struct lp_sample_select {
	const char *stage;                 /* stage mode; NULL: regions mode */
	const struct lp_regions *regions;  /* regions mode (lp_regions_init'ed; no results needed) */
	const char *warmup;                /* NULL: "warmup"; "": none */
	const uint32_t *pids;              /* n_pids > 0: only these processes (the rank ncu profiles) */
	size_t n_pids;
	int stand_ins;                     /* 1: warm-up launches that match a region once the warm-up range is
	                                      taken out of their stack get it, with warmup = 1 (stand-ins) */
};

struct lp_sample_input {
	struct lp_sample_launch *launches; /* the process's launches in launch order (correlation id) */
	size_t n;
	size_t n_selected;
	uint32_t pid;                      /* the process with the most selected kernel time */
	const char *warmup_nvtx;           /* stand-ins: ncu's --nvtx-include for the warm-up range
	                                      ("LLM@warmup/"); NULL: no warm-up launch */
	struct lp_arena arena;             /* function names */
};

/* Builds the planner's input from the capture. Only one process is planned (ncu's invocation
 * numbers are per process; other processes' launches are not selected): the one with the most
 * selected kernel time, among sel->pids when given. Communication kernels (lp_kname_is_comm) are
 * never selected (a replayed collective waits for peers that do not replay it); they keep their
 * place in the invocation numbering. */
int lp_sample_input_from_profile(const struct lp_profile *p, const struct lp_sample_select *sel,
	struct lp_sample_input *out, struct lp_err *err);
void lp_sample_input_release(struct lp_sample_input *in);

/* Groups the selected launches, numbers the invocations, chooses the picks and the coverage
 * target. Errors: too many launches (LP_EUSAGE), out of memory. */
int lp_sample_group(const struct lp_sample_launch *launches, size_t n, const struct lp_sample_opts *o,
	struct lp_sample_plan *out, struct lp_err *err);
/* Splits the wanted, uncached groups over ncu processes and fits the budget (see above). May be
 * called again after changing `cached` marks. */
int lp_sample_schedule(struct lp_sample_plan *p, const struct lp_sample_opts *o, struct lp_err *err);
void lp_sample_plan_release(struct lp_sample_plan *p);

/* The estimated cost of one profiled launch for a pass count (0.02 s a pass, measured on an H100
 * with ncu 2025.3: 9 passes took 0.18 s a launch). */
double lp_sample_launch_cost_s(int passes);
/* A rough pass count for a preset when none was measured yet: a set's, about 3 per section, and
 * 3 per listed metric up to 12 (the light preset's 3 metrics took 9 passes). */
int lp_sample_passes_estimate(const char *set, size_t n_sections, size_t n_metrics);

/* The launches process `proc` profiles, in launch order (the order of ncu's result IDs): *out
 * (malloc'd, caller frees) gets their launch indices (into the planner's input). */
int lp_sample_expected(const struct lp_sample_plan *p, size_t proc, uint32_t **out, size_t *n, struct lp_err *err);
/* The input launch `idx` and its group (-1: not selected). */
const struct lp_sample_launch *lp_sample_launch_at(const struct lp_sample_plan *p, uint32_t idx);
int32_t lp_sample_group_of(const struct lp_sample_plan *p, uint32_t idx);
/* Counts one result (its gpu__time_duration, < 0 unknown) for group g. */
void lp_sample_attach_group(struct lp_sample_plan *p, size_t g, double duration_ns);

/* Records that row `id` of the merged export belongs to group g (launch: the input launch it was,
 * -1 unknown; warmup: 1 a warm-up launch, 0 not, -1 as the launch says). The rows of a group stand
 * for its n_launches: lp_sample_weight. */
int lp_sample_record_result(struct lp_sample_plan *p, size_t g, uint64_t id, int64_t launch, int warmup,
	double duration_ns, struct lp_err *err);
/* Launches one result of group g stands for: n_launches / got (0 when it got none). The region
 * tables of a sampled run scale each row by it (run/regions_run.h). */
double lp_sample_weight(const struct lp_sample_group *g);

/* Attributes one ncu result to the group of (name, grid, block) in `region` (NULL: the largest
 * such group): the fallback when a result is not where lp_sample_expected put it (kernels of one
 * name, grid and block but another template or shared memory are not told apart). Returns the
 * group index, or -1 when no group has that configuration. */
long lp_sample_attach(struct lp_sample_plan *p, const char *name, const uint32_t grid[3], const uint32_t block[3],
	const char *region, double duration_ns);

struct lp_sample_coverage {
	double target;               /* the coverage target */
	double share;                /* kernel time share of groups with metrics */
	uint64_t covered_ns, total_ns;
	size_t n_groups, n_covered;  /* groups with metrics (profiled or cached) */
	size_t n_reused;             /* of which from the cache */
	size_t n_from_warmup;        /* of which with results from warm-up stand-ins */
	uint64_t n_results, n_results_warmup;   /* results of the covered groups, from the warm-up */
	int met;                     /* share >= target (within 1e-9) */
};

/* 1 when group g has metrics: profiled (got > 0) or cached. */
int lp_sample_group_covered(const struct lp_sample_group *g);
void lp_sample_coverage(const struct lp_sample_plan *p, struct lp_sample_coverage *out);
/* The same for the groups of one region (the target applies to each region). */
void lp_sample_coverage_region(const struct lp_sample_plan *p, const char *region, struct lp_sample_coverage *out);

/* The plan and, when after the run, the coverage, as a JSON object (ncu/sampling.json; see
 * docs/ncu-sampling.md). New reference. */
json_t *lp_sample_plan_json(const struct lp_sample_plan *p, int after_run);
const char *lp_sample_status_name(int status);

#endif
