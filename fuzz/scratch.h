/* scratch.h: a private scratch folder for fuzz targets whose reader takes a path.
 *
 * The folder is created on first use (under $TMPDIR, else /dev/shm when it exists, else /tmp)
 * and removed when the process exits; each call rewrites the file it names, so one input never
 * sees the last one's files unless the target asks for them. Not thread-safe (libFuzzer runs one
 * input at a time per process).
 *
 *   char path[4096];
 *   if (lp_fuzz_scratch_write("raw.csv", data, size, path, sizeof(path)) < 0) return 0;
 *   lp_ncu_raw_stream(path, ...);
 */
#ifndef LP_FUZZ_SCRATCH_H
#define LP_FUZZ_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

/* The folder itself ("" when it could not be created). */
const char *lp_fuzz_scratch_dir(void);
/* Writes data to <scratch>/<rel> (parent folders created); *path (cap bytes) receives the full
 * path. 0 ok, -1 failed (the target then returns without testing anything). */
int lp_fuzz_scratch_write(const char *rel, const uint8_t *data, size_t size, char *path, size_t cap);
/* Empties the scratch folder (keeps the folder). */
void lp_fuzz_scratch_clear(void);

#endif
