/* ncu_sample_result.c: after the sampled ncu run (see ncu_sample.h): which launches a process
 * profiles and in what order, the results attached to their groups, the coverage of the
 * selection's kernel time, and the plan as JSON (ncu/sampling.json). */
#include "analyze/ncu_sample.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/ncu_sample_impl.h"
#include "core/vec.h"

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

int lp_sample_expected(const struct lp_sample_plan *p, size_t proc, uint32_t **out, size_t *n, struct lp_err *err)
{
	const struct lp_sample_proc *pr = &p->procs[proc];
	const struct lp_sample_priv *pv = p->priv;
	unsigned char *name_in;
	size_t i, j, cap = 0;
	*out = NULL;
	*n = 0;
	if (!pv || proc >= p->n_procs)
		return 0;
	name_in = calloc(p->n_configs + 1, 1);
	if (!name_in)
		return oom(err);
	for (j = 0; j < pr->n_names; j++)
		name_in[pr->names[j]] = 1;
	for (i = 0; i < pv->n; i++) {
		size_t lo = 0, hi = pr->n_invocations;
		uint64_t u = pr->warmup_only ? pv->winv_of[i] : pv->inv_of[i];   /* 0: outside the warm-up */
		if (!name_in[pv->name_of[i]] || !u)
			continue;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (pr->invocations[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == pr->n_invocations || pr->invocations[lo] != u)
			continue;
		if (LP_ARRAY_RESERVE(*out, cap, *n + 1, err) < 0) {
			free(name_in);
			free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[(*n)++] = (uint32_t)i;
	}
	free(name_in);
	return 0;
}

const struct lp_sample_launch *lp_sample_launch_at(const struct lp_sample_plan *p, uint32_t idx)
{
	return p->priv && idx < p->priv->n ? &p->priv->launches[idx] : NULL;
}

int32_t lp_sample_group_of(const struct lp_sample_plan *p, uint32_t idx)
{
	return p->priv && idx < p->priv->n ? p->priv->group_of[idx] : -1;
}

void lp_sample_attach_group(struct lp_sample_plan *p, size_t gi, double duration_ns)
{
	struct lp_sample_group *g = &p->groups[gi];
	if (duration_ns >= 0) {
		if (!g->got || duration_ns < g->got_min_ns)
			g->got_min_ns = duration_ns;
		if (!g->got || duration_ns > g->got_max_ns)
			g->got_max_ns = duration_ns;
		g->got_sum_ns += duration_ns;
	}
	g->got++;
}

/* ---- after the run ---- */

int lp_sample_record_result(struct lp_sample_plan *p, size_t gi, uint64_t id, int64_t launch, int warmup,
	double duration_ns, struct lp_err *err)
{
	struct lp_sample_group *g = &p->groups[gi];
	struct lp_sample_result *r = LP_ARRAY_PUSH(g->results, g->n_results, g->cap_results, err);
	if (!r)
		return -1;
	r->id = id;
	r->launch = launch;
	r->duration_ns = duration_ns;
	if (warmup < 0)
		warmup = launch >= 0 && p->priv && (size_t)launch < p->priv->n && p->priv->launches[launch].warmup;
	r->warmup = warmup;
	g->got_warmup += (uint64_t)warmup;
	return 0;
}

double lp_sample_weight(const struct lp_sample_group *g)
{
	return g->got ? (double)g->n_launches / (double)g->got : 0;
}

long lp_sample_attach(struct lp_sample_plan *p, const char *name, const uint32_t grid[3], const uint32_t block[3],
	const char *region, double duration_ns)
{
	size_t i;
	for (i = 0; i < p->n_groups; i++) {
		struct lp_sample_group *g = &p->groups[i];
		if (strcmp(g->name, name) || lp_sample_cmp_dim3(g->grid, grid) || lp_sample_cmp_dim3(g->block, block))
			continue;
		if (region && strcmp(g->region, region))
			continue;
		lp_sample_attach_group(p, i, duration_ns);
		return (long)i;
	}
	return -1;
}

int lp_sample_group_covered(const struct lp_sample_group *g)
{
	return g->got > 0 || g->status == LP_SAMPLE_CACHED;
}

/* A group's time in the coverage when ncu gave it metrics (measured or reused from the cache). */
static void add_covered(const struct lp_sample_group *g, struct lp_sample_coverage *out)
{
	if (!lp_sample_group_covered(g))
		return;
	out->n_covered++;
	out->covered_ns += g->total_ns;
	if (g->status == LP_SAMPLE_CACHED)
		out->n_reused++;
	else if (g->got_warmup)
		out->n_from_warmup++;
	out->n_results += g->got;
	out->n_results_warmup += g->got_warmup;
}

void lp_sample_coverage(const struct lp_sample_plan *p, struct lp_sample_coverage *out)
{
	size_t i;
	memset(out, 0, sizeof(*out));
	out->target = p->coverage_target;
	out->total_ns = p->total_ns;
	out->n_groups = p->n_groups;
	for (i = 0; i < p->n_groups; i++)
		add_covered(&p->groups[i], out);
	out->share = p->total_ns ? (double)out->covered_ns / (double)p->total_ns : 0;
	out->met = out->share >= out->target - 1e-9 || (p->total_ns == 0);
}

void lp_sample_coverage_region(const struct lp_sample_plan *p, const char *region, struct lp_sample_coverage *out)
{
	size_t i;
	memset(out, 0, sizeof(*out));
	out->target = p->coverage_target;
	for (i = 0; i < p->n_groups; i++) {
		const struct lp_sample_group *g = &p->groups[i];
		if (strcmp(g->region, region))
			continue;
		out->n_groups++;
		out->total_ns += g->total_ns;
		add_covered(g, out);
	}
	out->share = out->total_ns ? (double)out->covered_ns / (double)out->total_ns : 0;
	out->met = out->share >= out->target - 1e-9 || out->total_ns == 0;
}

/* ---- JSON ---- */

const char *lp_sample_status_name(int status)
{
	switch (status) {
	case LP_SAMPLE_PLANNED: return "planned";
	case LP_SAMPLE_CACHED: return "cached";
	case LP_SAMPLE_BEYOND_TARGET: return "beyond_target";
	case LP_SAMPLE_BUDGET: return "budget";
	case LP_SAMPLE_NOT_RUN: return "not_run";
	default: return "unknown";
	}
}

static json_t *dim3_json(const uint32_t v[3])
{
	return json_pack("[III]", (json_int_t)v[0], (json_int_t)v[1], (json_int_t)v[2]);
}

/* The position of launch `idx` among the selected launches (launch order, stand-ins not counted):
 * the row of an unsampled profile of the same selection that profiled it
 * (bench/ncu_sampling/compare.py). */
static json_int_t selected_ordinal(const struct lp_sample_plan *p, size_t idx)
{
	json_int_t n = 0;
	size_t i;
	for (i = 0; i < idx && i < p->priv->n; i++)
		n += p->priv->group_of[i] >= 0 && !p->priv->launches[i].warmup;
	return n;
}

json_t *lp_sample_plan_json(const struct lp_sample_plan *p, int after_run)
{
	json_t *o = json_object(), *groups = json_array(), *procs = json_array();
	size_t i, j;
	json_object_set_new(o, "k", json_integer(p->k));
	json_object_set_new(o, "k_used", json_integer(p->k_used));
	json_object_set_new(o, "coverage_target", json_real(p->coverage_target));
	json_object_set_new(o, "launches", json_integer((json_int_t)p->n_launches));
	json_object_set_new(o, "kernel_ms", json_real((double)p->total_ns / 1e6));
	json_object_set_new(o, "groups_total", json_integer((json_int_t)p->n_groups));
	json_object_set_new(o, "groups_wanted", json_integer((json_int_t)p->n_wanted));
	json_object_set_new(o, "groups_cached", json_integer((json_int_t)p->n_cached));
	json_object_set_new(o, "groups_dropped_budget", json_integer((json_int_t)p->n_budget_dropped));
	json_object_set_new(o, "planned_share", json_real(p->planned_share));
	json_object_set_new(o, "predicted_launches", json_integer((json_int_t)p->predicted));
	json_object_set_new(o, "eta_s", json_real(p->eta_s));
	json_object_set_new(o, "budget_s", p->budget_s > 0 ? json_real(p->budget_s) : json_null());
	{
		json_int_t with = 0;
		for (i = 0; i < p->n_groups; i++)
			with += p->groups[i].n_stand > 0;
		json_object_set_new(o, "groups_with_stand_ins", json_integer(with));
	}
	for (i = 0; i < p->n_procs; i++) {
		const struct lp_sample_proc *pr = &p->procs[i];
		json_array_append_new(procs, json_pack("{s:s, s:I, s:I, s:I, s:f, s:b}", "kernel_id", pr->kernel_id.data,
			"groups", (json_int_t)pr->n_groups, "planned_launches", (json_int_t)pr->planned,
			"predicted_launches", (json_int_t)pr->predicted, "est_s", pr->est_s, "warmup_only", pr->warmup_only));
	}
	json_object_set_new(o, "processes", procs);
	for (i = 0; i < p->n_groups; i++) {
		const struct lp_sample_group *g = &p->groups[i];
		json_t *go = json_object(), *picks = json_array();
		json_object_set_new(go, "kernel_name", json_string(g->kernel_name));
		json_object_set_new(go, "function", json_string(g->name));
		json_object_set_new(go, "grid", dim3_json(g->grid));
		json_object_set_new(go, "block", dim3_json(g->block));
		json_object_set_new(go, "shared_bytes", json_integer(g->shared_bytes));
		json_object_set_new(go, "region", json_string(g->region));
		json_object_set_new(go, "launches", json_integer((json_int_t)g->n_launches));
		json_object_set_new(go, "steps", json_integer(g->n_steps));
		json_object_set_new(go, "stand_ins", json_integer((json_int_t)g->n_stand));
		json_object_set_new(go, "picks_from_warmup", json_boolean(g->picks_from_warmup));
		json_object_set_new(go, "total_ms", json_real((double)g->total_ns / 1e6));
		json_object_set_new(go, "min_us", json_real((double)g->min_ns / 1e3));
		json_object_set_new(go, "max_us", json_real((double)g->max_ns / 1e3));
		json_object_set_new(go, "share", json_real(g->share));
		json_object_set_new(go, "region_share", json_real(g->region_share));
		json_object_set_new(go, "status", json_string(lp_sample_status_name(g->status)));
		json_object_set_new(go, "process", g->proc >= 0 ? json_integer(g->proc) : json_null());
		for (j = 0; j < g->n_picks; j++)
			json_array_append_new(picks, json_pack("{s:I, s:i, s:f, s:b}", "invocation", (json_int_t)g->picks[j].invocation,
				"step", (int)g->picks[j].step, "duration_us", (double)g->picks[j].duration_ns / 1e3, "warmup",
				g->picks[j].warmup));
		json_object_set_new(go, "picks", picks);
		if (after_run) {
			json_object_set_new(go, "profiled", json_integer((json_int_t)g->got));
			json_object_set_new(go, "profiled_warmup", json_integer((json_int_t)g->got_warmup));
			json_object_set_new(go, "profiled_min_us", g->got ? json_real(g->got_min_ns / 1e3) : json_null());
			json_object_set_new(go, "profiled_max_us", g->got ? json_real(g->got_max_ns / 1e3) : json_null());
			json_object_set_new(go, "has_metrics", json_boolean(lp_sample_group_covered(g)));
			json_object_set_new(go, "weight", g->got ? json_real(lp_sample_weight(g)) : json_null());
			if (g->n_results) {
				json_t *rs = json_array();
				for (j = 0; j < g->n_results; j++) {
					const struct lp_sample_result *r = &g->results[j];
					const struct lp_sample_launch *l = r->launch >= 0 ? lp_sample_launch_at(p, (uint32_t)r->launch) : NULL;
					json_array_append_new(rs, json_pack("{s:I, s:o, s:o, s:o, s:o, s:b}", "id", (json_int_t)r->id,
						"launch", r->launch >= 0 ? json_integer(r->launch) : json_null(),
						"ordinal", l && !l->warmup ? json_integer(selected_ordinal(p, (size_t)r->launch)) :
						json_null(),
						"step", l && l->step >= 0 ? json_integer(l->step) : json_null(),
						"duration_us", r->duration_ns >= 0 ? json_real(r->duration_ns / 1e3) : json_null(),
						"warmup", r->warmup));
				}
				json_object_set_new(go, "results", rs);
			}
		}
		json_array_append_new(groups, go);
	}
	json_object_set_new(o, "groups", groups);
	if (after_run) {
		struct lp_sample_coverage c;
		lp_sample_coverage(p, &c);
		json_t *regions = json_array();
		json_object_set_new(o, "coverage", json_pack("{s:f, s:f, s:I, s:I, s:I, s:b, s:I, s:I, s:I}", "target", c.target,
			"share", c.share, "groups_with_metrics", (json_int_t)c.n_covered, "groups_reused",
			(json_int_t)c.n_reused, "groups", (json_int_t)c.n_groups, "met", c.met, "groups_from_warmup",
			(json_int_t)c.n_from_warmup, "results", (json_int_t)c.n_results, "results_warmup",
			(json_int_t)c.n_results_warmup));
		for (i = 0; i < p->n_groups; i++) {
			const char *r = p->groups[i].region;
			for (j = 0; j < i && strcmp(p->groups[j].region, r); j++)
				;
			if (j < i)
				continue;   /* listed already */
			lp_sample_coverage_region(p, r, &c);
			json_array_append_new(regions, json_pack("{s:s, s:f, s:f, s:I, s:I, s:b}", "region", r, "kernel_ms",
				(double)c.total_ns / 1e6, "share", c.share, "groups_with_metrics", (json_int_t)c.n_covered,
				"groups", (json_int_t)c.n_groups, "met", c.met));
		}
		json_object_set_new(json_object_get(o, "coverage"), "regions", regions);
	}
	return o;
}
