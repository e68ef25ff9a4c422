/* exit.c: the one place where error kinds (core/err.h) become exit statuses of the CLI.
 * The statuses are fixed and documented in README.md ("Exit codes"); change both together. */
#include <stdio.h>

#include "cmd/cmd.h"
#include "core/err.h"
#include "core/log.h"

/* kind -> exit status. parse is 3, not 2: a corrupt or truncated input is not a mistake on the
 * command line, and README.md has always given 3 to it ("unreadable input for kernels; damaged
 * artifacts for report"; docs/trace.md, docs/diff.md the same). io and nomem are "1 other error
 * (I/O, out of memory, bug)". */
static const int exit_of_kind[LP_EKIND_COUNT_] = {
	[LP_OK] = LP_EXIT_OK,
	[LP_EOTHER] = LP_EXIT_OTHER,
	[LP_EUSAGE] = LP_EXIT_USAGE,
	[LP_EPARTIAL] = LP_EXIT_PARTIAL,
	[LP_EENV] = LP_EXIT_ENV,
	[LP_EPARSE] = LP_EXIT_PARTIAL,
	[LP_EIO] = LP_EXIT_OTHER,
	[LP_ENOMEM] = LP_EXIT_OTHER,
};

int lp_exit_status(int kind)
{
	if (kind < 0 || kind >= LP_EKIND_COUNT_)
		return LP_EXIT_OTHER;
	return exit_of_kind[kind];
}

int lp_cmd_fail(const struct lp_err *err)
{
	lp_err_print(err);
	return err->kind ? lp_exit_status(err->kind) : LP_EXIT_OTHER;
}
