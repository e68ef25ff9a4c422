/* regions_scope.c: totals of the region model (see regions.h) over one scope: every result,
 * one process or one device. Reads the members that regions.c attributed; the region report
 * (report/regions_report.c) renders what it computes. */
#include "analyze/regions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

/* ---- scopes ---- */

/* Sums are weighted (lp_region_row.weight: 1, or the launches a sampled result stands for). */
struct kacc {
	const char *name, *short_name;
	int32_t device;
	double calls, excl_calls;
	double total_ms, excl_ms, min_ms, max_ms;
	double *msum;
	double *mcnt;
};

struct nacc {
	struct kacc *k;
	size_t n, cap, last;
	double incl_k, excl_k, own_r, child_incl, child_r;
	double kcount, kcount_excl;
	uint64_t pid_first, dev_first;
	int pid_multi, dev_multi, any, child_present;
};

static int in_scope(const struct lp_region_row *row, int kind, uint32_t pid, int32_t device)
{
	if (kind == LP_REGION_SCOPE_PROCESS)
		return row->pid == pid;
	if (kind == LP_REGION_SCOPE_DEVICE)
		return row->device == device;
	return 1;
}

static double row_weight(const struct lp_region_row *row)
{
	return row->weight > 0 ? row->weight : 1;
}

static int kacc_add(struct nacc *a, const struct lp_region_row *row, size_t n_metrics, int exclusive)
{
	struct kacc *k = NULL;
	double w = row_weight(row), one_ms = row->duration_ns > 0 ? row->duration_ns / 1e6 : 0, ms = one_ms * w;
	size_t i;
	if (a->last < a->n && a->k[a->last].name == row->kernel_name && a->k[a->last].device == row->device)
		k = &a->k[a->last];
	for (i = 0; !k && i < a->n; i++)
		if (a->k[i].name == row->kernel_name && a->k[i].device == row->device) {
			k = &a->k[i];
			a->last = i;
		}
	if (!k) {
		if (LP_ARRAY_RESERVE(a->k, a->cap, a->n + 1, NULL) < 0)
			return -1;
		k = &a->k[a->n];
		memset(k, 0, sizeof(*k));
		k->name = row->kernel_name;
		k->short_name = row->short_name;
		k->device = row->device;
		k->min_ms = -1;
		if (n_metrics) {
			k->msum = calloc(n_metrics, sizeof(double));
			k->mcnt = calloc(n_metrics, sizeof(double));
			if (!k->msum || !k->mcnt) {
				free(k->msum);
				free(k->mcnt);
				return -1;
			}
		}
		a->last = a->n++;
	}
	k->calls += w;
	k->total_ms += ms;
	if (k->min_ms < 0 || one_ms < k->min_ms)
		k->min_ms = one_ms;
	if (one_ms > k->max_ms)
		k->max_ms = one_ms;
	if (exclusive) {
		k->excl_calls += w;
		k->excl_ms += ms;
	}
	for (i = 0; i < n_metrics; i++)
		if (row->metric_valid[i]) {
			k->msum[i] += row->metric_values[i] * w;
			k->mcnt[i] += w;
		}
	return 0;
}

static int cmp_kernels(const void *pa, const void *pb)
{
	const struct lp_region_kernel *a = pa, *b = pb;
	int c;
	if (a->rec.total_ms != b->rec.total_ms)
		return a->rec.total_ms > b->rec.total_ms ? -1 : 1;
	if ((c = strcmp(a->rec.kernel_name, b->rec.kernel_name)) != 0)
		return c;
	return a->rec.device < b->rec.device ? -1 : a->rec.device > b->rec.device;
}

static void note_unique(uint64_t v, uint64_t *first, int *multi, int *any)
{
	if (!*any)
		*first = v;
	else if (*first != v)
		*multi = 1;
}

int lp_regions_scope(const struct lp_regions *r, int kind, uint32_t pid, int32_t device,
	struct lp_region_scope *out, struct lp_err *err)
{
	const struct lp_regions_spec *spec = r->spec;
	struct nacc *acc;
	size_t i, j, m;
	double kcount = 0;
	int ret = -1;
	memset(out, 0, sizeof(*out));
	out->kind = kind;
	out->pid = pid;
	out->device = device;
	if (!r->finished)
		return lp_err_set(err, LP_EOTHER, "regions: scope asked before finish");
	acc = calloc(r->n_nodes + 1, sizeof(*acc));
	out->stats = lp_arena_alloc(&out->arena, (r->n_nodes + 1) * sizeof(*out->stats));
	if (!acc || !out->stats) {
		free(acc);
		return oom(err);
	}
	out->n_stats = r->n_nodes;
	for (i = 0; i < r->n_rows; i++) {
		const struct lp_region_row *row = &r->rows[i];
		double w = row_weight(row), ms = row->duration_ns > 0 ? w * row->duration_ns / 1e6 : 0;
		if (!in_scope(row, kind, pid, device))
			continue;
		out->total_ms += ms;
		if (row->is_range)
			out->range_instances++;
		else
			kcount += w;
		for (j = 0; j < row->n_members; j++) {
			const struct lp_region_member *mb = &r->members[row->first_member + j];
			struct nacc *a = &acc[mb->node];
			struct lp_region_stats *st = &out->stats[mb->node];
			if (row->is_range && !mb->exclusive)
				continue;  /* a range result counts at its own region only */
			note_unique(row->pid, &a->pid_first, &a->pid_multi, &a->any);
			note_unique((uint64_t)(int64_t)row->device, &a->dev_first, &a->dev_multi, &a->any);
			a->any = 1;
			if (row->is_range) {
				a->own_r += ms;
				st->range_instances++;
			} else {
				a->incl_k += ms;
				a->kcount += w;
				if (mb->exclusive) {
					a->excl_k += ms;
					a->kcount_excl += w;
				}
			}
			if (kacc_add(a, row, spec->n_metrics, mb->exclusive) < 0)
				goto oom;
		}
	}
	/* bottom-up over the report order reversed: children before parents */
	for (i = r->n_nodes; i-- > 0;) {
		int32_t n = r->order[i];
		struct nacc *a = &acc[n];
		struct lp_region_stats *st = &out->stats[n];
		double incl_r = a->own_r > 0 ? a->own_r : a->child_r;
		double tol;
		st->incl_ms = a->incl_k + incl_r;
		st->kernel_count = (uint64_t)llround(a->kcount);
		st->kernel_count_excl = (uint64_t)llround(a->kcount_excl);
		st->direct_ms = a->excl_k + (a->own_r > 0 ? fmax(0, a->own_r - a->child_r) : 0);
		st->excl_ms = st->direct_ms;
		st->present = a->any || st->incl_ms > 0 || a->child_present;
		st->pid = a->any && !a->pid_multi ? (int64_t)a->pid_first : -1;
		st->device = a->any && !a->dev_multi ? (int32_t)(int64_t)a->dev_first : -1;
		st->reconcile_error_ms = st->incl_ms - (st->direct_ms + a->child_incl);
		tol = LP_REGIONS_TOLERANCE * st->incl_ms + 1e-9;
		st->reconciled = fabs(st->reconcile_error_ms) <= tol;
		if (r->nodes[n].parent >= 0) {
			struct nacc *p = &acc[r->nodes[n].parent];
			p->child_incl += st->incl_ms;
			p->child_r += incl_r;
			p->child_present |= st->present;
		}
		/* kernel records */
		if (a->n) {
			st->kernels = lp_arena_alloc(&out->arena, a->n * sizeof(*st->kernels));
			if (!st->kernels)
				goto oom;
			for (j = 0; j < a->n; j++) {
				struct kacc *k = &a->k[j];
				struct lp_region_kernel *rk = &st->kernels[j];
				rk->rec.kernel_name = k->name;
				rk->rec.short_name = k->short_name;
				rk->rec.device = k->device;
				rk->rec.calls = (uint64_t)llround(k->calls);
				rk->rec.total_ms = k->total_ms;
				rk->rec.mean_ms = k->total_ms / (k->calls > 0 ? k->calls : 1);
				rk->rec.min_ms = k->min_ms < 0 ? 0 : k->min_ms;
				rk->rec.max_ms = k->max_ms;
				rk->excl_calls = (uint64_t)llround(k->excl_calls);
				rk->excl_ms = k->excl_ms;
				if (spec->n_metrics) {
					rk->rec.metrics = lp_arena_alloc(&out->arena, spec->n_metrics * sizeof(struct lp_metric));
					if (!rk->rec.metrics)
						goto oom;
					for (m = 0; m < spec->n_metrics; m++) {
						rk->rec.metrics[m].name = spec->metrics[m];
						rk->rec.metrics[m].unit = "";
						rk->rec.metrics[m].valid = k->mcnt[m] > 0;
						rk->rec.metrics[m].value = k->mcnt[m] > 0 ? k->msum[m] / k->mcnt[m] : 0;
					}
					rk->rec.n_metrics = spec->n_metrics;
				}
			}
			st->n_kernels = a->n;
			qsort(st->kernels, st->n_kernels, sizeof(*st->kernels), cmp_kernels);
		}
	}
	out->kernel_count = (uint64_t)llround(kcount);
	out->n_present = 0;
	for (i = 0; i < r->n_nodes; i++)
		out->n_present += out->stats[i].present;
	ret = 0;
	goto out;
oom:
	oom(err);
out:
	for (i = 0; i < r->n_nodes; i++) {
		for (j = 0; j < acc[i].n; j++) {
			free(acc[i].k[j].msum);
			free(acc[i].k[j].mcnt);
		}
		free(acc[i].k);
	}
	free(acc);
	if (ret < 0)
		lp_regions_scope_release(out);
	return ret;
}

void lp_regions_scope_release(struct lp_region_scope *s)
{
	lp_arena_release(&s->arena);
	s->stats = NULL;
	s->n_stats = 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

int lp_regions_pids(const struct lp_regions *r, uint32_t **out, size_t *n)
{
	size_t i, k = 0;
	*n = 0;
	*out = malloc((r->n_rows + 1) * sizeof(**out));
	if (!*out)
		return -1;
	for (i = 0; i < r->n_rows; i++)
		(*out)[k++] = r->rows[i].pid;
	qsort(*out, k, sizeof(**out), cmp_u32);
	for (i = 0; i < k; i++)
		if (!*n || (*out)[*n - 1] != (*out)[i])
			(*out)[(*n)++] = (*out)[i];
	return 0;
}

int lp_regions_devices(const struct lp_regions *r, int32_t **out, size_t *n)
{
	size_t i, k = 0;
	*n = 0;
	*out = malloc((r->n_rows + 1) * sizeof(**out));
	if (!*out)
		return -1;
	for (i = 0; i < r->n_rows; i++)
		(*out)[k++] = r->rows[i].device;
	qsort(*out, k, sizeof(**out), cmp_i32);
	for (i = 0; i < k; i++)
		if (!*n || (*out)[*n - 1] != (*out)[i])
			(*out)[(*n)++] = (*out)[i];
	return 0;
}

struct weight_ref {
	uint64_t id;
	double w;
};

static int cmp_weight_ref(const void *pa, const void *pb)
{
	const struct weight_ref *a = pa, *b = pb;
	return a->id < b->id ? -1 : a->id > b->id;
}

int lp_regions_set_weights(struct lp_regions *r, const uint64_t *ids, const double *weights, size_t n,
	size_t *n_set, struct lp_err *err)
{
	struct weight_ref *t = malloc((n + 1) * sizeof(*t));
	size_t i, done = 0;
	if (!t)
		return oom(err);
	for (i = 0; i < n; i++) {
		t[i].id = ids[i];
		t[i].w = weights[i];
	}
	qsort(t, n, sizeof(*t), cmp_weight_ref);
	for (i = 0; i < r->n_rows; i++) {
		struct weight_ref key = { r->rows[i].id, 0 };
		const struct weight_ref *hit = n ? bsearch(&key, t, n, sizeof(*t), cmp_weight_ref) : NULL;
		if (hit && hit->w > 0) {
			r->rows[i].weight = hit->w;
			done++;
		}
	}
	free(t);
	if (n_set)
		*n_set = done;
	return 0;
}
