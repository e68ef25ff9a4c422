/* ncu_sample.c: the Nsight Compute sampling planner (see ncu_sample.h). Pure logic: the capture's
 * launches in, groups, picks, ncu processes and a cost estimate out; the ncu phase runs what it
 * says and writes ncu/sampling.json from lp_sample_plan_json. */
#include "analyze/ncu_sample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/topn.h"
#include "parse/kname.h"
#include "parse/ncu_raw.h"

struct lp_sample_config {
	const char *name;            /* a kernel name (ncu counts invocations per name) */
	uint32_t grid[3], block[3];  /* of its first launch (unused) */
	uint32_t shared_bytes;
	uint64_t count;              /* launches of this name in the process */
	size_t offset;               /* into priv.inv_launch: invocation u is at offset + u - 1 */
};

/* What scheduling needs about every launch (lp_sample_group fills it). */
struct lp_sample_priv {
	const struct lp_sample_launch *launches;
	size_t n;
	uint32_t *name_of;           /* per launch: index into configs (names) */
	uint64_t *inv_of;            /* per launch: its invocation number */
	int32_t *group_of;           /* per launch: its group, -1 not selected */
	int32_t *rank_of;            /* per launch: its step rank in its group (position when no steps) */
	uint32_t *inv_launch;        /* per name, per invocation: the launch */
	uint32_t *members;           /* launches of each group (group->first_member ..), launch order */
};

struct ent {
	const struct lp_sample_launch *l;
	size_t idx;
};

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

static int cmp_u32x3(const uint32_t *a, const uint32_t *b)
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
	if ((c = cmp_u32x3(a->grid, b->grid)) != 0)
		return c;
	if ((c = cmp_u32x3(a->block, b->block)) != 0)
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
	if ((c = cmp_u32x3(a->grid, b->grid)) != 0)
		return c;
	if ((c = cmp_u32x3(a->block, b->block)) != 0)
		return c;
	return strcmp(a->region, b->region);
}

static int cmp_i32(const void *va, const void *vb)
{
	int32_t a = *(const int32_t *)va, b = *(const int32_t *)vb;
	return a < b ? -1 : a > b;
}

static int cmp_u64(const void *va, const void *vb)
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

void lp_sample_plan_release(struct lp_sample_plan *p)
{
	size_t i;
	for (i = 0; i < p->n_procs; i++) {
		free(p->procs[i].groups);
		free(p->procs[i].invocations);
		free(p->procs[i].names);
		lp_buf_release(&p->procs[i].kernel_id);
	}
	free(p->procs);
	free(p->groups);
	free(p->configs);
	if (p->priv) {
		free(p->priv->name_of);
		free(p->priv->inv_of);
		free(p->priv->group_of);
		free(p->priv->rank_of);
		free(p->priv->inv_launch);
		free(p->priv->members);
		free(p->priv);
	}
	memset(p, 0, sizeof(*p));
}

static unsigned k_of(const struct lp_sample_opts *o)
{
	unsigned k = o->k ? o->k : LP_SAMPLE_DEFAULT_K;
	return k > LP_SAMPLE_MAX_K ? LP_SAMPLE_MAX_K : k;
}

int lp_sample_group(const struct lp_sample_launch *launches, size_t n, const struct lp_sample_opts *o,
	struct lp_sample_plan *out, struct lp_err *err)
{
	struct ent *e = NULL;
	uint64_t *inv = NULL;
	size_t *cfg_of = NULL;
	int32_t *steps = NULL;
	size_t i, j, n_sel = 0, cap_groups = 0;
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
	inv = malloc(n * sizeof(*inv));
	cfg_of = malloc(n * sizeof(*cfg_of));
	steps = malloc(n * sizeof(*steps));
	if (!e || !inv || !cfg_of || !steps) {
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
			struct lp_sample_config *nc = realloc(out->configs, (out->n_configs + 1) * sizeof(*nc));
			if (!nc) {
				oom(err);
				goto out;
			}
			out->configs = nc;
			memset(&nc[out->n_configs], 0, sizeof(*nc));
			nc[out->n_configs].name = e[i].l->name;
			memcpy(nc[out->n_configs].grid, e[i].l->grid, sizeof(nc->grid));
			memcpy(nc[out->n_configs].block, e[i].l->block, sizeof(nc->block));
			nc[out->n_configs].shared_bytes = e[i].l->shared_bytes;
			out->n_configs++;
		}
		inv[e[i].idx] = ++out->configs[out->n_configs - 1].count;
		cfg_of[e[i].idx] = out->n_configs - 1;
	}
	/* groups: the selected launches by configuration and region */
	for (i = 0; i < n; i++)
		if (launches[i].region) {
			e[n_sel].l = &launches[i];
			e[n_sel].idx = i;
			n_sel++;
		}
	qsort(e, n_sel, sizeof(*e), cmp_ent_group);
	for (i = 0; i < n_sel; i = j) {
		struct lp_sample_group *g;
		size_t m;
		for (j = i + 1; j < n_sel && !cmp_config(e[i].l, e[j].l) && !strcmp(e[i].l->region, e[j].l->region); j++)
			;
		if (out->n_groups == cap_groups) {
			size_t nc = cap_groups ? cap_groups * 2 : 64;
			struct lp_sample_group *ng = realloc(out->groups, nc * sizeof(*ng));
			if (!ng) {
				oom(err);
				goto out;
			}
			out->groups = ng;
			cap_groups = nc;
		}
		g = &out->groups[out->n_groups++];
		memset(g, 0, sizeof(*g));
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
		pv->members = malloc((n_sel ? n_sel : 1) * sizeof(*pv->members));
		if (!pv->name_of || !pv->inv_of || !pv->group_of || !pv->rank_of || !pv->inv_launch || !pv->members) {
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
		}
		for (i = 0; i < n_sel; i++)
			pv->members[i] = (uint32_t)e[i].idx;
	}
	if (out->n_groups)
		qsort(out->groups, out->n_groups, sizeof(*out->groups), cmp_group);
	for (i = 0; i < out->n_groups; i++) {
		struct lp_sample_group *g = &out->groups[i];
		const uint32_t *mem = out->priv->members + g->first_member;
		int32_t prev = INT32_MIN, rank = -1;
		int steps_known = 1;
		for (j = 0; j < g->n_members; j++)
			steps_known &= launches[mem[j]].step >= 0;
		for (j = 0; j < g->n_members; j++) {
			int32_t st = launches[mem[j]].step;
			out->priv->group_of[mem[j]] = (int32_t)i;
			if (!steps_known)
				rank = (int32_t)j;
			else if (st != prev) {   /* a group's steps come in launch order: ranks count them */
				rank++;
				prev = st;
			}
			out->priv->rank_of[mem[j]] = rank;
		}
		g->n_ranks = (uint32_t)(rank + 1);
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
	free(inv);
	free(cfg_of);
	free(steps);
	if (rc < 0)
		lp_sample_plan_release(out);
	return rc;
}

/* ---- scheduling ---- */

/* Picks are aligned across names (one --kernel-id gives every name the same invocation numbers):
 * the K picks of a group are one per window of its steps (window w = ranks [w R/K, (w+1) R/K)), and
 * for each window still needing one, the launch whose invocation number adds the fewest extras is
 * taken: a number already asked for costs nothing; a new number u costs one launch for every name
 * of the process that reaches u, less those launches that fill another group's window (free
 * picks). Ties go to the launch nearest the window's middle. */

#define CANDIDATES_MAX 256   /* launches looked at per window */

struct sched {
	struct lp_sample_plan *p;
	const struct lp_sample_opts *o;
	unsigned kk;
	unsigned char *in_cluster;   /* per group */
	unsigned char *name_in;      /* per name */
	uint32_t *need;              /* per group: windows still without a pick (bits) */
	unsigned char *in_u;         /* per invocation number (1 .. max count) */
	uint64_t *u;                 /* the numbers asked for, in order of choice */
	size_t n_u;
	uint64_t *counts;            /* the cluster's names' launch counts, sorted */
	size_t n_counts;
	uint32_t *cl_names;          /* the cluster's names */
	size_t n_cl_names;
	uint64_t max_count;
	int record;                  /* write the picks into the groups */
};

static unsigned windows_of(const struct lp_sample_group *g, unsigned kk)
{
	return g->n_ranks < kk ? g->n_ranks : kk;
}

static unsigned window_of(const struct lp_sample_group *g, int32_t rank, unsigned kk)
{
	unsigned nw = windows_of(g, kk);
	return nw ? (unsigned)(((uint64_t)rank * nw) / g->n_ranks) : 0;
}

/* Names of the cluster reaching invocation u. */
static size_t reaching(const struct sched *s, uint64_t u)
{
	size_t lo = 0, hi = s->n_counts;
	while (lo < hi) {   /* first count >= u */
		size_t mid = (lo + hi) / 2;
		if (s->counts[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return s->n_counts - lo;
}

static int wanting(const struct sched *s, int32_t g)
{
	return g >= 0 && s->in_cluster[g] && s->need[g];
}

/* Picks that number u would fill (the launches at u of the cluster's names). */
static size_t fills(const struct sched *s, uint64_t u)
{
	const struct lp_sample_priv *pv = s->p->priv;
	size_t i, n = 0;
	for (i = 0; i < s->n_cl_names; i++) {
		const struct lp_sample_config *c = &s->p->configs[s->cl_names[i]];
		uint32_t l;
		int32_t g;
		if (c->count < u)
			continue;
		l = pv->inv_launch[c->offset + u - 1];
		g = pv->group_of[l];
		if (wanting(s, g) && (s->need[g] >> window_of(&s->p->groups[g], pv->rank_of[l], s->kk) & 1u))
			n++;
	}
	return n;
}

static void take(struct sched *s, uint64_t u)
{
	const struct lp_sample_priv *pv = s->p->priv;
	size_t i;
	s->in_u[u] = 1;
	s->u[s->n_u++] = u;
	for (i = 0; i < s->n_cl_names; i++) {
		const struct lp_sample_config *c = &s->p->configs[s->cl_names[i]];
		uint32_t l;
		int32_t g;
		unsigned w;
		if (c->count < u)
			continue;
		l = pv->inv_launch[c->offset + u - 1];
		g = pv->group_of[l];
		if (!wanting(s, g))
			continue;
		w = window_of(&s->p->groups[g], pv->rank_of[l], s->kk);
		if (!(s->need[g] >> w & 1u))
			continue;
		s->need[g] &= ~(1u << w);
		if (s->record) {
			struct lp_sample_group *gr = &s->p->groups[g];
			if (gr->n_picks < LP_SAMPLE_MAX_K) {
				gr->picks[gr->n_picks].invocation = u;
				gr->picks[gr->n_picks].step = pv->launches[l].step;
				gr->picks[gr->n_picks].duration_ns = pv->launches[l].duration_ns;
				gr->n_picks++;
			}
		}
	}
}

static int cmp_u64_desc_not(const void *va, const void *vb)
{
	uint64_t a = *(const uint64_t *)va, b = *(const uint64_t *)vb;
	return a < b ? -1 : a > b;
}

/* Plans the groups of the cluster (in_cluster set) for K = kk; returns the launches ncu profiles
 * (every cluster name at every chosen number it reaches). */
static uint64_t greedy(struct sched *s)
{
	struct lp_sample_plan *p = s->p;
	const struct lp_sample_priv *pv = p->priv;
	size_t g, i;
	uint64_t total = 0;
	s->n_u = 0;
	s->n_cl_names = 0;
	s->n_counts = 0;
	for (i = 0; i < p->n_configs; i++)
		s->name_in[i] = 0;
	for (g = 0; g < p->n_groups; g++) {
		struct lp_sample_group *gr = &p->groups[g];
		s->need[g] = 0;
		if (!s->in_cluster[g])
			continue;
		s->need[g] = (uint32_t)((1ull << windows_of(gr, s->kk)) - 1);
		if (s->record)
			gr->n_picks = 0;
		if (gr->n_members && !s->name_in[pv->name_of[pv->members[gr->first_member]]]) {
			uint32_t nm = pv->name_of[pv->members[gr->first_member]];
			s->name_in[nm] = 1;
			s->cl_names[s->n_cl_names++] = nm;
			s->counts[s->n_counts++] = p->configs[nm].count;
		}
	}
	qsort(s->counts, s->n_counts, sizeof(*s->counts), cmp_u64_desc_not);
	for (g = 0; g < p->n_groups; g++) {
		const struct lp_sample_group *gr = &p->groups[g];
		const uint32_t *mem = pv->members + gr->first_member;
		unsigned nw = windows_of(gr, s->kk), w;
		if (!s->in_cluster[g])
			continue;
		for (w = 0; w < nw; w++) {
			size_t first = gr->n_members, last = 0, step, m;
			double mid, best_dist = 0;
			long best_extra = 0;
			uint64_t best_u = 0;
			if (!(s->need[g] >> w & 1u))
				continue;
			/* the window's launches: ranks [w R/nw, (w+1) R/nw) are a run of the members */
			for (m = 0; m < gr->n_members; m++)
				if (window_of(gr, pv->rank_of[mem[m]], s->kk) == w) {
					if (first == gr->n_members)
						first = m;
					last = m;
				}
			if (first == gr->n_members)
				continue;
			mid = (double)(first + last) / 2.0;
			step = (last - first + 1) / CANDIDATES_MAX + 1;
			for (m = first; m <= last; m += step) {
				uint64_t u = pv->inv_of[mem[m]];
				long extra = (long)reaching(s, u) - (long)fills(s, u);
				double dist = (double)m > mid ? (double)m - mid : mid - (double)m;
				if (s->in_u[u])
					continue;
				if (!best_u || extra < best_extra || (extra == best_extra && dist < best_dist)) {
					best_u = u;
					best_extra = extra;
					best_dist = dist;
				}
			}
			if (best_u)
				take(s, best_u);
		}
	}
	for (i = 0; i < s->n_u; i++) {
		total += reaching(s, s->u[i]);
		s->in_u[s->u[i]] = 0;   /* clean for the next call; the list stays */
	}
	return total;
}

struct cluster {
	size_t first, n;             /* a run of the sorted names */
	double cost;
};

static int cmp_u32_by_count(const void *va, const void *vb, void *ctx)
{
	const struct lp_sample_config *c = ctx;
	uint32_t a = *(const uint32_t *)va, b = *(const uint32_t *)vb;
	if (c[a].count != c[b].count)
		return c[a].count < c[b].count ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The cluster of names order[first .. first+n) among the candidate groups. */
static void set_cluster(struct sched *s, const unsigned char *cand, const uint32_t *order, size_t first, size_t n)
{
	const struct lp_sample_priv *pv = s->p->priv;
	size_t g, i;
	for (i = 0; i < s->p->n_configs; i++)
		s->name_in[i] = 0;
	for (i = first; i < first + n; i++)
		s->name_in[order[i]] = 2;
	for (g = 0; g < s->p->n_groups; g++) {
		const struct lp_sample_group *gr = &s->p->groups[g];
		s->in_cluster[g] = cand[g] && gr->n_members && s->name_in[pv->name_of[pv->members[gr->first_member]]] == 2;
	}
}

static double cluster_cost(struct sched *s, const unsigned char *cand, const uint32_t *order, size_t first, size_t n,
	uint64_t *pred)
{
	uint64_t launches;
	set_cluster(s, cand, order, first, n);
	launches = greedy(s);
	if (pred)
		*pred = launches;
	return s->o->per_process_s + s->o->per_launch_s * (double)launches;
}

/* Clusters the candidate groups' names into processes (adjacent by launch count, merged while a
 * merge saves, and down to max_procs); returns the estimate, clusters in cl. */
static double partition(struct sched *s, const unsigned char *cand, uint32_t *order, size_t *n_order, struct cluster *cl,
	size_t *n_cl)
{
	const struct lp_sample_priv *pv = s->p->priv;
	unsigned max_procs = s->o->max_procs ? s->o->max_procs : LP_SAMPLE_DEFAULT_MAX_PROCS;
	int eager = s->o->per_launch_s <= 0 && s->o->per_process_s <= 0;
	size_t i, n = 0, g;
	double total = 0;
	unsigned char *seen = s->name_in;   /* scratch; set_cluster clears it */
	for (i = 0; i < s->p->n_configs; i++)
		seen[i] = 0;
	*n_order = 0;
	for (g = 0; g < s->p->n_groups; g++) {
		const struct lp_sample_group *gr = &s->p->groups[g];
		uint32_t nm;
		if (!cand[g] || !gr->n_members)
			continue;
		nm = pv->name_of[pv->members[gr->first_member]];
		if (!seen[nm]) {
			seen[nm] = 1;
			order[(*n_order)++] = nm;
		}
	}
	qsort_r(order, *n_order, sizeof(*order), cmp_u32_by_count, s->p->configs);
	for (i = 0; i < *n_order; i++) {
		cl[n].first = i;
		cl[n].n = 1;
		cl[n].cost = cluster_cost(s, cand, order, i, 1, NULL);
		n++;
	}
	/* merge the adjacent pair that saves the most while one saves (ties merge when no cost is
	 * known: one process), then down to max_procs */
	if (eager && n > 1) {
		cl[0].n = n;
		n = 1;
		cl[0].cost = cluster_cost(s, cand, order, 0, cl[0].n, NULL);
	}
	while (n > 1) {
		size_t best = 0;
		double best_gain = -INFINITY, best_cost = 0;
		for (i = 0; i + 1 < n; i++) {
			double c = cluster_cost(s, cand, order, cl[i].first, cl[i].n + cl[i + 1].n, NULL);
			double gain = cl[i].cost + cl[i + 1].cost - c;
			if (gain > best_gain) {
				best_gain = gain;
				best = i;
				best_cost = c;
			}
		}
		if (best_gain <= 1e-12 && n <= max_procs)
			break;
		cl[best].n += cl[best + 1].n;
		cl[best].cost = best_cost;
		memmove(&cl[best + 1], &cl[best + 2], (n - best - 2) * sizeof(*cl));
		n--;
	}
	for (i = 0; i < n; i++)
		total += cl[i].cost;
	*n_cl = n;
	return total;
}

static int escape_name(const char *name, struct lp_buf *out)
{
	size_t at = out->len, i;
	if (lp_topn_regex_escape(name, out) < 0)
		return -1;
	/* --kernel-id separates its fields with ':': a ':' in a name matches as any character */
	for (i = at; i < out->len; i++)
		if (out->data[i] == ':')
			out->data[i] = '.';
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_pick(const void *va, const void *vb)
{
	const struct lp_sample_pick *a = va, *b = vb;
	return a->invocation < b->invocation ? -1 : a->invocation > b->invocation;
}

static int build_proc(struct sched *s, const unsigned char *cand, const uint32_t *order, const struct cluster *c,
	struct lp_sample_proc *pr, int index, struct lp_err *err)
{
	const char **names = NULL;
	uint64_t *u = NULL;
	size_t i, g, nn = 0;
	memset(pr, 0, sizeof(*pr));
	lp_buf_init(&pr->kernel_id, 0);
	s->record = 1;
	set_cluster(s, cand, order, c->first, c->n);
	pr->predicted = greedy(s);
	s->record = 0;
	pr->est_s = s->o->per_process_s + s->o->per_launch_s * (double)pr->predicted;
	pr->groups = malloc((s->p->n_groups + 1) * sizeof(*pr->groups));
	names = malloc((s->n_cl_names + 1) * sizeof(*names));
	u = malloc((s->n_u + 1) * sizeof(*u));
	if (!pr->groups || !names || !u) {
		free(names);
		free(u);
		return oom(err);
	}
	for (g = 0; g < s->p->n_groups; g++) {
		struct lp_sample_group *gr = &s->p->groups[g];
		if (!s->in_cluster[g])
			continue;
		pr->groups[pr->n_groups++] = g;
		gr->proc = index;
		gr->status = LP_SAMPLE_PLANNED;
		qsort(gr->picks, gr->n_picks, sizeof(*gr->picks), cmp_pick);
		pr->planned += gr->n_picks;
	}
	for (i = 0; i < s->n_cl_names; i++)
		names[nn++] = s->p->configs[s->cl_names[i]].name;
	qsort(names, nn, sizeof(*names), cmp_str);
	memcpy(u, s->u, s->n_u * sizeof(*u));
	qsort(u, s->n_u, sizeof(*u), cmp_u64);
	pr->invocations = malloc((s->n_u + 1) * sizeof(*pr->invocations));
	pr->names = malloc((s->n_cl_names + 1) * sizeof(*pr->names));
	if (!pr->invocations || !pr->names) {
		free(names);
		free(u);
		return oom(err);
	}
	memcpy(pr->invocations, u, s->n_u * sizeof(*u));
	pr->n_invocations = s->n_u;
	memcpy(pr->names, s->cl_names, s->n_cl_names * sizeof(*pr->names));
	pr->n_names = s->n_cl_names;
	lp_buf_adds(&pr->kernel_id, "::regex:^(");
	for (i = 0; i < nn; i++) {
		if (i)
			lp_buf_addc(&pr->kernel_id, '|');
		escape_name(names[i], &pr->kernel_id);
	}
	lp_buf_adds(&pr->kernel_id, ")$:^(");
	for (i = 0; i < s->n_u; i++)
		lp_buf_addf(&pr->kernel_id, "%s%llu", i ? "|" : "", (unsigned long long)u[i]);
	free(names);
	free(u);
	if (lp_buf_adds(&pr->kernel_id, ")$") < 0)
		return oom(err);
	return 0;
}

int lp_sample_schedule(struct lp_sample_plan *p, const struct lp_sample_opts *o, struct lp_err *err)
{
	struct sched s;
	struct cluster *cl = NULL;
	unsigned char *cand = NULL;
	uint32_t *order = NULL;
	size_t *cidx = NULL, n_cand = 0, i, m, n_cl = 0, n_order = 0;
	unsigned kk;
	double eta = 0;
	int rc = -1;

	for (i = 0; i < p->n_procs; i++) {
		free(p->procs[i].groups);
		free(p->procs[i].invocations);
		free(p->procs[i].names);
		lp_buf_release(&p->procs[i].kernel_id);
	}
	free(p->procs);
	p->procs = NULL;
	p->n_procs = 0;
	p->n_cached = p->n_budget_dropped = 0;
	p->predicted = 0;
	p->eta_s = 0;
	p->k_used = 0;
	p->budget_s = o->budget_s > 0 ? o->budget_s : 0;
	memset(&s, 0, sizeof(s));
	s.p = p;
	s.o = o;
	if (!p->n_groups)
		return 0;
	for (i = 0; i < p->n_configs; i++)
		if (p->configs[i].count > s.max_count)
			s.max_count = p->configs[i].count;
	cand = calloc(p->n_groups, 1);
	cidx = malloc(p->n_groups * sizeof(*cidx));
	s.in_cluster = calloc(p->n_groups, 1);
	s.need = calloc(p->n_groups, sizeof(*s.need));
	s.name_in = calloc(p->n_configs + 1, 1);
	s.in_u = calloc(s.max_count + 2, 1);
	s.u = malloc((p->n_groups * LP_SAMPLE_MAX_K + 1) * sizeof(*s.u));
	s.counts = malloc((p->n_configs + 1) * sizeof(*s.counts));
	s.cl_names = malloc((p->n_configs + 1) * sizeof(*s.cl_names));
	order = malloc((p->n_configs + 1) * sizeof(*order));
	cl = malloc((p->n_configs + 1) * sizeof(*cl));
	if (!cand || !cidx || !s.in_cluster || !s.need || !s.name_in || !s.in_u || !s.u || !s.counts || !s.cl_names ||
	    !order || !cl) {
		oom(err);
		goto out;
	}
	for (i = 0; i < p->n_groups; i++) {
		struct lp_sample_group *g = &p->groups[i];
		g->proc = -1;
		g->n_picks = 0;
		if (g->cached) {
			g->status = LP_SAMPLE_CACHED;
			p->n_cached++;
		} else if (!g->wanted) {
			g->status = LP_SAMPLE_BEYOND_TARGET;
		} else {
			g->status = LP_SAMPLE_BUDGET;   /* until planned */
			cidx[n_cand++] = i;
			cand[i] = 1;
		}
	}
	m = n_cand;
	for (kk = p->k; kk >= 1; kk--) {
		s.kk = kk;
		eta = n_cand ? partition(&s, cand, order, &n_order, cl, &n_cl) : 0;
		if (p->budget_s <= 0 || eta <= p->budget_s)
			break;
	}
	if (kk == 0) {
		/* K = 1 is still too much: the largest prefix of groups that fits */
		size_t lo = 0, hi = n_cand;
		s.kk = kk = 1;
		while (lo < hi) {
			size_t mid = (lo + hi + 1) / 2, j;
			memset(cand, 0, p->n_groups);
			for (j = 0; j < mid; j++)
				cand[cidx[j]] = 1;
			if (partition(&s, cand, order, &n_order, cl, &n_cl) <= p->budget_s)
				lo = mid;
			else
				hi = mid - 1;
		}
		m = lo;
		memset(cand, 0, p->n_groups);
		for (i = 0; i < m; i++)
			cand[cidx[i]] = 1;
		eta = m ? partition(&s, cand, order, &n_order, cl, &n_cl) : 0;
		if (!m)
			n_cl = 0;
	}
	p->n_budget_dropped = n_cand - m;
	if (n_cl) {
		p->procs = calloc(n_cl, sizeof(*p->procs));
		if (!p->procs) {
			oom(err);
			goto out;
		}
		eta = 0;
		for (i = 0; i < n_cl; i++) {
			p->n_procs = i + 1;
			if (build_proc(&s, cand, order, &cl[i], &p->procs[i], (int)i, err) < 0)
				goto out;
			p->predicted += p->procs[i].predicted;
			eta += p->procs[i].est_s;
		}
		p->k_used = kk;
	}
	p->eta_s = eta;
	p->planned_share = 0;
	for (i = 0; i < p->n_groups; i++)
		if (p->groups[i].status == LP_SAMPLE_PLANNED || p->groups[i].status == LP_SAMPLE_CACHED)
			p->planned_share += p->groups[i].share;
	rc = 0;
out:
	free(cand);
	free(cidx);
	free(s.in_cluster);
	free(s.need);
	free(s.name_in);
	free(s.in_u);
	free(s.u);
	free(s.counts);
	free(s.cl_names);
	free(order);
	free(cl);
	return rc;
}

int lp_sample_expected(const struct lp_sample_plan *p, size_t proc, uint32_t **out, size_t *n, struct lp_err *err)
{
	const struct lp_sample_proc *pr = &p->procs[proc];
	const struct lp_sample_priv *pv = p->priv;
	unsigned char *name_in;
	size_t i, j, cap = 0;
	*out = NULL;
	*n = 0;
	if (!pv || proc >= p->n_procs)
		return 0;
	name_in = calloc(p->n_configs + 1, 1);
	if (!name_in)
		return oom(err);
	for (j = 0; j < pr->n_names; j++)
		name_in[pr->names[j]] = 1;
	for (i = 0; i < pv->n; i++) {
		size_t lo = 0, hi = pr->n_invocations;
		if (!name_in[pv->name_of[i]])
			continue;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (pr->invocations[mid] < pv->inv_of[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == pr->n_invocations || pr->invocations[lo] != pv->inv_of[i])
			continue;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			uint32_t *no = realloc(*out, nc * sizeof(*no));
			if (!no) {
				free(name_in);
				free(*out);
				*out = NULL;
				return oom(err);
			}
			*out = no;
			cap = nc;
		}
		(*out)[(*n)++] = (uint32_t)i;
	}
	free(name_in);
	return 0;
}

const struct lp_sample_launch *lp_sample_launch_at(const struct lp_sample_plan *p, uint32_t idx)
{
	return p->priv && idx < p->priv->n ? &p->priv->launches[idx] : NULL;
}

int32_t lp_sample_group_of(const struct lp_sample_plan *p, uint32_t idx)
{
	return p->priv && idx < p->priv->n ? p->priv->group_of[idx] : -1;
}

void lp_sample_attach_group(struct lp_sample_plan *p, size_t gi, double duration_ns)
{
	struct lp_sample_group *g = &p->groups[gi];
	if (duration_ns >= 0) {
		if (!g->got || duration_ns < g->got_min_ns)
			g->got_min_ns = duration_ns;
		if (!g->got || duration_ns > g->got_max_ns)
			g->got_max_ns = duration_ns;
		g->got_sum_ns += duration_ns;
	}
	g->got++;
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

/* ---- after the run ---- */

long lp_sample_attach(struct lp_sample_plan *p, const char *name, const uint32_t grid[3], const uint32_t block[3],
	const char *region, double duration_ns)
{
	size_t i;
	for (i = 0; i < p->n_groups; i++) {
		struct lp_sample_group *g = &p->groups[i];
		if (strcmp(g->name, name) || cmp_u32x3(g->grid, grid) || cmp_u32x3(g->block, block))
			continue;
		if (region && strcmp(g->region, region))
			continue;
		lp_sample_attach_group(p, i, duration_ns);
		return (long)i;
	}
	return -1;
}

int lp_sample_group_covered(const struct lp_sample_group *g)
{
	return g->got > 0 || g->status == LP_SAMPLE_CACHED;
}

void lp_sample_coverage(const struct lp_sample_plan *p, struct lp_sample_coverage *out)
{
	size_t i;
	memset(out, 0, sizeof(*out));
	out->target = p->coverage_target;
	out->total_ns = p->total_ns;
	out->n_groups = p->n_groups;
	for (i = 0; i < p->n_groups; i++) {
		const struct lp_sample_group *g = &p->groups[i];
		if (!lp_sample_group_covered(g))
			continue;
		out->n_covered++;
		out->covered_ns += g->total_ns;
		if (g->status == LP_SAMPLE_CACHED)
			out->n_reused++;
	}
	out->share = p->total_ns ? (double)out->covered_ns / (double)p->total_ns : 0;
	out->met = out->share >= out->target - 1e-9 || (p->total_ns == 0);
}

void lp_sample_coverage_region(const struct lp_sample_plan *p, const char *region, struct lp_sample_coverage *out)
{
	size_t i;
	memset(out, 0, sizeof(*out));
	out->target = p->coverage_target;
	for (i = 0; i < p->n_groups; i++) {
		const struct lp_sample_group *g = &p->groups[i];
		if (strcmp(g->region, region))
			continue;
		out->n_groups++;
		out->total_ns += g->total_ns;
		if (!lp_sample_group_covered(g))
			continue;
		out->n_covered++;
		out->covered_ns += g->total_ns;
		if (g->status == LP_SAMPLE_CACHED)
			out->n_reused++;
	}
	out->share = out->total_ns ? (double)out->covered_ns / (double)out->total_ns : 0;
	out->met = out->share >= out->target - 1e-9 || out->total_ns == 0;
}

/* ---- JSON ---- */

const char *lp_sample_status_name(int status)
{
	switch (status) {
	case LP_SAMPLE_PLANNED: return "planned";
	case LP_SAMPLE_CACHED: return "cached";
	case LP_SAMPLE_BEYOND_TARGET: return "beyond_target";
	case LP_SAMPLE_BUDGET: return "budget";
	case LP_SAMPLE_NOT_RUN: return "not_run";
	default: return "unknown";
	}
}

static json_t *dim3_json(const uint32_t v[3])
{
	return json_pack("[III]", (json_int_t)v[0], (json_int_t)v[1], (json_int_t)v[2]);
}

json_t *lp_sample_plan_json(const struct lp_sample_plan *p, int after_run)
{
	json_t *o = json_object(), *groups = json_array(), *procs = json_array();
	size_t i, j;
	json_object_set_new(o, "k", json_integer(p->k));
	json_object_set_new(o, "k_used", json_integer(p->k_used));
	json_object_set_new(o, "coverage_target", json_real(p->coverage_target));
	json_object_set_new(o, "launches", json_integer((json_int_t)p->n_launches));
	json_object_set_new(o, "kernel_ms", json_real((double)p->total_ns / 1e6));
	json_object_set_new(o, "groups_total", json_integer((json_int_t)p->n_groups));
	json_object_set_new(o, "groups_wanted", json_integer((json_int_t)p->n_wanted));
	json_object_set_new(o, "groups_cached", json_integer((json_int_t)p->n_cached));
	json_object_set_new(o, "groups_dropped_budget", json_integer((json_int_t)p->n_budget_dropped));
	json_object_set_new(o, "planned_share", json_real(p->planned_share));
	json_object_set_new(o, "predicted_launches", json_integer((json_int_t)p->predicted));
	json_object_set_new(o, "eta_s", json_real(p->eta_s));
	json_object_set_new(o, "budget_s", p->budget_s > 0 ? json_real(p->budget_s) : json_null());
	for (i = 0; i < p->n_procs; i++) {
		const struct lp_sample_proc *pr = &p->procs[i];
		json_array_append_new(procs, json_pack("{s:s, s:I, s:I, s:I, s:f}", "kernel_id", pr->kernel_id.data,
			"groups", (json_int_t)pr->n_groups, "planned_launches", (json_int_t)pr->planned,
			"predicted_launches", (json_int_t)pr->predicted, "est_s", pr->est_s));
	}
	json_object_set_new(o, "processes", procs);
	for (i = 0; i < p->n_groups; i++) {
		const struct lp_sample_group *g = &p->groups[i];
		json_t *go = json_object(), *picks = json_array();
		json_object_set_new(go, "kernel_name", json_string(g->kernel_name));
		json_object_set_new(go, "function", json_string(g->name));
		json_object_set_new(go, "grid", dim3_json(g->grid));
		json_object_set_new(go, "block", dim3_json(g->block));
		json_object_set_new(go, "shared_bytes", json_integer(g->shared_bytes));
		json_object_set_new(go, "region", json_string(g->region));
		json_object_set_new(go, "launches", json_integer((json_int_t)g->n_launches));
		json_object_set_new(go, "steps", json_integer(g->n_steps));
		json_object_set_new(go, "total_ms", json_real((double)g->total_ns / 1e6));
		json_object_set_new(go, "min_us", json_real((double)g->min_ns / 1e3));
		json_object_set_new(go, "max_us", json_real((double)g->max_ns / 1e3));
		json_object_set_new(go, "share", json_real(g->share));
		json_object_set_new(go, "region_share", json_real(g->region_share));
		json_object_set_new(go, "status", json_string(lp_sample_status_name(g->status)));
		json_object_set_new(go, "process", g->proc >= 0 ? json_integer(g->proc) : json_null());
		for (j = 0; j < g->n_picks; j++)
			json_array_append_new(picks, json_pack("{s:I, s:i, s:f}", "invocation", (json_int_t)g->picks[j].invocation,
				"step", (int)g->picks[j].step, "duration_us", (double)g->picks[j].duration_ns / 1e3));
		json_object_set_new(go, "picks", picks);
		if (after_run) {
			json_object_set_new(go, "profiled", json_integer((json_int_t)g->got));
			json_object_set_new(go, "profiled_min_us", g->got ? json_real(g->got_min_ns / 1e3) : json_null());
			json_object_set_new(go, "profiled_max_us", g->got ? json_real(g->got_max_ns / 1e3) : json_null());
			json_object_set_new(go, "has_metrics", json_boolean(lp_sample_group_covered(g)));
		}
		json_array_append_new(groups, go);
	}
	json_object_set_new(o, "groups", groups);
	if (after_run) {
		struct lp_sample_coverage c;
		lp_sample_coverage(p, &c);
		json_t *regions = json_array();
		json_object_set_new(o, "coverage", json_pack("{s:f, s:f, s:I, s:I, s:I, s:b}", "target", c.target,
			"share", c.share, "groups_with_metrics", (json_int_t)c.n_covered, "groups_reused",
			(json_int_t)c.n_reused, "groups", (json_int_t)c.n_groups, "met", c.met));
		for (i = 0; i < p->n_groups; i++) {
			const char *r = p->groups[i].region;
			for (j = 0; j < i && strcmp(p->groups[j].region, r); j++)
				;
			if (j < i)
				continue;   /* listed already */
			lp_sample_coverage_region(p, r, &c);
			json_array_append_new(regions, json_pack("{s:s, s:f, s:f, s:I, s:I, s:b}", "region", r, "kernel_ms",
				(double)c.total_ns / 1e6, "share", c.share, "groups_with_metrics", (json_int_t)c.n_covered,
				"groups", (json_int_t)c.n_groups, "met", c.met));
		}
		json_object_set_new(json_object_get(o, "coverage"), "regions", regions);
	}
	return o;
}

/* ---- from a capture ---- */

void lp_sample_input_release(struct lp_sample_input *in)
{
	free(in->launches);
	lp_arena_release(&in->arena);
	memset(in, 0, sizeof(*in));
}

struct kref {
	const struct lp_kernel *k;
	size_t idx;
};

static int cmp_kref(const void *va, const void *vb)
{
	const struct kref *a = va, *b = vb;
	if (a->k->correlation_id != b->k->correlation_id)
		return a->k->correlation_id < b->k->correlation_id ? -1 : 1;
	if (a->k->start_ns != b->k->start_ns)
		return a->k->start_ns < b->k->start_ns ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The range chain of `idx` as an ncu-like stack (bottom to top) and the range index per level. */
static size_t chain_stack(const struct lp_profile *p, int32_t idx, struct lp_ncu_nvtx_stack *st, int32_t *lvl)
{
	int32_t rev[LP_NCU_NVTX_MAX_DEPTH];
	size_t n = 0, i;
	while (idx >= 0 && (size_t)idx < p->n_ranges && n < LP_NCU_NVTX_MAX_DEPTH) {
		rev[n++] = idx;
		idx = p->ranges[idx].parent;
	}
	st->n = n;
	for (i = 0; i < n; i++) {
		const struct lp_range *r = &p->ranges[rev[n - 1 - i]];
		memset(&st->levels[i], 0, sizeof(st->levels[i]));
		st->levels[i].domain = r->domain;
		st->levels[i].name = r->name;
		st->levels[i].message = r->name;
		lvl[i] = rev[n - 1 - i];
	}
	return n;
}

/* Which region kernel k is selected in (NULL none) and the range that numbers its steps. */
static const char *select_kernel(const struct lp_profile *p, const struct lp_sample_select *sel, const struct lp_kernel *k,
	struct lp_ncu_nvtx_stack *st, int32_t *lvl, int32_t *step_range)
{
	const char *warm = sel->warmup ? sel->warmup : "warmup";
	size_t i, n, lo, hi;
	*step_range = -1;
	if (k->range < 0 || lp_kname_is_comm(k->name))
		return NULL;
	if (sel->n_pids) {
		for (i = 0; i < sel->n_pids && sel->pids[i] != k->pid; i++)
			;
		if (i == sel->n_pids)
			return NULL;
	}
	if (*warm && lp_profile_range_find_ancestor(p, k->range, warm) >= 0)
		return NULL;
	if (sel->stage) {
		int32_t s = lp_profile_range_find_ancestor(p, k->range, sel->stage), r = k->range, child = -1;
		if (s < 0)
			return NULL;
		while (r >= 0 && r != s) {
			child = r;
			r = p->ranges[r].parent;
		}
		*step_range = child >= 0 ? child : s;
		return sel->stage;
	}
	if (!sel->regions)
		return NULL;
	n = chain_stack(p, k->range, st, lvl);
	for (i = 0; i < sel->regions->n_exc; i++)
		if (lp_region_pattern_match(&sel->regions->exc[i], st, &lo, &hi))
			return NULL;
	if (!lp_regions_kernel_wanted(sel->regions, k->name, k->short_name ? k->short_name : k->name))
		return NULL;
	for (i = 0; i < sel->regions->n_inc; i++) {
		const struct lp_region_pattern *pat = &sel->regions->inc[i];
		if (pat->kind != LP_REGION_PUSHPOP || !lp_region_pattern_match(pat, st, &lo, &hi))
			continue;
		*step_range = hi + 1 < n ? lvl[hi + 1] : lvl[hi];
		return pat->name;
	}
	return NULL;
}

int lp_sample_input_from_profile(const struct lp_profile *p, const struct lp_sample_select *sel,
	struct lp_sample_input *out, struct lp_err *err)
{
	struct kref *ks = NULL;
	struct lp_ncu_nvtx_stack *st = NULL;
	const char **region = NULL;
	int32_t *step_range = NULL, *ordinal = NULL, lvl[LP_NCU_NVTX_MAX_DEPTH];
	uint64_t *pid_ns = NULL;
	uint32_t *pids = NULL;
	const char *rnames[64];
	int32_t rcount[64];
	size_t i, j, n_pids = 0, n_rn = 0, best = 0;
	struct lp_buf fn = LP_BUF_INIT;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (p->n_kernels > LP_SAMPLE_MAX_LAUNCHES)
		return lp_err_set(err, LP_EUSAGE, "%zu kernel launches: more than the sampler takes (%u)", p->n_kernels,
			LP_SAMPLE_MAX_LAUNCHES);
	if (!p->n_kernels)
		return 0;
	st = malloc(sizeof(*st));
	region = calloc(p->n_kernels, sizeof(*region));
	step_range = malloc(p->n_kernels * sizeof(*step_range));
	pid_ns = calloc(p->n_kernels, sizeof(*pid_ns));
	pids = calloc(p->n_kernels, sizeof(*pids));
	ordinal = malloc((p->n_ranges + 1) * sizeof(*ordinal));
	if (!st || !region || !step_range || !pid_ns || !pids || !ordinal)
		goto nomem;
	memset(st, 0, sizeof(*st));
	lp_buf_init(&st->text, 0);
	for (i = 0; i < p->n_ranges; i++)
		ordinal[i] = -1;
	/* the selection, and the process that has most of it */
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		region[i] = select_kernel(p, sel, k, st, lvl, &step_range[i]);
		if (!region[i])
			continue;
		for (j = 0; j < n_pids && pids[j] != k->pid; j++)
			;
		if (j == n_pids)
			pids[n_pids++] = k->pid;
		pid_ns[j] += k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
	}
	for (j = 1; j < n_pids; j++)
		if (pid_ns[j] > pid_ns[best])
			best = j;
	out->pid = n_pids ? pids[best] : 0;
	ks = malloc(p->n_kernels * sizeof(*ks));
	if (!ks)
		goto nomem;
	for (i = 0, j = 0; i < p->n_kernels; i++)
		if (!n_pids || p->kernels[i].pid == out->pid) {
			ks[j].k = &p->kernels[i];
			ks[j].idx = i;
			j++;
		}
	qsort(ks, j, sizeof(*ks), cmp_kref);
	out->launches = calloc(j ? j : 1, sizeof(*out->launches));
	if (!out->launches)
		goto nomem;
	out->n = j;
	for (i = 0; i < out->n; i++) {
		const struct lp_kernel *k = ks[i].k;
		struct lp_sample_launch *l = &out->launches[i];
		lp_buf_reset(&fn);
		if (lp_kname_ncu_function(k->name, &fn) < 0 || !(l->name = lp_arena_strdup(&out->arena, fn.data[0] ? fn.data : k->name)))
			goto nomem;
		l->kernel_name = k->name;
		memcpy(l->grid, k->grid, sizeof(l->grid));
		memcpy(l->block, k->block, sizeof(l->block));
		l->shared_bytes = k->shared_bytes;
		l->duration_ns = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
		l->region = region[ks[i].idx];
		l->step = -1;
		if (l->region) {
			int32_t sr = step_range[ks[i].idx];
			out->n_selected++;
			if (sr >= 0) {
				if (ordinal[sr] < 0) {
					/* steps are numbered per region, in launch order */
					for (j = 0; j < n_rn && rnames[j] != l->region; j++)
						;
					if (j == n_rn && n_rn < 64) {
						rnames[n_rn] = l->region;
						rcount[n_rn++] = 0;
					}
					ordinal[sr] = j < n_rn ? rcount[j]++ : 0;
				}
				l->step = ordinal[sr];
			}
		}
	}
	rc = 0;
	goto out;
nomem:
	lp_oom(err);
	lp_sample_input_release(out);
out:
	if (st)
		lp_buf_release(&st->text);
	free(st);
	free(region);
	free(step_range);
	free(pid_ns);
	free(pids);
	free(ordinal);
	free(ks);
	lp_buf_release(&fn);
	return rc;
}
