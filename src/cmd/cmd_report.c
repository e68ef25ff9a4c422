/* cmd_report.c: `llmprof report RUN_DIR`: recompute the analysis from a run folder's artifacts
 * alone and rewrite every report (run/rebuild.h). Identical artifacts give identical reports.
 * Exit codes: 0 ok, 2 not a run folder (or its artifacts cannot be read), 3 damaged artifacts (a
 * truncated trace, a missing export: reports already there are kept), 1 other failures. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cmd/cmd.h"
#include "collect/rundir.h"
#include "config/config.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/opt.h"
#include "report/html.h"
#include "report/reports.h"
#include "run/rebuild.h"

extern char **environ;

static const char usage_line[] = "llmprof report [--open] RUN_ID|RUN_DIR [overrides...]";
static const char description[] =
	"Recompute stages, operators, kernels, MFU/MBU and advice from the artifacts of a run\n"
	"(config.yaml, env.json, trace/, ncu/, phases.json) and rewrite kernels.md, operators.md,\n"
	"report.md, stakeholder_summary.md, summary.json and report.html (its figures in figures/)\n"
	"in it. When an input is damaged (a truncated trace, an export manifest.json lists but that\n"
	"is gone), the warning names it, reports already there are kept, and the exit status is 3.\n"
	"RUN_ID is a run under artifacts.stage2_dir (as 'llmprof runs' lists them), like 'artifacts'.";

static int opt_open;
static const struct lp_opt opts[] = {
	LP_OPT_FLAG(0, "open", &opt_open, "print the file:// URL of report.html; start $BROWSER on it when set"),
	LP_OPT_END,
};

/* RUN_ID or RUN_DIR, as `llmprof artifacts` takes them: a folder path, else a run id under
 * artifacts.stage2_dir of the composed configuration (overrides such as artifacts.stage2_dir=DIR). */
static int find_run(struct lp_ctx *ctx, const char *arg, const char **ovr, size_t n_ovr, struct lp_buf *path,
	struct lp_err *err)
{
	struct lp_config cfg = LP_CONFIG_INIT;
	int rc;
	if (lp_config_load(&cfg, ctx ? ctx->conf_dir : NULL, ovr, n_ovr, err) < 0)
		return -1;
	rc = lp_rundir_resolve(json_string_value(lp_config_get(&cfg, "artifacts.stage2_dir")), arg, path, err);
	lp_config_release(&cfg);
	return rc;
}

/* --open: the file:// URL of report.html on stdout, and $BROWSER started on it (not waited for:
 * a browser outlives the command). $BROWSER is shell text, as git reads $EDITOR. */
static int open_html(const char *run_dir)
{
	struct lp_buf url = LP_BUF_INIT, path = LP_BUF_INIT;
	const char *browser = getenv("BROWSER");
	int rc = 0;
	lp_buf_addf(&path, "%s/report.html", run_dir);
	if (!lp_fs_is_file(path.data) || lp_report_html_url(run_dir, &url) < 0) {
		lp_log_error("no report.html in '%s'", run_dir);
		rc = 1;
	} else {
		printf("%s\n", url.data);
		fflush(stdout);
		if (browser && *browser) {
			/* like git's editor: the value is shell text (quotes and options work), the URL its argument */
			static char sh[] = "/bin/sh", c[] = "-c", name[] = "browser";
			struct lp_buf script = LP_BUF_INIT;
			pid_t pid;
			lp_buf_addf(&script, "%s \"$@\"", browser);
			{
				char *const argv[] = { sh, c, script.data, name, url.data, NULL };
				if (script.oom || posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) != 0)
					lp_log_warn("cannot start $BROWSER ('%s')", browser);
			}
			lp_buf_release(&script);
		}
	}
	lp_buf_release(&url);
	lp_buf_release(&path);
	return rc;
}

static int cmd_report(const struct lp_args *args, struct lp_ctx *ctx)
{
	struct lp_err err = LP_ERR_INIT;
	const char *run_dir = NULL, **ovr = NULL;
	struct lp_buf path = LP_BUF_INIT;
	struct lp_rebuild_outcome oc;
	size_t i, n_ovr = 0;
	int rc = 0, n_runs = 0;

	ovr = calloc((size_t)args->n_rest + 1, sizeof(*ovr));
	for (i = 0; ovr && i < (size_t)args->n_rest; i++) {
		const char *w = args->rest[i];
		if ((strchr(w, '=') || w[0] == '~') && !lp_fs_is_dir(w))
			ovr[n_ovr++] = w;
		else if (n_runs++ == 0)
			run_dir = w;
	}
	if (!ovr || n_runs != 1 || args->tail) {
		if (!ovr)
			lp_log_error("out of memory");
		else
			lp_log_error(n_runs ? "'report' takes one run" : "'report' needs a run id or a run folder");
		lp_log_hint("usage: %s", usage_line);
		free(ovr);
		return ovr ? LP_EXIT_USAGE : LP_EXIT_OTHER;
	}
	if ((!lp_fs_is_dir(run_dir) && !strchr(run_dir, '/')) || n_ovr) {   /* a run id */
		if (find_run(ctx, run_dir, ovr, n_ovr, &path, &err) < 0) {
			free(ovr);
			return lp_cmd_fail(&err);
		}
		run_dir = path.data;
	}
	free(ovr);
	if (lp_report_rebuild_ex(run_dir, &oc, &err) < 0) {
		lp_rebuild_outcome_release(&oc);
		lp_buf_release(&path);
		return lp_cmd_fail(&err);
	}
	if (oc.damaged) {
		lp_log_warn("damaged artifacts in '%s': %s", run_dir, oc.damage.data);
		if (oc.kept_existing)
			lp_log_hint("the reports already in '%s' were kept: they were not replaced by reports "
				"from damaged artifacts", run_dir);
		else
			lp_log_hint("the reports below come from what could be read");
		rc = LP_EXIT_PARTIAL;
	}
	if (oc.wrote)
		for (i = 0; i < LP_REPORT_N_FILES; i++)
			printf("%s/%s\n", run_dir, lp_report_files[i].name);
	if (opt_open && open_html(run_dir) && !rc)
		rc = 1;
	lp_rebuild_outcome_release(&oc);
	lp_buf_release(&path);
	return rc;
}

const struct lp_cmd lp_cmd_report = {
	"report", cmd_report, "recompute the analysis and rewrite the reports of a run", usage_line, description,
	opts,
};
