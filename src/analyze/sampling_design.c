/* sampling_design.c: the sampled stratum of a sampled trace as a stratified sample with one unit
 * per stratum (sampling.h has the estimator and its variance; docs/tracer.md "Sampled tracing" the
 * reasons). Input: the units of the sampled stratum (chain, index, recorded slot); output: the
 * strata and the weight of each recorded slot, from which a row's estimate and interval follow. */

#include "analyze/sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_ref(const void *a, const void *b)
{
	const struct lp_tsample_unit_ref *x = a, *y = b;
	if (x->chain != y->chain)
		return x->chain < y->chain ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

void lp_tsample_design_release(struct lp_tsample_design *d)
{
	free(d->w);
	free(d->slot_stratum);
	free(d->st_N);
	free(d->st_n);
	free(d->st_chain);
	free(d->st_srs);
	memset(d, 0, sizeof(*d));
}

int lp_tsample_design_build(const struct lp_tsample_unit_ref *units, size_t n_units, uint32_t n_slots,
	uint32_t every, uint32_t first, struct lp_tsample_design *out, struct lp_err *err)
{
	struct lp_tsample_unit_ref *u = NULL;
	uint32_t *block_of = NULL;       /* per sorted unit: its raw block (0..n_blocks-1) */
	uint32_t *bN = NULL, *bn = NULL, *bchain = NULL, *target = NULL;
	uint8_t *bsrs = NULL;
	size_t i, n_blocks = 0;
	uint32_t j;
	int rc;
	memset(out, 0, sizeof(*out));
	if (every == 0)
		every = 1;
	u = malloc((n_units + 1) * sizeof(*u));
	block_of = malloc((n_units + 1) * sizeof(*block_of));
	bN = calloc(n_units + 1, sizeof(*bN));
	bn = calloc(n_units + 1, sizeof(*bn));
	bchain = calloc(n_units + 1, sizeof(*bchain));
	bsrs = calloc(n_units + 1, 1);
	target = malloc((n_units + 1) * sizeof(*target));
	out->w = calloc(n_slots + 1, sizeof(*out->w));
	out->slot_stratum = calloc(n_slots + 1, sizeof(*out->slot_stratum));
	out->st_N = calloc(n_units + 1, sizeof(*out->st_N));
	out->st_n = calloc(n_units + 1, sizeof(*out->st_n));
	out->st_chain = calloc(n_units + 1, sizeof(*out->st_chain));
	out->st_srs = calloc(n_units + 1, 1);
	if (!u || !block_of || !bN || !bn || !bchain || !bsrs || !target || !out->w || !out->slot_stratum || !out->st_N ||
	    !out->st_n || !out->st_chain || !out->st_srs)
		goto oom;
	if (n_units)
		memcpy(u, units, n_units * sizeof(*u));
	qsort(u, n_units, sizeof(*u), cmp_ref);
	/* the raw blocks, in (chain, index) order; a chain of stage instances is one block */
	for (i = 0; i < n_units; i++) {
		uint32_t b = u[i].srs ? 0 : u[i].index >= first ? (u[i].index - first) / every : 0;
		if (i == 0 || u[i].chain != u[i - 1].chain ||
		    b != (u[i - 1].srs ? 0 : u[i - 1].index >= first ? (u[i - 1].index - first) / every : 0)) {
			bchain[n_blocks] = u[i].chain;
			bsrs[n_blocks] = u[i].srs;
			n_blocks++;
		}
		block_of[i] = (uint32_t)(n_blocks - 1);
		bN[n_blocks - 1]++;
		if (u[i].slot >= 0)
			bn[n_blocks - 1]++;
	}
	/* where each block ends up: itself when it has a recorded unit; else the previous block of its
	 * chain with one, else the next of its chain, else the previous of any chain, else the next
	 * (stage instances and units never stand for each other: a chain of stage instances without a
	 * recorded one stands for nothing) */
	for (i = 0; i < n_blocks; i++) {
		size_t k;
		target[i] = UINT32_MAX;
		if (bn[i]) {
			target[i] = (uint32_t)i;
			continue;
		}
		if (bsrs[i])
			continue;
		for (k = i; k-- > 0 && bchain[k] == bchain[i];)
			if (bn[k]) {
				target[i] = (uint32_t)k;
				break;
			}
		for (k = i + 1; target[i] == UINT32_MAX && k < n_blocks && bchain[k] == bchain[i]; k++)
			if (bn[k])
				target[i] = (uint32_t)k;
		for (k = i; target[i] == UINT32_MAX && k-- > 0;)
			if (bn[k] && !bsrs[k])
				target[i] = (uint32_t)k;
		for (k = i + 1; target[i] == UINT32_MAX && k < n_blocks; k++)
			if (bn[k] && !bsrs[k])
				target[i] = (uint32_t)k;
	}
	/* strata: the blocks with a recorded unit, numbered in order (target holds block numbers) */
	{
		uint32_t *st_of_block = bn; /* reused: bn[i] > 0 -> stratum number + 1 */
		uint32_t ns = 0;
		for (i = 0; i < n_blocks; i++)
			if (target[i] == i) {
				out->st_chain[ns] = bchain[i];
				out->st_srs[ns] = bsrs[i];
				out->st_n[ns] = 0;
				st_of_block[i] = ++ns;
			}
		out->n_strata = ns;
		for (i = 0; i < n_units; i++) {
			uint32_t t = target[block_of[i]];
			uint32_t h;
			if (t == UINT32_MAX)
				continue; /* no recorded unit anywhere: nothing to stand for them */
			h = st_of_block[t] - 1;
			out->st_N[h]++;
			out->N++;
			if (u[i].slot >= 0 && (uint32_t)u[i].slot < n_slots) {
				out->st_n[h]++;
				out->slot_stratum[u[i].slot] = h;
				out->n++;
			}
		}
	}
	for (j = 0; j < n_slots; j++) {
		uint32_t h = out->slot_stratum[j];
		out->w[j] = out->st_n[h] ? (double)out->st_N[h] / (double)out->st_n[h] : 0;
	}
	rc = 0;
	goto done;
oom:
	lp_tsample_design_release(out);
	rc = lp_oom(err);
done:
	free(u);
	free(block_of);
	free(bN);
	free(bn);
	free(bchain);
	free(bsrs);
	free(target);
	return rc;
}

/* The one-draw variance of each single-unit stratum from its chain's stratum means y[0..L-1]
 * (balanced second differences, or successive ones): v[j] for j < L; returns the number of
 * differences used (their sum goes to *sum_d for the pooled value of lone strata). */
static uint32_t chain_variance(const double *y, uint32_t L, enum lp_tsample_var var, double *v, double *sum_d)
{
	uint32_t j;
	if (L >= 3 && var == LP_TSAMPLE_VAR_BALANCED) {
		for (j = 0; j < L; j++) {
			double s = 0;
			int k, m = 0;
			for (k = (int)j - 1; k <= (int)j + 1; k++) {
				double d;
				if (k < 1 || k > (int)L - 2)
					continue;
				d = y[k - 1] - 2 * y[k] + y[k + 1];
				s += d * d / 6;
				m++;
			}
			v[j] = m ? s / m : 0;
		}
		for (j = 1; j + 1 < L; j++) {
			double d = y[j - 1] - 2 * y[j] + y[j + 1];
			*sum_d += d * d / 6;
		}
		return L - 2;
	}
	if (L >= 2) {
		for (j = 0; j < L; j++) {
			double s = 0;
			int m = 0;
			if (j > 0) {
				s += (y[j] - y[j - 1]) * (y[j] - y[j - 1]) / 2;
				m++;
			}
			if (j + 1 < L) {
				s += (y[j] - y[j + 1]) * (y[j] - y[j + 1]) / 2;
				m++;
			}
			v[j] = s / m;
		}
		for (j = 0; j + 1 < L; j++)
			*sum_d += (y[j] - y[j + 1]) * (y[j] - y[j + 1]) / 2;
		return L - 1;
	}
	v[0] = -1; /* alone: the pooled value of the other chains */
	return 0;
}

void lp_tsample_design_estimate(const struct lp_tsample_design *d, double exact_sum, const double *x,
	double conf, struct lp_tsample_est *out)
{
	double *y = NULL, *ss = NULL, *v = NULL, var = 0, sum_d = 0;
	uint32_t h, j, df = 0, n_d = 0, needed = 0;
	int unknown = 0;
	memset(out, 0, sizeof(*out));
	out->exact_part = exact_sum;
	out->total = exact_sum;
	out->n = d->n;
	out->N = d->N;
	if (d->N == 0)
		return;
	if (d->n == 0) {
		out->half_ci = -1;
		return;
	}
	if (d->var == LP_TSAMPLE_VAR_SRS) {
		lp_tsample_estimate(exact_sum, x, d->n, d->N, conf, out);
		return;
	}
	y = calloc(d->n_strata + 1, sizeof(*y));
	ss = calloc(d->n_strata + 1, sizeof(*ss));
	v = calloc(d->n_strata + 1, sizeof(*v));
	if (!y || !ss || !v) {
		out->half_ci = -1; /* no memory for the interval: unknown, the estimate below stays */
		unknown = 1;
	}
	for (j = 0; j < d->n; j++)
		out->total += d->w[j] * x[j];
	if (unknown)
		goto done;
	for (j = 0; j < d->n; j++)
		y[d->slot_stratum[j]] += x[j] / d->st_n[d->slot_stratum[j]];
	for (j = 0; j < d->n; j++) {
		double e = x[j] - y[d->slot_stratum[j]];
		ss[d->slot_stratum[j]] += e * e;
	}
	/* per chain (strata are in chain order): the one-draw variances of its strata */
	for (h = 0; h < d->n_strata;) {
		uint32_t e = h, used;
		while (e < d->n_strata && d->st_chain[e] == d->st_chain[h])
			e++;
		used = chain_variance(y + h, e - h, d->var, v + h, &sum_d);
		n_d += used;
		h = e;
	}
	/* every chain a single stratum (blocks as long as the generations, bursts): the successive
	 * differences between the chains' strata, in order, give the pooled value (the generations of
	 * one program drawn alike: the spread between them counts as sampling error, conservative);
	 * stage instances' strata left out */
	if (!n_d) {
		uint32_t prev = UINT32_MAX;
		for (h = 0; h < d->n_strata; h++) {
			if (d->st_srs && d->st_srs[h])
				continue;
			if (prev != UINT32_MAX) {
				sum_d += (y[prev] - y[h]) * (y[prev] - y[h]) / 2;
				n_d++;
			}
			prev = h;
		}
	}
	for (h = 0; h < d->n_strata; h++) {
		double Nh = d->st_N[h], nh = d->st_n[h];
		if (nh >= Nh)
			continue; /* every unit recorded */
		needed++;
		if (d->st_srs && d->st_srs[h]) {
			/* stage instances: a simple random sample of the chain (sampling.h); one recorded
			 * instance gives no spread, which only matters for a row it holds */
			if (nh >= 2) {
				var += Nh * Nh * (1 - nh / Nh) * (ss[h] / (nh - 1)) / nh;
				df += (uint32_t)nh - 1;
			} else if (y[h] != 0) {
				unknown = 1;
				break;
			}
			continue;
		}
		if (nh >= 2 && !d->cluster) {
			var += Nh * Nh * (1 - nh / Nh) * (ss[h] / (nh - 1)) / nh;
			df += (uint32_t)nh - 1;
			continue;
		}
		if (v[h] < 0) {
			if (!n_d) {
				unknown = 1;
				break;
			}
			v[h] = sum_d / n_d;
		}
		var += Nh * Nh * v[h];
	}
	df += n_d;
	if (!unknown && !needed)
		out->half_ci = 0;
	else if (unknown || df == 0)
		out->half_ci = -1;
	else
		out->half_ci = lp_student_t_quantile(0.5 + conf / 2, df) * sqrt(var);
done:
	free(y);
	free(ss);
	free(v);
}

int lp_tsample_units_design(const struct lp_tsample_units *units, size_t n_ranges, const int32_t *slot,
	const struct lp_tsample_plan *plan, struct lp_tsample_design *out, struct lp_err *err)
{
	struct lp_tsample_unit_ref *u = malloc((n_ranges + 1) * sizeof(*u));
	size_t i, n = 0;
	uint32_t n_slots = 0;
	int rc;
	if (!u) {
		memset(out, 0, sizeof(*out));
		return lp_oom(err);
	}
	for (i = 0; i < n_ranges; i++) {
		if (slot[i] < -1 || (units->stratum[i] != LP_TSAMPLE_RECORDED && units->stratum[i] != LP_TSAMPLE_SKIPPED))
			continue;
		u[n].chain = units->chain[i];
		u[n].index = units->unit_index[i];
		u[n].slot = slot[i];
		u[n].srs = units->stage_unit && units->stage_unit[i];
		if (slot[i] >= 0 && (uint32_t)slot[i] + 1 > n_slots)
			n_slots = (uint32_t)slot[i] + 1;
		n++;
	}
	rc = lp_tsample_design_build(u, n, n_slots, plan->every, plan->first, out, err);
	out->cluster = plan->burst > 1;
	free(u);
	return rc;
}
