/* fuzz_ncu_details.c: ncu's details page reader (parse/ncu_details.h) on arbitrary bytes: the
 * long-format load (ragged metric and rule rows grouped by ID) and its kernel table with and
 * without a stage. Corpus: fuzz/corpus/ncu_details, seeded from tests/fixtures/ncu/ *_details.csv.
 * The bytes go to a scratch file: the reader takes a path. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parse/ncu_details.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t touch(const struct lp_ncu_details *d)
{
	size_t i, j, sum = 0;
	for (i = 0; i < d->n_results; i++) {
		const struct lp_ncu_details_result *r = &d->results[i];
		sum += strlen(r->kernel_name) + strlen(r->short_name) + strlen(r->nvtx_path);
		for (j = 0; j < r->n_nvtx; j++)
			sum += strlen(r->nvtx[j].name);
		for (j = 0; j < r->n_metrics; j++)
			sum += strlen(r->metrics[j].section) + strlen(r->metrics[j].name) +
				strlen(r->metrics[j].unit) + strlen(r->metrics[j].text);
		for (j = 0; j < r->n_rules; j++)
			sum += strlen(r->rules[j].section) + strlen(r->rules[j].name) + strlen(r->rules[j].type) +
				strlen(r->rules[j].description) + strlen(r->rules[j].speedup_type);
	}
	return sum;
}

static void table(const char *path, const struct lp_ncu_select *sel)
{
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	size_t i, sum = 0;
	if (lp_ncu_details_kernel_table(path, sel, &t, &err) < 0)
		return;
	for (i = 0; i < t.n_rows; i++)
		sum += strlen(t.rows[i].kernel_name) + strlen(t.rows[i].short_name) + t.rows[i].n_metrics;
	(void)sum;
	lp_kernel_table_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4096];
	struct lp_ncu_details d;
	struct lp_err err = LP_ERR_INIT;
	struct lp_ncu_select stage = { .stage = "decode_all" };
	if (size > (1u << 20) || lp_fuzz_scratch_write("run_details.csv", data, size, path, sizeof(path)) < 0)
		return 0;
	if (lp_ncu_details_load(path, &d, &err) == 0) {
		(void)touch(&d);
		lp_ncu_details_release(&d);
	}
	table(path, NULL);
	table(path, &stage);
	return 0;
}
