/* ncu_sample.c: the Nsight Compute sampling planner's first half (see ncu_sample.h): the capture's
 * launches in, their invocation numbers, groups, picks and the coverage target out, plus the cost
 * model. Pure logic; ncu_sample_sched.c plans the ncu processes, ncu_sample_result.c takes the
 * results back, ncu_sample_input.c reads the capture. */
#include "analyze/ncu_sample.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/ncu_sample_impl.h"
#include "core/vec.h"

struct ent {
	const struct lp_sample_launch *l;
	size_t idx;
};

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

int lp_sample_cmp_dim3(const uint32_t *a, const uint32_t *b)
{
	int i;
	for (i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int cmp_config(const struct lp_sample_launch *a, const struct lp_sample_launch *b)
{
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	if ((c = lp_sample_cmp_dim3(a->grid, b->grid)) != 0)
		return c;
	if ((c = lp_sample_cmp_dim3(a->block, b->block)) != 0)
		return c;
	if (a->shared_bytes != b->shared_bytes)
		return a->shared_bytes < b->shared_bytes ? -1 : 1;
	return 0;
}

/* ncu's invocation numbers (without a context or stream in --kernel-id, in the default global
 * filter mode) count the launches of a kernel name, whatever its grid or block: measured with
 * `--kernel-id ::regex:^(k_rmsnorm)$:^(2|5)$`, ncu 2025.3.1 profiled 2 launches where k_rmsnorm
 * ran with two configurations (bench/ncu_sampling/README.md). */
static int cmp_ent_name(const void *va, const void *vb)
{
	const struct ent *a = va, *b = vb;
	int c = strcmp(a->l->name, b->l->name);
	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_ent_group(const void *va, const void *vb)
{
	const struct ent *a = va, *b = vb;
	int c = cmp_config(a->l, b->l);
	if (c)
		return c;
	if ((c = strcmp(a->l->region, b->l->region)) != 0)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_group(const void *va, const void *vb)
{
	const struct lp_sample_group *a = va, *b = vb;
	int c;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if ((c = strcmp(a->name, b->name)) != 0)
		return c;
	if ((c = lp_sample_cmp_dim3(a->grid, b->grid)) != 0)
		return c;
	if ((c = lp_sample_cmp_dim3(a->block, b->block)) != 0)
		return c;
	return strcmp(a->region, b->region);
}

static int cmp_i32(const void *va, const void *vb)
{
	int32_t a = *(const int32_t *)va, b = *(const int32_t *)vb;
	return a < b ? -1 : a > b;
}

int lp_sample_cmp_u64(const void *va, const void *vb)
{
	uint64_t a = *(const uint64_t *)va, b = *(const uint64_t *)vb;
	return a < b ? -1 : a > b;
}

/* K picks for one group: `e` are its launches in launch order, inv their invocation numbers.
 * Steps known: K evenly spaced distinct steps, and in the j-th a launch at a different position
 * (j*m/K of its m launches there); else K evenly spaced launches. */
static void choose_picks(const struct ent *e, size_t n, const uint64_t *inv, unsigned k, struct lp_sample_group *g,
	int32_t *steps_tmp)
{
	size_t ns = 0, i, j;
	for (i = 0; i < n; i++)
		if (e[i].l->step >= 0)
			steps_tmp[ns++] = e[i].l->step;
	qsort(steps_tmp, ns, sizeof(*steps_tmp), cmp_i32);
	for (i = 0, j = 0; i < ns; i++)
		if (j == 0 || steps_tmp[j - 1] != steps_tmp[i])
			steps_tmp[j++] = steps_tmp[i];
	ns = j;
	g->n_steps = (uint32_t)ns;
	g->n_picks_full = 0;
	if (ns >= k) {
		for (j = 0; j < k; j++) {
			int32_t s = steps_tmp[(size_t)(((double)j + 0.5) * (double)ns / (double)k)];
			size_t first = n, m = 0, pos;
			for (i = 0; i < n; i++)
				if (e[i].l->step == s) {
					if (first == n)
						first = i;
					m++;
				}
			pos = 0;
			for (i = first; i < n; i++) {
				if (e[i].l->step != s)
					continue;
				if (pos == (size_t)((j * m) / k))
					break;
				pos++;
			}
			g->picks[g->n_picks_full].invocation = inv[e[i].idx];
			g->picks[g->n_picks_full].step = s;
			g->picks[g->n_picks_full].duration_ns = e[i].l->duration_ns;
			g->n_picks_full++;
		}
	} else {
		size_t want = n < k ? n : k;
		for (j = 0; j < want; j++) {
			size_t at = (size_t)(((double)j + 0.5) * (double)n / (double)want);
			if (at >= n)
				at = n - 1;
			g->picks[g->n_picks_full].invocation = inv[e[at].idx];
			g->picks[g->n_picks_full].step = e[at].l->step;
			g->picks[g->n_picks_full].duration_ns = e[at].l->duration_ns;
			g->n_picks_full++;
		}
	}
	g->n_picks = g->n_picks_full;
}

void lp_sample_procs_free(struct lp_sample_plan *p)
{
	size_t i;
	for (i = 0; i < p->n_procs; i++) {
		free(p->procs[i].groups);
		free(p->procs[i].invocations);
		free(p->procs[i].names);
		lp_buf_release(&p->procs[i].kernel_id);
	}
	free(p->procs);
	p->procs = NULL;
	p->n_procs = 0;
}

void lp_sample_plan_release(struct lp_sample_plan *p)
{
	size_t i;
	lp_sample_procs_free(p);
	for (i = 0; i < p->n_groups; i++)
		free(p->groups[i].results);
	free(p->groups);
	free(p->configs);
	if (p->priv) {
		free(p->priv->name_of);
		free(p->priv->inv_of);
		free(p->priv->group_of);
		free(p->priv->rank_of);
		free(p->priv->inv_launch);
		free(p->priv->winv_of);
		free(p->priv->winv_launch);
		free(p->priv->members);
		free(p->priv->stand);
		free(p->priv);
	}
	memset(p, 0, sizeof(*p));
}

/* Tells the plan's launches `mem` (of group gi, launch order) their group and the rank of their
 * step among the group's steps (their position when a step is unknown), or -1 when `not_cands`
 * (they are not where the picks come from); returns the number of ranks. */
static uint32_t rank_launches(struct lp_sample_plan *p, size_t gi, const uint32_t *mem, size_t n, int not_cands)
{
	const struct lp_sample_launch *launches = p->priv->launches;
	int32_t prev = INT32_MIN, rank = -1;
	int steps_known = 1;
	size_t j;
	for (j = 0; j < n; j++)
		steps_known &= launches[mem[j]].step >= 0;
	for (j = 0; j < n; j++) {
		int32_t st = launches[mem[j]].step;
		p->priv->group_of[mem[j]] = (int32_t)gi;
		if (!steps_known)
			rank = (int32_t)j;
		else if (st != prev) {   /* a group's steps come in launch order: ranks count them */
			rank++;
			prev = st;
		}
		p->priv->rank_of[mem[j]] = not_cands ? -1 : rank;
	}
	return (uint32_t)(rank + 1);
}

const uint32_t *lp_sample_cands(const struct lp_sample_plan *p, const struct lp_sample_group *g, size_t *n)
{
	if (g->picks_from_warmup) {
		*n = g->n_stand;
		return p->priv->stand + g->first_stand;
	}
	*n = g->n_members;
	return p->priv->members + g->first_member;
}

static unsigned k_of(const struct lp_sample_opts *o)
{
	unsigned k = o->k ? o->k : LP_SAMPLE_DEFAULT_K;
	return k > LP_SAMPLE_MAX_K ? LP_SAMPLE_MAX_K : k;
}

int lp_sample_group(const struct lp_sample_launch *launches, size_t n, const struct lp_sample_opts *o,
	struct lp_sample_plan *out, struct lp_err *err)
{
	struct ent *e = NULL, *w = NULL;
	uint64_t *inv = NULL;
	size_t *cfg_of = NULL;
	int32_t *steps = NULL;
	size_t i, j, n_sel = 0, n_warm = 0, cap_configs = 0, cap_groups = 0;
	double cum = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->k = k_of(o);
	out->coverage_target = o->coverage > 0 ? o->coverage : LP_SAMPLE_DEFAULT_COVERAGE;
	if (n > LP_SAMPLE_MAX_LAUNCHES)
		return lp_err_set(err, LP_EUSAGE, "%zu kernel launches: more than the sampler takes (%u)", n,
			LP_SAMPLE_MAX_LAUNCHES);
	if (n == 0)
		return 0;
	e = malloc(n * sizeof(*e));
	w = malloc(n * sizeof(*w));
	inv = malloc(n * sizeof(*inv));
	cfg_of = malloc(n * sizeof(*cfg_of));
	steps = malloc(n * sizeof(*steps));
	if (!e || !w || !inv || !cfg_of || !steps) {
		oom(err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!launches[i].name || !launches[i].name[0]) {
			lp_err_set(err, LP_EUSAGE, "kernel launch %zu has no name", i);
			goto out;
		}
		e[i].l = &launches[i];
		e[i].idx = i;
	}
	/* invocation numbers: per kernel name, in launch order, over the whole process */
	qsort(e, n, sizeof(*e), cmp_ent_name);
	for (i = 0; i < n; i++) {
		if (i == 0 || strcmp(e[i - 1].l->name, e[i].l->name) != 0) {
			struct lp_sample_config *nc = LP_ARRAY_PUSH(out->configs, out->n_configs, cap_configs, err);
			if (!nc)
				goto out;
			nc->name = e[i].l->name;
			memcpy(nc->grid, e[i].l->grid, sizeof(nc->grid));
			memcpy(nc->block, e[i].l->block, sizeof(nc->block));
			nc->shared_bytes = e[i].l->shared_bytes;
		}
		inv[e[i].idx] = ++out->configs[out->n_configs - 1].count;
		cfg_of[e[i].idx] = out->n_configs - 1;
	}
	/* groups: the selected launches by configuration and region; the warm-up's stand-ins apart */
	for (i = 0; i < n; i++) {
		struct ent *to;
		if (!launches[i].region)
			continue;
		to = launches[i].warmup ? &w[n_warm++] : &e[n_sel++];
		to->l = &launches[i];
		to->idx = i;
	}
	qsort(e, n_sel, sizeof(*e), cmp_ent_group);
	qsort(w, n_warm, sizeof(*w), cmp_ent_group);
	for (i = 0; i < n_sel; i = j) {
		struct lp_sample_group *g;
		size_t m;
		for (j = i + 1; j < n_sel && !cmp_config(e[i].l, e[j].l) && !strcmp(e[i].l->region, e[j].l->region); j++)
			;
		if (!(g = LP_ARRAY_PUSH(out->groups, out->n_groups, cap_groups, err)))
			goto out;
		g->name = e[i].l->name;
		g->kernel_name = e[i].l->kernel_name ? e[i].l->kernel_name : e[i].l->name;
		g->region = e[i].l->region;
		memcpy(g->grid, e[i].l->grid, sizeof(g->grid));
		memcpy(g->block, e[i].l->block, sizeof(g->block));
		g->shared_bytes = e[i].l->shared_bytes;
		g->config_launches = out->configs[cfg_of[e[i].idx]].count;
		g->min_ns = UINT64_MAX;
		g->proc = -1;
		g->first_member = i;
		g->n_members = j - i;
		for (m = i; m < j; m++) {
			uint64_t d = e[m].l->duration_ns;
			g->n_launches++;
			g->total_ns += d;
			if (d < g->min_ns)
				g->min_ns = d;
			if (d > g->max_ns)
				g->max_ns = d;
		}
		out->n_launches += g->n_launches;
		out->total_ns += g->total_ns;
		choose_picks(e + i, j - i, inv, out->k, g, steps);
	}
	/* stand-ins: the warm-up launches of each group's configuration and region (both lists are in
	 * cmp_ent_group order, and so are the groups so far) */
	for (i = 0, j = 0; i < out->n_groups; i++) {
		struct lp_sample_group *g = &out->groups[i];
		const struct lp_sample_launch *rep = e[g->first_member].l;
		while (j < n_warm && (cmp_config(w[j].l, rep) ? cmp_config(w[j].l, rep) : strcmp(w[j].l->region, rep->region)) < 0)
			j++;
		g->first_stand = j;
		while (j < n_warm && !cmp_config(w[j].l, rep) && !strcmp(w[j].l->region, rep->region))
			j++;
		g->n_stand = j - g->first_stand;
	}
	/* what scheduling reads: members in e's group order (first_member survives the sort) */
	{
		struct lp_sample_priv *pv = calloc(1, sizeof(*pv));
		size_t off = 0;
		if (!pv) {
			oom(err);
			goto out;
		}
		out->priv = pv;
		pv->launches = launches;
		pv->n = n;
		pv->name_of = malloc(n * sizeof(*pv->name_of));
		pv->inv_of = malloc(n * sizeof(*pv->inv_of));
		pv->group_of = malloc(n * sizeof(*pv->group_of));
		pv->rank_of = malloc(n * sizeof(*pv->rank_of));
		pv->inv_launch = malloc(n * sizeof(*pv->inv_launch));
		pv->winv_of = calloc(n, sizeof(*pv->winv_of));
		pv->winv_launch = malloc(n * sizeof(*pv->winv_launch));
		pv->members = malloc((n_sel ? n_sel : 1) * sizeof(*pv->members));
		pv->stand = malloc((n_warm ? n_warm : 1) * sizeof(*pv->stand));
		if (!pv->name_of || !pv->inv_of || !pv->group_of || !pv->rank_of || !pv->inv_launch || !pv->members ||
		    !pv->stand || !pv->winv_of || !pv->winv_launch) {
			oom(err);
			goto out;
		}
		for (i = 0; i < out->n_configs; i++) {
			out->configs[i].offset = off;
			off += out->configs[i].count;
		}
		for (i = 0; i < n; i++) {
			pv->name_of[i] = (uint32_t)cfg_of[i];
			pv->inv_of[i] = inv[i];
			pv->group_of[i] = -1;
			pv->rank_of[i] = -1;
			pv->inv_launch[out->configs[cfg_of[i]].offset + inv[i] - 1] = (uint32_t)i;
			/* the warm-up's own numbering: with an NVTX include, ncu (2025.3.1) numbers only the
			 * launches that pass it (bench/ncu_sampling/README.md section 5) */
			if (launches[i].warmup) {
				struct lp_sample_config *c = &out->configs[cfg_of[i]];
				pv->winv_of[i] = ++c->wcount;
				pv->winv_launch[c->offset + c->wcount - 1] = (uint32_t)i;
			}
		}
		for (i = 0; i < n_sel; i++)
			pv->members[i] = (uint32_t)e[i].idx;
		for (i = 0; i < n_warm; i++)
			pv->stand[i] = (uint32_t)w[i].idx;
	}
	if (out->n_groups)
		qsort(out->groups, out->n_groups, sizeof(*out->groups), cmp_group);
	for (i = 0; i < out->n_groups; i++) {
		struct lp_sample_group *g = &out->groups[i];
		uint32_t r, span, want;
		g->n_ranks = rank_launches(out, i, out->priv->members + g->first_member, g->n_members, 0);
		if (!g->n_stand)
			continue;
		/* the picks come from the earliest stand-ins (the first 1/LP_SAMPLE_STAND_IN_SPAN of their
		 * steps, at least K) when they have as many steps as the picks need; else from the group's
		 * own launches, and the stand-ins only attach what ncu profiles of them */
		r = rank_launches(out, i, out->priv->stand + g->first_stand, g->n_stand, 0);
		want = out->k < g->n_ranks ? out->k : g->n_ranks;
		g->picks_from_warmup = r >= want;
		span = (r + LP_SAMPLE_STAND_IN_SPAN - 1) / LP_SAMPLE_STAND_IN_SPAN;
		if (span < want)
			span = want;
		for (j = 0; j < g->n_stand; j++) {
			uint32_t l = out->priv->stand[g->first_stand + j];
			if (!g->picks_from_warmup || out->priv->rank_of[l] >= (int32_t)span)
				out->priv->rank_of[l] = -1;
		}
		if (g->picks_from_warmup) {
			for (j = 0; j < g->n_members; j++)
				out->priv->rank_of[out->priv->members[g->first_member + j]] = -1;
			g->n_ranks = span;
		}
	}
	for (i = 0; i < out->n_groups; i++) {
		struct lp_sample_group *g = &out->groups[i];
		uint64_t region_ns = 0, before_ns = 0;
		g->share = out->total_ns ? (double)g->total_ns / (double)out->total_ns : 0;
		/* per region: wanted while the larger groups of its region cover less than the target */
		for (j = 0; j < out->n_groups; j++)
			if (!strcmp(out->groups[j].region, g->region)) {
				region_ns += out->groups[j].total_ns;
				if (j < i)
					before_ns += out->groups[j].total_ns;
			}
		g->region_share = region_ns ? (double)g->total_ns / (double)region_ns : 0;
		cum = region_ns ? (double)before_ns / (double)region_ns : 0;
		g->wanted = out->coverage_target >= 1.0 || cum < out->coverage_target - 1e-12;
		if (g->wanted)
			out->n_wanted++;
	}
	rc = 0;
out:
	free(e);
	free(w);
	free(inv);
	free(cfg_of);
	free(steps);
	if (rc < 0)
		lp_sample_plan_release(out);
	return rc;
}


/* ---- costs ---- */

double lp_sample_launch_cost_s(int passes)
{
	return 0.02 * (double)(passes > 0 ? passes : 1);
}

int lp_sample_passes_estimate(const char *set, size_t n_sections, size_t n_metrics)
{
	static const struct { const char *name; int passes; } sets[] = {
		{ "basic", 8 }, { "detailed", 20 }, { "full", 40 }, { "roofline", 12 }, { "pmsampling", 4 }, { "nvlink", 4 },
	};
	int passes = 0;
	size_t i;
	if (set)
		for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
			if (!strcmp(sets[i].name, set))
				passes = sets[i].passes;
	if (set && !passes)
		passes = 20;
	passes += 3 * (int)(n_sections > 40 ? 40 : n_sections);
	passes += 3 * (int)(n_metrics > 4 ? 4 : n_metrics);
	return passes > 0 ? passes : 1;
}
