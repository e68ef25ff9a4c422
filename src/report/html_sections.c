/* html_sections.c: the measurement sections of report.html (see html.h): per-stage timings, MFU
 * and MBU, the gap waterfall, the advice lists, operators, kernels with their Nsight Compute
 * metrics, and the NVTX-region tree of ncu/regions/report.json. The page around them is html.c. */
#include "report/html_kit.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/advice.h"
#include "core/fs.h"
#include "report/figures.h"
#include "report/html.h"
#include "report/sections.h"
#include "report/svg.h"

void lp_html_stages(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "stage", "iters", "latency ms", "std ms", "host ms", "GPU busy ms",
					    "GPU span ms", "kernels/iter", "overlap", "bound", "GPU idle" };
	const struct lp_stage_set *s = &a->stages;
	size_t i;
	int gpu = s->have_gpu;
	lp_html_h2(b, "stages", "Per-stage timings");
	if (!s->n_stages) {
		lp_buf_addf(b, "<p>No stage ranges were seen (no NVTX range matched the stage mapping): the numbers are for the "
				"whole run, %.3f ms from the first to the last event", (double)s->run_span_ns / 1e6);
		if (gpu)
			lp_buf_addf(b, ", GPU busy %.3f ms", (double)s->run_busy_ns / 1e6);
		lp_buf_adds(b, ". Push <code>prefill</code> and <code>decode_all</code> ranges to get stages (docs/nvtx.md).</p>\n");
	} else {
		lp_html_thead(b, 1, 11, cols, "-nnnnnnnn--");
		for (i = 0; i < s->n_stages; i++) {
			const struct lp_stage *st = &s->stages[i];
			lp_buf_adds(b, "<tr>");
			lp_html_td(b, st->name);
			lp_html_tdu(b, st->n_iters);
			lp_html_tdn(b, st->lat_ms.mean, 3, NULL);
			lp_html_tdn(b, st->n_iters > 1 ? st->lat_ms.std : NAN, 3, NULL);
			lp_html_tdn(b, st->host_ms.mean, 3, NULL);
			lp_html_tdn(b, gpu ? st->gpu_ms.mean : NAN, 3, NULL);
			lp_html_tdn(b, gpu ? st->gpu_span_ms.mean : NAN, 3, NULL);
			lp_html_tdn(b, gpu ? st->kernels.mean : NAN, 1, NULL);
			lp_html_tdn(b, gpu && st->overlap > 0 ? st->overlap : NAN, 2, "x");
			lp_html_td(b, gpu ? st->bound : "n/a (CPU)");
			lp_html_tdn(b, gpu && !isnan(st->idle_frac) ? 100.0 * st->idle_frac : NAN, 0, "%");
			lp_buf_adds(b, "</tr>\n");
		}
		lp_html_tend(b);
		for (i = 0; i < s->n_stages; i++) {
			const struct lp_stage *st = &s->stages[i];
			if (!st->n_step_lat)
				continue;
			lp_buf_adds(b, "<p>");
			lp_html_text(b, st->name);
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
	for (i = 0; i < a->stages.n_stages; i++)
		if (a->stages.stages[i].recorded_iters) {
			lp_buf_adds(b, "<p class=\"note\">Sampled trace: the GPU busy and kernel columns of ");
			lp_xml_text(b, a->stages.stages[i].name);
			lp_buf_addf(b, " are over its %zu iterations whose kernels were recorded (of %zu); latency and host time "
				       "over all.</p>\n", a->stages.stages[i].recorded_iters, a->stages.stages[i].n_iters);
		}
	lp_html_figure(a, LP_FIG_TIMELINE, b);
	lp_html_figure(a, LP_FIG_TIMELINE_ZOOM, b);
	lp_html_figure(a, LP_FIG_STEP_LATENCY, b);
}

void lp_html_mfu(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "stage", "model GFLOP / iter", "min MB / iter", "GPU s / iter", "TFLOP/s",
					    "MFU", "GB/s", "MBU", "MFU over latency", "MBU over latency",
					    "ncu GFLOP / iter", "ncu coverage" };
	int k;
	lp_html_h2(b, "mfu", "MFU and MBU");
	lp_html_thead(b, 0, 12, cols, "-nnnnnnnnnnn");
	for (k = 0; k < 3; k++) {
		const struct lp_perf *p = &a->perf[k];
		lp_buf_adds(b, "<tr>");
		lp_html_td(b, p->label ? p->label : "");
		lp_html_tdnum(b, &p->flops, 3, 1e-9, NULL);
		lp_html_tdnum(b, &p->bytes, 3, 1e-6, NULL);
		lp_html_tdnum(b, &p->gpu_s, 6, 1, NULL);
		lp_html_tdnum(b, &p->tflops_per_s, 3, 1, NULL);
		lp_html_tdnum(b, &p->mfu, 2, 100, "%");
		lp_html_tdnum(b, &p->gbs, 1, 1, NULL);
		lp_html_tdnum(b, &p->mbu, 2, 100, "%");
		lp_html_tdnum(b, &p->mfu_lat, 2, 100, "%");
		lp_html_tdnum(b, &p->mbu_lat, 2, 100, "%");
		lp_html_tdnum(b, &p->ncu_flops, 3, 1e-9, NULL);
		lp_html_tdnum(b, &p->ncu_coverage, 1, 100, "%");
		lp_buf_adds(b, "</tr>\n");
	}
	lp_html_tend(b);
	lp_buf_adds(b, "<p class=\"note\">");
	lp_fmt_peaks(a, lp_xml_text, b);
	lp_buf_adds(b, ". MFU = model FLOPs / (GPU busy time x dense peak); MBU = minimum bytes / (GPU busy time x peak "
		       "bandwidth); over latency: the same over the stage latency. Hover an n/a for its reason.</p>\n");
	lp_html_figure(a, LP_FIG_MFU, b);
}

/* The gap waterfall (analyze/waterfall.h): a table per stage and the figure of the decode step. */
void lp_html_waterfall(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "item", "ms", "share of latency", "floor subtracted (ms)", "floor from",
					    "what usually fixes it" };
	int k;
	size_t i;
	lp_html_h2(b, "waterfall", "Where the time goes");
	for (k = 1; k >= 0; k--) {
		const struct lp_waterfall *w = &a->waterfall[k];
		if (!w->valid) {
			lp_buf_addf(b, "<p class=\"note\">%s: n/a (", k ? "Decode step" : "Prefill");
			lp_html_text(b, w->why);
			lp_buf_adds(b, ").</p>\n");
			continue;
		}
		lp_buf_addf(b, "<p><b>%s</b> (per %s): latency %.4f ms, GPU busy %.4f ms. Floor: ", k ? "Decode step" : "Prefill",
			w->unit, w->latency_ms, w->busy_ms);
		lp_fmt_floor(w, lp_xml_text, b);
		if (w->floor_measured_ms > 0)
			lp_buf_addf(b, "; at the measured copy bandwidth (%.0f GB/s) %.4f ms", a->measured_bw_gbs, w->floor_measured_ms);
		lp_buf_adds(b, ".</p>\n");
		lp_html_thead(b, 0, 6, cols, "-nnn--");
		for (i = 0; i < w->n_items; i++) {
			const struct lp_wf_item *it = &w->items[i];
			lp_buf_adds(b, "<tr>");
			lp_html_tdname(b, it->label, 70);
			lp_html_tdn(b, it->ms, 4, NULL);
			lp_html_tdn(b, 100.0 * it->ms / w->latency_ms, 1, "%");
			if (it->kind == LP_WF_KERNEL) {
				lp_html_tdn(b, it->floor_ms, 4, NULL);
				lp_html_td(b, it->floor_source && strcmp(it->floor_source, "none") ? it->floor_source : "n/a");
			} else {
				lp_html_td(b, "");
				lp_html_td(b, "");
			}
			lp_html_td(b, it->fix ? it->fix : "");
			lp_buf_adds(b, "</tr>\n");
		}
		lp_html_tend(b);
		if (w->gaps_sampled)
			lp_buf_adds(b, "<p class=\"note\">Sampled trace: the kernel items and the GPU busy time (hence the idle "
				       "item) are estimates scaled from the recorded steps (Tracing mode); the latency is exact.</p>\n");
		if (w->n_gaps) {
			if (w->gaps_sampled)
				lp_buf_addf(b, "<p class=\"note\">Largest idle gaps, located in the %zu recorded decode steps (per "
					       "recorded step): ", w->gaps_steps);
			else
				lp_buf_adds(b, "<p class=\"note\">Largest idle gaps: ");
			lp_fmt_gaps(w, lp_xml_text, b);
			lp_buf_adds(b, ".</p>\n");
		}
	}
	lp_html_figure(a, LP_FIG_WATERFALL, b);
}

void lp_html_advice(const struct lp_analysis *a, enum lp_advice_kind kind, struct lp_buf *b)
{
	size_t i, n = 0;
	lp_buf_adds(b, "<ul class=\"advice\">\n");
	for (i = 0; i < a->n_advice; i++) {
		if (a->advice[i].kind != kind)
			continue;
		lp_buf_adds(b, "<li>");
		lp_html_text(b, a->advice[i].text);
		lp_buf_adds(b, " <span class=\"rule\">[");
		lp_html_text(b, a->advice[i].rule);
		lp_buf_adds(b, "]</span></li>\n");
		n++;
	}
	if (!n)
		lp_buf_adds(b, kind == LP_ADVICE_TAKEAWAY
			? "<li>No rule triggered: not enough measurements (thresholds in docs/metrics.md).</li>\n"
			: "<li>No rule triggered a recommendation on these measurements (thresholds in docs/metrics.md).</li>\n");
	lp_buf_adds(b, "</ul>\n");
}

/* The sample cell of a scaled row: "+- 0.123, a rerun +- 0.456 (16 of 126)" ("+- 0.123 (16 of 126)" with
 * trace.rerun_sd 0), "exact", or "n/a (...)". */
static void sample_td(struct lp_buf *b, int sampled, double ci_ms, double rerun_ms, uint32_t n, uint32_t N)
{
	char c[120];
	if (!sampled)
		snprintf(c, sizeof(c), "exact");
	else if (ci_ms < 0)
		snprintf(c, sizeof(c), "n/a (%u of %u)", n, N);
	else if (rerun_ms > ci_ms)
		snprintf(c, sizeof(c), "+- %.3f, a rerun +- %.3f (%u of %u)", ci_ms, rerun_ms, n, N);
	else
		snprintf(c, sizeof(c), "+- %.3f (%u of %u)", ci_ms, n, N);
	lp_html_td(b, c);
}

void lp_html_operators(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "stage", "operator", "GPU incl ms", "GPU excl ms", "host ms", "calls",
					    "kernels", "share of stage", "95% CI ms (sampled)" };
	const struct lp_op_table *t = &a->ops;
	size_t i;
	int gpu = a->stages.have_gpu;
	lp_html_h2(b, "operators", "Operators");
	if (!t->n_rows) {
		lp_buf_adds(b, "<p>No operator ranges were recorded (run the workload with NVTX op ranges, or PyTorch with "
			       "emit_nvtx).</p>\n");
		return;
	}
	lp_html_figure(a, LP_FIG_OPERATORS, b);
	lp_html_thead(b, 1, t->sampled ? 9 : 8, cols, "--nnnnnn-");
	for (i = 0; i < t->n_rows; i++) {
		const struct lp_op_row *r = &t->rows[i];
		lp_buf_adds(b, "<tr>");
		lp_html_td(b, r->stage);
		if (r->zero_gpu_why) {
			lp_buf_adds(b, "<td class=\"k\" title=\"");
			lp_html_text(b, r->zero_gpu_why);
			lp_buf_adds(b, "\">");
			lp_xml_text_short(b, r->name, LP_HTML_NAME_MAX);
			lp_buf_adds(b, " *</td>");
		} else {
			lp_html_tdname(b, r->name, LP_HTML_NAME_MAX);
		}
		lp_html_tdn(b, gpu ? r->gpu_incl_ms : NAN, 3, NULL);
		lp_html_tdn(b, gpu ? r->gpu_excl_ms : NAN, 3, NULL);
		lp_html_tdn(b, r->host_ms, 3, NULL);
		lp_html_tdu(b, r->calls);
		lp_html_tdu(b, r->kernels);
		lp_html_tdn(b, r->share >= 0 ? 100.0 * r->share : NAN, 1, "%");
		if (t->sampled)
			sample_td(b, r->sampled, r->ci_ms, r->rerun_ms, a->kernels.sample_n, a->kernels.sample_N);
		lp_buf_adds(b, "</tr>\n");
	}
	lp_html_tend(b);
	if (t->sampled)
		lp_buf_adds(b, "<p class=\"note\">Sampled trace: GPU times and kernel counts of rows with an interval are "
			       "scaled to every sampling unit (Tracing mode, under Run); calls and host times are exact.</p>\n");
	lp_buf_adds(b, gpu ? "<p class=\"note\">Summed over the measured iterations; share = inclusive GPU time / the stage's "
			     "kernel time (inclusive shares of nested ops overlap). * no kernel attributed: hover for why.</p>\n"
			   : "<p class=\"note\">Summed over the measured iterations; share = host time / the stage's host time.</p>\n");
}

void lp_html_kernels(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const cols[] = { "kernel", "device", "busy ms", "share", "total ms", "calls", "mean ms",
					    "prefill ms", "decode ms", "family", "95% CI ms (sampled)" };
	static const char *const ncols[] = { "kernel", "launches", "SM %", "DRAM %", "occupancy %", "DRAM MB", "GFLOP",
					     "FLOP/byte", "TFLOP/s", "roofline" };
	const struct lp_kernel_set *k = &a->kernels;
	size_t i, n = k->n_rows < LP_HTML_TOP_KERNELS ? k->n_rows : LP_HTML_TOP_KERNELS;
	lp_html_h2(b, "kernels", "Kernels");
	if (!k->n_rows) {
		lp_buf_adds(b, "<p>No GPU kernels were recorded in this run.</p>\n");
		return;
	}
	lp_html_figure(a, LP_FIG_KERNEL_FAMILIES, b);
	lp_html_figure(a, LP_FIG_TOP_KERNELS, b);
	lp_html_thead(b, 1, k->sampled ? 11 : 10, cols, "-nnnnnnnn--");
	for (i = 0; i < n; i++) {
		const struct lp_kernel_row *r = &k->rows[i];
		lp_buf_adds(b, "<tr>");
		lp_html_tdname(b, r->name, LP_HTML_NAME_MAX);
		lp_html_tdu(b, (unsigned long long)(r->device < 0 ? 0 : r->device));
		lp_html_tdn(b, r->busy_ms, 3, NULL);
		lp_html_tdn(b, 100.0 * r->share, 1, "%");
		lp_html_tdn(b, r->total_ms, 3, NULL);
		lp_html_tdu(b, r->calls);
		lp_html_tdn(b, r->mean_ms, 4, NULL);
		lp_html_tdn(b, r->stage_ms[0], 3, NULL);
		lp_html_tdn(b, r->stage_ms[1], 3, NULL);
		lp_html_td(b, lp_kname_family_name(r->family));
		if (k->sampled)
			sample_td(b, r->sampled, r->ci_ms, r->rerun_ms, k->sample_n, k->sample_N);
		lp_buf_adds(b, "</tr>\n");
	}
	lp_html_tend(b);
	if (k->sampled) {
		lp_buf_addf(b, "<p class=\"note\">Sampled trace: kernels were recorded in %u of %u sampling units (and all %u "
				"of the exact stratum); rows not marked exact are scaled to every unit (Tracing mode, under Run).",
			k->sample_n, k->sample_N, k->sample_exact);
		lp_section_rerun_note(a, b);
		lp_buf_adds(b, "</p>\n");
	}
	if (k->sample_missing) {
		struct lp_buf note = LP_BUF_INIT;
		lp_section_missing_note(a, &note);
		lp_buf_adds(b, "<p class=\"note\">");
		lp_html_text(b, note.oom ? "" : note.data);
		lp_buf_adds(b, "</p>\n");
		lp_buf_release(&note);
	}
	lp_buf_addf(b, "<p class=\"note\">Measured iterations, warm-up excluded. busy ms: the kernel's share of GPU busy time "
			"(%.3f ms in all; concurrent kernels split the time they share), so shares add up to 100%%; total ms: "
			"summed durations (%.3f ms).", k->busy_ms, k->total_ms);
	if (k->n_rows > n)
		lp_buf_addf(b, " The top %zu of %zu kernels; kernels.md lists every one.", n, k->n_rows);
	lp_buf_adds(b, "</p>\n");
	if (!k->n_joined_rows)
		return;
	lp_buf_adds(b, "<h3>Nsight Compute metrics (per launch)</h3>\n");
	lp_html_figure(a, LP_FIG_ROOFLINE, b);
	lp_html_thead(b, 1, 10, ncols, "-nnnnnnnn-");
	for (i = 0; i < k->n_rows; i++) {
		const struct lp_kernel_row *r = &k->rows[i];
		const struct lp_kernel_ncu *m = &r->ncu;
		if (!m->joined)
			continue;
		lp_buf_adds(b, "<tr>");
		lp_html_tdname(b, r->name, LP_HTML_NAME_MAX);
		lp_html_tdu(b, m->records);
		lp_html_tdn(b, m->sm_pct, 1, NULL);
		lp_html_tdn(b, m->dram_pct, 1, NULL);
		lp_html_tdn(b, m->occupancy_pct, 1, NULL);
		lp_html_tdn(b, m->dram_bytes / 1e6, 3, NULL);
		lp_html_tdn(b, m->flops / 1e9, 4, NULL);
		lp_html_tdn(b, m->intensity, 2, NULL);
		lp_html_tdn(b, m->achieved_flops_per_s / 1e12, 3, NULL);
		lp_html_td(b, lp_roofline_name(m->roofline));
		lp_buf_adds(b, "</tr>\n");
	}
	lp_html_tend(b);
	if (k->ridge_flop_per_byte > 0)
		lp_buf_addf(b, "<p class=\"note\">Ridge point %.1f FLOP/byte: memory-bound below half of it, compute-bound above "
				"twice it, balanced between.</p>\n", k->ridge_flop_per_byte);
}

/* The NVTX-region tree of ncu/regions/report.json (the aggregate scope), indented by depth. */
void lp_html_regions(const char *run_dir, struct lp_buf *b)
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
		lp_html_h2(b, "regions", "NVTX regions (Nsight Compute)");
		lp_buf_adds(b, "<p>ncu/regions/report.json could not be read (");
		lp_html_text(b, err.msg);
		lp_buf_adds(b, "); ncu/regions/report.md has the region tables.</p>\n");
	}
	regs = json_object_get(scope, "regions");
	if (json_is_array(regs) && json_array_size(regs)) {
		lp_html_h2(b, "regions", "NVTX regions (Nsight Compute)");
		lp_html_thead(b, 0, 5, cols, "-nnn-");
		json_array_foreach(regs, i, r) {
			const json_t *d = json_object_get(r, "depth"), *name = json_object_get(r, "name");
			const json_t *inc = json_object_get(r, "total_ms_inclusive"), *exc = json_object_get(r, "total_ms_exclusive");
			long long depth = json_is_integer(d) ? json_integer_value(d) : 0;
			lp_buf_addf(b, "<tr><td class=\"k\" style=\"padding-left:%lldpx\">", 8 + 18 * (depth < 0 ? 0 : depth > 20 ? 20 : depth));
			lp_xml_text_short(b, json_is_string(name) ? json_string_value(name) : "?", LP_HTML_NAME_MAX);
			lp_buf_adds(b, "</td>");
			lp_html_tdn(b, json_is_number(inc) ? json_number_value(inc) : NAN, 3, NULL);
			lp_html_tdn(b, json_is_number(exc) ? json_number_value(exc) : NAN, 3, NULL);
			lp_html_tdu(b, json_is_integer(json_object_get(r, "kernel_count")) ?
				       (unsigned long long)json_integer_value(json_object_get(r, "kernel_count")) : 0);
			lp_html_td(b, json_is_true(json_object_get(r, "reconciled")) ? "yes" : "no");
			lp_buf_adds(b, "</tr>\n");
		}
		lp_html_tend(b);
		lp_buf_adds(b, "<p class=\"note\">Kernel time under each region as Nsight Compute measured it (its own replays, "
			       "not the traced run): inclusive counts nested regions, exclusive does not. Per-region tables: "
			       "ncu/regions/report.md.</p>\n");
	} else if (root) {
		lp_html_h2(b, "regions", "NVTX regions (Nsight Compute)");
		lp_buf_adds(b, "<p>No region had results (ncu/regions/report.md says which expressions matched nothing).</p>\n");
	}
	json_decref(root);
	lp_buf_release(&path);
	lp_buf_release(&data);
}
