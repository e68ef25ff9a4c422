/* regions_demo: a small, deterministic CUDA program with NVTX regions, for checking llmprof's
 * per-region Nsight Compute report (issue 7, scripts/gpu/regions.sh, docs/regions.md).
 *
 * Ranges (default domain unless said):
 *   A (push/pop)        k_a_scale, k_a_add, then A1, then k_a_scale again
 *     A1 (push/pop)     k_a1_mul twice: a range literally named "A1" pushed inside A, which the
 *                       region report calls `A::A1` (configure it as `A::A1/` or `A/A1/`)
 *   B (push/pop)        k_b_scale, k_b_partial
 *   LLM domain:         prefill (k_llm_gemv), decode_all (decode_step x4 with a uint64 payload:
 *                       k_llm_gemv, k_llm_argmax)
 *   S1, S2 (start/end)  S1 from before B to after prefill; S2 from inside B to the end: they overlap
 *   outside every range: k_outside (once, after B)
 * Every launch has a fixed shape and input, with no atomics: results and the kernel sequence are
 * the same on each run (app-range replay reruns the program once per pass). The checksum printed
 * last lets a caller check that.
 *
 *   regions_demo [--iters N]     (N repetitions of the whole sequence, default 1)
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                     \
	do {                                                                         \
		cudaError_t e_ = (x);                                                \
		if (e_ != cudaSuccess) {                                             \
			fprintf(stderr, "regions_demo: %s: %s\n", #x, cudaGetErrorString(e_)); \
			return 1;                                                    \
		}                                                                    \
	} while (0)

enum { N = 1 << 20, ROWS = 1024, COLS = 1024, THREADS = 256 };

__global__ void k_outside(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

__global__ void k_a_scale(float *x, int n, float s)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= s;
}

__global__ void k_a_add(float *x, const float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += y[i];
}

__global__ void k_a1_mul(float *x, const float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * y[i] + 0.25f;
}

__global__ void k_b_scale(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.75f - 0.5f;
}

/* One partial sum per block, in a fixed order (no atomics: deterministic). */
__global__ void k_b_partial(const float *x, float *partial, int n)
{
	__shared__ float s[THREADS];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	s[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if ((int)threadIdx.x < k)
			s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = s[0];
}

__global__ void k_llm_gemv(const float *w, const float *x, float *y, int rows, int cols)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r < rows) {
		float acc = 0.0f;
		for (int c = 0; c < cols; c++)
			acc += w[(size_t)r * cols + c] * x[c];
		y[r] = acc;
	}
}

__global__ void k_llm_argmax(const float *y, int n, int *out)
{
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		int best = 0;
		for (int i = 1; i < n; i++)
			if (y[i] > y[best])
				best = i;
		*out = best;
	}
}

static void push_llm(nvtxDomainHandle_t d, const char *name, int with_payload, unsigned long long payload)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	if (with_payload) {
		a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
		a.payload.ullValue = payload;
	}
	nvtxDomainRangePushEx(d, &a);
}

int main(int argc, char **argv)
{
	int iters = 1, it, step, tok = 0;
	float *x, *y, *partial, *w, *v, *out;
	int *dtok;
	float *host;
	double checksum = 0;
	const int blocks = (N + THREADS - 1) / THREADS;
	nvtxDomainHandle_t llm;
	if (argc == 3 && !strcmp(argv[1], "--iters"))
		iters = atoi(argv[2]) > 0 ? atoi(argv[2]) : 1;
	else if (argc != 1) {
		fprintf(stderr, "usage: regions_demo [--iters N]\n");
		return 2;
	}
	host = (float *)malloc(sizeof(float) * (size_t)ROWS * COLS);
	if (!host)
		return 1;
	CHECK(cudaMalloc(&x, sizeof(float) * N));
	CHECK(cudaMalloc(&y, sizeof(float) * N));
	CHECK(cudaMalloc(&partial, sizeof(float) * blocks));
	CHECK(cudaMalloc(&w, sizeof(float) * (size_t)ROWS * COLS));
	CHECK(cudaMalloc(&v, sizeof(float) * COLS));
	CHECK(cudaMalloc(&out, sizeof(float) * ROWS));
	CHECK(cudaMalloc(&dtok, sizeof(int)));
	for (int i = 0; i < ROWS * COLS; i++)
		host[i] = (float)(((long long)i * 7919) % 1000) / 1000.0f - 0.5f;
	CHECK(cudaMemcpy(w, host, sizeof(float) * (size_t)ROWS * COLS, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(x, host, sizeof(float) * N, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(y, host + 17, sizeof(float) * (N - 17), cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(v, host + 99, sizeof(float) * COLS, cudaMemcpyHostToDevice));
	CHECK(cudaDeviceSynchronize());
	llm = nvtxDomainCreateA("LLM");

	for (it = 0; it < iters; it++) {
		nvtxRangeId_t s1, s2;
		nvtxRangePushA("A");
		k_a_scale<<<blocks, THREADS>>>(x, N, 1.5f);
		k_a_add<<<blocks, THREADS>>>(x, y, N);
		nvtxRangePushA("A1");
		k_a1_mul<<<blocks, THREADS>>>(x, y, N);
		k_a1_mul<<<blocks, THREADS>>>(x, y, N);
		nvtxRangePop();
		k_a_scale<<<blocks, THREADS>>>(x, N, 0.5f);
		nvtxRangePop();
		CHECK(cudaDeviceSynchronize());

		s1 = nvtxRangeStartA("S1");
		nvtxRangePushA("B");
		k_b_scale<<<blocks, THREADS>>>(x, N);
		s2 = nvtxRangeStartA("S2");
		k_b_partial<<<blocks, THREADS>>>(x, partial, N);
		nvtxRangePop();
		CHECK(cudaDeviceSynchronize());

		k_outside<<<blocks, THREADS>>>(y, N);
		CHECK(cudaDeviceSynchronize());

		push_llm(llm, "prefill", 0, 0);
		k_llm_gemv<<<ROWS / 128, 128>>>(w, v, out, ROWS, COLS);
		nvtxDomainRangePop(llm);
		CHECK(cudaDeviceSynchronize());
		nvtxRangeEnd(s1);

		push_llm(llm, "decode_all", 0, 0);
		for (step = 0; step < 4; step++) {
			push_llm(llm, "decode_step", 1, (unsigned long long)step);
			k_llm_gemv<<<ROWS / 128, 128>>>(w, v, out, ROWS, COLS);
			k_llm_argmax<<<1, 1>>>(out, ROWS, dtok);
			nvtxDomainRangePop(llm);
		}
		nvtxDomainRangePop(llm);
		CHECK(cudaDeviceSynchronize());
		nvtxRangeEnd(s2);
	}
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(host, partial, sizeof(float) * blocks, cudaMemcpyDeviceToHost));
	for (int i = 0; i < blocks; i++)
		checksum += host[i];
	CHECK(cudaMemcpy(&tok, dtok, sizeof(int), cudaMemcpyDeviceToHost));
	printf("regions_demo: iters=%d checksum=%.6e token=%d\n", iters, checksum, tok);
	cudaFree(x);
	cudaFree(y);
	cudaFree(partial);
	cudaFree(w);
	cudaFree(v);
	cudaFree(out);
	cudaFree(dtok);
	free(host);
	return 0;
}
