/* log.c: stderr output of the CLI (see log.h). */
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int g_verbose;
static int g_quiet;

void lp_log_setup(int verbose, int quiet)
{
	g_verbose = verbose;
	g_quiet = quiet;
}

int lp_log_verbose(void)
{
	return g_verbose;
}

int lp_log_color(void)
{
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return 0;
	return isatty(STDERR_FILENO);
}

int lp_log_progress_enabled(void)
{
	return !g_quiet && isatty(STDERR_FILENO);
}

static void vlog(const char *label, const char *color, const char *fmt, va_list ap) LP_PRINTF(3, 0);

static void vlog(const char *label, const char *color, const char *fmt, va_list ap)
{
	if (label) {
		if (lp_log_color())
			fprintf(stderr, "%s%s:\033[0m ", color, label);
		else
			fprintf(stderr, "%s: ", label);
	}
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void lp_log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error", "\033[1;31m", fmt, ap);
	va_end(ap);
}

void lp_log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("warning", "\033[1;33m", fmt, ap);
	va_end(ap);
}

void lp_log_hint(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("hint", "\033[1;36m", fmt, ap);
	va_end(ap);
}

void lp_log_info(const char *fmt, ...)
{
	va_list ap;
	if (g_quiet || (!g_verbose && !isatty(STDERR_FILENO)))
		return;
	va_start(ap, fmt);
	vlog(NULL, "", fmt, ap);
	va_end(ap);
}

void lp_log_note(const char *fmt, ...)
{
	va_list ap;
	if (g_quiet)
		return;
	va_start(ap, fmt);
	vlog(NULL, "", fmt, ap);
	va_end(ap);
}

void lp_log_debug(const char *fmt, ...)
{
	va_list ap;
	if (!g_verbose)
		return;
	va_start(ap, fmt);
	vlog("debug", "\033[2m", fmt, ap);
	va_end(ap);
}

int lp_err_print(const struct lp_err *err)
{
	lp_log_error("%s", err->msg[0] ? err->msg : "unknown error");
	if (err->hint[0])
		lp_log_hint("%s", err->hint);
	if (g_verbose && err->file)
		fprintf(stderr, "  (at %s:%d)\n", err->file, err->line);
	return err->kind ? err->kind : LP_EOTHER;
}
