/* sampling_check.c: how often the intervals of sampled tables hold the truth (sampling.h,
 * lp_tsample_coverage). Input: an exact trace and a schedule; the schedule is replayed many times
 * (seeds or offsets), each replay's estimates and intervals are computed from the units it would
 * have recorded, and compared with the exact totals of the same units: the sampling error alone,
 * with no second process involved (docs/tracer.md "Sampled tracing", bench/sampling/). */

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

int lp_tsample_coverage(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_plan *plan, enum lp_tsample_var var, uint32_t trials, uint64_t seed0, double conf,
	struct lp_tsample_coverage *out, struct lp_err *err)
{
	struct lp_tsample_plan q = *plan;
	struct lp_tsample_units units;
	struct lp_map keys = LP_MAP_INIT;
	struct lp_tsample_unit_ref *refs = NULL;
	int32_t *unit_of = NULL;          /* per range: its row in the value matrix (sampled stratum), -1 */
	double *val = NULL, *exact_part = NULL, *x = NULL, *err_sum = NULL, *err_sq = NULL, *half_sum = NULL;
	const char **key_of = NULL;
	size_t n_keys = 0, cap_keys = 0, n_su = 0, i, k;
	uint32_t t;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	q.sampled = 1;
	if (q.every == 0)
		q.every = 1;
	if (lp_tsample_units_find(p, &q, 1, &units, err) < 0)
		return -1;
	unit_of = malloc((p->n_ranges + 1) * sizeof(*unit_of));
	refs = malloc((p->n_ranges + 1) * sizeof(*refs));
	if (!unit_of || !refs)
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
		refs[n_su].chain = units.chain[i];
		refs[n_su].index = units.unit_index[i];
		unit_of[i] = (int32_t)n_su++;
	}
	/* the kernel names inside measured units, and each one's value per unit of the sampled stratum */
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *kk = &p->kernels[i];
		int32_t u = kk->range >= 0 ? lp_profile_range_find_ancestor(p, kk->range, q.unit) : -1;
		struct lp_map_entry *e;
		int added;
		if (u < 0 || unit_of[u] == -1 || !kk->name)
			continue;
		if (stages && stages->kernel_stage && i < stages->n_kernels && stages->kernel_stage[i] == -2)
			continue;
		if (!(e = lp_map_upsert(&keys, kk->name, strlen(kk->name), &added, NULL)))
			goto oom;
		if (added) {
			const char **slot = LP_ARRAY_PUSH(key_of, n_keys, cap_keys, NULL);
			if (!slot)
				goto oom;
			*slot = kk->name;
			e->val = n_keys - 1;
		}
	}
	val = calloc((n_su + 1) * (n_keys + 1), sizeof(*val));
	exact_part = calloc(n_keys + 1, sizeof(*exact_part));
	x = calloc((n_su + 1) * (n_keys + 1), sizeof(*x));
	err_sum = calloc(n_keys + 1, sizeof(*err_sum));
	err_sq = calloc(n_keys + 1, sizeof(*err_sq));
	half_sum = calloc(n_keys + 1, sizeof(*half_sum));
	out->rows = calloc(n_keys + 1, sizeof(*out->rows));
	if (!val || !exact_part || !x || !err_sum || !err_sq || !half_sum || !out->rows)
		goto oom;
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *kk = &p->kernels[i];
		int32_t u = kk->range >= 0 ? lp_profile_range_find_ancestor(p, kk->range, q.unit) : -1;
		const struct lp_map_entry *e;
		double d = kk->end_ns > kk->start_ns ? (double)(kk->end_ns - kk->start_ns) : 0;
		if (u < 0 || unit_of[u] == -1 || !kk->name)
			continue;
		if (stages && stages->kernel_stage && i < stages->n_kernels && stages->kernel_stage[i] == -2)
			continue;
		e = lp_map_find(&keys, kk->name, strlen(kk->name));
		out->rows[e->val].exact_ns += d;
		out->units_ns += d;
		if (unit_of[u] == -2)
			exact_part[e->val] += d;
		else
			val[(size_t)unit_of[u] * n_keys + e->val] += d;
	}
	for (k = 0; k < n_keys; k++) {
		out->rows[k].key = key_of[k];
		out->rows[k].share = out->units_ns > 0 ? out->rows[k].exact_ns / out->units_ns : 0;
	}
	/* the trials */
	for (t = 0; t < trials; t++) {
		struct lp_tsample_design d;
		uint32_t slot = 0;
		size_t j = 0;
		q.seed = lp_tsample_mix64(seed0 ^ lp_tsample_mix64(t));
		q.offset = t % q.every;
		for (i = 0; i < p->n_ranges; i++) {
			if (unit_of[i] < 0)
				continue;
			refs[j].slot = lp_tsample_recorded(&q, units.ordinal[i], units.unit_index[i])
				? (int32_t)slot++ : -1;
			if (refs[j].slot >= 0)
				for (k = 0; k < n_keys; k++)
					x[(size_t)refs[j].slot * n_keys + k] = val[(size_t)unit_of[i] * n_keys + k];
			j++;
		}
		if (lp_tsample_design_build(refs, n_su, slot, q.every, q.first, &d, err) < 0)
			goto done;
		d.var = var;
		for (k = 0; k < n_keys; k++) {
			struct lp_tsample_est e;
			double col[4096], *xs = col, truth = out->rows[k].exact_ns, dev;
			uint32_t s;
			if (slot > 4096 && !(xs = malloc(slot * sizeof(*xs)))) {
				lp_tsample_design_release(&d);
				goto oom;
			}
			for (s = 0; s < slot; s++)
				xs[s] = x[(size_t)s * n_keys + k];
			lp_tsample_design_estimate(&d, exact_part[k], xs, conf, &e);
			if (xs != col)
				free(xs);
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
	for (k = 0; k < n_keys; k++) {
		struct lp_tsample_cov_row *r = &out->rows[k];
		double tr = r->exact_ns > 0 ? r->exact_ns : 1;
		if (!trials)
			continue;
		r->bias = err_sum[k] / trials / tr;
		r->rmse = sqrt(err_sq[k] / trials) / tr;
		r->half_rel = trials > r->unknown ? half_sum[k] / (trials - r->unknown) / tr : -1;
	}
	out->n_rows = n_keys;
	qsort(out->rows, out->n_rows, sizeof(*out->rows), cmp_cov);
	rc = 0;
	goto done;
oom:
	lp_oom(err);
done:
	if (rc < 0)
		lp_tsample_coverage_release(out);
	lp_tsample_units_release(&units);
	lp_map_release(&keys);
	free(key_of);
	free(refs);
	free(unit_of);
	free(val);
	free(exact_part);
	free(x);
	free(err_sum);
	free(err_sq);
	free(half_sum);
	return rc;
}
