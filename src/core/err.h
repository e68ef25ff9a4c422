/* err.h: the error value every fallible function fills.
 *
 * Fallible functions return 0 on success and -1 on failure, taking `struct lp_err *err` last.
 * The error holds an exit status (enum lp_status), a one-line message in git's voice (lowercase,
 * no trailing period, the subject quoted), an optional hint, and the file:line that set it.
 * Only the CLI prints errors (lp_err_print in log.h). No allocation: the struct is plain data.
 *
 *   if (lp_fs_read_file(path, &buf, max, err) < 0) return -1;   // propagate
 *   return lp_err_set(err, LP_EUSAGE, "unknown key '%s'", key);  // returns -1
 */
#ifndef LP_CORE_ERR_H
#define LP_CORE_ERR_H

#include <stdarg.h>

/* Exit statuses of the CLI, fixed and documented in README.md. */
enum lp_status {
	LP_OK = 0,
	LP_EOTHER = 1,    /* anything else: I/O failure, bug, resource exhausted */
	LP_EUSAGE = 2,    /* usage or configuration error, bad input */
	LP_EPARTIAL = 3,  /* partial run: a phase failed, earlier artifacts kept; unreadable input for kernels */
	LP_EENV = 4,      /* environment: a tool or GPU missing for what was asked */
};

#define LP_ERR_MSG_MAX 512
#define LP_ERR_HINT_MAX 384

struct lp_err {
	int status;
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

/* Sets status and message; always returns -1 so callers can `return lp_err_set(...)`.
 * A NULL err is allowed (the error is dropped). */
int lp_err_set_(struct lp_err *err, int status, const char *file, int line, const char *fmt, ...)
	LP_PRINTF(5, 6);
int lp_err_vset_(struct lp_err *err, int status, const char *file, int line, const char *fmt,
	va_list ap) LP_PRINTF(5, 0);
#define lp_err_set(err, status, ...) lp_err_set_((err), (status), __FILE__, __LINE__, __VA_ARGS__)

/* Adds (replaces) the hint line; returns -1. */
int lp_err_hint(struct lp_err *err, const char *fmt, ...) LP_PRINTF(2, 3);

/* Prefixes the message with context: "loading 'x': <old message>"; returns -1. */
int lp_err_prefix(struct lp_err *err, const char *fmt, ...) LP_PRINTF(2, 3);

void lp_err_clear(struct lp_err *err);

#endif
