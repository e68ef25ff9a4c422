/* sampling_check.c: how often the intervals of sampled tables hold the truth (sampling.h,
 * lp_tsample_coverage). Input: an exact trace and a schedule; the schedule is replayed many times
 * (seeds or offsets), each replay's estimates and intervals are computed from the units it would
 * have recorded, and compared with the exact totals of the same units: the sampling error alone,
 * with no second process involved (docs/tracer.md "Sampled tracing", bench/sampling/). The trace
 * is first reduced to per-unit values (lp_tsample_values), which a test can also load from a file. */

#include "analyze/sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "core/vec.h"

static int cmp_cov(const void *a, const void *b)
{
	const struct lp_tsample_cov_row *x = a, *y = b;
	if (x->exact_ns != y->exact_ns)
		return x->exact_ns > y->exact_ns ? -1 : 1;
	return strcmp(x->key, y->key);
}

void lp_tsample_coverage_release(struct lp_tsample_coverage *c)
{
	free(c->rows);
	memset(c, 0, sizeof(*c));
}

void lp_tsample_values_release(struct lp_tsample_values *v)
{
	free(v->refs);
	free(v->ordinal);
	free(v->val);
	free(v->keys);
	free(v->exact_part);
	free(v->total);
	memset(v, 0, sizeof(*v));
}

int lp_tsample_values_of(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_plan *plan, struct lp_tsample_values *out, struct lp_err *err)
{
	struct lp_tsample_plan q = *plan;
	struct lp_tsample_units units;
	struct lp_map keys = LP_MAP_INIT;
	int32_t *unit_of = NULL;          /* per range: its row in the value matrix (sampled stratum), -1 */
	size_t cap_keys = 0, i;
	int pass;

	memset(out, 0, sizeof(*out));
	q.sampled = 1;
	if (q.every == 0)
		q.every = 1;
	if (lp_tsample_units_find(p, &q, 1, &units, err) < 0)
		return -1;
	unit_of = malloc((p->n_ranges + 1) * sizeof(*unit_of));
	out->refs = malloc((p->n_ranges + 1) * sizeof(*out->refs));
	out->ordinal = malloc((p->n_ranges + 1) * sizeof(*out->ordinal));
	if (!unit_of || !out->refs || !out->ordinal)
		goto oom;
	/* the measured units: exact stratum (index < first) and the rows of the sampled one */
	for (i = 0; i < p->n_ranges; i++) {
		unit_of[i] = -1;
		if (units.stratum[i] == LP_TSAMPLE_OUTSIDE || lp_tsample_range_warm(p, stages, (int32_t)i))
			continue;
		out->units++;
		if (units.stratum[i] == LP_TSAMPLE_EXACT) {
			out->units_exact++;
			unit_of[i] = -2;
			continue;
		}
		out->refs[out->n_units] = (struct lp_tsample_unit_ref){ units.chain[i], units.unit_index[i], -1, 0 };
		out->ordinal[out->n_units] = units.ordinal[i];
		unit_of[i] = (int32_t)out->n_units++;
	}
	/* pass 0: the kernel names inside measured units; pass 1: their values per unit */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			out->val = calloc((out->n_units + 1) * (out->n_keys + 1), sizeof(*out->val));
			out->exact_part = calloc(out->n_keys + 1, sizeof(*out->exact_part));
			out->total = calloc(out->n_keys + 1, sizeof(*out->total));
			if (!out->val || !out->exact_part || !out->total)
				goto oom;
		}
		for (i = 0; i < p->n_kernels; i++) {
			const struct lp_kernel *kk = &p->kernels[i];
			int32_t u = kk->range >= 0 ? lp_profile_range_find_ancestor(p, kk->range, q.unit) : -1;
			double d = kk->end_ns > kk->start_ns ? (double)(kk->end_ns - kk->start_ns) : 0;
			struct lp_map_entry *e;
			int added;
			if (u < 0 || unit_of[u] == -1 || !kk->name)
				continue;
			if (stages && stages->kernel_stage && i < stages->n_kernels && stages->kernel_stage[i] == -2)
				continue;
			if (pass == 0) {
				if (!(e = lp_map_upsert(&keys, kk->name, strlen(kk->name), &added, NULL)))
					goto oom;
				if (added) {
					const char **slot = LP_ARRAY_PUSH(out->keys, out->n_keys, cap_keys, NULL);
					if (!slot)
						goto oom;
					*slot = kk->name;
					e->val = out->n_keys - 1;
				}
				continue;
			}
			e = lp_map_find(&keys, kk->name, strlen(kk->name));
			out->total[e->val] += d;
			out->units_ns += d;
			if (unit_of[u] == -2)
				out->exact_part[e->val] += d;
			else
				out->val[(size_t)unit_of[u] * out->n_keys + e->val] += d;
		}
	}
	lp_map_release(&keys);
	free(unit_of);
	lp_tsample_units_release(&units);
	return 0;
oom:
	lp_map_release(&keys);
	free(unit_of);
	lp_tsample_units_release(&units);
	lp_tsample_values_release(out);
	return lp_oom(err);
}

int lp_tsample_coverage_of(const struct lp_tsample_values *v, const struct lp_tsample_plan *plan,
	enum lp_tsample_var var, uint32_t trials, uint64_t seed0, double conf, struct lp_tsample_coverage *out,
	struct lp_err *err)
{
	struct lp_tsample_plan q = *plan;
	struct lp_tsample_unit_ref *refs = NULL;
	double *xs = NULL, *err_sum = NULL, *err_sq = NULL, *half_sum = NULL;
	uint32_t *slot_unit = NULL;       /* per slot of a trial: its unit */
	size_t i, k;
	uint32_t t;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	q.sampled = 1;
	if (q.every == 0)
		q.every = 1;
	out->units = v->units;
	out->units_exact = v->units_exact;
	out->units_ns = v->units_ns;
	refs = malloc((v->n_units + 1) * sizeof(*refs));
	slot_unit = malloc((v->n_units + 1) * sizeof(*slot_unit));
	xs = malloc((v->n_units + 1) * sizeof(*xs));
	err_sum = calloc(v->n_keys + 1, sizeof(*err_sum));
	err_sq = calloc(v->n_keys + 1, sizeof(*err_sq));
	half_sum = calloc(v->n_keys + 1, sizeof(*half_sum));
	out->rows = calloc(v->n_keys + 1, sizeof(*out->rows));
	if (!refs || !slot_unit || !xs || !err_sum || !err_sq || !half_sum || !out->rows)
		goto oom;
	for (k = 0; k < v->n_keys; k++) {
		out->rows[k].key = v->keys[k];
		out->rows[k].exact_ns = v->total[k];
		out->rows[k].share = v->units_ns > 0 ? v->total[k] / v->units_ns : 0;
	}
	for (t = 0; t < trials; t++) {
		struct lp_tsample_design d;
		uint32_t slot = 0;
		q.seed = lp_tsample_mix64(seed0 ^ lp_tsample_mix64(t));
		q.offset = t % (q.burst > 1 && q.every >= q.burst ? q.every / q.burst : q.every);
		for (i = 0; i < v->n_units; i++) {
			refs[i] = v->refs[i];
			refs[i].slot = -1;
			if (lp_tsample_recorded(&q, v->ordinal[i], v->refs[i].index)) {
				slot_unit[slot] = (uint32_t)i;
				refs[i].slot = (int32_t)slot++;
			}
		}
		if (lp_tsample_design_build(refs, v->n_units, slot, q.every, q.first, &d, err) < 0)
			goto done;
		d.var = var;
		d.cluster = q.burst > 1;
		for (k = 0; k < v->n_keys; k++) {
			struct lp_tsample_est e;
			double truth = v->total[k], dev;
			uint32_t s;
			for (s = 0; s < slot; s++)
				xs[s] = v->val[(size_t)slot_unit[s] * v->n_keys + k];
			lp_tsample_design_estimate(&d, v->exact_part[k], xs, conf, &e);
			dev = e.total - truth;
			err_sum[k] += dev;
			err_sq[k] += dev * dev;
			if (e.half_ci < 0) {
				out->rows[k].unknown++;
				continue;
			}
			half_sum[k] += e.half_ci;
			/* a relative tolerance for the rounding of sums in another order */
			out->rows[k].covered += fabs(dev) <= e.half_ci + 1e-9 * (truth > 0 ? truth : 1);
		}
		lp_tsample_design_release(&d);
	}
	out->trials = trials;
	for (k = 0; k < v->n_keys; k++) {
		struct lp_tsample_cov_row *r = &out->rows[k];
		double tr = r->exact_ns > 0 ? r->exact_ns : 1;
		if (!trials)
			continue;
		r->bias = err_sum[k] / trials / tr;
		r->rmse = sqrt(err_sq[k] / trials) / tr;
		r->half_rel = trials > r->unknown ? half_sum[k] / (trials - r->unknown) / tr : -1;
	}
	out->n_rows = v->n_keys;
	qsort(out->rows, out->n_rows, sizeof(*out->rows), cmp_cov);
	rc = 0;
	goto done;
oom:
	lp_oom(err);
done:
	if (rc < 0)
		lp_tsample_coverage_release(out);
	free(refs);
	free(slot_unit);
	free(xs);
	free(err_sum);
	free(err_sq);
	free(half_sum);
	return rc;
}

int lp_tsample_coverage(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_plan *plan, enum lp_tsample_var var, uint32_t trials, uint64_t seed0, double conf,
	struct lp_tsample_coverage *out, struct lp_err *err)
{
	struct lp_tsample_values v;
	int rc;
	memset(out, 0, sizeof(*out));
	if (lp_tsample_values_of(p, stages, plan, &v, err) < 0)
		return -1;
	rc = lp_tsample_coverage_of(&v, plan, var, trials, seed0, conf, out, err);
	lp_tsample_values_release(&v);
	return rc;
}
