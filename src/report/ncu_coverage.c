/* ncu_coverage.c: the Nsight Compute coverage section of the reports (see ncu_coverage.h). */
#include "report/ncu_coverage.h"

#include <stdio.h>
#include <string.h>

#include "core/fs.h"
#include "report/md.h"
#include "report/svg.h"

int lp_report_ncu_sampling_load(const char *run_dir, json_t **out, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	json_error_t je;
	*out = NULL;
	lp_buf_addf(&path, "%s/ncu/sampling.json", run_dir);
	if (!lp_fs_is_file(path.data)) {
		lp_buf_release(&path);
		return 0;
	}
	*out = json_load_file(path.data, 0, &je);
	if (!*out || !json_is_object(*out)) {
		lp_err_set(err, LP_EPARSE, "%s:%d: %s", path.data, je.line, *out ? "not an object" : je.text);
		json_decref(*out);
		*out = NULL;
		lp_buf_release(&path);
		return -1;
	}
	lp_buf_release(&path);
	return 0;
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

const char *lp_report_ncu_group_mark(const json_t *g)
{
	const char *st = str(g, "status");
	if (!strcmp(st, "cached"))
		return "reused";
	if (json_is_true(json_object_get(g, "has_metrics")))
		return "sampled";
	return "none";
}

/* The metrics cell: the mark, saying when the results came from warm-up stand-ins. */
static const char *mark_text(const json_t *g, const char *mark)
{
	json_int_t warm = json_integer_value(json_object_get(g, "profiled_warmup"));
	if (strcmp(mark, "sampled") || warm <= 0)
		return mark;
	return warm >= json_integer_value(json_object_get(g, "profiled")) ? "sampled (warm-up)" : "sampled (partly warm-up)";
}

/* Why a group has no metrics, in words. */
static const char *why_none(const json_t *g)
{
	const char *st = str(g, "status");
	if (!strcmp(st, "beyond_target"))
		return "beyond the coverage target";
	if (!strcmp(st, "budget"))
		return "left out to fit profiling.ncu.budget_s";
	if (!strcmp(st, "not_run"))
		return "its ncu process did not run (budget or failure)";
	if (!strcmp(st, "planned"))
		return "planned, but ncu returned no result for it";
	return st;
}

static void dims(char *out, size_t cap, const json_t *a)
{
	snprintf(out, cap, "%lld,%lld,%lld", (long long)json_integer_value(json_array_get(a, 0)),
		(long long)json_integer_value(json_array_get(a, 1)), (long long)json_integer_value(json_array_get(a, 2)));
}

static void summary_line(const json_t *s, struct lp_buf *out)
{
	const json_t *cov = json_object_get(s, "coverage");
	const json_t *partial = json_object_get(s, "partial");
	lp_buf_addf(out, "%.1f%% of the selection's kernel time has ncu metrics (target %.0f%%%s): %lld of %lld groups "
		"(kernel, grid, block, region), %lld reused from the cache. K = %lld launches a group (asked %lld), "
		"%lld ncu process%s, %lld launches predicted, ETA %.0f s, took %.0f s.\n",
		100.0 * num(cov, "share"), 100.0 * num(cov, "target"), json_is_true(json_object_get(cov, "met")) ? ", met" : ", NOT met",
		(long long)json_integer_value(json_object_get(cov, "groups_with_metrics")),
		(long long)json_integer_value(json_object_get(cov, "groups")),
		(long long)json_integer_value(json_object_get(cov, "groups_reused")),
		(long long)json_integer_value(json_object_get(s, "k_used")), (long long)json_integer_value(json_object_get(s, "k")),
		(long long)json_array_size(json_object_get(s, "processes")),
		json_array_size(json_object_get(s, "processes")) == 1 ? "" : "es",
		(long long)json_integer_value(json_object_get(s, "predicted_launches")), num(s, "eta_s"), num(s, "elapsed_s"));
	{
		const json_t *regions = json_object_get(cov, "regions"), *r;
		size_t i;
		json_array_foreach(regions, i, r)
			lp_buf_addf(out, "%s%s %.1f%% of %.3f ms%s", i ? ", " : "Per region: ", str(r, "region"),
				100.0 * num(r, "share"), num(r, "kernel_ms"), json_is_true(json_object_get(r, "met")) ? "" : " (NOT met)");
		if (json_array_size(regions))
			lp_buf_adds(out, ".\n");
	}
	if (json_integer_value(json_object_get(cov, "results_warmup")) > 0)
		lp_buf_addf(out, "\n%lld of the %lld results (metrics of %lld groups) are warm-up launches standing in for "
			"their group: the same kernel, grid, block, shared memory and region path in the warm-up iteration, "
			"which runs the measured iteration's kernels and comes earlier, where ncu costs less "
			"(profiling.ncu.warmup_picks; docs/ncu-sampling.md).\n",
			(long long)json_integer_value(json_object_get(cov, "results_warmup")),
			(long long)json_integer_value(json_object_get(cov, "results")),
			(long long)json_integer_value(json_object_get(cov, "groups_from_warmup")));
	if (json_is_string(partial))
		lp_buf_addf(out, "\nPartial: %s.\n", json_string_value(partial));
}

int lp_report_ncu_coverage_md(const json_t *s, int detail, struct lp_buf *out)
{
	static const char *const cols[] = { "kernel", "grid", "block", "region", "launches", "profiled",
					    "share", "metrics" };
	const json_t *groups = json_object_get(s, "groups"), *g;
	size_t i, listed = 0, missing = 0;
	if (!json_is_object(s) || !json_object_get(s, "coverage"))
		return 0;
	lp_buf_adds(out, "\n## Nsight Compute coverage\n\n");
	summary_line(s, out);
	lp_buf_adds(out, "\nEach group's metrics stand for all its launches (docs/ncu-sampling.md); "
		"`sampled`: profiled in this run, `sampled (warm-up)`: from warm-up launches of the same shape, "
		"`reused`: from the cache.\n\n");
	lp_md_header(out, 8, cols, "lllllrrl");
	json_array_foreach(groups, i, g) {
		char grid[48], block[48], launches[32], prof[32], share[32];
		const char *mark = lp_report_ncu_group_mark(g);
		const char *cells[8];
		int none = !strcmp(mark, "none");
		if (none)
			missing++;
		if (!detail && !none)
			continue;
		if (listed >= LP_COVERAGE_LISTED && !detail)
			continue;
		listed++;
		dims(grid, sizeof(grid), json_object_get(g, "grid"));
		dims(block, sizeof(block), json_object_get(g, "block"));
		snprintf(launches, sizeof(launches), "%lld", (long long)json_integer_value(json_object_get(g, "launches")));
		snprintf(prof, sizeof(prof), "%lld", (long long)json_integer_value(json_object_get(g, "profiled")));
		snprintf(share, sizeof(share), "%.1f%%", 100.0 * num(g, "share"));
		cells[0] = str(g, "kernel_name");
		cells[1] = grid;
		cells[2] = block;
		cells[3] = str(g, "region");
		cells[4] = launches;
		cells[5] = prof;
		cells[6] = share;
		cells[7] = none ? why_none(g) : mark_text(g, mark);
		lp_md_row(out, 8, cells, LP_MD_NAME_MAX);
	}
	if (!detail && missing > listed)
		lp_buf_addf(out, "\n%zu more groups without metrics (kernels.md lists every group).\n", missing - listed);
	if (!detail && !missing)
		lp_buf_adds(out, "| (every group has metrics) | | | | | | | |\n");
	return 0;
}

json_t *lp_report_ncu_coverage_json(const json_t *s)
{
	const json_t *cov = json_object_get(s, "coverage");
	if (!json_is_object(s) || !cov)
		return json_null();
	return json_pack("{s:f, s:f, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:O}",
		"target", num(cov, "target"), "share", num(cov, "share"), "met", json_is_true(json_object_get(cov, "met")),
		"groups", json_integer_value(json_object_get(cov, "groups")),
		"groups_with_metrics", json_integer_value(json_object_get(cov, "groups_with_metrics")),
		"groups_reused", json_integer_value(json_object_get(cov, "groups_reused")),
		"k", json_integer_value(json_object_get(s, "k_used")),
		"processes", (json_int_t)json_array_size(json_object_get(s, "processes")),
		"predicted_launches", json_integer_value(json_object_get(s, "predicted_launches")),
		"eta_s", num(s, "eta_s"), "elapsed_s", num(s, "elapsed_s"),
		"partial", json_object_get(s, "partial") ? json_object_get(s, "partial") : json_null());
}

int lp_report_ncu_coverage_html(const json_t *s, struct lp_buf *out)
{
	const json_t *groups = json_object_get(s, "groups"), *g;
	struct lp_buf line = LP_BUF_INIT;
	size_t i;
	if (!json_is_object(s) || !json_object_get(s, "coverage"))
		return 0;
	summary_line(s, &line);
	lp_buf_adds(out, "<section id=\"ncu-coverage\"><h2>Nsight Compute coverage</h2>\n<p>");
	lp_xml_text(out, line.data);
	lp_buf_adds(out, "</p>\n<table><thead><tr><th>kernel</th><th>grid</th><th>block</th><th>region</th>"
		"<th>launches</th><th>profiled</th><th>share</th><th>metrics</th></tr></thead><tbody>\n");
	json_array_foreach(groups, i, g) {
		char grid[48], block[48];
		const char *mark = lp_report_ncu_group_mark(g);
		dims(grid, sizeof(grid), json_object_get(g, "grid"));
		dims(block, sizeof(block), json_object_get(g, "block"));
		lp_buf_addf(out, "<tr class=\"ncu-%s\"><td>", mark);
		lp_xml_text_short(out, str(g, "kernel_name"), 80);
		lp_buf_addf(out, "</td><td>%s</td><td>%s</td><td>", grid, block);
		lp_xml_text(out, str(g, "region"));
		lp_buf_addf(out, "</td><td>%lld</td><td>%lld</td><td>%.1f%%</td><td>",
			(long long)json_integer_value(json_object_get(g, "launches")),
			(long long)json_integer_value(json_object_get(g, "profiled")), 100.0 * num(g, "share"));
		lp_xml_text(out, strcmp(mark, "none") ? mark_text(g, mark) : why_none(g));
		lp_buf_adds(out, "</td></tr>\n");
	}
	lp_buf_release(&line);
	return lp_buf_adds(out, "</tbody></table></section>\n");
}
