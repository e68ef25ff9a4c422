/* test_trace_nvtx.c: the NVTX half of the injected tracer, end to end on a CPU: runs
 * build/tests/lp_trace_nvtx_demo with NVTX_INJECTION64_PATH=build/lib/libllmprof_inject.so,
 * loads what it wrote with lp_trace_load and checks the exact range tree, payloads and names;
 * then fork, disabled tracing, an unwritable folder, SIGTERM and SIGKILL, and several threads
 * writing at once while flush rounds run (per-thread buffers, small ones, a 10 ms period). */
#include "testutil.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"

static char g_demo[4096], g_lib[4096];

extern char **environ;

static int setup(void **state)
{
	struct lp_buf dir = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_fs_exe_dir(&dir, &err), 0);
	snprintf(g_demo, sizeof(g_demo), "%s/lp_trace_nvtx_demo", dir.data);
	snprintf(g_lib, sizeof(g_lib), "%s/../lib/libllmprof_inject.so", dir.data);
	lp_buf_release(&dir);
	return 0;
}

/* Starts the demo with extra environment entries ("K=V", NULL-terminated); stdout to a pipe
 * when out_fd is given, else to `out_path`. Returns the pid. */
static pid_t spawn(const char *mode, const char *const *env, int *out_fd, const char *out_path)
{
	int fds[2] = { -1, -1 };
	pid_t pid;
	if (out_fd)
		assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t n = 0, i, k;
		const char **envp;
		const char *argv[3] = { g_demo, mode, NULL };
		while (environ[n])
			n++;
		envp = calloc(n + 16, sizeof(*envp));
		for (i = 0, k = 0; i < n; i++)
			if (strncmp(environ[i], "LLMPROF_TRACE", 13) && strncmp(environ[i], "NVTX_INJECTION", 14) &&
			    strncmp(environ[i], "LD_PRELOAD", 10))
				envp[k++] = environ[i];
		for (i = 0; env[i]; i++)
			envp[k++] = env[i];
		envp[k] = NULL;
		if (out_fd) {
			dup2(fds[1], 1);
			close(fds[0]);
		} else if (out_path) {
			FILE *f = freopen(out_path, "w", stdout);
			FILE *e = freopen(out_path, "a", stderr);
			(void)f;
			(void)e;
		}
		execve(g_demo, (char *const *)(uintptr_t)argv, (char *const *)(uintptr_t)envp);
		_exit(127);
	}
	if (out_fd) {
		close(fds[1]);
		*out_fd = fds[0];
	}
	return pid;
}

static int run_demo(const char *mode, const char *const *env, const char *out_path)
{
	int status = 0;
	pid_t pid = spawn(mode, env, NULL, out_path);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int32_t find(const struct lp_profile *p, const char *name)
{
	size_t i;
	int32_t found = -1;
	for (i = 0; i < p->n_ranges; i++) {
		if (!strcmp(p->ranges[i].name, name)) {
			if (found != -1)
				fail_msg("two ranges named '%s' (%d and %zu)", name, found, i);
			found = (int32_t)i;
		}
	}
	if (found < 0)
		fail_msg("no range named '%s'", name);
	return found;
}

static void load(const char *dir, struct lp_profile *p)
{
	struct lp_err err = LP_ERR_INIT;
	lp_profile_init(p, dir);
	if (lp_trace_load(dir, p, &err) < 0)
		fail_msg("%s", err.msg);
}

static void expect_range(const struct lp_profile *p, int32_t i, const char *domain, int kind,
	int32_t parent, int depth)
{
	const struct lp_range *r = &p->ranges[i];
	assert_string_equal(r->domain, domain);
	assert_int_equal(r->kind, kind);
	assert_int_equal(r->parent, parent);
	assert_int_equal(r->depth, depth);
	if (kind == LP_RANGE_MARK)
		assert_true(r->end_ns == r->start_ns);
	else
		assert_true(r->end_ns >= r->start_ns && r->end_ns != 0);
	assert_true(r->start_ns > 1500000000ull * 1000000000ull); /* CLOCK_REALTIME */
}

static void test_range_tree(void **state)
{
	const char *dir = lp_test_tmpdir("trace_nvtx/tree");
	char env_dir[4200], env_lib[4200], env_log[4200], out[4200];
	const char *env[5] = { env_dir, env_lib, env_log, "LP_DEMO_CHECK=1", NULL };
	struct lp_profile p;
	struct lp_buf text = LP_BUF_INIT;
	int32_t outer, inner, step, all, layer, i;
	char longname[LP_TRACE_MAX_STRING_BYTES + 1];
	(void)state;

	snprintf(env_dir, sizeof(env_dir), "LLMPROF_TRACE_DIR=%s/trace", dir);
	snprintf(env_lib, sizeof(env_lib), "NVTX_INJECTION64_PATH=%s", g_lib);
	snprintf(env_log, sizeof(env_log), "LLMPROF_TRACE_LOG=%s/log", dir);
	snprintf(out, sizeof(out), "%s/output", dir);
	assert_int_equal(run_demo("", env, out), 0);
	lp_test_read(out, &text);
	assert_string_equal(text.data, ""); /* nothing in the host's stdout/stderr */
	lp_buf_release(&text);

	snprintf(out, sizeof(out), "%s/trace", dir);
	load(out, &p);
	assert_int_equal(p.n_processes, 1);
	assert_string_equal(p.processes[0].cupti_status, "no cuda");
	assert_non_null(strstr(p.processes[0].name, "lp_trace_nvtx_demo"));
	assert_true(p.processes[0].host[0] != '\0');
	assert_int_equal(p.warnings, 0);
	assert_int_equal(p.n_kernels, 0);
	assert_int_equal(p.n_ranges, 25);

	outer = find(&p, "outer");
	expect_range(&p, outer, "", LP_RANGE_PUSHPOP, -1, 0);
	inner = find(&p, "inner_w");
	expect_range(&p, inner, "", LP_RANGE_PUSHPOP, outer, 1);
	i = find(&p, "ex_u64");
	expect_range(&p, i, "", LP_RANGE_PUSHPOP, inner, 2);
	assert_int_equal(p.ranges[i].payload_type, LP_PAYLOAD_U64);
	assert_int_equal(p.ranges[i].payload.u64, 42);
	i = find(&p, "ex_i64");
	assert_int_equal(p.ranges[i].payload_type, LP_PAYLOAD_I64);
	assert_int_equal(p.ranges[i].payload.i64, -7);
	assert_int_equal(p.ranges[i].parent, inner);
	i = find(&p, "ex_f64");
	assert_int_equal(p.ranges[i].payload_type, LP_PAYLOAD_F64);
	assert_true(p.ranges[i].payload.f64 == 2.5);
	i = find(&p, "ex_u32");
	assert_int_equal(p.ranges[i].payload_type, LP_PAYLOAD_U64);
	assert_int_equal(p.ranges[i].payload.u64, 7);
	i = find(&p, "ex_i32");
	assert_int_equal(p.ranges[i].payload_type, LP_PAYLOAD_I64);
	assert_int_equal(p.ranges[i].payload.i64, -3);
	i = find(&p, "ex_f32");
	assert_int_equal(p.ranges[i].payload_type, LP_PAYLOAD_F64);
	assert_true(p.ranges[i].payload.f64 == 1.5);
	expect_range(&p, find(&p, "mark_a"), "", LP_RANGE_MARK, inner, 2);

	all = find(&p, "decode_all");
	expect_range(&p, all, "LLM", LP_RANGE_PUSHPOP, -1, 0);
	step = find(&p, "decode_step");
	expect_range(&p, step, "LLM", LP_RANGE_PUSHPOP, all, 1);
	assert_int_equal(p.ranges[step].payload.u64, 3);
	layer = find(&p, "layer");
	expect_range(&p, layer, "", LP_RANGE_PUSHPOP, step, 2);
	expect_range(&p, find(&p, "domain_mark"), "LLM", LP_RANGE_MARK, layer, 3);
	assert_int_equal(lp_profile_range_find_ancestor(&p, layer, "LLM@decode_all"), all);
	assert_int_equal(lp_profile_range_find_ancestor(&p, layer, "@decode_all"), -1);
	{
		struct lp_buf path = LP_BUF_INIT;
		assert_int_equal(lp_profile_range_path(&p, layer, &path), 0);
		assert_string_equal(path.data, "decode_all/decode_step/layer");
		lp_buf_release(&path);
	}
	expect_range(&p, find(&p, "registered_w"), "LLM", LP_RANGE_PUSHPOP, all, 1);
	expect_range(&p, find(&p, "wide_domain_range"), "Wide", LP_RANGE_PUSHPOP, -1, 0);

	expect_range(&p, find(&p, "startend_a"), "", LP_RANGE_STARTEND, -1, 0);
	expect_range(&p, find(&p, "startend_w"), "", LP_RANGE_STARTEND, -1, 0);
	i = find(&p, "startend_ex");
	expect_range(&p, i, "", LP_RANGE_STARTEND, -1, 0);
	assert_int_equal(p.ranges[i].payload.i64, 5);
	expect_range(&p, find(&p, "loading"), "LLM", LP_RANGE_STARTEND, -1, 0);
	/* ended in another order than started */
	assert_true(p.ranges[find(&p, "startend_w")].end_ns >= p.ranges[find(&p, "startend_ex")].end_ns);

	expect_range(&p, find(&p, "q\"b\\c\x01" "d\n"), "", LP_RANGE_PUSHPOP, -1, 0);
	expect_range(&p, find(&p, "\xc3\xbcn\xc3\xaf\xe2\x82\xac\xf0\x9f\x98\x80"), "", LP_RANGE_PUSHPOP, -1, 0);
	memset(longname, 'x', LP_TRACE_MAX_STRING_BYTES);
	longname[LP_TRACE_MAX_STRING_BYTES] = '\0';
	find(&p, longname);
	expect_range(&p, find(&p, "mark_w"), "", LP_RANGE_MARK, -1, 0);
	expect_range(&p, find(&p, "mark_ex"), "", LP_RANGE_MARK, -1, 0);
	i = find(&p, "worker_range");
	expect_range(&p, i, "", LP_RANGE_PUSHPOP, -1, 0);
	assert_int_not_equal(p.ranges[i].tid, p.ranges[outer].tid);
	assert_int_equal(p.ranges[outer].pid, p.processes[0].pid);
	lp_profile_release(&p);
}

static void test_fork(void **state)
{
	const char *dir = lp_test_tmpdir("trace_nvtx/fork");
	char env_dir[4200], env_lib[4200], tdir[4200];
	const char *env[4] = { env_dir, env_lib, "LP_DEMO_CHECK=1", NULL };
	const char *env_off[4] = { env_dir, env_lib, "LLMPROF_TRACE_FORK=off", NULL };
	struct lp_profile p;
	size_t i, parent = 0, child = 1;
	int32_t r;
	(void)state;

	snprintf(env_dir, sizeof(env_dir), "LLMPROF_TRACE_DIR=%s/trace", dir);
	snprintf(env_lib, sizeof(env_lib), "NVTX_INJECTION64_PATH=%s", g_lib);
	snprintf(tdir, sizeof(tdir), "%s/trace", dir);
	assert_int_equal(run_demo("fork", env, NULL), 0);
	load(tdir, &p);
	assert_int_equal(p.n_processes, 2);
	if (p.processes[0].start_ns > p.processes[1].start_ns) {
		parent = 1;
		child = 0;
	}
	assert_int_not_equal(p.processes[parent].pid, p.processes[child].pid);
	/* the child's file has its own range, with an empty stack under it */
	r = find(&p, "child_range");
	assert_int_equal(p.ranges[r].pid, p.processes[child].pid);
	expect_range(&p, r, "", LP_RANGE_PUSHPOP, -1, 0);
	r = find(&p, "before_fork");
	assert_int_equal(p.ranges[r].pid, p.processes[parent].pid);
	assert_true(p.ranges[r].end_ns > 0);
	for (i = 0; i < p.n_ranges; i++)
		if (p.ranges[i].pid == p.processes[child].pid)
			assert_string_equal(p.ranges[i].name, "child_range");
	lp_profile_release(&p);

	dir = lp_test_tmpdir("trace_nvtx/fork_off");
	snprintf(env_dir, sizeof(env_dir), "LLMPROF_TRACE_DIR=%s/trace", dir);
	snprintf(tdir, sizeof(tdir), "%s/trace", dir);
	assert_int_equal(run_demo("fork", env_off, NULL), 0);
	load(tdir, &p);
	assert_int_equal(p.n_processes, 1);
	lp_profile_release(&p);
}

static void test_off_and_unwritable(void **state)
{
	const char *dir = lp_test_tmpdir("trace_nvtx/off");
	char env_dir[4200], env_lib[4200], tdir[4200];
	const char *env_off[4] = { env_dir, env_lib, "LLMPROF_TRACE=0", NULL };
	const char *env_bad[3] = { "LLMPROF_TRACE_DIR=/proc/self/llmprof-cannot-write-here", env_lib, NULL };
	(void)state;
	snprintf(env_dir, sizeof(env_dir), "LLMPROF_TRACE_DIR=%s/trace", dir);
	snprintf(env_lib, sizeof(env_lib), "NVTX_INJECTION64_PATH=%s", g_lib);
	snprintf(tdir, sizeof(tdir), "%s/trace", dir);
	assert_int_equal(run_demo("", env_off, NULL), 0);
	assert_false(lp_fs_exists(tdir));
	/* the host runs on, undisturbed, when the trace cannot be written */
	assert_int_equal(run_demo("", env_bad, NULL), 0);
}

/* Waits until the trace in `tdir` holds a range named "sleeping" (the periodic flush). */
static void wait_for_sleeping(const char *tdir)
{
	int tries;
	for (tries = 0; tries < 500; tries++) {
		struct lp_profile p;
		struct lp_err err = LP_ERR_INIT;
		size_t i;
		int found = 0;
		lp_profile_init(&p, tdir);
		if (lp_trace_load(tdir, &p, &err) == 0)
			for (i = 0; i < p.n_ranges; i++)
				found |= !strcmp(p.ranges[i].name, "sleeping");
		lp_profile_release(&p);
		if (found)
			return;
		usleep(20000);
	}
	fail_msg("the trace never showed the open range");
}

static void test_signals(void **state)
{
	const char *dir;
	char env_dir[4200], env_lib[4200], tdir[4200], ready[8] = "";
	const char *env[4] = { env_dir, env_lib, "LLMPROF_TRACE_FLUSH_MS=20", NULL };
	struct lp_profile p;
	int fd, status = 0, k;
	pid_t pid;
	(void)state;

	for (k = 0; k < 2; k++) {
		int sig = k == 0 ? SIGTERM : SIGKILL;
		dir = lp_test_tmpdir(k == 0 ? "trace_nvtx/sigterm" : "trace_nvtx/sigkill");
		snprintf(env_dir, sizeof(env_dir), "LLMPROF_TRACE_DIR=%s/trace", dir);
		snprintf(env_lib, sizeof(env_lib), "NVTX_INJECTION64_PATH=%s", g_lib);
		snprintf(tdir, sizeof(tdir), "%s/trace", dir);
		if (sig == SIGTERM)
			env[2] = "LLMPROF_TRACE_FLUSH_MS=600000"; /* only the signal can flush in time */
		else
			env[2] = "LLMPROF_TRACE_FLUSH_MS=20";
		pid = spawn("sleep", env, &fd, NULL);
		assert_true(read(fd, ready, 6) == 6);
		close(fd);
		assert_memory_equal(ready, "ready\n", 6);
		if (sig == SIGKILL)
			wait_for_sleeping(tdir);
		kill(pid, sig);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		/* the host dies of its signal, as it would without us */
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), sig);
		load(tdir, &p);
		assert_int_equal(p.n_ranges, 1);
		assert_string_equal(p.ranges[0].name, "sleeping");
		assert_int_equal(p.ranges[0].end_ns, 0); /* never closed */
		assert_int_equal(p.warnings, 0);          /* flushed whole records only */
		lp_profile_release(&p);
	}
}

static void test_threads(void **state)
{
	const char *dir = lp_test_tmpdir("trace_nvtx/threads");
	char env_dir[4200], env_lib[4200];
	const char *env[6] = { env_dir, env_lib, "LLMPROF_TRACE_FLUSH_MS=10", "LLMPROF_TRACE_BUFFER_MB=1",
			       "LLMPROF_TRACE_MAX_BUFFERS=64", NULL };
	struct lp_profile p;
	char tdir[4200];
	size_t i, per_thread[4] = { 0, 0, 0, 0 };
	int32_t outer[4];
	int k;
	(void)state;
	snprintf(env_dir, sizeof(env_dir), "LLMPROF_TRACE_DIR=%s/trace", dir);
	snprintf(env_lib, sizeof(env_lib), "NVTX_INJECTION64_PATH=%s", g_lib);
	assert_int_equal(run_demo("threads", env, NULL), 0);
	snprintf(tdir, sizeof(tdir), "%s/trace", dir);
	load(tdir, &p);
	assert_int_equal(p.warnings, 0);
	assert_int_equal(p.processes[0].dropped_records, 0);
	/* 4 x (outer + 20000 pairs) + the start/end range */
	assert_int_equal(p.n_ranges, 4 * (1 + 20000) + 1);
	for (k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof(name), "thread_%d", k);
		outer[k] = find(&p, name);
		expect_range(&p, outer[k], "", LP_RANGE_PUSHPOP, -1, 0);
	}
	for (i = 0; i < p.n_ranges; i++) {
		const struct lp_range *r = &p.ranges[i];
		if (r->parent < 0)
			continue;
		for (k = 0; k < 4 && outer[k] != r->parent; k++)
			;
		assert_true(k < 4);
		assert_int_equal(r->tid, p.ranges[outer[k]].tid);
		assert_true(r->end_ns >= r->start_ns && r->end_ns != 0);
		assert_int_equal(r->depth, 1);
		per_thread[k]++;
	}
	for (k = 0; k < 4; k++)
		assert_int_equal(per_thread[k], 20000);
	i = (size_t)find(&p, "cross_thread");
	expect_range(&p, (int32_t)i, "", LP_RANGE_STARTEND, -1, 0);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_tree),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_off_and_unwritable),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_threads),
	};
	/* Skipped (77, SKIP_RETURN_CODE in tests/CMakeLists.txt) only when the build says the tracer
	 * is not built (no NVTX v3 headers: inject/CMakeLists.txt); when it is built, a missing
	 * library or demo is a failure, not a pass. */
	setup(NULL);
#ifndef LP_HAVE_INJECT
	(void)tests;
	fprintf(stderr, "skipped: libllmprof_inject.so is not part of this build (no NVTX v3 headers)\n");
	return 77;
#else
	if (!lp_fs_is_file(g_lib) || !lp_fs_is_file(g_demo)) {
		fprintf(stderr, "FAIL: this build has the tracer, but '%s' or '%s' is missing\n", g_lib, g_demo);
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
