/* prepare.h: the start of `llmprof run`, before any phase: the configuration resolved from conf/
 * and the overrides, the run folder made, provenance written, old runs pruned. The phase pipeline
 * (capture, nsys, ncu, analysis, reports) takes a prepared struct lp_run from here.
 *
 * Ownership: struct lp_run owns its config and run folder; the workload argv is borrowed from
 * the caller's argv. Not thread-safe (one run per process).
 *
 *   struct lp_run run;
 *   struct lp_run_opts o = { ctx->conf_dir, overrides, n, argv_tail, n_tail, 0 };
 *   if (lp_run_prepare(&run, &o, err) < 0) return -1;     // config errors: nothing written
 *   if (lp_run_provenance(&run, tools, err) < 0) ...       // env.json, config.yaml, inputs.yaml
 *   ... phases write through lp_rundir_write(&run.dir, ...) ...
 *   lp_run_release(&run);
 */
#ifndef LP_RUN_PREPARE_H
#define LP_RUN_PREPARE_H

#include <jansson.h>
#include <stddef.h>

#include "collect/rundir.h"
#include "config/config.h"
#include "core/err.h"

struct lp_run_opts {
	const char *conf_dir;
	const char *const *overrides;
	size_t n_overrides;
	const char *const *workload_argv;  /* after `--`; may be NULL */
	size_t workload_argc;
	int dry_run;                       /* resolve the configuration only, create nothing */
};

struct lp_run {
	struct lp_config cfg;
	struct lp_rundir dir;              /* dir.path is NULL in a dry run */
	const char *const *workload_argv;
	size_t workload_argc;
	const char *mode;                  /* run.mode, borrowed from cfg: "deep" or "light" */
	size_t n_pruned;                   /* older runs removed by artifacts.keep_last */
};

/* Loads and validates the configuration, then (unless dry_run) makes the run folder under
 * artifacts.stage2_dir, named by run.id or generated. On error nothing is left behind. */
int lp_run_prepare(struct lp_run *run, const struct lp_run_opts *opts, struct lp_err *err);
/* Writes config.yaml, env.json (with `tools`, may be NULL) and inputs.yaml, then prunes older
 * runs when artifacts.keep_last is set. */
int lp_run_provenance(struct lp_run *run, const json_t *tools, struct lp_err *err);
void lp_run_release(struct lp_run *run);

#endif
