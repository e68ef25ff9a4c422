/* fuzz_csv.c: the CSV reader and number cells on arbitrary bytes (small limits, so that the
 * limit paths are reached too). */
#include <stddef.h>
#include <stdint.h>

#include "parse/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_csv c;
	struct lp_csv_limits lim = { 4096, 256, 1 << 16 };
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	lp_csv_open_mem(&c, (const char *)data, size, "fuzz", &lim);
	while (lp_csv_next(&c, &err) > 0) {
		for (i = 0; i < c.n_fields; i++) {
			double v;
			if (c.fields[i][c.lens[i]] != '\0')
				__builtin_trap();
			lp_csv_number(c.fields[i], &v);
		}
	}
	lp_csv_close(&c);
	return 0;
}
