/* ncu_sampled.c: the sampled Nsight Compute phase (see ncu_sampled.h). The plan comes from
 * analyze/ncu_sample.c; this file runs it: ncu processes through collect/ncu.c, the cache through
 * collect/ncu_cache.c, and the merged export the analysis reads afterwards. */
#include "run/ncu_sampled.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/proc.h"
#include "core/str.h"
#include "core/vec.h"
#include "parse/csv.h"
#include "parse/ncu_raw.h"

void lp_ncu_sampled_costs(const json_t *preset, double workload_s, double *per_launch_s, double *per_process_s)
{
	const char *set = json_string_value(json_object_get(preset, "set"));
	int passes = lp_sample_passes_estimate(set, json_array_size(json_object_get(preset, "sections")),
		json_array_size(json_object_get(preset, "metrics")));
	/* a profiled launch of a long program costs more (bench/ncu_sampling/README.md section 4: 0.3 s
	 * early to 3-5 s late in a 36 s PyTorch program): 10 ms more per second of traced program */
	*per_launch_s = lp_sample_launch_cost_s(passes) + 0.01 * (workload_s > 0 ? workload_s : 0);
	/* ncu's start and the exports; the workload itself is opts.program_s (LP_SAMPLE_PROGRAM_FACTOR
	 * times slower under ncu), all of it or, with stop_early, up to the last profiled launch */
	*per_process_s = 5.0;
}

void lp_ncu_sampled_outcome_release(struct lp_ncu_sampled_outcome *o)
{
	if (o->have_plan)
		lp_sample_plan_release(&o->plan);
	lp_sample_input_release(&o->input);
	lp_buf_release(&o->metrics_na);
	o->have_plan = 0;
}

/* ---- which results belong to which group ---- */

struct row_info {
	int32_t group;               /* -1 dropped */
	int warmup;                  /* 1 a warm-up launch, 0 not, -1 as its launch says */
	int64_t launch;              /* the input launch it was, -1 not known */
	uint64_t id;                 /* ncu's result ID in the process's page */
	double duration_ns;
};

struct attach_ctx {
	struct lp_sample_plan *plan;
	const struct lp_sample_select *sel;
	struct row_info *rows;       /* per row of the page */
	size_t n_rows, cap;
	const uint32_t *expect;      /* the launches the process profiles, in order (lp_sample_expected) */
	size_t n_expect;
	size_t fallback;             /* rows not where expected: attached by name, grid, block, region */
	struct lp_ncu_nvtx_stack *scratch;   /* result_region's */
};

/* The region of a result: the stage when its stack is in it (a warm-up's only with stand-ins, as if
 * the warm-up range were not there), or the first include expression that matches it; NULL:
 * outside the selection. */
static const char *result_region(const struct lp_sample_select *sel, const struct lp_ncu_nvtx_stack *st,
	struct lp_ncu_nvtx_stack *scratch)
{
	const char *warm = sel->warmup ? sel->warmup : "warmup";
	size_t i, lo, hi;
	if (*warm && lp_ncu_stack_matches(st, warm)) {
		/* a stand-in: matched as if the warm-up range were not in its stack */
		if (!sel->stand_ins)
			return NULL;
		scratch->n = 0;
		for (i = 0; i < st->n; i++)
			if (!st->levels[i].name || strcmp(st->levels[i].name, warm))
				scratch->levels[scratch->n++] = st->levels[i];
		st = scratch;
	}
	if (sel->stage)
		return lp_ncu_stack_matches(st, sel->stage) ? sel->stage : NULL;
	if (!sel->regions)
		return NULL;
	for (i = 0; i < sel->regions->n_exc; i++)
		if (lp_region_pattern_match(&sel->regions->exc[i], st, &lo, &hi))
			return NULL;
	for (i = 0; i < sel->regions->n_inc; i++)
		if (sel->regions->inc[i].kind == LP_REGION_PUSHPOP &&
		    lp_region_pattern_match(&sel->regions->inc[i], st, &lo, &hi))
			return sel->regions->inc[i].name;
	return NULL;
}

/* Is `name` (a function-name base, as --kernel-id takes it) the function of ncu's row r? Its
 * short_name says so, except where ncu 2025.3.1 prints an anonymous namespace in the template
 * arguments as an unbalanced "unnamed>" ("void vectorized_elementwise_kernel<8, unnamed>::silu_kernel(
 * ...", seen on the H100 with PyTorch 2.11): then the bracket matching from the end finds no
 * function; the name is then the identifier before the first '<' or '(' (qualifiers and the return
 * type dropped: a __global__ function is never a member of a class). */
static int row_is_function(const char *name, const struct lp_ncu_result *r)
{
	const char *k = r->kernel_name, *end, *start;
	size_t n = strlen(name);
	if (!strcmp(name, r->short_name))
		return 1;
	if (!k)
		return 0;
	if (!strncmp(k, "void ", 5))
		k += 5;
	end = k + strcspn(k, "<(");
	for (start = end; start > k && start[-1] != ':' && start[-1] != ' '; start--)
		;
	return (size_t)(end - start) == n && !strncmp(start, name, n);
}

static int same_launch(const struct lp_sample_launch *l, const struct lp_ncu_result *r)
{
	return r->has_launch && row_is_function(l->name, r) && !memcmp(l->grid, r->grid, sizeof(l->grid)) &&
		!memcmp(l->block, r->block, sizeof(l->block));
}

/* Row k of a process's page is the k-th launch it was to profile (ncu numbers results in profiling
 * order): its group is known exactly. A row that is not (a launch ncu counted differently) is
 * attached by name, grid, block and region instead, and counted in `fallback`. */
static int attach_cb(const struct lp_ncu_result *r, void *vctx, struct lp_err *err)
{
	struct attach_ctx *c = vctx;
	long g = -1;
	if (LP_ARRAY_RESERVE(c->rows, c->cap, c->n_rows + 1, err) < 0)
		return -1;
	c->rows[c->n_rows].launch = -1;
	c->rows[c->n_rows].warmup = -1;
	c->rows[c->n_rows].id = r->id;
	c->rows[c->n_rows].duration_ns = r->duration_ns;
	if (c->n_rows < c->n_expect && same_launch(lp_sample_launch_at(c->plan, c->expect[c->n_rows]), r)) {
		g = lp_sample_group_of(c->plan, c->expect[c->n_rows]);
		c->rows[c->n_rows].launch = c->expect[c->n_rows];
	} else if (r->has_launch && !r->is_range) {
		const char *region = result_region(c->sel, r->pushpop, c->scratch);
		const char *warm = c->sel->warmup ? c->sel->warmup : "warmup";
		size_t i;
		c->fallback++;
		c->rows[c->n_rows].warmup = *warm && r->pushpop && lp_ncu_stack_matches(r->pushpop, warm);
		for (i = 0; region && i < c->plan->n_groups; i++) {
			const struct lp_sample_group *gr = &c->plan->groups[i];
			if (row_is_function(gr->name, r) && !memcmp(gr->grid, r->grid, sizeof(gr->grid)) &&
			    !memcmp(gr->block, r->block, sizeof(gr->block)) && !strcmp(gr->region, region)) {
				g = (long)i;
				break;
			}
		}
	}
	if (g >= 0 && c->plan->groups[g].status != LP_SAMPLE_PLANNED)
		g = -1;   /* an extra of a group that was not asked for */
	if (g >= 0)
		lp_sample_attach_group(c->plan, (size_t)g, r->duration_ns);
	c->rows[c->n_rows++].group = (int32_t)g;
	return 0;
}

/* Loads one process's pages, keeps the results of planned groups (extras of other regions go), and
 * appends them to the merged tables. */
static int merge_part(const struct lp_ncu_sampled *s, struct lp_sample_plan *plan, size_t proc, const char *raw,
	const char *details, json_t *m_raw, json_t *m_details, json_t **by_group, size_t *fallback, struct lp_err *err)
{
	struct attach_ctx c;
	json_t *t = NULL, *d = NULL, *rows, *kept, *ids;
	uint32_t *expect = NULL;
	long off = -1, id_col;
	size_t i;
	int rc = -1;
	memset(&c, 0, sizeof(c));
	c.plan = plan;
	c.sel = s->select;
	if (!(c.scratch = calloc(1, sizeof(*c.scratch))))
		return lp_oom(err);
	if (lp_sample_expected(plan, proc, &expect, &c.n_expect, err) < 0) {
		free(c.scratch);
		return -1;
	}
	c.expect = expect;
	if (lp_ncu_raw_stream(raw, attach_cb, &c, err) < 0 || lp_ncu_table_load(raw, 1, &t, err) < 0)
		goto out;
	*fallback += c.fallback;
	rows = json_object_get(t, "rows");
	if (json_array_size(rows) != c.n_rows) {
		lp_err_set(err, LP_EPARTIAL, "%s: %zu results parsed, %zu rows read", raw, c.n_rows, json_array_size(rows));
		goto out;
	}
	kept = json_array();
	ids = json_object();
	id_col = lp_ncu_table_column(t, "ID");
	for (i = 0; i < c.n_rows; i++) {
		json_t *row = json_array_get(rows, i);
		if (c.rows[i].group < 0)
			continue;
		json_array_append(kept, row);
		if (!by_group[c.rows[i].group]) {
			by_group[c.rows[i].group] = json_pack("{s:O, s:[]}", "columns", json_object_get(t, "columns"), "rows");
			if (json_object_get(t, "units"))
				json_object_set(by_group[c.rows[i].group], "units", json_object_get(t, "units"));
		}
		json_array_append(json_object_get(by_group[c.rows[i].group], "rows"), row);
		if (id_col >= 0 && json_string_value(json_array_get(row, (size_t)id_col)))
			json_object_set_new(ids, json_string_value(json_array_get(row, (size_t)id_col)), json_true());
	}
	json_object_set_new(t, "rows", kept);
	if (lp_ncu_table_append(m_raw, t, &off, err) < 0) {
		json_decref(ids);
		goto out;
	}
	/* the kept rows' IDs in the merged export (lp_ncu_table_append adds `off`) */
	for (i = 0; i < c.n_rows; i++) {
		const struct row_info *ri = &c.rows[i];
		if (ri->group < 0)
			continue;
		if (lp_sample_record_result(plan, (size_t)ri->group, ri->id + (uint64_t)off, ri->launch, ri->warmup,
			    ri->duration_ns, err) < 0) {
			json_decref(ids);
			goto out;
		}
	}
	if (details && lp_fs_is_file(details) && lp_ncu_table_load(details, 0, &d, err) == 0) {
		long dcol = lp_ncu_table_column(d, "ID");
		json_t *dk = json_array(), *row;
		json_array_foreach(json_object_get(d, "rows"), i, row) {
			const char *id = dcol >= 0 ? json_string_value(json_array_get(row, (size_t)dcol)) : NULL;
			if (id && json_object_get(ids, id))
				json_array_append(dk, row);
		}
		json_object_set_new(d, "rows", dk);
		if (lp_ncu_table_append(m_details, d, &off, err) < 0) {
			json_decref(ids);
			goto out;
		}
	}
	json_decref(ids);
	rc = 0;
out:
	free(expect);
	free(c.scratch);
	free(c.rows);
	json_decref(t);
	json_decref(d);
	return rc;
}

/* The rows of a cached table appended at ID offset `off` belong to group g. */
static int record_cached(struct lp_sample_plan *plan, size_t g, const json_t *tab, long off, struct lp_err *err)
{
	long icol = lp_ncu_table_column(tab, "ID");
	const json_t *row;
	size_t r;
	int64_t v;
	json_array_foreach(json_object_get(tab, "rows"), r, row) {
		const char *cell = icol >= 0 ? json_string_value(json_array_get(row, (size_t)icol)) : NULL;
		if (!cell || lp_str_to_i64(cell, &v) < 0)
			continue;
		if (lp_sample_record_result(plan, g, (uint64_t)(v + off), -1, 0, -1, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- progress ---- */

struct tick_ctx {
	const struct lp_ncu_sampled *s;
	struct lp_ncu_sampled_progress pr;
	double t0;
	double rest_est_s;           /* estimates of the processes after the running one */
	/* the stall watch of the running process (watch()) */
	double proc_t0, last_change;
	size_t done, marks;
	json_t *result_s;            /* seconds from the process's start at which each result was done */
	char stall[240];             /* "" until it stalled */
};

static void tick(void *vctx, double elapsed_s)
{
	struct tick_ctx *t = vctx;
	double cur = t->pr.plan->procs[t->pr.proc].est_s - elapsed_s;
	t->pr.elapsed_s = lp_mono_s() - t->t0;
	t->pr.eta_s = (cur > 0 ? cur : 0) + t->rest_est_s;
	if (t->s->tick)
		t->s->tick(t->s->ctx, &t->pr);
}

/* Reads the running process's log: the launches done since the last read get `now` as their time
 * (result_s). 0 when the log cannot be read. */
static int watch_read(struct tick_ctx *t, double now, struct lp_ncu_log_progress *pg)
{
	struct lp_buf text = LP_BUF_INIT;
	if (lp_fs_read_file(t->pr.log_path, &text, 16u << 20, NULL) < 0 || !text.data) {
		lp_buf_release(&text);
		return 0;
	}
	lp_ncu_log_progress(text.data, pg);
	lp_buf_release(&text);
	for (; t->done < pg->done; t->done++)
		json_array_append_new(t->result_s, json_real((double)(long)((now - t->proc_t0) * 10) / 10));
	return 1;
}

/* The running process's log, once a second: when each launch was done, and whether a replay has
 * stopped advancing (no progress mark for stall_s while a launch is open): then stop ncu. */
static int watch(void *vctx)
{
	struct tick_ctx *t = vctx;
	struct lp_ncu_log_progress pg;
	double now = lp_mono_s();
	if (!watch_read(t, now, &pg))
		return 0;
	if (pg.marks != t->marks) {
		t->marks = pg.marks;
		t->last_change = now;
	}
	if (t->s->stall_s > 0 && pg.open && now - t->last_change >= t->s->stall_s) {
		snprintf(t->stall, sizeof(t->stall), "ncu stalled: no progress for %d s while profiling %.150s "
			"(profiling.ncu.stall_s)", (int)(now - t->last_change), pg.open_name);
		return 1;
	}
	return 0;
}

/* ---- the phase ---- */

/* The groups of processes [from, to) did not run. */
static void mark_not_run(struct lp_sample_plan *plan, size_t from, size_t to)
{
	size_t q, i;
	for (q = from; q < to; q++)
		for (i = 0; i < plan->procs[q].n_groups; i++)
			plan->groups[plan->procs[q].groups[i]].status = LP_SAMPLE_NOT_RUN;
}

static json_t *part_preset(const json_t *preset, const char *name, size_t i, const char *warmup_nvtx)
{
	json_t *p = json_deep_copy(preset);
	char buf[160];
	snprintf(buf, sizeof(buf), "%s_p%zu", name, i + 1);
	json_object_set_new(p, "name", json_string(buf));
	/* --kernel-id selects: no NVTX include/exclude (a launch outside them would not be profiled),
	 * no name filter, no launch counts; a process whose picks are all warm-up stand-ins profiles
	 * inside the warm-up range only: the other names' launches at its invocation numbers after the
	 * warm-up (extras) are not profiled, and stop_early ends the program in the warm-up */
	if (warmup_nvtx)
		json_object_set_new(p, "nvtx", json_pack("{s:[s], s:[]}", "include", warmup_nvtx, "exclude"));
	else
		json_object_set_new(p, "nvtx", json_pack("{s:[], s:[]}", "include", "exclude"));
	json_object_set_new(p, "kernel_name", json_null());
	json_object_set_new(p, "kernel_name_base", json_string("function"));
	json_object_set_new(p, "launch_count", json_null());
	json_object_set_new(p, "launch_skip", json_null());
	return p;
}

/* The cost model the plan was made with (docs/ncu-sampling.md). */
static void set_costs(json_t *pj, const struct lp_sample_opts *o)
{
	json_object_set_new(pj, "per_launch_s", json_real(o->per_launch_s));
	json_object_set_new(pj, "per_process_s", json_real(o->per_process_s));
	json_object_set_new(pj, "program_s", json_real(o->program_s));
	json_object_set_new(pj, "program_factor", json_real(o->program_factor));
	json_object_set_new(pj, "stop_early", json_boolean(o->stop_early));
}

/* Appends a process's cmd.txt to ncu/cmd.txt (nothing when the process wrote none); a failed
 * write fails the phase like the other tools' cmd.txt. */
static int append_file(const char *from, const char *to, struct lp_err *err)
{
	struct lp_buf a = LP_BUF_INIT, b = LP_BUF_INIT;
	int rc = 0;
	if (lp_fs_is_file(from)) {
		if (lp_fs_read_file(from, &a, 8u << 20, err) < 0 ||
		    (lp_fs_is_file(to) && lp_fs_read_file(to, &b, 8u << 20, err) < 0))
			rc = -1;
		else if (lp_buf_add(&b, a.data, a.len) < 0)
			rc = lp_oom(err);
		else
			rc = lp_fs_write_atomic(to, b.data, b.len, err);
	}
	lp_buf_release(&a);
	lp_buf_release(&b);
	return rc;
}

static int write_json(const char *dir, const char *file, json_t *o, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	int rc;
	lp_fs_join(&path, dir, file);
	rc = text ? lp_fs_write_atomic(path.data, text, strlen(text), err) : lp_oom(err);
	free(text);
	lp_buf_release(&path);
	return rc;
}

int lp_ncu_sampled_run(const struct lp_ncu_sampled *s, struct lp_ncu_sampled_outcome *o, struct lp_err *err)
{
	struct lp_sample_input *in = &o->input;
	struct lp_sample_opts opts = s->opts;
	struct lp_ncu_cache cache;
	struct lp_buf parts = LP_BUF_INIT, logs = LP_BUF_INIT, path = LP_BUF_INIT, cmds = LP_BUF_INIT;
	const char *name = json_string_value(json_object_get(s->preset, "name"));
	json_t *m_raw = json_object(), *m_details = json_object(), **by_group = NULL, **hits = NULL, *pj, *runs = json_array();
	size_t fallback = 0;
	long off;
	struct tick_ctx tc;
	double t0 = lp_mono_s(), wall_sum = 0, base_sum = 0;
	uint64_t results_sum = 0;
	size_t i, p;
	int rc = -1, have_cache = 0, nothing = 1, any_run = 0;

	memset(o, 0, sizeof(*o));
	memset(&tc, 0, sizeof(tc));
	lp_buf_init(&o->metrics_na, 0);
	if (!name)
		name = "run";
	if (opts.per_launch_s <= 0 || opts.per_process_s <= 0) {
		double pl, pp;
		lp_ncu_sampled_costs(s->preset, s->workload_s, &pl, &pp);
		if (opts.per_launch_s <= 0)
			opts.per_launch_s = pl;
		if (opts.per_process_s <= 0)
			opts.per_process_s = pp;
	}
	if (opts.program_s <= 0 && s->workload_s > 0) {
		opts.program_s = s->workload_s;
		opts.program_factor = LP_SAMPLE_PROGRAM_FACTOR;
	}
	/* as lp_ncu_sampled_run runs it (no --kill in a multi-rank job) */
	opts.stop_early = s->stop_early && !s->rank_gate;
	o->per_launch_s = opts.per_launch_s;
	o->per_process_s = opts.per_process_s;
	if (lp_fs_mkdir_p(s->out_dir, err) < 0 || lp_fs_mkdir_p(s->logs_dir, err) < 0)
		goto out;
	if (lp_sample_input_from_profile(s->capture, s->select, in, err) < 0 ||
	    lp_sample_group(in->launches, in->n, &opts, &o->plan, err) < 0)
		goto out;
	o->have_plan = 1;
	hits = calloc(o->plan.n_groups + 1, sizeof(*hits));
	by_group = calloc(o->plan.n_groups + 1, sizeof(*by_group));
	if (!hits || !by_group) {
		lp_oom(err);
		goto out;
	}
	if (s->use_cache) {
		struct lp_err cerr = LP_ERR_INIT;
		if (lp_ncu_cache_init(&cache, s->cache_dir, &s->ident, s->preset, &cerr) == 0) {
			have_cache = 1;
			for (i = 0; i < o->plan.n_groups; i++) {
				struct lp_sample_group *g = &o->plan.groups[i];
				char key[65];
				if (!g->wanted)
					continue;
				lp_ncu_cache_key(&cache, g->kernel_name, g->grid, g->block, g->shared_bytes, key);
				if (lp_ncu_cache_get(&cache, key, &hits[i]) == 1)
					g->cached = 1;
			}
		}
	}
	if (lp_sample_schedule(&o->plan, &opts, err) < 0)
		goto out;
	pj = lp_sample_plan_json(&o->plan, 0);
	set_costs(pj, &opts);
	if (write_json(s->out_dir, "sampling.json", pj, err) < 0) {
		json_decref(pj);
		goto out;
	}
	json_decref(pj);
	if (s->on_plan)
		s->on_plan(s->ctx, &o->plan);

	lp_fs_join(&parts, s->out_dir, "parts");
	tc.s = s;
	tc.pr.plan = &o->plan;
	tc.t0 = t0;
	for (p = 0; p < o->plan.n_procs; p++) {
		struct lp_ncu_plan np;
		struct lp_ncu_outcome oc;
		struct lp_err perr = LP_ERR_INIT;
		json_t *pp = part_preset(s->preset, name, p, o->plan.procs[p].warmup_only ? in->warmup_nvtx : NULL);
		double elapsed = lp_mono_s() - t0, left = opts.budget_s > 0 ? opts.budget_s - elapsed : 0, t_start;
		size_t q;
		if (opts.budget_s > 0 && p > 0 && left < 0.5 * o->plan.procs[p].est_s) {
			o->partial = 1;
			snprintf(o->why, sizeof(o->why), "profiling.ncu.budget_s (%.0f s) spent after %zu of %zu ncu processes "
				"(%.0f s)", opts.budget_s, p, o->plan.n_procs, elapsed);
			mark_not_run(&o->plan, p, o->plan.n_procs);
			json_decref(pp);
			break;
		}
		lp_buf_reset(&logs);
		lp_buf_addf(&logs, "%s/ncu_p%zu", s->logs_dir, p + 1);
		memset(&np, 0, sizeof(np));
		np.ncu = s->ncu;
		np.preset = pp;
		np.out_dir = parts.data;
		np.logs_dir = logs.data;
		np.workload = s->workload;
		np.env = s->env;
		np.n_env = s->n_env;
		np.sections_known = s->sections_known;
		np.kernel_id = o->plan.procs[p].kernel_id.data;
		np.keep_on_timeout = 1;
		np.rank_gate = s->rank_gate;
		np.rank = s->rank;
		/* not in a multi-rank job: a killed rank would leave its peers waiting in a collective */
		if (s->stop_early && !s->rank_gate && o->plan.procs[p].predicted > 0) {
			np.launch_count_total = (long)o->plan.procs[p].predicted;
			np.kill_after_count = 1;
		}
		np.timeout_s = s->timeout_s;
		if (opts.budget_s > 0) {
			/* a short grace past the budget: a process stopped at its limit keeps what its
			 * report holds (keep_on_timeout) */
			double limit = left + (opts.budget_s * 0.15 > 10 ? opts.budget_s * 0.15 : 10);
			if (np.timeout_s <= 0 || limit < np.timeout_s)
				np.timeout_s = limit;
		}
		tc.pr.proc = p;
		lp_buf_reset(&path);
		lp_fs_join(&path, logs.data, "ncu.log");
		tc.pr.log_path = path.data;
		tc.rest_est_s = 0;
		for (q = p + 1; q < o->plan.n_procs; q++)
			tc.rest_est_s += o->plan.procs[q].est_s;
		np.tick = tick;
		np.tick_ctx = &tc;
		np.should_stop = watch;
		t_start = lp_mono_s();
		tc.proc_t0 = tc.last_change = t_start;
		tc.done = tc.marks = 0;
		tc.stall[0] = '\0';
		json_decref(tc.result_s);
		tc.result_s = json_array();
		any_run = 1;
		if (lp_ncu_run(&np, &oc, &perr) < 0) {
			lp_buf_reset(&path);
			lp_fs_join(&path, parts.data, "cmd.txt");
			lp_buf_reset(&logs);
			lp_fs_join(&logs, s->out_dir, "cmd.txt");
			json_decref(pp);
			lp_ncu_outcome_release(&oc);
			if (append_file(path.data, logs.data, err) < 0)
				goto out;
			if (!o->procs_run && !o->plan.n_cached) {
				lp_err_set(err, perr.kind, "%s", perr.msg);
				if (perr.hint[0])
					lp_err_hint(err, "%s", perr.hint);
				goto out;
			}
			o->partial = 1;
			snprintf(o->why, sizeof(o->why), "ncu process %zu of %zu: %.400s", p + 1, o->plan.n_procs, perr.msg);
			mark_not_run(&o->plan, p, o->plan.n_procs);
			break;
		}
		{
			/* the launches done in the process's last second */
			struct lp_ncu_log_progress last;
			watch_read(&tc, lp_mono_s(), &last);
		}
		if (oc.stopped_by_limit && tc.stall[0])
			snprintf(oc.limit_note, sizeof(oc.limit_note), "%s", tc.stall);
		if (oc.stopped_by_limit && oc.results == 0) {
			/* the limit came before ncu wrote a result: as a failed process. Stalled on its first
			 * launch, the processes after it may not stall (another launch, another moment of the
			 * peers): they run, and the budget check above still ends the phase in time */
			int stalled = tc.stall[0] != '\0';
			lp_buf_reset(&path);
			lp_fs_join(&path, parts.data, "cmd.txt");
			lp_buf_reset(&logs);
			lp_fs_join(&logs, s->out_dir, "cmd.txt");
			json_decref(pp);
			if (stalled)
				json_array_append_new(runs, json_pack("{s:f, s:i, s:b, s:o, s:b, s:s, s:O}", "wall_s",
					lp_mono_s() - t_start, "results", 0, "profiled_nothing", 0, "launch_count", json_null(),
					"stopped_by_limit", 1, "stalled", tc.stall, "result_s", tc.result_s));
			if (append_file(path.data, logs.data, err) < 0) {
				lp_ncu_outcome_release(&oc);
				goto out;
			}
			if (!stalled && !o->procs_run && !o->plan.n_cached) {
				lp_err_set(err, LP_EPARTIAL, "%s before any launch was profiled", oc.limit_note);
				lp_ncu_outcome_release(&oc);
				goto out;
			}
			if (!stalled || !o->partial) {
				o->partial = 1;
				snprintf(o->why, sizeof(o->why), "ncu process %zu of %zu: %.400s", p + 1, o->plan.n_procs,
					oc.limit_note);
			}
			lp_ncu_outcome_release(&oc);
			mark_not_run(&o->plan, p, stalled ? p + 1 : o->plan.n_procs);
			if (stalled)
				continue;
			break;
		}
		o->procs_run++;
		json_array_append_new(runs, json_pack("{s:f, s:i, s:b, s:o, s:b, s:o, s:O}", "wall_s", lp_mono_s() - t_start,
			"results", oc.results, "profiled_nothing", oc.profiled_nothing, "launch_count",
			np.launch_count_total > 0 ? json_integer(np.launch_count_total) : json_null(), "stopped_by_limit",
			oc.stopped_by_limit, "stalled", tc.stall[0] ? json_string(tc.stall) : json_null(), "result_s",
			tc.result_s));
		wall_sum += lp_mono_s() - t_start;
		base_sum += s->workload_s;
		results_sum += (uint64_t)oc.results;
		o->retried_app_range |= oc.retried_app_range;
		if (oc.metrics_na.len && !o->metrics_na.len)
			lp_buf_adds(&o->metrics_na, oc.metrics_na.data);
		lp_buf_reset(&path);
		lp_fs_join(&path, parts.data, "cmd.txt");
		lp_buf_reset(&logs);
		lp_fs_join(&logs, s->out_dir, "cmd.txt");
		if (append_file(path.data, logs.data, err) < 0) {
			json_decref(pp);
			lp_ncu_outcome_release(&oc);
			goto out;
		}
		if (!oc.profiled_nothing && oc.raw_csv[0]) {
			nothing = 0;
			if (merge_part(s, &o->plan, p, oc.raw_csv, oc.details_csv, m_raw, m_details, by_group, &fallback, err) < 0) {
				json_decref(pp);
				lp_ncu_outcome_release(&oc);
				goto out;
			}
		}
		if (oc.stopped_by_limit) {
			/* what ncu wrote before the limit is merged above; after the time limit the processes
			 * after it do not run, after a stall the next one runs if the budget allows */
			int stalled = tc.stall[0] != '\0';
			if (!stalled || !o->partial) {
				o->partial = 1;
				snprintf(o->why, sizeof(o->why), "ncu process %zu of %zu: %.300s: kept the %d results it had "
					"written (%llu launches planned)", p + 1, o->plan.n_procs, oc.limit_note, oc.results,
					(unsigned long long)o->plan.procs[p].predicted);
			}
			if (!stalled)
				mark_not_run(&o->plan, p + 1, o->plan.n_procs);
			json_decref(pp);
			lp_ncu_outcome_release(&oc);
			if (stalled)
				continue;
			break;
		}
		json_decref(pp);
		lp_ncu_outcome_release(&oc);
	}
	if (results_sum > 0 && wall_sum > base_sum)
		o->measured_per_launch_s = (wall_sum - base_sum) / (double)results_sum;

	/* cached results: once per key (one configuration in two regions is one entry) */
	{
		json_t *seen = json_object();
		for (i = 0; i < o->plan.n_groups; i++) {
			const char *key;
			if (!hits[i] || o->plan.groups[i].status != LP_SAMPLE_CACHED)
				continue;
			key = json_string_value(json_object_get(hits[i], "key"));
			if (key && json_object_get(seen, key))
				continue;
			if (key)
				json_object_set_new(seen, key, json_true());
			off = -1;
			if (lp_ncu_table_append(m_raw, json_object_get(hits[i], "table"), &off, err) < 0 ||
			    record_cached(&o->plan, i, json_object_get(hits[i], "table"), off, err) < 0) {
				json_decref(seen);
				goto out;
			}
			nothing = 0;
		}
		json_decref(seen);
	}
	o->profiled_nothing = any_run && nothing;
	if (json_array_size(json_object_get(m_raw, "rows")) > 0) {
		snprintf(o->raw_csv, sizeof(o->raw_csv), "%s/%s_raw.csv", s->out_dir, name);
		if (lp_ncu_table_write(m_raw, o->raw_csv, err) < 0)
			goto out;
		if (json_array_size(json_object_get(m_details, "rows")) > 0) {
			snprintf(o->details_csv, sizeof(o->details_csv), "%s/%s_details.csv", s->out_dir, name);
			if (lp_ncu_table_write(m_details, o->details_csv, err) < 0)
				goto out;
		}
		/* the cached rows count for their groups too */
		for (i = 0; i < o->plan.n_groups; i++) {
			const json_t *tab, *row;
			long dcol;
			size_t r;
			if (o->plan.groups[i].status != LP_SAMPLE_CACHED || !hits[i])
				continue;
			tab = json_object_get(hits[i], "table");
			dcol = lp_ncu_table_column(tab, LP_NCU_DURATION_METRIC);
			json_array_foreach(json_object_get(tab, "rows"), r, row) {
				double d = -1;
				if (dcol >= 0 && json_string_value(json_array_get(row, (size_t)dcol)) &&
				    lp_csv_number(json_string_value(json_array_get(row, (size_t)dcol)), &d) != 1)
					d = -1;
				lp_sample_attach_group(&o->plan, i, d);
			}
		}
	}
	/* new results into the cache */
	if (have_cache) {
		for (i = 0; i < o->plan.n_groups; i++) {
			struct lp_sample_group *g = &o->plan.groups[i];
			char key[65];
			if (g->status != LP_SAMPLE_PLANNED || !by_group[i])
				continue;
			lp_ncu_cache_key(&cache, g->kernel_name, g->grid, g->block, g->shared_bytes, key);
			if (lp_ncu_cache_put(&cache, key, g->kernel_name, g->grid, g->block, g->shared_bytes, s->run_id,
				    by_group[i], NULL) == 0)
				o->cache_stored++;
		}
	}
	o->elapsed_s = lp_mono_s() - t0;
	pj = lp_sample_plan_json(&o->plan, 1);
	set_costs(pj, &opts);
	json_object_set_new(pj, "measured_per_launch_s", o->measured_per_launch_s > 0 ? json_real(o->measured_per_launch_s) : json_null());
	json_object_set_new(pj, "processes_run", json_integer((json_int_t)o->procs_run));
	json_object_set(pj, "runs", runs);
	json_object_set_new(pj, "results_attached_by_config", json_integer((json_int_t)fallback));
	json_object_set_new(pj, "elapsed_s", json_real(o->elapsed_s));
	json_object_set_new(pj, "partial", o->partial ? json_string(o->why) : json_null());
	json_object_set_new(pj, "cache", s->use_cache ? json_pack("{s:s, s:I}", "dir", have_cache ? cache.dir : "",
		"stored", (json_int_t)o->cache_stored) : json_null());
	rc = write_json(s->out_dir, "sampling.json", pj, err);
	json_decref(pj);
out:
	if (hits)
		for (i = 0; i < o->plan.n_groups; i++)
			json_decref(hits[i]);
	free(hits);
	if (by_group)
		for (i = 0; i < o->plan.n_groups; i++)
			json_decref(by_group[i]);
	free(by_group);
	json_decref(runs);
	json_decref(tc.result_s);
	json_decref(m_raw);
	json_decref(m_details);

	lp_buf_release(&parts);
	lp_buf_release(&logs);
	lp_buf_release(&path);
	lp_buf_release(&cmds);
	o->elapsed_s = lp_mono_s() - t0;
	return rc;
}
