/* main.c: the llmprof CLI entry. Global options, the command table, dispatch.
 * Data flow of the tool: run -> collect -> parse -> analyze -> report (src/<stage>/);
 * each subcommand lives in src/cmd/cmd_<name>.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/proc.h"

const char *lp_version_string(void);
const char *lp_version_commit(void);

const struct lp_cmd *const lp_commands[] = {
	&lp_cmd_run, &lp_cmd_report, &lp_cmd_artifacts, &lp_cmd_runs, &lp_cmd_check, &lp_cmd_kernels,
	&lp_cmd_trace, &lp_cmd_diff, NULL,
};

static void usage(FILE *out)
{
	const struct lp_cmd *const *c;
	fprintf(out, "usage: llmprof [--version] [-v|--verbose] [-q|--quiet] [--config-dir DIR]\n"
		     "               <command> [options] [overrides...] [-- workload argv...]\n\n"
		     "commands:\n");
	for (c = lp_commands; *c; c++)
		fprintf(out, "  %-10s %s\n", (*c)->name, (*c)->summary);
	fprintf(out, "\nRun 'llmprof <command> -h' for a command's options.\n"
		     "Exit codes: 0 ok, 1 other error, 2 usage or config error, 3 partial run,\n"
		     "4 environment (a tool or GPU missing for what was asked).\n");
}

void lp_cmd_usage(const struct lp_cmd *c, FILE *out)
{
	lp_opt_usage(out, c->usage, c->description, c->opts);
}

static const struct lp_cmd *find_cmd(const char *name)
{
	const struct lp_cmd *const *c;
	for (c = lp_commands; *c; c++)
		if (!strcmp((*c)->name, name))
			return *c;
	return NULL;
}

/* Parses the command's options with its table, answers -h/--help, runs it. */
static int run_cmd(const struct lp_cmd *c, int argc, const char **argv, struct lp_ctx *ctx)
{
	struct lp_args args;
	struct lp_err err = LP_ERR_INIT;
	int rc;
	if (lp_opt_parse(argc, argv, c->opts, &args, &err) < 0)
		return lp_cmd_fail(&err);
	if (args.help) {
		lp_cmd_usage(c, stdout);
		rc = LP_EXIT_OK;
	} else {
		rc = c->fn(&args, ctx);
	}
	lp_args_release(&args);
	lp_opt_release(c->opts);
	return rc;
}

/* The conf/ folder: --config-dir, $LLMPROF_CONF_DIR, next to the binary (build/bin/../../conf,
 * <prefix>/share/llmprof/conf), then the source tree it was built from. */
static int find_conf_dir(const char *given, const char *exe_dir, struct lp_buf *out)
{
	const char *env = getenv("LLMPROF_CONF_DIR");
	const char *rel[] = { "/../../conf", "/../share/llmprof/conf", "/../conf" };
	size_t i;
	lp_buf_reset(out);
	if (given) {
		lp_buf_adds(out, given);
		return lp_fs_is_dir(out->data) ? 0 : -1;
	}
	if (env && *env) {
		lp_buf_adds(out, env);
		return lp_fs_is_dir(out->data) ? 0 : -1;
	}
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		struct lp_buf cand = LP_BUF_INIT;
		lp_buf_addf(&cand, "%s%s/config.yaml", exe_dir, rel[i]);
		if (lp_fs_is_file(cand.data)) {
			lp_buf_addf(out, "%s%s", exe_dir, rel[i]);
			lp_buf_release(&cand);
			return 0;
		}
		lp_buf_release(&cand);
	}
	lp_buf_addf(out, "%s/conf", LP_SOURCE_DIR);
	return lp_fs_is_dir(out->data) ? 0 : -1;
}

/* The global options may also follow the command (`llmprof run -q`), up to `--` (the workload's
 * argv is never touched). They are taken out of the command's argv; no command uses these names. */
static int take_global_options(int argc, const char **argv, const char **out, int *n_out, int *verbose,
	int *quiet, const char **config_dir)
{
	int i;
	out[(*n_out)++] = argv[0];
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			for (; i < argc; i++)
				out[(*n_out)++] = argv[i];
			break;
		}
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			*verbose = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			*quiet = 1;
		} else if (!strcmp(a, "--config-dir")) {
			if (i + 1 >= argc) {
				lp_log_error("option '--config-dir' needs a value");
				return -1;
			}
			*config_dir = argv[++i];
		} else if (!strncmp(a, "--config-dir=", 13)) {
			*config_dir = a + 13;
		} else {
			out[(*n_out)++] = a;
		}
	}
	out[*n_out] = NULL;
	return 0;
}

int main(int argc, char **argv_in)
{
	const char **argv = (const char **)(void *)argv_in;
	struct lp_buf exe_dir = LP_BUF_INIT, conf_dir = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_ctx ctx = { "llmprof", NULL, NULL, 0 };
	const char *config_dir = NULL;
	const struct lp_cmd *c;
	const char **cmd_argv;
	int verbose = 0, quiet = 0, i, rc, cmd_argc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--version")) {
			printf("llmprof %s (commit %s)\n", lp_version_string(), lp_version_commit());
			return 0;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--config-dir")) {
			if (i + 1 >= argc) {
				lp_log_error("option '--config-dir' needs a value");
				return LP_EXIT_USAGE;
			}
			config_dir = argv[++i];
		} else if (!strncmp(a, "--config-dir=", 13)) {
			config_dir = a + 13;
		} else if (a[0] == '-') {
			lp_log_error("unknown option '%s'", a);
			lp_log_hint("run 'llmprof help' for the usage");
			return LP_EXIT_USAGE;
		} else {
			break;
		}
	}
	lp_log_setup(verbose, quiet);
	if (i >= argc) {
		usage(stderr);
		return LP_EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help")) {
		if (i + 1 < argc) {
			if ((c = find_cmd(argv[i + 1]))) {
				lp_cmd_usage(c, stdout);
				return LP_EXIT_OK;
			}
			lp_log_error("'%s' is not an llmprof command", argv[i + 1]);
			return LP_EXIT_USAGE;
		}
		usage(stdout);
		return 0;
	}
	if (!(c = find_cmd(argv[i]))) {
		lp_log_error("'%s' is not an llmprof command", argv[i]);
		lp_log_hint("run 'llmprof help' for the list of commands");
		return LP_EXIT_USAGE;
	}
	cmd_argv = calloc((size_t)(argc - i) + 1, sizeof(*cmd_argv));
	if (!cmd_argv) {
		lp_log_error("out of memory");
		return LP_EXIT_OTHER;
	}
	cmd_argc = 0;
	if (take_global_options(argc - i, argv + i, cmd_argv, &cmd_argc, &verbose, &quiet, &config_dir) < 0) {
		free(cmd_argv);
		return LP_EXIT_USAGE;
	}
	lp_log_setup(verbose, quiet);
	if (lp_fs_exe_dir(&exe_dir, &err) < 0) {
		free(cmd_argv);
		return lp_cmd_fail(&err);
	}
	if (find_conf_dir(config_dir, exe_dir.data, &conf_dir) < 0 && config_dir) {
		lp_log_error("config folder '%s' not found", config_dir);
		free(cmd_argv);
		lp_buf_release(&exe_dir);
		lp_buf_release(&conf_dir);
		return LP_EXIT_USAGE;
	}
	lp_proc_install_signal_handlers();  /* Ctrl-C kills a running phase's whole process group */
	ctx.exe_dir = exe_dir.data;
	ctx.conf_dir = conf_dir.data;
	ctx.verbose = verbose;
	rc = run_cmd(c, cmd_argc, cmd_argv, &ctx);
	fflush(stdout);
	if (ferror(stdout)) {
		lp_log_error("cannot write to standard output");
		rc = rc ? rc : LP_EXIT_OTHER;
	}
	free(cmd_argv);
	lp_buf_release(&exe_dir);
	lp_buf_release(&conf_dir);
	return rc;
}
