/* stages.c: NVTX stage ranges -> per-iteration host and GPU times (see stages.h). First step of
 * the analysis after loading a profile; operators.c, kernels.c and the MFU/MBU numbers build on
 * the kernel-to-stage map computed here. */
#include "analyze/stages.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/operators.h"
#include "core/vec.h"

#define MAX_WALK 512   /* ancestor walk bound (profile ranges are trees; guards a corrupt parent) */

/* Counts range r under its (role, domain, name) entry. */
static int map_count(struct lp_stage_set *s, enum lp_stage_role role, const struct lp_range *r, int ignored)
{
	size_t i;
	struct lp_stage_map_entry *e;
	for (i = 0; i < s->n_map; i++)
		if (s->map[i].role == role && !strcmp(s->map[i].name, r->name) && !strcmp(s->map[i].domain, r->domain))
			break;
	if (i == s->n_map) {
		if (s->n_map >= LP_STAGE_MAP_MAX) {
			s->map_truncated = 1;
			return 0;
		}
		e = &s->map[s->n_map];
		e->role = role;
		e->name = lp_arena_strdup(&s->arena, r->name);
		e->domain = lp_arena_strdup(&s->arena, r->domain);
		e->ranges = e->ignored = 0;
		if (!e->name || !e->domain)
			return -1;
		s->n_map++;
	}
	s->map[i].ranges++;
	if (ignored)
		s->map[i].ignored++;
	return 0;
}

const struct lp_stage *lp_stages_find(const struct lp_stage_set *s, enum lp_stage_kind kind)
{
	size_t i;
	for (i = 0; i < s->n_stages; i++)
		if (s->stages[i].kind == kind)
			return &s->stages[i];
	return NULL;
}

void lp_stage_set_release(struct lp_stage_set *s)
{
	size_t i;
	for (i = 0; i < s->n_stages; i++) {
		free(s->stages[i].iters);
		free(s->stages[i].notes);
		free(s->stages[i].step_lat_ms);
	}
	free(s->stages);
	free(s->kernel_stage);
	free(s->range_flags);
	free(s->map);
	lp_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}

static enum lp_stage_role role_of(const struct lp_stage_set *s, int32_t r)
{
	return (enum lp_stage_role)(s->range_flags[r] & LP_STAGE_RANGE_ROLE_MASK);
}

/* The nearest proper ancestor of idx with this role; -1 none. */
static int32_t ancestor_with_role(const struct lp_profile *p, const struct lp_stage_set *s, int32_t idx,
	enum lp_stage_role role)
{
	int32_t r = p->ranges[idx].parent;
	int guard = 0;
	while (r >= 0 && (size_t)r < p->n_ranges && guard++ < MAX_WALK) {
		if (role_of(s, r) == role)
			return r;
		r = p->ranges[r].parent;
	}
	return -1;
}

static int is_warmup_below(const struct lp_profile *p, const struct lp_stage_set *s, int32_t idx)
{
	return ancestor_with_role(p, s, idx, LP_ROLE_WARMUP) >= 0;
}

/* Index of the nearest ancestor-or-self range that is an occurrence (occ_of[r] >= 0); -1 none. */
static int32_t occ_above(const struct lp_profile *p, const int32_t *occ_of, int32_t r)
{
	int guard = 0;
	while (r >= 0 && (size_t)r < p->n_ranges && guard++ < MAX_WALK) {
		if (occ_of[r] >= 0)
			return occ_of[r];
		r = p->ranges[r].parent;
	}
	return -1;
}

struct occ {
	int32_t stage;
	size_t iter;
	int32_t range;
};

struct ival {
	int32_t occ;
	uint64_t s, e;
};

static int cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	if (x->occ != y->occ)
		return x->occ < y->occ ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->e > y->e) - (x->e < y->e);
}

/* The union of n intervals sorted by start (cmp_ival within one occurrence): busy time, and in
 * *last the latest end. n > 0. */
static uint64_t union_ns(const struct ival *iv, size_t n, uint64_t *last)
{
	uint64_t cs = iv[0].s, ce = iv[0].e, busy = 0, hi = iv[0].e;
	size_t i;
	for (i = 1; i < n; i++) {
		if (iv[i].e > hi)
			hi = iv[i].e;
		if (iv[i].s > ce) {
			busy += ce - cs;
			cs = iv[i].s;
			ce = iv[i].e;
		} else if (iv[i].e > ce) {
			ce = iv[i].e;
		}
	}
	*last = hi;
	return busy + (ce - cs);
}

static int stage_index(struct lp_stage_set *s, const char *name, const char *domain, enum lp_stage_kind kind)
{
	size_t i;
	for (i = 0; i < s->n_stages; i++)
		if (!strcmp(s->stages[i].name, name))
			return (int)i;
	if (s->n_stages >= LP_STAGES_MAX)
		return -1;
	memset(&s->stages[s->n_stages], 0, sizeof(s->stages[0]));
	s->stages[s->n_stages].name = lp_arena_strdup(&s->arena, name);
	s->stages[s->n_stages].domain = lp_arena_strdup(&s->arena, domain);
	s->stages[s->n_stages].kind = kind;
	if (!s->stages[s->n_stages].name || !s->stages[s->n_stages].domain)
		return -2;
	return (int)s->n_stages++;
}

static int add_iter(struct lp_stage *st, const struct lp_range *r, int32_t idx)
{
	struct lp_stage_iter *it = LP_ARRAY_PUSH(st->iters, st->n_iters, st->cap_iters, NULL);
	if (!it)
		return -1;
	it->range = idx;
	it->start_ns = r->start_ns;
	it->host_ns = r->end_ns - r->start_ns;
	if (r->payload_type == LP_PAYLOAD_U64) {
		it->has_payload = 1;
		it->payload = r->payload.u64;
	} else if (r->payload_type == LP_PAYLOAD_I64 && r->payload.i64 >= 0) {
		it->has_payload = 1;
		it->payload = (uint64_t)r->payload.i64;
	} else if (r->payload_type == LP_PAYLOAD_F64 && r->payload.f64 >= 0 && r->payload.f64 < 1.8e19) {
		it->has_payload = 1;
		it->payload = (uint64_t)r->payload.f64;
	}
	return 0;
}

static int cmp_iter_start(const void *a, const void *b)
{
	const struct lp_stage_iter *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int ranges_role_is_stage(enum lp_stage_role role)
{
	return role == LP_ROLE_PREFILL || role == LP_ROLE_DECODE || role == LP_ROLE_MIXED;
}

static enum lp_stage_kind kind_of_role(enum lp_stage_role role)
{
	return role == LP_ROLE_PREFILL ? LP_STAGE_PREFILL : role == LP_ROLE_DECODE ? LP_STAGE_DECODE
		: role == LP_ROLE_MIXED ? LP_STAGE_MIXED : LP_STAGE_STEPS;
}

/* A decode step outside every prefill, decode and mixed range, and not nested in another step: an
 * occurrence of the decode_step stage (stages.h). */
static int free_step(const struct lp_profile *p, const struct lp_stage_set *s, int32_t idx)
{
	return role_of(s, idx) == LP_ROLE_STEP && ancestor_with_role(p, s, idx, LP_ROLE_STEP) < 0 &&
	       ancestor_with_role(p, s, idx, LP_ROLE_DECODE) < 0 && ancestor_with_role(p, s, idx, LP_ROLE_PREFILL) < 0 &&
	       ancestor_with_role(p, s, idx, LP_ROLE_MIXED) < 0;
}

/* Which ranges are stage occurrences: the prefill and decode ranges of the mapping, else the
 * top-level ranges. Also fills the mapping's entries. */
static int find_occurrences(const struct lp_profile *p, struct lp_stage_set *s, int *fallback)
{
	size_t i;
	int have_llm[LP_ROLE_COUNT] = { 0 }, pass;
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		enum lp_stage_role role = role_of(s, (int32_t)i);
		if (r->kind != LP_RANGE_MARK && !r->synthetic && !strcmp(r->domain, "LLM") && role != LP_ROLE_NONE)
			have_llm[role] = 1;
		if (r->kind != LP_RANGE_MARK && !r->synthetic && role == LP_ROLE_WARMUP)
			s->have_warmup_range = 1;
	}
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		enum lp_stage_role role = role_of(s, (int32_t)i);
		if (role == LP_ROLE_NONE || r->kind == LP_RANGE_MARK || r->synthetic)
			continue;
		if (map_count(s, role, r, have_llm[role] && role != LP_ROLE_STEP && strcmp(r->domain, "LLM")) < 0)
			return -1;
	}
	*fallback = 0;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < p->n_ranges; i++) {
			const struct lp_range *r = &p->ranges[i];
			enum lp_stage_kind kind = LP_STAGE_OTHER;
			enum lp_stage_role role = role_of(s, (int32_t)i);
			int si;
			/* a synthetic range (graph-launch copy of a capture-time range) is GPU work of the
			 * stage it was launched in, never an occurrence of its own */
			if (r->kind == LP_RANGE_MARK || r->synthetic)
				continue;
			if (pass == 0) {
				if (!ranges_role_is_stage(role) && !free_step(p, s, (int32_t)i))
					continue;
				kind = kind_of_role(role);
				if (have_llm[role] && strcmp(r->domain, "LLM"))
					continue;
				/* nested in a range of the same role: part of the outer one */
				if (kind != LP_STAGE_STEPS && ancestor_with_role(p, s, (int32_t)i, role) >= 0)
					continue;
				/* steps under warm-up are part of it, not a stage (warm-up decode loops) */
				if (kind == LP_STAGE_STEPS && is_warmup_below(p, s, (int32_t)i))
					continue;
			} else {
				if (r->parent >= 0 || role == LP_ROLE_WARMUP || lp_op_is_known(r->name) ||
				    lp_op_is_pytorch(r->name))
					continue;
			}
			/* stage rows are created in a fixed order: prefill, decode, then first seen; the
			 * mapped rows keep the canonical names whatever the ranges are called */
			if (pass == 0 && s->n_stages == 0) {
				if (stage_index(s, "prefill", have_llm[LP_ROLE_PREFILL] ? "LLM" : r->domain, LP_STAGE_PREFILL) < 0 ||
				    stage_index(s, "decode_all", have_llm[LP_ROLE_DECODE] ? "LLM" : r->domain, LP_STAGE_DECODE) < 0 ||
				    stage_index(s, "mixed", have_llm[LP_ROLE_MIXED] ? "LLM" : r->domain, LP_STAGE_MIXED) < 0 ||
				    stage_index(s, "decode_step", have_llm[LP_ROLE_STEP] ? "LLM" : r->domain, LP_STAGE_STEPS) < 0)
					return -1;
			}
			si = pass == 0 ? stage_index(s, lp_stage_role_name(role), r->domain, kind)
				       : stage_index(s, r->name, r->domain, kind);
			if (si == -2)
				return -1;
			if (si < 0)
				continue;   /* more than LP_STAGES_MAX distinct top-level names */
			if (is_warmup_below(p, s, (int32_t)i)) {
				s->stages[si].excluded_warmup++;
				continue;
			}
			if (r->end_ns == 0 || r->end_ns < r->start_ns) {
				s->stages[si].unclosed++;
				continue;
			}
			if (add_iter(&s->stages[si], r, (int32_t)i) < 0)
				return -1;
		}
		if (s->n_stages > 0) {
			/* drop the fixed rows nobody filled (only prefill, or only decode, was seen) */
			size_t w = 0, k;
			for (k = 0; k < s->n_stages; k++) {
				if (s->stages[k].n_iters || s->stages[k].excluded_warmup || s->stages[k].unclosed)
					s->stages[w++] = s->stages[k];
				else
					free(s->stages[k].iters);
			}
			s->n_stages = w;
		}
		if (s->n_stages > 0)
			break;
		*fallback = 1;
	}
	if (s->n_stages == 0)
		*fallback = 0;
	for (i = 0; i < s->n_stages; i++)
		if (s->stages[i].n_iters > 1)
			qsort(s->stages[i].iters, s->stages[i].n_iters, sizeof(struct lp_stage_iter), cmp_iter_start);
	return 0;
}

/* The skip-first rule (stages.h): the first N occurrences of each stage with more than N become
 * warm-up. Their ranges get LP_STAGE_RANGE_EXCLUDED here; descendants inherit it below. */
static void skip_first(struct lp_stage_set *s, int64_t rule)
{
	size_t i, j;
	s->skip_auto = rule == LP_SKIP_FIRST_AUTO;
	s->skip_first = rule >= 0 ? rule : s->have_warmup_range ? 0 : 1;
	if (s->skip_first <= 0)
		return;
	for (i = 0; i < s->n_stages; i++) {
		struct lp_stage *st = &s->stages[i];
		size_t n = (size_t)s->skip_first;
		if (st->n_iters <= n)
			continue;
		for (j = 0; j < n; j++)
			s->range_flags[st->iters[j].range] |= LP_STAGE_RANGE_EXCLUDED;
		memmove(st->iters, st->iters + n, (st->n_iters - n) * sizeof(*st->iters));
		st->n_iters -= n;
		st->skipped_first = n;
	}
}

/* Warm-up ranges and skipped occurrences exclude everything under them: the flag is made
 * inherited (self or an ancestor) for every range. */
static void inherit_excluded(const struct lp_profile *p, struct lp_stage_set *s)
{
	uint8_t *state = s->range_flags;   /* bit 0x10: resolved */
	size_t i;
	for (i = 0; i < p->n_ranges; i++)
		if ((state[i] & LP_STAGE_RANGE_ROLE_MASK) == LP_ROLE_WARMUP)
			state[i] |= LP_STAGE_RANGE_EXCLUDED;
	for (i = 0; i < p->n_ranges; i++) {
		int32_t chain[MAX_WALK], r = (int32_t)i;
		int n = 0, ex = 0, k;
		while (r >= 0 && (size_t)r < p->n_ranges && n < MAX_WALK) {
			if (state[r] & 0x10) {
				ex = (state[r] & LP_STAGE_RANGE_EXCLUDED) != 0;
				break;
			}
			chain[n++] = r;
			if (state[r] & LP_STAGE_RANGE_EXCLUDED) {
				ex = 1;
				break;
			}
			r = p->ranges[r].parent;
		}
		for (k = n - 1; k >= 0; k--) {
			if (state[chain[k]] & LP_STAGE_RANGE_EXCLUDED)
				ex = 1;
			state[chain[k]] |= 0x10 | (ex ? LP_STAGE_RANGE_EXCLUDED : 0);
		}
	}
	for (i = 0; i < p->n_ranges; i++)
		state[i] &= (uint8_t)~0x10;
}

static double median_of(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), lp_cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Outlier iterations by latency (stages.h). -1 on out of memory. */
static int flag_outliers(struct lp_stage_set *s)
{
	size_t i, j;
	for (i = 0; i < s->n_stages; i++) {
		struct lp_stage *st = &s->stages[i];
		double *x, med, mad, lim;
		st->lat_median_ms = NAN;
		st->n_outliers = 0;
		if (!st->n_iters)
			continue;
		if (!(x = malloc(st->n_iters * sizeof(*x))))
			return -1;
		for (j = 0; j < st->n_iters; j++)
			x[j] = (double)st->iters[j].latency_ns / 1e6;
		med = st->lat_median_ms = median_of(x, st->n_iters);
		if (st->n_iters >= 3) {
			for (j = 0; j < st->n_iters; j++)
				x[j] = fabs((double)st->iters[j].latency_ns / 1e6 - med);
			mad = median_of(x, st->n_iters);
			lim = 3.0 * 1.4826 * mad;
			if (lim < 0.05 * med)
				lim = 0.05 * med;
			for (j = 0; j < st->n_iters; j++) {
				st->iters[j].outlier = fabs((double)st->iters[j].latency_ns / 1e6 - med) > lim;
				st->n_outliers += (size_t)st->iters[j].outlier;
			}
		}
		free(x);
	}
	return 0;
}

/* Whole-run timeline: first start to last end, and the union of every kernel's interval. */
static int whole_run(const struct lp_profile *p, struct lp_stage_set *s)
{
	uint64_t lo = UINT64_MAX, hi = 0, last;
	struct ival *iv = malloc((p->n_kernels + 1) * sizeof(*iv));
	size_t i, n = 0;
	if (!iv)
		return -1;
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		if (r->synthetic || !r->start_ns)
			continue;
		if (r->start_ns < lo)
			lo = r->start_ns;
		if (r->end_ns > hi)
			hi = r->end_ns;
	}
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		if (k->end_ns <= k->start_ns)
			continue;
		if (k->start_ns < lo)
			lo = k->start_ns;
		if (k->end_ns > hi)
			hi = k->end_ns;
		iv[n].occ = 0;
		iv[n].s = k->start_ns;
		iv[n].e = k->end_ns;
		n++;
	}
	qsort(iv, n, sizeof(*iv), cmp_ival);
	s->run_busy_ns = n ? union_ns(iv, n, &last) : 0;
	s->run_span_ns = hi > lo ? hi - lo : 0;
	free(iv);
	return 0;
}

static int add_note(struct lp_stage_set *s, struct lp_stage *st, const char *name, uint64_t host_ns,
	uint64_t kernel_ns, uint64_t kernels)
{
	size_t i;
	for (i = 0; i < st->n_notes; i++)
		if (!strcmp(st->notes[i].name, name))
			break;
	if (i == st->n_notes) {
		struct lp_stage_note *n = LP_ARRAY_PUSH(st->notes, st->n_notes, st->cap_notes, NULL);
		if (!n)
			return -1;
		if (!(n->name = lp_arena_strdup(&s->arena, name))) {
			st->n_notes--;
			return -1;
		}
	}
	st->notes[i].calls++;
	st->notes[i].host_ns += host_ns;
	st->notes[i].kernel_ns += kernel_ns;
	st->notes[i].kernels += kernels;
	return 0;
}

static int structural(const struct lp_stage_set *s, const struct lp_range *x, int32_t r)
{
	return role_of(s, r) != LP_ROLE_NONE || lp_stage_is_structural(x->name);
}

/* A range inside a stage that is neither an op nor structural, and not inside another such range. */
static int is_note_range(const struct lp_profile *p, const struct lp_stage_set *s, int32_t r, const int32_t *occ_of)
{
	const struct lp_range *x = &p->ranges[r];
	int guard = 0;
	if (occ_of[r] >= 0 || structural(s, x, r) || lp_op_is_known(x->name) ||
	    lp_op_is_pytorch(x->name) || x->kind == LP_RANGE_MARK)
		return 0;
	for (r = x->parent; r >= 0 && guard++ < MAX_WALK; r = p->ranges[r].parent) {
		const struct lp_range *a = &p->ranges[r];
		if (occ_of[r] >= 0)
			return 1;
		if (!structural(s, a, r) && !lp_op_is_known(a->name) && !lp_op_is_pytorch(a->name))
			return 0;   /* inside an outer note range */
	}
	return 0;
}

int lp_stages_compute(const struct lp_profile *p, struct lp_stage_set *out, struct lp_err *err)
{
	static const struct lp_stage_rules none = { { NULL }, 0, NULL, 0 };
	return lp_stages_compute_ex(p, &none, out, err);
}

int lp_stages_compute_ex(const struct lp_profile *p, const struct lp_stage_rules *rules, struct lp_stage_set *out,
	struct lp_err *err)
{
	int32_t *occ_of = NULL;
	struct occ *occs = NULL;
	struct ival *iv = NULL;
	uint64_t *range_kns = NULL, *range_kn = NULL;
	size_t n_occ = 0, n_iv = 0, i, j;
	double *vals = NULL;

	memset(out, 0, sizeof(*out));
	out->stages = calloc(LP_STAGES_MAX, sizeof(*out->stages));
	out->map = calloc(LP_STAGE_MAP_MAX, sizeof(*out->map));
	out->range_flags = calloc(p->n_ranges + 1, 1);
	out->n_ranges = p->n_ranges;
	occ_of = malloc((p->n_ranges + 1) * sizeof(*occ_of));
	out->kernel_stage = malloc((p->n_kernels + 1) * sizeof(*out->kernel_stage));
	range_kns = calloc(p->n_ranges + 1, sizeof(*range_kns));
	range_kn = calloc(p->n_ranges + 1, sizeof(*range_kn));
	iv = malloc((p->n_kernels + 1) * sizeof(*iv));
	if (!out->stages || !out->map || !out->range_flags || !occ_of || !out->kernel_stage || !range_kns || !range_kn ||
	    !iv)
		goto oom;
	out->names_source = lp_arena_strdup(&out->arena, rules && rules->source ? rules->source : "built-in defaults");
	if (!out->names_source)
		goto oom;
	if (lp_stage_classify_ranges(p, rules, out, err) < 0) {
		free(occ_of);
		free(range_kns);
		free(range_kn);
		free(iv);
		lp_stage_set_release(out);
		return -1;
	}
	out->n_kernels = p->n_kernels;
	out->have_gpu = p->n_kernels > 0;
	if (find_occurrences(p, out, &out->top_level_fallback) < 0)
		goto oom;
	skip_first(out, rules ? rules->skip_first : LP_SKIP_FIRST_AUTO);
	out->decode_to_last_step = rules ? rules->decode_to_last_step : 0;
	inherit_excluded(p, out);
	if (whole_run(p, out) < 0)
		goto oom;

	for (i = 0; i < p->n_ranges; i++)
		occ_of[i] = -1;
	for (i = 0; i < out->n_stages; i++)
		n_occ += out->stages[i].n_iters;
	occs = malloc((n_occ + 1) * sizeof(*occs));
	if (!occs)
		goto oom;
	n_occ = 0;
	for (i = 0; i < out->n_stages; i++) {
		for (j = 0; j < out->stages[i].n_iters; j++) {
			occs[n_occ].stage = (int32_t)i;
			occs[n_occ].iter = j;
			occs[n_occ].range = out->stages[i].iters[j].range;
			occ_of[occs[n_occ].range] = (int32_t)n_occ;
			n_occ++;
		}
	}

	/* kernels: stage map, per-occurrence intervals, per-range inclusive sums (for notes) */
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		uint64_t d = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
		int32_t o, r;
		int guard = 0;
		out->kernel_stage[i] = -1;
		if (lp_stage_range_excluded(out, k->range)) {
			out->kernel_stage[i] = -2;
			out->warmup_kernel_ns += d;
			continue;
		}
		out->measured_kernel_ns += d;
		if (k->range < 0 || (size_t)k->range >= p->n_ranges)
			continue;
		for (r = k->range; r >= 0 && guard++ < MAX_WALK; r = p->ranges[r].parent) {
			range_kns[r] += d;
			range_kn[r]++;
		}
		o = occ_above(p, occ_of, k->range);
		if (o < 0)
			continue;
		out->kernel_stage[i] = occs[o].stage;
		{
			struct lp_stage_iter *it = &out->stages[occs[o].stage].iters[occs[o].iter];
			it->kernels++;
			it->kernel_ns += d;
		}
		if (d) {
			iv[n_iv].occ = o;
			iv[n_iv].s = k->start_ns;
			iv[n_iv].e = k->end_ns;
			n_iv++;
		}
	}
	qsort(iv, n_iv, sizeof(*iv), cmp_ival);
	for (i = 0; i < n_iv; i = j) {
		int32_t o = iv[i].occ;
		uint64_t last;
		for (j = i; j < n_iv && iv[j].occ == o; j++)
			;
		out->stages[occs[o].stage].iters[occs[o].iter].gpu_busy_ns = union_ns(iv + i, j - i, &last);
		out->stages[occs[o].stage].iters[occs[o].iter].gpu_span_ns = last - iv[i].s;
	}

	/* decode steps and notes */
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		int32_t o;
		if (occ_of[i] >= 0 || r->parent < 0)
			continue;
		o = occ_above(p, occ_of, r->parent);
		if (o < 0)
			continue;
		if (role_of(out, (int32_t)i) == LP_ROLE_STEP) {
			if (!r->synthetic && ancestor_with_role(p, out, (int32_t)i, LP_ROLE_STEP) < 0)
				out->stages[occs[o].stage].iters[occs[o].iter].steps++;
			continue;
		}
		if (is_note_range(p, out, (int32_t)i, occ_of) &&
		    add_note(out, &out->stages[occs[o].stage], r->name,
			     !r->synthetic && r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0, range_kns[i],
			     range_kn[i]) < 0)
			goto oom;
	}

	/* statistics */
	vals = malloc((n_occ + 1) * sizeof(*vals));
	if (!vals)
		goto oom;
	for (i = 0; i < out->n_stages; i++) {
		struct lp_stage *st = &out->stages[i];
		size_t n = st->n_iters;
		for (j = 0; j < n; j++)
			vals[j] = (double)st->iters[j].host_ns / 1e6;
		lp_stat_compute(vals, n, &st->host_ms);
		lp_stage_kernel_stats(st, vals);
		for (j = 0; j < n; j++)
			vals[j] = (double)st->iters[j].gpu_span_ns / 1e6;
		lp_stat_compute(vals, n, &st->gpu_span_ms);
		for (j = 0; j < n; j++)
			vals[j] = (double)st->iters[j].steps;
		lp_stat_compute(vals, n, &st->steps);
	}
	free(vals);
	vals = NULL;
	if (lp_stage_latency_compute(p, out) < 0 || flag_outliers(out) < 0)
		goto oom;
	free(occ_of);
	free(occs);
	free(iv);
	free(range_kns);
	free(range_kn);
	return 0;
oom:
	free(vals);
	free(occ_of);
	free(occs);
	free(iv);
	free(range_kns);
	free(range_kn);
	lp_stage_set_release(out);
	return lp_oom(err);
}

void lp_stage_kernel_stats(struct lp_stage *st, double *vals)
{
	size_t j, n = st->n_iters;
	for (j = 0; j < n; j++)
		vals[j] = (double)st->iters[j].gpu_busy_ns / 1e6;
	lp_stat_compute(vals, n, &st->gpu_ms);
	for (j = 0; j < n; j++)
		vals[j] = (double)st->iters[j].kernel_ns / 1e6;
	lp_stat_compute(vals, n, &st->kernel_ms);
	for (j = 0; j < n; j++)
		vals[j] = (double)st->iters[j].kernels;
	lp_stat_compute(vals, n, &st->kernels);
}

void lp_stage_of_ranges(const struct lp_stage_set *stages, size_t n_ranges, int32_t *stage_of)
{
	size_t i, j;
	for (i = 0; i < n_ranges; i++)
		stage_of[i] = -1;
	for (i = 0; i < stages->n_stages; i++)
		for (j = 0; j < stages->stages[i].n_iters; j++)
			stage_of[stages->stages[i].iters[j].range] = (int32_t)i;
}
