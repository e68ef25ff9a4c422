/* fuzz_source.c: input detection (parse/source.h), the first step of `llmprof kernels SOURCE`:
 * what a file or folder is, told by content, and its kernel table through whichever reader that
 * picks. The first input byte chooses where the rest is placed (so that the name-based cases, the
 * run-folder lookup order and the 0-byte nsys report are reached) and the options:
 *   bits 0-2: 0 a file "input", 1 "t.lptrace", 2 "summary_cuda_gpu_kern_sum.csv",
 *             3 run/trace/0.lptrace, 4 run/ncu/run_raw.csv, 5 run/nsys/run.sqlite,
 *             6 run/nsys/summary_cuda_gpu_kern_sum.csv, 7 traces/0.lptrace (a trace folder);
 *   bit 3: --stage decode_all; bit 4: exclude warm-up.
 * Corpus: fuzz/corpus/source, each seed a fixture behind its placement byte. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "parse/source.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	const char *file;            /* where the bytes go */
	const char *source;          /* what is handed to the detector */
} places[8] = {
	{ "input", "input" },
	{ "t.lptrace", "t.lptrace" },
	{ "summary_cuda_gpu_kern_sum.csv", "summary_cuda_gpu_kern_sum.csv" },
	{ "run/trace/0.lptrace", "run" },
	{ "run/ncu/run_raw.csv", "run" },
	{ "run/nsys/run.sqlite", "run" },
	{ "run/nsys/summary_cuda_gpu_kern_sum.csv", "run" },
	{ "traces/0.lptrace", "traces" },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4096], source[4096];
	struct lp_source_opts o = { .stage = NULL };
	struct lp_kernel_table t;
	struct lp_buf resolved = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	enum lp_source_kind kind;
	unsigned sel;
	size_t i, sum = 0;
	if (size < 1 || size > (1u << 20))
		return 0;
	sel = data[0];
	lp_fuzz_scratch_clear();
	if (lp_fuzz_scratch_write(places[sel & 7].file, data + 1, size - 1, path, sizeof(path)) < 0)
		return 0;
	if ((size_t)snprintf(source, sizeof(source), "%s/%s", lp_fuzz_scratch_dir(), places[sel & 7].source) >=
	    sizeof(source))
		return 0;
	if (sel & 8)
		o.stage = "decode_all";
	o.exclude_warmup = (sel & 16) != 0;
	if (lp_source_detect(source, &kind, &resolved, &err) == 0) {
		sum += strlen(lp_source_kind_name(kind)) + resolved.len;
	}
	lp_err_clear(&err);
	if (lp_source_kernel_table(source, &o, &t, &kind, &resolved, &err) == 0) {
		for (i = 0; i < t.n_rows; i++)
			sum += strlen(t.rows[i].kernel_name) + strlen(t.rows[i].short_name);
		lp_kernel_table_release(&t);
	}
	(void)sum;
	lp_buf_release(&resolved);
	return 0;
}
