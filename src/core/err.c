/* err.c: filling struct lp_err (see err.h). Part of src/core, used by every stage. */
#include "core/err.h"

#include <stdio.h>
#include <string.h>

int lp_err_vset_(struct lp_err *err, int kind, const char *file, int line, const char *fmt,
	va_list ap)
{
	if (!err)
		return -1;
	err->kind = kind ? kind : LP_EOTHER;
	err->file = file;
	err->line = line;
	err->hint[0] = '\0';
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return -1;
}

int lp_err_set_(struct lp_err *err, int kind, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lp_err_vset_(err, kind, file, line, fmt, ap);
	va_end(ap);
	return -1;
}

int lp_err_hint(struct lp_err *err, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
	return -1;
}

int lp_err_prefix(struct lp_err *err, const char *fmt, ...)
{
	char prefix[LP_ERR_MSG_MAX];
	char old[LP_ERR_MSG_MAX];
	va_list ap;
	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	{
		size_t n = strlen(prefix);
		if (n > sizeof(err->msg) - 3)
			n = sizeof(err->msg) - 3;
		memcpy(err->msg, prefix, n);
		memcpy(err->msg + n, ": ", 2);
		n += 2;
		memcpy(err->msg + n, old, sizeof(err->msg) - n - 1);
		err->msg[sizeof(err->msg) - 1] = '\0';
	}
	return -1;
}

void lp_err_clear(struct lp_err *err)
{
	if (!err)
		return;
	err->kind = 0;
	err->msg[0] = '\0';
	err->hint[0] = '\0';
	err->file = NULL;
	err->line = 0;
}

const char *lp_err_kind_name(int kind)
{
	static const char *const names[LP_EKIND_COUNT_] = {
		[LP_OK] = "none",
		[LP_EOTHER] = "internal",
		[LP_EUSAGE] = "usage",
		[LP_EPARTIAL] = "phase",
		[LP_EENV] = "env",
		[LP_EPARSE] = "parse",
		[LP_EIO] = "io",
		[LP_ENOMEM] = "nomem",
	};
	return kind >= 0 && kind < LP_EKIND_COUNT_ ? names[kind] : "unknown";
}
