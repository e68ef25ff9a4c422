/* source.h: what a SOURCE path handed to `llmprof kernels` is, and its kernel table.
 *
 * A SOURCE is one of: an ncu raw-page CSV, an ncu details-page CSV, an ncu --print-summary
 * per-kernel or per-nvtx CSV (the latter only with a stage), an nsys stats
 * cuda_gpu_kern_sum CSV, an nsys SQLite export, a trace folder (*.lptrace files, our tracer),
 * or a run folder (its trace/, else ncu/<name>_raw.csv, else nsys/run.sqlite, else
 * nsys/summary_cuda_gpu_kern_sum.csv). Files are told apart by content (the SQLite header, the
 * CSV header row), never by name alone. Anything else is refused with one line naming the file
 * (LP_EPARSE: `kernels` exits 3 on unreadable input).
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
	const char *stage;           /* NVTX range expression ("decode_all", "LLM@decode_all"); NULL all.
	                              * A kernel is under it when a push/pop range matching it was open
	                              * on the launching thread, or a start/end range matching it (same
	                              * process, any thread) was open at the launch. */
	int exclude_warmup;
	/* outputs, optional: */
	struct lp_buf *ranges_seen;  /* with a stage: every distinct range of the source, one
	                              * "domain@name" ("name" for the default domain) a line */
	int *stage_seen;             /* with a stage: 1 when some range matched it (0: unknown name) */
	struct lp_buf *damage;       /* what was damaged but read around, one line each (a truncated
	                              * trace file: "'f.lptrace' is truncated at byte N of M ..."); the
	                              * table then holds what could be read, and `kernels` exits 3 */
};

/* Loads the kernel table of any SOURCE, sorted by total time. *kind names what was read. */
int lp_source_kernel_table(const char *path, const struct lp_source_opts *o, struct lp_kernel_table *out,
	enum lp_source_kind *kind, struct lp_buf *resolved, struct lp_err *err);

#endif
