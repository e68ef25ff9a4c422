// llmprof-probe: the device-to-device copy bandwidth of GPU 0, measured in a few hundred
// milliseconds, for the gap waterfall's floor against a measured peak (run.probe_bandwidth=true,
// docs/metrics.md "Gap waterfall"). Copies a buffer of --bytes (default 2 GiB) --iters times
// (default 10) after one warm-up copy, timed with CUDA events; each copy reads and writes every
// byte once, so the rate counts 2 x bytes per copy. Prints one JSON line on stdout:
//   {"probe": "d2d_copy", "device": "...", "bytes": N, "iters": K, "ms": T, "copy_gb_per_s": X}
// Exit 0 ok, 4 no usable GPU or not enough memory, 2 bad arguments.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

static int fail(const char *what, cudaError_t e)
{
	fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(e));
	return 4;
}

int main(int argc, char **argv)
{
	size_t bytes = (size_t)2 << 30;
	int iters = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
			bytes = strtoull(argv[++i], nullptr, 10);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: llmprof-probe [--bytes N] [--iters K]\n");
			return 2;
		}
	}
	if (bytes < ((size_t)1 << 20) || iters < 1) {
		fprintf(stderr, "error: --bytes must be at least 1 MiB and --iters at least 1\n");
		return 2;
	}
	cudaDeviceProp prop;
	cudaError_t e = cudaGetDeviceProperties(&prop, 0);
	if (e != cudaSuccess)
		return fail("no usable GPU", e);
	void *a = nullptr, *b = nullptr;
	if ((e = cudaMalloc(&a, bytes)) != cudaSuccess || (e = cudaMalloc(&b, bytes)) != cudaSuccess)
		return fail("cudaMalloc", e);
	cudaMemset(a, 1, bytes);
	cudaEvent_t t0, t1;
	cudaEventCreate(&t0);
	cudaEventCreate(&t1);
	cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);   // warm-up
	cudaEventRecord(t0);
	for (int i = 0; i < iters; i++)
		cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice);
	cudaEventRecord(t1);
	if ((e = cudaEventSynchronize(t1)) != cudaSuccess)
		return fail("copy", e);
	float ms = 0;
	cudaEventElapsedTime(&ms, t0, t1);
	printf("{\"probe\": \"d2d_copy\", \"device\": \"%s\", \"bytes\": %zu, \"iters\": %d, \"ms\": %.4f, "
	       "\"copy_gb_per_s\": %.2f}\n", prop.name, bytes, iters, ms, 2.0 * (double)bytes * iters / (ms * 1e6));
	cudaFree(a);
	cudaFree(b);
	return 0;
}
