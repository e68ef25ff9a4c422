/* fuzz_stage_hooks.c: the `stages.hooks` grammar (config/stage_hooks.h), checked when a config is
 * validated: MODULE:QUALNAME=STAGE[@PAYLOAD]. The first byte sets the size of the reason buffer
 * (0..255 bytes), the rest is the entry. Any entry is accepted or refused with a reason that fits
 * the buffer, NUL-terminated, on one line (unless it quotes an entry holding a newline); entries
 * over LP_STAGE_HOOK_MAX_LEN are refused.
 * Corpus: fuzz/corpus/stage_hooks (the entries of conf/stages/ and the grammar's examples). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/stage_hooks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *entry, *why;
	size_t cap;
	int rc;
	if (size < 1 || size > 4096)
		return 0;
	cap = data[0];
	entry = malloc(size);
	why = malloc(cap ? cap : 1);
	if (!entry || !why) {
		free(entry);
		free(why);
		return 0;
	}
	memcpy(entry, data + 1, size - 1);
	entry[size - 1] = '\0';
	if (cap)
		memset(why, 'x', cap);
	rc = lp_stage_hook_check(entry, why, cap);
	if (rc != 0 && rc != -1)
		abort();
	if (rc == 0 && strlen(entry) > LP_STAGE_HOOK_MAX_LEN)
		abort();
	if (rc < 0 && cap) {
		const char *nul = memchr(why, '\0', cap);
		if (!nul || (cap > 1 && nul == why))
			abort();   /* the reason: not empty, NUL-terminated inside the buffer */
		if (memchr(why, '\n', (size_t)(nul - why)) && !strchr(entry, '\n'))
			abort();   /* one line, unless it quotes an entry that holds a newline */
	}
	free(entry);
	free(why);
	return 0;
}
