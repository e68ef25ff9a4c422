/* source.h: what a SOURCE path handed to `llmprof kernels` is, and its kernel table.
 *
 * A SOURCE is one of: an ncu raw-page CSV, an ncu details-page CSV, an ncu --print-summary
 * per-kernel or per-nvtx CSV (the latter only with a stage), an nsys stats
 * cuda_gpu_kern_sum CSV, an nsys SQLite export, a trace folder (*.lptrace files, our tracer),
 * or a run folder (its trace/, else ncu/<name>_raw.csv, else nsys/run.sqlite, else
 * nsys/summary_cuda_gpu_kern_sum.csv). Files are told apart by content (the SQLite header, the
 * CSV header row), never by name alone. Anything else is refused with one line naming the file
 * (LP_EPARTIAL: `kernels` exits 3 on unreadable input).
 *
 * Ownership: `resolved` (a buffer the caller owns) receives the file actually read. Thread-safe
 * apart from the profile/table it fills.
 *
 *   struct lp_kernel_table t; const char *kind;
 *   if (lp_source_kernel_table("runs/x", &(struct lp_source_opts){0}, &t, &kind, &res, err) < 0) ...
 */
#ifndef LP_PARSE_SOURCE_H
#define LP_PARSE_SOURCE_H

#include "core/buf.h"
#include "core/err.h"
#include "profile/profile.h"

enum lp_source_kind {
	LP_SOURCE_UNKNOWN = 0,
	LP_SOURCE_NCU_RAW,
	LP_SOURCE_NCU_DETAILS,
	LP_SOURCE_NSYS_KERN_SUM,
	LP_SOURCE_NSYS_NVTX_SUM,     /* recognized, but not a kernel table */
	LP_SOURCE_NSYS_SQLITE,
	LP_SOURCE_TRACE_DIR,
	LP_SOURCE_RUN_DIR,
	LP_SOURCE_NCU_SUMMARY,       /* --print-summary per-kernel or per-nvtx */
};

/* "ncu-raw", "ncu-details", "ncu-summary", "nsys-kern-sum", "nsys-nvtx-sum", "nsys-sqlite", "trace", "run". */
const char *lp_source_kind_name(enum lp_source_kind k);

/* Detects the kind of `path`; for a run folder, `resolved` gets the file or folder inside it
 * that will be read and *kind its kind. */
int lp_source_detect(const char *path, enum lp_source_kind *kind, struct lp_buf *resolved, struct lp_err *err);

struct lp_source_opts {
	const char *stage;           /* NVTX range expression ("decode_all", "LLM@decode_all"); NULL all */
	int exclude_warmup;
};

/* Loads the kernel table of any SOURCE, sorted by total time. *kind names what was read. */
int lp_source_kernel_table(const char *path, const struct lp_source_opts *o, struct lp_kernel_table *out,
	enum lp_source_kind *kind, struct lp_buf *resolved, struct lp_err *err);

#endif
