/* nvtx_demo.c: a CPU-only program that uses NVTX v3 the ways real programs do (push/pop, start/end,
 * A/W/Ex forms, domains, registered strings, marks, payloads, a second thread, awkward names,
 * fork). tests/unit/test_trace_nvtx.c runs it with NVTX_INJECTION64_PATH pointing at
 * libllmprof_inject.so and checks the exact range tree it leaves. Modes (argv[1]):
 *   (none)  the ranges below;   fork  the same, then a fork child adds "child_range";
 *   spin N  N push/pop pairs (for the overhead benchmark);
 *   threads DEMO_THREADS threads push DEMO_PAIRS ranges each at once (per-thread buffers, flush
 *           rounds while they write), and a start/end range started on one thread, ended on another;
 *   sleep   opens "sleeping", prints "ready" and waits for a signal;
 *   steps [G N]  G (2) generations of LLM prefill, then decode_all with N (10) decode_step ranges each
 *           (the sampling schedule of docs/tracer.md, checked by tests/unit/test_trace_sample.c).
 * Exit status 0 when every NVTX return value was as documented. */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

static int failures;

/* NVTX return values are only meaningful with a tool attached: checked when LP_DEMO_CHECK=1 */
static int checking;

#define EXPECT(cond)                                                             \
	do {                                                                     \
		if (!(cond) && checking) {                                       \
			fprintf(stderr, "nvtx_demo: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                              \
		}                                                                \
	} while (0)

static nvtxEventAttributes_t attr(const char *msg)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

static void *worker(void *arg)
{
	(void)arg;
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "worker");
	EXPECT(nvtxRangePushA("worker_range") == 0);
	EXPECT(nvtxRangePop() == 0);
	return NULL;
}

static void payload_ranges(void)
{
	nvtxEventAttributes_t a;
	a = attr("ex_u64");
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = 42;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xFF00FF00u;
	EXPECT(nvtxRangePushEx(&a) == 2);
	EXPECT(nvtxRangePop() == 2);
	a = attr("ex_i64");
	a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
	a.payload.llValue = -7;
	nvtxRangePushEx(&a);
	nvtxRangePop();
	a = attr("ex_f64");
	a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
	a.payload.dValue = 2.5;
	nvtxRangePushEx(&a);
	nvtxRangePop();
	a = attr("ex_u32");
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
	a.payload.uiValue = 7;
	nvtxRangePushEx(&a);
	nvtxRangePop();
	a = attr("ex_i32");
	a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
	a.payload.iValue = -3;
	nvtxRangePushEx(&a);
	nvtxRangePop();
	a = attr("ex_f32");
	a.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
	a.payload.fValue = 1.5f;
	nvtxRangePushEx(&a);
	nvtxRangePop();
}

static void all_ranges(void)
{
	nvtxDomainHandle_t llm = nvtxDomainCreateA("LLM");
	nvtxDomainHandle_t wide = nvtxDomainCreateW(L"Wide");
	nvtxStringHandle_t s_decode = nvtxDomainRegisterStringA(llm, "decode_all");
	nvtxStringHandle_t s_w = nvtxDomainRegisterStringW(llm, L"registered_w");
	nvtxEventAttributes_t a;
	nvtxRangeId_t r1, r2, r3, r4;
	pthread_t th;
	char longname[5000];

	EXPECT(nvtxRangePop() < 0); /* nothing open yet */
	EXPECT(nvtxRangePushA("outer") == 0);
	EXPECT(nvtxRangePushW(L"inner_w") == 1);
	payload_ranges();
	nvtxMarkA("mark_a");
	EXPECT(nvtxRangePop() == 1);
	EXPECT(nvtxRangePop() == 0);

	a = attr(NULL);
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = s_decode;
	EXPECT(nvtxDomainRangePushEx(llm, &a) == 0);
	a = attr("decode_step");
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = 3;
	EXPECT(nvtxDomainRangePushEx(llm, &a) == 1);
	EXPECT(nvtxRangePushA("layer") == 2);
	a = attr("domain_mark");
	nvtxDomainMarkEx(llm, &a);
	EXPECT(nvtxRangePop() == 2);
	EXPECT(nvtxDomainRangePop(llm) == 1);
	a = attr(NULL);
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = s_w;
	nvtxDomainRangePushEx(llm, &a);
	nvtxDomainRangePop(llm);
	EXPECT(nvtxDomainRangePop(llm) == 0);

	a = attr("wide_domain_range");
	nvtxDomainRangePushEx(wide, &a);
	nvtxDomainRangePop(wide);

	r1 = nvtxRangeStartA("startend_a");
	r2 = nvtxRangeStartW(L"startend_w");
	a = attr("startend_ex");
	a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
	a.payload.llValue = 5;
	r3 = nvtxRangeStartEx(&a);
	a = attr("loading");
	r4 = nvtxDomainRangeStartEx(llm, &a);
	EXPECT(r1 && r2 && r3 && r4 && r1 != r2);
	nvtxRangeEnd(r1);   /* overlapping, not nested: allowed for start/end */
	nvtxRangeEnd(r3);
	nvtxRangeEnd(r2);
	nvtxDomainRangeEnd(llm, r4);

	nvtxRangePushA("q\"b\\c\x01" "d\n");
	nvtxRangePop();
	nvtxRangePushW(L"\u00fcn\u00ef\u20ac\U0001F600");
	nvtxRangePop();
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	nvtxRangePushA(longname);
	nvtxRangePop();
	nvtxMarkW(L"mark_w");
	a = attr("mark_ex");
	nvtxMarkEx(&a);

	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
}

enum { DEMO_THREADS = 4, DEMO_PAIRS = 20000 };
static nvtxRangeId_t cross_id;
static pthread_barrier_t cross_barrier;

static void *busy_worker(void *arg)
{
	long k = (long)arg, i;
	char name[32];
	snprintf(name, sizeof(name), "thread_%ld", k);
	nvtxRangePushA(name);
	if (k == 0)
		cross_id = nvtxRangeStartA("cross_thread");
	pthread_barrier_wait(&cross_barrier);
	for (i = 0; i < DEMO_PAIRS; i++) {
		nvtxRangePushA(i % 2 ? "odd" : "even");
		nvtxRangePop();
	}
	if (k == 1)
		nvtxRangeEnd(cross_id);
	nvtxRangePop();
	return NULL;
}

static void busy_threads(void)
{
	pthread_t th[DEMO_THREADS];
	long k;
	pthread_barrier_init(&cross_barrier, NULL, DEMO_THREADS);
	for (k = 0; k < DEMO_THREADS; k++)
		pthread_create(&th[k], NULL, busy_worker, (void *)k);
	for (k = 0; k < DEMO_THREADS; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&cross_barrier);
}

int main(int argc, char **argv)
{
	checking = getenv("LP_DEMO_CHECK") != NULL;
	if (argc > 2 && !strcmp(argv[1], "spin")) {
		long i, n = strtol(argv[2], NULL, 10);
		for (i = 0; i < n; i++) {
			nvtxRangePushA("spin");
			nvtxRangePop();
		}
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "steps")) {
		long g, i, gens = argc > 2 ? strtol(argv[2], NULL, 10) : 2, n = argc > 3 ? strtol(argv[3], NULL, 10) : 10;
		nvtxDomainHandle_t llm = nvtxDomainCreateA("LLM");
		for (g = 0; g < gens; g++) {
			nvtxEventAttributes_t a = attr("prefill");
			nvtxDomainRangePushEx(llm, &a);
			nvtxDomainRangePop(llm);
			a = attr("decode_all");
			nvtxDomainRangePushEx(llm, &a);
			for (i = 0; i < n; i++) {
				a = attr("decode_step");
				a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
				a.payload.ullValue = (uint64_t)i;
				nvtxDomainRangePushEx(llm, &a);
				nvtxRangePushA("layer");
				nvtxRangePop();
				nvtxDomainRangePop(llm);
			}
			nvtxDomainRangePop(llm);
		}
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "threads")) {
		busy_threads();
		return failures ? 1 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "sleep")) {
		nvtxRangePushA("sleeping");
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	all_ranges();
	if (argc > 1 && !strcmp(argv[1], "fork")) {
		pid_t pid;
		int status = 0;
		nvtxRangePushA("before_fork");
		pid = fork();
		if (pid == 0) {
			/* the child's stack starts empty in its own file */
			EXPECT(nvtxRangePushA("child_range") == 0);
			EXPECT(nvtxRangePop() == 0);
			exit(failures ? 1 : 0);
		}
		waitpid(pid, &status, 0);
		EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		nvtxRangePop();
	}
	return failures ? 1 : 0;
}
