/* test_welch.c: Welch's t-test behind `llmprof diff`'s verdicts (src/analyze/welch.c) against values
 * computed by hand or with a statistics table: I_x(a, b) in closed form, t = 2.236 with 18 degrees
 * of freedom (p = 0.03825), unequal variances, deterministic and undefined cases. */
#include "testutil.h"

#include <math.h>

#include "analyze/welch.h"

static void test_incbeta(void **state)
{
	(void)state;
	/* I_x(1, 1) = x; I_x(2, 3) = 6x^2 - 8x^3 + 3x^4 (= 11/16 at 0.5); I_x(a, b) = 1 - I_(1-x)(b, a) */
	assert_true(fabs(lp_incbeta(0.3, 1, 1) - 0.3) < 1e-12);
	assert_true(fabs(lp_incbeta(0.5, 2, 3) - 0.6875) < 1e-12);
	assert_true(fabs(lp_incbeta(0.9, 2, 3) - (6 * 0.81 - 8 * 0.729 + 3 * 0.6561)) < 1e-12);
	assert_true(fabs(lp_incbeta(0.2, 3.5, 0.5) + lp_incbeta(0.8, 0.5, 3.5) - 1) < 1e-12);
	assert_true(lp_incbeta(0, 2, 2) == 0 && lp_incbeta(1, 2, 2) == 1);
}

static void test_welch(void **state)
{
	double p;
	(void)state;
	/* equal variances and sizes: t = 1 / sqrt(0.2) = 2.2361, df = 18, two-sided p = 0.038250 */
	p = lp_welch_p(10, 1, 10, 11, 1, 10);
	assert_true(fabs(p - 0.038250) < 2e-6);
	assert_true(fabs(lp_welch_p(11, 1, 10, 10, 1, 10) - p) < 1e-15);   /* symmetric */
	/* unequal: s = 1 (n 5) vs 3 (n 20): se^2 = 0.2 + 0.45, t = 2/sqrt(0.65) = 2.4807, df = 0.4225 /
	 * (0.01 + 0.0106579) = 20.45 -> p = 0.021910 (both p by numerical integration of the t density) */
	assert_true(fabs(lp_welch_p(10, 1, 5, 12, 3, 20) - 0.021910) < 2e-6);
	/* no spread: any difference is a change, equal means none; fewer than 2 values: unknown */
	assert_true(lp_welch_p(1, 0, 3, 2, 0, 3) == 0);
	assert_true(lp_welch_p(1, 0, 3, 1, 0, 3) == 1);
	assert_true(lp_welch_p(1, 0.1, 1, 2, 0.1, 5) < 0);
	/* identical samples */
	assert_true(fabs(lp_welch_p(5, 0.5, 4, 5, 0.5, 4) - 1) < 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incbeta),
		cmocka_unit_test(test_welch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
