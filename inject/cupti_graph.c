/* cupti_graph.c: the tracer's CUDA graph bookkeeping, from CUPTI's resource callbacks (cupti.c
 * enables them and dispatches):
 *   - GRAPH_NODE records: the range open when a node was captured or added, and each clone's
 *     original, so that the reader puts a replayed kernel under the ranges it was captured in
 *     (docs/trace-format.md "Attribution");
 *   - auto's launch rate counts a graph launch as the kernel nodes of its graph (bench/tracer/
 *     README.md run 32: a static cache's decode step is one graph launch of ~650 kernels, which
 *     cost +25-34% when traced exactly at "18k launches/s"): kernel nodes made per graph id (key
 *     id + 1), then per executable graph (key: its handle) at its instantiation. Open addressing,
 *     keys set once (CAS from 0), counts added atomically; a full table counts a launch as 1.
 */

#include "cupti_impl.h"

#include <stdatomic.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#define GRAPH_SLOTS 4096                 /* a power of two */

static struct graph_count {
	_Atomic uint64_t key;
	_Atomic uint32_t n;
} graph_kernels[GRAPH_SLOTS], exec_kernels[GRAPH_SLOTS];

/* The count of `key` in table `t`, added when `add`; NULL when absent (or the table is full).
 * Lock-free: a slot's key is set once. */
static _Atomic uint32_t *graph_count(struct graph_count *t, uint64_t key, int add)
{
	size_t i, h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40);
	for (i = 0; i < GRAPH_SLOTS; i++) {
		struct graph_count *e = &t[(h + i) & (GRAPH_SLOTS - 1)];
		uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
		if (k == key)
			return &e->n;
		if (!k) {
			if (!add)
				return NULL;
			if (atomic_compare_exchange_strong(&e->key, &k, key) || k == key)
				return &e->n;
		}
	}
	return NULL;
}

/* graph_kernels' key of graph `g`: its CUPTI id + 1; 0 when it has none. */
static uint64_t graph_key(CUgraph g)
{
	uint32_t id = 0;
	return g && p_cuptiGetGraphId(g, &id) == CUPTI_SUCCESS ? (uint64_t)id + 1 : 0;
}

/* A kernel node made in a graph (captured or added): one more for its graph id. */
static void graph_kernel_made(const CUpti_GraphData *gd)
{
	uint64_t key = gd->nodeType == CU_GRAPH_NODE_TYPE_KERNEL ? graph_key(gd->graph) : 0;
	_Atomic uint32_t *n;
	if (key && (n = graph_count(graph_kernels, key, 1)) != NULL)
		atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
}

/* An executable graph instantiated from a graph: it launches that graph's kernel nodes. */
void lp_cupti_graph_exec_made(const CUpti_ResourceData *rd)
{
	const CUpti_GraphData *gd = rd ? (const CUpti_GraphData *)rd->resourceDescriptor : NULL;
	uint64_t key = gd && gd->graphExec ? graph_key(gd->graph) : 0;
	_Atomic uint32_t *from, *to;
	if (!key || !(from = graph_count(graph_kernels, key, 0)) ||
	    !(to = graph_count(exec_kernels, (uint64_t)(uintptr_t)gd->graphExec, 1)))
		return;
	atomic_store_explicit(to, atomic_load_explicit(from, memory_order_relaxed), memory_order_relaxed);
}

/* What a graph launch (cuGraphLaunch, cudaGraphLaunch: the executable graph is the first
 * parameter of each) counts for auto's launch rate: its kernels, or 1 when not known. */
uint64_t lp_cupti_graph_launch_weight(const CUpti_CallbackData *cb)
{
	const void *exec = cb->functionParams ? *(const void *const *)cb->functionParams : NULL;
	_Atomic uint32_t *n = exec ? graph_count(exec_kernels, (uint64_t)(uintptr_t)exec, 0) : NULL;
	uint32_t k = n ? atomic_load_explicit(n, memory_order_relaxed) : 0;
	return k ? k : 1;
}

void lp_cupti_graph_node(const CUpti_ResourceData *rd, int cloned)
{
	const CUpti_GraphData *gd = rd ? (const CUpti_GraphData *)rd->resourceDescriptor : NULL;
	struct lp_trace_graph_node r;
	if (!gd || !gd->node)
		return;
	if (!cloned)
		graph_kernel_made(gd);
	memset(&r, 0, sizeof(r));
	if (lp_cupti_failed(p_cuptiGetGraphNodeId(gd->node, &r.node_id), "cuptiGetGraphNodeId"))
		return;
	if (cloned) {
		if (!gd->originalNode ||
		    lp_cupti_failed(p_cuptiGetGraphNodeId(gd->originalNode, &r.original_node_id), "cuptiGetGraphNodeId"))
			return;
	} else {
		r.range_id = lp_inj_current_range(lp_inj_self());
		if (!r.range_id)
			return; /* nothing to remember: such kernels fall back to the graph launch's range */
	}
	if (gd->graph)
		p_cuptiGetGraphId(gd->graph, &r.graph_id);
	r.tid = lp_inj_tid();
	lp_inj_append(LP_TREC_GRAPH_NODE, &r, sizeof(r), NULL, 0);
}
