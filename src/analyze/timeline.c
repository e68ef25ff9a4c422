/* timeline.c: the events of one measured iteration for the timeline figure (see timeline.h).
 * Runs after stages.c (it needs the measured occurrences and the range roles); it reads the
 * profile once, keeps what the figure draws, and copies the labels it keeps. */
#include "analyze/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

/* An event before lanes are numbered: `key` orders lanes (0 stage, 1 steps, 1 + level for
 * ranges, 100 + device for GPU work). */
struct tl_raw {
	uint32_t key;
	uint8_t kind, synthetic;
	uint32_t merged;
	uint64_t start_ns, end_ns;
	const char *label;
};

#define KEY_STAGE 0u
#define KEY_STEP 1u
#define KEY_GPU 100u
#define MAX_WALK 1024   /* ancestors followed before a range is given up as out (a damaged tree) */

enum { ST_UNKNOWN = 0, ST_IN = 1, ST_OUT = 2 };

struct member {
	uint8_t state;
	uint8_t step;                /* an outermost step range of the occurrence */
	uint8_t under_step;          /* a step or inside one */
	uint16_t level;              /* ranges between it and the occurrence, itself included, steps not */
};

struct collect {
	const struct lp_profile *p;
	const struct lp_stage_set *s;
	int32_t occ[2];
	uint64_t occ_gpu_end[2];     /* end of the GPU work launched inside (lp_stage_iter.gpu_end_ns) */
	uint64_t zoom_from, zoom_to; /* absolute; 0 0: no zoom (timeline.h) */
	uint64_t zoom_steps;
	size_t n_occ;
	int whole_run;
	int32_t gpu_device;          /* the lane of unrecorded steps: the first kernel's device */
	size_t n_unrecorded, n_unit_steps;
	struct member *m;
	struct tl_raw *ev;
	size_t n, cap;
	int truncated;
};

static int is_occ(const struct collect *c, int32_t r)
{
	size_t i;
	for (i = 0; i < c->n_occ; i++)
		if (c->occ[i] == r)
			return 1;
	return 0;
}

/* Membership of range r and its level below the occurrence, memoized along the path walked. */
static const struct member *resolve(struct collect *c, int32_t r)
{
	int32_t path[MAX_WALK];
	size_t n = 0;
	int32_t x = r;
	static const struct member outside = { ST_OUT, 0, 0, 0 };
	struct member base = outside;
	while (x >= 0 && (size_t)x < c->p->n_ranges && c->m[x].state == ST_UNKNOWN && !is_occ(c, x)) {
		if (n == MAX_WALK)
			break;
		path[n++] = x;
		x = c->p->ranges[x].parent;
	}
	if (n == MAX_WALK) {
		base.state = ST_OUT;
	} else if (x >= 0 && (size_t)x < c->p->n_ranges) {
		if (is_occ(c, x)) {
			memset(&c->m[x], 0, sizeof(c->m[x]));
			c->m[x].state = ST_IN;
		}
		base = c->m[x];
	}
	while (n > 0) {
		int32_t y = path[--n];
		struct member *my = &c->m[y];
		my->state = base.state;
		if (base.state == ST_IN && !base.under_step && lp_stage_range_role(c->s, y) == LP_ROLE_STEP) {
			my->step = my->under_step = 1;
			my->level = 0;
		} else {
			my->under_step = base.under_step;
			my->level = (uint16_t)(base.level < 60000 ? base.level + 1 : base.level);
		}
		base = *my;
	}
	/* r outside the profile (no range): the walk above did nothing, base is still "outside"; a
	 * static copy, never the address of the local */
	return r >= 0 && (size_t)r < c->p->n_ranges ? &c->m[r] : &outside;
}

static int add(struct collect *c, uint32_t key, uint8_t kind, uint8_t synthetic, uint64_t s, uint64_t e, const char *label)
{
	struct tl_raw *r;
	if (e < s)
		return 0;
	if (c->n == LP_TIMELINE_MAX_SOURCE) {
		c->truncated = 1;
		return 0;
	}
	if (!(r = LP_ARRAY_PUSH(c->ev, c->n, c->cap, NULL)))
		return -1;
	r->key = key;
	r->kind = kind;
	r->synthetic = synthetic;
	r->merged = 1;
	r->start_ns = s;
	r->end_ns = e;
	r->label = label ? label : "";
	return 0;
}

static const char *copy_label(uint8_t kind)
{
	switch (kind) {
	case LP_COPY_HTOD: return "memcpy HtoD";
	case LP_COPY_DTOH: return "memcpy DtoH";
	case LP_COPY_DTOD: return "memcpy DtoD";
	case LP_COPY_HTOH: return "memcpy HtoH";
	case LP_COPY_PTOP: return "memcpy PtoP";
	case LP_COPY_MEMSET: return "memset";
	default: return "memcpy";
	}
}

/* Is GPU work launched from range r (-1: none) part of the iteration? */
static int gpu_in(struct collect *c, int32_t r)
{
	if (c->whole_run)
		return 1;
	return r >= 0 && resolve(c, r)->state == ST_IN;
}

static uint32_t gpu_key(int32_t device)
{
	return KEY_GPU + (uint32_t)(device < 0 ? 0 : device > 1000 ? 1000 : device);
}

static int collect(struct collect *c, size_t *levels_dropped)
{
	const struct lp_profile *p = c->p;
	size_t i;
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		uint32_t key;
		if (r->kind == LP_RANGE_MARK || r->end_ns == 0 || r->end_ns < r->start_ns)
			continue;
		if (c->whole_run) {
			if (lp_stage_range_excluded(c->s, (int32_t)i))
				continue;
			if (r->depth >= LP_TIMELINE_RANGE_LEVELS) {
				(*levels_dropped)++;
				continue;
			}
			key = KEY_STEP + 1 + r->depth;
		} else {
			const struct member *m;
			if (is_occ(c, (int32_t)i)) {
				key = KEY_STAGE;
			} else {
				m = resolve(c, (int32_t)i);
				if (m->state != ST_IN)
					continue;
				if (m->step) {
					key = KEY_STEP;
				} else if (m->level > LP_TIMELINE_RANGE_LEVELS) {
					(*levels_dropped)++;
					continue;
				} else {
					key = KEY_STEP + m->level;
				}
			}
		}
		if (add(c, key, LP_TL_EV_RANGE, r->synthetic, r->start_ns, r->end_ns, r->name) < 0)
			return -1;
		if (r->sample)   /* a sampling unit of a sampled trace (the tracer's STAGE flag) */
			c->n_unit_steps++;
		if (r->sample == 2) {
			/* its kernels were not recorded: a band over its GPU window, never an idle lane */
			int gpu = r->gpu_status == 1 && r->gpu_end_ns > r->gpu_start_ns;
			c->n_unrecorded++;
			if (add(c, gpu_key(c->gpu_device), LP_TL_EV_UNRECORDED, 0, gpu ? r->gpu_start_ns : r->start_ns,
				gpu ? r->gpu_end_ns : r->end_ns, "kernels not recorded (sampled trace)") < 0)
				return -1;
		}
		if (key == KEY_STAGE && !c->whole_run) {
			size_t o;
			for (o = 0; o < c->n_occ; o++)
				if (c->occ[o] == (int32_t)i && c->occ_gpu_end[o] > r->end_ns &&
				    add(c, KEY_STAGE, LP_TL_EV_LATENCY, 0, r->end_ns, c->occ_gpu_end[o], r->name) < 0)
					return -1;
		}
	}
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		if (c->whole_run ? c->s->n_kernels == p->n_kernels && c->s->kernel_stage[i] == -2 : !gpu_in(c, k->range))
			continue;
		if (add(c, gpu_key(k->device), LP_TL_EV_KERNEL, 0, k->start_ns, k->end_ns, k->name) < 0)
			return -1;
	}
	for (i = 0; i < p->n_copies; i++) {
		const struct lp_copy *k = &p->copies[i];
		if (!gpu_in(c, k->range))
			continue;
		if (add(c, gpu_key(k->device), LP_TL_EV_COPY, 0, k->start_ns, k->end_ns, copy_label(k->kind)) < 0)
			return -1;
	}
	return 0;
}

static int cmp_raw(const void *pa, const void *pb)
{
	const struct tl_raw *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns < b->end_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return strcmp(a->label, b->label);
}

/* One merge pass at threshold m (timeline.h): src sorted; returns the marks written to dst. */
static size_t merge_pass(const struct tl_raw *src, size_t n, uint64_t m, struct tl_raw *dst)
{
	size_t i, out = 0;
	int open = 0;
	struct tl_raw g;
	memset(&g, 0, sizeof(g));
	for (i = 0; i < n; i++) {
		const struct tl_raw *e = &src[i];
		if (e->end_ns - e->start_ns < m) {
			if (open && g.key == e->key && e->start_ns - g.start_ns < m) {
				if (e->end_ns > g.end_ns)
					g.end_ns = e->end_ns;
				g.merged += e->merged;
				continue;
			}
			if (open)
				dst[out++] = g;
			g = *e;
			open = 1;
			continue;
		}
		if (open && g.key != e->key) {
			dst[out++] = g;
			open = 0;
		}
		dst[out++] = *e;
	}
	if (open)
		dst[out++] = g;
	return out;
}

static void lane_name(uint32_t key, struct lp_tl_lane *l)
{
	if (key == KEY_STAGE) {
		l->kind = LP_TL_LANE_STAGE;
		snprintf(l->name, sizeof(l->name), "stage");
	} else if (key == KEY_STEP) {
		l->kind = LP_TL_LANE_STEP;
		snprintf(l->name, sizeof(l->name), "decode steps");
	} else if (key < KEY_GPU) {
		l->kind = LP_TL_LANE_RANGE;
		snprintf(l->name, sizeof(l->name), "ranges L%u", key - KEY_STEP);
	} else {
		l->kind = LP_TL_LANE_GPU;
		snprintf(l->name, sizeof(l->name), "GPU %u", key - KEY_GPU);
	}
}

/* The zoom window of a decode occurrence: LP_TIMELINE_ZOOM_STEPS steps' worth of its latency. */
static void zoom_window(struct collect *c, const struct lp_stage_iter *it)
{
	uint64_t lat = it->latency_ns ? it->latency_ns : it->host_ns;
	if (it->steps < LP_TIMELINE_ZOOM_STEPS + 1 || !lat)
		return;
	/* the latency starts when GPU work queued before the push has ended (stages.h) */
	c->zoom_steps = it->steps;
	c->zoom_from = it->start_ns + it->wait_ns;
	c->zoom_to = c->zoom_from + lat / it->steps * LP_TIMELINE_ZOOM_STEPS;
}

/* The occurrences shown (timeline.h "Which iteration"). */
static void choose(const struct lp_stage_set *s, struct collect *c, struct lp_timeline *out)
{
	const struct lp_stage *pf = lp_stages_find(s, LP_STAGE_PREFILL), *dec = lp_stages_find(s, LP_STAGE_DECODE);
	size_t j;
	if (pf && pf->n_iters) {
		c->occ_gpu_end[c->n_occ] = pf->iters[0].gpu_end_ns;
		c->occ[c->n_occ++] = pf->iters[0].range;
		for (j = 0; dec && j < dec->n_iters; j++) {
			if (dec->iters[j].start_ns >= pf->iters[0].start_ns) {
				zoom_window(c, &dec->iters[j]);
				c->occ_gpu_end[c->n_occ] = dec->iters[j].gpu_end_ns;
				c->occ[c->n_occ++] = dec->iters[j].range;
				break;
			}
		}
		snprintf(out->what, sizeof(out->what), "measured iteration 1: %s%s%s", pf->name, c->n_occ > 1 ? " + " : "",
			c->n_occ > 1 ? dec->name : "");
	} else if (dec && dec->n_iters) {
		zoom_window(c, &dec->iters[0]);
		c->occ_gpu_end[c->n_occ] = dec->iters[0].gpu_end_ns;
		c->occ[c->n_occ++] = dec->iters[0].range;
		snprintf(out->what, sizeof(out->what), "measured iteration 1: %s", dec->name);
	} else {
		for (j = 0; j < s->n_stages; j++) {
			if (s->stages[j].n_iters) {
				c->occ_gpu_end[c->n_occ] = s->stages[j].iters[0].gpu_end_ns;
				c->occ[c->n_occ++] = s->stages[j].iters[0].range;
				snprintf(out->what, sizeof(out->what), "measured iteration 1 of %s", s->stages[j].name);
				break;
			}
		}
	}
	if (!c->n_occ) {
		c->whole_run = 1;
		snprintf(out->what, sizeof(out->what), "the whole run (no stage ranges), warm-up excluded");
	}
}

/* Marks of `src` (sorted) fitting LP_TIMELINE_MAX_EVENTS: src itself, or merged into *tmp
 * (allocated) at the smallest merge width from span / LP_TIMELINE_COLUMNS up that fits. */
static int downsample(struct tl_raw *src, size_t n, uint64_t span, struct tl_raw **tmp, const struct tl_raw **use,
	size_t *n_use, uint64_t *merge_ns)
{
	uint64_t m;
	size_t rounds;
	*use = src;
	*n_use = n;
	*merge_ns = 0;
	if (n <= LP_TIMELINE_MAX_EVENTS)
		return 0;
	if (!(*tmp = malloc(n * sizeof(**tmp))))
		return -1;
	m = span / LP_TIMELINE_COLUMNS ? span / LP_TIMELINE_COLUMNS : 1;
	for (rounds = 0; rounds < 64; rounds++) {
		*n_use = merge_pass(src, n, m, *tmp);
		if (*n_use <= LP_TIMELINE_MAX_EVENTS)
			break;
		m *= 2;
	}
	qsort(*tmp, *n_use, sizeof(**tmp), cmp_raw);
	*use = *tmp;
	if (*n_use > LP_TIMELINE_MAX_EVENTS)
		*n_use = LP_TIMELINE_MAX_EVENTS;
	*merge_ns = m;
	return 0;
}

/* Raw events -> the timeline's events (lanes numbered, labels copied). */
static int emit(struct lp_timeline *out, const uint32_t *keys, const struct tl_raw *use, size_t n_use,
	struct lp_tl_event **dst)
{
	size_t i;
	*dst = calloc(n_use ? n_use : 1, sizeof(**dst));
	if (!*dst)
		return -1;
	for (i = 0; i < n_use; i++) {
		struct lp_tl_event *e = &(*dst)[i];
		size_t l;
		for (l = 0; l < out->n_lanes && keys[l] != use[i].key; l++)
			;
		e->lane = (uint32_t)(l < out->n_lanes ? l : out->n_lanes - 1);
		e->kind = use[i].kind;
		e->synthetic = use[i].synthetic;
		e->merged = use[i].merged;
		e->start_ns = use[i].start_ns;
		e->end_ns = use[i].end_ns;
		e->label = lp_arena_strdup(&out->arena, use[i].label);
		if (!e->label)
			return -1;
	}
	return 0;
}

int lp_timeline_compute(const struct lp_profile *p, const struct lp_stage_set *s, struct lp_timeline *out,
	struct lp_err *err)
{
	struct collect c;
	struct tl_raw *tmp = NULL;
	const struct tl_raw *use;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i, n_use;
	uint32_t keys[LP_TIMELINE_MAX_LANES];
	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.s = s;
	c.gpu_device = p->n_kernels ? p->kernels[0].device : 0;
	choose(s, &c, out);
	if (p->n_ranges && !(c.m = calloc(p->n_ranges, sizeof(*c.m))))
		return lp_oom(err);
	if (collect(&c, &out->levels_dropped) < 0)
		goto oom;
	free(c.m);
	c.m = NULL;
	out->n_source = c.n;
	out->source_truncated = c.truncated;
	out->n_unrecorded = c.n_unrecorded;
	out->n_unit_steps = c.n_unrecorded ? c.n_unit_steps : 0;
	if (!c.n) {
		snprintf(out->why, sizeof(out->why), "no ranges, kernels or copies were recorded");
		free(c.ev);
		return 0;
	}
	for (i = 0; i < c.n; i++) {
		if (c.ev[i].start_ns < lo)
			lo = c.ev[i].start_ns;
		if (c.ev[i].end_ns > hi)
			hi = c.ev[i].end_ns;
	}
	out->origin_ns = lo;
	out->span_ns = hi - lo;
	for (i = 0; i < c.n; i++) {
		c.ev[i].start_ns -= lo;
		c.ev[i].end_ns -= lo;
	}
	qsort(c.ev, c.n, sizeof(*c.ev), cmp_raw);

	/* lanes: keys in order; GPU keys past the last slot share it */
	for (i = 0; i < c.n; i++) {
		uint32_t k = c.ev[i].key;
		if (out->n_lanes && keys[out->n_lanes - 1] == k)
			continue;
		if (out->n_lanes == LP_TIMELINE_MAX_LANES) {
			c.ev[i].key = keys[out->n_lanes - 1];
			continue;
		}
		keys[out->n_lanes] = k;
		lane_name(k, &out->lanes[out->n_lanes]);
		out->n_lanes++;
	}

	if (downsample(c.ev, c.n, out->span_ns, &tmp, &use, &n_use, &out->merge_ns) < 0 ||
	    emit(out, keys, use, n_use, &out->events) < 0)
		goto oom;
	out->n_events = n_use;
	out->valid = 1;
	free(tmp);
	tmp = NULL;
	/* the zoom: the events overlapping its window, merged only when they are still too many */
	if (c.zoom_to > c.zoom_from && c.zoom_from >= lo && (out->merge_ns || c.zoom_steps > LP_TIMELINE_ZOOM_MIN_STEPS)) {
		uint64_t z0 = c.zoom_from - lo, z1 = c.zoom_to - lo;
		size_t k = 0;
		for (i = 0; i < c.n; i++)
			if (c.ev[i].end_ns > z0 && c.ev[i].start_ns < z1)
				c.ev[k++] = c.ev[i];   /* in place: the whole view is done with them */
		if (downsample(c.ev, k, z1 - z0, &tmp, &use, &n_use, &out->zoom_merge_ns) < 0 ||
		    emit(out, keys, use, n_use, &out->zoom_events) < 0)
			goto oom;
		out->n_zoom_events = n_use;
		out->zoom_from_ns = z0;
		out->zoom_to_ns = z1;
		out->have_zoom = n_use > 0;
		free(tmp);
	}
	free(c.ev);
	return 0;
oom:
	free(tmp);
	free(c.ev);
	free(c.m);
	lp_timeline_release(out);
	return lp_oom(err);
}

void lp_timeline_release(struct lp_timeline *t)
{
	free(t->events);
	free(t->zoom_events);
	lp_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}
