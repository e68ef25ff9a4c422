/* rebuild.h: analysis and reports from a run folder's artifacts alone. Both `llmprof report
 * RUN_DIR` and the analysis phase of `llmprof run` call this, so the reports of a run and of a
 * later `llmprof report` on it are the same bytes by construction.
 *
 * Reads: config.yaml (model.*, inputs.*, device.peak_*, run.mode; required), env.json (device
 * and environment; optional), trace/ (lp_trace_load; a missing folder means no profile data:
 * an error), Nsight Compute exports in ncu/ (through lp_rebuild_load_ncu, see below), phases.json
 * or summary.json phases (lp_phases_load). The run id is the one the artifacts state
 * (manifest.json, config.yaml run.id, summary.json), the folder's base name only when none does,
 * so a copied or moved run folder gives byte-identical reports.
 * Writes: the reports of reports.h (lp_report_files).
 *
 * Reports are replaced only by equal-or-better ones: when an input the analysis reads is damaged
 * (a trace file cut inside a record, a trace or ncu export that manifest.json lists but that is
 * gone or has another size, an ncu phase marked ok without its export), the outcome says what,
 * and reports already in the folder are left as they are (new ones are written only where there
 * were none). The CLI exits 3 then.
 *
 * Errors: LP_EUSAGE (2) for a folder that is not a run folder (missing or unreadable
 * config.yaml / trace), LP_EOTHER for I/O. Not thread-safe (the profile is large: one at a time).
 *
 *   if (lp_report_rebuild("tmp/stage2/20250101-000000-abcd", err) < 0) return lp_err_print(err);
 */
#ifndef LP_RUN_REBUILD_H
#define LP_RUN_REBUILD_H

#include <jansson.h>

#include "core/buf.h"
#include "core/err.h"
#include "profile/profile.h"

struct lp_rebuild_outcome {
	int damaged;                 /* some input is damaged: see `damage` */
	struct lp_buf damage;        /* what, "; "-separated, naming the files */
	int kept_existing;           /* damaged, so the reports already there were kept */
	int wrote;                   /* the reports were written */
};

/* -1 with err when nothing could be analyzed; 0 otherwise, the outcome saying what was done.
 * Release the outcome (also after -1). */
int lp_report_rebuild_ex(const char *run_dir, struct lp_rebuild_outcome *oc, struct lp_err *err);
void lp_rebuild_outcome_release(struct lp_rebuild_outcome *oc);
/* The same, ignoring the outcome. */
int lp_report_rebuild(const char *run_dir, struct lp_err *err);

/* The Nsight Compute records of the run: one KernelRecord per profiled kernel from the first
 * run_dir/ncu/<name>_raw.csv in name order, metrics in base units (parse/ncu_raw.h). No export
 * (light mode, CPU run, ncu skipped): an empty table and 0. An unreadable export: -1. */
int lp_rebuild_load_ncu(const char *run_dir, struct lp_kernel_table *out, struct lp_err *err);

/* The Python shim's account of the program (auto/program.<pid>.json, one per process): the first in
 * name order that names a model, else the first; NULL when there is none. `rel` gets its path in
 * the run folder. New reference. */
json_t *lp_rebuild_load_auto_info(const char *run_dir, struct lp_buf *rel);

/* The GPU described by env.json's "gpus"[0] (keys in docs/summary-schema.md); 0 found, -1 none.
 * Strings point into `env` (keep it alive). */
int lp_rebuild_device_from_env(const json_t *env, struct lp_device *out);

#endif
