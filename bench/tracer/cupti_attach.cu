// cupti_attach.cu: what CUPTI costs a launch while attached, idle and after detaching, and what
// attaching and detaching cost (bench/tracer/README.md run 22). One process, no injection:
//   plain        launches before CUPTI is touched
//   on           subscribed, the driver API callbacks and CONCURRENT_KERNEL activity on
//   idle         still subscribed (activity callbacks registered), the callbacks and the kind off:
//                the sampled tracer's skipped state until run 22
//   unsubscribed the same after cuptiUnsubscribe (the skipped state since run 22); on_again:
//                subscribed and enabled again
//   detached     after cuptiFinalize
//   subscribed_only, subscribed_then_not, activity_only, activity_then_off, finalized: each
//                part alone, cuptiFinalize between
//   switch       --cycles times: off (callbacks and kind off, unsubscribe), 448 launches, on
//                (subscribe, callbacks, kind): the time of each half; after_switches
//   cycles       --cycles times: attach (subscribe, callbacks, activity), 64 launches, detach
//                (flush, unsubscribe, finalize): the time of each half; after_cycles
// Launch sections: --batches batches of 256 empty launches timed on the CPU clock (the GPU
// waited for outside the timed part), the median ns per launch. Prints one JSON line.
//   nvcc -O2 cupti_attach.cu -o cupti_attach -lcupti -lcuda
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

__global__ void k_empty(int *p)
{
	if (p)
		*p = 1;
}

static double now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

#define CK(x)                                                                        \
	do {                                                                         \
		CUptiResult r_ = (x);                                                \
		if (r_ != CUPTI_SUCCESS) {                                           \
			const char *s_ = "";                                         \
			cuptiGetResultString(r_, &s_);                               \
			fprintf(stderr, "cupti_attach: %s: %s\n", #x, s_);           \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

static uint64_t records;

static void CUPTIAPI buf_req(uint8_t **b, size_t *size, size_t *max)
{
	*size = 1 << 20;
	*b = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI buf_done(CUcontext, uint32_t, uint8_t *b, size_t, size_t valid)
{
	CUpti_Activity *rec = nullptr;
	while (cuptiActivityGetNextRecord(b, valid, &rec) == CUPTI_SUCCESS)
		records++;
	free(b);
}

static uint64_t callbacks;

static void CUPTIAPI on_cb(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *)
{
	callbacks++;
}

static CUpti_SubscriberHandle sub;
static std::vector<CUpti_CallbackId> launch_cbids; // what the tracer enables: launches, copies, sets

static void find_launch_cbids()
{
	static const char *const pre[] = { "cuLaunchKernel", "cuLaunchCooperativeKernel", "cuLaunchGrid", "cuGraphLaunch",
		"cuMemcpy", "cuMemset" };
	for (uint32_t c = 1; c < CUPTI_DRIVER_TRACE_CBID_SIZE; c++) {
		const char *n = nullptr;
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, c, &n) != CUPTI_SUCCESS || !n)
			continue;
		for (const char *p : pre)
			if (!strncmp(n, p, strlen(p))) {
				launch_cbids.push_back(c);
				break;
			}
	}
}

static void attach()
{
	CK(cuptiSubscribe(&sub, on_cb, nullptr));
	CK(cuptiActivityRegisterCallbacks(buf_req, buf_done));
	CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
}

static void idle()
{
	CK(cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API));
	CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
}

static void detach()
{
	CK(cuptiActivityFlushAll(1));
	CK(cuptiUnsubscribe(sub));
	CK(cuptiFinalize());
}

static double launches(cudaStream_t s, int batches)
{
	std::vector<double> v;
	for (int b = 0; b < batches; b++) {
		double t0 = now_ns();
		for (int i = 0; i < 256; i++)
			k_empty<<<1, 32, 0, s>>>(nullptr);
		double t1 = now_ns();
		cudaStreamSynchronize(s);
		v.push_back((t1 - t0) / 256);
	}
	return median(v);
}

struct row {
	const char *name;
	double ns;
};

int main(int argc, char **argv)
{
	int batches = 200, cycles = 20;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--batches"))
			batches = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--cycles"))
			cycles = atoi(argv[i + 1]);
	}
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return 1;
	std::vector<row> rows;
	auto m = [&](const char *name) {
		launches(s, 5);
		rows.push_back({ name, launches(s, batches) });
	};
	launches(s, 20);
	m("plain");
	// the sampled tracer's switch as it was: subscribed throughout
	attach();
	m("on");
	idle();
	m("idle");
	double t0 = now_ns();
	CK(cuptiUnsubscribe(sub));
	double unsub_us = (now_ns() - t0) / 1e3;
	m("unsubscribed");     // activity registered, every kind off, no subscriber
	t0 = now_ns();
	CK(cuptiSubscribe(&sub, on_cb, nullptr));
	CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	double resub_us = (now_ns() - t0) / 1e3;
	m("on_again");
	t0 = now_ns();
	detach();
	double first_detach = now_ns() - t0;
	m("detached");
	// the parts alone
	CK(cuptiSubscribe(&sub, on_cb, nullptr));
	m("subscribed_only");
	CK(cuptiUnsubscribe(sub));
	m("subscribed_then_not");
	CK(cuptiFinalize());
	CK(cuptiActivityRegisterCallbacks(buf_req, buf_done));
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	m("activity_only");
	CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	m("activity_then_off");
	CK(cuptiActivityFlushAll(1));
	CK(cuptiFinalize());
	m("finalized");
	// the new switch's price: off = disable + unsubscribe, on = subscribe + enable (the driver
	// domain in one call; then, below, each launch callback on its own as the tracer does)
	std::vector<double> offs, ons, ons_cbid;
	attach();
	for (int c = 0; c < cycles; c++) {
		for (int i = 0; i < 64; i++)
			k_empty<<<1, 32, 0, s>>>(nullptr);
		t0 = now_ns();
		CK(cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API));
		CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		CK(cuptiUnsubscribe(sub));
		double t1 = now_ns();
		for (int i = 0; i < 448; i++)
			k_empty<<<1, 32, 0, s>>>(nullptr);
		double t2 = now_ns();
		CK(cuptiSubscribe(&sub, on_cb, nullptr));
		CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
		CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		ons.push_back(now_ns() - t2);
		offs.push_back(t1 - t0);
		cudaStreamSynchronize(s);
	}
	find_launch_cbids();
	for (int c = 0; c < cycles; c++) {
		CK(cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API));
		CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		CK(cuptiUnsubscribe(sub));
		for (int i = 0; i < 64; i++)
			k_empty<<<1, 32, 0, s>>>(nullptr);
		t0 = now_ns();
		CK(cuptiSubscribe(&sub, on_cb, nullptr));
		for (CUpti_CallbackId c : launch_cbids)
			CK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, c));
		CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		ons_cbid.push_back(now_ns() - t0);
		cudaStreamSynchronize(s);
	}
	m("on_cbids");         // subscribed with the launch callbacks and the kind on
	idle();
	CK(cuptiUnsubscribe(sub));
	m("after_switches");
	detach();
	// attach and detach from nothing (cuptiFinalize in between)
	std::vector<double> at, de;
	for (int c = 0; c < cycles; c++) {
		t0 = now_ns();
		attach();
		double t1 = now_ns();
		for (int i = 0; i < 64; i++)
			k_empty<<<1, 32, 0, s>>>(nullptr);
		cudaStreamSynchronize(s);
		double t2 = now_ns();
		detach();
		de.push_back(now_ns() - t2);
		at.push_back(t1 - t0);
	}
	m("after_cycles");
	printf("{");
	for (const auto &r : rows)
		printf("\"%s_ns\": %.1f, ", r.name, r.ns);
	printf("\"unsubscribe_us\": %.1f, \"resubscribe_us\": %.1f, \"switch_off_us\": %.1f, \"switch_on_us\": %.1f, "
		"\"switch_on_cbids_us\": %.1f, \"launch_cbids\": %zu, \"first_detach_us\": %.1f, \"attach_us\": %.1f, \"detach_us\": %.1f, \"records\": %llu, \"callbacks\": %llu}\n",
		unsub_us, resub_us, median(offs) / 1e3, median(ons) / 1e3,
		median(ons_cbid) / 1e3, launch_cbids.size(), first_detach / 1e3, median(at) / 1e3,
		median(de) / 1e3, (unsigned long long)records, (unsigned long long)callbacks);
	cudaStreamDestroy(s);
	return 0;
}
