/* cmd.h: the subcommands of the llmprof CLI, one file each under src/cmd/.
 *
 * Each command is `int cmd_<name>(int argc, const char **argv, struct lp_ctx *ctx)`; argv[0] is
 * the command's name; it returns the exit status (enum lp_exit below; an error's kind becomes one
 * through lp_exit_status, never by its number). Commands print
 * results to stdout and use core/log.h for everything else. Options are declared as a table
 * (core/opt.h) that drives both parsing and `-h`.
 */
#ifndef LP_CMD_CMD_H
#define LP_CMD_CMD_H

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

struct lp_cmd {
	const char *name;
	int (*fn)(int argc, const char **argv, struct lp_ctx *ctx);
	const char *summary;
};

int cmd_run(int argc, const char **argv, struct lp_ctx *ctx);
int cmd_report(int argc, const char **argv, struct lp_ctx *ctx);
int cmd_artifacts(int argc, const char **argv, struct lp_ctx *ctx);
int cmd_runs(int argc, const char **argv, struct lp_ctx *ctx);
int cmd_check(int argc, const char **argv, struct lp_ctx *ctx);
int cmd_kernels(int argc, const char **argv, struct lp_ctx *ctx);
int cmd_trace(int argc, const char **argv, struct lp_ctx *ctx);
int cmd_diff(int argc, const char **argv, struct lp_ctx *ctx);

/* The command table (main.c). */
extern const struct lp_cmd lp_commands[];

/* Shared by commands that are not available yet: says so plainly and returns LP_EUSAGE. */
int lp_cmd_not_available(const char *name, const char *issue_hint);

#endif
