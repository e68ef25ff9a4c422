/* cmd_run.c: `llmprof run`: resolve the configuration, make the run folder, write provenance,
 * then (issue 6) run the phases. The work is in src/collect/prepare.c; this file only maps the
 * command line onto it and prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/prepare.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/opt.h"

static const char usage_line[] =
	"llmprof run [--mode light|deep] [--cfg] [--dry-run] [overrides...] [-- workload argv...]";
static const char description[] =
	"Profile an LLM workload and write the artifact bundle under artifacts.stage2_dir.\n"
	"Without '--' the workload is the reference model (model=tiny by default).\n"
	"Overrides: key=value, +key=value, ++key=value, ~key, group=option (docs/config.md),\n"
	"e.g. 'run.repeats=5 profiling/ncu=ncu.high model=llama-3.2-1b'.";

static int print_cfg(const struct lp_run *run)
{
	struct lp_buf out = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	if (lp_config_dump_yaml(&run->cfg, &out, &err) < 0)
		return lp_err_print(&err);
	fwrite(out.data, 1, out.len, stdout);
	lp_buf_release(&out);
	return 0;
}

static void print_plan(const struct lp_run *run)
{
	const char *root = json_string_value(lp_config_get(&run->cfg, "artifacts.stage2_dir"));
	const char *id = json_string_value(lp_config_get(&run->cfg, "run.id"));
	size_t i;
	printf("run folder: %s/%s\n", root, id ? id : "<YYYYmmdd-HHMMSS-xxxx>");
	printf("mode: %s\n", run->mode);
	printf("workload:");
	if (!run->workload_argc)
		printf(" the reference model (model=%s)", lp_config_choice(&run->cfg, "model") ?
			lp_config_choice(&run->cfg, "model") : "none");
	for (i = 0; i < run->workload_argc; i++) {
		struct lp_buf q = LP_BUF_INIT;
		lp_buf_add_shell_quoted(&q, run->workload_argv[i]);
		printf(" %s", q.data);
		lp_buf_release(&q);
	}
	printf("\nphases: provenance (config.yaml, env.json, inputs.yaml, manifest.json)\n");
}

int cmd_run(int argc, const char **argv, struct lp_ctx *ctx)
{
	const char *mode = NULL;
	int cfg_only = 0, dry_run = 0, rc = 0;
	const struct lp_opt opts[] = {
		LP_OPT_STRING(0, "mode", &mode, "MODE", "light or deep (shorthand for run.mode=MODE)"),
		LP_OPT_FLAG(0, "cfg", &cfg_only, "print the resolved configuration as YAML and exit"),
		LP_OPT_FLAG(0, "dry-run", &dry_run, "resolve everything and print the plan, run nothing"),
		LP_OPT_END,
	};
	struct lp_args args;
	struct lp_err err = LP_ERR_INIT;
	struct lp_run run;
	struct lp_run_opts ro;
	struct lp_buf mode_ovr = LP_BUF_INIT;
	const char **ovr;
	int i, n = 0;

	if (lp_opt_parse(argc, argv, opts, &args, &err) < 0)
		return lp_err_print(&err);
	if (args.help) {
		lp_opt_usage(stdout, usage_line, description, opts);
		lp_args_release(&args);
		return 0;
	}
	ovr = calloc((size_t)args.n_rest + 2, sizeof(*ovr));
	if (!ovr) {
		lp_args_release(&args);
		lp_log_error("out of memory");
		return LP_EOTHER;
	}
	if (mode) {
		lp_buf_addf(&mode_ovr, "run.mode=%s", mode);
		ovr[n++] = mode_ovr.data;
	}
	for (i = 0; i < args.n_rest; i++)
		ovr[n++] = args.rest[i];
	memset(&ro, 0, sizeof(ro));
	ro.conf_dir = ctx->conf_dir;
	ro.overrides = ovr;
	ro.n_overrides = (size_t)n;
	ro.workload_argv = args.tail;
	ro.workload_argc = (size_t)args.n_tail;
	ro.dry_run = cfg_only || dry_run;

	if (lp_run_prepare(&run, &ro, &err) < 0) {
		rc = lp_err_print(&err);
		goto out;
	}
	if (cfg_only) {
		rc = print_cfg(&run);
	} else if (dry_run) {
		print_plan(&run);
		lp_log_warn("the capture and analysis phases are not built yet: a run writes provenance only");
	} else if (lp_run_provenance(&run, NULL, &err) < 0) {
		lp_rundir_set_status(&run.dir, LP_RUN_FAILED, NULL);
		rc = lp_err_print(&err);
	} else if (lp_rundir_set_status(&run.dir, LP_RUN_OK, &err) < 0) {
		rc = lp_err_print(&err);
	} else {
		printf("%s\n", run.dir.path);
		if (run.n_pruned)
			lp_log_info("removed %zu older run(s) (artifacts.keep_last)", run.n_pruned);
		lp_log_warn("the capture and analysis phases are not built yet: '%s' holds provenance only",
			run.dir.path);
	}
	lp_run_release(&run);
out:
	free(ovr);
	lp_buf_release(&mode_ovr);
	lp_args_release(&args);
	return rc;
}
