/* test_real_tp.c: the per-rank view on the real 2-GPU tensor-parallel decode of issue 18
 * (tests/fixtures/trace/h200x2_tp, README.md there: 2 H200, NCCL over NVLink, examples/tp_decode.py
 * under `llmprof run --mode light` with nsys on). The traces are stored gzipped; the test unpacks
 * them. Checks against the two independent accounts stored beside them:
 *   nsys (nsys_counts.json, from its sqlite export of the same job run again under nsys): each
 *   rank's kernel count and NCCL kernel count equal ours exactly;
 *   the program (own/tp.<rank>.<pid>.json, CUDA events): prefill latency per iteration and every
 *   decode step within 3%, the NCCL collectives it issued (2 all_reduce per layer + 1 all_gather
 *   per forward, + the final barrier) equal our communication kernels, per stage too.
 * And the merge itself: ranks lined up by iteration, skew = |latency difference| per instance,
 * comm = exposed + overlapped, NCCL waits (the rank arriving first waits). */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "analyze/analysis.h"
#include "analyze/ranks.h"
#include "analyze/stages.h"
#include "parse/kname.h"
#include "parse/trace_read.h"
#include "parse/workload_timings.h"
#include "report/ranks_report.h"
#include "report/sections.h"
#include "llmprof/trace_format.h"
#include "report/tracing_mode.h"

#define FX "trace/h200x2_tp"
#define FX_AUTO "trace/h200x2_tp_auto"

static const char *const traces[] = { "vm.684.lptrace", "vm.726.lptrace", "vm.727.lptrace", NULL };
static const char *const traces_auto[] = { "vm.3390.lptrace", "vm.3428.lptrace", "vm.3429.lptrace", NULL };

/* Unpacks fixture fx's .lptrace.gz files `names` into the scratch folder `sub`; returns it. */
static const char *unpack_from(const char *fx, const char *const *names, const char *sub)
{
	static char dir[1024];
	size_t i;
	snprintf(dir, sizeof(dir), "%s/%s", LP_TEST_TMP, sub);
	mkdir(LP_TEST_TMP, 0755);
	mkdir(dir, 0755);
	for (i = 0; names[i]; i++) {
		char src[1200], dst[1200], buf[65536];
		gzFile in;
		FILE *out;
		int n;
		snprintf(src, sizeof(src), "%s/%s.gz", lp_test_fixture(fx), names[i]);
		snprintf(dst, sizeof(dst), "%s/%s", dir, names[i]);
		in = gzopen(src, "rb");
		out = fopen(dst, "wb");
		assert_non_null(in);
		assert_non_null(out);
		while ((n = gzread(in, buf, sizeof(buf))) > 0)
			assert_int_equal(fwrite(buf, 1, (size_t)n, out), (size_t)n);
		assert_int_equal(n, 0);
		gzclose(in);
		assert_int_equal(fclose(out), 0);
	}
	return dir;
}

static const char *unpack(void)
{
	return unpack_from(FX, traces, "real_tp");
}

static json_t *load_json(const char *rel)
{
	char path[1200];
	json_error_t je;
	json_t *j;
	snprintf(path, sizeof(path), "%s/%s", lp_test_fixture(FX), rel);
	j = json_load_file(path, 0, &je);
	if (!j)
		fail_msg("%s: %s", path, je.text);
	return j;
}

static const struct lp_stage *stage_named(const struct lp_stage_set *s, const char *name)
{
	size_t i;
	for (i = 0; i < s->n_stages; i++)
		if (!strcmp(s->stages[i].name, name))
			return &s->stages[i];
	fail_msg("no stage %s", name);
	return NULL;
}

static void within(double got, double want, double frac, const char *what, size_t r, size_t k)
{
	if (getenv("LP_TEST_VERBOSE"))
		print_message("rank %zu %s %zu: %.4f %.4f %+.2f%%\n", r, what, k, got, want, 100.0 * (got - want) / want);
	if (fabs(got - want) > frac * want)
		fail_msg("rank %zu %s %zu: llmprof %.4f ms, the program's CUDA events %.4f ms (%+.2f%%)", r, what, k, got,
			want, 100.0 * (got - want) / want);
}

static void test_tp_decode(void **state)
{
	const char *dir = unpack();
	char dirbuf[1024];
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	json_t *nsys = load_json("nsys_counts.json");
	size_t r, k, j;
	(void)state;
	snprintf(dirbuf, sizeof(dirbuf), "%s", dir);
	lp_profile_init(&p, dirbuf);
	assert_int_equal(lp_trace_load(dirbuf, &p, &err), 0);
	assert_int_equal(lp_ranks_compute(&p, NULL, &v, &err), 0);
	assert_int_equal(v.n_ranks, 2);
	assert_string_equal(v.rank_source, "RANK");
	assert_int_equal(v.world_size, 2);
	assert_int_equal(v.n_not_ranks, 1);          /* torchrun's agent */
	assert_false(v.collectives_mismatch);
	for (r = 0; r < 2; r++) {
		const struct lp_rank *rk = &v.ranks[r];
		const struct lp_stage *pre, *dec;
		char rel[128];
		json_t *own, *its, *ns = NULL;
		size_t nfwd, layers, per_fwd;
		uint64_t nccl_named = 0;
		assert_int_equal(rk->rank, (int32_t)r);
		assert_int_equal(rk->n_devices, 1);
		assert_int_equal(rk->devices[0], (int32_t)r);   /* one GPU per rank */
		/* nsys's own count of the same program's kernels on that GPU */
		for (j = 0; j < json_array_size(nsys); j++)
			if (json_integer_value(json_object_get(json_array_get(nsys, j), "device")) == rk->devices[0])
				ns = json_array_get(nsys, j);
		assert_non_null(ns);
		assert_int_equal(rk->kernels, json_integer_value(json_object_get(ns, "kernels")));
		assert_int_equal(rk->comm_kernels, json_integer_value(json_object_get(ns, "nccl_kernels")));
		for (j = 0; j < p.n_kernels; j++)
			if (lp_rank_of_pid(&v, p.kernels[j].pid) == (int)r && !strncmp(p.kernels[j].name, "nccl", 4))
				nccl_named++;
		assert_int_equal(rk->comm_kernels, nccl_named);   /* every communication kernel is NCCL's */

		snprintf(rel, sizeof(rel), "own/tp.%zu.%u.json", r, (unsigned)rk->pids[0]);
		own = load_json(rel);
		its = json_object_get(own, "iterations");
		layers = (size_t)json_integer_value(json_object_get(own, "layers"));
		per_fwd = (size_t)json_integer_value(json_object_get(own, "collectives_per_forward"));
		assert_int_equal(per_fwd, 2 * layers + 1);
		/* the collectives it issued, + dist.barrier()'s all_reduce at the end */
		assert_int_equal(rk->comm_kernels, json_integer_value(json_object_get(own, "collectives_total")) + 1);
		/* lined up across the ranks: the measured ones (not under warm-up) and the barrier; NCCL's own
		 * `ncclAllReduce` NVTX ranges around each enqueue are not collectives of their own */
		assert_int_equal(rk->collectives, json_integer_value(json_object_get(own, "collectives_total")) -
			json_integer_value(json_object_get(own, "collectives_warmup")) + 1);

		pre = stage_named(&rk->stages, "prefill");
		dec = stage_named(&rk->stages, "decode_all");
		assert_int_equal(pre->n_iters, json_array_size(its));
		assert_int_equal(dec->n_iters, json_array_size(its));
		nfwd = (size_t)json_integer_value(json_object_get(own, "new_tokens"));
		assert_int_equal(dec->n_step_lat, nfwd * json_array_size(its));
		{
			double ours = 0, theirs = 0;
			for (k = 0; k < pre->n_iters; k++) {
				const json_t *it = json_array_get(its, k);
				const json_t *steps = json_object_get(it, "step_ms");
				within((double)pre->iters[k].latency_ns / 1e6,
					json_number_value(json_object_get(it, "prefill_ms")), 0.03, "prefill iteration", r, k);
				for (j = 0; j < nfwd; j++) {
					double a = dec->step_lat_ms[k * nfwd + j], b = json_number_value(json_array_get(steps, j));
					/* each step: within 0.1 ms (the events and the range are a few Python calls apart) */
					within(a, b, 0.1 / b, "decode step", r, k * nfwd + j);
					ours += a;
					theirs += b;
				}
			}
			within(ours / (double)dec->n_step_lat, theirs / (double)dec->n_step_lat, 0.03, "mean decode step", r, 0);
		}
		/* prefill, decode_all, and decode_all's steps as a row of their own */
		assert_int_equal(rk->n_rstages, 3);
		assert_string_equal(rk->rstages[2].name, "decode_step");
		assert_string_equal(rk->rstages[2].step_of, "decode_all");
		assert_null(rk->rstages[1].step_of);
		assert_int_equal(rk->rstages[2].n_iters, dec->n_step_lat);
		for (k = 0; k < dec->n_step_lat; k++)
			assert_true(rk->rstages[2].lat_iter_ms[k] == dec->step_lat_ms[k]);
		/* the steps partition the decode: their communication adds up to the stage's */
		assert_true(fabs(rk->rstages[2].comm_ms * (double)nfwd - rk->rstages[1].comm_ms) < 1e-3);
		assert_true(fabs(rk->rstages[2].exposed_ms * (double)nfwd - rk->rstages[1].exposed_ms) < 1e-3);
		/* host time within the latency, give or take the microseconds between the host's push
		 * and the GPU reaching it (latency starts at the tracer's push mark when it has one) */
		assert_true(rk->rstages[2].host_ms > 0 && rk->rstages[2].host_ms <= rk->rstages[2].lat_ms + 0.005);
		assert_true(rk->rstages[2].gpu_ms > 0 && rk->rstages[2].gpu_ms < rk->rstages[2].lat_ms);
		for (k = 0; k < rk->n_rstages; k++) {
			const struct lp_rank_stage *rs = &rk->rstages[k];
			size_t fwd = !strcmp(rs->name, "decode_all") ? nfwd : 1;
			/* the communication kernels of each iteration are its forwards' collectives */
			assert_int_equal(rs->comm_kernels, rs->n_iters * fwd * per_fwd);
			assert_true(rs->comm_ms > 0 && rs->comm_ms < rs->lat_ms);
			assert_true(fabs(rs->exposed_ms + rs->overlap_ms - rs->comm_ms) < 1e-6);
			/* tp_decode.py waits for each all_reduce before the next layer: nothing hides it */
			assert_true(rs->exposed_ms > 0.9 * rs->comm_ms);
			assert_true(rs->wait_ms >= 0 && rs->wait_ms <= rs->comm_ms + 1e-9);
		}
		json_decref(own);
	}
	/* the merge: iteration k (step k) of both ranks, skew = |difference| */
	assert_int_equal(v.n_merged, 3);
	for (k = 0; k < v.n_merged; k++) {
		const struct lp_rank_merged *m = &v.merged[k];
		const struct lp_rank_stage *a = &v.ranks[0].rstages[k], *b = &v.ranks[1].rstages[k];
		double mean = 0, mx = 0;
		assert_string_equal(m->name, a->name);
		assert_string_equal(m->name, b->name);
		assert_int_equal(m->iters, k == 2 ? 32 : 2);
		for (j = 0; j < m->iters; j++) {
			double d = fabs(a->lat_iter_ms[j] - b->lat_iter_ms[j]);
			assert_true(fabs(m->skew_ms[j] - d) < 1e-9);
			assert_int_equal(m->slowest_of[j], a->lat_iter_ms[j] >= b->lat_iter_ms[j] ? 0 : 1);
			mean += d / (double)m->iters;
			mx = d > mx ? d : mx;
		}
		assert_true(fabs(m->skew_mean_ms - mean) < 1e-9 && fabs(m->skew_max_ms - mx) < 1e-9);
		assert_true(fabs(m->comm_ms - (a->comm_ms + b->comm_ms) / 2) < 1e-9);
		assert_true(fabs(m->exposed_ms - (a->exposed_ms + b->exposed_ms) / 2) < 1e-9);
		/* the synchronized ranks finish together: skew is small against the latency */
		assert_true(m->skew_mean_ms < 0.2 * m->lat_mean_ms);
		if (getenv("LP_TEST_VERBOSE"))
			print_message("%s: latency %.4f ms, skew mean %.4f max %.4f ms, comm %.4f overlapped %.4f exposed %.4f "
				"wait %.4f ms per iteration\n", m->name, m->lat_mean_ms, m->skew_mean_ms, m->skew_max_ms,
				m->comm_ms, m->overlap_ms, m->exposed_ms, m->wait_ms);
	}
	json_decref(nsys);
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

/* The self-check of a job of several ranks: tp_decode.py prints rank 0's own means with "rank": 0,
 * and they are compared with rank 0's stages, not with the means over both ranks (which mix in
 * rank 1's). Without "rank" the means over the ranks are what is compared, as before. */
static void test_self_check_per_rank(void **state)
{
	const char *dir = unpack();
	char dirbuf[1024], line[512], rel[128];
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_rank *r0;
	json_t *own, *its;
	double pf = 0, st = 0, pf_rank = -1, step_rank = -1;
	size_t k, j, n_st = 0;
	(void)state;
	snprintf(dirbuf, sizeof(dirbuf), "%s", dir);
	lp_profile_init(&p, dirbuf);
	assert_int_equal(lp_trace_load(dirbuf, &p, &err), 0);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_int_equal(a.ranks.n_ranks, 2);
	{
		/* the per-stage rows pool both ranks' iterations, and say so */
		struct lp_buf md = LP_BUF_INIT;
		assert_int_equal(lp_section_stages(&a, &md), 0);
		assert_non_null(strstr(md.data, "| prefill | 4 |"));
		assert_non_null(strstr(md.data, "A job of 2 ranks: each row pools"));
		lp_buf_release(&md);
	}
	r0 = &a.ranks.ranks[0];
	snprintf(rel, sizeof(rel), "own/tp.0.%u.json", (unsigned)r0->pids[0]);
	own = load_json(rel);
	its = json_object_get(own, "iterations");
	for (k = 0; k < json_array_size(its); k++) {
		const json_t *steps = json_object_get(json_array_get(its, k), "step_ms");
		pf += json_number_value(json_object_get(json_array_get(its, k), "prefill_ms")) / (double)json_array_size(its);
		for (j = 0; j < json_array_size(steps); j++, n_st++)
			st += json_number_value(json_array_get(steps, j));
	}
	st /= (double)n_st;
	json_decref(own);
	for (k = 0; k < r0->n_rstages; k++) {
		if (!strcmp(r0->rstages[k].name, "prefill"))
			pf_rank = r0->rstages[k].lat_ms;
		if (r0->rstages[k].step_of)
			step_rank = r0->rstages[k].lat_ms;
	}
	assert_true(pf_rank > 0 && step_rank > 0);
	lp_analysis_release(&a);

	snprintf(line, sizeof(line), "{\"summary\": true, \"rank\": 0, \"prefill_ms\": %.6f, \"decode_ms_per_step\": %.6f}\n",
		pf, st);
	lp_workload_timings_parse(line, strlen(line), &in.own);
	assert_int_equal(in.own.rank, 0);
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_string_equal(a.check_rank_label, "rank 0");
	assert_int_equal(a.n_checks, 2);
	assert_string_equal(a.checks[0].what, "time to first token (ms)");
	assert_true(a.checks[0].ours == pf_rank);
	assert_string_equal(a.checks[1].what, "decode ms per step");
	assert_true(a.checks[1].ours == step_rank);
	for (k = 0; k < a.n_checks; k++)   /* issue 18: within 3% of the program's CUDA events */
		assert_true(fabs(a.checks[k].diff) < 0.03);
	assert_false(a.check_failed);
	lp_analysis_release(&a);

	/* no "rank": the means over the ranks */
	snprintf(line, sizeof(line), "{\"summary\": true, \"prefill_ms\": %.6f}\n", pf);
	lp_workload_timings_parse(line, strlen(line), &in.own);
	assert_int_equal(in.own.rank, -1);
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_string_equal(a.check_rank_label, "");
	assert_int_equal(a.n_checks, 1);
	assert_true(a.checks[0].ours == a.ttft_ms.value);
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

/* The same job under the tracer's default, trace.sample=auto (tests/fixtures/trace/h200x2_tp_auto,
 * run 37): torchrun's agent wrote a SAMPLING record too (exact, no unit: it runs no model), and
 * the reports took it for the run's mode: "Exact: every launch traced (... nothing to decide on)"
 * above kernel tables scaled from both ranks' samples. The tracing mode is the ranks' now, their
 * counts summed: the trace's two rank records say 48 units and 20 recorded each, 6 switches. */
static void test_sampled_ranks(void **state)
{
	char dirbuf[1024];
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf md = LP_BUF_INIT;
	json_t *o;
	size_t k, agent = 0;
	(void)state;
	snprintf(dirbuf, sizeof(dirbuf), "%s", unpack_from(FX_AUTO, traces_auto, "real_tp_auto"));
	lp_profile_init(&p, dirbuf);
	assert_int_equal(lp_trace_load(dirbuf, &p, &err), 0);
	for (k = 0; k < p.n_processes; k++)
		agent += p.processes[k].sampling.mode == 1 && p.processes[k].sampling.why == LP_TRACE_SAMPLE_WHY_AUTO_NONE;
	assert_int_equal(agent, 1);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_int_equal(a.ranks.n_ranks, 2);
	assert_int_equal(a.sampling.mode, 2);
	assert_int_equal(a.sampling.why, LP_TRACE_SAMPLE_WHY_AUTO_HIGH);
	assert_int_equal(a.sampling_processes, 2);
	assert_int_equal(a.sampling_others, 0); /* the agent decided nothing: not another mode */
	assert_int_equal(a.sampling.units, 96);
	assert_int_equal(a.sampling.units_recorded, 40);
	assert_int_equal(a.sampling.toggles, 12);
	assert_true(a.kernels.sampled);
	/* the per-rank rows: each rank recorded 4 of its 32 measured steps (the first 2 of each
	 * generation), with 75 kernels each as in the exact run of this job (h200x2_tp: 75 a step,
	 * 1200 a decode_all); the rows read 9.4 and 150 when the unrecorded steps counted as empty */
	assert_int_equal(a.ranks.steps, 64);
	assert_int_equal(a.ranks.steps_unrecorded, 56);
	for (k = 0; k < a.ranks.n_ranks; k++) {
		const struct lp_rank *rk = &a.ranks.ranks[k];
		size_t j, seen = 0;
		for (j = 0; j < rk->n_rstages; j++) {
			const struct lp_rank_stage *rs = &rk->rstages[j];
			if (rs->step_of) {
				assert_int_equal(rs->n_iters, 32);
				assert_int_equal(rs->n_recorded, 4);
				assert_true(fabs(rs->kernels - 75) < 1e-9);
				assert_true(rs->gpu_ms > 0 && rs->compute_ms > 0.2);
				seen++;
			} else if (!strcmp(rs->name, "decode_all")) {
				assert_int_equal(rs->n_unrecorded, 28);
				assert_true(fabs(rs->kernels - 1200) < 1e-9);
				seen++;
			}
		}
		assert_int_equal(seen, 2);
	}
	assert_int_equal(lp_ranks_md(&a.ranks, &md), 0);
	assert_non_null(strstr(md.data, "Sampled trace (Tracing mode): 56 of the 64 decode steps have no kernels"));
	lp_buf_release(&md);
	assert_int_equal(lp_tracing_mode_text(&a, &md), 0);
	assert_non_null(strstr(md.data, "Sampled: kernels were traced in 40 of 96 decode_step ranges of 2 processes together"));
	assert_null(strstr(md.data, "Exact"));
	lp_buf_release(&md);
	o = lp_tracing_mode_json(&a);
	assert_string_equal(json_string_value(json_object_get(o, "mode")), "sampled");
	assert_int_equal(json_integer_value(json_object_get(o, "processes")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "units")), 96);
	json_decref(o);
	/* auto's short generations (its gen=): exact, and the report says why */
	a.sampling.mode = 1;
	a.sampling.why = LP_TRACE_SAMPLE_WHY_AUTO_SHORT;
	assert_int_equal(lp_tracing_mode_text(&a, &md), 0);
	assert_non_null(strstr(md.data, "Exact: every launch traced (trace.sample=auto: 45018 launches/s, above the "
		"threshold of 5000, but the generations were foreseen to launch fewer times than its gen="));
	lp_buf_release(&md);
	o = lp_tracing_mode_json(&a);
	assert_string_equal(json_string_value(json_object_get(o, "why")), "auto_short");
	json_decref(o);
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tp_decode),
		cmocka_unit_test(test_self_check_per_rank),
		cmocka_unit_test(test_sampled_ranks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
