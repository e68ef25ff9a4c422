/* ncu_sample_input.c: the planner's input from the capture (see ncu_sample.h): every kernel launch
 * of the process in launch order (what ncu's invocation numbers count), its function name, and the
 * region and step it counts in. */
#include "analyze/ncu_sample.h"

#include <stdlib.h>
#include <string.h>

#include "llmprof/trace_format.h"
#include "parse/kname.h"
#include "parse/ncu_raw.h"

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

/* The range chain of `idx` as an ncu-like stack (bottom to top) and the range index per level;
 * ranges named `skip` (the warm-up, for a stand-in) are left out. */
static size_t chain_stack(const struct lp_profile *p, int32_t idx, const char *skip, struct lp_ncu_nvtx_stack *st,
	int32_t *lvl)
{
	int32_t rev[LP_NCU_NVTX_MAX_DEPTH];
	size_t n = 0, i;
	while (idx >= 0 && (size_t)idx < p->n_ranges && n < LP_NCU_NVTX_MAX_DEPTH) {
		if (!skip || !p->ranges[idx].name || strcmp(p->ranges[idx].name, skip))
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

/* Which region kernel k is selected in (NULL none) and the range that numbers its steps; a
 * warm-up kernel (*warmup = 1) only with sel->stand_ins, matched as if the warm-up range were not
 * in its stack (the warm-up runs the measured iteration's kernels). */
static const char *select_kernel(const struct lp_profile *p, const struct lp_sample_select *sel, const struct lp_kernel *k,
	struct lp_ncu_nvtx_stack *st, int32_t *lvl, int32_t *step_range, int *warmup)
{
	const char *warm = sel->warmup ? sel->warmup : "warmup";
	size_t i, n, lo, hi;
	*step_range = -1;
	*warmup = 0;
	if (k->range < 0 || lp_kname_is_comm(k->name))
		return NULL;
	if (sel->n_pids) {
		for (i = 0; i < sel->n_pids && sel->pids[i] != k->pid; i++)
			;
		if (i == sel->n_pids)
			return NULL;
	}
	if (*warm && lp_profile_range_find_ancestor(p, k->range, warm) >= 0) {
		if (!sel->stand_ins)
			return NULL;
		*warmup = 1;
	}
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
	n = chain_stack(p, k->range, *warmup ? warm : NULL, st, lvl);
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

/* ncu's invocation numbers count every launch of the process; a sampled trace (the tracer's
 * LLMPROF_TRACE_SAMPLE, docs/tracer.md) lacks the launches of the unrecorded step instances, so
 * numbers taken from it would name other launches. */
static int check_exact(const struct lp_profile *p, uint32_t pid, struct lp_err *err)
{
	size_t i;
	for (i = 0; i < p->n_processes; i++) {
		const struct lp_sampling *s = &p->processes[i].sampling;
		if (p->processes[i].pid != pid || s->mode != LP_TRACE_SAMPLE_SAMPLED)
			continue;
		lp_err_set(err, LP_EUSAGE, "the capture of process %u is a sampled trace (one '%s' in %u recorded after "
			"the first %u): ncu sampling numbers the kernel launches from the capture and needs every launch",
			pid, s->unit && s->unit[0] ? s->unit : "unit", s->every, s->first);
		lp_err_hint(err, "capture exactly for deep runs (trace.sample=off, LLMPROF_TRACE_SAMPLE=off), or profile "
			"every launch with profiling.ncu.sample_per_group=0");
		return -1;
	}
	return 0;
}

int lp_sample_input_from_profile(const struct lp_profile *p, const struct lp_sample_select *sel,
	struct lp_sample_input *out, struct lp_err *err)
{
	struct kref *ks = NULL;
	struct lp_ncu_nvtx_stack *st = NULL;
	const char **region = NULL;
	const char *warm_name = sel->warmup ? sel->warmup : "warmup";
	const struct lp_range *warm_range = NULL;
	unsigned char *warm = NULL;
	int32_t *step_range = NULL, *ordinal = NULL, lvl[LP_NCU_NVTX_MAX_DEPTH];
	uint64_t *pid_ns = NULL;
	uint32_t *pids = NULL;
	const char *rnames[64];
	int rwarm[64];
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
	warm = calloc(p->n_kernels, 1);
	step_range = malloc(p->n_kernels * sizeof(*step_range));
	pid_ns = calloc(p->n_kernels, sizeof(*pid_ns));
	pids = calloc(p->n_kernels, sizeof(*pids));
	ordinal = malloc((p->n_ranges + 1) * sizeof(*ordinal));
	if (!st || !region || !warm || !step_range || !pid_ns || !pids || !ordinal)
		goto nomem;
	memset(st, 0, sizeof(*st));
	lp_buf_init(&st->text, 0);
	for (i = 0; i < p->n_ranges; i++)
		ordinal[i] = -1;
	/* the selection, and the process that has most of it */
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		int w;
		region[i] = select_kernel(p, sel, k, st, lvl, &step_range[i], &w);
		if (sel->stand_ins && *warm_name && k->range >= 0) {
			int32_t wr = lp_profile_range_find_ancestor(p, k->range, warm_name);
			warm[i] = wr >= 0;
			if (wr >= 0 && !warm_range)
				warm_range = &p->ranges[wr];
		}
		if (!region[i] || w)
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
	if (n_pids && check_exact(p, out->pid, err) < 0)
		goto fail;
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
		l->start_ns = k->start_ns;
		l->region = region[ks[i].idx];
		l->warmup = warm[ks[i].idx];
		l->step = -1;
		if (l->region) {
			int32_t sr = step_range[ks[i].idx];
			out->n_selected += !l->warmup;
			if (sr >= 0) {
				if (ordinal[sr] < 0) {
					/* steps are numbered per region (the warm-up's apart), in launch order */
					for (j = 0; j < n_rn && (rnames[j] != l->region || rwarm[j] != l->warmup); j++)
						;
					if (j == n_rn && n_rn < 64) {
						rnames[n_rn] = l->region;
						rwarm[n_rn] = l->warmup;
						rcount[n_rn++] = 0;
					}
					ordinal[sr] = j < n_rn ? rcount[j]++ : 0;
				}
				l->step = ordinal[sr];
			}
		}
	}
	if (warm_range) {
		/* ncu's NVTX filter syntax: domain@range, a trailing '/' for a push/pop range */
		struct lp_buf e = LP_BUF_INIT;
		if (warm_range->domain && warm_range->domain[0])
			lp_buf_addf(&e, "%s@", warm_range->domain);
		lp_buf_addf(&e, "%s/", warm_name);
		out->warmup_nvtx = e.oom ? NULL : lp_arena_strdup(&out->arena, e.data);
		lp_buf_release(&e);
		if (!out->warmup_nvtx)
			goto nomem;
	}
	rc = 0;
	goto out;
nomem:
	lp_oom(err);
fail:
	lp_sample_input_release(out);
out:
	if (st)
		lp_buf_release(&st->text);
	free(st);
	free(region);
	free(warm);
	free(step_range);
	free(pid_ns);
	free(pids);
	free(ordinal);
	free(ks);
	lp_buf_release(&fn);
	return rc;
}
