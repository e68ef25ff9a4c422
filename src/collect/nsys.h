/* nsys.h: the Nsight Systems phase: `nsys profile` from the `profiling.nsys` preset, then
 * `nsys stats` (CSV reports) and `nsys export --type sqlite`.
 *
 * Preset keys (conf/profiling/nsys/, docs/presets.md) and their flags:
 *   trace: [cuda, nvtx, osrt]     -> --trace=cuda,nvtx,osrt
 *   sample: none                  -> --sample=none
 *   capture_range: nvtx           -> --capture-range=nvtx (none/null: no flag)
 *   capture_range_end: stop       -> --capture-range-end=stop
 *   nvtx_capture: decode_all@LLM  -> --nvtx-capture=decode_all@LLM (nsys's range@domain order) and
 *                                    NSYS_NVTX_PROFILER_REGISTER_ONLY=0 in the child's environment
 *   stats_reports: [...]          -> one `nsys stats --report R ...` per run, summary_<R>.csv each
 *   export_sqlite: true           -> nsys export --type sqlite -> run.sqlite
 *   extra_args: [...]             -> appended to `nsys profile` as given
 *   enable                        -> read by the pipeline, not here
 * Unknown keys and values of the wrong type are errors naming `profiling.nsys.<key>`.
 *
 * Outputs in `out_dir` (the run's nsys/): run.nsys-rep (or run.qdrep from old versions),
 * summary_<report>.csv, run.sqlite, cmd.txt (every command, copy-paste runnable; a failed write
 * of it fails the run with the write error). Logs in
 * `logs_dir`: nsys_profile.log, nsys_stats.log, nsys_export.log.
 * The importer trap: without libdw.so.1/libelf.so.1 nsys exits 0 leaving only run.qdstrm; that
 * is reported as an environment error (LP_EENV) with the fix.
 *
 * Ownership: the caller owns the plan; lp_nsys_outcome is plain data. Never prints.
 */
#ifndef LP_COLLECT_NSYS_H
#define LP_COLLECT_NSYS_H

#include <jansson.h>

#include "core/err.h"
#include "core/proc.h"

struct lp_nsys_plan {
	const char *nsys;                /* path of nsys */
	const json_t *preset;            /* the profiling.nsys object */
	const char *out_dir;             /* <run>/nsys */
	const char *logs_dir;            /* <run>/logs */
	const char *const *workload;     /* argv of the program to profile */
	const struct lp_proc_env *env;   /* extra changes for the workload (CUDA_VISIBLE_DEVICES ...) */
	size_t n_env;
	double timeout_s;                /* for the profile step; stats/export get the same */
	void (*tick)(void *ctx, double elapsed_s);  /* progress while nsys runs (core/proc.h); may be NULL */
	void *tick_ctx;
};

struct lp_nsys_outcome {
	char report[1024];               /* run.nsys-rep or run.qdrep */
	char sqlite[1024];               /* "" when not exported */
	int n_stats;                     /* summary CSVs written */
	int workload_exit;               /* the profiled program's exit status (nsys passes it on) */
	struct lp_proc_result profile;
};

/* Builds `nsys profile ...` (argv[0] = plan->nsys); *needs_register_env says whether the child
 * must run with NSYS_NVTX_PROFILER_REGISTER_ONLY=0. */
int lp_nsys_profile_argv(const struct lp_nsys_plan *p, struct lp_argv *out, int *needs_register_env,
	struct lp_err *err);
/* Runs the three steps; on failure err says which and where its log is. */
int lp_nsys_run(const struct lp_nsys_plan *p, struct lp_nsys_outcome *o, struct lp_err *err);

#endif
