/* test_real_trace.c: the trace reader on a REAL GPU trace of the CUDA demo, written by
 * libllmprof_inject.so on an H200 (tests/fixtures/trace/h200_cuda_demo/, README there). The demo
 * printed its expected attribution (h200_cuda_demo_expect.txt): kernel counts, the kernels under
 * each NVTX path (graph kernels under the ranges open when their nodes were captured), copies. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "analyze/analysis.h"
#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"

static uint64_t kernels_named(const struct lp_profile *p, const char *name, const char *path)
{
	struct lp_buf b = LP_BUF_INIT;
	uint64_t n = 0;
	size_t i;
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		if (strcmp(k->short_name, name) != 0)
			continue;
		if (path) {
			lp_buf_reset(&b);
			if (k->range < 0 || lp_profile_range_path(p, k->range, &b) < 0 || strcmp(b.data, path) != 0)
				continue;
		}
		n++;
	}
	lp_buf_release(&b);
	return n;
}

static void test_demo_expectations(void **state)
{
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf exp = LP_BUF_INIT;
	char *line, *save = NULL;
	int checked = 0;
	size_t i, memsets = 0;
	(void)state;
	lp_profile_init(&p, "h200");
	if (lp_trace_load(lp_test_fixture("trace/h200_cuda_demo"), &p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.warnings, 0);
	assert_int_equal(p.n_processes, 1);
	assert_int_equal(p.processes[0].pid, 1513);
	assert_string_equal(p.processes[0].cupti_status, "ok");
	assert_int_equal(p.processes[0].dropped_records, 0);
	assert_int_equal(p.n_devices, 1);
	assert_string_equal(p.devices[0].name, "NVIDIA H200");
	assert_int_equal(p.devices[0].sm_count, 132);
	assert_int_equal(p.devices[0].cc_major, 9);
	assert_int_equal(p.n_kernels, 19);
	for (i = 0; i < p.n_kernels; i++)
		assert_true(p.kernels[i].end_ns > p.kernels[i].start_ns);
	lp_test_read(lp_test_fixture("trace/h200_cuda_demo_expect.txt"), &exp);
	for (line = strtok_r(exp.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char what[32], a[128], b[64];
		unsigned long n, m;
		if (sscanf(line, "expect %31s %127s %63s %lu", what, a, b, &n) == 4 && !strcmp(what, "range")) {
			/* "LLM@decode_all/decode_step/layer": the path as lp_profile_range_path writes it */
			const char *path = strchr(a, '@') ? strchr(a, '@') + 1 : a;
			if (kernels_named(&p, b, path) != n)
				fail_msg("%s: got %llu", line, (unsigned long long)kernels_named(&p, b, path));
			checked++;
		} else if (sscanf(line, "expect kernels %127s %lu", a, &n) == 2) {
			if (kernels_named(&p, a, NULL) != n)
				fail_msg("%s: got %llu", line, (unsigned long long)kernels_named(&p, a, NULL));
			checked++;
		} else if (sscanf(line, "expect copies %lu memset %lu", &n, &m) == 2) {
			for (i = 0; i < p.n_copies; i++)
				memsets += p.copies[i].kind == LP_COPY_MEMSET;
			assert_int_equal(p.n_copies, n);
			assert_int_equal(memsets, m);
			checked++;
		}
	}
	assert_int_equal(checked, 8);
	lp_buf_release(&exp);
	lp_profile_release(&p);
}

/* the kernel table of the trace, as `llmprof kernels` shows it */
static void test_demo_kernel_table(void **state)
{
	struct lp_profile p;
	struct lp_kernel_table t;
	struct lp_kernel_filter f = { NULL, -1, 0, NULL };
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	lp_profile_init(&p, "h200");
	if (lp_trace_load(lp_test_fixture("trace/h200_cuda_demo/vm.1513.lptrace"), &p, &err) < 0 ||
			lp_kernel_table_build(&p, &f, &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(t.n_rows, 2);
	assert_string_equal(t.rows[0].kernel_name, "void scale_kernel<4>(float*, float, int)");   /* demangled */
	assert_string_equal(t.rows[0].short_name, "scale_kernel");
	assert_int_equal(t.rows[0].calls, 10);
	assert_string_equal(t.rows[1].kernel_name, "add_one");   /* extern "C" */
	assert_int_equal(t.rows[1].calls, 9);
	lp_kernel_table_release(&t);
	f.stage = "LLM@decode_all";
	assert_int_equal(lp_kernel_table_build(&p, &f, &t, &err), 0);
	assert_int_equal(t.n_rows, 2);
	assert_int_equal(t.rows[0].calls + t.rows[1].calls, 9);   /* 6 scale + 3 add_one */
	lp_kernel_table_release(&t);
	lp_profile_release(&p);
}

/* A trace cut inside a record: read up to the last whole record, the damage named. */
static void test_truncated_damage(void **state)
{
	struct lp_profile p;
	struct lp_buf damage = LP_BUF_INIT, data = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf cut = LP_BUF_INIT, want = LP_BUF_INIT;
	FILE *f;
	(void)state;
	assert_int_equal(lp_fs_read_file(lp_test_fixture("trace/h200_cuda_demo/vm.1513.lptrace"), &data, 0, &err), 0);
	lp_fs_join(&cut, lp_test_tmpdir("cut_trace"), "vm.1.lptrace");
	f = fopen(cut.data, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data.data, 1, 5000, f), 5000);
	fclose(f);
	lp_profile_init(&p, cut.data);
	assert_int_equal(lp_trace_load_damage(cut.data, &p, &damage, &err), 0);
	assert_int_equal(p.warnings, 1);
	lp_buf_addf(&want, "'%s' is truncated at byte 4954 of 5000: read up to the last complete record\n", cut.data);
	assert_string_equal(damage.data, want.data);
	assert_true(p.n_kernels > 0);
	lp_profile_release(&p);
	/* the whole file: no damage */
	lp_buf_reset(&damage);
	lp_profile_init(&p, "whole");
	assert_int_equal(lp_trace_load_damage(lp_test_fixture("trace/h200_cuda_demo/vm.1513.lptrace"), &p, &damage, &err), 0);
	assert_int_equal(damage.len, 0);
	assert_int_equal(p.warnings, 0);
	lp_profile_release(&p);
	lp_buf_release(&damage);
	lp_buf_release(&data);
	lp_buf_release(&cut);
	lp_buf_release(&want);
}

/* A real light run of llmprof-llm (tests/fixtures/trace/h200_ref_warmup_detach, README there):
 * CUPTI counted 1 record dropped at the tracer's one detach (the warm-up's) though every kernel
 * launched outside the graph capture has its record: lp_dropped_at_detach explains it (no
 * takeaway then), and only that many. */
static void test_ref_drop_at_detach(void **state)
{
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_process pr;
	(void)state;
	lp_profile_init(&p, "h200");
	if (lp_trace_load(lp_test_fixture("trace/h200_ref_warmup_detach"), &p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.n_processes, 1);
	pr = p.processes[0];
	assert_int_equal(pr.dropped_records, 1);
	assert_int_equal(pr.dropped_cupti, 1);
	assert_int_equal(pr.sampling.warmup, LP_TRACE_WARMUP_DETACHED);
	assert_int_equal(pr.sampling.burst, 4);
	assert_int_equal(pr.sampling.mode, 1); /* exact (auto: its steps too short to measure) */
	assert_int_equal(pr.sampling.toggles, 2); /* the warm-up's detach and attach */
	assert_int_equal(lp_dropped_at_detach(&pr), 1);
	pr.dropped_cupti = pr.dropped_records = 3; /* more than one a detach: a loss of 2 */
	assert_int_equal(lp_dropped_at_detach(&pr), 1);
	pr.dropped_records = 4; /* the tracer's own drops are never explained */
	assert_int_equal(lp_dropped_at_detach(&pr), 1);
	pr.sampling.warmup = LP_TRACE_WARMUP_RECORDED; /* no detach at all */
	pr.sampling.burst = 0;
	assert_int_equal(lp_dropped_at_detach(&pr), 0);
	pr.sampling.burst = 4; /* bursts: 16 switches, 8 detaches */
	pr.sampling.toggles = 16;
	pr.dropped_cupti = 7;
	assert_int_equal(lp_dropped_at_detach(&pr), 7);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demo_expectations),
		cmocka_unit_test(test_demo_kernel_table),
		cmocka_unit_test(test_truncated_damage),
		cmocka_unit_test(test_ref_drop_at_detach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
