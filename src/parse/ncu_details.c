/* ncu_details.c: the details page of an Nsight Compute report (see ncu_details.h). Gives the
 * run report ncu's own rule verdicts (with estimated speedups) beside our roofline numbers. */
#include "parse/ncu_details.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/vec.h"
#include "parse/csv.h"
#include "parse/kname.h"
#include "parse/ncu_nvtx.h"
#include "profile/kagg.h"

enum {
	D_ID, D_PID, D_KERNEL, D_BLOCK, D_GRID, D_DEVICE, D_PUSHPOP, D_SECTION, D_METRIC, D_UNIT, D_VALUE,
	D_RULE, D_RULE_TYPE, D_RULE_DESC, D_SPEEDUP_TYPE, D_SPEEDUP, D_STARTEND, D_N
};

static const char *const dcol_names[D_N] = {
	"ID", "Process ID", "Kernel Name", "Block Size", "Grid Size", "Device", LP_NCU_COL_PUSHPOP,
	"Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
	"Rule Description", "Estimated Speedup Type", "Estimated Speedup", LP_NCU_COL_STARTEND,
};

void lp_ncu_details_release(struct lp_ncu_details *d)
{
	size_t i;
	for (i = 0; i < d->n_results; i++) {
		free(d->results[i].metrics);
		free(d->results[i].rules);
	}
	free(d->results);
	lp_arena_release(&d->arena);
	memset(d, 0, sizeof(*d));
}

static const char *cell(const struct lp_csv *c, const int *col, int k)
{
	return col[k] >= 0 && (size_t)col[k] < c->n_fields ? c->fields[col[k]] : "";
}

static char *dup(struct lp_ncu_details *d, const char *s)
{
	return lp_arena_strdup(&d->arena, s ? s : "");
}

/* Copies a parsed stack's levels into the arena; NULL (and *n = 0) for an empty one. */
static struct lp_ncu_nvtx_level *keep_levels(struct lp_ncu_details *d, const struct lp_ncu_nvtx_stack *st, size_t *n)
{
	struct lp_ncu_nvtx_level *v;
	size_t i;
	*n = 0;
	if (!st->n)
		return NULL;
	v = lp_arena_alloc(&d->arena, st->n * sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < st->n; i++) {
		v[i] = st->levels[i];
		v[i].domain = dup(d, st->levels[i].domain);
		v[i].name = dup(d, st->levels[i].name);
		v[i].message = dup(d, st->levels[i].message);
		if (!v[i].domain || !v[i].name || !v[i].message)
			return NULL;
	}
	*n = st->n;
	return v;
}

static int new_result(struct lp_ncu_details *d, size_t *cap, const struct lp_csv *c, const int *col,
	struct lp_ncu_nvtx_stack *st, struct lp_buf *tmp, const char *path, struct lp_err *err)
{
	struct lp_ncu_details_result *r;
	double v;
	size_t i;
	if (!(r = LP_ARRAY_PUSH(d->results, d->n_results, *cap, err)))
		return -1;
	r->device = -1;
	r->duration_ns = -1;
	/* a value that does not fit the field is left unset (converting it is undefined behaviour) */
	if (lp_csv_number(cell(c, col, D_ID), &v) == 1 && v >= 0 && v < 0x1p64)
		r->id = (uint64_t)v;
	if (lp_csv_number(cell(c, col, D_PID), &v) == 1 && v >= 0 && v <= UINT32_MAX)
		r->pid = (uint32_t)v;
	if (lp_csv_number(cell(c, col, D_DEVICE), &v) == 1 && v >= 0 && v <= INT32_MAX)
		r->device = (int32_t)v;
	r->kernel_name = dup(d, cell(c, col, D_KERNEL));
	if (lp_kname_ncu_function(r->kernel_name ? r->kernel_name : "", tmp) < 0)
		return -1;
	r->short_name = dup(d, tmp->data);
	r->has_launch = lp_ncu_parse_dim3(cell(c, col, D_BLOCK), r->block) == 0 &&
		lp_ncu_parse_dim3(cell(c, col, D_GRID), r->grid) == 0;
	r->nvtx_path = "";
	if (col[D_STARTEND] >= 0) {
		if (lp_ncu_nvtx_parse(cell(c, col, D_STARTEND), 1, st, err) < 0)
			return lp_err_prefix(err, "%s:%llu", path, (unsigned long long)c->line);
		r->nvtx_startend = keep_levels(d, st, &r->n_nvtx_startend);
		if (st->n && !r->nvtx_startend)
			return -1;
	}
	if (col[D_PUSHPOP] >= 0) {
		if (lp_ncu_nvtx_parse(cell(c, col, D_PUSHPOP), 0, st, err) < 0)
			return lp_err_prefix(err, "%s:%llu", path, (unsigned long long)c->line);
		if (st->n) {
			r->nvtx = lp_arena_alloc(&d->arena, st->n * sizeof(*r->nvtx));
			if (!r->nvtx)
				return -1;
			for (i = 0; i < st->n; i++) {
				r->nvtx[i] = st->levels[i];
				r->nvtx[i].domain = dup(d, st->levels[i].domain);
				r->nvtx[i].name = dup(d, st->levels[i].name);
				r->nvtx[i].message = dup(d, st->levels[i].message);
			}
			r->n_nvtx = st->n;
			lp_ncu_nvtx_stack_path(st, tmp);
			r->nvtx_path = dup(d, tmp->data);
		}
	}
	if (!r->kernel_name || !r->short_name || !r->nvtx_path)
		return -1;
	return 0;
}

int lp_ncu_details_load(const char *path, struct lp_ncu_details *out, struct lp_err *err)
{
	struct lp_csv c;
	struct lp_ncu_nvtx_stack *st = calloc(1, sizeof(*st));
	struct lp_buf tmp = LP_BUF_INIT;
	int col[D_N], rc, i, ret = -1, metric_width;
	size_t ncols, cap_results = 0, cap_m = 0, cap_r = 0;
	uint64_t cur_id = UINT64_MAX;
	memset(out, 0, sizeof(*out));
	if (!st)
		return lp_oom(err);
	if (lp_csv_open(&c, path, NULL, err) < 0) {
		free(st);
		return -1;
	}
	rc = lp_csv_next(&c, err);
	if (rc <= 0) {
		if (rc == 0)
			lp_err_set(err, LP_EPARSE, "'%s' is empty (expected an ncu details page)", path);
		goto out;
	}
	ncols = c.n_fields;
	for (i = 0; i < D_N; i++)
		col[i] = lp_csv_column(&c, dcol_names[i]);
	for (i = 0; i < (int)ncols && col[D_PUSHPOP] < 0; i++)
		if (strstr(c.fields[i], "Push/Pop_Range"))
			col[D_PUSHPOP] = i;
	for (i = 0; i < (int)ncols && col[D_STARTEND] < 0; i++)
		if (strstr(c.fields[i], "Start/Stop_Range") || strstr(c.fields[i], "Start/End_Range"))
			col[D_STARTEND] = i;
	{
		static const int required[] = { D_ID, D_KERNEL, D_SECTION, D_METRIC, D_UNIT, D_VALUE };
		for (i = 0; i < (int)(sizeof(required) / sizeof(required[0])); i++)
			if (col[required[i]] < 0) {
				lp_err_set(err, LP_EPARSE, "%s:1: column '%s' missing (not an ncu details page?)", path,
					dcol_names[required[i]]);
				goto out;
			}
	}
	metric_width = col[D_VALUE] + 1;
	while ((rc = lp_csv_next(&c, err)) > 0) {
		struct lp_ncu_details_result *r;
		double v, id = -1;
		uint64_t row_id;
		int is_rule;
		if (c.n_fields == 1 && c.lens[0] == 0)
			continue;
		if (c.n_fields > ncols || (int)c.n_fields < metric_width) {
			lp_err_set(err, LP_EPARSE, "%s:%llu: row has %zu cells, expected %d to %zu (truncated file?)",
				path, (unsigned long long)c.line, c.n_fields, metric_width, ncols);
			goto out;
		}
		lp_csv_number(cell(&c, col, D_ID), &id);
		/* rows without a usable ID (absent, negative, too large) group under UINT64_MAX */
		row_id = id >= 0 && id < 0x1p64 ? (uint64_t)id : UINT64_MAX;
		if (out->n_results == 0 || row_id != cur_id) {
			if (new_result(out, &cap_results, &c, col, st, &tmp, path, err) < 0) {
				if (!err || !err->msg[0])
					lp_oom(err);
				goto out;
			}
			cur_id = row_id;
			cap_m = cap_r = 0;
		}
		r = &out->results[out->n_results - 1];
		is_rule = col[D_RULE] >= 0 && *cell(&c, col, D_RULE);
		if (is_rule) {
			struct lp_ncu_rule *ru;
			if (!(ru = LP_ARRAY_PUSH(r->rules, r->n_rules, cap_r, NULL)))
				goto oom;
			ru->section = dup(out, cell(&c, col, D_SECTION));
			ru->name = dup(out, cell(&c, col, D_RULE));
			ru->type = dup(out, cell(&c, col, D_RULE_TYPE));
			ru->description = dup(out, cell(&c, col, D_RULE_DESC));
			ru->speedup_type = dup(out, cell(&c, col, D_SPEEDUP_TYPE));
			if (!ru->section || !ru->name || !ru->type || !ru->description || !ru->speedup_type)
				goto oom;
			ru->has_speedup = lp_csv_number(cell(&c, col, D_SPEEDUP), &ru->speedup_pct) == 1;
		} else {
			struct lp_ncu_detail_metric *m;
			double scale;
			char base[64];
			if (!(m = LP_ARRAY_PUSH(r->metrics, r->n_metrics, cap_m, NULL)))
				goto oom;
			lp_ncu_unit_to_base(cell(&c, col, D_UNIT), &scale, base, sizeof(base));
			m->section = dup(out, cell(&c, col, D_SECTION));
			m->name = dup(out, cell(&c, col, D_METRIC));
			m->unit = dup(out, base);
			m->text = dup(out, cell(&c, col, D_VALUE));
			if (!m->section || !m->name || !m->unit || !m->text)
				goto oom;
			if (lp_csv_number(m->text, &v) == 1) {
				m->valid = 1;
				m->value = v * scale;
			}
			if (m->valid && !strcmp(m->name, "Duration") && strcmp(m->unit, "nsecond")) {
				/* a duration that is no time: the Metric Unit cell holds something else */
				lp_err_set(err, LP_EPARSE, "%s:%llu: 'Duration' has unit '%s', not a time (the header and the "
					"values do not match)", path, (unsigned long long)c.line, m->unit);
				goto out;
			}
			if (m->valid && r->duration_ns < 0 && !strcmp(m->name, "Duration"))
				r->duration_ns = m->value;
		}
	}
	if (rc == 0)
		ret = 0;
	goto out;
oom:
	lp_oom(err);
out:
	lp_csv_close(&c);
	lp_ncu_nvtx_stack_release(st);
	free(st);
	lp_buf_release(&tmp);
	if (ret < 0)
		lp_ncu_details_release(out);
	return ret;
}

int lp_ncu_details_kernel_table(const char *path, const struct lp_ncu_select *sel,
	struct lp_kernel_table *out, struct lp_err *err)
{
	return lp_ncu_details_kernel_table_seen(path, sel, NULL, out, err);
}

int lp_ncu_details_kernel_table_seen(const char *path, const struct lp_ncu_select *sel, struct lp_ncu_seen *seen,
	struct lp_kernel_table *out, struct lp_err *err)
{
	struct lp_ncu_details d;
	struct lp_kagg *agg;
	struct lp_metric *ms = NULL;
	struct lp_buf names = LP_BUF_INIT;
	size_t i, j, cap = 0;
	memset(out, 0, sizeof(*out));
	if (lp_ncu_details_load(path, &d, err) < 0)
		return -1;
	agg = lp_kagg_new(0);
	if (!agg)
		goto oom;
	for (i = 0; i < d.n_results; i++) {
		const struct lp_ncu_details_result *r = &d.results[i];
		struct lp_kagg_item x;
		int keep = !sel || !sel->stage;
		if (!r->has_launch && !strcmp(r->kernel_name, "range") && !(sel && sel->include_ranges))
			continue;
		for (j = 0; sel && sel->stage && j < r->n_nvtx + r->n_nvtx_startend; j++) {
			struct lp_ncu_nvtx_stack one;
			one.n = 1;
			one.levels[0] = j < r->n_nvtx ? r->nvtx[j] : r->nvtx_startend[j - r->n_nvtx];
			if (lp_ncu_select_stack(sel, seen, &one))   /* notes every level in seen */
				keep = 1;
		}
		if (!keep)
			continue;
		if (LP_ARRAY_RESERVE(ms, cap, r->n_metrics, NULL) < 0)
			goto oom;
		/* "<section>/<metric>" names, built into one buffer then pointed at */
		lp_buf_reset(&names);
		for (j = 0; j < r->n_metrics; j++)
			lp_buf_addf(&names, "%s/%s%c", r->metrics[j].section, r->metrics[j].name, '\0');
		if (names.oom)
			goto oom;
		{
			const char *p = names.data;
			for (j = 0; j < r->n_metrics; j++) {
				ms[j].name = p;
				ms[j].unit = r->metrics[j].unit;
				ms[j].value = r->metrics[j].value;
				ms[j].valid = r->metrics[j].valid;
				p += strlen(p) + 1;
			}
		}
		if (r->duration_ns < 0) {
			/* every result of a details page carries its Duration (GPU Speed Of Light); none means
			 * the header cells and the values do not match, and the kernel would read 0 ms */
			lp_err_set(err, LP_EPARSE, "%s: result ID %llu ('%.60s') has no 'Duration' metric: a kernel table needs "
				"each launch's duration", path, (unsigned long long)r->id, r->kernel_name);
			lp_err_hint(err, "export the details page of a report collected with the SpeedOfLight section");
			goto fail;
		}
		memset(&x, 0, sizeof(x));
		x.name = r->kernel_name;
		x.short_name = r->short_name;
		x.device = r->device;
		x.duration_ns = r->duration_ns;
		x.block = r->block;
		x.grid = r->grid;
		x.metrics = ms;
		x.n_metrics = r->n_metrics;
		if (lp_kagg_add(agg, &x, 1, -1, -1, err) < 0)
			goto fail;
	}
	free(ms);
	lp_buf_release(&names);
	lp_ncu_details_release(&d);
	return lp_kagg_finish(agg, out, err);
oom:
	lp_oom(err);
fail:
	free(ms);
	lp_buf_release(&names);
	lp_kagg_free(agg);
	lp_ncu_details_release(&d);
	return -1;
}
