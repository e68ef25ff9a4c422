/* nsys_db.c: access to an Nsight Systems SQLite export, shared by the profile loader
 * (nsys_sqlite.c) and the direct kernel aggregation (nsys_agg.c): opening it read-only (and
 * telling a truncated file from a corrupt one), probing tables and columns of the schema version
 * at hand, StringIds lookups interned in the profile, and a kernel's names.
 */
#include "parse/nsys_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/kname.h"

const char lp_nsys_missing_string[1] = "";

int lp_nsys_db_fail(struct lp_nsys_db *d, const char *what, struct lp_err *err)
{
	return lp_err_set(err, LP_EPARSE, "%s: %s: %s", d->path, what, sqlite3_errmsg(d->h));
}

int lp_nsys_sqlite_is_sqlite(const char *path)
{
	char head[16];
	FILE *f = fopen(path, "rb");
	size_t n;
	if (!f)
		return 0;
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	return n == 16 && memcmp(head, "SQLite format 3", 16) == 0;
}

int lp_nsys_has_table(struct lp_nsys_db *d, const char *name)
{
	sqlite3_stmt *st;
	int found = 0;
	if (sqlite3_prepare_v2(d->h, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?",
			-1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* Column list of a table, as one ",a,b,c," string for cheap membership tests. */
int lp_nsys_table_columns(struct lp_nsys_db *d, const char *table, struct lp_buf *out, struct lp_err *err)
{
	sqlite3_stmt *st;
	struct lp_buf q = LP_BUF_INIT;
	int rc;
	lp_buf_reset(out);
	if (lp_buf_addf(&q, "PRAGMA table_info(%s)", table) < 0) {
		lp_buf_release(&q);
		return lp_oom(err);
	}
	rc = sqlite3_prepare_v2(d->h, q.data, -1, &st, NULL);
	lp_buf_release(&q);
	if (rc != SQLITE_OK)
		return lp_nsys_db_fail(d, "reading the columns of a table", err);
	lp_buf_addc(out, ',');
	while (sqlite3_step(st) == SQLITE_ROW)
		lp_buf_addf(out, "%s,", (const char *)sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	return out->oom ? lp_oom(err) : 0;
}

int lp_nsys_has_col(const struct lp_buf *cols, const char *name)
{
	char key[96];
	snprintf(key, sizeof(key), ",%s,", name);
	return strstr(cols->data, key) != NULL;
}

/* "alias.col" when the column exists, else the fallback SQL literal. */
void lp_nsys_add_col(struct lp_buf *q, const struct lp_buf *cols, const char *alias, const char *name,
	const char *fallback)
{
	if (lp_nsys_has_col(cols, name))
		lp_buf_addf(q, "%s.%s, ", alias, name);
	else
		lp_buf_addf(q, "%s, ", fallback);
}

/* A file shorter than the size its SQLite header gives (bytes 16-17 page size, 28-31 page count,
 * valid when 92-95 equal the change counter at 24-27) was cut: say so before SQLite reports a
 * missing table or a malformed image. 1 truncated (err set), 0 not (or cannot tell). */
static int truncated(struct lp_nsys_db *d, const char *path, struct lp_err *err)
{
	unsigned char h[100];
	FILE *f = fopen(path, "rb");
	long long size, want;
	uint32_t pages, page_bytes;
	(void)d;
	if (!f)
		return 0;
	if (fread(h, 1, sizeof(h), f) != sizeof(h) || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) {
		fclose(f);
		lp_err_set(err, LP_EPARSE, "'%s' is truncated (shorter than an SQLite header): corrupt or an incomplete nsys export",
			path);
		return 1;
	}
	fclose(f);
	page_bytes = (uint32_t)h[16] << 8 | h[17];
	if (page_bytes == 1)
		page_bytes = 65536;
	pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
	if (memcmp(h + 24, h + 92, 4) != 0 || pages == 0)
		return 0;
	want = (long long)pages * page_bytes;
	if (size >= want)
		return 0;
	lp_err_set(err, LP_EPARSE, "'%s' is truncated: %lld bytes, its SQLite header says %lld (a corrupt or incomplete nsys export)",
		path, size, want);
	return 1;
}

int lp_nsys_db_open(struct lp_nsys_db *d, const char *path, struct lp_profile *p, struct lp_err *err)
{
	memset(d, 0, sizeof(*d));
	d->path = path;
	d->p = p;
	if (!lp_nsys_sqlite_is_sqlite(path)) {
		FILE *f = fopen(path, "rb");
		if (!f)
			return lp_err_set(err, LP_EPARSE, "cannot open '%s'", path);
		fclose(f);
		return lp_err_set(err, LP_EPARSE, "'%s' is not an SQLite database (expected an nsys export)", path);
	}
	if (sqlite3_open_v2(path, &d->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		lp_err_set(err, LP_EPARSE, "cannot open '%s': %s", path, d->h ? sqlite3_errmsg(d->h) : "out of memory");
		sqlite3_close(d->h);
		d->h = NULL;
		return -1;
	}
	if (truncated(d, path, err))
		return -1;
	if (!lp_nsys_has_table(d, "StringIds"))
		return lp_err_set(err, LP_EPARSE, "'%s' is corrupt or not an nsys export: table 'StringIds' missing", path);
	if (sqlite3_prepare_v2(d->h, "SELECT value FROM StringIds WHERE id = ?", -1, &d->str_stmt, NULL) != SQLITE_OK)
		return lp_nsys_db_fail(d, "table 'StringIds'", err);
	return 0;
}

void lp_nsys_db_close(struct lp_nsys_db *d)
{
	sqlite3_finalize(d->str_stmt);
	sqlite3_close(d->h);
	lp_map_release(&d->strings);
	memset(d, 0, sizeof(*d));
}

/* StringIds[id], interned in the profile; "" for a missing id; NULL out of memory. */
const char *lp_nsys_db_string(struct lp_nsys_db *d, int64_t id)
{
	uint64_t cached;
	const char *v;
	if (lp_map_get(&d->strings, &id, sizeof(id), &cached))
		return (const char *)(uintptr_t)cached;
	sqlite3_reset(d->str_stmt);
	sqlite3_bind_int64(d->str_stmt, 1, id);
	if (sqlite3_step(d->str_stmt) == SQLITE_ROW) {
		const char *s = (const char *)sqlite3_column_text(d->str_stmt, 0);
		v = lp_profile_intern(d->p, s ? s : "");
	} else {
		v = lp_nsys_missing_string;
	}
	if (!v || lp_map_put(&d->strings, &id, sizeof(id), (uint64_t)(uintptr_t)v, NULL) < 0)
		return NULL;
	return v;
}

/* A kernel's names: demangled when nsys left them mangled ("_ZN7cutlass13device_kernel..."),
 * the short name derived from the demangled one then. An id missing from StringIds is an error
 * (a kernel without a name would print as an empty row). */
int lp_nsys_kernel_names(struct lp_nsys_db *d, int64_t name_id, int64_t short_id, const char **name, const char **short_name,
	struct lp_err *err)
{
	const char *n = lp_nsys_db_string(d, name_id), *sn = lp_nsys_db_string(d, short_id);
	if (!n || !sn)
		return lp_oom(err);
	if (n == lp_nsys_missing_string)
		return lp_err_set(err, LP_EPARSE, "'%s': kernel name id %lld is not in table 'StringIds' (a corrupt or edited export)",
			d->path, (long long)name_id);
	if (!strncmp(n, "_Z", 2)) {
		const char *dm = lp_kname_demangle_intern(d->p, n);
		if (!dm)
			return lp_oom(err);
		if (dm != n && strcmp(dm, n) != 0) {
			n = dm;
			if (sn == lp_nsys_missing_string || !*sn || !strncmp(sn, "_Z", 2) || !strcmp(sn, lp_nsys_db_string(d, name_id)))
				sn = lp_kname_short_intern(d->p, dm);
		}
	}
	if (sn == lp_nsys_missing_string || !*sn)
		sn = n;
	if (!sn)
		return lp_oom(err);
	*name = n;
	*short_name = sn;
	return 0;
}
