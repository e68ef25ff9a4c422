/* prepare.c: from command-line words to a run folder with its provenance (see prepare.h). The
 * first step of `llmprof run`; the phases of the pipeline follow on the struct lp_run it fills. */
#include "run/prepare.h"

#include <string.h>

#include "collect/provenance.h"

int lp_run_prepare(struct lp_run *run, const struct lp_run_opts *opts, struct lp_err *err)
{
	const char *root, *id;
	memset(run, 0, sizeof(*run));
	run->workload_argv = opts->workload_argv;
	run->workload_argc = opts->workload_argv ? opts->workload_argc : 0;
	if (lp_config_load(&run->cfg, opts->conf_dir, opts->overrides, opts->n_overrides, err) < 0)
		return -1;
	if (lp_config_get_string(&run->cfg, "run.mode", &run->mode, err) < 0 ||
	    lp_config_get_string(&run->cfg, "artifacts.stage2_dir", &root, err) < 0 ||
	    lp_config_get_string(&run->cfg, "run.id", &id, err) < 0)
		goto fail;
	if (opts->dry_run)
		return 0;
	if (lp_rundir_create(&run->dir, root, id, err) < 0)
		goto fail;
	return 0;
fail:
	lp_run_release(run);
	return -1;
}

int lp_run_provenance(struct lp_run *run, const json_t *tools, struct lp_err *err)
{
	json_t *keep;
	const char *root;
	if (lp_prov_write(&run->dir, &run->cfg, run->workload_argv, run->workload_argc, tools, err) < 0)
		return -1;
	keep = lp_config_get(&run->cfg, "artifacts.keep_last");
	if (!json_is_integer(keep))
		return 0;
	if (lp_config_get_string(&run->cfg, "artifacts.stage2_dir", &root, err) < 0)
		return -1;
	return lp_rundir_prune(root, (int64_t)json_integer_value(keep), run->dir.run_id, &run->n_pruned,
		err);
}

void lp_run_release(struct lp_run *run)
{
	lp_config_release(&run->cfg);
	lp_rundir_release(&run->dir);
	memset(run, 0, sizeof(*run));
}
