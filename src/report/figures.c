/* figures.c: the SVG figures of a run (see figures.h), drawn from the analysis with the
 * primitives of svg.h. Each figure is a fixed-size drawing (the HTML scales it down to the page);
 * every value shown is also in the tables of the reports, the figures add no number of their own. */
#include "report/figures.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/fs.h"
#include "report/svg.h"

const struct lp_figure_info lp_figures[LP_FIG_COUNT] = {
	{ "timeline.svg", "Timeline of one measured iteration" },
	{ "timeline_zoom.svg", "Timeline of the first decode steps" },
	{ "step_latency.svg", "Latency of every decode step" },
	{ "kernel_families.svg", "GPU time by kernel family" },
	{ "top_kernels.svg", "Top kernels by GPU time" },
	{ "operators.svg", "Operator breakdown per stage" },
	{ "mfu.svg", "MFU and MBU per stage against the peaks" },
	{ "roofline.svg", "Roofline of the Nsight Compute kernels" },
	{ "waterfall.svg", "From the floor to the measured decode step" },
};

/* Tableau 10: distinguishable, print well, fine for most colour-vision deficiencies. */
static const char *const palette[] = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
				       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac" };
#define N_PALETTE 10
#define INK "#222222"
#define GRID "#dddddd"
#define MUTED "#666666"

static const char *family_color(enum lp_kernel_family f)
{
	static const char *const c[LP_FAM_COUNT] = { "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759",
						     "#76b7b2", "#9c755f", "#ff9da7", "#bab0ac" };
	return (int)f >= 0 && f < LP_FAM_COUNT ? c[f] : "#bab0ac";
}

/* A colour from a name (FNV-1a over Tableau 20 without its greys): the same range name gets the
 * same colour in every timeline. */
static const char *name_color(const char *s)
{
	static const char *const t20[] = { "#4e79a7", "#a0cbe8", "#f28e2b", "#ffbe7d", "#59a14f", "#8cd17d",
					   "#b6992d", "#f1ce63", "#499894", "#86bcb6", "#e15759", "#ff9d9a",
					   "#d37295", "#fabfd2", "#b07aa1", "#d4a6c8", "#9d7660", "#d7b5a6" };
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return t20[h % (sizeof(t20) / sizeof(t20[0]))];
}

/* Dark or white text, whichever reads better on `fill` ("#rrggbb"; relative luminance, sRGB weights). */
static const char *ink_on(const char *fill)
{
	unsigned r = 0, g = 0, bl = 0;
	if (!fill || strlen(fill) != 7 || sscanf(fill + 1, "%2x%2x%2x", &r, &g, &bl) != 3)
		return INK;
	return 0.2126 * r + 0.7152 * g + 0.0722 * bl > 150 ? INK : "#ffffff";
}

static const struct lp_stage *decode_with_steps(const struct lp_analysis *a)
{
	const struct lp_stage *d = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	size_t i;
	if (d && d->n_step_lat)
		return d;
	for (i = 0; i < a->stages.n_stages; i++)
		if (a->stages.stages[i].n_step_lat)
			return &a->stages.stages[i];
	return NULL;
}

static int roofline_points(const struct lp_analysis *a)
{
	size_t i;
	int n = 0;
	for (i = 0; i < a->kernels.n_rows; i++) {
		const struct lp_kernel_ncu *m = &a->kernels.rows[i].ncu;
		n += m->joined && isfinite(m->intensity) && m->intensity > 0 && isfinite(m->achieved_flops_per_s) &&
		     m->achieved_flops_per_s > 0;
	}
	return n;
}

/* The waterfall the figure draws: the decode step's, else the prefill's; NULL when neither is valid. */
static const struct lp_waterfall *waterfall_of(const struct lp_analysis *a)
{
	return a->waterfall[1].valid ? &a->waterfall[1] : a->waterfall[0].valid ? &a->waterfall[0] : NULL;
}

int lp_figure_applies(const struct lp_analysis *a, enum lp_figure_id id)
{
	int k;
	switch (id) {
	case LP_FIG_TIMELINE:
		return a->timeline.valid && a->timeline.n_events > 0;
	case LP_FIG_TIMELINE_ZOOM:
		return a->timeline.valid && a->timeline.have_zoom;
	case LP_FIG_STEP_LATENCY:
		return decode_with_steps(a) != NULL;
	case LP_FIG_KERNEL_FAMILIES:
	case LP_FIG_TOP_KERNELS:
		return a->kernels.n_rows > 0 && a->kernels.busy_ms > 0;
	case LP_FIG_OPERATORS:
		return a->ops.n_rows > 0 && a->stages.n_stages > 0;
	case LP_FIG_MFU:
		for (k = 0; k < 3; k++)
			if (a->perf[k].mfu.valid || a->perf[k].mbu.valid)
				return 1;
		return 0;
	case LP_FIG_ROOFLINE:
		return a->peak.flops_valid && a->peak.bw_valid && roofline_points(a) > 0;
	case LP_FIG_WATERFALL:
		return waterfall_of(a) != NULL;
	default:
		return 0;
	}
}

/* A short duration for labels: "812 ns", "12.5 us", "3.250 ms". */
static void fmt_ns(char *b, size_t cap, double ns)
{
	if (ns < 1e3)
		snprintf(b, cap, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(b, cap, "%.1f us", ns / 1e3);
	else
		snprintf(b, cap, "%.3f ms", ns / 1e6);
}

static void caption(struct lp_buf *b, double x, double y, const char *text)
{
	lp_svg_text(b, x, y, "start", 11, MUTED, text);
}

/* ---- timeline ---- */

/* The whole iteration, or (zoom) the first decode steps of it (timeline.h). */
static int timeline(const struct lp_analysis *a, int zoom, struct lp_buf *b)
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
	if (zoom) {
		lp_buf_addf(&line, "Zoom on the first %d decode steps' worth of time of ", LP_TIMELINE_ZOOM_STEPS);
		lp_buf_adds(&line, t->what);
		fmt_ns(tb, sizeof(tb), from);
		fmt_ns(tb2, sizeof(tb2), span);
		lp_buf_addf(&line, " (from %s, %s)", tb, tb2);
	} else {
		lp_buf_adds(&line, "Timeline of ");
		lp_buf_adds(&line, t->what);
		fmt_ns(tb, sizeof(tb), span);
		lp_buf_addf(&line, " (%s)", tb);
	}
	lp_svg_text(b, L, 18, "start", 13, INK, line.data);
	lp_buf_reset(&line);
	if (merge_ns) {
		fmt_ns(tb, sizeof(tb), (double)merge_ns);
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
	caption(b, L, 34, line.data);
	if (t->n_lanes && t->lanes[t->n_lanes - 1].kind == LP_TL_LANE_GPU)
		caption(b, L, 48, "Host ranges end at their pop; GPU work launched inside may run later (light bar on the "
				  "stage lane: the rest of the stage latency). Kernel colours: family, as in the kernel figures.");

	/* time axis (ms since the first event of the iteration) */
	step = lp_svg_nice_step(span / 1e6, 8);
	for (v = ceil(from / 1e6 / step - 1e-9) * step; v <= to / 1e6 + 1e-12; v += step) {
		double x = L + (v * 1e6 - from) / span * pw;
		lp_svg_line(b, x, top - 4, x, H - 40, GRID, 1, NULL);
		lp_svg_tick_label(tb, sizeof(tb), v);
		lp_svg_text(b, x, H - 26, "middle", 11, MUTED, tb);
	}
	lp_svg_text(b, L + pw / 2, H - 10, "middle", 11, MUTED, "time since the first event of the iteration (ms)");

	for (i = 0; i < t->n_lanes; i++) {
		double y = top + (double)i * (lane_h + gap);
		lp_svg_rect(b, L, y, pw, lane_h, "#f4f4f4", NULL);
		lp_svg_text(b, L - 8, y + 13, "end", 11, INK, t->lanes[i].name);
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
		if (e->kind == LP_TL_EV_LATENCY)
			fill = !strcmp(e->label, "prefill") ? "#a0bcd8" : "#f7c594";
		else if (e->kind != LP_TL_EV_RANGE)
			fill = e->kind == LP_TL_EV_COPY ? family_color(LP_FAM_MEMCPY) : family_color(lp_kernel_classify(e->label));
		else if (ln->kind == LP_TL_LANE_STAGE)
			fill = !strcmp(e->label, "prefill") ? "#4e79a7" : "#f28e2b";
		else if (ln->kind == LP_TL_LANE_STEP)
			fill = (steps_seen++ % 2) ? "#e8a15c" : "#f28e2b";
		else
			fill = name_color(e->label);
		lp_buf_reset(&tip);
		fmt_ns(tb, sizeof(tb), (double)e->start_ns);
		fmt_ns(tb2, sizeof(tb2), (double)(e->end_ns - e->start_ns));
		if (e->kind == LP_TL_EV_LATENCY) {
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
			e->merged > 1 ? "#999999" : fill, tip.data);
		if (ln->kind != LP_TL_LANE_GPU && e->merged <= 1 && w > 40 && e->kind != LP_TL_EV_LATENCY)
			lp_svg_text_short(b, x + 3, y + 13, "start", 10, ink_on(fill), e->label, (size_t)((w - 6) / 6.5));
	}
	lp_svg_end(b);
	lp_buf_release(&tip);
	lp_buf_release(&line);
	return b->oom ? -1 : 0;
}

/* ---- per-step latency ---- */

static int step_latency(const struct lp_analysis *a, struct lp_buf *b)
{
	const struct lp_stage *st = decode_with_steps(a);
	const double W = 900, H = 320, L = 64, R = 110, T = 40, B = 46;
	double pw = W - L - R, ph = H - T - B, lo, hi, range, step, v;
	const double pct[3] = { st->step_p50, st->step_p90, st->step_p99 };
	static const char *const pct_name[3] = { "p50", "p90", "p99" };
	static const char *const pct_color[3] = { "#59a14f", "#f28e2b", "#e15759" };
	size_t i, n = st->n_step_lat;
	char tb[96];
	struct lp_buf line = LP_BUF_INIT;

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
	lp_svg_text(b, L, 18, "start", 13, INK, line.data);
	caption(b, L, 32, "y axis starts near the fastest step, not at 0; dashed lines: nearest-rank percentiles");

	step = lp_svg_nice_step(hi - lo, 6);
	for (v = ceil(lo / step) * step; v <= hi + 1e-12; v += step) {
		double y = T + ph - (v - lo) / (hi - lo) * ph;
		lp_svg_line(b, L, y, L + pw, y, GRID, 1, NULL);
		lp_svg_tick_label(tb, sizeof(tb), v);
		lp_svg_text(b, L - 6, y + 4, "end", 11, MUTED, tb);
	}
	lp_svg_text(b, 14, T + ph / 2, "middle", 11, MUTED, "ms");
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
		lp_svg_text(b, x, T + ph + 16, "middle", 11, MUTED, tb);
	}
	lp_svg_text(b, L + pw / 2, H - 8, "middle", 11, MUTED,
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
	lp_svg_line(b, L, T + ph, L + pw, T + ph, INK, 1, NULL);
	lp_svg_line(b, L, T, L, T + ph, INK, 1, NULL);
	lp_svg_end(b);
	lp_buf_release(&line);
	return b->oom ? -1 : 0;
}

/* ---- horizontal bars ---- */

struct bar {
	const char *label;           /* full name */
	double value;
	const char *color;
	const char *note;            /* extra hover text; may be NULL */
};

static int hbars(struct lp_buf *b, const char *title, const char *subtitle, const struct bar *bars, size_t n,
	double total, const char *unit, double label_w, size_t label_chars)
{
	const double W = 900, T = 44, bar_h = 16, gap = 6, R = 150;
	double L = label_w, pw = W - L - R, H = T + (double)n * (bar_h + gap) + 34, max = 0, step, v;
	size_t i;
	char tb[160];
	struct lp_buf tip = LP_BUF_INIT;
	for (i = 0; i < n; i++)
		if (bars[i].value > max)
			max = bars[i].value;
	if (max <= 0)
		max = 1;
	lp_svg_begin(b, W, H, title);
	lp_svg_text(b, 10, 18, "start", 13, INK, title);
	if (subtitle)
		caption(b, 10, 34, subtitle);
	step = lp_svg_nice_step(max, 6);
	for (v = 0; v <= max + 1e-12; v += step) {
		double x = L + v / max * pw;
		lp_svg_line(b, x, T - 4, x, H - 30, GRID, 1, NULL);
		lp_svg_tick_label(tb, sizeof(tb), v);
		lp_svg_text(b, x, H - 16, "middle", 11, MUTED, tb);
	}
	lp_svg_text(b, L + pw / 2, H - 3, "middle", 11, MUTED, unit);
	for (i = 0; i < n; i++) {
		double y = T + (double)i * (bar_h + gap), w = bars[i].value / max * pw;
		lp_buf_reset(&tip);
		lp_buf_adds(&tip, bars[i].label);
		lp_buf_addf(&tip, unit[0] == '%' ? "\n%.1f%s" : "\n%.3f %s", bars[i].value, unit);
		if (total > 0)
			lp_buf_addf(&tip, " (%.1f%%)", 100.0 * bars[i].value / total);
		if (bars[i].note) {
			lp_buf_addc(&tip, '\n');
			lp_buf_adds(&tip, bars[i].note);
		}
		lp_svg_text_short(b, L - 6, y + 12, "end", 11, INK, bars[i].label, label_chars);
		lp_svg_rect(b, L, y, w < 0.6 ? 0.6 : w, bar_h, bars[i].color, tip.data);
		if (total > 0)
			snprintf(tb, sizeof(tb), "%.3f (%.1f%%)", bars[i].value, 100.0 * bars[i].value / total);
		else if (unit[0] == '%')
			snprintf(tb, sizeof(tb), "%.1f%%", bars[i].value);
		else
			snprintf(tb, sizeof(tb), "%.3f", bars[i].value);
		lp_svg_text(b, L + (w < 0.6 ? 0.6 : w) + 4, y + 12, "start", 11, INK, tb);
	}
	lp_svg_end(b);
	lp_buf_release(&tip);
	return b->oom ? -1 : 0;
}

static int kernel_families(const struct lp_analysis *a, struct lp_buf *b)
{
	double busy[LP_FAM_COUNT] = { 0 };
	uint64_t count[LP_FAM_COUNT] = { 0 };
	struct bar bars[LP_FAM_COUNT];
	char notes[LP_FAM_COUNT][64];
	size_t i, j, n = 0;
	for (i = 0; i < a->kernels.n_rows; i++) {
		busy[a->kernels.rows[i].family] += a->kernels.rows[i].busy_ms;
		count[a->kernels.rows[i].family]++;
	}
	for (i = 0; i < LP_FAM_COUNT; i++) {
		if (busy[i] <= 0 && !count[i])
			continue;
		snprintf(notes[n], sizeof(notes[n]), "%llu distinct kernels", (unsigned long long)count[i]);
		bars[n].label = lp_kernel_family_name((enum lp_kernel_family)i);
		bars[n].value = busy[i];
		bars[n].color = family_color((enum lp_kernel_family)i);
		bars[n].note = notes[n];
		n++;
	}
	/* largest first; ties by family order (stable insertion sort) */
	for (i = 1; i < n; i++) {
		struct bar t = bars[i];
		char nt[64];
		memcpy(nt, notes[i], sizeof(nt));
		for (j = i; j > 0 && bars[j - 1].value < t.value; j--) {
			bars[j] = bars[j - 1];
			memcpy(notes[j], notes[j - 1], sizeof(nt));
			bars[j].note = notes[j];
		}
		bars[j] = t;
		memcpy(notes[j], nt, sizeof(nt));
		bars[j].note = notes[j];
	}
	return hbars(b, lp_figures[LP_FIG_KERNEL_FAMILIES].title,
		"busy_ms: each kernel's share of GPU busy time over the measured iterations (adds up to 100% under overlap)",
		bars, n, a->kernels.busy_ms, "ms", 130, 20);
}

static int top_kernels(const struct lp_analysis *a, struct lp_buf *b)
{
	struct bar bars[LP_FIG_TOP_KERNELS_N];
	char notes[LP_FIG_TOP_KERNELS_N][96];
	size_t i, n = a->kernels.n_rows < LP_FIG_TOP_KERNELS_N ? a->kernels.n_rows : LP_FIG_TOP_KERNELS_N;
	char sub[160];
	for (i = 0; i < n; i++) {
		const struct lp_kernel_row *r = &a->kernels.rows[i];
		snprintf(notes[i], sizeof(notes[i]), "%s, %llu calls, mean %.4f ms, total %.3f ms", lp_kernel_family_name(r->family),
			(unsigned long long)r->calls, r->mean_ms, r->total_ms);
		bars[i].label = r->name;
		bars[i].value = r->busy_ms;
		bars[i].color = family_color(r->family);
		bars[i].note = notes[i];
	}
	snprintf(sub, sizeof(sub), "top %zu of %zu kernels by busy_ms; colour = family; hover a name for the full name", n,
		a->kernels.n_rows);
	return hbars(b, lp_figures[LP_FIG_TOP_KERNELS].title, sub, bars, n, a->kernels.busy_ms, "ms", 330, 48);
}

/* ---- operators per stage ---- */

#define OPS_SHOWN 9

/* CPU runs: host times of nested ops overlap (a layer holds its ops), so they cannot be stacked:
 * the top ops of each stage as plain bars, their inclusive share of the stage's host time. */
static int operators_cpu(const struct lp_analysis *a, struct lp_buf *b)
{
	enum { PER_STAGE = 8, MAX_BARS = 64 };
	struct bar bars[MAX_BARS];
	char labels[MAX_BARS][96];
	char notes[MAX_BARS][96];
	size_t n = 0, i, j;
	for (i = 0; i < a->stages.n_stages && n < MAX_BARS; i++) {
		const struct lp_stage *st = &a->stages.stages[i];
		double total = st->host_ms.mean * (double)st->n_iters;
		size_t shown = 0;
		/* rows are by stage, then host_ms descending */
		for (j = 0; j < a->ops.n_rows && shown < PER_STAGE && n < MAX_BARS; j++) {
			const struct lp_op_row *r = &a->ops.rows[j];
			if (r->stage_index != (int32_t)i || total <= 0)
				continue;
			snprintf(labels[n], sizeof(labels[n]), "%s: %s", st->name, r->name);
			snprintf(notes[n], sizeof(notes[n]), "%.3f ms host over %llu calls", r->host_ms,
				(unsigned long long)r->calls);
			bars[n].label = labels[n];
			bars[n].value = 100.0 * r->host_ms / total;
			bars[n].color = palette[i % (N_PALETTE - 1)];
			bars[n].note = notes[n];
			n++;
			shown++;
		}
	}
	return hbars(b, lp_figures[LP_FIG_OPERATORS].title,
		"CPU run: host time per operator as a share of its stage's host time (inclusive: nested ops overlap, a "
		"layer holds its ops)", bars, n, 0, "% of the stage's host time", 220, 32);
}

static int operators(const struct lp_analysis *a, struct lp_buf *b)
{
	const struct lp_op_table *t = &a->ops;
	const int gpu = a->stages.have_gpu;
	const double W = 900, L = 110, R = 20, bar_h = 22, gap = 14, T = 44;
	double pw = W - L - R, H;
	const char *top[OPS_SHOWN];
	double top_v[OPS_SHOWN];
	size_t n_top = 0, i, j, k, n_stage = a->stages.n_stages;
	struct lp_buf tip = LP_BUF_INIT;
	char tb[128];

	/* the ops with the most (exclusive GPU / host) time over all stages get their own colours */
	for (i = 0; i < t->n_rows; i++) {
		const struct lp_op_row *r = &t->rows[i];
		double v = gpu ? r->gpu_excl_ms : r->host_ms;
		size_t pos;
		for (j = 0; j < n_top && strcmp(top[j], r->name); j++)
			;
		if (j < n_top) {
			top_v[j] += v;
		} else if (n_top < OPS_SHOWN) {
			top[n_top] = r->name;
			top_v[n_top++] = v;
			continue;
		} else {
			/* replace the smallest when larger */
			size_t m = 0;
			for (k = 1; k < n_top; k++)
				if (top_v[k] < top_v[m])
					m = k;
			if (v <= top_v[m])
				continue;
			top[m] = r->name;
			top_v[m] = v;
			j = m;
		}
		/* keep the list sorted by value, then name */
		for (pos = j; pos > 0 && (top_v[pos - 1] < top_v[pos] ||
					 (top_v[pos - 1] == top_v[pos] && strcmp(top[pos - 1], top[pos]) > 0)); pos--) {
			const char *tn = top[pos];
			double tv = top_v[pos];
			top[pos] = top[pos - 1];
			top_v[pos] = top_v[pos - 1];
			top[pos - 1] = tn;
			top_v[pos - 1] = tv;
		}
	}
	H = T + (double)n_stage * (bar_h + gap) + 30 + 20 * (double)((n_top + 2 + 3) / 4);
	lp_svg_begin(b, W, H, lp_figures[LP_FIG_OPERATORS].title);
	lp_svg_text(b, 10, 18, "start", 13, INK, lp_figures[LP_FIG_OPERATORS].title);
	caption(b, 10, 34, gpu ? "exclusive GPU kernel time per operator as a share of the stage's kernel time (innermost op "
				 "range; adds up to 100%)"
			       : "host time per operator as a share of the stage's host time (inclusive: nested ops overlap, so "
				 "bars can pass 100%)");
	for (i = 0; i < n_stage; i++) {
		const struct lp_stage *st = &a->stages.stages[i];
		double y = T + (double)i * (bar_h + gap), x = L;
		double total = gpu ? st->kernel_ms.mean * (double)st->n_iters : st->host_ms.mean * (double)st->n_iters;
		double shown = 0, other = 0;
		lp_svg_text_short(b, L - 8, y + 15, "end", 12, INK, st->name, 14);
		lp_svg_rect(b, L, y, pw, bar_h, "#f4f4f4", NULL);
		if (total <= 0)
			continue;
		for (k = 0; k < n_top; k++) {
			for (j = 0; j < t->n_rows; j++) {
				const struct lp_op_row *r = &t->rows[j];
				double v, w;
				if (r->stage_index != (int32_t)i || strcmp(r->name, top[k]))
					continue;
				v = gpu ? r->gpu_excl_ms : r->host_ms;
				if (v <= 0)
					continue;
				w = v / total * pw;
				if (x + w > L + pw)
					w = L + pw - x;
				lp_buf_reset(&tip);
				lp_buf_adds(&tip, r->name);
				lp_buf_addf(&tip, " (%s)\n%.3f ms %s, %.1f%% of the stage; %llu calls", st->name, v,
					gpu ? "exclusive GPU" : "host", 100.0 * v / total, (unsigned long long)r->calls);
				lp_svg_rect(b, x, y, w, bar_h, palette[k], tip.data);
				if (w > 44)
					lp_svg_text_short(b, x + 3, y + 15, "start", 10, ink_on(palette[k]), r->name, (size_t)((w - 6) / 6.5));
				x += w;
				shown += v;
			}
		}
		for (j = 0; j < t->n_rows; j++) {
			const struct lp_op_row *r = &t->rows[j];
			for (k = 0; k < n_top && strcmp(r->name, top[k]); k++)
				;
			if (r->stage_index == (int32_t)i && k == n_top)
				other += gpu ? r->gpu_excl_ms : r->host_ms;
		}
		if (other > 0 && x < L + pw) {
			double w = other / total * pw;
			if (x + w > L + pw)
				w = L + pw - x;
			snprintf(tb, sizeof(tb), "other operators (%s)\n%.3f ms, %.1f%% of the stage", st->name, other,
				100.0 * other / total);
			lp_svg_rect(b, x, y, w, bar_h, "#bab0ac", tb);
			x += w;
			shown += other;
		}
		if (gpu && total - shown > total * 1e-3 && x < L + pw) {
			snprintf(tb, sizeof(tb), "kernels outside every op range (%s)\n%.3f ms, %.1f%% of the stage", st->name,
				total - shown, 100.0 * (total - shown) / total);
			lp_svg_rect(b, x, y + 6, L + pw - x, bar_h - 12, "#dddddd", tb);
		}
	}
	/* legend */
	{
		double y0 = T + (double)n_stage * (bar_h + gap) + 8;
		for (k = 0; k < n_top + 2; k++) {
			const char *name = k < n_top ? top[k] : k == n_top ? "other operators" : gpu ? "outside op ranges" : NULL;
			const char *col = k < n_top ? palette[k] : k == n_top ? "#bab0ac" : "#dddddd";
			double x = L + (double)(k % 4) * (pw / 4), y = y0 + (double)(k / 4) * 20;
			if (!name)
				continue;
			lp_svg_rect(b, x, y, 12, 12, col, NULL);
			lp_svg_text_short(b, x + 16, y + 10, "start", 11, INK, name, 26);
		}
	}
	lp_svg_end(b);
	lp_buf_release(&tip);
	return b->oom ? -1 : 0;
}

/* ---- MFU / MBU ---- */

static int mfu(const struct lp_analysis *a, struct lp_buf *b)
{
	static const char *const what[4] = { "MFU (GPU busy)", "MBU (GPU busy)", "MFU (latency)", "MBU (latency)" };
	static const char *const col[4] = { "#4e79a7", "#f28e2b", "#a0bcd8", "#f7c594" };
	const double W = 900, L = 110, R = 120, T = 44, bar_h = 11, group_gap = 14;
	double pw = W - L - R, H = T + 3 * (4 * (bar_h + 2) + group_gap) + 60, max = 1.0, step, v;
	int k, m;
	char tb[256];
	for (k = 0; k < 3; k++) {
		const struct lp_num *n[4] = { &a->perf[k].mfu, &a->perf[k].mbu, &a->perf[k].mfu_lat, &a->perf[k].mbu_lat };
		for (m = 0; m < 4; m++)
			if (n[m]->valid && isfinite(n[m]->value) && n[m]->value > max)
				max = n[m]->value;
	}
	if (max > 1.0)
		max *= 1.05;
	lp_svg_begin(b, W, H, lp_figures[LP_FIG_MFU].title);
	lp_svg_text(b, 10, 18, "start", 13, INK, lp_figures[LP_FIG_MFU].title);
	snprintf(tb, sizeof(tb), "share of the peak (100%% = %.1f TFLOP/s dense, %.0f GB/s); over GPU busy time and over the "
				 "stage latency", a->peak.flops_valid ? a->peak.flops_per_s / 1e12 : 0.0,
		a->peak.bw_valid ? a->peak.bytes_per_s / 1e9 : 0.0);
	caption(b, 10, 34, tb);
	step = max > 1.0 ? lp_svg_nice_step(max * 100, 6) : 10;
	for (v = 0; v <= max * 100 + 1e-9; v += step) {
		double x = L + v / 100 / max * pw;
		lp_svg_line(b, x, T - 4, x, H - 36, GRID, 1, NULL);
		char pc[300];
		lp_svg_tick_label(tb, sizeof(tb), v);
		snprintf(pc, sizeof(pc), "%s%%", tb);
		lp_svg_text(b, x, H - 22, "middle", 11, MUTED, pc);
	}
	{
		double x = L + 1.0 / max * pw;
		lp_svg_line(b, x, T - 8, x, H - 36, INK, 1.5, "5,3");
		lp_svg_text(b, x, T - 10, "middle", 11, INK, "peak");
	}
	for (k = 0; k < 3; k++) {
		const struct lp_perf *p = &a->perf[k];
		const struct lp_num *n[4] = { &p->mfu, &p->mbu, &p->mfu_lat, &p->mbu_lat };
		double y0 = T + (double)k * (4 * (bar_h + 2) + group_gap);
		lp_svg_text(b, L - 8, y0 + 2 * (bar_h + 2) + 4, "end", 12, INK, p->label ? p->label : "");
		for (m = 0; m < 4; m++) {
			double y = y0 + (double)m * (bar_h + 2);
			if (!n[m]->valid || !isfinite(n[m]->value)) {
				snprintf(tb, sizeof(tb), "%s: n/a (%s)", what[m], n[m]->why);
				lp_svg_text_short(b, L + 4, y + 9, "start", 10, MUTED, tb, 110);
				continue;
			}
			snprintf(tb, sizeof(tb), "%s %s: %.2f%%", p->label ? p->label : "", what[m], 100.0 * n[m]->value);
			lp_svg_rect(b, L, y, n[m]->value / max * pw, bar_h, col[m], tb);
			snprintf(tb, sizeof(tb), "%.2f%%", 100.0 * n[m]->value);
			lp_svg_text(b, L + n[m]->value / max * pw + 4, y + 9, "start", 10, INK, tb);
		}
	}
	for (m = 0; m < 4; m++) {
		double x = L + (double)m * (pw / 4);
		lp_svg_rect(b, x, H - 14, 12, 10, col[m], NULL);
		lp_svg_text(b, x + 16, H - 5, "start", 11, INK, what[m]);
	}
	lp_svg_end(b);
	return b->oom ? -1 : 0;
}

/* ---- gap waterfall ---- */

/* One bar per item, each starting where the previous one ended (analyze/waterfall.h): the floor from
 * 0, kernel excesses and idle time adding, negative items taking back; the last bar ends at the
 * measured latency, marked by a line. */
static int waterfall(const struct lp_analysis *a, struct lp_buf *b)
{
	const struct lp_waterfall *w = waterfall_of(a);
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
	lp_svg_text(b, 10, 18, "start", 13, INK, tb);
	snprintf(tb, sizeof(tb), "latency %.4f ms = floor %.4f ms + what each kernel takes above its own floor + GPU idle; "
		"hover a bar for what usually fixes it", w->latency_ms, w->floor_ms);
	caption(b, 10, 34, tb);
	step = lp_svg_nice_step(hi - lo, 6);
	for (v = ceil(lo / step) * step; v <= hi + 1e-12; v += step) {
		double x = L + (v - lo) / (hi - lo) * pw;
		lp_svg_line(b, x, T - 4, x, H - 30, GRID, 1, NULL);
		char lab[80];
		lp_svg_tick_label(tb, sizeof(tb), v);
		snprintf(lab, sizeof(lab), "%.60s ms", tb);
		lp_svg_text(b, x, H - 16, "middle", 11, MUTED, lab);
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
		lp_svg_text_short(b, L - 8, y + 11, "end", 11, INK, it->label, 48);
		lp_svg_rect(b, xa, y, fmax(xb - xa, 0.5), bar_h, fill, tb);
		snprintf(tb, sizeof(tb), "%+.4f", it->ms);
		lp_svg_text(b, xb + 4, y + 11, "start", 10, INK, tb);
		cum = x1;
	}
	{
		double x = L + (w->latency_ms - lo) / (hi - lo) * pw;
		lp_svg_line(b, x, T - 8, x, H - 30, INK, 1.5, "5,3");
		lp_svg_text(b, x, T - 10, "middle", 11, INK, "measured");
	}
	lp_svg_end(b);
	return b->oom ? -1 : 0;
}

/* ---- roofline ---- */

static int roofline(const struct lp_analysis *a, struct lp_buf *b)
{
	const double W = 900, H = 540, L = 80, R = 30, T = 60, B = 70;
	double pw = W - L - R, ph = H - T - B;
	double peak = a->peak.flops_per_s, bw = a->peak.bytes_per_s, ridge = peak / bw;
	double xmin = ridge, xmax = ridge, ymin = peak, ymax = peak, e, lx0, lx1, ly0, ly1;
	size_t i;
	char tb[512];
	struct lp_buf tip = LP_BUF_INIT;
	for (i = 0; i < a->kernels.n_rows; i++) {
		const struct lp_kernel_ncu *m = &a->kernels.rows[i].ncu;
		if (!(m->joined && isfinite(m->intensity) && m->intensity > 0 && isfinite(m->achieved_flops_per_s) &&
		      m->achieved_flops_per_s > 0))
			continue;
		if (m->intensity < xmin) xmin = m->intensity;
		if (m->intensity > xmax) xmax = m->intensity;
		if (m->achieved_flops_per_s < ymin) ymin = m->achieved_flops_per_s;
		if (m->achieved_flops_per_s > ymax) ymax = m->achieved_flops_per_s;
	}
	lx0 = floor(log10(xmin)) - (log10(xmin) - floor(log10(xmin)) < 0.3 ? 1 : 0);
	lx1 = ceil(log10(xmax)) + (ceil(log10(xmax)) - log10(xmax) < 0.3 ? 1 : 0);
	ly0 = floor(log10(ymin)) - (log10(ymin) - floor(log10(ymin)) < 0.3 ? 1 : 0);
	ly1 = log10(ymax) + 0.35;   /* room above the compute roof for its label */
#define X(v) (L + (log10(v) - lx0) / (lx1 - lx0) * pw)
#define Y(v) (T + ph - (log10(v) - ly0) / (ly1 - ly0) * ph)
	lp_svg_begin(b, W, H, lp_figures[LP_FIG_ROOFLINE].title);
	lp_svg_text(b, 10, 18, "start", 13, INK, lp_figures[LP_FIG_ROOFLINE].title);
	snprintf(tb, sizeof(tb), "arithmetic intensity (FLOP per DRAM byte) vs achieved FLOP/s per launch, log-log; roofs: "
				 "%.0f GB/s and %.1f TFLOP/s (%s); dot area ~ busy time", bw / 1e9, peak / 1e12, a->peak.matched[0] ? a->peak.matched : "peaks");
	caption(b, 10, 34, tb);
	for (e = lx0; e <= lx1 + 1e-9; e += 1) {
		double x = L + (e - lx0) / (lx1 - lx0) * pw;
		lp_svg_line(b, x, T, x, T + ph, GRID, 1, NULL);
		snprintf(tb, sizeof(tb), "%g", pow(10, e));
		lp_svg_text(b, x, T + ph + 16, "middle", 11, MUTED, tb);
	}
	for (e = ly0; e <= ly1 + 1e-9; e += 1) {
		double y = T + ph - (e - ly0) / (ly1 - ly0) * ph;
		lp_svg_line(b, L, y, L + pw, y, GRID, 1, NULL);
		if (e >= 12)
			snprintf(tb, sizeof(tb), "%g T", pow(10, e - 12));
		else if (e >= 9)
			snprintf(tb, sizeof(tb), "%g G", pow(10, e - 9));
		else
			snprintf(tb, sizeof(tb), "%g M", pow(10, e - 6));
		lp_svg_text(b, L - 6, y + 4, "end", 11, MUTED, tb);
	}
	lp_svg_text(b, L + pw / 2, T + ph + 36, "middle", 11, MUTED, "arithmetic intensity (FLOP/byte)");
	lp_buf_adds(b, "<text x=\"0\" y=\"0\" transform=\"translate(16 ");
	lp_svg_num(b, T + ph / 2);
	lp_buf_adds(b, ") rotate(-90)\" text-anchor=\"middle\" font-size=\"11\" fill=\"" MUTED "\">achieved FLOP/s</text>\n");
	/* the roofs: bandwidth up to the ridge, then the compute peak (clipped to the axes) */
	{
		double xa = pow(10, lx0), ya = bw * xa;
		if (ya < pow(10, ly0)) {
			ya = pow(10, ly0);
			xa = ya / bw;
		}
		lp_svg_line(b, X(xa), Y(ya), X(ridge), Y(peak), "#e15759", 2, NULL);
		lp_svg_line(b, X(ridge), Y(peak), X(pow(10, lx1)), Y(peak), "#e15759", 2, NULL);
		lp_svg_line(b, X(ridge), T, X(ridge), T + ph, "#e15759", 1, "4,4");
		snprintf(tb, sizeof(tb), "ridge %.0f FLOP/B", ridge);
		lp_svg_text(b, X(ridge) + 4, T + ph - 6, "start", 11, "#e15759", tb);
		snprintf(tb, sizeof(tb), "peak %.1f TFLOP/s", peak / 1e12);
		lp_svg_text(b, L + pw - 4, Y(peak) - 6, "end", 11, "#e15759", tb);
		snprintf(tb, sizeof(tb), "%.0f GB/s", bw / 1e9);
		lp_svg_text(b, X(xa) + 6, Y(ya) - 8, "start", 11, "#e15759", tb);
	}
	/* largest first, so small dots stay on top */
	for (i = 0; i < a->kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &a->kernels.rows[i];
		const struct lp_kernel_ncu *m = &r->ncu;
		double rad;
		if (!(m->joined && isfinite(m->intensity) && m->intensity > 0 && isfinite(m->achieved_flops_per_s) &&
		      m->achieved_flops_per_s > 0))
			continue;
		rad = 3 + 9 * sqrt(r->share > 0 ? r->share : 0);
		lp_buf_reset(&tip);
		lp_buf_adds(&tip, r->name);
		lp_buf_addf(&tip, "\n%.2f FLOP/byte, %.3f TFLOP/s achieved; %s; %.3f ms busy (%.1f%%), %llu calls",
			m->intensity, m->achieved_flops_per_s / 1e12, lp_roofline_name(m->roofline), r->busy_ms,
			100.0 * r->share, (unsigned long long)r->calls);
		lp_buf_adds(b, "<g fill-opacity=\"0.75\">");
		lp_svg_circle(b, X(m->intensity), Y(m->achieved_flops_per_s), rad, family_color(r->family), tip.data);
		lp_buf_adds(b, "</g>\n");
	}
	/* family legend */
	{
		int f, shown = 0;
		for (f = 0; f < LP_FAM_COUNT; f++) {
			int used = 0;
			double x;
			for (i = 0; i < a->kernels.n_rows && !used; i++)
				used = (int)a->kernels.rows[i].family == f && a->kernels.rows[i].ncu.joined;
			if (!used)
				continue;
			x = L + (double)(shown % 6) * (pw / 6);
			lp_svg_circle(b, x + 5, H - 14 + 0 * shown, 5, family_color((enum lp_kernel_family)f), NULL);
			lp_svg_text(b, x + 14, H - 10, "start", 11, INK, lp_kernel_family_name((enum lp_kernel_family)f));
			shown++;
		}
	}
#undef X
#undef Y
	lp_svg_end(b);
	lp_buf_release(&tip);
	return b->oom ? -1 : 0;
}

int lp_figure_render(const struct lp_analysis *a, enum lp_figure_id id, struct lp_buf *out)
{
	if (!lp_figure_applies(a, id))
		return 0;
	switch (id) {
	case LP_FIG_TIMELINE: return timeline(a, 0, out);
	case LP_FIG_TIMELINE_ZOOM: return timeline(a, 1, out);
	case LP_FIG_STEP_LATENCY: return step_latency(a, out);
	case LP_FIG_KERNEL_FAMILIES: return kernel_families(a, out);
	case LP_FIG_TOP_KERNELS: return top_kernels(a, out);
	case LP_FIG_OPERATORS: return a->stages.have_gpu ? operators(a, out) : operators_cpu(a, out);
	case LP_FIG_MFU: return mfu(a, out);
	case LP_FIG_ROOFLINE: return roofline(a, out);
	case LP_FIG_WATERFALL: return waterfall(a, out);
	default: return 0;
	}
}

int lp_figures_md(const struct lp_analysis *a, struct lp_buf *out)
{
	int i, n = 0;
	for (i = 0; i < LP_FIG_COUNT; i++) {
		if (!lp_figure_applies(a, (enum lp_figure_id)i))
			continue;
		if (!n++)
			lp_buf_adds(out, "\n## Figures\n\nDrawn from this analysis (report.html shows them with the tables; "
					 "hover a mark there for names and numbers).\n\n");
		lp_buf_addf(out, "![%s](%s/%s)\n\n", lp_figures[i].title, LP_FIGURES_DIR, lp_figures[i].file);
	}
	return out->oom ? -1 : 0;
}

int lp_figures_write(const char *run_dir, const struct lp_analysis *a, struct lp_err *err)
{
	struct lp_buf dir = LP_BUF_INIT, path = LP_BUF_INIT, svg = LP_BUF_INIT;
	int i, rc = 0;
	if (lp_fs_join(&dir, run_dir, LP_FIGURES_DIR) < 0) {
		rc = lp_err_set(err, LP_EOTHER, "out of memory");
		goto done;
	}
	for (i = 0; i < LP_FIG_COUNT && rc == 0; i++) {
		lp_buf_reset(&svg);
		lp_fs_join(&path, dir.data, lp_figures[i].file);
		if (!lp_figure_applies(a, (enum lp_figure_id)i)) {
			if (lp_fs_is_file(path.data) && unlink(path.data) < 0)
				rc = lp_err_set(err, LP_EOTHER, "cannot remove '%s': %s", path.data, strerror(errno));
			continue;
		}
		if (lp_figure_render(a, (enum lp_figure_id)i, &svg) < 0 || svg.oom || path.oom) {
			rc = lp_err_set(err, LP_EOTHER, "out of memory drawing '%s'", lp_figures[i].file);
			break;
		}
		if (lp_fs_mkdir_p(dir.data, err) < 0 || lp_fs_write_atomic(path.data, svg.data, svg.len, err) < 0)
			rc = -1;
	}
done:
	lp_buf_release(&dir);
	lp_buf_release(&path);
	lp_buf_release(&svg);
	return rc;
}
