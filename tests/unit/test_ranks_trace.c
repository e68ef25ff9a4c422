/* test_ranks_trace.c: the multi-rank path end to end on trace files written record by record here
 * (one `<host>.<pid>.lptrace` per process, as the tracer writes them, RANK records included): the
 * reader's rank fields, then the per-rank view (src/analyze/ranks.c) of a 4-rank tensor-parallel
 * step (NCCL all-reduce kernels on their own stream, overlapping the end of each rank's compute,
 * all ending when the slowest rank arrives) and of 2 ranks with host (gloo) collectives whose
 * latencies differ; a launcher process without a rank is left out. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/ranks.h"
#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"

#define US 1000ull
#define MS 1000000ull
#define T0 1700000000000000000ull

static int near(double a, double b)
{
	return fabs(a - b) < 1e-6 * (fabs(b) + 1);
}

/* ---- a tiny trace writer ---- */

struct tw {
	struct lp_buf b;
	uint32_t pid, tid;
	uint32_t next_sid, next_corr;
	uint64_t next_id;
	uint64_t stack[16];
	int depth;
};

static void w_rec(struct tw *w, uint16_t type, const void *p, size_t n, const void *extra, size_t en)
{
	struct lp_trace_rec_header h = { type, 0, (uint32_t)(n + en) };
	lp_buf_add(&w->b, &h, sizeof(h));
	lp_buf_add(&w->b, p, n);
	if (en)
		lp_buf_add(&w->b, extra, en);
}

static uint32_t w_str(struct tw *w, const char *s)
{
	struct lp_trace_string r = { ++w->next_sid, (uint32_t)strlen(s) };
	w_rec(w, LP_TREC_STRING, &r, sizeof(r), s, r.len);
	return r.sid;
}

/* Preamble, PROCESS and (rank >= 0) RANK records. */
static void w_begin(struct tw *w, uint32_t pid, uint32_t ppid, int32_t rank, int32_t world)
{
	struct lp_trace_preamble pre;
	struct lp_trace_process pr;
	struct lp_buf empty = LP_BUF_INIT;
	memset(w, 0, sizeof(*w));
	w->b = empty;
	w->pid = pid;
	w->tid = pid;
	w->next_id = 1;
	memcpy(pre.magic, LP_TRACE_MAGIC, 8);
	pre.version_major = LP_TRACE_VERSION_MAJOR;
	pre.version_minor = LP_TRACE_VERSION_MINOR;
	pre.flags = 0;
	lp_buf_add(&w->b, &pre, sizeof(pre));
	memset(&pr, 0, sizeof(pr));
	pr.pid = pid;
	pr.ppid = ppid;
	pr.start_ns = T0 + pid;
	pr.clock = LP_TRACE_CLOCK_REALTIME;
	pr.host_sid = w_str(w, "node7");
	pr.cmdline_sid = w_str(w, rank >= 0 ? "python3 tp.py" : "torchrun --nproc-per-node 4 tp.py");
	w_rec(w, LP_TREC_PROCESS, &pr, sizeof(pr), NULL, 0);
	if (rank >= 0) {
		struct lp_trace_rank rk;
		rk.rank = rank;
		rk.local_rank = rank;
		rk.world_size = world;
		rk.local_world_size = world;
		rk.source_sid = w_str(w, "RANK");
		rk.visible_devices_sid = w_str(w, "0,1,2,3");
		w_rec(w, LP_TREC_RANK, &rk, sizeof(rk), NULL, 0);
	}
}

static void w_push(struct tw *w, const char *name, uint64_t ts)
{
	struct lp_trace_nvtx r;
	memset(&r, 0, sizeof(r));
	r.event = LP_TRACE_NVTX_PUSH;
	r.tid = w->tid;
	r.name_sid = w_str(w, name);
	r.id = w->next_id++;
	r.ts_ns = ts;
	w->stack[w->depth++] = r.id;
	w_rec(w, LP_TREC_NVTX, &r, sizeof(r), NULL, 0);
}

static void w_pop(struct tw *w, uint64_t ts)
{
	struct lp_trace_nvtx r;
	memset(&r, 0, sizeof(r));
	r.event = LP_TRACE_NVTX_POP;
	r.tid = w->tid;
	r.id = w->stack[--w->depth];
	r.ts_ns = ts;
	w_rec(w, LP_TREC_NVTX, &r, sizeof(r), NULL, 0);
}

/* A kernel launched now (inside the innermost open range) on `stream`, running [s, e]. */
static void w_kernel(struct tw *w, const char *name, uint32_t device, uint32_t stream, uint64_t launch, uint64_t s,
	uint64_t e)
{
	struct lp_trace_launch l;
	struct lp_trace_kernel k;
	memset(&l, 0, sizeof(l));
	l.correlation_id = ++w->next_corr;
	l.tid = w->tid;
	l.range_id = w->depth ? w->stack[w->depth - 1] : 0;
	l.ts_ns = launch;
	l.api = 2;
	l.kind = LP_TRACE_LAUNCH_KERNEL;
	w_rec(w, LP_TREC_LAUNCH, &l, sizeof(l), NULL, 0);
	memset(&k, 0, sizeof(k));
	k.name_sid = w_str(w, name);
	k.correlation_id = l.correlation_id;
	k.device = device;
	k.stream = stream;
	k.start_ns = s;
	k.end_ns = e;
	k.grid[0] = k.grid[1] = k.grid[2] = 1;
	k.block[0] = 128;
	k.block[1] = k.block[2] = 1;
	w_rec(w, LP_TREC_KERNEL, &k, sizeof(k), NULL, 0);
}

static void w_end(struct tw *w, const char *dir)
{
	char path[1024];
	struct lp_trace_end e = { T0 + 10000 * MS, LP_TRACE_END_EXIT, 0 };
	w_rec(w, LP_TREC_END, &e, sizeof(e), NULL, 0);
	snprintf(path, sizeof(path), "%s/node7.%u.lptrace", dir, (unsigned)w->pid);
	{
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(w->b.data, 1, w->b.len, f), w->b.len);
		assert_int_equal(fclose(f), 0);
	}
	lp_buf_release(&w->b);
}

static const char nccl[] = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

/* 4 ranks (pids 401..404, device = rank), a launcher (pid 400). Iteration k (a warm-up first, then
 * 3 measured) of `prefill` starts at t = T0 + 100 ms + k * 20 ms on every rank; rank r computes on
 * stream 7 for c_r = 2 + r ms; its NCCL all-reduce on stream 13 is launched to start 0.5 ms before
 * its compute ends and ends for everyone at t + 6 ms (1 ms after the slowest rank, rank 3, arrives);
 * the range pops then. Per iteration: latency 6 ms on every rank (no skew: the collective lines
 * them up), rank r waits 3 - r ms in the collective, comm = 4.5 - r, overlap 0.5, exposed 4 - r. */
static void write_tp4(const char *dir)
{
	struct tw w;
	int r, k;
	w_begin(&w, 400, 1, -1, -1);
	w_end(&w, dir);
	for (r = 0; r < 4; r++) {
		w_begin(&w, 401 + (uint32_t)r, 400, r, 4);
		for (k = -1; k < 3; k++) {
			uint64_t t = T0 + 100 * MS + (uint64_t)(k + 1) * 20 * MS;
			uint64_t c = (uint64_t)(2 + r) * MS;
			if (k < 0)
				w_push(&w, "warmup", t);
			w_push(&w, "prefill", t);
			w_kernel(&w, "void at::native::vectorized_elementwise_kernel<4>(int)", (uint32_t)r, 7, t + 10 * US, t,
				t + c);
			w_kernel(&w, nccl, (uint32_t)r, 13, t + 20 * US, t + c - 500 * US, t + 6 * MS);
			w_pop(&w, t + 6 * MS);
			if (k < 0)
				w_pop(&w, t + 6 * MS);
		}
		w_end(&w, dir);
	}
}

static void test_four_ranks_from_files(void **state)
{
	const char *dir = lp_test_tmpdir("ranks_tp4");
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	(void)state;
	write_tp4(dir);
	lp_profile_init(&p, dir);
	assert_int_equal(lp_trace_load(dir, &p, &err), 0);
	assert_int_equal(p.n_processes, 5);
	/* the reader: rank fields from the RANK records, parents from PROCESS */
	for (i = 0; i < p.n_processes; i++) {
		const struct lp_process *pr = &p.processes[i];
		if (pr->pid == 400) {
			assert_int_equal(pr->rank, -1);
			assert_string_equal(pr->rank_source, "");
			continue;
		}
		assert_int_equal(pr->rank, (int32_t)(pr->pid - 401));
		assert_int_equal(pr->local_rank, pr->rank);
		assert_int_equal(pr->world_size, 4);
		assert_int_equal(pr->ppid, 400);
		assert_string_equal(pr->rank_source, "RANK");
		assert_string_equal(pr->visible_devices, "0,1,2,3");
	}
	assert_int_equal(lp_ranks_compute(&p, NULL, &v, &err), 0);
	assert_int_equal(v.n_ranks, 4);
	assert_int_equal(v.n_not_ranks, 1);
	assert_int_equal(v.world_size, 4);
	for (i = 0; i < 4; i++) {
		const struct lp_rank *rk = &v.ranks[i];
		const struct lp_rank_stage *rs = &rk->rstages[0];
		double r = (double)i;
		assert_int_equal(rk->rank, (int32_t)i);
		assert_int_equal(rk->n_pids, 1);
		assert_int_equal(rk->pids[0], 401 + i);
		assert_int_equal(rk->n_devices, 1);
		assert_int_equal(rk->devices[0], (int32_t)i);
		assert_int_equal(rk->kernels, 8);             /* warm-up included */
		assert_int_equal(rk->measured_kernels, 6);
		assert_int_equal(rk->comm_kernels, 4);
		assert_int_equal(rk->stages.n_stages, 1);
		assert_int_equal(rs->n_iters, 3);
		assert_true(near(rs->lat_ms, 6.0));
		assert_true(near(rs->comm_ms, 4.5 - r));
		assert_true(near(rs->compute_ms, 2.0 + r));
		assert_true(near(rs->overlap_ms, 0.5));
		assert_true(near(rs->exposed_ms, 4.0 - r));
		assert_true(near(rs->wait_ms, 3.0 - r));
		assert_int_equal(rs->comm_kernels, 3);
		/* the measured collectives (warm-up left out, as everywhere) */
		assert_int_equal(rk->collectives, 3);
		assert_true(near(rk->wait_ms, 3 * (3.0 - r)));
	}
	assert_false(v.collectives_mismatch);
	assert_int_equal(v.n_merged, 1);
	assert_string_equal(v.merged[0].name, "prefill");
	assert_int_equal(v.merged[0].iters, 3);
	assert_true(near(v.merged[0].skew_max_ms, 0.0));
	assert_true(near(v.merged[0].exposed_ms, 2.5));
	assert_true(near(v.merged[0].wait_ms, 1.5));
	assert_true(near(v.merged[0].exposed_frac, 2.5 / 6.0));
	assert_int_equal(v.n_advice, 1);
	assert_string_equal(v.advice[0].rule, "exposed-communication");
	assert_non_null(strstr(v.advice[0].text, "41.7%"));
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

/* 2 ranks on one GPU with gloo: compute on the GPU, the all_reduce on the CPU inside an NVTX range.
 * Rank 0 computes 2 ms, rank 1 3 + k ms in iteration k; the all_reduce ends for both when rank 1
 * arrives, 0.2 ms later. Latency: rank 0 = rank 1 = 3.2 + k; rank 0 waits 1 + k ms. */
static void write_gloo2(const char *dir)
{
	struct tw w;
	int r, k;
	for (r = 0; r < 2; r++) {
		w_begin(&w, 501 + (uint32_t)r, 500, r, 2);
		for (k = 0; k < 4; k++) {
			uint64_t t = T0 + 200 * MS + (uint64_t)k * 20 * MS;
			uint64_t c = r == 0 ? 2 * MS : (uint64_t)(3 + k) * MS;
			uint64_t end = t + (uint64_t)(3 + k) * MS + 200 * US;
			if (k == 0)
				w_push(&w, "warmup", t);
			w_push(&w, "prefill", t);
			w_kernel(&w, "gemm_kernel", 0, 7, t + 5 * US, t + 10 * US, t + c);
			w_push(&w, "all_reduce", t + c);
			w_pop(&w, end);
			w_pop(&w, end);
			if (k == 0)
				w_pop(&w, end);
		}
		w_end(&w, dir);
	}
}

static void test_two_ranks_gloo_from_files(void **state)
{
	const char *dir = lp_test_tmpdir("ranks_gloo2");
	struct lp_profile p;
	struct lp_rank_view v;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_rank_merged *m;
	(void)state;
	write_gloo2(dir);
	lp_profile_init(&p, dir);
	assert_int_equal(lp_trace_load(dir, &p, &err), 0);
	assert_int_equal(lp_ranks_compute(&p, NULL, &v, &err), 0);
	assert_int_equal(v.n_ranks, 2);
	assert_int_equal(v.n_not_ranks, 0);
	assert_int_equal(v.ranks[0].kernels, 4);
	assert_int_equal(v.ranks[0].comm_kernels, 0);
	assert_int_equal(v.ranks[0].collectives, 3);
	/* rank 0 waits (3 + k + 0.2 - 2) - 0.2 = 1 + k ms: k = 1..3 measured */
	assert_true(near(v.ranks[0].rstages[0].wait_ms, (2.0 + 3.0 + 4.0) / 3));
	assert_true(near(v.ranks[1].rstages[0].wait_ms, 0.0));
	assert_true(near(v.ranks[0].wait_ms, 2.0 + 3.0 + 4.0));
	/* host collectives are exposed communication: nothing runs on the GPU meanwhile */
	assert_true(near(v.ranks[0].rstages[0].comm_ms, (2.2 + 3.2 + 4.2) / 3));
	assert_true(near(v.ranks[0].rstages[0].exposed_ms, (2.2 + 3.2 + 4.2) / 3));
	assert_true(near(v.ranks[1].rstages[0].exposed_ms, 0.2));
	m = &v.merged[0];
	assert_int_equal(m->iters, 3);
	assert_true(near(m->skew_max_ms, 0.0));
	assert_true(near(m->lat_mean_ms, (4.2 + 5.2 + 6.2) / 3));
	lp_rank_view_release(&v);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_four_ranks_from_files),
		cmocka_unit_test(test_two_ranks_gloo_from_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
