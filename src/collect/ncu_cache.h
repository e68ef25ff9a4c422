/* ncu_cache.h: Nsight Compute results kept on the machine between runs (issue 15,
 * `profiling.ncu.cache=true`; docs/ncu-sampling.md), and the raw-page tables the sampled ncu
 * phase merges (several ncu processes, cached rows) into the one ncu/<name>_raw.csv the analysis
 * reads.
 *
 * Key: sha256 over "llmprof-ncu-cache/1", the GPU name, the driver version, the ncu version, the
 * preset fingerprint (lp_ncu_cache_preset_fp: set, sections, metrics, replay mode, clock and
 * cache control: what changes the numbers), then the kernel's demangled name, grid, block and
 * shared memory bytes; fields separated by NUL bytes, numbers in decimal. A change to any of them
 * is another key: a re-run after a change profiles only what changed.
 *
 * Folder: `dir` when given (profiling.ncu.cache_dir), else $XDG_CACHE_HOME/llmprof/ncu, else
 * $HOME/.cache/llmprof/ncu. One file per key: <dir>/<key[0..1]>/<key>.json, written atomically:
 *   { "format": "llmprof-ncu-cache/1", "kernel_name": ..., "grid": [x,y,z], "block": [x,y,z],
 *     "shared_bytes": n, "gpu": ..., "driver": ..., "ncu_version": ..., "preset_fp": ...,
 *     "run": "<run id that profiled it>", "table": <raw table, below> }
 * A file that does not parse or whose fields disagree with the key is a miss (and overwritten by
 * the next store), never an error: the cache only ever saves time.
 *
 * Raw table (JSON, lp_ncu_table_*): { "columns": [...], "units": [...] (raw page only),
 * "rows": [[cell, ...], ...] } with the cells as ncu exported them (strings). Merging remaps rows
 * by column name (a missing cell becomes "n/a") and renumbers the ID column so that results of
 * several ncu processes stay distinct.
 *
 * Ownership: json_t results are new references. Not thread-safe. Never prints.
 *
 *   struct lp_ncu_cache c;
 *   lp_ncu_cache_init(&c, NULL, &(struct lp_ncu_cache_ident){ gpu, driver, ncu_ver }, preset, err);
 *   char key[65]; lp_ncu_cache_key(&c, kernel, grid, block, smem, key);
 *   json_t *hit = NULL; if (lp_ncu_cache_get(&c, key, &hit) == 1) ... json_decref(hit);
 */
#ifndef LP_COLLECT_NCU_CACHE_H
#define LP_COLLECT_NCU_CACHE_H

#include <jansson.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"

#define LP_NCU_CACHE_FORMAT "llmprof-ncu-cache/1"
#define LP_NCU_TABLE_MAX_ROWS 100000

struct lp_ncu_cache_ident {
	const char *gpu;             /* "NVIDIA H100 80GB HBM3" */
	const char *driver;          /* "580.65.06" */
	const char *ncu_version;     /* "2025.3.1" */
};

struct lp_ncu_cache {
	char dir[1024];
	char gpu[256], driver[64], ncu_version[64];
	char preset_fp[65];
};

/* The fingerprint of what in a preset changes the numbers (see the top). */
void lp_ncu_cache_preset_fp(const json_t *preset, char out[65]);
/* Resolves the folder (not created until a store) and the identity. */
int lp_ncu_cache_init(struct lp_ncu_cache *c, const char *dir, const struct lp_ncu_cache_ident *id,
	const json_t *preset, struct lp_err *err);
void lp_ncu_cache_key(const struct lp_ncu_cache *c, const char *kernel_name, const uint32_t grid[3],
	const uint32_t block[3], uint32_t shared_bytes, char out[65]);
/* 1 hit (*entry: the entry object), 0 miss (absent, unreadable or not this key). */
int lp_ncu_cache_get(const struct lp_ncu_cache *c, const char *key, json_t **entry);
/* Stores `table` (the kernel's raw rows) under key; `run` names the run for the report. */
int lp_ncu_cache_put(const struct lp_ncu_cache *c, const char *key, const char *kernel_name, const uint32_t grid[3],
	const uint32_t block[3], uint32_t shared_bytes, const char *run, const json_t *table, struct lp_err *err);

/* ---- raw-page tables ---- */

/* Reads an ncu CSV page into a table; `units`: the page has a units row under the header (raw). */
int lp_ncu_table_load(const char *path, int units, json_t **out, struct lp_err *err);
/* Writes a table as CSV (header, units when present, rows). */
int lp_ncu_table_write(const json_t *table, const char *path, struct lp_err *err);
/* Appends src's rows to dst, remapped by column name, adding *id_offset to the ID column; with
 * *id_offset < 0 (or id_offset NULL) the IDs continue after dst's largest, and *id_offset receives
 * the offset used (give the raw page's offset to its details page). An empty dst (no columns) takes
 * src's columns. */
int lp_ncu_table_append(json_t *dst, const json_t *src, long *id_offset, struct lp_err *err);
/* A new table with dst's columns and the rows of `t` whose kernel (function name of the Kernel Name
 * cell), Grid Size and Block Size are these. */
json_t *lp_ncu_table_select(const json_t *t, const char *function, const uint32_t grid[3], const uint32_t block[3]);
/* Column index by name; -1 absent. */
long lp_ncu_table_column(const json_t *t, const char *name);

#endif
