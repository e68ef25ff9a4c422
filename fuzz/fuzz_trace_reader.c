/* fuzz_trace_reader.c: libFuzzer target for the trace reader (parse/trace_read.h): any bytes
 * must load into a profile or fail with an error, never crash, hang or leak. Seed corpus:
 * tests/fixtures/trace/ (and the files test_trace_format.c builds). */
#include <stddef.h>
#include <stdint.h>

#include "parse/trace_read.h"
#include "report/perfetto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_trace_file f;
	lp_profile_init(&p, "fuzz");
	if (lp_trace_load_mem("fuzz.lptrace", data, size, &p, &err) == 0) {
		struct lp_buf b = LP_BUF_INIT;
		size_t i;
		for (i = 0; i < p.n_ranges; i++) {
			lp_profile_range_path(&p, (int32_t)i, &b);
			lp_perfetto_json_string(&b, p.ranges[i].name);
		}
		lp_buf_release(&b);
	}
	lp_profile_release(&p);
	/* the record iterator `trace dump` uses */
	if (lp_trace_file_open_mem(&f, "fuzz.lptrace", data, size, &err) == 0) {
		struct lp_trace_record rec;
		while (lp_trace_file_next(&f, &rec))
			(void)lp_trace_file_string(&f, 1, NULL);
		lp_trace_file_close(&f);
	}
	return 0;
}
