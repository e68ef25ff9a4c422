/* test_ranks.c: several processes of one job (src/analyze/ranks.c): grouping processes into ranks,
 * per-rank stage tables, alignment by stage instance, skew and the slowest rank, communication
 * against compute (NCCL kernels on their own stream overlapping compute, P2P copies, host
 * collectives), the wait in collectives, the advice. Profiles are built in memory with known
 * times; test_ranks_trace.c does the same through trace files. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "analyze/ranks.h"
#include "analyze/analysis.h"
#include "parse/kname.h"
#include "report/ranks_report.h"
#include "report/reports.h"

#define US 1000ull
#define MS 1000000ull

static int near(double a, double b)
{
	return fabs(a - b) < 1e-6 * (fabs(b) + 1);
}

static void proc(struct lp_profile *p, uint32_t pid, int32_t rank, uint64_t start_ns)
{
	struct lp_process *pr = lp_profile_add_process(p);
	assert_non_null(pr);
	pr->pid = pid;
	pr->rank = rank;
	pr->world_size = rank >= 0 ? 2 : -1;
	pr->local_rank = rank;
	pr->rank_source = rank >= 0 ? "RANK" : "";
	pr->start_ns = start_ns;
}

static int32_t R(struct lp_profile *p, uint32_t pid, int32_t parent, const char *name, uint64_t s, uint64_t e)
{
	int32_t r = lp_test_range(p, parent, "", name, s, e);
	p->ranges[r].pid = pid;
	p->ranges[r].tid = pid;
	return r;
}

static void K(struct lp_profile *p, uint32_t pid, int32_t range, const char *name, uint32_t stream, uint64_t s,
	uint64_t e)
{
	struct lp_kernel *k = lp_test_kernel(p, range, name, s, e);
	k->pid = pid;
	k->stream = stream;
	k->launch_ns = p->ranges[range].start_ns + 1;
}

static const char nccl[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

/* Rank r (pid 100 + r), iteration k of `prefill` starting at t = k * 20 ms + r * 50 us:
 * rank 0: range [t, t+4]; compute on stream 7 [t, t+3]; NCCL on stream 9 [t+2, t+4]
 *         -> comm 2, compute 3, overlap 1, exposed 1; latency 4
 * rank 1: range [t, t+6]; compute [t, t+5]; NCCL [t+5, t+6] -> comm 1, overlap 0, exposed 1;
 *         latency 6 (one iteration: 7, see `slow_iter`)
 * The NCCL kernel lasts 2 ms on rank 0 and 1 ms on rank 1: rank 0 waited 1 ms for rank 1. */
static void build_two(struct lp_profile *p, int iters, int extra_iter_rank1, int slow_iter)
{
	int r, k;
	proc(p, 99, -1, 0);               /* the launcher: no rank, no work */
	proc(p, 100, 0, 1 * MS);
	proc(p, 101, 1, 2 * MS);
	for (r = 0; r < 2; r++) {
		uint32_t pid = 100 + (uint32_t)r;
		int n = iters + (r == 1 ? extra_iter_rank1 : 0);
		for (k = 0; k < n; k++) {
			uint64_t t = 10 * MS + (uint64_t)k * 20 * MS + (uint64_t)r * 50 * US;
			uint64_t lat = r == 0 ? 4 * MS : (k == slow_iter ? 7 * MS : 6 * MS);
			int32_t it = R(p, pid, -1, "prefill", t, t + lat);
			if (r == 0) {
				K(p, pid, it, "gemm_kernel", 7, t, t + 3 * MS);
				K(p, pid, it, nccl, 9, t + 2 * MS, t + 4 * MS);
			} else {
				K(p, pid, it, "gemm_kernel", 7, t, t + lat - 1 * MS);
				K(p, pid, it, nccl, 9, t + lat - 1 * MS, t + lat);
			}
		}
	}
}

static const struct lp_stage_rules no_skip = { { NULL }, 0, NULL, 0 };

static void test_names(void **state)
{
	(void)state;
	assert_true(lp_kname_is_comm(nccl));
	assert_true(lp_kname_is_comm("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
	assert_true(lp_kname_is_comm("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(...)"));
	assert_true(lp_kname_is_comm("c10d::symmetric_memory::one_shot_all_reduce_kernel<float>"));
	assert_true(lp_kname_is_comm("tensorrt_llm::kernels::allReduceTwoShot"));
	assert_false(lp_kname_is_comm("void at::native::reduce_kernel<512, 1>(...)"));
	assert_false(lp_kname_is_comm("sm90_xmma_gemm_bf16bf16_bf16f32"));
	assert_false(lp_kname_is_comm("elementwise_kernel"));
	assert_false(lp_kname_is_comm(NULL));
	assert_true(lp_comm_range_is("all_reduce"));
	assert_true(lp_comm_range_is("allgather"));
	assert_true(lp_comm_range_is("nccl:all_reduce"));
	assert_true(lp_comm_range_is("gloo:broadcast"));
	assert_true(lp_comm_range_is("barrier"));
	assert_true(lp_comm_range_is("send"));
	assert_false(lp_comm_range_is("sender"));
	assert_false(lp_comm_range_is("prefill"));
	assert_false(lp_comm_range_is("decode_step"));
}

static void test_two_ranks(void **state)
{
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_rank_merged *m;
	const struct lp_rank_stage *s0, *s1;
	size_t i;
	(void)state;
	lp_profile_init(&p, "two");
	build_two(&p, 4, 0, 2);
	assert_int_equal(lp_ranks_compute(&p, &no_skip, &v, &err), 0);
	assert_int_equal(v.n_ranks, 2);
	assert_int_equal(v.n_processes, 3);
	assert_int_equal(v.n_not_ranks, 1);     /* the launcher */
	assert_string_equal(v.rank_source, "RANK");
	assert_int_equal(v.ranks[0].rank, 0);
	assert_int_equal(v.ranks[1].rank, 1);
	assert_int_equal(v.ranks[0].pids[0], 100);
	assert_int_equal(v.ranks[1].pids[0], 101);
	assert_int_equal(lp_rank_of_pid(&v, 101), 1);
	assert_int_equal(lp_rank_of_pid(&v, 99), -1);
	/* per-rank kernel counts and devices */
	for (i = 0; i < 2; i++) {
		assert_int_equal(v.ranks[i].kernels, 8);
		assert_int_equal(v.ranks[i].comm_kernels, 4);
		assert_int_equal(v.ranks[i].n_devices, 1);
		assert_int_equal(v.ranks[i].stages.n_stages, 1);
		assert_int_equal(v.ranks[i].stages.stages[0].n_iters, 4);
	}
	/* communication split, per iteration */
	s0 = &v.ranks[0].rstages[0];
	s1 = &v.ranks[1].rstages[0];
	assert_string_equal(s0->name, "prefill");
	assert_true(near(s0->comm_ms, 2.0));
	assert_true(near(s0->compute_ms, 3.0));
	assert_true(near(s0->overlap_ms, 1.0));
	assert_true(near(s0->exposed_ms, 1.0));
	assert_true(near(s1->comm_ms, 1.0));
	assert_true(near(s1->overlap_ms, 0.0));
	assert_true(near(s1->exposed_ms, 1.0));
	assert_true(near(s1->compute_ms, (5.0 * 3 + 6.0) / 4));
	/* rank 0 waits 1 ms in each collective, rank 1 none */
	assert_true(near(s0->wait_ms, 1.0));
	assert_true(near(s1->wait_ms, 0.0));
	assert_true(near(v.ranks[0].wait_ms, 4.0));
	assert_true(near(v.ranks[1].wait_ms, 0.0));
	assert_int_equal(v.ranks[0].collectives, 4);
	assert_false(v.collectives_mismatch);
	/* the merged view */
	assert_int_equal(v.n_merged, 1);
	m = &v.merged[0];
	assert_string_equal(m->name, "prefill");
	assert_int_equal(m->n_ranks, 2);
	assert_int_equal(m->iters, 4);
	assert_int_equal(m->iters_max, 4);
	assert_int_equal(m->slowest_rank, 1);
	assert_int_equal(m->slowest_count, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(m->slowest_of[i], 1);
		assert_true(near(m->skew_ms[i], i == 2 ? 3.0 : 2.0));
	}
	assert_true(near(m->skew_mean_ms, 9.0 / 4));
	assert_true(near(m->skew_max_ms, 3.0));
	assert_int_equal(m->skew_max_iter, 2);
	assert_true(near(m->lat_mean_ms, (4.0 * 4 + 6.0 * 3 + 7.0) / 8));
	assert_true(near(m->exposed_ms, 1.0));
	assert_true(near(m->exposed_frac, 1.0 / m->lat_mean_ms));
	/* both rules fire: 1 ms exposed of ~5.1 ms, 2.25 ms skew */
	assert_int_equal(v.n_advice, 2);
	assert_string_equal(v.advice[0].rule, "exposed-communication");
	assert_non_null(strstr(v.advice[0].text, "prefill"));
	assert_string_equal(v.advice[1].rule, "rank-skew");
	assert_non_null(strstr(v.advice[1].text, "rank 1 is the slowest in 4 of 4 iterations"));
	assert_non_null(strstr(v.advice[1].text, "rank 0 waits longest"));
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

/* Rank 1 ran one more iteration: the first four are aligned and the mismatch is visible. */
/* Decode steps as their own aligned rows: rank r, 2 iterations of decode_all with 3 decode_step
 * each, step j of iteration k at t = 10 ms + k * 20 ms + j * 5 ms:
 * rank 0: step [t, t+3]; compute [t, t+2]; NCCL [t+1, t+3] -> comm 2, overlapped 1, exposed 1
 * rank 1: step [t, t+2+0.5j]; compute [t, t+1.5+0.5j]; NCCL [t+1.5+0.5j, t+2+0.5j] -> comm 0.5,
 *         exposed 0.5; latency 2, 2.5, 3 (step 2 is as slow as rank 0's) */
static void test_decode_steps(void **state)
{
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_rank_merged *m;
	int r, k, j;
	(void)state;
	lp_profile_init(&p, "steps");
	proc(&p, 100, 0, 1 * MS);
	proc(&p, 101, 1, 2 * MS);
	for (r = 0; r < 2; r++) {
		uint32_t pid = 100 + (uint32_t)r;
		for (k = 0; k < 2; k++) {
			uint64_t t0 = 10 * MS + (uint64_t)k * 20 * MS;
			int32_t da = R(&p, pid, -1, "decode_all", t0, t0 + 15 * MS);
			for (j = 0; j < 3; j++) {
				uint64_t t = t0 + (uint64_t)j * 5 * MS;
				uint64_t lat = r == 0 ? 3 * MS : 2 * MS + (uint64_t)j * 500 * US;
				int32_t st = R(&p, pid, da, "decode_step", t, t + lat);
				K(&p, pid, st, "gemv_kernel", 7, t, t + lat - (r == 0 ? 1 * MS : 500 * US));
				K(&p, pid, st, nccl, 9, r == 0 ? t + 1 * MS : t + lat - 500 * US, t + lat);
			}
		}
	}
	assert_int_equal(lp_ranks_compute(&p, &no_skip, &v, &err), 0);
	assert_int_equal(v.n_merged, 2);
	assert_string_equal(v.merged[0].name, "decode_all");
	assert_null(v.merged[0].step_of);
	m = &v.merged[1];
	assert_string_equal(m->name, "decode_step");
	assert_string_equal(m->step_of, "decode_all");
	assert_int_equal(m->iters, 6);
	for (r = 0; r < 2; r++) {
		const struct lp_rank_stage *rs = &v.ranks[r].rstages[1];
		assert_int_equal(v.ranks[r].n_rstages, 2);
		assert_int_equal(rs->n_iters, 6);
		assert_int_equal(rs->comm_kernels, 6);
		assert_true(near(rs->comm_ms, r == 0 ? 2 : 0.5));
		assert_true(near(rs->overlap_ms, r == 0 ? 1 : 0));
		assert_true(near(rs->exposed_ms, r == 0 ? 1 : 0.5));
		assert_true(near(rs->compute_ms, r == 0 ? 2 : 2));   /* rank 1: 1.5, 2, 2.5 */
		assert_true(near(rs->kernels, 2));
		assert_true(near(rs->gpu_ms, r == 0 ? 3 : 2.5));
		assert_true(near(rs->host_ms, rs->lat_ms));
		/* the steps add up to their stage */
		assert_true(near(3 * rs->comm_ms, v.ranks[r].rstages[0].comm_ms));
		assert_true(near(3 * rs->exposed_ms, v.ranks[r].rstages[0].exposed_ms));
	}
	/* per step: skew 1, 0.5, 0 ms; rank 0 slowest, and in the tie (step 2) the lower rank */
	for (k = 0; k < 6; k++) {
		assert_true(near(m->skew_ms[k], 1.0 - 0.5 * (k % 3)));
		assert_int_equal(m->slowest_of[k], 0);
	}
	assert_true(near(m->skew_mean_ms, 0.5));
	assert_true(near(m->skew_max_ms, 1));
	/* the NCCL kernel of rank 0 lasts 2 ms, rank 1's 0.5: rank 0 waited 1.5 ms in each step */
	assert_true(near(v.ranks[0].rstages[1].wait_ms, 1.5));
	assert_true(near(v.ranks[0].rstages[0].wait_ms, 4.5));
	assert_true(near(v.ranks[1].rstages[1].wait_ms, 0));
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

static void test_mismatched_iterations(void **state)
{
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	lp_profile_init(&p, "mismatch");
	build_two(&p, 4, 1, -1);
	assert_int_equal(lp_ranks_compute(&p, &no_skip, &v, &err), 0);
	assert_int_equal(v.n_merged, 1);
	assert_int_equal(v.merged[0].iters, 4);
	assert_int_equal(v.merged[0].iters_max, 5);
	assert_true(near(v.merged[0].skew_mean_ms, 2.0));
	/* five collectives on rank 1, four on rank 0 */
	assert_true(v.collectives_mismatch);
	assert_int_equal(v.ranks[1].collectives, 4);
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

/* One process: one rank, no merged rows, no advice. */
static void test_single_process(void **state)
{
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	int32_t it;
	(void)state;
	lp_profile_init(&p, "one");
	proc(&p, 1, -1, 0);
	it = R(&p, 1, -1, "prefill", 0, 4 * MS);
	K(&p, 1, it, nccl, 9, 0, 4 * MS);
	assert_int_equal(lp_ranks_compute(&p, &no_skip, &v, &err), 0);
	assert_int_equal(v.n_ranks, 1);
	assert_string_equal(v.rank_source, "process order");
	assert_int_equal(v.n_merged, 0);
	assert_int_equal(v.n_advice, 0);
	assert_true(near(v.ranks[0].rstages[0].exposed_ms, 4.0));
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

/* Processes without a launcher rank (multiprocessing spawn): the workers are ranks by start time,
 * the parent without work is not. gloo on the CPU: the collectives are NVTX ranges, and the wait is
 * each range's duration minus the fastest rank's. A P2P copy is communication too. */
static void test_process_order_and_host_collectives(void **state)
{
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	uint32_t pids[2] = { 300, 200 };   /* 300 started first */
	int r, k;
	(void)state;
	lp_profile_init(&p, "spawn");
	proc(&p, 10, -1, 0);
	proc(&p, 200, -1, 5 * MS);
	proc(&p, 300, -1, 3 * MS);
	for (r = 0; r < 2; r++) {
		for (k = 0; k < 3; k++) {
			uint64_t t = 10 * MS + (uint64_t)k * 20 * MS;
			uint64_t ar = r == 0 ? 3 * MS : 1 * MS;    /* all_reduce: rank 0 waits 2 ms */
			int32_t it = R(&p, pids[r], -1, "iteration", t, t + 2 * MS + ar);
			int32_t c = R(&p, pids[r], it, "all_reduce", t + 2 * MS, t + 2 * MS + ar);
			int32_t inner = R(&p, pids[r], c, "barrier", t + 2 * MS, t + 2 * MS + 100 * US);
			struct lp_copy *cp = lp_profile_add_copy(&p);
			(void)inner;
			K(&p, pids[r], it, "gemm_kernel", 7, t, t + 2 * MS);
			assert_non_null(cp);
			cp->kind = LP_COPY_PTOP;
			cp->pid = pids[r];
			cp->range = it;
			cp->start_ns = t + 1 * MS;
			cp->end_ns = t + 2 * MS;
		}
	}
	assert_int_equal(lp_ranks_compute(&p, &no_skip, &v, &err), 0);
	assert_int_equal(v.n_ranks, 2);
	assert_int_equal(v.n_not_ranks, 1);
	assert_string_equal(v.rank_source, "process order");
	assert_int_equal(v.ranks[0].pids[0], 300);
	assert_int_equal(v.ranks[1].pids[0], 200);
	assert_int_equal(v.n_merged, 1);
	assert_string_equal(v.merged[0].name, "iteration");
	assert_int_equal(v.merged[0].slowest_rank, 0);
	assert_true(near(v.merged[0].skew_mean_ms, 2.0));
	/* comm = the copy [1, 2] (overlaps the kernel) + all_reduce [2, 2 + ar]; the nested barrier is
	 * not a second collective */
	assert_true(near(v.ranks[0].rstages[0].comm_ms, 4.0));
	assert_true(near(v.ranks[0].rstages[0].overlap_ms, 1.0));
	assert_true(near(v.ranks[0].rstages[0].exposed_ms, 3.0));
	assert_true(near(v.ranks[1].rstages[0].exposed_ms, 1.0));
	/* host collectives: 3 aligned; the copies are 3 more (same duration: no wait) */
	assert_int_equal(v.ranks[0].collectives, 6);
	assert_true(near(v.ranks[0].rstages[0].wait_ms, 2.0));
	assert_true(near(v.ranks[1].rstages[0].wait_ms, 0.0));
	assert_true(near(v.ranks[0].wait_ms, 6.0));
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

/* The reports' section: Markdown, HTML and summary.json from the two-rank view; nothing for one. */
static void test_report(void **state)
{
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf md = LP_BUF_INIT, html = LP_BUF_INIT;
	json_t *j, *st;
	(void)state;
	lp_profile_init(&p, "two");
	build_two(&p, 4, 1, 2);
	assert_int_equal(lp_ranks_compute(&p, &no_skip, &v, &err), 0);
	assert_true(lp_ranks_report_wanted(&v));
	assert_int_equal(lp_ranks_md(&v, &md), 0);
	assert_non_null(strstr(md.data, "## Ranks\n\n2 ranks (rank from RANK, world size 2); 1 other process without a rank (launchers) left out."));
	assert_non_null(strstr(md.data, "### Stages across ranks"));
	/* prefill: 2 ranks, 4 aligned of 5, latency, skew 2.25 / 3, slowest rank 1 in 4 of 4 */
	assert_non_null(strstr(md.data, "| prefill | 2 | 4 (up to 5) | "));
	assert_non_null(strstr(md.data, " | 2.250 | 3.000 | 1 (4 of 4) | "));
	assert_non_null(strstr(md.data, "| 0 | pid 100 | "));
	assert_non_null(strstr(md.data, "| 1 | prefill | 5 | "));
	assert_non_null(strstr(md.data, "different numbers of collectives"));
	assert_int_equal(lp_ranks_html(&v, &html), 0);
	assert_non_null(strstr(html.data, "<h2 id=\"ranks\">Ranks</h2>"));
	assert_non_null(strstr(html.data, "<td class=\"n\" data-v=\"2.25\">2.250</td>"));
	j = lp_ranks_json(&v);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "n_ranks")), 2);
	assert_true(json_is_true(json_object_get(j, "collectives_mismatch")));
	st = json_array_get(json_object_get(j, "stages"), 0);
	assert_string_equal(json_string_value(json_object_get(st, "name")), "prefill");
	assert_int_equal(json_integer_value(json_object_get(st, "slowest_rank")), 1);
	assert_int_equal(json_array_size(json_object_get(st, "skew_by_iteration_ms")), 4);
	assert_true(near(json_real_value(json_object_get(st, "skew_mean_ms")), 2.25));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "ranks"), 1), "kernels")),
		10);
	json_decref(j);
	lp_buf_release(&md);
	lp_buf_release(&html);
	lp_rank_view_release(&v);
	lp_profile_release(&p);
	/* one rank: no section */
	lp_profile_init(&p, "one");
	proc(&p, 1, -1, 0);
	assert_int_equal(lp_ranks_compute(&p, &no_skip, &v, &err), 0);
	assert_false(lp_ranks_report_wanted(&v));
	assert_int_equal(lp_ranks_md(&v, &md), 0);
	assert_int_equal(md.len, 0);
	lp_buf_release(&md);
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

/* Wired into the analysis and the reports: the two-rank profile gets the view, the advice and the
 * sections; one process gets none of them. */
static void check_reports(struct lp_profile *p, int want)
{
	struct lp_analysis_input in;
	struct lp_analysis a;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf md = LP_BUF_INIT, js = LP_BUF_INIT;
	size_t i, n_rank_advice = 0;
	memset(&in, 0, sizeof(in));
	in.profile = p;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_int_equal(a.ranks.n_ranks > 1, want);
	for (i = 0; i < a.n_advice; i++)
		if (!strcmp(a.advice[i].rule, "exposed-communication") || !strcmp(a.advice[i].rule, "rank-skew")) {
			assert_int_equal(a.advice[i].kind, LP_ADVICE_RECOMMENDATION);
			n_rank_advice++;
		}
	assert_int_equal(n_rank_advice, want ? 2 : 0);
	assert_int_equal(lp_report_report_md(&a, NULL, &md), 0);
	assert_int_equal(lp_report_summary_json(&a, &js, &err), 0);
	assert_int_equal(strstr(md.data, "\n## Ranks\n") != NULL, want);
	assert_int_equal(strstr(js.data, "\"ranks\":") != NULL, want);
	lp_buf_release(&md);
	lp_buf_release(&js);
	lp_analysis_release(&a);
}

static void test_analysis_and_reports(void **state)
{
	struct lp_profile p;
	int32_t it;
	(void)state;
	lp_profile_init(&p, "two");
	build_two(&p, 4, 0, 2);
	check_reports(&p, 1);
	lp_profile_release(&p);
	lp_profile_init(&p, "one");
	proc(&p, 1, -1, 0);
	it = R(&p, 1, -1, "prefill", 0, 4 * MS);
	K(&p, 1, it, nccl, 9, 0, 4 * MS);
	check_reports(&p, 0);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_two_ranks),
		cmocka_unit_test(test_decode_steps),
		cmocka_unit_test(test_mismatched_iterations),
		cmocka_unit_test(test_single_process),
		cmocka_unit_test(test_process_order_and_host_collectives),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_analysis_and_reports),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
