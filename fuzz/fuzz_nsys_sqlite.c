/* fuzz_nsys_sqlite.c: the nsys SQLite reader on arbitrary database files: the full profile load
 * (NVTX, kernels, copies, range attribution) and the direct kernel table. Corpus:
 * fuzz/corpus/nsys_sqlite, seeded with small exports (the one built from
 * tests/fixtures/nsys/synthetic.sql, and the H200 exports cut down; see docs/fuzzing.md). The
 * bytes go to a scratch file because the reader takes a path (and opens it read-only). */
#include <stddef.h>
#include <stdint.h>

#include "parse/nsys_sqlite.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4096];
	struct lp_profile p;
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	if (size > (4u << 20) || lp_fuzz_scratch_write("run.sqlite", data, size, path, sizeof(path)) < 0)
		return 0;
	lp_profile_init(&p, path);
	lp_nsys_sqlite_load(path, &p, &err);
	lp_profile_release(&p);
	lp_err_clear(&err);
	if (lp_nsys_sqlite_kernel_table(path, &t, &err) == 0)
		lp_kernel_table_release(&t);
	return 0;
}
