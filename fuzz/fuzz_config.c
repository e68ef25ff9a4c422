/* fuzz_config.c: a YAML document as the root config.yaml (defaults list, _self_, packages),
 * composed with the shipped conf/ groups and validated. Corpus: fuzz/corpus/config, seeded
 * with the files of conf/. */
#include <stdint.h>
#include <stdlib.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	const char *ovr[] = { "run.repeats=2", "profiling/ncu=ncu.light" };
	if (size > (1u << 16))
		return 0;
	if (lp_config_load_string(&cfg, LP_SOURCE_DIR "/conf", (const char *)data, size, "fuzz.yaml",
		    ovr, 2, &err) == 0) {
		int64_t n;
		if (lp_config_get_int(&cfg, "run.repeats", &n, &err) < 0 || n != 2)
			abort();  /* a valid config always has the override applied */
		lp_config_release(&cfg);
	} else if (err.kind != LP_EUSAGE && err.kind != LP_EOTHER && err.kind != LP_ENOMEM) {
		abort();
	}
	return 0;
}
