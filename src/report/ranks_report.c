/* ranks_report.c: report stage, the per-rank view (analyze/ranks.h) -> the "Ranks" section of
 * report.md and report.html and summary.json's "ranks" object. The tables are built once as
 * cells (text, or a number with its decimals) and written as Markdown or HTML. */
#include "report/ranks_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "report/md.h"
#include "report/svg.h"

#define MAX_COLS 16

struct cell {
	size_t off;                  /* text in tbl.text */
	int num;                     /* 1: numeric (right-aligned, sorted by v) */
	double v;
};

struct tbl {
	const char *const *cols;
	size_t n_cols;
	struct lp_buf text;
	struct cell *cells;
	size_t n_cells, cap;
	int oom;
};

static void tbl_init(struct tbl *t, const char *const *cols, size_t n)
{
	struct lp_buf empty = LP_BUF_INIT;
	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->n_cols = n;
	t->text = empty;
}

static void tbl_release(struct tbl *t)
{
	lp_buf_release(&t->text);
	free(t->cells);
}

static struct cell *cell_new(struct tbl *t)
{
	struct cell *c = LP_ARRAY_PUSH(t->cells, t->n_cells, t->cap, NULL);
	if (!c) {
		t->oom = 1;
		return NULL;
	}
	c->off = t->text.len;
	return c;
}

static void cell_end(struct tbl *t)
{
	if (lp_buf_addc(&t->text, '\0') < 0)
		t->oom = 1;
}

static void c_text(struct tbl *t, const char *s)
{
	if (!cell_new(t))
		return;
	if (lp_buf_adds(&t->text, s ? s : "") < 0)
		t->oom = 1;
	cell_end(t);
}

static void c_num(struct tbl *t, double v, int decimals)
{
	struct cell *c = cell_new(t);
	if (!c)
		return;
	c->num = 1;
	c->v = v;
	if ((isfinite(v) ? lp_buf_addf(&t->text, "%.*f", decimals, v) : lp_buf_adds(&t->text, "n/a")) < 0)
		t->oom = 1;
	cell_end(t);
}

static void c_u(struct tbl *t, uint64_t v)
{
	struct cell *c = cell_new(t);
	if (!c)
		return;
	c->num = 1;
	c->v = (double)v;
	if (lp_buf_addf(&t->text, "%" PRIu64, v) < 0)
		t->oom = 1;
	cell_end(t);
}

static int tbl_md(const struct tbl *t, struct lp_buf *out)
{
	char align[MAX_COLS + 1];
	const char *row[MAX_COLS];
	size_t i, j;
	if (t->oom)
		return -1;
	for (j = 0; j < t->n_cols; j++)
		align[j] = t->n_cells >= t->n_cols && t->cells[j].num ? 'r' : 'l';
	align[t->n_cols] = '\0';
	if (lp_md_header(out, t->n_cols, t->cols, align) < 0)
		return -1;
	for (i = 0; i + t->n_cols <= t->n_cells; i += t->n_cols) {
		for (j = 0; j < t->n_cols; j++)
			row[j] = t->text.data + t->cells[i + j].off;
		if (lp_md_row(out, t->n_cols, row, 60) < 0)
			return -1;
	}
	return lp_buf_addc(out, '\n');
}

static int tbl_html(const struct tbl *t, struct lp_buf *out)
{
	size_t i, j;
	if (t->oom)
		return -1;
	lp_buf_adds(out, "<div class=\"scroll\"><table class=\"sortable\"><thead><tr>");
	for (j = 0; j < t->n_cols; j++) {
		int num = t->n_cells >= t->n_cols && t->cells[j].num;
		lp_buf_adds(out, num ? "<th class=\"n\">" : "<th>");
		lp_xml_text(out, t->cols[j]);
		lp_buf_adds(out, "</th>");
	}
	lp_buf_adds(out, "</tr></thead><tbody>\n");
	for (i = 0; i + t->n_cols <= t->n_cells; i += t->n_cols) {
		lp_buf_adds(out, "<tr>");
		for (j = 0; j < t->n_cols; j++) {
			const struct cell *c = &t->cells[i + j];
			const char *s = t->text.data + c->off;
			if (c->num && isfinite(c->v))
				lp_buf_addf(out, "<td class=\"n\" data-v=\"%.9g\">", c->v);
			else
				lp_buf_adds(out, c->num ? "<td class=\"n na\">" : "<td>");
			lp_xml_text(out, s);
			lp_buf_adds(out, "</td>");
		}
		lp_buf_adds(out, "</tr>\n");
	}
	lp_buf_adds(out, "</tbody></table></div>\n");
	return out->oom ? -1 : 0;
}

/* ---- the three tables ---- */

static const char *const rank_cols[] = { "rank", "processes", "host", "devices", "kernels", "comm kernels",
	"comm kernel ms", "collectives", "wait ms" };
static const char *const merged_cols[] = { "stage", "ranks", "iterations", "latency ms", "skew ms (mean)",
	"skew ms (max)", "slowest rank", "comm ms", "overlapped ms", "exposed ms", "exposed %", "wait ms" };
static const char *const per_cols[] = { "rank", "stage", "iterations", "latency ms", "GPU busy ms", "host ms",
	"kernels", "comm ms", "compute ms", "exposed ms", "wait ms" };

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void fill_ranks(const struct lp_rank_view *v, struct tbl *t)
{
	size_t i, j;
	for (i = 0; i < v->n_ranks; i++) {
		const struct lp_rank *rk = &v->ranks[i];
		struct lp_buf s = LP_BUF_INIT;
		c_u(t, (uint64_t)rk->rank);
		for (j = 0; j < rk->n_pids; j++)
			lp_buf_addf(&s, "%s%" PRIu32, j ? ", " : "pid ", rk->pids[j]);
		c_text(t, s.data);
		c_text(t, rk->host);
		lp_buf_reset(&s);
		for (j = 0; j < rk->n_devices; j++)
			lp_buf_addf(&s, "%s%d", j ? ", " : "GPU ", (int)rk->devices[j]);
		if (*rk->visible_devices)
			lp_buf_addf(&s, "%sCUDA_VISIBLE_DEVICES=%s", s.len ? " of " : "", rk->visible_devices);
		c_text(t, s.len ? s.data : "none");
		if (s.oom)
			t->oom = 1;
		lp_buf_release(&s);
		c_u(t, rk->kernels);
		c_u(t, rk->comm_kernels);
		c_num(t, rk->comm_kernel_ms, 3);
		c_u(t, rk->collectives);
		c_num(t, rk->wait_ms, 3);
	}
}

static void fill_merged(const struct lp_rank_view *v, struct tbl *t)
{
	size_t i;
	for (i = 0; i < v->n_merged; i++) {
		const struct lp_rank_merged *m = &v->merged[i];
		char buf[160];
		if (m->step_of) {   /* the decode steps: every step is an instance */
			snprintf(buf, sizeof(buf), "%s (steps of %s)", m->name, m->step_of);
			c_text(t, buf);
		} else {
			c_text(t, m->name);
		}
		c_u(t, m->n_ranks);
		if (m->iters_max > m->iters) {
			snprintf(buf, sizeof(buf), "%zu (up to %zu)", m->iters, m->iters_max);
			c_text(t, buf);
		} else {
			c_u(t, m->iters);
		}
		c_num(t, m->lat_mean_ms, 3);
		c_num(t, m->skew_mean_ms, 3);
		c_num(t, m->skew_max_ms, 3);
		if (m->slowest_rank >= 0) {
			snprintf(buf, sizeof(buf), "%d (%zu of %zu)", (int)m->slowest_rank, m->slowest_count, m->iters);
			c_text(t, buf);
		} else {
			c_text(t, "n/a");
		}
		c_num(t, m->comm_ms, 3);
		c_num(t, m->overlap_ms, 3);
		c_num(t, m->exposed_ms, 3);
		c_num(t, 100.0 * m->exposed_frac, 1);
		c_num(t, m->wait_ms, 3);
	}
}

static void fill_per_rank(const struct lp_rank_view *v, struct tbl *t)
{
	size_t i, j;
	for (i = 0; i < v->n_ranks; i++) {
		const struct lp_rank *rk = &v->ranks[i];
		for (j = 0; j < rk->n_rstages; j++) {
			const struct lp_rank_stage *s = &rk->rstages[j];
			c_u(t, (uint64_t)rk->rank);
			c_text(t, s->name);
			c_u(t, s->n_iters);
			c_num(t, s->lat_ms, 3);
			c_num(t, s->gpu_ms, 3);
			c_num(t, s->host_ms, 3);
			c_num(t, s->kernels, 1);
			c_num(t, s->comm_ms, 3);
			c_num(t, s->compute_ms, 3);
			c_num(t, s->exposed_ms, 3);
			c_num(t, s->wait_ms, 3);
		}
	}
}

int lp_ranks_report_wanted(const struct lp_rank_view *v)
{
	return v && v->n_ranks > 1;
}

static int intro(const struct lp_rank_view *v, struct lp_buf *out)
{
	lp_buf_addf(out, "%zu ranks (rank from %s", v->n_ranks, v->rank_source ? v->rank_source : "?");
	if (v->world_size > 0)
		lp_buf_addf(out, ", world size %d", (int)v->world_size);
	lp_buf_adds(out, ")");
	if (v->n_not_ranks)
		lp_buf_addf(out, "; %zu other process%s without a rank (launchers) left out", v->n_not_ranks,
			v->n_not_ranks == 1 ? "" : "es");
	lp_buf_adds(out, ". Iteration k of a stage is lined up across the ranks; times are per iteration; "
		"exposed = communication no compute of the rank hides; wait = time in collectives beyond the "
		"fastest rank's (docs/ranks.md).");
	if (v->collectives_mismatch)
		lp_buf_adds(out, " The ranks issued different numbers of collectives: the first ones common to all "
			"were lined up.");
	if (v->steps_unrecorded)
		lp_buf_addf(out, " Sampled trace (Tracing mode): %zu of the %zu decode steps have no kernels in the trace. "
			"The steps' kernel columns (GPU busy, kernels, comm, compute, overlapped, exposed, wait) are means "
			"over the recorded ones, and a stage holding steps adds each unrecorded one at those means "
			"(estimates); the Ranks table counts the kernels recorded.", v->steps_unrecorded, v->steps);
	return out->oom ? -1 : 0;
}

typedef int (*emit_fn)(const struct tbl *, struct lp_buf *);

static void heading(struct lp_buf *out, const char *open, const char *title, const char *close)
{
	lp_buf_adds(out, open);
	lp_buf_adds(out, title);
	lp_buf_adds(out, close);
}

static int tables(const struct lp_rank_view *v, struct lp_buf *out, emit_fn emit, const char *h_open,
	const char *h_end)
{
	struct tbl t;
	int rc;
	tbl_init(&t, merged_cols, N(merged_cols));
	fill_merged(v, &t);
	heading(out, h_open, "Stages across ranks", h_end);
	rc = emit(&t, out);
	tbl_release(&t);
	if (rc < 0)
		return -1;
	tbl_init(&t, rank_cols, N(rank_cols));
	fill_ranks(v, &t);
	heading(out, h_open, "Ranks", h_end);
	rc = emit(&t, out);
	tbl_release(&t);
	if (rc < 0)
		return -1;
	tbl_init(&t, per_cols, N(per_cols));
	fill_per_rank(v, &t);
	heading(out, h_open, "Per-rank stages", h_end);
	rc = emit(&t, out);
	tbl_release(&t);
	return rc < 0 || out->oom ? -1 : 0;
}

int lp_ranks_md(const struct lp_rank_view *v, struct lp_buf *out)
{
	if (!lp_ranks_report_wanted(v))
		return 0;
	lp_buf_adds(out, "## Ranks\n\n");
	if (intro(v, out) < 0)
		return -1;
	lp_buf_adds(out, "\n\n");
	return tables(v, out, tbl_md, "### ", "\n\n");
}

int lp_ranks_html(const struct lp_rank_view *v, struct lp_buf *out)
{
	if (!lp_ranks_report_wanted(v))
		return 0;
	lp_buf_adds(out, "<h2 id=\"ranks\">Ranks</h2>\n<p>");
	{
		struct lp_buf s = LP_BUF_INIT;
		if (intro(v, &s) < 0) {
			lp_buf_release(&s);
			return -1;
		}
		lp_xml_text(out, s.data);
		lp_buf_release(&s);
	}
	lp_buf_adds(out, "</p>\n");
	return tables(v, out, tbl_html, "<h3>", "</h3>\n");
}

/* ---- summary.json ---- */

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static int set(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *rank_json(const struct lp_rank *rk)
{
	json_t *o = json_object(), *a, *st;
	size_t j, k;
	int bad = !o;
	if (bad)
		return NULL;
	bad |= set(o, "rank", json_integer(rk->rank));
	bad |= set(o, "local_rank", rk->local_rank >= 0 ? json_integer(rk->local_rank) : json_null());
	bad |= set(o, "world_size", rk->world_size >= 0 ? json_integer(rk->world_size) : json_null());
	bad |= set(o, "rank_source", json_string(rk->rank_source));
	bad |= set(o, "host", json_string(rk->host));
	bad |= set(o, "cuda_visible_devices", json_string(rk->visible_devices));
	bad |= set(o, "pids", a = json_array());
	for (j = 0; a && j < rk->n_pids; j++)
		bad |= json_array_append_new(a, json_integer(rk->pids[j]));
	bad |= set(o, "devices", a = json_array());
	for (j = 0; a && j < rk->n_devices; j++)
		bad |= json_array_append_new(a, json_integer(rk->devices[j]));
	bad |= set(o, "kernels", json_integer((json_int_t)rk->kernels));
	bad |= set(o, "measured_kernels", json_integer((json_int_t)rk->measured_kernels));
	bad |= set(o, "comm_kernels", json_integer((json_int_t)rk->comm_kernels));
	bad |= set(o, "comm_kernel_ms", num(rk->comm_kernel_ms));
	bad |= set(o, "collectives", json_integer((json_int_t)rk->collectives));
	bad |= set(o, "wait_ms", num(rk->wait_ms));
	bad |= set(o, "stages", st = json_array());
	for (j = 0; st && j < rk->n_rstages; j++) {
		const struct lp_rank_stage *s = &rk->rstages[j];
		json_t *so = json_object(), *lat = json_array();
		if (!so || !lat) {
			json_decref(so);
			json_decref(lat);
			bad = 1;
			break;
		}
		bad |= set(so, "name", json_string(s->name));
		bad |= set(so, "domain", json_string(s->domain));
		if (s->step_of)
			bad |= set(so, "steps_of", json_string(s->step_of));
		bad |= set(so, "iterations", json_integer((json_int_t)s->n_iters));
		bad |= set(so, "latency_ms", num(s->lat_ms));
		bad |= set(so, "gpu_busy_ms", num(s->gpu_ms));
		bad |= set(so, "host_ms", num(s->host_ms));
		bad |= set(so, "kernels_per_iteration", num(s->kernels));
		bad |= set(so, "comm_ms", num(s->comm_ms));
		bad |= set(so, "compute_ms", num(s->compute_ms));
		bad |= set(so, "overlap_ms", num(s->overlap_ms));
		bad |= set(so, "exposed_ms", num(s->exposed_ms));
		bad |= set(so, "wait_ms", num(s->wait_ms));
		bad |= set(so, "comm_kernels", json_integer((json_int_t)s->comm_kernels));
		for (k = 0; k < s->n_iters; k++)
			bad |= json_array_append_new(lat, num(s->lat_iter_ms[k]));
		bad |= set(so, "latency_by_iteration_ms", lat);
		bad |= json_array_append_new(st, so);
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *merged_json(const struct lp_rank_merged *m)
{
	json_t *o = json_object(), *sl = json_array(), *sk = json_array();
	size_t k;
	int bad = !o || !sl || !sk;
	if (bad) {
		json_decref(o);
		json_decref(sl);
		json_decref(sk);
		return NULL;
	}
	bad |= set(o, "name", json_string(m->name));
	bad |= set(o, "domain", json_string(m->domain));
	if (m->step_of)
		bad |= set(o, "steps_of", json_string(m->step_of));
	bad |= set(o, "ranks", json_integer((json_int_t)m->n_ranks));
	bad |= set(o, "iterations", json_integer((json_int_t)m->iters));
	bad |= set(o, "iterations_max", json_integer((json_int_t)m->iters_max));
	bad |= set(o, "latency_ms", num(m->lat_mean_ms));
	bad |= set(o, "skew_mean_ms", num(m->skew_mean_ms));
	bad |= set(o, "skew_max_ms", num(m->skew_max_ms));
	bad |= set(o, "skew_max_iteration", json_integer((json_int_t)m->skew_max_iter));
	bad |= set(o, "slowest_rank", m->slowest_rank >= 0 ? json_integer(m->slowest_rank) : json_null());
	bad |= set(o, "slowest_count", json_integer((json_int_t)m->slowest_count));
	for (k = 0; k < m->iters; k++) {
		bad |= json_array_append_new(sl, json_integer(m->slowest_of[k]));
		bad |= json_array_append_new(sk, num(m->skew_ms[k]));
	}
	bad |= set(o, "slowest_rank_by_iteration", sl);
	bad |= set(o, "skew_by_iteration_ms", sk);
	bad |= set(o, "comm_ms", num(m->comm_ms));
	bad |= set(o, "compute_ms", num(m->compute_ms));
	bad |= set(o, "overlap_ms", num(m->overlap_ms));
	bad |= set(o, "exposed_ms", num(m->exposed_ms));
	bad |= set(o, "exposed_frac", num(m->exposed_frac));
	bad |= set(o, "wait_ms", num(m->wait_ms));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *lp_ranks_json(const struct lp_rank_view *v)
{
	json_t *o = json_object(), *a, *m;
	size_t i;
	int bad = !o;
	if (bad)
		return NULL;
	bad |= set(o, "n_ranks", json_integer((json_int_t)v->n_ranks));
	bad |= set(o, "rank_source", json_string(v->rank_source ? v->rank_source : ""));
	bad |= set(o, "world_size", v->world_size > 0 ? json_integer(v->world_size) : json_null());
	bad |= set(o, "other_processes", json_integer((json_int_t)v->n_not_ranks));
	bad |= set(o, "collectives_mismatch", json_boolean(v->collectives_mismatch));
	bad |= set(o, "ranks", a = json_array());
	for (i = 0; a && i < v->n_ranks; i++) {
		json_t *r = rank_json(&v->ranks[i]);
		bad |= r ? json_array_append_new(a, r) : -1;
	}
	bad |= set(o, "stages", m = json_array());
	for (i = 0; m && i < v->n_merged; i++) {
		json_t *r = merged_json(&v->merged[i]);
		bad |= r ? json_array_append_new(m, r) : -1;
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
