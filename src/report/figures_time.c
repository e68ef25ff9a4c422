/* figures_time.c: the figures on a time axis: the timeline of one measured iteration
 * and its zoom, the latency of every decode step, and the gap waterfall (see figures.h; shared helpers in figure_kit.h). */
#include "report/figure_kit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/svg.h"

/* ---- timeline ---- */

/* The whole iteration, or (zoom) the first decode steps of it (timeline.h). */
int lp_fig_timeline(const struct lp_analysis *a, int zoom, struct lp_buf *b)
{
	const struct lp_timeline *t = &a->timeline;
	const struct lp_tl_event *events = zoom ? t->zoom_events : t->events;
	size_t n_events = zoom ? t->n_zoom_events : t->n_events;
	uint64_t merge_ns = zoom ? t->zoom_merge_ns : t->merge_ns;
	double from = zoom ? (double)t->zoom_from_ns : 0, to = zoom ? (double)t->zoom_to_ns : (double)t->span_ns;
	const double W = 1200, L = 120, R = 20, top = 64, lane_h = 18, gap = 6;
	double pw = W - L - R, H = top + (double)t->n_lanes * (lane_h + gap) + 44, span = to - from > 0 ? to - from : 1;
	double step, v;
	size_t i, steps_seen = 0;
	struct lp_buf tip = LP_BUF_INIT, line = LP_BUF_INIT;
	char tb[64], tb2[64];

	lp_svg_begin(b, W, H, lp_figures[zoom ? LP_FIG_TIMELINE_ZOOM : LP_FIG_TIMELINE].title);
	if (t->n_unrecorded)   /* grey hatching for unrecorded steps (one id per figure: both sit in report.html) */
		lp_buf_addf(b, "<defs><pattern id=\"lp-unrec-%d\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
			       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#e6e6e6\"/>"
			       "<rect width=\"2\" height=\"6\" fill=\"#9a9a9a\"/></pattern></defs>\n", zoom);
	if (zoom) {
		lp_buf_addf(&line, "Zoom on the first %d decode steps' worth of time of ", LP_TIMELINE_ZOOM_STEPS);
		lp_buf_adds(&line, t->what);
		lp_fig_fmt_ns(tb, sizeof(tb), from);
		lp_fig_fmt_ns(tb2, sizeof(tb2), span);
		lp_buf_addf(&line, " (from %s, %s)", tb, tb2);
	} else {
		lp_buf_adds(&line, "Timeline of ");
		lp_buf_adds(&line, t->what);
		lp_fig_fmt_ns(tb, sizeof(tb), span);
		lp_buf_addf(&line, " (%s)", tb);
	}
	lp_svg_text(b, L, 18, "start", 13, LP_FIG_INK, line.data);
	lp_buf_reset(&line);
	if (merge_ns) {
		lp_fig_fmt_ns(tb, sizeof(tb), (double)merge_ns);
		lp_buf_addf(&line, "Downsampled: %zu marks (events shorter than %s that start within %s of each other merged; "
				   "hover a mark for its count)", n_events, tb, tb);
		if (!zoom)
			lp_buf_addf(&line, " from %zu events", t->n_source);
		lp_buf_adds(&line, ".");
	} else {
		lp_buf_addf(&line, "%zu events, each drawn; hover for names and times.", n_events);
	}
	if (!zoom && t->have_zoom)
		lp_buf_adds(&line, " The next figure zooms on the first decode steps.");
	if (t->source_truncated)
		lp_buf_addf(&line, " Only the first %d events were read.", LP_TIMELINE_MAX_SOURCE);
	if (t->levels_dropped)
		lp_buf_addf(&line, " %zu ranges nested deeper than %d levels are not shown.", t->levels_dropped,
			LP_TIMELINE_RANGE_LEVELS);
	lp_fig_caption(b, L, 34, line.data);
	if (t->n_unrecorded) {
		/* a sampled trace: say it on the figure, and why some steps show no kernels */
		lp_buf_reset(&line);
		lp_buf_addf(&line, "Sampled trace: the kernels of %zu of the %zu decode steps here were not recorded (hatched "
				   "grey on the GPU lane: their GPU time from the step's CUDA events, not idle time).",
			t->n_unrecorded, t->n_unit_steps);
		lp_fig_caption(b, L, 48, line.data);
	} else if (t->n_lanes && t->lanes[t->n_lanes - 1].kind == LP_TL_LANE_GPU) {
		lp_fig_caption(b, L, 48, "Host ranges end at their pop; GPU work launched inside may run later (light bar on the "
				  "stage lane: the rest of the stage latency). Kernel colours: family, as in the kernel figures.");
	}

	/* time axis (ms since the first event of the iteration) */
	step = lp_svg_nice_step(span / 1e6, 8);
	for (v = ceil(from / 1e6 / step - 1e-9) * step; v <= to / 1e6 + 1e-12; v += step) {
		double x = L + (v * 1e6 - from) / span * pw;
		lp_svg_line(b, x, top - 4, x, H - 40, LP_FIG_GRID, 1, NULL);
		lp_svg_tick_label(tb, sizeof(tb), v);
		lp_svg_text(b, x, H - 26, "middle", 11, LP_FIG_MUTED, tb);
	}
	lp_svg_text(b, L + pw / 2, H - 10, "middle", 11, LP_FIG_MUTED, "time since the first event of the iteration (ms)");

	for (i = 0; i < t->n_lanes; i++) {
		double y = top + (double)i * (lane_h + gap);
		lp_svg_rect(b, L, y, pw, lane_h, "#f4f4f4", NULL);
		lp_svg_text(b, L - 8, y + 13, "end", 11, LP_FIG_INK, t->lanes[i].name);
	}
	for (i = 0; i < n_events; i++) {
		const struct lp_tl_event *e = &events[i];
		const struct lp_tl_lane *ln = &t->lanes[e->lane];
		double s0 = (double)e->start_ns < from ? from : (double)e->start_ns;
		double s1 = (double)e->end_ns > to ? to : (double)e->end_ns;
		double x = L + (s0 - from) / span * pw, w = (s1 - s0) / span * pw;
		double y = top + (double)e->lane * (lane_h + gap);
		const char *fill;
		if (w > 4)
			w -= 0.5;   /* a hairline between neighbours of the same colour */
		if (w < 0.6)
			w = 0.6;
		if (e->kind == LP_TL_EV_UNRECORDED)
			fill = zoom ? "url(#lp-unrec-1)" : "url(#lp-unrec-0)";
		else if (e->kind == LP_TL_EV_LATENCY)
			fill = !strcmp(e->label, "prefill") ? "#a0bcd8" : "#f7c594";
		else if (e->kind != LP_TL_EV_RANGE)
			fill = e->kind == LP_TL_EV_COPY ? lp_fig_family_color(LP_FAM_MEMCPY) : lp_fig_family_color(lp_kname_family(e->label));
		else if (ln->kind == LP_TL_LANE_STAGE)
			fill = !strcmp(e->label, "prefill") ? "#4e79a7" : "#f28e2b";
		else if (ln->kind == LP_TL_LANE_STEP)
			fill = (steps_seen++ % 2) ? "#e8a15c" : "#f28e2b";
		else
			fill = lp_fig_name_color(e->label);
		lp_buf_reset(&tip);
		lp_fig_fmt_ns(tb, sizeof(tb), (double)e->start_ns);
		lp_fig_fmt_ns(tb2, sizeof(tb2), (double)(e->end_ns - e->start_ns));
		if (e->kind == LP_TL_EV_UNRECORDED) {
			lp_buf_addf(&tip, "decode step whose kernels were not recorded (sampled trace): GPU from %s for %s; the "
					  "kernel tables scale the recorded steps to it", tb, tb2);
		} else if (e->kind == LP_TL_EV_LATENCY) {
			lp_buf_adds(&tip, e->label);
			lp_buf_addf(&tip, ": GPU work launched inside still running after the range was popped, for %s "
					  "(part of the stage latency)", tb2);
		} else if (e->merged > 1) {
			lp_buf_addf(&tip, "%u events merged, from %s for %s; first: ", e->merged, tb, tb2);
			lp_buf_adds(&tip, e->label);
		} else {
			lp_buf_adds(&tip, e->label);
			if (ln->kind == LP_TL_LANE_STEP)
				lp_buf_addf(&tip, " %zu", steps_seen);
			lp_buf_addf(&tip, "\nstart %s, duration %s%s", tb, tb2,
				e->synthetic ? " (range captured in a CUDA graph: the GPU span of its kernels)" : "");
		}
		lp_svg_rect(b, x, y + (e->merged > 1 ? 3 : 0), w, lane_h - (e->merged > 1 ? 6 : 0),
			e->merged > 1 && e->kind != LP_TL_EV_UNRECORDED ? "#999999" : fill, tip.data);
		if (ln->kind != LP_TL_LANE_GPU && e->merged <= 1 && w > 40 && e->kind != LP_TL_EV_LATENCY)
			lp_svg_text_short(b, x + 3, y + 13, "start", 10, lp_fig_ink_on(fill), e->label, (size_t)((w - 6) / 6.5));
	}
	lp_svg_end(b);
	lp_buf_release(&tip);
	lp_buf_release(&line);
	return b->oom ? -1 : 0;
}

/* ---- per-step latency ---- */

int lp_fig_step_latency(const struct lp_analysis *a, struct lp_buf *b)
{
	const struct lp_stage *st = lp_fig_decode_with_steps(a);
	const double W = 900, H = 320, L = 64, R = 110, T = 40, B = 46;
	double pw = W - L - R, ph = H - T - B, lo, hi, range, step, v;
	double pct[3];
	static const char *const pct_name[3] = { "p50", "p90", "p99" };
	static const char *const pct_color[3] = { "#59a14f", "#f28e2b", "#e15759" };
	size_t i, n;
	char tb[96];
	struct lp_buf line = LP_BUF_INIT;

	if (!st)   /* the figure is not offered then (figures.c); a caller that asks anyway gets none */
		return 0;
	pct[0] = st->step_p50;
	pct[1] = st->step_p90;
	pct[2] = st->step_p99;
	n = st->n_step_lat;
	lo = st->step_ms.min;
	hi = st->step_ms.max;
	range = hi - lo;
	if (range <= 0)
		range = hi > 0 ? hi * 0.1 : 1;
	lo = lo - range * 0.15 < 0 ? 0 : lo - range * 0.15;
	hi = hi + range * 0.10;
	lp_svg_begin(b, W, H, lp_figures[LP_FIG_STEP_LATENCY].title);
	lp_buf_adds(&line, "Latency of every measured ");
	lp_buf_adds(&line, st->name);
	lp_buf_addf(&line, " step (%zu steps over %zu iterations)", n, st->n_iters);
	lp_svg_text(b, L, 18, "start", 13, LP_FIG_INK, line.data);
	lp_fig_caption(b, L, 32, "y axis starts near the fastest step, not at 0; dashed lines: nearest-rank percentiles");

	step = lp_svg_nice_step(hi - lo, 6);
	for (v = ceil(lo / step) * step; v <= hi + 1e-12; v += step) {
		double y = T + ph - (v - lo) / (hi - lo) * ph;
		lp_svg_line(b, L, y, L + pw, y, LP_FIG_GRID, 1, NULL);
		lp_svg_tick_label(tb, sizeof(tb), v);
		lp_svg_text(b, L - 6, y + 4, "end", 11, LP_FIG_MUTED, tb);
	}
	lp_svg_text(b, 14, T + ph / 2, "middle", 11, LP_FIG_MUTED, "ms");
	/* iteration boundaries, when the per-iteration step counts add up */
	{
		uint64_t sum = 0;
		for (i = 0; i < st->n_iters; i++)
			sum += st->iters[i].steps;
		if (sum == n && st->n_iters > 1) {
			uint64_t at = 0;
			for (i = 0; i + 1 < st->n_iters; i++) {
				double x;
				at += st->iters[i].steps;
				x = L + ((double)at + 0.5) / (double)n * pw;
				lp_svg_line(b, x, T, x, T + ph, "#bbbbbb", 1, "2,3");
			}
		}
	}
	step = lp_svg_nice_step((double)n, 8);
	if (step < 1)
		step = 1;
	for (v = step; v <= (double)n; v += step) {
		double x = L + (v - 0.5) / (double)n * pw;
		lp_svg_tick_label(tb, sizeof(tb), v);
		lp_svg_text(b, x, T + ph + 16, "middle", 11, LP_FIG_MUTED, tb);
	}
	lp_svg_text(b, L + pw / 2, H - 8, "middle", 11, LP_FIG_MUTED,
		st->n_iters > 1 ? "decode step (trace order; dotted lines separate iterations)" : "decode step (trace order)");

	lp_buf_adds(b, "<polyline fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\" points=\"");
	for (i = 0; i < n; i++) {
		double x = L + ((double)i + 0.5) / (double)n * pw, y = T + ph - (st->step_lat_ms[i] - lo) / (hi - lo) * ph;
		if (i)
			lp_buf_addc(b, ' ');
		lp_svg_num(b, x);
		lp_buf_addc(b, ',');
		lp_svg_num(b, y);
	}
	lp_buf_adds(b, "\"/>\n");
	for (i = 0; i < n; i++) {
		double x = L + ((double)i + 0.5) / (double)n * pw, y = T + ph - (st->step_lat_ms[i] - lo) / (hi - lo) * ph;
		int slow = st->step_lat_ms[i] >= st->step_p99;
		if (n > 600 && !slow)
			continue;   /* the line carries them; the slowest steps keep a point to hover */
		snprintf(tb, sizeof(tb), "step %zu: %.3f ms", i + 1, st->step_lat_ms[i]);
		lp_svg_circle(b, x, y, slow ? 3.5 : 2.2, slow ? "#e15759" : "#4e79a7", tb);
	}
	for (i = 0; i < 3; i++) {
		double y;
		if (!isfinite(pct[i]))
			continue;
		y = T + ph - (pct[i] - lo) / (hi - lo) * ph;
		lp_svg_line(b, L, y, L + pw, y, pct_color[i], 1.2, "6,4");
		snprintf(tb, sizeof(tb), "%s %.3f ms", pct_name[i], pct[i]);
		/* labels of close percentiles are spread so they stay readable */
		lp_svg_text(b, L + pw + 6, y + 4 + (i == 1 ? 0 : 0), "start", 11, pct_color[i], tb);
	}
	lp_svg_line(b, L, T + ph, L + pw, T + ph, LP_FIG_INK, 1, NULL);
	lp_svg_line(b, L, T, L, T + ph, LP_FIG_INK, 1, NULL);
	lp_svg_end(b);
	lp_buf_release(&line);
	return b->oom ? -1 : 0;
}


/* ---- gap waterfall ---- */

/* One bar per item, each starting where the previous one ended (analyze/waterfall.h): the floor from
 * 0, kernel excesses and idle time adding, negative items taking back; the last bar ends at the
 * measured latency, marked by a line. */
int lp_fig_waterfall(const struct lp_analysis *a, struct lp_buf *b)
{
	const struct lp_waterfall *w = lp_fig_waterfall_of(a);
	const double W = 900, L = 330, R = 90, T = 46, bar_h = 14, gap = 5;
	double pw = W - L - R, H, lo = 0, hi, cum = 0, step, v;
	size_t i;
	char tb[400];
	if (!w)   /* lp_figure_applies says no waterfall; never drawn then */
		return 0;
	hi = w->latency_ms;
	for (i = 0; i < w->n_items; i++) {   /* the range the running sum covers */
		cum += w->items[i].ms;
		if (cum > hi)
			hi = cum;
		if (cum < lo)
			lo = cum;
	}
	if (hi <= lo)
		hi = lo + 1e-6;
	H = T + (double)(w->n_items + 1) * (bar_h + gap) + 40;
	lp_svg_begin(b, W, H, lp_figures[LP_FIG_WATERFALL].title);
	snprintf(tb, sizeof(tb), "From the floor to the measured %s (per %s)", w->stage, w->unit);
	lp_svg_text(b, 10, 18, "start", 13, LP_FIG_INK, tb);
	snprintf(tb, sizeof(tb), "latency %.4f ms = floor %.4f ms + what each kernel takes above its own floor + GPU idle; "
		"hover a bar for what usually fixes it", w->latency_ms, w->floor_ms);
	lp_fig_caption(b, 10, 34, tb);
	step = lp_svg_nice_step(hi - lo, 6);
	for (v = ceil(lo / step) * step; v <= hi + 1e-12; v += step) {
		double x = L + (v - lo) / (hi - lo) * pw;
		lp_svg_line(b, x, T - 4, x, H - 30, LP_FIG_GRID, 1, NULL);
		char lab[80];
		lp_svg_tick_label(tb, sizeof(tb), v);
		snprintf(lab, sizeof(lab), "%.60s ms", tb);
		lp_svg_text(b, x, H - 16, "middle", 11, LP_FIG_MUTED, lab);
	}
	cum = 0;
	for (i = 0; i < w->n_items; i++) {
		const struct lp_wf_item *it = &w->items[i];
		double y = T + (double)i * (bar_h + gap), x0 = cum, x1 = cum + it->ms;
		double xa = L + (fmin(x0, x1) - lo) / (hi - lo) * pw, xb = L + (fmax(x0, x1) - lo) / (hi - lo) * pw;
		const char *fill = it->kind == LP_WF_FLOOR ? "#59a14f" : it->kind == LP_WF_KERNEL ? "#4e79a7"
				 : it->kind == LP_WF_IDLE ? "#e15759" : it->ms < 0 ? "#bab0ac" : "#f28e2b";
		snprintf(tb, sizeof(tb), "%s: %+.4f ms (%.1f%% of the latency); %s", it->label, it->ms,
			100.0 * it->ms / w->latency_ms, it->fix);
		lp_svg_text_short(b, L - 8, y + 11, "end", 11, LP_FIG_INK, it->label, 48);
		lp_svg_rect(b, xa, y, fmax(xb - xa, 0.5), bar_h, fill, tb);
		snprintf(tb, sizeof(tb), "%+.4f", it->ms);
		lp_svg_text(b, xb + 4, y + 11, "start", 10, LP_FIG_INK, tb);
		cum = x1;
	}
	{
		double x = L + (w->latency_ms - lo) / (hi - lo) * pw;
		lp_svg_line(b, x, T - 8, x, H - 30, LP_FIG_INK, 1.5, "5,3");
		lp_svg_text(b, x, T - 10, "middle", 11, LP_FIG_INK, "measured");
	}
	lp_svg_end(b);
	return b->oom ? -1 : 0;
}
