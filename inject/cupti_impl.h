/* cupti_impl.h: what the two halves of the tracer's CUPTI side share (not part of any API).
 *   cupti.c           subscription, start-up and shutdown, API and resource callbacks (on the host's
 *                     threads), the sampling switch;
 *   cupti_activity.c  activity buffers (requested and completed on CUPTI's threads) and their
 *                     conversion into trace records (on the writer's flush thread).
 * The state `inj_c` and the resolved CUPTI/driver functions (p_*) are defined in cupti.c. */
#ifndef LP_INJECT_CUPTI_IMPL_H
#define LP_INJECT_CUPTI_IMPL_H

#include "inject.h"

#include <pthread.h>
#include <stdatomic.h>

#include <cuda.h>
#include <cupti.h>

/* ---- the CUPTI and driver functions we use, resolved at run time ---- */

#define LP_CUPTI_FUNCS(X)                                                       \
	X(cuptiGetResultString) X(cuptiSubscribe) X(cuptiUnsubscribe)           \
	X(cuptiEnableCallback) X(cuptiGetCallbackName) X(cuptiActivityEnable)   \
	X(cuptiActivityDisable)                                                 \
	X(cuptiActivityRegisterCallbacks) X(cuptiActivityGetNextRecord)         \
	X(cuptiActivityGetNumDroppedRecords) X(cuptiActivityFlushAll)           \
	X(cuptiActivityFlushPeriod) X(cuptiGetTimestamp) X(cuptiFinalize)       \
	X(cuptiGetDeviceId) X(cuptiGetGraphNodeId) X(cuptiGetGraphId) X(cuptiGetVersion)

#define LP_DECLARE(f) extern __typeof__(f) *p_##f;
LP_CUPTI_FUNCS(LP_DECLARE)
#undef LP_DECLARE

struct cupti_buf {
	struct cupti_buf *next;
	size_t valid;
	size_t cap;
	uint64_t pad;                     /* keeps data 8-byte aligned after a 32-byte header */
	uint8_t data[];
};

struct lp_cupti_state {
	pthread_once_t once;
	_Atomic int active;               /* activity and callbacks enabled */
	_Atomic int forked;
	int finalized;
	int clock_registered;             /* CUPTI timestamps are on our clock */
	CUpti_SubscriberHandle sub;
	pthread_mutex_t lock;             /* the two lists below */
	struct cupti_buf *free_list, *done_head, *done_tail;
	unsigned n_bufs, max_bufs;
	size_t buf_bytes;
	int runtime_api;                  /* runtime callbacks enabled as well */
	uint8_t kind_runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
	uint8_t kind_driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
	_Atomic uint64_t devices_written; /* bit per ordinal < 64 */
	int hw_trace;                     /* LLMPROF_TRACE_HW_TRACE=1: asked for */
	int periodic_flush;               /* LLMPROF_TRACE_CUPTI_PERIODIC_FLUSH (default on) */
	uint64_t flushes, flush_ns, flush_max_ns;  /* cuptiActivityFlushAll calls (flush thread) */
	/* sampling (lp_inj_cupti_record): what was enabled, the launch APIs seen, the switch's cost */
	int kernel_activity, copy_activity, overhead_activity;
	int skip_all;                               /* LLMPROF_TRACE_SKIP_ALL (on): overhead records and
	                                             * the cuProfilerStop callback off too */
	unsigned flush_deferred;                    /* periodic flushes put off while recording */
	_Atomic int recording;                      /* 0 inside an unrecorded sampling unit */
	_Atomic int graphs;                         /* a CUDA graph launch was seen (recorded) */
	_Atomic uint8_t seen_runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
	_Atomic uint8_t seen_driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
	uint32_t seen[64];                          /* domain << 16 | cbid, under `lock` */
	unsigned n_seen;
	/* the subscription (start-up; the detach diagnostic drops and remakes it) and the launch
	 * callbacks start-up enabled, for a new subscription */
	int subscribed;
	uint32_t api_cbids[512];                    /* domain << 16 | cbid */
	unsigned n_api_cbids;
	/* LLMPROF_TRACE_SKIP_DETACH=1 (diagnostic, bench/tracer/README.md run 22): unrecorded units
	 * detach CUPTI (cuptiFinalize), their pop attaches it again; api_lock serializes the CUPTI calls
	 * of a detach, an attach and the flush thread's flushes. Lock order: inj_w.write_lock (flush
	 * thread) or sample.c's switch_lock (the switch), then api_lock, then drain_lock, then `lock`
	 * (the buffer callback inside a flush) */
	int detach, detached;
	int log_cycles;                             /* LLMPROF_TRACE_LOG_CYCLES=1 */
	pthread_mutex_t api_lock;
	_Atomic uint64_t toggles, toggle_ns, toggle_max_ns;
	/* bursts (sample.c): CUPTI detached between them; the attach may be asked of the flush thread
	 * ahead of a burst (attach_ahead), which then leaves the kinds off until the burst begins */
	_Atomic int attach_ahead;
	/* the program's warm-up range (sample.c, trace.warmup=detach): detached inside it, every attach
	 * a no-op until it pops (lp_inj_cupti_hold) */
	_Atomic int hold;
	/* correlation ids: CUPTI numbers them anew after a cuptiFinalize, so every attach starts an
	 * epoch whose ids are moved past the last one written (lp_cupti_corr): raw id - corr_min +
	 * corr_base, corr_min the epoch's first raw id (0: none seen yet); epoch 0 keeps CUPTI's ids.
	 * A detach converts the epoch's records before its cuptiFinalize (drain_lock keeps the flush
	 * thread's drain out), so no record is ever read with another epoch's numbers. */
	_Atomic uint32_t corr_base, corr_min, corr_max;
	pthread_mutex_t drain_lock;
	_Atomic uint64_t detaches, detach_ns, detach_max_ns, attaches, attach_ns, attach_max_ns;
	char status[256];                 /* the "ok (...)" status, without the hardware trace part */
};

extern struct lp_cupti_state inj_c;

/* A raw CUPTI correlation id as written in the trace (see corr_base). */
static inline uint32_t lp_cupti_corr(uint32_t raw)
{
	uint32_t min = atomic_load_explicit(&inj_c.corr_min, memory_order_acquire);
	if (!min) {
		uint32_t zero = 0;
		atomic_compare_exchange_strong(&inj_c.corr_min, &zero, raw ? raw : 1);
		min = atomic_load(&inj_c.corr_min);
	}
	return raw >= min ? raw - min + atomic_load_explicit(&inj_c.corr_base, memory_order_relaxed)
			  : atomic_load_explicit(&inj_c.corr_base, memory_order_relaxed);
}

/* Logs a failed call; returns 1 when it failed. */
int lp_cupti_failed(CUptiResult r, const char *call);
const char *lp_cupti_result_string(CUptiResult r);
#define CUPTI_CALL(call) lp_cupti_failed((call), #call)

/* cupti_graph.c: a graph node made (cloned 0) or cloned (1): its GRAPH_NODE record, and the
 * kernel count of its graph; an executable graph instantiated; what a graph launch (the API
 * callback of cuGraphLaunch / cudaGraphLaunch) counts for auto's launch rate: its graph's
 * kernels, or 1 when not known. */
void lp_cupti_graph_node(const CUpti_ResourceData *rd, int cloned);
void lp_cupti_graph_exec_made(const CUpti_ResourceData *rd);
uint64_t lp_cupti_graph_launch_weight(const CUpti_CallbackData *cb);

/* CUPTI's buffer callbacks (cupti_activity.c), registered by cupti.c's start-up. */
void CUPTIAPI lp_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI lp_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
	size_t valid);

#endif
