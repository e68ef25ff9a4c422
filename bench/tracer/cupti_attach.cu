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
// --residue: the test of run 26, below residue_main; --ctx: run 27's, below ctx_main.
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

// --residue [--early] [--batches N] [--cycles N] (bench/tracer/README.md run 26): does a kernel
// first loaded while CUPTI was attached keep a cost on its launches after CUPTI detaches
// (cuptiFinalize)? Run 26 found the bursts' detached decode steps of examples/hf_generate.py
// about 2% slower than the same steps of the tracer without CUPTI, while the sections above
// (run 22), whose kernel was loaded before CUPTI was first touched, saw nothing left after a
// detach. PyTorch loads its kernels lazily, at their first launch, which in a
// traced process is a recorded step. Three kernels of identical code:
//   k_pre   first launched before CUPTI is touched
//   k_att   first launched while attached (subscribed, launch callbacks, CONCURRENT_KERNEL on)
//   k_post  first launched after the detach
// With --early CUPTI is attached before the CUDA context exists (as an injected tracer is, at
// cuInit), so k_pre too is loaded while attached. Sections: the three kernels' launch cost
// detached (after one cycle, and after --cycles more attach/detach cycles), and attached;
// batches of 256 launches of one kernel, the kernels in turn batch after batch (so the host's
// speed changes fall on all three alike), median ns per launch; and the three on a second stream
// created after the detach (a residue kept per stream rather than per kernel shows there: the
// first stream exists from before the detach, with --early from before the context's first
// launch). Beside the launches, the other runtime calls PyTorch makes around each operator
// (cudaGetDevice, cudaGetLastError, cudaStreamIsCapturing, cudaEventRecord; ns for the four) in
// the same states. Prints one JSON line.
__global__ void k_pre(int *p)
{
	if (p)
		*p = 1;
}

__global__ void k_att(int *p)
{
	if (p)
		*p = 2;
}

__global__ void k_post(int *p)
{
	if (p)
		*p = 3;
}

// what the tracer does: subscribe, the launch callbacks, the kernel activity kind
static void residue_attach()
{
	CK(cuptiSubscribe(&sub, on_cb, nullptr));
	CK(cuptiActivityRegisterCallbacks(buf_req, buf_done));
	for (uint32_t c = 1; c < CUPTI_DRIVER_TRACE_CBID_SIZE; c++) {
		const char *n = nullptr;
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, c, &n) == CUPTI_SUCCESS && n &&
		    !strncmp(n, "cuLaunchKernel", 14))
			CK(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, c));
	}
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
}

static void residue_detach()
{
	CK(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	CK(cuptiActivityFlushAll(1));
	CK(cuptiUnsubscribe(sub));
	CK(cuptiFinalize());
}

typedef void (*kern)(int *);

static cudaEvent_t api_ev;

// the four calls, 256 times a batch; the median ns for the four
static double api_ns(cudaStream_t s, int batches)
{
	std::vector<double> v;
	int d = 0;
	cudaStreamCaptureStatus cs;
	for (int b = 0; b < batches; b++) {
		double t0 = now_ns();
		for (int i = 0; i < 256; i++) {
			cudaGetDevice(&d);
			cudaGetLastError();
			cudaStreamIsCapturing(s, &cs);
			cudaEventRecord(api_ev, s);
		}
		double t1 = now_ns();
		cudaStreamSynchronize(s);
		v.push_back((t1 - t0) / 256);
	}
	return median(v);
}

// batches of 256 launches of each kernel in turn; the median ns per launch of each
static void measure_kernels(cudaStream_t s, int batches, const std::vector<kern> &ks, std::vector<double> &out)
{
	std::vector<std::vector<double>> v(ks.size());
	for (int b = 0; b < batches; b++) {
		for (size_t k = 0; k < ks.size(); k++) {
			double t0 = now_ns();
			for (int i = 0; i < 256; i++)
				ks[k]<<<1, 32, 0, s>>>(nullptr);
			double t1 = now_ns();
			cudaStreamSynchronize(s);
			v[k].push_back((t1 - t0) / 256);
		}
	}
	out.clear();
	for (auto &x : v)
		out.push_back(median(x));
}

static int residue_main(int argc, char **argv)
{
	int batches = 200, cycles = 10, early = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--early"))
			early = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--batches"))
			batches = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--cycles"))
			cycles = atoi(argv[++i]);
	}
	if (early)
		residue_attach(); // before the context: as an injected tracer at cuInit
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return 1;
	std::vector<double> plain, att, det1, detn;
	std::vector<kern> pre = { k_pre };
	double api[4];
	cudaEventCreateWithFlags(&api_ev, cudaEventDisableTiming);
	measure_kernels(s, 20, pre, plain);
	measure_kernels(s, batches, pre, plain);
	api_ns(s, 20);
	api[0] = api_ns(s, batches);
	if (!early)
		residue_attach();
	std::vector<kern> two = { k_pre, k_att };
	measure_kernels(s, 20, two, att); // k_att's first launch: loaded while attached
	measure_kernels(s, batches, two, att);
	api[1] = api_ns(s, batches);
	residue_detach();
	std::vector<kern> all = { k_pre, k_att, k_post };
	measure_kernels(s, 20, all, det1); // k_post's first launch: loaded while detached
	measure_kernels(s, batches, all, det1);
	api[2] = api_ns(s, batches);
	for (int c = 0; c < cycles; c++) {
		residue_attach();
		measure_kernels(s, 2, all, detn);
		cudaStreamSynchronize(s);
		residue_detach();
	}
	measure_kernels(s, batches, all, detn);
	api[3] = api_ns(s, batches);
	cudaStream_t s2;
	if (cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) != cudaSuccess)
		return 1;
	std::vector<double> other;
	measure_kernels(s2, 20, all, other);
	measure_kernels(s2, batches, all, other);
	printf("{\"early\": %d, \"plain_pre_ns\": %.1f, \"attached_pre_ns\": %.1f, \"attached_att_ns\": %.1f, "
		"\"detached_pre_ns\": %.1f, \"detached_att_ns\": %.1f, \"detached_post_ns\": %.1f, "
		"\"cycled_pre_ns\": %.1f, \"cycled_att_ns\": %.1f, \"cycled_post_ns\": %.1f, \"cycles\": %d, "
		"\"stream2_pre_ns\": %.1f, \"stream2_att_ns\": %.1f, \"stream2_post_ns\": %.1f, "
		"\"api_plain_ns\": %.1f, \"api_attached_ns\": %.1f, \"api_detached_ns\": %.1f, \"api_cycled_ns\": %.1f}\n",
		early, plain[0], att[0], att[1], det1[0], det1[1], det1[2], detn[0], detn[1], detn[2], cycles,
		other[0], other[1], other[2], api[0], api[1], api[2], api[3]);
	cudaStreamDestroy(s);
	return 0;
}

// --ctx [--batches N] (bench/tracer/README.md run 27): does a CUDA context created while CUPTI was
// attached keep a cost on its launches after CUPTI detaches (cuptiFinalize)? An injected tracer
// attaches at cuInit, before the program's (primary) context exists; run 27 found the detached
// decode steps of processes traced so 2-4% slower than plain across processes, and no such
// residue inside processes whose CUPTI started only after their context existed
// (LLMPROF_TRACE_CUPTI_DELAY). Four contexts of the same device: pre (cuCtxCreate before CUPTI is
// touched), att and primary (cuCtxCreate and the primary context, made while attached: subscribed,
// launch callbacks, CONCURRENT_KERNEL on), post (cuCtxCreate after the detach); k_pre loaded and
// launched once in each while attached (pre's too), then the detach, then batches of 256 launches
// in each context in turn (cuCtxSetCurrent between batches, so the host's speed changes fall on
// all alike), the median ns per launch; then --cycles attach/detach cycles and the same again.
// Prints one JSON line.
static int ctx_main(int argc, char **argv)
{
	int batches = 300, cycles = 10;
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--batches"))
			batches = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--cycles"))
			cycles = atoi(argv[++i]);
	}
	CUdevice dev;
	CUcontext c[4]; // pre, att, primary, post
	static const char *const name[4] = { "pre", "att", "primary", "post" };
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS)
		return 1;
	CUctxCreateParams cp;
	memset(&cp, 0, sizeof(cp));
	if (cuCtxCreate(&c[0], &cp, 0, dev) != CUDA_SUCCESS)
		return 1;
	residue_attach();
	if (cuCtxCreate(&c[1], &cp, 0, dev) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c[2], dev) != CUDA_SUCCESS)
		return 1;
	for (int k = 0; k < 3; k++) {
		cuCtxSetCurrent(c[k]);
		k_pre<<<1, 32>>>(nullptr);
		cudaDeviceSynchronize();
	}
	cuCtxSetCurrent(c[0]);
	residue_detach();
	if (cuCtxCreate(&c[3], &cp, 0, dev) != CUDA_SUCCESS)
		return 1;
	double med[2][4];
	for (int phase = 0; phase < 2; phase++) {
		if (phase == 1) {
			for (int i = 0; i < cycles; i++) {
				residue_attach();
				for (int k = 0; k < 4; k++) {
					cuCtxSetCurrent(c[k]);
					k_pre<<<1, 32>>>(nullptr);
					cudaDeviceSynchronize();
				}
				residue_detach();
			}
		}
		std::vector<double> v[4];
		for (int b = 0; b < batches + 20; b++) {
			for (int k = 0; k < 4; k++) {
				cuCtxSetCurrent(c[k]);
				double t0 = now_ns();
				for (int i = 0; i < 256; i++)
					k_pre<<<1, 32>>>(nullptr);
				double t1 = now_ns();
				cudaDeviceSynchronize();
				if (b >= 20)
					v[k].push_back((t1 - t0) / 256);
			}
		}
		for (int k = 0; k < 4; k++)
			med[phase][k] = median(v[k]);
	}
	printf("{\"batches\": %d, \"cycles\": %d", batches, cycles);
	for (int phase = 0; phase < 2; phase++)
		for (int k = 0; k < 4; k++)
			printf(", \"%s_%s_ns\": %.1f", phase ? "cycled" : "detached", name[k], med[phase][k]);
	printf("}\n");
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--ctx"))
			return ctx_main(argc, argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--residue"))
			return residue_main(argc, argv);
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
