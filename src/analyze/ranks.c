/* ranks.c: profile of several processes -> per-rank stage tables, the merged view across ranks,
 * communication against compute and the wait in collectives (ranks.h has the rules).
 *
 * Each rank's processes are copied into a profile of their own (strings stay the parent's: the
 * copy lives only inside lp_ranks_compute) so that the ordinary stage analysis runs on it unchanged;
 * then the communication split is computed per iteration from that copy, and the ranks are lined
 * up by stage instance. */
#include "analyze/ranks.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "parse/kname.h"

#define MAX_WALK 512

/* ---- names ---- */

/* Case-insensitive substring search, ignoring '_' and '-' in both (all_reduce == allreduce). */
static int has_loose(const char *hay, const char *needle)
{
	size_t i;
	for (i = 0; hay[i]; i++) {
		const char *h = hay + i, *n = needle;
		while (*n) {
			while (*h == '_' || *h == '-')
				h++;
			while (*n == '_' || *n == '-')
				n++;
			if (!*n)
				break;
			if (!*h || tolower((unsigned char)*h) != tolower((unsigned char)*n))
				break;
			h++;
			n++;
		}
		if (!*n)
			return 1;
	}
	return 0;
}

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
		if (has_loose(name, pats[i]))
			return 1;
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return 1;
	return 0;
}

/* ---- grouping processes into ranks ---- */

static size_t proc_index(const struct lp_profile *p, uint32_t pid)
{
	size_t i;
	for (i = 0; i < p->n_processes; i++)
		if (p->processes[i].pid == pid)
			return i;
	return p->n_processes;
}

struct porder {
	size_t idx;
	int32_t key;                 /* rank, or 0 in the process-order case */
	uint64_t start_ns;
	uint32_t pid;
};

static int cmp_porder(const void *a, const void *b)
{
	const struct porder *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

/* ---- one rank's own profile ---- */

static int rank_has_pid(const struct lp_rank *rk, uint32_t pid)
{
	size_t i;
	for (i = 0; i < rk->n_pids; i++)
		if (rk->pids[i] == pid)
			return 1;
	return 0;
}

/* Copies the rank's processes, ranges (indices remapped), kernels and copies, and every device.
 * Strings keep pointing into `p`. */
static int sub_profile(const struct lp_profile *p, const struct lp_rank *rk, struct lp_profile *sub, int32_t *map)
{
	size_t i;
	lp_profile_init(sub, p->source);
	sub->source_kind = p->source_kind;
	for (i = 0; i < p->n_devices; i++) {
		struct lp_device *d = lp_profile_add_device(sub);
		if (!d)
			return -1;
		*d = p->devices[i];
	}
	for (i = 0; i < p->n_processes; i++) {
		struct lp_process *pr;
		if (!rank_has_pid(rk, p->processes[i].pid))
			continue;
		if (!(pr = lp_profile_add_process(sub)))
			return -1;
		*pr = p->processes[i];
	}
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		struct lp_range *o;
		map[i] = -1;
		if (!rank_has_pid(rk, r->pid))
			continue;
		if (!(o = lp_profile_add_range(sub)))
			return -1;
		*o = *r;
		/* parents come before children in a loaded profile, except for hand-made ones: fixed below */
		map[i] = (int32_t)(sub->n_ranges - 1);
	}
	for (i = 0; i < sub->n_ranges; i++) {
		int32_t par = sub->ranges[i].parent;
		sub->ranges[i].parent = par >= 0 && (size_t)par < p->n_ranges ? map[par] : -1;
	}
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		struct lp_kernel *o;
		if (!rank_has_pid(rk, k->pid))
			continue;
		if (!(o = lp_profile_add_kernel(sub)))
			return -1;
		*o = *k;
		o->range = k->range >= 0 && (size_t)k->range < p->n_ranges ? map[k->range] : -1;
	}
	for (i = 0; i < p->n_copies; i++) {
		const struct lp_copy *c = &p->copies[i];
		struct lp_copy *o;
		if (!rank_has_pid(rk, c->pid))
			continue;
		if (!(o = lp_profile_add_copy(sub)))
			return -1;
		*o = *c;
		o->range = c->range >= 0 && (size_t)c->range < p->n_ranges ? map[c->range] : -1;
	}
	return 0;
}

/* ---- communication split per iteration ---- */

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
	for (; r >= 0 && (size_t)r < p->n_ranges && guard++ < MAX_WALK; r = p->ranges[r].parent)
		if (occ_of[r] >= 0)
			return occ_of[r];
	return -1;
}

/* One collective on one rank, in issue order. */
struct coll {
	uint64_t start_ns, dur_ns;
	int32_t occ;                 /* flat occurrence, -1 outside stages */
};

struct rank_work {
	struct coll *kcoll, *hcoll;  /* communication kernels, host collective ranges */
	size_t n_kcoll, n_hcoll;
	int32_t *occ_stage;          /* flat occurrence -> stage index */
	size_t *occ_iter;
	size_t n_occ;
	double *occ_wait_ns;         /* flat occurrence -> wait in collectives */
};

static int cmp_coll(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static void rank_work_release(struct rank_work *w)
{
	free(w->kcoll);
	free(w->hcoll);
	free(w->occ_stage);
	free(w->occ_iter);
	free(w->occ_wait_ns);
	memset(w, 0, sizeof(*w));
}

/* Fills rk->rstages (communication split, latencies) and w (collectives in issue order) from the
 * rank's own profile and stage set. */
static int rank_comm(struct lp_rank_view *v, struct lp_rank *rk, const struct lp_profile *sub, struct rank_work *w)
{
	const struct lp_stage_set *st = &rk->stages;
	int32_t *occ_of = NULL;
	struct ival *iv = NULL, *ua = NULL, *ub = NULL;
	size_t n_iv = 0, cap_iv, i, j, n_occ = 0;
	uint64_t *comm_ns = NULL, *comp_ns = NULL, *ovl_ns = NULL, *ckern = NULL;
	int rc = -1;

	for (i = 0; i < st->n_stages; i++)
		n_occ += st->stages[i].n_iters;
	w->n_occ = n_occ;
	occ_of = malloc((sub->n_ranges + 1) * sizeof(*occ_of));
	w->occ_stage = malloc((n_occ + 1) * sizeof(*w->occ_stage));
	w->occ_iter = malloc((n_occ + 1) * sizeof(*w->occ_iter));
	w->occ_wait_ns = calloc(n_occ + 1, sizeof(*w->occ_wait_ns));
	comm_ns = calloc(n_occ + 1, sizeof(*comm_ns));
	comp_ns = calloc(n_occ + 1, sizeof(*comp_ns));
	ovl_ns = calloc(n_occ + 1, sizeof(*ovl_ns));
	ckern = calloc(n_occ + 1, sizeof(*ckern));
	cap_iv = sub->n_kernels + sub->n_copies + sub->n_ranges + 1;
	iv = malloc(cap_iv * sizeof(*iv));
	w->kcoll = malloc((sub->n_kernels + sub->n_copies + 1) * sizeof(*w->kcoll));
	w->hcoll = malloc((sub->n_ranges + 1) * sizeof(*w->hcoll));
	rk->rstages = lp_arena_alloc(&v->arena, (st->n_stages + 1) * sizeof(*rk->rstages));
	if (!occ_of || !w->occ_stage || !w->occ_iter || !w->occ_wait_ns || !comm_ns || !comp_ns || !ovl_ns || !ckern ||
	    !iv || !w->kcoll || !w->hcoll || !rk->rstages)
		goto out;
	for (i = 0; i < sub->n_ranges; i++)
		occ_of[i] = -1;
	n_occ = 0;
	for (i = 0; i < st->n_stages; i++)
		for (j = 0; j < st->stages[i].n_iters; j++) {
			int32_t r = st->stages[i].iters[j].range;
			if (r >= 0 && (size_t)r < sub->n_ranges)
				occ_of[r] = (int32_t)n_occ;
			w->occ_stage[n_occ] = (int32_t)i;
			w->occ_iter[n_occ] = j;
			n_occ++;
		}

	for (i = 0; i < sub->n_kernels; i++) {
		const struct lp_kernel *k = &sub->kernels[i];
		int comm = lp_kname_is_comm(k->name);
		int32_t o;
		rk->kernels++;
		if (comm) {
			rk->comm_kernels++;
			rk->comm_kernel_ms += k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) / 1e6 : 0;
		}
		if (i < st->n_kernels && st->kernel_stage[i] == -2)
			continue;   /* warm-up */
		rk->measured_kernels++;
		o = occ_above(sub, occ_of, k->range);
		if (comm) {
			w->kcoll[w->n_kcoll++] = (struct coll){ k->start_ns,
				k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0, o };
			if (o >= 0)
				ckern[o]++;
		}
		if (o >= 0 && k->end_ns > k->start_ns)
			iv[n_iv++] = (struct ival){ o, (uint8_t)comm, k->start_ns, k->end_ns };
	}
	for (i = 0; i < sub->n_copies; i++) {
		const struct lp_copy *c = &sub->copies[i];
		int32_t o;
		rk->copies++;
		if (c->kind != LP_COPY_PTOP || lp_stage_range_excluded(st, c->range))
			continue;
		o = occ_above(sub, occ_of, c->range);
		w->kcoll[w->n_kcoll++] = (struct coll){ c->start_ns, c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0, o };
		if (o >= 0 && c->end_ns > c->start_ns)
			iv[n_iv++] = (struct ival){ o, 1, c->start_ns, c->end_ns };
	}
	for (i = 0; i < sub->n_ranges; i++) {
		const struct lp_range *r = &sub->ranges[i];
		int32_t o, a;
		int guard = 0, nested = 0;
		if (r->synthetic || r->kind != LP_RANGE_PUSHPOP || !r->end_ns || r->end_ns < r->start_ns ||
		    !lp_comm_range_is(r->name) || lp_stage_range_excluded(st, (int32_t)i))
			continue;
		/* the outermost collective range only (a `barrier` inside `all_reduce` is one collective) */
		for (a = r->parent; a >= 0 && guard++ < MAX_WALK; a = sub->ranges[a].parent)
			if (lp_comm_range_is(sub->ranges[a].name))
				nested = 1;
		if (nested)
			continue;
		o = occ_above(sub, occ_of, (int32_t)i);
		w->hcoll[w->n_hcoll++] = (struct coll){ r->start_ns, r->end_ns - r->start_ns, o };
		if (o >= 0)
			iv[n_iv++] = (struct ival){ o, 1, r->start_ns, r->end_ns };
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
		ua = iv + a0;
		ub = iv + a1;
		na = union_of(ua, a1 - a0);
		nb = union_of(ub, b1 - a1);
		comp_ns[o] = length_of(ua, na);
		comm_ns[o] = length_of(ub, nb);
		ovl_ns[o] = intersect(ua, na, ub, nb);
	}

	for (i = 0, n_occ = 0; i < st->n_stages; i++) {
		const struct lp_stage *s = &st->stages[i];
		struct lp_rank_stage *rs = &rk->rstages[i];
		double n = s->n_iters ? (double)s->n_iters : 1;
		rs->name = s->name;
		rs->domain = s->domain;
		rs->n_iters = s->n_iters;
		rs->lat_ms = s->lat_ms.mean;
		rs->gpu_ms = s->gpu_ms.mean;
		rs->host_ms = s->host_ms.mean;
		rs->kernels = s->kernels.mean;
		rs->lat_iter_ms = lp_arena_alloc(&v->arena, (s->n_iters + 1) * sizeof(double));
		if (!rs->lat_iter_ms)
			goto out;
		for (j = 0; j < s->n_iters; j++, n_occ++) {
			rs->lat_iter_ms[j] = (double)s->iters[j].latency_ns / 1e6;
			rs->comm_ms += (double)comm_ns[n_occ] / 1e6 / n;
			rs->compute_ms += (double)comp_ns[n_occ] / 1e6 / n;
			rs->overlap_ms += (double)ovl_ns[n_occ] / 1e6 / n;
			rs->exposed_ms += (double)(comm_ns[n_occ] - ovl_ns[n_occ]) / 1e6 / n;
			rs->comm_kernels += ckern[n_occ];
		}
	}
	rc = 0;
out:
	free(occ_of);
	free(iv);
	free(comm_ns);
	free(comp_ns);
	free(ovl_ns);
	free(ckern);
	return rc;
}

/* Lines up the j-th collective of every rank; adds each rank's wait (its duration minus the
 * fastest rank's) to the rank and to the occurrence it was issued in. Returns the count aligned. */
static size_t align_collectives(struct lp_rank_view *v, struct rank_work *w, int host)
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
			const struct coll *c = host ? &w[r].hcoll[j] : &w[r].kcoll[j];
			if (c->dur_ns < mn)
				mn = c->dur_ns;
		}
		for (r = 0; r < v->n_ranks; r++) {
			const struct coll *c = host ? &w[r].hcoll[j] : &w[r].kcoll[j];
			double wait = (double)(c->dur_ns - mn);
			v->ranks[r].wait_ms += wait / 1e6;
			v->ranks[r].collectives++;
			if (c->occ >= 0 && (size_t)c->occ < w[r].n_occ)
				w[r].occ_wait_ns[c->occ] += wait;
		}
	}
	return n;
}

/* ---- the merged view ---- */

static int add_advice(struct lp_rank_view *v, const char *rule, const char *fmt, ...) LP_PRINTF(3, 4);
static int add_advice(struct lp_rank_view *v, const char *rule, const char *fmt, ...)
{
	char buf[768];
	va_list ap;
	if (v->n_advice >= sizeof(v->advice) / sizeof(v->advice[0]))
		return 0;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v->advice[v->n_advice].rule = rule;
	if (!(v->advice[v->n_advice].text = lp_arena_strdup(&v->arena, buf)))
		return -1;
	v->n_advice++;
	return 0;
}

static const struct lp_rank_stage *rank_stage(const struct lp_rank *rk, const char *name, const char *domain)
{
	size_t i;
	for (i = 0; i < rk->stages.n_stages; i++)
		if (!strcmp(rk->rstages[i].name, name) && !strcmp(rk->rstages[i].domain, domain))
			return &rk->rstages[i];
	return NULL;
}

static int merge(struct lp_rank_view *v)
{
	size_t r, i, k, cap = 0;
	for (r = 0; r < v->n_ranks; r++)
		cap += v->ranks[r].stages.n_stages;
	v->merged = lp_arena_alloc(&v->arena, (cap + 1) * sizeof(*v->merged));
	if (!v->merged)
		return -1;
	for (r = 0; r < v->n_ranks; r++) {
		for (i = 0; i < v->ranks[r].stages.n_stages; i++) {
			const struct lp_rank_stage *rs = &v->ranks[r].rstages[i];
			size_t m;
			for (m = 0; m < v->n_merged; m++)
				if (!strcmp(v->merged[m].name, rs->name) && !strcmp(v->merged[m].domain, rs->domain))
					break;
			if (m == v->n_merged) {
				v->merged[m].name = rs->name;
				v->merged[m].domain = rs->domain;
				v->n_merged++;
			}
		}
	}
	for (i = 0; i < v->n_merged; i++) {
		struct lp_rank_merged *m = &v->merged[i];
		size_t *slow_n, n_lat = 0;
		double lat_sum = 0;
		m->iters = SIZE_MAX;
		for (r = 0; r < v->n_ranks; r++) {
			const struct lp_rank_stage *rs = rank_stage(&v->ranks[r], m->name, m->domain);
			if (!rs)
				continue;
			m->n_ranks++;
			if (rs->n_iters < m->iters)
				m->iters = rs->n_iters;
			if (rs->n_iters > m->iters_max)
				m->iters_max = rs->n_iters;
			m->comm_ms += rs->comm_ms;
			m->exposed_ms += rs->exposed_ms;
			m->overlap_ms += rs->overlap_ms;
			m->compute_ms += rs->compute_ms;
			m->wait_ms += rs->wait_ms;
		}
		if (m->iters == SIZE_MAX)
			m->iters = 0;
		if (m->n_ranks) {
			m->comm_ms /= (double)m->n_ranks;
			m->exposed_ms /= (double)m->n_ranks;
			m->overlap_ms /= (double)m->n_ranks;
			m->compute_ms /= (double)m->n_ranks;
			m->wait_ms /= (double)m->n_ranks;
		}
		m->slowest_rank = -1;
		m->slowest_of = lp_arena_alloc(&v->arena, (m->iters + 1) * sizeof(*m->slowest_of));
		m->skew_ms = lp_arena_alloc(&v->arena, (m->iters + 1) * sizeof(*m->skew_ms));
		slow_n = calloc(v->n_ranks + 1, sizeof(*slow_n));
		if (!m->slowest_of || !m->skew_ms || !slow_n) {
			free(slow_n);
			return -1;
		}
		for (k = 0; k < m->iters; k++) {
			double mx = -1, mn = INFINITY;
			size_t arg = 0;
			for (r = 0; r < v->n_ranks; r++) {
				const struct lp_rank_stage *rs = rank_stage(&v->ranks[r], m->name, m->domain);
				double x;
				if (!rs)
					continue;
				x = rs->lat_iter_ms[k];
				lat_sum += x;
				n_lat++;
				if (x > mx) {
					mx = x;
					arg = r;
				}
				if (x < mn)
					mn = x;
			}
			m->slowest_of[k] = v->ranks[arg].rank;
			slow_n[arg]++;
			m->skew_ms[k] = mx - mn;
			m->skew_mean_ms += (mx - mn) / (double)m->iters;
			if (mx - mn > m->skew_max_ms) {
				m->skew_max_ms = mx - mn;
				m->skew_max_iter = k;
			}
		}
		m->lat_mean_ms = n_lat ? lat_sum / (double)n_lat : 0;
		if (m->iters) {
			size_t best = SIZE_MAX;
			double best_lat = -1;
			for (r = 0; r < v->n_ranks; r++) {
				const struct lp_rank_stage *rs = rank_stage(&v->ranks[r], m->name, m->domain);
				if (!rs || !slow_n[r])
					continue;
				if (best == SIZE_MAX || slow_n[r] > slow_n[best] ||
				    (slow_n[r] == slow_n[best] && rs->lat_ms > best_lat)) {
					best = r;
					best_lat = rs->lat_ms;
				}
			}
			if (best != SIZE_MAX) {
				m->slowest_rank = v->ranks[best].rank;
				m->slowest_count = slow_n[best];
			}
		}
		free(slow_n);
		m->exposed_frac = m->lat_mean_ms > 0 ? m->exposed_ms / m->lat_mean_ms : 0;
	}
	return 0;
}

static int advise(struct lp_rank_view *v)
{
	size_t i, r;
	for (i = 0; i < v->n_merged; i++) {
		const struct lp_rank_merged *m = &v->merged[i];
		if (m->n_ranks < 2 || !m->iters || m->lat_mean_ms <= 0)
			continue;
		if (m->exposed_frac > LP_RANKS_EXPOSED_FRAC &&
		    add_advice(v, "exposed-communication",
			    "%s: communication that no compute hides is %.1f%% of its latency (%.3f of %.3f ms per "
			    "iteration, mean over %zu ranks; %.3f ms of communication, %.3f ms overlapped): run "
			    "collectives on their own stream beside independent compute, fuse small collectives, or "
			    "shard so that fewer bytes cross ranks",
			    m->name, 100.0 * m->exposed_frac, m->exposed_ms, m->lat_mean_ms, m->n_ranks, m->comm_ms,
			    m->overlap_ms) < 0)
			return -1;
		if (m->skew_mean_ms > LP_RANKS_SKEW_FRAC * m->lat_mean_ms) {
			char waits[96] = "";
			double wait_max = 0;
			for (r = 0; r < v->n_ranks; r++) {
				const struct lp_rank_stage *rs = rank_stage(&v->ranks[r], m->name, m->domain);
				if (rs && rs->wait_ms > wait_max) {
					wait_max = rs->wait_ms;
					snprintf(waits, sizeof(waits), "; rank %d waits longest in collectives (%.3f ms per iteration)",
						(int)v->ranks[r].rank, rs->wait_ms);
				}
			}
			if (add_advice(v, "rank-skew",
				    "%s: the ranks' latencies differ by %.3f ms per iteration on average (%.1f%% of %.3f ms; "
				    "at most %.3f ms, in iteration %zu); rank %d is the slowest in %zu of %zu iterations%s: "
				    "balance the work across ranks (sequence lengths, experts) or look at what rank %d does "
				    "differently",
				    m->name, m->skew_mean_ms, 100.0 * m->skew_mean_ms / m->lat_mean_ms, m->lat_mean_ms,
				    m->skew_max_ms, m->skew_max_iter, (int)m->slowest_rank, m->slowest_count, m->iters, waits,
				    (int)m->slowest_rank) < 0)
				return -1;
		}
	}
	return 0;
}

/* ---- entry ---- */

void lp_rank_view_release(struct lp_rank_view *v)
{
	size_t i;
	if (!v)
		return;
	for (i = 0; i < v->n_ranks; i++)
		lp_stage_set_release(&v->ranks[i].stages);
	free(v->ranks);
	lp_arena_release(&v->arena);
	memset(v, 0, sizeof(*v));
}

int lp_rank_of_pid(const struct lp_rank_view *v, uint32_t pid)
{
	size_t i;
	for (i = 0; i < v->n_ranks; i++)
		if (rank_has_pid(&v->ranks[i], pid))
			return (int)i;
	return -1;
}

static const char *dup_or_empty(struct lp_rank_view *v, const char *s)
{
	return lp_arena_strdup(&v->arena, s ? s : "");
}

static int group(const struct lp_profile *p, struct lp_rank_view *v, struct lp_err *err)
{
	struct porder *ord = NULL;
	uint8_t *work = NULL;
	size_t i, n = 0, any_rank = 0;
	int rc = -1;

	work = calloc(p->n_processes + 1, 1);
	ord = malloc((p->n_processes + 1) * sizeof(*ord));
	if (!work || !ord) {
		oom(err);
		goto out;
	}
	for (i = 0; i < p->n_kernels; i++) {
		size_t pi = proc_index(p, p->kernels[i].pid);
		if (pi < p->n_processes)
			work[pi] = 1;
	}
	for (i = 0; i < p->n_ranges; i++) {
		size_t pi;
		if (p->ranges[i].synthetic)
			continue;
		pi = proc_index(p, p->ranges[i].pid);
		if (pi < p->n_processes)
			work[pi] = 1;
	}
	for (i = 0; i < p->n_processes; i++)
		if (p->processes[i].rank >= 0)
			any_rank++;
	for (i = 0; i < p->n_processes; i++) {
		const struct lp_process *pr = &p->processes[i];
		if (any_rank ? pr->rank < 0 : !work[i]) {
			v->n_not_ranks++;
			continue;
		}
		ord[n++] = (struct porder){ i, any_rank ? pr->rank : 0, pr->start_ns, pr->pid };
	}
	qsort(ord, n, sizeof(*ord), cmp_porder);
	v->ranks = calloc(n + 1, sizeof(*v->ranks));
	if (!v->ranks) {
		oom(err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct lp_process *pr = &p->processes[ord[i].idx];
		struct lp_rank *rk;
		if (any_rank && v->n_ranks && v->ranks[v->n_ranks - 1].rank == pr->rank) {
			rk = &v->ranks[v->n_ranks - 1];
			if (rk->n_pids < LP_RANKS_PIDS_MAX)
				rk->pids[rk->n_pids++] = pr->pid;
			continue;
		}
		if (v->n_ranks >= LP_RANKS_MAX) {
			lp_err_set(err, LP_EUSAGE, "the profile holds more than %d ranks", LP_RANKS_MAX);
			goto out;
		}
		rk = &v->ranks[v->n_ranks++];
		rk->rank = any_rank ? pr->rank : (int32_t)(v->n_ranks - 1);
		rk->local_rank = any_rank ? pr->local_rank : -1;
		rk->world_size = any_rank ? pr->world_size : -1;
		rk->rank_source = dup_or_empty(v, any_rank ? pr->rank_source : "process order");
		rk->host = dup_or_empty(v, pr->host);
		rk->visible_devices = dup_or_empty(v, pr->visible_devices);
		if (!rk->rank_source || !rk->host || !rk->visible_devices) {
			oom(err);
			goto out;
		}
		rk->pids[rk->n_pids++] = pr->pid;
	}
	if (v->n_ranks) {
		v->rank_source = v->ranks[0].rank_source;
		v->world_size = v->ranks[0].world_size;
	} else {
		v->world_size = -1;
	}
	rc = 0;
out:
	free(work);
	free(ord);
	return rc;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

int lp_ranks_compute(const struct lp_profile *p, const struct lp_stage_rules *rules, struct lp_rank_view *out,
	struct lp_err *err)
{
	struct rank_work *w = NULL;
	int32_t *map = NULL;
	size_t r, i;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->n_processes = p->n_processes;
	if (group(p, out, err) < 0)
		goto fail;
	w = calloc(out->n_ranks + 1, sizeof(*w));
	map = malloc((p->n_ranges + 1) * sizeof(*map));
	if (!w || !map) {
		oom(err);
		goto fail;
	}
	for (r = 0; r < out->n_ranks; r++) {
		struct lp_rank *rk = &out->ranks[r];
		struct lp_profile sub;
		int ok;
		if (sub_profile(p, rk, &sub, map) < 0) {
			lp_profile_release(&sub);
			oom(err);
			goto fail;
		}
		for (i = 0; i < sub.n_kernels; i++) {
			size_t d;
			int32_t dev = sub.kernels[i].device;
			for (d = 0; d < rk->n_devices && rk->devices[d] != dev; d++)
				;
			if (d == rk->n_devices && rk->n_devices < sizeof(rk->devices) / sizeof(rk->devices[0]))
				rk->devices[rk->n_devices++] = dev;
		}
		qsort(rk->devices, rk->n_devices, sizeof(rk->devices[0]), cmp_i32);
		ok = lp_stages_compute_ex(&sub, rules, &rk->stages, err) == 0;
		if (ok && rank_comm(out, rk, &sub, &w[r]) < 0) {
			oom(err);
			ok = 0;
		}
		lp_profile_release(&sub);
		if (!ok)
			goto fail;
	}
	if (out->n_ranks > 1) {
		align_collectives(out, w, 0);
		align_collectives(out, w, 1);
	}
	for (r = 0; r < out->n_ranks; r++) {
		struct lp_rank *rk = &out->ranks[r];
		for (i = 0; i < w[r].n_occ; i++) {
			int32_t s = w[r].occ_stage[i];
			const struct lp_stage *st = &rk->stages.stages[s];
			rk->rstages[s].wait_ms += w[r].occ_wait_ns[i] / 1e6 / (double)(st->n_iters ? st->n_iters : 1);
		}
	}
	if (out->n_ranks > 1 && (merge(out) < 0 || advise(out) < 0)) {
		oom(err);
		goto fail;
	}
	rc = 0;
fail:
	if (w)
		for (r = 0; r < out->n_ranks; r++)
			rank_work_release(&w[r]);
	if (rc < 0)
		lp_rank_view_release(out);
	free(w);
	free(map);
	return rc;
}
