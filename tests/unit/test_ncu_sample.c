/* test_ncu_sample.c: the Nsight Compute sampling planner (analyze/ncu_sample.h): groups and
 * invocation numbers over a decode fixture with a warm-up step and a prefill that share some
 * configurations, K picks spread over steps, the coverage target, the --kernel-id of one process,
 * the extras a shared kernel name brings, the split into processes, the budget (K lowered, then
 * the smallest groups dropped), cached groups, attaching results and the coverage, and the refusal
 * of a sampled capture (by hand and on traces of the tracer's own writer, build/tests/lp_trace_fixture). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/ncu_sample.h"
#include "parse/trace_read.h"

#define LAYERS 4
#define STEPS 8
#define MAXL 2048

struct fx {
	struct lp_sample_launch l[MAXL];
	size_t n;
};

static void add(struct fx *f, const char *name, uint32_t gx, const char *region, int32_t step, uint64_t dur_ns)
{
	struct lp_sample_launch *l = &f->l[f->n++];
	assert_true(f->n <= MAXL);
	memset(l, 0, sizeof(*l));
	l->name = name;
	l->kernel_name = name;
	l->grid[0] = gx;
	l->grid[1] = l->grid[2] = 1;
	l->block[0] = 256;
	l->block[1] = l->block[2] = 1;
	l->region = region;
	l->step = step;
	l->duration_ns = dur_ns;
}

/* One decode step of a 4-layer model: per layer rmsnorm, qkv gemv (grid 384), attention, o-proj
 * gemv (grid 256), rmsnorm, gate/up gemv (grid 1024), down gemv (grid 256, the o-proj's
 * configuration); then the final rmsnorm, the lm_head gemv (grid 16000) and argmax. */
static void decode_step(struct fx *f, const char *region, int32_t step)
{
	int l;
	for (l = 0; l < LAYERS; l++) {
		add(f, "k_rmsnorm", 1, region, step, 2000);
		add(f, "k_gemv", 384, region, step, 12000);
		add(f, "k_attention", 4, region, step, 8000);
		add(f, "k_gemv", 256, region, step, 10000);
		add(f, "k_rmsnorm", 1, region, step, 2000);
		add(f, "k_gemv", 1024, region, step, 30000);
		add(f, "k_gemv", 256, region, step, 10000);
	}
	add(f, "k_rmsnorm", 1, region, step, 2000);
	add(f, "k_gemv", 16000, region, step, 100000);
	add(f, "k_argmax", 1, region, step, 5000);
}

/* warm-up (one decode step, not selected), prefill (not selected), then STEPS decode steps */
static void model(struct fx *f)
{
	int s, l;
	f->n = 0;
	decode_step(f, NULL, -1);
	for (l = 0; l < LAYERS; l++) {
		add(f, "k_rmsnorm", 64, NULL, -1, 9000);
		add(f, "k_gemm", 64, NULL, -1, 90000);
		add(f, "k_attention", 128, NULL, -1, 50000);
		add(f, "k_rmsnorm", 64, NULL, -1, 9000);
	}
	add(f, "k_rmsnorm", 64, NULL, -1, 9000);
	for (s = 0; s < STEPS; s++)
		decode_step(f, "decode_all", s);
}

static const struct lp_sample_group *find(const struct lp_sample_plan *p, const char *name, uint32_t gx)
{
	size_t i;
	for (i = 0; i < p->n_groups; i++)
		if (!strcmp(p->groups[i].name, name) && p->groups[i].grid[0] == gx)
			return &p->groups[i];
	fail_msg("no group %s grid %u", name, gx);
	return NULL;
}

/* Every pick of a planned group is a launch of that group (the invocation-th launch of its name),
 * the picks sit in distinct windows of its steps, and each process profiles what the test counts
 * itself: every name of its groups at every number of their picks that it reaches. Returns the
 * total. */
static uint64_t check_plan(const struct fx *f, const struct lp_sample_plan *p, unsigned k)
{
	size_t i, j, q, pr;
	uint64_t total = 0;
	for (i = 0; i < p->n_groups; i++) {
		const struct lp_sample_group *g = &p->groups[i];
		unsigned seen = 0;
		if (g->status != LP_SAMPLE_PLANNED)
			continue;
		assert_int_equal(g->n_picks, g->n_steps < k ? g->n_steps : k);
		for (j = 0; j < g->n_picks; j++) {
			uint64_t c = 0;
			unsigned w;
			for (q = 0; q < f->n; q++)
				if (!strcmp(f->l[q].name, g->name) && ++c == g->picks[j].invocation)
					break;
			assert_true(q < f->n);
			assert_int_equal(f->l[q].grid[0], g->grid[0]);
			assert_non_null(f->l[q].region);
			assert_string_equal(f->l[q].region, g->region);
			assert_int_equal(f->l[q].step, g->picks[j].step);
			w = (unsigned)(g->picks[j].step * (int32_t)k / (int32_t)g->n_steps);   /* steps are 0..S-1 here */
			assert_false(seen >> w & 1u);
			seen |= 1u << w;
		}
	}
	for (pr = 0; pr < p->n_procs; pr++) {
		const char *names[16];
		uint64_t u[256], n_launches = 0;
		size_t nn = 0, nu = 0, a;
		for (i = 0; i < p->procs[pr].n_groups; i++) {
			const struct lp_sample_group *g = &p->groups[p->procs[pr].groups[i]];
			for (a = 0; a < nn && strcmp(names[a], g->name); a++)
				;
			if (a == nn)
				names[nn++] = g->name;
			for (j = 0; j < g->n_picks; j++) {
				for (a = 0; a < nu && u[a] != g->picks[j].invocation; a++)
					;
				if (a == nu)
					u[nu++] = g->picks[j].invocation;
			}
		}
		for (a = 0; a < nn; a++) {
			uint64_t count = 0;
			for (q = 0; q < f->n; q++)
				count += !strcmp(f->l[q].name, names[a]);
			for (j = 0; j < nu; j++)
				n_launches += u[j] <= count;
		}
		assert_int_equal(p->procs[pr].predicted, n_launches);
		total += n_launches;
	}
	assert_int_equal(p->predicted, total);
	return total;
}

static void assert_picks(const struct lp_sample_group *g, uint64_t a, uint64_t b, uint64_t c)
{
	assert_int_equal(g->n_picks_full, 3);
	assert_int_equal(g->picks[0].invocation, a);
	assert_int_equal(g->picks[1].invocation, b);
	assert_int_equal(g->picks[2].invocation, c);
	assert_int_equal(g->picks[0].step, 1);   /* steps 1, 4, 6 of 0..7: (j + 0.5) * 8 / 3 */
	assert_int_equal(g->picks[1].step, 4);
	assert_int_equal(g->picks[2].step, 6);
}

static void test_groups_and_picks(void **state)
{
	static struct fx f;
	struct lp_sample_opts o = { 3, 0.95, 0, 0, 0, 0, 0, 0, 0 };
	struct lp_sample_plan p;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_sample_group *g;
	(void)state;
	model(&f);
	assert_int_equal(lp_sample_group(f.l, f.n, &o, &p, &err), 0);
	assert_int_equal(p.n_groups, 7);
	assert_int_equal(p.n_launches, STEPS * (7 * LAYERS + 3));
	assert_int_equal(p.total_ns, 3224000);   /* (74 us * 4 layers + 107 us) * 8 steps */
	/* by total time: gate/up, lm_head, o+down, qkv, attention, rmsnorm, argmax */
	assert_int_equal(p.groups[0].grid[0], 1024);
	assert_int_equal(p.groups[1].grid[0], 16000);
	assert_int_equal(p.groups[2].grid[0], 256);
	assert_int_equal(p.groups[3].grid[0], 384);
	assert_string_equal(p.groups[4].name, "k_attention");
	assert_string_equal(p.groups[5].name, "k_rmsnorm");
	assert_string_equal(p.groups[6].name, "k_argmax");
	/* the coverage target: rmsnorm starts at 94.3% (< 95%): wanted; argmax starts at 98.8% */
	assert_int_equal(p.n_wanted, 6);
	assert_true(p.groups[5].wanted);
	assert_false(p.groups[6].wanted);
	assert_true(p.groups[0].share > 0.2977 && p.groups[0].share < 0.2979);

	/* invocation numbers count every launch of the kernel name (ncu's numbering), the warm-up's
	 * and the prefill's included: k_gemv runs 17 times a step (per layer qkv, o, gate/up, down at
	 * 4l+0..3, then lm_head at 16), 17 in the warm-up: step s, position q -> 17 + 17 s + q + 1.
	 * gate/up: steps 1, 4, 6 (the j-th pick takes position j*m/K of its m launches in the step:
	 * layers 0, 1, 2) -> q = 2, 6, 10 -> 37, 92, 130 */
	g = find(&p, "k_gemv", 1024);
	assert_int_equal(g->n_launches, 32);
	assert_int_equal(g->n_steps, 8);
	assert_int_equal(g->config_launches, 17 * 9);
	assert_picks(g, 37, 92, 130);
	g = find(&p, "k_gemv", 256);   /* 8 a step (q = 1, 3, ... 15): positions 0, 2, 5 -> q = 1, 5, 11 */
	assert_int_equal(g->n_launches, 64);
	assert_picks(g, 36, 91, 131);
	g = find(&p, "k_gemv", 16000);   /* q = 16 */
	assert_picks(g, 51, 102, 136);
	g = find(&p, "k_rmsnorm", 1);   /* 9 a step after 9 + 9 (warm-up, prefill): 18 + 9 s + p + 1 */
	assert_int_equal(g->config_launches, 90);
	assert_picks(g, 28, 58, 79);
	assert_int_equal(g->min_ns, 2000);
	assert_int_equal(g->max_ns, 2000);
	lp_sample_plan_release(&p);
}

static void test_one_process(void **state)
{
	static struct fx f;
	struct lp_sample_opts o = { 3, 0.95, 0, 0, 0, 0, 0, 0, 0 };   /* no costs: one process */
	struct lp_sample_plan p;
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	(void)state;
	model(&f);
	assert_int_equal(lp_sample_group(f.l, f.n, &o, &p, &err), 0);
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_int_equal(p.n_procs, 1);
	assert_int_equal(p.k_used, 3);
	assert_int_equal(p.procs[0].planned, 18);
	/* aligned picks from the earliest launches of each window (steps 0, 3, 6 of 0..7): 12 numbers
	 * for 18 picks (a number filling windows of several groups), the last at 136 (lm_head of the
	 * last step's window has one launch a step) */
	assert_string_equal(p.procs[0].kernel_id.data, "::regex:^(k_attention|k_gemv|k_rmsnorm)$:"
		"^(18|20|21|34|69|70|71|85|120|121|122|136)$");
	assert_int_equal(check_plan(&f, &p, 3), 24);
	for (i = 0; i < 6; i++) {
		assert_int_equal(p.groups[i].status, LP_SAMPLE_PLANNED);
		assert_int_equal(p.groups[i].proc, 0);
	}
	assert_int_equal(p.groups[6].status, LP_SAMPLE_BEYOND_TARGET);
	assert_int_equal(p.groups[6].proc, -1);
	assert_int_equal(p.groups[6].n_picks, 0);
	assert_true(p.planned_share > 0.987 && p.planned_share < 0.988);
	lp_sample_plan_release(&p);
}

static void test_split_when_extras_cost(void **state)
{
	static struct fx f;
	struct lp_sample_opts one = { 3, 0.95, 0, 1.0, 1000.0, 0, 0, 0, 0 };   /* processes are dear */
	struct lp_sample_opts many = { 3, 0.95, 0, 1.0, 1.0, 0, 0, 0, 0 };     /* launches are dear */
	struct lp_sample_plan p;
	struct lp_err err = LP_ERR_INIT;
	uint64_t planned = 0;
	double sum = 0;
	size_t i;
	(void)state;
	model(&f);
	assert_int_equal(lp_sample_group(f.l, f.n, &one, &p, &err), 0);
	assert_int_equal(lp_sample_schedule(&p, &one, &err), 0);
	assert_int_equal(p.n_procs, 1);
	assert_int_equal(check_plan(&f, &p, 3), 24);
	assert_true(p.eta_s > 1023.9 && p.eta_s < 1024.1);   /* 1000 + 24 launches */

	assert_int_equal(lp_sample_schedule(&p, &many, &err), 0);   /* again, other costs */
	assert_true(p.n_procs > 1 && p.n_procs <= LP_SAMPLE_DEFAULT_MAX_PROCS);
	assert_true(p.predicted < 24);
	assert_int_equal(check_plan(&f, &p, 3), p.predicted);
	for (i = 0; i < p.n_procs; i++) {
		assert_true(p.procs[i].predicted >= p.procs[i].planned);
		planned += p.procs[i].planned;
		sum += p.procs[i].est_s;
	}
	assert_int_equal(planned, 18);
	assert_true(p.eta_s > sum - 1e-9 && p.eta_s < sum + 1e-9);
	assert_true(p.eta_s > (double)p.n_procs + (double)p.predicted - 1e-9);
	assert_true(p.eta_s < 1024);
	for (i = 0; i < 6; i++)
		assert_true(p.groups[i].proc >= 0 && (size_t)p.groups[i].proc < p.n_procs);
	lp_sample_plan_release(&p);
}

static void test_budget(void **state)
{
	static struct fx f;
	struct lp_sample_opts o = { 3, 0.95, 15.0, 1.0, 0.0, 0, 0, 0, 0 };
	struct lp_sample_plan p;
	struct lp_err err = LP_ERR_INIT;
	size_t i, kept = 0;
	(void)state;
	model(&f);
	assert_int_equal(lp_sample_group(f.l, f.n, &o, &p, &err), 0);
	/* 18 picks at least with K = 3: K is lowered, every wanted group kept */
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_true(p.k_used >= 1 && p.k_used < 3);
	assert_true(p.eta_s <= 15.0);
	assert_int_equal(p.n_budget_dropped, 0);
	for (i = 0; i < 6; i++) {
		assert_int_equal(p.groups[i].status, LP_SAMPLE_PLANNED);
		assert_int_equal(p.groups[i].n_picks, p.k_used);
		assert_int_equal(p.groups[i].n_picks_full, 3);
	}
	/* K = 1 picks from the earliest launches: step 0 */
	o.budget_s = 9.0;
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_int_equal(p.k_used, 1);
	assert_int_equal(p.n_budget_dropped, 0);
	for (i = 0; i < 6; i++)
		assert_int_equal(p.groups[i].picks[0].step, 0);
	assert_true(find(&p, "k_gemv", 1024)->picks[0].invocation <= 21);   /* layer 0 of step 0: 20 */

	/* a budget for a few launches: K = 1 and the smallest groups go first */
	o.budget_s = 3.0;
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_int_equal(p.k_used, 1);
	assert_true(p.eta_s <= 3.0);
	assert_true(p.n_budget_dropped > 0);
	for (i = 0; i < 6; i++) {
		if (p.groups[i].status == LP_SAMPLE_PLANNED) {
			assert_int_equal(kept, i);   /* a prefix of the largest */
			kept++;
		} else {
			assert_int_equal(p.groups[i].status, LP_SAMPLE_BUDGET);
		}
	}
	assert_true(kept >= 1);
	assert_int_equal(kept + p.n_budget_dropped, 6);

	/* a process alone costs more than the budget: nothing is planned */
	o.per_process_s = 10;
	o.budget_s = 5;
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_int_equal(p.n_procs, 0);
	assert_int_equal(p.k_used, 0);
	assert_int_equal(p.n_budget_dropped, 6);
	lp_sample_plan_release(&p);
}

static void test_cached_attach_coverage(void **state)
{
	static struct fx f;
	struct lp_sample_opts o = { 3, 0.95, 0, 0.1, 1.0, 0, 0, 0, 0 };
	struct lp_sample_plan p;
	struct lp_sample_coverage c;
	struct lp_err err = LP_ERR_INIT;
	uint32_t grid[3] = { 1024, 1, 1 }, block[3] = { 256, 1, 1 };
	json_t *j;
	size_t i;
	(void)state;
	model(&f);
	assert_int_equal(lp_sample_group(f.l, f.n, &o, &p, &err), 0);
	p.groups[2].cached = 1;   /* o+down gemv from the cache */
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_int_equal(p.groups[2].status, LP_SAMPLE_CACHED);
	assert_int_equal(p.groups[2].proc, -1);
	assert_int_equal(p.n_cached, 1);
	for (i = 0; i < p.n_procs; i++)
		assert_null(strstr(p.procs[i].kernel_id.data, "|91|"));   /* its picks are not asked for */
	assert_true(p.planned_share > 0.987 && p.planned_share < 0.988);

	lp_sample_coverage(&p, &c);   /* before the run: only the cache */
	assert_int_equal(c.n_covered, 1);
	assert_int_equal(c.n_reused, 1);
	assert_false(c.met);

	assert_int_equal(lp_sample_attach(&p, "k_gemv", grid, block, NULL, 29000), 0);
	assert_int_equal(lp_sample_attach(&p, "k_gemv", grid, block, "decode_all", 31000), 0);
	assert_int_equal(lp_sample_attach(&p, "k_gemv", grid, block, "prefill", 31000), -1);
	grid[0] = 16000;
	assert_int_equal(lp_sample_attach(&p, "k_gemv", grid, block, NULL, 99000), 1);
	grid[0] = 7;
	assert_int_equal(lp_sample_attach(&p, "k_gemv", grid, block, NULL, 1), -1);
	assert_int_equal(p.groups[0].got, 2);
	assert_true(p.groups[0].got_min_ns == 29000 && p.groups[0].got_max_ns == 31000);
	lp_sample_coverage(&p, &c);
	assert_int_equal(c.n_covered, 3);
	assert_int_equal(c.covered_ns, 960000 + 800000 + 640000);
	assert_true(c.share > 0.7444 && c.share < 0.7445);
	assert_false(c.met);
	/* the rest of the wanted groups */
	for (i = 3; i < 6; i++)
		assert_int_equal(lp_sample_attach(&p, p.groups[i].name, p.groups[i].grid, p.groups[i].block, NULL, 1000), (long)i);
	lp_sample_coverage(&p, &c);
	assert_true(c.met);
	assert_true(c.share > 0.987 && c.share < 0.988);

	j = lp_sample_plan_json(&p, 1);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(json_object_get(j, "coverage"), "met")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "groups"), 2), "status")),
		"cached");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "groups"), 0), "profiled")), 2);
	assert_int_equal(json_array_size(json_object_get(j, "processes")), p.n_procs);
	json_decref(j);
	lp_sample_plan_release(&p);
}

static void test_unknown_steps_and_few_steps(void **state)
{
	struct lp_sample_launch l[13];
	struct lp_sample_opts o = { 3, 1.0, 0, 0, 0, 0, 0, 0, 0 };
	struct lp_sample_plan p;
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	(void)state;
	memset(l, 0, sizeof(l));
	for (i = 0; i < 13; i++) {
		l[i].name = i < 10 ? "a" : "b";
		l[i].grid[0] = l[i].block[0] = 1;
		l[i].region = "r";
		l[i].step = i < 10 ? -1 : (int32_t)(i - 10) / 2;   /* b: steps 0, 0, 1 */
		l[i].duration_ns = i < 10 ? 10 : 1;
	}
	assert_int_equal(lp_sample_group(l, 13, &o, &p, &err), 0);
	assert_int_equal(p.n_groups, 2);
	assert_int_equal(p.n_wanted, 2);   /* coverage 1: every group */
	/* no steps: positions (j + 0.5) * 10 / 3 = 1, 5, 8 -> invocations 2, 6, 9 */
	assert_int_equal(p.groups[0].n_picks_full, 3);
	assert_int_equal(p.groups[0].picks[0].invocation, 2);
	assert_int_equal(p.groups[0].picks[1].invocation, 6);
	assert_int_equal(p.groups[0].picks[2].invocation, 9);
	/* two steps for K = 3: evenly spaced launches, all three */
	assert_int_equal(p.groups[1].n_steps, 2);
	assert_int_equal(p.groups[1].n_picks_full, 3);
	assert_int_equal(p.groups[1].picks[0].invocation, 1);
	assert_int_equal(p.groups[1].picks[2].invocation, 3);
	lp_sample_plan_release(&p);

	/* a name with ':' and regex characters stays one field of --kernel-id */
	l[0].name = "ns::k<int>";
	for (i = 1; i < 13; i++)
		l[i].region = NULL;
	assert_int_equal(lp_sample_group(l, 13, &o, &p, &err), 0);
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_int_equal(p.n_procs, 1);
	assert_string_equal(p.procs[0].kernel_id.data, "::regex:^(ns..k<int>)$:^(1)$");
	lp_sample_plan_release(&p);

	/* nothing selected: an empty plan */
	assert_int_equal(lp_sample_group(l, 0, &o, &p, &err), 0);
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_int_equal(p.n_groups, 0);
	assert_int_equal(p.n_procs, 0);
	lp_sample_plan_release(&p);
}

static void test_target_per_region(void **state)
{
	struct lp_sample_launch l[103];
	struct lp_sample_opts o = { 1, 0.95, 0, 0, 0, 0, 0, 0, 0 };
	struct lp_sample_plan p;
	struct lp_sample_coverage c;
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	(void)state;
	memset(l, 0, sizeof(l));
	for (i = 0; i < 103; i++) {
		/* big: x 100 x 1000 ns, y 10 ns; small: z 10 ns, w 1 ns */
		l[i].name = i < 100 ? "x" : i == 100 ? "y" : i == 101 ? "z" : "w";
		l[i].grid[0] = l[i].block[0] = 1;
		l[i].region = i <= 100 ? "big" : "small";
		l[i].step = -1;
		l[i].duration_ns = i < 100 ? 1000 : i == 102 ? 1 : 10;
	}
	assert_int_equal(lp_sample_group(l, 103, &o, &p, &err), 0);
	assert_int_equal(p.n_groups, 4);
	assert_string_equal(p.groups[0].name, "x");
	assert_true(p.groups[0].wanted);
	for (i = 1; i < 4; i++)
		if (!strcmp(p.groups[i].name, "z") || !strcmp(p.groups[i].name, "w"))
			assert_true(p.groups[i].wanted);   /* small's own 95% needs both */
		else
			assert_false(p.groups[i].wanted);
	assert_int_equal(p.n_wanted, 3);
	lp_sample_coverage_region(&p, "small", &c);
	assert_int_equal(c.n_groups, 2);
	assert_int_equal(c.total_ns, 11);
	assert_false(c.met);
	lp_sample_plan_release(&p);
}


/* A setup decode step outside any range (llmprof-llm captures its CUDA graph so), a warm-up
 * iteration of WSTEPS decode steps (stand-ins: warmup = 1, region decode_all), then the prefill
 * (not selected) and the measured WSTEPS steps, start times 10 ms apart. */
#define WSTEPS 16
#define SETUP (7 * LAYERS + 3)
static void model_warm(struct fx *f)
{
	size_t i, s0;
	int s, l;
	f->n = 0;
	decode_step(f, NULL, -1);
	for (s = 0; s < WSTEPS; s++) {
		s0 = f->n;
		decode_step(f, "decode_all", s);
		for (i = s0; i < f->n; i++)
			f->l[i].warmup = 1;
	}
	for (l = 0; l < LAYERS; l++)
		add(f, "k_gemm", 64, NULL, -1, 90000);
	for (s = 0; s < WSTEPS; s++)
		decode_step(f, "decode_all", s);
	for (i = 0; i < f->n; i++)
		f->l[i].start_ns = 1000000 + 10000000 * (uint64_t)i;
}

/* Picks in the warm-up: the groups are the measured launches' (time, coverage), their picks the
 * earliest warm-up launches of the same configuration and region (the first quarter of its steps),
 * ncu's results of them count for the group, and with stop_early the process costs the program up to
 * its last profiled launch. */
static void test_stand_ins(void **state)
{
	static struct fx f;
	struct lp_sample_opts o = { 3, 0.95, 0, 0, 0, 0, 0, 0, 0 };
	struct lp_sample_plan p;
	struct lp_sample_coverage c;
	struct lp_err err = LP_ERR_INIT;
	uint32_t *exp = NULL, last = 0;
	size_t n_exp = 0, i, j, warm_end = SETUP + WSTEPS * (7 * LAYERS + 3);
	double eta_warm, part;
	json_t *js, *g0, *r0;
	(void)state;
	model_warm(&f);
	assert_int_equal(lp_sample_group(f.l, f.n, &o, &p, &err), 0);
	assert_int_equal(p.n_groups, 7);
	assert_int_equal(p.n_launches, WSTEPS * (7 * LAYERS + 3));   /* the measured steps only */
	assert_int_equal(p.total_ns, 3224000 * WSTEPS / 8);
	for (i = 0; i < p.n_groups; i++) {
		assert_int_equal(p.groups[i].n_stand, p.groups[i].n_launches);
		assert_true(p.groups[i].picks_from_warmup);
		assert_int_equal(p.groups[i].n_ranks, WSTEPS / LP_SAMPLE_STAND_IN_SPAN);   /* steps 0..3 */
	}
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_int_equal(p.n_procs, 1);
	assert_int_equal(p.k_used, 3);
	for (i = 0; i < p.n_groups; i++) {
		const struct lp_sample_group *g = &p.groups[i];
		if (g->status != LP_SAMPLE_PLANNED)
			continue;
		assert_int_equal(g->n_picks, 3);
		for (j = 0; j < g->n_picks; j++) {
			assert_true(g->picks[j].warmup);
			/* windows of steps [0, 2), [2, 3), [3, 4) (w R/K .. (w+1) R/K): the earliest launch of each */
			assert_int_equal(g->picks[j].step, j ? (int32_t)j + 1 : 0);
		}
	}
	/* gate/up (k_gemv grid 1024: position 4l+2 of 17 a step): layer 0 of steps 0, 2, 3 -> 3, 37, 54,
	 * numbered among the warm-up's launches (ncu numbers those that pass its NVTX include): the
	 * setup step's 17 k_gemv launches are not counted */
	assert_int_equal(find(&p, "k_gemv", 1024)->picks[0].invocation, 3);
	assert_int_equal(find(&p, "k_gemv", 1024)->picks[1].invocation, 37);
	assert_int_equal(find(&p, "k_gemv", 1024)->picks[2].invocation, 54);
	/* every launch ncu profiles is a warm-up launch of a planned group: the process profiles inside
	 * the warm-up range only (no extras in the measured iteration: lm_head's step-3 pick, k_gemv 68,
	 * is k_attention's 68th launch, in the measured iteration), and stop_early ends it there */
	assert_true(p.procs[0].warmup_only);
	assert_int_equal(lp_sample_expected(&p, 0, &exp, &n_exp, &err), 0);
	assert_int_equal(n_exp, p.procs[0].predicted);
	for (i = 0; i < n_exp; i++) {
		assert_true(exp[i] >= SETUP && exp[i] < warm_end);
		assert_true(f.l[exp[i]].warmup);
		assert_true(lp_sample_group_of(&p, exp[i]) >= 0);
		if (exp[i] > last)
			last = exp[i];
	}
	/* the results: each stands for its group, and says it is a warm-up launch */
	for (i = 0; i < n_exp; i++) {
		int32_t g = lp_sample_group_of(&p, exp[i]);
		if (p.groups[g].status != LP_SAMPLE_PLANNED)
			continue;
		lp_sample_attach_group(&p, (size_t)g, 1000);
		assert_int_equal(lp_sample_record_result(&p, (size_t)g, i + 1, exp[i], -1, 1000, &err), 0);
	}
	lp_sample_coverage(&p, &c);
	assert_true(c.met);
	assert_int_equal(c.n_covered, 6);
	assert_int_equal(c.n_from_warmup, 6);
	assert_true(c.n_results >= 18);
	assert_int_equal(c.n_results_warmup, c.n_results);
	js = lp_sample_plan_json(&p, 1);
	g0 = json_array_get(json_object_get(js, "groups"), 0);
	assert_true(json_is_true(json_object_get(g0, "picks_from_warmup")));
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(g0, "picks"), 0), "warmup")));
	r0 = json_array_get(json_object_get(g0, "results"), 0);
	assert_true(json_is_true(json_object_get(r0, "warmup")));
	assert_true(json_is_null(json_object_get(r0, "ordinal")));   /* no row of an unsampled profile */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(js, "coverage"), "results_warmup")),
		(json_int_t)c.n_results);
	assert_int_equal(json_integer_value(json_object_get(js, "groups_with_stand_ins")), 7);
	json_decref(js);
	free(exp);
	exp = NULL;

	/* stop_early: a process costs per_process + the program's start + 1.5 x its time to the last
	 * profiled launch + the launches; the start is what the program has outside its launches' span */
	o.per_process_s = 1;
	o.per_launch_s = 0.1;
	o.program_s = 12;   /* the launches' span is 9.95 s: 2.05 s before the first launch */
	o.stop_early = 1;
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_true(p.n_procs >= 1);
	for (i = 0, part = 0; i < p.n_procs; i++) {
		uint32_t lp = 0;
		assert_int_equal(lp_sample_expected(&p, i, &exp, &n_exp, &err), 0);
		for (j = 0; j < n_exp; j++)
			lp = exp[j] > lp ? exp[j] : lp;
		free(exp);
		assert_true(p.procs[i].warmup_only);
		assert_true(lp < warm_end);
		part += (12 - (double)(f.l[f.n - 1].start_ns - f.l[0].start_ns) / 1e9) +
			1.5 * (double)(f.l[lp].start_ns - f.l[0].start_ns) / 1e9;
	}
	assert_true(fabs(p.eta_s - ((double)p.n_procs + part + 0.1 * (double)p.predicted)) < 1e-9);
	eta_warm = p.eta_s;
	/* without stop_early the whole program counts */
	o.stop_early = 0;
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	part = (double)(f.l[f.n - 1].start_ns - f.l[0].start_ns) / 1e9;   /* the span */
	assert_true(fabs(p.eta_s - (double)p.n_procs * (1 + (12 - part) + 1.5 * part) - 0.1 * (double)p.predicted) < 1e-9);
	assert_true(p.eta_s > eta_warm);
	lp_sample_plan_release(&p);

	/* without stand-ins the picks are in the measured steps, later in the program: dearer */
	for (i = 0; i < f.n; i++)
		if (f.l[i].warmup)
			f.l[i].region = NULL;
	o.stop_early = 1;
	assert_int_equal(lp_sample_group(f.l, f.n, &o, &p, &err), 0);
	assert_false(p.groups[0].picks_from_warmup);
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	assert_true(p.eta_s > eta_warm);
	assert_false(p.procs[0].warmup_only);
	for (i = 0; i < p.n_groups; i++)
		for (j = 0; j < p.groups[i].n_picks; j++)
			assert_false(p.groups[i].picks[j].warmup);
	lp_sample_plan_release(&p);

	/* a warm-up shorter than the picks need (2 steps for K = 3): the measured launches give the
	 * picks, the stand-ins still count when ncu profiles them */
	model_warm(&f);
	for (i = 0; i < f.n; i++)
		if (f.l[i].warmup && f.l[i].step >= 2)
			f.l[i].region = NULL;
	o.stop_early = 0;
	assert_int_equal(lp_sample_group(f.l, f.n, &o, &p, &err), 0);
	assert_true(p.groups[0].n_stand > 0);
	assert_false(p.groups[0].picks_from_warmup);
	assert_int_equal(p.groups[0].n_ranks, WSTEPS);
	assert_int_equal(lp_sample_group_of(&p, SETUP), 5);   /* the warm-up's first k_rmsnorm */
	assert_int_equal(lp_sample_group_of(&p, 0), -1);      /* the setup's */
	lp_sample_plan_release(&p);
}

static void test_costs(void **state)
{
	(void)state;
	assert_true(lp_sample_launch_cost_s(9) > 0.179 && lp_sample_launch_cost_s(9) < 0.181);
	assert_int_equal(lp_sample_passes_estimate(NULL, 0, 3), 9);   /* the light preset */
	assert_int_equal(lp_sample_passes_estimate(NULL, 0, 1), 3);
	assert_int_equal(lp_sample_passes_estimate("full", 0, 0), 40);
	assert_int_equal(lp_sample_passes_estimate("roofline", 4, 9), 12 + 12 + 12);
	assert_int_equal(lp_sample_passes_estimate(NULL, 0, 0), 1);
}

/* A capture: a warm-up decode, a prefill of 2 layers, 3 decode steps of 2 layers and an lm_head,
 * and a second process with a little decode work. */
static void capture(struct lp_profile *p)
{
	int32_t w, wd, ws, pf, da, st, ly;
	uint32_t corr = 100;
	uint64_t t = 1000;
	int s, l;
	struct lp_kernel *k;
	lp_profile_init(p, "test");
	w = lp_test_range(p, -1, "LLM", "warmup", 0, 1000000);
	wd = lp_test_range(p, w, "LLM", "decode_all", 0, 1000000);
	ws = lp_test_range(p, wd, "LLM", "decode_step", 0, 1000000);
	k = lp_test_kernel(p, ws, "void k_gemv<int>(int)", t, t + 10);
	k->grid[0] = 8, k->block[0] = 32, k->correlation_id = corr++;
	pf = lp_test_range(p, -1, "LLM", "prefill", 0, 1000000);
	for (l = 0; l < 2; l++) {
		ly = lp_test_range(p, pf, "LLM", "layer", 0, 1000000);
		t += 100;
		k = lp_test_kernel(p, ly, "void k_gemv<int>(int)", t, t + 50);
		k->grid[0] = 16, k->block[0] = 32, k->correlation_id = corr++;
	}
	da = lp_test_range(p, -1, "LLM", "decode_all", 0, 1000000);
	for (s = 0; s < 3; s++) {
		st = lp_test_range(p, da, "LLM", "decode_step", 0, 1000000);
		for (l = 0; l < 2; l++) {
			ly = lp_test_range(p, st, "LLM", "layer", 0, 1000000);
			t += 100;
			k = lp_test_kernel(p, ly, "void k_gemv<int>(int)", t, t + 10);
			k->grid[0] = 8, k->block[0] = 32, k->correlation_id = corr++;
		}
		t += 100;
		k = lp_test_kernel(p, st, "void ns::k_gemv<float>(int)", t, t + 40);   /* the same function name */
		k->grid[0] = 99, k->block[0] = 32, k->correlation_id = corr++;
	}
	/* recorded out of launch order: the correlation id says it came first */
	k = lp_test_kernel(p, pf, "k_first", 1, 2);
	k->grid[0] = 1, k->block[0] = 1, k->correlation_id = 1;
	/* another process: not planned */
	k = lp_test_kernel(p, da, "k_other", t, t + 5);
	k->pid = 2, k->grid[0] = 1, k->block[0] = 1, k->correlation_id = 7;
}

/* A multi-rank job: ncu profiles one rank (sel.pids), and never a collective (a replayed NCCL
 * kernel waits for ranks that do not replay it); the collective keeps its place in the numbering. */
static void test_rank_and_collectives(void **state)
{
	struct lp_profile prof;
	struct lp_sample_select sel = { "decode_all", NULL, NULL, NULL, 0, 0 };
	struct lp_sample_input in;
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel *k;
	const uint32_t rank1[] = { 2 };
	size_t i, n_nccl = 0;
	(void)state;
	capture(&prof);
	k = lp_test_kernel(&prof, prof.kernels[prof.n_kernels - 1].range,
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 5000, 9000);
	k->grid[0] = 2, k->block[0] = 64, k->correlation_id = 100;
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), 0);
	assert_int_equal(in.pid, 1);
	assert_int_equal(in.n, 1 + 2 + 9 + 1 + 1);
	assert_int_equal(in.n_selected, 9);      /* as without it: the longest kernel is not selected */
	for (i = 0; i < in.n; i++)
		if (!strncmp(in.launches[i].name, "ncclDevKernel", 13)) {
			n_nccl++;
			assert_null(in.launches[i].region);
		}
	assert_int_equal(n_nccl, 1);
	lp_sample_input_release(&in);
	sel.pids = rank1;
	sel.n_pids = 1;
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), 0);
	assert_int_equal(in.pid, 2);
	assert_int_equal(in.n_selected, 1);
	assert_string_equal(in.launches[0].name, "k_other");
	lp_sample_input_release(&in);
	lp_profile_release(&prof);
}

static void test_from_profile(void **state)
{
	struct lp_profile prof;
	struct lp_sample_select sel = { "decode_all", NULL, NULL, NULL, 0, 0 };
	struct lp_sample_input in;
	struct lp_sample_plan plan;
	struct lp_sample_opts o = { 2, 1.0, 0, 0, 0, 0, 0, 0, 0 };
	struct lp_err err = LP_ERR_INIT;
	static const char *const inc[] = { "LLM@prefill/layer/", "LLM@decode_all/" };
	struct lp_regions_spec spec;
	struct lp_regions regions;
	size_t i;
	(void)state;
	capture(&prof);
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), 0);
	assert_int_equal(in.pid, 1);
	assert_int_equal(in.n, 1 + 2 + 9 + 1);
	assert_int_equal(in.n_selected, 9);
	assert_string_equal(in.launches[0].name, "k_first");
	assert_null(in.launches[0].region);
	assert_null(in.launches[1].region);   /* the warm-up */
	assert_string_equal(in.launches[1].name, "k_gemv");
	assert_int_equal(in.launches[1].grid[0], 8);
	for (i = 4; i < in.n; i++) {
		assert_string_equal(in.launches[i].region, "decode_all");
		assert_string_equal(in.launches[i].name, "k_gemv");
		assert_int_equal(in.launches[i].step, (int32_t)(i - 4) / 3);
	}
	assert_string_equal(in.launches[6].kernel_name, "void ns::k_gemv<float>(int)");
	assert_int_equal(lp_sample_group(in.launches, in.n, &o, &plan, &err), 0);
	assert_int_equal(plan.n_groups, 2);
	assert_int_equal(plan.groups[0].grid[0], 99);   /* 120 ns against 60 */
	/* k_gemv: warm-up 1, prefill 2, 3, then per step 2 of grid 8 and the grid-99 one (the same
	 * function name): step 0 = 4, 5, (6); step 2 = 10, 11, (12) */
	assert_int_equal(plan.groups[1].config_launches, 12);
	assert_int_equal(plan.groups[1].n_steps, 3);
	assert_int_equal(plan.groups[1].picks[0].invocation, 4);   /* step 0 (the first of 3 at K=2) */
	assert_int_equal(plan.groups[1].picks[1].invocation, 11);  /* step 2, position 1 */
	lp_sample_plan_release(&plan);
	lp_sample_input_release(&in);

	/* regions: the prefill's layers (each layer is a step) and decode_all */
	memset(&spec, 0, sizeof(spec));
	spec.include = inc;
	spec.n_include = 2;
	assert_int_equal(lp_regions_init(&regions, &spec, &err), 0);
	sel.stage = NULL;
	sel.regions = &regions;
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), 0);
	assert_int_equal(in.n_selected, 2 + 9);
	assert_string_equal(in.launches[2].region, regions.inc[0].name);
	assert_int_equal(in.launches[2].step, 0);
	assert_int_equal(in.launches[3].step, 1);
	assert_string_equal(in.launches[4].region, regions.inc[1].name);
	assert_int_equal(in.launches[12].step, 2);
	assert_null(in.launches[1].region);
	assert_false(in.launches[1].warmup);
	assert_null(in.warmup_nvtx);
	lp_sample_input_release(&in);

	/* stand-ins: the warm-up's decode step matches LLM@decode_all/ once the warm-up range is taken
	 * out of its stack; it is not selected, and its steps are the warm-up's own */
	sel.stand_ins = 1;
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), 0);
	assert_int_equal(in.n_selected, 2 + 9);
	assert_string_equal(in.launches[1].region, regions.inc[1].name);
	assert_true(in.launches[1].warmup);
	assert_string_equal(in.warmup_nvtx, "LLM@warmup/");
	assert_int_equal(in.launches[1].step, 0);
	assert_int_equal(in.launches[1].start_ns, 1000);
	assert_false(in.launches[4].warmup);
	assert_int_equal(in.launches[4].step, 0);
	assert_int_equal(lp_sample_group(in.launches, in.n, &o, &plan, &err), 0);
	for (i = 0; i < plan.n_groups; i++)
		if (plan.groups[i].grid[0] == 8) {
			assert_int_equal(plan.groups[i].n_stand, 1);
			assert_false(plan.groups[i].picks_from_warmup);   /* 1 warm-up step for K = 2 */
		} else {
			assert_int_equal(plan.groups[i].n_stand, 0);
		}
	assert_true(lp_sample_group_of(&plan, 1) >= 0);
	lp_sample_plan_release(&plan);
	lp_sample_input_release(&in);
	sel.regions = NULL;
	sel.stage = "decode_all";
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), 0);
	assert_string_equal(in.launches[1].region, "decode_all");
	assert_true(in.launches[1].warmup);
	assert_int_equal(in.n_selected, 9);
	lp_sample_input_release(&in);
	lp_regions_release(&regions);
	lp_profile_release(&prof);
}

/* ---- a sampled capture is refused (its invocation numbers would name other launches) ---- */

static void test_sampled_capture_refused(void **state)
{
	struct lp_profile prof;
	struct lp_sample_select sel = { "decode_all", NULL, NULL, NULL, 0, 0 };
	struct lp_sample_input in;
	struct lp_process *pr;
	struct lp_err err = LP_ERR_INIT;
	const char *ex_dir = LP_TEST_TMP "/ncu_sample_exact", *sa_dir = LP_TEST_TMP "/ncu_sample_sampled";
	(void)state;
	/* by hand: the planned process (pid 1) sampled -> refused; only another one sampled -> fine */
	capture(&prof);
	pr = lp_profile_add_process(&prof);
	pr->pid = 2;
	pr->sampling.mode = 2;
	pr = lp_profile_add_process(&prof);
	pr->pid = 1;
	pr->sampling.mode = 1;
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), 0);
	assert_int_equal(in.pid, 1);
	assert_int_equal(in.n_selected, 9);
	lp_sample_input_release(&in);
	pr->sampling.mode = 2;
	pr->sampling.unit = "decode_step";
	pr->sampling.every = 4;
	pr->sampling.first = 2;
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_non_null(strstr(err.msg, "process 1 is a sampled trace (one 'decode_step' in 4 recorded after the first 2)"));
	assert_non_null(strstr(err.hint, "trace.sample=off"));
	assert_null(in.launches);
	assert_int_equal(in.n, 0);
	lp_profile_release(&prof);

	/* traces written by the tracer's own writer (build/tests/lp_trace_fixture) */
	lp_test_trace_fixture(ex_dir, "off", NULL);
	lp_test_trace_fixture(sa_dir, "every=4,first=2", NULL);
	lp_profile_init(&prof, ex_dir);
	lp_err_clear(&err);
	assert_int_equal(lp_trace_load(ex_dir, &prof, &err), 0);
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), 0);
	assert_true(in.n_selected > 0);
	lp_sample_input_release(&in);
	lp_profile_release(&prof);
	lp_profile_init(&prof, sa_dir);
	assert_int_equal(lp_trace_load(sa_dir, &prof, &err), 0);
	assert_int_equal(lp_sample_input_from_profile(&prof, &sel, &in, &err), -1);
	assert_non_null(strstr(err.msg, "is a sampled trace (one 'decode_step' in 4 recorded after the first 2)"));
	lp_profile_release(&prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups_and_picks),
		cmocka_unit_test(test_one_process),
		cmocka_unit_test(test_split_when_extras_cost),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_cached_attach_coverage),
		cmocka_unit_test(test_unknown_steps_and_few_steps),
		cmocka_unit_test(test_target_per_region),
		cmocka_unit_test(test_costs),
		cmocka_unit_test(test_stand_ins),
		cmocka_unit_test(test_from_profile),
		cmocka_unit_test(test_rank_and_collectives),
		cmocka_unit_test(test_sampled_capture_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
