/* cmd_runs.c: `llmprof runs [overrides...]`: the runs under artifacts.stage2_dir, newest first,
 * with status, creation time, artifact count and size (from each manifest.json). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/rundir.h"
#include "config/config.h"
#include "core/log.h"
#include "core/opt.h"

static const char usage_line[] = "llmprof runs [overrides...]";
static const char description[] =
	"List the runs under artifacts.stage2_dir, newest first, with their status\n"
	"(running, ok, partial, failed; interrupted: a run whose process is gone; damaged: a\n"
	"folder whose manifest.json is missing or corrupt, listed last with the reason).";
static const struct lp_opt opts[] = { LP_OPT_END };

static void human_size(int64_t n, char *out, size_t cap)
{
	static const char *const units[] = { "B", "K", "M", "G", "T" };
	double v = (double)n;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(out, cap, u == 0 ? "%.0f%s" : v < 10 ? "%.1f%s" : "%.0f%s", v, units[u]);
}

static int cmd_runs(const struct lp_args *args, struct lp_ctx *ctx)
{
	struct lp_err err = LP_ERR_INIT;
	struct lp_config cfg;
	struct lp_run_info *runs = NULL;
	const char *root;
	size_t n = 0, i;
	int rc = 0;

	if (lp_config_load(&cfg, ctx->conf_dir, args->rest, (size_t)args->n_rest, &err) < 0)
		return lp_cmd_fail(&err);
	root = json_string_value(lp_config_get(&cfg, "artifacts.stage2_dir"));
	if (lp_rundir_list(root, &runs, &n, &err) < 0) {
		rc = lp_cmd_fail(&err);
	} else if (n == 0) {
		lp_log_warn("no runs under '%s'", root);
	} else {
		printf("%-28s  %-11s  %-24s  %9s  %8s\n", "RUN", "STATUS", "CREATED", "ARTIFACTS", "SIZE");
		for (i = 0; i < n; i++) {
			char size[32];
			human_size(runs[i].total_bytes, size, sizeof(size));
			if (runs[i].damaged)
				printf("%-28s  %-11s  %-24s  %9s  %8s\n", runs[i].id, runs[i].status, "-", "-", "-");
			else
				printf("%-28s  %-11s  %-24s  %9zu  %8s\n", runs[i].id, runs[i].status,
					runs[i].created_at[0] ? runs[i].created_at : "-", runs[i].n_artifacts, size);
		}
		for (i = 0; i < n; i++)
			if (runs[i].damaged)
				lp_log_warn("run folder '%s' is damaged: %s", runs[i].path, runs[i].problem);
	}
	lp_rundir_list_free(runs, n);
	lp_config_release(&cfg);
	return rc;
}

const struct lp_cmd lp_cmd_runs = {
	"runs", cmd_runs, "list runs, newest first", usage_line, description, opts,
};
