/* welch.c: Welch's t-test and the incomplete beta function behind its p-value (see welch.h). */
#include "analyze/welch.h"

#include <math.h>

/* The continued fraction of I_x(a, b) (valid for x < (a + 1) / (a + b + 2)), by the modified Lentz
 * method: 1 + d1/(1 + d2/(1 + ...)) with d_{2m+1} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and
 * d_{2m} = m(b-m)x / ((a+2m-1)(a+2m)). */
static double cf(double x, double a, double b)
{
	const double tiny = 1e-300, eps = 1e-15;
	double f = 1, c = 1, d = 0;
	int i;
	for (i = 0; i <= 400; i++) {
		int m = i / 2;
		double num, delta;
		if (i == 0)
			num = 1;
		else if (i % 2 == 0)
			num = (double)m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
		else
			num = -((a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
		d = 1.0 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		d = 1.0 / d;
		c = 1.0 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		delta = c * d;
		f *= delta;
		if (fabs(1.0 - delta) < eps)
			break;
	}
	return f - 1.0;
}

double lp_incbeta(double x, double a, double b)
{
	double front;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	if (x > (a + 1.0) / (a + b + 2.0))
		return 1.0 - lp_incbeta(1.0 - x, b, a);
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1.0 - x)) / a;
	return front * cf(x, a, b);
}

double lp_welch_p(double mean_a, double std_a, double n_a, double mean_b, double std_b, double n_b)
{
	double va, vb, se2, t, df;
	if (n_a < 2 || n_b < 2)
		return -1;
	va = std_a * std_a / n_a;
	vb = std_b * std_b / n_b;
	se2 = va + vb;
	if (se2 <= 0)
		return mean_a == mean_b ? 1.0 : 0.0;
	t = (mean_b - mean_a) / sqrt(se2);
	df = se2 * se2 / ((n_a > 1 ? va * va / (n_a - 1) : 0) + (n_b > 1 ? vb * vb / (n_b - 1) : 0));
	return lp_incbeta(df / (df + t * t), df / 2.0, 0.5);
}
