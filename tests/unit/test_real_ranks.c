/* test_real_ranks.c: the per-rank view on real GPU traces (tests/fixtures/trace/README.md) against
 * the programs' own accounts written beside them (own.<pid>.json: kernels launched, per-iteration
 * latency, all_reduce time), from tests/gpu_progs/ranks/ on an H100:
 *   h100_ranks_gloo:  2 torchrun ranks on one GPU, gloo all_reduce on the CPU in an NVTX range;
 *   h100_ranks_spawn: 2 multiprocessing-spawn workers (no launcher variables).
 * Checks: each rank's kernel count equals its process's own count exactly; iteration k of every
 * rank is the program's iteration k (latencies within 0.1 ms of the program's host clock, which
 * is read inside the range); the skew per instance and the wait in the all_reduce match the
 * programs' numbers within 0.05 ms. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/ranks.h"
#include "parse/trace_read.h"

struct own {
	json_t *j[2];
};

static void load_own(const char *dir, const struct lp_rank_view *v, struct own *o)
{
	size_t r;
	for (r = 0; r < 2; r++) {
		char path[1024];
		json_error_t je;
		if (snprintf(path, sizeof(path), "%s/own.%u.json", dir, (unsigned)v->ranks[r].pids[0]) >= (int)sizeof(path))
			fail_msg("fixture path too long: %s", dir);
		o->j[r] = json_load_file(path, 0, &je);
		if (!o->j[r])
			fail_msg("%s: %s", path, je.text);
	}
}

static double iter_num(const json_t *own, size_t k, const char *key)
{
	const json_t *it = json_array_get(json_object_get(own, "iters"), k);
	assert_non_null(it);
	return json_number_value(json_object_get(it, key));
}

static void check(const char *fixture, int gloo)
{
	const char *dir = lp_test_fixture(fixture);
	char dirbuf[1024];
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	struct own o;
	const struct lp_rank_merged *m;
	size_t r, k;
	snprintf(dirbuf, sizeof(dirbuf), "%s", dir);
	lp_profile_init(&p, dirbuf);
	assert_int_equal(lp_trace_load(dirbuf, &p, &err), 0);
	assert_int_equal(lp_ranks_compute(&p, NULL, &v, &err), 0);
	assert_int_equal(v.n_ranks, 2);
	assert_string_equal(v.rank_source, gloo ? "RANK" : "process order");
	assert_int_equal(v.n_not_ranks, gloo ? 1 : 0);   /* torchrun's agent */
	load_own(dirbuf, &v, &o);
	for (r = 0; r < 2; r++) {
		const struct lp_rank *rk = &v.ranks[r];
		const struct lp_rank_stage *rs;
		json_t *own = o.j[r];
		if (gloo) {
			assert_int_equal(rk->rank, json_integer_value(json_object_get(own, "rank")));
			assert_int_equal(rk->world_size, 2);
			assert_int_equal(rk->local_rank, (int32_t)r);
		} else {
			assert_int_equal(rk->rank, json_integer_value(json_object_get(own, "worker")));
		}
		/* every kernel the process launched, no more, no less */
		assert_int_equal(rk->kernels, json_integer_value(json_object_get(own, "kernels")));
		assert_int_equal(rk->stages.n_stages, 1);
		rs = &rk->rstages[0];
		assert_string_equal(rs->name, "prefill");
		assert_int_equal(rs->n_iters, json_array_size(json_object_get(own, "iters")));
		for (k = 0; k < rs->n_iters; k++) {
			double host = iter_num(own, k, "host_ms");
			if (fabs(rs->lat_iter_ms[k] - host) > 0.1)
				fail_msg("%s rank %zu iteration %zu: %.3f ms, the program says %.3f", fixture, r, k,
					rs->lat_iter_ms[k], host);
		}
	}
	assert_int_equal(v.n_merged, 1);
	m = &v.merged[0];
	assert_int_equal(m->iters, 5);
	for (k = 0; k < m->iters; k++) {
		double h0 = iter_num(o.j[0], k, "host_ms"), h1 = iter_num(o.j[1], k, "host_ms");
		if (fabs(m->skew_ms[k] - fabs(h0 - h1)) > 0.05)
			fail_msg("%s iteration %zu: skew %.3f ms, the programs say %.3f", fixture, k, m->skew_ms[k],
				fabs(h0 - h1));
		if (fabs(h0 - h1) > 0.05)   /* where the programs tell the ranks apart, the same rank is slowest */
			assert_int_equal(m->slowest_of[k], h0 > h1 ? v.ranks[0].rank : v.ranks[1].rank);
	}
	if (gloo) {
		/* the wait in the all_reduce: each rank's time there minus the faster one's */
		for (r = 0; r < 2; r++) {
			double want = 0;
			for (k = 0; k < 5; k++) {
				double c0 = iter_num(o.j[0], k, "coll_ms"), c1 = iter_num(o.j[1], k, "coll_ms");
				double mine = r == 0 ? c0 : c1, other = r == 0 ? c1 : c0;
				want += mine > other ? mine - other : 0;
			}
			if (fabs(v.ranks[r].rstages[0].wait_ms - want / 5) > 0.05)
				fail_msg("rank %zu waits %.3f ms per iteration, the programs say %.3f", r,
					v.ranks[r].rstages[0].wait_ms, want / 5);
		}
		/* gloo's all_reduce on the CPU hides behind no GPU work here: all of it is exposed */
		assert_true(m->exposed_ms > 0 && fabs(m->exposed_ms - m->comm_ms) < 1e-9);
	} else {
		assert_true(m->comm_ms == 0 && v.ranks[0].wait_ms == 0);
		assert_int_equal(m->slowest_rank, 1);   /* worker 1 runs 80 more kernels per iteration */
	}
	json_decref(o.j[0]);
	json_decref(o.j[1]);
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

static void test_gloo(void **state)
{
	(void)state;
	check("trace/h100_ranks_gloo", 1);
}

static void test_spawn(void **state)
{
	(void)state;
	check("trace/h100_ranks_spawn", 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gloo),
		cmocka_unit_test(test_spawn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
