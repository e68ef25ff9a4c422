/* log.h: the CLI's voice. Results go to stdout (the callers print them); progress, warnings and
 * errors go to stderr through these functions. Errors are one line in git's voice
 * ("error: ...") with at most one "hint: ..." line. Colour only on a terminal and never when
 * NO_COLOR is set. Only the CLI (src/main.c, src/cmd/) calls these; library code returns lp_err.
 * Global state: the verbosity and colour flags, set once at start-up. */
#ifndef LP_CORE_LOG_H
#define LP_CORE_LOG_H

#include "core/err.h"

void lp_log_setup(int verbose, int quiet);
int lp_log_verbose(void);
int lp_log_color(void);           /* stderr is a tty and NO_COLOR unset */
int lp_log_progress_enabled(void); /* stderr is a terminal and not quiet */

void lp_log_error(const char *fmt, ...) LP_PRINTF(1, 2);
void lp_log_warn(const char *fmt, ...) LP_PRINTF(1, 2);
void lp_log_hint(const char *fmt, ...) LP_PRINTF(1, 2);
void lp_log_info(const char *fmt, ...) LP_PRINTF(1, 2);    /* progress; quiet when not a tty */
void lp_log_note(const char *fmt, ...) LP_PRINTF(1, 2);    /* one fact the user must see; only -q hides it */
void lp_log_debug(const char *fmt, ...) LP_PRINTF(1, 2);   /* only with --verbose */
/* Prints err as "error: msg" [+ "hint: ..."] (+ "  at file:line" with --verbose); returns err->kind. */
int lp_err_print(const struct lp_err *err);

#endif
