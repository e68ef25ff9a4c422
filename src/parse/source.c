/* source.c: telling SOURCE paths apart and loading their kernel tables (see source.h). The one
 * place that knows every parser; `llmprof kernels` and the run report go through it. */
#include "parse/source.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/str.h"
#include "parse/csv.h"
#include "parse/ncu_details.h"
#include "parse/ncu_raw.h"
#include "parse/ncu_summary.h"
#include "parse/nsys_csv.h"
#include "parse/nsys_sqlite.h"
#include "parse/trace_read.h"

const char *lp_source_kind_name(enum lp_source_kind k)
{
	switch (k) {
	case LP_SOURCE_NCU_RAW: return "ncu-raw";
	case LP_SOURCE_NCU_DETAILS: return "ncu-details";
	case LP_SOURCE_NCU_SUMMARY: return "ncu-summary";
	case LP_SOURCE_NSYS_KERN_SUM: return "nsys-kern-sum";
	case LP_SOURCE_NSYS_NVTX_SUM: return "nsys-nvtx-sum";
	case LP_SOURCE_NSYS_SQLITE: return "nsys-sqlite";
	case LP_SOURCE_TRACE_DIR: return "trace";
	case LP_SOURCE_RUN_DIR: return "run";
	default: return "unknown";
	}
}

static int dir_has_suffix(const char *dir, const char *suffix, struct lp_buf *first)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *best = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (!lp_str_ends_with(e->d_name, suffix))
			continue;
		if (!best || strcmp(e->d_name, best) < 0) {
			free(best);
			best = strdup(e->d_name);
		}
	}
	closedir(d);
	if (!best)
		return 0;
	if (first)
		lp_fs_join(first, dir, best);
	free(best);
	return 1;
}

static int detect_csv(const char *path, enum lp_source_kind *kind, struct lp_err *err)
{
	struct lp_csv c;
	int rc;
	*kind = LP_SOURCE_UNKNOWN;
	if (lp_fs_size(path) == 0) {
		if (lp_str_ends_with(path, "cuda_gpu_kern_sum.csv")) {
			*kind = LP_SOURCE_NSYS_KERN_SUM;  /* nsys writes 0 bytes when there is no data */
			return 0;
		}
		return lp_err_set(err, LP_EPARSE, "'%s' is empty", path);
	}
	if (lp_csv_open(&c, path, NULL, err) < 0)
		return -1;
	rc = lp_csv_next(&c, err);
	if (rc < 0) {
		lp_csv_close(&c);
		return -1;
	}
	if (rc > 0) {
		int kn = lp_csv_column(&c, "Kernel Name") >= 0, id = lp_csv_column(&c, "ID") >= 0;
		if (kn && !id && lp_ncu_summary_kind_of(c.fields, c.n_fields))
			*kind = LP_SOURCE_NCU_SUMMARY;
		else if (kn && id && lp_csv_column(&c, "Metric Name") >= 0)
			*kind = LP_SOURCE_NCU_DETAILS;
		else if (kn && id)
			*kind = LP_SOURCE_NCU_RAW;
		else if (lp_csv_column(&c, "Name") >= 0 && lp_csv_column(&c, "Instances") >= 0 &&
				lp_csv_column(&c, "Total Time (ns)") >= 0)
			*kind = LP_SOURCE_NSYS_KERN_SUM;
		else if (lp_csv_column(&c, "Range") >= 0)
			*kind = LP_SOURCE_NSYS_NVTX_SUM;
	}
	lp_csv_close(&c);
	if (*kind == LP_SOURCE_UNKNOWN)
		return lp_err_set(err, LP_EPARSE, "'%s': not an ncu raw/details page or summary, or an nsys kernel summary (unknown header)",
			path);
	return 0;
}

int lp_source_detect(const char *path, enum lp_source_kind *kind, struct lp_buf *resolved, struct lp_err *err)
{
	struct lp_buf sub = LP_BUF_INIT;
	*kind = LP_SOURCE_UNKNOWN;
	lp_buf_reset(resolved);
	lp_buf_adds(resolved, path);
	if (lp_fs_is_dir(path)) {
		if (dir_has_suffix(path, ".lptrace", NULL)) {
			*kind = LP_SOURCE_TRACE_DIR;
			return 0;
		}
		lp_fs_join(&sub, path, "trace");
		if (lp_fs_is_dir(sub.data) && dir_has_suffix(sub.data, ".lptrace", NULL)) {
			lp_buf_reset(resolved);
			lp_buf_adds(resolved, sub.data);
			*kind = LP_SOURCE_TRACE_DIR;
			goto found;
		}
		lp_fs_join(&sub, path, "ncu");
		if (lp_fs_is_dir(sub.data) && dir_has_suffix(sub.data, "_raw.csv", resolved)) {
			*kind = LP_SOURCE_NCU_RAW;
			goto found;
		}
		lp_fs_join(&sub, path, "nsys/run.sqlite");
		if (lp_fs_is_file(sub.data)) {
			lp_buf_reset(resolved);
			lp_buf_adds(resolved, sub.data);
			*kind = LP_SOURCE_NSYS_SQLITE;
			goto found;
		}
		lp_fs_join(&sub, path, "nsys/summary_cuda_gpu_kern_sum.csv");
		if (lp_fs_is_file(sub.data)) {
			lp_buf_reset(resolved);
			lp_buf_adds(resolved, sub.data);
			*kind = LP_SOURCE_NSYS_KERN_SUM;
			goto found;
		}
		lp_buf_release(&sub);
		lp_err_set(err, LP_EPARSE, "'%s' holds no trace, ncu or nsys output", path);
		return lp_err_hint(err, "expected *.lptrace files, or trace/, ncu/*_raw.csv, nsys/run.sqlite inside a run folder");
	found:
		lp_buf_release(&sub);
		return 0;
	}
	if (!lp_fs_is_file(path)) {
		if (access(path, F_OK) != 0)
			return lp_err_set(err, LP_EPARSE, "cannot open '%s': no such file or folder", path);
		lp_err_set(err, LP_EPARSE, "'%s' is not a regular file or a folder (a device, a pipe or a socket)", path);
		return lp_err_hint(err, "give a trace, ncu or nsys output file, a trace folder or a run folder");
	}
	if (lp_nsys_sqlite_is_sqlite(path)) {
		*kind = LP_SOURCE_NSYS_SQLITE;
		return 0;
	}
	if (lp_str_ends_with(path, ".lptrace")) {
		*kind = LP_SOURCE_TRACE_DIR;
		return 0;
	}
	return detect_csv(path, kind, err);
}

/* "name" (any domain), "domain@name", "@name" (default domain), as lp_profile_range_find_ancestor. */
static int range_is(const struct lp_range *r, const char *expr)
{
	const char *at = strchr(expr, '@');
	const char *dom = r->domain ? r->domain : "";
	if (!at)
		return strcmp(r->name, expr) == 0;
	return strcmp(r->name, at + 1) == 0 && strlen(dom) == (size_t)(at - expr) &&
		strncmp(dom, expr, (size_t)(at - expr)) == 0;
}

/* The kernels under the stage: a push/pop ancestor matches, or a matching start/end range of the
 * same process was open at the launch (its CPU time; the kernel's start when that is unknown). */
static int stage_kernels(const struct lp_profile *p, const struct lp_source_opts *o, struct lp_kernel **sel,
	size_t *n_sel, struct lp_err *err)
{
	size_t i, j, n = 0;
	struct lp_kernel *v = malloc((p->n_kernels ? p->n_kernels : 1) * sizeof(*v));
	int32_t *se = malloc((p->n_ranges ? p->n_ranges : 1) * sizeof(*se));
	size_t n_se = 0;
	if (!v || !se) {
		free(v);
		free(se);
		return lp_oom(err);
	}
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		if (r->kind == LP_RANGE_MARK)
			continue;
		if (o->ranges_seen)
			lp_ncu_note_range(o->ranges_seen, r->domain, r->name);
		if (range_is(r, o->stage)) {
			if (o->stage_seen)
				*o->stage_seen = 1;
			if (r->kind == LP_RANGE_STARTEND)
				se[n_se++] = (int32_t)i;
		}
	}
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		uint64_t t = k->launch_ns ? k->launch_ns : k->start_ns;
		int in = lp_profile_range_find_ancestor(p, k->range, o->stage) >= 0;
		for (j = 0; !in && j < n_se; j++) {
			const struct lp_range *r = &p->ranges[se[j]];
			in = r->pid == k->pid && r->start_ns <= t && (r->end_ns == 0 || t <= r->end_ns);
		}
		if (in)
			v[n++] = *k;
	}
	free(se);
	*sel = v;
	*n_sel = n;
	return 0;
}

static int from_profile(struct lp_profile *p, const struct lp_source_opts *o, struct lp_kernel_table *out,
	struct lp_err *err)
{
	struct lp_kernel_filter f;
	struct lp_profile view = *p;
	struct lp_kernel *sel = NULL;
	size_t i, n_sel = 0;
	int rc;
	memset(&f, 0, sizeof(f));
	f.device = -1;
	f.exclude_warmup = o ? o->exclude_warmup : 0;
	if (o && o->stage) {
		/* the table builder knows push/pop ancestry only: give it a view of the kernels under
		 * the stage, start/end ranges included */
		if (stage_kernels(p, o, &sel, &n_sel, err) < 0)
			return -1;
		view.kernels = sel;
		view.n_kernels = n_sel;
		view.cap_kernels = n_sel;
	}
	rc = lp_kernel_table_build(&view, &f, out, err);
	free(sel);
	if (rc < 0)
		return -1;
	/* the rows point into the profile, which the caller releases: copy the names */
	for (i = 0; i < out->n_rows; i++) {
		struct lp_kernel_record *r = &out->rows[i];
		r->kernel_name = lp_arena_strdup(&out->arena, r->kernel_name);
		r->short_name = lp_arena_strdup(&out->arena, r->short_name ? r->short_name : "");
		if (!r->kernel_name || !r->short_name) {
			lp_kernel_table_release(out);
			return lp_oom(err);
		}
	}
	return 0;
}

int lp_source_kernel_table(const char *path, const struct lp_source_opts *o, struct lp_kernel_table *out,
	enum lp_source_kind *kind, struct lp_buf *resolved, struct lp_err *err)
{
	struct lp_ncu_select sel;
	struct lp_ncu_seen seen;
	struct lp_profile p;
	const char *file;
	int rc;
	memset(out, 0, sizeof(*out));
	if (lp_source_detect(path, kind, resolved, err) < 0)
		return -1;
	file = resolved->data;
	memset(&sel, 0, sizeof(sel));
	sel.stage = o ? o->stage : NULL;
	seen.ranges = o ? o->ranges_seen : NULL;
	seen.stage_seen = 0;
	switch (*kind) {
	case LP_SOURCE_NCU_RAW:
		rc = lp_ncu_raw_kernel_table_seen(file, &sel, &seen, out, err);
		goto ncu_done;
	case LP_SOURCE_NCU_DETAILS:
		rc = lp_ncu_details_kernel_table_seen(file, &sel, &seen, out, err);
		goto ncu_done;
	case LP_SOURCE_NCU_SUMMARY:
		rc = lp_ncu_summary_kernel_table_seen(file, &sel, &seen, out, err);
		goto ncu_done;
	case LP_SOURCE_NSYS_KERN_SUM:
		if (sel.stage)
			return lp_err_set(err, LP_EUSAGE, "'%s' is a whole-run summary: it cannot be cut by stage '%s'",
				file, sel.stage);
		return lp_nsys_kern_sum_load(file, out, err);
	case LP_SOURCE_NSYS_NVTX_SUM:
		return lp_err_set(err, LP_EPARSE, "'%s' is an nsys NVTX summary, not a kernel table", file);
	case LP_SOURCE_NSYS_SQLITE:
		if (!sel.stage && !(o && o->exclude_warmup))
			return lp_nsys_sqlite_kernel_table(file, out, err);
		lp_profile_init(&p, file);
		rc = lp_nsys_sqlite_load(file, &p, err);
		if (rc == 0)
			rc = from_profile(&p, o, out, err);
		lp_profile_release(&p);
		return rc;
	case LP_SOURCE_TRACE_DIR:
		lp_profile_init(&p, file);
		rc = lp_trace_load_damage(file, &p, o ? o->damage : NULL, err);
		if (rc == 0)
			rc = from_profile(&p, o, out, err);
		lp_profile_release(&p);
		if (rc < 0 && err && err->kind != LP_EPARSE && err->kind != LP_EOTHER && err->kind != LP_ENOMEM &&
		    err->kind != LP_EIO)
			err->kind = LP_EPARSE;
		return rc;
	default:
		return lp_err_set(err, LP_EPARSE, "'%s': unknown kind of source", file);
	}
ncu_done:
	if (o && o->stage_seen && seen.stage_seen)
		*o->stage_seen = 1;
	return rc;
}
