/* sampling.c: scaling tables of sampled traces to the whole stage, with confidence intervals
 * (sampling.h has the estimator and its assumptions; docs/tracer.md "Sampled tracing" the user's
 * view). Input: a loaded profile (its kernels attributed to ranges) and the tracer's plan; output:
 * rows with estimates. Each unit's stratum comes from the tracer's STAGE flags (lp_range.sample)
 * where the trace has them, else the schedule is replayed from the range tree. The analysis's own
 * tables (kernels, operators, stages) are scaled in sampling_scale.c. */

#include "analyze/sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "core/vec.h"
#include "llmprof/trace_format.h"

enum {                                /* lp_range.sample (trace format: LP_TRACE_STAGE_*) */
	LP_TSAMPLE_FLAG_SKIPPED = 2,          /* an unrecorded unit */
	LP_TSAMPLE_FLAG_MEASURED = 3,         /* recorded while auto measured: exact stratum */
};

int lp_tsample_plan_of(const struct lp_profile *p, struct lp_tsample_plan *plan)
{
	size_t i;
	memset(plan, 0, sizeof(*plan));
	plan->unit = "decode_step";
	for (i = 0; i < p->n_processes; i++) {
		const struct lp_sampling *s = &p->processes[i].sampling;
		if (s->mode && s->unit && *s->unit)
			plan->unit = s->unit;
		if (s->mode == 2) {
			plan->sampled = 1;
			plan->every = s->every;
			plan->first = s->first;
			plan->pick = s->pick;
			plan->seed = s->seed;
			plan->burst = s->burst;
			return 1;
		}
	}
	return 0;
}

uint64_t lp_tsample_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

int lp_tsample_recorded(const struct lp_tsample_plan *plan, uint32_t ordinal, uint32_t index)
{
	uint32_t b, pos, k = plan->burst > 1 ? plan->burst : 1, clusters, start;
	if (!plan->sampled || index < plan->first || plan->every <= 1)
		return 1;
	b = (index - plan->first) / plan->every;
	pos = (index - plan->first) % plan->every;
	clusters = plan->every / k ? plan->every / k : 1;
	if (plan->pick == LP_TRACE_SAMPLE_PICK_FIRST)
		start = k * (plan->offset % clusters);
	else
		start = k * (uint32_t)(lp_tsample_mix64(lp_tsample_mix64(lp_tsample_mix64(plan->seed) ^ ordinal) ^ b) %
			clusters);
	return pos >= start && pos - start < k;
}

/* ---- Student's t ---- */

/* The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9). */
static double normal_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
		1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
		6.680131188771972e+01, -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
		-2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
		3.754408661907416e+00 };
	double q, r;
	if (p <= 0 || p >= 1)
		return p <= 0 ? -INFINITY : INFINITY;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
			((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	if (p > 1 - 0.02425)
		return -normal_quantile(1 - p);
	q = p - 0.5;
	r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		(((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* Exact for df 1 and 2; the Cornish-Fisher expansion in 1/df above (error < 0.3% at df 3, less
 * beyond: t(0.975, 3) = 3.1824 exactly, 3.178 here). */
double lp_student_t_quantile(double p, double df)
{
	double z, z2, g1, g2, g3, g4;
	if (df < 1)
		df = 1;
	if (df < 1.5)
		return tan(M_PI * (p - 0.5));
	if (df < 2.5)
		return (2 * p - 1) / sqrt(2 * p * (1 - p));
	z = normal_quantile(p);
	z2 = z * z;
	g1 = (z2 + 1) * z / 4;
	g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
	g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
	g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
	return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
}

void lp_tsample_estimate(double exact_sum, const double *x, uint32_t n, uint32_t N, double conf,
	struct lp_tsample_est *out)
{
	double sum = 0, mean, ss = 0, var;
	uint32_t i;
	memset(out, 0, sizeof(*out));
	out->exact_part = exact_sum;
	out->total = exact_sum;
	out->n = n;
	out->N = N;
	if (N == 0)
		return; /* nothing to scale: exact */
	if (n == 0) {
		out->half_ci = -1; /* units nobody recorded: unknown */
		return;
	}
	for (i = 0; i < n; i++)
		sum += x[i];
	mean = sum / n;
	out->total = exact_sum + (double)N * mean;
	if (n >= N) {
		out->half_ci = 0;
		return;
	}
	if (n < 2) {
		out->half_ci = -1;
		return;
	}
	for (i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	var = (double)N * N * (1.0 - (double)n / N) * (ss / (n - 1)) / n;
	out->half_ci = lp_student_t_quantile(0.5 + conf / 2, n - 1) * sqrt(var);
}

/* ---- the units of a profile ---- */

struct unit_ref {
	uint32_t pid, tid;
	uint64_t start_ns;
	int32_t idx;
};

static int cmp_unit(const void *a, const void *b)
{
	const struct unit_ref *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The plan of process `pid` for a replay: `plan` with that process's seed when it has one (of
 * several processes with that pid, the last sampled one's). */
static struct lp_tsample_plan plan_of_pid(const struct lp_profile *p, const struct lp_tsample_plan *plan, uint32_t pid)
{
	struct lp_tsample_plan q = *plan;
	size_t i;
	for (i = 0; i < p->n_processes; i++)
		if (p->processes[i].pid == pid && p->processes[i].sampling.mode == 2) {
			q.pick = p->processes[i].sampling.pick;
			q.seed = p->processes[i].sampling.seed;
		}
	return q;
}

struct inst_ref {
	uint32_t pid, tid;
	const char *name;
	uint64_t start_ns;
	int32_t idx;
};

static int cmp_inst(const void *a, const void *b)
{
	const struct inst_ref *x = a, *y = b;
	int c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The stage instances the tracer sampled on their own (sampling.h lp_tsample_units_find): one
 * chain per (process, thread, name) that has a skipped instance. */
static int stage_units_find(const struct lp_profile *p, const struct lp_tsample_plan *plan,
	struct lp_tsample_units *out, struct lp_err *err)
{
	struct inst_ref *v = malloc((p->n_ranges + 1) * sizeof(*v));
	size_t i, j, n = 0;
	if (!v)
		return lp_oom(err);
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		if (r->synthetic || (r->sample != LP_TRACE_STAGE_RECORDED && r->sample != LP_TRACE_STAGE_SKIPPED) ||
		    !strcmp(r->name, plan->unit) || lp_profile_range_find_ancestor(p, (int32_t)i, plan->unit) >= 0)
			continue;
		v[n].pid = r->pid;
		v[n].tid = r->tid;
		v[n].name = r->name;
		v[n].start_ns = r->start_ns;
		v[n++].idx = (int32_t)i;
	}
	qsort(v, n, sizeof(*v), cmp_inst);
	for (i = 0; i < n; i = j) {
		size_t skipped = 0, k;
		for (j = i; j < n && v[j].pid == v[i].pid && v[j].tid == v[i].tid && !strcmp(v[j].name, v[i].name); j++)
			skipped += p->ranges[v[j].idx].sample == LP_TRACE_STAGE_SKIPPED;
		if (!skipped)
			continue; /* every instance recorded: exact, as any other range */
		out->n_chains++;
		for (k = i; k < j; k++) {
			int32_t r = v[k].idx;
			uint8_t s = p->ranges[r].sample == LP_TRACE_STAGE_SKIPPED ? LP_TSAMPLE_SKIPPED : LP_TSAMPLE_RECORDED;
			out->stage_unit[r] = 1;
			out->stratum[r] = s;
			out->chain[r] = out->n_chains - 1;
			out->unit_index[r] = (uint32_t)(k - i);
			out->n_recorded += s == LP_TSAMPLE_RECORDED;
			out->n_skipped += s == LP_TSAMPLE_SKIPPED;
			out->n_stage_recorded += s == LP_TSAMPLE_RECORDED;
			out->n_stage_skipped += s == LP_TSAMPLE_SKIPPED;
		}
	}
	free(v);
	return 0;
}

int32_t lp_tsample_unit_of(const struct lp_profile *p, const struct lp_tsample_plan *plan,
	const struct lp_tsample_units *units, int32_t r)
{
	int guard = 0;
	for (; r >= 0 && (size_t)r < p->n_ranges && guard++ < 4096; r = p->ranges[r].parent)
		if ((units->stage_unit && units->stage_unit[r]) || !strcmp(p->ranges[r].name, plan->unit))
			return r;
	return -1;
}

int lp_tsample_units_find(const struct lp_profile *p, const struct lp_tsample_plan *plan, int replay,
	struct lp_tsample_units *out, struct lp_err *err)
{
	struct unit_ref *u;
	struct lp_tsample_plan pp = *plan;
	size_t i, n = 0;
	uint32_t next = 0, ordinal = 0;
	int wu_detached = 0;           /* this process's tracer detached CUPTI for its warm-up */
	memset(out, 0, sizeof(*out));
	out->stratum = calloc(p->n_ranges ? p->n_ranges : 1, sizeof(*out->stratum));
	out->unit_index = calloc(p->n_ranges ? p->n_ranges : 1, sizeof(*out->unit_index));
	out->chain = calloc(p->n_ranges ? p->n_ranges : 1, sizeof(*out->chain));
	out->ordinal = calloc(p->n_ranges ? p->n_ranges : 1, sizeof(*out->ordinal));
	out->stage_unit = calloc(p->n_ranges ? p->n_ranges : 1, 1);
	u = calloc(p->n_ranges ? p->n_ranges : 1, sizeof(*u));
	if (!out->stratum || !out->unit_index || !out->chain || !out->ordinal || !out->stage_unit || !u) {
		free(u);
		lp_tsample_units_release(out);
		return lp_oom(err);
	}
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		if (r->synthetic || strcmp(r->name, plan->unit) != 0)
			continue;
		if (r->parent >= 0 && lp_profile_range_find_ancestor(p, r->parent, plan->unit) >= 0)
			continue; /* nested in another unit: the tracer does not count it either */
		u[n].pid = r->pid;
		u[n].tid = r->tid;
		u[n].start_ns = r->start_ns;
		u[n].idx = (int32_t)i;
		n++;
	}
	qsort(u, n, sizeof(*u), cmp_unit);
	for (i = 0; i < n; i++) {
		const struct lp_range *r = &p->ranges[u[i].idx];
		uint8_t s;
		int new_thread = i == 0 || u[i].pid != u[i - 1].pid || u[i].tid != u[i - 1].tid;
		if (i == 0 || u[i].pid != u[i - 1].pid) {
			const struct lp_process *pr = lp_profile_process(p, u[i].pid);
			pp = replay ? *plan : plan_of_pid(p, plan, u[i].pid);
			/* its units inside the warm-up hold no kernels: no units of any stratum */
			wu_detached = pr && pr->sampling.warmup == LP_TRACE_WARMUP_DETACHED;
		}
		if (new_thread || r->parent != p->ranges[u[i - 1].idx].parent) {
			/* a new chain; the parent ordinal counts the parent's changes on the thread as the
			 * tracer does (no parent, -1 here, is its 0: the count starts from it) */
			next = 0;
			if (new_thread)
				ordinal = r->parent >= 0;
			else
				ordinal++;
			out->n_chains++;
		}
		if (r->sample && !replay) {
			/* the tracer's own flags (STAGE records) when the reader has them; a unit recorded
			 * while auto was still measuring (3) is exact, as is one off the schedule */
			next = r->sample_index;
			if (r->sample == LP_TSAMPLE_FLAG_SKIPPED)
				s = LP_TSAMPLE_SKIPPED;
			else if (r->sample == LP_TSAMPLE_FLAG_MEASURED || !plan->sampled || next < plan->first)
				s = LP_TSAMPLE_EXACT;
			else
				s = LP_TSAMPLE_RECORDED; /* a recorded unit is on the schedule: the tracer says so */
		} else if (!plan->sampled || next < plan->first) {
			s = LP_TSAMPLE_EXACT;
		} else {
			s = lp_tsample_recorded(&pp, ordinal, next) ? LP_TSAMPLE_RECORDED : LP_TSAMPLE_SKIPPED;
		}
		/* counted for the schedule's positions as the tracer counted them, but not recorded */
		if (wu_detached && lp_profile_range_find_ancestor(p, u[i].idx, "warmup") >= 0)
			s = LP_TSAMPLE_OUTSIDE;
		out->chain[u[i].idx] = out->n_chains - 1;
		out->ordinal[u[i].idx] = ordinal;
		out->unit_index[u[i].idx] = next;
		out->stratum[u[i].idx] = s;
		out->n_exact += s == LP_TSAMPLE_EXACT;
		out->n_recorded += s == LP_TSAMPLE_RECORDED;
		out->n_skipped += s == LP_TSAMPLE_SKIPPED;
		next++;
	}
	free(u);
	if (!replay && plan->sampled && stage_units_find(p, plan, out, err) < 0) {
		lp_tsample_units_release(out);
		return -1;
	}
	return 0;
}

void lp_tsample_units_release(struct lp_tsample_units *u)
{
	free(u->stratum);
	free(u->unit_index);
	free(u->chain);
	free(u->ordinal);
	free(u->stage_unit);
	memset(u, 0, sizeof(*u));
}

/* ---- tables ---- */

struct acc {                          /* one row while building */
	const char *key;
	double exact_ns, outside_ns;
	uint64_t exact_calls, outside_calls;
	double *x_ns, *x_calls;           /* per recorded unit (slot order) */
};

static int cmp_row(const void *a, const void *b)
{
	const struct lp_tsample_row *x = a, *y = b;
	if (x->time_ns.total != y->time_ns.total)
		return x->time_ns.total > y->time_ns.total ? -1 : 1;
	return strcmp(x->key, y->key);
}

static const char *kernel_name(const struct lp_profile *p, size_t k, void *ctx)
{
	(void)ctx;
	return p->kernels[k].name;
}

int lp_tsample_table_build(const struct lp_profile *p, const struct lp_tsample_plan *plan, double conf,
	lp_tsample_key_fn key, void *ctx, struct lp_tsample_table *out, struct lp_err *err)
{
	struct lp_tsample_units units;
	struct lp_tsample_design design;
	struct acc *rows = NULL;
	struct lp_map index = LP_MAP_INIT;   /* key -> row */
	int32_t *slot_of_range = NULL;
	size_t n_rows = 0, cap_rows = 0, i;
	double *tot_ns = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&design, 0, sizeof(design));
	if (lp_tsample_units_find(p, plan, 0, &units, err) < 0)
		return -1;
	out->sampled = plan->sampled && units.n_recorded + units.n_skipped > 0;
	out->units_exact = units.n_exact;
	out->units_recorded = units.n_recorded - units.n_stage_recorded;
	out->units_sampled_stratum = units.n_recorded + units.n_skipped - units.n_stage_recorded - units.n_stage_skipped;
	/* recorded units get slots 0..n_recorded-1 (per-unit values live in those columns) */
	slot_of_range = malloc((p->n_ranges ? p->n_ranges : 1) * sizeof(*slot_of_range));
	tot_ns = calloc(units.n_recorded ? units.n_recorded : 1, sizeof(*tot_ns));
	if (!slot_of_range || !tot_ns)
		goto oom;
	{
		int32_t next = 0;
		for (i = 0; i < p->n_ranges; i++)
			slot_of_range[i] = units.stratum[i] == LP_TSAMPLE_RECORDED ? next++ :
				units.stratum[i] == LP_TSAMPLE_SKIPPED ? -1 : -2;
	}
	if (lp_tsample_units_design(&units, p->n_ranges, slot_of_range, plan, &design, err) < 0)
		goto done;
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		const char *name = key(p, i, ctx);
		int32_t unit = -1;
		struct lp_map_entry *e;
		struct acc *a;
		double dur;
		int added;
		if (!name)
			continue;
		if (k->range >= 0)
			unit = lp_tsample_unit_of(p, plan, &units, k->range);
		/* the row */
		if (!(e = lp_map_upsert(&index, name, strlen(name), &added, NULL)))
			goto oom;
		if (added) {
			if (!(a = LP_ARRAY_PUSH(rows, n_rows, cap_rows, NULL)))
				goto oom;
			a->key = name;
			a->x_ns = calloc(units.n_recorded ? units.n_recorded : 1, sizeof(double));
			a->x_calls = calloc(units.n_recorded ? units.n_recorded : 1, sizeof(double));
			if (!a->x_ns || !a->x_calls)
				goto oom;   /* freed with the rows below */
			e->val = n_rows - 1;
		}
		a = &rows[e->val];
		dur = k->end_ns > k->start_ns ? (double)(k->end_ns - k->start_ns) : 0;
		if (unit < 0 || units.stratum[unit] == LP_TSAMPLE_OUTSIDE) {
			a->outside_ns += dur;
			a->outside_calls++;
		} else if (units.stratum[unit] == LP_TSAMPLE_RECORDED) {
			a->x_ns[slot_of_range[unit]] += dur;
			a->x_calls[slot_of_range[unit]] += 1;
			tot_ns[slot_of_range[unit]] += dur;
		} else {
			/* exact stratum (a skipped unit has no kernels; one would come from another
			 * thread's launch while CUPTI was on: counted as exact, it is real) */
			a->exact_ns += dur;
			a->exact_calls++;
		}
	}
	out->rows = calloc(n_rows ? n_rows : 1, sizeof(*out->rows));
	if (!out->rows)
		goto oom;
	{
		double exact_total = 0;
		for (i = 0; i < n_rows; i++) {
			struct lp_tsample_row *r = &out->rows[i];
			r->key = rows[i].key;
			lp_tsample_design_estimate(&design, rows[i].exact_ns, rows[i].x_ns, conf, &r->time_ns);
			lp_tsample_design_estimate(&design, (double)rows[i].exact_calls, rows[i].x_calls, conf, &r->calls);
			r->outside_ns = rows[i].outside_ns;
			r->outside_calls = rows[i].outside_calls;
			exact_total += rows[i].exact_ns;
		}
		lp_tsample_design_estimate(&design, exact_total, tot_ns, conf, &out->total_ns);
	}
	out->n_rows = n_rows;
	qsort(out->rows, out->n_rows, sizeof(*out->rows), cmp_row);
	rc = 0;
	goto done;
oom:
	lp_oom(err);
	lp_tsample_table_release(out);
done:
	for (i = 0; i < n_rows; i++) {
		free(rows[i].x_ns);
		free(rows[i].x_calls);
	}
	free(rows);
	lp_map_release(&index);
	free(slot_of_range);
	free(tot_ns);
	lp_tsample_design_release(&design);
	lp_tsample_units_release(&units);
	return rc;
}

int lp_tsample_kernel_table(const struct lp_profile *p, const struct lp_tsample_plan *plan, double conf,
	struct lp_tsample_table *out, struct lp_err *err)
{
	return lp_tsample_table_build(p, plan, conf, kernel_name, NULL, out, err);
}

void lp_tsample_table_release(struct lp_tsample_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
