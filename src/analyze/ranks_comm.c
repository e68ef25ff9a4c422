/* ranks_comm.c: communication against compute per stage iteration and per decode step, and the
 * wait in collectives (ranks.h has the rules; ranks_impl.h the shared part). A rank's kernels,
 * peer copies and host collective ranges become intervals of the occurrence (stage iteration,
 * and decode step) they were issued in; per occurrence the unions of compute and communication
 * and their intersection give comm, compute, overlapped and exposed. Collectives are lined up
 * across the ranks by issue order. */
#include "analyze/ranks_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "llmprof/trace_format.h"
#include "parse/kname.h"

/* ---- names ---- */

static int has_prefix_ci(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (tolower((unsigned char)*s) != tolower((unsigned char)*prefix))
			return 0;
	return 1;
}

int lp_comm_range_is(const char *name)
{
	/* names a program (or torch.distributed's record_function) gives a collective */
	static const char *const pats[] = {
		"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "barrier",
		"sendrecv", "all_gather_into_tensor",
	};
	static const char *const exact[] = { "send", "recv", "isend", "irecv", "reduce", "gather", "scatter" };
	size_t i;
	if (!name)
		return 0;
	if (has_prefix_ci(name, "nccl:") || has_prefix_ci(name, "gloo:") || has_prefix_ci(name, "c10d::") ||
	    has_prefix_ci(name, "nccl_") || has_prefix_ci(name, "gloo_"))
		return 1;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (lp_kname_has_loose(name, pats[i]))
			return 1;
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return 1;
	return 0;
}

/* ---- intervals ---- */

struct ival {
	int32_t occ;
	uint8_t comm;                /* 1 communication, 0 compute */
	uint64_t s, e;
};

static int cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	if (x->occ != y->occ)
		return x->occ < y->occ ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return (x->s > y->s) - (x->s < y->s);
}

/* Merges sorted intervals [from, to) in place into their union; returns its count. */
static size_t union_of(struct ival *v, size_t n)
{
	size_t i, m = 0;
	for (i = 0; i < n; i++) {
		if (m && v[i].s <= v[m - 1].e) {
			if (v[i].e > v[m - 1].e)
				v[m - 1].e = v[i].e;
		} else {
			v[m++] = v[i];
		}
	}
	return m;
}

static uint64_t length_of(const struct ival *v, size_t n)
{
	uint64_t t = 0;
	size_t i;
	for (i = 0; i < n; i++)
		t += v[i].e - v[i].s;
	return t;
}

/* Length of the intersection of two unions (each sorted and disjoint). */
static uint64_t intersect(const struct ival *a, size_t na, const struct ival *b, size_t nb)
{
	size_t i = 0, j = 0;
	uint64_t t = 0;
	while (i < na && j < nb) {
		uint64_t s = a[i].s > b[j].s ? a[i].s : b[j].s;
		uint64_t e = a[i].e < b[j].e ? a[i].e : b[j].e;
		if (e > s)
			t += e - s;
		if (a[i].e < b[j].e)
			i++;
		else
			j++;
	}
	return t;
}

/* The occurrence (flat index) a range belongs to: itself or its nearest ancestor that is one. */
static int32_t occ_above(const struct lp_profile *p, const int32_t *occ_of, int32_t r)
{
	int guard = 0;
	for (; r >= 0 && (size_t)r < p->n_ranges && guard++ < LP_RANKS_MAX_WALK; r = p->ranges[r].parent)
		if (occ_of[r] >= 0)
			return occ_of[r];
	return -1;
}

static int cmp_coll(const void *a, const void *b)
{
	const struct lp_ranks_coll *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

void lp_ranks_work_release(struct lp_ranks_work *w)
{
	free(w->kcoll);
	free(w->hcoll);
	free(w->occ_row);
	free(w->occ_wait_ns);
	memset(w, 0, sizeof(*w));
}

/* Is range r inside another decode step, below its stage occurrence's range? */
static int nested_step(const struct lp_profile *sub, const struct lp_stage_set *st, const int32_t *occ_of, int32_t r)
{
	int guard = 0;
	for (r = sub->ranges[r].parent; r >= 0 && (size_t)r < sub->n_ranges && occ_of[r] < 0 &&
	     guard++ < LP_RANKS_MAX_WALK; r = sub->ranges[r].parent)
		if (lp_stage_range_role(st, r) == LP_ROLE_STEP)
			return 1;
	return 0;
}

/* The outermost decode steps inside measured stage iterations, in range order (the order of
 * their stage's step_lat_ms, latency.c). A stage whose count of them equals its step_lat_ms gets
 * a row (n_stages + k, row_stage[k] = the stage); its steps become occurrences n_occ_st.. (socc_of,
 * occ_row). Returns the number of step occurrences, SIZE_MAX when out of memory. */
static size_t find_steps(const struct lp_profile *sub, const struct lp_stage_set *st, const int32_t *occ_of,
	const int32_t *occ_row, int32_t *socc_of, int32_t *step_row, int32_t *step_range, size_t n_occ_st,
	size_t *n_rows, int32_t *row_stage)
{
	size_t i, n = 0, kept = 0, s;
	size_t *count = calloc(st->n_stages + 1, sizeof(*count));
	int32_t *row_of = malloc((st->n_stages + 1) * sizeof(*row_of));
	if (!count || !row_of) {
		free(count);
		free(row_of);
		return SIZE_MAX;
	}
	for (i = 0; i < sub->n_ranges; i++) {
		const struct lp_range *r = &sub->ranges[i];
		int32_t o;
		socc_of[i] = -1;
		if (r->synthetic || r->kind == LP_RANGE_MARK || lp_stage_range_role(st, (int32_t)i) != LP_ROLE_STEP ||
		    !r->end_ns || r->end_ns < r->start_ns || r->parent < 0)
			continue;
		if ((o = occ_above(sub, occ_of, r->parent)) < 0 || st->stages[occ_row[o]].kind == LP_STAGE_STEPS ||
		    nested_step(sub, st, occ_of, (int32_t)i))
			continue;
		step_row[n] = occ_row[o];        /* its stage, for now */
		step_range[n++] = (int32_t)i;
		count[occ_row[o]]++;
	}
	*n_rows = st->n_stages;
	for (s = 0; s < st->n_stages; s++) {
		row_of[s] = -1;
		if (count[s] && count[s] == st->stages[s].n_step_lat) {
			row_stage[*n_rows - st->n_stages] = (int32_t)s;
			row_of[s] = (int32_t)(*n_rows)++;
		}
	}
	for (i = 0; i < n; i++) {
		int32_t row = row_of[step_row[i]];
		if (row < 0)
			continue;
		step_row[kept] = row;
		step_range[kept] = step_range[i];
		socc_of[step_range[kept]] = (int32_t)(n_occ_st + kept);
		kept++;
	}
	free(count);
	free(row_of);
	return kept;
}

/* Adds interval [s, e) of occurrence o (and of its step so) to iv. */
static void add_iv(struct ival *iv, size_t *n, int32_t o, int32_t so, int comm, uint64_t s, uint64_t e)
{
	if (e <= s)
		return;
	if (o >= 0)
		iv[(*n)++] = (struct ival){ o, (uint8_t)comm, s, e };
	if (so >= 0)
		iv[(*n)++] = (struct ival){ so, (uint8_t)comm, s, e };
}

int lp_ranks_comm(struct lp_rank_view *v, struct lp_rank *rk, const struct lp_profile *sub, struct lp_ranks_work *w)
{
	const struct lp_stage_set *st = &rk->stages;
	int32_t *occ_of = NULL, *socc_of = NULL, *step_row = NULL, *step_range = NULL, row_stage[LP_STAGES_MAX];
	struct ival *iv = NULL;
	size_t n_iv = 0, cap_iv, i, j, n_occ_st = 0, n_steps, n_rows = 0, n_occ;
	uint64_t *comm_ns = NULL, *comp_ns = NULL, *ovl_ns = NULL, *ckern = NULL, *kern = NULL;
	int rc = -1;

	for (i = 0; i < st->n_stages; i++)
		n_occ_st += st->stages[i].n_iters;
	occ_of = malloc((sub->n_ranges + 1) * sizeof(*occ_of));
	socc_of = malloc((sub->n_ranges + 1) * sizeof(*socc_of));
	step_row = malloc((sub->n_ranges + 1) * sizeof(*step_row));
	step_range = malloc((sub->n_ranges + 1) * sizeof(*step_range));
	w->occ_row = malloc((n_occ_st + sub->n_ranges + 1) * sizeof(*w->occ_row));
	if (!occ_of || !socc_of || !step_row || !step_range || !w->occ_row || st->n_stages > LP_STAGES_MAX)
		goto out;
	for (i = 0; i < sub->n_ranges; i++)
		occ_of[i] = -1;
	for (i = 0, n_occ = 0; i < st->n_stages; i++)
		for (j = 0; j < st->stages[i].n_iters; j++) {
			int32_t r = st->stages[i].iters[j].range;
			if (r >= 0 && (size_t)r < sub->n_ranges)
				occ_of[r] = (int32_t)n_occ;
			w->occ_row[n_occ++] = (int32_t)i;
		}
	n_steps = find_steps(sub, st, occ_of, w->occ_row, socc_of, step_row, step_range, n_occ_st, &n_rows, row_stage);
	if (n_steps == SIZE_MAX)
		goto out;
	for (i = 0; i < n_steps; i++)
		w->occ_row[n_occ_st + i] = step_row[i];
	w->n_occ = n_occ = n_occ_st + n_steps;
	w->occ_wait_ns = calloc(n_occ + 1, sizeof(*w->occ_wait_ns));
	comm_ns = calloc(n_occ + 1, sizeof(*comm_ns));
	comp_ns = calloc(n_occ + 1, sizeof(*comp_ns));
	ovl_ns = calloc(n_occ + 1, sizeof(*ovl_ns));
	ckern = calloc(n_occ + 1, sizeof(*ckern));
	kern = calloc(n_occ + 1, sizeof(*kern));
	cap_iv = 2 * (sub->n_kernels + sub->n_copies + sub->n_ranges) + 1;
	iv = malloc(cap_iv * sizeof(*iv));
	w->kcoll = malloc((sub->n_kernels + sub->n_copies + 1) * sizeof(*w->kcoll));
	w->hcoll = malloc((sub->n_ranges + 1) * sizeof(*w->hcoll));
	rk->rstages = lp_arena_alloc(&v->arena, (n_rows + 1) * sizeof(*rk->rstages));
	if (!w->occ_wait_ns || !comm_ns || !comp_ns || !ovl_ns || !ckern || !kern || !iv || !w->kcoll || !w->hcoll ||
	    !rk->rstages)
		goto out;
	rk->n_rstages = n_rows;

	for (i = 0; i < sub->n_kernels; i++) {
		const struct lp_kernel *k = &sub->kernels[i];
		int comm = lp_kname_is_comm(k->name);
		int32_t o, so;
		rk->kernels++;
		if (comm) {
			rk->comm_kernels++;
			rk->comm_kernel_ms += k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) / 1e6 : 0;
		}
		if (i < st->n_kernels && st->kernel_stage[i] == -2)
			continue;   /* warm-up */
		rk->measured_kernels++;
		o = occ_above(sub, occ_of, k->range);
		so = occ_above(sub, socc_of, k->range);
		if (so >= 0)
			kern[so]++;
		if (comm) {
			w->kcoll[w->n_kcoll++] = (struct lp_ranks_coll){ k->start_ns,
				k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0, o, so };
			if (o >= 0)
				ckern[o]++;
			if (so >= 0)
				ckern[so]++;
		}
		add_iv(iv, &n_iv, o, so, comm, k->start_ns, k->end_ns);
	}
	for (i = 0; i < sub->n_copies; i++) {
		const struct lp_copy *c = &sub->copies[i];
		int32_t o, so;
		rk->copies++;
		if (c->kind != LP_COPY_PTOP || lp_stage_range_excluded(st, c->range))
			continue;
		o = occ_above(sub, occ_of, c->range);
		so = occ_above(sub, socc_of, c->range);
		w->kcoll[w->n_kcoll++] = (struct lp_ranks_coll){ c->start_ns,
			c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0, o, so };
		add_iv(iv, &n_iv, o, so, 1, c->start_ns, c->end_ns);
	}
	/* host collective ranges stand for collectives only where no communication kernel does: NCCL
	 * marks its own calls (`ncclAllReduce` ranges around the enqueue), and the kernel is the
	 * collective there; gloo's collectives run on the CPU and have only the range */
	for (i = rk->comm_kernels ? sub->n_ranges : 0; i < sub->n_ranges; i++) {
		const struct lp_range *r = &sub->ranges[i];
		int32_t o, so, a;
		int guard = 0, nested = 0;
		if (r->synthetic || r->kind != LP_RANGE_PUSHPOP || !r->end_ns || r->end_ns < r->start_ns ||
		    !lp_comm_range_is(r->name) || lp_stage_range_excluded(st, (int32_t)i))
			continue;
		/* the outermost collective range only (a `barrier` inside `all_reduce` is one collective) */
		for (a = r->parent; a >= 0 && guard++ < LP_RANKS_MAX_WALK; a = sub->ranges[a].parent)
			if (lp_comm_range_is(sub->ranges[a].name))
				nested = 1;
		if (nested)
			continue;
		o = occ_above(sub, occ_of, (int32_t)i);
		so = occ_above(sub, socc_of, (int32_t)i);
		w->hcoll[w->n_hcoll++] = (struct lp_ranks_coll){ r->start_ns, r->end_ns - r->start_ns, o, so };
		add_iv(iv, &n_iv, o, so, 1, r->start_ns, r->end_ns);
	}
	qsort(w->kcoll, w->n_kcoll, sizeof(*w->kcoll), cmp_coll);
	qsort(w->hcoll, w->n_hcoll, sizeof(*w->hcoll), cmp_coll);

	/* per occurrence: the unions of compute and communication and their intersection */
	qsort(iv, n_iv, sizeof(*iv), cmp_ival);
	for (i = 0; i < n_iv;) {
		int32_t o = iv[i].occ;
		size_t a0 = i, a1, b1, na, nb;
		while (i < n_iv && iv[i].occ == o && !iv[i].comm)
			i++;
		a1 = i;
		while (i < n_iv && iv[i].occ == o)
			i++;
		b1 = i;
		na = union_of(iv + a0, a1 - a0);
		nb = union_of(iv + a1, b1 - a1);
		comp_ns[o] = length_of(iv + a0, na);
		comm_ns[o] = length_of(iv + a1, nb);
		ovl_ns[o] = intersect(iv + a0, na, iv + a1, nb);
	}

	for (i = 0; i < n_rows; i++) {
		struct lp_rank_stage *rs = &rk->rstages[i];
		const struct lp_stage *s = &st->stages[i < st->n_stages ? i : (size_t)row_stage[i - st->n_stages]];
		if (i < st->n_stages) {
			rs->name = s->name;
			rs->domain = s->domain;
			rs->n_iters = s->n_iters;
			rs->lat_ms = s->lat_ms.mean;
			rs->gpu_ms = s->gpu_ms.mean;
			rs->host_ms = s->host_ms.mean;
			rs->kernels = s->kernels.mean;
		} else {
			/* the stage's decode steps: named like the step ranges, latencies the stage's */
			for (j = 0; j < n_steps && step_row[j] != (int32_t)i; j++)
				;
			rs->name = sub->ranges[step_range[j]].name;
			rs->domain = sub->ranges[step_range[j]].domain;
			rs->step_of = s->name;
			rs->n_iters = s->n_step_lat;
			rs->lat_ms = s->step_ms.mean;
		}
		rs->lat_iter_ms = lp_arena_alloc(&v->arena, (rs->n_iters + 1) * sizeof(double));
		if (!rs->lat_iter_ms)
			goto out;
		if (i < st->n_stages)
			for (j = 0; j < s->n_iters; j++)
				rs->lat_iter_ms[j] = (double)s->iters[j].latency_ns / 1e6;
		else
			memcpy(rs->lat_iter_ms, s->step_lat_ms, s->n_step_lat * sizeof(double));
	}
	/* a sampled trace: the step rows' kernel columns are means over their recorded steps */
	for (i = 0; i < n_rows; i++)
		if (i < st->n_stages)
			rk->rstages[i].n_recorded = rk->rstages[i].n_iters;
		else
			rk->rstages[i].of_row = (size_t)row_stage[i - st->n_stages];
	for (i = n_occ_st; i < n_occ; i++) {
		struct lp_rank_stage *rs = &rk->rstages[w->occ_row[i]];
		if (sub->ranges[step_range[i - n_occ_st]].sample == LP_TRACE_STAGE_SKIPPED)
			rk->rstages[rs->of_row].n_unrecorded++;
		else
			rs->n_recorded++;
	}
	for (i = 0; i < n_occ; i++) {
		struct lp_rank_stage *rs = &rk->rstages[w->occ_row[i]];
		double n = rs->n_recorded ? (double)rs->n_recorded : 1;
		const struct lp_range *r = i >= n_occ_st ? &sub->ranges[step_range[i - n_occ_st]] : NULL;
		if (r) /* a step's host time: every step's */
			rs->host_ms += (double)(r->end_ns - r->start_ns) / 1e6 / (double)rs->n_iters;
		if (r && r->sample == LP_TRACE_STAGE_SKIPPED)
			continue;
		rs->comm_ms += (double)comm_ns[i] / 1e6 / n;
		rs->compute_ms += (double)comp_ns[i] / 1e6 / n;
		rs->overlap_ms += (double)ovl_ns[i] / 1e6 / n;
		rs->exposed_ms += (double)(comm_ns[i] - ovl_ns[i]) / 1e6 / n;
		rs->comm_kernels += ckern[i];
		if (r) {
			rs->gpu_ms += (double)(comp_ns[i] + comm_ns[i] - ovl_ns[i]) / 1e6 / n;
			rs->kernels += (double)kern[i] / n;
		}
	}
	rc = 0;
out:
	free(occ_of);
	free(socc_of);
	free(step_row);
	free(step_range);
	free(iv);
	free(comm_ns);
	free(comp_ns);
	free(ovl_ns);
	free(ckern);
	free(kern);
	return rc;
}

void lp_ranks_scale_sampled(struct lp_rank_view *v, struct lp_rank *rk)
{
	size_t i;
	for (i = 0; i < rk->n_rstages; i++) {
		const struct lp_rank_stage *sr = &rk->rstages[i];
		struct lp_rank_stage *st;
		double k;
		if (!sr->step_of)
			continue;
		v->steps += sr->n_iters;
		st = &rk->rstages[sr->of_row];
		v->steps_unrecorded += st->n_unrecorded;
		if (!st->n_unrecorded || !sr->n_recorded || !st->n_iters)
			continue;
		k = (double)st->n_unrecorded / (double)st->n_iters;  /* unrecorded steps per iteration */
		st->gpu_ms += k * sr->gpu_ms;
		st->kernels += k * sr->kernels;
		st->comm_ms += k * sr->comm_ms;
		st->compute_ms += k * sr->compute_ms;
		st->overlap_ms += k * sr->overlap_ms;
		st->exposed_ms += k * sr->exposed_ms;
		st->wait_ms += k * sr->wait_ms;
	}
}

/* Each rank waited its duration of the j-th collective minus the fastest rank's (ranks.h). */
size_t lp_ranks_align_collectives(struct lp_rank_view *v, struct lp_ranks_work *w, int host)
{
	size_t r, j, n = SIZE_MAX, nmax = 0;
	for (r = 0; r < v->n_ranks; r++) {
		size_t c = host ? w[r].n_hcoll : w[r].n_kcoll;
		if (c < n)
			n = c;
		if (c > nmax)
			nmax = c;
	}
	if (n == SIZE_MAX)
		return 0;
	if (n != nmax)
		v->collectives_mismatch = 1;
	for (j = 0; j < n; j++) {
		uint64_t mn = UINT64_MAX;
		for (r = 0; r < v->n_ranks; r++) {
			const struct lp_ranks_coll *c = host ? &w[r].hcoll[j] : &w[r].kcoll[j];
			if (c->dur_ns < mn)
				mn = c->dur_ns;
		}
		for (r = 0; r < v->n_ranks; r++) {
			const struct lp_ranks_coll *c = host ? &w[r].hcoll[j] : &w[r].kcoll[j];
			double wait = (double)(c->dur_ns - mn);
			v->ranks[r].wait_ms += wait / 1e6;
			v->ranks[r].collectives++;
			if (c->occ >= 0 && (size_t)c->occ < w[r].n_occ)
				w[r].occ_wait_ns[c->occ] += wait;
			if (c->socc >= 0 && (size_t)c->socc < w[r].n_occ)
				w[r].occ_wait_ns[c->socc] += wait;
		}
	}
	return n;
}

