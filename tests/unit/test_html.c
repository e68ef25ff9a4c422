/* test_html.c: report.html, the SVG figures and the timeline behind them (src/report/html.c,
 * figures.c, svg.c, src/analyze/timeline.c): escaping of every name that reaches HTML/SVG,
 * byte-identical output for the same analysis, no external resource in the page, figures present
 * exactly when their data is, the Markdown image lines, the timeline's lanes and downsampling. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/analysis.h"
#include "config/yaml.h"
#include "core/fs.h"
#include "report/figures.h"
#include "report/html.h"
#include "report/reports.h"
#include "report/svg.h"

#define MS 1000000ull

/* ---- escaping and numbers ---- */

static void test_xml_escape(void **state)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "plain", "plain" },
		{ "void k<a|b>(T*)", "void k&lt;a|b&gt;(T*)" },
		{ "a & b \"q\" 'r'", "a &amp; b &quot;q&quot; &#39;r&#39;" },
		{ "</title><script>alert(1)</script>", "&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;" },
		{ "tab\there\nnl\x01" "ctl\x7f", "tab here nl ctl " },
		{ "caf\xC3\xA9 \xE2\x80\xA6", "caf\xC3\xA9 \xE2\x80\xA6" },       /* valid UTF-8 kept */
		{ "bad\xFF\xC3(x", "bad\xEF\xBF\xBD\xEF\xBF\xBD(x" },           /* invalid bytes -> U+FFFD */
		{ "&amp;", "&amp;amp;" },                                         /* escaped once more: text, not markup */
		{ "", "" },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lp_buf b = LP_BUF_INIT;
		assert_int_equal(lp_xml_text(&b, cases[i].in), 0);
		assert_string_equal(b.data, cases[i].want);
		lp_buf_release(&b);
	}
}

static void test_xml_short(void **state)
{
	static const struct { const char *in; size_t max; const char *want; } cases[] = {
		{ "abcdef", 0, "abcdef" },
		{ "abcdef", 6, "abcdef" },
		{ "abcdefg", 6, "abcde\xE2\x80\xA6" },
		{ "<<<<<<<", 4, "&lt;&lt;&lt;\xE2\x80\xA6" },
		{ "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3, "\xC3\xA9\xC3\xA9\xE2\x80\xA6" },   /* never inside a code point */
		{ "abc", 2, "a\xE2\x80\xA6" },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lp_buf b = LP_BUF_INIT;
		assert_int_equal(lp_xml_text_short(&b, cases[i].in, cases[i].max), 0);
		assert_string_equal(b.data, cases[i].want);
		lp_buf_release(&b);
	}
}

static void test_numbers(void **state)
{
	static const struct { double v; const char *want; } nums[] = {
		{ 0, "0.0" }, { -0.01, "0.0" }, { 1.25, "1.2" }, { 1.35, "1.4" }, { -3.5, "-3.5" }, { NAN, "0.0" }, { INFINITY, "0.0" },
	};
	static const struct { double v; const char *want; } ticks[] = {
		{ 0, "0" }, { 5, "5" }, { 0.25, "0.25" }, { 1.5, "1.5" }, { 1200, "1200" }, { 0.1 + 0.2, "0.3" },
	};
	char t[64];
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		struct lp_buf b = LP_BUF_INIT;
		lp_svg_num(&b, nums[i].v);
		assert_string_equal(b.data, nums[i].want);
		lp_buf_release(&b);
	}
	for (i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		lp_svg_tick_label(t, sizeof(t), ticks[i].v);
		assert_string_equal(t, ticks[i].want);
	}
	assert_true(lp_svg_nice_step(10, 5) == 2);
	assert_true(lp_svg_nice_step(0.9, 6) == 0.2);
	assert_true(lp_svg_nice_step(0, 6) == 1);
}

/* ---- a synthetic run ---- */

/* every character that must be escaped, and a name long enough to be shortened */
static const char *evil = "void ns::k<a|b, \"c\" & 'd'>(float*, int) </svg><script>x()</script> long enough to be shortened";

static int32_t R(struct lp_profile *p, int32_t parent, const char *name, uint64_t s, uint64_t e, uint64_t payload)
{
	int32_t r = lp_test_range(p, parent, "LLM", name, s, e);
	if (payload) {
		p->ranges[r].payload_type = LP_PAYLOAD_U64;
		p->ranges[r].payload.u64 = payload;
	}
	return r;
}

static void K(struct lp_profile *p, int32_t range, const char *name, uint64_t s, uint64_t e)
{
	lp_test_kernel(p, range, name, s, e);
}

/* Two iterations: prefill (qkv, and an evil kernel), decode_all with `steps` steps of (layer ->
 * qkv, attention), `kernels_per_op` kernels each. */
static void build(struct lp_profile *p, int gpu, int steps, int kernels_per_op)
{
	int it, s, j;
	if (gpu) {
		struct lp_device *d = lp_profile_add_device(p);
		d->name = lp_profile_intern(p, "NVIDIA H100 80GB HBM3");
		d->sm_count = 132;
		d->cc_major = 9;
	}
	lp_profile_add_process(p)->pid = 7;
	p->source_kind = lp_profile_intern(p, "llmprof-trace");
	for (it = 0; it < 2; it++) {
		uint64_t t = (uint64_t)(1000 * it) * MS, step_ns = 5 * MS, u;
		int32_t pf = R(p, -1, "prefill", t, t + 10 * MS, 64), dec, q, st, ly, at;
		q = R(p, pf, "qkv", t, t + 5 * MS, 0);
		if (gpu) {
			K(p, q, "nvjet_hsh_gemm", t + 1 * MS, t + 6 * MS);
			K(p, pf, evil, t + 6 * MS, t + 7 * MS);
		}
		dec = R(p, -1, "decode_all", t + 10 * MS, t + 10 * MS + (uint64_t)steps * step_ns, 0);
		for (s = 0; s < steps; s++) {
			u = t + 10 * MS + (uint64_t)s * step_ns;
			st = R(p, dec, "decode_step", u, u + step_ns, 0);
			ly = R(p, st, "layer", u, u + 2 * MS, 0);
			q = R(p, ly, evil, u, u + 1 * MS, 0);   /* an op range with an evil name */
			at = R(p, ly, "attention", u + 1 * MS, u + 2 * MS, 0);
			(void)q;
			for (j = 0; gpu && j < kernels_per_op; j++) {
				uint64_t d = MS / (uint64_t)kernels_per_op;
				K(p, ly, "gemv_kernel", u + (uint64_t)j * d, u + (uint64_t)(j + 1) * d);
				K(p, at, "flash_decode_kernel", u + MS + (uint64_t)j * d, u + MS + (uint64_t)(j + 1) * d);
			}
		}
	}
}

static json_t *model(void)
{
	static const char *y = "name: small\nfamily: llama\ndtype: bf16\nvocab_size: 1000\nhidden_size: 256\n"
			       "intermediate_size: 512\nnum_hidden_layers: 2\nnum_attention_heads: 4\n"
			       "num_key_value_heads: 2\nhead_dim: 64\ntie_word_embeddings: true\n";
	json_t *v = NULL;
	struct lp_err err = LP_ERR_INIT;
	assert_int_equal(lp_yaml_load_string(y, strlen(y), "m", &v, &err), 0);
	return v;
}

/* The analysis of build(); with ncu metrics for gemv_kernel (the roofline) on GPU runs. */
static void analyze(struct lp_analysis *a, int gpu, int steps, int kernels_per_op)
{
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_analysis_input in;
	static struct lp_metric m[4] = {
		{ "gpu__time_duration.sum", 1e6, "nsecond", 1 },
		{ "dram__bytes_read.sum", 4e6, "byte", 1 },
		{ "dram__bytes_write.sum", 1e6, "byte", 1 },
		{ "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1e6, "", 1 },
	};
	struct lp_kernel_record ncu[1];
	json_t *mdl = model();
	memset(ncu, 0, sizeof(ncu));
	ncu[0].kernel_name = "gemv_kernel";
	ncu[0].calls = 1;
	ncu[0].metrics = m;
	ncu[0].n_metrics = 4;
	lp_profile_init(&p, "synthetic");
	build(&p, gpu, steps, kernels_per_op);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.model = mdl;
	in.batch = 1;
	in.ncu = gpu ? ncu : NULL;
	in.n_ncu = gpu ? 1 : 0;
	in.run_id = "run <&> \"id\"";
	in.mode = gpu ? "deep" : "light";
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	json_decref(mdl);
	lp_profile_release(&p);   /* nothing in the analysis points into the profile */
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (hay = strstr(hay, needle); hay; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

/* Nothing in the page may load anything: no URL but the SVG namespace, no src/href to a file. */
static void assert_self_contained(const char *html)
{
	const char *p;
	assert_null(strstr(html, "<link"));
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, "@import"));
	assert_null(strstr(html, "https:"));
	for (p = strstr(html, "http:"); p; p = strstr(p + 1, "http:"))
		assert_true(!strncmp(p, "http://www.w3.org/2000/svg\"", 27));
	for (p = strstr(html, "href=\""); p; p = strstr(p + 1, "href=\""))
		assert_int_equal(p[6], '#');   /* in-page anchors only */
}

static void test_gpu_html(void **state)
{
	struct lp_analysis a;
	struct lp_buf h1 = LP_BUF_INIT, h2 = LP_BUF_INIT, svg = LP_BUF_INIT;
	int i;
	(void)state;
	analyze(&a, 1, 4, 1);
	assert_int_equal(lp_report_html(&a, NULL, &h1), 0);
	assert_int_equal(lp_report_html(&a, NULL, &h2), 0);
	assert_int_equal(h1.len, h2.len);
	assert_memory_equal(h1.data, h2.data, h1.len);
	assert_self_contained(h1.data);
	/* the evil name never appears raw; escaped it does (kernel table, op table, hover texts) */
	assert_null(strstr(h1.data, "<script>x()"));
	assert_null(strstr(h1.data, "k<a|b"));
	assert_non_null(strstr(h1.data, "void ns::k&lt;a|b, &quot;c&quot; &amp; &#39;d&#39;&gt;(float*, int) &lt;/svg&gt;"));
	assert_non_null(strstr(h1.data, "<title>llmprof report: run &lt;&amp;&gt; &quot;id&quot;</title>"));
	assert_int_equal(count(h1.data, "<script>"), 1);   /* ours, the sorter */
	/* every section, in the stakeholder order */
	{
		static const char *const order[] = { "id=\"environment\"", "id=\"aggregates\"", "id=\"stages\"", "id=\"mfu\"",
			"id=\"takeaways\"", "id=\"operators\"", "id=\"kernels\"", "id=\"recommendations\"", "id=\"selfcheck\"",
			"id=\"run\"" };
		const char *prev = h1.data;
		size_t k;
		for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
			const char *at = strstr(h1.data, order[k]);
			assert_non_null(at);
			assert_true(at > prev);
			prev = at;
		}
	}
	/* every figure applies to this run, the roofline too (ncu joined gemv_kernel), and is inlined;
	 * but the zoom: 4 decode steps are readable without one */
	assert_false(lp_figure_applies(&a, LP_FIG_TIMELINE_ZOOM));
	for (i = 0; i < LP_FIG_COUNT; i++) {
		char id[64];
		if (i == LP_FIG_TIMELINE_ZOOM)
			continue;
		assert_true(lp_figure_applies(&a, (enum lp_figure_id)i));
		snprintf(id, sizeof(id), "<figure id=\"fig-%.*s\">", (int)(strchr(lp_figures[i].file, '.') - lp_figures[i].file),
			lp_figures[i].file);
		assert_non_null(strstr(h1.data, id));
		lp_buf_reset(&svg);
		assert_int_equal(lp_figure_render(&a, (enum lp_figure_id)i, &svg), 0);
		assert_true(!strncmp(svg.data, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39));
		assert_int_equal(count(svg.data, "<svg"), 1);
		assert_int_equal(count(svg.data, "</svg>"), 1);
		assert_true(count(svg.data, "<rect") + count(svg.data, "<circle") + count(svg.data, "<polyline") > 2);
		assert_null(strstr(svg.data, "nan"));
		assert_null(strstr(svg.data, "inf\""));
		assert_null(strstr(svg.data, "<script>x()"));
		/* the same bytes inside the page */
		assert_non_null(strstr(h1.data, svg.data));
	}
	assert_int_equal(count(h1.data, "<svg"), LP_FIG_COUNT - 1);
	/* kernel names shortened with the full name on hover */
	assert_non_null(strstr(h1.data, "<td class=\"k\" title=\"void ns::k&lt;a|b"));
	assert_non_null(strstr(h1.data, "shortened\">void ns::k&lt;a|b"));
	lp_buf_release(&h1);
	lp_buf_release(&h2);
	lp_buf_release(&svg);
	lp_analysis_release(&a);
}

static void test_timeline(void **state)
{
	struct lp_analysis a;
	const struct lp_timeline *t = &a.timeline;
	size_t i, lane[8] = { 0 };
	(void)state;
	analyze(&a, 1, 4, 1);
	assert_true(t->valid);
	assert_string_equal(t->what, "measured iteration 1: prefill + decode_all");
	assert_int_equal(t->n_lanes, 5);
	assert_string_equal(t->lanes[0].name, "stage");
	assert_string_equal(t->lanes[1].name, "decode steps");
	assert_string_equal(t->lanes[2].name, "ranges L1");
	assert_string_equal(t->lanes[3].name, "ranges L2");
	assert_string_equal(t->lanes[4].name, "GPU 0");
	assert_int_equal(t->merge_ns, 0);
	for (i = 0; i < t->n_events; i++) {
		assert_true(t->events[i].lane < t->n_lanes);
		lane[t->events[i].lane]++;
		if (i)   /* ordered by lane, then start */
			assert_true(t->events[i - 1].lane < t->events[i].lane ||
				    t->events[i - 1].start_ns <= t->events[i].start_ns);
	}
	/* iteration 1 only: 2 stages, 4 steps; L1: prefill's qkv + 4 layers; L2: 8 ops; GPU: 2 + 8 */
	assert_int_equal(lane[0], 2);
	assert_int_equal(lane[1], 4);
	assert_int_equal(lane[2], 5);
	assert_int_equal(lane[3], 8);
	assert_int_equal(lane[4], 10);
	assert_int_equal(t->n_source, 29);
	assert_int_equal(t->events[0].start_ns, 0);
	assert_int_equal(t->span_ns, 30 * MS);
	lp_analysis_release(&a);
}

/* 200 steps x 2 ops x 20 kernels = 8000 kernels in one iteration: downsampled, said so, bounded. */
static void test_timeline_downsampled(void **state)
{
	struct lp_analysis a;
	const struct lp_timeline *t = &a.timeline;
	struct lp_buf svg = LP_BUF_INIT, html = LP_BUF_INIT;
	size_t i, represented = 0;
	(void)state;
	analyze(&a, 1, 200, 20);
	assert_true(t->valid);
	assert_true(t->n_source > LP_TIMELINE_MAX_EVENTS);
	assert_true(t->n_events <= LP_TIMELINE_MAX_EVENTS);
	assert_true(t->merge_ns > 0);
	for (i = 0; i < t->n_events; i++)
		represented += t->events[i].merged;
	assert_int_equal(represented, t->n_source);   /* every event is in exactly one mark */
	assert_int_equal(lp_figure_render(&a, LP_FIG_TIMELINE, &svg), 0);
	assert_non_null(strstr(svg.data, "Downsampled: "));
	assert_non_null(strstr(svg.data, " events merged, from "));
	assert_true(svg.len < 1500000);
	/* the zoom on the first decode steps: each event drawn (3 steps of 40 kernels and 4 ranges) */
	assert_true(t->have_zoom);
	assert_true(lp_figure_applies(&a, LP_FIG_TIMELINE_ZOOM));
	assert_int_equal(t->zoom_merge_ns, 0);
	assert_true(t->n_zoom_events >= 3 * 44 && t->n_zoom_events < 4 * 44 + 10);
	assert_true(t->zoom_to_ns - t->zoom_from_ns == 3 * 5 * MS);
	lp_buf_reset(&svg);
	assert_int_equal(lp_figure_render(&a, LP_FIG_TIMELINE_ZOOM, &svg), 0);
	assert_non_null(strstr(svg.data, "Zoom on the first 3 decode steps"));
	assert_int_equal(lp_report_html(&a, NULL, &html), 0);
	assert_true(html.len < 2000000);
	assert_non_null(strstr(html.data, "<figure id=\"fig-timeline_zoom\">"));
	lp_buf_release(&svg);
	lp_buf_release(&html);
	lp_analysis_release(&a);
}

static void test_cpu_html(void **state)
{
	struct lp_analysis a;
	struct lp_buf h = LP_BUF_INIT;
	(void)state;
	analyze(&a, 0, 4, 1);
	assert_false(lp_figure_applies(&a, LP_FIG_KERNEL_FAMILIES));
	assert_false(lp_figure_applies(&a, LP_FIG_TOP_KERNELS));
	assert_false(lp_figure_applies(&a, LP_FIG_ROOFLINE));
	assert_false(lp_figure_applies(&a, LP_FIG_MFU));
	assert_true(lp_figure_applies(&a, LP_FIG_TIMELINE));
	assert_true(lp_figure_applies(&a, LP_FIG_OPERATORS));
	assert_true(lp_figure_applies(&a, LP_FIG_STEP_LATENCY));
	assert_int_equal(lp_report_html(&a, NULL, &h), 0);
	assert_self_contained(h.data);
	assert_non_null(strstr(h.data, "No GPU kernels were recorded in this run."));
	assert_null(strstr(h.data, "Nsight Compute metrics"));
	assert_int_equal(count(h.data, "<svg"), 3);
	assert_null(strstr(h.data, "GPU 0"));   /* no GPU lane on the timeline */
	lp_buf_release(&h);
	lp_analysis_release(&a);
}

/* No range at all: the whole run, kernels on the GPU lane. */
static void test_timeline_whole_run(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	int i;
	(void)state;
	lp_profile_init(&p, "synthetic");
	lp_profile_add_device(&p)->name = lp_profile_intern(&p, "NVIDIA H100 80GB HBM3");
	for (i = 0; i < 10; i++)
		K(&p, -1, "gemv_kernel", (uint64_t)(100 + 10 * i) * MS, (uint64_t)(105 + 10 * i) * MS);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	lp_profile_release(&p);
	assert_true(a.timeline.valid);
	assert_string_equal(a.timeline.what, "the whole run (no stage ranges), warm-up excluded");
	assert_int_equal(a.timeline.n_lanes, 1);
	assert_string_equal(a.timeline.lanes[0].name, "GPU 0");
	assert_int_equal(a.timeline.n_events, 10);
	assert_int_equal(a.timeline.span_ns, 95 * MS);
	assert_false(a.timeline.have_zoom);
	assert_false(lp_figure_applies(&a, LP_FIG_STEP_LATENCY));
	assert_false(lp_figure_applies(&a, LP_FIG_OPERATORS));
	assert_true(lp_figure_applies(&a, LP_FIG_TIMELINE));
	lp_analysis_release(&a);
}

/* The region tree from ncu/regions/report.json; a damaged one is said, not skipped. */
static void test_regions_section(void **state)
{
	struct lp_analysis a;
	struct lp_buf h = LP_BUF_INIT, path = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	const char *dir = lp_test_tmpdir("html_regions");
	(void)state;
	analyze(&a, 1, 4, 1);
	lp_fs_join(&path, dir, "ncu/regions");
	assert_int_equal(lp_fs_mkdir_p(path.data, &err), 0);
	lp_fs_join(&path, dir, "ncu/regions/report.json");
	lp_test_write(path.data, "{\"scopes\": [{\"regions\": [{\"name\": \"LLM@decode_all\", \"depth\": 0, "
				 "\"total_ms_inclusive\": 2.5, \"total_ms_exclusive\": 0.5, \"kernel_count\": 8, \"reconciled\": true}, "
				 "{\"name\": \"LLM@decode_all::<k&>\", \"depth\": 1, \"total_ms_inclusive\": 2.0, "
				 "\"total_ms_exclusive\": 2.0, \"kernel_count\": 6, \"reconciled\": true}]}]}\n");
	assert_int_equal(lp_report_html(&a, dir, &h), 0);
	assert_non_null(strstr(h.data, "<a href=\"#regions\">"));
	assert_non_null(strstr(h.data, "<td class=\"k\" style=\"padding-left:8px\">LLM@decode_all</td>"));
	assert_non_null(strstr(h.data, "<td class=\"k\" style=\"padding-left:26px\">LLM@decode_all::&lt;k&amp;&gt;</td>"));
	lp_test_write(path.data, "{\"scopes\": [");
	lp_buf_reset(&h);
	assert_int_equal(lp_report_html(&a, dir, &h), 0);
	assert_non_null(strstr(h.data, "<p>ncu/regions/report.json could not be read (line 1: "));
	lp_buf_release(&h);
	lp_buf_release(&path);
	lp_analysis_release(&a);
}

static void read_file(const char *dir, const char *name, struct lp_buf *out)
{
	struct lp_buf p = LP_BUF_INIT;
	lp_fs_join(&p, dir, name);
	lp_buf_reset(out);
	lp_test_read(p.data, out);
	lp_buf_release(&p);
}

/* lp_report_write_all: report.html and figures/ beside the other reports, byte-identical on a
 * second write, image lines in the Markdown, and figures that no longer apply removed. */
static void test_write_all(void **state)
{
	struct lp_analysis a;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b1 = LP_BUF_INIT, b2 = LP_BUF_INIT, path = LP_BUF_INIT;
	const char *dir = lp_test_tmpdir("html_write_all");
	int i;
	(void)state;
	analyze(&a, 1, 4, 1);
	assert_int_equal(lp_report_write_all(dir, &a, &err), 0);
	read_file(dir, "report.html", &b1);
	assert_int_equal(lp_report_write_all(dir, &a, &err), 0);
	read_file(dir, "report.html", &b2);
	assert_int_equal(b1.len, b2.len);
	assert_memory_equal(b1.data, b2.data, b1.len);
	for (i = 0; i < LP_FIG_COUNT; i++) {
		struct lp_buf f = LP_BUF_INIT;
		char rel[64], line[160];
		if (i == LP_FIG_TIMELINE_ZOOM) {   /* does not apply: no file, no line */
			lp_fs_join(&path, dir, "figures/timeline_zoom.svg");
			assert_false(lp_fs_exists(path.data));
			lp_buf_reset(&path);
			read_file(dir, "report.md", &b2);
			assert_null(strstr(b2.data, "timeline_zoom"));
			continue;
		}
		snprintf(rel, sizeof(rel), "figures/%s", lp_figures[i].file);
		read_file(dir, rel, &f);
		assert_non_null(strstr(b1.data, f.data));   /* the file is the inlined figure */
		lp_buf_release(&f);
		snprintf(line, sizeof(line), "![%s](figures/%s)", lp_figures[i].title, lp_figures[i].file);
		read_file(dir, "report.md", &b2);
		assert_non_null(strstr(b2.data, line));
		read_file(dir, "stakeholder_summary.md", &b2);
		assert_non_null(strstr(b2.data, line));
	}
	lp_analysis_release(&a);

	/* the same folder rewritten from a CPU analysis: the kernel figures go */
	analyze(&a, 0, 4, 1);
	assert_int_equal(lp_report_write_all(dir, &a, &err), 0);
	lp_fs_join(&path, dir, "figures/top_kernels.svg");
	assert_false(lp_fs_exists(path.data));
	lp_buf_reset(&path);
	lp_fs_join(&path, dir, "figures/timeline.svg");
	assert_true(lp_fs_is_file(path.data));
	read_file(dir, "report.md", &b2);
	assert_null(strstr(b2.data, "figures/top_kernels.svg"));
	assert_non_null(strstr(b2.data, "![Timeline of one measured iteration](figures/timeline.svg)"));
	lp_analysis_release(&a);
	lp_buf_release(&b1);
	lp_buf_release(&b2);
	lp_buf_release(&path);
}

static void test_url(void **state)
{
	struct lp_buf u = LP_BUF_INIT, p = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	const char *dir = lp_test_tmpdir("html url");
	(void)state;
	lp_fs_join(&p, dir, "a b#%");
	assert_int_equal(lp_fs_mkdir_p(p.data, &err), 0);
	assert_int_equal(lp_report_html_url(p.data, &u), 0);
	assert_true(!strncmp(u.data, "file:///", 8));
	assert_non_null(strstr(u.data, "/html%20url/a%20b%23%25/report.html"));
	lp_buf_reset(&u);
	assert_int_equal(lp_report_html_url("/nonexistent/llmprof/run", &u), -1);
	lp_buf_release(&u);
	lp_buf_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_escape),
		cmocka_unit_test(test_xml_short),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_gpu_html),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_timeline_downsampled),
		cmocka_unit_test(test_timeline_whole_run),
		cmocka_unit_test(test_regions_section),
		cmocka_unit_test(test_cpu_html),
		cmocka_unit_test(test_write_all),
		cmocka_unit_test(test_url),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
