/* test_regions.c: the region model (analyze/regions.c): NVTX expressions, attribution of kernel
 * and range results, inclusive/exclusive math and its 1% reconciliation, filters, start/end
 * overlap rule, folder names. Fixtures: tests/fixtures/regions/ (synthetic, ncu's raw format). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/regions.h"
#include "parse/ncu_nvtx.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct loaded {
	struct lp_regions_spec spec;
	struct lp_regions r;
	struct lp_region_scope s;
};

static void load(struct loaded *L, const char *fixture, const char *const *inc, size_t n_inc,
	const char *const *exc, size_t n_exc, const char *const *kinc, size_t n_kinc,
	const char *const *kexc, size_t n_kexc)
{
	static const char *const metrics[] = { "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
		"not__collected.sum" };
	struct lp_err err = LP_ERR_INIT;
	memset(L, 0, sizeof(*L));
	L->spec.include = inc;
	L->spec.n_include = n_inc;
	L->spec.exclude = exc;
	L->spec.n_exclude = n_exc;
	L->spec.kernels_include = kinc;
	L->spec.n_kernels_include = n_kinc;
	L->spec.kernels_exclude = kexc;
	L->spec.n_kernels_exclude = n_kexc;
	L->spec.metrics = metrics;
	L->spec.n_metrics = N(metrics);
	if (lp_regions_init(&L->r, &L->spec, &err) < 0 ||
			lp_regions_load_ncu_raw(&L->r, lp_test_fixture(fixture), &err) < 0 ||
			lp_regions_finish(&L->r, &err) < 0 ||
			lp_regions_scope(&L->r, LP_REGION_SCOPE_AGGREGATE, 0, -1, &L->s, &err) < 0)
		fail_msg("%s", err.msg);
}

static void unload(struct loaded *L)
{
	lp_regions_scope_release(&L->s);
	lp_regions_release(&L->r);
}

static int32_t node(const struct lp_regions *r, const char *name)
{
	size_t i;
	for (i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i].name, name))
			return (int32_t)i;
	return -1;
}

static const struct lp_region_stats *stats(const struct loaded *L, const char *name)
{
	int32_t i = node(&L->r, name);
	if (i < 0)
		fail_msg("no region '%s'", name);
	return &L->s.stats[i];
}

static void assert_ms(double got, double want)
{
	if (fabs(got - want) > 1e-9)
		fail_msg("got %.9f ms, want %.9f ms", got, want);
}

/* Every present region: inclusive == exclusive + sum(children inclusive) within 1%. */
static int all_reconciled(const struct loaded *L)
{
	size_t i, j;
	for (i = 0; i < L->r.n_nodes; i++) {
		double child = 0;
		const struct lp_region_stats *st = &L->s.stats[i];
		for (j = 0; j < L->r.n_nodes; j++)
			if (L->r.nodes[j].parent == (int32_t)i)
				child += L->s.stats[j].incl_ms;
		if (fabs(st->incl_ms - (st->excl_ms + child)) > 0.01 * st->incl_ms + 1e-12)
			return 0;
		if (!st->reconciled)
			return 0;
	}
	return 1;
}

/* ---- expressions ---- */

/* Parsing expressions and their ncu form: tests/data/regions.test (lp-test-tool, mode region). */

static void test_pattern_match(void **state)
{
	struct lp_arena a = LP_ARENA_INIT;
	struct lp_region_pattern p;
	struct lp_ncu_nvtx_stack st = LP_NCU_NVTX_STACK_INIT;
	struct lp_err err = LP_ERR_INIT;
	size_t lo, hi;
	const char *cell = "9  \"<default domain>:A:none:none:none:none:ASCII:A\"  "
		"\"<default domain>:B:none:none:none:none:ASCII:B\"  \"<default domain>:C:none:none:none:none:ASCII:C\" ";
	(void)state;
	assert_int_equal(lp_ncu_nvtx_parse(cell, 0, &st, &err), 0);
	assert_int_equal(st.n, 3);
	lp_region_pattern_parse("B/", &a, &p, &err);
	assert_int_equal(lp_region_pattern_match(&p, &st, &lo, &hi), 1);
	assert_int_equal(lo, 1);
	lp_region_pattern_parse("A/C/", &a, &p, &err);          /* C is not directly inside A */
	assert_int_equal(lp_region_pattern_match(&p, &st, &lo, &hi), 0);
	lp_region_pattern_parse("A/*/C/", &a, &p, &err);
	assert_int_equal(lp_region_pattern_match(&p, &st, &lo, &hi), 1);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 2);
	lp_region_pattern_parse("A::B/", &a, &p, &err);
	assert_int_equal(lp_region_pattern_match(&p, &st, &lo, &hi), 1);
	assert_int_equal(hi, 1);
	lp_region_pattern_parse("[B/", &a, &p, &err);
	assert_int_equal(lp_region_pattern_match(&p, &st, &lo, &hi), 0);
	lp_region_pattern_parse("B]/", &a, &p, &err);
	assert_int_equal(lp_region_pattern_match(&p, &st, &lo, &hi), 0);
	lp_region_pattern_parse("C]/", &a, &p, &err);
	assert_int_equal(lp_region_pattern_match(&p, &st, &lo, &hi), 1);
	lp_region_pattern_parse("X@A/", &a, &p, &err);           /* another domain */
	assert_int_equal(lp_region_pattern_match(&p, &st, &lo, &hi), 0);
	lp_ncu_nvtx_stack_release(&st);
	lp_arena_release(&a);
}

/* ---- kernel replay ---- */

static void test_kernel_nested(void **state)
{
	static const char *const inc[] = { "A/", "B/" };
	struct loaded L;
	const struct lp_region_stats *a, *a1, *x, *b, *ba;
	(void)state;
	load(&L, "regions/kernel_nested_raw.csv", inc, 2, NULL, 0, NULL, 0, NULL, 0);
	assert_int_equal(L.r.results_read, 10);
	assert_int_equal(L.r.outside_regions, 1);
	assert_int_equal(L.r.n_nodes, 5);
	assert_int_equal(L.r.nodes[node(&L.r, "A::A1")].parent, node(&L.r, "A"));
	assert_int_equal(L.r.nodes[node(&L.r, "A::A1::A1x")].parent, node(&L.r, "A::A1"));
	assert_int_equal(L.r.nodes[node(&L.r, "A::A1::A1x")].depth, 2);
	assert_int_equal(L.r.nodes[node(&L.r, "B::A")].parent, node(&L.r, "B"));
	assert_int_equal(L.r.nodes[node(&L.r, "B")].parent, -1);
	assert_string_equal(L.r.nodes[node(&L.r, "A")].expression, "A/");
	assert_null(L.r.nodes[node(&L.r, "A::A1")].expression);
	/* report order: A's tree, then B's */
	assert_string_equal(L.r.nodes[L.r.order[0]].name, "A");
	assert_string_equal(L.r.nodes[L.r.order[1]].name, "A::A1");
	assert_string_equal(L.r.nodes[L.r.order[2]].name, "A::A1::A1x");
	assert_string_equal(L.r.nodes[L.r.order[3]].name, "B");
	assert_string_equal(L.r.nodes[L.r.order[4]].name, "B::A");
	a = stats(&L, "A");
	a1 = stats(&L, "A::A1");
	x = stats(&L, "A::A1::A1x");
	b = stats(&L, "B");
	ba = stats(&L, "B::A");
	/* A: 100+50+50+100+5+20+10 us + the 1,000 us kernel of B/A */
	assert_ms(a->incl_ms, 1.335);
	assert_ms(a->excl_ms, 1.215);
	assert_int_equal(a->kernel_count, 8);
	assert_int_equal(a->kernel_count_excl, 5);
	assert_ms(a1->incl_ms, 0.120);
	assert_ms(a1->excl_ms, 0.100);
	assert_ms(x->incl_ms, 0.020);
	assert_ms(b->incl_ms, 1.030);
	assert_ms(b->excl_ms, 0.030);
	assert_ms(ba->incl_ms, 1.0);
	/* totals count each result once: everything but the outside kernel */
	assert_ms(L.s.total_ms, 1.365);
	assert_int_equal(L.s.kernel_count, 9);
	assert_true(all_reconciled(&L));
	/* A's kernel table: k_a twice (mean of the metrics, thousands separators, Mbyte -> byte) */
	{
		const struct lp_region_kernel *k = NULL;
		size_t i;
		for (i = 0; i < a->n_kernels; i++)
			if (!strcmp(a->kernels[i].rec.short_name, "k_a"))
				k = &a->kernels[i];
		assert_non_null(k);
		assert_int_equal(k->rec.calls, 2);
		assert_ms(k->rec.total_ms, 0.2);
		assert_ms(k->rec.mean_ms, 0.1);
		assert_int_equal(k->rec.n_metrics, 3);
		assert_true(k->rec.metrics[0].valid);
		assert_true(fabs(k->rec.metrics[0].value - 1536e6) < 1);
		assert_false(k->rec.metrics[2].valid);     /* not a column */
		assert_string_equal(a->kernels[0].rec.kernel_name, "k_b");  /* sorted by time */
	}
	/* k_a1: one launch had n/a: the mean is over the valid one */
	{
		size_t i;
		for (i = 0; i < a1->n_kernels; i++)
			if (!strcmp(a1->kernels[i].rec.kernel_name, "k_a1")) {
				assert_true(a1->kernels[i].rec.metrics[1].valid);
				assert_true(fabs(a1->kernels[i].rec.metrics[1].value - 70) < 1e-9);
			}
	}
	assert_int_equal(L.r.metric_present[0], 1);
	assert_int_equal(L.r.metric_present[2], 0);
	assert_int_equal(a->pid, 5000);
	assert_int_equal(a->device, 0);
	unload(&L);
}

static void test_kernel_filters(void **state)
{
	static const char *const inc[] = { "A/", "B/" };
	static const char *const kexc[] = { "memset_kernel", "regex:^k_deep$" };
	static const char *const kinc[] = { "k_a", "regex:k_(a1|deep|s)", "memset_kernel" };
	static const char *const nexc[] = { "A/A1/" };
	struct loaded L;
	(void)state;
	/* exclude wins over include; exact names also match the function-name form */
	load(&L, "regions/kernel_nested_raw.csv", inc, 2, NULL, 0, kinc, N(kinc), kexc, N(kexc));
	assert_int_equal(L.r.dropped_kernel_filter, 5);   /* outside, memset, k_deep, k_b x2 */
	assert_ms(stats(&L, "A")->incl_ms, 0.310);        /* k_a x2, k_a1 x2, k_s */
	assert_int_equal(node(&L.r, "B"), -1);             /* nothing of B survived */
	assert_int_equal(node(&L.r, "A::A1::A1x"), -1);
	assert_true(all_reconciled(&L));
	unload(&L);
	/* NVTX exclude drops A1 and what is under it */
	load(&L, "regions/kernel_nested_raw.csv", inc, 2, nexc, 1, NULL, 0, NULL, 0);
	assert_int_equal(L.r.dropped_nvtx_exclude, 3);
	assert_int_equal(node(&L.r, "A::A1"), -1);
	assert_ms(stats(&L, "A")->incl_ms, 1.215);
	unload(&L);
}

static void test_a_a1_naming(void **state)
{
	static const char *const only[] = { "A::A1/" };
	static const char *const both[] = { "A::A1/", "A/" };
	struct loaded L;
	(void)state;
	load(&L, "regions/kernel_nested_raw.csv", only, 1, NULL, 0, NULL, 0, NULL, 0);
	assert_int_equal(L.r.nodes[node(&L.r, "A::A1")].parent, -1);
	assert_int_equal(L.r.nodes[node(&L.r, "A::A1")].depth, 0);
	assert_ms(stats(&L, "A::A1")->incl_ms, 0.120);
	assert_int_equal(L.r.nodes[node(&L.r, "A::A1::A1x")].parent, node(&L.r, "A::A1"));
	unload(&L);
	/* with A configured too, A::A1 (configured first) nests under A: one region, not two */
	load(&L, "regions/kernel_nested_raw.csv", both, 2, NULL, 0, NULL, 0, NULL, 0);
	assert_int_equal(L.r.nodes[node(&L.r, "A::A1")].parent, node(&L.r, "A"));
	assert_string_equal(L.r.nodes[node(&L.r, "A::A1")].expression, "A::A1/");
	assert_ms(stats(&L, "A")->incl_ms, 1.335);
	assert_ms(stats(&L, "A::A1")->incl_ms, 0.120);
	assert_true(all_reconciled(&L));
	unload(&L);
}

static void test_llm_domain(void **state)
{
	static const char *const inc[] = { "LLM@prefill/", "LLM@decode_all/" };
	static const char *const torch[] = { "LLM\\@decode_all/" };
	struct loaded L;
	size_t i;
	int saw_torch = 0;
	(void)state;
	load(&L, "regions/llm_kernel_raw.csv", inc, 2, NULL, 0, NULL, 0, NULL, 0);
	assert_ms(stats(&L, "LLM@prefill")->incl_ms, 0.7);
	assert_ms(stats(&L, "LLM@prefill::layer")->incl_ms, 0.3);
	assert_ms(stats(&L, "LLM@decode_all")->incl_ms, 0.022);
	assert_ms(stats(&L, "LLM@decode_all")->excl_ms, 0.002);
	/* payloads do not split a region: both steps are one nested region */
	assert_ms(stats(&L, "LLM@decode_all::decode_step")->incl_ms, 0.020);
	assert_int_equal(stats(&L, "LLM@decode_all::decode_step")->kernel_count, 2);
	assert_int_equal(L.r.outside_regions, 1);          /* the default-domain "LLM@decode_all" */
	for (i = 0; i < L.r.n_seen; i++)
		saw_torch |= !strcmp(L.r.seen[i], "LLM\\@decode_all/");
	assert_true(saw_torch);
	assert_true(all_reconciled(&L));
	unload(&L);
	load(&L, "regions/llm_kernel_raw.csv", torch, 1, NULL, 0, NULL, 0, NULL, 0);
	assert_int_equal(L.r.n_nodes, 1);
	assert_ms(stats(&L, "LLM\\@decode_all")->incl_ms, 0.009);
	unload(&L);
}

/* ---- range / app-range replay ---- */

static void test_apprange(void **state)
{
	static const char *const inc[] = { "A/", "B/" };
	struct loaded L;
	const struct lp_region_stats *a, *a1, *b;
	(void)state;
	load(&L, "regions/apprange_raw.csv", inc, 2, NULL, 0, NULL, 0, NULL, 0);
	a = stats(&L, "A");
	a1 = stats(&L, "A::A1");
	b = stats(&L, "B");
	assert_int_equal(a->range_instances, 2);
	assert_int_equal(a1->range_instances, 1);
	assert_int_equal(a->kernel_count, 0);
	assert_ms(a->incl_ms, 2.2);                 /* its own results already cover A1 */
	assert_ms(a->excl_ms, 1.8);
	assert_ms(a1->incl_ms, 0.4);
	assert_ms(b->incl_ms, 0.5);
	assert_ms(L.s.total_ms, 3.1);
	assert_int_equal(L.s.range_instances, 4);
	assert_true(all_reconciled(&L));
	/* one KernelRecord "range" per region, metrics averaged over instances (Gbyte -> byte) */
	assert_int_equal(a->n_kernels, 1);
	assert_string_equal(a->kernels[0].rec.kernel_name, "range");
	assert_int_equal(a->kernels[0].rec.calls, 2);
	assert_true(fabs(a->kernels[0].rec.metrics[0].value - 1e9) < 1);
	assert_true(fabs(b->kernels[0].rec.metrics[0].value - 0.25e9) < 1);
	unload(&L);
}

/* A parent whose own range result is shorter than its children: a warning, not a crash. */
static void test_range_reconcile_violation(void **state)
{
	const char *csv =
		"\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg\",\"Kernel Name\",\"Context\",\"Stream\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n"
		"\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"msecond\"\n"
		"\"0\",\"1\",\"p\",\"h\",\"1  \"\"<default domain>:A:none:none:none:none:ASCII:A\"\" \",\"range\",\"1\",\"n/a\",\"0\",\"9.0\",\"1.0\"\n"
		"\"1\",\"1\",\"p\",\"h\",\"1  \"\"<default domain>:A:none:none:none:none:ASCII:A\"\"  \"\"<default domain>:A1:none:none:none:none:ASCII:A1\"\" \",\"range\",\"1\",\"n/a\",\"0\",\"9.0\",\"1.5\"\n";
	static const char *const inc[] = { "A/" };
	struct lp_regions_spec spec = { inc, 1, NULL, 0, NULL, 0, NULL, 0, NULL, 0 };
	struct lp_regions r;
	struct lp_region_scope s;
	struct lp_err err = LP_ERR_INIT;
	char path[512];
	(void)state;
	snprintf(path, sizeof(path), "%s/bad.csv", lp_test_tmpdir("regions_violation"));
	lp_test_write(path, csv);
	assert_int_equal(lp_regions_init(&r, &spec, &err), 0);
	assert_int_equal(lp_regions_load_ncu_raw(&r, path, &err), 0);
	assert_int_equal(lp_regions_finish(&r, &err), 0);
	assert_int_equal(lp_regions_scope(&r, LP_REGION_SCOPE_AGGREGATE, 0, -1, &s, &err), 0);
	assert_int_equal(s.stats[node(&r, "A")].reconciled, 0);
	assert_true(s.stats[node(&r, "A::A1")].reconciled);
	lp_regions_scope_release(&s);
	lp_regions_release(&r);
}

/* ---- start/end ---- */

static void test_startend_overlap(void **state)
{
	static const char *const inc[] = { "S1", "S2", "S3" };
	struct loaded L;
	(void)state;
	load(&L, "regions/startend_raw.csv", inc, 3, NULL, 0, NULL, 0, NULL, 0);
	/* S3's results are all in S1: nested. S1 and S2 overlap (k2): both roots. */
	assert_int_equal(L.r.nodes[node(&L.r, "S3")].parent, node(&L.r, "S1"));
	assert_int_equal(L.r.nodes[node(&L.r, "S1")].parent, -1);
	assert_int_equal(L.r.nodes[node(&L.r, "S2")].parent, -1);
	assert_int_equal(L.r.nodes[node(&L.r, "S1")].kind, LP_REGION_STARTEND);
	assert_ms(stats(&L, "S1")->incl_ms, 0.035);
	assert_ms(stats(&L, "S1")->excl_ms, 0.030);
	assert_ms(stats(&L, "S2")->incl_ms, 0.060);
	assert_ms(stats(&L, "S3")->incl_ms, 0.005);
	/* each tree reconciles on its own; k2 counts once in the totals */
	assert_true(all_reconciled(&L));
	assert_ms(L.s.total_ms, 0.075);
	/* report order: configured order */
	assert_string_equal(L.r.nodes[L.r.order[0]].name, "S1");
	assert_string_equal(L.r.nodes[L.r.order[1]].name, "S3");
	assert_string_equal(L.r.nodes[L.r.order[2]].name, "S2");
	unload(&L);
}

/* ---- no match, scopes, folder names ---- */

static void test_no_match(void **state)
{
	static const char *const inc[] = { "C/", "LLM@decode_all/" };
	struct loaded L;
	(void)state;
	load(&L, "regions/kernel_nested_raw.csv", inc, 2, NULL, 0, NULL, 0, NULL, 0);
	assert_int_equal(L.r.n_nodes, 0);
	assert_int_equal(L.r.n_rows, 0);
	assert_int_equal(L.r.inc_hits[0], 0);
	assert_int_equal(L.r.inc_hits[1], 0);
	assert_int_equal(L.r.outside_regions, 10);
	assert_int_equal(L.r.n_seen, 5);  /* A/ A1/ A1x/ B/ S1, sorted */
	assert_string_equal(L.r.seen[0], "A/");
	assert_string_equal(L.r.seen[1], "A1/");
	assert_string_equal(L.r.seen[2], "A1x/");
	assert_string_equal(L.r.seen[3], "B/");
	assert_string_equal(L.r.seen[4], "S1");
	assert_ms(L.s.total_ms, 0);
	unload(&L);
}

static void test_scopes(void **state)
{
	static const char *const inc[] = { "A/", "B/" };
	struct loaded L;
	struct lp_region_scope s;
	struct lp_err err = LP_ERR_INIT;
	uint32_t *pids;
	int32_t *devs;
	size_t n;
	(void)state;
	load(&L, "regions/multi_raw.csv", inc, 2, NULL, 0, NULL, 0, NULL, 0);
	assert_int_equal(lp_regions_pids(&L.r, &pids, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 100);
	assert_int_equal(pids[1], 200);
	free(pids);
	assert_int_equal(lp_regions_devices(&L.r, &devs, &n), 0);
	assert_int_equal(n, 2);
	free(devs);
	assert_ms(stats(&L, "A")->incl_ms, 0.220);
	assert_int_equal(stats(&L, "A")->pid, -1);         /* several processes */
	assert_int_equal(stats(&L, "A")->device, -1);
	assert_int_equal(lp_regions_scope(&L.r, LP_REGION_SCOPE_PROCESS, 200, -1, &s, &err), 0);
	assert_true(fabs(s.stats[node(&L.r, "A")].incl_ms - 0.070) < 1e-9);
	assert_int_equal(s.stats[node(&L.r, "A")].pid, 200);
	assert_false(s.stats[node(&L.r, "A::A1")].present);
	assert_true(s.stats[node(&L.r, "B")].present);
	lp_regions_scope_release(&s);
	assert_int_equal(lp_regions_scope(&L.r, LP_REGION_SCOPE_DEVICE, 0, 0, &s, &err), 0);
	assert_true(fabs(s.stats[node(&L.r, "A")].incl_ms - 0.150) < 1e-9);
	assert_false(s.stats[node(&L.r, "B")].present);
	assert_int_equal(s.n_present, 2);
	lp_regions_scope_release(&s);
	unload(&L);
}

/* Folder names: tests/data/regions.test (mode region-dir); the empty name, which a data line
 * cannot spell, here. */
static void test_sanitize_empty(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	assert_int_equal(lp_regions_sanitize("", &b), 0);
	assert_string_equal(b.data, "region");
	lp_buf_release(&b);
}

static void test_dirs_unique(void **state)
{
	/* "A::A1" and "A_A1" (a start/end range) sanitize alike; "report.md" is taken */
	const char *csv =
		"\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg\",\"Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n"
		"\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"nsecond\"\n"
		"\"0\",\"1\",\"p\",\"h\",\"1  \"\"<default domain>:A:none:none:none:none:ASCII:A\"\"  \"\"<default domain>:A1:none:none:none:none:ASCII:A1\"\" \",\" \"\"4:<default domain>:A_A1:none:none:none:none:ASCII:A_A1\"\" \"\"5:<default domain>:report.md:none:none:none:none:ASCII:report.md\"\"\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"1,000\"\n";
	static const char *const inc[] = { "A/", "A_A1", "report.md" };
	struct lp_regions_spec spec = { inc, 3, NULL, 0, NULL, 0, NULL, 0, NULL, 0 };
	struct lp_regions r;
	struct lp_err err = LP_ERR_INIT;
	char path[512];
	(void)state;
	snprintf(path, sizeof(path), "%s/dirs.csv", lp_test_tmpdir("regions_dirs"));
	lp_test_write(path, csv);
	assert_int_equal(lp_regions_init(&r, &spec, &err), 0);
	assert_int_equal(lp_regions_load_ncu_raw(&r, path, &err), 0);
	assert_int_equal(lp_regions_finish(&r, &err), 0);
	assert_int_equal(lp_regions_assign_dirs(&r, &err), 0);
	assert_string_equal(r.nodes[node(&r, "A")].dir, "A");
	assert_string_equal(r.nodes[node(&r, "A::A1")].dir, "A_A1");
	assert_string_equal(r.nodes[node(&r, "A_A1")].dir, "A_A1-2");
	assert_string_equal(r.nodes[node(&r, "report.md")].dir, "report.md-2");
	lp_regions_release(&r);
}

static void test_bad_spec(void **state)
{
	static const char *const inc[] = { "A/", "A/B" };
	static const char *const kre[] = { "regex:([" };
	struct lp_regions_spec spec = { inc, 2, NULL, 0, NULL, 0, NULL, 0, NULL, 0 };
	struct lp_regions r;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_regions_init(&r, &spec, &err), -1);
	assert_non_null(strstr(err.msg, "regions.include[1]"));
	lp_regions_release(&r);
	spec.n_include = 1;
	spec.kernels_exclude = kre;
	spec.n_kernels_exclude = 1;
	lp_err_clear(&err);
	assert_int_equal(lp_regions_init(&r, &spec, &err), -1);
	assert_non_null(strstr(err.msg, "kernels.exclude[0]"));
	lp_regions_release(&r);
}

static void test_profile_ranges(void **state)
{
	struct lp_profile p;
	struct lp_arena a = LP_ARENA_INIT;
	struct lp_err err = LP_ERR_INIT;
	const char **v;
	size_t n;
	int32_t r;
	(void)state;
	lp_profile_init(&p, "test");
	lp_test_range(&p, -1, "LLM", "decode_all", 0, 0);
	lp_test_range(&p, -1, "", "LLM@decode_all", 0, 0);
	lp_test_range(&p, -1, "LLM", "decode_all", 0, 0);
	r = lp_test_range(&p, -1, "", "S", 0, 0);
	p.ranges[r].kind = LP_RANGE_STARTEND;
	r = lp_test_range(&p, -1, "", "mark", 0, 0);
	p.ranges[r].kind = LP_RANGE_MARK;
	assert_int_equal(lp_regions_profile_ranges(&p, &a, &v, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "LLM@decode_all/");
	assert_string_equal(v[1], "LLM\\@decode_all/");
	assert_string_equal(v[2], "S");
	lp_arena_release(&a);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pattern_match),
		cmocka_unit_test(test_kernel_nested),
		cmocka_unit_test(test_kernel_filters),
		cmocka_unit_test(test_a_a1_naming),
		cmocka_unit_test(test_llm_domain),
		cmocka_unit_test(test_apprange),
		cmocka_unit_test(test_range_reconcile_violation),
		cmocka_unit_test(test_startend_overlap),
		cmocka_unit_test(test_no_match),
		cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_sanitize_empty),
		cmocka_unit_test(test_dirs_unique),
		cmocka_unit_test(test_bad_spec),
		cmocka_unit_test(test_profile_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
