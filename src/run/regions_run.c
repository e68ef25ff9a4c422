/* regions_run.c: the regions run (see regions_run.h): config -> region model from the ncu raw
 * page -> scopes (aggregate, per process, per device) -> ncu/regions/ rendered by
 * report/regions_report.c. */
#include "run/regions_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "analyze/regions.h"
#include "analyze/regions_args.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/vec.h"
#include "report/regions_report.h"

struct regions_job {
	struct lp_regions_cfg cfg;
	struct lp_regions r;
	struct lp_region_scope *scopes;   /* [0] aggregate, then processes, then devices */
	size_t n_scopes;
	struct lp_arena arena;            /* the ranges seen in the capture */
};

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

static int make_scopes(struct regions_job *c, struct lp_err *err)
{
	uint32_t *pids = NULL;
	int32_t *devs = NULL;
	size_t np = 0, nd = 0, i, k = 0;
	if (lp_regions_pids(&c->r, &pids, &np) < 0 || lp_regions_devices(&c->r, &devs, &nd) < 0) {
		free(pids);
		return oom(err);
	}
	c->scopes = calloc(1 + (np > 1 ? np : 0) + (nd > 1 ? nd : 0), sizeof(*c->scopes));
	if (!c->scopes) {
		free(pids);
		free(devs);
		return oom(err);
	}
	if (lp_regions_scope(&c->r, LP_REGION_SCOPE_AGGREGATE, 0, -1, &c->scopes[k], err) < 0)
		goto fail;
	c->n_scopes = ++k;
	for (i = 0; np > 1 && i < np; i++) {
		if (lp_regions_scope(&c->r, LP_REGION_SCOPE_PROCESS, pids[i], -1, &c->scopes[k], err) < 0)
			goto fail;
		c->n_scopes = ++k;
	}
	for (i = 0; nd > 1 && i < nd; i++) {
		if (lp_regions_scope(&c->r, LP_REGION_SCOPE_DEVICE, 0, devs[i], &c->scopes[k], err) < 0)
			goto fail;
		c->n_scopes = ++k;
	}
	free(pids);
	free(devs);
	return 0;
fail:
	free(pids);
	free(devs);
	return -1;
}

/* A sampled ncu run (run/ncu_sampled.h) wrote ncu/sampling.json: each group's results (their IDs
 * in the merged raw page) stand for its launches, so each row is weighed by its group's weight
 * and the tables add up to every launch of the selection, not to the sample. */
static int sampled_weights(const char *run_dir, struct lp_regions *r, struct lp_buf *note, struct lp_buf *warnings,
	struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	json_t *sj, *g, *res;
	json_error_t je;
	uint64_t *ids = NULL;
	double *w = NULL, launches = 0;
	size_t n = 0, cap_ids = 0, cap_w = 0, i, j, n_set = 0, n_groups = 0;
	int rc = -1;
	lp_buf_addf(&path, "%s/ncu/sampling.json", run_dir);
	if (path.oom)
		return oom(err);
	if (!lp_fs_is_file(path.data)) {
		lp_buf_release(&path);
		return 0;
	}
	sj = json_load_file(path.data, 0, &je);
	if (!sj) {
		lp_buf_addf(warnings, "ncu/sampling.json: %s (line %d): the region tables are not scaled to all launches\n",
			je.text, je.line);
		lp_buf_release(&path);
		return 0;
	}
	json_array_foreach(json_object_get(sj, "groups"), i, g) {
		double gw = json_number_value(json_object_get(g, "weight"));
		if (gw <= 0 || json_array_size(json_object_get(g, "results")) == 0)
			continue;
		n_groups++;
		launches += json_number_value(json_object_get(g, "launches"));
		json_array_foreach(json_object_get(g, "results"), j, res) {
			if (LP_ARRAY_RESERVE(ids, cap_ids, n + 1, err) < 0 || LP_ARRAY_RESERVE(w, cap_w, n + 1, err) < 0)
				goto out;
			ids[n] = (uint64_t)json_integer_value(json_object_get(res, "id"));
			w[n++] = gw;
		}
	}
	if (n && lp_regions_set_weights(r, ids, w, n, &n_set, err) < 0)
		goto out;
	if (n)
		lp_buf_addf(note, "each of the %zu results stands for the launches of its group (%zu groups, %.0f launches; "
			"ncu/sampling.json): times, calls and metric means are scaled to every launch of the sampled groups, "
			"min/max are the profiled launches'", n_set, n_groups, launches);
	rc = note->oom ? oom(err) : 0;
out:
	free(ids);
	free(w);
	json_decref(sj);
	lp_buf_release(&path);
	return rc;
}

static void utc_mtime(const char *path, char *out, size_t cap)
{
	struct stat st;
	struct tm tm;
	out[0] = '\0';
	if (!path || stat(path, &st) < 0 || !gmtime_r(&st.st_mtime, &tm))
		return;
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int lp_regions_run_report(const struct lp_regions_run *run, struct lp_regions_outcome *outcome,
	struct lp_err *err)
{
	struct regions_job c;
	struct lp_regions_doc d;
	struct lp_buf dir = LP_BUF_INIT, warnings = LP_BUF_INIT, sample_note = LP_BUF_INIT;
	struct lp_regions_outcome o;
	char generated_at[32] = "";
	size_t i, rl;
	int ret = -1;
	memset(&c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	memset(&o, 0, sizeof(o));
	if (outcome)
		memset(outcome, 0, sizeof(*outcome));
	if (lp_regions_cfg_load(run->ncu_preset, run->reference_workload, &c.cfg, err) < 0)
		return -1;
	if (!lp_regions_cfg_active(&c.cfg)) {
		lp_regions_cfg_release(&c.cfg);
		return 0;
	}
	o.active = 1;
	lp_buf_init(&warnings, 0);
	d.cfg = &c.cfg;
	d.r = &c.r;
	d.replay_mode_used = run->replay_mode_used;
	d.replay_note = run->replay_note;
	d.raw_csv = run->raw_csv;
	if (lp_regions_init(&c.r, &c.cfg.spec, err) < 0)
		goto out;
	d.have_raw = run->raw_csv && lp_fs_is_file(run->raw_csv);
	if (run->raw_csv) {
		rl = strlen(run->run_dir);
		d.raw_rel = run->raw_csv;
		if (!strncmp(run->raw_csv, run->run_dir, rl) && run->raw_csv[rl] == '/')
			d.raw_rel = run->raw_csv + rl + 1;
		if (!d.have_raw)
			lp_buf_addf(&warnings, "no ncu raw page at '%s': ncu profiled nothing\n", d.raw_rel);
	}
	if (d.have_raw && lp_regions_load_ncu_raw(&c.r, run->raw_csv, err) < 0)
		goto out;
	if (d.have_raw && sampled_weights(run->run_dir, &c.r, &sample_note, &warnings, err) < 0)
		goto out;
	d.sample_note = sample_note.len ? sample_note.data : NULL;
	if (!d.have_raw)
		d.raw_rel = NULL;
	if (lp_regions_finish(&c.r, err) < 0 || lp_regions_assign_dirs(&c.r, err) < 0 || make_scopes(&c, err) < 0)
		goto out;
	d.scopes = c.scopes;
	d.n_scopes = c.n_scopes;
	if (run->capture) {
		if (lp_regions_profile_ranges(run->capture, &c.arena, &d.seen, &d.n_seen, err) < 0)
			goto out;
		d.seen_source = "capture";
	} else {
		d.seen = c.r.seen;
		d.n_seen = c.r.n_seen;
		d.seen_source = "ncu";
	}
	if (run->generated_at)
		snprintf(generated_at, sizeof(generated_at), "%s", run->generated_at);
	else
		utc_mtime(d.have_raw ? run->raw_csv : NULL, generated_at, sizeof(generated_at));
	d.generated_at = generated_at;
	if (run->replay_note)
		lp_buf_addf(&warnings, "%s\n", run->replay_note);
	lp_regions_report_warnings(&d, &warnings);
	d.warnings = warnings.data;
	/* the folder is ours: rebuild it from scratch so no stale region survives */
	lp_buf_addf(&dir, "%s/ncu/regions", run->run_dir);
	if (dir.oom || warnings.oom) {
		oom(err);
		goto out;
	}
	if (lp_fs_is_dir(dir.data) && lp_fs_remove_tree(dir.data, err) < 0)
		goto out;
	if (lp_fs_mkdir_p(dir.data, err) < 0)
		goto out;
	if (lp_regions_report_write(&d, dir.data, err) < 0)
		goto out;
	o.n_regions = c.scopes[0].n_present;
	for (i = 0; i < c.r.n_inc; i++)
		o.n_unmatched += !c.r.inc_hits[i];
	for (i = 0; i < warnings.len; i++)
		o.n_warnings += warnings.data[i] == '\n';
	o.total_ms = c.scopes[0].total_ms;
	if (outcome)
		*outcome = o;
	ret = 0;
out:
	for (i = 0; i < c.n_scopes; i++)
		lp_regions_scope_release(&c.scopes[i]);
	free(c.scopes);
	lp_regions_release(&c.r);
	lp_regions_cfg_release(&c.cfg);
	lp_arena_release(&c.arena);
	lp_buf_release(&warnings);
	lp_buf_release(&sample_note);
	lp_buf_release(&dir);
	return ret;
}
