/* fuzz_workload_timings.c: the self-check's reader of a workload's stdout (parse/workload_timings.h):
 * JSON lines among any other output. Both entry points (text in memory, and the file as the run
 * folder has it) must agree, and every value must keep the header's contract: unknown (< 0) or a
 * finite number >= 0, `valid` exactly when one is known; the per-step lists (step_ms) read from the
 * file equal those of the text, each a finite number >= 0. Corpus: fuzz/corpus/workload_timings
 * (the workload.stdout files of tests/fixtures/runs/ and hand-written lines). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/workload_timings.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int known(double v)
{
	if (v < 0)
		return 0;
	if (!isfinite(v))
		abort();   /* a value is finite or unknown */
	return 1;
}

static void check(const struct lp_own_timings *t)
{
	int any = known(t->prefill_ms) | known(t->decode_ms) | known(t->decode_ms_per_step) |
		  known(t->tokens_per_s) | known(t->mixed_ms);
	if (t->valid != any || t->iters < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_own_timings mem, file;
	struct lp_err err = LP_ERR_INIT;
	char path[4096];
	double *steps = NULL, *fsteps = NULL;
	size_t n_steps = 0, n_fsteps = 0, i;
	if (size > (1u << 20))
		return 0;
	lp_workload_timings_parse((const char *)data, size, &mem);
	check(&mem);
	if (lp_workload_steps_parse((const char *)data, size, &steps, &n_steps) < 0)
		return 0;
	for (i = 0; i < n_steps; i++)
		if (!(isfinite(steps[i]) && steps[i] >= 0))
			abort();
	if (lp_fuzz_scratch_write("workload.stdout", data, size, path, sizeof(path)) < 0) {
		free(steps);
		return 0;
	}
	if (lp_workload_timings_read(path, &file, &fsteps, &n_fsteps, &err) < 0)
		abort();   /* the file is there and readable */
	if (n_fsteps != n_steps || (n_steps && memcmp(steps, fsteps, n_steps * sizeof(*steps))))
		abort();   /* the file's steps are the text's */
	free(steps);
	free(fsteps);
	check(&file);
	if (mem.valid != file.valid || mem.iters != file.iters || mem.prefill_ms != file.prefill_ms ||
	    mem.decode_ms != file.decode_ms || mem.decode_ms_per_step != file.decode_ms_per_step ||
	    mem.tokens_per_s != file.tokens_per_s || mem.mixed_ms != file.mixed_ms)
		abort();   /* the file and the text give the same values (none is NaN: check() above) */
	return 0;
}
