/* fuzz_ncu_nvtx.c: the NVTX cell parser of ncu's raw page, both column forms. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/ncu_nvtx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_ncu_nvtx_stack *st = calloc(1, sizeof(*st));
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf path = LP_BUF_INIT;
	char *cell = malloc(size + 1);
	if (!st || !cell)
		goto out;
	memcpy(cell, data, size);
	cell[size] = '\0';
	if (lp_ncu_nvtx_parse(cell, size > 0 && (data[0] & 1), st, &err) == 0)
		lp_ncu_nvtx_stack_path(st, &path);
	lp_ncu_nvtx_stack_release(st);
out:
	free(st);
	free(cell);
	lp_buf_release(&path);
	return 0;
}
