/* bench_parsers.c: times llmprof's parsers on large inputs (made by gen.py) and prints one
 * JSON line per measurement: bytes, rows, seconds, MB/s, rows/s, distinct kernels, peak RSS.
 *   bench_parsers ncu-raw FILE.csv       lp_ncu_raw_kernel_table (streaming, all metrics)
 *   bench_parsers nsys-table FILE.sqlite lp_nsys_sqlite_kernel_table (direct aggregation)
 *   bench_parsers nsys-profile FILE.sqlite lp_nsys_sqlite_load + lp_kernel_table_build (stage cut)
 * Not a test: bench/parsers/run.sh runs it beside Python doing the same work. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "parse/ncu_raw.h"
#include "parse/nsys_sqlite.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		(double)ru.ru_stime.tv_usec / 1e6;
}

static long peak_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static unsigned long long rows_of(const struct lp_kernel_table *t)
{
	unsigned long long n = 0;
	size_t i;
	for (i = 0; i < t->n_rows; i++)
		n += t->rows[i].calls;
	return n;
}

int main(int argc, char **argv)
{
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	struct stat st;
	double t0, dt, c0, dc;
	int rc;
	if (argc != 3 || stat(argv[2], &st) != 0) {
		fprintf(stderr, "usage: bench_parsers ncu-raw|nsys-table|nsys-profile FILE\n");
		return 2;
	}
	t0 = now_s();
	c0 = cpu_s();
	if (!strcmp(argv[1], "ncu-raw")) {
		rc = lp_ncu_raw_kernel_table(argv[2], NULL, &t, &err);
	} else if (!strcmp(argv[1], "nsys-table")) {
		rc = lp_nsys_sqlite_kernel_table(argv[2], &t, &err);
	} else if (!strcmp(argv[1], "nsys-profile")) {
		struct lp_profile p;
		struct lp_kernel_filter f = { "decode_all", -1, 0 };
		lp_profile_init(&p, argv[2]);
		rc = lp_nsys_sqlite_load(argv[2], &p, &err);
		if (rc == 0)
			rc = lp_kernel_table_build(&p, &f, &t, &err);
		if (rc == 0)  /* count every kernel row read, not only the stage's */
			fprintf(stderr, "profile: %zu kernels, %zu ranges\n", p.n_kernels, p.n_ranges);
		lp_profile_release(&p);
	} else {
		fprintf(stderr, "unknown mode '%s'\n", argv[1]);
		return 2;
	}
	dt = now_s() - t0;
	dc = cpu_s() - c0;
	if (rc < 0) {
		fprintf(stderr, "error: %s\n", err.msg);
		return 3;
	}
	printf("{\"impl\": \"llmprof\", \"mode\": \"%s\", \"bytes\": %lld, \"rows\": %llu, \"seconds\": %.4f, "
	       "\"cpu_seconds\": %.4f, \"mb_per_s\": %.1f, \"rows_per_s\": %.0f, \"distinct_kernels\": %zu, "
	       "\"peak_rss_kb\": %ld}\n",
		argv[1], (long long)st.st_size, rows_of(&t), dt, dc, (double)st.st_size / 1e6 / dc,
		(double)rows_of(&t) / dc, t.n_rows, peak_rss_kb());
	lp_kernel_table_release(&t);
	return 0;
}
