/* cmd.h: the subcommands of the llmprof CLI, one file each under src/cmd/.
 *
 * Each command is `int cmd_<name>(int argc, const char **argv, struct lp_ctx *ctx)`; argv[0] is
 * the command's name; it returns the exit status (enum lp_status in core/err.h). Commands print
 * results to stdout and use core/log.h for everything else. Options are declared as a table
 * (core/opt.h) that drives both parsing and `-h`.
 */
#ifndef LP_CMD_CMD_H
#define LP_CMD_CMD_H

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
