/* ncu_sample_sched.c: the planner's second half (see ncu_sample.h): the wanted, uncached groups of
 * lp_sample_group become picks aligned across kernel names, ncu processes with their --kernel-id,
 * and a cost that fits the budget. */
#include "analyze/ncu_sample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ncu_sample_impl.h"
#include "analyze/topn.h"

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

/* Picks are aligned across names (one --kernel-id gives every name the same invocation numbers):
 * the K picks of a group are one per window of its steps (window w = ranks [w R/K, (w+1) R/K)), and
 * for each window still needing one, the launch whose invocation number adds the fewest extras is
 * taken: a number already asked for costs nothing; a new number u costs one launch for every name
 * of the process that reaches u, less those launches that fill another group's window (free
 * picks). Only the earliest launches of the window are candidates (its first eighth, at least one
 * launch) and ties go to the smallest invocation number: under ncu a profiled launch late in a
 * PyTorch program costs seconds (the replay saves and restores more memory as the program runs;
 * bench/ncu_sampling/README.md section 4), and stop_early ends the program right after the last
 * pick, so early picks cost less. */

#define CANDIDATES_MAX 256   /* launches looked at per window */
#define EARLY_SHARE 8        /* candidates: the first 1/EARLY_SHARE of a window's launches */

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
	uint32_t last;               /* greedy: the latest launch ncu profiles (index into the launches) */
	int warm_only;               /* greedy: every group of the cluster picks stand-ins: ncu profiles only
	                                inside the warm-up range (lp_sample_proc.warmup_only) */
	uint64_t t_min_ns, t_max_ns; /* the launches' first and last start in the capture (0, 0: unknown) */
};

static unsigned windows_of(const struct lp_sample_group *g, unsigned kk)
{
	return g->n_ranks < kk ? g->n_ranks : kk;
}

/* The window of a candidate's rank (callers skip rank < 0: not a candidate). */
static unsigned window_of(const struct lp_sample_group *g, int32_t rank, unsigned kk)
{
	unsigned nw = windows_of(g, kk);
	return nw ? (unsigned)(((uint64_t)rank * nw) / g->n_ranks) : 0;
}

/* A warm-only process numbers the launches inside the warm-up range only (ncu numbers the launches
 * that pass its NVTX include); the others every launch of the process. */
static uint64_t count_of(const struct sched *s, const struct lp_sample_config *c)
{
	return s->warm_only ? c->wcount : c->count;
}

/* The u-th launch of name c (u <= count_of). */
static uint32_t launch_at(const struct sched *s, const struct lp_sample_config *c, uint64_t u)
{
	return s->warm_only ? s->p->priv->winv_launch[c->offset + u - 1] : s->p->priv->inv_launch[c->offset + u - 1];
}

static uint64_t number_of(const struct sched *s, uint32_t l)
{
	return s->warm_only ? s->p->priv->winv_of[l] : s->p->priv->inv_of[l];
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

/* 1 when launch l is a candidate of a group whose window still needs a pick. */
static int fills_window(const struct sched *s, uint32_t l)
{
	const struct lp_sample_priv *pv = s->p->priv;
	int32_t g = pv->group_of[l];
	return wanting(s, g) && pv->rank_of[l] >= 0 &&
		(s->need[g] >> window_of(&s->p->groups[g], pv->rank_of[l], s->kk) & 1u);
}

/* Picks that number u would fill (the launches at u of the cluster's names). */
static size_t fills(const struct sched *s, uint64_t u)
{
	size_t i, n = 0;
	for (i = 0; i < s->n_cl_names; i++) {
		const struct lp_sample_config *c = &s->p->configs[s->cl_names[i]];
		if (count_of(s, c) >= u)
			n += (size_t)fills_window(s, launch_at(s, c, u));
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
		if (count_of(s, c) < u)
			continue;
		l = launch_at(s, c, u);
		if (!fills_window(s, l))
			continue;
		g = pv->group_of[l];
		w = window_of(&s->p->groups[g], pv->rank_of[l], s->kk);
		s->need[g] &= ~(1u << w);
		if (s->record) {
			struct lp_sample_group *gr = &s->p->groups[g];
			if (gr->n_picks < LP_SAMPLE_MAX_K) {
				gr->picks[gr->n_picks].invocation = u;
				gr->picks[gr->n_picks].step = pv->launches[l].step;
				gr->picks[gr->n_picks].duration_ns = pv->launches[l].duration_ns;
				gr->picks[gr->n_picks].warmup = pv->launches[l].warmup;
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
	s->warm_only = 0;
	for (g = 0; g < p->n_groups; g++)
		if (s->in_cluster[g]) {
			if (!p->groups[g].picks_from_warmup) {
				s->warm_only = 0;
				break;
			}
			s->warm_only = 1;
		}
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
			s->counts[s->n_counts++] = count_of(s, &p->configs[nm]);
		}
	}
	qsort(s->counts, s->n_counts, sizeof(*s->counts), cmp_u64_desc_not);
	for (g = 0; g < p->n_groups; g++) {
		const struct lp_sample_group *gr = &p->groups[g];
		size_t n_mem;
		const uint32_t *mem = lp_sample_cands(p, gr, &n_mem);
		unsigned nw = windows_of(gr, s->kk), w;
		if (!s->in_cluster[g])
			continue;
		for (w = 0; w < nw; w++) {
			size_t first = n_mem, last = 0, early, step, m;
			long best_extra = 0;
			uint64_t best_u = 0;
			if (!(s->need[g] >> w & 1u))
				continue;
			/* the window's launches: ranks [w R/nw, (w+1) R/nw) are a run of the candidates */
			for (m = 0; m < n_mem; m++)
				if (pv->rank_of[mem[m]] >= 0 && window_of(gr, pv->rank_of[mem[m]], s->kk) == w) {
					if (first == n_mem)
						first = m;
					last = m;
				}
			if (first == n_mem)
				continue;
			early = first + (last - first) / EARLY_SHARE;
			step = (early - first + 1) / CANDIDATES_MAX + 1;
			for (m = first; m <= early; m += step) {
				uint64_t u = number_of(s, mem[m]);
				long extra = (long)reaching(s, u) - (long)fills(s, u);
				if (s->in_u[u])
					continue;
				if (!best_u || extra < best_extra || (extra == best_extra && u < best_u)) {
					best_u = u;
					best_extra = extra;
				}
			}
			if (best_u)
				take(s, best_u);
		}
	}
	s->last = 0;
	for (i = 0; i < s->n_u; i++) {
		size_t c;
		total += reaching(s, s->u[i]);
		s->in_u[s->u[i]] = 0;   /* clean for the next call; the list stays */
		for (c = 0; c < s->n_cl_names; c++) {
			const struct lp_sample_config *cf = &p->configs[s->cl_names[c]];
			if (count_of(s, cf) >= s->u[i] && launch_at(s, cf, s->u[i]) > s->last)
				s->last = launch_at(s, cf, s->u[i]);
		}
	}
	return total;
}

/* Seconds of the workload an ncu process runs through: its start (what the capture has outside the
 * span of its launches: interpreter, imports, model build; not slower under ncu) and its launches'
 * span, `factor` times slower under ncu (every launch is intercepted), all of it or with stop_early
 * up to the latest launch ncu profiles (launch order when the capture has no start times). */
static double program_part_s(const struct sched *s, uint32_t last, double factor)
{
	const struct lp_sample_opts *o = s->o;
	const struct lp_sample_priv *pv = s->p->priv;
	double span, start, to_last;
	if (o->program_s <= 0)
		return 0;
	if (!pv->n || s->t_max_ns <= s->t_min_ns)
		return factor * o->program_s * (o->stop_early && pv->n ? (double)(last + 1) / (double)pv->n : 1.0);
	span = (double)(s->t_max_ns - s->t_min_ns) / 1e9;
	start = o->program_s > span ? o->program_s - span : 0;
	to_last = span;
	if (o->stop_early && pv->launches[last].start_ns >= s->t_min_ns)
		to_last = (double)(pv->launches[last].start_ns - s->t_min_ns) / 1e9;
	return start + factor * (to_last < span ? to_last : span);
}

/* The estimate of one process that profiles `launches`, the latest of them s->last. */
static double proc_cost(const struct sched *s, uint64_t launches)
{
	double factor = s->o->program_factor > 0 ? s->o->program_factor : LP_SAMPLE_PROGRAM_FACTOR;
	return s->o->per_process_s + program_part_s(s, s->last, factor) + s->o->per_launch_s * (double)launches;
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
	return proc_cost(s, launches);
}

/* Clusters the candidate groups' names into processes (adjacent by launch count, merged while a
 * merge saves, and down to max_procs); returns the estimate, clusters in cl. */
static double partition(struct sched *s, const unsigned char *cand, uint32_t *order, size_t *n_order, struct cluster *cl,
	size_t *n_cl)
{
	const struct lp_sample_priv *pv = s->p->priv;
	unsigned max_procs = s->o->max_procs ? s->o->max_procs : LP_SAMPLE_DEFAULT_MAX_PROCS;
	int eager = s->o->per_launch_s <= 0 && s->o->per_process_s <= 0 && s->o->program_s <= 0;
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
	pr->warmup_only = s->warm_only;
	s->record = 0;
	pr->est_s = proc_cost(s, pr->predicted);
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
	qsort(u, s->n_u, sizeof(*u), lp_sample_cmp_u64);
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

	lp_sample_procs_free(p);
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
	for (i = 0; i < p->priv->n; i++) {
		uint64_t t = p->priv->launches[i].start_ns;
		if (t && (!s.t_min_ns || t < s.t_min_ns))
			s.t_min_ns = t;
		if (t > s.t_max_ns)
			s.t_max_ns = t;
	}
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
