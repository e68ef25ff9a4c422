/* ranks.c: profile of several processes -> per-rank stage tables, the merged view across ranks,
 * communication against compute and the wait in collectives (ranks.h has the rules).
 *
 * Each rank's processes are copied into a profile of their own (strings stay the parent's: the
 * copy lives only inside lp_ranks_compute) so that the ordinary stage analysis runs on it unchanged;
 * then the communication split is computed per iteration from that copy, and the ranks are lined
 * up by stage instance. */
#include "analyze/ranks.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ranks_impl.h"
#include "core/buf.h"

/* ---- grouping processes into ranks ---- */

static size_t proc_index(const struct lp_profile *p, uint32_t pid)
{
	const struct lp_process *pr = lp_profile_process(p, pid);
	return pr ? (size_t)(pr - p->processes) : p->n_processes;
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
	for (i = 0; i < rk->n_rstages; i++)
		if (!strcmp(rk->rstages[i].name, name) && !strcmp(rk->rstages[i].domain, domain))
			return &rk->rstages[i];
	return NULL;
}

static int merge(struct lp_rank_view *v)
{
	size_t r, i, k, cap = 0;
	for (r = 0; r < v->n_ranks; r++)
		cap += v->ranks[r].n_rstages;
	v->merged = lp_arena_alloc(&v->arena, (cap + 1) * sizeof(*v->merged));
	if (!v->merged)
		return -1;
	for (r = 0; r < v->n_ranks; r++) {
		for (i = 0; i < v->ranks[r].n_rstages; i++) {
			const struct lp_rank_stage *rs = &v->ranks[r].rstages[i];
			size_t m;
			for (m = 0; m < v->n_merged; m++)
				if (!strcmp(v->merged[m].name, rs->name) && !strcmp(v->merged[m].domain, rs->domain))
					break;
			if (m == v->n_merged) {
				v->merged[m].name = rs->name;
				v->merged[m].domain = rs->domain;
				v->merged[m].step_of = rs->step_of;
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
	struct lp_ranks_work *w = NULL;
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
		if (ok && lp_ranks_comm(out, rk, &sub, &w[r]) < 0) {
			oom(err);
			ok = 0;
		}
		lp_profile_release(&sub);
		if (!ok)
			goto fail;
	}
	if (out->n_ranks > 1) {
		lp_ranks_align_collectives(out, w, 0);
		lp_ranks_align_collectives(out, w, 1);
	}
	for (r = 0; r < out->n_ranks; r++) {
		struct lp_rank *rk = &out->ranks[r];
		for (i = 0; i < w[r].n_occ; i++) {
			struct lp_rank_stage *rs = &rk->rstages[w[r].occ_row[i]];
			rs->wait_ms += w[r].occ_wait_ns[i] / 1e6 / (double)(rs->n_recorded ? rs->n_recorded : 1);
		}
		lp_ranks_scale_sampled(out, rk);
	}
	if (out->n_ranks > 1 && (merge(out) < 0 || advise(out) < 0)) {
		oom(err);
		goto fail;
	}
	rc = 0;
fail:
	if (w)
		for (r = 0; r < out->n_ranks; r++)
			lp_ranks_work_release(&w[r]);
	if (rc < 0)
		lp_rank_view_release(out);
	free(w);
	free(map);
	return rc;
}
