/* nsys_csv.c: `nsys stats` CSV reports (see nsys_csv.h), written by the nsys phase
 * (collect/nsys.c) and read by `llmprof kernels` and the run report. */
#include "parse/nsys_csv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/fs.h"
#include "core/vec.h"
#include "parse/csv.h"
#include "parse/kname.h"
#include "parse/ncu_raw.h"
#include "profile/kagg.h"

double lp_nsys_header_ns(const char *h)
{
	const char *open = strrchr(h, '(');
	if (!open)
		return 0;
	if (!strcmp(open, "(ns)"))
		return 1;
	if (!strcmp(open, "(us)") || !strcmp(open, "(\xC2\xB5s)"))
		return 1e3;
	if (!strcmp(open, "(ms)"))
		return 1e6;
	if (!strcmp(open, "(s)"))
		return 1e9;
	return 0;
}

/* Finds a column whose header starts with `prefix` followed by " (" or the end. */
static int find_col(const struct lp_csv *c, const char *prefix, double *ns)
{
	size_t i, n = strlen(prefix);
	for (i = 0; i < c->n_fields; i++) {
		const char *h = c->fields[i];
		if (strncmp(h, prefix, n) != 0 || (h[n] != '\0' && strncmp(h + n, " (", 2) != 0))
			continue;
		if (ns)
			*ns = lp_nsys_header_ns(h);
		return (int)i;
	}
	return -1;
}

static int open_report(const char *path, struct lp_csv *c, int *empty, struct lp_err *err)
{
	int64_t size = lp_fs_size(path);
	int rc;
	*empty = 0;
	if (size < 0)
		return lp_err_set(err, LP_EPARSE, "cannot open '%s': no such file", path);
	if (size == 0) {
		*empty = 1;
		return 0;
	}
	if (lp_csv_open(c, path, NULL, err) < 0)
		return -1;
	rc = lp_csv_next(c, err);
	if (rc < 0) {
		lp_csv_close(c);
		return -1;
	}
	if (rc == 0) {
		lp_csv_close(c);
		*empty = 1;
	}
	return 0;
}

static int row_width(struct lp_csv *c, const char *path, size_t ncols, struct lp_err *err)
{
	if (c->n_fields == ncols)
		return 0;
	return lp_err_set(err, LP_EPARSE, "%s:%llu: row has %zu cells, the header has %zu (truncated file?)",
		path, (unsigned long long)c->line, c->n_fields, ncols);
}

int lp_nsys_kern_sum_load(const char *path, struct lp_kernel_table *out, struct lp_err *err)
{
	struct lp_csv c;
	struct lp_kagg *agg;
	struct lp_buf fname = LP_BUF_INIT;
	int empty, rc, name_col, total_col, inst_col, min_col, max_col;
	double total_ns = 0, min_ns = 0, max_ns = 0;
	size_t ncols;
	memset(out, 0, sizeof(*out));
	if (open_report(path, &c, &empty, err) < 0)
		return -1;
	if (empty)
		return 0;
	name_col = find_col(&c, "Name", NULL);
	total_col = find_col(&c, "Total Time", &total_ns);
	inst_col = find_col(&c, "Instances", NULL);
	min_col = find_col(&c, "Min", &min_ns);
	max_col = find_col(&c, "Max", &max_ns);
	if (name_col < 0 || total_col < 0 || inst_col < 0 || total_ns == 0) {
		const char *missing = name_col < 0 ? "Name" : total_col < 0 || total_ns == 0 ? "Total Time (ns)" : "Instances";
		lp_csv_close(&c);
		return lp_err_set(err, LP_EPARSE, "%s:1: column '%s' missing (not an nsys cuda_gpu_kern_sum report?)",
			path, missing);
	}
	ncols = c.n_fields;
	agg = lp_kagg_new(0);
	if (!agg) {
		lp_csv_close(&c);
		return lp_oom(err);
	}
	while ((rc = lp_csv_next(&c, err)) > 0) {
		double total, v, mn, mx;
		uint64_t inst;
		int k;
		if (c.n_fields == 1 && c.lens[0] == 0)
			continue;
		if (row_width(&c, path, ncols, err) < 0)
			goto fail;
		/* the rule for every number: not finite, overflowing or not a number is an error here;
		 * a kernel row needs both its total and its count */
		k = lp_csv_cell_number(path, c.line, (size_t)total_col, "Total Time", c.fields[total_col], &total, err);
		if (k == 0)
			lp_err_set(err, LP_EPARSE, "%s:%llu:%d: 'Total Time' has no value", path,
				(unsigned long long)c.line, total_col + 1);
		if (k <= 0)
			goto fail;
		k = lp_csv_cell_count(path, c.line, (size_t)inst_col, "Instances", c.fields[inst_col], INT64_MAX, &inst, err);
		if (k == 0)
			lp_err_set(err, LP_EPARSE, "%s:%llu:%d: 'Instances' has no value", path,
				(unsigned long long)c.line, inst_col + 1);
		if (k <= 0)
			goto fail;
		if (total < 0) {
			lp_err_set(err, LP_EPARSE, "%s:%llu:%d: 'Total Time' is negative", path,
				(unsigned long long)c.line, total_col + 1);
			goto fail;
		}
		if (lp_kname_ncu_function(c.fields[name_col], &fname) < 0)
			goto oom;
		mn = mx = -1;
		if (min_col >= 0 && min_ns > 0 &&
				(k = lp_csv_cell_number(path, c.line, (size_t)min_col, "Min", c.fields[min_col], &v, err)) != 0) {
			if (k < 0)
				goto fail;
			mn = v * min_ns / 1e6;
		}
		if (max_col >= 0 && max_ns > 0 &&
				(k = lp_csv_cell_number(path, c.line, (size_t)max_col, "Max", c.fields[max_col], &v, err)) != 0) {
			if (k < 0)
				goto fail;
			mx = v * max_ns / 1e6;
		}
		/* the columns must agree with one another: a header whose cells were moved puts a count or
		 * a deviation where the total belongs and reads plausible-looking numbers */
		if (inst > 0 && mn >= 0 && mx >= 0) {
			double mean_ms = total * total_ns / 1e6 / (double)inst, tol = 1e-6 + 1e-6 * mx;
			if (mn > mx + tol || mean_ms < mn - tol || mean_ms > mx + tol) {
				lp_err_set(err, LP_EPARSE, "%s:%llu: 'Total Time' / 'Instances' = %.6g ms per launch is outside 'Min' .. "
					"'Max' (%.6g .. %.6g ms): the header and the values do not match", path,
					(unsigned long long)c.line, mean_ms, mn, mx);
				goto fail;
			}
		}
		if (lp_kagg_add_summary(agg, c.fields[name_col], fname.data, -1, inst,
				total * total_ns / 1e6, mn, mx, err) < 0)
			goto fail;
	}
	if (rc < 0)
		goto fail;
	lp_csv_close(&c);
	lp_buf_release(&fname);
	return lp_kagg_finish(agg, out, err);
oom:
	lp_oom(err);
fail:
	lp_csv_close(&c);
	lp_buf_release(&fname);
	lp_kagg_free(agg);
	return -1;
}

int lp_nsys_split_range(const char *cell, struct lp_arena *a, const char **domain, const char **name)
{
	const char *colon = strchr(cell, ':');
	if (!colon) {
		*domain = "";
		*name = lp_arena_strdup(a, cell);
	} else {
		*domain = colon == cell ? "" : lp_arena_strndup(a, cell, (size_t)(colon - cell));
		*name = lp_arena_strdup(a, colon + 1);
	}
	return *domain && *name ? 0 : -1;
}

void lp_nsys_range_table_release(struct lp_nsys_range_table *t)
{
	free(t->rows);
	lp_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

int lp_nsys_range_sum_load(const char *path, struct lp_nsys_range_table *out, struct lp_err *err)
{
	struct lp_csv c;
	int empty, rc, range_col, total_col, range_total_col, inst_col, style_col;
	double total_ns = 0, range_ns = 0;
	size_t ncols, cap = 0;
	memset(out, 0, sizeof(*out));
	if (open_report(path, &c, &empty, err) < 0)
		return -1;
	if (empty)
		return 0;
	range_col = find_col(&c, "Range", NULL);
	if (range_col < 0)
		range_col = find_col(&c, "Name", NULL);
	style_col = find_col(&c, "Style", NULL);
	total_col = find_col(&c, "Total Proj Time", &total_ns);
	range_total_col = find_col(&c, "Total Range Time", &range_ns);
	out->projected = total_col >= 0;
	if (total_col < 0)
		total_col = find_col(&c, "Total Time", &total_ns);
	inst_col = find_col(&c, "Range Instances", NULL);
	if (inst_col < 0)
		inst_col = find_col(&c, "Instances", NULL);
	if (range_col < 0 || total_col < 0 || total_ns == 0) {
		lp_csv_close(&c);
		return lp_err_set(err, LP_EPARSE, "%s:1: column '%s' missing (not an nsys nvtx_sum or nvtx_gpu_proj_sum report?)",
			path, range_col < 0 ? "Range" : "Total Time (ns)");
	}
	ncols = c.n_fields;
	while ((rc = lp_csv_next(&c, err)) > 0) {
		struct lp_nsys_range_row *r;
		double v;
		int k;
		if (c.n_fields == 1 && c.lens[0] == 0)
			continue;
		if (row_width(&c, path, ncols, err) < 0)
			goto fail;
		if (LP_ARRAY_RESERVE(out->rows, cap, out->n_rows + 1, NULL) < 0)
			goto oom;
		r = &out->rows[out->n_rows];
		memset(r, 0, sizeof(*r));
		if (lp_nsys_split_range(c.fields[range_col], &out->arena, &r->domain, &r->name) < 0)
			goto oom;
		r->style = style_col >= 0 ? lp_arena_strdup(&out->arena, c.fields[style_col]) : "";
		if (!r->style)
			goto oom;
		k = lp_csv_cell_number(path, c.line, (size_t)total_col, "Total Time", c.fields[total_col],
			&v, err);
		if (k == 0)
			lp_err_set(err, LP_EPARSE, "%s:%llu:%d: total time has no value", path,
				(unsigned long long)c.line, total_col + 1);
		if (k <= 0)
			goto fail;
		r->total_ns = v * total_ns;
		r->range_total_ns = r->total_ns;
		if (range_total_col >= 0 && range_ns > 0) {
			k = lp_csv_cell_number(path, c.line, (size_t)range_total_col, "Total Range Time",
				c.fields[range_total_col], &v, err);
			if (k < 0)
				goto fail;
			if (k == 1)
				r->range_total_ns = v * range_ns;
		}
		if (inst_col >= 0 && lp_csv_cell_count(path, c.line, (size_t)inst_col, "Instances", c.fields[inst_col],
				INT64_MAX, &r->instances, err) < 0)
			goto fail;
		out->n_rows++;
	}
	if (rc < 0)
		goto fail;
	lp_csv_close(&c);
	return 0;
oom:
	lp_oom(err);
fail:
	lp_csv_close(&c);
	lp_nsys_range_table_release(out);
	return -1;
}
