/* cmd.h: the subcommands of the llmprof CLI, one file each under src/cmd/.
 *
 * Each command file defines one `const struct lp_cmd lp_cmd_<name>`: its name, the function, the
 * one-line summary `llmprof help` lists, the usage line and description `-h` prints, and its
 * options as a table (core/opt.h) whose values are the file's static option variables. main.c
 * keeps the list of commands (lp_commands), parses a command's options with its table, answers
 * `-h`/`--help` (and `llmprof help CMD`) itself, then calls
 * `int fn(const struct lp_args *args, struct lp_ctx *ctx)` with the words that are not options
 * (args->rest) and what follows `--` (args->tail). fn returns the exit status (enum lp_exit below;
 * an error's kind becomes one through lp_exit_status, never by its number). Commands print results
 * to stdout and use core/log.h for everything else.
 */
#ifndef LP_CMD_CMD_H
#define LP_CMD_CMD_H

#include <stdio.h>

/* Exit statuses of the CLI, fixed and documented in README.md ("Exit codes"). 130 and 143 (128 +
 * the signal) end an interrupted run. */
enum lp_exit {
	LP_EXIT_OK = 0,
	LP_EXIT_OTHER = 1,    /* I/O failure, out of memory, bug */
	LP_EXIT_USAGE = 2,    /* usage or configuration error */
	LP_EXIT_PARTIAL = 3,  /* partial run (a phase failed); unreadable or damaged input */
	LP_EXIT_ENV = 4,      /* environment: a tool or GPU missing for what was asked */
};

struct lp_err;

/* The exit status of an error kind (enum lp_err_kind): the one table, src/cmd/exit.c. */
int lp_exit_status(int kind);

/* Prints err (lp_err_print: "error: ..." and its hint) and returns its exit status. */
int lp_cmd_fail(const struct lp_err *err);

struct lp_ctx {
	const char *prog;        /* "llmprof" */
	const char *conf_dir;    /* resolved conf/ folder (see main.c: lp_find_conf_dir) */
	const char *exe_dir;     /* folder of the llmprof binary (build/bin) */
	int verbose;
};

struct lp_args;
struct lp_opt;

struct lp_cmd {
	const char *name;
	int (*fn)(const struct lp_args *args, struct lp_ctx *ctx);
	const char *summary;       /* one line, for `llmprof help` */
	const char *usage;         /* "llmprof runs [overrides...]"; more forms after "\n   or: " */
	const char *description;   /* what `-h` prints under the usage line */
	const struct lp_opt *opts; /* the options, LP_OPT_END-terminated (core/opt.h) */
};

extern const struct lp_cmd lp_cmd_run, lp_cmd_report, lp_cmd_artifacts, lp_cmd_runs, lp_cmd_check,
	lp_cmd_kernels, lp_cmd_trace, lp_cmd_diff;

/* Every command, in the order `llmprof help` lists them, NULL-terminated (main.c). */
extern const struct lp_cmd *const lp_commands[];

/* Prints the command's `-h` text (usage, description, options) to out. */
void lp_cmd_usage(const struct lp_cmd *c, FILE *out);

#endif
