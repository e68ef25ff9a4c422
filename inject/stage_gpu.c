/* stage_gpu.c: GPU timestamps of stage boundaries (sample.c asks for them at the push and pop of a
 * stage range). A mark is a CUDA event recorded on the legacy default stream of the calling
 * thread's context: it completes when the GPU has finished everything queued before it on that
 * stream and on every blocking stream (legacy-stream semantics), which is what a program's own
 * `torch.cuda.Event().record()` measures. The flush thread reads finished pairs:
 *   - elapsed: cuEventElapsedTime(push, pop), exact to the event timer (~0.5 us);
 *   - absolute: against an anchor event recorded on a private non-blocking stream (empty, so it
 *     completes at once) and synchronized while reading CLOCK_REALTIME around it; re-anchored
 *     every 2 s, so float milliseconds keep sub-microsecond resolution.
 * No mark is taken while a stream capture is active (recording on the legacy stream would break
 * the host's capture): the status says so. Events come from a pool (created on first use, never
 * destroyed before exit). libcuda is opened with dlopen; its functions are resolved once.
 * Limits (docs/tracer.md): work on non-blocking streams (PyTorch side streams) is not waited for;
 * a graph launched inside the stage is, as one unit.
 */

#include "inject.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

typedef CUresult (*ctx_get_fn)(CUcontext *);
typedef CUresult (*ctx_set_fn)(CUcontext);
typedef CUresult (*ev_create_fn)(CUevent *, unsigned);
typedef CUresult (*ev_record_fn)(CUevent, CUstream);
typedef CUresult (*ev_query_fn)(CUevent);
typedef CUresult (*ev_sync_fn)(CUevent);
typedef CUresult (*ev_elapsed_fn)(float *, CUevent, CUevent);
typedef CUresult (*stream_create_fn)(CUstream *, unsigned);
typedef CUresult (*stream_capturing_fn)(CUstream, CUstreamCaptureStatus *);

#define MAX_CONTEXTS 8
#define MAX_EVENTS 16384
#define ANCHOR_NS 2000000000ull

struct mark {
	struct mark *next;
	CUevent ev;
	CUcontext ctx;
};

struct anchor {
	CUcontext ctx;
	CUstream stream;
	CUevent ev;
	uint64_t host_ns;                    /* trace clock when `ev` completed */
	uint64_t made_ns;                    /* 0: none yet */
};

static struct {
	pthread_once_t once;
	int ok;
	ctx_get_fn ctx_get;
	ctx_set_fn ctx_set;
	ev_create_fn ev_create;
	ev_record_fn ev_record;
	ev_query_fn ev_query;
	ev_sync_fn ev_sync;
	ev_elapsed_fn ev_elapsed;
	stream_create_fn stream_create;
	stream_capturing_fn stream_capturing;
	pthread_mutex_t lock;                /* the pool */
	struct mark *free_list;
	unsigned n_marks;
	struct anchor anchors[MAX_CONTEXTS]; /* flush thread only */
	_Atomic int logged;
} G = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

#define SYM(field, type, name) G.field = (type)(uintptr_t)dlsym(h, name)

static void load_once(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		return; /* the host has not loaded CUDA: nothing to time */
	SYM(ctx_get, ctx_get_fn, "cuCtxGetCurrent");
	SYM(ctx_set, ctx_set_fn, "cuCtxSetCurrent");
	SYM(ev_create, ev_create_fn, "cuEventCreate");
	SYM(ev_record, ev_record_fn, "cuEventRecord");
	SYM(ev_query, ev_query_fn, "cuEventQuery");
	SYM(ev_sync, ev_sync_fn, "cuEventSynchronize");
	SYM(ev_elapsed, ev_elapsed_fn, "cuEventElapsedTime_v2");
	if (!G.ev_elapsed)
		SYM(ev_elapsed, ev_elapsed_fn, "cuEventElapsedTime");
	SYM(stream_create, stream_create_fn, "cuStreamCreate");
	SYM(stream_capturing, stream_capturing_fn, "cuStreamIsCapturing");
	G.ok = G.ctx_get && G.ctx_set && G.ev_create && G.ev_record && G.ev_query && G.ev_sync && G.ev_elapsed &&
		G.stream_create && G.stream_capturing;
	if (!G.ok)
		lp_inj_log("stages: libcuda lacks an event function: no GPU times");
}

static void log_once(const char *what, CUresult r)
{
	if (!atomic_exchange(&G.logged, 1))
		lp_inj_log("stages: %s failed (CUresult %d): stage GPU times missing from here on where it fails",
			what, (int)r);
}

int lp_inj_gpu_mark(void **out)
{
	CUcontext ctx = NULL;
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
	struct mark *m;
	CUresult r;
	*out = NULL;
	pthread_once(&G.once, load_once);
	if (!G.ok)
		return LP_TRACE_STAGE_GPU_NONE;
	if (G.ctx_get(&ctx) != CUDA_SUCCESS || !ctx)
		return LP_TRACE_STAGE_GPU_NO_CONTEXT;
	/* legacy stream: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT when a blocking stream captures */
	if (G.stream_capturing(CU_STREAM_LEGACY, &cs) != CUDA_SUCCESS || cs != CU_STREAM_CAPTURE_STATUS_NONE)
		return LP_TRACE_STAGE_GPU_CAPTURE;
	pthread_mutex_lock(&G.lock);
	m = G.free_list;
	if (m && m->ctx == ctx) {
		G.free_list = m->next;
	} else {
		m = NULL;
		if (G.n_marks < MAX_EVENTS && (m = calloc(1, sizeof(*m))) != NULL)
			G.n_marks++;
	}
	pthread_mutex_unlock(&G.lock);
	if (!m)
		return LP_TRACE_STAGE_GPU_BUSY;
	if (!m->ev) {
		r = G.ev_create(&m->ev, CU_EVENT_DEFAULT);
		if (r != CUDA_SUCCESS) {
			log_once("cuEventCreate", r);
			free(m);
			pthread_mutex_lock(&G.lock);
			G.n_marks--;
			pthread_mutex_unlock(&G.lock);
			return LP_TRACE_STAGE_GPU_ERROR;
		}
		m->ctx = ctx;
	}
	r = G.ev_record(m->ev, CU_STREAM_LEGACY);
	if (r != CUDA_SUCCESS) {
		log_once("cuEventRecord", r);
		lp_inj_gpu_release(m);
		return LP_TRACE_STAGE_GPU_ERROR;
	}
	*out = m;
	return LP_TRACE_STAGE_GPU_EVENTS;
}

void lp_inj_gpu_release(void *p)
{
	struct mark *m = p;
	if (!m)
		return;
	pthread_mutex_lock(&G.lock);
	m->next = G.free_list;
	G.free_list = m;
	pthread_mutex_unlock(&G.lock);
}

void lp_inj_gpu_wait(void *p)
{
	struct mark *m = p;
	CUresult r;
	if (!m || !G.ok)
		return;
	r = G.ev_sync(m->ev);
	if (r != CUDA_SUCCESS)
		log_once("cuEventSynchronize", r);
}

void lp_inj_gpu_remark(void *p)
{
	struct mark *m = p;
	CUresult r;
	if (!m || !G.ok)
		return;
	r = G.ev_record(m->ev, CU_STREAM_LEGACY);
	if (r != CUDA_SUCCESS)
		log_once("cuEventRecord", r);
}

/* The anchor of `ctx`, made or refreshed when older than ANCHOR_NS. Flush thread. */
static struct anchor *anchor_of(CUcontext ctx)
{
	struct anchor *a = NULL;
	uint64_t now = lp_inj_now_ns(), t0, t1;
	unsigned i;
	for (i = 0; i < MAX_CONTEXTS; i++) {
		if (G.anchors[i].ctx == ctx || !G.anchors[i].ctx) {
			a = &G.anchors[i];
			break;
		}
	}
	if (!a)
		return NULL;
	if (a->made_ns && now - a->made_ns < ANCHOR_NS)
		return a;
	if (G.ctx_set(ctx) != CUDA_SUCCESS)
		return NULL;
	if (!a->ctx) {
		if (G.stream_create(&a->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
		    G.ev_create(&a->ev, CU_EVENT_BLOCKING_SYNC) != CUDA_SUCCESS)
			return NULL;
		a->ctx = ctx;
	}
	t0 = lp_inj_now_ns();
	if (G.ev_record(a->ev, a->stream) != CUDA_SUCCESS || G.ev_sync(a->ev) != CUDA_SUCCESS)
		return NULL;
	t1 = lp_inj_now_ns();
	a->host_ns = t0 + (t1 - t0) / 2;
	a->made_ns = t1;
	return a;
}

static int64_t ms_to_ns(float ms)
{
	return (int64_t)((double)ms * 1e6);
}

int lp_inj_gpu_times(void *start, void *end, int wait, uint64_t *start_ns, uint64_t *end_ns, uint64_t *elapsed_ns)
{
	struct mark *s = start, *e = end;
	struct anchor *a;
	CUresult r;
	float ms = 0;
	if (!G.ok || !s || !e || s->ctx != e->ctx)
		return -1;
	r = wait ? G.ev_sync(e->ev) : G.ev_query(e->ev);
	if (r == CUDA_ERROR_NOT_READY)
		return 1;
	if (r != CUDA_SUCCESS || G.ev_elapsed(&ms, s->ev, e->ev) != CUDA_SUCCESS) {
		log_once("cuEventElapsedTime", r);
		return -1;
	}
	*elapsed_ns = ms > 0 ? (uint64_t)ms_to_ns(ms) : 0;
	*start_ns = *end_ns = 0;
	a = anchor_of(s->ctx);
	if (a && G.ev_elapsed(&ms, a->ev, s->ev) == CUDA_SUCCESS) {
		int64_t t = (int64_t)a->host_ns + ms_to_ns(ms);
		if (t > 0) {
			*start_ns = (uint64_t)t;
			*end_ns = *start_ns + *elapsed_ns;
		}
	}
	return 0;
}
