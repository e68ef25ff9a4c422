/* replay.c: runs a fuzz target's LLVMFuzzerTestOneInput over saved inputs, without libFuzzer.
 *
 * Linked with each fuzz/fuzz_<name>.c into replay_fuzz_<name> (fuzz/CMakeLists.txt), so that
 * `make test` replays every corpus and every crash input in the gcc sanitizer build: a crash,
 * a sanitizer report or a leak fails the test, and the input's name is the last line printed.
 *
 *   replay_fuzz_csv fuzz/corpus/csv --optional fuzz/crashes/csv
 *
 * Arguments are files or folders (every regular file in them, in name order, not recursive);
 * a folder after --optional may be absent. Fails when nothing at all was replayed (a replay
 * that tests nothing must not pass).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;
	if (!f) {
		fprintf(stderr, "replay: cannot open '%s'\n", path);
		return -1;
	}
	for (;;) {
		if (size == cap) {
			uint8_t *grown;
			cap = cap ? cap * 2 : 65536;
			grown = realloc(data, cap);
			if (!grown) {
				free(data);
				fclose(f);
				fprintf(stderr, "replay: out of memory reading '%s'\n", path);
				return -1;
			}
			data = grown;
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
	/* an exact-size copy, so that ASan sees a read past the input's end as libFuzzer would */
	{
		uint8_t *exact = malloc(size ? size : 1);
		if (!exact) {
			free(data);
			return -1;
		}
		if (size)
			memcpy(exact, data, size);
		free(data);
		LLVMFuzzerTestOneInput(exact, size);
		free(exact);
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays a file or every regular file of a folder; adds to *count. */
static int replay_path(const char *path, int optional, size_t *count)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;
	if (stat(path, &st) < 0) {
		if (optional)
			return 0;
		fprintf(stderr, "replay: '%s': no such file or folder\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: cannot open folder '%s'\n", path);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		size_t len;
		char *full;
		if (e->d_name[0] == '.')
			continue;
		len = strlen(path) + strlen(e->d_name) + 2;
		full = malloc(len);
		if (!full) {
			rc = -1;
			break;
		}
		snprintf(full, len, "%s/%s", path, e->d_name);
		if (stat(full, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(full);
			continue;
		}
		if (n == cap) {
			char **grown = realloc(names, (cap ? cap * 2 : 64) * sizeof(*names));
			if (!grown) {
				free(full);
				rc = -1;
				break;
			}
			names = grown;
			cap = cap ? cap * 2 : 64;
		}
		names[n++] = full;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		if (rc == 0 && replay_file(names[i]) < 0)
			rc = -1;
		else if (rc == 0)
			(*count)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int i, optional = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH... [--optional PATH...]\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--optional") == 0) {
			optional = 1;
			continue;
		}
		if (replay_path(argv[i], optional, &count) < 0)
			return 1;
	}
	if (count == 0) {
		fprintf(stderr, "replay: no input found: nothing was tested\n");
		return 1;
	}
	fprintf(stderr, "replay: %zu inputs, no crash\n", count);
	return 0;
}
