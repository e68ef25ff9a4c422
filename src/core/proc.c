/* proc.c: the process runner (see proc.h). Every external program llmprof starts (nsys, ncu,
 * the workload, `--version` probes) goes through lp_proc_run, so timeouts, Ctrl-C and logs
 * behave the same in every phase. */
#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t interrupted;  /* the signal that interrupted us, 0 none */

static void on_signal(int sig)
{
	interrupted = sig;
}

void lp_proc_install_signal_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int lp_proc_interrupted(void)
{
	return interrupted != 0;
}

int lp_proc_interrupt_signal(void)
{
	return (int)interrupted;
}

void lp_proc_clear_interrupt(void)
{
	interrupted = 0;
}

double lp_mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A copy of our environment with the spec's changes applied (NULL-terminated, caller frees
 * the array and the strings it allocated: all of them, as we copy). */
static char **build_env(const struct lp_proc_spec *s)
{
	size_t n = 0, i, j, k = 0;
	char **out;
	while (environ && environ[n])
		n++;
	out = calloc(n + s->n_env + 1, sizeof(*out));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		int replaced = 0;
		for (j = 0; j < s->n_env; j++) {
			size_t nl = strlen(s->env[j].name);
			if (!strncmp(environ[i], s->env[j].name, nl) && environ[i][nl] == '=')
				replaced = 1;
		}
		if (!replaced && !(out[k++] = strdup(environ[i])))
			goto oom;
	}
	for (j = 0; j < s->n_env; j++) {
		struct lp_buf b = LP_BUF_INIT;
		size_t m;
		int later = 0;
		if (!s->env[j].value)
			continue;
		for (m = j + 1; m < s->n_env; m++)  /* the last change of a name wins */
			if (!strcmp(s->env[m].name, s->env[j].name))
				later = 1;
		if (later)
			continue;
		if (lp_buf_addf(&b, "%s=%s", s->env[j].name, s->env[j].value) < 0)
			goto oom;
		out[k++] = lp_buf_detach(&b, NULL);
	}
	return out;
oom:
	for (i = 0; i < k; i++)
		free(out[i]);
	free(out);
	return NULL;
}

static void free_env(char **env)
{
	size_t i;
	for (i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

static int open_log(const char *path, struct lp_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		lp_err_set(err, LP_EOTHER, "cannot write log '%s': %s", path, strerror(errno));
	return fd;
}

static void kill_group(pid_t pid, int *status, double grace_s)
{
	double until;
	kill(-pid, SIGTERM);
	until = lp_mono_s() + grace_s;
	while (lp_mono_s() < until) {
		if (waitpid(pid, status, WNOHANG) == pid) {
			kill(-pid, SIGKILL);  /* the leader is gone; finish what it left in its group */
			return;
		}
		sleep_ms(10);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/* The guard: a small process outside the child's group that holds the read end of a pipe only
 * llmprof writes to. llmprof says "done" (one byte) when the child has ended; EOF without it means
 * llmprof died (even of SIGKILL, which runs no handler), and the guard kills the child's whole
 * group, grandchildren included (the workload under ncu or nsys, a script's children), so that
 * nothing keeps writing into a run folder nobody watches. PR_SET_PDEATHSIG on the child covers the
 * moment before the guard exists. Returns the guard's pid (-1 when it could not start: the child
 * then has PR_SET_PDEATHSIG alone) and the pipe's write end in *wfd. */
static pid_t start_guard(pid_t child, int out_fd, int err_fd, int *wfd)
{
	int gp[2];
	pid_t g;
	*wfd = -1;
	if (pipe2(gp, O_CLOEXEC) < 0)
		return -1;
	g = fork();
	if (g < 0) {
		close(gp[0]);
		close(gp[1]);
		return -1;
	}
	if (g == 0) {
		char c;
		ssize_t r;
		/* Ctrl-C reaches llmprof's group, the guard included: llmprof handles it, not us */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		close(gp[1]);
		if (out_fd >= 0)
			close(out_fd);
		if (err_fd >= 0)
			close(err_fd);
		do
			r = read(gp[0], &c, 1);
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			kill(-child, SIGKILL);
		_exit(0);
	}
	close(gp[0]);
	*wfd = gp[1];
	return g;
}

static void stop_guard(pid_t g, int wfd)
{
	if (wfd >= 0) {
		if (write(wfd, "x", 1) < 0) {
			/* the guard is gone already: nothing to tell it */
		}
		close(wfd);
	}
	if (g > 0)
		while (waitpid(g, NULL, 0) < 0 && errno == EINTR)
			;
}

int lp_proc_run(const struct lp_proc_spec *s, struct lp_proc_result *res, struct lp_err *err)
{
	int out_fd = -1, err_fd = -1, pipefd[2] = { -1, -1 }, status = 0, child_errno = 0, guard_fd = -1;
	char **envp = NULL;
	pid_t pid, guard = -1, self = getpid();
	double t0, last_tick, grace = s->grace_s > 0 ? s->grace_s : LP_PROC_GRACE_S;
	ssize_t n;
	memset(res, 0, sizeof(*res));
	if (!s->argv || !s->argv[0])
		return lp_err_set(err, LP_EOTHER, "no program to run");
	if (s->stdout_path && (out_fd = open_log(s->stdout_path, err)) < 0)
		goto fail;
	if (s->stderr_path) {
		if (s->stdout_path && !strcmp(s->stdout_path, s->stderr_path))
			err_fd = dup(out_fd);
		else
			err_fd = open_log(s->stderr_path, err);
		if (err_fd < 0)
			goto fail;
	}
	envp = build_env(s);
	if (!envp || pipe2(pipefd, O_CLOEXEC) < 0) {
		lp_err_set(err, LP_EOTHER, "cannot start '%s': %s", s->argv[0], envp ? strerror(errno) : "out of memory");
		goto fail;
	}
	t0 = lp_mono_s();
	last_tick = t0;
	pid = fork();
	if (pid < 0) {
		lp_err_set(err, LP_EOTHER, "cannot start '%s': fork: %s", s->argv[0], strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		sigset_t none;
		int e;
		/* die with llmprof; a parent already gone before prctl ran leaves us to init */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != self)
			_exit(127);
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if ((out_fd >= 0 && dup2(out_fd, 1) < 0) || (err_fd >= 0 && dup2(err_fd, 2) < 0) ||
				(s->cwd && chdir(s->cwd) < 0)) {
			e = errno;
		} else {
			execvpe(s->argv[0], (char *const *)(uintptr_t)s->argv, envp);
			e = errno;
		}
		if (write(pipefd[1], &e, sizeof(e)) < 0) {
			/* nothing more to do: the parent sees exit 127 */
		}
		_exit(127);
	}
	setpgid(pid, pid);  /* both sides, so that the group exists before any kill */
	close(pipefd[1]);
	pipefd[1] = -1;
	do
		n = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	pipefd[0] = -1;
	if (n == (ssize_t)sizeof(child_errno)) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		lp_err_set(err, child_errno == ENOENT ? LP_EENV : LP_EOTHER, "cannot run '%s': %s", s->argv[0],
			strerror(child_errno));
		goto fail;
	}
	res->pid = (long)pid;
	guard = start_guard(pid, out_fd, err_fd, &guard_fd);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if ((s->tick || s->should_stop) && lp_mono_s() - last_tick >= 1.0) {
			last_tick = lp_mono_s();
			if (s->tick)
				s->tick(s->tick_ctx, last_tick - t0);
			if (w == 0 && s->should_stop && s->should_stop(s->tick_ctx)) {
				res->stopped = 1;
				kill_group(pid, &status, grace);
				break;
			}
		}
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			lp_err_set(err, LP_EOTHER, "waiting for '%s': %s", s->argv[0], strerror(errno));
			stop_guard(guard, guard_fd);
			goto fail;
		}
		if (interrupted) {
			res->interrupted = 1;
			kill_group(pid, &status, grace);
			break;
		}
		if (s->timeout_s > 0 && lp_mono_s() - t0 > s->timeout_s) {
			res->timed_out = 1;
			kill_group(pid, &status, grace);
			break;
		}
		sleep_ms(lp_mono_s() - t0 < 0.5 ? 2 : 20);
	}
	res->wall_s = lp_mono_s() - t0;
	stop_guard(guard, guard_fd);
	if (WIFEXITED(status)) {
		res->exited = 1;
		res->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signaled = 1;
		res->signal = WTERMSIG(status);
	}
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	free_env(envp);
	return 0;
fail:
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	free_env(envp);
	return -1;
}

int lp_proc_render(const struct lp_proc_spec *s, struct lp_buf *out)
{
	size_t i;
	int unsets = 0;
	if (s->cwd) {
		lp_buf_adds(out, "cd ");
		lp_buf_add_shell_quoted(out, s->cwd);
		lp_buf_adds(out, " && ");
	}
	for (i = 0; i < s->n_env; i++)
		if (!s->env[i].value)
			unsets = 1;
	if (unsets) {
		lp_buf_adds(out, "env");
		for (i = 0; i < s->n_env; i++)
			if (!s->env[i].value) {
				lp_buf_adds(out, " -u ");
				lp_buf_add_shell_quoted(out, s->env[i].name);
			}
		lp_buf_addc(out, ' ');
	}
	for (i = 0; i < s->n_env; i++) {
		if (!s->env[i].value)
			continue;
		lp_buf_addf(out, "%s=", s->env[i].name);
		lp_buf_add_shell_quoted(out, s->env[i].value);
		lp_buf_addc(out, ' ');
	}
	for (i = 0; s->argv && s->argv[i]; i++) {
		if (i)
			lp_buf_addc(out, ' ');
		lp_buf_add_shell_quoted(out, s->argv[i]);
	}
	if (s->stdout_path) {
		lp_buf_adds(out, " >");
		lp_buf_add_shell_quoted(out, s->stdout_path);
	}
	if (s->stderr_path) {
		if (s->stdout_path && !strcmp(s->stdout_path, s->stderr_path)) {
			lp_buf_adds(out, " 2>&1");
		} else {
			lp_buf_adds(out, " 2>");
			lp_buf_add_shell_quoted(out, s->stderr_path);
		}
	}
	lp_buf_addc(out, '\n');
	return out->oom ? -1 : 0;
}

void lp_proc_describe(const struct lp_proc_result *r, const struct lp_proc_spec *s, struct lp_buf *out)
{
	if (r->interrupted)
		lp_buf_adds(out, "interrupted");
	else if (r->timed_out && s && s->timeout_s > 0)
		lp_buf_addf(out, "timed out after %.1f s (limit %g s)", r->wall_s, s->timeout_s);
	else if (r->timed_out)
		lp_buf_addf(out, "timed out after %.1f s", r->wall_s);
	else if (r->stopped)
		lp_buf_addf(out, "stopped after %.1f s", r->wall_s);
	else if (r->signaled)
		lp_buf_addf(out, "killed by signal %d (%s)", r->signal, strsignal(r->signal));
	else
		lp_buf_addf(out, "exit %d", r->exit_code);
}

int lp_argv_add(struct lp_argv *a, const char *s)
{
	char *c;
	if (a->n + 2 > a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 16;
		char **nv = realloc(a->v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		a->v = nv;
		a->cap = nc;
	}
	c = strdup(s);
	if (!c)
		return -1;
	a->v[a->n++] = c;
	a->v[a->n] = NULL;
	return 0;
}

int lp_argv_addf(struct lp_argv *a, const char *fmt, ...)
{
	struct lp_buf b = LP_BUF_INIT;
	va_list ap;
	int rc;
	va_start(ap, fmt);
	rc = lp_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (rc == 0)
		rc = lp_argv_add(a, b.data);
	lp_buf_release(&b);
	return rc;
}

void lp_argv_release(struct lp_argv *a)
{
	size_t i;
	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

const char *const *lp_argv_get(const struct lp_argv *a)
{
	static const char *const empty[] = { NULL };
	return a->v ? (const char *const *)a->v : empty;
}
