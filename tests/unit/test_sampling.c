/* test_sampling.c: src/analyze/sampling.c, the statistics of sampled traces (issue 24).
 *   - the schedule, Student's t quantiles against tables, the estimator by hand;
 *   - the interval's coverage: 2000 random samples of a skewed population, the 95% interval must
 *     hold the true total in 92-98% of them;
 *   - fixture traces written by the tracer's own writer (build/tests/lp_trace_fixture: NVTX half
 *     and sample.c for real, CUPTI and the GPU faked) in exact and in sampled mode from the same
 *     deterministic program: the units' strata replayed from the range tree equal the tracer's
 *     STAGE flags, every STAGE GPU time equals the program's, the exact table is the raw sums, and
 *     the sampled table's estimates hold the exact totals within their intervals. */
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <string.h>
#include <zlib.h>

#include "analyze/analysis.h"
#include "analyze/sampling.h"
#include "report/figures.h"
#include "report/html.h"
#include "report/perfetto.h"
#include "report/reports.h"
#include "report/sections.h"
#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"


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

/* ---- the stratified design ---- */

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
		u[n++] = (struct lp_tsample_unit_ref){ 0, i, i == 1 ? 0 : i == 6 ? 1 : -1 };
	for (i = 0; i < 12; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 1, i, i == 0 ? 2 : i == 5 ? 3 : i == 10 ? 4 : -1 };
	for (i = 0; i < 4; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 2, i, -1 };
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
		u[n++] = (struct lp_tsample_unit_ref){ 0, i, i == 2 ? 0 : -1 };
	assert_int_equal(lp_tsample_design_build(u, n, 1, 8, 0, &d, &err), 0);
	lp_tsample_design_estimate(&d, 0, x, 0.95, &e);
	assert_true(fabs(e.total - 80) < 1e-9 && e.half_ci < 0);
	lp_tsample_design_release(&d);
	/* every unit recorded: exact */
	n = 0;
	for (i = 0; i < 4; i++)
		u[n++] = (struct lp_tsample_unit_ref){ 0, i, (int32_t)i };
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
					u[c * M + i] = (struct lp_tsample_unit_ref){ c, i, i % EVERY == pick ? (int32_t)slot : -1 };
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

/* ---- fixture traces ---- */

static void load(const char *dir, struct lp_profile *p)
{
	struct lp_err err = LP_ERR_INIT;
	lp_profile_init(p, dir);
	if (lp_trace_load(dir, p, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The STAGE records of decode_step (the tracer's flags and GPU times), by range id. */
struct stage_list {
	struct lp_trace_stage r[256];
	size_t n;
	struct lp_trace_sampling sampling;
};

static void read_stages(const char *dir, struct stage_list *out)
{
	struct lp_buf path = LP_BUF_INIT, data = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	uint32_t unit_sid = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t off, i, j;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strstr(de->d_name, LP_TRACE_FILE_SUFFIX))
			lp_buf_addf(&path, "%s/%s", dir, de->d_name);
	closedir(d);
	assert_int_equal(lp_fs_read_file(path.data, &data, 1 << 26, &err), 0);
	memset(out, 0, sizeof(*out));
	for (off = sizeof(struct lp_trace_preamble); off + sizeof(struct lp_trace_rec_header) <= data.len;) {
		struct lp_trace_rec_header h;
		const char *p;
		memcpy(&h, data.data + off, sizeof(h));
		p = data.data + off + sizeof(h);
		if (h.type == LP_TREC_STRING) {
			struct lp_trace_string s;
			memcpy(&s, p, sizeof(s));
			if (s.len == 11 && !memcmp(p + sizeof(s), "decode_step", 11))
				unit_sid = s.sid;
		} else if (h.type == LP_TREC_SAMPLING) {
			memcpy(&out->sampling, p, sizeof(out->sampling));
		} else if (h.type == LP_TREC_STAGE) {
			assert_true(out->n < 256);
			memcpy(&out->r[out->n++], p, sizeof(struct lp_trace_stage));
		}
		off += sizeof(h) + h.size;
	}
	/* decode_step only, by range id */
	for (i = j = 0; i < out->n; i++)
		if (out->r[i].name_sid == unit_sid)
			out->r[j++] = out->r[i];
	out->n = j;
	for (i = 1; i < out->n; i++)
		for (j = i; j > 0 && out->r[j - 1].range_id > out->r[j].range_id; j--) {
			struct lp_trace_stage t = out->r[j];
			out->r[j] = out->r[j - 1];
			out->r[j - 1] = t;
		}
	lp_buf_release(&path);
	lp_buf_release(&data);
}

static const struct lp_tsample_row *row(const struct lp_tsample_table *t, const char *key)
{
	size_t i;
	for (i = 0; i < t->n_rows; i++)
		if (!strcmp(t->rows[i].key, key))
			return &t->rows[i];
	fail_msg("no row '%s'", key);
	return NULL;
}

static const struct lp_kernel_row *krow(const struct lp_kernel_set *s, const char *name)
{
	size_t i;
	for (i = 0; i < s->n_rows; i++)
		if (!strcmp(s->rows[i].name, name))
			return &s->rows[i];
	fail_msg("no kernel row '%s'", name);
	return NULL;
}

static const struct lp_op_row *orow(const struct lp_op_table *t, const char *name)
{
	size_t i;
	for (i = 0; i < t->n_rows; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	fail_msg("no operator row '%s'", name);
	return NULL;
}

static json_t *summary_of(const struct lp_analysis *a)
{
	struct lp_buf text = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	json_t *j;
	assert_int_equal(lp_report_summary_json(a, &text, &err), 0);
	j = json_loads(text.data, 0, NULL);
	assert_non_null(j);
	lp_buf_release(&text);
	return j;
}

/* The analysis's own tables (Top Kernels, Operators, summary.json) of the sampled trace `a`,
 * scaled to every unit, against the exact trace `b` of the same program. */
static void scaled_tables(const struct lp_analysis *a, const struct lp_analysis *b, uint32_t rec)
{
	static const char *const unit_kernels[] = { "gemm_mlp", "attention_decode", "gemm_qkv", "rmsnorm", "rope" };
	static const char *const ops[] = { "mlp", "attention" };
	struct lp_buf out = LP_BUF_INIT;
	size_t i;
	json_t *sum;
	char of[64], html_of[64], html_mode[96];
	snprintf(of, sizeof(of), "(%u of 138 units) |", rec);
	snprintf(html_of, sizeof(html_of), "(%u of 138)</td>", rec);
	snprintf(html_mode, sizeof(html_mode), "tracing mode: Sampled: kernels were traced in %u of 144", 6 + rec);
	assert_true(a->kernels.sampled && !b->kernels.sampled);
	assert_int_equal(a->kernels.sample_n, rec);
	assert_int_equal(a->kernels.sample_N, 138);
	assert_int_equal(a->kernels.sample_exact, 6);
	assert_int_equal(a->kernels.n_rows, b->kernels.n_rows);
	for (i = 0; i < 5; i++) {
		const struct lp_kernel_row *s = krow(&a->kernels, unit_kernels[i]), *e = krow(&b->kernels, unit_kernels[i]);
		assert_true(s->sampled && s->ci_ms > 0 && s->ci_ms < 0.1 * e->total_ms);
		/* the estimate within its interval of the exact run's total, launches exact (one per step) */
		if (fabs(s->total_ms - e->total_ms) > s->ci_ms)
			fail_msg("%s: %.4f +- %.4f ms against %.4f exact", s->name, s->total_ms, s->ci_ms, e->total_ms);
		assert_int_equal(s->calls, e->calls);
		assert_int_equal(s->calls, 144);
		assert_true(fabs(s->stage_ms[1] - s->total_ms) < 1e-9);   /* all in decode */
		assert_true(fabs(s->busy_ms / s->total_ms - e->busy_ms / e->total_ms) < 1e-9);
		assert_true(fabs(s->share - e->share) < 0.01);
	}
	/* rows outside the units stay exact, bit for bit */
	for (i = 0; i < 2; i++) {
		const char *name = i ? "gemm_prefill" : "argmax_between_steps";
		const struct lp_kernel_row *s = krow(&a->kernels, name), *e = krow(&b->kernels, name);
		assert_false(s->sampled);
		assert_true(s->total_ms == e->total_ms && s->calls == e->calls && s->ci_ms == 0);
	}
	assert_true(fabs(a->kernels.total_ms - b->kernels.total_ms) < 0.02 * b->kernels.total_ms);
	/* the stages' kernel sums and busy time, so the bound verdicts and the advice see the whole decode */
	{
		const struct lp_stage *sd = lp_stages_find(&a->stages, LP_STAGE_DECODE), *ed = lp_stages_find(&b->stages, LP_STAGE_DECODE);
		assert_non_null(sd);
		assert_non_null(ed);
		assert_true(fabs(sd->kernels.mean - ed->kernels.mean) < 1e-9);   /* 48 x 5 + 48 argmax */
		assert_true(fabs(sd->kernels.mean - 288) < 1e-9);
		assert_true(fabs(sd->kernel_ms.mean - ed->kernel_ms.mean) < 0.02 * ed->kernel_ms.mean);
		assert_true(fabs(sd->gpu_ms.mean - ed->gpu_ms.mean) < 0.02 * ed->gpu_ms.mean);
		/* (the bound verdict also depends on host timing, which differs between the two runs) */
	}
	/* operators: GPU times scaled with an interval, calls and host time exact */
	assert_true(a->ops.sampled && !b->ops.sampled);
	for (i = 0; i < 2; i++) {
		const struct lp_op_row *s = orow(&a->ops, ops[i]), *e = orow(&b->ops, ops[i]);
		assert_true(s->sampled && s->ci_ms > 0);
		if (fabs(s->gpu_incl_ms - e->gpu_incl_ms) > s->ci_ms)
			fail_msg("%s: %.4f +- %.4f ms against %.4f exact", s->name, s->gpu_incl_ms, s->ci_ms, e->gpu_incl_ms);
		assert_true(fabs(s->gpu_excl_ms - s->gpu_incl_ms) < 1e-9);
		assert_int_equal(s->calls, 144);
		assert_int_equal(s->kernels, e->kernels);
		assert_true(fabs(s->share - e->share) < 0.01);
	}
	/* the reports mark the scaled rows, with the sample size and the interval */
	assert_int_equal(lp_section_top_kernels(a, 10, &out), 0);
	assert_non_null(strstr(out.data, "| gemm\\_mlp | 0 | ~6.0"));
	assert_non_null(strstr(out.data, of));
	assert_non_null(strstr(out.data, "| gemm\\_prefill | 0 | 0.900 |"));
	assert_non_null(strstr(out.data, "| exact |"));
	lp_buf_reset(&out);
	assert_int_equal(lp_section_top_kernels(b, 10, &out), 0);
	assert_null(strstr(out.data, "~"));
	assert_null(strstr(out.data, "sampled"));
	lp_buf_reset(&out);
	assert_int_equal(lp_section_top_ops(a, 10, &out), 0);
	assert_non_null(strstr(out.data, "| decode\\_all | mlp | ~6.0"));
	lp_buf_reset(&out);
	/* kernels.md and operators.md: the per-stage split marked too */
	assert_int_equal(lp_report_kernels_md(a, &out), 0);
	assert_non_null(strstr(out.data, "| gemm\\_mlp | 0 | ~6.0"));
	assert_non_null(strstr(out.data, "| ~0.000 | ~6.0"));   /* prefill_ms, decode_ms */
	assert_non_null(strstr(out.data, "| +- "));
	assert_non_null(strstr(out.data, of));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_kernels_md(b, &out), 0);
	assert_null(strstr(out.data, "~"));
	assert_null(strstr(out.data, "sampled"));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_operators_md(a, &out), 0);
	assert_non_null(strstr(out.data, "| decode\\_all | mlp | workload | 144 | ~6.0"));
	assert_non_null(strstr(out.data, of));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_operators_md(b, &out), 0);
	assert_null(strstr(out.data, "~"));
	lp_buf_reset(&out);
	sum = summary_of(a);
	{
		json_t *k = json_object_get(sum, "kernels"), *r0 = json_array_get(json_object_get(k, "rows"), 0);
		json_t *tr = json_object_get(sum, "tracing");
		assert_int_equal(json_integer_value(json_object_get(json_object_get(k, "sampled"), "units_recorded")), rec);
		assert_true(json_is_true(json_object_get(r0, "sampled")));
		assert_true(json_real_value(json_object_get(r0, "ci_ms")) > 0);
		assert_string_equal(json_string_value(json_object_get(tr, "mode")), "sampled");
		assert_string_equal(json_string_value(json_object_get(tr, "why")), "schedule");
		assert_int_equal(json_integer_value(json_object_get(tr, "every")), 4);
	}
	json_decref(sum);
	sum = summary_of(b);
	assert_null(json_object_get(json_object_get(sum, "kernels"), "sampled"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(sum, "tracing"), "mode")), "exact");
	assert_string_equal(json_string_value(json_object_get(json_object_get(sum, "tracing"), "why")), "off");
	json_decref(sum);
	assert_int_equal(lp_report_html(a, NULL, &out), 0);
	assert_non_null(strstr(out.data, html_of));
	assert_non_null(strstr(out.data, html_mode));
	lp_buf_release(&out);
}

/* Everything else drawn from the sampled trace `a` (b: the exact one of the same program): the
 * timeline marks the unrecorded steps over their GPU window (never idle GPU), the waterfall's gaps
 * are located in the recorded steps only and say so, in report.md, the HTML and summary.json. */
static void derived_figures(const struct lp_analysis *a, const struct lp_analysis *b, const struct stage_list *st,
	uint32_t rec)
{
	const struct lp_timeline *t = &a->timeline;
	const struct lp_waterfall *ws = &a->waterfall[1], *we = &b->waterfall[1];
	struct lp_buf out = LP_BUF_INIT;
	size_t i, k = 0, skipped0 = 0, bands = 0;
	json_t *sum;
	char want[160];
	/* the timeline shows measured generation 1 (the fixture's first, no warm-up): 48 steps */
	for (i = 0; i < 48; i++)
		skipped0 += st->r[i].sample == LP_TRACE_STAGE_SKIPPED;
	assert_true(skipped0 > 30);
	assert_int_equal(t->n_unrecorded, skipped0);
	assert_int_equal(t->n_unit_steps, 48);
	assert_int_equal(b->timeline.n_unrecorded, 0);
	for (i = 0; i < t->n_events; i++) {
		const struct lp_tl_event *e = &t->events[i];
		if (e->kind != LP_TL_EV_UNRECORDED)
			continue;
		bands++;
		assert_int_equal(t->lanes[e->lane].kind, LP_TL_LANE_GPU);
		/* over the step's GPU window (its STAGE times): the k-th skipped step of generation 0 */
		while (k < 48 && st->r[k].sample != LP_TRACE_STAGE_SKIPPED)
			k++;
		assert_true(k < 48);
		assert_true(e->end_ns - e->start_ns == st->r[k].gpu_end_ns - st->r[k].gpu_start_ns);
		assert_true(e->start_ns + t->origin_ns == st->r[k].gpu_start_ns);
		k++;
	}
	assert_int_equal(bands, skipped0);
	for (i = 0; i < b->timeline.n_events; i++)
		assert_int_not_equal(b->timeline.events[i].kind, LP_TL_EV_UNRECORDED);
	assert_int_equal(lp_figure_render(a, LP_FIG_TIMELINE, &out), 0);
	snprintf(want, sizeof(want), "Sampled trace: the kernels of %zu of the 48 decode steps here were not recorded", skipped0);
	assert_non_null(strstr(out.data, want));
	assert_non_null(strstr(out.data, "fill=\"url(#lp-unrec-0)\""));
	lp_buf_reset(&out);
	assert_int_equal(lp_figure_render(b, LP_FIG_TIMELINE, &out), 0);
	assert_null(strstr(out.data, "lp-unrec"));
	assert_null(strstr(out.data, "Sampled trace"));
	lp_buf_reset(&out);
	/* waterfall: the exact trace's gaps over the decode occurrences; the sampled one's inside the
	 * recorded steps (the fixture's GPU leaves 2 us after each kernel: a few us per step, where a
	 * gap across unrecorded steps would be hundreds) */
	assert_true(ws->valid && we->valid);
	assert_int_equal(ws->gaps_sampled, 1);
	assert_int_equal(ws->gaps_steps, 6 + rec);
	assert_int_equal(we->gaps_sampled, 0);
	assert_true(ws->n_gaps > 0);
	for (i = 0; i < ws->n_gaps; i++)
		if (ws->gaps[i].ms > 0.012)
			fail_msg("gap '%s': %.4f ms per recorded step", ws->gaps[i].label, ws->gaps[i].ms);
	assert_int_equal(lp_report_report_md(a, NULL, &out), 0);
	snprintf(want, sizeof(want), "Largest idle gaps, located in the %u recorded decode steps", 6 + rec);
	assert_non_null(strstr(out.data, want));
	assert_non_null(strstr(out.data, "Sampled trace: the kernel items and the GPU busy time"));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_report_md(b, NULL, &out), 0);
	assert_null(strstr(out.data, "recorded decode steps"));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_html(a, NULL, &out), 0);
	assert_non_null(strstr(out.data, "located in the"));
	assert_non_null(strstr(out.data, "lp-unrec-0"));
	sum = summary_of(a);
	{
		json_t *w1 = json_array_get(json_object_get(sum, "waterfall"), 1);
		assert_true(json_is_true(json_object_get(w1, "sampled")));
		assert_int_equal(json_integer_value(json_object_get(w1, "gaps_recorded_steps")), 6 + rec);
	}
	json_decref(sum);
	sum = summary_of(b);
	assert_null(json_object_get(json_array_get(json_object_get(sum, "waterfall"), 1), "sampled"));
	json_decref(sum);
	lp_buf_release(&out);
}

/* The Perfetto export of the sampled trace: the unrecorded steps' slices say so. */
static void perfetto_marks(const struct lp_profile *p, size_t n_skipped)
{
	const char *path = LP_TEST_TMP "/sampling_sampled.json.gz";
	struct lp_perfetto_opts o = { .flows = 0 };
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf text = LP_BUF_INIT;
	char chunk[65536];
	const char *at;
	size_t n = 0;
	int got;
	gzFile f;
	assert_int_equal(lp_perfetto_write(p, path, &o, &err), 0);
	assert_non_null(f = gzopen(path, "rb"));
	while ((got = gzread(f, chunk, sizeof(chunk))) > 0)
		lp_buf_add(&text, chunk, (size_t)got);
	gzclose(f);
	for (at = text.data; (at = strstr(at, "\"kernels_recorded\":false")) != NULL; at++)
		n++;
	assert_int_equal(n, n_skipped);
	lp_buf_release(&text);
}

static void test_fixture_traces(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_exact", *sa_dir = LP_TEST_TMP "/sampling_sampled";
	const char *ex_out = LP_TEST_TMP "/sampling_exact.txt", *sa_out = LP_TEST_TMP "/sampling_sampled.txt";
	struct lp_tsample_plan exact_plan = PLAN(0, 4, 2), plan = PLAN(1, 4, 2);
	struct lp_profile ex, sa;
	uint32_t rec = 0;            /* recorded units of the sampled stratum (the tracer's flags) */
	struct lp_tsample_table te, ts;
	struct lp_tsample_units units;
	struct stage_list *st = calloc(1, sizeof(*st));
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf steps = LP_BUF_INIT;
	const char *line;
	size_t i, k, inside = 0, big = 0;
	double total_exact = 0;
	(void)state;

	lp_test_trace_fixture(ex_dir, "off", ex_out);
	lp_test_trace_fixture(sa_dir, "every=4,first=2,seed=7", sa_out);
	load(ex_dir, &ex);
	load(sa_dir, &sa);

	/* the tracer's flags and GPU times: 3 generations x 48 steps; first 2 + every 4th of 46 */
	read_stages(sa_dir, st);
	assert_int_equal(st->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
	assert_int_equal(st->sampling.pick, LP_TRACE_SAMPLE_PICK_RANDOM);
	assert_true(st->sampling.seed == 7);
	assert_int_equal(st->sampling.units, 144);
	assert_int_equal(st->n, 144);
	for (i = 0; i < st->n; i++)
		rec += st->r[i].index >= 2 && st->r[i].sample == LP_TRACE_STAGE_RECORDED;
	/* per generation: 11 full blocks of 4 (one unit each) and a block of 2 (one when the pick falls
	 * on it) */
	assert_true(rec >= 3 * 11 && rec <= 3 * 12);
	assert_int_equal(st->sampling.units_recorded, 6 + rec);
	assert_int_equal(st->sampling.toggles, 2 * (144 - 6 - rec)); /* off and on around each skipped unit */
	plan.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
	plan.seed = 7;
	assert_int_equal(lp_fs_read_file(sa_out, &steps, 1 << 20, &err), 0);
	line = steps.data;
	for (i = 0; i < st->n; i++) {
		int g, s;
		unsigned long long ns;
		assert_int_equal(sscanf(line, "step %d %d %llu", &g, &s, &ns), 3);
		assert_int_equal(st->r[i].index, (uint32_t)s);
		assert_int_equal(st->r[i].gpu, LP_TRACE_STAGE_GPU_EVENTS);
		assert_true(st->r[i].gpu_elapsed_ns == ns); /* exact for every step, recorded or not */
		assert_true(st->r[i].gpu_end_ns - st->r[i].gpu_start_ns == ns);
		line = strchr(line, '\n') + 1;
	}

	/* the strata replayed from the range tree are the tracer's */
	assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &units, &err), 0);
	assert_int_equal(units.n_exact, 6);
	assert_int_equal(units.n_recorded, rec);
	assert_int_equal(units.n_skipped, 138 - rec);
	assert_int_equal(units.n_chains, 3);
	for (i = 0, k = 0; i < sa.n_ranges; i++) {
		if (units.stratum[i] == LP_TSAMPLE_OUTSIDE)
			continue;
		assert_true(k < st->n);
		assert_int_equal(units.unit_index[i], st->r[k].index);
		assert_int_equal(units.stratum[i] == LP_TSAMPLE_SKIPPED, st->r[k].sample == LP_TRACE_STAGE_SKIPPED);
		k++;
	}
	assert_int_equal(k, 144);
	lp_tsample_units_release(&units);

	/* the reader carries the tracer's records: the plan, every unit's flags and GPU times */
	{
		struct lp_tsample_plan got;
		struct lp_tsample_units replay;
		uint8_t *flags = calloc(sa.n_ranges, 1);
		assert_int_equal(lp_tsample_plan_of(&sa, &got), 1);
		assert_true(got.every == 4 && got.first == 2 && !strcmp(got.unit, "decode_step"));
		assert_true(got.pick == LP_TRACE_SAMPLE_PICK_RANDOM && got.seed == 7);
		assert_int_equal(lp_tsample_plan_of(&ex, &got), 0);
		assert_int_equal(sa.processes[0].sampling.units_recorded, 6 + rec);
		assert_int_equal(sa.processes[0].sampling.toggles, 2 * (138 - rec));
		for (i = 0, k = 0; i < sa.n_ranges; i++) {
			if (strcmp(sa.ranges[i].name, "decode_step"))
				continue;
			assert_int_equal(sa.ranges[i].gpu_status, LP_TRACE_STAGE_GPU_EVENTS);
			assert_true(sa.ranges[i].gpu_elapsed_ns == st->r[k].gpu_elapsed_ns);
			assert_int_equal(sa.ranges[i].sample, st->r[k].sample);
			flags[i] = sa.ranges[i].sample;
			sa.ranges[i].sample = 0; /* as a reader without STAGE records would leave it */
			k++;
		}
		assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &units, &err), 0);
		assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &replay, &err), 0);
		for (i = 0; i < sa.n_ranges; i++)
			sa.ranges[i].sample = flags[i];
		lp_tsample_units_release(&replay);
		assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &replay, &err), 0);
		for (i = 0; i < sa.n_ranges; i++)
			assert_int_equal(units.stratum[i], replay.stratum[i]); /* flags == replayed schedule */
		lp_tsample_units_release(&units);
		lp_tsample_units_release(&replay);
		free(flags);
	}

	/* exact: no interval, the raw sums */
	assert_int_equal(lp_tsample_kernel_table(&ex, &exact_plan, 0.95, &te, &err), 0);
	assert_false(te.sampled);
	assert_int_equal(te.n_rows, 7);
	for (i = 0; i < ex.n_kernels; i++) {
		const struct lp_kernel *kk = &ex.kernels[i];
		if (kk->range >= 0 && lp_profile_range_find_ancestor(&ex, kk->range, "decode_step") >= 0)
			total_exact += (double)(kk->end_ns - kk->start_ns);
	}
	assert_true(fabs(te.total_ns.total - total_exact) < 1);

	/* the schedule replayed on the exact trace (lp_tsample_coverage): every kernel's interval
	 * holds its exact total in about 95% of 500 draws of the positions */
	{
		struct lp_tsample_plan cp = PLAN(1, 4, 2);
		struct lp_tsample_coverage cov;
		cp.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
		assert_int_equal(lp_tsample_coverage(&ex, NULL, &cp, LP_TSAMPLE_VAR_BALANCED, 500, 3, 0.95, &cov, &err), 0);
		assert_int_equal(cov.units, 144);
		assert_int_equal(cov.units_exact, 6);
		assert_int_equal(cov.n_rows, 5); /* the kernels inside units */
		assert_true(fabs(cov.units_ns - total_exact) < 1);
		for (i = 0; i < cov.n_rows; i++) {
			const struct lp_tsample_cov_row *r = &cov.rows[i];
			if (r->covered < 430 || r->unknown)
				fail_msg("%s: %u of 500 inside", r->key, r->covered);
			assert_true(fabs(r->bias) < 0.002 && r->rmse < 0.02 && r->half_rel > 0);
		}
		assert_true(cov.rows[0].exact_ns >= cov.rows[1].exact_ns);
		lp_tsample_coverage_release(&cov);
	}
	assert_true(te.total_ns.half_ci == 0);
	assert_true(row(&te, "gemm_mlp")->calls.total == 144);
	assert_true(row(&te, "argmax_between_steps")->outside_calls == 144);
	assert_true(row(&te, "gemm_prefill")->outside_calls == 3);

	/* sampled: every row of over 1% of the unit time within its interval of the exact total */
	assert_int_equal(lp_tsample_kernel_table(&sa, &plan, 0.95, &ts, &err), 0);
	assert_true(ts.sampled);
	assert_int_equal(ts.units_recorded, rec);
	assert_int_equal(ts.units_sampled_stratum, 138);
	assert_int_equal(ts.units_exact, 6);
	for (i = 0; i < ts.n_rows; i++) {
		const struct lp_tsample_row *s = &ts.rows[i], *e = row(&te, s->key);
		if (e->time_ns.total <= 0.01 * te.total_ns.total)
			continue;
		big++;
		assert_true(s->time_ns.half_ci > 0);
		assert_true(s->time_ns.n == rec && s->time_ns.N == 138);
		inside += fabs(s->time_ns.total - e->time_ns.total) <= s->time_ns.half_ci;
		/* one launch of each kernel per step: the count is estimated without error */
		assert_true(fabs(s->calls.total - 144) < 1e-6 && fabs(s->calls.half_ci) < 1e-6);
		/* and the interval is honest about its size: a few percent here, not 0, not 50% */
		assert_true(s->time_ns.half_ci < 0.1 * e->time_ns.total);
	}
	assert_int_equal(big, 5);
	assert_int_equal(inside, big);
	assert_true(fabs(ts.total_ns.total - te.total_ns.total) <= ts.total_ns.half_ci);
	/* what lies outside the units is exact in both */
	assert_true(row(&ts, "argmax_between_steps")->outside_ns == row(&te, "argmax_between_steps")->outside_ns);
	assert_true(row(&ts, "gemm_prefill")->outside_ns == 3 * 300000.0);

	/* the analysis and the stakeholder report: the mode, why, and the scaled rows */
	{
		struct lp_analysis_input in;
		struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
		struct lp_buf md = LP_BUF_INIT;
		char want[256];
		memset(&in, 0, sizeof(in));
		in.profile = &sa;
		assert_int_equal(lp_analyze(&in, a, &err), 0);
		assert_int_equal(a->sampling.mode, 2);
		assert_int_equal(a->sampled.n_rows, ts.n_rows);
		assert_true(fabs(a->sampled.rows[0].time_ns.total - ts.rows[0].time_ns.total) < 1e-6);
		assert_int_equal(lp_report_stakeholder_md(a, &md), 0);
		snprintf(want, sizeof(want), "## Tracing Mode\n\nSampled: kernels were traced in %u of 144 decode\\_step "
			"ranges (the first 2 under each parent, then 1 in 4, at a random position in each block: seed 7), "
			"as trace.sample asked", 6 + rec);
		if (!strstr(md.data, want))
			fail_msg("%s", strstr(md.data, "## Tracing") ? strstr(md.data, "## Tracing") : md.data);
		assert_non_null(strstr(md.data, "| gemm\\_mlp | 6.0"));
		in.profile = &ex;
		assert_int_equal(lp_analyze(&in, b, &err), 0);
		lp_buf_reset(&md);
		assert_int_equal(lp_report_stakeholder_md(b, &md), 0);
		assert_non_null(strstr(md.data, "## Tracing Mode\n\nExact: every launch traced (trace.sample=off)."));
		b->mode = "deep"; /* deep mode resolves trace.sample=auto to off (run/workload.c) and says why */
		lp_buf_reset(&md);
		assert_int_equal(lp_report_stakeholder_md(b, &md), 0);
		assert_non_null(strstr(md.data, "Exact: every launch traced (deep mode traces every launch: Nsight "
						"Compute's sampling numbers them)."));
		b->mode = "";
		scaled_tables(a, b, rec);
		derived_figures(a, b, st, rec);
		perfetto_marks(&sa, 138 - rec);
		lp_buf_release(&md);
		lp_analysis_release(a);
		lp_analysis_release(b);
		free(a);
		free(b);
	}

	lp_tsample_table_release(&te);
	lp_tsample_table_release(&ts);
	lp_profile_release(&ex);
	lp_profile_release(&sa);
	lp_buf_release(&steps);
	free(st);
}

/* auto on a program whose first steps are slow (module loading): it keeps measuring recorded
 * units (flagged MEASURED: exact stratum) until one runs faster than the threshold, then samples;
 * the scaled tables still agree with the exact run. */
static void test_auto_fixture(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_auto_exact", *sa_dir = LP_TEST_TMP "/sampling_auto";
	struct lp_tsample_plan plan = PLAN(1, 4, 2);
	struct stage_list *st = calloc(1, sizeof(*st));
	struct lp_profile ex, sa;
	struct lp_tsample_units units;
	struct lp_analysis_input in;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct lp_err err = LP_ERR_INIT;
	size_t i, d = 0, n_measured = 0;
	(void)state;
	setenv("LP_FIXTURE_SLOW", "4", 1);
	lp_test_trace_fixture(sa_dir, "auto,rate=500,every=4,first=2", LP_TEST_TMP "/sampling_auto.txt");
	unsetenv("LP_FIXTURE_SLOW");
	lp_test_trace_fixture(ex_dir, "off", LP_TEST_TMP "/sampling_auto_exact.txt");
	read_stages(sa_dir, st);
	assert_int_equal(st->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
	assert_int_equal(st->sampling.why, LP_TRACE_SAMPLE_WHY_AUTO_HIGH);
	assert_true(st->sampling.launch_rate > 500);
	assert_int_equal(st->n, 144);
	/* generation 0: the first 2 recorded, then measured until the decision at d, then the schedule */
	assert_int_equal(st->r[0].sample, LP_TRACE_STAGE_RECORDED);
	assert_int_equal(st->r[1].sample, LP_TRACE_STAGE_RECORDED);
	for (i = 2; i < 48 && st->r[i].sample == LP_TRACE_STAGE_MEASURED; i++)
		n_measured++;
	d = i;
	if (d < 5 || d > 16)   /* the 4 slow steps and the first fast one are measured at least */
		fail_msg("auto decided at step %zu", d);
	load(sa_dir, &sa);
	load(ex_dir, &ex);
	/* from the decision on, and in generations 1 and 2 from their start: the schedule, as the
	 * analysis replays it from the process's seed (the tracer's flags ignored) */
	assert_int_equal(lp_tsample_plan_of(&sa, &plan), 1);
	assert_int_equal(plan.pick, LP_TRACE_SAMPLE_PICK_RANDOM);
	{
		struct lp_tsample_units replay;
		size_t k = 0, n_rec = 0;
		assert_int_equal(lp_tsample_units_find(&sa, &plan, 1, &replay, &err), 0);
		for (i = 0; i < sa.n_ranges; i++) {
			if (replay.stratum[i] == LP_TSAMPLE_OUTSIDE)
				continue;
			assert_true(k < 144);
			if (k >= d) {
				uint8_t want = replay.stratum[i] == LP_TSAMPLE_SKIPPED ? LP_TRACE_STAGE_SKIPPED : LP_TRACE_STAGE_RECORDED;
				assert_int_equal(st->r[k].sample, want);
				n_rec += k % 48 >= 2 && want == LP_TRACE_STAGE_RECORDED;
			}
			k++;
		}
		assert_int_equal(k, 144);
		assert_true(n_rec >= 2 * 11); /* one in each full block at least */
		lp_tsample_units_release(&replay);
	}
	assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &units, &err), 0);
	assert_int_equal(units.n_exact, 6 + n_measured);
	lp_tsample_units_release(&units);
	memset(&in, 0, sizeof(in));
	in.profile = &sa;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	in.profile = &ex;
	assert_int_equal(lp_analyze(&in, b, &err), 0);
	assert_int_equal(a->kernels.sample_exact, 6 + n_measured);
	assert_int_equal(a->kernels.sample_N, 138 - n_measured);
	/* auto's seed is the process's own (and its decision point moves with the host's timing), so
	 * this sample is a new one each run: each row within twice its 95% interval (for a normal
	 * error a miss of that size has a probability of about 1e-4 per row; the 95% coverage itself
	 * is checked in test_design_coverage and on the fixed-seed trace above) */
	for (i = 0; i < b->kernels.n_rows; i++) {
		const struct lp_kernel_row *e = &b->kernels.rows[i], *s = krow(&a->kernels, e->name);
		if (fabs(s->total_ms - e->total_ms) > (s->sampled ? 2 * s->ci_ms : 0))
			fail_msg("%s: %.4f +- %.4f ms against %.4f exact", s->name, s->total_ms, s->ci_ms, e->total_ms);
		assert_int_equal(s->calls, e->calls);
	}
	lp_analysis_release(a);
	lp_analysis_release(b);
	free(a);
	free(b);
	lp_profile_release(&ex);
	lp_profile_release(&sa);
	free(st);
}

/* A real sampled trace (tests/fixtures/trace/README.md: h100_hf_tiny_sampled): examples/hf_generate.py
 * on an H100 with every=4,first=2, 3 generations (the first a warm-up range) of 24 decode steps. */
static void test_real_sampled_trace(void **state)
{
	struct lp_profile p;
	struct lp_analysis_input in;
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf md = LP_BUF_INIT, prog = LP_BUF_INIT;
	size_t i, n_sampled = 0, n_steps = 0, within = 0;
	double step_ms[72];
	const char *line;
	(void)state;
	lp_profile_init(&p, "real");
	if (lp_trace_load(lp_test_fixture("trace/h100_hf_tiny_sampled"), &p, &err) < 0)
		fail_msg("%s", err.msg);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	assert_int_equal(a->sampling.mode, 2);
	assert_int_equal(a->sampling.every, 4);
	assert_int_equal(a->sampling.first, 2);
	assert_int_equal(a->sampling.units, 72);
	assert_int_equal(a->sampling.units_recorded, 24);
	assert_int_equal(a->sampling.toggles, 96);
	/* the warm-up generation is out of the tables: 2 measured generations of 24 steps, the first 2
	 * of each exact, 6 of the other 22 recorded (indices 2, 6, ..., 22) */
	assert_true(a->kernels.sampled && a->ops.sampled);
	assert_int_equal(a->kernels.sample_exact, 4);
	assert_int_equal(a->kernels.sample_N, 44);
	assert_int_equal(a->kernels.sample_n, 12);
	for (i = 0; i < a->kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &a->kernels.rows[i];
		if (!r->sampled)
			continue;
		n_sampled++;
		assert_true(r->ci_ms >= 0 && r->ci_ms < r->total_ms);
		assert_true(r->stage_ms[1] > 0);
	}
	assert_true(n_sampled > 10);
	assert_int_equal(lp_section_top_kernels(a, 10, &md), 0);
	assert_non_null(strstr(md.data, "(12 of 44 units) |"));
	assert_non_null(strstr(md.data, "| ~"));
	assert_non_null(strstr(md.data, "Sampled trace (Tracing mode): ~ marks estimates. Kernels were recorded in 12 of "
					 "the 44 sampled units and in all 4 units of the exact stratum"));
	/* every step's latency from the STAGE records, recorded or not, against the program's own
	 * CUDA events (3.3 ms steps: the ~50-80 us between its event and ours is 2-3% here) */
	lp_test_read(lp_test_fixture("trace/h100_hf_tiny_sampled/program.txt"), &prog);
	for (line = prog.data; (line = strstr(line, "\"step_ms\": [")) != NULL;) {
		char *end;
		line += 12;
		while (*line && *line != ']' && n_steps < 72) {
			step_ms[n_steps++] = strtod(line, &end);
			line = end;
			while (*line == ',' || *line == ' ')
				line++;
		}
	}
	assert_int_equal(n_steps, 48);   /* the 2 measured generations */
	{
		size_t k = 0;
		for (i = 0; i < p.n_ranges && k < 72; i++) {
			const struct lp_range *r = &p.ranges[i];
			double ours;
			if (strcmp(r->name, "decode_step"))
				continue;
			assert_int_equal(r->gpu_status, LP_TRACE_STAGE_GPU_EVENTS);
			if (k++ < 24)
				continue;   /* the warm-up generation: the program prints no steps for it */
			ours = (double)r->gpu_elapsed_ns / 1e6;
			within += fabs(ours - step_ms[k - 25]) <= 0.04 * step_ms[k - 25];
			assert_true(fabs(ours - step_ms[k - 25]) <= 0.07 * step_ms[k - 25]);
		}
		assert_int_equal(k, 72);
	}
	assert_true(within >= 46);   /* measured: 47 of 48 within 4%, the worst 5.7% */
	/* the timeline of measured generation 1 marks its unrecorded steps; the gaps are located in the
	 * recorded steps of both measured generations (2 x (2 exact + 6 recorded)) */
	{
		size_t k = 0, skipped = 0;
		for (i = 0; i < p.n_ranges; i++) {
			if (strcmp(p.ranges[i].name, "decode_step"))
				continue;
			skipped += k >= 24 && k < 48 && p.ranges[i].sample == LP_TRACE_STAGE_SKIPPED;
			k++;
		}
		assert_int_equal(skipped, 16);
		assert_int_equal(a->timeline.n_unrecorded, skipped);
		assert_int_equal(a->timeline.n_unit_steps, 24);
		assert_int_equal(a->waterfall[1].gaps_sampled, 1);
		assert_int_equal(a->waterfall[1].gaps_steps, 16);
	}
	lp_buf_release(&md);
	lp_buf_release(&prog);
	lp_analysis_release(a);
	free(a);
	lp_profile_release(&p);
}

/* Decode steps with no decode range around them (a serving loop): the steps are the stage's
 * iterations; the unrecorded ones have no kernels, so the stage's kernel statistics are taken over
 * the recorded ones (not scaled per step: a recorded step is one step), and the reports say so. */
static void test_steps_only(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_steps_exact", *sa_dir = LP_TEST_TMP "/sampling_steps";
	struct lp_profile ex, sa;
	struct lp_analysis_input in;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf md = LP_BUF_INIT;
	const struct lp_stage *ss, *es;
	size_t i, recorded = 0;
	char want[160];
	(void)state;
	setenv("LP_FIXTURE_STEPS_ONLY", "1", 1);
	lp_test_trace_fixture(sa_dir, "every=4,first=2,seed=7", LP_TEST_TMP "/sampling_steps.txt");
	lp_test_trace_fixture(ex_dir, "off", LP_TEST_TMP "/sampling_steps_exact.txt");
	unsetenv("LP_FIXTURE_STEPS_ONLY");
	load(sa_dir, &sa);
	load(ex_dir, &ex);
	memset(&in, 0, sizeof(in));
	in.profile = &sa;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	in.profile = &ex;
	assert_int_equal(lp_analyze(&in, b, &err), 0);
	ss = lp_stages_find(&a->stages, LP_STAGE_STEPS);
	es = lp_stages_find(&b->stages, LP_STAGE_STEPS);
	assert_non_null(ss);
	assert_non_null(es);
	assert_int_equal(ss->n_iters, 144);
	for (i = 0; i < sa.n_ranges; i++)
		recorded += !strcmp(sa.ranges[i].name, "decode_step") && sa.ranges[i].sample != 2;
	assert_true(recorded > 30 && recorded < 144);
	assert_int_equal(ss->recorded_iters, recorded);
	assert_int_equal(es->recorded_iters, 0);
	/* per step: the recorded steps' kernels, as in the exact run (one process each, same program) */
	assert_true(ss->kernel_ms.min > 0);
	assert_true(fabs(ss->kernel_ms.mean - es->kernel_ms.mean) < 0.05 * es->kernel_ms.mean);
	assert_true(ss->kernel_ms.std < 2 * es->kernel_ms.std + 1e-6);
	assert_true(fabs(ss->kernels.mean - es->kernels.mean) < 1e-9);
	assert_true(ss->gpu_ms.min > 0);
	/* the kernel table still scales to every step */
	assert_true(a->kernels.sampled);
	assert_true(fabs(a->kernels.total_ms - b->kernels.total_ms) < 0.03 * b->kernels.total_ms);
	assert_int_equal(lp_section_stages(a, &md), 0);
	snprintf(want, sizeof(want), "are over its %zu iterations whose kernels were recorded (of 144)", recorded);
	assert_non_null(strstr(md.data, want));
	lp_buf_reset(&md);
	assert_int_equal(lp_section_stages(b, &md), 0);
	assert_null(strstr(md.data, "whose kernels were recorded"));
	lp_buf_release(&md);
	lp_analysis_release(a);
	lp_analysis_release(b);
	free(a);
	free(b);
	lp_profile_release(&ex);
	lp_profile_release(&sa);
}

/* The coverage on a real decode (tests/fixtures/sampling/README.md: the per-step kernel times of an
 * exact H100 trace of examples/hf_generate.py, llama-3.2-1b shape): the schedule drawn 500 times,
 * each of the 23 kernels above 1% inside its interval in about 95% of the draws; the first tracer's
 * schedule and reading (the first step of each block, simple-random-sampling variance) over its 8
 * offsets far below (one kernel in five outside). */
static void test_real_coverage(void **state)
{
	struct lp_tsample_values v;
	struct lp_tsample_coverage c;
	struct lp_tsample_plan plan = PLAN(1, 8, 2);
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf text = LP_BUF_INIT;
	char **names = NULL;
	const char *line;
	size_t i, u = 0;
	uint32_t inside = 0, all = 0;
	(void)state;
	memset(&v, 0, sizeof(v));
	lp_test_read(lp_test_fixture("sampling/h100_hf_llama1b_units.txt"), &text);
	for (line = text.data; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
		if (!strncmp(line, "units ", 6)) {
			assert_int_equal(sscanf(line, "units %u %u %lf", &v.units, &v.units_exact, &v.units_ns), 3);
			v.n_units = v.units - v.units_exact;
			v.refs = calloc(v.n_units, sizeof(*v.refs));
			v.ordinal = calloc(v.n_units, sizeof(*v.ordinal));
			v.keys = calloc(64, sizeof(*v.keys));
			names = calloc(64, sizeof(*names));
			v.exact_part = calloc(64, sizeof(double));
			v.total = calloc(64, sizeof(double));
		} else if (!strncmp(line, "key ", 4)) {
			size_t k;
			int off = 0;
			assert_true(v.n_keys < 64);
			assert_int_equal(sscanf(line, "key %zu %lf %lf %n", &k, &v.exact_part[v.n_keys], &v.total[v.n_keys], &off), 3);
			assert_int_equal(k, v.n_keys);
			names[k] = strndup(line + off, strcspn(line + off, "\n"));
			v.keys[k] = names[k];
			v.n_keys++;
		} else if (!strncmp(line, "unit ", 5)) {
			const char *q = line + 5;
			char *end;
			size_t k;
			if (!v.val)
				v.val = calloc(v.n_units * v.n_keys, sizeof(double));
			assert_true(u < v.n_units);
			v.refs[u].chain = (uint32_t)strtoul(q, &end, 10);
			v.refs[u].index = (uint32_t)strtoul(end, &end, 10);
			v.ordinal[u] = (uint32_t)strtoul(end, &end, 10);
			for (k = 0; k < v.n_keys; k++)
				v.val[u * v.n_keys + k] = strtod(end, &end);
			u++;
		}
	}
	assert_int_equal(u, 252);
	assert_int_equal(v.n_keys, 23);
	/* the values add up to each kernel's total */
	for (i = 0; i < v.n_keys; i++) {
		double sum = v.exact_part[i];
		for (u = 0; u < v.n_units; u++)
			sum += v.val[u * v.n_keys + i];
		assert_true(fabs(sum - v.total[i]) < 0.5);
	}
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
	for (i = 0; i < v.n_keys; i++)
		free(names[i]);
	free(names);
	lp_tsample_values_release(&v);
	lp_buf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_t_quantiles),
		cmocka_unit_test(test_estimate_by_hand),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_design_by_hand),
		cmocka_unit_test(test_design_coverage),
		cmocka_unit_test(test_fixture_traces),
		cmocka_unit_test(test_auto_fixture),
		cmocka_unit_test(test_steps_only),
		cmocka_unit_test(test_real_coverage),
		cmocka_unit_test(test_real_sampled_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
