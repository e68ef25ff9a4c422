// detach_residue.cu: does a kernel first loaded while CUPTI was attached keep a cost on its
// launches after CUPTI detaches (cuptiFinalize)? (bench/tracer/README.md run 26)
//
// Run 26 found the bursts' detached decode steps of examples/hf_generate.py ~1 ms a step (about
// 1-1.5 us a launch) slower than the same steps of the tracer without CUPTI, while
// cupti_attach.cu (run 22), whose kernel was loaded before CUPTI was first touched, saw nothing
// left after a detach. PyTorch loads its kernels lazily, at their first launch, which in a
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
// the same states: run 26 also saw the bursts' detached steps of the real program ~1-2% slower
// than those of a process that never loaded CUPTI. Prints one JSON line.
//   nvcc -O2 -arch=sm_90 detach_residue.cu -o detach_residue -lcupti -lcuda
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>

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
			fprintf(stderr, "detach_residue: %s: %s\n", #x, s_);         \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

static void CUPTIAPI buf_req(uint8_t **b, size_t *size, size_t *max)
{
	*size = 1 << 20;
	*b = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI buf_done(CUcontext, uint32_t, uint8_t *b, size_t, size_t valid)
{
	CUpti_Activity *rec = nullptr;
	while (cuptiActivityGetNextRecord(b, valid, &rec) == CUPTI_SUCCESS) {
	}
	free(b);
}

static void CUPTIAPI on_cb(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *)
{
}

static CUpti_SubscriberHandle sub;

// what the tracer does: subscribe, the launch callbacks, the kernel activity kind
static void attach()
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

static void detach()
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
static void measure(cudaStream_t s, int batches, const std::vector<kern> &ks, std::vector<double> &out)
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

int main(int argc, char **argv)
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
		attach(); // before the context: as an injected tracer at cuInit
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return 1;
	std::vector<double> plain, att, det1, detn;
	std::vector<kern> pre = { k_pre };
	double api[4];
	cudaEventCreateWithFlags(&api_ev, cudaEventDisableTiming);
	measure(s, 20, pre, plain);
	measure(s, batches, pre, plain);
	api_ns(s, 20);
	api[0] = api_ns(s, batches);
	if (!early)
		attach();
	std::vector<kern> two = { k_pre, k_att };
	measure(s, 20, two, att); // k_att's first launch: loaded while attached
	measure(s, batches, two, att);
	api[1] = api_ns(s, batches);
	detach();
	std::vector<kern> all = { k_pre, k_att, k_post };
	measure(s, 20, all, det1); // k_post's first launch: loaded while detached
	measure(s, batches, all, det1);
	api[2] = api_ns(s, batches);
	for (int c = 0; c < cycles; c++) {
		attach();
		measure(s, 2, all, detn);
		cudaStreamSynchronize(s);
		detach();
	}
	measure(s, batches, all, detn);
	api[3] = api_ns(s, batches);
	cudaStream_t s2;
	if (cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) != cudaSuccess)
		return 1;
	std::vector<double> other;
	measure(s2, 20, all, other);
	measure(s2, batches, all, other);
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
