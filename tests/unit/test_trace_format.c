/* test_trace_format.c: the trace reader on files built record by record here (the writer side of
 * docs/trace-format.md): a GPU trace round trip with launch-time and graph attribution, kernel
 * name demangling, truncation at every byte offset, corrupt files (error names file and offset),
 * unknown record types, and the folder listing. */
#include "testutil.h"

#include <dlfcn.h>
#include <string.h>

#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"

static const char mangled_fill[] =
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_";

static void w_rec(struct lp_buf *b, uint16_t type, const void *p, size_t n, const void *extra, size_t en)
{
	struct lp_trace_rec_header h = { type, 0, (uint32_t)(n + en) };
	lp_buf_add(b, &h, sizeof(h));
	lp_buf_add(b, p, n);
	if (en)
		lp_buf_add(b, extra, en);
}

static void w_str(struct lp_buf *b, uint32_t sid, const char *s)
{
	struct lp_trace_string r = { sid, (uint32_t)strlen(s) };
	w_rec(b, LP_TREC_STRING, &r, sizeof(r), s, r.len);
}

static void w_nvtx(struct lp_buf *b, uint8_t ev, uint32_t dom, uint32_t sid, uint64_t id, uint64_t ts)
{
	struct lp_trace_nvtx r;
	memset(&r, 0, sizeof(r));
	r.event = ev;
	r.tid = 7;
	r.domain_id = dom;
	r.name_sid = sid;
	r.id = id;
	r.ts_ns = ts;
	w_rec(b, LP_TREC_NVTX, &r, sizeof(r), NULL, 0);
}

static void w_launch(struct lp_buf *b, uint32_t corr, uint64_t range, uint64_t ts)
{
	struct lp_trace_launch r;
	memset(&r, 0, sizeof(r));
	r.correlation_id = corr;
	r.tid = 7;
	r.range_id = range;
	r.ts_ns = ts;
	r.api = 1;
	r.kind = LP_TRACE_LAUNCH_KERNEL;
	w_rec(b, LP_TREC_LAUNCH, &r, sizeof(r), NULL, 0);
}

static void w_kernel(struct lp_buf *b, uint32_t sid, uint32_t corr, uint64_t node, uint64_t start, uint64_t end)
{
	struct lp_trace_kernel k;
	memset(&k, 0, sizeof(k));
	k.name_sid = sid;
	k.correlation_id = corr;
	k.graph_node_id = node;
	k.start_ns = start;
	k.end_ns = end;
	k.stream = 13;
	k.grid[0] = 128;
	k.grid[1] = k.grid[2] = 1;
	k.block[0] = 256;
	k.block[1] = k.block[2] = 1;
	k.registers_per_thread = 32;
	k.static_shared_bytes = 1024;
	k.dynamic_shared_bytes = 2048;
	w_rec(b, LP_TREC_KERNEL, &k, sizeof(k), NULL, 0);
}

/* A whole GPU trace; `bounds` (when given) receives the offset where each record starts. */
static void build_trace(struct lp_buf *b, size_t *bounds, size_t *n_bounds)
{
	struct lp_trace_preamble pre;
	struct lp_trace_process pr;
	struct lp_trace_cupti_status cs = { LP_TRACE_CUPTI_OK, 0 };
	struct lp_trace_domain dom = { 1, 4 };
	struct lp_trace_device dev;
	struct lp_trace_graph_node gn;
	struct lp_trace_copy cp;
	struct lp_trace_overhead ov;
	struct lp_trace_dropped dr = { 3, 2 };
	struct lp_trace_end end = { 9000, LP_TRACE_END_EXIT, 0 };
	unsigned char unknown[12] = { 1, 2, 3 };
	size_t nb = 0;
#define MARK() do { if (bounds) bounds[nb] = b->len; nb++; } while (0)

	memcpy(pre.magic, LP_TRACE_MAGIC, 8);
	pre.version_major = LP_TRACE_VERSION_MAJOR;
	pre.version_minor = 7; /* a newer minor version reads fine */
	pre.flags = 0;
	lp_buf_add(b, &pre, sizeof(pre));
	MARK(); w_str(b, 1, "host1");
	MARK(); w_str(b, 2, "python gen.py");
	memset(&pr, 0, sizeof(pr));
	pr.pid = 100;
	pr.host_sid = 1;
	pr.cmdline_sid = 2;
	pr.start_ns = 500;
	pr.clock = LP_TRACE_CLOCK_REALTIME;
	MARK(); w_rec(b, LP_TREC_PROCESS, &pr, sizeof(pr), NULL, 0);
	MARK(); w_rec(b, LP_TREC_CUPTI_STATUS, &cs, sizeof(cs), NULL, 0);
	MARK(); w_str(b, 3, "NVIDIA H100 80GB HBM3");
	memset(&dev, 0, sizeof(dev));
	dev.sm_count = 132;
	dev.cc_major = 9;
	dev.sm_clock_khz = 1980000;
	dev.mem_bytes = 85ull << 30;
	dev.name_sid = 3;
	MARK(); w_rec(b, LP_TREC_DEVICE, &dev, sizeof(dev), NULL, 0);
	MARK(); w_str(b, 4, "LLM");
	MARK(); w_rec(b, LP_TREC_DOMAIN, &dom, sizeof(dom), NULL, 0);
	MARK(); w_str(b, 5, "decode_all");
	MARK(); w_str(b, 6, "decode_step");
	MARK(); w_str(b, 7, "layer");
	MARK(); w_nvtx(b, LP_TRACE_NVTX_PUSH, 1, 5, 10, 1000);
	MARK(); w_nvtx(b, LP_TRACE_NVTX_PUSH, 1, 6, 11, 1100);
	MARK(); w_launch(b, 5, 11, 1150);
	MARK(); w_nvtx(b, LP_TRACE_NVTX_PUSH, 0, 7, 12, 1200);
	MARK(); w_launch(b, 6, 12, 1250);
	MARK(); w_rec(b, 200, unknown, sizeof(unknown), NULL, 0); /* a newer writer's record */
	memset(&gn, 0, sizeof(gn));
	gn.node_id = 500;
	gn.range_id = 11;
	MARK(); w_rec(b, LP_TREC_GRAPH_NODE, &gn, sizeof(gn), NULL, 0);
	gn.node_id = 900;
	gn.range_id = 0;
	gn.original_node_id = 500;
	MARK(); w_rec(b, LP_TREC_GRAPH_NODE, &gn, sizeof(gn), NULL, 0);
	MARK(); w_nvtx(b, LP_TRACE_NVTX_POP, 0, 0, 12, 1300);
	MARK(); w_nvtx(b, LP_TRACE_NVTX_POP, 1, 0, 11, 1400);
	MARK(); w_launch(b, 7, 10, 1450); /* cudaGraphLaunch under decode_all */
	MARK(); w_str(b, 8, "_Z12scale_kernelILi4EEvPffi");
	MARK(); w_str(b, 9, "gemv_kernel");
	MARK(); w_str(b, 10, mangled_fill);
	MARK(); w_kernel(b, 8, 5, 0, 2000, 2500);
	MARK(); w_kernel(b, 9, 6, 0, 2600, 2700);
	MARK(); w_kernel(b, 8, 7, 900, 2800, 2900);  /* clone of a node captured in decode_step */
	MARK(); w_kernel(b, 10, 7, 901, 3000, 3100); /* graph node without capture info */
	MARK(); w_kernel(b, 9, 99, 0, 3200, 3300);   /* no launch record */
	memset(&cp, 0, sizeof(cp));
	cp.kind = LP_TRACE_COPY_HTOD;
	cp.bytes = 4096;
	cp.correlation_id = 6;
	cp.start_ns = 2550;
	cp.end_ns = 2560;
	cp.stream = 13;
	MARK(); w_rec(b, LP_TREC_COPY, &cp, sizeof(cp), NULL, 0);
	memset(&ov, 0, sizeof(ov));
	ov.start_ns = 100;
	ov.end_ns = 150;
	MARK(); w_rec(b, LP_TREC_OVERHEAD, &ov, sizeof(ov), NULL, 0);
	MARK(); w_rec(b, LP_TREC_OVERHEAD, &ov, sizeof(ov), NULL, 0);
	MARK(); w_rec(b, LP_TREC_DROPPED, &dr, sizeof(dr), NULL, 0);
	MARK(); w_nvtx(b, LP_TRACE_NVTX_POP, 1, 0, 10, 5000);
	MARK(); w_rec(b, LP_TREC_END, &end, sizeof(end), NULL, 0);
	MARK();
#undef MARK
	if (n_bounds)
		*n_bounds = nb;
}

static int have_demangler(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	return h && dlsym(h, "__cxa_demangle");
}

static void test_round_trip(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	int32_t all, step, layer;
	(void)state;
	build_trace(&b, NULL, NULL);
	lp_profile_init(&p, "mem");
	assert_int_equal(lp_trace_load_mem("mem.lptrace", b.data, b.len, &p, &err), 0);
	assert_string_equal(p.source_kind, "llmprof-trace");
	assert_int_equal(p.warnings, 0);

	assert_int_equal(p.n_processes, 1);
	assert_int_equal(p.processes[0].pid, 100);
	assert_string_equal(p.processes[0].host, "host1");
	assert_string_equal(p.processes[0].name, "python gen.py");
	assert_string_equal(p.processes[0].cupti_status, "ok");
	assert_int_equal(p.processes[0].dropped_records, 5);
	assert_int_equal(p.processes[0].overhead_ns, 100);
	assert_int_equal(p.n_devices, 1);
	assert_string_equal(p.devices[0].name, "NVIDIA H100 80GB HBM3");
	assert_int_equal(p.devices[0].sm_count, 132);
	assert_int_equal(p.devices[0].sm_clock_mhz, 1980);
	assert_int_equal(p.devices[0].mem_bytes, 85ull << 30);

	assert_int_equal(p.n_ranges, 3);
	all = 0;
	step = 1;
	layer = 2;
	assert_string_equal(p.ranges[all].name, "decode_all");
	assert_string_equal(p.ranges[all].domain, "LLM");
	assert_int_equal(p.ranges[all].end_ns, 5000);
	assert_int_equal(p.ranges[step].parent, all);
	assert_int_equal(p.ranges[layer].parent, step);
	assert_string_equal(p.ranges[layer].domain, "");
	assert_int_equal(p.ranges[layer].depth, 2);
	assert_int_equal(p.ranges[layer].end_ns, 1300);

	assert_int_equal(p.n_kernels, 5);
	assert_int_equal(p.kernels[0].range, step);   /* launched inside decode_step */
	assert_int_equal(p.kernels[0].launch_tid, 7);
	assert_int_equal(p.kernels[0].launch_ns, 1150);
	assert_int_equal(p.kernels[1].range, layer);
	assert_int_equal(p.kernels[2].range, step);   /* graph: capture-time range through the clone */
	assert_int_equal(p.kernels[3].range, all);    /* graph without capture info: launch range */
	assert_int_equal(p.kernels[4].range, -1);
	assert_int_equal(p.kernels[0].shared_bytes, 3072);
	assert_int_equal(p.kernels[0].stream, 13);
	assert_int_equal(p.kernels[0].grid[0], 128);
	assert_int_equal(p.kernels[0].end_ns - p.kernels[0].start_ns, 500);
	assert_string_equal(p.kernels[1].name, "gemv_kernel");
	assert_string_equal(p.kernels[1].short_name, "gemv_kernel");
	if (have_demangler()) {
		assert_string_equal(p.kernels[0].name, "void scale_kernel<4>(float*, float, int)");
		assert_string_equal(p.kernels[3].name, "void at::native::vectorized_elementwise_kernel<4, "
			"at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, "
			"at::native::FillFunctor<float>, at::detail::Array<char*, 1>)");
		assert_string_equal(p.kernels[3].short_name, "vectorized_elementwise_kernel");
		assert_string_equal(p.kernels[0].short_name, "scale_kernel");
	} else {
		assert_string_equal(p.kernels[0].name, "_Z12scale_kernelILi4EEvPffi");
	}
	assert_ptr_equal(p.kernels[0].name, p.kernels[2].name); /* interned */

	assert_int_equal(p.n_copies, 1);
	assert_int_equal(p.copies[0].kind, LP_COPY_HTOD);
	assert_int_equal(p.copies[0].bytes, 4096);
	assert_int_equal(p.copies[0].range, layer);

	/* the shared kernel table works on a trace: the stage filter follows the attribution */
	{
		struct lp_kernel_table t;
		struct lp_kernel_filter f = { "LLM@decode_step", -1, 0 };
		assert_int_equal(lp_kernel_table_build(&p, &f, &t, &err), 0);
		assert_int_equal(t.n_rows, 2);
		lp_kernel_table_release(&t);
	}
	lp_profile_release(&p);
	lp_buf_release(&b);
}

static void test_truncated_everywhere(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	size_t bounds[64], nb = 0, cut, i;
	(void)state;
	build_trace(&b, bounds, &nb);
	assert_true(nb < 64);
	for (cut = 0; cut <= b.len; cut++) {
		struct lp_profile p;
		struct lp_err err = LP_ERR_INIT;
		int boundary = 0;
		/* a copy of exactly `cut` bytes, so ASan sees any read past the end */
		char *copy = malloc(cut ? cut : 1);
		assert_non_null(copy);
		memcpy(copy, b.data, cut);
		for (i = 0; i < nb; i++)
			boundary |= bounds[i] == cut;
		lp_profile_init(&p, "cut");
		if (lp_trace_load_mem("cut.lptrace", copy, cut, &p, &err) != 0)
			fail_msg("cut at %zu: %s", cut, err.msg);
		assert_int_equal(p.warnings, boundary ? 0 : 1);
		lp_profile_release(&p);
		free(copy);
	}
	lp_buf_release(&b);
}

static void expect_error(const char *data, size_t len, const char *msg_part)
{
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	lp_profile_init(&p, "bad");
	assert_int_equal(lp_trace_load_mem("bad.lptrace", data, len, &p, &err), -1);
	if (!strstr(err.msg, msg_part))
		fail_msg("message '%s' lacks '%s'", err.msg, msg_part);
	assert_non_null(strstr(err.msg, "'bad.lptrace'"));
	lp_profile_release(&p);
}

static void test_corrupt(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	size_t bounds[64], nb;
	struct lp_trace_rec_header h;
	char *copy;
	(void)state;
	build_trace(&b, bounds, &nb);
	copy = malloc(b.len);
	assert_non_null(copy);

	memcpy(copy, b.data, b.len);
	copy[0] = 'X';
	expect_error(copy, b.len, "at byte offset 0: not an llmprof trace (bad magic)");
	expect_error("hello world, this is text", 25, "bad magic");

	memcpy(copy, b.data, b.len);
	copy[8] = 2; /* major version 2 */
	expect_error(copy, b.len, "format version 2.7; this llmprof reads 1.x");

	/* a record claiming 2 GB */
	memcpy(copy, b.data, b.len);
	memcpy(&h, copy + bounds[5], sizeof(h));
	h.size = 0x7fffffff;
	memcpy(copy + bounds[5], &h, sizeof(h));
	{
		char want[128];
		snprintf(want, sizeof(want), "at byte offset %zu: record of 2147483647 bytes exceeds", bounds[5]);
		expect_error(copy, b.len, want);
	}
	/* a known record too short for its type */
	memcpy(copy, b.data, b.len);
	memcpy(&h, copy + bounds[2], sizeof(h)); /* the PROCESS record */
	h.size = 8;
	memcpy(copy + bounds[2], &h, sizeof(h));
	expect_error(copy, b.len, "PROCESS record of 8 bytes, expected at least 40");
	/* type 0 */
	memcpy(copy, b.data, b.len);
	memset(copy + bounds[3], 0, 2);
	expect_error(copy, b.len, "record of type 0");
	/* a string longer than its record */
	memcpy(copy, b.data, b.len);
	{
		struct lp_trace_string s;
		memcpy(&s, copy + bounds[0] + 8, sizeof(s));
		s.len = 1000;
		memcpy(copy + bounds[0] + 8, &s, sizeof(s));
	}
	expect_error(copy, b.len, "string length out of range");
	free(copy);
	lp_buf_release(&b);
}

static void test_files_and_folders(void **state)
{
	const char *dir = lp_test_tmpdir("trace_format/folder");
	char path[4200], empty[4200];
	struct lp_buf b = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_profile p;
	size_t bounds[64], nb;
	(void)state;
	build_trace(&b, bounds, &nb);
	snprintf(path, sizeof(path), "%s/a.1.lptrace", dir);
	assert_int_equal(lp_fs_write_atomic(path, b.data, b.len, &err), 0);
	snprintf(path, sizeof(path), "%s/b.2.lptrace", dir);
	assert_int_equal(lp_fs_write_atomic(path, b.data, bounds[12] + 5, &err), 0); /* killed mid-record */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	lp_test_write(path, "not a trace");
	lp_profile_init(&p, dir);
	assert_int_equal(lp_trace_load(dir, &p, &err), 0);
	assert_int_equal(p.n_processes, 2);
	assert_int_equal(p.warnings, 1);
	assert_int_equal(p.n_kernels, 5);
	assert_int_equal(p.n_devices, 1); /* same ordinal in both processes: listed once */
	lp_profile_release(&p);

	snprintf(empty, sizeof(empty), "%s/empty", dir);
	assert_int_equal(lp_fs_mkdir_p(empty, &err), 0);
	lp_profile_init(&p, empty);
	assert_int_equal(lp_trace_load(empty, &p, &err), -1);
	assert_non_null(strstr(err.msg, "no trace files (*.lptrace) in"));
	lp_profile_release(&p);
	lp_buf_release(&b);
}

static void test_short_names(void **state)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "gemv_kernel", "gemv_kernel" },
		{ "void scale_kernel<4>(float*, float, int)", "scale_kernel" },
		{ "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*, "
		  "const float*, int, int, int)", "softmax_warp_forward" },
		{ "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>("
		  "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)", "Kernel2" },
		{ "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, float, float, float, float, "
		  "false, true, true, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float "
		  "const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
		  "float> >(T13)", "kernel" },
		{ "", "" },
	};
	struct lp_profile p;
	size_t i;
	(void)state;
	lp_profile_init(&p, "names");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(lp_trace_short_name(&p, cases[i].in), cases[i].want);
	assert_string_equal(lp_trace_demangle(&p, "not_mangled"), "not_mangled");
	assert_string_equal(lp_trace_demangle(&p, "_Zbroken"), "_Zbroken");
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_files_and_folders),
		cmocka_unit_test(test_short_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
