/* fuzz_nsys_csv.c: the `nsys stats --format csv` readers (parse/nsys_csv.h) on arbitrary bytes:
 * cuda_gpu_kern_sum as a kernel table, nvtx_sum / nvtx_gpu_proj_sum as range rows, and the
 * helpers they use on the first line (time unit of a header, domain:range split). Corpus:
 * fuzz/corpus/nsys_csv, seeded from tests/fixtures/nsys/ *.csv. The bytes go to a scratch file:
 * the readers take a path. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "parse/nsys_csv.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4096];
	struct lp_kernel_table t;
	struct lp_nsys_range_table r;
	struct lp_err err = LP_ERR_INIT;
	size_t i, sum = 0, line = 0;
	char *first;
	if (size > (1u << 20) ||
	    lp_fuzz_scratch_write("summary_cuda_gpu_kern_sum.csv", data, size, path, sizeof(path)) < 0)
		return 0;
	if (lp_nsys_kern_sum_load(path, &t, &err) == 0) {
		for (i = 0; i < t.n_rows; i++)
			sum += strlen(t.rows[i].kernel_name) + strlen(t.rows[i].short_name);
		lp_kernel_table_release(&t);
	}
	lp_err_clear(&err);
	if (lp_nsys_range_sum_load(path, &r, &err) == 0) {
		for (i = 0; i < r.n_rows; i++)
			sum += strlen(r.rows[i].domain) + strlen(r.rows[i].name) + strlen(r.rows[i].style);
		lp_nsys_range_table_release(&r);
	}
	/* the first line (up to 4 KiB) as one header cell and one range cell */
	while (line < size && line < 4096 && data[line] != '\n')
		line++;
	first = malloc(line + 1);
	if (first) {
		struct lp_arena a = LP_ARENA_INIT;
		const char *dom, *name;
		memcpy(first, data, line);
		first[line] = '\0';
		(void)lp_nsys_header_ns(first);
		if (lp_nsys_split_range(first, &a, &dom, &name) == 0)
			sum += strlen(dom) + strlen(name);
		lp_arena_release(&a);
		free(first);
	}
	(void)sum;
	return 0;
}
