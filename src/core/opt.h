/* opt.h: table-driven option parsing for subcommands. The same table prints `-h`.
 *
 * Options may appear anywhere before `--`; everything that is not an option (overrides such as
 * `run.mode=light`, positional paths) is collected in order into `rest`. Everything after `--`
 * goes to `tail` (the workload argv). `--name=value` and `--name value` both work.
 * The arrays handed back point into argv (no copies, nothing to free but the arrays).
 *
 *   static int dry_run; static const char *mode;
 *   struct lp_opt opts[] = {
 *     LP_OPT_FLAG(0, "dry-run", &dry_run, "print the phases and commands, run nothing"),
 *     LP_OPT_STRING(0, "mode", &mode, "MODE", "light or deep"),
 *     LP_OPT_END,
 *   };
 */
#ifndef LP_CORE_OPT_H
#define LP_CORE_OPT_H

#include <stdio.h>

#include "core/err.h"

enum lp_opt_type { LP_OPT_END_, LP_OPT_FLAG_, LP_OPT_STRING_, LP_OPT_INT_, LP_OPT_LIST_ };

/* The values of a repeatable option, in order (pointing into argv); lp_opt_release frees v. */
struct lp_opt_list {
	const char **v;
	int n;
};

struct lp_opt {
	enum lp_opt_type type;
	char short_name;
	const char *long_name;
	void *value;          /* int* for FLAG and INT, const char** for STRING, lp_opt_list* for LIST */
	const char *arg_name; /* "N", "FILE" ... */
	const char *help;
};

#define LP_OPT_FLAG(s, l, v, h) { LP_OPT_FLAG_, (s), (l), (v), NULL, (h) }
#define LP_OPT_STRING(s, l, v, a, h) { LP_OPT_STRING_, (s), (l), (v), (a), (h) }
#define LP_OPT_INT(s, l, v, a, h) { LP_OPT_INT_, (s), (l), (v), (a), (h) }
#define LP_OPT_LIST(s, l, v, a, h) { LP_OPT_LIST_, (s), (l), (v), (a), (h) }
#define LP_OPT_END { LP_OPT_END_, 0, NULL, NULL, NULL, NULL }

struct lp_args {
	const char **rest;   /* non-option words, in order (NULL-terminated) */
	int n_rest;
	const char **tail;   /* after `--` (NULL-terminated), NULL when no `--` */
	int n_tail;
	int help;            /* -h / --help seen */
};

/* Parses argv[1..argc-1] (argv[0] is the command name). Unknown options are a usage error
 * naming the option; `-h`/`--help` sets args->help. Free with lp_args_release. */
int lp_opt_parse(int argc, const char **argv, const struct lp_opt *opts, struct lp_args *args,
	struct lp_err *err);
void lp_args_release(struct lp_args *args);
/* Frees what parsing allocated for the table's LIST options and empties them. */
void lp_opt_release(const struct lp_opt *opts);
/* Prints "usage: <usage>\n\n<description>\n\noptions:\n  --x ..." to `out`. */
void lp_opt_usage(FILE *out, const char *usage, const char *description, const struct lp_opt *opts);

#endif
