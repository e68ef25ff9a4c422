/* cmd_artifacts.c: `llmprof artifacts [RUN] [overrides...]`: the files of a run folder with their
 * sizes and the phase that wrote them (from manifest.json). RUN is a run id under
 * artifacts.stage2_dir or a folder path; without it, the newest run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/rundir.h"
#include "config/config.h"
#include "core/log.h"
#include "core/opt.h"

static const char usage_line[] = "llmprof artifacts [--bytes] [RUN_ID|RUN_DIR] [overrides...]";
static const char description[] =
	"List the artifacts of a run: size, the phase that wrote them, path inside the run folder.\n"
	"Without a run, the newest run under artifacts.stage2_dir.";

static int opt_bytes;
static const struct lp_opt opts[] = {
	LP_OPT_FLAG(0, "bytes", &opt_bytes, "print exact sizes in bytes"),
	LP_OPT_END,
};

static void human_size(int64_t n, int exact, char *out, size_t cap)
{
	static const char *const units[] = { "B", "K", "M", "G", "T" };
	double v = (double)n;
	int u = 0;
	if (exact || n < 1024) {
		snprintf(out, cap, "%" PRId64 "%s", n, exact ? "" : "B");
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(out, cap, v < 10 ? "%.1f%s" : "%.0f%s", v, units[u]);
}

static int is_override(const char *w)
{
	return strchr(w, '=') || w[0] == '~';
}

/* Picks the run folder: the one named, else the newest under the root. */
static int find_run(const struct lp_config *cfg, const char *arg, struct lp_buf *path, struct lp_err *err)
{
	const char *root = json_string_value(lp_config_get(cfg, "artifacts.stage2_dir"));
	struct lp_run_info *runs;
	size_t n;
	if (arg)
		return lp_rundir_resolve(root, arg, path, err);
	if (lp_rundir_list(root, &runs, &n, err) < 0)
		return -1;
	if (n == 0) {
		lp_err_set(err, LP_EUSAGE, "no runs under '%s'", root);
		return lp_err_hint(err, "'llmprof run' makes one; artifacts.stage2_dir=DIR looks elsewhere");
	}
	lp_buf_reset(path);
	lp_buf_adds(path, runs[0].path);
	lp_rundir_list_free(runs, n);
	return 0;
}

static void warn_missing(const struct lp_rundir *rd, const struct lp_rundir_file *files, size_t n)
{
	json_t *item;
	size_t i, j;
	json_array_foreach(json_object_get(rd->manifest, "artifacts"), i, item) {
		const char *p = json_string_value(json_object_get(item, "path"));
		for (j = 0; p && j < n && strcmp(files[j].rel, p); j++)
			;
		if (p && j == n)
			lp_log_warn("'%s' is in the manifest but missing from the run folder", p);
	}
}

static int cmd_artifacts(const struct lp_args *args, struct lp_ctx *ctx)
{
	int i, n_ovr = 0, rc = 0;
	struct lp_err err = LP_ERR_INIT;
	struct lp_config cfg;
	struct lp_rundir rd;
	struct lp_buf path = LP_BUF_INIT;
	struct lp_rundir_file *files = NULL;
	const char **ovr = NULL, *run_arg = NULL;
	size_t n = 0, k;

	ovr = calloc((size_t)args->n_rest + 1, sizeof(*ovr));
	for (i = 0; ovr && i < args->n_rest; i++) {
		if (is_override(args->rest[i])) {
			ovr[n_ovr++] = args->rest[i];
		} else if (run_arg) {
			lp_err_set(&err, LP_EUSAGE, "more than one run given: '%s' and '%s'", run_arg, args->rest[i]);
			goto fail;
		} else {
			run_arg = args->rest[i];
		}
	}
	if (!ovr) {
		lp_oom(&err);
		goto fail;
	}
	if (lp_config_load(&cfg, ctx->conf_dir, ovr, (size_t)n_ovr, &err) < 0)
		goto fail;
	rc = find_run(&cfg, run_arg, &path, &err);
	lp_config_release(&cfg);
	if (rc < 0 || lp_rundir_open(&rd, path.data, &err) < 0)
		goto fail;
	if (lp_rundir_files(&rd, &files, &n, &err) < 0) {
		lp_rundir_release(&rd);
		goto fail;
	}
	printf("run %s (%s): %s\n", rd.run_id,
		json_string_value(json_object_get(rd.manifest, "status")) ?
			json_string_value(json_object_get(rd.manifest, "status")) : "unknown",
		rd.path);
	for (k = 0; k < n; k++) {
		char size[32];
		human_size(files[k].size_bytes, opt_bytes, size, sizeof(size));
		printf("%10s  %-12s  %s\n", size, files[k].phase ? files[k].phase : "-", files[k].rel);
	}
	warn_missing(&rd, files, n);
	lp_rundir_files_free(files, n);
	lp_rundir_release(&rd);
	rc = 0;
	goto out;
fail:
	rc = lp_cmd_fail(&err);
out:
	free(ovr);
	lp_buf_release(&path);
	return rc;
}

const struct lp_cmd lp_cmd_artifacts = {
	"artifacts", cmd_artifacts, "list the artifacts of a run", usage_line, description, opts,
};
