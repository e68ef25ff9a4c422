/* fs.h: files and folders. Artifacts are written atomically: a temporary file in the same
 * folder, fsync, rename, fsync of the folder. A crash or Ctrl-C never leaves a half-written
 * artifact. Paths are plain C strings owned by the caller. Thread-safe (no shared state).
 *
 *   if (lp_fs_write_atomic("tmp/stage2/x/report.md", b.data, b.len, err) < 0) return -1;
 */
#ifndef LP_CORE_FS_H
#define LP_CORE_FS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"

int lp_fs_mkdir_p(const char *path, struct lp_err *err);
int lp_fs_write_atomic(const char *path, const void *data, size_t len, struct lp_err *err);
/* Reads the whole file into `out` (appended); fails past `max_bytes` (0: no cap). */
int lp_fs_read_file(const char *path, struct lp_buf *out, size_t max_bytes, struct lp_err *err);
int lp_fs_exists(const char *path);
int lp_fs_is_dir(const char *path);
int lp_fs_is_file(const char *path);
int64_t lp_fs_size(const char *path);                    /* -1 when missing */
/* Removes a folder tree (used to prune old runs); refuses "/" and "". */
int lp_fs_remove_tree(const char *path, struct lp_err *err);
/* Joins two path parts into `out` (reset first). */
int lp_fs_join(struct lp_buf *out, const char *a, const char *b);
/* The folder of the running executable (from /proc/self/exe), without trailing slash. */
int lp_fs_exe_dir(struct lp_buf *out, struct lp_err *err);
/* Finds `name` on PATH; fills `out` with the absolute path; 0 found, -1 not. */
int lp_fs_which(const char *name, struct lp_buf *out);

#endif
