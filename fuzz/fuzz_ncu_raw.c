/* fuzz_ncu_raw.c: ncu's raw page reader (parse/ncu_raw.h) on arbitrary bytes: the row stream
 * with and without NVTX decoding, and the kernel table with and without a stage filter (the
 * aggregation and unit conversion behind `llmprof kernels` on a raw CSV). Any input must give
 * rows or one error, never crash, overflow or leak. Corpus: fuzz/corpus/ncu_raw, seeded from
 * tests/fixtures/ncu/ *_raw*.csv. The bytes go to a scratch file: the reader takes a path. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parse/ncu_raw.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touches every string and metric of a row, so that ASan sees a dangling or unterminated one. */
static int touch(const struct lp_ncu_result *r, void *ctx, struct lp_err *err)
{
	size_t i, *sum = ctx;
	(void)err;
	*sum += strlen(r->kernel_name) + strlen(r->short_name) + strlen(r->process) + strlen(r->host) +
		strlen(r->context) + strlen(r->stream) + strlen(r->cc);
	for (i = 0; i < r->n_metrics; i++)
		*sum += strlen(r->metrics[i].name) + strlen(r->metrics[i].unit) + (size_t)r->metrics[i].valid;
	for (i = 0; i < r->pushpop->n; i++)
		*sum += strlen(r->pushpop->levels[i].name);
	for (i = 0; i < r->startend->n; i++)
		*sum += strlen(r->startend->levels[i].name);
	return 0;
}

static void table(const char *path, const struct lp_ncu_select *sel)
{
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	size_t i, sum = 0;
	if (lp_ncu_raw_kernel_table(path, sel, &t, &err) < 0)
		return;
	for (i = 0; i < t.n_rows; i++)
		sum += strlen(t.rows[i].kernel_name) + strlen(t.rows[i].short_name) + t.rows[i].n_metrics;
	(void)sum;
	lp_kernel_table_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4096];
	struct lp_err err = LP_ERR_INIT;
	struct lp_ncu_select stage = { .stage = "decode_all", .include_ranges = 1 };
	size_t sum = 0;
	if (size > (1u << 20) || lp_fuzz_scratch_write("run_raw.csv", data, size, path, sizeof(path)) < 0)
		return 0;
	lp_ncu_raw_stream(path, touch, &sum, &err);
	lp_err_clear(&err);
	lp_ncu_raw_stream_ex(path, LP_NCU_RAW_SKIP_NVTX, touch, &sum, &err);
	table(path, NULL);
	table(path, &stage);
	return 0;
}
