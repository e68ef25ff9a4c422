/* cmd_report.c: `llmprof report RUN_DIR`: recompute the analysis from a run folder's artifacts
 * alone and rewrite every report (report/rebuild.h). Identical artifacts give identical reports.
 * Exit codes: 0 ok, 2 not a run folder (or its artifacts cannot be read), 3 damaged artifacts (a
 * truncated trace, a missing export: reports already there are kept), 1 other failures. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/err.h"
#include "core/log.h"
#include "core/opt.h"
#include "report/rebuild.h"
#include "report/reports.h"

static const char *usage_line = "llmprof report RUN_DIR";
static const char *description =
	"Recompute stages, operators, kernels, MFU/MBU and advice from the artifacts of a run\n"
	"(config.yaml, env.json, trace/, ncu/, phases.json) and rewrite kernels.md, operators.md,\n"
	"report.md, stakeholder_summary.md and summary.json in it. When an input is damaged (a\n"
	"truncated trace, an export manifest.json lists but that is gone), the warning names it,\n"
	"reports already there are kept, and the exit status is 3.";

int cmd_report(int argc, const char **argv, struct lp_ctx *ctx)
{
	struct lp_opt opts[] = { LP_OPT_END };
	struct lp_args args;
	struct lp_err err = LP_ERR_INIT;
	const char *run_dir;
	struct lp_rebuild_outcome oc;
	size_t i;
	int rc = 0;
	(void)ctx;
	if (lp_opt_parse(argc, argv, opts, &args, &err) < 0)
		return lp_err_print(&err);
	if (args.help) {
		lp_opt_usage(stdout, usage_line, description, opts);
		lp_args_release(&args);
		return 0;
	}
	if (args.n_rest != 1 || args.tail) {
		lp_log_error(args.n_rest ? "'report' takes one run folder" : "'report' needs a run folder");
		lp_log_hint("usage: %s", usage_line);
		lp_args_release(&args);
		return LP_EUSAGE;
	}
	run_dir = args.rest[0];
	if (lp_report_rebuild_ex(run_dir, &oc, &err) < 0) {
		lp_rebuild_outcome_release(&oc);
		lp_args_release(&args);
		return lp_err_print(&err);
	}
	if (oc.damaged) {
		lp_log_warn("damaged artifacts in '%s': %s", run_dir, oc.damage.data);
		if (oc.kept_existing)
			lp_log_hint("the reports already in '%s' were kept: they were not replaced by reports "
				"from damaged artifacts", run_dir);
		else
			lp_log_hint("the reports below come from what could be read");
		rc = LP_EPARTIAL;
	}
	if (oc.wrote)
		for (i = 0; i < LP_REPORT_N_FILES; i++)
			printf("%s/%s\n", run_dir, lp_report_files[i]);
	lp_rebuild_outcome_release(&oc);
	lp_args_release(&args);
	return rc;
}
