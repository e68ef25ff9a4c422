/* welch.h: is the difference between two samples more than noise? Welch's unequal-variance t-test
 * from each sample's mean, sample standard deviation and size, as llmprof diff uses it.
 *
 *   t  = (m_b - m_a) / sqrt(s_a^2/n_a + s_b^2/n_b)
 *   df = (s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1))   (Welch-Satterthwaite)
 *   p  = I_{df/(df+t^2)}(df/2, 1/2)   the two-sided p-value, I the regularized incomplete beta
 *
 * Both standard deviations 0: p = 0 when the means differ, 1 when equal (a deterministic change).
 * Either sample with n < 2: p unknown (returned as -1).
 *
 * Ownership: pure functions. Thread-safe.
 */
#ifndef LP_ANALYZE_WELCH_H
#define LP_ANALYZE_WELCH_H

#include <stddef.h>

/* The two-sided p-value of Welch's t-test; -1 when a sample has fewer than 2 values. */
double lp_welch_p(double mean_a, double std_a, double n_a, double mean_b, double std_b, double n_b);
/* The regularized incomplete beta function I_x(a, b), 0 <= x <= 1, a, b > 0 (continued fraction,
 * Lentz's method). */
double lp_incbeta(double x, double a, double b);

#endif
