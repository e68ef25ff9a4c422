/* phase_ncu.c: phase 5 of `llmprof run` (see pipeline.h): Nsight Compute on the kernels the
 * select phase chose (or on the NVTX regions of profiling.ncu.regions), then what it profiled of
 * the selection (ncu/selection.json) and the per-region report (ncu/regions/, run/regions_run.h).
 * With profiling.ncu.sample_per_group > 0 (the presets' default) and kernel replay, the phase
 * profiles a sample instead (run/ncu_sampled.h, docs/ncu-sampling.md). In a multi-rank job only
 * the rank profiling.ncu.rank runs under ncu (run/ncu_rank.h, docs/ranks.md). */
#include "run/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/regions_args.h"
#include "collect/ncu.h"
#include "collect/rundir.h"
#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/ncu_raw.h"
#include "run/ncu_rank.h"
#include "run/ncu_sampled.h"
#include "run/pipeline_int.h"
#include "run/regions_run.h"

static void ranges_seen(const struct lp_profile *p, struct lp_buf *out)
{
	/* names are interned: pointer pairs identify a domain@name; only the listed ones need checking */
	const struct lp_range *listed[12];
	size_t i, j, shown = 0;
	for (i = 0; i < p->n_ranges && shown < 12; i++) {
		const struct lp_range *r = &p->ranges[i];
		int dup = 0;
		for (j = 0; j < shown && !dup; j++)
			dup = listed[j]->name == r->name && listed[j]->domain == r->domain;
		if (dup || r->kind == LP_RANGE_MARK)
			continue;
		lp_buf_addf(out, "%s%s@%s", shown ? ", " : "", r->domain, r->name);
		listed[shown++] = r;
	}
	if (!shown)
		lp_buf_adds(out, "none");
}

/* Adds to ncu/selection.json which selected kernels ncu profiled (and how often), and says in
 * the phase reason how many were missed. */
static void note_profiled(struct lp_pl_state *st, const char *raw_csv)
{
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf path = LP_BUF_INIT;
	uint64_t *counts = calloc(st->topn.n_picks + 1, sizeof(*counts));
	json_t *sel, *arr, *item;
	size_t i, n_ok;
	char *text;
	if (!counts || lp_ncu_raw_kernel_table(raw_csv, NULL, &t, &err) < 0) {
		free(counts);
		return;
	}
	n_ok = lp_topn_check(&st->topn, &t, "function", counts);
	lp_rundir_path(&st->run->dir, "ncu/selection.json", &path);
	sel = json_load_file(path.data, 0, NULL);
	arr = json_object_get(sel, "selected");
	json_array_foreach(arr, i, item) {
		if (i >= st->topn.n_picks)
			break;
		json_object_set_new(item, "profiled_launches", json_integer((json_int_t)counts[i]));
		if (!counts[i])
			json_object_set_new(item, "not_profiled_why", json_string(
				"no launch matched the kernel filter inside the NVTX include ranges (launched "
				"outside them, or ncu names it differently)"));
	}
	json_object_set_new(sel, "profiled", json_integer((json_int_t)n_ok));
	text = sel ? json_dumps(sel, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
	if (text) {
		lp_err_clear(&err);
		lp_pl_wrote(st, PH_NCU, lp_rundir_write(&st->run->dir, "ncu/selection.json", text, strlen(text), "ncu", &err),
			"ncu/selection.json", &err);
	}
	if (n_ok < st->topn.n_picks)
		lp_run_warnf(st->sink, "ncu profiled %zu of the %zu selected kernels (see ncu/selection.json)", n_ok,
			st->topn.n_picks);
	free(text);
	json_decref(sel);
	lp_kernel_table_release(&t);
	lp_buf_release(&path);
	free(counts);
}

/* The rank ncu profiles in a multi-rank job (run/ncu_rank.h); the gate is found next to the
 * tracer library. */
static int resolve_rank(struct lp_pl_state *st, struct lp_ncu_rank *nr, struct lp_err *err)
{
	struct lp_buf lib = LP_BUF_INIT;
	int rc;
	if (st->pl->inject[0]) {
		const char *slash = strrchr(st->pl->inject, '/');
		lp_buf_add(&lib, st->pl->inject, slash ? (size_t)(slash - st->pl->inject) : 0);
		if (!lib.len)
			lp_buf_adds(&lib, ".");
	} else {
		lp_buf_addf(&lib, "%s/../lib", st->pl->opts.exe_dir ? st->pl->opts.exe_dir : ".");
		lp_pl_abs_path(lib.data, &lib);
	}
	if (lib.oom) {
		lp_buf_release(&lib);
		return lp_oom(err);
	}
	rc = lp_ncu_rank_resolve(&st->prof, lp_pl_cfg_int(st->run, "profiling.ncu.rank", 0), lib.data, nr, err);
	lp_buf_release(&lib);
	if (rc == 0 && nr->multi)
		lp_run_infof(st->sink, "ncu: a %zu-rank job: only rank %d runs under ncu (profiling.ncu.rank)", nr->n_ranks,
			nr->rank);
	return rc;
}

/* ---- the sampled phase (run/ncu_sampled.h) ---- */

struct sample_view {
	struct lp_pl_state *st;
	struct lp_pl_ticker t;   /* the running process's "==PROF== Profiling" count */
	char label[96];          /* "ncu 1/2, ETA 12 s": the ticker's phase */
};

static void sample_on_plan(void *ctx, const struct lp_sample_plan *p)
{
	struct sample_view *v = ctx;
	size_t i, planned = 0;
	char budget[32] = "none";
	for (i = 0; i < p->n_groups; i++)
		planned += p->groups[i].status == LP_SAMPLE_PLANNED || p->groups[i].status == LP_SAMPLE_CACHED;
	if (p->budget_s > 0)
		snprintf(budget, sizeof(budget), "%.0f s", p->budget_s);
	lp_run_infof(v->st->sink, "ncu plan: %zu of %zu groups (%.1f%% of the kernel time, %zu from the cache), K=%u, "
		"%zu ncu process%s, %llu launches, ETA %.0f s (budget %s)", planned, p->n_groups, 100.0 * p->planned_share,
		p->n_cached, p->k_used, p->n_procs, p->n_procs == 1 ? "" : "es", (unsigned long long)p->predicted, p->eta_s,
		budget);
}

static void sample_tick(void *ctx, const struct lp_ncu_sampled_progress *pr)
{
	struct sample_view *v = ctx;
	if (v->t.log_path != pr->log_path) {   /* the next process: count its log */
		v->t.log_path = pr->log_path;
		v->t.read_bytes = 0;
		v->t.profiled = 0;
	}
	snprintf(v->label, sizeof(v->label), "ncu %zu/%zu, ETA %.0f s", pr->proc + 1, pr->plan->n_procs, pr->eta_s);
	lp_pl_tick(&v->t, pr->elapsed_s);
}

/* A job of several ranks: the peers' NCCL writes over NVLink into the profiled rank's memory are
 * undone when ncu restores that memory between the passes of a kernel replay, and a collective
 * then waits forever (seen on 2 H200: docs/ncu-sampling.md). NCCL_P2P_DISABLE=1 moves NCCL's
 * buffers to host memory for the ncu phase (profiling.ncu.nccl_p2p_off), unless the user's
 * environment says otherwise. 1 when the ncu phase sets it. */
static int p2p_off(const struct lp_pl_state *st, const struct lp_ncu_rank *nr)
{
	return nr->multi && lp_pl_cfg_bool(st->run, "profiling.ncu.nccl_p2p_off") && !getenv("NCCL_P2P_DISABLE");
}

/* The tools' environment (n entries in env, room for LP_PL_ENV_MAX) with p2p_off's variable;
 * returns the new count. */
static size_t rank_env(const struct lp_pl_state *st, const struct lp_ncu_rank *nr, struct lp_proc_env *env, size_t n)
{
	if (n < LP_PL_ENV_MAX && p2p_off(st, nr))
		env[n++] = (struct lp_proc_env){ "NCCL_P2P_DISABLE", "1" };
	return n;
}

/* 1 when the sampled phase ran (its status is set); 0 when sampling does not apply (off, a range
 * replay, nothing selected): the caller runs ncu as before. */
static int run_sampled(struct lp_pl_state *st, const json_t *preset, int explicit_regions,
	const struct lp_regions_cfg *rcfg, const struct lp_ncu_rank *nr, struct lp_ncu_sampled_outcome *so)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_ncu_sampled s;
	struct lp_sample_select sel;
	struct lp_regions regs;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf out = LP_BUF_INIT, logs = LP_BUF_INIT;
	struct lp_proc_env env[LP_PL_ENV_MAX];
	struct sample_view view;
	const char *replay = json_string_value(json_object_get(preset, "replay_mode"));
	const char *run_id = strrchr(st->run->dir.path, '/');
	int64_t k = lp_pl_cfg_int(st->run, "profiling.ncu.sample_per_group", 0);
	int have_regs = 0, ran = 1;
	size_t pi;

	if (k <= 0 || (replay && strcmp(replay, "kernel")))
		return 0;
	/* issue 24: a sampled capture (trace.sample) holds the kernels of a sample of the decode steps
	 * only, and one that detached CUPTI for the warm-up (trace.warmup) none of the warm-up's, so the
	 * planner cannot number the launches: ncu runs unsampled */
	for (pi = 0; st->have_prof && pi < st->prof.n_processes; pi++) {
		const struct lp_process *p = &st->prof.processes[pi];
		if (p->sampling.mode == 2 || p->sampling.warmup == LP_TRACE_WARMUP_DETACHED) {
			lp_run_warnf(st->sink, "ncu sampling (profiling.ncu.sample_per_group) is off for this run: the capture "
				"traced %s, and its launch numbers would be wrong; %s keeps it", p->sampling.mode == 2 ?
				"a sample of the decode steps (trace.sample)" : "no launch of the program's warm-up (trace.warmup)",
				p->sampling.mode == 2 ? "trace.sample=off" : "trace.warmup=record");
			return 0;
		}
	}
	memset(&sel, 0, sizeof(sel));
	if (explicit_regions) {
		if (lp_regions_init(&regs, &rcfg->spec, &err) < 0) {
			lp_pl_set_phase(st, PH_NCU, "failed", "%s", err.msg);
			pl->fail_kind = pl->fail_kind ? pl->fail_kind : LP_EPARTIAL;
			return 1;
		}
		have_regs = 1;
		sel.regions = &regs;
	} else {
		sel.stage = lp_pl_cfg_str(st->run, "run.stage") ? lp_pl_cfg_str(st->run, "run.stage") : "decode_all";
	}
	memset(&s, 0, sizeof(s));
	lp_rundir_path(&st->run->dir, "ncu", &out);
	lp_rundir_path(&st->run->dir, "logs", &logs);
	s.ncu = pl->tools->ncu.path;
	s.preset = preset;
	s.out_dir = out.data;
	s.logs_dir = logs.data;
	s.workload = lp_argv_get(&pl->workload);
	s.env = env;
	s.n_env = rank_env(st, nr, env, lp_pl_tool_env(pl, env));
	s.capture = &st->prof;
	if (nr->multi) {
		sel.pids = nr->pids;
		sel.n_pids = nr->n_pids;
		s.rank_gate = nr->gate;
		s.rank = nr->rank;
	}
	s.select = &sel;
	s.opts.k = (unsigned)(k > LP_SAMPLE_MAX_K ? LP_SAMPLE_MAX_K : k);
	s.opts.coverage = lp_pl_cfg_num(st->run, "profiling.ncu.coverage", LP_SAMPLE_DEFAULT_COVERAGE);
	s.opts.budget_s = lp_pl_cfg_num(st->run, "profiling.ncu.budget_s", 0);
	s.workload_s = st->traced_s;
	s.use_cache = lp_pl_cfg_bool(st->run, "profiling.ncu.cache");
	s.cache_dir = lp_pl_cfg_str(st->run, "profiling.ncu.cache_dir");
	s.ident.gpu = pl->tools->n_gpus > 0 ? pl->tools->gpus[0].name : "";
	s.ident.driver = pl->tools->driver_version;
	s.ident.ncu_version = pl->tools->ncu.version;
	s.run_id = run_id ? run_id + 1 : st->run->dir.path;
	s.timeout_s = lp_pl_cfg_num(st->run, "run.timeout_s", 1800);
	s.stop_early = lp_pl_cfg_bool(st->run, "profiling.ncu.stop_early");
	s.stall_s = lp_pl_cfg_num(st->run, "profiling.ncu.stall_s", 0);
	sel.stand_ins = lp_pl_cfg_bool(st->run, "profiling.ncu.warmup_picks");
	memset(&view, 0, sizeof(view));
	view.st = st;
	view.t.sink = st->sink;
	view.t.phase = view.label;
	snprintf(view.label, sizeof(view.label), "ncu");
	s.on_plan = sample_on_plan;
	s.tick = sample_tick;
	s.ctx = &view;
	lp_pl_progress(st, PH_NCU, explicit_regions ? "NVTX regions, sampled" : "sampled");
	if (lp_ncu_sampled_run(&s, so, &err) < 0) {
		lp_pl_tick_end(st->sink, so->elapsed_s);
		lp_pl_set_phase(st, PH_NCU, "failed", "%s%s%s", err.msg, err.hint[0] ? "; hint: " : "", err.hint);
		pl->fail_kind = err.kind == LP_EENV ? LP_EENV : (pl->fail_kind ? pl->fail_kind : LP_EPARTIAL);
		goto out;
	}
	lp_pl_tick_end(st->sink, so->elapsed_s);
	if (so->have_plan && so->plan.n_groups == 0) {
		ran = 0;   /* nothing in the selection: the plain phase says what ncu finds */
		goto out;
	}
	{
		struct lp_sample_coverage c;
		struct lp_buf note = LP_BUF_INIT;
		lp_sample_coverage(&so->plan, &c);
		lp_buf_addf(&note, "sampled %zu of %zu groups (K=%u, %zu ncu process%s, %.0f s): %.1f%% of the kernel time has "
			"metrics (target %.0f%%%s)", c.n_covered, c.n_groups, so->plan.k_used, so->procs_run,
			so->procs_run == 1 ? "" : "es", so->elapsed_s, 100.0 * c.share, 100.0 * c.target, c.met ? "" : ", not met");
		if (c.n_reused)
			lp_buf_addf(&note, ", %zu reused from the cache", c.n_reused);
		if (c.n_results_warmup)
			lp_buf_addf(&note, ", %llu of %llu results from warm-up launches of the same kernel, grid, block and "
				"region path", (unsigned long long)c.n_results_warmup, (unsigned long long)c.n_results);
		if (so->metrics_na.len)
			lp_buf_addf(&note, "; metrics n/a on this GPU: %s", so->metrics_na.data);
		if (so->partial) {
			lp_pl_set_phase(st, PH_NCU, "partial", "%s; %s", so->why, note.data);
			pl->fail_kind = pl->fail_kind ? pl->fail_kind : LP_EPARTIAL;
		} else if (so->profiled_nothing) {
			lp_pl_set_phase(st, PH_NCU, "failed", "ncu profiled none of the planned launches (see ncu/sampling.json "
				"and logs/ncu_p1/ncu.log)");
			pl->fail_kind = pl->fail_kind ? pl->fail_kind : LP_EPARTIAL;
		} else {
			lp_pl_set_phase(st, PH_NCU, "ok", "%s", note.data);
		}
		lp_buf_release(&note);
	}
out:
	if (have_regs)
		lp_regions_release(&regs);
	lp_buf_release(&out);
	lp_buf_release(&logs);
	return ran;
}

void lp_pl_phase_ncu(struct lp_pl_state *st)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_ncu_plan plan;
	struct lp_ncu_outcome oc;
	struct lp_regions_cfg rc;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf out = LP_BUF_INIT, logs = LP_BUF_INIT, ncu_log = LP_BUF_INIT;
	struct lp_proc_env env[LP_PL_ENV_MAX];
	const json_t *preset = lp_config_get(&st->run->cfg, "profiling.ncu");
	json_t *preset_copy = NULL;   /* the preset as run (regions applied, or the top-N base name) */
	const json_t *inc = lp_config_get(&st->run->cfg, "profiling.ncu.regions.include");
	int explicit_regions = json_is_array(inc) && json_array_size(inc) > 0;
	int have_rc = 0, sampled = 0;
	struct lp_ncu_sampled_outcome so;
	struct lp_ncu_rank nr;

	memset(&oc, 0, sizeof(oc));
	memset(&so, 0, sizeof(so));
	memset(&nr, 0, sizeof(nr));
	if (strcmp(st->run->mode, "deep") != 0) {
		lp_pl_set_phase(st, PH_NCU, "skipped", "light mode");
		goto out;
	}
	if (!st->have_prof || strcmp(st->ph[PH_CAPTURE].status, "ok") != 0) {
		lp_pl_set_phase(st, PH_NCU, "skipped", "the capture phase did not succeed");
		goto out;
	}
	if (st->prof.n_kernels == 0) {
		lp_pl_set_phase(st, PH_NCU, "skipped", "no GPU kernels were recorded (a CPU run)");
		goto out;
	}
	if (!pl->tools->ncu.found || pl->tools->ncu.problem[0]) {
		lp_pl_set_phase(st, PH_NCU, "skipped", "ncu is not usable here: %s",
			pl->tools->ncu.problem[0] ? pl->tools->ncu.problem : "not found");
		pl->fail_kind = LP_EENV;
		goto out;
	}
	if (resolve_rank(st, &nr, &err) < 0) {
		lp_pl_set_phase(st, PH_NCU, "failed", "%s", err.msg);
		pl->fail_kind = err.kind == LP_EENV ? LP_EENV : (pl->fail_kind ? pl->fail_kind : LP_EPARTIAL);
		goto out;
	}
	if (lp_regions_cfg_load(preset, pl->reference, &rc, &err) < 0) {
		lp_pl_set_phase(st, PH_NCU, "failed", "%s", err.msg);
		pl->fail_kind = pl->fail_kind ? pl->fail_kind : LP_EPARTIAL;
		goto out;
	}
	have_rc = 1;
	if (explicit_regions) {
		/* a region run: the regions' NVTX and kernel filters replace the top-N selection */
		if (lp_regions_apply_preset(preset, &rc, &preset_copy, &err) < 0) {
			lp_pl_set_phase(st, PH_NCU, "failed", "%s", err.msg);
			pl->fail_kind = pl->fail_kind ? pl->fail_kind : LP_EPARTIAL;
			goto out;
		}
		preset = preset_copy;
	} else if (!st->have_topn || !st->topn.regex) {
		lp_pl_set_phase(st, PH_NCU, "skipped", "no kernels were selected in stage '%s'",
			lp_pl_cfg_str(st->run, "run.stage") ? lp_pl_cfg_str(st->run, "run.stage") : "decode_all");
		goto out;
	} else {
		preset_copy = json_deep_copy(preset);
		json_object_set_new(preset_copy, "kernel_name_base", json_string("function"));
		preset = preset_copy;
	}
	if (run_sampled(st, preset, explicit_regions, &rc, &nr, &so)) {
		sampled = 1;
		if (so.raw_csv[0])
			snprintf(oc.raw_csv, sizeof(oc.raw_csv), "%s", so.raw_csv);
		goto regions;
	}
	lp_ncu_sampled_outcome_release(&so);
	memset(&so, 0, sizeof(so));
	lp_pl_progress(st, PH_NCU, explicit_regions ? "NVTX regions" : st->topn.regex);
	memset(&plan, 0, sizeof(plan));
	lp_rundir_path(&st->run->dir, "ncu", &out);
	lp_rundir_path(&st->run->dir, "logs", &logs);
	plan.ncu = pl->tools->ncu.path;
	plan.preset = preset;
	plan.out_dir = out.data;
	plan.logs_dir = logs.data;
	plan.workload = lp_argv_get(&pl->workload);
	plan.env = env;
	plan.n_env = rank_env(st, &nr, env, lp_pl_tool_env(pl, env));
	if (nr.multi) {
		plan.rank_gate = nr.gate;
		plan.rank = nr.rank;
	}
	if (!explicit_regions) {
		plan.kernel_filter = st->topn.regex;
		plan.filter_mode = "per-launch-config";
	}
	plan.timeout_s = lp_pl_cfg_num(st->run, "run.timeout_s", 1800);
	lp_fs_join(&ncu_log, logs.data, "ncu.log");
	plan.tick = lp_pl_tick;
	plan.tick_ctx = &(struct lp_pl_ticker){ st->sink, "ncu", ncu_log.data, 0, 0 };
	if (lp_ncu_run(&plan, &oc, &err) < 0) {
		lp_pl_set_phase(st, PH_NCU, "failed", "%s", err.msg);
		pl->fail_kind = err.kind == LP_EENV ? LP_EENV : (pl->fail_kind ? pl->fail_kind : LP_EPARTIAL);
		lp_pl_record_tree(st, "ncu", PH_NCU);
		goto out;
	}
	if (oc.profiled_nothing) {
		struct lp_buf seen = LP_BUF_INIT;
		const json_t *ninc = json_object_get(json_object_get(preset, "nvtx"), "include");
		char *expr = ninc ? json_dumps(ninc, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
		ranges_seen(&st->prof, &seen);
		lp_pl_set_phase(st, PH_NCU, "failed", "ncu profiled no kernels with nvtx include %s; ranges seen in the capture: %s",
			expr ? expr : "[]", seen.data);
		free(expr);
		lp_buf_release(&seen);
		pl->fail_kind = pl->fail_kind ? pl->fail_kind : LP_EPARTIAL;
	} else {
		struct lp_buf note = LP_BUF_INIT;
		if (oc.retried_app_range)
			lp_buf_adds(&note, "range replay failed (Unsupported API during capture): reran in app-range mode");
		if (oc.metrics_na.len)
			lp_buf_addf(&note, "%smetrics n/a on this GPU: %s", note.len ? "; " : "", oc.metrics_na.data);
		if (note.len)
			lp_pl_set_phase(st, PH_NCU, "ok", "%s", note.data);
		else
			lp_pl_set_phase(st, PH_NCU, "ok", NULL);
		lp_buf_release(&note);
	}
	if (!explicit_regions && oc.raw_csv[0])
		note_profiled(st, oc.raw_csv);
regions:
	if (lp_regions_cfg_active(&rc) && (!sampled || strcmp(st->ph[PH_NCU].status, "failed"))) {
		struct lp_regions_run rr;
		struct lp_regions_outcome ro;
		memset(&rr, 0, sizeof(rr));
		rr.run_dir = st->run->dir.path;
		rr.ncu_preset = preset;
		rr.reference_workload = pl->reference;
		rr.raw_csv = oc.raw_csv[0] ? oc.raw_csv : NULL;
		rr.capture = &st->prof;
		rr.replay_mode_used = oc.retried_app_range ? "app-range" : NULL;
		rr.replay_note = oc.retried_app_range ?
			"range replay failed (Unsupported API during capture): reran in app-range" : NULL;
		if (lp_regions_run_report(&rr, &ro, &err) < 0)
			lp_run_warnf(st->sink, "NVTX region report: %s", err.msg);
	}
	lp_pl_record_tree(st, "ncu", PH_NCU);
out:
	if (nr.multi && st->ph[PH_NCU].status[0] && strcmp(st->ph[PH_NCU].status, "skipped")) {
		/* say whose kernels these are: the report's phase line and phases.json carry it */
		struct lp_buf why = LP_BUF_INIT;
		lp_buf_addf(&why, "ncu profiled rank %d only (of %zu ranks, profiling.ncu.rank%s)%s%s", nr.rank, nr.n_ranks,
			p2p_off(st, &nr) ? "; NCCL_P2P_DISABLE=1 for the job, profiling.ncu.nccl_p2p_off" : "",
			st->ph[PH_NCU].reason[0] ? "; " : "", st->ph[PH_NCU].reason);
		if (!why.oom)
			snprintf(st->ph[PH_NCU].reason, sizeof(st->ph[PH_NCU].reason), "%s", why.data);
		lp_buf_release(&why);
	}
	lp_pl_record_tree(st, "logs", PH_NCU);
	if (have_rc)
		lp_regions_cfg_release(&rc);
	json_decref(preset_copy);
	lp_ncu_outcome_release(&oc);
	lp_ncu_sampled_outcome_release(&so);
	lp_buf_release(&out);
	lp_buf_release(&logs);
	lp_buf_release(&ncu_log);
	lp_pl_save_phases(st);
}
