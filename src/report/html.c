/* html.c: report.html (see html.h), rendered from the analysis like the Markdown reports, with
 * the figures of figures.c inlined. Every string from the artifacts goes through lp_xml_text;
 * every number through a fixed printf format. */
#include "report/ncu_coverage.h"
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

static void text(struct lp_buf *b, const char *s)
{
	lp_xml_text(b, s);
}

static void h2(struct lp_buf *b, const char *id, const char *title)
{
	lp_buf_addf(b, "<h2 id=\"%s\">", id);
	text(b, title);
	lp_buf_adds(b, "</h2>\n");
}

static void th(struct lp_buf *b, const char *name, int numeric)
{
	lp_buf_adds(b, numeric ? "<th class=\"n\">" : "<th>");
	text(b, name);
	lp_buf_adds(b, "</th>");
}

/* A table head: names, with 'n' in `num` for numeric columns. */
static void thead(struct lp_buf *b, int sortable, size_t n, const char *const *cols, const char *num)
{
	size_t i;
	lp_buf_adds(b, sortable ? "<div class=\"scroll\"><table class=\"sortable\"><thead><tr>" :
				  "<div class=\"scroll\"><table><thead><tr>");
	for (i = 0; i < n; i++)
		th(b, cols[i], num && num[i] == 'n');
	lp_buf_adds(b, "</tr></thead><tbody>\n");
}

static void tend(struct lp_buf *b)
{
	lp_buf_adds(b, "</tbody></table></div>\n");
}

static void td(struct lp_buf *b, const char *s)
{
	lp_buf_adds(b, "<td>");
	text(b, s);
	lp_buf_adds(b, "</td>");
}

/* A number cell: shown with `decimals` (and suffix), sorted by its value; n/a for NAN. */
static void tdn(struct lp_buf *b, double v, int decimals, const char *suffix)
{
	if (!isfinite(v)) {
		lp_buf_adds(b, "<td class=\"n na\">n/a</td>");
		return;
	}
	lp_buf_addf(b, "<td class=\"n\" data-v=\"%.9g\">%.*f%s</td>", v, decimals, v, suffix ? suffix : "");
}

static void tdu(struct lp_buf *b, unsigned long long v)
{
	lp_buf_addf(b, "<td class=\"n\" data-v=\"%llu\">%llu</td>", v, v);
}

/* A name cell: shortened, the full name on hover. */
static void tdname(struct lp_buf *b, const char *s, size_t max)
{
	lp_buf_adds(b, "<td class=\"k\" title=\"");
	text(b, s);
	lp_buf_adds(b, "\">");
	lp_xml_text_short(b, s, max);
	lp_buf_adds(b, "</td>");
}

/* An lp_num cell: value x scale, or n/a with the reason on hover. */
static void tdnum(struct lp_buf *b, const struct lp_num *n, int decimals, double scale, const char *suffix)
{
	if (!n->valid) {
		lp_buf_adds(b, "<td class=\"n na\" title=\"");
		text(b, n->why);
		lp_buf_adds(b, "\">n/a</td>");
		return;
	}
	tdn(b, n->value * scale, decimals, suffix);
}

static void num_text(struct lp_buf *b, const struct lp_num *n, int decimals, double scale, const char *suffix)
{
	struct lp_buf t = LP_BUF_INIT;
	lp_num_format(n, decimals, scale, suffix, &t);
	text(b, t.data);
	lp_buf_release(&t);
}

static void figure(const struct lp_analysis *a, enum lp_figure_id id, struct lp_buf *b)
{
	if (!lp_figure_applies(a, id))
		return;
	lp_buf_addf(b, "<figure id=\"fig-%.*s\">\n", (int)(strchr(lp_figures[id].file, '.') - lp_figures[id].file),
		lp_figures[id].file);
	lp_figure_render(a, id, b);
	lp_buf_adds(b, "<figcaption>");
	text(b, lp_figures[id].title);
	lp_buf_addf(b, " (also figures/%s)</figcaption>\n</figure>\n", lp_figures[id].file);
}

/* ---- sections ---- */

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
	text(b, key);
	if (sub) {
		lp_buf_addc(b, '.');
		text(b, sub);
	}
	lp_buf_adds(b, "</td>");
	td(b, s);
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
	h2(b, "environment", "Environment");
	thead(b, 0, 2, cols, NULL);
	lp_buf_adds(b, "<tr><td>device used</td>");
	if (a->have_device) {
		lp_buf_adds(b, "<td>");
		text(b, a->device.name);
		if (a->device.sm_count) {
			snprintf(tmp, sizeof(tmp), " (%d SMs, cc %d.%d)", a->device.sm_count, a->device.cc_major, a->device.cc_minor);
			text(b, tmp);
		}
		lp_buf_adds(b, "</td></tr>\n");
	} else {
		lp_buf_adds(b, "<td>none (no GPU in the profile or env.json)</td></tr>\n");
	}
	lp_buf_adds(b, "<tr><td>trace source</td>");
	td(b, a->source_kind[0] ? a->source_kind : "unknown");
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
	tend(b);
}

static void li_num(struct lp_buf *b, const char *label, const struct lp_num *n, int decimals, double scale,
	const char *suffix)
{
	lp_buf_adds(b, "<li>");
	text(b, label);
	lp_buf_adds(b, ": ");
	num_text(b, n, decimals, scale, suffix);
	lp_buf_adds(b, "</li>\n");
}

static void aggregates(const struct lp_analysis *a, struct lp_buf *b)
{
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	size_t i;
	char tmp[256];
	h2(b, "aggregates", "Aggregates");
	lp_buf_adds(b, "<ul>\n<li>model: ");
	if (a->have_model) {
		double scale = a->params.total >= 1e9 ? 1e9 : 1e6;
		const char *unit = a->params.total >= 1e9 ? "B" : "M";
		text(b, a->model.name[0] ? a->model.name : "unnamed");
		snprintf(tmp, sizeof(tmp), " (%s, %s): %.3f %s parameters, %.3f %s matmul parameters per token",
			a->model.family[0] ? a->model.family : "unknown family", a->model.dtype[0] ? a->model.dtype : "unknown dtype",
			(double)a->params.total / scale, unit, (double)a->params.matmul_active / scale, unit);
		text(b, tmp);
	} else {
		lp_buf_adds(b, "<span class=\"na\">n/a (");
		text(b, a->model_why);
		lp_buf_adds(b, ")</span>");
	}
	lp_buf_addf(b, "</li>\n<li>measured iterations: %zu</li>\n<li>batch / prompt length / decode steps: ",
		lp_measured_iterations(a));
	lp_fmt_token_counts(a, b);
	if (a->tokens_why[0]) {
		lp_buf_adds(b, " <span class=\"na\">(");
		text(b, a->tokens_why);
		lp_buf_adds(b, ")</span>");
	}
	lp_buf_adds(b, "</li>\n");
	if (a->stages.have_gpu)
		lp_buf_addf(b, "<li>GPU kernel time (measured iterations): %.3f ms summed, %.3f ms busy, in %zu distinct kernels</li>\n",
			a->kernels.total_ms, a->kernels.busy_ms, a->kernels.n_rows);
	else
		lp_buf_adds(b, "<li>GPU kernel time: n/a (no GPU kernels were recorded: CPU run)</li>\n");
	li_num(b, "time to first token (prefill latency)", &a->ttft_ms, 3, 1, " ms");
	li_num(b, "decode throughput", &a->decode_tokens_per_s, 1, 1, " tokens/s");
	li_num(b, "decode time per step", &a->decode_step_ms, 3, 1, " ms");
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
	li_num(b, "model MFU (over GPU busy time)", &a->perf[2].mfu, 2, 100, "%");
	li_num(b, "model MBU (over GPU busy time)", &a->perf[2].mbu, 2, 100, "%");
	lp_buf_adds(b, "</ul>\n");
}

static void stages(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "stage", "iters", "latency ms", "std ms", "host ms", "GPU busy ms",
					    "GPU span ms", "kernels/iter", "overlap", "bound", "GPU idle" };
	const struct lp_stage_set *s = &a->stages;
	size_t i;
	int gpu = s->have_gpu;
	h2(b, "stages", "Per-stage timings");
	if (!s->n_stages) {
		lp_buf_addf(b, "<p>No stage ranges were seen (no NVTX range matched the stage mapping): the numbers are for the "
				"whole run, %.3f ms from the first to the last event", (double)s->run_span_ns / 1e6);
		if (gpu)
			lp_buf_addf(b, ", GPU busy %.3f ms", (double)s->run_busy_ns / 1e6);
		lp_buf_adds(b, ". Push <code>prefill</code> and <code>decode_all</code> ranges to get stages (docs/nvtx.md).</p>\n");
	} else {
		thead(b, 1, 11, cols, "-nnnnnnnn--");
		for (i = 0; i < s->n_stages; i++) {
			const struct lp_stage *st = &s->stages[i];
			lp_buf_adds(b, "<tr>");
			td(b, st->name);
			tdu(b, st->n_iters);
			tdn(b, st->lat_ms.mean, 3, NULL);
			tdn(b, st->n_iters > 1 ? st->lat_ms.std : NAN, 3, NULL);
			tdn(b, st->host_ms.mean, 3, NULL);
			tdn(b, gpu ? st->gpu_ms.mean : NAN, 3, NULL);
			tdn(b, gpu ? st->gpu_span_ms.mean : NAN, 3, NULL);
			tdn(b, gpu ? st->kernels.mean : NAN, 1, NULL);
			tdn(b, gpu && st->overlap > 0 ? st->overlap : NAN, 2, "x");
			td(b, gpu ? st->bound : "n/a (CPU)");
			tdn(b, gpu && !isnan(st->idle_frac) ? 100.0 * st->idle_frac : NAN, 0, "%");
			lp_buf_adds(b, "</tr>\n");
		}
		tend(b);
		for (i = 0; i < s->n_stages; i++) {
			const struct lp_stage *st = &s->stages[i];
			if (!st->n_step_lat)
				continue;
			lp_buf_adds(b, "<p>");
			text(b, st->name);
			lp_buf_addf(b, " steps: %zu measured, latency per step mean %.3f ms, p50 %.3f, p90 %.3f, p99 %.3f, max %.3f ms "
					"(min %.3f).</p>\n", st->n_step_lat, st->step_ms.mean, st->step_p50, st->step_p90, st->step_p99,
				st->step_ms.max, st->step_ms.min);
		}
	}
	lp_buf_adds(b, "<p class=\"note\">Means per measured iteration. Latency is what a user timing the stage sees: from the push of the stage range (or "
		       "the end of GPU work still queued before it) to the later of its pop and the end of the last GPU work "
		       "launched inside. Host time is push to pop; GPU busy the union of the kernels launched inside; GPU span "
		       "the first kernel's start to the last one's end; overlap = summed kernel time / busy time. std is the "
		       "sample standard deviation across measured iterations; warm-up iterations are excluded. Details: "
		       "report.md and docs/metrics.md.</p>\n");
	figure(a, LP_FIG_TIMELINE, b);
	figure(a, LP_FIG_TIMELINE_ZOOM, b);
	figure(a, LP_FIG_STEP_LATENCY, b);
}

static void mfu(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "stage", "model GFLOP / iter", "min MB / iter", "GPU s / iter", "TFLOP/s",
					    "MFU", "GB/s", "MBU", "MFU over latency", "MBU over latency",
					    "ncu GFLOP / iter", "ncu coverage" };
	int k;
	h2(b, "mfu", "MFU and MBU");
	thead(b, 0, 12, cols, "-nnnnnnnnnnn");
	for (k = 0; k < 3; k++) {
		const struct lp_perf *p = &a->perf[k];
		lp_buf_adds(b, "<tr>");
		td(b, p->label ? p->label : "");
		tdnum(b, &p->flops, 3, 1e-9, NULL);
		tdnum(b, &p->bytes, 3, 1e-6, NULL);
		tdnum(b, &p->gpu_s, 6, 1, NULL);
		tdnum(b, &p->tflops_per_s, 3, 1, NULL);
		tdnum(b, &p->mfu, 2, 100, "%");
		tdnum(b, &p->gbs, 1, 1, NULL);
		tdnum(b, &p->mbu, 2, 100, "%");
		tdnum(b, &p->mfu_lat, 2, 100, "%");
		tdnum(b, &p->mbu_lat, 2, 100, "%");
		tdnum(b, &p->ncu_flops, 3, 1e-9, NULL);
		tdnum(b, &p->ncu_coverage, 1, 100, "%");
		lp_buf_adds(b, "</tr>\n");
	}
	tend(b);
	lp_buf_adds(b, "<p class=\"note\">Peak FLOP/s: ");
	if (a->peak.flops_valid)
		lp_buf_addf(b, "%.1f TFLOP/s (", a->peak.flops_per_s / 1e12);
	else
		lp_buf_adds(b, "n/a (");
	text(b, a->peak.flops_source);
	lp_buf_adds(b, "). Peak bandwidth: ");
	if (a->peak.bw_valid)
		lp_buf_addf(b, "%.0f GB/s (", a->peak.bytes_per_s / 1e9);
	else
		lp_buf_adds(b, "n/a (");
	text(b, a->peak.bw_source);
	lp_buf_adds(b, "). MFU = model FLOPs / (GPU busy time x dense peak); MBU = minimum bytes / (GPU busy time x peak "
		       "bandwidth); over latency: the same over the stage latency. Hover an n/a for its reason.</p>\n");
	figure(a, LP_FIG_MFU, b);
}

/* The gap waterfall (analyze/waterfall.h): a table per stage and the figure of the decode step. */
static void waterfall(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "item", "ms", "share of latency", "floor subtracted (ms)", "floor from",
					    "what usually fixes it" };
	int k;
	size_t i;
	h2(b, "waterfall", "Where the time goes");
	for (k = 1; k >= 0; k--) {
		const struct lp_waterfall *w = &a->waterfall[k];
		if (!w->valid) {
			lp_buf_addf(b, "<p class=\"note\">%s: n/a (", k ? "Decode step" : "Prefill");
			text(b, w->why);
			lp_buf_adds(b, ").</p>\n");
			continue;
		}
		lp_buf_addf(b, "<p><b>%s</b> (per %s): latency %.4f ms, GPU busy %.4f ms. Floor: ", k ? "Decode step" : "Prefill",
			w->unit, w->latency_ms, w->busy_ms);
		text(b, w->floor_source);
		if (w->floor_measured_ms > 0)
			lp_buf_addf(b, "; at the measured copy bandwidth (%.0f GB/s) %.4f ms", a->measured_bw_gbs, w->floor_measured_ms);
		lp_buf_adds(b, ".</p>\n");
		thead(b, 0, 6, cols, "-nnn--");
		for (i = 0; i < w->n_items; i++) {
			const struct lp_wf_item *it = &w->items[i];
			lp_buf_adds(b, "<tr>");
			tdname(b, it->label, 70);
			tdn(b, it->ms, 4, NULL);
			tdn(b, 100.0 * it->ms / w->latency_ms, 1, "%");
			if (it->kind == LP_WF_KERNEL) {
				tdn(b, it->floor_ms, 4, NULL);
				td(b, it->floor_source ? it->floor_source : "");
			} else {
				td(b, "");
				td(b, "");
			}
			td(b, it->fix ? it->fix : "");
			lp_buf_adds(b, "</tr>\n");
		}
		tend(b);
		if (w->n_gaps) {
			lp_buf_adds(b, "<p class=\"note\">Largest idle gaps: ");
			for (i = 0; i < w->n_gaps; i++) {
				lp_buf_adds(b, i ? "; " : "");
				text(b, w->gaps[i].label);
				lp_buf_addf(b, " %.4f ms per %s (%.1f times)", w->gaps[i].ms, w->unit, w->gaps[i].count);
			}
			lp_buf_adds(b, ".</p>\n");
		}
	}
	figure(a, LP_FIG_WATERFALL, b);
}

static void advice(const struct lp_analysis *a, enum lp_advice_kind kind, struct lp_buf *b)
{
	size_t i, n = 0;
	lp_buf_adds(b, "<ul class=\"advice\">\n");
	for (i = 0; i < a->n_advice; i++) {
		if (a->advice[i].kind != kind)
			continue;
		lp_buf_adds(b, "<li>");
		text(b, a->advice[i].text);
		lp_buf_adds(b, " <span class=\"rule\">[");
		text(b, a->advice[i].rule);
		lp_buf_adds(b, "]</span></li>\n");
		n++;
	}
	if (!n)
		lp_buf_adds(b, kind == LP_ADVICE_TAKEAWAY
			? "<li>No rule triggered: not enough measurements (thresholds in docs/metrics.md).</li>\n"
			: "<li>No rule triggered a recommendation on these measurements (thresholds in docs/metrics.md).</li>\n");
	lp_buf_adds(b, "</ul>\n");
}

static void operators(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "stage", "operator", "GPU incl ms", "GPU excl ms", "host ms", "calls",
					    "kernels", "share of stage" };
	const struct lp_op_table *t = &a->ops;
	size_t i;
	int gpu = a->stages.have_gpu;
	h2(b, "operators", "Operators");
	if (!t->n_rows) {
		lp_buf_adds(b, "<p>No operator ranges were recorded (run the workload with NVTX op ranges, or PyTorch with "
			       "emit_nvtx).</p>\n");
		return;
	}
	figure(a, LP_FIG_OPERATORS, b);
	thead(b, 1, 8, cols, "--nnnnnn");
	for (i = 0; i < t->n_rows; i++) {
		const struct lp_op_row *r = &t->rows[i];
		lp_buf_adds(b, "<tr>");
		td(b, r->stage);
		if (r->zero_gpu_why) {
			lp_buf_adds(b, "<td class=\"k\" title=\"");
			text(b, r->zero_gpu_why);
			lp_buf_adds(b, "\">");
			lp_xml_text_short(b, r->name, LP_HTML_NAME_MAX);
			lp_buf_adds(b, " *</td>");
		} else {
			tdname(b, r->name, LP_HTML_NAME_MAX);
		}
		tdn(b, gpu ? r->gpu_incl_ms : NAN, 3, NULL);
		tdn(b, gpu ? r->gpu_excl_ms : NAN, 3, NULL);
		tdn(b, r->host_ms, 3, NULL);
		tdu(b, r->calls);
		tdu(b, r->kernels);
		tdn(b, r->share >= 0 ? 100.0 * r->share : NAN, 1, "%");
		lp_buf_adds(b, "</tr>\n");
	}
	tend(b);
	lp_buf_adds(b, gpu ? "<p class=\"note\">Summed over the measured iterations; share = inclusive GPU time / the stage's "
			     "kernel time (inclusive shares of nested ops overlap). * no kernel attributed: hover for why.</p>\n"
			   : "<p class=\"note\">Summed over the measured iterations; share = host time / the stage's host time.</p>\n");
}

static void kernels(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "kernel", "device", "busy ms", "share", "total ms", "calls", "mean ms",
					    "prefill ms", "decode ms", "family" };
	static const char *const ncols[] = { "kernel", "launches", "SM %", "DRAM %", "occupancy %", "DRAM MB", "GFLOP",
					     "FLOP/byte", "TFLOP/s", "roofline" };
	const struct lp_kernel_set *k = &a->kernels;
	size_t i, n = k->n_rows < LP_HTML_TOP_KERNELS ? k->n_rows : LP_HTML_TOP_KERNELS;
	h2(b, "kernels", "Kernels");
	if (!k->n_rows) {
		lp_buf_adds(b, "<p>No GPU kernels were recorded in this run.</p>\n");
		return;
	}
	figure(a, LP_FIG_KERNEL_FAMILIES, b);
	figure(a, LP_FIG_TOP_KERNELS, b);
	thead(b, 1, 10, cols, "-nnnnnnnn-");
	for (i = 0; i < n; i++) {
		const struct lp_kernel_row *r = &k->rows[i];
		lp_buf_adds(b, "<tr>");
		tdname(b, r->name, LP_HTML_NAME_MAX);
		tdu(b, (unsigned long long)(r->device < 0 ? 0 : r->device));
		tdn(b, r->busy_ms, 3, NULL);
		tdn(b, 100.0 * r->share, 1, "%");
		tdn(b, r->total_ms, 3, NULL);
		tdu(b, r->calls);
		tdn(b, r->mean_ms, 4, NULL);
		tdn(b, r->stage_ms[0], 3, NULL);
		tdn(b, r->stage_ms[1], 3, NULL);
		td(b, lp_kernel_family_name(r->family));
		lp_buf_adds(b, "</tr>\n");
	}
	tend(b);
	lp_buf_addf(b, "<p class=\"note\">Measured iterations, warm-up excluded. busy ms: the kernel's share of GPU busy time "
			"(%.3f ms in all; concurrent kernels split the time they share), so shares add up to 100%%; total ms: "
			"summed durations (%.3f ms).", k->busy_ms, k->total_ms);
	if (k->n_rows > n)
		lp_buf_addf(b, " The top %zu of %zu kernels; kernels.md lists every one.", n, k->n_rows);
	lp_buf_adds(b, "</p>\n");
	if (!k->n_joined_rows)
		return;
	lp_buf_adds(b, "<h3>Nsight Compute metrics (per launch)</h3>\n");
	figure(a, LP_FIG_ROOFLINE, b);
	thead(b, 1, 10, ncols, "-nnnnnnnn-");
	for (i = 0; i < k->n_rows; i++) {
		const struct lp_kernel_row *r = &k->rows[i];
		const struct lp_kernel_ncu *m = &r->ncu;
		if (!m->joined)
			continue;
		lp_buf_adds(b, "<tr>");
		tdname(b, r->name, LP_HTML_NAME_MAX);
		tdu(b, m->records);
		tdn(b, m->sm_pct, 1, NULL);
		tdn(b, m->dram_pct, 1, NULL);
		tdn(b, m->occupancy_pct, 1, NULL);
		tdn(b, m->dram_bytes / 1e6, 3, NULL);
		tdn(b, m->flops / 1e9, 4, NULL);
		tdn(b, m->intensity, 2, NULL);
		tdn(b, m->achieved_flops_per_s / 1e12, 3, NULL);
		td(b, lp_roofline_name(m->roofline));
		lp_buf_adds(b, "</tr>\n");
	}
	tend(b);
	if (k->ridge_flop_per_byte > 0)
		lp_buf_addf(b, "<p class=\"note\">Ridge point %.1f FLOP/byte: memory-bound below half of it, compute-bound above "
				"twice it, balanced between.</p>\n", k->ridge_flop_per_byte);
}

/* The NVTX-region tree of ncu/regions/report.json (the aggregate scope), indented by depth. */
static void regions(const char *run_dir, struct lp_buf *b)
{
	static const char *const cols[] = { "region", "inclusive ms", "exclusive ms", "kernels", "reconciled" };
	struct lp_buf path = LP_BUF_INIT, data = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	json_t *root = NULL, *scope, *regs, *r;
	size_t i;
	if (!run_dir)
		return;
	lp_fs_join(&path, run_dir, "ncu/regions/report.json");
	if (!lp_fs_is_file(path.data)) {
		lp_buf_release(&path);
		return;
	}
	if (lp_fs_read_file(path.data, &data, LP_HTML_REGIONS_MAX, &err) == 0) {
		json_error_t jerr;
		if (!(root = json_loadb(data.data, data.len, 0, &jerr)))
			snprintf(err.msg, sizeof(err.msg), "line %d: %s", jerr.line, jerr.text);
	}
	scope = json_array_get(json_object_get(root, "scopes"), 0);
	if (!root) {
		h2(b, "regions", "NVTX regions (Nsight Compute)");
		lp_buf_adds(b, "<p>ncu/regions/report.json could not be read (");
		text(b, err.msg);
		lp_buf_adds(b, "); ncu/regions/report.md has the region tables.</p>\n");
	}
	regs = json_object_get(scope, "regions");
	if (json_is_array(regs) && json_array_size(regs)) {
		h2(b, "regions", "NVTX regions (Nsight Compute)");
		thead(b, 0, 5, cols, "-nnn-");
		json_array_foreach(regs, i, r) {
			const json_t *d = json_object_get(r, "depth"), *name = json_object_get(r, "name");
			const json_t *inc = json_object_get(r, "total_ms_inclusive"), *exc = json_object_get(r, "total_ms_exclusive");
			long long depth = json_is_integer(d) ? json_integer_value(d) : 0;
			lp_buf_addf(b, "<tr><td class=\"k\" style=\"padding-left:%lldpx\">", 8 + 18 * (depth < 0 ? 0 : depth > 20 ? 20 : depth));
			lp_xml_text_short(b, json_is_string(name) ? json_string_value(name) : "?", LP_HTML_NAME_MAX);
			lp_buf_adds(b, "</td>");
			tdn(b, json_is_number(inc) ? json_number_value(inc) : NAN, 3, NULL);
			tdn(b, json_is_number(exc) ? json_number_value(exc) : NAN, 3, NULL);
			tdu(b, json_is_integer(json_object_get(r, "kernel_count")) ?
				       (unsigned long long)json_integer_value(json_object_get(r, "kernel_count")) : 0);
			td(b, json_is_true(json_object_get(r, "reconciled")) ? "yes" : "no");
			lp_buf_adds(b, "</tr>\n");
		}
		tend(b);
		lp_buf_adds(b, "<p class=\"note\">Kernel time under each region as Nsight Compute measured it (its own replays, "
			       "not the traced run): inclusive counts nested regions, exclusive does not. Per-region tables: "
			       "ncu/regions/report.md.</p>\n");
	} else if (root) {
		h2(b, "regions", "NVTX regions (Nsight Compute)");
		lp_buf_adds(b, "<p>No region had results (ncu/regions/report.md says which expressions matched nothing).</p>\n");
	}
	json_decref(root);
	lp_buf_release(&path);
	lp_buf_release(&data);
}

static void self_check(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "number", "llmprof", "workload's own", "difference" };
	size_t i;
	h2(b, "selfcheck", "Self-check");
	if (!a->own.valid) {
		lp_buf_adds(b, "<p>The workload printed no timings of its own (a JSON line with <code>\"summary\": true</code>, "
			       "docs/metrics.md): nothing to compare with.</p>\n");
		return;
	}
	if (!a->n_checks) {
		lp_buf_adds(b, "<p>The workload printed timings, but none of them has a llmprof counterpart in this run.</p>\n");
		return;
	}
	thead(b, 0, 4, cols, "-nnn");
	for (i = 0; i < a->n_checks; i++) {
		const struct lp_self_check *c = &a->checks[i];
		lp_buf_adds(b, "<tr>");
		td(b, c->what);
		tdn(b, c->ours, 3, NULL);
		tdn(b, c->theirs, 3, NULL);
		lp_buf_addf(b, "<td class=\"n%s\">%+.2f%%</td></tr>\n", fabs(c->diff) > LP_SELF_CHECK_TOL ? " bad" : "",
			100.0 * c->diff);
	}
	tend(b);
	lp_buf_addf(b, "<p class=\"note\">The workload's numbers are its own measurements of the same run "
			"(trace/workload.stdout). %s (tolerance %.0f%%).</p>\n",
		a->check_failed ? "At least one differs by more than the tolerance: read the stage numbers with care"
				: "All agree", 100.0 * LP_SELF_CHECK_TOL);
}

static void run_section(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "phase", "status", "reason" };
	size_t i;
	h2(b, "run", "Run: phases and tracer overhead");
	if (a->n_phases) {
		thead(b, 0, 3, cols, NULL);
		for (i = 0; i < a->n_phases; i++) {
			lp_buf_adds(b, "<tr>");
			td(b, a->phases[i].name);
			if (!strcmp(a->phases[i].status, "failed")) {
				lp_buf_adds(b, "<td class=\"bad\">");
				text(b, a->phases[i].status);
				lp_buf_adds(b, "</td>");
			} else {
				td(b, a->phases[i].status);
			}
			td(b, a->phases[i].reason);
			lp_buf_adds(b, "</tr>\n");
		}
		tend(b);
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
		text(b, a->run_id);
	}
	lp_buf_adds(b, "</title>\n<style>\n");
	lp_buf_adds(b, css);
	lp_buf_adds(b, "</style>\n</head>\n<body>\n<header>\n<h1>llmprof report");
	if (a->run_id[0]) {
		lp_buf_adds(b, ": ");
		text(b, a->run_id);
	}
	lp_buf_adds(b, "</h1>\n<p>");
	if (a->mode[0]) {
		lp_buf_adds(b, "Mode: ");
		text(b, a->mode);
		lp_buf_adds(b, ". ");
	}
	lp_buf_adds(b, "Model: ");
	text(b, a->have_model ? (a->model.name[0] ? a->model.name : "unnamed") : "n/a");
	lp_buf_adds(b, ". Device: ");
	text(b, a->have_device ? a->device.name : "none (CPU run)");
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
	stages(a, b);
	lp_ranks_html(&a->ranks, b);
	mfu(a, b);
	waterfall(a, b);
	h2(b, "takeaways", "Stage takeaways");
	advice(a, LP_ADVICE_TAKEAWAY, b);
	operators(a, b);
	kernels(a, b);
	lp_report_ncu_coverage_html(a->ncu_sampling, b);
	regions(run_dir, b);
	h2(b, "recommendations", "Recommendations");
	advice(a, LP_ADVICE_RECOMMENDATION, b);
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
