/* cupti.c: the CUPTI half of the injected tracer. The CUDA driver loads CUDA_INJECTION64_PATH at
 * cuInit and calls InitializeInjection. From there:
 *   - activity records (CONCURRENT_KERNEL, never the serializing KERNEL kind; MEMCPY; MEMSET;
 *     OVERHEAD) are enabled here; their buffers and the conversion into trace records are
 *     cupti_activity.c's (the state both share is in cupti_impl.h);
 *   - launch and copy API callbacks (driver API, chosen by name at start-up: every runtime launch,
 *     copy and graph launch goes through one with the same correlation id) write the correlation
 *     id with the launching thread's innermost NVTX range instance: one record per launch, no
 *     lock (LLMPROF_TRACE_RUNTIME_API=1 adds the runtime API's callbacks, for a driver that would
 *     not nest its calls);
 *   - graph node creation/cloning callbacks remember the range open at capture time per node
 *     (cupti_graph.c, which also counts each graph's kernels for auto's launch rate);
 *   - cuProfilerStop asks for a flush; context creation writes the device's properties.
 * libcupti and libcuda are opened with dlopen, so the library also loads on a machine without
 * CUDA (NVTX-only tracing). Every CUPTI call's result is checked; failures land in the log and in
 * the file's CUPTI status, never in the host's output.
 */

#include "cupti_impl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#ifndef LP_CUPTI_SONAME
#define LP_CUPTI_SONAME "libcupti.so"
#endif
#ifndef LP_CUPTI_PATH
#define LP_CUPTI_PATH ""
#endif

/* periodic CUPTI flushes a sampled process may put off while recording (docs/tracer.md) */
#define MAX_FLUSH_DEFERRED 8

/* ---- the CUPTI and driver functions we use, resolved at run time ---- */

#define LP_DEFINE(f) __typeof__(f) *p_##f;
LP_CUPTI_FUNCS(LP_DEFINE)
#undef LP_DEFINE

static __typeof__(cuptiSubscribe_v2) *p_cuptiSubscribe_v2;                 /* optional */
static __typeof__(cuptiActivityRegisterTimestampCallback) *p_cuptiActivityRegisterTimestampCallback;
static __typeof__(cuptiActivityEnableHWTrace) *p_cuptiActivityEnableHWTrace;   /* optional */

typedef CUresult (*cu_device_get_fn)(CUdevice *, int);
typedef CUresult (*cu_device_get_attribute_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*cu_device_get_name_fn)(char *, int, CUdevice);
typedef CUresult (*cu_device_total_mem_fn)(size_t *, CUdevice);
typedef CUresult (*cu_device_get_uuid_fn)(CUuuid *, CUdevice);
static cu_device_get_fn p_cuDeviceGet;
static cu_device_get_attribute_fn p_cuDeviceGetAttribute;
static cu_device_get_name_fn p_cuDeviceGetName;
static cu_device_total_mem_fn p_cuDeviceTotalMem;
static cu_device_get_uuid_fn p_cuDeviceGetUuid;
typedef CUresult (*cu_ctx_get_current_fn)(CUcontext *);
static cu_ctx_get_current_fn p_cuCtxGetCurrent;

/* ---- state (cupti_impl.h) ---- */

struct lp_cupti_state inj_c = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.api_lock = PTHREAD_MUTEX_INITIALIZER,
	.drain_lock = PTHREAD_MUTEX_INITIALIZER,
	.recording = 1,
	.corr_base = 1,
	.corr_min = 1,
};

const char *lp_cupti_result_string(CUptiResult r)
{
	const char *s = NULL;
	if (p_cuptiGetResultString && p_cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

int lp_cupti_failed(CUptiResult r, const char *call)
{
	if (r == CUPTI_SUCCESS)
		return 0;
	lp_inj_log("%s failed: %s (%d)", call, lp_cupti_result_string(r), (int)r);
	return 1;
}

static void *open_first(const char *const *names)
{
	void *h = NULL;
	for (; *names && !h; names++)
		if (**names)
			h = dlopen(*names, RTLD_NOW | RTLD_LOCAL);
	return h;
}

static int load_libraries(char *why, size_t why_len)
{
	const char *env = getenv("LLMPROF_CUPTI_LIB");
	const char *cupti_names[] = { env ? env : "", LP_CUPTI_SONAME, LP_CUPTI_PATH, "libcupti.so", NULL };
	void *hc, *hd;

	hc = open_first(cupti_names);
	if (!hc) {
		snprintf(why, why_len, "cannot load libcupti (%s); set LLMPROF_CUPTI_LIB", LP_CUPTI_SONAME);
		return -1;
	}
#define LP_RESOLVE(f)                                                           \
	p_##f = (__typeof__(f) *)(uintptr_t)dlsym(hc, #f);                    \
	if (!p_##f) {                                                           \
		snprintf(why, why_len, "libcupti lacks %s", #f);                \
		return -1;                                                      \
	}
	LP_CUPTI_FUNCS(LP_RESOLVE)
#undef LP_RESOLVE
	p_cuptiSubscribe_v2 = (__typeof__(cuptiSubscribe_v2) *)(uintptr_t)dlsym(hc, "cuptiSubscribe_v2");
	p_cuptiActivityRegisterTimestampCallback = (__typeof__(cuptiActivityRegisterTimestampCallback) *)(uintptr_t)
		dlsym(hc, "cuptiActivityRegisterTimestampCallback");
	p_cuptiActivityEnableHWTrace = (__typeof__(cuptiActivityEnableHWTrace) *)(uintptr_t)
		dlsym(hc, "cuptiActivityEnableHWTrace");

	hd = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!hd)
		hd = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (hd) {
		p_cuDeviceGet = (cu_device_get_fn)(uintptr_t)dlsym(hd, "cuDeviceGet");
		p_cuDeviceGetAttribute = (cu_device_get_attribute_fn)(uintptr_t)dlsym(hd, "cuDeviceGetAttribute");
		p_cuDeviceGetName = (cu_device_get_name_fn)(uintptr_t)dlsym(hd, "cuDeviceGetName");
		p_cuCtxGetCurrent = (cu_ctx_get_current_fn)(uintptr_t)dlsym(hd, "cuCtxGetCurrent");
		p_cuDeviceTotalMem = (cu_device_total_mem_fn)(uintptr_t)dlsym(hd, "cuDeviceTotalMem_v2");
		p_cuDeviceGetUuid = (cu_device_get_uuid_fn)(uintptr_t)dlsym(hd, "cuDeviceGetUuid_v2");
		if (!p_cuDeviceGetUuid)
			p_cuDeviceGetUuid = (cu_device_get_uuid_fn)(uintptr_t)dlsym(hd, "cuDeviceGetUuid");
	}
	return 0;
}

/* ---- API and resource callbacks (on the host's threads: small and allocation-light) ---- */

static void write_device(CUcontext ctx)
{
	uint32_t ordinal = 0;
	CUdevice dev;
	struct lp_trace_device d;
	char name[256] = "";
	size_t mem = 0;
	int v;
	if (lp_cupti_failed(p_cuptiGetDeviceId(ctx, &ordinal), "cuptiGetDeviceId") || ordinal >= 64)
		return;
	if (atomic_fetch_or(&inj_c.devices_written, 1ull << ordinal) & (1ull << ordinal))
		return;
	if (!p_cuDeviceGet || !p_cuDeviceGetAttribute || p_cuDeviceGet(&dev, (int)ordinal) != CUDA_SUCCESS)
		return;
	memset(&d, 0, sizeof(d));
	d.id = ordinal;
#define ATTR(field, a, scale) \
	if (p_cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS) d.field = (__typeof__(d.field))v * (scale)
	ATTR(sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1);
	ATTR(cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1);
	ATTR(cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 1);
	ATTR(sm_clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1);
	ATTR(mem_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 1);
	ATTR(mem_bus_width_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 1);
	ATTR(l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 1);
#undef ATTR
	if (p_cuDeviceTotalMem && p_cuDeviceTotalMem(&mem, dev) == CUDA_SUCCESS)
		d.mem_bytes = mem;
	if (p_cuDeviceGetName && p_cuDeviceGetName(name, (int)sizeof(name) - 1, dev) == CUDA_SUCCESS) {
		name[sizeof(name) - 1] = '\0';
		d.name_sid = lp_inj_intern(name, strlen(name));
	}
	if (p_cuDeviceGetUuid) {
		CUuuid u;
		if (p_cuDeviceGetUuid(&u, dev) == CUDA_SUCCESS) {
			char s[64];
			const unsigned char *b = (const unsigned char *)u.bytes;
			int n = snprintf(s, sizeof(s),
				"GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
				b[12], b[13], b[14], b[15]);
			if (n > 0)
				d.uuid_sid = lp_inj_intern(s, (size_t)n);
		}
	}
	lp_inj_append(LP_TREC_DEVICE, &d, sizeof(d), NULL, 0);
}

/* The launch APIs the sampling switch turns off and on: those that were called at least once. */
static void note_seen(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
	if (atomic_exchange(runtime ? &inj_c.seen_runtime[cbid] : &inj_c.seen_driver[cbid], 1))
		return;
	pthread_mutex_lock(&inj_c.lock);
	if (inj_c.n_seen < sizeof(inj_c.seen) / sizeof(inj_c.seen[0]))
		inj_c.seen[inj_c.n_seen++] = (uint32_t)domain << 16 | (uint32_t)cbid;
	pthread_mutex_unlock(&inj_c.lock);
}

/* A launch, copy or graph launch API call: one LAUNCH record at its entry. The hot path of the
 * whole tracer (once per kernel launch): no lock, no allocation, one clock read. */
static void on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	struct lp_inj_thread *t;
	struct lp_trace_launch r;
	uint8_t kind;
	int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
	if (cb->callbackSite != CUPTI_API_ENTER) {
		if (runtime) {
			if ((t = lp_inj_self()) != NULL)
				t->rt_correlation = 0;
		} else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)
			lp_inj_request_flush(0); /* never flush CUPTI from inside its callback */
		return;
	}
	if (runtime)
		kind = cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE ? inj_c.kind_runtime[cbid] : 0;
	else
		kind = cbid < CUPTI_DRIVER_TRACE_CBID_SIZE ? inj_c.kind_driver[cbid] : 0;
	if (!kind)
		return;
	if (!atomic_load_explicit(runtime ? &inj_c.seen_runtime[cbid] : &inj_c.seen_driver[cbid], memory_order_relaxed))
		note_seen(domain, cbid);
	if (!atomic_load_explicit(&inj_c.recording, memory_order_relaxed))
		return; /* a launch API first seen inside an unrecorded unit: switched off from the next */
	t = lp_inj_self();
	if (!t)
		return; /* no thread state (out of memory) */
	if (kind == LP_TRACE_LAUNCH_KERNEL)
		t->launches++;
	else if (kind == LP_TRACE_LAUNCH_GRAPH) {
		t->launches += lp_cupti_graph_launch_weight(cb);
		if (!atomic_load_explicit(&inj_c.graphs, memory_order_relaxed))
			atomic_store(&inj_c.graphs, 1);
	}
	if (runtime)
		t->rt_correlation = cb->correlationId;
	else if (inj_c.runtime_api && t->rt_correlation == cb->correlationId)
		return; /* the driver call inside a runtime call already recorded */
	t->api_launches++;
	r.correlation_id = lp_cupti_corr(cb->correlationId);
	{
		uint32_t max = atomic_load_explicit(&inj_c.corr_max, memory_order_relaxed);
		while (r.correlation_id > max && !atomic_compare_exchange_weak(&inj_c.corr_max, &max, r.correlation_id)) {
		}
	}
	r.tid = t->tid;
	r.range_id = lp_inj_current_range(t);
	r.ts_ns = lp_inj_now_ns();
	r.cbid = cbid;
	r.api = runtime ? 1 : 2;
	r.kind = kind;
	r.reserved = 0;
	lp_inj_append(LP_TREC_LAUNCH, &r, sizeof(r), NULL, 0);
}

/* Kernel timestamps from the GPU's Hardware Event System instead of instrumented launches
 * (LLMPROF_TRACE_HW_TRACE=1): CUPTI allows it after the driver's initialization and before the
 * first context, i.e. here, at CU_INIT_FINISHED; Blackwell and newer only. The status says
 * whether it took and, if not, CUPTI's reason. */
static void hw_trace_try(void)
{
	char msg[512];
	CUptiResult r = CUPTI_ERROR_NOT_SUPPORTED;
	if (!inj_c.hw_trace)
		return;
	inj_c.hw_trace = 0; /* once */
	if (p_cuptiActivityEnableHWTrace)
		r = p_cuptiActivityEnableHWTrace(1);
	if (r == CUPTI_SUCCESS)
		snprintf(msg, sizeof(msg), "%s, hardware trace on)", inj_c.status);
	else
		snprintf(msg, sizeof(msg), "%s, hardware trace unavailable: %s)", inj_c.status,
			p_cuptiActivityEnableHWTrace ? lp_cupti_result_string(r) : "libcupti lacks cuptiActivityEnableHWTrace");
	lp_inj_set_cupti_status(LP_TRACE_CUPTI_OK, msg);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
	const void *data)
{
	(void)userdata;
	if (!atomic_load_explicit(&inj_c.active, memory_order_relaxed) || !lp_inj_active())
		return;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		on_api(domain, cbid, data);
	} else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *rd = data;
		if (cbid == CUPTI_CBID_RESOURCE_CU_INIT_FINISHED)
			hw_trace_try();
		else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && rd) {
			lp_inj_rank_update();    /* RANK set by the program after we started */
			write_device(rd->context);
		}
		else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED)
			lp_cupti_graph_node(rd, 0);
		else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)
			lp_cupti_graph_node(rd, 1);
		else if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED)
			lp_cupti_graph_exec_made(rd);
	}
}

/* Which API calls we trace, by name: launches, graph launches, copies and sets. */
static uint8_t launch_kind(const char *name, int runtime)
{
	static const struct { const char *prefix; uint8_t kind; } rt[] = {
		{ "cudaLaunchKernel", LP_TRACE_LAUNCH_KERNEL },
		{ "cudaLaunchCooperativeKernel", LP_TRACE_LAUNCH_KERNEL },
		{ "cudaGraphLaunch", LP_TRACE_LAUNCH_GRAPH },
		{ "cudaMemcpy", LP_TRACE_LAUNCH_MEMCPY },
		{ "cudaMemset", LP_TRACE_LAUNCH_MEMSET },
	}, drv[] = {
		{ "cuLaunchKernel", LP_TRACE_LAUNCH_KERNEL },
		{ "cuLaunchCooperativeKernel", LP_TRACE_LAUNCH_KERNEL },
		{ "cuLaunchGrid", LP_TRACE_LAUNCH_KERNEL },
		{ "cuGraphLaunch", LP_TRACE_LAUNCH_GRAPH },
		{ "cuMemcpy", LP_TRACE_LAUNCH_MEMCPY },
		{ "cuMemset", LP_TRACE_LAUNCH_MEMSET },
	};
	size_t i, n = runtime ? sizeof(rt) / sizeof(rt[0]) : sizeof(drv) / sizeof(drv[0]);
	for (i = 0; i < n; i++) {
		const char *p = runtime ? rt[i].prefix : drv[i].prefix;
		if (!strncmp(name, p, strlen(p)))
			return runtime ? rt[i].kind : drv[i].kind;
	}
	return 0;
}

static int enable_api_callbacks(CUpti_CallbackDomain domain, uint32_t size, uint8_t *kinds)
{
	uint32_t cbid;
	int n = 0;
	for (cbid = 1; cbid < size; cbid++) {
		const char *name = NULL;
		uint8_t kind;
		if (p_cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		kind = launch_kind(name, domain == CUPTI_CB_DOMAIN_RUNTIME_API);
		if (!kind)
			continue;
		if (CUPTI_CALL(p_cuptiEnableCallback(1, inj_c.sub, domain, cbid)))
			continue;
		kinds[cbid] = kind;
		if (inj_c.n_api_cbids < sizeof(inj_c.api_cbids) / sizeof(inj_c.api_cbids[0]))
			inj_c.api_cbids[inj_c.n_api_cbids++] = (uint32_t)domain << 16 | cbid;
		n++;
	}
	return n;
}

/* The callbacks every subscription has besides the launch ones: cuProfilerStop (a flush) and the
 * resource callbacks (contexts, graph nodes, executable graphs). */
static void enable_resource_callbacks(void)
{
	CUPTI_CALL(p_cuptiEnableCallback(1, inj_c.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
	CUPTI_CALL(p_cuptiEnableCallback(1, inj_c.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED));
	CUPTI_CALL(p_cuptiEnableCallback(1, inj_c.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED));
	CUPTI_CALL(p_cuptiEnableCallback(1, inj_c.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED));
}

static void enable_fixed_callbacks(void)
{
	CUPTI_CALL(p_cuptiEnableCallback(1, inj_c.sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
	enable_resource_callbacks();
}

/* cuptiSubscribe(_v2) as "llmprof"; `holder` receives the name of another subscriber when CUPTI
 * refuses a second one. */
static CUptiResult subscribe(char *holder, size_t holder_len)
{
	if (p_cuptiSubscribe_v2) {
		CUpti_SubscriberParams sp;
		memset(&sp, 0, sizeof(sp));
		memset(holder, 0, holder_len);
		sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
		sp.subscriberName = "llmprof";
		sp.oldSubscriberName = holder;
		sp.oldSubscriberSize = holder_len;
		return p_cuptiSubscribe_v2(&inj_c.sub, on_callback, NULL, &sp);
	}
	if (holder_len)
		holder[0] = '\0';
	return p_cuptiSubscribe(&inj_c.sub, on_callback, NULL);
}

static uint64_t CUPTIAPI trace_clock(void)
{
	return lp_inj_now_ns();
}

static void start_once(void)
{
	char why[512];
	CUptiResult r;
	int n_rt, n_drv;

	if (lp_inj_env_off("LLMPROF_TRACE_CUPTI")) {
		lp_inj_set_cupti_status(LP_TRACE_CUPTI_DISABLED, "LLMPROF_TRACE_CUPTI=0");
		return;
	}
	if (load_libraries(why, sizeof(why)) < 0) {
		lp_inj_set_cupti_status(LP_TRACE_CUPTI_ERROR, why);
		return;
	}
	{
		/* activity record layouts (CUpti_ActivityKernel10 ...) are those of the headers we were
		 * built with; a newer CUPTI only appends fields, an older one lays them out differently */
		uint32_t v = 0;
		if (CUPTI_CALL(p_cuptiGetVersion(&v)) || v < CUPTI_API_VERSION) {
			snprintf(why, sizeof(why), "libcupti API version %u is older than the %u this library was built with",
				v, (unsigned)CUPTI_API_VERSION);
			lp_inj_set_cupti_status(LP_TRACE_CUPTI_ERROR, why);
			return;
		}
	}
	/* large CUPTI buffers: a completed buffer costs a callback and a wake-up; 8 MB hold ~30k
	 * kernel records */
	inj_c.buf_bytes = (size_t)8 << 20;
	{
		const char *s = getenv("LLMPROF_TRACE_CUPTI_BUFFER_MB");
		long v = s ? strtol(s, NULL, 10) : 0;
		if (v >= 1 && v <= 64)
			inj_c.buf_bytes = (size_t)v << 20;
	}
	inj_c.max_bufs = 16;
	{
		const char *s = getenv("LLMPROF_TRACE_CUPTI_BUFFERS");
		long v = s ? strtol(s, NULL, 10) : 0;
		if (v >= 2 && v <= 1024)
			inj_c.max_bufs = (unsigned)v;
	}

	{
		char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64];
		r = subscribe(holder, sizeof(holder));
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
			holder[sizeof(holder) - 1] = '\0';
			if (p_cuptiSubscribe_v2)
				snprintf(why, sizeof(why), "held by '%s'", holder[0] ? holder : "another CUPTI subscriber");
			else
				snprintf(why, sizeof(why), "held by another CUPTI subscriber (nsys, ncu, Kineto ...)");
			lp_inj_set_cupti_status(LP_TRACE_CUPTI_HELD, why);
			return;
		}
	}
	if (r != CUPTI_SUCCESS) {
		snprintf(why, sizeof(why), "cuptiSubscribe failed: %s", lp_cupti_result_string(r));
		lp_inj_set_cupti_status(LP_TRACE_CUPTI_ERROR, why);
		return;
	}

	/* driver API only: every runtime launch/copy/graph launch calls one of these with its own
	 * correlation id, so one callback pair per launch instead of two */
	inj_c.runtime_api = lp_inj_env_on("LLMPROF_TRACE_RUNTIME_API");
	/* diagnostics for the overhead benchmark (docs/tracer.md; also LLMPROF_TRACE_CLOCK_CALLBACK,
	 * _COPY_ACTIVITY and _OVERHEAD_ACTIVITY below): LLMPROF_TRACE_API_CALLBACKS=0 drops
	 * the launch callbacks (kernels then carry no range), LLMPROF_TRACE_KERNEL_ACTIVITY=0 the
	 * kernel records; each measures what the other half costs */
	n_rt = n_drv = 0;
	if (!lp_inj_env_off("LLMPROF_TRACE_API_CALLBACKS")) {
		n_rt = inj_c.runtime_api
			? enable_api_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, inj_c.kind_runtime)
			: 0;
		n_drv = enable_api_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, inj_c.kind_driver);
	}
	enable_fixed_callbacks();
	inj_c.subscribed = 1;
	inj_c.hw_trace = lp_inj_env_on("LLMPROF_TRACE_HW_TRACE");
	if (inj_c.hw_trace)
		CUPTI_CALL(p_cuptiEnableCallback(1, inj_c.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CU_INIT_FINISHED));

	if (CUPTI_CALL(p_cuptiActivityRegisterCallbacks(lp_cupti_buffer_requested, lp_cupti_buffer_completed))) {
		lp_inj_set_cupti_status(LP_TRACE_CUPTI_ERROR, "cuptiActivityRegisterCallbacks failed");
		CUPTI_CALL(p_cuptiUnsubscribe(inj_c.sub));
		inj_c.subscribed = 0;
		return;
	}
	/* one clock: CUPTI stamps activity with our CLOCK_REALTIME; otherwise CLOCK_SYNC records */
	inj_c.clock_registered = p_cuptiActivityRegisterTimestampCallback && !lp_inj_env_off("LLMPROF_TRACE_CLOCK_CALLBACK") &&
		!CUPTI_CALL(p_cuptiActivityRegisterTimestampCallback(trace_clock));
	atomic_store(&inj_c.active, 1);
	inj_c.kernel_activity = !lp_inj_env_off("LLMPROF_TRACE_KERNEL_ACTIVITY");
	inj_c.copy_activity = !lp_inj_env_off("LLMPROF_TRACE_COPY_ACTIVITY");
	if (inj_c.kernel_activity &&
	    CUPTI_CALL(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) {
		atomic_store(&inj_c.active, 0);
		lp_inj_set_cupti_status(LP_TRACE_CUPTI_ERROR, "cannot enable CONCURRENT_KERNEL activity");
		CUPTI_CALL(p_cuptiUnsubscribe(inj_c.sub));
		inj_c.subscribed = 0;
		return;
	}
	if (inj_c.copy_activity) {
		CUPTI_CALL(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
		CUPTI_CALL(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
	}
	inj_c.overhead_activity = !lp_inj_env_off("LLMPROF_TRACE_OVERHEAD_ACTIVITY") &&
		!CUPTI_CALL(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD));
	inj_c.skip_all = !lp_inj_env_off("LLMPROF_TRACE_SKIP_ALL");
	/* diagnostic (bench/tracer/README.md run 22): an unrecorded unit detaches CUPTI altogether */
	inj_c.detach = inj_c.skip_all && lp_inj_env_on("LLMPROF_TRACE_SKIP_DETACH");
	/* one log line per attach and detach, with their parts (bench/tracer/README.md run 23) */
	inj_c.log_cycles = lp_inj_env_on("LLMPROF_TRACE_LOG_CYCLES");
	/* CUPTI's own worker delivers full buffers every period; ours also asks for the completed
	 * records of partial buffers (LLMPROF_TRACE_CUPTI_PERIODIC_FLUSH=0: not, then a SIGKILLed
	 * process loses what CUPTI still holds) */
	inj_c.periodic_flush = !lp_inj_env_off("LLMPROF_TRACE_CUPTI_PERIODIC_FLUSH");
	CUPTI_CALL(p_cuptiActivityFlushPeriod(lp_inj_flush_ms()));
	snprintf(inj_c.status, sizeof(inj_c.status), "ok (%d runtime + %d driver API callbacks, %s clock", n_rt, n_drv,
		inj_c.clock_registered ? "shared" : "synced");
	snprintf(why, sizeof(why), "%s)", inj_c.status);
	lp_inj_set_cupti_status(LP_TRACE_CUPTI_OK, why);
}

void lp_inj_cupti_start(void)
{
	CUcontext ctx = NULL;
	if (!lp_inj_init() || atomic_load(&inj_c.forked))
		return;
	pthread_once(&inj_c.once, start_once);
	/* started after the program made its context (LLMPROF_TRACE_CUPTI_DELAY, _FROM_NVTX): CUPTI
	 * never reported its creation, so the device's properties come from the context current on
	 * this (the program's) thread; once per device (write_device) */
	if (lp_inj_cupti_active() && p_cuCtxGetCurrent && p_cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx)
		write_device(ctx);
}

void lp_inj_cupti_flush(int forced)
{
	uint64_t t0, dt;
	/* 0: buffers whose records are all complete, full or not (CUPTI's own periodic flush only
	 * returns full ones); FORCED: everything, incomplete records included. Timed: the launching
	 * threads may wait while CUPTI flushes (the log says how long flushes took at the end). */
	if (!atomic_load(&inj_c.active) || inj_c.finalized || atomic_load(&inj_c.forked) || (!forced && !inj_c.periodic_flush))
		return;
	/* sampled: a periodic flush waits for an unrecorded unit (CUPTI off, no launch to contend
	 * with; 7 of 8 decode steps) unless it has waited MAX_FLUSH_DEFERRED periods already */
	if (!forced && lp_inj_sample_on() && atomic_load(&inj_c.recording) &&
	    inj_c.flush_deferred < MAX_FLUSH_DEFERRED) {
		inj_c.flush_deferred++;
		return;
	}
	inj_c.flush_deferred = 0;
	t0 = lp_inj_now_ns();
	pthread_mutex_lock(&inj_c.api_lock);
	if (!inj_c.detached)
		CUPTI_CALL(p_cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0));
	pthread_mutex_unlock(&inj_c.api_lock);
	dt = lp_inj_now_ns() - t0;
	inj_c.flushes++;
	inj_c.flush_ns += dt;
	if (dt > inj_c.flush_max_ns)
		inj_c.flush_max_ns = dt;
}

void lp_inj_cupti_finalize(void)
{
	const char *s = getenv("LLMPROF_TRACE_FINALIZE");
	if (!atomic_load(&inj_c.active) || inj_c.finalized || atomic_load(&inj_c.forked))
		return;
	inj_c.finalized = 1;
	atomic_store(&inj_c.active, 0);
	lp_inj_log("cupti: %llu flushes took %.3f ms in all, %.3f ms at most; %llu sampling switches %.3f ms in all, %.3f us at most",
		(unsigned long long)inj_c.flushes, (double)inj_c.flush_ns / 1e6, (double)inj_c.flush_max_ns / 1e6,
		(unsigned long long)atomic_load(&inj_c.toggles), (double)atomic_load(&inj_c.toggle_ns) / 1e6,
		(double)atomic_load(&inj_c.toggle_max_ns) / 1e3);
	if (atomic_load(&inj_c.attaches) || atomic_load(&inj_c.detaches))
		lp_inj_log("cupti: %llu detaches took %.3f ms in all, %.3f ms at most; %llu attaches %.3f ms in all, %.3f ms at most",
			(unsigned long long)atomic_load(&inj_c.detaches), (double)atomic_load(&inj_c.detach_ns) / 1e6,
			(double)atomic_load(&inj_c.detach_max_ns) / 1e6, (unsigned long long)atomic_load(&inj_c.attaches),
			(double)atomic_load(&inj_c.attach_ns) / 1e6, (double)atomic_load(&inj_c.attach_max_ns) / 1e6);
	pthread_mutex_lock(&inj_c.api_lock);
	if (!inj_c.detached)
		CUPTI_CALL(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	pthread_mutex_unlock(&inj_c.api_lock);
	lp_inj_cupti_drain();
	pthread_mutex_lock(&inj_c.api_lock);
	if (inj_c.subscribed)
		CUPTI_CALL(p_cuptiUnsubscribe(inj_c.sub));
	inj_c.subscribed = 0;
	if (!inj_c.detached && !(s && !strcmp(s, "0")))
		CUPTI_CALL(p_cuptiFinalize());
	inj_c.detached = 1;
	pthread_mutex_unlock(&inj_c.api_lock);
	lp_inj_cupti_drain();
}

int lp_inj_cupti_forked(void)
{
	/* a child of a process that used CUDA cannot use it (nor CUPTI) safely */
	if (!atomic_load(&inj_c.active))
		return 0;
	atomic_store(&inj_c.forked, 1);
	atomic_store(&inj_c.active, 0);
	inj_c.done_head = inj_c.done_tail = NULL;
	pthread_mutex_init(&inj_c.lock, NULL);
	pthread_mutex_init(&inj_c.api_lock, NULL);
	pthread_mutex_init(&inj_c.drain_lock, NULL);
	return 1;
}

int lp_inj_cupti_active(void)
{
	return atomic_load(&inj_c.active) && !inj_c.finalized && !atomic_load(&inj_c.forked);
}

/* Diagnostic (LLMPROF_TRACE_SKIP_DETACH=1, bench/tracer/README.md run 22): the switch detaches
 * CUPTI (cuptiFinalize) at the push of an unrecorded unit and attaches it again at its pop. CUPTI
 * leaves its activity layer on the launch path after the kinds are disabled (about 1 us a launch
 * on an H100, run 22's cupti_attach); only cuptiFinalize removes it, at the price of a detach and
 * an attach (milliseconds). inj_c.api_lock keeps the flush thread's cuptiActivityFlushAll out. */
static void detach(void)
{
	uint64_t t0 = lp_inj_now_ns(), t1 = t0, t2 = t0, t3 = t0;
	pthread_mutex_lock(&inj_c.api_lock);
	if (!inj_c.detached) {
		CUPTI_CALL(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
		t1 = lp_inj_now_ns();
		/* this epoch's records now, while CUPTI still reads them with this epoch's numbers */
		lp_inj_cupti_drain();
		t2 = lp_inj_now_ns();
		if (inj_c.subscribed && !CUPTI_CALL(p_cuptiUnsubscribe(inj_c.sub)))
			inj_c.subscribed = 0;
		if (!CUPTI_CALL(p_cuptiFinalize()))
			inj_c.detached = 1;
		t3 = lp_inj_now_ns();
	}
	pthread_mutex_unlock(&inj_c.api_lock);
	if (t3 > t0 && inj_c.log_cycles)
		lp_inj_log("cupti: detach (thread %u) at %.3f ms: flush %.3f ms, records %.3f ms, finalize %.3f ms",
			lp_inj_tid(), (double)t0 / 1e6, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6);
}

static void attach(void)
{
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64];
	CUptiResult r;
	unsigned i;
	uint64_t t0 = lp_inj_now_ns(), t1 = t0, t2 = t0, t3 = t0, ta = t0, tb = t0;
	pthread_mutex_lock(&inj_c.api_lock);
	/* held (the warm-up): also for an attach ahead that checked before the hold began */
	if (inj_c.detached && !atomic_load(&inj_c.hold)) {
		inj_c.detached = 0;
		/* a new epoch of correlation ids, past every id written so far */
		atomic_store(&inj_c.corr_base, atomic_load(&inj_c.corr_max) + 1);
		atomic_store(&inj_c.corr_min, 0);
		CUPTI_CALL(p_cuptiActivityRegisterCallbacks(lp_cupti_buffer_requested, lp_cupti_buffer_completed));
		ta = lp_inj_now_ns();
		if (inj_c.clock_registered)
			CUPTI_CALL(p_cuptiActivityRegisterTimestampCallback(trace_clock));
		tb = lp_inj_now_ns();
		CUPTI_CALL(p_cuptiActivityFlushPeriod(lp_inj_flush_ms()));
		t1 = lp_inj_now_ns();
		/* subscribed already: the warm-up's resource callbacks (lp_inj_cupti_hold's graphs) */
		r = inj_c.subscribed ? CUPTI_SUCCESS : subscribe(holder, sizeof(holder));
		t2 = lp_inj_now_ns();
		if (r == CUPTI_SUCCESS) {
			inj_c.subscribed = 1;
			enable_fixed_callbacks();
			for (i = 0; i < inj_c.n_api_cbids; i++)
				CUPTI_CALL(p_cuptiEnableCallback(1, inj_c.sub, (CUpti_CallbackDomain)(inj_c.api_cbids[i] >> 16),
					(CUpti_CallbackId)(inj_c.api_cbids[i] & 0xffff)));
		} else {
			lp_inj_log("cupti: subscribing again failed (%s): kernels from here on carry no range",
				lp_cupti_result_string(r));
		}
		t3 = lp_inj_now_ns();
	}
	pthread_mutex_unlock(&inj_c.api_lock);
	if (t3 > t0 && inj_c.log_cycles)
		lp_inj_log("cupti: attach (thread %u) at %.3f ms: init %.3f ms (buffers %.3f, clock %.3f, period %.3f), "
			"subscribe %.3f ms, callbacks %.3f ms", lp_inj_tid(), (double)t0 / 1e6, (double)(t1 - t0) / 1e6,
			(double)(ta - t0) / 1e6, (double)(tb - ta) / 1e6, (double)(t1 - tb) / 1e6, (double)(t2 - t1) / 1e6,
			(double)(t3 - t2) / 1e6);
}

/* The activity kinds the switch turns on and off. */
static void kinds(int on)
{
	__typeof__(p_cuptiActivityEnable) f = on ? p_cuptiActivityEnable : p_cuptiActivityDisable;
	if (inj_c.kernel_activity)
		CUPTI_CALL(f(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	if (inj_c.copy_activity) {
		CUPTI_CALL(f(CUPTI_ACTIVITY_KIND_MEMCPY));
		CUPTI_CALL(f(CUPTI_ACTIVITY_KIND_MEMSET));
	}
	if (inj_c.skip_all && inj_c.overhead_activity)
		CUPTI_CALL(f(CUPTI_ACTIVITY_KIND_OVERHEAD));
}

/* Sampling's switch (sample.c serializes the calls). Off: the launch callbacks of the APIs seen so
 * far, then the activity kinds; on: the other way round. Timed, since this is the whole price of
 * the switch. With skip_all (the default) the overhead records and the cuProfilerStop callback go
 * off too, so that nothing of ours stays enabled in the driver API domain or the activity kinds
 * while a unit is skipped (LLMPROF_TRACE_SKIP_ALL=0 keeps them: the benchmark's comparison).
 * What stays is CUPTI's own: its activity layer on the launch path, which only a detach removes
 * (the diagnostic above; bench/tracer/README.md run 22). */
void lp_inj_cupti_record(int on)
{
	uint64_t t0, dt, max;
	uint32_t seen[sizeof(inj_c.seen) / sizeof(inj_c.seen[0])];
	unsigned i, n;
	if (!lp_inj_cupti_active())
		return;
	t0 = lp_inj_now_ns();
	atomic_store(&inj_c.recording, on);
	if (inj_c.detach) {
		if (on) {
			attach();
			kinds(1);
		} else {
			kinds(0);
			detach();
		}
	} else {
		if (on)
			kinds(1);
		if (inj_c.skip_all)
			CUPTI_CALL(p_cuptiEnableCallback(on ? 1 : 0, inj_c.sub, CUPTI_CB_DOMAIN_DRIVER_API,
				CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
		/* a copy: CUPTI is never called with inj_c.lock held (its buffer callback takes inj_c.lock
		 * while a flush holds CUPTI's own lock) */
		pthread_mutex_lock(&inj_c.lock);
		n = inj_c.n_seen;
		memcpy(seen, inj_c.seen, n * sizeof(seen[0]));
		pthread_mutex_unlock(&inj_c.lock);
		for (i = 0; i < n; i++)
			CUPTI_CALL(p_cuptiEnableCallback(on ? 1 : 0, inj_c.sub, (CUpti_CallbackDomain)(seen[i] >> 16),
				(CUpti_CallbackId)(seen[i] & 0xffff)));
		if (!on)
			kinds(0);
	}
	dt = lp_inj_now_ns() - t0;
	atomic_fetch_add(&inj_c.toggles, 1);
	atomic_fetch_add(&inj_c.toggle_ns, dt);
	max = atomic_load(&inj_c.toggle_max_ns);
	while (dt > max && !atomic_compare_exchange_weak(&inj_c.toggle_max_ns, &max, dt)) {
	}
}

/* ---- bursts (sample.c; docs/tracer.md "Bursts") ----
 * CUPTI detached (cuptiFinalize) over the long stretches between recorded bursts: the only state
 * in which CUPTI leaves nothing on the launch path (bench/tracer/README.md run 22). The caller has
 * waited for the GPU to finish the recorded work, so the forced flush before the finalize finds
 * complete records. */

static void add_time(_Atomic uint64_t *n, _Atomic uint64_t *ns, _Atomic uint64_t *max_ns, uint64_t dt)
{
	uint64_t max = atomic_load(max_ns);
	atomic_fetch_add(n, 1);
	atomic_fetch_add(ns, dt);
	while (dt > max && !atomic_compare_exchange_weak(max_ns, &max, dt)) {
	}
}

void lp_inj_cupti_detach(void)
{
	uint64_t t0;
	if (!lp_inj_cupti_active() || inj_c.detached)
		return;
	t0 = lp_inj_now_ns();
	atomic_store(&inj_c.recording, 0);
	kinds(0);
	detach();
	add_time(&inj_c.detaches, &inj_c.detach_ns, &inj_c.detach_max_ns, lp_inj_now_ns() - t0);
}

static void attach_timed(void)
{
	uint64_t t0 = lp_inj_now_ns();
	int was;
	pthread_mutex_lock(&inj_c.api_lock);
	was = inj_c.detached && !atomic_load(&inj_c.hold);
	pthread_mutex_unlock(&inj_c.api_lock);
	if (!was)
		return;
	attach();
	add_time(&inj_c.attaches, &inj_c.attach_ns, &inj_c.attach_max_ns, lp_inj_now_ns() - t0);
}

void lp_inj_cupti_attach(void)
{
	if (!lp_inj_cupti_active() || atomic_load(&inj_c.hold))
		return;
	atomic_store(&inj_c.attach_ahead, 0);
	attach_timed();
	if (!atomic_load(&inj_c.recording)) {
		uint64_t t0 = lp_inj_now_ns();
		kinds(1);
		atomic_store(&inj_c.recording, 1);
		if (inj_c.log_cycles)
			lp_inj_log("cupti: kinds on (thread %u) at %.3f ms: %.3f ms", lp_inj_tid(), (double)t0 / 1e6,
				(double)(lp_inj_now_ns() - t0) / 1e6);
	}
}

void lp_inj_cupti_attach_ahead(int record)
{
	if (!lp_inj_cupti_active() || !inj_c.detached || atomic_load(&inj_c.hold) ||
	    atomic_exchange(&inj_c.attach_ahead, record ? 2 : 1))
		return;
	lp_inj_wake();
}

int lp_inj_cupti_settle(void)
{
	/* attach_ahead stays set while the flush thread attaches (lp_inj_cupti_service clears it
	 * after): attach_timed then waits on api_lock for that attach and finds CUPTI attached */
	if (!lp_inj_cupti_active() || atomic_load(&inj_c.hold) || !atomic_load(&inj_c.attach_ahead))
		return 0;
	attach_timed();
	atomic_store(&inj_c.attach_ahead, 0);
	return 1;
}

void lp_inj_cupti_service(void)
{
	int ahead = atomic_load(&inj_c.attach_ahead);
	if (ahead && atomic_load(&inj_c.hold)) {
		atomic_store(&inj_c.attach_ahead, 0); /* asked before the hold began */
		return;
	}
	if (ahead && lp_inj_cupti_active()) {
		if (ahead == 2) {
			lp_inj_cupti_attach(); /* the kinds on as well */
		} else {
			attach_timed();
			atomic_store(&inj_c.attach_ahead, 0);
		}
	}
}

/* trace.warmup=graphs: after the warm-up's detach, subscribed again for the resource callbacks
 * alone (contexts, graph nodes, executable graphs): no launch callback, no activity kind, so that a graph captured
 * inside the warm-up keeps the ranges it was captured in. CUPTI stays `detached` (no flush). */
static void subscribe_resources(void)
{
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64];
	pthread_mutex_lock(&inj_c.api_lock);
	if (inj_c.detached && !inj_c.subscribed) {
		if (subscribe(holder, sizeof(holder)) == CUPTI_SUCCESS) {
			inj_c.subscribed = 1;
			enable_resource_callbacks();
		} else {
			lp_inj_log("cupti: subscribing for the warm-up's graphs failed: they carry no capture range");
		}
	}
	pthread_mutex_unlock(&inj_c.api_lock);
}

/* The program's warm-up (sample.c; docs/tracer.md "The warm-up"): CUPTI present while a process
 * launches its kernels for the first time costs its later steps 2.5-4% though detached for all
 * but a few of them (bench/tracer/README.md runs 29 and 30); the reports leave the warm-up out,
 * so the tracer detaches for it. On (1, or 2: keeping the graph node callbacks,
 * subscribe_resources): detached (a no-op when detached already) and held so; off: attached again
 * with the kinds on. The caller serializes it with the bursts' switch. */
void lp_inj_cupti_hold(int on)
{
	if (on) {
		atomic_store(&inj_c.hold, 1);
		lp_inj_cupti_detach();
		if (on == 2)
			subscribe_resources();
		if (inj_c.log_cycles)
			lp_inj_log("cupti: detached for the warm-up%s at %.3f ms", on == 2 ? " (graph callbacks kept)" : "",
				(double)lp_inj_now_ns() / 1e6);
	} else if (atomic_exchange(&inj_c.hold, 0)) {
		lp_inj_cupti_attach();
		if (inj_c.log_cycles)
			lp_inj_log("cupti: attached after the warm-up at %.3f ms", (double)lp_inj_now_ns() / 1e6);
	}
}

int lp_inj_cupti_graphs(void)
{
	return atomic_load_explicit(&inj_c.graphs, memory_order_relaxed);
}

int lp_inj_cupti_attached(void)
{
	return lp_inj_cupti_active() && atomic_load(&inj_c.recording);
}

int lp_inj_cupti_ready(void)
{
	int detached;
	if (!lp_inj_cupti_active() || atomic_load(&inj_c.hold))
		return 0;
	pthread_mutex_lock(&inj_c.api_lock); /* an attach in progress holds it: waited for, then 2 */
	detached = inj_c.detached;
	pthread_mutex_unlock(&inj_c.api_lock);
	return !detached ? 2 : atomic_load(&inj_c.attach_ahead) ? 1 : 0;
}

void lp_inj_cupti_cycle_cost(uint64_t out[6])
{
	out[0] = atomic_load(&inj_c.detaches);
	out[1] = atomic_load(&inj_c.detach_ns);
	out[2] = atomic_load(&inj_c.detach_max_ns);
	out[3] = atomic_load(&inj_c.attaches);
	out[4] = atomic_load(&inj_c.attach_ns);
	out[5] = atomic_load(&inj_c.attach_max_ns);
}

void lp_inj_cupti_record_cost(uint64_t *n, uint64_t *total_ns, uint64_t *max_ns)
{
	*n = atomic_load(&inj_c.toggles);
	*total_ns = atomic_load(&inj_c.toggle_ns);
	*max_ns = atomic_load(&inj_c.toggle_max_ns);
}

LP_INJ_EXPORT int InitializeInjection(void);

int InitializeInjection(void)
{
	/* diagnostic (bench/tracer/README.md run 26): LLMPROF_TRACE_CUPTI_DELAY=N, CUPTI started by
	 * sample.c before the N-th generation instead of here */
	if (!lp_inj_cupti_delay())
		lp_inj_cupti_start();
	return 1; /* never fail the host's cuInit */
}

/* Diagnostic (bench/tracer/README.md runs 26 and 27): LLMPROF_TRACE_CUPTI_DELAY=N (1..1000000)
 * leaves CUPTI untouched at cuInit; sample.c starts it at the pop of the (N-1)-th parent range of
 * the sampling unit, so the generations before the N-th run as under the tracer without CUPTI
 * (NVTX ranges and stage marks) and one process can compare those steps with its detached steps
 * after CUPTI's first attach; N = 1: at the first stage range's push (the program's set-up, its
 * context, libraries and allocations, made without CUPTI; the first generation's kernels loaded
 * with it). `warmup` (run 29): at the pop of the program's `warmup` range (the reports leave the
 * warm-up out: its kernels cost and show nothing), or at the first stage range's push outside one
 * (a program that marks no warm-up: as N = 1). Kernels before the start are not recorded; the
 * device's properties are read at the start from the program's current context
 * (lp_inj_cupti_start). 0 when unset or not a number in range. */
uint32_t lp_inj_cupti_delay(void)
{
	const char *s = getenv("LLMPROF_TRACE_CUPTI_DELAY");
	char *end = NULL;
	unsigned long v;
	if (!s || !*s)
		return 0;
	if (!strcmp(s, "warmup"))
		return LP_INJ_CUPTI_DELAY_WARMUP;
	v = strtoul(s, &end, 10);
	return *end || v < 1 || v > 1000000 ? 0 : (uint32_t)v;
}
