/* ncu.h: the Nsight Compute phase: `ncu` from the `profiling.ncu` preset, then the exports.
 *
 * Every preset key maps to one flag (docs/presets.md):
 *   target_processes: all          -> --target-processes all
 *   replay_mode: kernel            -> --replay-mode kernel (kernel | application | range | app-range)
 *   nvtx.include: [LLM@decode_all/]-> --nvtx --nvtx-include LLM@decode_all/ (one flag per entry)
 *   nvtx.exclude: [...]            -> --nvtx-exclude X (one flag per entry)
 *   set: roofline                  -> --set roofline (null: none)
 *   sections: [SpeedOfLight, ...]  -> --section X each (checked against `ncu --list-sections`)
 *   metrics: [a, b]                -> --metrics a,b
 *   kernel_name / kernel_name_base -> --kernel-name X --kernel-name-base demangled
 *   launch_skip / launch_count     -> --launch-skip N / --launch-count N
 *   clock_control / cache_control  -> --clock-control none / --cache-control all
 *   force_overwrite: true          -> --force-overwrite
 *   name                           -> the output name: ncu/<name>.ncu-rep
 *   regions                        -> not an ncu flag: read by the report
 *   sample_per_group, coverage,    -> not ncu flags: the sampler's (run/ncu_sampled.h)
 *   budget_s, cache, cache_dir,
 *   stop_early, warmup_picks       (stop_early sets launch_count_total + kill_after_count: --kill=on)
 *   rank                           -> not an ncu flag: the rank a multi-rank job profiles (below)
 * `--nvtx` is always given so that the raw page carries the NVTX columns.
 * With a top-N selection (analyze/topn.h) the plan's kernel_filter replaces kernel_name, and
 * either filter_mode = "per-launch-config" keeps launch_count per kernel (the default of the
 * pipeline), or launch_count_total = N * launch_count replaces it (ncu's -c counts all matching
 * launches together in the global filter mode, so one hot kernel can use up the budget).
 *
 * Outputs in out_dir (the run's ncu/): <name>.ncu-rep, <name>_raw.csv (`--page raw --csv
 * --print-units base`), <name>_details.csv (`--page details`), cmd.txt (a failed write of it fails
 * the run with the write error). Logs: logs/ncu.log,
 * logs/ncu_export_raw.log, logs/ncu_export_details.log.
 *
 * What the log says, and what it means:
 *   "No kernels were profiled"      -> outcome.profiled_nothing (ncu exits 0!): not an error here;
 *                                      the caller lists the NVTX ranges it saw next to the filter
 *   "Unsupported API during capture" in range replay -> rerun in app-range, outcome.retried_app_range
 *   ERR_NVGPUCTRPERM               -> LP_EENV with the fix (collect/tools.h)
 * Requested metrics that came back n/a everywhere are listed in outcome.metrics_na (not fatal).
 *
 * One rank of a multi-rank job (plan.rank_gate set, docs/ranks.md): the job does not run under
 * ncu. The workload runs with LD_PRELOAD=<rank_gate> (libllmprof_ncu_gate.so, put before any
 * LD_PRELOAD llmprof inherited), LLMPROF_NCU_RANK=<rank>, LLMPROF_NCU_EXEC = ncu's argv up to the
 * workload (0x1f-separated) and LLMPROF_NCU_GATE_LOG=logs/ncu_gate.log; the process of that rank
 * re-executes itself under ncu (inject/ncu_gate.c), the others run without it. ncu's output goes
 * to logs/ncu.log with the job's; the report, exports and outcome are the same as ever.
 *
 * Ownership: the caller owns plan and outcome. Never prints.
 */
#ifndef LP_COLLECT_NCU_H
#define LP_COLLECT_NCU_H

#include <jansson.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/proc.h"

struct lp_ncu_plan {
	const char *ncu;                 /* path of ncu */
	const json_t *preset;            /* the profiling.ncu object */
	const char *out_dir;             /* <run>/ncu */
	const char *logs_dir;            /* <run>/logs */
	const char *const *workload;
	const struct lp_proc_env *env;   /* CUDA_VISIBLE_DEVICES ... */
	size_t n_env;
	const char *kernel_filter;       /* NULL: the preset's kernel_name */
	long launch_count_total;         /* > 0: replaces launch_count */
	const char *replay_override;     /* NULL: the preset's replay_mode */
	const char *filter_mode;         /* --filter-mode (global | per-gpu | per-launch-config); NULL none */
	const char *kernel_id;           /* --kernel-id (the sampler's, run/ncu_sampled.h); replaces the kernel name */
	int kill_after_count;            /* with launch_count_total: --kill=on, ncu ends the workload once that many
	                                    results are in (the sampler's last planned launch) */
	int keep_on_timeout;             /* ncu stopped at timeout_s with a report on disk: export what it holds and
	                                    succeed with outcome.stopped_by_limit (the sampler's budget) */
	const struct lp_ncu_sections *sections_known;  /* NULL: do not check */
	const char *rank_gate;           /* libllmprof_ncu_gate.so: profile one rank only (above); NULL: the whole job */
	int rank;                        /* with rank_gate: the rank */
	double timeout_s;
	void (*tick)(void *ctx, double elapsed_s);  /* progress while ncu runs (core/proc.h); may be NULL */
	void *tick_ctx;
	int (*should_stop)(void *ctx);   /* a watchdog asked after each tick (core/proc.h): nonzero stops ncu;
	                                    with keep_on_timeout its report is kept as at the timeout */
};

struct lp_ncu_sections {
	char **ids;
	size_t n;
};

struct lp_ncu_outcome {
	char report[1024];
	char raw_csv[1024];
	char details_csv[1024];
	int profiled_nothing;
	int retried_app_range;
	int results;                     /* rows in the raw page */
	int stopped_by_limit;            /* keep_on_timeout: ncu ran past timeout_s or should_stop stopped it
	                                    (profile.stopped); the pages hold what it wrote */
	char limit_note[256];            /* then: "ncu timed out after ...", "ncu stopped after ..." */
	struct lp_buf metrics_na;        /* "a, b" requested metrics with no value anywhere */
	struct lp_proc_result profile;
};

void lp_ncu_outcome_release(struct lp_ncu_outcome *o);

int lp_ncu_argv(const struct lp_ncu_plan *p, struct lp_argv *out, struct lp_err *err);

/* Parses `ncu --list-sections` output (a table whose first column is the identifier). */
int lp_ncu_sections_parse(const char *text, struct lp_ncu_sections *out);
void lp_ncu_sections_release(struct lp_ncu_sections *s);
/* Runs `ncu --list-sections` and parses it. */
int lp_ncu_sections_list(const char *ncu, double timeout_s, struct lp_ncu_sections *out, struct lp_err *err);
/* Every preset section must be a known identifier (or a regex: expression); the error names
 * the first unknown one and the closest known identifier. */
int lp_ncu_sections_check(const json_t *preset, const struct lp_ncu_sections *known, struct lp_err *err);

enum {
	LP_NCU_LOG_NOTHING_PROFILED = 1,
	LP_NCU_LOG_UNSUPPORTED_API = 2,
	LP_NCU_LOG_NVGPUCTRPERM = 4,
	LP_NCU_LOG_RANGE_METRIC = 8,   /* "Metric X is not supported in range replay" */
};
/* Flags for what an ncu log says. */
int lp_ncu_log_scan(const char *text);

/* Where ncu's profiling stands, from its log: `==PROF== Profiling "NAME": 0%....50%....100% - 18
 * passes` per launch, the progress marks printed as the passes run. A launch whose segment (up to
 * the next ==PROF== or ==ERROR== line, or the end) names its passes is done; the last one, when
 * not done and nothing follows it, is open. marks counts the progress marks (dots and percent
 * signs) on the Profiling lines: it grows while a replay advances. */
struct lp_ncu_log_progress {
	size_t done;                     /* launches profiled to the end */
	size_t failed;                   /* segments not done that something followed (==ERROR== Failed ...) */
	int open;                        /* the last launch is being profiled */
	char open_name[160];             /* its name as ncu prints it ("1:7:kernel:5"), "" none */
	size_t marks;
};
void lp_ncu_log_progress(const char *text, struct lp_ncu_log_progress *out);

/* Runs profile (with the app-range retry) and both exports. */
int lp_ncu_run(const struct lp_ncu_plan *p, struct lp_ncu_outcome *o, struct lp_err *err);

/* The export commands, for tests and for `llmprof report` re-exports. */
int lp_ncu_export(const char *ncu, const char *report, const char *page, const char *csv_path,
	const char *log_path, double timeout_s, struct lp_buf *cmds, struct lp_err *err);

#endif
