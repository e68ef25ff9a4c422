/* err.h: the error value every fallible function fills.
 *
 * Fallible functions return 0 on success and -1 on failure, taking `struct lp_err *err` last.
 * The error holds a kind (enum lp_err_kind: what went wrong), a one-line message in git's voice
 * (lowercase, no trailing period, the subject quoted), an optional hint, and the file:line that set
 * it. A kind is not an exit status: only src/cmd/ turns kinds into exit statuses (one table,
 * lp_exit_status in cmd/cmd.h), so a library never decides how the process ends. Only the CLI
 * prints errors (lp_err_print in log.h). No allocation: the struct is plain data.
 *
 *   if (lp_fs_read_file(path, &buf, max, err) < 0) return -1;   // propagate
 *   return lp_err_set(err, LP_EUSAGE, "unknown key '%s'", key);  // returns -1
 *   if (!p) return lp_oom(err);                                   // "out of memory", LP_ENOMEM
 */
#ifndef LP_CORE_ERR_H
#define LP_CORE_ERR_H

#include <stdarg.h>

/* What went wrong. The first four keep the numbers they had when this enum was also the exit
 * status; nothing may rely on that: src/cmd/exit.c maps kinds to exit statuses. */
enum lp_err_kind {
	LP_OK = 0,
	LP_EOTHER = 1,    /* internal: a bug, or a failure no other kind describes */
	LP_EUSAGE = 2,    /* usage: bad option, argument, override, config file or config value */
	LP_EPARTIAL = 3,  /* phase: a phase of a run failed; the artifacts of earlier phases are kept */
	LP_EENV = 4,      /* env: a tool, library or GPU is missing for what was asked */
	LP_EPARSE = 5,    /* parse: an input cannot be read as its format says: corrupt, truncated,
			   * of another format, or not there (llmprof kernels SOURCE, a run's trace) */
	LP_EIO = 6,       /* io: reading, writing or creating a file or process failed */
	LP_ENOMEM = 7,    /* nomem: out of memory (lp_oom) */
	LP_EKIND_COUNT_
};
#define LP_EINTERNAL LP_EOTHER

#define LP_ERR_MSG_MAX 512
#define LP_ERR_HINT_MAX 384

struct lp_err {
	int kind;             /* enum lp_err_kind; 0 while no error was set */
	char msg[LP_ERR_MSG_MAX];
	char hint[LP_ERR_HINT_MAX];
	const char *file;
	int line;
};

#define LP_ERR_INIT { 0, "", "", 0, 0 }

#if defined(__GNUC__)
#define LP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LP_PRINTF(a, b)
#endif

/* Sets kind and message; always returns -1 so callers can `return lp_err_set(...)`.
 * A NULL err is allowed (the error is dropped). Kind 0 is taken as LP_EOTHER. */
int lp_err_set_(struct lp_err *err, int kind, const char *file, int line, const char *fmt, ...)
	LP_PRINTF(5, 6);
int lp_err_vset_(struct lp_err *err, int kind, const char *file, int line, const char *fmt,
	va_list ap) LP_PRINTF(5, 0);
#define lp_err_set(err, kind, ...) lp_err_set_((err), (kind), __FILE__, __LINE__, __VA_ARGS__)

/* Out of memory: kind LP_ENOMEM, the one message "out of memory"; returns -1. */
#define lp_oom(err) lp_err_set_((err), LP_ENOMEM, __FILE__, __LINE__, "out of memory")

/* Adds (replaces) the hint line; returns -1. */
int lp_err_hint(struct lp_err *err, const char *fmt, ...) LP_PRINTF(2, 3);

/* Prefixes the message with context: "loading 'x': <old message>"; returns -1. */
int lp_err_prefix(struct lp_err *err, const char *fmt, ...) LP_PRINTF(2, 3);

void lp_err_clear(struct lp_err *err);

/* The kind's short name: "usage", "parse", "io", "nomem", "env", "phase", "internal"; "none" for
 * LP_OK, "unknown" outside the enum. For tests and debug output, never for exit statuses. */
const char *lp_err_kind_name(int kind);

#endif
