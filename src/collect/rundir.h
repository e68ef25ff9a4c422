/* rundir.h: the run folder, its artifacts and manifest.json (docs/run-directory.md).
 *
 * A run lives in <artifacts.stage2_dir>/<run_id>/ with nsys/, ncu/, trace/ and logs/ made at
 * start. run_id is YYYYmmdd-HHMMSS-xxxx (local time, 4 random hex digits; the folder is made with
 * mkdir and a new suffix drawn on EEXIST, so two runs never share one) or a validated name from
 * run.id. Every artifact goes through lp_rundir_write (atomic: temporary file, fsync, rename) or,
 * for files another program wrote into the folder, lp_rundir_record; both add the file to
 * manifest.json (path relative to the run folder, size, sha256, phase) and rewrite the manifest
 * atomically, so the manifest on disk always describes complete files. The run status (running,
 * ok, partial, failed, interrupted) lives in the manifest too.
 *
 * Ownership: struct lp_rundir owns its strings and manifest; release with lp_rundir_release.
 * Not thread-safe: one writer per run folder (the pipeline's thread).
 *
 *   struct lp_rundir rd;
 *   if (lp_rundir_create(&rd, "tmp/stage2", NULL, err) < 0) return -1;
 *   lp_rundir_write(&rd, "config.yaml", text, len, "provenance", err);
 *   lp_rundir_set_status(&rd, LP_RUN_OK, err);
 *   lp_rundir_release(&rd);
 */
#ifndef LP_COLLECT_RUNDIR_H
#define LP_COLLECT_RUNDIR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "config/run_id.h"
#include "core/buf.h"
#include "core/err.h"

#define LP_RUNDIR_MANIFEST "manifest.json"

enum lp_run_status { LP_RUN_RUNNING, LP_RUN_OK, LP_RUN_PARTIAL, LP_RUN_FAILED, LP_RUN_INTERRUPTED };

struct lp_rundir {
	char *path;                          /* "<root>/<run_id>" */
	char run_id[LP_RUNDIR_ID_MAX + 1];
	json_t *manifest;                    /* the content of manifest.json */
};

/* lp_rundir_validate_id, lp_rundir_is_generated_id and LP_RUNDIR_ID_MAX: config/run_id.h. */

/* Makes <root>/<run_id>/ (root created when missing) with its subfolders and a manifest with
 * status "running". run_id NULL: generated. A given run_id that exists is an error. */
int lp_rundir_create(struct lp_rundir *rd, const char *root, const char *run_id, struct lp_err *err);
/* Opens an existing run folder (reads its manifest.json). */
int lp_rundir_open(struct lp_rundir *rd, const char *path, struct lp_err *err);
void lp_rundir_release(struct lp_rundir *rd);

/* out = <run folder>/<rel>. */
int lp_rundir_path(const struct lp_rundir *rd, const char *rel, struct lp_buf *out);
/* Writes <rel> atomically (parent folders made) and records it. rel is relative, without "..". */
int lp_rundir_write(struct lp_rundir *rd, const char *rel, const void *data, size_t len,
	const char *phase, struct lp_err *err);
/* Records a file already in the run folder (written by nsys, ncu, the tracer): size + sha256. */
int lp_rundir_record(struct lp_rundir *rd, const char *rel, const char *phase, struct lp_err *err);
/* 1 when `rel` is already listed in the manifest. */
int lp_rundir_has(const struct lp_rundir *rd, const char *rel);
int lp_rundir_set_status(struct lp_rundir *rd, enum lp_run_status status, struct lp_err *err);
const char *lp_run_status_name(enum lp_run_status status);

/* ---- runs under a root, for `llmprof runs`, `artifacts` and pruning ---- */

struct lp_run_info {
	char *id;
	char *path;
	char *status;        /* from the manifest; "running" of a process that is gone: "interrupted" */
	char *created_at;    /* ISO 8601 UTC, "" when unknown */
	size_t n_artifacts;
	int64_t total_bytes; /* of the recorded artifacts */
	int id_matches;      /* the manifest's run_id is the folder name (pruning requires it) */
	int damaged;         /* manifest.json missing or unreadable: status "damaged", `problem` says why */
	char *problem;       /* NULL unless damaged */
};

/* Folders with a valid run id under root, newest first: runs (a readable manifest.json), then
 * damaged ones (status "damaged"; never pruned). A missing root is an empty list. Free with
 * lp_rundir_list_free. */
int lp_rundir_list(const char *root, struct lp_run_info **out, size_t *n_out, struct lp_err *err);
void lp_rundir_list_free(struct lp_run_info *runs, size_t n);

/* Keeps the `keep_last` newest runs under root (keep_id, the current run, always counts as kept)
 * and removes the older ones, except runs whose process is still running. */
int lp_rundir_prune(const char *root, int64_t keep_last, const char *keep_id, size_t *n_removed,
	struct lp_err *err);

/* A run named on the command line: an existing folder path, else a run id under root. */
int lp_rundir_resolve(const char *root, const char *arg, struct lp_buf *path, struct lp_err *err);

/* The files that exist in a run folder (recursive, temporaries skipped), sorted by path, with
 * the phase from the manifest (NULL when not recorded). Free with lp_rundir_files_free. */
struct lp_rundir_file {
	char *rel;
	int64_t size_bytes;
	const char *phase;   /* borrowed from rd->manifest */
};
int lp_rundir_files(const struct lp_rundir *rd, struct lp_rundir_file **out, size_t *n_out,
	struct lp_err *err);
void lp_rundir_files_free(struct lp_rundir_file *files, size_t n);

#endif
