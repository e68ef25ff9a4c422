/* sampling_scale.c: the analysis's own tables of a sampled trace scaled to every sampling unit
 * (sampling.h, "scaling the analysis's tables"): per-kernel weights from the units' strata, then
 * the kernel set, the operator table and the stages' per-iteration kernel sums, each row with
 * its interval. sampling.c has the estimator, the units and the Tracing mode table. */

#include "analyze/sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/map.h"

int lp_tsample_range_warm(const struct lp_profile *p, const struct lp_stage_set *stages, int32_t r)
{
	int guard = 0;
	if (!stages)
		return 0;
	for (; r >= 0 && guard++ < 512; r = p->ranges[r].parent)
		if (lp_stage_range_excluded(stages, r))
			return 1;
	return 0;
}

/* Bursts (plan->burst > 0): CUPTI is detached from a burst's last unit to the one before the next
 * burst, so what runs between two units (outside both, under their parent) is recorded exactly when
 * the unit after it is. Such work belongs to that unit's cluster: gap_unit finds it (the units,
 * sorted by parent range then start, are `by`). */
struct unit_at {
	int32_t parent, range;
	uint64_t start_ns;
};

static int cmp_unit_at(const void *a, const void *b)
{
	const struct unit_at *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The unit that follows time `t_ns` under the nearest ancestor of range `r` (inclusive) that is a
 * unit's parent, or -1 (no such ancestor, or nothing follows under it). */
static int32_t gap_unit(const struct lp_profile *p, const struct unit_at *by, size_t n, int32_t r, uint64_t t_ns)
{
	int guard = 0;
	for (; r >= 0 && guard++ < 512; r = p->ranges[r].parent) {
		size_t lo = 0, hi = n;
		while (lo < hi) { /* the first entry with parent >= r */
			size_t mid = (lo + hi) / 2;
			if (by[mid].parent < r)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == n || by[lo].parent != r)
			continue;
		hi = n;
		while (lo < hi) { /* then the first of parent r starting at or after t_ns */
			size_t mid = (lo + hi) / 2;
			if (by[mid].parent < r || (by[mid].parent == r && by[mid].start_ns < t_ns))
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < n && by[lo].parent == r ? by[lo].range : -1;
	}
	return -1;
}

static int gaps_to_units(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_units *units, const int32_t *unit_slot, const uint8_t *unit_measured,
	const struct lp_tsample_plan *plan, struct lp_tsample_weights *out, struct lp_err *err)
{
	struct unit_at *by = malloc((p->n_ranges + 1) * sizeof(*by));
	size_t i, n = 0;
	if (!by)
		return lp_oom(err);
	for (i = 0; i < p->n_ranges; i++)
		if (units->stratum[i] != LP_TSAMPLE_OUTSIDE && !units->stage_unit[i] && p->ranges[i].parent >= 0) {
			by[n].parent = p->ranges[i].parent;
			by[n].range = (int32_t)i;
			by[n++].start_ns = p->ranges[i].start_ns;
		}
	qsort(by, n, sizeof(*by), cmp_unit_at);
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		int warm = stages->kernel_stage && i < stages->n_kernels && stages->kernel_stage[i] == -2;
		int32_t u;
		if (warm || !k->launch_ns || k->range < 0 || (size_t)k->range >= p->n_ranges ||
		    lp_tsample_unit_of(p, plan, units, k->range) >= 0)
			continue;
		if ((u = gap_unit(p, by, n, k->range, k->launch_ns)) < 0)
			continue;
		out->kernel_slot[i] = unit_slot[u];
		out->kernel_in_unit[i] = unit_measured[u];
	}
	for (i = 0; i < p->n_ranges; i++) {
		int32_t u;
		if (units->stratum[i] != LP_TSAMPLE_OUTSIDE || out->range_slot[i] >= 0 || p->ranges[i].synthetic ||
		    lp_tsample_unit_of(p, plan, units, (int32_t)i) >= 0)
			continue;
		if ((u = gap_unit(p, by, n, p->ranges[i].parent, p->ranges[i].start_ns)) >= 0)
			out->range_slot[i] = unit_slot[u];
	}
	free(by);
	return 0;
}

int lp_tsample_weights_build(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_plan *plan, struct lp_tsample_weights *out, struct lp_err *err)
{
	struct lp_tsample_units units;
	int32_t *unit_slot = NULL;       /* per range: slot of a measured recorded unit, -1 */
	uint8_t *unit_measured = NULL;   /* per range: a measured unit (any stratum) */
	size_t i;
	int rc = -1;
	memset(out, 0, sizeof(*out));
	if (!plan->sampled)
		return 0;
	if (lp_tsample_units_find(p, plan, 0, &units, err) < 0)
		return -1;
	unit_slot = malloc((p->n_ranges + 1) * sizeof(*unit_slot));
	unit_measured = calloc(p->n_ranges + 1, 1);
	out->kernel_slot = malloc((p->n_kernels + 1) * sizeof(*out->kernel_slot));
	out->kernel_in_unit = calloc(p->n_kernels + 1, 1);
	out->range_slot = malloc((p->n_ranges + 1) * sizeof(*out->range_slot));
	if (!unit_slot || !unit_measured || !out->kernel_slot || !out->kernel_in_unit || !out->range_slot)
		goto oom;
	for (i = 0; i < p->n_ranges; i++) {
		uint8_t s = units.stratum[i];
		unit_slot[i] = -1;
		if (s == LP_TSAMPLE_OUTSIDE || lp_tsample_range_warm(p, stages, (int32_t)i))
			continue;
		unit_measured[i] = 1;
		if (s == LP_TSAMPLE_EXACT)
			out->n_exact++;
		else
			out->N++;
		if (s == LP_TSAMPLE_RECORDED)
			unit_slot[i] = (int32_t)out->n++;
		if (units.stage_unit[i]) {
			out->stage_N++;
			out->stage_n += s == LP_TSAMPLE_RECORDED;
		}
	}
	/* none of the sampled stratum recorded: the exact stratum stands for it (from_first) rather
	 * than the tables holding the first units alone as if they were the stage (run 36: a
	 * 24-token generation's decode read 3.85 ms busy for 24 steps, MBU 323%); stage instances
	 * (a serving loop's prefills) have their own chains and are left out of that */
	if (!out->n && out->N && out->n_exact && !out->stage_N) {
		out->from_first = 1;
		for (i = 0; i < p->n_ranges; i++)
			if (unit_measured[i] && units.stratum[i] == LP_TSAMPLE_EXACT)
				unit_slot[i] = (int32_t)out->n++;
	}
	for (i = 0; i < p->n_ranges; i++) {
		int32_t u = lp_tsample_unit_of(p, plan, &units, (int32_t)i);
		out->range_slot[i] = u >= 0 ? unit_slot[u] : -1;
	}
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		int32_t u = k->range >= 0 && (size_t)k->range < p->n_ranges
			? lp_tsample_unit_of(p, plan, &units, k->range) : -1;
		int warm = stages->kernel_stage && i < stages->n_kernels && stages->kernel_stage[i] == -2;
		out->kernel_slot[i] = u >= 0 && !warm ? unit_slot[u] : -1;
		out->kernel_in_unit[i] = u >= 0 && !warm && unit_measured[u];
	}
	if (plan->burst && gaps_to_units(p, stages, &units, unit_slot, unit_measured, plan, out, err) < 0)
		goto done;
	/* the strata of the measured units (warm-up out, as from the tables) */
	for (i = 0; i < p->n_ranges; i++)
		if (unit_slot[i] < 0)
			unit_slot[i] = unit_measured[i] && units.stratum[i] == LP_TSAMPLE_SKIPPED ? -1 : -2;
	if (out->from_first) {
		/* each first unit stands for itself and N / n of the others: no strata, no variance */
		uint32_t k;
		out->design.n = out->n;
		out->design.N = out->N;
		if (!(out->design.w = malloc(out->n * sizeof(*out->design.w))))
			goto oom;
		for (k = 0; k < out->n; k++)
			out->design.w[k] = 1 + (double)out->N / out->n;
	} else if (lp_tsample_units_design(&units, p->n_ranges, unit_slot, plan, &out->design, err) < 0) {
		goto done;
	}
	out->sampled = out->N > 0 && out->n > 0;
	rc = 0;
	goto done;
oom:
	lp_oom(err);
done:
	free(unit_slot);
	free(unit_measured);
	lp_tsample_units_release(&units);
	if (rc < 0)
		lp_tsample_weights_release(out);
	return rc;
}

void lp_tsample_weights_release(struct lp_tsample_weights *w)
{
	free(w->kernel_slot);
	free(w->range_slot);
	free(w->kernel_in_unit);
	lp_tsample_design_release(&w->design);
	memset(w, 0, sizeof(*w));
}

double lp_tsample_rerun_ms(double ci_ms, double total_ms, double rerun_sd_pct)
{
	double sys = 1.959964 * rerun_sd_pct / 100 * fabs(total_ms);
	if (ci_ms < 0)
		return -1;
	return rerun_sd_pct > 0 ? sqrt(ci_ms * ci_ms + 2 * sys * sys) : ci_ms;
}

/* The interval of a row from its per-unit values x[0..n-1] (ns), in ms. */
static double row_ci_ms(const struct lp_tsample_weights *w, const double *x, double conf)
{
	struct lp_tsample_est e;
	if (w->from_first)
		return -1; /* the first units for the others: a bias no interval of theirs says */
	lp_tsample_design_estimate(&w->design, 0, x, conf, &e);
	return e.half_ci < 0 ? -1 : e.half_ci / 1e6;
}

static int stage_kind_of(const struct lp_stage_set *stages, int32_t s)
{
	if (s < 0 || (size_t)s >= stages->n_stages)
		return 2;
	return stages->stages[s].kind == LP_STAGE_PREFILL ? 0 : stages->stages[s].kind == LP_STAGE_DECODE ? 1 : 2;
}

/* Row of (name, device) in a kernel set through a name map (first row of that name, then a scan
 * for another device: several devices are rare). */
static int32_t kernel_row_of(const struct lp_kernel_set *set, struct lp_map *by_name, const char *name, int32_t device)
{
	const struct lp_map_entry *e = lp_map_find(by_name, name, strlen(name));
	size_t j;
	if (!e)
		return -1;
	if (set->rows[e->val].device == device)
		return (int32_t)e->val;
	for (j = 0; j < set->n_rows; j++)
		if (set->rows[j].device == device && !strcmp(set->rows[j].name, name))
			return (int32_t)j;
	return -1;
}

int lp_tsample_scale_kernels(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_weights *w, double conf, struct lp_kernel_set *set, struct lp_err *err)
{
	struct lp_map by_name = LP_MAP_INIT;
	double *rec_ms = NULL, *rec_calls = NULL, *x = NULL;
	uint8_t *in_unit = NULL;
	size_t i, j;
	int rc = -1;
	if ((!w->sampled && w->N > 0 && w->n == 0) || w->from_first) {
		set->sample_missing = w->N;
		set->sample_exact = w->n_exact;
	}
	if (!w->sampled || !set->n_rows)
		return 0;
	rec_ms = calloc(set->n_rows * 3, sizeof(*rec_ms));
	rec_calls = calloc(set->n_rows * 3, sizeof(*rec_calls));
	x = calloc(set->n_rows * (size_t)w->n, sizeof(*x));
	in_unit = calloc(set->n_rows, 1);
	if (!rec_ms || !rec_calls || !x || !in_unit)
		goto oom;
	for (j = 0; j < set->n_rows; j++) {
		int added = 0;
		struct lp_map_entry *e = lp_map_upsert(&by_name, set->rows[j].name, strlen(set->rows[j].name), &added, err);
		if (!e)
			goto done;
		if (added)
			e->val = j;
	}
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		int32_t r, s = stages->kernel_stage && i < stages->n_kernels ? stages->kernel_stage[i] : -1;
		double ns;
		int kind;
		if (!w->kernel_in_unit[i] || !k->name)
			continue;
		if ((r = kernel_row_of(set, &by_name, k->name, k->device)) < 0)
			continue;
		in_unit[r] = 1;
		if (w->kernel_slot[i] < 0)
			continue;
		ns = k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) : 0;
		kind = stage_kind_of(stages, s);
		set->rows[r].stage_sampled[kind] = 1;
		/* what the units this one stands for add beyond itself */
		rec_ms[(size_t)r * 3 + kind] += (w->design.w[w->kernel_slot[i]] - 1) * ns / 1e6;
		rec_calls[(size_t)r * 3 + kind] += w->design.w[w->kernel_slot[i]] - 1;
		x[(size_t)r * w->n + (size_t)w->kernel_slot[i]] += ns;
	}
	set->sampled = 1;
	set->sample_n = w->from_first ? 0 : w->n - w->stage_n;
	set->sample_N = w->N - w->stage_N;
	set->sample_exact = w->n_exact;
	for (j = 0; j < set->n_rows; j++) {
		struct lp_kernel_row *row = &set->rows[j];
		double add_ms = 0, add_busy = 0;
		uint64_t add_calls = 0;
		int kind;
		if (!in_unit[j])
			continue;
		row->sampled = 1;
		for (kind = 0; kind < 3; kind++) {
			double dm = rec_ms[j * 3 + kind], old = row->stage_ms[kind];
			uint64_t dc = (uint64_t)llround(rec_calls[j * 3 + kind]);
			row->stage_ms[kind] += dm;
			row->stage_calls[kind] += dc;
			set->family_ms[kind][row->family] += dm;
			add_ms += dm;
			add_calls += dc;
			/* busy time per stage kind scales with that kind's time alone: a kernel the exact
			 * prefill runs too keeps its prefill share (run 36: scaled with the row's total, a
			 * prefill's kernel items read 8 times its busy time) */
			if (old > 0 && dm != 0) {
				double b = row->stage_busy_ms[kind] * (dm / old);
				row->stage_busy_ms[kind] += b;
				add_busy += b;
			}
		}
		row->total_ms += add_ms;
		row->calls += add_calls;
		set->total_ms += add_ms;
		if (row->calls)
			row->mean_ms = row->total_ms / (double)row->calls;
		row->busy_ms += add_busy;
		set->busy_ms += add_busy;
		row->ci_ms = row_ci_ms(w, x + j * w->n, conf);
	}
	for (j = 0; j < set->n_rows; j++)
		set->rows[j].share = set->busy_ms > 0 ? set->rows[j].busy_ms / set->busy_ms : 0;
	if (set->n_rows > 1)
		qsort(set->rows, set->n_rows, sizeof(*set->rows), lp_kernel_row_cmp);
	rc = 0;
	goto done;
oom:
	lp_oom(err);
done:
	lp_map_release(&by_name);
	free(rec_ms);
	free(rec_calls);
	free(x);
	free(in_unit);
	return rc;
}

/* The (stage, op name) key of an operator row, as operators.c forms it. */
static int op_key(struct lp_buf *b, int32_t stage, const char *name)
{
	lp_buf_reset(b);
	lp_buf_addf(b, "%d/%s", (int)stage, name);
	return b->oom ? -1 : 0;
}

int lp_tsample_scale_ops(const struct lp_profile *p, const struct lp_stage_set *stages,
	const struct lp_tsample_weights *w, double conf, struct lp_op_table *ops, struct lp_err *err)
{
	struct lp_map rows = LP_MAP_INIT;
	struct lp_buf key = LP_BUF_INIT, nb = LP_BUF_INIT;
	double *incl = NULL, *excl = NULL, *rec_incl = NULL, *rec_excl = NULL, *rec_n = NULL, *x = NULL;
	double *incl_n = NULL, stage_rec[LP_STAGES_MAX + 1], stage_ms[LP_STAGES_MAX + 1];
	int32_t *stage_of = NULL;
	char **opname = NULL;
	uint8_t *touched = NULL;
	size_t i, j;
	int rc = -1;
	if (!w->sampled || !ops->n_rows)
		return 0;
	incl = calloc(p->n_ranges + 1, sizeof(*incl));
	incl_n = calloc(p->n_ranges + 1, sizeof(*incl_n));
	excl = calloc(p->n_ranges + 1, sizeof(*excl));
	stage_of = malloc((p->n_ranges + 1) * sizeof(*stage_of));
	opname = calloc(p->n_ranges + 1, sizeof(*opname));
	rec_incl = calloc(ops->n_rows, sizeof(*rec_incl));
	rec_excl = calloc(ops->n_rows, sizeof(*rec_excl));
	rec_n = calloc(ops->n_rows, sizeof(*rec_n));
	touched = calloc(ops->n_rows, 1);
	x = calloc(ops->n_rows * (size_t)w->n, sizeof(*x));
	if (!incl || !incl_n || !excl || !stage_of || !opname || !rec_incl || !rec_excl || !rec_n || !touched || !x)
		goto oom;
	memset(stage_rec, 0, sizeof(stage_rec));
	for (j = 0; j < ops->n_rows; j++) {
		int added = 0;
		struct lp_map_entry *e;
		if (op_key(&key, ops->rows[j].stage_index, ops->rows[j].name) < 0 ||
		    !(e = lp_map_upsert(&rows, key.data, key.len, &added, err)))
			goto oom;
		e->val = j;
	}
	lp_stage_of_ranges(stages, p->n_ranges, stage_of);
	/* op names (operators.c: known workload ops and PyTorch ranges, suffix stripped), recorded ranges only */
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		if (r->kind == LP_RANGE_MARK || !(lp_op_is_known(r->name) || lp_op_is_pytorch(r->name)))
			continue;
		if (lp_op_strip_suffix(r->name, &nb) < 0 || !(opname[i] = strdup(nb.data)))
			goto oom;
	}
	/* GPU time of the kernels in recorded units: inclusive per ancestor, exclusive on the innermost op */
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		double d = k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) : 0, wx;
		int32_t r, s;
		int guard = 0, excl_done = 0;
		if (w->kernel_slot[i] < 0)
			continue;
		wx = w->design.w[w->kernel_slot[i]] - 1; /* the units it stands for beyond itself */
		s = stages->kernel_stage && i < stages->n_kernels ? stages->kernel_stage[i] : -1;
		stage_rec[s >= 0 && s < LP_STAGES_MAX ? s : LP_STAGES_MAX] += wx * d / 1e6;
		for (r = k->range; r >= 0 && guard++ < 512; r = p->ranges[r].parent) {
			incl[r] += d;
			incl_n[r] += 1;
			if (!excl_done && opname[r]) {
				excl[r] += d;
				excl_done = 1;
			}
		}
	}
	for (i = 0; i < p->n_ranges; i++) {
		int32_t a, st = -1, slot = w->range_slot[i];
		int guard = 0, nested_same = 0;
		const struct lp_map_entry *e;
		if (!opname[i] || slot < 0 || (!incl[i] && !excl[i]))
			continue;
		for (a = p->ranges[i].parent; a >= 0 && guard++ < 512; a = p->ranges[a].parent) {
			if (st < 0 && stage_of[a] >= 0)
				st = stage_of[a];
			if (opname[a] && !strcmp(opname[a], opname[i]))
				nested_same = 1;
		}
		if (op_key(&key, st, opname[i]) < 0)
			goto oom;
		if (!(e = lp_map_find(&rows, key.data, key.len)))
			continue;
		j = e->val;
		touched[j] = 1;
		rec_excl[j] += (w->design.w[slot] - 1) * excl[i];
		if (nested_same)
			continue;
		rec_incl[j] += (w->design.w[slot] - 1) * incl[i];
		rec_n[j] += (w->design.w[slot] - 1) * incl_n[i];
		x[j * w->n + (size_t)slot] += incl[i];
	}
	/* the stages' kernel time, scaled the same way (the denominators of share) */
	memset(stage_ms, 0, sizeof(stage_ms));
	for (i = 0; i < stages->n_stages && i < LP_STAGES_MAX; i++)
		for (j = 0; j < stages->stages[i].n_iters; j++)
			stage_ms[i] += (double)stages->stages[i].iters[j].kernel_ns / 1e6;
	{
		double staged = 0;
		for (i = 0; i < stages->n_stages && i < LP_STAGES_MAX; i++)
			staged += stage_ms[i];
		stage_ms[LP_STAGES_MAX] = (double)stages->measured_kernel_ns / 1e6 - staged;
	}
	for (i = 0; i <= LP_STAGES_MAX; i++)
		stage_ms[i] += stage_rec[i];
	ops->sampled = 1;
	for (j = 0; j < ops->n_rows; j++) {
		struct lp_op_row *row = &ops->rows[j];
		size_t s = row->stage_index >= 0 ? (size_t)row->stage_index : LP_STAGES_MAX;
		if (touched[j]) {
			row->sampled = 1;
			row->gpu_incl_ms += rec_incl[j] / 1e6;
			row->gpu_excl_ms += rec_excl[j] / 1e6;
			row->kernels += (uint64_t)llround(rec_n[j]);
			row->ci_ms = row_ci_ms(w, x + j * w->n, conf);
		}
		if (stages->have_gpu && s <= LP_STAGES_MAX && stage_ms[s] > 0)
			row->share = row->gpu_incl_ms / stage_ms[s];
	}
	rc = 0;
	goto done;
oom:
	lp_oom(err);
done:
	if (opname)
		for (i = 0; i < p->n_ranges; i++)
			free(opname[i]);
	free(opname);
	lp_map_release(&rows);
	lp_buf_release(&key);
	lp_buf_release(&nb);
	free(incl);
	free(incl_n);
	free(excl);
	free(stage_of);
	free(rec_incl);
	free(rec_excl);
	free(rec_n);
	free(touched);
	free(x);
	return rc;
}

/* A statistic of stage st over its recorded iterations (what: 0 GPU busy ms, 1 kernel ms, 2
 * kernels, 3 GPU span ms); returns their count. */
static size_t recorded_stat(const struct lp_profile *p, const struct lp_stage *st, int what, double *vals,
	struct lp_stat *out)
{
	size_t j, n = 0;
	for (j = 0; j < st->n_iters; j++) {
		const struct lp_stage_iter *it = &st->iters[j];
		if (it->range >= 0 && p->ranges[it->range].sample == 2)
			continue;
		vals[n++] = what == 2 ? (double)it->kernels : (double)(what == 0 ? it->gpu_busy_ns : what == 1 ?
			it->kernel_ns : it->gpu_span_ns) / 1e6;
	}
	lp_stat_compute(vals, n, out);
	return n;
}

int lp_tsample_scale_stages(const struct lp_profile *p, const struct lp_tsample_weights *w,
	struct lp_stage_set *stages, struct lp_err *err)
{
	int32_t *iter_of = NULL;         /* per range: the stage iteration it is (index into refs), -1 */
	struct { size_t s, j; } *refs = NULL;
	double *rec_ns = NULL, *rec_n = NULL, *vals = NULL;
	size_t i, j, n_refs = 0, max_iters = 0;
	if (!w->sampled || !stages->kernel_stage)
		return 0;
	for (i = 0; i < stages->n_stages; i++) {
		n_refs += stages->stages[i].n_iters;
		if (stages->stages[i].n_iters > max_iters)
			max_iters = stages->stages[i].n_iters;
	}
	iter_of = malloc((p->n_ranges + 1) * sizeof(*iter_of));
	refs = malloc((n_refs + 1) * sizeof(*refs));
	rec_ns = calloc(n_refs + 1, sizeof(*rec_ns));
	rec_n = calloc(n_refs + 1, sizeof(*rec_n));
	vals = malloc((max_iters + 1) * sizeof(*vals));
	if (!iter_of || !refs || !rec_ns || !rec_n || !vals) {
		free(iter_of);
		free(refs);
		free(rec_ns);
		free(rec_n);
		free(vals);
		return lp_oom(err);
	}
	for (i = 0; i < p->n_ranges; i++)
		iter_of[i] = -1;
	n_refs = 0;
	for (i = 0; i < stages->n_stages; i++)
		for (j = 0; j < stages->stages[i].n_iters; j++) {
			int32_t r = stages->stages[i].iters[j].range;
			if (r >= 0 && (size_t)r < p->n_ranges)
				iter_of[r] = (int32_t)n_refs;
			refs[n_refs].s = i;
			refs[n_refs++].j = j;
		}
	/* the kernels of recorded units, per stage iteration (the occurrence above them); an iteration
	 * that is itself a unit (decode steps with no decode range around them, LP_STAGE_STEPS) is not
	 * scaled: its statistics are taken over the recorded ones below, the stage total still grows */
	for (i = 0; i < p->n_kernels && i < stages->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		double add;
		int32_t r;
		int guard = 0;
		if (w->kernel_slot[i] < 0 || stages->kernel_stage[i] < 0)
			continue;
		for (r = k->range; r >= 0 && guard++ < 512 && iter_of[r] < 0; r = p->ranges[r].parent) {
		}
		if (r < 0 || iter_of[r] < 0 || refs[iter_of[r]].s != (size_t)stages->kernel_stage[i])
			continue;
		add = (w->design.w[w->kernel_slot[i]] - 1) * (k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) : 0);
		if (p->ranges[r].sample) {
			stages->measured_kernel_ns += (uint64_t)llround(add);
			continue;
		}
		rec_ns[iter_of[r]] += add;
		rec_n[iter_of[r]] += w->design.w[w->kernel_slot[i]] - 1;
	}
	for (i = 0; i < n_refs; i++) {
		struct lp_stage_iter *it = &stages->stages[refs[i].s].iters[refs[i].j];
		double old = (double)it->kernel_ns, add = rec_ns[i];
		if (rec_n[i] <= 0)
			continue;
		it->kernel_ns += (uint64_t)llround(add);
		it->kernels += (uint64_t)llround(rec_n[i]);
		if (old > 0)
			it->gpu_busy_ns = (uint64_t)llround((double)it->gpu_busy_ns * (old + add) / old);
		stages->measured_kernel_ns += (uint64_t)llround(add);
	}
	for (i = 0; i < stages->n_stages; i++) {
		struct lp_stage *st = &stages->stages[i];
		size_t n = 0, skipped = 0;
		for (j = 0; j < st->n_iters; j++)
			skipped += st->iters[j].range >= 0 && p->ranges[st->iters[j].range].sample == 2;
		lp_stage_kernel_stats(st, vals);
		if (skipped && skipped < st->n_iters) {
			/* iterations that are units: kernel statistics over the recorded ones (an unrecorded
			 * one has no kernels, not zero kernel time or span) */
			recorded_stat(p, st, 0, vals, &st->gpu_ms);
			recorded_stat(p, st, 1, vals, &st->kernel_ms);
			recorded_stat(p, st, 2, vals, &st->kernels);
			n = recorded_stat(p, st, 3, vals, &st->gpu_span_ms);
			st->recorded_iters = n;
		}
		lp_stage_verdict(st, stages->have_gpu);
	}
	free(iter_of);
	free(refs);
	free(rec_ns);
	free(rec_n);
	free(vals);
	return 0;
}
