/* latency.c: the clock the user sees. For every stage occurrence and every decode step it derives
 * the latency from the NVTX range and the GPU work launched inside it (stages.h explains the rule);
 * then the per-stage statistics, the per-step percentiles, the overlap factor and the bound
 * verdict. Called at the end of lp_stages_compute, after the kernel-to-stage map.
 *
 * Why not the range alone: push to pop is the time the host spent launching. For a CUDA graph
 * replay, or any program that does not synchronize inside the range, the GPU finishes much later
 * (FIELD-NOTES "Clocks a stage has"). Why not from the push alone: when GPU work launched before
 * the push is still queued on the same stream, the stage's own work cannot start before it ends;
 * a CUDA event recorded at the push fires only then. So the start is the later of the push and the
 * end of that queued work, and the end the later of the pop and the end of the last GPU work
 * (kernel, copy, memset; graph replays included) launched inside. */
#include "analyze/stages.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

#define MAX_WALK 512

/* One piece of GPU work with a known launch time, for "what was queued before t on this stream". */
struct work {
	uint32_t pid, stream;
	uint64_t launch_ns, end_ns;  /* end_ns becomes the prefix maximum within its (pid, stream) */
};

static int cmp_work(const void *a, const void *b)
{
	const struct work *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return (x->launch_ns > y->launch_ns) - (x->launch_ns < y->launch_ns);
}

/* End of the GPU work launched on (pid, stream) strictly before t; 0 when none. */
static uint64_t queued_end(const struct work *w, size_t n, uint32_t pid, uint32_t stream, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {   /* first element not less than (pid, stream, t) */
		size_t mid = lo + (hi - lo) / 2;
		const struct work *m = &w[mid];
		int less = m->pid != pid ? m->pid < pid : m->stream != stream ? m->stream < stream : m->launch_ns < t;
		if (less)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || w[lo - 1].pid != pid || w[lo - 1].stream != stream)
		return 0;
	return w[lo - 1].end_ns;
}

/* GPU work attributed to a range (an occurrence or a decode step). */
struct span {
	uint64_t end_ns;             /* last end; 0 none */
	uint64_t first_launch_ns;    /* UINT64_MAX none */
	uint32_t stream, pid;        /* of the first launched piece */
};

static void span_add(struct span *s, uint32_t pid, uint32_t stream, uint64_t launch_ns, uint64_t end_ns)
{
	if (end_ns > s->end_ns)
		s->end_ns = end_ns;
	if (launch_ns && launch_ns < s->first_launch_ns) {
		s->first_launch_ns = launch_ns;
		s->stream = stream;
		s->pid = pid;
	}
}

static uint64_t latency(const struct lp_range *r, const struct span *s, const struct work *w, size_t n_w,
	uint64_t *wait_ns)
{
	uint64_t start = r->start_ns, end = r->end_ns;
	*wait_ns = 0;
	if (s->first_launch_ns == UINT64_MAX && !s->end_ns && r->gpu_status == 1 && r->gpu_end_ns) {
		/* no GPU work in the trace (an unrecorded unit of a sampled trace): the tracer's own
		 * CUDA events at push and pop (STAGE records, docs/tracer.md) give the same rule */
		if (r->gpu_start_ns > start) {
			*wait_ns = r->gpu_start_ns - start;
			start = r->gpu_start_ns;
		}
		if (r->gpu_end_ns > end)
			end = r->gpu_end_ns;
		return end > start ? end - start : 0;
	}
	if (s->first_launch_ns != UINT64_MAX) {
		uint64_t q = queued_end(w, n_w, s->pid, s->stream, r->start_ns);
		if (q > start) {
			*wait_ns = q - start;
			start = q;
		}
	}
	/* from the tracer's push mark, when the GPU reached the push, as a CUDA event the program
	 * recorded there would say (on an idle GPU some microseconds after the host's push, which
	 * counts on short steps: a 2.4 ms compiled step, bench/tracer/README.md run 32; llmprof-llm's
	 * 0.2 ms prefill, +6 to +20% from the host's push, run 34). Not when the push attached CUPTI
	 * before its mark (a prefill after a detached burst): that pause is in the time of a program
	 * that records its start event before the push (graph_decode.py: -5.2% from the mark, run 32
	 * call 8); a decode step's push never attaches (the pop before it does) */
	if (!r->push_attached && r->gpu_status == 1 && r->gpu_start_ns > start && (!r->gpu_end_ns || r->gpu_start_ns <= r->gpu_end_ns)) {
		*wait_ns += r->gpu_start_ns - start;
		start = r->gpu_start_ns;
	}
	if (s->end_ns > end)
		end = s->end_ns;
	/* the tracer's pop mark, taken again after a switch of CUPTI at the pop (a burst's detach,
	 * docs/tracer.md "Switches at a pop"): the pause is the program's too, in its own events */
	if (r->gpu_status == 1 && r->gpu_end_ns > end)
		end = r->gpu_end_ns;
	return end > start ? end - start : 0;
}

int lp_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double lp_percentile_sorted(const double *x, size_t n, double p)
{
	size_t rank;
	if (!n)
		return NAN;
	rank = (size_t)ceil(p / 100.0 * (double)n);   /* nearest rank */
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return x[rank - 1];
}

/* The outermost non-synthetic decode step (the mapping's step role) at or above range r, below
 * the occurrence; -1 none. */
static int32_t step_of(const struct lp_profile *p, const struct lp_stage_set *s, int32_t r, const int32_t *occ_of)
{
	int32_t found = -1;
	int guard = 0;
	while (r >= 0 && (size_t)r < p->n_ranges && guard++ < MAX_WALK) {
		if (occ_of[r] >= 0)
			return found;
		if (!p->ranges[r].synthetic && lp_stage_range_role(s, r) == LP_ROLE_STEP)
			found = r;
		r = p->ranges[r].parent;
	}
	return -1;
}

static int32_t occ_of_range(const struct lp_profile *p, int32_t r, const int32_t *occ_of)
{
	int guard = 0;
	while (r >= 0 && (size_t)r < p->n_ranges && guard++ < MAX_WALK) {
		if (occ_of[r] >= 0)
			return occ_of[r];
		r = p->ranges[r].parent;
	}
	return -1;
}

/* Tokens per second of a stage from its payloads (stages.h); NAN unless every measured iteration
 * has one. The decode range's payload is not tokens (the contract has none), so it gets none. */
static void tokens_rate(struct lp_stage *st)
{
	uint64_t lat_ns = 0, tok = 0;
	size_t j;
	st->tokens_total = 0;
	st->tokens_per_s = NAN;
	if (st->kind == LP_STAGE_DECODE || st->kind == LP_STAGE_OTHER || !st->n_iters)
		return;
	for (j = 0; j < st->n_iters; j++) {
		if (!st->iters[j].has_payload)
			return;
		tok += st->iters[j].payload;
		lat_ns += st->iters[j].latency_ns;
	}
	st->tokens_total = tok;
	if (lat_ns)
		st->tokens_per_s = (double)tok / ((double)lat_ns / 1e9);
}

void lp_stage_verdict(struct lp_stage *st, int have_gpu)
{
	double lat = st->lat_ms.mean, busy = st->gpu_ms.mean, host = st->host_ms.mean;
	st->overlap = busy > 0 ? st->kernel_ms.mean / busy : 0;
	if (!have_gpu || !st->n_iters) {
		st->bound = "n/a";
		st->idle_frac = NAN;
		return;
	}
	if (lat <= 0 || busy <= 0) {
		st->bound = "no GPU work";
		st->idle_frac = NAN;
		return;
	}
	st->idle_frac = 1.0 - busy / lat;
	if (st->idle_frac < 0)
		st->idle_frac = 0;
	if (st->idle_frac <= LP_STAGE_GPU_BOUND_IDLE)
		st->bound = "GPU-bound";
	else if (st->idle_frac >= LP_STAGE_LAUNCH_BOUND_IDLE && host >= LP_STAGE_HOST_BUSY * lat)
		st->bound = "CPU/launch-bound";
	else if (st->idle_frac >= LP_STAGE_LAUNCH_BOUND_IDLE)
		st->bound = "GPU idle (waits)";
	else
		st->bound = "mixed";
}

int lp_stage_latency_compute(const struct lp_profile *p, struct lp_stage_set *s)
{
	struct work *w = NULL;
	struct span *occ_span = NULL, *step_span = NULL;
	int32_t *occ_of = NULL, *step_occ = NULL, *last_step = NULL;
	size_t n_w = 0, n_occ = 0, i, j, k;
	double *vals = NULL;
	int rc = -1;

	occ_of = malloc((p->n_ranges + 1) * sizeof(*occ_of));
	step_span = malloc((p->n_ranges + 1) * sizeof(*step_span));
	w = malloc((p->n_kernels + p->n_copies + 1) * sizeof(*w));
	for (i = 0; i < s->n_stages; i++)
		n_occ += s->stages[i].n_iters;
	occ_span = malloc((n_occ + 1) * sizeof(*occ_span));
	step_occ = malloc((n_occ + 1) * 2 * sizeof(*step_occ));
	last_step = malloc((n_occ + 1) * sizeof(*last_step));
	if (!occ_of || !step_span || !w || !occ_span || !step_occ || !last_step)
		goto done;
	for (i = 0; i < p->n_ranges; i++) {
		occ_of[i] = -1;
		step_span[i].end_ns = 0;
		step_span[i].first_launch_ns = UINT64_MAX;
	}
	n_occ = 0;
	for (i = 0; i < s->n_stages; i++)
		for (j = 0; j < s->stages[i].n_iters; j++) {
			occ_of[s->stages[i].iters[j].range] = (int32_t)n_occ;
			step_occ[2 * n_occ] = (int32_t)i;
			step_occ[2 * n_occ + 1] = (int32_t)j;
			occ_span[n_occ].end_ns = 0;
			occ_span[n_occ].first_launch_ns = UINT64_MAX;
			last_step[n_occ] = -1;
			n_occ++;
		}

	/* every kernel and copy: the queue index, its occurrence's span, its decode step's span */
	for (k = 0; k < p->n_kernels + p->n_copies; k++) {
		uint32_t pid, stream;
		uint64_t launch, end;
		int32_t range, o, st;
		if (k < p->n_kernels) {
			const struct lp_kernel *x = &p->kernels[k];
			pid = x->pid, stream = x->stream, launch = x->launch_ns, end = x->end_ns, range = x->range;
		} else {
			const struct lp_copy *x = &p->copies[k - p->n_kernels];
			pid = x->pid, stream = x->stream, launch = x->launch_ns, end = x->end_ns, range = x->range;
		}
		if (launch) {
			w[n_w].pid = pid;
			w[n_w].stream = stream;
			w[n_w].launch_ns = launch;
			w[n_w].end_ns = end;
			n_w++;
		}
		if (range < 0 || (size_t)range >= p->n_ranges || (o = occ_of_range(p, range, occ_of)) < 0)
			continue;
		if (k < p->n_kernels && s->kernel_stage && s->kernel_stage[k] == -2)
			continue;   /* under warm-up */
		span_add(&occ_span[o], pid, stream, launch, end);
		if ((st = step_of(p, s, range, occ_of)) >= 0)
			span_add(&step_span[st], pid, stream, launch, end);
	}
	if (n_w > 1)
		qsort(w, n_w, sizeof(*w), cmp_work);
	for (i = 1; i < n_w; i++)   /* prefix maximum of the end within each (pid, stream) */
		if (w[i].pid == w[i - 1].pid && w[i].stream == w[i - 1].stream && w[i - 1].end_ns > w[i].end_ns)
			w[i].end_ns = w[i - 1].end_ns;

	/* decode steps: latencies pooled per stage, in start order */
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		struct lp_stage *st;
		int32_t o;
		uint64_t wait;
		if (r->synthetic || r->kind == LP_RANGE_MARK || lp_stage_range_role(s, (int32_t)i) != LP_ROLE_STEP ||
		    r->end_ns < r->start_ns ||
		    !r->end_ns || r->parent < 0)
			continue;
		if ((o = occ_of_range(p, r->parent, occ_of)) < 0 || step_of(p, s, (int32_t)i, occ_of) != (int32_t)i)
			continue;
		st = &s->stages[step_occ[2 * o]];
		if (st->kind == LP_STAGE_STEPS)
			continue;   /* a step nested in a free step is part of it */
		if (last_step[o] < 0 || r->end_ns > p->ranges[last_step[o]].end_ns)
			last_step[o] = (int32_t)i;
		if (LP_ARRAY_RESERVE(st->step_lat_ms, st->cap_step_lat, st->n_step_lat + 1, NULL) < 0)
			goto done;
		st->step_lat_ms[st->n_step_lat++] = (double)latency(r, &step_span[i], w, n_w, &wait) / 1e6;
	}

	/* the occurrences; with decode_to_last_step a decode occurrence as if it ended at its last
	 * step's pop (host time, and the pop mark's GPU time when the tracer took one) */
	for (i = 0; i < n_occ; i++) {
		struct lp_stage *st = &s->stages[step_occ[2 * i]];
		struct lp_stage_iter *it = &st->iters[step_occ[2 * i + 1]];
		struct lp_range r = p->ranges[it->range];
		if (s->decode_to_last_step && st->kind == LP_STAGE_DECODE && last_step[i] >= 0 &&
		    p->ranges[last_step[i]].end_ns < r.end_ns) {
			const struct lp_range *l = &p->ranges[last_step[i]];
			r.end_ns = l->end_ns;
			r.gpu_end_ns = r.gpu_status == 1 && l->gpu_status == 1 ? l->gpu_end_ns : 0;
			it->host_ns = r.end_ns - r.start_ns;
			s->decode_ends_moved++;
		}
		it->latency_ns = latency(&r, &occ_span[i], w, n_w, &it->wait_ns);
		it->gpu_end_ns = occ_span[i].end_ns;
	}

	/* decode steps outside decode ranges are the occurrences of their own stage: their latencies
	 * are the step latencies (stages.h) */
	for (i = 0; i < s->n_stages; i++) {
		struct lp_stage *st = &s->stages[i];
		if (st->kind != LP_STAGE_STEPS || !st->n_iters)
			continue;
		if (!(st->step_lat_ms = malloc(st->n_iters * sizeof(double))))
			goto done;
		for (j = 0; j < st->n_iters; j++)
			st->step_lat_ms[j] = (double)st->iters[j].latency_ns / 1e6;
		st->n_step_lat = st->cap_step_lat = st->n_iters;
	}

	/* statistics */
	vals = malloc((n_occ + 1) * sizeof(*vals));
	if (!vals)
		goto done;
	for (i = 0; i < s->n_stages; i++) {
		struct lp_stage *st = &s->stages[i];
		if (s->decode_ends_moved && st->kind == LP_STAGE_DECODE) {   /* host times ended at the last step */
			for (j = 0; j < st->n_iters; j++)
				vals[j] = (double)st->iters[j].host_ns / 1e6;
			lp_stat_compute(vals, st->n_iters, &st->host_ms);
		}
		for (j = 0; j < st->n_iters; j++)
			vals[j] = (double)st->iters[j].latency_ns / 1e6;
		lp_stat_compute(vals, st->n_iters, &st->lat_ms);
		lp_stat_compute(st->step_lat_ms, st->n_step_lat, &st->step_ms);
		tokens_rate(st);
		st->step_p50 = st->step_p90 = st->step_p99 = NAN;
		if (st->n_step_lat) {
			double *sorted = malloc(st->n_step_lat * sizeof(*sorted));
			if (!sorted)
				goto done;
			memcpy(sorted, st->step_lat_ms, st->n_step_lat * sizeof(*sorted));
			qsort(sorted, st->n_step_lat, sizeof(*sorted), lp_cmp_double);
			st->step_p50 = lp_percentile_sorted(sorted, st->n_step_lat, 50);
			st->step_p90 = lp_percentile_sorted(sorted, st->n_step_lat, 90);
			st->step_p99 = lp_percentile_sorted(sorted, st->n_step_lat, 99);
			free(sorted);
		}
		lp_stage_verdict(st, s->have_gpu);
	}
	rc = 0;
done:
	free(vals);
	free(w);
	free(occ_span);
	free(step_span);
	free(occ_of);
	free(step_occ);
	free(last_step);
	return rc;
}
