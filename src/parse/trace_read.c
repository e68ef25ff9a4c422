/* trace_read.c: parse stage for the built-in tracer. Input: the per-process *.lptrace files that
 * inject/ wrote (docs/trace-format.md); output: a struct lp_profile, the model every analysis and
 * report reads. A file is mapped, validated once (record framing, payload sizes, strings), then
 * replayed in order: NVTX events rebuild each thread's range tree, LAUNCH and GRAPH_NODE records
 * give every kernel the range instance open at its launch (or capture), and GPU records become
 * kernels and copies. Kernels replayed from a CUDA graph whose nodes were captured under ranges
 * get those ranges re-rooted under the range open at the graph launch (synthetic copies, one set
 * per launch: see attribute()).
 */
#include "parse/trace_read.h"
#include "parse/trace_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/map.h"
#include "core/str.h"
#include "core/vec.h"
#include "llmprof/trace_format.h"
#include "parse/kname.h"

/* ---- u64 -> u64 lookups on the core map ---- */

static int map_put(struct lp_map *m, uint64_t key, uint64_t val)
{
	return lp_map_put(m, LP_MAP_U64(&key), val, NULL);
}

static int map_get(const struct lp_map *m, uint64_t key, uint64_t *val)
{
	return lp_map_get(m, LP_MAP_U64(&key), val);
}

/* ---- replaying one file into the profile ---- */

struct thread_stack {
	uint32_t tid;
	uint32_t depth;
	int32_t idx[LP_TRACE_MAX_DEPTH];
};

struct launch_info {
	uint64_t range_id;
	uint64_t ts_ns;
	uint32_t tid;
};

struct graph_info {
	uint64_t range_id;
	uint64_t original;
};

struct name_pair {
	const char *name;             /* demangled */
	const char *short_name;
};

struct replay {
	struct lp_trace_file *f;
	struct lp_profile *p;
	struct lp_err *err;
	uint32_t pid;
	size_t process;               /* index in p->processes */
	struct lp_map ranges;         /* range instance / start-end id -> range index */
	struct lp_map threads;        /* tid -> index in stacks */
	struct thread_stack *stacks;
	size_t n_stacks, cap_stacks;
	struct lp_map launches;       /* correlation id -> index in launch_list */
	struct launch_info *launch_list;
	size_t n_launches, cap_launches;
	struct lp_map graph_nodes;    /* node id -> index in graph_list */
	struct lp_map copies;         /* (launch correlation << 32 | capture range) -> synthetic copy */
	struct lp_map early_ends;     /* start/end id -> END time seen before its START (other thread) */
	uint64_t *copy_nodes;         /* graph node id per copy read from this file */
	size_t n_copy_nodes, cap_copy_nodes;
	struct graph_info *graph_list;
	size_t n_graph, cap_graph;
	struct lp_map names;          /* string id -> index in name_list (demangled, short) */
	struct name_pair *name_list;
	size_t n_names, cap_names;
	uint32_t *domain_sids;        /* by domain id */
	size_t n_domain_sids, cap_domain_sids;
	int64_t clock_offset_ns;      /* added to GPU times (CLOCK_SYNC) */
	int have_clock_sync;
	size_t first_kernel, first_copy;
};

static const char *str_of(struct replay *r, uint32_t sid)
{
	size_t len = 0;
	const char *s = sid ? lp_trace_file_string(r->f, sid, &len) : NULL;
	return s ? lp_profile_intern_n(r->p, s, len) : lp_profile_intern(r->p, "");
}

static const char *domain_of(struct replay *r, uint32_t id)
{
	if (id == 0 || id > r->n_domain_sids || !r->domain_sids[id - 1])
		return lp_profile_intern(r->p, "");
	return str_of(r, r->domain_sids[id - 1]);
}

static int oom(struct replay *r)
{
	return lp_oom(r->err);
}

static struct thread_stack *stack_of(struct replay *r, uint32_t tid)
{
	uint64_t v;
	struct thread_stack *ns;
	if (map_get(&r->threads, tid, &v))
		return &r->stacks[v];
	ns = LP_ARRAY_PUSH(r->stacks, r->n_stacks, r->cap_stacks, NULL);
	if (!ns)
		return NULL;
	ns->tid = tid;
	ns->depth = 0;
	if (map_put(&r->threads, tid, r->n_stacks - 1) < 0) {
		r->n_stacks--;
		return NULL;
	}
	return ns;
}

static void set_payload(struct lp_range *g, uint8_t type, uint64_t raw)
{
	switch (type) {
	case LP_TRACE_PAYLOAD_U64:
	case LP_TRACE_PAYLOAD_U32:
		g->payload_type = LP_PAYLOAD_U64;
		g->payload.u64 = raw;
		break;
	case LP_TRACE_PAYLOAD_I64:
	case LP_TRACE_PAYLOAD_I32:
		g->payload_type = LP_PAYLOAD_I64;
		memcpy(&g->payload.i64, &raw, 8);
		break;
	case LP_TRACE_PAYLOAD_F64:
	case LP_TRACE_PAYLOAD_F32:
		g->payload_type = LP_PAYLOAD_F64;
		memcpy(&g->payload.f64, &raw, 8);
		break;
	default:
		g->payload_type = LP_PAYLOAD_NONE;
		break;
	}
}

static int on_nvtx(struct replay *r, const struct lp_trace_record *rec)
{
	struct lp_trace_nvtx e;
	struct thread_stack *st;
	struct lp_range *g;
	uint64_t v;
	uint32_t i;
	lp_trace_record_get(rec, &e, sizeof(e));
	switch (e.event) {
	case LP_TRACE_NVTX_PUSH:
	case LP_TRACE_NVTX_MARK:
	case LP_TRACE_NVTX_START:
		if (r->p->n_ranges >= INT32_MAX)
			return lp_err_set(r->err, LP_EPARSE, "trace '%s': more than 2^31 ranges", r->f->path);
		st = stack_of(r, e.tid);
		if (!st || !(g = lp_profile_add_range(r->p)))
			return oom(r);
		g->domain = domain_of(r, e.domain_id);
		g->name = str_of(r, e.name_sid);
		g->pid = r->pid;
		g->tid = e.tid;
		g->start_ns = e.ts_ns;
		g->end_ns = e.event == LP_TRACE_NVTX_MARK ? e.ts_ns : 0;
		set_payload(g, e.payload_type, e.payload);
		if (e.event == LP_TRACE_NVTX_START) {
			g->kind = LP_RANGE_STARTEND;
			g->parent = -1;
			g->depth = 0;
		} else {
			g->kind = e.event == LP_TRACE_NVTX_PUSH ? LP_RANGE_PUSHPOP : LP_RANGE_MARK;
			g->parent = st->depth ? st->idx[st->depth - 1] : -1;
			g->depth = (uint16_t)st->depth;
		}
		if (e.event != LP_TRACE_NVTX_MARK &&
		    map_put(&r->ranges, e.id, (uint64_t)(r->p->n_ranges - 1)) < 0)
			return oom(r);
		if (e.event == LP_TRACE_NVTX_START && map_get(&r->early_ends, e.id, &v))
			g->end_ns = v;
		if (e.event == LP_TRACE_NVTX_PUSH) {
			if (st->depth >= LP_TRACE_MAX_DEPTH)
				return lp_trace_corrupt(r->err, r->f, rec->offset, "push/pop nesting deeper than the limit");
			st->idx[st->depth++] = (int32_t)(r->p->n_ranges - 1);
		}
		break;
	case LP_TRACE_NVTX_POP:
		st = stack_of(r, e.tid);
		if (!st)
			return oom(r);
		if (!map_get(&r->ranges, e.id, &v))
			break; /* pushed before this file began (fork child): nothing to close */
		for (i = st->depth; i > 0; i--)
			if ((uint64_t)st->idx[i - 1] == v)
				break;
		if (i == 0)
			break;
		r->p->ranges[v].end_ns = e.ts_ns;
		memmove(&st->idx[i - 1], &st->idx[i], (st->depth - i) * sizeof(st->idx[0]));
		st->depth--;
		break;
	case LP_TRACE_NVTX_END:
		/* records of different threads reach the file in per-thread batches, so the END of a
		 * range started on another thread may come first */
		if (map_get(&r->ranges, e.id, &v)) {
			if (r->p->ranges[v].kind == LP_RANGE_STARTEND)
				r->p->ranges[v].end_ns = e.ts_ns;
		} else if (map_put(&r->early_ends, e.id, e.ts_ns) < 0) {
			return oom(r);
		}
		break;
	default:
		break; /* a newer writer's event: skip */
	}
	return 0;
}

static const char *kernel_name(struct replay *r, uint32_t sid, const char **short_name)
{
	uint64_t v;
	const char *raw, *name;
	struct name_pair *np;
	if (map_get(&r->names, sid, &v)) {
		*short_name = r->name_list[v].short_name;
		return r->name_list[v].name;
	}
	raw = str_of(r, sid);
	name = lp_kname_demangle_intern(r->p, raw);
	*short_name = lp_kname_short_intern(r->p, name);
	/* a cache: when it cannot grow, the names are only computed again */
	np = LP_ARRAY_PUSH(r->name_list, r->n_names, r->cap_names, NULL);
	if (!np)
		return name;
	np->name = name;
	np->short_name = *short_name;
	if (map_put(&r->names, sid, r->n_names - 1) < 0)
		r->n_names--;
	return name;
}

static int on_record(struct replay *r, const struct lp_trace_record *rec)
{
	struct lp_process *pr = &r->p->processes[r->process];
	switch (rec->type) {
	case LP_TREC_NVTX:
		return on_nvtx(r, rec);
	case LP_TREC_LAUNCH: {
		struct lp_trace_launch l;
		struct launch_info *li;
		lp_trace_record_get(rec, &l, sizeof(l));
		if (!(li = LP_ARRAY_PUSH(r->launch_list, r->n_launches, r->cap_launches, NULL)))
			return oom(r);
		li->range_id = l.range_id;
		li->ts_ns = l.ts_ns;
		li->tid = l.tid;
		if (map_put(&r->launches, l.correlation_id, r->n_launches - 1) < 0)
			return oom(r);
		break;
	}
	case LP_TREC_GRAPH_NODE: {
		struct lp_trace_graph_node gn;
		struct graph_info *gi;
		lp_trace_record_get(rec, &gn, sizeof(gn));
		if (!(gi = LP_ARRAY_PUSH(r->graph_list, r->n_graph, r->cap_graph, NULL)))
			return oom(r);
		gi->range_id = gn.range_id;
		gi->original = gn.original_node_id;
		if (map_put(&r->graph_nodes, gn.node_id, r->n_graph - 1) < 0)
			return oom(r);
		break;
	}
	case LP_TREC_KERNEL: {
		struct lp_trace_kernel k;
		struct lp_kernel *o;
		const char *sn;
		lp_trace_record_get(rec, &k, sizeof(k));
		if (r->p->n_kernels >= INT32_MAX)
			return lp_err_set(r->err, LP_EPARSE, "trace '%s': more than 2^31 kernels", r->f->path);
		if (!(o = lp_profile_add_kernel(r->p)))
			return oom(r);
		o->name = kernel_name(r, k.name_sid, &sn);
		o->short_name = sn;
		o->pid = r->pid;
		o->device = (int32_t)k.device;
		o->context = k.context;
		o->stream = k.stream;
		o->start_ns = k.start_ns;
		o->end_ns = k.end_ns;
		o->correlation_id = k.correlation_id;
		memcpy(o->grid, k.grid, sizeof(o->grid));
		memcpy(o->block, k.block, sizeof(o->block));
		o->registers_per_thread = k.registers_per_thread;
		o->shared_bytes = k.static_shared_bytes + k.dynamic_shared_bytes;
		o->graph_node_id = k.graph_node_id;
		o->graph_id = k.graph_id;
		o->range = -1;
		break;
	}
	case LP_TREC_COPY: {
		struct lp_trace_copy c;
		struct lp_copy *o;
		lp_trace_record_get(rec, &c, sizeof(c));
		if (!(o = lp_profile_add_copy(r->p)))
			return oom(r);
		o->kind = c.kind <= LP_TRACE_COPY_MEMSET ? c.kind : LP_COPY_UNKNOWN;
		o->bytes = c.bytes;
		o->pid = r->pid;
		o->device = (int32_t)c.device;
		o->stream = c.stream;
		o->start_ns = c.start_ns;
		o->end_ns = c.end_ns;
		o->correlation_id = c.correlation_id;
		o->range = -1;
		if (LP_ARRAY_RESERVE(r->copy_nodes, r->cap_copy_nodes, r->n_copy_nodes + 1, NULL) < 0)
			return oom(r);
		r->copy_nodes[r->n_copy_nodes++] = c.graph_node_id;
		break;
	}
	case LP_TREC_OVERHEAD: {
		struct lp_trace_overhead ov;
		lp_trace_record_get(rec, &ov, sizeof(ov));
		if (ov.end_ns > ov.start_ns)
			pr->overhead_ns += ov.end_ns - ov.start_ns;
		break;
	}
	default:
		break;
	}
	return 0;
}

static int32_t range_of_id(struct replay *r, uint64_t range_id)
{
	uint64_t v;
	return range_id && map_get(&r->ranges, range_id, &v) ? (int32_t)v : -1;
}

static int same_level(const struct lp_range *a, const struct lp_range *b)
{
	return (a->name == b->name || !strcmp(a->name, b->name)) &&
		(a->domain == b->domain || !strcmp(a->domain, b->domain));
}

/* 1 when range `cap` is range `launch` or lies below it: the graph was captured inside the very
 * range instance it is launched from. (A capture under ranges of the same names but another
 * instance, e.g. in the first decode step of a generation and replayed by the later ones, as
 * torch.compile's CUDA graph trees do, is re-rooted under the launch: capture_top.) */
static int captured_inside(const struct lp_profile *p, int32_t cap, int32_t launch)
{
	int guard = 0;
	for (; cap >= 0 && p->ranges[cap].depth >= p->ranges[launch].depth && guard++ < 65536; cap = p->ranges[cap].parent)
		if (cap == launch)
			return 1;
	return 0;
}

/* The deepest range of the capture-time stack ending at `cap` (cap itself included) that is no
 * operator of the graph but where it was captured: a range named `warmup` (a graph captured in
 * the program's warm-up, as torch.compile's CUDA graphs are) or one with the name of a level of
 * the launch stack (captured inside a decode step of the warm-up: warmup/decode_all/decode_step/
 * layer, launched from decode_all/decode_step). Only the ranges below it are copied under the
 * launch. -1: none (the whole stack is copied). */
static int32_t capture_top(const struct lp_profile *p, int32_t cap, int32_t launch)
{
	int guard = 0;
	for (; cap >= 0 && guard++ < 65536; cap = p->ranges[cap].parent) {
		int32_t l;
		int n = 0;
		if (!strcmp(p->ranges[cap].name, "warmup"))
			return cap;
		for (l = launch; l >= 0 && n++ < 65536; l = p->ranges[l].parent)
			if (same_level(&p->ranges[cap], &p->ranges[l]))
				return cap;
	}
	return -1;
}

/* The copies map's key: one graph launch's copy of one captured range. */
static uint64_t copy_key(uint32_t correlation, int32_t cap)
{
	return (uint64_t)correlation << 32 | (uint32_t)cap;
}

/* The synthetic copy of capture-time range `cap` (and of its ancestors below `top`, capture_top)
 * under `launch` for the graph launch `correlation`: made once per (launch, captured range).
 * Returns its index, or -2 out of memory. */
static int32_t graph_copy(struct replay *r, uint32_t correlation, int32_t launch, int32_t cap, int32_t top, int level)
{
	uint64_t key = copy_key(correlation, cap), v;
	int32_t parent, idx;
	struct lp_range *g;
	const struct lp_range *src;
	if (map_get(&r->copies, key, &v))
		return (int32_t)v;
	parent = r->p->ranges[cap].parent;
	if (parent >= 0 && parent != top && level < (int)LP_TRACE_MAX_DEPTH)
		parent = graph_copy(r, correlation, launch, parent, top, level + 1);
	else
		parent = launch;
	if (parent == -2 || r->p->n_ranges >= INT32_MAX || !(g = lp_profile_add_range(r->p)))
		return -2;
	idx = (int32_t)(r->p->n_ranges - 1);
	src = &r->p->ranges[cap];
	g->domain = src->domain;
	g->name = src->name;
	g->pid = src->pid;
	g->tid = r->p->ranges[launch].tid;
	g->kind = LP_RANGE_PUSHPOP;
	g->synthetic = 1;
	g->payload_type = src->payload_type;
	g->payload = src->payload;
	g->parent = parent;
	g->depth = (uint16_t)(r->p->ranges[parent].depth + 1);
	if (map_put(&r->copies, key, (uint64_t)idx) < 0)
		return -2;
	return idx;
}

/* The range a GPU record belongs to (docs/trace-format.md, "Attribution"):
 *   - not from a graph, or from a graph node with no capture-time range: the range open at its
 *     launch (for graph kernels, at cudaGraphLaunch);
 *   - from a node captured under ranges, launched with no range open: the capture-time range;
 *   - both: the capture-time stack re-rooted under the launch range (LLM@decode_all/decode_step
 *     at launch + layer/attention at capture = decode_all/decode_step/layer/attention), through
 *     synthetic copies made once per graph launch; when the graph was captured inside the launch
 *     range instance itself, the capture-time range; captured inside a `warmup` range or a range
 *     named as a launch stack level (e.g. another decode step), only the part below it
 *     (capture_top), and the launch range itself when nothing is below it.
 * Sets *range (-1 none) and *uncaptured (1: a graph node without any capture record); returns -1
 * out of memory. */
static int attribute(struct replay *r, uint64_t node_id, uint32_t correlation, uint32_t *tid,
	uint64_t *launch_ns, int32_t *range, int *uncaptured)
{
	uint64_t v, key, launch_id = 0, cap_id = 0;
	int32_t launch, cap;
	int hops;
	*tid = 0;
	*launch_ns = 0;
	*uncaptured = node_id != 0; /* a graph node until its capture record is found */
	if (map_get(&r->launches, correlation, &v)) {
		launch_id = r->launch_list[v].range_id;
		*tid = r->launch_list[v].tid;
		*launch_ns = r->launch_list[v].ts_ns;
	}
	for (hops = 0; node_id && hops < 16 && map_get(&r->graph_nodes, node_id, &v); hops++) {
		*uncaptured = 0;
		if (r->graph_list[v].range_id) {
			cap_id = r->graph_list[v].range_id;
			break;
		}
		node_id = r->graph_list[v].original;
	}
	launch = range_of_id(r, launch_id);
	cap = range_of_id(r, cap_id);
	if (cap < 0 || launch < 0 || captured_inside(r->p, cap, launch)) {
		*range = cap >= 0 ? cap : launch;
		return 0;
	}
	key = copy_key(correlation, cap);
	if (!map_get(&r->copies, key, &v)) {
		int32_t top = capture_top(r->p, cap, launch);
		if (top != cap)
			*range = graph_copy(r, correlation, launch, cap, top, 0);
		else if (map_put(&r->copies, key, (uint64_t)launch) < 0)
			*range = -2;
		else
			*range = launch; /* nothing below the top; remembered like a copy, not walked again */
	} else {
		*range = (int32_t)v;
	}
	return *range == -2 ? oom(r) : 0;
}

/* A synthetic range spans the GPU time of the kernels and copies attributed to it (or below). */
static void widen_synthetic(struct lp_profile *p, int32_t range, uint64_t start_ns, uint64_t end_ns)
{
	int guard = 0;
	for (; range >= 0 && p->ranges[range].synthetic && guard++ < 65536; range = p->ranges[range].parent) {
		struct lp_range *g = &p->ranges[range];
		if (!g->end_ns || start_ns < g->start_ns)
			g->start_ns = start_ns;
		if (!g->end_ns || end_ns > g->end_ns)
			g->end_ns = end_ns;
	}
}

static const char *cupti_text(struct lp_profile *p, uint32_t code, const char *msg)
{
	struct lp_buf b = LP_BUF_INIT;
	const char *out;
	switch (code) {
	case LP_TRACE_CUPTI_NONE:
		return lp_profile_intern(p, "no cuda");
	case LP_TRACE_CUPTI_OK:
		return lp_profile_intern(p, "ok");
	case LP_TRACE_CUPTI_HELD:
		lp_buf_addf(&b, "unavailable: %s", *msg ? msg : "held by another subscriber");
		break;
	case LP_TRACE_CUPTI_DISABLED:
		return lp_profile_intern(p, "disabled");
	case LP_TRACE_CUPTI_NOT_BUILT:
		return lp_profile_intern(p, "not built");
	case LP_TRACE_CUPTI_FORK:
		return lp_profile_intern(p, "disabled after fork");
	default:
		lp_buf_addf(&b, "error: %s", *msg ? msg : "unknown");
		break;
	}
	out = lp_profile_intern(p, b.data);
	lp_buf_release(&b);
	return out;
}

/* Pass 2 over a validated file. */
static int replay_file(struct lp_trace_file *f, struct lp_profile *p, struct lp_err *err)
{
	struct replay r;
	struct lp_trace_record rec;
	struct lp_process *pr;
	size_t i;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	r.f = f;
	r.p = p;
	r.err = err;
	if (f->truncated)
		p->warnings++;
	if (f->version_major == 0)
		return 0; /* nothing but a cut preamble */

	/* header-like records first: the process, domains, devices, status, clock */
	if (!(pr = lp_profile_add_process(p)))
		return oom(&r);
	r.process = p->n_processes - 1;
	pr->host = pr->name = pr->cupti_status = lp_profile_intern(p, "");
	lp_trace_file_rewind(f);
	while (lp_trace_file_next(f, &rec)) {
		pr = &p->processes[r.process];
		switch (rec.type) {
		case LP_TREC_PROCESS: {
			struct lp_trace_process ph;
			lp_trace_record_get(&rec, &ph, sizeof(ph));
			pr->pid = r.pid = ph.pid;
			pr->host = str_of(&r, ph.host_sid);
			pr->name = str_of(&r, ph.cmdline_sid);
			if (!*pr->name)
				pr->name = str_of(&r, ph.exe_sid);
			pr->start_ns = ph.start_ns;
			pr->ppid = ph.ppid;
			pr->forked = ph.forked != 0;
			if (!*pr->cupti_status)
				pr->cupti_status = cupti_text(p, LP_TRACE_CUPTI_NONE, "");
			break;
		}
		case LP_TREC_RANK: {   /* the last one wins (docs/trace-format.md) */
			struct lp_trace_rank rk;
			lp_trace_record_get(&rec, &rk, sizeof(rk));
			pr->rank = rk.rank >= 0 ? rk.rank : -1;
			pr->local_rank = rk.local_rank >= 0 ? rk.local_rank : -1;
			pr->world_size = rk.world_size >= 0 ? rk.world_size : -1;
			pr->rank_source = str_of(&r, rk.source_sid);
			pr->visible_devices = str_of(&r, rk.visible_devices_sid);
			if (!pr->rank_source || !pr->visible_devices) {
				rc = oom(&r);
				goto done;
			}
			break;
		}
		case LP_TREC_CUPTI_STATUS: {
			struct lp_trace_cupti_status cs;
			lp_trace_record_get(&rec, &cs, sizeof(cs));
			pr->cupti_status = cupti_text(p, cs.code, str_of(&r, cs.message_sid));
			break;
		}
		case LP_TREC_DOMAIN: {
			struct lp_trace_domain d;
			lp_trace_record_get(&rec, &d, sizeof(d));
			if (d.domain_id == 0 || d.domain_id > 65536) {
				rc = lp_trace_corrupt(err, f, rec.offset, "domain id out of range");
				goto done;
			}
			if (d.domain_id > r.n_domain_sids) {
				if (LP_ARRAY_RESERVE(r.domain_sids, r.cap_domain_sids, d.domain_id, NULL) < 0) {
					rc = oom(&r);
					goto done;
				}
				memset(r.domain_sids + r.n_domain_sids, 0,
					(d.domain_id - r.n_domain_sids) * sizeof(*r.domain_sids));
				r.n_domain_sids = d.domain_id;
			}
			r.domain_sids[d.domain_id - 1] = d.name_sid;
			break;
		}
		case LP_TREC_DROPPED: {
			struct lp_trace_dropped d;
			lp_trace_record_get(&rec, &d, sizeof(d));
			pr->dropped_records = d.cupti_records + d.own_records;
			pr->dropped_cupti = d.cupti_records;
			break;
		}
		case LP_TREC_DEVICE: {
			struct lp_trace_device d;
			struct lp_device *o;
			lp_trace_record_get(&rec, &d, sizeof(d));
			if (lp_profile_device(p, (int32_t)d.id))
				break;
			if (!(o = lp_profile_add_device(p))) {
				rc = oom(&r);
				goto done;
			}
			o->id = (int32_t)d.id;
			o->name = str_of(&r, d.name_sid);
			o->uuid = str_of(&r, d.uuid_sid);
			o->sm_count = d.sm_count;
			o->cc_major = d.cc_major;
			o->cc_minor = d.cc_minor;
			o->sm_clock_mhz = d.sm_clock_khz / 1000;
			o->mem_clock_mhz = d.mem_clock_khz / 1000;
			o->mem_bus_width_bits = d.mem_bus_width_bits;
			o->mem_bytes = d.mem_bytes;
			o->l2_bytes = d.l2_bytes;
			break;
		}
		case LP_TREC_SAMPLING: {
			struct lp_trace_sampling sm;
			struct lp_sampling *o = &pr->sampling;
			lp_trace_record_get(&rec, &sm, sizeof(sm));
			o->mode = sm.mode == LP_TRACE_SAMPLE_SAMPLED ? 2 : 1;
			o->why = (uint8_t)sm.why;
			o->every = sm.every;
			o->first = sm.first;
			o->auto_rate = sm.auto_rate;
			o->unit = str_of(&r, sm.unit_sid);
			o->launch_rate = sm.launch_rate;
			o->toggles = sm.toggles;
			o->toggle_ns = sm.toggle_ns;
			o->toggle_max_ns = sm.toggle_max_ns;
			o->units = sm.units;
			o->units_recorded = sm.units_recorded;
			o->pick = (uint8_t)sm.pick;
			o->seed = sm.seed;
			o->burst = sm.burst;
			o->warmup = (uint8_t)(sm.warmup <= LP_TRACE_WARMUP_DETACHED ? sm.warmup : LP_TRACE_WARMUP_NONE);
			o->graphs_all = (sm.flags & LP_TRACE_SAMPLING_F_GRAPHS_ALL) != 0;
			break;
		}
		case LP_TREC_CLOCK_SYNC: {
			struct lp_trace_clock_sync cs;
			lp_trace_record_get(&rec, &cs, sizeof(cs));
			if (!r.have_clock_sync) {
				r.have_clock_sync = 1;
				r.clock_offset_ns = (int64_t)(cs.trace_ns - cs.cupti_ns);
			}
			break;
		}
		default:
			break;
		}
	}

	r.first_kernel = p->n_kernels;
	r.first_copy = p->n_copies;
	lp_trace_file_rewind(f);
	while (rc == 0 && lp_trace_file_next(f, &rec))
		rc = on_record(&r, &rec);

	/* STAGE records after the ranges: the flush thread writes them, so one may precede its PUSH */
	lp_trace_file_rewind(f);
	while (rc == 0 && lp_trace_file_next(f, &rec)) {
		struct lp_trace_stage sg;
		uint64_t v;
		if (rec.type != LP_TREC_STAGE)
			continue;
		lp_trace_record_get(&rec, &sg, sizeof(sg));
		if (!map_get(&r.ranges, sg.range_id, &v))
			continue;
		p->ranges[v].sample = sg.sample;
		p->ranges[v].sample_index = sg.index;
		p->ranges[v].gpu_status = sg.gpu;
		p->ranges[v].push_attached = (sg.flags & LP_TRACE_STAGE_F_PUSH_ATTACHED) != 0;
		if (sg.gpu == LP_TRACE_STAGE_GPU_EVENTS) {
			p->ranges[v].gpu_start_ns = sg.gpu_start_ns;
			p->ranges[v].gpu_end_ns = sg.gpu_end_ns;
			p->ranges[v].gpu_elapsed_ns = sg.gpu_elapsed_ns;
		}
	}

	for (i = r.first_kernel; rc == 0 && i < p->n_kernels; i++) {
		struct lp_kernel *k = &p->kernels[i];
		int uncaptured;
		if (r.have_clock_sync) {
			/* unsigned (modulo 2^64): the same sum, without signed overflow on a damaged offset */
			k->start_ns += (uint64_t)r.clock_offset_ns;
			k->end_ns += (uint64_t)r.clock_offset_ns;
		}
		rc = attribute(&r, k->graph_node_id, k->correlation_id, &k->launch_tid, &k->launch_ns, &k->range,
			&uncaptured);
		p->processes[r.process].graph_uncaptured += (uint64_t)uncaptured;
		if (rc == 0)
			widen_synthetic(p, k->range, k->start_ns, k->end_ns);
	}
	for (i = r.first_copy; rc == 0 && i < p->n_copies; i++) {
		struct lp_copy *c = &p->copies[i];
		uint64_t node = i - r.first_copy < r.n_copy_nodes ? r.copy_nodes[i - r.first_copy] : 0;
		int uncaptured; /* counted for kernels only */
		if (r.have_clock_sync) {
			c->start_ns += (uint64_t)r.clock_offset_ns;
			c->end_ns += (uint64_t)r.clock_offset_ns;
		}
		rc = attribute(&r, node, c->correlation_id, &c->launch_tid, &c->launch_ns, &c->range, &uncaptured);
		if (rc == 0)
			widen_synthetic(p, c->range, c->start_ns, c->end_ns);
	}

done:
	lp_map_release(&r.ranges);
	lp_map_release(&r.threads);
	lp_map_release(&r.launches);
	lp_map_release(&r.graph_nodes);
	lp_map_release(&r.copies);
	lp_map_release(&r.early_ends);
	lp_map_release(&r.names);
	free(r.copy_nodes);
	free(r.stacks);
	free(r.launch_list);
	free(r.graph_list);
	free(r.name_list);
	free(r.domain_sids);
	return rc;
}

int lp_trace_load_mem(const char *name, const void *data, size_t size, struct lp_profile *out,
	struct lp_err *err)
{
	struct lp_trace_file f;
	int rc;
	if (lp_trace_file_open_mem(&f, name, data, size, err) < 0)
		return -1;
	out->source_kind = "llmprof-trace";
	rc = replay_file(&f, out, err);
	lp_trace_file_close(&f);
	return rc;
}

int lp_trace_load(const char *path, struct lp_profile *out, struct lp_err *err)
{
	return lp_trace_load_damage(path, out, NULL, err);
}

/* Does the file hold the END record a clean exit writes? */
static int has_end_record(struct lp_trace_file *f)
{
	struct lp_trace_record rec;
	int found = 0;
	lp_trace_file_rewind(f);
	while (lp_trace_file_next(f, &rec))
		if (rec.type == LP_TREC_END)
			found = 1;
	lp_trace_file_rewind(f);
	return found;
}

int lp_trace_load_damage(const char *path, struct lp_profile *out, struct lp_buf *damage, struct lp_err *err)
{
	char **files;
	size_t n, i;
	int rc = 0;
	if (lp_trace_list_files(path, &files, &n, err) < 0)
		return -1;
	out->source_kind = "llmprof-trace";
	for (i = 0; i < n && rc == 0; i++) {
		struct lp_trace_file f;
		if (lp_trace_file_open(&f, files[i], err) < 0) {
			rc = -1;
			break;
		}
		if (f.truncated) {
			if (damage)
				lp_buf_addf(damage, "'%s' is truncated at byte %zu of %zu: read up to the last complete record\n",
					f.path, f.truncated_at, f.size);
		} else if (damage && f.version_major && !has_end_record(&f)) {
			if (damage)
				lp_buf_addf(damage, "'%s' has no END record: the process was killed or the file was cut\n",
					f.path);
		}
		rc = replay_file(&f, out, err);
		lp_trace_file_close(&f);
	}
	lp_trace_list_free(files, n);
	return rc;
}
