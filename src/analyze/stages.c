/* stages.c: NVTX stage ranges -> per-iteration host and GPU times (see stages.h). First step of
 * the analysis after loading a profile; operators.c, kernels.c and the MFU/MBU numbers build on
 * the kernel-to-stage map computed here. */
#include "analyze/stages.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/operators.h"

#define MAX_WALK 512   /* ancestor walk bound (profile ranges are trees; guards a corrupt parent) */

void lp_stat_compute(const double *x, size_t n, struct lp_stat *out)
{
	size_t i;
	double sum = 0, ss = 0;
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	out->min = out->max = x[0];
	for (i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < out->min)
			out->min = x[i];
		if (x[i] > out->max)
			out->max = x[i];
	}
	out->mean = sum / (double)n;
	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		ss += (x[i] - out->mean) * (x[i] - out->mean);
	out->std = sqrt(ss / (double)(n - 1));
}

int lp_stage_is_structural(const char *name)
{
	static const char *const names[] = { "prefill", "decode_all", "decode_step", "warmup", "iteration",
					     "iter", "generate", NULL };
	size_t i;
	for (i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return 1;
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
	lp_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}

static int is_warmup_below(const struct lp_profile *p, int32_t idx)
{
	return lp_profile_range_find_ancestor(p, p->ranges[idx].parent, "warmup") >= 0;
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
	struct lp_stage_iter *it;
	if ((st->n_iters & (st->n_iters - 1)) == 0) {  /* grow at powers of two */
		size_t ncap = st->n_iters ? st->n_iters * 2 : 4;
		struct lp_stage_iter *n = realloc(st->iters, ncap * sizeof(*n));
		if (!n)
			return -1;
		st->iters = n;
	}
	it = &st->iters[st->n_iters++];
	memset(it, 0, sizeof(*it));
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

/* Which ranges are stage occurrences: the named stages, else the top-level ranges. */
static int find_occurrences(const struct lp_profile *p, struct lp_stage_set *s, int *fallback)
{
	size_t i;
	int have_llm = 0, pass;
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		if (r->kind != LP_RANGE_MARK && !r->synthetic && !strcmp(r->domain, "LLM") &&
		    (!strcmp(r->name, "prefill") || !strcmp(r->name, "decode_all")))
			have_llm = 1;
	}
	*fallback = 0;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < p->n_ranges; i++) {
			const struct lp_range *r = &p->ranges[i];
			enum lp_stage_kind kind = LP_STAGE_OTHER;
			int si;
			/* a synthetic range (graph-launch copy of a capture-time range) is GPU work of the
			 * stage it was launched in, never an occurrence of its own */
			if (r->kind == LP_RANGE_MARK || r->synthetic)
				continue;
			if (pass == 0) {
				if (!strcmp(r->name, "prefill"))
					kind = LP_STAGE_PREFILL;
				else if (!strcmp(r->name, "decode_all"))
					kind = LP_STAGE_DECODE;
				else
					continue;
				if (have_llm && strcmp(r->domain, "LLM"))
					continue;
				/* nested in a range of the same name: part of the outer one */
				if (lp_profile_range_find_ancestor(p, r->parent, r->name) >= 0)
					continue;
			} else {
				if (r->parent >= 0 || !strcmp(r->name, "warmup") || lp_op_is_known(r->name) ||
				    lp_op_is_pytorch(r->name))
					continue;
			}
			/* stage rows are created in a fixed order: prefill, decode, then first seen */
			if (pass == 0 && s->n_stages == 0) {
				if (stage_index(s, "prefill", have_llm ? "LLM" : r->domain, LP_STAGE_PREFILL) < 0 ||
				    stage_index(s, "decode_all", have_llm ? "LLM" : r->domain, LP_STAGE_DECODE) < 0)
					return -1;
			}
			si = stage_index(s, r->name, r->domain, kind);
			if (si == -2)
				return -1;
			if (si < 0)
				continue;   /* more than LP_STAGES_MAX distinct top-level names */
			if (is_warmup_below(p, (int32_t)i)) {
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

static int add_note(struct lp_stage_set *s, struct lp_stage *st, const char *name, uint64_t host_ns,
	uint64_t kernel_ns, uint64_t kernels)
{
	size_t i;
	for (i = 0; i < st->n_notes; i++)
		if (!strcmp(st->notes[i].name, name))
			break;
	if (i == st->n_notes) {
		struct lp_stage_note *n = realloc(st->notes, (st->n_notes + 1) * sizeof(*n));
		if (!n)
			return -1;
		st->notes = n;
		memset(&n[i], 0, sizeof(n[i]));
		n[i].name = lp_arena_strdup(&s->arena, name);
		if (!n[i].name)
			return -1;
		st->n_notes++;
	}
	st->notes[i].calls++;
	st->notes[i].host_ns += host_ns;
	st->notes[i].kernel_ns += kernel_ns;
	st->notes[i].kernels += kernels;
	return 0;
}

/* A range inside a stage that is neither an op nor structural, and not inside another such range. */
static int is_note_range(const struct lp_profile *p, int32_t r, const int32_t *occ_of)
{
	const struct lp_range *x = &p->ranges[r];
	int guard = 0;
	if (occ_of[r] >= 0 || lp_stage_is_structural(x->name) || lp_op_is_known(x->name) ||
	    lp_op_is_pytorch(x->name) || x->kind == LP_RANGE_MARK)
		return 0;
	for (r = x->parent; r >= 0 && guard++ < MAX_WALK; r = p->ranges[r].parent) {
		const struct lp_range *a = &p->ranges[r];
		if (occ_of[r] >= 0)
			return 1;
		if (!lp_stage_is_structural(a->name) && !lp_op_is_known(a->name) && !lp_op_is_pytorch(a->name))
			return 0;   /* inside an outer note range */
	}
	return 0;
}

int lp_stages_compute(const struct lp_profile *p, struct lp_stage_set *out, struct lp_err *err)
{
	int32_t *occ_of = NULL;
	struct occ *occs = NULL;
	struct ival *iv = NULL;
	uint64_t *range_kns = NULL, *range_kn = NULL;
	size_t n_occ = 0, n_iv = 0, i, j;
	double *vals = NULL;

	memset(out, 0, sizeof(*out));
	out->stages = calloc(LP_STAGES_MAX, sizeof(*out->stages));
	occ_of = malloc((p->n_ranges + 1) * sizeof(*occ_of));
	out->kernel_stage = malloc((p->n_kernels + 1) * sizeof(*out->kernel_stage));
	range_kns = calloc(p->n_ranges + 1, sizeof(*range_kns));
	range_kn = calloc(p->n_ranges + 1, sizeof(*range_kn));
	iv = malloc((p->n_kernels + 1) * sizeof(*iv));
	if (!out->stages || !occ_of || !out->kernel_stage || !range_kns || !range_kn || !iv)
		goto oom;
	out->n_kernels = p->n_kernels;
	out->have_gpu = p->n_kernels > 0;
	if (find_occurrences(p, out, &out->top_level_fallback) < 0)
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
		if (k->range >= 0 && (size_t)k->range < p->n_ranges &&
		    lp_profile_range_find_ancestor(p, k->range, "warmup") >= 0) {
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
	for (i = 0; i < n_iv;) {
		int32_t o = iv[i].occ;
		uint64_t cs = iv[i].s, ce = iv[i].e, busy = 0, first = iv[i].s, last = iv[i].e;
		for (; i < n_iv && iv[i].occ == o; i++) {
			if (iv[i].e > last)
				last = iv[i].e;
			if (iv[i].s > ce) {
				busy += ce - cs;
				cs = iv[i].s;
				ce = iv[i].e;
			} else if (iv[i].e > ce) {
				ce = iv[i].e;
			}
		}
		busy += ce - cs;
		out->stages[occs[o].stage].iters[occs[o].iter].gpu_busy_ns = busy;
		out->stages[occs[o].stage].iters[occs[o].iter].gpu_span_ns = last - first;
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
		if (!strcmp(r->name, "decode_step")) {
			if (!r->synthetic && lp_profile_range_find_ancestor(p, r->parent, "decode_step") < 0)
				out->stages[occs[o].stage].iters[occs[o].iter].steps++;
			continue;
		}
		if (is_note_range(p, (int32_t)i, occ_of) &&
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
		for (j = 0; j < n; j++)
			vals[j] = (double)st->iters[j].gpu_busy_ns / 1e6;
		lp_stat_compute(vals, n, &st->gpu_ms);
		for (j = 0; j < n; j++)
			vals[j] = (double)st->iters[j].gpu_span_ns / 1e6;
		lp_stat_compute(vals, n, &st->gpu_span_ms);
		for (j = 0; j < n; j++)
			vals[j] = (double)st->iters[j].kernel_ns / 1e6;
		lp_stat_compute(vals, n, &st->kernel_ms);
		for (j = 0; j < n; j++)
			vals[j] = (double)st->iters[j].kernels;
		lp_stat_compute(vals, n, &st->kernels);
		for (j = 0; j < n; j++)
			vals[j] = (double)st->iters[j].steps;
		lp_stat_compute(vals, n, &st->steps);
	}
	free(vals);
	vals = NULL;
	if (lp_stage_latency_compute(p, out) < 0)
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
	return lp_err_set(err, LP_EOTHER, "out of memory computing stage timings");
}
