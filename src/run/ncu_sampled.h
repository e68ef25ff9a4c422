/* ncu_sampled.h: the sampled Nsight Compute phase (issue 15; docs/ncu-sampling.md): plan the
 * sample from the capture (analyze/ncu_sample.h), take what the cache has (collect/ncu_cache.h),
 * run one ncu process per planned process (collect/ncu.h, `--kernel-id`), stop starting processes
 * when the time budget is spent, merge the pages into the one export the analysis reads, attach
 * the results to their groups, store the new ones in the cache, and write ncu/sampling.json.
 *
 * Files (in out_dir = <run>/ncu): <name>_raw.csv and <name>_details.csv (merged; cached results
 * appear in the raw page only), sampling.json, parts/<name>_p<i>.ncu-rep and parts/<name>_p<i>_*.csv
 * (one per process), cmd.txt (every command); logs in logs_dir/ncu_p<i>/.
 *
 * Outcome: `partial` with `why` when the budget ran out before every process ran, or a process
 * failed after others had results (what was collected is kept and reported); an error only when
 * nothing could be collected (the first process failed: its error) or the inputs are wrong.
 *
 * Ownership: the caller owns everything passed in; the outcome owns its plan
 * (lp_ncu_sampled_outcome_release). Never prints: `on_plan` and `tick` let the caller show the
 * plan and the progress.
 */
#ifndef LP_RUN_NCU_SAMPLED_H
#define LP_RUN_NCU_SAMPLED_H

#include <jansson.h>

#include "analyze/ncu_sample.h"
#include "collect/ncu.h"
#include "collect/ncu_cache.h"
#include "core/err.h"
#include "core/proc.h"
#include "profile/profile.h"

struct lp_ncu_sampled_progress {
	const struct lp_sample_plan *plan;
	size_t proc;                 /* the process running (0-based) */
	double elapsed_s;            /* since the phase began */
	double eta_s;                /* what is left, estimated */
	const char *log_path;        /* the running process's ncu log */
};

struct lp_ncu_sampled {
	const char *ncu;
	const json_t *preset;        /* the profiling.ncu object as run (regions applied) */
	const char *out_dir, *logs_dir;
	const char *const *workload;
	const struct lp_proc_env *env;
	size_t n_env;
	const struct lp_ncu_sections *sections_known;
	const struct lp_profile *capture;
	const struct lp_sample_select *select;  /* in a multi-rank job: select->pids = rank_gate's rank */
	const char *rank_gate;       /* multi-rank job: profile one rank (collect/ncu.h); NULL: the whole job */
	int rank;
	struct lp_sample_opts opts;  /* k, coverage, budget_s; costs: 0 = estimate (see below) */
	double workload_s;           /* one run of the workload (the capture's wall time): for the estimate */
	int use_cache;
	const char *cache_dir;       /* NULL: the default folder */
	struct lp_ncu_cache_ident ident;
	const char *run_id;          /* recorded with cached results */
	double timeout_s;            /* per ncu process, at most */
	int stop_early;              /* --launch-count <predicted> --kill=on: the workload ends after the last
	                                planned launch (profiling.ncu.stop_early); never with rank_gate */
	double stall_s;              /* > 0: stop an ncu process whose replay of a launch makes no progress for
	                                this long, keeping its results (profiling.ncu.stall_s) */
	void (*on_plan)(void *ctx, const struct lp_sample_plan *plan);
	void (*tick)(void *ctx, const struct lp_ncu_sampled_progress *pr);
	void *ctx;
};

struct lp_ncu_sampled_outcome {
	struct lp_sample_input input;   /* the plan's launches (its names point into it) */
	struct lp_sample_plan plan;
	int have_plan;
	char raw_csv[1024];          /* "" when nothing was collected */
	char details_csv[1024];
	size_t procs_run;
	int partial;
	char why[512];
	int profiled_nothing;        /* every process ran and ncu profiled nothing */
	int retried_app_range;
	struct lp_buf metrics_na;
	double elapsed_s;
	double per_launch_s, per_process_s;   /* the estimate used */
	double measured_per_launch_s;         /* (ncu wall - workload time) / results, all processes: ncu's start included (0 unknown) */
	size_t cache_stored;
};

void lp_ncu_sampled_outcome_release(struct lp_ncu_sampled_outcome *o);
int lp_ncu_sampled_run(const struct lp_ncu_sampled *s, struct lp_ncu_sampled_outcome *o, struct lp_err *err);

/* The estimate for a preset: per launch from lp_sample_passes_estimate, per process 5 s + 1.5 x the
 * workload's own time (ncu's start, the slower launches under it, two exports). */
void lp_ncu_sampled_costs(const json_t *preset, double workload_s, double *per_launch_s, double *per_process_s);

#endif
