/* test_waterfall.c: the gap waterfall (src/analyze/waterfall.c) on an in-memory decode with known
 * times: the items add up to the latency per step, the floor is the model's (bytes / bandwidth on
 * an H100 SXM), GEMM and attention kernels carry the model's floors in proportion to their time,
 * other kernels none, an Nsight Compute record replaces a kernel's floor, items are ordered by
 * excess, idle gaps are located between the kernels around them, and the overlap of concurrent
 * kernels is taken out of the kernel items through their busy shares. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/analysis.h"
#include "config/yaml.h"
#include "report/sections.h"

#define US 1000ull
#define MS 1000000ull

static int32_t R(struct lp_profile *p, int32_t parent, const char *name, uint64_t s, uint64_t e)
{
	return lp_test_range(p, parent, "LLM", name, s, e);
}

static void K(struct lp_profile *p, int32_t range, const char *name, uint64_t s, uint64_t e)
{
	lp_test_kernel(p, range, name, s, e)->launch_ns = s;   /* launched when it starts: nothing queued */
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

/* Two iterations of 2 decode steps of 100 us (host ranges as long as the steps). Each step:
 * gemv [0, 40], attention [30, 50] (overlaps gemv by 10), rmsnorm [60, 70], gemv [70, 90];
 * busy 80 us, summed kernel time 90 us, idle 20 us (the 10 us gaps 50-60 and 90-100). A prefill
 * before each decode so that the token counts are known (payload 8 = batch 1 x prompt 8). */
/* An iteration's prefill at t: 1 ms, payload 8 (batch 1 x prompt 8), one kernel [0.1, 0.9] ms. */
static void prefill_at(struct lp_profile *p, uint64_t t)
{
	int32_t pf = R(p, -1, "prefill", t, t + 1 * MS);
	p->ranges[pf].payload_type = LP_PAYLOAD_U64;
	p->ranges[pf].payload.u64 = 8;
	K(p, pf, "gemm_prefill", t + 100 * US, t + 900 * US);
}

static void build_at(struct lp_profile *p, uint64_t off)
{
	int it, s;
	for (it = 0; it < 2; it++) {
		uint64_t t = off + (uint64_t)it * 10 * MS;
		int32_t dec;
		prefill_at(p, t);
		dec = R(p, -1, "decode_all", t + 2 * MS, t + 2 * MS + 200 * US);
		for (s = 0; s < 2; s++) {
			uint64_t b = t + 2 * MS + (uint64_t)s * 100 * US;
			int32_t st = R(p, dec, "decode_step", b, b + 100 * US);
			K(p, st, "gemv_kernel", b, b + 40 * US);
			K(p, st, "attention_decode", b + 30 * US, b + 50 * US);
			K(p, st, "rmsnorm_kernel", b + 60 * US, b + 70 * US);
			K(p, st, "gemv_kernel", b + 70 * US, b + 90 * US);
		}
	}
}

static void build(struct lp_profile *p)
{
	build_at(p, 0);
}

static const struct lp_wf_item *find(const struct lp_waterfall *w, const char *label)
{
	size_t i;
	for (i = 0; i < w->n_items; i++)
		if (!strcmp(w->items[i].label, label))
			return &w->items[i];
	return NULL;
}

static void analyze(struct lp_profile *p, const struct lp_kernel_record *ncu, size_t n_ncu, struct lp_analysis *a)
{
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	struct lp_device dev;
	json_t *m = model();
	memset(&in, 0, sizeof(in));
	memset(&dev, 0, sizeof(dev));
	dev.name = "NVIDIA H100 80GB HBM3";
	dev.uuid = "";
	in.profile = p;
	in.model = m;
	in.batch = 1;
	in.prompt_len = 8;
	in.device = &dev;
	in.ncu = ncu;
	in.n_ncu = n_ncu;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	json_decref(m);
}

static void test_decode_waterfall_adds_up(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	const struct lp_waterfall *w;
	const struct lp_wf_item *gemv, *att, *norm, *idle, *ovl;
	double sum = 0, bytes, floor_ms, f_gemm, f_att, wb;
	size_t i;
	(void)state;
	lp_profile_init(&p, "wf");
	build(&p);
	analyze(&p, NULL, 0, &a);
	w = &a.waterfall[1];
	assert_true(w->valid);
	assert_string_equal(w->unit, "step");
	assert_true(fabs(w->units - 4) < 1e-12);
	assert_true(fabs(w->latency_ms - 0.100) < 1e-12);
	for (i = 0; i < w->n_items; i++)
		sum += w->items[i].ms;
	assert_true(fabs(sum - w->latency_ms) < 1e-12);
	/* the floor: minimum bytes of a step / 3350 GB/s (memory-bound at batch 1) */
	bytes = lp_bytes_decode(&a.model, 1, 8, 2) / 2;
	floor_ms = bytes / 3350e9 * 1e3;
	assert_true(fabs(w->items[0].ms - floor_ms) < 1e-12);
	assert_int_equal(w->items[0].kind, LP_WF_FLOOR);
	assert_non_null(strstr(w->floor_source, "memory: "));
	/* model floors: the GEMM holds the weights, attention the KV cache, the norm none */
	wb = lp_bytes_weights_step(&a.model, 1);
	f_gemm = wb / 3350e9 * 1e3;
	f_att = (bytes - wb) / 3350e9 * 1e3;
	gemv = find(w, "gemv_kernel");
	att = find(w, "attention_decode");
	norm = find(w, "rmsnorm_kernel");
	idle = find(w, "GPU idle inside the stage");
	ovl = find(w, "busy time outside the kernels' shares");
	assert_non_null(gemv);
	assert_non_null(att);
	assert_non_null(norm);
	assert_non_null(idle);
	assert_null(ovl);   /* every busy instant belongs to this stage's kernels */
	/* busy shares per step: gemv 30 + 10/2 + 20 us, attention 10/2 + 10 us (the 10 us they overlap
	 * split between them), so the 10 us overlap credit is out of the kernel items */
	assert_true(fabs(gemv->floor_ms - f_gemm) < 1e-12 && fabs(gemv->ms - (0.055 - f_gemm)) < 1e-12);
	assert_true(fabs(att->floor_ms - f_att) < 1e-12 && fabs(att->ms - (0.015 - f_att)) < 1e-12);
	assert_true(fabs(w->overlap_ms - 0.010) < 1e-12);
	assert_string_equal(gemv->floor_source, "model");
	assert_true(norm->floor_ms == 0 && fabs(norm->ms - 0.010) < 1e-12);
	assert_true(fabs(idle->ms - 0.020) < 1e-12);
	/* kernel items by excess: gemv, attention, norm */
	assert_true(gemv < att && att < norm);
	assert_true(w->top[0] >= 0 && &w->items[w->top[0]] == gemv);
	assert_true(&w->items[w->top[1]] == idle);   /* 20 us, just above attention's 20 us minus its floor */
	assert_true(&w->items[w->top[2]] == att);
	/* the gaps, located: 50-60 us in every step; 90-100 us between the steps of an iteration
	 * (gemv to the next step's gemv) and after the last kernel of the iteration, once each */
	assert_int_equal(w->n_gaps, 3);
	assert_string_equal(w->gaps[0].label, "between attention_decode and rmsnorm_kernel");
	assert_true(fabs(w->gaps[0].ms - 0.010) < 1e-12 && fabs(w->gaps[0].count - 1.0) < 1e-12);
	for (i = 1; i < 3; i++)
		assert_true(fabs(w->gaps[i].ms - 0.005) < 1e-12 && fabs(w->gaps[i].count - 0.5) < 1e-12);
	assert_true(strstr(w->gaps[1].label, "gemv_kernel") && strstr(w->gaps[2].label, "gemv_kernel"));
	/* prefill: one iteration's kernel; the floor is the prefill's */
	assert_true(a.waterfall[0].valid);
	assert_true(fabs(a.waterfall[0].latency_ms - 1.0) < 1e-12);
	sum = 0;
	for (i = 0; i < a.waterfall[0].n_items; i++)
		sum += a.waterfall[0].items[i].ms;
	assert_true(fabs(sum - 1.0) < 1e-12);
	/* the recommendation names the three items */
	for (i = 0; i < a.n_advice; i++)
		if (!strcmp(a.advice[i].rule, "waterfall-decode"))
			break;
	assert_true(i < a.n_advice);
	assert_non_null(strstr(a.advice[i].text, "(1) gemv_kernel"));
	assert_non_null(strstr(a.advice[i].text, "(2) GPU idle inside the stage"));
	assert_non_null(strstr(a.advice[i].text, "(3) attention_decode"));
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

/* The model floor split over many GEMM kernels in proportion to their time sums back to it only up
 * to rounding: that is no residual (run 36's reports read "stage floor not held by a GEMM/attention
 * kernel | -0.0000 | -0.0%"). Seven GEMMs of 5-53 us a step, attention 11 us: their floors summed
 * to 1e-19 ms under the stage's. */
static void test_floor_split_rounding(void **state)
{
	static const unsigned us[] = { 53, 45, 37, 29, 21, 13, 5 }; /* before the fix: -1.08e-19 ms */
	static const char *const names[] = { "gemm_a", "gemm_b", "gemm_c", "gemm_d", "gemm_e", "gemm_f", "gemm_g" };
	struct lp_profile p;
	struct lp_analysis a;
	const struct lp_wf_item *kf;
	int it, s, k;
	(void)state;
	lp_profile_init(&p, "wfr");
	for (it = 0; it < 2; it++) {
		uint64_t t = (uint64_t)it * 10 * MS;
		int32_t dec;
		prefill_at(&p, t);
		dec = R(&p, -1, "decode_all", t + 2 * MS, t + 2 * MS + 600 * US);
		for (s = 0; s < 2; s++) {
			uint64_t b = t + 2 * MS + (uint64_t)s * 300 * US, at = b;
			int32_t st = R(&p, dec, "decode_step", b, b + 300 * US);
			for (k = 0; k < 7; k++) {
				K(&p, st, names[k], at, at + us[k] * US);
				at += us[k] * US + 1 * US;
			}
			K(&p, st, "attention_decode", at, at + 11 * US);
		}
	}
	analyze(&p, NULL, 0, &a);
	assert_true(a.waterfall[1].valid);
	assert_null(find(&a.waterfall[1], "stage floor not held by a GEMM/attention kernel"));
	kf = find(&a.waterfall[1], "kernel floors above the stage floor");
	assert_non_null(kf);
	if (kf)
		assert_true(kf->ms == 0);
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

/* Two ranks (processes 1 and 2 on GPUs 0 and 1) run the same decode at the same time, rank 2 55 us
 * later: its kernels fall into rank 1's idle gaps on the one clock. The gaps are located per
 * process, so each rank's gaps are what it alone shows (the single-process numbers above). */
static void test_gaps_per_process(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	const struct lp_waterfall *w;
	size_t i, r0, k0;
	(void)state;
	lp_profile_init(&p, "wf2");
	build(&p);
	r0 = p.n_ranges;
	k0 = p.n_kernels;
	build_at(&p, 55 * US);
	for (i = r0; i < p.n_ranges; i++)
		p.ranges[i].pid = 2;
	for (i = k0; i < p.n_kernels; i++) {
		p.kernels[i].pid = 2;
		p.kernels[i].device = 1;
	}
	analyze(&p, NULL, 0, &a);
	w = &a.waterfall[1];
	assert_true(w->valid);
	assert_true(fabs(w->units - 8) < 1e-12);   /* 2 ranks x 2 iterations x 2 steps */
	assert_int_equal(w->n_gaps, 3);
	assert_string_equal(w->gaps[0].label, "between attention_decode and rmsnorm_kernel");
	assert_true(fabs(w->gaps[0].ms - 0.010) < 1e-12 && fabs(w->gaps[0].count - 1.0) < 1e-12);
	for (i = 1; i < 3; i++)
		assert_true(fabs(w->gaps[i].ms - 0.005) < 1e-12 && fabs(w->gaps[i].count - 0.5) < 1e-12);
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

/* Deep mode: gemv_kernel joined to an ncu record of 1 MB DRAM traffic per launch: its floor is
 * 2 launches x 1 MB / 3350 GB/s per step, and the difference to the model floor shows as residual. */
static void test_ncu_floor_and_no_model(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_kernel_record ncu;
	struct lp_metric m[2] = { { "dram__bytes_read.sum", 1e6, "byte", 1 }, { "gpu__time_duration.sum", 2e4, "nsecond", 1 } };
	const struct lp_waterfall *w;
	const struct lp_wf_item *gemv, *res, *att;
	double sum = 0;
	size_t i;
	(void)state;
	memset(&ncu, 0, sizeof(ncu));
	ncu.kernel_name = "gemv_kernel";
	ncu.calls = 1;
	ncu.metrics = m;
	ncu.n_metrics = 2;
	lp_profile_init(&p, "wf");
	build(&p);
	analyze(&p, &ncu, 1, &a);
	w = &a.waterfall[1];
	gemv = find(w, "gemv_kernel");
	assert_non_null(gemv);
	assert_string_equal(gemv->floor_source, "ncu");
	assert_true(w->used_ncu);
	assert_true(fabs(gemv->floor_ms - 2e6 / 3350e9 * 1e3) < 1e-12);
	for (res = NULL, i = 0; i < w->n_items; i++)
		if (w->items[i].kind == LP_WF_RESIDUAL)
			res = &w->items[i];
	assert_non_null(res);
	/* residual = the kernel floors (ncu for gemv, the model's for attention) - the stage floor */
	att = find(w, "attention_decode");
	assert_non_null(att);
	assert_true(fabs(res->ms - (gemv->floor_ms + att->floor_ms - w->floor_ms)) < 1e-12);
	for (i = 0; i < w->n_items; i++)
		sum += w->items[i].ms;
	assert_true(fabs(sum - w->latency_ms) < 1e-12);
	lp_analysis_release(&a);

	/* no model shape: the floor is 0 with the reason, and the items still add up */
	{
		struct lp_analysis_input in;
		struct lp_err err = LP_ERR_INIT;
		memset(&in, 0, sizeof(in));
		in.profile = &p;
		assert_int_equal(lp_analyze(&in, &a, &err), 0);
		w = &a.waterfall[1];
		assert_true(w->valid);
		assert_true(w->floor_ms == 0);
		assert_non_null(strstr(w->floor_source, "floor n/a"));
		for (i = 0; i < w->n_items; i++)
			assert_int_not_equal(w->items[i].kind, LP_WF_RESIDUAL);
		sum = 0;
		for (i = 0; i < w->n_items; i++)
			sum += w->items[i].ms;
		assert_true(fabs(sum - w->latency_ms) < 1e-12);
		assert_false(a.waterfall[0].valid == 0 && a.waterfall[0].why[0] == '\0');
		{
			/* report.md: the reason once, not in every cell or item */
			struct lp_buf md = LP_BUF_INIT;
			const char *at;
			size_t n = 0;
			assert_int_equal(lp_section_waterfall(&a, &md), 0);
			assert_non_null(strstr(md.data, "Floor: n/a (no model shape"));
			assert_null(strstr(md.data, "floor n/a"));
			assert_null(strstr(md.data, "over its none floor"));
			assert_non_null(strstr(md.data, "| gemv\\_kernel |"));
			lp_buf_reset(&md);
			assert_int_equal(lp_section_mfu(&a, &md), 0);
			at = strstr(md.data, "\nn/a [1]: no model shape");   /* the note under the table */
			assert_non_null(at);
			for (; at > md.data; at--)   /* the table above it: references only */
				n += !strncmp(at, "no model shape", 14);
			assert_int_equal(n, 0);
			assert_non_null(strstr(md.data, "| n/a \\[1\\] |"));   /* md escapes the brackets */
			lp_buf_release(&md);
		}
		lp_analysis_release(&a);
	}
	lp_profile_release(&p);
}

/* ncu and CUPTI spell kernels differently: "void k<1, 2>(const unsigned short *)" vs
 * "k<1, 2>(unsigned short const*)". Template variants keep their own metrics; a variant ncu did not
 * profile joins nothing (not the average of its siblings); a name without template arguments joins
 * by function name. */
static void test_ncu_join_variants(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	struct lp_metric m1[1] = { { "dram__bytes_read.sum", 1e6, "byte", 1 } };
	struct lp_metric m2[1] = { { "dram__bytes_read.sum", 3e6, "byte", 1 } };
	struct lp_metric m3[1] = { { "dram__bytes_read.sum", 5e6, "byte", 1 } };
	struct lp_kernel_record ncu[3];
	size_t i, seen = 0;
	int32_t d;
	(void)state;
	memset(ncu, 0, sizeof(ncu));
	ncu[0].kernel_name = "void k_gemv<1, 0>(const unsigned short *, int)";
	ncu[1].kernel_name = "void k_gemv<1, 1>(const unsigned short *, int)";
	ncu[2].kernel_name = "void k_attn<64>(const unsigned short *)";
	ncu[0].metrics = m1;
	ncu[1].metrics = m2;
	ncu[2].metrics = m3;
	for (i = 0; i < 3; i++) {
		ncu[i].calls = 1;
		ncu[i].n_metrics = 1;
	}
	lp_profile_init(&p, "join");
	d = R(&p, -1, "decode_all", 0, 10 * MS);
	K(&p, d, "k_gemv<1, 0>(unsigned short const*, int)", 0, 1 * MS);
	K(&p, d, "k_gemv<1, 1>(unsigned short const*, int)", 1 * MS, 2 * MS);
	K(&p, d, "k_gemv<1, 3>(unsigned short const*, int)", 2 * MS, 3 * MS);
	K(&p, d, "k_attn", 3 * MS, 4 * MS);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.ncu = ncu;
	in.n_ncu = 3;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	for (i = 0; i < a.kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &a.kernels.rows[i];
		if (strstr(r->name, "k_gemv<1, 0>")) {
			assert_true(r->ncu.joined && r->ncu.dram_bytes == 1e6);
			seen++;
		} else if (strstr(r->name, "k_gemv<1, 1>")) {
			assert_true(r->ncu.joined && r->ncu.dram_bytes == 3e6);
			seen++;
		} else if (strstr(r->name, "k_gemv<1, 3>")) {
			assert_false(r->ncu.joined);
			seen++;
		} else if (!strcmp(r->name, "k_attn")) {
			assert_true(r->ncu.joined && r->ncu.dram_bytes == 5e6);
			seen++;
		}
	}
	assert_int_equal(seen, 4);
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

/* Issue 12: MFU/MBU of a program that named no model come from the shape its account reports (the
 * Hugging Face config of llama-3.2-1b as llmprof_auto writes it). They must equal what the same run
 * gives with model=llama-3.2-1b (conf/model/llm/llama-3.2-1b.yaml), whose FLOPs and bytes
 * test_flops.c checks against hand-computed values; token counts from the account too. */
static void test_discovered_shape_matches_the_config(void **state)
{
	struct lp_profile p;
	struct lp_analysis a, b;
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	struct lp_device dev;
	json_t *hf = json_load_file(lp_test_fixture("hf/llama-3.2-1b.json"), 0, NULL), *account, *conf = NULL;
	int k;
	(void)state;
	assert_non_null(hf);
	assert_int_equal(lp_yaml_load_file(LP_CONF_DIR "/model/llm/llama-3.2-1b.yaml", &conf, &err), 0);
	account = json_pack("{s:{s:s, s:s, s:O}, s:{s:i, s:i, s:i}}", "model", "class", "LlamaForCausalLM", "dtype",
		"bf16", "hf_config", hf, "tokens", "batch", 1, "prompt_len", 8, "decode_steps", 2);
	assert_non_null(account);
	lp_profile_init(&p, "wf");
	build(&p);
	memset(&dev, 0, sizeof(dev));
	dev.name = "NVIDIA H100 80GB HBM3";
	dev.uuid = "";
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.device = &dev;
	in.auto_info = account;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.device = &dev;
	in.model = conf;
	in.batch = 1;
	in.prompt_len = 8;
	assert_int_equal(lp_analyze(&in, &b, &err), 0);
	assert_true(a.have_model && b.have_model);
	assert_true(a.params.total == b.params.total && a.params.matmul_active == b.params.matmul_active);
	assert_int_equal(a.batch, 1);
	assert_int_equal(a.prompt_len, 8);
	for (k = 0; k < 3; k++) {
		assert_true(a.perf[k].flops.valid && a.perf[k].bytes.valid && a.perf[k].mfu.valid && a.perf[k].mbu.valid);
		assert_true(a.perf[k].flops.value == b.perf[k].flops.value);
		assert_true(a.perf[k].bytes.value == b.perf[k].bytes.value);
		assert_true(a.perf[k].mfu.value == b.perf[k].mfu.value && a.perf[k].mbu.value == b.perf[k].mbu.value);
	}
	lp_analysis_release(&a);
	lp_analysis_release(&b);
	lp_profile_release(&p);
	json_decref(account);
	json_decref(hf);
	json_decref(conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_waterfall_adds_up),
		cmocka_unit_test(test_gaps_per_process),
		cmocka_unit_test(test_ncu_floor_and_no_model),
		cmocka_unit_test(test_floor_split_rounding),
		cmocka_unit_test(test_ncu_join_variants),
		cmocka_unit_test(test_discovered_shape_matches_the_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
