/* diff_report.c: the Markdown and JSON of `llmprof diff` (see diff_report.h). */
#include "report/diff_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/utf8.h"
#include "report/md.h"

static void num(char *b, size_t cap, double v)
{
	if (isnan(v))
		snprintf(b, cap, "-");
	else
		snprintf(b, cap, "%.4f", v);
}

static void verdict(const struct lp_diff_row *r, char *b, size_t cap)
{
	if (r->verdict == LP_DIFF_NA)
		snprintf(b, cap, "n/a (%s)", r->why ? r->why : "unknown");
	else if (r->p >= 0)
		snprintf(b, cap, "%s (p = %.2g)", lp_diff_verdict_name(r->verdict), r->p);
	else if (r->why)
		snprintf(b, cap, "%s (%s)", lp_diff_verdict_name(r->verdict), r->why);
	else
		snprintf(b, cap, "%s", lp_diff_verdict_name(r->verdict));
}

static void row(struct lp_buf *out, const struct lp_diff_row *r)
{
	char a[32], b[32], d[32], rel[32], v[96];
	const char *cells[6];
	struct lp_buf lab = LP_BUF_INIT;
	num(a, sizeof(a), r->a);
	num(b, sizeof(b), r->b);
	if (isnan(r->delta))
		snprintf(d, sizeof(d), "-");
	else
		snprintf(d, sizeof(d), "%+.4f", r->delta);
	if (isnan(r->rel))
		snprintf(rel, sizeof(rel), "-");
	else
		snprintf(rel, sizeof(rel), "%+.2f%%", 100 * r->rel);
	verdict(r, v, sizeof(v));
	lp_buf_adds(&lab, r->label);
	if (r->basis)
		lp_buf_addf(&lab, " (%s)", r->basis);
	cells[0] = lab.data;
	cells[1] = a;
	cells[2] = b;
	cells[3] = d;
	cells[4] = rel;
	cells[5] = v;
	lp_md_row(out, 6, cells, LP_MD_NAME_MAX);
	lp_buf_release(&lab);
}

static int cmp_abs_delta(const void *x, const void *y)
{
	const struct lp_diff_row *a = *(const struct lp_diff_row *const *)x, *b = *(const struct lp_diff_row *const *)y;
	double da = isnan(a->delta) ? fabs(isnan(a->a) ? a->b : a->a) : fabs(a->delta);
	double db = isnan(b->delta) ? fabs(isnan(b->a) ? b->b : b->a) : fabs(b->delta);
	if (da != db)
		return da < db ? 1 : -1;
	return strcmp(a->key, b->key);
}

static void section(struct lp_buf *out, const struct lp_diff *d, enum lp_diff_section s, const char *title,
	size_t top, int sorted)
{
	static const char *const cols[] = { "metric", "A", "B", "B - A", "change", "verdict" };
	const struct lp_diff_row **rows = malloc((d->n_rows + 1) * sizeof(*rows));
	size_t i, n = 0;
	if (!rows) {
		out->oom = 1;
		return;
	}
	for (i = 0; i < d->n_rows; i++)
		if (d->rows[i].section == s)
			rows[n++] = &d->rows[i];
	if (n) {
		if (sorted)
			qsort(rows, n, sizeof(*rows), cmp_abs_delta);
		lp_buf_addf(out, "\n## %s\n\n", title);
		lp_md_header(out, 6, cols, "lrrrrl");
		for (i = 0; i < n && (!top || i < top); i++)
			row(out, rows[i]);
		if (top && n > top)
			lp_buf_addf(out, "\n%zu more rows in `--format json`.\n", n - top);
	}
	free(rows);
}

int lp_diff_md(const struct lp_diff *d, const char *name_a, const char *name_b, size_t top, struct lp_buf *out)
{
	size_t i;
	lp_buf_adds(out, "# llmprof diff\n\nA: ");
	lp_md_text(out, name_a);
	lp_buf_adds(out, "  \nB: ");
	lp_md_text(out, name_b);
	lp_buf_adds(out, "\n\n");
	lp_md_text(out, d->narrative.data);
	lp_buf_adds(out, "\n");
	if (!d->table_mode) {
		lp_buf_adds(out, "\n## Environment differences\n\n");
		if (!d->n_env)
			lp_buf_adds(out, "None: same device, model, inputs and configuration.\n");
		for (i = 0; i < d->n_env; i++) {
			lp_buf_adds(out, "- ");
			lp_md_text(out, d->env[i]);
			lp_buf_adds(out, "\n");
		}
	}
	section(out, d, LP_DIFF_TOKENS, "Headline numbers", 0, 0);
	section(out, d, LP_DIFF_STAGE, "Stages", 0, 0);
	section(out, d, LP_DIFF_PERF, "MFU and MBU", 0, 0);
	section(out, d, LP_DIFF_KERNEL, "Kernels (largest changes first)", top, 1);
	section(out, d, LP_DIFF_OPERATOR, "Operators (largest changes first)", top, 1);
	lp_buf_addf(out, "\nVerdicts: Welch's t-test on the per-iteration values (stages) or per-launch durations "
			 "(kernels, when the launches per iteration are the same); a change needs p < %.2g and at least "
			 "%.0f%% (stages) or %.0f%% (kernels), else it is within noise. docs/diff.md.\n", LP_DIFF_ALPHA,
		100 * LP_DIFF_MIN_STAGE, 100 * LP_DIFF_MIN_KERNEL);
	return out->oom ? -1 : 0;
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int lp_diff_json(const struct lp_diff *d, const char *name_a, const char *name_b, struct lp_buf *out, struct lp_err *err)
{
	static const char *const sec[] = { "stage", "tokens", "perf", "kernel", "operator" };
	json_t *root = json_object(), *rows = json_array(), *env = json_array();
	char *text;
	size_t i;
	json_object_set_new(root, "a", lp_json_string(name_a));
	json_object_set_new(root, "b", lp_json_string(name_b));
	json_object_set_new(root, "narrative", lp_json_string(d->narrative.data));
	json_object_set_new(root, "table_mode", json_boolean(d->table_mode));
	for (i = 0; i < d->n_env; i++)
		json_array_append_new(env, lp_json_string(d->env[i]));
	json_object_set_new(root, "environment", env);
	for (i = 0; i < d->n_rows; i++) {
		const struct lp_diff_row *r = &d->rows[i];
		json_t *o = json_object();
		json_object_set_new(o, "section", json_string(sec[r->section]));
		json_object_set_new(o, "key", lp_json_string(r->key));
		json_object_set_new(o, "label", lp_json_string(r->label));
		json_object_set_new(o, "unit", json_string(r->unit));
		json_object_set_new(o, "basis", r->basis ? json_string(r->basis) : json_null());
		json_object_set_new(o, "a", jnum(r->a));
		json_object_set_new(o, "b", jnum(r->b));
		json_object_set_new(o, "delta", jnum(r->delta));
		json_object_set_new(o, "change", jnum(r->rel));
		json_object_set_new(o, "p", r->p >= 0 ? json_real(r->p) : json_null());
		json_object_set_new(o, "verdict", json_string(lp_diff_verdict_name(r->verdict)));
		json_object_set_new(o, "why", r->why ? json_string(r->why) : json_null());
		json_array_append_new(rows, o);
	}
	json_object_set_new(root, "rows", rows);
	text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12) | JSON_ENSURE_ASCII);
	json_decref(root);
	if (!text)
		return lp_err_set(err, LP_EOTHER, "cannot encode the diff as JSON (invalid UTF-8 in a name?)");
	lp_buf_adds(out, text);
	lp_buf_addc(out, '\n');
	free(text);
	return out->oom ? lp_oom(err) : 0;
}
