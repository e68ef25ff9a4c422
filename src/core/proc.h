/* proc.h: runs a child program (nsys, ncu, the workload) the way every phase needs it.
 *
 * - argv arrays only, never a shell string; argv[0] without '/' is looked up on PATH.
 * - Environment changes per child (set or unset, applied on a copy of ours): LC_ALL=C for the
 *   Nsight tools, NSYS_NVTX_PROFILER_REGISTER_ONLY=0 when nsys is gated by NVTX,
 *   CUDA_VISIBLE_DEVICES when a device is chosen, CUDA_INJECTION64_PATH for our tracer.
 * - stdout and stderr to log files (the run's logs/ folder), or inherited.
 * - The child leads its own process group. A timeout, or SIGINT/SIGTERM delivered to llmprof
 *   once lp_proc_install_signal_handlers() ran, kills the whole group: SIGTERM, a grace period,
 *   then SIGKILL, so grandchildren (the workload under ncu) die too.
 * - The child dies with llmprof, even when llmprof is SIGKILLed: PR_SET_PDEATHSIG on the child,
 *   and a guard process (outside the group) that kills the group when llmprof goes away without
 *   saying the child ended.
 * - lp_proc_render writes the same command as a shell-quoted, copy-paste runnable line for
 *   `cmd.txt` next to the phase's outputs.
 *
 * Ownership: the spec and its strings belong to the caller. Thread-safety: one lp_proc_run at a
 * time per process (the interrupt flag is global). Never prints.
 *
 *   const char *argv[] = { "ncu", "--version", NULL };
 *   struct lp_proc_env env[] = { { "LC_ALL", "C" } };
 *   struct lp_proc_spec s = { argv, env, 1, "logs/ncu.out", "logs/ncu.err", NULL, 60, 0, NULL, NULL };
 *   struct lp_proc_result r;
 *   if (lp_proc_run(&s, &r, err) < 0) return -1;        // could not start it at all
 *   if (r.timed_out || r.exit_code != 0) ...
 */
#ifndef LP_CORE_PROC_H
#define LP_CORE_PROC_H

#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"

#define LP_PROC_GRACE_S 5.0

struct lp_proc_env {
	const char *name;
	const char *value;           /* NULL: unset the variable */
};

struct lp_proc_spec {
	const char *const *argv;     /* NULL-terminated */
	const struct lp_proc_env *env;
	size_t n_env;
	const char *stdout_path;     /* NULL: inherit; the same path for both: one file */
	const char *stderr_path;
	const char *cwd;             /* NULL: ours */
	double timeout_s;            /* 0: none */
	double grace_s;              /* SIGTERM -> SIGKILL; 0: LP_PROC_GRACE_S */
	/* Called about once a second while the child runs (progress displays); may be NULL. */
	void (*tick)(void *ctx, double elapsed_s);
	void *tick_ctx;
	/* Asked after each tick (with tick_ctx): nonzero stops the child as at the timeout, and the
	 * result says `stopped` (a watchdog: ncu stuck in a replay). May be NULL. */
	int (*should_stop)(void *ctx);
};

struct lp_proc_result {
	int exited;                  /* exited normally: exit_code is valid */
	int exit_code;
	int signaled;                /* killed by signal `signal` */
	int signal;
	int timed_out;               /* we killed it at the timeout */
	int stopped;                 /* we killed it because spec->should_stop asked */
	int interrupted;             /* we killed it because llmprof got SIGINT/SIGTERM */
	double wall_s;
	long pid;                    /* the child's process id */
};

/* Seconds on CLOCK_MONOTONIC: the timeouts here, and whoever times its own work. */
double lp_mono_s(void);

/* Runs the child to its end. -1 only when it could not be started (no such program: LP_EENV;
 * log file not writable: LP_EOTHER); a non-zero exit, a signal or a timeout is a result. */
int lp_proc_run(const struct lp_proc_spec *spec, struct lp_proc_result *res, struct lp_err *err);

/* One line: `[cd DIR &&] [env -u A] B=1 prog 'arg 1' ... [>out 2>err]` plus a newline. */
int lp_proc_render(const struct lp_proc_spec *spec, struct lp_buf *out);

/* "exit 3", "killed by signal 9", "timed out after 60.2 s (limit 60 s)" (the real elapsed
 * time; spec may be NULL), "stopped after 61.0 s", "interrupted". */
void lp_proc_describe(const struct lp_proc_result *r, const struct lp_proc_spec *spec, struct lp_buf *out);

/* A growable, owned, always NULL-terminated argv (v[n] == NULL). */
struct lp_argv {
	char **v;
	size_t n, cap;
};

#define LP_ARGV_INIT { NULL, 0, 0 }

int lp_argv_add(struct lp_argv *a, const char *s);
int lp_argv_addf(struct lp_argv *a, const char *fmt, ...) LP_PRINTF(2, 3);
void lp_argv_release(struct lp_argv *a);
/* The argv as the const array lp_proc_spec wants ({ NULL } when empty). */
const char *const *lp_argv_get(const struct lp_argv *a);

/* Installs SIGINT/SIGTERM handlers that make a running lp_proc_run kill its child's group and
 * return with `interrupted` (the CLI calls this once). lp_proc_interrupted() reads the flag. */
void lp_proc_install_signal_handlers(void);
int lp_proc_interrupted(void);
/* The signal that interrupted llmprof (SIGINT, SIGTERM), 0 when none: the CLI exits 128 + it. */
int lp_proc_interrupt_signal(void);
void lp_proc_clear_interrupt(void);

#endif
