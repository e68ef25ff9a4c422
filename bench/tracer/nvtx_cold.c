/* nvtx_cold.c: what one NVTX range (a push and its pop in the LLM domain, as examples/hf_generate.py
 * opens ~85 a decode step) costs the calling thread when the caches are cold, as they are between
 * two ranges of an eager PyTorch step (tens of kernel launches of interpreter, ATen and driver
 * code in between), and when they are warm (back to back, as `lp_trace_nvtx_demo spin` measures).
 * bench/tracer/README.md run 28: the tracer without CUPTI costs the decode step ~2.5% on the GPU
 * machine where its warm per-range cost predicts ~0.2%.
 *
 *   lp_nvtx_cold [PAIRS [KB ...]]     (defaults 20000 pairs; 0 256 2048 16384 KB)
 *
 * For each KB: PAIRS rounds of (read and write KB of a private buffer, one cache line apart, to
 * push the range's code and data out of the caches; then time one push and pop with
 * CLOCK_MONOTONIC), and the same rounds with nothing between the two clock reads. One JSON line per
 * KB: the median and mean ns of a pair with the empty reading's median taken off, and the
 * 90th percentile. Run it with and without NVTX_INJECTION64_PATH (bench/tracer/nvtx_cold.sh does,
 * alternating) to see what the tool's callbacks add; without a tool NVTX's own stubs return at once. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Touches `bytes` of buf, one cache line apart (returns a sum so the loop stays). */
static unsigned evict(volatile unsigned char *buf, size_t bytes)
{
	unsigned s = 0;
	size_t i;
	for (i = 0; i < bytes; i += 64)
		s += buf[i]++;
	return s;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "layer", "attn_norm", "attention", "mlp_norm", "mlp" };
	static const long def_kb[] = { 0, 256, 2048, 16384 };
	long pairs = argc > 1 ? strtol(argv[1], NULL, 10) : 20000, nkb = argc > 2 ? argc - 2 : 4, k, i;
	nvtxDomainHandle_t llm = nvtxDomainCreateA("LLM");
	uint64_t *pair, *empty;
	unsigned char *mem;
	volatile unsigned char *buf;
	unsigned sink = 0;

	if (pairs < 10 || pairs > 10000000) {
		fprintf(stderr, "lp_nvtx_cold: PAIRS must be 10 to 10000000, not '%s'\n", argv[1]);
		return 2;
	}
	pair = malloc((size_t)pairs * sizeof(*pair));
	empty = malloc((size_t)pairs * sizeof(*empty));
	buf = mem = calloc(1, (size_t)65536 << 10); /* the largest KB allowed */
	if (!pair || !empty || !mem) {
		fprintf(stderr, "lp_nvtx_cold: out of memory\n");
		return 1;
	}
	for (k = 0; k < nkb; k++) {
		long kb = argc > 2 ? strtol(argv[2 + k], NULL, 10) : def_kb[k];
		double sum = 0;
		uint64_t base;
		if (kb < 0 || kb > 65536) {
			fprintf(stderr, "lp_nvtx_cold: KB must be 0 to 65536, not '%s'\n", argv[2 + k]);
			return 2;
		}
		for (i = 0; i < pairs; i++) {
			nvtxEventAttributes_t a;
			uint64_t t0, t1;
			memset(&a, 0, sizeof(a));
			a.version = NVTX_VERSION;
			a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
			a.messageType = NVTX_MESSAGE_TYPE_ASCII;
			a.message.ascii = names[i % 5];
			sink += evict(buf, (size_t)kb << 10);
			t0 = now_ns();
			nvtxDomainRangePushEx(llm, &a);
			nvtxDomainRangePop(llm);
			t1 = now_ns();
			pair[i] = t1 - t0;
			sink += evict(buf, (size_t)kb << 10);
			t0 = now_ns();
			t1 = now_ns();
			empty[i] = t1 - t0;
		}
		qsort(pair, (size_t)pairs, sizeof(*pair), cmp_u64);
		qsort(empty, (size_t)pairs, sizeof(*empty), cmp_u64);
		base = empty[pairs / 2];
		for (i = 0; i < pairs; i++)
			sum += (double)pair[i];
		printf("{\"kb\": %ld, \"pairs\": %ld, \"median_ns\": %.0f, \"mean_ns\": %.0f, \"p90_ns\": %.0f, "
		       "\"clock_ns\": %llu}\n",
			kb, pairs, (double)pair[pairs / 2] - (double)base, sum / (double)pairs - (double)base,
			(double)pair[pairs * 9 / 10] - (double)base, (unsigned long long)base);
	}
	free(pair);
	free(empty);
	free(mem);
	return sink == 0xffffffffu; /* never: keeps the eviction loops */
}
