/* tsan_writer.c: the tracer's writer under ThreadSanitizer (ctest test_inject_tsan; built only
 * where the compiler has -fsanitize=thread). The library's own sources (writer.c, lifecycle.c,
 * nvtx.c, sample.c, cupti_none.c) are compiled into this program with TSan, so every lock-free
 * path is checked: a child process initializes the writer and attaches the NVTX half through a
 * stand-in for NVTX's export table, then THREADS threads push and pop ranges (stage ranges among
 * them: the sampling switch and its counters), intern fresh and shared strings and create
 * domains, while the main thread asks for flush rounds, at a 10 ms flush period with small
 * buffers; some threads exit early (their buffers are handed over). The parent then checks the
 * child's status (TSan exits 66 on a race) and that the file holds every push and pop.
 */

#include "inject.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#define THREADS 6
#define PAIRS 4000

#include "nvtx_host.h"


typedef int (*push_a_fn)(const char *);
typedef int (*pop_fn)(void);
typedef nvtxDomainHandle_t (*domain_create_fn)(const char *);
typedef int (*domain_push_fn)(nvtxDomainHandle_t, const nvtxEventAttributes_t *);
typedef int (*domain_pop_fn)(nvtxDomainHandle_t);

static void *worker(void *arg)
{
	long k = (long)arg, i;
	char name[64];
	push_a_fn push = (push_a_fn)(uintptr_t)core[NVTX_CBID_CORE_RangePushA];
	pop_fn pop = (pop_fn)(uintptr_t)core[NVTX_CBID_CORE_RangePop];
	domain_create_fn mk = (domain_create_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainCreateA];
	domain_push_fn dpush = (domain_push_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainRangePushEx];
	domain_pop_fn dpop = (domain_pop_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainRangePop];
	nvtxDomainHandle_t llm = mk("LLM");
	long pairs = k % 3 == 2 ? PAIRS / 4 : PAIRS; /* some threads end early */
	for (i = 0; i < pairs; i++) {
		nvtxEventAttributes_t a;
		memset(&a, 0, sizeof(a));
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "decode_step";
		dpush(llm, &a);                       /* a sampling unit: the CUPTI switch path */
		snprintf(name, sizeof(name), "t%ld_r%ld", k, i % 300); /* fresh strings: the lock */
		push(name);
		pop();
		push("shared");
		pop();
		dpop(llm);
		if (i % 1000 == 0) {
			snprintf(name, sizeof(name), "domain%ld", i / 1000);
			(void)mk(name);
		}
	}
	return NULL;
}

static int child(void)
{
	pthread_t th[THREADS];
	long k;
	unsigned i;
	if (!nvtx_host_init())
		return 3;
	for (k = 0; k < THREADS; k++)
		pthread_create(&th[k], NULL, worker, (void *)k);
	for (i = 0; i < 50; i++) {
		lp_inj_request_flush(i % 5 == 0 ? 20 : 0);
		usleep(2000);
	}
	for (k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
	return 0;
}

/* Pushes and pops in the one file of `dir`, or -1. */
static long count(const char *dir, long *pops)
{
	char path[4096] = "";
	struct dirent *de;
	DIR *d = opendir(dir);
	FILE *f;
	long pushes = 0;
	struct lp_trace_preamble pre;
	struct lp_trace_rec_header h;
	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strstr(de->d_name, LP_TRACE_FILE_SUFFIX))
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
	closedir(d);
	f = fopen(path, "rb");
	if (!f || fread(&pre, sizeof(pre), 1, f) != 1)
		return -1;
	*pops = 0;
	while (fread(&h, sizeof(h), 1, f) == 1) {
		unsigned char buf[LP_TRACE_MAX_RECORD_BYTES > 65536 ? 65536 : LP_TRACE_MAX_RECORD_BYTES];
		if (h.size > sizeof(buf) || (h.size && fread(buf, h.size, 1, f) != 1))
			break;
		if (h.type == LP_TREC_NVTX) {
			struct lp_trace_nvtx r;
			memcpy(&r, buf, sizeof(r));
			pushes += r.event == LP_TRACE_NVTX_PUSH;
			*pops += r.event == LP_TRACE_NVTX_POP;
		}
	}
	fclose(f);
	return pushes;
}

int main(int argc, char **argv)
{
	char dir[4096];
	pid_t pid;
	int status = 0;
	long pushes, pops = 0, want = 0, k;
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	setenv("LLMPROF_TRACE_DIR", dir, 1);
	setenv("LLMPROF_TRACE_FLUSH_MS", "10", 1);
	setenv("LLMPROF_TRACE_BUFFER_MB", "1", 1);
	setenv("LLMPROF_TRACE_MAX_BUFFERS", "64", 1);
	setenv("LLMPROF_TRACE_SAMPLE", "every=3,first=1", 1);
	pid = fork();
	if (pid == 0)
		_exit(child());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "tsan_writer: the writer's process ended with status %d (66: a race)\n",
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return 1;
	}
	for (k = 0; k < THREADS; k++)
		want += 3 * (k % 3 == 2 ? PAIRS / 4 : PAIRS);
	pushes = count(dir, &pops);
	if (pushes != want || pops != want) {
		fprintf(stderr, "tsan_writer: %ld pushes and %ld pops in the file, %ld expected\n", pushes, pops, want);
		return 1;
	}
	printf("tsan_writer: %ld ranges from %d threads, no race reported\n", want, THREADS);
	return 0;
}
