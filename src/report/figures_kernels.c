/* figures_kernels.c: the figures of where GPU time goes: kernel families and top
 * kernels (horizontal bars), operators per stage, MFU/MBU against the peaks, and the roofline (see figures.h; shared helpers in figure_kit.h). */
#include "report/figure_kit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/svg.h"

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
	lp_svg_text(b, 10, 18, "start", 13, LP_FIG_INK, title);
	if (subtitle)
		lp_fig_caption(b, 10, 34, subtitle);
	step = lp_svg_nice_step(max, 6);
	for (v = 0; v <= max + 1e-12; v += step) {
		double x = L + v / max * pw;
		lp_svg_line(b, x, T - 4, x, H - 30, LP_FIG_GRID, 1, NULL);
		lp_svg_tick_label(tb, sizeof(tb), v);
		lp_svg_text(b, x, H - 16, "middle", 11, LP_FIG_MUTED, tb);
	}
	lp_svg_text(b, L + pw / 2, H - 3, "middle", 11, LP_FIG_MUTED, unit);
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
		lp_svg_text_short(b, L - 6, y + 12, "end", 11, LP_FIG_INK, bars[i].label, label_chars);
		lp_svg_rect(b, L, y, w < 0.6 ? 0.6 : w, bar_h, bars[i].color, tip.data);
		if (total > 0)
			snprintf(tb, sizeof(tb), "%.3f (%.1f%%)", bars[i].value, 100.0 * bars[i].value / total);
		else if (unit[0] == '%')
			snprintf(tb, sizeof(tb), "%.1f%%", bars[i].value);
		else
			snprintf(tb, sizeof(tb), "%.3f", bars[i].value);
		lp_svg_text(b, L + (w < 0.6 ? 0.6 : w) + 4, y + 12, "start", 11, LP_FIG_INK, tb);
	}
	lp_svg_end(b);
	lp_buf_release(&tip);
	return b->oom ? -1 : 0;
}

int lp_fig_kernel_families(const struct lp_analysis *a, struct lp_buf *b)
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
		bars[n].label = lp_kname_family_name((enum lp_kernel_family)i);
		bars[n].value = busy[i];
		bars[n].color = lp_fig_family_color((enum lp_kernel_family)i);
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

int lp_fig_top_kernels(const struct lp_analysis *a, struct lp_buf *b)
{
	struct bar bars[LP_FIG_TOP_KERNELS_N];
	char notes[LP_FIG_TOP_KERNELS_N][96];
	size_t i, n = a->kernels.n_rows < LP_FIG_TOP_KERNELS_N ? a->kernels.n_rows : LP_FIG_TOP_KERNELS_N;
	char sub[160];
	for (i = 0; i < n; i++) {
		const struct lp_kernel_row *r = &a->kernels.rows[i];
		snprintf(notes[i], sizeof(notes[i]), "%s, %llu calls, mean %.4f ms, total %.3f ms", lp_kname_family_name(r->family),
			(unsigned long long)r->calls, r->mean_ms, r->total_ms);
		bars[i].label = r->name;
		bars[i].value = r->busy_ms;
		bars[i].color = lp_fig_family_color(r->family);
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
int lp_fig_operators_cpu(const struct lp_analysis *a, struct lp_buf *b)
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
			bars[n].color = lp_fig_palette[i % (LP_FIG_N_PALETTE - 1)];
			bars[n].note = notes[n];
			n++;
			shown++;
		}
	}
	return hbars(b, lp_figures[LP_FIG_OPERATORS].title,
		"CPU run: host time per operator as a share of its stage's host time (inclusive: nested ops overlap, a "
		"layer holds its ops)", bars, n, 0, "% of the stage's host time", 220, 32);
}

int lp_fig_operators(const struct lp_analysis *a, struct lp_buf *b)
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
	lp_svg_text(b, 10, 18, "start", 13, LP_FIG_INK, lp_figures[LP_FIG_OPERATORS].title);
	lp_fig_caption(b, 10, 34, gpu ? "exclusive GPU kernel time per operator as a share of the stage's kernel time (innermost op "
				 "range; adds up to 100%)"
			       : "host time per operator as a share of the stage's host time (inclusive: nested ops overlap, so "
				 "bars can pass 100%)");
	for (i = 0; i < n_stage; i++) {
		const struct lp_stage *st = &a->stages.stages[i];
		double y = T + (double)i * (bar_h + gap), x = L;
		double total = gpu ? st->kernel_ms.mean * (double)st->n_iters : st->host_ms.mean * (double)st->n_iters;
		double shown = 0, other = 0;
		lp_svg_text_short(b, L - 8, y + 15, "end", 12, LP_FIG_INK, st->name, 14);
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
				lp_svg_rect(b, x, y, w, bar_h, lp_fig_palette[k], tip.data);
				if (w > 44)
					lp_svg_text_short(b, x + 3, y + 15, "start", 10, lp_fig_ink_on(lp_fig_palette[k]), r->name, (size_t)((w - 6) / 6.5));
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
			const char *col = k < n_top ? lp_fig_palette[k] : k == n_top ? "#bab0ac" : "#dddddd";
			double x = L + (double)(k % 4) * (pw / 4), y = y0 + (double)(k / 4) * 20;
			if (!name)
				continue;
			lp_svg_rect(b, x, y, 12, 12, col, NULL);
			lp_svg_text_short(b, x + 16, y + 10, "start", 11, LP_FIG_INK, name, 26);
		}
	}
	lp_svg_end(b);
	lp_buf_release(&tip);
	return b->oom ? -1 : 0;
}

/* ---- MFU / MBU ---- */

int lp_fig_mfu(const struct lp_analysis *a, struct lp_buf *b)
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
	lp_svg_text(b, 10, 18, "start", 13, LP_FIG_INK, lp_figures[LP_FIG_MFU].title);
	snprintf(tb, sizeof(tb), "share of the peak (100%% = %.1f TFLOP/s dense, %.0f GB/s); over GPU busy time and over the "
				 "stage latency", a->peak.flops_valid ? a->peak.flops_per_s / 1e12 : 0.0,
		a->peak.bw_valid ? a->peak.bytes_per_s / 1e9 : 0.0);
	lp_fig_caption(b, 10, 34, tb);
	step = max > 1.0 ? lp_svg_nice_step(max * 100, 6) : 10;
	for (v = 0; v <= max * 100 + 1e-9; v += step) {
		double x = L + v / 100 / max * pw;
		lp_svg_line(b, x, T - 4, x, H - 36, LP_FIG_GRID, 1, NULL);
		char pc[300];
		lp_svg_tick_label(tb, sizeof(tb), v);
		snprintf(pc, sizeof(pc), "%s%%", tb);
		lp_svg_text(b, x, H - 22, "middle", 11, LP_FIG_MUTED, pc);
	}
	{
		double x = L + 1.0 / max * pw;
		lp_svg_line(b, x, T - 8, x, H - 36, LP_FIG_INK, 1.5, "5,3");
		lp_svg_text(b, x, T - 10, "middle", 11, LP_FIG_INK, "peak");
	}
	for (k = 0; k < 3; k++) {
		const struct lp_perf *p = &a->perf[k];
		const struct lp_num *n[4] = { &p->mfu, &p->mbu, &p->mfu_lat, &p->mbu_lat };
		double y0 = T + (double)k * (4 * (bar_h + 2) + group_gap);
		lp_svg_text(b, L - 8, y0 + 2 * (bar_h + 2) + 4, "end", 12, LP_FIG_INK, p->label ? p->label : "");
		for (m = 0; m < 4; m++) {
			double y = y0 + (double)m * (bar_h + 2);
			if (!n[m]->valid || !isfinite(n[m]->value)) {
				snprintf(tb, sizeof(tb), "%s: n/a (%s)", what[m], n[m]->why);
				lp_svg_text_short(b, L + 4, y + 9, "start", 10, LP_FIG_MUTED, tb, 110);
				continue;
			}
			snprintf(tb, sizeof(tb), "%s %s: %.2f%%", p->label ? p->label : "", what[m], 100.0 * n[m]->value);
			lp_svg_rect(b, L, y, n[m]->value / max * pw, bar_h, col[m], tb);
			snprintf(tb, sizeof(tb), "%.2f%%", 100.0 * n[m]->value);
			lp_svg_text(b, L + n[m]->value / max * pw + 4, y + 9, "start", 10, LP_FIG_INK, tb);
		}
	}
	for (m = 0; m < 4; m++) {
		double x = L + (double)m * (pw / 4);
		lp_svg_rect(b, x, H - 14, 12, 10, col[m], NULL);
		lp_svg_text(b, x + 16, H - 5, "start", 11, LP_FIG_INK, what[m]);
	}
	lp_svg_end(b);
	return b->oom ? -1 : 0;
}

/* ---- roofline ---- */

int lp_fig_roofline(const struct lp_analysis *a, struct lp_buf *b)
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
	lp_svg_text(b, 10, 18, "start", 13, LP_FIG_INK, lp_figures[LP_FIG_ROOFLINE].title);
	snprintf(tb, sizeof(tb), "arithmetic intensity (FLOP per DRAM byte) vs achieved FLOP/s per launch, log-log; roofs: "
				 "%.0f GB/s and %.1f TFLOP/s (%s); dot area ~ busy time", bw / 1e9, peak / 1e12, a->peak.matched[0] ? a->peak.matched : "peaks");
	lp_fig_caption(b, 10, 34, tb);
	for (e = lx0; e <= lx1 + 1e-9; e += 1) {
		double x = L + (e - lx0) / (lx1 - lx0) * pw;
		lp_svg_line(b, x, T, x, T + ph, LP_FIG_GRID, 1, NULL);
		snprintf(tb, sizeof(tb), "%g", pow(10, e));
		lp_svg_text(b, x, T + ph + 16, "middle", 11, LP_FIG_MUTED, tb);
	}
	for (e = ly0; e <= ly1 + 1e-9; e += 1) {
		double y = T + ph - (e - ly0) / (ly1 - ly0) * ph;
		lp_svg_line(b, L, y, L + pw, y, LP_FIG_GRID, 1, NULL);
		if (e >= 12)
			snprintf(tb, sizeof(tb), "%g T", pow(10, e - 12));
		else if (e >= 9)
			snprintf(tb, sizeof(tb), "%g G", pow(10, e - 9));
		else
			snprintf(tb, sizeof(tb), "%g M", pow(10, e - 6));
		lp_svg_text(b, L - 6, y + 4, "end", 11, LP_FIG_MUTED, tb);
	}
	lp_svg_text(b, L + pw / 2, T + ph + 36, "middle", 11, LP_FIG_MUTED, "arithmetic intensity (FLOP/byte)");
	lp_buf_adds(b, "<text x=\"0\" y=\"0\" transform=\"translate(16 ");
	lp_svg_num(b, T + ph / 2);
	lp_buf_adds(b, ") rotate(-90)\" text-anchor=\"middle\" font-size=\"11\" fill=\"" LP_FIG_MUTED "\">achieved FLOP/s</text>\n");
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
		lp_svg_circle(b, X(m->intensity), Y(m->achieved_flops_per_s), rad, lp_fig_family_color(r->family), tip.data);
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
			lp_svg_circle(b, x + 5, H - 14 + 0 * shown, 5, lp_fig_family_color((enum lp_kernel_family)f), NULL);
			lp_svg_text(b, x + 14, H - 10, "start", 11, LP_FIG_INK, lp_kname_family_name((enum lp_kernel_family)f));
			shown++;
		}
	}
#undef X
#undef Y
	lp_svg_end(b);
	lp_buf_release(&tip);
	return b->oom ? -1 : 0;
}
