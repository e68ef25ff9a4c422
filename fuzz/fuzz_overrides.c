/* fuzz_overrides.c: one command-line override applied to the shipped conf/ (group selections,
 * key paths, YAML flow values, deletes). Any input must give a config or a one-line usage error;
 * ASan/UBSan catch the rest. Corpus: fuzz/corpus/overrides (one override per file). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	char *text;
	const char *ovr[1];
	if (size > 4096)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ovr[0] = text;
	if (lp_config_load(&cfg, LP_SOURCE_DIR "/conf", ovr, 1, &err) == 0) {
		struct lp_buf out = LP_BUF_INIT;
		lp_config_dump_yaml(&cfg, &out, &err);
		lp_buf_release(&out);
		lp_config_release(&cfg);
	} else if (err.kind != LP_EUSAGE && err.kind != LP_EOTHER && err.kind != LP_ENOMEM) {
		abort();
	} else if (strchr(err.msg, '\n') && !strchr(text, '\n')) {
		abort();  /* errors are one line unless the input itself has a newline */
	}
	free(text);
	return 0;
}
