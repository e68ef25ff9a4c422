/* fuzz_ncu_summary.c: the ncu --print-summary reader (per-kernel and per-nvtx, with its
 * realignment of misplaced line breaks) on arbitrary bytes. Seed the corpus with
 * tests/fixtures/ncu/h200_llm_summary_per_*.csv. The bytes go to a temporary file because the
 * reader takes a path. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "parse/ncu_summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(const struct lp_ncu_summary_row *r, void *ctx, struct lp_err *err)
{
	(void)err;
	(*(size_t *)ctx) += r->nvtx->n + (r->valid ? 1 : 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/llmprof-fuzz-ncusum-XXXXXX";
	int fd = mkstemp(path);
	struct lp_kernel_table t;
	struct lp_ncu_select sel = { "decode_all", 0 };
	struct lp_err err = LP_ERR_INIT;
	size_t n = 0;
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	lp_ncu_summary_stream(path, NULL, count, &n, &err);
	if (lp_ncu_summary_kernel_table(path, NULL, &t, &err) == 0)
		lp_kernel_table_release(&t);
	if (lp_ncu_summary_kernel_table(path, &sel, &t, &err) == 0)
		lp_kernel_table_release(&t);
	unlink(path);
	return 0;
}
