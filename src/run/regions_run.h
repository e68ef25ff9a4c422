/* regions_run.h: the regions run, `ncu/regions/` of a run folder (issue 7; docs/regions.md):
 * the regions config (analyze/regions_args.h) + the ncu raw page -> the region model
 * (analyze/regions.h) -> the report (report/regions_report.h).
 *
 * The run pipeline calls lp_regions_run_report after the ncu phase (and `llmprof report RUN_DIR`
 * may call it again: same inputs -> same bytes; nothing reads the clock: generated_at is given,
 * or the raw page's modification time). The folder is rebuilt from scratch each time. No region
 * matching anything is not an error: the report lists the expressions that matched nothing and
 * the ranges that were seen (from the capture profile when given, else from the ncu results).
 *
 * Ownership: the caller owns everything it passes. Not thread-safe (one report at a time).
 * Never prints.
 *
 *   struct lp_regions_run run = { .run_dir = dir, .ncu_preset = ncu, .reference_workload = 1,
 *                                 .raw_csv = "RUN/ncu/ncu_default_raw.csv", .capture = &profile };
 *   struct lp_regions_outcome o;
 *   if (lp_regions_run_report(&run, &o, err) < 0) return -1;   // o.active == 0: nothing to do
 */
#ifndef LP_RUN_REGIONS_RUN_H
#define LP_RUN_REGIONS_RUN_H

#include <jansson.h>
#include <stddef.h>

#include "core/err.h"
#include "profile/profile.h"

struct lp_regions_run {
	const char *run_dir;              /* outputs: <run_dir>/ncu/regions/ */
	const json_t *ncu_preset;         /* the resolved profiling.ncu object (as run) */
	int reference_workload;           /* the workload is llmprof-llm (default include applies) */
	const char *raw_csv;              /* the ncu raw page; NULL or missing: ncu profiled nothing */
	const struct lp_profile *capture; /* the capture phase's profile, for the ranges seen; may be NULL */
	const char *replay_mode_used;     /* NULL: the preset's replay_mode */
	const char *replay_note;          /* why it differs, e.g. the app-range fallback; may be NULL */
	const char *generated_at;         /* NULL: the raw page's mtime (UTC, ISO 8601), else null */
};

struct lp_regions_outcome {
	int active;                       /* 0: no include (after defaults): nothing was written */
	size_t n_regions;                 /* regions in the aggregate scope */
	size_t n_unmatched;               /* include expressions that matched nothing */
	size_t n_warnings;
	double total_ms;                  /* aggregate total (each result once) */
};

/* Builds and writes ncu/regions/. Errors: a bad regions config (LP_EUSAGE, the key named), an
 * unreadable raw page (LP_EPARSE, file:line), I/O (LP_EOTHER). `out` may be NULL. */
int lp_regions_run_report(const struct lp_regions_run *run, struct lp_regions_outcome *out,
	struct lp_err *err);

#endif
