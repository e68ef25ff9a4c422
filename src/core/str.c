/* str.c: string helpers (see str.h). */
#include "core/str.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int lp_str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int lp_str_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int lp_str_to_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int lp_str_to_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int lp_str_to_double(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL))
		return -1;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int lp_str_edit_distance(const char *a, const char *b, int cap)
{
	int row[256];
	size_t n = strlen(a), m = strlen(b), i, j;
	if (n > 255 || m > 255)
		return cap;
	for (j = 0; j <= m; j++)
		row[j] = (int)j;
	for (i = 1; i <= n; i++) {
		int prev = row[0], best;
		row[0] = (int)i;
		best = row[0];
		for (j = 1; j <= m; j++) {
			int cur = row[j];
			int sub = prev + (a[i - 1] != b[j - 1]);
			int del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
			if (row[j] < best)
				best = row[j];
		}
		if (best >= cap)
			return cap;
	}
	return row[m] < cap ? row[m] : cap;
}

char *lp_str_trim(char *s)
{
	size_t n;
	char *p = s;
	while (*p && isspace((unsigned char)*p))
		p++;
	if (p != s)
		memmove(s, p, strlen(p) + 1);
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}
