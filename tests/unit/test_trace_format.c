/* test_trace_format.c: the trace reader on files built record by record here (the writer side of
 * docs/trace-format.md): a GPU trace round trip with launch-time and graph attribution, kernel
 * name demangling, truncation at every byte offset, corrupt files (error names file and offset),
 * unknown record types, and the folder listing; CUDA graph attribution (capture-time ranges
 * re-rooted under the launch range, one set of synthetic copies per graph launch). */
#include "testutil.h"

#include <dlfcn.h>
#include <string.h>

#include "analyze/operators.h"
#include "analyze/stages.h"
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
	assert_int_equal(p.n_processes, 1);
	assert_int_equal(p.processes[0].graph_uncaptured, 1); /* counted (the warm-up's detach says so) */
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
		struct lp_kernel_filter f = { "LLM@decode_step", -1, 0, NULL };
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

/* ---- CUDA graphs: capture-time stacks under launch-time stacks ---- */

static void w_graph_node(struct lp_buf *b, uint64_t node, uint64_t range, uint64_t original)
{
	struct lp_trace_graph_node gn;
	memset(&gn, 0, sizeof(gn));
	gn.node_id = node;
	gn.range_id = range;
	gn.original_node_id = original;
	gn.tid = 7;
	w_rec(b, LP_TREC_GRAPH_NODE, &gn, sizeof(gn), NULL, 0);
}

static void w_preamble(struct lp_buf *b)
{
	struct lp_trace_preamble pre;
	struct lp_trace_process pr;
	struct lp_trace_domain dom = { 1, 4 };
	memcpy(pre.magic, LP_TRACE_MAGIC, 8);
	pre.version_major = LP_TRACE_VERSION_MAJOR;
	pre.version_minor = LP_TRACE_VERSION_MINOR;
	pre.flags = 0;
	lp_buf_add(b, &pre, sizeof(pre));
	memset(&pr, 0, sizeof(pr));
	pr.pid = 200;
	pr.clock = LP_TRACE_CLOCK_REALTIME;
	w_rec(b, LP_TREC_PROCESS, &pr, sizeof(pr), NULL, 0);
	w_str(b, 4, "LLM");
	w_rec(b, LP_TREC_DOMAIN, &dom, sizeof(dom), NULL, 0);
	w_str(b, 5, "decode_all");
	w_str(b, 6, "decode_step");
	w_str(b, 7, "layer");
	w_str(b, 8, "attention");
	w_str(b, 9, "k_attn");
	w_str(b, 10, "k_norm");
	w_str(b, 11, "k_plain");
	w_str(b, 12, "replay");
	w_str(b, 13, "capture");
}

static const char *path_of(const struct lp_profile *p, int32_t range, struct lp_buf *out)
{
	assert_int_equal(lp_profile_range_path(p, range, out), 0);
	return out->data;
}

/* The reference workload's shape: the decode graph is captured once at setup, outside any stage,
 * under op ranges (layer/attention); every decode step pushes LLM@decode_all/decode_step and
 * launches it. Also: two launches inside one range instance, and a node without capture info. */
static void test_graph_captured_outside_stages(void **state)
{
	struct lp_buf b = LP_BUF_INIT, path = LP_BUF_INIT;
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_stage_set st;
	struct lp_op_table ops;
	const struct lp_stage *dec;
	size_t i, n_synth = 0;
	int32_t step0, step1, replay;
	int s;
	(void)state;
	w_preamble(&b);
	/* capture: layer > attention > k_attn (node 1), layer > k_norm (node 2), k_plain unranged (3) */
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 7, 20, 100);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 8, 21, 110);
	w_graph_node(&b, 1, 21, 0);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 21, 120);
	w_graph_node(&b, 2, 20, 0);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 20, 130);
	/* (node 3 was made with no range open: the writer records nothing for it) */
	/* instantiate: clones */
	w_graph_node(&b, 101, 0, 1);
	w_graph_node(&b, 102, 0, 2);
	w_graph_node(&b, 103, 0, 3);
	/* two decode steps, one graph launch each */
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 5, 30, 1000);
	for (s = 0; s < 2; s++) {
		uint64_t t = 1100 + (uint64_t)s * 1000;
		w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 6, 31 + (uint64_t)s, t);
		w_launch(&b, 50 + (uint32_t)s, 31 + (uint64_t)s, t + 10);
		w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 31 + (uint64_t)s, t + 20);
	}
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 30, 3000);
	/* two launches inside one range instance */
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 12, 40, 4000);
	w_launch(&b, 60, 40, 4010);
	w_launch(&b, 61, 40, 4020);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 40, 4030);
	for (s = 0; s < 4; s++) {
		uint32_t corr = s < 2 ? 50 + (uint32_t)s : 60 + (uint32_t)(s - 2);
		uint64_t t = 1200 + (uint64_t)s * 1000;
		w_kernel(&b, 10, corr, 102, t, t + 10);          /* k_norm: layer */
		w_kernel(&b, 9, corr, 101, t + 20, t + 50);      /* k_attn: layer/attention */
		w_kernel(&b, 11, corr, 103, t + 60, t + 70);     /* k_plain: no capture info */
	}

	lp_profile_init(&p, "graph");
	assert_int_equal(lp_trace_load_mem("graph.lptrace", b.data, b.len, &p, &err), 0);
	assert_int_equal(p.n_kernels, 12);
	for (i = 0; i < 6; i++) { /* the decode steps */
		const struct lp_kernel *k = &p.kernels[i];
		const char *want = i % 3 == 0 ? "decode_all/decode_step/layer"
			: i % 3 == 1 ? "decode_all/decode_step/layer/attention" : "decode_all/decode_step";
		assert_string_equal(path_of(&p, k->range, &path), want);
		assert_int_equal(p.ranges[k->range].synthetic, i % 3 != 2);
		assert_int_equal(k->launch_tid, 7);
	}
	step0 = p.kernels[2].range;
	step1 = p.kernels[5].range;
	assert_false(p.ranges[step0].synthetic);
	assert_int_not_equal(step0, step1);
	assert_string_equal(p.ranges[step0].domain, "LLM");
	/* one set of copies per launch: layer shared by both kernels of a launch, not across launches */
	assert_int_equal(p.ranges[p.kernels[1].range].parent, p.kernels[0].range);
	assert_int_equal(p.ranges[p.kernels[0].range].parent, step0);
	assert_int_equal(p.ranges[p.kernels[3].range].parent, step1);
	assert_int_not_equal(p.kernels[1].range, p.kernels[4].range);
	assert_int_equal(p.ranges[p.kernels[1].range].depth, 3);
	assert_string_equal(p.ranges[p.kernels[1].range].domain, "");
	/* a copy spans the GPU time of its kernels */
	assert_int_equal(p.ranges[p.kernels[0].range].start_ns, 1200);
	assert_int_equal(p.ranges[p.kernels[0].range].end_ns, 1250);
	assert_int_equal(p.ranges[p.kernels[1].range].start_ns, 1220);
	assert_int_equal(p.ranges[p.kernels[1].range].end_ns, 1250);
	/* two launches under one range instance: two sets of copies under that same instance */
	replay = p.kernels[8].range;
	assert_string_equal(path_of(&p, replay, &path), "replay");
	assert_string_equal(path_of(&p, p.kernels[7].range, &path), "replay/layer/attention");
	assert_string_equal(path_of(&p, p.kernels[10].range, &path), "replay/layer/attention");
	assert_int_not_equal(p.kernels[7].range, p.kernels[10].range);
	assert_int_equal(p.kernels[11].range, replay);
	for (i = 0; i < p.n_ranges; i++)
		n_synth += p.ranges[i].synthetic;
	assert_int_equal(n_synth, 8); /* 4 launches x (layer, attention) */

	/* the analysis: decode kernels under decode_all, two steps (copies are not steps), ops in the
	 * decode stage with GPU time and a call per launch but no host time */
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	dec = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_non_null(dec);
	assert_int_equal(dec->n_iters, 1);
	assert_int_equal(dec->iters[0].kernels, 6);
	assert_int_equal(dec->iters[0].steps, 2);
	assert_int_equal(dec->iters[0].kernel_ns, 2 * (10 + 30 + 10));
	assert_int_equal(lp_operators_compute(&p, &st, &ops, &err), 0);
	for (i = 0; i < ops.n_rows; i++) {
		const struct lp_op_row *o = &ops.rows[i];
		if (strcmp(o->stage, "decode_all"))
			continue;
		if (!strcmp(o->name, "attention")) {
			assert_int_equal(o->calls, 2);
			assert_int_equal(o->kernels, 2);
			assert_true(o->gpu_incl_ms > 59e-6 && o->gpu_incl_ms < 61e-6);
			assert_true(o->host_ms == 0.0);
			n_synth = 100;
		}
		if (!strcmp(o->name, "layer"))
			assert_true(o->host_ms == 0.0 && o->kernels == 4);
	}
	assert_int_equal(n_synth, 100); /* the attention row was there */
	lp_op_table_release(&ops);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
	lp_buf_release(&path);
	lp_buf_release(&b);
}

/* Captured inside LLM@decode_all/decode_step/layer: launched from that same decode_step (the
 * capture-time range as is), from another decode_step (torch.compile's CUDA graph trees: record in
 * a generation's first step, replay in the later ones; the part below the capture stack's
 * decode_step re-rooted under the launch, so the kernel belongs to the step that launched it),
 * from an unrelated range (re-rooted), from no range (capture-time range). A memset node follows
 * the same rules as kernels. */
static void test_graph_captured_inside_stages(void **state)
{
	struct lp_buf b = LP_BUF_INIT, path = LP_BUF_INIT;
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_trace_copy cp;
	int32_t layer;
	(void)state;
	w_preamble(&b);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 5, 70, 100);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 6, 71, 110);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 7, 72, 120);
	w_graph_node(&b, 1, 72, 0);
	w_graph_node(&b, 2, 72, 0);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 72, 130);
	w_launch(&b, 89, 71, 135);  /* replayed right away, inside the capture's own decode_step */
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 71, 140);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 70, 150);
	w_graph_node(&b, 101, 0, 1);
	w_graph_node(&b, 102, 0, 2);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 5, 80, 1000);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 6, 81, 1010);
	w_launch(&b, 90, 81, 1020);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 81, 1030);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 80, 1040);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 12, 82, 2000);
	w_launch(&b, 91, 82, 2010);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 82, 2020);
	w_launch(&b, 92, 0, 3000);
	w_kernel(&b, 9, 90, 101, 1100, 1110);
	w_kernel(&b, 9, 91, 101, 2100, 2110);
	w_kernel(&b, 9, 92, 101, 3100, 3110);
	w_kernel(&b, 9, 89, 101, 136, 138);
	memset(&cp, 0, sizeof(cp));
	cp.kind = LP_TRACE_COPY_MEMSET;
	cp.bytes = 64;
	cp.correlation_id = 91;
	cp.graph_node_id = 102;
	cp.start_ns = 2120;
	cp.end_ns = 2130;
	w_rec(&b, LP_TREC_COPY, &cp, sizeof(cp), NULL, 0);

	lp_profile_init(&p, "graph");
	assert_int_equal(lp_trace_load_mem("graph.lptrace", b.data, b.len, &p, &err), 0);
	layer = 2;
	assert_string_equal(path_of(&p, layer, &path), "decode_all/decode_step/layer");
	assert_int_equal(p.kernels[3].range, layer);  /* inside its capture's step: as is */
	/* another decode_step: a copy of layer under the launching step (range 4), no second
	 * decode_all/decode_step, and not the capture's step */
	assert_string_equal(path_of(&p, p.kernels[0].range, &path), "decode_all/decode_step/layer");
	assert_true(p.ranges[p.kernels[0].range].synthetic);
	assert_int_equal(p.ranges[p.kernels[0].range].parent, 4);
	assert_int_equal(p.ranges[4].start_ns, 1010);
	assert_string_equal(path_of(&p, p.kernels[1].range, &path), "replay/decode_all/decode_step/layer");
	assert_true(p.ranges[p.kernels[1].range].synthetic);
	assert_int_equal(p.kernels[2].range, layer);  /* launched outside every range */
	assert_int_equal(p.copies[0].range, p.kernels[1].range);
	assert_int_equal(p.ranges[p.kernels[1].range].end_ns, 2130);
	assert_int_equal(p.n_ranges, 6 + 1 + 3);
	lp_profile_release(&p);
	lp_buf_release(&path);
	lp_buf_release(&b);
}

/* Captured inside the program's warm-up (torch.compile's CUDA graphs, trace.warmup=record or
 * graphs): warmup/layer/attention (node 1), warmup/decode_all/decode_step/layer (node 2, captured
 * in a decode step of the warm-up), warmup alone (node 3). Launched from a later decode step: the
 * ranges below the warm-up, or below the capture stack's decode_step, re-rooted under the launch
 * (no `warmup` level, no second decode_all/decode_step); node 3 the launch range itself. */
static void test_graph_captured_in_warmup(void **state)
{
	struct lp_buf b = LP_BUF_INIT, path = LP_BUF_INIT;
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	size_t i, n_synth = 0;
	int32_t step;
	(void)state;
	w_preamble(&b);
	w_str(&b, 14, "warmup");
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 14, 60, 100);
	w_graph_node(&b, 3, 60, 0);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 7, 61, 110);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 8, 62, 120);
	w_graph_node(&b, 1, 62, 0);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 62, 130);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 61, 140);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 5, 63, 150);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 6, 64, 160);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 0, 7, 65, 170);
	w_graph_node(&b, 2, 65, 0);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 65, 180);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 64, 190);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 63, 200);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 0, 0, 60, 210);
	w_graph_node(&b, 101, 0, 1);
	w_graph_node(&b, 102, 0, 2);
	w_graph_node(&b, 103, 0, 3);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 5, 80, 1000);
	w_nvtx(&b, LP_TRACE_NVTX_PUSH, 1, 6, 81, 1010);
	w_launch(&b, 90, 81, 1020);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 81, 1030);
	w_nvtx(&b, LP_TRACE_NVTX_POP, 1, 0, 80, 1040);
	w_kernel(&b, 9, 90, 101, 1100, 1110);
	w_kernel(&b, 10, 90, 102, 1120, 1130);
	w_kernel(&b, 11, 90, 103, 1140, 1150);
	w_kernel(&b, 11, 90, 103, 1160, 1170); /* the same launch again: the remembered answer */

	lp_profile_init(&p, "graph");
	assert_int_equal(lp_trace_load_mem("graph.lptrace", b.data, b.len, &p, &err), 0);
	step = 7; /* the launch's decode_step: ranges 60-65 (0-5), 80 (6), 81 (7) */
	assert_string_equal(path_of(&p, step, &path), "decode_all/decode_step");
	assert_false(p.ranges[step].synthetic);
	assert_string_equal(path_of(&p, p.kernels[0].range, &path), "decode_all/decode_step/layer/attention");
	assert_string_equal(path_of(&p, p.kernels[1].range, &path), "decode_all/decode_step/layer");
	assert_int_equal(p.kernels[2].range, step);
	assert_int_equal(p.kernels[3].range, step);
	assert_int_equal(p.ranges[p.ranges[p.kernels[0].range].parent].parent, step);
	assert_int_equal(p.ranges[p.kernels[1].range].parent, step);
	assert_int_equal(p.processes[0].graph_uncaptured, 0);
	for (i = 0; i < p.n_ranges; i++)
		n_synth += p.ranges[i].synthetic;
	assert_int_equal(n_synth, 3); /* layer, attention (node 1); layer (node 2) */
	lp_profile_release(&p);
	lp_buf_release(&path);
	lp_buf_release(&b);
}

/* The 1.1 records have their sizes checked too: a STAGE record shorter than its 48 bytes, a
 * SAMPLING record shorter than 1.1's 72 (the fields after it read as 0 when absent). */
static void test_short_stage_and_sampling(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	uint8_t zero[96];
	size_t base;
	(void)state;
	memset(zero, 0, sizeof(zero));
	w_preamble(&b);
	base = b.len;
	w_rec(&b, LP_TREC_STAGE, zero, 8, NULL, 0);
	expect_error(b.data, b.len, "STAGE record of 8 bytes, expected at least 48");
	b.len = base;
	w_rec(&b, LP_TREC_SAMPLING, zero, 64, NULL, 0);
	expect_error(b.data, b.len, "SAMPLING record of 64 bytes, expected at least 72");
	b.len = base;
	w_rec(&b, LP_TREC_SAMPLING, zero, 72, NULL, 0);   /* a 1.1 writer's */
	lp_profile_init(&p, "ok");
	assert_int_equal(lp_trace_load_mem("ok.lptrace", b.data, b.len, &p, &err), 0);
	lp_profile_release(&p);
	lp_buf_release(&b);
}

/* A start/end range ended on another thread: its END may reach the file before its START. */
static void test_end_before_start(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	w_preamble(&b);
	w_nvtx(&b, LP_TRACE_NVTX_END, 0, 0, 77, 900);
	w_nvtx(&b, LP_TRACE_NVTX_START, 0, 13, 77, 100);
	lp_profile_init(&p, "se");
	assert_int_equal(lp_trace_load_mem("se.lptrace", b.data, b.len, &p, &err), 0);
	assert_int_equal(p.n_ranges, 1);
	assert_int_equal(p.ranges[0].kind, LP_RANGE_STARTEND);
	assert_int_equal(p.ranges[0].start_ns, 100);
	assert_int_equal(p.ranges[0].end_ns, 900);
	lp_profile_release(&p);
	lp_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_files_and_folders),
		cmocka_unit_test(test_graph_captured_outside_stages),
		cmocka_unit_test(test_graph_captured_inside_stages),
		cmocka_unit_test(test_graph_captured_in_warmup),
		cmocka_unit_test(test_short_stage_and_sampling),
		cmocka_unit_test(test_end_before_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
