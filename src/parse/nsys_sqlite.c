/* nsys_sqlite.c: Nsight Systems' SQLite export into the profile model (see nsys_sqlite.h).
 * The nsys phase (collect/nsys.c) writes nsys/run.sqlite; `llmprof kernels` and the analysis read
 * it through here, so nsys timelines and our own traces answer the same questions. */
#include "parse/nsys_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/map.h"
#include "core/vec.h"
#include "parse/trace_read.h"

/* ---- devices and processes ---- */

static int load_devices(struct lp_nsys_db *d, struct lp_err *err)
{
	struct lp_buf cols = LP_BUF_INIT, q = LP_BUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc = 0;
	if (!lp_nsys_has_table(d, "TARGET_INFO_GPU"))
		return 0;
	if (lp_nsys_table_columns(d, "TARGET_INFO_GPU", &cols, err) < 0)
		return -1;
	lp_buf_adds(&q, "SELECT ");
	lp_nsys_add_col(&q, &cols, "g", lp_nsys_has_col(&cols, "cuDevice") ? "cuDevice" : "id", "0");
	lp_nsys_add_col(&q, &cols, "g", "name", "''");
	lp_nsys_add_col(&q, &cols, "g", "smCount", "0");
	lp_nsys_add_col(&q, &cols, "g", "totalMemory", "0");
	lp_nsys_add_col(&q, &cols, "g", "l2CacheSize", "0");
	lp_nsys_add_col(&q, &cols, "g", "clockRate", "0");
	lp_buf_adds(&q, "1 FROM TARGET_INFO_GPU g");
	if (q.oom) {
		rc = lp_oom(err);
		goto out;
	}
	if (sqlite3_prepare_v2(d->h, q.data, -1, &st, NULL) != SQLITE_OK) {
		rc = lp_nsys_db_fail(d, "table 'TARGET_INFO_GPU'", err);
		goto out;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		int32_t id = sqlite3_column_int(st, 0);
		struct lp_device *dev;
		if (lp_profile_device(d->p, id))
			continue;
		dev = lp_profile_add_device(d->p);
		if (!dev) {
			rc = lp_oom(err);
			goto out;
		}
		dev->id = id;
		dev->name = lp_profile_intern(d->p, (const char *)sqlite3_column_text(st, 1));
		dev->sm_count = sqlite3_column_int(st, 2);
		dev->mem_bytes = (uint64_t)sqlite3_column_int64(st, 3);
		dev->l2_bytes = (uint32_t)sqlite3_column_int64(st, 4);
		dev->sm_clock_mhz = (uint32_t)(sqlite3_column_int64(st, 5) / 1000000);  /* clockRate in Hz */
	}
out:
	sqlite3_finalize(st);
	lp_buf_release(&cols);
	lp_buf_release(&q);
	return rc;
}

static int note_process(struct lp_profile *p, uint32_t pid)
{
	size_t i;
	struct lp_process *r;
	for (i = p->n_processes; i-- > 0;)
		if (p->processes[i].pid == pid)
			return 0;
	r = lp_profile_add_process(p);
	if (!r)
		return -1;
	r->pid = pid;
	return 0;
}

/* ---- NVTX ---- */

struct domain_key {
	uint32_t pid;
	int64_t domain_id;
	const char *name;
};

struct range_side {
	int64_t gtid;       /* globalTid, for the per-thread sweep */
};

static int load_ranges(struct lp_nsys_db *d, struct range_side **side_out, struct lp_err *err)
{
	struct lp_buf cols = LP_BUF_INIT, q = LP_BUF_INIT;
	sqlite3_stmt *st = NULL;
	struct domain_key *doms = NULL;
	size_t n_doms = 0, cap_doms = 0, cap_side = 0;
	struct range_side *side = NULL;
	int32_t stack[256];
	int depth = 0, rc = -1, with_text_id, with_domain;
	int64_t cur_gtid = -1;
	*side_out = NULL;
	if (!lp_nsys_has_table(d, "NVTX_EVENTS"))
		return 0;
	if (lp_nsys_table_columns(d, "NVTX_EVENTS", &cols, err) < 0)
		return -1;
	with_text_id = lp_nsys_has_col(&cols, "textId");
	with_domain = lp_nsys_has_col(&cols, "domainId");
	/* domains: type-75 rows, per process */
	if (with_domain) {
		if (sqlite3_prepare_v2(d->h, "SELECT globalTid, domainId, text FROM NVTX_EVENTS WHERE eventType = 75",
				-1, &st, NULL) != SQLITE_OK) {
			lp_nsys_db_fail(d, "table 'NVTX_EVENTS'", err);
			goto out;
		}
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 2);
			if (LP_ARRAY_RESERVE(doms, cap_doms, n_doms + 1, NULL) < 0)
				goto oom;
			doms[n_doms].pid = (uint32_t)(((uint64_t)sqlite3_column_int64(st, 0) >> 24) & LP_NSYS_TID_MASK);
			doms[n_doms].domain_id = sqlite3_column_int64(st, 1);
			doms[n_doms].name = lp_profile_intern(d->p, t ? t : "");
			if (!doms[n_doms].name)
				goto oom;
			n_doms++;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	lp_buf_adds(&q, "SELECT e.start, e.end, e.eventType, e.globalTid, ");
	if (with_text_id)
		lp_buf_adds(&q, "coalesce(e.text, s.value), ");
	else
		lp_buf_adds(&q, "e.text, ");
	lp_nsys_add_col(&q, &cols, "e", "domainId", "0");
	lp_nsys_add_col(&q, &cols, "e", "uint64Value", "NULL");
	lp_nsys_add_col(&q, &cols, "e", "int64Value", "NULL");
	lp_nsys_add_col(&q, &cols, "e", "doubleValue", "NULL");
	lp_nsys_add_col(&q, &cols, "e", "uint32Value", "NULL");
	lp_nsys_add_col(&q, &cols, "e", "int32Value", "NULL");
	lp_nsys_add_col(&q, &cols, "e", "floatValue", "NULL");
	lp_buf_adds(&q, "1 FROM NVTX_EVENTS e ");
	if (with_text_id)
		lp_buf_adds(&q, "LEFT JOIN StringIds s ON s.id = e.textId ");
	lp_buf_adds(&q, "WHERE e.eventType IN (34, 59, 60) ORDER BY e.globalTid, e.start, e.end DESC");
	if (q.oom)
		goto oom;
	if (sqlite3_prepare_v2(d->h, q.data, -1, &st, NULL) != SQLITE_OK) {
		lp_nsys_db_fail(d, "table 'NVTX_EVENTS'", err);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 0);
		int type = sqlite3_column_int(st, 2);
		int64_t gtid = sqlite3_column_int64(st, 3);
		const char *text = (const char *)sqlite3_column_text(st, 4);
		int64_t dom = sqlite3_column_int64(st, 5);
		uint32_t pid = (uint32_t)(((uint64_t)gtid >> 24) & LP_NSYS_TID_MASK);
		struct lp_range *r;
		size_t i, idx = d->p->n_ranges;
		int c;
		r = lp_profile_add_range(d->p);
		if (!r)
			goto oom;
		r->name = lp_profile_intern(d->p, text ? text : "");
		if (!r->name)
			goto oom;
		r->pid = pid;
		r->tid = (uint32_t)((uint64_t)gtid & LP_NSYS_TID_MASK);
		r->start_ns = (uint64_t)start;
		r->end_ns = sqlite3_column_type(st, 1) == SQLITE_NULL ? 0 : (uint64_t)sqlite3_column_int64(st, 1);
		r->kind = type == LP_NSYS_NVTX_PUSHPOP ? LP_RANGE_PUSHPOP :
			type == LP_NSYS_NVTX_STARTEND ? LP_RANGE_STARTEND : LP_RANGE_MARK;
		if (r->kind == LP_RANGE_MARK)
			r->end_ns = r->start_ns;
		if (dom != 0)
			for (i = 0; i < n_doms; i++)
				if (doms[i].pid == pid && doms[i].domain_id == dom) {
					r->domain = doms[i].name;
					break;
				}
		for (c = 6; c <= 11; c++) {
			if (sqlite3_column_type(st, c) == SQLITE_NULL)
				continue;
			if (c == 6 || c == 9) {
				r->payload_type = LP_PAYLOAD_U64;
				r->payload.u64 = (uint64_t)sqlite3_column_int64(st, c);
			} else if (c == 7 || c == 10) {
				r->payload_type = LP_PAYLOAD_I64;
				r->payload.i64 = sqlite3_column_int64(st, c);
			} else {
				r->payload_type = LP_PAYLOAD_F64;
				r->payload.f64 = sqlite3_column_double(st, c);
			}
			break;
		}
		if (gtid != cur_gtid) {
			cur_gtid = gtid;
			depth = 0;
			if (note_process(d->p, pid) < 0)
				goto oom;
		}
		if (r->kind == LP_RANGE_PUSHPOP) {
			/* close the ranges that ended before this one starts; the rest nest it */
			while (depth > 0) {
				const struct lp_range *top = &d->p->ranges[stack[depth - 1]];
				if (top->end_ns != 0 && top->end_ns <= r->start_ns)
					depth--;
				else
					break;
			}
			r->parent = depth > 0 ? stack[depth - 1] : -1;
			r->depth = (uint16_t)depth;
			if (depth < (int)(sizeof(stack) / sizeof(stack[0])))
				stack[depth++] = (int32_t)idx;
		}
		if (LP_ARRAY_RESERVE(side, cap_side, idx + 1, NULL) < 0)
			goto oom;
		side[idx].gtid = gtid;
	}
	if (rc != SQLITE_DONE) {
		lp_nsys_db_fail(d, "reading table 'NVTX_EVENTS'", err);
		rc = -1;
		goto out;
	}
	*side_out = side;
	side = NULL;
	rc = 0;
	goto out;
oom:
	rc = lp_oom(err);
out:
	sqlite3_finalize(st);
	free(doms);
	free(side);
	lp_buf_release(&cols);
	lp_buf_release(&q);
	return rc;
}

/* ---- kernels ---- */

struct launch {
	int64_t gtid;       /* launching thread (globalTid); -1 unknown */
	int64_t t_ns;       /* launch call start */
	size_t order;       /* row order, the last sort key */
	int32_t *range;     /* where the attributed range goes (a kernel's or a copy's) */
};

static int cmp_launch(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;
	if (x->gtid != y->gtid)
		return x->gtid < y->gtid ? -1 : 1;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* Per-thread sweep: ranges are sorted by (globalTid, start), launches likewise. */
static void attribute(struct lp_profile *p, const struct range_side *side, struct launch *ls, size_t n)
{
	size_t ri = 0, li = 0;
	int32_t stack[256];
	int depth = 0;
	int64_t cur = INT64_MIN;
	qsort(ls, n, sizeof(*ls), cmp_launch);
	for (li = 0; li < n; li++) {
		struct launch *l = &ls[li];
		if (l->gtid < 0)
			continue;
		if (l->gtid != cur) {
			cur = l->gtid;
			depth = 0;
			while (ri < p->n_ranges && side[ri].gtid < cur)
				ri++;
		}
		while (ri < p->n_ranges && side[ri].gtid == cur && (int64_t)p->ranges[ri].start_ns <= l->t_ns) {
			const struct lp_range *r = &p->ranges[ri];
			if (r->kind == LP_RANGE_PUSHPOP) {
				while (depth > 0 && p->ranges[stack[depth - 1]].end_ns != 0 &&
						p->ranges[stack[depth - 1]].end_ns <= r->start_ns)
					depth--;
				if (depth < 256)
					stack[depth++] = (int32_t)ri;
			}
			ri++;
		}
		while (depth > 0 && p->ranges[stack[depth - 1]].end_ns != 0 &&
				(int64_t)p->ranges[stack[depth - 1]].end_ns < l->t_ns)
			depth--;
		*l->range = depth > 0 ? stack[depth - 1] : -1;
	}
}

/* Launch calls by (process, correlation id): read once into a hash instead of an SQL join,
 * which costs SQLite an automatic index and a sort (5x slower on millions of rows). */
struct call {
	int64_t gtid;
	int64_t start;
};

struct calls {
	struct lp_map index;          /* pid << 32 | correlationId -> index in v */
	LP_VEC(struct call) v;
};

#define CALLS_INIT { LP_MAP_INIT, LP_VEC_INIT }

static void calls_release(struct calls *c)
{
	lp_map_release(&c->index);
	lp_vec_free(&c->v);
}

/* A repeated key (a damaged file) keeps the last call. */
static int calls_put(struct calls *c, uint64_t key, int64_t gtid, int64_t start, struct lp_err *err)
{
	int added;
	struct lp_map_entry *e = lp_map_upsert(&c->index, LP_MAP_U64(&key), &added, err);
	struct call *cl;
	if (!e)
		return -1;
	if (added) {
		if (!(cl = lp_vec_push(&c->v, err)))
			return -1;   /* the caller gives up on the table: the entry is not read again */
		e->val = c->v.n - 1;
	}
	cl = &c->v.v[e->val];
	cl->gtid = gtid;
	cl->start = start;
	return 0;
}

static const struct call *calls_get(const struct calls *c, uint64_t key)
{
	uint64_t i;
	return lp_map_get(&c->index, LP_MAP_U64(&key), &i) ? &c->v.v[i] : NULL;
}

static uint64_t call_key(uint64_t global_id, uint32_t corr)
{
	return ((((global_id >> 24) & LP_NSYS_TID_MASK) + 1) << 32) | corr;
}

/* One kernel's or copy's launch for the attribution sweep, from its API call (NULL: unknown, so
 * it stays unattributed); also fills the record's launch thread and time. */
static void set_launch(struct launch *l, size_t order, int32_t *range, const struct call *c,
	uint32_t *launch_tid, uint64_t *launch_ns)
{
	l->order = order;
	l->range = range;
	l->gtid = c ? c->gtid : -1;
	l->t_ns = c ? c->start : 0;
	if (c) {
		*launch_tid = (uint32_t)((uint64_t)c->gtid & LP_NSYS_TID_MASK);
		*launch_ns = c->start > 0 ? (uint64_t)c->start : 0;   /* profile.h: 0 = unknown */
	}
}

static int load_calls(struct lp_nsys_db *d, struct calls *c, struct lp_err *err)
{
	sqlite3_stmt *st;
	int rc;
	if (sqlite3_prepare_v2(d->h, "SELECT correlationId, globalTid, start FROM CUPTI_ACTIVITY_KIND_RUNTIME "
			"WHERE correlationId IS NOT NULL", -1, &st, NULL) != SQLITE_OK)
		return lp_nsys_db_fail(d, "table 'CUPTI_ACTIVITY_KIND_RUNTIME'", err);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t gtid = sqlite3_column_int64(st, 1);
		if (calls_put(c, call_key((uint64_t)gtid, (uint32_t)sqlite3_column_int64(st, 0)), gtid,
				sqlite3_column_int64(st, 2), err) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return lp_nsys_db_fail(d, "reading table 'CUPTI_ACTIVITY_KIND_RUNTIME'", err);
	return 0;
}

static int cmp_kernel_start(const void *a, const void *b)
{
	const struct lp_kernel *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->correlation_id > y->correlation_id) - (x->correlation_id < y->correlation_id);
}

static int load_kernels(struct lp_nsys_db *d, const struct range_side *side, struct lp_err *err)
{
	struct lp_buf cols = LP_BUF_INIT, rcols = LP_BUF_INIT, q = LP_BUF_INIT;
	sqlite3_stmt *st = NULL;
	struct launch *ls = NULL;
	struct calls calls = CALLS_INIT;
	size_t n_ls = 0, cap_ls = 0, first = d->p->n_kernels, i;
	int rc = -1, join;
	if (!lp_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_KERNEL"))
		return 0;
	if (lp_nsys_table_columns(d, "CUPTI_ACTIVITY_KIND_KERNEL", &cols, err) < 0)
		return -1;
	if (!lp_nsys_has_col(&cols, "start") || !lp_nsys_has_col(&cols, "end") ||
			(!lp_nsys_has_col(&cols, "demangledName") && !lp_nsys_has_col(&cols, "shortName"))) {
		rc = lp_err_set(err, LP_EPARSE, "%s: table 'CUPTI_ACTIVITY_KIND_KERNEL' lacks start/end/demangledName",
			d->path);
		goto out;
	}
	join = lp_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_RUNTIME") && lp_nsys_has_col(&cols, "correlationId") &&
		lp_nsys_has_col(&cols, "globalPid");
	if (join && lp_nsys_table_columns(d, "CUPTI_ACTIVITY_KIND_RUNTIME", &rcols, err) < 0)
		goto out;
	join = join && lp_nsys_has_col(&rcols, "correlationId") && lp_nsys_has_col(&rcols, "globalTid");
	lp_buf_adds(&q, "SELECT k.start, k.end, ");
	lp_nsys_add_col(&q, &cols, "k", "demangledName", lp_nsys_has_col(&cols, "shortName") ? "k.shortName" : "0");
	lp_nsys_add_col(&q, &cols, "k", "shortName", "k.demangledName");
	lp_nsys_add_col(&q, &cols, "k", "deviceId", "0");
	lp_nsys_add_col(&q, &cols, "k", "contextId", "0");
	lp_nsys_add_col(&q, &cols, "k", "streamId", "0");
	lp_nsys_add_col(&q, &cols, "k", "correlationId", "0");
	lp_nsys_add_col(&q, &cols, "k", "globalPid", "0");
	lp_nsys_add_col(&q, &cols, "k", "gridX", "0");
	lp_nsys_add_col(&q, &cols, "k", "gridY", "0");
	lp_nsys_add_col(&q, &cols, "k", "gridZ", "0");
	lp_nsys_add_col(&q, &cols, "k", "blockX", "0");
	lp_nsys_add_col(&q, &cols, "k", "blockY", "0");
	lp_nsys_add_col(&q, &cols, "k", "blockZ", "0");
	lp_nsys_add_col(&q, &cols, "k", "registersPerThread", "0");
	lp_nsys_add_col(&q, &cols, "k", "staticSharedMemory", "0");
	lp_nsys_add_col(&q, &cols, "k", "dynamicSharedMemory", "0");
	lp_nsys_add_col(&q, &cols, "k", "graphNodeId", "0");
	lp_nsys_add_col(&q, &cols, "k", "graphId", "0");
	lp_buf_adds(&q, "1 FROM CUPTI_ACTIVITY_KIND_KERNEL k");
	if (join && load_calls(d, &calls, err) < 0)
		goto out;
	if (q.oom)
		goto oom;
	if (sqlite3_prepare_v2(d->h, q.data, -1, &st, NULL) != SQLITE_OK) {
		lp_nsys_db_fail(d, "table 'CUPTI_ACTIVITY_KIND_KERNEL'", err);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct lp_kernel *k = lp_profile_add_kernel(d->p);
		size_t idx = d->p->n_kernels - 1;
		uint64_t gpid;
		if (!k)
			goto oom;
		k->start_ns = (uint64_t)sqlite3_column_int64(st, 0);
		k->end_ns = (uint64_t)sqlite3_column_int64(st, 1);
		if (lp_nsys_kernel_names(d, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), &k->name, &k->short_name,
				err) < 0) {
			rc = -1;
			goto out;
		}
		k->device = sqlite3_column_int(st, 4);
		k->context = (uint32_t)sqlite3_column_int64(st, 5);
		k->stream = (uint32_t)sqlite3_column_int64(st, 6);
		k->correlation_id = (uint32_t)sqlite3_column_int64(st, 7);
		gpid = (uint64_t)sqlite3_column_int64(st, 8);
		k->pid = (uint32_t)((gpid >> 24) & LP_NSYS_TID_MASK);
		k->grid[0] = (uint32_t)sqlite3_column_int(st, 9);
		k->grid[1] = (uint32_t)sqlite3_column_int(st, 10);
		k->grid[2] = (uint32_t)sqlite3_column_int(st, 11);
		k->block[0] = (uint32_t)sqlite3_column_int(st, 12);
		k->block[1] = (uint32_t)sqlite3_column_int(st, 13);
		k->block[2] = (uint32_t)sqlite3_column_int(st, 14);
		k->registers_per_thread = (uint32_t)sqlite3_column_int(st, 15);
		k->shared_bytes = (uint32_t)(sqlite3_column_int64(st, 16) + sqlite3_column_int64(st, 17));
		k->graph_node_id = (uint64_t)sqlite3_column_int64(st, 18);
		k->graph_id = (uint32_t)sqlite3_column_int64(st, 19);
		if (idx == 0 || d->p->kernels[idx - 1].pid != k->pid)
			if (note_process(d->p, k->pid) < 0)
				goto oom;
	}
	if (rc != SQLITE_DONE) {
		lp_nsys_db_fail(d, "reading table 'CUPTI_ACTIVITY_KIND_KERNEL'", err);
		rc = -1;
		goto out;
	}
	/* rows come in no promised order: sort by start, then find each launch call again */
	qsort(d->p->kernels + first, d->p->n_kernels - first, sizeof(*d->p->kernels), cmp_kernel_start);
	cap_ls = d->p->n_kernels - first;
	ls = cap_ls ? malloc(cap_ls * sizeof(*ls)) : NULL;
	if (cap_ls && !ls)
		goto oom;
	for (i = first; i < d->p->n_kernels; i++) {
		struct lp_kernel *k = &d->p->kernels[i];
		const struct call *c = calls_get(&calls, ((uint64_t)k->pid + 1) << 32 | k->correlation_id);
		set_launch(&ls[n_ls++], i, &k->range, c, &k->launch_tid, &k->launch_ns);
	}
	if (side)
		attribute(d->p, side, ls, n_ls);
	rc = 0;
	goto out;
oom:
	rc = lp_oom(err);
out:
	sqlite3_finalize(st);
	free(ls);
	calls_release(&calls);
	lp_buf_release(&cols);
	lp_buf_release(&rcols);
	lp_buf_release(&q);
	return rc;
}

/* CUPTI copyKind (ENUM_CUDA_MEMCPY_OPER) to the profile's copy kinds. */
static uint8_t copy_kind(int64_t k)
{
	switch (k) {
	case 1: return LP_COPY_HTOD;
	case 2: return LP_COPY_DTOH;
	case 8: return LP_COPY_DTOD;
	case 9: return LP_COPY_HTOH;
	case 10: return LP_COPY_PTOP;
	default: return LP_COPY_UNKNOWN;
	}
}

/* Memcpy and memset rows (when the tables exist), attributed like kernels: to the push/pop range
 * open on the launching thread at the time of the API call with the same correlation id. */
static int load_copies(struct lp_nsys_db *d, const struct range_side *side, const char *table, int memset_rows,
	struct lp_err *err)
{
	struct lp_buf cols = LP_BUF_INIT, q = LP_BUF_INIT;
	sqlite3_stmt *st = NULL;
	struct launch *ls = NULL;
	struct calls calls = CALLS_INIT;
	size_t first = d->p->n_copies, i, n_ls = 0;
	int rc = -1;
	if (!lp_nsys_has_table(d, table))
		return 0;
	if (lp_nsys_table_columns(d, table, &cols, err) < 0)
		return -1;
	if (!lp_nsys_has_col(&cols, "start") || !lp_nsys_has_col(&cols, "end") || !lp_nsys_has_col(&cols, "bytes")) {
		rc = lp_err_set(err, LP_EPARSE, "%s: table '%s' lacks start/end/bytes", d->path, table);
		goto out;
	}
	lp_buf_adds(&q, "SELECT c.start, c.end, c.bytes, ");
	lp_nsys_add_col(&q, &cols, "c", "deviceId", "0");
	lp_nsys_add_col(&q, &cols, "c", "streamId", "0");
	lp_nsys_add_col(&q, &cols, "c", "correlationId", "0");
	lp_nsys_add_col(&q, &cols, "c", "globalPid", "0");
	lp_nsys_add_col(&q, &cols, "c", "copyKind", "0");
	lp_buf_addf(&q, "1 FROM %s c", table);
	if (q.oom)
		goto oom;
	if (lp_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_RUNTIME") && load_calls(d, &calls, err) < 0)
		goto out;
	if (sqlite3_prepare_v2(d->h, q.data, -1, &st, NULL) != SQLITE_OK) {
		lp_nsys_db_fail(d, table, err);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct lp_copy *c = lp_profile_add_copy(d->p);
		if (!c)
			goto oom;
		c->start_ns = (uint64_t)sqlite3_column_int64(st, 0);
		c->end_ns = (uint64_t)sqlite3_column_int64(st, 1);
		c->bytes = (uint64_t)sqlite3_column_int64(st, 2);
		c->device = sqlite3_column_int(st, 3);
		c->stream = (uint32_t)sqlite3_column_int64(st, 4);
		c->correlation_id = (uint32_t)sqlite3_column_int64(st, 5);
		c->pid = (uint32_t)(((uint64_t)sqlite3_column_int64(st, 6) >> 24) & LP_NSYS_TID_MASK);
		c->kind = memset_rows ? LP_COPY_MEMSET : copy_kind(sqlite3_column_int64(st, 7));
	}
	if (rc != SQLITE_DONE) {
		lp_nsys_db_fail(d, table, err);
		rc = -1;
		goto out;
	}
	if (d->p->n_copies > first) {
		ls = malloc((d->p->n_copies - first) * sizeof(*ls));
		if (!ls)
			goto oom;
	}
	for (i = first; i < d->p->n_copies; i++) {
		struct lp_copy *c = &d->p->copies[i];
		const struct call *cl = calls_get(&calls, ((uint64_t)c->pid + 1) << 32 | c->correlation_id);
		set_launch(&ls[n_ls++], i, &c->range, cl, &c->launch_tid, &c->launch_ns);
	}
	if (side)
		attribute(d->p, side, ls, n_ls);
	rc = 0;
	goto out;
oom:
	rc = lp_oom(err);
out:
	sqlite3_finalize(st);
	free(ls);
	calls_release(&calls);
	lp_buf_release(&cols);
	lp_buf_release(&q);
	return rc;
}

int lp_nsys_sqlite_load(const char *path, struct lp_profile *out, struct lp_err *err)
{
	struct lp_nsys_db d;
	struct range_side *side = NULL;
	int rc = -1;
	if (lp_nsys_db_open(&d, path, out, err) < 0)
		goto done;
	out->source_kind = "nsys-sqlite";
	if (load_devices(&d, err) < 0 || load_ranges(&d, &side, err) < 0 || load_kernels(&d, side, err) < 0 ||
	    load_copies(&d, side, "CUPTI_ACTIVITY_KIND_MEMCPY", 0, err) < 0 ||
	    load_copies(&d, side, "CUPTI_ACTIVITY_KIND_MEMSET", 1, err) < 0)
		goto done;
	rc = 0;
done:
	free(side);
	lp_nsys_db_close(&d);
	return rc;
}
