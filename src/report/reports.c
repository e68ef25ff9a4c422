/* reports.c: lp_report_write_all and the phases.json record (see reports.h). The last step of
 * the data flow: the analysis is rendered into buffers first, then each file is written
 * atomically, so a failure never leaves a half-written report. */
#include "report/reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "core/fs.h"
#include "report/figures.h"
#include "report/html.h"

static int write_one(const char *run_dir, const char *name, const struct lp_buf *b, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	int rc;
	if (lp_fs_join(&path, run_dir, name) < 0) {
		lp_buf_release(&path);
		return lp_oom(err);
	}
	rc = lp_fs_write_atomic(path.data, b->data, b->len, err);
	lp_buf_release(&path);
	return rc;
}

/* The renderers with one signature, for the table. */
static int kernels_md(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out, struct lp_err *err)
{
	(void)run_dir;
	return lp_report_kernels_md(a, out) < 0 ? lp_oom(err) : 0;
}

static int operators_md(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out, struct lp_err *err)
{
	(void)run_dir;
	return lp_report_operators_md(a, out) < 0 ? lp_oom(err) : 0;
}

static int report_md(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out, struct lp_err *err)
{
	return lp_report_report_md(a, run_dir, out) < 0 ? lp_oom(err) : 0;
}

static int stakeholder_md(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out, struct lp_err *err)
{
	(void)run_dir;
	return lp_report_stakeholder_md(a, out) < 0 ? lp_oom(err) : 0;
}

static int summary_json(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out, struct lp_err *err)
{
	(void)run_dir;
	return lp_report_summary_json(a, out, err);
}

static int html(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out, struct lp_err *err)
{
	return lp_report_html(a, run_dir, out) < 0 ? lp_oom(err) : 0;
}

const struct lp_report_file lp_report_files[LP_REPORT_N_FILES] = {
	{ "kernels.md", kernels_md },
	{ "operators.md", operators_md },
	{ "report.md", report_md },
	{ "stakeholder_summary.md", stakeholder_md },
	{ "summary.json", summary_json },
	{ "report.html", html },
};

int lp_report_write_all(const char *run_dir, const struct lp_analysis *a, struct lp_err *err)
{
	struct lp_buf b[LP_REPORT_N_FILES];
	int i, rc = 0;
	for (i = 0; i < LP_REPORT_N_FILES; i++)
		lp_buf_init(&b[i], 0);
	/* every report rendered before any is written: a failure leaves the folder as it was */
	for (i = 0; i < LP_REPORT_N_FILES && rc == 0; i++)
		rc = lp_report_files[i].render(a, run_dir, &b[i], err);
	/* the figures first: report.html and the Markdown reports link them */
	if (rc == 0)
		rc = lp_figures_write(run_dir, a, err);
	for (i = 0; i < LP_REPORT_N_FILES && rc == 0; i++)
		rc = write_one(run_dir, lp_report_files[i].name, &b[i], err);
	for (i = 0; i < LP_REPORT_N_FILES; i++)
		lp_buf_release(&b[i]);
	return rc;
}

int lp_phases_write(const char *run_dir, const struct lp_phase_status *phases, size_t n, double traced_s,
	double untraced_s, struct lp_err *err)
{
	json_t *root = json_object(), *arr = json_array(), *ov = json_object();
	struct lp_buf b = LP_BUF_INIT;
	size_t i;
	char *text;
	int rc;
	json_object_set_new(root, "schema_version", json_integer(1));
	for (i = 0; i < n; i++) {
		json_t *p = json_object();
		json_object_set_new(p, "name", json_string(phases[i].name));
		json_object_set_new(p, "status", json_string(phases[i].status));
		json_object_set_new(p, "reason", json_string(phases[i].reason));
		json_array_append_new(arr, p);
	}
	json_object_set_new(root, "phases", arr);
	json_object_set_new(ov, "traced_s", traced_s > 0 ? json_real(traced_s) : json_null());
	json_object_set_new(ov, "untraced_s", untraced_s > 0 ? json_real(untraced_s) : json_null());
	json_object_set_new(root, "overhead", ov);
	text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	json_decref(root);
	if (!text)
		return lp_err_set(err, LP_EOTHER, "cannot encode phases.json");
	lp_buf_adds(&b, text);
	lp_buf_addc(&b, '\n');
	free(text);
	rc = write_one(run_dir, "phases.json", &b, err);
	lp_buf_release(&b);
	return rc;
}

static void copy_field(char *dst, size_t cap, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	snprintf(dst, cap, "%s", json_is_string(v) ? json_string_value(v) : "");
}

int lp_phases_load(const char *run_dir, struct lp_phase_status **out, size_t *n, double *traced_s,
	double *untraced_s, struct lp_err *err)
{
	static const char *const files[] = { "phases.json", "summary.json" };
	struct lp_buf path = LP_BUF_INIT;
	json_t *root = NULL, *arr, *ov;
	size_t i;
	*out = NULL;
	*n = 0;
	*traced_s = *untraced_s = 0;
	for (i = 0; i < 2 && !root; i++) {
		lp_fs_join(&path, run_dir, files[i]);
		if (!lp_fs_is_file(path.data))
			continue;
		if (lp_yaml_load_file(path.data, &root, err) < 0) {
			lp_buf_release(&path);
			return -1;
		}
	}
	lp_buf_release(&path);
	if (!root)
		return 0;
	arr = json_object_get(root, "phases");
	if (json_is_array(arr) && json_array_size(arr)) {
		*out = calloc(json_array_size(arr), sizeof(**out));
		if (!*out) {
			json_decref(root);
			return lp_oom(err);
		}
		for (i = 0; i < json_array_size(arr); i++) {
			const json_t *p = json_array_get(arr, i);
			copy_field((*out)[i].name, sizeof((*out)[i].name), p, "name");
			copy_field((*out)[i].status, sizeof((*out)[i].status), p, "status");
			copy_field((*out)[i].reason, sizeof((*out)[i].reason), p, "reason");
		}
		*n = json_array_size(arr);
	}
	ov = json_object_get(root, "overhead");
	if (json_is_number(json_object_get(ov, "traced_s")))
		*traced_s = json_number_value(json_object_get(ov, "traced_s"));
	if (json_is_number(json_object_get(ov, "untraced_s")))
		*untraced_s = json_number_value(json_object_get(ov, "untraced_s"));
	json_decref(root);
	return 0;
}
