/* fixture_writer.c: writes a synthetic decode trace with the tracer's own writer (writer.c,
 * lifecycle.c, nvtx.c, sample.c compiled in; cupti_fake.c stands in for CUPTI and the GPU), for
 * tests/unit/test_sampling_traces.c and test_sampling_bursts.c. The program: GENS generations of an
 * LLM-domain `prefill` (one kernel) then `decode_all` holding STEPS `decode_step` ranges, each
 * launching the KERNELS kernels below.
 * Their durations are a deterministic function of (generation, step, kernel): a base, a growth
 * with the step (attention over a longer context) and a pseudo-random jitter, so that two runs
 * with different LLMPROF_TRACE_SAMPLE values differ only in what was recorded. Kernel and launch
 * records are written only while the (fake) CUPTI switch is on, as CUPTI would; the simulated GPU
 * clock advances by each kernel's duration plus a 2 us gap, so each step's STAGE record must say
 * exactly the time printed on stdout ("step G S NS" lines, every step recorded or not), which the
 * program takes as a program's own CUDA events would, from after the step's push (as in a program
 * whose stage ranges come from llmprof's shim, outside its own timing) to after its pop (a burst's
 * detach at the pop, 3 ms of host pause in cupti_fake.c, included): so no switch may pause the
 * program between a push's mark and its return, and a pause after a pop's mark is marked again.
 *
 *   lp_trace_fixture DIR    (LLMPROF_TRACE_SAMPLE as the caller sets it)
 *
 * LP_FIXTURE_STEPS_ONLY=1: no decode_all range around the steps (a serving loop's shape: the decode
 * steps are the stage's iterations themselves, stages.h LP_STAGE_STEPS).
 *
 * LP_FIXTURE_SERVE=R: a serving loop instead: R rounds, each a `prefill` (every third a `mixed`)
 * launching one kernel whose duration varies by round (its prompt), then SERVE_STEPS decode steps,
 * all under no parent; "inst R NS" lines give each prefill's and mixed's time as "step" lines do.
 *
 * LP_FIXTURE_WARMUP=1: generation 0 inside a `warmup` range (the tracer detaches CUPTI for it by
 * default: docs/tracer.md "The warm-up"); =record: the same with LLMPROF_TRACE_WARMUP=record.
 *
 * LP_FIXTURE_SETTLE=V: LLMPROF_TRACE_SETTLE_END=V, e.g. 0 (the test's own LLMPROF_TRACE_* are not
 * passed on).
 *
 * LP_FIXTURE_GRAPHS=G: from generation G on the program "launches CUDA graphs" (the fake's
 * lp_inj_cupti_graphs says so): with one unit per block (CUPTI's kinds switched per unit) the
 * tracer then records every unit (docs/tracer.md "Bursts", run 35).
 *
 * LP_FIXTURE_PREFILL_SHARED=1: the prefill launches a decode step's kernel too (`rmsnorm`, 20 us
 * after its GEMM): a row recorded exactly in the prefill and sampled in the steps.
 *
 * LP_FIXTURE_SLOW=K (for auto): every step takes host time, like a program that launches (the
 * first K steps of generation 0 50 ms each, as a process's first steps load modules; the others
 * 0.2 ms), so auto's launch rate is 100/s at first and tens of thousands/s after.
 */
#include "inject.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

#define GENS 3
#define STEPS 48
#define KERNELS 5
#define SERVE_STEPS 8

int lp_fake_recording(void);
void lp_fake_gpu_advance(uint64_t ns);
uint64_t lp_fake_gpu_now(void);
void lp_fake_graphs(void);

#include "nvtx_host.h"

LP_INJ_EXPORT int InitializeInjection(void);

typedef nvtxDomainHandle_t (*domain_create_fn)(const char *);
typedef int (*domain_push_fn)(nvtxDomainHandle_t, const nvtxEventAttributes_t *);
typedef int (*domain_pop_fn)(nvtxDomainHandle_t);

static domain_push_fn dpush;
static domain_pop_fn dpop;
static nvtxDomainHandle_t llm;
static uint32_t corr = 1;

static void push(const char *name)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	dpush(llm, &a);
}

/* A kernel's duration in ns: deterministic, different per (gen, step, kernel). */
static uint64_t duration(int gen, int step, int k)
{
	static const uint64_t base[KERNELS] = { 40000, 12000, 6000, 2500, 900 };
	uint32_t h = (uint32_t)(gen * 7919 + step * 104729 + k * 1299709) * 2654435761u;
	uint64_t jitter = (uint64_t)(h >> 20) % (base[k] / 5 + 1);   /* up to +20% */
	uint64_t growth = k == 1 ? (uint64_t)step * 150 : 0;        /* "attention" grows */
	return base[k] + growth + jitter;
}

static void kernel(const char *name, uint64_t dur)
{
	struct lp_inj_thread *t;
	if (lp_fake_recording() && (t = lp_inj_self()) != NULL) {
		struct lp_trace_launch l;
		struct lp_trace_kernel k;
		t->launches++; /* as cupti.c's launch callback counts them (auto's rate, its gen=) */
		t->api_launches++;
		memset(&l, 0, sizeof(l));
		l.correlation_id = corr;
		l.tid = t->tid;
		l.range_id = lp_inj_current_range(t);
		l.ts_ns = lp_inj_now_ns();
		l.api = 2;
		l.kind = LP_TRACE_LAUNCH_KERNEL;
		lp_inj_append(LP_TREC_LAUNCH, &l, sizeof(l), NULL, 0);
		memset(&k, 0, sizeof(k));
		k.start_ns = lp_fake_gpu_now();
		k.end_ns = k.start_ns + dur;
		k.name_sid = lp_inj_intern(name, strlen(name));
		k.correlation_id = corr;
		k.grid[0] = k.grid[1] = k.grid[2] = 1;
		k.block[0] = k.block[1] = k.block[2] = 1;
		lp_inj_append(LP_TREC_KERNEL, &k, sizeof(k), NULL, 0);
	}
	corr++;
	lp_fake_gpu_advance(dur + 2000);
}

static void host_wait(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	while (nanosleep(&ts, &ts) != 0) {
	}
}

int main(int argc, char **argv)
{
	const char *slow = getenv("LP_FIXTURE_SLOW");
	const char *steps_only = getenv("LP_FIXTURE_STEPS_ONLY");
	const char *warmup = getenv("LP_FIXTURE_WARMUP");
	const char *graphs = getenv("LP_FIXTURE_GRAPHS");
	const char *settle = getenv("LP_FIXTURE_SETTLE");
	int prefill_shared = getenv("LP_FIXTURE_PREFILL_SHARED") != NULL;
	int with_decode_all = !(steps_only && !strcmp(steps_only, "1"));
	int n_slow = slow ? (int)strtol(slow, NULL, 10) : -1;
	int serve = getenv("LP_FIXTURE_SERVE") ? (int)strtol(getenv("LP_FIXTURE_SERVE"), NULL, 10) : 0;
	static const char *names[KERNELS] = { "gemm_mlp", "attention_decode", "gemm_qkv", "rmsnorm", "rope" };
	int g, s, k;
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	setenv("LLMPROF_TRACE_DIR", argv[1], 1);
	if (warmup && !strcmp(warmup, "record"))
		setenv("LLMPROF_TRACE_WARMUP", "record", 1);
	if (settle && *settle)
		setenv("LLMPROF_TRACE_SETTLE_END", settle, 1);
	if (!nvtx_host_init())
		return 3;
	InitializeInjection();
	llm = ((domain_create_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainCreateA])("LLM");
	dpush = (domain_push_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainRangePushEx];
	dpop = (domain_pop_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainRangePop];
	for (g = 0; g < serve; g++) {
		int mixed = g % 3 == 2;
		uint64_t t0;
		push(mixed ? "mixed" : "prefill");
		t0 = lp_fake_gpu_now();
		kernel(mixed ? "gemm_mixed" : "gemm_prefill", 200000 + (uint64_t)((g * 7919) % 13) * 15000);
		dpop(llm);
		printf("inst %d %llu\n", g, (unsigned long long)(lp_fake_gpu_now() - t0));
		for (s = 0; s < SERVE_STEPS; s++) {
			push("decode_step");
			t0 = lp_fake_gpu_now();
			for (k = 0; k < KERNELS; k++)
				kernel(names[k], duration(g % GENS, s, k));
			dpop(llm);
			printf("step %d %d %llu\n", g, s, (unsigned long long)(lp_fake_gpu_now() - t0));
		}
	}
	for (g = 0; g < GENS && !serve; g++) {
		if (graphs && *graphs && g == (int)strtol(graphs, NULL, 10))
			lp_fake_graphs();
		if (g == 0 && warmup)
			push("warmup");
		push("prefill");
		kernel("gemm_prefill", 300000);
		if (prefill_shared)
			kernel("rmsnorm", 20000);
		dpop(llm);
		if (with_decode_all)
			push("decode_all");
		for (s = 0; s < STEPS; s++) {
			uint64_t t0;
			push("decode_step");
			t0 = lp_fake_gpu_now();
			for (k = 0; k < KERNELS; k++) {
				/* two op ranges (operators.h's workload names) for the operator table */
				if (k < 2)
					push(k == 0 ? "mlp" : "attention");
				kernel(names[k], duration(g, s, k));
				if (k < 2)
					dpop(llm);
			}
			if (n_slow >= 0)
				host_wait(g == 0 && s < n_slow ? 50000000L : 200000L);
			dpop(llm);
			printf("step %d %d %llu\n", g, s, (unsigned long long)(lp_fake_gpu_now() - t0));
			kernel("argmax_between_steps", 1500); /* in decode_all, outside every unit */
		}
		if (with_decode_all)
			dpop(llm);
		if (g == 0 && warmup)
			dpop(llm);
	}
	return 0;
}
