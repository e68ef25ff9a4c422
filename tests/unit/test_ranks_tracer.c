/* test_ranks_tracer.c: the tracer's RANK record (inject/rank.c, docs/trace-format.md) on the CPU:
 * build/tests/lp_trace_nvtx_demo runs under NVTX_INJECTION64_PATH with a launcher's variables, and
 * every file it writes (the fork child's too) carries the rank, local rank, world size, the
 * variable's name and CUDA_VISIBLE_DEVICES; torchrun's names win over srun's; without any, no
 * RANK record is written. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"

extern char **environ;

static char g_demo[4096], g_lib[4096];

static int launcher_var(const char *e)
{
	static const char *const pre[] = { "RANK=", "LOCAL_RANK=", "WORLD_SIZE=", "LOCAL_WORLD_SIZE=", "OMPI_COMM_WORLD_",
		"PMIX_RANK=", "PMI_", "MPI_LOCAL", "MV2_COMM_WORLD_", "SLURM_", "CUDA_VISIBLE_DEVICES=", "LLMPROF_TRACE",
		"NVTX_INJECTION", "CUDA_INJECTION", "LD_PRELOAD" };
	size_t i;
	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(e, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

/* Runs the demo in `mode` with `env` ("K=V", NULL-terminated) and the trace folder `dir`. */
static void run_demo(const char *mode, const char *const *env, const char *dir)
{
	int status = 0;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t n = 0, i, k = 0;
		const char **envp;
		const char *argv[3] = { g_demo, mode, NULL };
		static char tdir[4200], lib[4200];
		while (environ[n])
			n++;
		envp = calloc(n + 24, sizeof(*envp));
		if (!envp)
			_exit(126);
		for (i = 0; i < n; i++)
			if (!launcher_var(environ[i]))
				envp[k++] = environ[i];
		snprintf(tdir, sizeof(tdir), "LLMPROF_TRACE_DIR=%s", dir);
		snprintf(lib, sizeof(lib), "NVTX_INJECTION64_PATH=%s", g_lib);
		envp[k++] = tdir;
		envp[k++] = lib;
		for (i = 0; env[i]; i++)
			envp[k++] = env[i];
		envp[k] = NULL;
		if (!freopen("/dev/null", "w", stdout))
			_exit(125);
		execve(g_demo, (char *const *)(uintptr_t)argv, (char *const *)(uintptr_t)envp);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

struct seen {
	size_t files, with_rank;
	struct lp_trace_rank last;
	char source[64], visible[64];
};

static void str_copy(const struct lp_trace_file *f, uint32_t sid, char *out, size_t cap)
{
	size_t len = 0;
	const char *s = sid ? lp_trace_file_string(f, sid, &len) : NULL;
	if (!s)
		len = 0;
	if (len >= cap)
		len = cap - 1;
	memcpy(out, s ? s : "", len);
	out[len] = '\0';
}

/* Reads every file of `dir`: how many, how many carry a RANK record, the last one seen. */
static void scan(const char *dir, struct seen *s)
{
	char **files = NULL;
	size_t n = 0, i;
	struct lp_err err = LP_ERR_INIT;
	memset(s, 0, sizeof(*s));
	assert_int_equal(lp_trace_list_files(dir, &files, &n, &err), 0);
	for (i = 0; i < n; i++) {
		struct lp_trace_file f;
		struct lp_trace_record rec;
		int ranks = 0;
		assert_int_equal(lp_trace_file_open(&f, files[i], &err), 0);
		while (lp_trace_file_next(&f, &rec)) {
			if (rec.type != LP_TREC_RANK)
				continue;
			assert_int_equal(rec.size, sizeof(struct lp_trace_rank));
			lp_trace_record_get(&rec, &s->last, sizeof(s->last));
			str_copy(&f, s->last.source_sid, s->source, sizeof(s->source));
			str_copy(&f, s->last.visible_devices_sid, s->visible, sizeof(s->visible));
			ranks++;
		}
		assert_true(ranks <= 1);   /* written again only when the variables changed */
		s->with_rank += ranks > 0;
		lp_trace_file_close(&f);
	}
	s->files = n;
	lp_trace_list_free(files, n);
}

static void test_torchrun_and_fork(void **state)
{
	const char *dir = lp_test_tmpdir("ranks_tracer/torchrun");
	const char *env[] = { "RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=4", "LOCAL_WORLD_SIZE=2", "CUDA_VISIBLE_DEVICES=2,3",
		"SLURM_PROCID=9", NULL };
	struct seen s;
	(void)state;
	run_demo("fork", env, dir);
	scan(dir, &s);
	assert_int_equal(s.files, 2);         /* the demo and its fork child */
	assert_int_equal(s.with_rank, 2);
	assert_int_equal(s.last.rank, 3);
	assert_int_equal(s.last.local_rank, 1);
	assert_int_equal(s.last.world_size, 4);
	assert_int_equal(s.last.local_world_size, 2);
	assert_string_equal(s.source, "RANK");
	assert_string_equal(s.visible, "2,3");
}

static void test_mpi(void **state)
{
	const char *dir = lp_test_tmpdir("ranks_tracer/mpi");
	const char *env[] = { "OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8", "RANK=not-a-number", NULL };
	struct seen s;
	(void)state;
	run_demo("", env, dir);
	scan(dir, &s);
	assert_int_equal(s.with_rank, 1);
	assert_int_equal(s.last.rank, 5);
	assert_int_equal(s.last.local_rank, -1);
	assert_int_equal(s.last.world_size, 8);
	assert_string_equal(s.source, "OMPI_COMM_WORLD_RANK");
	assert_string_equal(s.visible, "");
}

static void test_none(void **state)
{
	const char *dir = lp_test_tmpdir("ranks_tracer/none");
	const char *env[] = { NULL };
	struct seen s;
	(void)state;
	run_demo("", env, dir);
	scan(dir, &s);
	assert_int_equal(s.files, 1);
	assert_int_equal(s.with_rank, 0);
}

static void test_not_built(void **state)
{
	(void)state;
	fprintf(stderr, "libllmprof_inject.so not built (no NVTX v3 headers): nothing to test\n");
	skip();
}

int main(void)
{
	struct lp_buf dir = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	const struct CMUnitTest not_built[] = { cmocka_unit_test(test_not_built) };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torchrun_and_fork),
		cmocka_unit_test(test_mpi),
		cmocka_unit_test(test_none),
	};
	if (lp_fs_exe_dir(&dir, &err) < 0)
		return 1;
	snprintf(g_demo, sizeof(g_demo), "%s/lp_trace_nvtx_demo", dir.data);
	snprintf(g_lib, sizeof(g_lib), "%s/../lib/libllmprof_inject.so", dir.data);
	lp_buf_release(&dir);
	if (!lp_fs_is_file(g_lib) || !lp_fs_is_file(g_demo))
		return cmocka_run_group_tests(not_built, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
