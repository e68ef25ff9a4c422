/* scratch.c: the scratch folder of scratch.h (fuzz targets only; not part of lpcore). */
#include "scratch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fs.h"

static char scratch[4096];

static void remove_scratch(void)
{
	struct lp_err err = LP_ERR_INIT;
	if (scratch[0])
		lp_fs_remove_tree(scratch, &err);
}

const char *lp_fuzz_scratch_dir(void)
{
	const char *base = getenv("TMPDIR");
	struct stat st;
	if (scratch[0])
		return scratch;
	if (!base || !*base)
		base = (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0) ?
			"/dev/shm" : "/tmp";
	if (snprintf(scratch, sizeof(scratch), "%s/llmprof-fuzz-XXXXXX", base) >= (int)sizeof(scratch) ||
	    !mkdtemp(scratch)) {
		scratch[0] = '\0';
		return scratch;
	}
	atexit(remove_scratch);
	return scratch;
}

int lp_fuzz_scratch_write(const char *rel, const uint8_t *data, size_t size, char *path, size_t cap)
{
	const char *dir = lp_fuzz_scratch_dir();
	char *slash;
	FILE *f;
	int n;
	if (!dir[0])
		return -1;
	n = snprintf(path, cap, "%s/%s", dir, rel);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	for (slash = path + strlen(dir) + 1; (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*slash = '/';
			return -1;
		}
		*slash = '/';
	}
	f = fopen(path, "wb");
	if (!f)
		return -1;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

void lp_fuzz_scratch_clear(void)
{
	struct lp_err err = LP_ERR_INIT;
	const char *dir = lp_fuzz_scratch_dir();
	if (!dir[0])
		return;
	lp_fs_remove_tree(dir, &err);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		scratch[0] = '\0';
}
