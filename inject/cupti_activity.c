/* cupti_activity.c: the activity side of the tracer's CUPTI half (cupti_impl.h). CUPTI asks for
 * buffers and hands them back full on its own threads: both callbacks only take a pooled buffer or
 * queue a full one, and return at once. The writer's flush thread then converts the queued records
 * (CONCURRENT_KERNEL, MEMCPY, MEMSET, OVERHEAD) into trace records (lp_inj_cupti_drain) and puts the
 * buffers back in the pool. */

#include "cupti_impl.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- activity buffers: requested and completed on CUPTI's threads, so both return at once ---- */

void CUPTIAPI lp_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	struct cupti_buf *b;
	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	pthread_mutex_lock(&inj_c.lock);
	b = inj_c.free_list;
	if (b)
		inj_c.free_list = b->next;
	else if (inj_c.n_bufs < inj_c.max_bufs && (b = malloc(sizeof(*b) + inj_c.buf_bytes)) != NULL)
		inj_c.n_bufs++;
	pthread_mutex_unlock(&inj_c.lock);
	if (!b)
		return; /* CUPTI drops records and counts them (cuptiActivityGetNumDroppedRecords) */
	b->cap = inj_c.buf_bytes;
	b->valid = 0;
	b->next = NULL;
	*buffer = b->data;
	*size = b->cap;
}

void CUPTIAPI lp_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
	size_t valid)
{
	struct cupti_buf *b;
	size_t dropped = 0;
	(void)size;
	if (!buffer)
		return;
	b = (struct cupti_buf *)(void *)(buffer - offsetof(struct cupti_buf, data));
	b->valid = valid;
	b->next = NULL;
	if (p_cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		lp_inj_add_cupti_dropped(dropped);
	pthread_mutex_lock(&inj_c.lock);
	if (inj_c.done_tail)
		inj_c.done_tail->next = b;
	else
		inj_c.done_head = b;
	inj_c.done_tail = b;
	pthread_mutex_unlock(&inj_c.lock);
	lp_inj_wake();
}

static uint8_t copy_kind(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return LP_TRACE_COPY_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return LP_TRACE_COPY_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
		return LP_TRACE_COPY_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return LP_TRACE_COPY_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return LP_TRACE_COPY_PTOP;
	default:
		return LP_TRACE_COPY_UNKNOWN;
	}
}

static uint32_t u32_of(int32_t v)
{
	return v < 0 ? 0 : (uint32_t)v;
}

/* Kernel name -> string id without the writer's lock for names seen before. CUPTI shares one
 * name string among the records of a kernel, so the pointer is the key; the bytes are compared
 * too (a module unloaded and another loaded may reuse the memory). Used by flush rounds only,
 * which never run concurrently. */
static uint32_t kernel_name_sid(const char *name)
{
	static struct { const char *key; uint32_t sid; } cache[1024];
	static const char *copy[1024];
	size_t n, j = ((uintptr_t)name >> 4) * 0x9E3779B1u % 1024;
	if (!name)
		return 0;
	if (cache[j].key == name && cache[j].sid && copy[j] && !strcmp(copy[j], name))
		return cache[j].sid;
	n = strlen(name);
	cache[j].key = name;
	cache[j].sid = lp_inj_intern(name, n);
	free((void *)(uintptr_t)copy[j]);
	copy[j] = cache[j].sid ? strdup(name) : NULL;
	return cache[j].sid;
}

static void convert_record(const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)(const void *)rec;
		struct lp_trace_kernel r;
		memset(&r, 0, sizeof(r));
		r.start_ns = k->start;
		r.end_ns = k->end;
		r.graph_node_id = k->graphNodeId;
		r.name_sid = kernel_name_sid(k->name);
		r.device = k->deviceId;
		r.context = k->contextId;
		r.stream = k->streamId;
		r.correlation_id = lp_cupti_corr(k->correlationId);
		r.graph_id = k->graphId;
		r.grid[0] = u32_of(k->gridX);
		r.grid[1] = u32_of(k->gridY);
		r.grid[2] = u32_of(k->gridZ);
		r.block[0] = u32_of(k->blockX);
		r.block[1] = u32_of(k->blockY);
		r.block[2] = u32_of(k->blockZ);
		r.registers_per_thread = k->registersPerThread;
		r.static_shared_bytes = u32_of(k->staticSharedMemory);
		r.dynamic_shared_bytes = u32_of(k->dynamicSharedMemory);
		lp_inj_append(LP_TREC_KERNEL, &r, sizeof(r), NULL, 0);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)(const void *)rec;
		struct lp_trace_copy r;
		memset(&r, 0, sizeof(r));
		r.start_ns = m->start;
		r.end_ns = m->end;
		r.bytes = m->bytes;
		r.graph_node_id = m->graphNodeId;
		r.device = m->deviceId;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.correlation_id = lp_cupti_corr(m->correlationId);
		r.kind = copy_kind(m->copyKind);
		r.cupti_kind = m->copyKind;
		lp_inj_append(LP_TREC_COPY, &r, sizeof(r), NULL, 0);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)(const void *)rec;
		struct lp_trace_copy r;
		memset(&r, 0, sizeof(r));
		r.start_ns = m->start;
		r.end_ns = m->end;
		r.bytes = m->bytes;
		r.graph_node_id = m->graphNodeId;
		r.device = m->deviceId;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.correlation_id = lp_cupti_corr(m->correlationId);
		r.kind = LP_TRACE_COPY_MEMSET;
		r.memset_value = m->value;
		lp_inj_append(LP_TREC_COPY, &r, sizeof(r), NULL, 0);
		break;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		const CUpti_ActivityOverhead3 *o = (const CUpti_ActivityOverhead3 *)(const void *)rec;
		struct lp_trace_overhead r;
		memset(&r, 0, sizeof(r));
		r.start_ns = o->start;
		r.end_ns = o->end;
		r.overhead_kind = (uint32_t)o->overheadKind;
		r.object_kind = (uint32_t)o->objectKind;
		if (o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS || o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
			r.object_id = o->objectId.pt.threadId;
		else
			r.object_id = o->objectId.dcs.deviceId;
		lp_inj_append(LP_TREC_OVERHEAD, &r, sizeof(r), NULL, 0);
		break;
	}
	default:
		break;
	}
}

void lp_inj_cupti_drain(void)
{
	struct cupti_buf *list, *b, *next;
	if (atomic_load(&inj_c.forked))
		return;
	/* the flush thread, or a detach on the thread that detaches (its epoch's records) */
	pthread_mutex_lock(&inj_c.drain_lock);
	pthread_mutex_lock(&inj_c.lock);
	list = inj_c.done_head;
	inj_c.done_head = inj_c.done_tail = NULL;
	pthread_mutex_unlock(&inj_c.lock);
	if (!list) {
		pthread_mutex_unlock(&inj_c.drain_lock);
		return;
	}
	if (!inj_c.clock_registered) {
		/* CUPTI keeps its own clock: state the offset so the reader can map GPU times */
		struct lp_trace_clock_sync s;
		uint64_t cts = 0, t1 = lp_inj_now_ns(), t2;
		if (p_cuptiGetTimestamp(&cts) == CUPTI_SUCCESS) {
			t2 = lp_inj_now_ns();
			s.trace_ns = t1 + (t2 - t1) / 2;
			s.cupti_ns = cts;
			lp_inj_append(LP_TREC_CLOCK_SYNC, &s, sizeof(s), NULL, 0);
		}
	}
	for (b = list; b; b = b->next) {
		CUpti_Activity *rec = NULL;
		CUptiResult r;
		while ((r = p_cuptiActivityGetNextRecord(b->data, b->valid, &rec)) == CUPTI_SUCCESS)
			convert_record(rec);
		if (r != CUPTI_ERROR_MAX_LIMIT_REACHED)
			lp_cupti_failed(r, "cuptiActivityGetNextRecord");
	}
	pthread_mutex_lock(&inj_c.lock);
	for (b = list; b; b = next) {
		next = b->next;
		b->next = inj_c.free_list;
		inj_c.free_list = b;
	}
	pthread_mutex_unlock(&inj_c.lock);
	pthread_mutex_unlock(&inj_c.drain_lock);
}
