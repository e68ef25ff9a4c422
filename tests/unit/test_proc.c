/* test_proc.c: the process runner with /bin/sh children: exit codes, signals, environment
 * changes, log capture, timeouts and interrupts that kill grandchildren too, cmd.txt rendering. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/proc.h"

static char log_out[4096], log_err[4096];

static void logs(const char *dir)
{
	snprintf(log_out, sizeof(log_out), "%s/out.log", dir);
	snprintf(log_err, sizeof(log_err), "%s/err.log", dir);
}

static int stop_on_second(void *ctx)
{
	int *calls = ctx;
	return ++*calls >= 2;
}

/* The watchdog: should_stop is asked once a second and its yes stops the child like a timeout,
 * with `stopped` (not timed_out) in the result. */
static void test_should_stop(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "sleep 30", NULL };
	struct lp_proc_spec s = { argv, NULL, 0, NULL, NULL, NULL, 60, 0.3, NULL, NULL, NULL };
	struct lp_proc_result r;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b = LP_BUF_INIT;
	int calls = 0;
	(void)state;
	s.tick_ctx = &calls;
	s.should_stop = stop_on_second;
	assert_int_equal(lp_proc_run(&s, &r, &err), 0);
	assert_int_equal(calls, 2);
	assert_true(r.stopped);
	assert_false(r.timed_out);
	assert_true(r.wall_s >= 1.5 && r.wall_s < 10);
	lp_proc_describe(&r, &s, &b);
	assert_non_null(strstr(b.data, "stopped after"));
	lp_buf_release(&b);
}

static void test_exit_codes_and_logs(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 7", NULL };
	struct lp_proc_spec s = { argv, NULL, 0, NULL, NULL, NULL, 10, 0, NULL, NULL, NULL };
	struct lp_proc_result r;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	logs(lp_test_tmpdir("proc_logs"));
	s.stdout_path = log_out;
	s.stderr_path = log_err;
	assert_int_equal(lp_proc_run(&s, &r, &err), 0);
	assert_true(r.exited);
	assert_int_equal(r.exit_code, 7);
	assert_false(r.timed_out);
	lp_test_read(log_out, &b);
	assert_string_equal(b.data, "to-out\n");
	lp_test_read(log_err, &b);
	assert_string_equal(b.data, "to-err\n");
	/* one file for both */
	s.stderr_path = log_out;
	assert_int_equal(lp_proc_run(&s, &r, &err), 0);
	lp_test_read(log_out, &b);
	assert_string_equal(b.data, "to-out\nto-err\n");

	argv[2] = "kill -9 $$";
	assert_int_equal(lp_proc_run(&s, &r, &err), 0);
	assert_true(r.signaled);
	assert_int_equal(r.signal, 9);
	lp_buf_reset(&b);
	lp_proc_describe(&r, &s, &b);
	assert_non_null(strstr(b.data, "killed by signal 9"));

	argv[0] = "llmprof-no-such-program";
	assert_int_equal(lp_proc_run(&s, &r, &err), -1);
	assert_int_equal(err.kind, LP_EENV);
	assert_string_equal(err.msg, "cannot run 'llmprof-no-such-program': No such file or directory");
	lp_buf_release(&b);
}

static void test_env_changes(void **state)
{
	const char *argv[] = { "sh", "-c", "printf '%s|%s|%s' \"$LC_ALL\" \"${LP_TEST_GONE-unset}\" \"$LP_TEST_TWICE\"", NULL };
	struct lp_proc_env env[] = {
		{ "LC_ALL", "C" }, { "LP_TEST_GONE", NULL }, { "LP_TEST_TWICE", "first" }, { "LP_TEST_TWICE", "second" },
	};
	struct lp_proc_spec s = { argv, env, 4, NULL, NULL, NULL, 10, 0, NULL, NULL, NULL };
	struct lp_proc_result r;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	setenv("LP_TEST_GONE", "present", 1);
	setenv("LC_ALL", "de_DE.UTF-8", 1);
	logs(lp_test_tmpdir("proc_env"));
	s.stdout_path = log_out;
	assert_int_equal(lp_proc_run(&s, &r, &err), 0);
	assert_int_equal(r.exit_code, 0);
	lp_test_read(log_out, &b);
	assert_string_equal(b.data, "C|unset|second");
	assert_string_equal(getenv("LP_TEST_GONE"), "present");  /* ours is untouched */
	unsetenv("LP_TEST_GONE");
	unsetenv("LC_ALL");
	lp_buf_release(&b);
}

/* Dead or a zombie waiting for a reaper (containers often have no init to reap). */
static int gone(long pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && (p[2] == 'Z' || p[2] == 'X');
}

static long read_pid(const char *path)
{
	struct lp_buf b = LP_BUF_INIT;
	long pid;
	lp_test_read(path, &b);
	pid = strtol(b.data, NULL, 10);
	lp_buf_release(&b);
	return pid;
}

static void test_timeout_kills_group(void **state)
{
	char cmd[8192], pidfile[4096];
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct lp_proc_spec s = { argv, NULL, 0, NULL, NULL, NULL, 0.5, 0.3, NULL, NULL, NULL };
	struct lp_proc_result r;
	struct lp_err err = LP_ERR_INIT;
	long gc;
	int i;
	(void)state;
	snprintf(pidfile, sizeof(pidfile), "%s/gc.pid", lp_test_tmpdir("proc_timeout"));
	/* the grandchild ignores SIGTERM: only the group SIGKILL after the grace period ends it */
	snprintf(cmd, sizeof(cmd), "sh -c 'trap \"\" TERM; sleep 30' & echo $! > '%s'; wait", pidfile);
	assert_int_equal(lp_proc_run(&s, &r, &err), 0);
	assert_true(r.timed_out);
	assert_true(r.wall_s >= 0.5);
	{
		/* the real elapsed time, not the limit cast to whole seconds ("after 0 s") */
		struct lp_buf b = LP_BUF_INIT;
		char want[64];
		lp_proc_describe(&r, &s, &b);
		snprintf(want, sizeof(want), "timed out after %.1f s (limit 0.5 s)", r.wall_s);
		assert_string_equal(b.data, want);
		lp_buf_reset(&b);
		lp_proc_describe(&r, NULL, &b);
		assert_null(strstr(b.data, "after 0 s"));
		lp_buf_release(&b);
	}
	gc = read_pid(pidfile);
	assert_true(gc > 1);
	for (i = 0; i < 100 && !gone(gc); i++)
		usleep(10000);
	assert_true(gone(gc));
}

static void test_interrupt_kills_group(void **state)
{
	char cmd[8192], pidfile[4096];
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct lp_proc_spec s = { argv, NULL, 0, NULL, NULL, NULL, 30, 0.3, NULL, NULL, NULL };
	struct lp_proc_result r;
	struct lp_err err = LP_ERR_INIT;
	long gc;
	int i;
	(void)state;
	snprintf(pidfile, sizeof(pidfile), "%s/gc.pid", lp_test_tmpdir("proc_int"));
	snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > '%s'; kill -INT %ld; wait", pidfile, (long)getpid());
	lp_proc_install_signal_handlers();
	lp_proc_clear_interrupt();
	assert_int_equal(lp_proc_run(&s, &r, &err), 0);
	assert_true(r.interrupted);
	assert_false(r.timed_out);
	assert_true(r.wall_s < 10);
	assert_true(lp_proc_interrupted());
	assert_int_equal(lp_proc_interrupt_signal(), SIGINT);  /* the CLI exits 130 */
	lp_proc_clear_interrupt();
	assert_int_equal(lp_proc_interrupt_signal(), 0);
	gc = read_pid(pidfile);
	for (i = 0; i < 100 && !gone(gc); i++)
		usleep(10000);
	assert_true(gone(gc));
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

/* SIGKILL of llmprof runs no handler: the child and its grandchildren still die (the child's
 * PR_SET_PDEATHSIG and the guard process) instead of writing on into the run folder. */
static void test_child_dies_with_sigkilled_parent(void **state)
{
	char cmd[20480], cfile[4096], gfile[4096];
	const char *dir = lp_test_tmpdir("proc_orphan");
	long c = 0, gc = 0;
	pid_t runner;
	int i;
	(void)state;
	snprintf(cfile, sizeof(cfile), "%s/c.pid", dir);
	snprintf(gfile, sizeof(gfile), "%s/gc.pid", dir);
	unlink(cfile);
	unlink(gfile);
	snprintf(cmd, sizeof(cmd), "sleep 60 & echo $! > '%s'; echo $$ > '%s.tmp' && mv '%s.tmp' '%s'; wait",
		gfile, cfile, cfile, cfile);
	runner = fork();
	assert_true(runner >= 0);
	if (runner == 0) {
		/* the "llmprof" that gets SIGKILLed */
		const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
		struct lp_proc_spec s = { argv, NULL, 0, NULL, NULL, NULL, 60, 0.3, NULL, NULL, NULL };
		struct lp_proc_result r;
		struct lp_err err = LP_ERR_INIT;
		lp_proc_run(&s, &r, &err);
		_exit(0);
	}
	for (i = 0; i < 1000 && !access(cfile, F_OK) == 0; i++)
		usleep(10000);
	assert_true(access(cfile, F_OK) == 0);
	c = read_pid(cfile);
	gc = read_pid(gfile);
	assert_true(c > 1 && gc > 1);
	assert_false(gone(c));
	kill(runner, SIGKILL);
	waitpid(runner, NULL, 0);
	for (i = 0; i < 300 && !(gone(c) && gone(gc)); i++)
		usleep(10000);
	assert_true(gone(c));
	assert_true(gone(gc));
}

static void test_render(void **state)
{
	const char *argv[] = { "/opt/nvidia/nsys", "profile", "--nvtx-capture=decode_all@LLM", "-o", "my run/x", "it's", NULL };
	struct lp_proc_env env[] = { { "LC_ALL", "C" }, { "CUDA_INJECTION64_PATH", NULL }, { "X", "a b" } };
	struct lp_proc_spec s = { argv, env, 3, "logs/nsys.log", "logs/nsys.log", "/tmp/run dir", 0, 0, NULL, NULL, NULL };
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	assert_int_equal(lp_proc_render(&s, &b), 0);
	assert_string_equal(b.data, "cd '/tmp/run dir' && env -u CUDA_INJECTION64_PATH LC_ALL=C X='a b' "
		"/opt/nvidia/nsys profile --nvtx-capture=decode_all@LLM -o 'my run/x' 'it'\\''s' >logs/nsys.log 2>&1\n");
	lp_buf_release(&b);
}

static void count_tick(void *ctx, double elapsed_s)
{
	int *n = ctx;
	assert_true(elapsed_s >= 0.9);
	(*n)++;
}

/* The progress tick runs about once a second while the child does, and not after it ended. */
static void test_tick_while_running(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "sleep 2.3", NULL };
	struct lp_proc_spec s = { argv, NULL, 0, NULL, NULL, NULL, 30, 0, count_tick, NULL, NULL };
	struct lp_proc_result r;
	struct lp_err err = LP_ERR_INIT;
	int n = 0;
	(void)state;
	s.tick_ctx = &n;
	assert_int_equal(lp_proc_run(&s, &r, &err), 0);
	assert_int_equal(r.exit_code, 0);
	assert_in_range(n, 2, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tick_while_running),
		cmocka_unit_test(test_exit_codes_and_logs),
		cmocka_unit_test(test_should_stop),
		cmocka_unit_test(test_env_changes),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_interrupt_kills_group),
		cmocka_unit_test(test_child_dies_with_sigkilled_parent),
		cmocka_unit_test(test_render),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
