/* test_sampling.c: src/analyze/sampling*.c, the statistics of sampled traces (issue 24).
 *   - the schedule, Student's t quantiles against tables, the estimator by hand;
 *   - the interval's coverage: 2000 random samples of a skewed population, the 95% interval must
 *     hold the true total in 92-98% of them;
 *   - a rerun's interval by hand, and its coverage of a separate run's total when runs differ;
 *   - the stratified design by hand, its coverage on synthetic drift / jump / periodic series, and
 *     on the per-step kernel times of a real H100 decode (tests/fixtures/sampling).
 * Sampled traces end to end (tables, figures, reports): test_sampling_traces.c and, in bursts,
 * test_sampling_bursts.c. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/sampling.h"
#include "llmprof/trace_format.h"


/* a plan (pick: the block's first unit, as the first tracer did) */
#define PLAN(s_, e_, f_) { .sampled = (s_), .every = (e_), .first = (f_), .unit = "decode_step" }

static void test_schedule(void **state)
{
	struct lp_tsample_plan exact = PLAN(0, 8, 2), s = PLAN(1, 8, 2), every1 = PLAN(1, 1, 0), r = PLAN(1, 8, 2);
	uint32_t i, n = 0, pos_count[8] = { 0 }, b, ord, differ = 0;
	(void)state;
	r.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
	r.seed = 12345;
	for (i = 0; i < 100; i++)
		assert_true(lp_tsample_recorded(&exact, 1, i));
	/* the first tracer's pick: the block's first unit (pick 0), whatever the parent */
	assert_true(lp_tsample_recorded(&s, 1, 0));
	assert_true(lp_tsample_recorded(&s, 1, 1));
	assert_true(lp_tsample_recorded(&s, 1, 2));
	assert_false(lp_tsample_recorded(&s, 1, 3));
	assert_false(lp_tsample_recorded(&s, 1, 9));
	assert_true(lp_tsample_recorded(&s, 3, 10));
	assert_true(lp_tsample_recorded(&s, 3, 18));
	for (i = 0; i < 128; i++)
		n += (uint32_t)lp_tsample_recorded(&s, 1, i);
	assert_int_equal(n, 2 + 16); /* 128 tokens: 2 first, then 126 / 8 rounded up */
	s.offset = 3;                /* the coverage check's systematic sample with another start */
	assert_false(lp_tsample_recorded(&s, 1, 2));
	assert_true(lp_tsample_recorded(&s, 1, 5));
	assert_true(lp_tsample_recorded(&s, 1, 13));
	for (i = 0; i < 10; i++)
		assert_true(lp_tsample_recorded(&every1, 1, i));
	/* random pick: the first units, then exactly one in each block of 8, at a position that is
	 * uniform over the blocks and the parents, and that the seed moves */
	for (i = 0; i < 2; i++)
		assert_true(lp_tsample_recorded(&r, 1, i));
	for (ord = 1; ord <= 50; ord++)
		for (b = 0; b < 40; b++) {
			uint32_t k, got = 0, where = 0;
			for (k = 0; k < 8; k++)
				if (lp_tsample_recorded(&r, ord, 2 + 8 * b + k)) {
					got++;
					where = k;
				}
			assert_int_equal(got, 1);
			pos_count[where]++;
		}
	for (i = 0; i < 8; i++) /* 2000 blocks: 250 expected per position, sd ~15 */
		if (pos_count[i] < 190 || pos_count[i] > 310)
			fail_msg("position %u picked in %u of 2000 blocks", i, pos_count[i]);
	for (i = 2; i < 2 + 8 * 40; i++) {
		struct lp_tsample_plan r2 = r;
		r2.seed = 54321;
		differ += lp_tsample_recorded(&r, 1, i) != lp_tsample_recorded(&r2, 1, i);
	}
	assert_true(differ > 20);
}

static void test_t_quantiles(void **state)
{
	/* two-sided 95% and 99% points of Student's t (any statistics table) */
	static const struct { double p, df, t; } cases[] = {
		{ 0.975, 1, 12.7062 }, { 0.975, 2, 4.3027 }, { 0.975, 3, 3.1824 }, { 0.975, 5, 2.5706 },
		{ 0.975, 10, 2.2281 }, { 0.975, 30, 2.0423 }, { 0.975, 120, 1.9799 }, { 0.975, 1e6, 1.9600 },
		{ 0.995, 4, 4.6041 }, { 0.995, 20, 2.8453 }, { 0.95, 15, 1.7531 }, { 0.5, 7, 0.0 },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double q = lp_student_t_quantile(cases[i].p, cases[i].df);
		if (fabs(q - cases[i].t) > 0.004 * cases[i].t + 1e-9)
			fail_msg("t(%g, %g) = %g, expected %g", cases[i].p, cases[i].df, q, cases[i].t);
	}
}

static void test_estimate_by_hand(void **state)
{
	const double x[] = { 1, 2, 3, 4 };
	struct lp_tsample_est e;
	(void)state;
	/* mean 2.5, s^2 = 5/3; var = 8^2 (1 - 4/8) (5/3) / 4 = 13.33; t(0.975, 3) = 3.1824 */
	lp_tsample_estimate(10, x, 4, 8, 0.95, &e);
	assert_true(fabs(e.total - 30) < 1e-9);
	assert_true(fabs(e.exact_part - 10) < 1e-9);
	assert_true(fabs(e.half_ci - 3.1824 * sqrt(40.0 / 3)) < 0.02);
	assert_int_equal(e.n, 4);
	assert_int_equal(e.N, 8);
	/* everything recorded: exact */
	lp_tsample_estimate(10, x, 4, 4, 0.95, &e);
	assert_true(fabs(e.total - 20) < 1e-9);
	assert_true(e.half_ci == 0);
	/* one unit recorded: an estimate, no interval */
	lp_tsample_estimate(0, x, 1, 10, 0.95, &e);
	assert_true(fabs(e.total - 10) < 1e-9);
	assert_true(e.half_ci < 0);
	/* no sampled stratum: the exact part alone */
	lp_tsample_estimate(7, NULL, 0, 0, 0.95, &e);
	assert_true(e.total == 7 && e.half_ci == 0);
	/* a constant row has no spread: its interval is 0 wide */
	{
		const double c[] = { 5, 5, 5 };
		lp_tsample_estimate(0, c, 3, 30, 0.95, &e);
		assert_true(fabs(e.total - 150) < 1e-9 && fabs(e.half_ci) < 1e-9);
	}
}

static void test_coverage(void **state)
{
	enum { N = 400, n = 40, REPS = 2000 };
	double pop[N], x[n], truth = 0;
	uint32_t seed = 12345;
	int i, r, covered = 0;
	(void)state;
	for (i = 0; i < N; i++) {
		/* a skewed population: mostly ~100, one unit in ten ~400 */
		seed = seed * 1664525u + 1013904223u;
		pop[i] = 100 + (double)(seed >> 24) / 8 + ((seed >> 8) % 10 == 0 ? 300 : 0);
		truth += pop[i];
	}
	for (r = 0; r < REPS; r++) {
		int idx[N];
		struct lp_tsample_est e;
		for (i = 0; i < N; i++)
			idx[i] = i;
		for (i = 0; i < n; i++) { /* partial Fisher-Yates: a sample without replacement */
			int j;
			seed = seed * 1664525u + 1013904223u;
			j = i + (int)((seed >> 8) % (uint32_t)(N - i));
			int t = idx[i];
			idx[i] = idx[j];
			idx[j] = t;
			x[i] = pop[idx[i]];
		}
		lp_tsample_estimate(0, x, n, N, 0.95, &e);
		covered += fabs(e.total - truth) <= e.half_ci;
	}
	if (covered < REPS * 92 / 100 || covered > REPS * 98 / 100)
		fail_msg("the 95%% interval held the total in %d of %d samples", covered, REPS);
}

/* ---- a rerun's interval (lp_tsample_rerun_ms) ---- */

/* a standard normal from the LCG (Box-Muller) */
static double normal(uint32_t *seed)
{
	double u1, u2;
	*seed = *seed * 1664525u + 1013904223u;
	u1 = ((*seed >> 8) + 0.5) / 16777216.0;
	*seed = *seed * 1664525u + 1013904223u;
	u2 = ((*seed >> 8) + 0.5) / 16777216.0;
	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static void test_rerun_interval(void **state)
{
	enum { REPS = 20000 };
	const double mu = 1000, sd_pct = 0.4, se = 1.0;   /* a run's own spread 4 ms, sampling error 1 ms */
	uint32_t seed = 777;
	int r, rerun_in = 0, ci_in = 0;
	(void)state;
	/* by hand: sqrt(3^2 + 2 (1.959964 * 0.002 * 1000)^2) = 6.3033 */
	assert_true(fabs(lp_tsample_rerun_ms(3, 1000, 0.2) - 6.3033) < 1e-3);
	assert_true(fabs(lp_tsample_rerun_ms(3, -1000, 0.2) - 6.3033) < 1e-3);
	assert_true(lp_tsample_rerun_ms(3, 1000, 0) == 3);
	assert_true(lp_tsample_rerun_ms(-1, 1000, 0.2) == -1);
	assert_true(lp_tsample_rerun_ms(0, 1000, 0.2) > 5.54 && lp_tsample_rerun_ms(0, 1000, 0.2) < 5.55);
	/* coverage: run A's total and a separate run B's each lie sd_pct off the program's mean; A is
	 * sampled (its estimate lies se off A's total, interval 1.96 se); the rerun interval around A's
	 * estimate must hold B's exact total about 95% of the time, the sampling interval alone far less */
	for (r = 0; r < REPS; r++) {
		double a = mu * (1 + sd_pct / 100 * normal(&seed)), b = mu * (1 + sd_pct / 100 * normal(&seed));
		double est = a + se * normal(&seed), ci = 1.959964 * se;
		double h = lp_tsample_rerun_ms(ci, est, sd_pct);
		rerun_in += fabs(est - b) <= h;
		ci_in += fabs(est - b) <= ci;
	}
	if (rerun_in < REPS * 94 / 100 || rerun_in > REPS * 96 / 100)
		fail_msg("the rerun interval held the other run's total in %d of %d", rerun_in, REPS);
	if (ci_in > REPS * 50 / 100)
		fail_msg("the sampling interval alone held it in %d of %d: the test's spread is too small", ci_in, REPS);
}

/* ---- the stratified design ---- */

/* Stage instances (a serving loop's prefills, sampling.h): chain 1 (5 instances, 2 recorded) is one
 * stratum, a simple random sample; chain 2 (3 instances, none recorded) stands for nothing and takes
 * nothing of the decode chain's; the decode chain 0 (units 0..7, blocks of 4, recorded 1 and 6) as
 * usual: its variance from the successive difference of its two strata alone. */
static void test_design_stage_instances(void **state)
{
	struct lp_tsample_unit_ref u[16];
	struct lp_tsample_design d;
	struct lp_tsample_est e;
	struct lp_err err = LP_ERR_INIT;
	const double x[] = { 10, 20, 3, 5 };      /* slots 0, 1 decode; 2, 3 prefill instances */
	const double only_decode[] = { 10, 20, 0, 0 };
	const double lone[] = { 10, 20, 3, 0 };    /* a row one recorded instance holds ... */
	size_t n = 0;
	uint32_t i;
	(void)state;
	for (i = 0; i < 8; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 0, i, i == 1 ? 0 : i == 6 ? 1 : -1, 0 };
	for (i = 0; i < 5; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 1, i, i == 0 ? 2 : i == 3 ? 3 : -1, 1 };
	for (i = 0; i < 3; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 2, i, -1, 1 };
	assert_int_equal(lp_tsample_design_build(u, n, 4, 4, 0, &d, &err), 0);
	assert_int_equal(d.N, 13);
	assert_int_equal(d.n_strata, 3);
	assert_true(d.w[0] == 4 && d.w[1] == 4 && d.w[2] == 2.5 && d.w[3] == 2.5);
	d.cluster = 1; /* bursts: the decode strata's spread from their differences; the instances' own */
	lp_tsample_design_estimate(&d, 0, x, 0.95, &e);
	assert_true(fabs(e.total - (40 + 80 + 2.5 * 8)) < 1e-9);
	/* decode: 16 x (10 - 20)^2 / 2 for both strata, df 1; instances: 25 (1 - 2/5) s^2 / 2, s^2 = 2, df 1 */
	assert_true(fabs(e.half_ci - lp_student_t_quantile(0.975, 2) * sqrt(16 * 50.0 * 2 + 25 * 0.6 * 2 / 2)) < 1e-9);
	lp_tsample_design_estimate(&d, 0, only_decode, 0.95, &e);
	assert_true(fabs(e.half_ci - lp_student_t_quantile(0.975, 2) * sqrt(16 * 50.0 * 2)) < 1e-9);
	lp_tsample_design_release(&d);
	/* one recorded instance: no spread for a row it holds, none needed for a row it does not */
	n = 8;
	for (i = 0; i < 5; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 1, i, i == 0 ? 2 : -1, 1 };
	assert_int_equal(lp_tsample_design_build(u, n, 3, 4, 0, &d, &err), 0);
	lp_tsample_design_estimate(&d, 0, lone, 0.95, &e);
	assert_true(fabs(e.total - (40 + 80 + 15)) < 1e-9);
	assert_true(e.half_ci < 0);
	lp_tsample_design_estimate(&d, 0, only_decode, 0.95, &e);
	assert_true(e.half_ci > 0);
	lp_tsample_design_release(&d);
}

static void test_design_by_hand(void **state)
{
	/* chain 0: units 0..9 (first 0, blocks of 4: 0-3, 4-7, 8-9), recorded 1 and 6, the last block
	 * empty (collapsed into the one before); chain 1: units 0..11, recorded 0, 5, 10; chain 2:
	 * units 0..3 with none recorded (collapsed into chain 1's last stratum) */
	struct lp_tsample_unit_ref u[26];
	struct lp_tsample_design d;
	struct lp_tsample_est e;
	struct lp_err err = LP_ERR_INIT;
	const double x[] = { 10, 20, 1, 2, 4 };
	const double y[] = { 10, 20, 1, 2, 4 };
	size_t n = 0;
	uint32_t i;
	(void)state;
	for (i = 0; i < 10; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 0, i, i == 1 ? 0 : i == 6 ? 1 : -1, 0 };
	for (i = 0; i < 12; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 1, i, i == 0 ? 2 : i == 5 ? 3 : i == 10 ? 4 : -1, 0 };
	for (i = 0; i < 4; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 2, i, -1, 0 };
	assert_int_equal(lp_tsample_design_build(u, n, 5, 4, 0, &d, &err), 0);
	assert_int_equal(d.n, 5);
	assert_int_equal(d.N, 26);
	assert_int_equal(d.n_strata, 5);
	assert_true(d.w[0] == 4 && d.w[1] == 6 && d.w[2] == 4 && d.w[3] == 4 && d.w[4] == 4 + 4);
	/* the estimate: sum of N_h x_h; chain 0 has 2 strata (successive differences: (10 - 20)^2 / 2
	 * for both), chain 1 has 3 (one balanced second difference: (1 - 4 + 4)^2 / 6 for all three);
	 * df = 1 + 1 */
	lp_tsample_design_estimate(&d, 5, x, 0.95, &e);
	assert_true(fabs(e.total - (5 + 40 + 120 + 4 + 8 + 32)) < 1e-9);
	assert_true(fabs(e.half_ci - lp_student_t_quantile(0.975, 2) *
		sqrt(16 * 50.0 + 36 * 50.0 + (16 + 16 + 64) / 6.0)) < 1e-9);
	/* successive differences everywhere: chain 1 gets (1-2)^2/2, mean of both sides, (2-4)^2/2 */
	d.var = LP_TSAMPLE_VAR_SUCCESSIVE;
	lp_tsample_design_estimate(&d, 5, y, 0.95, &e);
	assert_true(fabs(e.half_ci - lp_student_t_quantile(0.975, 3) *
		sqrt(16 * 50.0 + 36 * 50.0 + 16 * 0.5 + 16 * 1.25 + 64 * 2.0)) < 1e-9);
	/* the simple-random-sampling reading: N x the mean */
	d.var = LP_TSAMPLE_VAR_SRS;
	lp_tsample_design_estimate(&d, 5, y, 0.95, &e);
	assert_true(fabs(e.total - (5 + 26 * 37.0 / 5)) < 1e-9);
	lp_tsample_design_release(&d);
	/* a lone chain takes the others' pooled variance; a design of one stratum has none */
	n = 0;
	for (i = 0; i < 8; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 0, i, i == 2 ? 0 : -1, 0 };
	assert_int_equal(lp_tsample_design_build(u, n, 1, 8, 0, &d, &err), 0);
	lp_tsample_design_estimate(&d, 0, x, 0.95, &e);
	assert_true(fabs(e.total - 80) < 1e-9 && e.half_ci < 0);
	lp_tsample_design_release(&d);
	/* every unit recorded: exact */
	n = 0;
	for (i = 0; i < 4; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 0, i, (int32_t)i, 0 };
	assert_int_equal(lp_tsample_design_build(u, n, 4, 1, 0, &d, &err), 0);
	lp_tsample_design_estimate(&d, 0, y, 0.95, &e);
	assert_true(fabs(e.total - 33) < 1e-9 && e.half_ci == 0);
	lp_tsample_design_release(&d);
}

/* A decode-like series per unit: a base, a drift with the context length, a jump part way (a new
 * kernel choice at some length), a pattern of period 8 (tiles of the context), jitter. */
static uint64_t next_rand(uint64_t *state)  /* splitmix64 */
{
	uint64_t x = (*state += 0x9e3779b97f4a7c15ull);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static double series(int kind, uint32_t chain, uint32_t i, uint64_t *rng)
{
	double v = 100, noise = 0;
	int k;
	for (k = 0; k < 4; k++) /* ~N(0, 1): a sum of 4 uniforms */
		noise += ((double)(next_rand(rng) >> 11) / 9007199254740992.0 - 0.5) * 1.732;
	if (kind & 1)
		v += 0.15 * i + 3 * chain;
	if ((kind & 2) && i >= 70)
		v += 6;
	if (kind & 4)
		v += i % 8 < 3 ? 4 : 0;
	return v + noise;
}

/* The intervals' coverage on synthetic series, the design as the tracer draws it (one random unit
 * per block), against the first tracer's (the block's first unit, simple-random-sampling variance):
 * on a pattern that repeats with the blocks that one is biased and misses. */
static void test_design_coverage(void **state)
{
	enum { CHAINS = 2, M = 125, EVERY = 8, TRIALS = 2000 };
	static const int kinds[] = { 0, 1, 2, 3, 4, 7 };
	struct lp_tsample_unit_ref u[CHAINS * M];
	double val[CHAINS * M], x[CHAINS * M];
	struct lp_err err = LP_ERR_INIT;
	uint64_t rng = 99;
	uint32_t k, t, c, i;
	(void)state;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		double truth = 0;
		uint32_t covered = 0;
		for (c = 0; c < CHAINS; c++)
			for (i = 0; i < M; i++) {
				val[c * M + i] = series(kinds[k], c, i, &rng);
				truth += val[c * M + i];
			}
		for (t = 0; t < TRIALS; t++) {
			struct lp_tsample_design d;
			struct lp_tsample_est e;
			uint32_t slot = 0, pick = 0;
			for (c = 0; c < CHAINS; c++)
				for (i = 0; i < M; i++) {
					if (i % EVERY == 0)
						pick = (uint32_t)(next_rand(&rng) % EVERY);
					u[c * M + i] = (struct lp_tsample_unit_ref){ c, i, i % EVERY == pick ? (int32_t)slot : -1, 0 };
					if (i % EVERY == pick)
						x[slot++] = val[c * M + i];
				}
			assert_int_equal(lp_tsample_design_build(u, CHAINS * M, slot, EVERY, 0, &d, &err), 0);
			lp_tsample_design_estimate(&d, 0, x, 0.95, &e);
			assert_true(e.half_ci > 0);
			covered += fabs(e.total - truth) <= e.half_ci;
			lp_tsample_design_release(&d);
		}
		/* 95% intervals: 2000 trials give +-1% of sampling noise; jumps make them wider */
		if (covered < TRIALS * 91 / 100 || covered > TRIALS * 995 / 1000)
			fail_msg("kind %d: the interval held the total in %u of %u trials", kinds[k], covered, TRIALS);
		if (kinds[k] == 4) {
			/* the first tracer's schedule on the same series: every block's first unit, read as a
			 * simple random sample: the period-8 pattern is always sampled at its top */
			struct lp_tsample_est e;
			uint32_t n = 0;
			for (c = 0; c < CHAINS; c++)
				for (i = 0; i < M; i += EVERY)
					x[n++] = val[c * M + i];
			lp_tsample_estimate(0, x, n, CHAINS * M, 0.95, &e);
			if (fabs(e.total - truth) <= e.half_ci)
				fail_msg("systematic: %.1f +- %.1f holds %.1f", e.total, e.half_ci, truth);
		}
	}
}

/* Bursts: clusters of consecutive units, one per block (every / burst clusters in a block). The
 * schedule replays the tracer's; the interval of a cluster sample comes from the differences of
 * the clusters' means, never from the spread inside a cluster (its units are not independent
 * draws); a trace whose every parent has one cluster pools the differences across parents. */
static void test_burst_by_hand(void **state)
{
	struct lp_tsample_plan p = PLAN(1, 8, 2);
	struct lp_tsample_unit_ref u[32];
	struct lp_tsample_design d;
	struct lp_tsample_est e;
	struct lp_err err = LP_ERR_INIT;
	/* three blocks of 8, the clusters of two at positions 0-1, 2-3, 6-7 */
	const double x[] = { 1, 1, 1, 3, 4, 4 };
	uint32_t i, b, g, n = 0, rec;
	(void)state;
	p.burst = 4;
	p.pick = LP_TRACE_SAMPLE_PICK_FIRST;
	for (i = 0; i < 30; i++) /* first 2, then each block's positions 0-3 (offset 0) */
		assert_int_equal(lp_tsample_recorded(&p, 1, i), i < 6 || (i - 2) % 8 < 4);
	p.offset = 1;
	for (i = 2; i < 30; i++)
		assert_int_equal(lp_tsample_recorded(&p, 1, i), (i - 2) % 8 >= 4);
	p.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
	for (g = 1; g < 40; g++) {
		p.seed = g * 31;
		for (b = 0; b < 6; b++) { /* one aligned cluster of 4 in each block */
			uint32_t first_rec = 99;
			for (i = 0, rec = 0; i < 8; i++)
				if (lp_tsample_recorded(&p, g, 2 + b * 8 + i)) {
					rec++;
					first_rec = first_rec < i ? first_rec : i;
				}
			assert_int_equal(rec, 4);
			assert_true(first_rec == 0 || first_rec == 4);
			assert_true(lp_tsample_recorded(&p, g, 2 + b * 8 + first_rec + 3));
		}
	}
	p.burst = 0; /* one unit per block, as before */
	for (g = 1; g < 10; g++)
		for (b = 0, p.seed = g; b < 4; b++) {
			for (i = 0, rec = 0; i < 8; i++)
				rec += lp_tsample_recorded(&p, g, 2 + b * 8 + i);
			assert_int_equal(rec, 1);
		}
	/* the design by hand: one chain, 3 strata of 8 units, 2 recorded in each */
	for (i = 0; i < 24; i++) {
		int32_t slot = -1;
		if (i == 0 || i == 1)
			slot = (int32_t)i;
		else if (i == 10 || i == 11)
			slot = (int32_t)i - 8;
		else if (i == 22 || i == 23)
			slot = (int32_t)i - 18;
		u[n++] = (struct lp_tsample_unit_ref){ 0, i, slot, 0 };
	}
	assert_int_equal(lp_tsample_design_build(u, n, 6, 8, 0, &d, &err), 0);
	assert_int_equal(d.n_strata, 3);
	for (i = 0; i < 6; i++)
		assert_true(d.w[i] == 4);
	/* cluster means 1, 2, 4: one second difference (1 - 4 + 4)^2 / 6 for each stratum, df 1 */
	d.cluster = 1;
	lp_tsample_design_estimate(&d, 0, x, 0.95, &e);
	assert_true(fabs(e.total - 4 * 14.0) < 1e-9);
	assert_true(fabs(e.half_ci - lp_student_t_quantile(0.975, 1) * sqrt(3 * 64 / 6.0)) < 1e-9);
	/* read as independent draws, each stratum would take its own spread (2 of 8: s^2 0, 2, 0), and
	 * miss the differences between the clusters altogether */
	d.cluster = 0;
	lp_tsample_design_estimate(&d, 0, x, 0.95, &e);
	assert_true(fabs(e.half_ci - lp_student_t_quantile(0.975, 4) * sqrt(64 * 0.75 * 2 / 2)) < 1e-9);
	lp_tsample_design_release(&d);
	/* two chains of one stratum each: the difference between them, pooled (df 1) */
	for (i = n = 0; i < 16; i++)
		u[n++] = (struct lp_tsample_unit_ref){ i / 8, i % 8, i == 2 || i == 3 ? (int32_t)i - 2 : i == 8 || i == 9 ? (int32_t)i - 6 : -1, 0 };
	assert_int_equal(lp_tsample_design_build(u, n, 4, 8, 0, &d, &err), 0);
	d.cluster = 1;
	{
		const double x2[] = { 1, 3, 5, 7 }; /* means 2 and 6 */
		lp_tsample_design_estimate(&d, 0, x2, 0.95, &e);
		assert_true(fabs(e.total - 8 * 8.0) < 1e-9);
		assert_true(fabs(e.half_ci - lp_student_t_quantile(0.975, 1) * sqrt(2 * 64 * 16 / 2.0)) < 1e-9);
	}
	lp_tsample_design_release(&d);
}

/* A fixture of `lp-sample-coverage --dump` (tests/fixtures/sampling/README.md) into `v`, the
 * kernels' names in `*names` (v's keys point at them; free with free_units); the count of units
 * read is returned. */
static size_t read_units(const char *fixture, struct lp_tsample_values *v, char ***names_out)
{
	struct lp_buf text = LP_BUF_INIT;
	char **names = NULL;
	const char *line;
	size_t i, u = 0;
	memset(v, 0, sizeof(*v));
	lp_test_read(lp_test_fixture(fixture), &text);
	for (line = text.data; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
		if (!strncmp(line, "units ", 6)) {
			assert_int_equal(sscanf(line, "units %u %u %lf", &v->units, &v->units_exact, &v->units_ns), 3);
			v->n_units = v->units - v->units_exact;
			v->refs = calloc(v->n_units, sizeof(*v->refs));
			v->ordinal = calloc(v->n_units, sizeof(*v->ordinal));
			v->keys = calloc(64, sizeof(*v->keys));
			names = calloc(64, sizeof(*names));
			v->exact_part = calloc(64, sizeof(double));
			v->total = calloc(64, sizeof(double));
		} else if (!strncmp(line, "key ", 4)) {
			size_t k;
			int off = 0;
			assert_true(v->n_keys < 64);
			assert_int_equal(sscanf(line, "key %zu %lf %lf %n", &k, &v->exact_part[v->n_keys], &v->total[v->n_keys], &off), 3);
			assert_int_equal(k, v->n_keys);
			names[k] = strndup(line + off, strcspn(line + off, "\n"));
			v->keys[k] = names[k];
			v->n_keys++;
		} else if (!strncmp(line, "unit ", 5)) {
			const char *q = line + 5;
			char *end;
			size_t k;
			if (!v->val)
				v->val = calloc(v->n_units * v->n_keys, sizeof(double));
			assert_true(u < v->n_units);
			v->refs[u].chain = (uint32_t)strtoul(q, &end, 10);
			v->refs[u].index = (uint32_t)strtoul(end, &end, 10);
			v->ordinal[u] = (uint32_t)strtoul(end, &end, 10);
			for (k = 0; k < v->n_keys; k++)
				v->val[u * v->n_keys + k] = strtod(end, &end);
			u++;
		}
	}
	/* the values add up to each kernel's total */
	for (i = 0; i < v->n_keys; i++) {
		double sum = v->exact_part[i];
		size_t k;
		for (k = 0; k < v->n_units; k++)
			sum += v->val[k * v->n_keys + i];
		assert_true(fabs(sum - v->total[i]) < 0.5);
	}
	lp_buf_release(&text);
	*names_out = names;
	return u;
}

static void free_units(struct lp_tsample_values *v, char **names)
{
	size_t i;
	for (i = 0; i < v->n_keys; i++)
		free(names[i]);
	free(names);
	lp_tsample_values_release(v);
}

/* The burst schedule `every`,`burst` (random place, balanced differences) replayed 500 times on
 * `v` (seed 11): every kernel's interval held the exact total in at least kernel_pct% of the
 * draws, none unknown, its bias under 0.2%; all kernels together between all_min_pct% and
 * all_max_pct% (100: no upper bound). */
static void check_bursts(const struct lp_tsample_values *v, uint32_t every, uint32_t burst, uint32_t kernel_pct,
	uint32_t all_min_pct, uint32_t all_max_pct)
{
	struct lp_tsample_plan bp = PLAN(1, every, 2);
	struct lp_tsample_coverage c;
	struct lp_err err = LP_ERR_INIT;
	uint32_t inside = 0, all = 0;
	size_t i;
	bp.burst = burst;
	bp.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
	assert_int_equal(lp_tsample_coverage_of(v, &bp, LP_TSAMPLE_VAR_BALANCED, 500, 11, 0.95, &c, &err), 0);
	assert_int_equal(c.n_rows, v->n_keys);
	for (i = 0; i < c.n_rows; i++) {
		if (c.rows[i].covered < 500 * kernel_pct / 100 || c.rows[i].unknown)
			fail_msg("every=%u burst=%u: %.60s: %u of 500 inside, %u unknown", every, burst, c.rows[i].key,
				c.rows[i].covered, c.rows[i].unknown);
		assert_true(fabs(c.rows[i].bias) < 0.002);
		inside += c.rows[i].covered;
		all += c.trials;
	}
	if (inside < all * all_min_pct / 100 || inside > all * all_max_pct / 100)
		fail_msg("every=%u burst=%u: %u of %u inside", every, burst, inside, all);
	lp_tsample_coverage_release(&c);
}

static void test_real_coverage(void **state)
{
	struct lp_tsample_values v;
	struct lp_tsample_coverage c;
	struct lp_tsample_plan plan = PLAN(1, 8, 2);
	struct lp_err err = LP_ERR_INIT;
	char **names = NULL;
	size_t i;
	uint32_t inside = 0, all = 0;
	(void)state;
	assert_int_equal(read_units("sampling/h100_hf_llama1b_units.txt", &v, &names), 252);
	assert_int_equal(v.n_keys, 23);
	plan.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
	assert_int_equal(lp_tsample_coverage_of(&v, &plan, LP_TSAMPLE_VAR_BALANCED, 500, 11, 0.95, &c, &err), 0);
	assert_int_equal(c.n_rows, 23);
	for (i = 0; i < c.n_rows; i++) {
		if (c.rows[i].covered < 500 * 89 / 100 || c.rows[i].unknown)
			fail_msg("%.60s: %u of 500 inside", c.rows[i].key, c.rows[i].covered);
		assert_true(fabs(c.rows[i].bias) < 0.001 && c.rows[i].rmse < 0.01);
		inside += c.rows[i].covered;
		all += c.trials;
	}
	if (inside < all * 93 / 100 || inside > all * 98 / 100)
		fail_msg("new schedule: %u of %u inside", inside, all);
	lp_tsample_coverage_release(&c);
	plan.pick = LP_TRACE_SAMPLE_PICK_FIRST;
	assert_int_equal(lp_tsample_coverage_of(&v, &plan, LP_TSAMPLE_VAR_SRS, 8, 0, 0.95, &c, &err), 0);
	for (i = inside = all = 0; i < c.n_rows; i++) {
		inside += c.rows[i].covered;
		all += c.trials;
	}
	if (inside > all * 90 / 100)
		fail_msg("old schedule: %u of %u inside", inside, all);
	lp_tsample_coverage_release(&c);
	/* bursts (bench/sampling/README.md): clusters of 4 in blocks of 32 and 64, and of 8 and of 4
	 * in blocks of 128 (one per generation: the differences pooled across the two generations;
	 * every=128,burst=4 is auto's since run 27) */
	{
		static const uint32_t cfg[][3] = { { 32, 4, 89 }, { 64, 4, 89 }, { 128, 8, 80 }, { 128, 4, 89 } };
		size_t j;
		for (j = 0; j < sizeof(cfg) / sizeof(cfg[0]); j++)
			check_bursts(&v, cfg[j][0], cfg[j][1], cfg[j][2], 92, 100);
	}
	free_units(&v, names);
}

/* auto's schedule (every=128,burst=4) on three generations of an H200 (bench/tracer/README.md run
 * 38, tests/fixtures/sampling/README.md): one burst a generation, the interval from the two
 * differences between them (Student's t at 2 degrees of freedom). Runs 36 and 37 read 87-91% of
 * the kernels above 1% inside the rerun interval in one draw each; replayed 500 times the
 * intervals hold 93.9% (every=64: 96.1%, every=8 alone: 95.3%), the attention kernel's 90.4% the
 * lowest: it grows with the context, so where the burst falls in the generation matters most. */
static void test_real_coverage_bursts_h200(void **state)
{
	static const uint32_t cfg[][3] = { { 128, 4, 92 }, { 64, 4, 94 } };
	struct lp_tsample_values v;
	char **names = NULL;
	size_t j;
	(void)state;
	assert_int_equal(read_units("sampling/h200_hf_llama1b_3gen_units.txt", &v, &names), 378);
	assert_int_equal(v.n_keys, 23);
	for (j = 0; j < sizeof(cfg) / sizeof(cfg[0]); j++)
		check_bursts(&v, cfg[j][0], cfg[j][1], 87, cfg[j][2], 99);
	free_units(&v, names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_t_quantiles),
		cmocka_unit_test(test_estimate_by_hand),
		cmocka_unit_test(test_design_stage_instances),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_rerun_interval),
		cmocka_unit_test(test_design_by_hand),
		cmocka_unit_test(test_design_coverage),
		cmocka_unit_test(test_burst_by_hand),
		cmocka_unit_test(test_real_coverage),
		cmocka_unit_test(test_real_coverage_bursts_h200),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
