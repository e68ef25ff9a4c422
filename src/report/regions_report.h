/* regions_report.h: the per-region Nsight Compute report, `ncu/regions/` in a run folder
 * (issue 7; the files are described in docs/regions.md, report.json in docs/regions-schema.md).
 *
 *   ncu/regions/report.json          scopes (aggregate, per process, per device), regions, totals
 *   ncu/regions/report.md            the region tree, then one section per region
 *   ncu/regions/<dir>/raw.csv        the raw page's header, units row and the region's results
 *   ncu/regions/<dir>/region.md      the region's section alone
 * <dir> is the region name made safe for paths (analyze/regions.h: lp_regions_assign_dirs).
 *
 * This is the rendering: the region model is built and the folder made by the regions run
 * (run/regions_run.h: lp_regions_run_report), which fills a struct lp_regions_doc and calls
 * lp_regions_report_write. Same document -> same bytes (nothing reads the clock).
 *
 * Ownership: the document borrows everything it points at. Not thread-safe (one report at a
 * time). Never prints.
 *
 *   struct lp_regions_doc d = { .cfg = &cfg, .r = &model, .scopes = s, .n_scopes = n, ... };
 *   if (lp_regions_report_write(&d, "RUN/ncu/regions", err) < 0) return -1;
 */
#ifndef LP_REPORT_REGIONS_REPORT_H
#define LP_REPORT_REGIONS_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "analyze/regions.h"
#include "analyze/regions_args.h"
#include "core/buf.h"
#include "core/err.h"

#define LP_REGIONS_SEEN_MAX 200   /* ranges listed for an expression that matched nothing */

struct lp_regions_doc {
	const struct lp_regions_cfg *cfg;     /* the regions config as resolved */
	const struct lp_regions *r;           /* the finished model (lp_regions_finish, lp_regions_assign_dirs) */
	const struct lp_region_scope *scopes; /* [0] aggregate, then processes, then devices */
	size_t n_scopes;
	const char **seen;                    /* ranges seen, sorted */
	size_t n_seen;
	const char *seen_source;              /* "capture" or "ncu" */
	const char *warnings;                 /* one per line ("" none) */
	const char *raw_csv;                  /* the raw page read (have_raw) */
	const char *raw_rel;                  /* raw page path as shown; NULL when there is none */
	int have_raw;
	const char *replay_mode_used;         /* NULL: the config's replay_mode */
	const char *replay_note;              /* why it differs; may be NULL */
	const char *sample_note;              /* a sampled ncu run: how the rows were scaled; NULL not sampled */
	const char *generated_at;             /* "" or NULL: null in report.json */
};

/* The warnings the model gives (one a line, appended to `out`): the model's own, metrics that
 * are not columns of the raw page, regions whose inclusive time does not reconcile. */
void lp_regions_report_warnings(const struct lp_regions_doc *d, struct lp_buf *out);

/* Writes report.json, report.md and one folder per region into `dir` (which exists and is
 * empty). Errors: LP_EOTHER (I/O, memory), a raw page that cannot be read again (its error). */
int lp_regions_report_write(const struct lp_regions_doc *d, const char *dir, struct lp_err *err);

/* A "ranges seen" entry (analyze/regions.h) as an expression that can be pasted back into
 * profiling.ncu.regions.include: "::", a leading '[', a trailing ']' and a lone '*' of the range
 * name escaped with '\' (`aten\:\:to, op_id = 21/`), so lp_region_pattern_parse reads it back as
 * one level named as seen. Replaces `out`'s contents. */
int lp_regions_pasteable(const char *seen, struct lp_buf *out);

#endif
