/* fuzz_ncu_summary.c: the ncu --print-summary reader (per-kernel and per-nvtx, with its
 * realignment of misplaced line breaks) on arbitrary bytes: the row stream, and the kernel table
 * with and without a stage. Corpus: fuzz/corpus/ncu_summary, seeded from
 * tests/fixtures/ncu/h200_llm_summary_per_*.csv. The bytes go to a scratch file because the
 * reader takes a path. */
#include <stddef.h>
#include <stdint.h>

#include "parse/ncu_summary.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(const struct lp_ncu_summary_row *r, void *ctx, struct lp_err *err)
{
	(void)err;
	(*(size_t *)ctx) += r->nvtx->n + (r->valid ? 1 : 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4096];
	struct lp_kernel_table t;
	struct lp_ncu_select sel = { .stage = "decode_all" };
	struct lp_err err = LP_ERR_INIT;
	size_t n = 0;
	if (size > (1u << 20) || lp_fuzz_scratch_write("summary.csv", data, size, path, sizeof(path)) < 0)
		return 0;
	lp_ncu_summary_stream(path, NULL, count, &n, &err);
	lp_err_clear(&err);
	if (lp_ncu_summary_kernel_table(path, NULL, &t, &err) == 0)
		lp_kernel_table_release(&t);
	lp_err_clear(&err);
	if (lp_ncu_summary_kernel_table(path, &sel, &t, &err) == 0)
		lp_kernel_table_release(&t);
	return 0;
}
