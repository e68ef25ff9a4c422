/* fuzz_nsys_sqlite.c: the nsys SQLite reader on arbitrary database files (seed the corpus with
 * exports, e.g. the one built from tests/fixtures/nsys/synthetic.sql). The bytes are written to a
 * temporary file because the reader takes a path. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "parse/nsys_sqlite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/llmprof-fuzz-sqlite-XXXXXX";
	int fd = mkstemp(path);
	struct lp_profile p;
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	lp_profile_init(&p, path);
	lp_nsys_sqlite_load(path, &p, &err);
	lp_profile_release(&p);
	if (lp_nsys_sqlite_kernel_table(path, &t, &err) == 0)
		lp_kernel_table_release(&t);
	unlink(path);
	return 0;
}
