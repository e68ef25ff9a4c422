/* kernels.c: profile kernels -> the analysis kernel table (see kernels.h): aggregation through
 * the shared lp_kernel_table_build, the per-stage split from stages.c, kernel families, and the
 * join with Nsight Compute records for FLOPs, bytes and the roofline class. */
#include "analyze/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"

const char *lp_roofline_name(enum lp_roofline r)
{
	switch (r) {
	case LP_ROOF_MEMORY: return "memory-bound";
	case LP_ROOF_BALANCED: return "balanced";
	case LP_ROOF_COMPUTE: return "compute-bound";
	default: return "n/a";
	}
}

void lp_kernel_set_release(struct lp_kernel_set *s)
{
	free(s->rows);
	lp_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}

static double metric(const struct lp_kernel_record *r, const char *name)
{
	const struct lp_metric *m = lp_kernel_record_metric(r, name);
	return m && m->valid ? m->value : NAN;
}

/* Adds w * v into *acc, keeping NAN only while nothing valid was seen. */
static void acc_add(double *acc, double *wsum, double v, double w)
{
	if (isnan(v))
		return;
	if (isnan(*acc))
		*acc = 0;
	*acc += v * w;
	*wsum += w;
}

static void join_ncu(struct lp_kernel_row *row, const struct lp_kernel_record *ncu, size_t n_ncu,
	const struct lp_peak *peak, double ridge, struct lp_buf *nb, struct lp_buf *nr)
{
	enum { DUR, SM, DRAM, OCC, RD, WR, TENS, FADD, FMUL, FFMA, N };
	static const char *const names[N] = {
		"gpu__time_duration.sum",
		"sm__throughput.avg.pct_of_peak_sustained_elapsed",
		"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
		"sm__warps_active.avg.pct_of_peak_sustained_active",
		"dram__bytes_read.sum",
		"dram__bytes_write.sum",
		"sm__ops_path_tensor_src_bf16_dst_fp32.sum",
		"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
		"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
		"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
	};
	double acc[N], w[N];
	struct lp_kernel_ncu *k = &row->ncu;
	size_t i, j;
	int exact = 0;   /* 1: the same name and template arguments */
	for (j = 0; j < N; j++) {
		acc[j] = NAN;
		w[j] = 0;
	}
	for (i = 0; i < n_ncu && !exact; i++)
		exact = ncu[i].kernel_name && lp_kname_same(ncu[i].kernel_name, row->name);
	if (!exact && lp_kname_short(row->name, nb) < 0)
		return;
	for (i = 0; i < n_ncu; i++) {
		const struct lp_kernel_record *r = &ncu[i];
		double wt = (double)(r->calls ? r->calls : 1);
		if (!r->kernel_name)
			continue;
		if (exact) {
			if (!lp_kname_same(r->kernel_name, row->name))
				continue;
		} else {
			/* both with template arguments, not the same: another template variant. A name
			 * without them on either side ("k_attn_decode") joins by normalized name */
			if ((lp_kname_has_template_args(r->kernel_name) && lp_kname_has_template_args(row->name)) ||
			    lp_kname_short(r->kernel_name, nr) < 0 || !nb->len ||
			    strcmp(nr->data, nb->data))
				continue;
		}
		k->records += r->calls ? r->calls : 1;
		for (j = 0; j < N; j++)
			acc_add(&acc[j], &w[j], metric(r, names[j]), wt);
	}
	if (!k->records)
		return;
	k->joined = 1;
	for (j = 0; j < N; j++)
		if (w[j] > 0)
			acc[j] /= w[j];
	k->duration_ns = acc[DUR];
	k->sm_pct = acc[SM];
	k->dram_pct = acc[DRAM];
	k->occupancy_pct = acc[OCC];
	k->dram_bytes = isnan(acc[RD]) && isnan(acc[WR]) ? NAN
		: (isnan(acc[RD]) ? 0 : acc[RD]) + (isnan(acc[WR]) ? 0 : acc[WR]);
	k->tensor_flops = acc[TENS];
	/* FP32 FLOPs: fadd + fmul + 2 x ffma (an FMA is two FLOPs) */
	k->fp32_flops = isnan(acc[FADD]) && isnan(acc[FMUL]) && isnan(acc[FFMA]) ? NAN
		: (isnan(acc[FADD]) ? 0 : acc[FADD]) + (isnan(acc[FMUL]) ? 0 : acc[FMUL]) +
		  2.0 * (isnan(acc[FFMA]) ? 0 : acc[FFMA]);
	k->flops = isnan(k->tensor_flops) && isnan(k->fp32_flops) ? NAN
		: (isnan(k->tensor_flops) ? 0 : k->tensor_flops) + (isnan(k->fp32_flops) ? 0 : k->fp32_flops);
	k->intensity = !isnan(k->flops) && !isnan(k->dram_bytes) && k->dram_bytes > 0 ? k->flops / k->dram_bytes : NAN;
	k->achieved_flops_per_s = !isnan(k->flops) && k->duration_ns > 0 ? k->flops / (k->duration_ns * 1e-9) : NAN;
	k->achieved_bytes_per_s = !isnan(k->dram_bytes) && k->duration_ns > 0 ? k->dram_bytes / (k->duration_ns * 1e-9) : NAN;
	k->roofline = LP_ROOF_NA;
	(void)peak;
	if (!isnan(k->intensity) && ridge > 0) {
		if (k->intensity < ridge / LP_ROOF_BAND)
			k->roofline = LP_ROOF_MEMORY;
		else if (k->intensity > ridge * LP_ROOF_BAND)
			k->roofline = LP_ROOF_COMPUTE;
		else
			k->roofline = LP_ROOF_BALANCED;
	}
}

/* A row's key in the per-stage split: the name interned in the profile, and the device. */
struct row_key {
	const char *name;
	int64_t device;
};

static struct row_key row_key(const char *name, int32_t device)
{
	struct row_key k;
	memset(&k, 0, sizeof(k));   /* no undefined padding in the key bytes */
	k.name = name;
	k.device = device;
	return k;
}

struct edge {
	int32_t device;
	uint64_t t;
	int start;                   /* 0 end, 1 start: ends sort first at equal times */
	size_t k;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->start != y->start)
		return x->start - y->start;
	return (x->k > y->k) - (x->k < y->k);
}

/* Each measured kernel's share of busy time in ms (see kernels.h), into credit[] (per profile
 * kernel); the busy union into *busy_ms. -1 on out of memory. */
static int busy_shares(const struct lp_profile *p, const struct lp_stage_set *stages, double *credit, double *busy_ms)
{
	struct edge *e = malloc((2 * p->n_kernels + 1) * sizeof(*e));
	size_t *active = malloc((p->n_kernels + 1) * sizeof(*active));
	size_t *pos = malloc((p->n_kernels + 1) * sizeof(*pos));
	size_t n_e = 0, n_act = 0, i, j;
	uint64_t busy = 0;
	if (!e || !active || !pos) {
		free(e);
		free(active);
		free(pos);
		return -1;
	}
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		credit[i] = 0;
		if (k->end_ns <= k->start_ns || (stages->kernel_stage && i < stages->n_kernels && stages->kernel_stage[i] == -2))
			continue;
		e[n_e++] = (struct edge){ k->device, k->start_ns, 1, i };
		e[n_e++] = (struct edge){ k->device, k->end_ns, 0, i };
	}
	qsort(e, n_e, sizeof(*e), cmp_edge);
	for (i = 0; i < n_e; i++) {
		if (i > 0 && n_act && e[i].device == e[i - 1].device && e[i].t > e[i - 1].t) {
			double dt = (double)(e[i].t - e[i - 1].t) / 1e6;
			busy += e[i].t - e[i - 1].t;
			for (j = 0; j < n_act; j++)
				credit[active[j]] += dt / (double)n_act;
		}
		if (i > 0 && e[i].device != e[i - 1].device)
			n_act = 0;   /* a device's last edge closed everything; defensive */
		if (e[i].start) {
			pos[e[i].k] = n_act;
			active[n_act++] = e[i].k;
		} else if (n_act) {
			size_t at = pos[e[i].k];
			active[at] = active[--n_act];
			pos[active[at]] = at;
		}
	}
	*busy_ms = (double)busy / 1e6;
	free(e);
	free(active);
	free(pos);
	return 0;
}

#define LABEL_MAX 60

/* Row labels (kernels.h): the short name, unless another row has the same one. Rows sharing a short
 * name are found through a sorted index; O(n log n). */
static int cmp_short(const void *a, const void *b, void *rows)
{
	const struct lp_kernel_row *r = rows;
	return strcmp(r[*(const size_t *)a].short_name, r[*(const size_t *)b].short_name);
}

static int set_labels(struct lp_kernel_set *s)
{
	size_t *idx = malloc((s->n_rows + 1) * sizeof(*idx)), i;
	if (!idx)
		return -1;
	for (i = 0; i < s->n_rows; i++)
		idx[i] = i;
	qsort_r(idx, s->n_rows, sizeof(*idx), cmp_short, s->rows);
	for (i = 0; i < s->n_rows; i++) {
		struct lp_kernel_row *r = &s->rows[idx[i]];
		int shared = (i > 0 && !strcmp(s->rows[idx[i - 1]].short_name, r->short_name)) ||
			     (i + 1 < s->n_rows && !strcmp(s->rows[idx[i + 1]].short_name, r->short_name));
		const char *from = *r->short_name ? strstr(r->name, r->short_name) : NULL;
		size_t len;
		char buf[LABEL_MAX + 8];
		if (!shared || !from) {
			r->label = *r->short_name ? r->short_name : r->name;
			continue;
		}
		len = strlen(from);
		if (len <= LABEL_MAX)
			snprintf(buf, sizeof(buf), "%s", from);
		else   /* keep the start (the template arguments) and the end */
			snprintf(buf, sizeof(buf), "%.*s...%s", LABEL_MAX / 2 - 2, from, from + len - (LABEL_MAX / 2 - 2));
		if (!(r->label = lp_arena_strdup(&s->arena, buf))) {
			free(idx);
			return -1;
		}
	}
	free(idx);
	return 0;
}

int lp_kernel_row_cmp(const void *a, const void *b)
{
	const struct lp_kernel_row *x = a, *y = b;
	int c;
	if (x->busy_ms != y->busy_ms)
		return x->busy_ms < y->busy_ms ? 1 : -1;
	if (x->total_ms != y->total_ms)
		return x->total_ms < y->total_ms ? 1 : -1;
	c = strcmp(x->name, y->name);
	return c ? c : (x->device > y->device) - (x->device < y->device);
}

int lp_kernels_compute(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_kernel_record *ncu, size_t n_ncu, const struct lp_peak *peak,
	struct lp_kernel_set *out, struct lp_err *err)
{
	struct lp_kernel_table t;
	struct lp_kernel_filter f = { NULL, -1, 1, NULL };
	struct lp_buf nb = LP_BUF_INIT, nr = LP_BUF_INIT;
	struct lp_map rows = LP_MAP_INIT;   /* struct row_key -> row index */
	size_t i, j;
	double *credit = NULL;
	unsigned char *omit = NULL;
	int rc;
	memset(out, 0, sizeof(*out));
	/* the rows hold what the stage columns and busy_shares hold: the measured iterations (a
	 * skipped first iteration is no warmup range, so the name filter alone kept it) */
	if (stages->kernel_stage && p->n_kernels) {
		if (!(omit = calloc(p->n_kernels, 1)))
			return lp_oom(err);
		for (i = 0; i < p->n_kernels && i < stages->n_kernels; i++)
			omit[i] = stages->kernel_stage[i] == -2;
		f.omit = omit;
	}
	rc = lp_kernel_table_build(p, &f, &t, err);
	free(omit);
	if (rc < 0)
		return -1;
	out->rows = calloc(t.n_rows + 1, sizeof(*out->rows));
	credit = malloc((p->n_kernels + 1) * sizeof(*credit));
	if (!out->rows || !credit || busy_shares(p, stages, credit, &out->busy_ms) < 0)
		goto oom;
	out->n_ncu_records = n_ncu;
	if (peak && peak->flops_valid && peak->bw_valid && peak->bytes_per_s > 0)
		out->ridge_flop_per_byte = peak->flops_per_s / peak->bytes_per_s;
	for (i = 0; i < t.n_rows; i++) {
		struct lp_kernel_row *r = &out->rows[i];
		const struct lp_kernel_record *k = &t.rows[i];
		r->name = lp_arena_strdup(&out->arena, k->kernel_name ? k->kernel_name : "");
		r->short_name = lp_arena_strdup(&out->arena, k->short_name ? k->short_name : "");
		if (!r->name || !r->short_name)
			goto oom;
		r->device = k->device;
		r->total_ms = k->total_ms;
		r->calls = k->calls;
		r->mean_ms = k->mean_ms;
		r->min_ms = k->min_ms;
		r->max_ms = k->max_ms;
		r->family = lp_kname_family(r->name);
		r->ncu.duration_ns = r->ncu.sm_pct = r->ncu.dram_pct = r->ncu.occupancy_pct = NAN;
		r->ncu.dram_bytes = r->ncu.tensor_flops = r->ncu.fp32_flops = r->ncu.flops = NAN;
		r->ncu.intensity = r->ncu.achieved_flops_per_s = r->ncu.achieved_bytes_per_s = NAN;
		if (ncu && n_ncu) {
			join_ncu(r, ncu, n_ncu, peak, out->ridge_flop_per_byte, &nb, &nr);
			if (r->ncu.joined)
				out->n_joined_rows++;
		}
	}
	out->n_rows = t.n_rows;
	out->total_ms = t.total_ms;
	/* per-stage split: kernels map to rows by (interned name pointer, device) */
	for (j = 0; j < t.n_rows; j++) {
		struct row_key key = row_key(t.rows[j].kernel_name, t.rows[j].device);
		if (lp_map_put(&rows, &key, sizeof(key), j, NULL) < 0)
			goto oom;
	}
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		int32_t s = stages->kernel_stage && i < stages->n_kernels ? stages->kernel_stage[i] : -1;
		int kind;
		struct row_key key;
		uint64_t rj;
		double ms = k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) / 1e6 : 0;
		if (s == -2)
			continue;
		kind = s >= 0 ? (stages->stages[s].kind == LP_STAGE_PREFILL ? 0 : stages->stages[s].kind == LP_STAGE_DECODE ? 1 : 2) : 2;
		key = row_key(k->name, k->device);
		if (lp_map_get(&rows, &key, sizeof(key), &rj)) {
			out->rows[rj].stage_ms[kind] += ms;
			out->rows[rj].busy_ms += credit[i];
			out->rows[rj].stage_busy_ms[kind] += credit[i];
			out->rows[rj].stage_calls[kind]++;
			out->rows[rj].std_ms += ms * ms;   /* sum of squares until the loop below */
			out->family_ms[kind][out->rows[rj].family] += ms;
		}
	}
	for (j = 0; j < out->n_rows; j++) {
		struct lp_kernel_row *r = &out->rows[j];
		double n = (double)r->calls, ss = r->std_ms;
		r->share = out->busy_ms > 0 ? r->busy_ms / out->busy_ms : 0;
		r->std_ms = n > 1 && ss > n * r->mean_ms * r->mean_ms ? sqrt((ss - n * r->mean_ms * r->mean_ms) / (n - 1)) : 0;
	}
	lp_map_release(&rows);
	free(credit);
	lp_kernel_table_release(&t);
	lp_buf_release(&nb);
	lp_buf_release(&nr);
	if (out->n_rows > 1)
		qsort(out->rows, out->n_rows, sizeof(*out->rows), lp_kernel_row_cmp);
	if (set_labels(out) < 0)
		return lp_oom(err);
	return 0;
oom:
	lp_map_release(&rows);
	free(credit);
	lp_kernel_table_release(&t);
	lp_buf_release(&nb);
	lp_buf_release(&nr);
	lp_kernel_set_release(out);
	return lp_oom(err);
}
