/* figures.c: the SVG figures of a run (see figures.h), drawn from the analysis with the
 * primitives of svg.h. Each figure is a fixed-size drawing (the HTML scales it down to the page);
 * every value shown is also in the tables of the reports, the figures add no number of their own.
 * This file holds the list, which figure applies, the shared colours and labels (figure_kit.h) and
 * the writer; the drawings are in figures_time.c (timelines, step latency, waterfall) and
 * figures_kernels.c (kernel and operator bars, MFU/MBU, roofline). */
#include "report/figures.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/fs.h"
#include "report/figure_kit.h"
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
const char *const lp_fig_palette[LP_FIG_N_PALETTE] = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac" };

const char *lp_fig_family_color(enum lp_kernel_family f)
{
	static const char *const c[LP_FAM_COUNT] = { "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759",
						     "#76b7b2", "#9c755f", "#ff9da7", "#edc948", "#bab0ac" };
	return (int)f >= 0 && f < LP_FAM_COUNT ? c[f] : "#bab0ac";
}

/* A colour from a name (FNV-1a over Tableau 20 without its greys): the same range name gets the
 * same colour in every timeline. */
const char *lp_fig_name_color(const char *s)
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
const char *lp_fig_ink_on(const char *fill)
{
	unsigned r = 0, g = 0, bl = 0;
	if (!fill || strlen(fill) != 7 || sscanf(fill + 1, "%2x%2x%2x", &r, &g, &bl) != 3)
		return LP_FIG_INK;
	return 0.2126 * r + 0.7152 * g + 0.0722 * bl > 150 ? LP_FIG_INK : "#ffffff";
}

const struct lp_stage *lp_fig_decode_with_steps(const struct lp_analysis *a)
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

int lp_fig_roofline_points(const struct lp_analysis *a)
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
const struct lp_waterfall *lp_fig_waterfall_of(const struct lp_analysis *a)
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
		return lp_fig_decode_with_steps(a) != NULL;
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
		return a->peak.flops_valid && a->peak.bw_valid && lp_fig_roofline_points(a) > 0;
	case LP_FIG_WATERFALL:
		return lp_fig_waterfall_of(a) != NULL;
	default:
		return 0;
	}
}

/* A short duration for labels: "812 ns", "12.5 us", "3.250 ms". */
void lp_fig_fmt_ns(char *b, size_t cap, double ns)
{
	if (ns < 1e3)
		snprintf(b, cap, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(b, cap, "%.1f us", ns / 1e3);
	else
		snprintf(b, cap, "%.3f ms", ns / 1e6);
}

void lp_fig_caption(struct lp_buf *b, double x, double y, const char *text)
{
	lp_svg_text(b, x, y, "start", 11, LP_FIG_MUTED, text);
}

int lp_figure_render(const struct lp_analysis *a, enum lp_figure_id id, struct lp_buf *out)
{
	if (!lp_figure_applies(a, id))
		return 0;
	switch (id) {
	case LP_FIG_TIMELINE: return lp_fig_timeline(a, 0, out);
	case LP_FIG_TIMELINE_ZOOM: return lp_fig_timeline(a, 1, out);
	case LP_FIG_STEP_LATENCY: return lp_fig_step_latency(a, out);
	case LP_FIG_KERNEL_FAMILIES: return lp_fig_kernel_families(a, out);
	case LP_FIG_TOP_KERNELS: return lp_fig_top_kernels(a, out);
	case LP_FIG_OPERATORS: return a->stages.have_gpu ? lp_fig_operators(a, out) : lp_fig_operators_cpu(a, out);
	case LP_FIG_MFU: return lp_fig_mfu(a, out);
	case LP_FIG_ROOFLINE: return lp_fig_roofline(a, out);
	case LP_FIG_WATERFALL: return lp_fig_waterfall(a, out);
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
		rc = lp_oom(err);
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
			rc = lp_oom(err);
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
