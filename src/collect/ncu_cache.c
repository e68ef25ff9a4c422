/* ncu_cache.c: the machine-wide cache of Nsight Compute results and the raw-page tables the
 * sampled ncu phase merges (see ncu_cache.h). Sits in collect/: it reads and writes files; the
 * planning that decides what to look up is analyze/ncu_sample.c. */
#include "collect/ncu_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/sha256.h"
#include "core/str.h"
#include "parse/csv.h"
#include "parse/kname.h"
#include "parse/ncu_raw.h"

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

void lp_ncu_cache_preset_fp(const json_t *preset, char out[65])
{
	static const char *const keys[] = { "set", "sections", "metrics", "replay_mode", "clock_control",
					    "cache_control", NULL };
	json_t *o = json_object();
	char *text;
	size_t i;
	for (i = 0; keys[i]; i++) {
		json_t *v = json_object_get(preset, keys[i]);
		json_object_set_new(o, keys[i], v ? json_deep_copy(v) : json_null());
	}
	text = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	lp_sha256_hex(text ? text : "", text ? strlen(text) : 0, out);
	free(text);
	json_decref(o);
}

int lp_ncu_cache_init(struct lp_ncu_cache *c, const char *dir, const struct lp_ncu_cache_ident *id,
	const json_t *preset, struct lp_err *err)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	memset(c, 0, sizeof(*c));
	if (dir && *dir)
		snprintf(c->dir, sizeof(c->dir), "%s", dir);
	else if (xdg && *xdg == '/')
		snprintf(c->dir, sizeof(c->dir), "%s/llmprof/ncu", xdg);
	else if (home && *home)
		snprintf(c->dir, sizeof(c->dir), "%s/.cache/llmprof/ncu", home);
	else
		return lp_err_set(err, LP_EENV, "no folder for the ncu cache: HOME and XDG_CACHE_HOME are unset "
			"(set profiling.ncu.cache_dir)");
	snprintf(c->gpu, sizeof(c->gpu), "%s", id && id->gpu ? id->gpu : "");
	snprintf(c->driver, sizeof(c->driver), "%s", id && id->driver ? id->driver : "");
	snprintf(c->ncu_version, sizeof(c->ncu_version), "%s", id && id->ncu_version ? id->ncu_version : "");
	lp_ncu_cache_preset_fp(preset, c->preset_fp);
	return 0;
}

void lp_ncu_cache_key(const struct lp_ncu_cache *c, const char *kernel_name, const uint32_t grid[3],
	const uint32_t block[3], uint32_t shared_bytes, char out[65])
{
	struct lp_sha256 s;
	unsigned char d[32];
	char num[96];
	static const char hex[] = "0123456789abcdef";
	const char *fields[6];
	size_t i;
	fields[0] = LP_NCU_CACHE_FORMAT;
	fields[1] = c->gpu;
	fields[2] = c->driver;
	fields[3] = c->ncu_version;
	fields[4] = c->preset_fp;
	fields[5] = kernel_name ? kernel_name : "";
	lp_sha256_init(&s);
	for (i = 0; i < 6; i++)
		lp_sha256_update(&s, fields[i], strlen(fields[i]) + 1);
	snprintf(num, sizeof(num), "%u,%u,%u/%u,%u,%u/%u", grid[0], grid[1], grid[2], block[0], block[1], block[2],
		shared_bytes);
	lp_sha256_update(&s, num, strlen(num) + 1);
	lp_sha256_final(&s, d);
	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}

static void entry_path(const struct lp_ncu_cache *c, const char *key, struct lp_buf *out)
{
	lp_buf_reset(out);
	lp_buf_addf(out, "%s/%.2s/%s.json", c->dir, key, key);
}

static int str_is(const json_t *o, const char *k, const char *want)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v && !strcmp(v, want);
}

int lp_ncu_cache_get(const struct lp_ncu_cache *c, const char *key, json_t **entry)
{
	struct lp_buf path = LP_BUF_INIT;
	json_t *e;
	*entry = NULL;
	entry_path(c, key, &path);
	e = lp_fs_is_file(path.data) ? json_load_file(path.data, 0, NULL) : NULL;
	lp_buf_release(&path);
	if (!e)
		return 0;
	/* the identity is in the key already; a file that says otherwise was not written by this
	 * version for this key (or was edited): a miss */
	if (!str_is(e, "format", LP_NCU_CACHE_FORMAT) || !str_is(e, "key", key) || !str_is(e, "gpu", c->gpu) ||
	    !str_is(e, "driver", c->driver) || !str_is(e, "ncu_version", c->ncu_version) ||
	    !str_is(e, "preset_fp", c->preset_fp) ||
	    !json_is_array(json_object_get(json_object_get(e, "table"), "rows")) ||
	    json_array_size(json_object_get(json_object_get(e, "table"), "rows")) == 0) {
		json_decref(e);
		return 0;
	}
	*entry = e;
	return 1;
}

static json_t *dim3(const uint32_t v[3])
{
	return json_pack("[III]", (json_int_t)v[0], (json_int_t)v[1], (json_int_t)v[2]);
}

int lp_ncu_cache_put(const struct lp_ncu_cache *c, const char *key, const char *kernel_name, const uint32_t grid[3],
	const uint32_t block[3], uint32_t shared_bytes, const char *run, const json_t *table, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT, dir = LP_BUF_INIT;
	json_t *e = json_object();
	char *text;
	int rc = -1;
	json_object_set_new(e, "format", json_string(LP_NCU_CACHE_FORMAT));
	json_object_set_new(e, "key", json_string(key));
	json_object_set_new(e, "kernel_name", json_string(kernel_name ? kernel_name : ""));
	json_object_set_new(e, "grid", dim3(grid));
	json_object_set_new(e, "block", dim3(block));
	json_object_set_new(e, "shared_bytes", json_integer(shared_bytes));
	json_object_set_new(e, "gpu", json_string(c->gpu));
	json_object_set_new(e, "driver", json_string(c->driver));
	json_object_set_new(e, "ncu_version", json_string(c->ncu_version));
	json_object_set_new(e, "preset_fp", json_string(c->preset_fp));
	json_object_set_new(e, "run", run ? json_string(run) : json_null());
	json_object_set_new(e, "table", json_deep_copy(table));
	text = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(e);
	if (!text)
		return oom(err);
	lp_buf_addf(&dir, "%s/%.2s", c->dir, key);
	entry_path(c, key, &path);
	if (lp_fs_mkdir_p(dir.data, err) == 0 && lp_fs_write_atomic(path.data, text, strlen(text), err) == 0)
		rc = 0;
	free(text);
	lp_buf_release(&path);
	lp_buf_release(&dir);
	return rc;
}

/* ---- tables ---- */

static json_t *cells(const struct lp_csv *c)
{
	json_t *a = json_array();
	size_t i;
	for (i = 0; i < c->n_fields; i++)
		json_array_append_new(a, json_stringn(c->fields[i], c->lens[i]));
	return a;
}

int lp_ncu_table_load(const char *path, int units, json_t **out, struct lp_err *err)
{
	struct lp_csv c;
	json_t *t, *rows;
	int rc, line = 0;
	*out = NULL;
	if (lp_csv_open(&c, path, NULL, err) < 0)
		return -1;
	t = json_object();
	rows = json_array();
	json_object_set_new(t, "rows", rows);
	while ((rc = lp_csv_next(&c, err)) > 0) {
		json_t *a = cells(&c);
		if (!a) {
			rc = oom(err);
			break;
		}
		if (line == 0)
			json_object_set_new(t, "columns", a);
		else if (line == 1 && units)
			json_object_set_new(t, "units", a);
		else if (json_array_size(rows) >= LP_NCU_TABLE_MAX_ROWS) {
			json_decref(a);
			rc = lp_err_set(err, LP_EPARTIAL, "%s: more than %d results", path, LP_NCU_TABLE_MAX_ROWS);
			break;
		} else
			json_array_append_new(rows, a);
		line++;
	}
	lp_csv_close(&c);
	if (rc < 0) {
		json_decref(t);
		return -1;
	}
	if (!json_object_get(t, "columns"))
		json_object_set_new(t, "columns", json_array());
	*out = t;
	return 0;
}

/* ncu quotes every cell: so do we, doubling the quotes inside */
static int add_csv_cell(struct lp_buf *b, const char *s)
{
	const char *p;
	lp_buf_addc(b, '"');
	for (p = s; *p; p++) {
		if (*p == '"')
			lp_buf_addc(b, '"');
		lp_buf_addc(b, *p);
	}
	return lp_buf_addc(b, '"');
}

static int add_csv_row(struct lp_buf *b, const json_t *row)
{
	size_t i;
	json_t *v;
	json_array_foreach(row, i, v) {
		if (i)
			lp_buf_addc(b, ',');
		add_csv_cell(b, json_is_string(v) ? json_string_value(v) : "");
	}
	return lp_buf_addc(b, '\n');
}

int lp_ncu_table_write(const json_t *t, const char *path, struct lp_err *err)
{
	struct lp_buf b = LP_BUF_INIT;
	const json_t *rows = json_object_get(t, "rows"), *units = json_object_get(t, "units");
	json_t *r;
	size_t i;
	int rc;
	add_csv_row(&b, json_object_get(t, "columns"));
	if (units)
		add_csv_row(&b, units);
	json_array_foreach(rows, i, r)
		add_csv_row(&b, r);
	rc = lp_fs_write_atomic(path, b.data, b.len, err);
	lp_buf_release(&b);
	return rc;
}

long lp_ncu_table_column(const json_t *t, const char *name)
{
	const json_t *cols = json_object_get(t, "columns");
	json_t *v;
	size_t i;
	json_array_foreach(cols, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), name))
			return (long)i;
	return -1;
}

static long max_id(const json_t *t)
{
	long col = lp_ncu_table_column(t, "ID"), m = -1;
	json_t *r;
	size_t i;
	if (col < 0)
		return -1;
	json_array_foreach(json_object_get(t, "rows"), i, r) {
		int64_t v;
		const char *s = json_string_value(json_array_get(r, (size_t)col));
		if (s && lp_str_to_i64(s, &v) == 0 && v > m)
			m = (long)v;
	}
	return m;
}

int lp_ncu_table_append(json_t *dst, const json_t *src, long *id_offset, struct lp_err *err)
{
	const json_t *scols = json_object_get(src, "columns");
	json_t *drows = json_object_get(dst, "rows"), *r;
	long *map, id_col, off;
	size_t i, j, nd;
	if (!json_is_array(drows)) {
		drows = json_array();
		json_object_set_new(dst, "rows", drows);
	}
	if (json_array_size(json_object_get(dst, "columns")) == 0) {
		json_object_set_new(dst, "columns", json_deep_copy(scols));
		if (json_object_get(src, "units"))
			json_object_set_new(dst, "units", json_deep_copy(json_object_get(src, "units")));
	}
	off = id_offset && *id_offset >= 0 ? *id_offset : max_id(dst) + 1;
	if (id_offset)
		*id_offset = off;
	nd = json_array_size(json_object_get(dst, "columns"));
	map = malloc((nd + 1) * sizeof(*map));
	if (!map)
		return oom(err);
	for (j = 0; j < nd; j++)
		map[j] = lp_ncu_table_column(src, json_string_value(json_array_get(json_object_get(dst, "columns"), j)));
	id_col = lp_ncu_table_column(dst, "ID");
	json_array_foreach(json_object_get(src, "rows"), i, r) {
		json_t *row = json_array();
		size_t width = json_array_size(r);
		if (json_array_size(drows) >= LP_NCU_TABLE_MAX_ROWS) {
			json_decref(row);
			free(map);
			return lp_err_set(err, LP_EPARTIAL, "more than %d ncu results to merge", LP_NCU_TABLE_MAX_ROWS);
		}
		/* a ragged row (the details page's metric rows stop before the rule columns) stays as
		 * long as its own cells reach */
		for (j = 0; j < nd; j++) {
			const json_t *cell = map[j] >= 0 ? json_array_get(r, (size_t)map[j]) : NULL;
			if (map[j] >= 0 && (size_t)map[j] >= width)
				break;
			if ((long)j == id_col && cell) {
				int64_t v;
				if (lp_str_to_i64(json_string_value(cell), &v) == 0) {
					json_array_append_new(row, json_sprintf("%lld", (long long)(v + off)));
					continue;
				}
			}
			json_array_append_new(row, cell ? json_deep_copy(cell) : json_string("n/a"));
		}
		json_array_append_new(drows, row);
	}
	free(map);
	return 0;
}

json_t *lp_ncu_table_select(const json_t *t, const char *function, const uint32_t grid[3], const uint32_t block[3])
{
	long kc = lp_ncu_table_column(t, "Kernel Name"), gc = lp_ncu_table_column(t, "Grid Size"),
	     bc = lp_ncu_table_column(t, "Block Size");
	json_t *out = json_object(), *rows = json_array(), *r;
	struct lp_buf fn = LP_BUF_INIT;
	size_t i;
	json_object_set_new(out, "columns", json_deep_copy(json_object_get(t, "columns")));
	if (json_object_get(t, "units"))
		json_object_set_new(out, "units", json_deep_copy(json_object_get(t, "units")));
	json_object_set_new(out, "rows", rows);
	if (kc < 0 || gc < 0 || bc < 0)
		return out;
	json_array_foreach(json_object_get(t, "rows"), i, r) {
		uint32_t g[3], b[3];
		const char *k = json_string_value(json_array_get(r, (size_t)kc));
		const char *gs = json_string_value(json_array_get(r, (size_t)gc));
		const char *bs = json_string_value(json_array_get(r, (size_t)bc));
		if (!k || !gs || !bs || lp_ncu_parse_dim3(gs, g) < 0 || lp_ncu_parse_dim3(bs, b) < 0)
			continue;
		lp_buf_reset(&fn);
		if (lp_kname_ncu_function(k, &fn) < 0 || strcmp(fn.data, function))
			continue;
		if (memcmp(g, grid, sizeof(g)) || memcmp(b, block, sizeof(b)))
			continue;
		json_array_append_new(rows, json_deep_copy(r));
	}
	lp_buf_release(&fn);
	return out;
}
