// launch_cost.cu: what the injected tracer costs the launching thread, per kernel launch and per
// NVTX range, measured directly instead of through a whole program's step time. Run the same
// binary without the tracer and with it (bench/tracer/overhead.sh does, alternating, with its
// parts switched off one by one); the differences are the tracer's cost per event.
//
//   launch_cost [--batches N] [--per-batch M] [--long L]
//
// Sections (each: N batches; a batch times M back-to-back calls on the CPU clock, then waits
// for the GPU outside the timed part, so the launch queue never fills):
//   launch        an empty kernel, <<<1, 32>>> on one stream, outside any NVTX range
//   launch_nvtx   the same inside three nested ranges of the LLM domain (what attribution reads)
//   launch_args   a kernel with 512 bytes of arguments (like PyTorch's TensorIterator kernels)
//   launch_funcs  32 different kernels in turn
//   launch_torch  what PyTorch does around a launch: cudaGetDevice, the launch, cudaGetLastError
//   launch_ex     cudaLaunchKernelEx with a launch attribute (what cuBLAS uses)
//   kernel_get_attr, kernel_set_attr
//                 cuKernelGetAttribute / cuKernelSetAttribute on a kernel (cuBLAS calls them
//                 around its launches; 226 and 32 a decode step in examples/hf_generate.py)
//   stream_capturing  cudaStreamIsCapturing (PyTorch's caching allocator)
//   launch_cold   one launch timed on its own after writing 1 MB (a cache line in every 64 bytes),
//                 as when an interpreter's work runs between launches
//   get_device, get_last_error, stream_query, event_record, ctx_current
//                 single API calls that are not launches (cudaGetDevice, cudaGetLastError,
//                 cudaStreamQuery on an idle stream, cudaEventRecord, cuCtxGetCurrent)
//   nvtx_pair     nvtxDomainRangePushEx + nvtxDomainRangePop in the LLM domain, no GPU work
//                 (a range named "op": no stage)
//   stage_pair    the same with a stage range ("prefill"): the tracer's two CUDA events at its
//                 push and pop (docs/tracer.md "Exact stage latency for every step")
//   launch_long   --long L launches (default 524288, ~1.5 s) without a pause, a wait for the GPU
//                 every 1024 included in the time: the mean, with whatever the tracer's
//                 background work (CUPTI's buffers, periodic flushes) costs the launching thread
// --skip runs every section inside an unrecorded sampling unit: after the warm-up it pushes
// "decode_all", one "decode_step" (recorded) and a second "decode_step" that stays open; with
// LLMPROF_TRACE_SAMPLE=every=N,first=0 (N >= 2) the tracer skips that one, so the sections
// measure what a launch costs while the sampled tracer has CUPTI switched off.
// Prints one JSON line: per section the median over the batches (<name>_ns) and the 10th
// percentile (<name>_ns_p10), in ns per call.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void k_empty(int *p)
{
	if (p)
		*p = 1;
}

struct args512 {
	int v[128];
};

__global__ void k_args(args512 a, int *p)
{
	if (p)
		*p = a.v[0];
}

template <int N> __global__ void k_func(int *p)
{
	if (p)
		*p = N;
}

typedef void (*launch_fn)(cudaStream_t);
template <int N> static void launch_func(cudaStream_t s)
{
	k_func<N><<<1, 32, 0, s>>>(nullptr);
}
template <int N> struct func_table {
	static void fill(launch_fn *t)
	{
		t[N - 1] = launch_func<N>;
		func_table<N - 1>::fill(t);
	}
};
template <> struct func_table<0> {
	static void fill(launch_fn *) {}
};

static double now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int check(cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	fprintf(stderr, "launch_cost: %s: %s\n", what, cudaGetErrorString(e));
	return 1;
}

struct stat2 {
	double median, p10;
};

static stat2 summarize(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return { v[v.size() / 2], v[v.size() / 10] };
}

static nvtxDomainHandle_t dom;

static void push(const char *name)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	nvtxDomainRangePushEx(dom, &a);
}

static launch_fn funcs[32];
static args512 big;
static cudaEvent_t ev;
static CUkernel kern;                // k_empty as a CUkernel (cudaGetKernel)
static volatile unsigned char *junk; // launch_cold's 1 MB
static double cold_ns;               // launch_cold: the launches' own time, summed per batch

// one call of a section; returns nonzero on an error
static int call(int section, cudaStream_t s, int i)
{
	int dev;
	CUcontext ctx;
	switch (section) {
	case 0: // launch, launch_nvtx
		k_empty<<<1, 32, 0, s>>>(nullptr);
		return 0;
	case 1:
		k_args<<<1, 32, 0, s>>>(big, nullptr);
		return 0;
	case 2:
		funcs[i % 32](s);
		return 0;
	case 3:
		if (cudaGetDevice(&dev) != cudaSuccess)
			return 1;
		k_empty<<<1, 32, 0, s>>>(nullptr);
		return cudaGetLastError() != cudaSuccess;
	case 4:
		return cudaGetDevice(&dev) != cudaSuccess;
	case 5:
		return cudaGetLastError() != cudaSuccess;
	case 6:
		return cudaStreamQuery(s) != cudaSuccess;
	case 7:
		return cudaEventRecord(ev, s) != cudaSuccess;
	case 8:
		return cuCtxGetCurrent(&ctx) != CUDA_SUCCESS;
	case 9: {
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute attr;
		memset(&cfg, 0, sizeof(cfg));
		attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
		attr.val.programmaticStreamSerializationAllowed = 0;
		cfg.gridDim = dim3(1);
		cfg.blockDim = dim3(32);
		cfg.stream = s;
		cfg.attrs = &attr;
		cfg.numAttrs = 1;
		return cudaLaunchKernelEx(&cfg, k_empty, (int *)nullptr) != cudaSuccess;
	}
	case 11: {
		int v;
		return cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kern, 0) != CUDA_SUCCESS;
	}
	case 12:
		return cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0, kern, 0) != CUDA_SUCCESS;
	case 13: {
		cudaStreamCaptureStatus st;
		return cudaStreamIsCapturing(s, &st) != cudaSuccess;
	}
	case 10: {
		for (int k = 0; k < (1 << 20); k += 64)
			junk[k] = (unsigned char)(junk[k] + i);
		double t0 = now_ns();
		k_empty<<<1, 32, 0, s>>>(nullptr);
		cold_ns += now_ns() - t0;
		return 0;
	}
	}
	return 1;
}

static int measure(int section, cudaStream_t s, int batches, int m, std::vector<double> &out)
{
	for (int b = 0; b < batches; b++) {
		int bad = 0;
		cold_ns = 0;
		double t0 = now_ns();
		for (int i = 0; i < m; i++)
			bad |= call(section, s, i);
		double t1 = now_ns();
		if (section == 10) // only the launches count, not the writes between them
			t1 = t0 + cold_ns;
		if (bad) {
			fprintf(stderr, "launch_cost: section %d: a call failed\n", section);
			return 1;
		}
		if (check(cudaStreamSynchronize(s), "cudaStreamSynchronize"))
			return 1;
		out.push_back((t1 - t0) / m);
	}
	return check(cudaGetLastError(), "launch");
}

int main(int argc, char **argv)
{
	int batches = 400, m = 256, n_long = 524288;
	bool skip = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--skip"))
			skip = true;
		else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
			batches = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--per-batch") && i + 1 < argc)
			m = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--long") && i + 1 < argc)
			n_long = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: launch_cost [--batches N] [--per-batch M] [--long L] [--skip]\n");
			return 2;
		}
	}
	if (batches < 10 || m < 1 || n_long < 0) {
		fprintf(stderr, "launch_cost: --batches must be >= 10, --per-batch >= 1, --long >= 0\n");
		return 2;
	}
	dom = nvtxDomainCreateA("LLM");
	cudaStream_t s;
	if (check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"))
		return 1;
	func_table<32>::fill(funcs);
	if (check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate"))
		return 1;
	static const struct {
		const char *name;
		int section;
		bool ranged; // inside three nested NVTX ranges
	} plan[] = {
		{ "launch", 0, false }, { "launch_nvtx", 0, true }, { "launch_args", 1, false },
		{ "launch_funcs", 2, false }, { "launch_torch", 3, false }, { "get_device", 4, false },
		{ "get_last_error", 5, false }, { "stream_query", 6, false }, { "event_record", 7, false },
		{ "ctx_current", 8, false }, { "launch_ex", 9, false }, { "launch_cold", 10, false },
		{ "kernel_get_attr", 11, false }, { "kernel_set_attr", 12, false },
		{ "stream_capturing", 13, false },
	};
	{
		cudaKernel_t k;
		if (check(cudaGetKernel(&k, k_empty), "cudaGetKernel"))
			return 1;
		kern = (CUkernel)k;
	}
	junk = (volatile unsigned char *)calloc(1, 1 << 20);
	if (!junk)
		return 1;
	std::vector<double> warm;
	for (const auto &p : plan) // module load, CUPTI's first buffers, lazy loading
		if (measure(p.section, s, 2, 64, warm))
			return 1;
	if (skip) { // decode_all, a recorded decode_step, then the skipped one the sections run in
		push("decode_all");
		push("decode_step");
		nvtxDomainRangePop(dom);
		push("decode_step");
	}
	printf("{\"batches\": %d, \"per_batch\": %d, \"skip\": %d", batches, m, skip ? 1 : 0);
	for (const auto &p : plan) {
		std::vector<double> v;
		if (p.ranged) {
			push("prefill");
			push("layer");
			push("attention");
		}
		int rc = measure(p.section, s, batches, m, v);
		if (p.ranged)
			for (int k = 0; k < 3; k++)
				nvtxDomainRangePop(dom);
		if (rc)
			return 1;
		stat2 st = summarize(v);
		printf(", \"%s_ns\": %.1f, \"%s_ns_p10\": %.1f", p.name, st.median, p.name, st.p10);
	}
	static const char *const pair_names[2] = { "op", "prefill" }, *const pair_keys[2] = { "nvtx_pair", "stage_pair" };
	for (int k = 0; k < 2; k++) {
		std::vector<double> pairs;
		for (int b = 0; b < batches; b++) {
			double t0 = now_ns();
			for (int i = 0; i < m; i++) {
				push(pair_names[k]);
				nvtxDomainRangePop(dom);
			}
			pairs.push_back((now_ns() - t0) / m);
		}
		stat2 p = summarize(pairs);
		printf(", \"%s_ns\": %.1f, \"%s_ns_p10\": %.1f", pair_keys[k], p.median, pair_keys[k], p.p10);
	}
	if (n_long > 0) {
		double t0 = now_ns();
		for (int i = 0; i < n_long; i++) {
			k_empty<<<1, 32, 0, s>>>(nullptr);
			if ((i & 1023) == 1023 && check(cudaStreamSynchronize(s), "cudaStreamSynchronize"))
				return 1;
		}
		if (check(cudaStreamSynchronize(s), "cudaStreamSynchronize"))
			return 1;
		printf(", \"launch_long_ns\": %.1f", (now_ns() - t0) / n_long);
	}
	if (skip) {
		nvtxDomainRangePop(dom);
		nvtxDomainRangePop(dom);
	}
	printf("}\n");
	cudaEventDestroy(ev);
	cudaStreamDestroy(s);
	return 0;
}
