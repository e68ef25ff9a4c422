/* html.c: report.html (see html.h), rendered from the analysis like the Markdown reports, with
 * the figures of figures.c inlined. Every string from the artifacts goes through lp_xml_text;
 * every number through a fixed printf format. This file holds the page (style, script, header,
 * navigation), the environment, aggregates, self-check and run sections; the measurement
 * sections are in html_sections.c, the cells and headings in html_kit.c. */
#include "report/html.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advice.h"
#include "core/fs.h"
#include "report/baseline_report.h"
#include "report/figures.h"
#include "report/html_kit.h"
#include "report/ncu_coverage.h"
#include "report/tracing_mode.h"
#include "report/ranks_report.h"
#include "report/sections.h"
#include "report/svg.h"

static const char css[] =
	":root{--ink:#222;--muted:#666;--line:#ddd}\n"
	"body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"DejaVu Sans\",Arial,sans-serif;color:var(--ink);"
	"margin:0;background:#fff}\n"
	"header{padding:14px 24px;background:#f6f8fa;border-bottom:1px solid var(--line)}\n"
	"header h1{font-size:20px;margin:0 0 4px}\n"
	"header p{margin:2px 0;color:var(--muted)}\n"
	"nav{padding:8px 24px;border-bottom:1px solid var(--line);font-size:13px}\n"
	"nav a{margin-right:12px;color:#1f5fa8;text-decoration:none}\n"
	"main{padding:0 24px 48px;max-width:1280px}\n"
	"h2{font-size:17px;border-bottom:1px solid var(--line);padding-bottom:4px;margin:28px 0 10px}\n"
	"h3{font-size:15px;margin:18px 0 6px}\n"
	"table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}\n"
	"th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}\n"
	"th{background:#f6f8fa;white-space:nowrap}\n"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"th.sort{cursor:pointer}\n"
	"th.sort:after{content:\" \\2195\";color:#aaa}\n"
	"tbody tr:nth-child(even) td{background:#fbfbfb}\n"
	".k{font-family:ui-monospace,Menlo,Consolas,\"DejaVu Sans Mono\",monospace;font-size:12px}\n"
	".na,.note{color:var(--muted)}\n"
	".note{font-size:12.5px;max-width:1100px}\n"
	"figure{margin:10px 0 16px}\n"
	"figcaption{color:var(--muted);font-size:12px}\n"
	".scroll{overflow-x:auto}\n"
	"ul.advice li{margin:3px 0}\n"
	".rule{color:var(--muted);font-size:12px}\n"
	".bad{color:#b3261e;font-weight:600}\n"
	"@media print{nav{display:none}header{background:none}body{font-size:11px}main{max-width:none}"
	"figure,table,tr{break-inside:avoid}h2{break-after:avoid}a{color:inherit;text-decoration:none}"
	".scroll{overflow:visible}}\n";

/* Click a header of a sortable table to sort by it (numbers by their data-v, else text). */
static const char js[] =
	"document.querySelectorAll('table.sortable').forEach(function(t){\n"
	"  t.querySelectorAll('thead th').forEach(function(th,i){\n"
	"    th.classList.add('sort');th.title='click to sort';\n"
	"    th.addEventListener('click',function(){\n"
	"      var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),d=th.dataset.dir==='a'?'d':'a';\n"
	"      th.dataset.dir=d;\n"
	"      rows.sort(function(x,y){\n"
	"        var p=x.cells[i],q=y.cells[i],u=parseFloat(p&&p.dataset.v),v=parseFloat(q&&q.dataset.v),c;\n"
	"        if(!isNaN(u)||!isNaN(v)){c=(isNaN(u)?-Infinity:u)-(isNaN(v)?-Infinity:v);if(isNaN(c))c=0;}\n"
	"        else c=(p?p.textContent:'').localeCompare(q?q.textContent:'');\n"
	"        return d==='a'?c:-c;});\n"
	"      rows.forEach(function(r){b.appendChild(r);});});});});\n";

static void env_scalar(struct lp_buf *b, const char *key, const char *sub, const json_t *v)
{
	char tmp[64];
	const char *s = NULL;
	if (json_is_string(v))
		s = json_string_value(v);
	else if (json_is_integer(v))
		snprintf(tmp, sizeof(tmp), "%lld", (long long)json_integer_value(v)), s = tmp;
	else if (json_is_real(v))
		snprintf(tmp, sizeof(tmp), "%g", json_real_value(v)), s = tmp;
	else if (json_is_boolean(v))
		s = json_is_true(v) ? "true" : "false";
	if (!s)
		return;
	lp_buf_adds(b, "<tr><td>");
	lp_html_text(b, key);
	if (sub) {
		lp_buf_addc(b, '.');
		lp_html_text(b, sub);
	}
	lp_buf_adds(b, "</td>");
	lp_html_td(b, s);
	lp_buf_adds(b, "</tr>\n");
}

static int skip_key(const char *k)
{
	return !strcmp(k, "env") || !strcmp(k, "environment") || !strcmp(k, "variables") || !strcmp(k, "env_vars");
}

static void environment(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "what", "value" };
	const char *key;
	json_t *v;
	char tmp[128];
	lp_html_h2(b, "environment", "Environment");
	lp_html_thead(b, 0, 2, cols, NULL);
	lp_buf_adds(b, "<tr><td>device used</td>");
	if (a->have_device) {
		lp_buf_adds(b, "<td>");
		lp_html_text(b, a->device.name);
		if (a->device.sm_count) {
			snprintf(tmp, sizeof(tmp), " (%d SMs, cc %d.%d)", a->device.sm_count, a->device.cc_major, a->device.cc_minor);
			lp_html_text(b, tmp);
		}
		lp_buf_adds(b, "</td></tr>\n");
	} else {
		lp_buf_adds(b, "<td>none (no GPU in the profile or env.json)</td></tr>\n");
	}
	lp_buf_adds(b, "<tr><td>trace source</td>");
	lp_html_td(b, a->source_kind[0] ? a->source_kind : "unknown");
	lp_buf_adds(b, "</tr>\n");
	if (json_is_object(a->env)) {
		json_object_foreach(a->env, key, v) {
			if (skip_key(key))
				continue;
			if (json_is_object(v)) {
				const char *k2;
				json_t *v2;
				json_object_foreach(v, k2, v2)
					env_scalar(b, key, k2, v2);
			} else if (json_is_array(v)) {
				size_t i;
				json_t *e;
				json_array_foreach(v, i, e) {
					snprintf(tmp, sizeof(tmp), "%zu", i);
					env_scalar(b, key, tmp, json_is_object(e) ? json_object_get(e, "name") : e);
				}
			} else {
				env_scalar(b, key, NULL, v);
			}
		}
	} else {
		lp_buf_adds(b, "<tr><td>env.json</td><td class=\"na\">not available</td></tr>\n");
	}
	lp_html_tend(b);
}

static void aggregates(const struct lp_analysis *a, struct lp_buf *b)
{
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	size_t i;
	char tmp[256];
	lp_html_h2(b, "aggregates", "Aggregates");
	lp_buf_adds(b, "<ul>\n<li>model: ");
	if (a->have_model) {
		double scale = a->params.total >= 1e9 ? 1e9 : 1e6;
		const char *unit = a->params.total >= 1e9 ? "B" : "M";
		lp_html_text(b, a->model.name[0] ? a->model.name : "unnamed");
		snprintf(tmp, sizeof(tmp), " (%s, %s): %.3f %s parameters, %.3f %s matmul parameters per token",
			a->model.family[0] ? a->model.family : "unknown family", a->model.dtype[0] ? a->model.dtype : "unknown dtype",
			(double)a->params.total / scale, unit, (double)a->params.matmul_active / scale, unit);
		lp_html_text(b, tmp);
	} else {
		lp_buf_adds(b, "<span class=\"na\">n/a (");
		lp_html_text(b, a->model_why);
		lp_buf_adds(b, ")</span>");
	}
	lp_buf_addf(b, "</li>\n<li>measured iterations: %zu</li>\n<li>batch / prompt length / decode steps: ",
		lp_measured_iterations(a));
	lp_fmt_token_counts(a, b);
	if (a->tokens_why[0]) {
		lp_buf_adds(b, " <span class=\"na\">(");
		lp_html_text(b, a->tokens_why);
		lp_buf_adds(b, ")</span>");
	}
	lp_buf_adds(b, "</li>\n");
	if (a->stages.have_gpu)
		lp_buf_addf(b, "<li>GPU kernel time (measured iterations): %.3f ms summed, %.3f ms busy, in %zu distinct kernels</li>\n",
			a->kernels.total_ms, a->kernels.busy_ms, a->kernels.n_rows);
	else
		lp_buf_adds(b, "<li>GPU kernel time: n/a (no GPU kernels were recorded: CPU run)</li>\n");
	lp_html_li_num(b, "time to first token (prefill latency)", &a->ttft_ms, 3, 1, " ms");
	lp_html_li_num(b, "decode throughput", &a->decode_tokens_per_s, 1, 1, " tokens/s");
	lp_html_li_num(b, "decode time per step", &a->decode_step_ms, 3, 1, " ms");
	if (dec && dec->n_step_lat)
		lp_buf_addf(b, "<li>decode step latency: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms over %zu steps</li>\n",
			dec->step_p50, dec->step_p90, dec->step_p99, dec->step_ms.max, dec->n_step_lat);
	if (a->n_checks) {
		double worst = 0;
		for (i = 0; i < a->n_checks; i++)
			if (fabs(a->checks[i].diff) > fabs(worst))
				worst = a->checks[i].diff;
		lp_buf_addf(b, "<li>self-check against the workload's own timings: %s (largest difference %+.1f%%, tolerance %.0f%%)</li>\n",
			a->check_failed ? "<span class=\"bad\">DIFFERS</span>" : "agrees", 100.0 * worst, 100.0 * LP_SELF_CHECK_TOL);
	}
	lp_html_li_num(b, "model MFU (over GPU busy time)", &a->perf[2].mfu, 2, 100, "%");
	lp_html_li_num(b, "model MBU (over GPU busy time)", &a->perf[2].mbu, 2, 100, "%");
	lp_buf_adds(b, "</ul>\n");
}

static void self_check(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "number", "llmprof", "workload's own", "difference" };
	size_t i;
	lp_html_h2(b, "selfcheck", "Self-check");
	if (!a->own.valid) {
		lp_buf_adds(b, "<p>The workload printed no timings of its own (a JSON line with <code>\"summary\": true</code>, "
			       "docs/metrics.md): nothing to compare with.</p>\n");
		return;
	}
	if (!a->n_checks) {
		lp_buf_adds(b, "<p>The workload printed timings, but none of them has a llmprof counterpart in this run.</p>\n");
		return;
	}
	lp_html_thead(b, 0, 4, cols, "-nnn");
	for (i = 0; i < a->n_checks; i++) {
		const struct lp_self_check *c = &a->checks[i];
		lp_buf_adds(b, "<tr>");
		lp_html_td(b, c->what);
		lp_html_tdn(b, c->ours, 3, NULL);
		lp_html_tdn(b, c->theirs, 3, NULL);
		lp_buf_addf(b, "<td class=\"n%s\">%+.2f%%</td></tr>\n", fabs(c->diff) > LP_SELF_CHECK_TOL ? " bad" : "",
			100.0 * c->diff);
	}
	lp_html_tend(b);
	lp_buf_adds(b, "<p class=\"note\">The workload's numbers are its own measurements of the same run "
		       "(trace/workload.stdout)");
	if (a->check_rank_label[0])
		lp_buf_addf(b, ", %s's: compared with %s's stages, not the means over the ranks", a->check_rank_label,
			a->check_rank_label);
	lp_buf_addf(b, ". %s (tolerance %.0f%%).",
		a->check_failed ? "At least one differs by more than the tolerance: read the stage numbers with care"
				: "All agree", 100.0 * LP_SELF_CHECK_TOL);
	lp_fmt_step_check(a, b);
	lp_fmt_check_host(a, b);
	lp_buf_adds(b, "</p>\n");
}

static void run_section(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "phase", "status", "reason" };
	size_t i;
	lp_html_h2(b, "run", "Run: phases and tracer overhead");
	if (a->n_phases) {
		lp_html_thead(b, 0, 3, cols, NULL);
		for (i = 0; i < a->n_phases; i++) {
			lp_buf_adds(b, "<tr>");
			lp_html_td(b, a->phases[i].name);
			if (!strcmp(a->phases[i].status, "failed")) {
				lp_buf_adds(b, "<td class=\"bad\">");
				lp_html_text(b, a->phases[i].status);
				lp_buf_adds(b, "</td>");
			} else {
				lp_html_td(b, a->phases[i].status);
			}
			lp_html_td(b, a->phases[i].reason);
			lp_buf_adds(b, "</tr>\n");
		}
		lp_html_tend(b);
	} else {
		lp_buf_adds(b, "<p>No phase statuses were recorded.</p>\n");
	}
	lp_buf_adds(b, "<ul>\n");
	if (a->n_processes)
		lp_buf_addf(b, "<li>tracer overhead records: %.3f ms in total across %zu traced processes; dropped records: %llu</li>\n",
			(double)a->tracer_overhead_ns / 1e6, a->n_processes, (unsigned long long)a->dropped_records);
	if (a->traced_s > 0 && a->untraced_s > 0)
		lp_buf_addf(b, "<li>workload time with tracing %.3f s, without %.3f s: %+.1f%%</li>\n", a->traced_s, a->untraced_s,
			100.0 * (a->traced_s - a->untraced_s) / a->untraced_s);
	else
		lp_buf_adds(b, "<li>workload time with vs without tracing: not measured (run.measure_overhead=true)</li>\n");
	{
		struct lp_buf t = LP_BUF_INIT;
		lp_tracing_mode_text(a, &t);
		lp_buf_adds(b, "<li>tracing mode: ");
		lp_html_text(b, t.data ? t.data : "");
		lp_buf_adds(b, "</li>\n");
		lp_buf_release(&t);
	}
	lp_buf_adds(b, "</ul>\n");
}

static int have_regions(const char *run_dir)
{
	struct lp_buf path = LP_BUF_INIT;
	int yes;
	if (!run_dir)
		return 0;
	lp_fs_join(&path, run_dir, "ncu/regions/report.json");
	yes = lp_fs_is_file(path.data);
	lp_buf_release(&path);
	return yes;
}

int lp_report_html(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out)
{
	struct lp_buf *b = out;
	lp_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
		       "script-src 'unsafe-inline'; img-src data:\">\n<title>llmprof report");
	if (a->run_id[0]) {
		lp_buf_adds(b, ": ");
		lp_html_text(b, a->run_id);
	}
	lp_buf_adds(b, "</title>\n<style>\n");
	lp_buf_adds(b, css);
	lp_buf_adds(b, "</style>\n</head>\n<body>\n<header>\n<h1>llmprof report");
	if (a->run_id[0]) {
		lp_buf_adds(b, ": ");
		lp_html_text(b, a->run_id);
	}
	lp_buf_adds(b, "</h1>\n<p>");
	if (a->mode[0]) {
		lp_buf_adds(b, "Mode: ");
		lp_html_text(b, a->mode);
		lp_buf_adds(b, ". ");
	}
	lp_buf_adds(b, "Model: ");
	lp_html_text(b, a->have_model ? (a->model.name[0] ? a->model.name : "unnamed") : "n/a");
	lp_buf_adds(b, ". Device: ");
	lp_html_text(b, a->have_device ? a->device.name : "none (CPU run)");
	lp_buf_adds(b, ".</p>\n<p>The same numbers as stakeholder_summary.md and report.md, with figures; every figure is "
		       "also in figures/ as SVG. Hover marks and shortened names for details; click a column header to "
		       "sort.</p>\n</header>\n<nav>");
	lp_buf_adds(b, "<a href=\"#environment\">Environment</a><a href=\"#aggregates\">Aggregates</a>"
		       "<a href=\"#stages\">Per-stage timings</a><a href=\"#mfu\">MFU</a><a href=\"#waterfall\">Where the time goes</a>"
		       "<a href=\"#takeaways\">Takeaways</a>"
		       "<a href=\"#operators\">Operators</a><a href=\"#kernels\">Kernels</a>");
	if (have_regions(run_dir))
		lp_buf_adds(b, "<a href=\"#regions\">NVTX regions</a>");
	lp_buf_adds(b, "<a href=\"#recommendations\">Recommendations</a><a href=\"#selfcheck\">Self-check</a>"
		       "<a href=\"#run\">Run</a></nav>\n<main>\n");
	environment(a, b);
	aggregates(a, b);
	lp_html_stages(a, b);
	lp_ranks_html(&a->ranks, b);
	lp_html_mfu(a, b);
	lp_html_waterfall(a, b);
	lp_html_h2(b, "takeaways", "Stage takeaways");
	lp_html_advice(a, LP_ADVICE_TAKEAWAY, b);
	lp_html_operators(a, b);
	lp_html_kernels(a, b);
	lp_report_ncu_coverage_html(a->ncu_sampling, b);
	lp_html_regions(run_dir, b);
	lp_html_h2(b, "recommendations", "Recommendations");
	lp_html_advice(a, LP_ADVICE_RECOMMENDATION, b);
	self_check(a, b);
	lp_baseline_html(a, b);
	run_section(a, b);
	lp_buf_adds(b, "</main>\n<script>\n");
	lp_buf_adds(b, js);
	lp_buf_adds(b, "</script>\n</body>\n</html>\n");
	return b->oom ? -1 : 0;
}

int lp_report_html_url(const char *run_dir, struct lp_buf *out)
{
	char *abs = realpath(run_dir, NULL);
	const char *p;
	if (!abs)
		return -1;
	lp_buf_adds(out, "file://");
	for (p = abs; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("-._~/", c))
			lp_buf_addc(out, (char)c);
		else
			lp_buf_addf(out, "%%%02X", c);
	}
	lp_buf_adds(out, p > abs && p[-1] == '/' ? "report.html" : "/report.html");
	free(abs);
	return out->oom ? -1 : 0;
}
