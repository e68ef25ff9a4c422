/* test_ncu_coverage.c: the reports' Nsight Compute coverage (report/ncu_coverage.h) from a
 * sampling.json made by the planner itself: the summary line, the marks (sampled / reused), the
 * reasons of the groups without metrics, the summary.json object, the HTML section, nothing
 * for a run without sampling, and the label of results from warm-up stand-ins. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ncu_sample.h"
#include "report/ncu_coverage.h"

static json_t *sampling(void)
{
	struct lp_sample_launch l[40];
	struct lp_sample_opts o = { 2, 0.9, 0, 0, 0, 0, 0, 0, 0 };
	struct lp_sample_plan p;
	struct lp_err err = LP_ERR_INIT;
	json_t *j;
	size_t i;
	memset(l, 0, sizeof(l));
	for (i = 0; i < 40; i++) {
		/* a: 20 x 50 ns (50%), b: 10 x 60 (30%), c: 5 x 30 (7.5%), d: 5 x 50 (12.5%) */
		l[i].name = i < 20 ? "a" : i < 30 ? "b" : i < 35 ? "c" : "d";
		l[i].kernel_name = l[i].name;
		l[i].grid[0] = l[i].block[0] = 1;
		l[i].region = "decode_all";
		l[i].step = (int32_t)i;
		l[i].duration_ns = i < 20 ? 50 : i < 30 ? 60 : i < 35 ? 30 : 50;
	}
	assert_int_equal(lp_sample_group(l, 40, &o, &p, &err), 0);
	/* by time: a (1000), b (600), d (250), c (150); the target 90% wants a, b, d */
	p.groups[1].cached = 1;
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	lp_sample_attach(&p, "a", l[0].grid, l[0].block, NULL, 55);
	j = lp_sample_plan_json(&p, 1);
	lp_sample_plan_release(&p);
	return j;
}

static void test_md_json_html(void **state)
{
	json_t *s = sampling(), *sum;
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	assert_int_equal(lp_report_ncu_coverage_md(s, 1, &b), 0);
	assert_non_null(strstr(b.data, "## Nsight Compute coverage"));
	/* a (50%) sampled + b (30%) reused = 80% of 90% */
	assert_non_null(strstr(b.data, "80.0% of the selection's kernel time has ncu metrics (target 90%, NOT met): 2 of 4 groups"));
	assert_non_null(strstr(b.data, "1 reused from the cache"));
	assert_non_null(strstr(b.data, "| a | 1,0,0 | 1,0,0 | decode\\_all | 20 | 1 | 50.0% | sampled |"));
	assert_non_null(strstr(b.data, "| b | 1,0,0 | 1,0,0 | decode\\_all | 10 | 0 | 30.0% | reused |"));
	assert_non_null(strstr(b.data, "| d | 1,0,0 | 1,0,0 | decode\\_all | 5 | 0 | 12.5% | planned, but ncu returned no result for it |"));
	assert_non_null(strstr(b.data, "| c | 1,0,0 | 1,0,0 | decode\\_all | 5 | 0 | 7.5% | beyond the coverage target |"));
	lp_buf_reset(&b);
	assert_int_equal(lp_report_ncu_coverage_md(s, 0, &b), 0);   /* report.md: only what has none */
	assert_null(strstr(b.data, "| sampled |"));
	assert_non_null(strstr(b.data, "| beyond the coverage target |"));

	sum = lp_report_ncu_coverage_json(s);
	assert_true(json_real_value(json_object_get(sum, "share")) > 0.7999 && json_real_value(json_object_get(sum, "share")) < 0.8001);
	assert_false(json_is_true(json_object_get(sum, "met")));
	assert_int_equal(json_integer_value(json_object_get(sum, "groups_reused")), 1);
	assert_int_equal(json_integer_value(json_object_get(sum, "k")), 2);
	json_decref(sum);

	lp_buf_reset(&b);
	assert_int_equal(lp_report_ncu_coverage_html(s, &b), 0);
	assert_non_null(strstr(b.data, "<section id=\"ncu-coverage\">"));
	assert_non_null(strstr(b.data, "<tr class=\"ncu-reused\"><td>b</td><td>1,0,0</td>"));
	assert_non_null(strstr(b.data, "selection&#39;s kernel time"));

	/* no sampling: nothing */
	lp_buf_reset(&b);
	assert_int_equal(lp_report_ncu_coverage_md(NULL, 1, &b), 0);
	assert_int_equal(lp_report_ncu_coverage_html(NULL, &b), 0);
	assert_int_equal(b.len, 0);
	sum = lp_report_ncu_coverage_json(NULL);
	assert_true(json_is_null(sum));
	json_decref(sum);
	json_decref(s);
	lp_buf_release(&b);
}


/* Results of warm-up stand-ins: the groups say `sampled (warm-up)` (or partly), and the summary
 * counts the results that are warm-up launches. */
static void test_warmup_label(void **state)
{
	struct lp_sample_launch l[20];
	struct lp_sample_opts o = { 1, 1.0, 0, 0, 0, 0, 0, 0, 0 };
	struct lp_sample_plan p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b = LP_BUF_INIT;
	json_t *j;
	size_t i;
	(void)state;
	memset(l, 0, sizeof(l));
	for (i = 0; i < 20; i++) {
		/* launches 0-9 the warm-up's (stand-ins), 10-19 the measured; a: 0-4/10-14, b: 5-9/15-19 */
		l[i].name = i % 10 < 5 ? "a" : "b";
		l[i].kernel_name = l[i].name;
		l[i].grid[0] = l[i].block[0] = 1;
		l[i].region = "decode_all";
		l[i].step = (int32_t)(i % 5);
		l[i].duration_ns = 10;
		l[i].warmup = i < 10;
	}
	assert_int_equal(lp_sample_group(l, 20, &o, &p, &err), 0);
	assert_int_equal(lp_sample_schedule(&p, &o, &err), 0);
	for (i = 0; i < p.n_groups; i++) {
		/* a: one warm-up result; b: a warm-up and a measured one */
		int32_t base = strcmp(p.groups[i].name, "a") ? 5 : 0;
		lp_sample_attach_group(&p, i, 10);
		assert_int_equal(lp_sample_record_result(&p, i, 2 * i, base, -1, 10, &err), 0);
		if (base) {
			lp_sample_attach_group(&p, i, 10);
			assert_int_equal(lp_sample_record_result(&p, i, 2 * i + 1, 10 + base, -1, 10, &err), 0);
		}
	}
	j = lp_sample_plan_json(&p, 1);
	lp_sample_plan_release(&p);
	assert_int_equal(lp_report_ncu_coverage_md(j, 1, &b), 0);
	assert_non_null(strstr(b.data, "2 of the 3 results (metrics of 2 groups) are warm-up launches standing in for their group"));
	assert_non_null(strstr(b.data, "| a | 1,0,0 | 1,0,0 | decode\\_all | 5 | 1 | 50.0% | sampled (warm-up) |"));
	assert_non_null(strstr(b.data, "| b | 1,0,0 | 1,0,0 | decode\\_all | 5 | 2 | 50.0% | sampled (partly warm-up) |"));
	lp_buf_reset(&b);
	assert_int_equal(lp_report_ncu_coverage_html(j, &b), 0);
	assert_non_null(strstr(b.data, "<tr class=\"ncu-sampled\"><td>a</td>"));   /* the class stays the mark */
	assert_non_null(strstr(b.data, "sampled (warm-up)</td>"));
	json_decref(j);
	lp_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_md_json_html),
		cmocka_unit_test(test_warmup_label),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
