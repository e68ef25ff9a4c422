/* nsys_impl.h: what the files of the nsys reader share (nsys_db.c, nsys_sqlite.c, nsys_agg.c)
 * and nothing else includes; the public contract is nsys_sqlite.h. */
#ifndef LP_PARSE_NSYS_IMPL_H
#define LP_PARSE_NSYS_IMPL_H

#include <sqlite3.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/map.h"
#include "parse/nsys_sqlite.h"
#include "profile/profile.h"

/* globalTid = pid << 24 | tid (nsys' packing) */
#define LP_NSYS_TID_MASK 0xFFFFFFull

/* An open export. The profile `p` receives the interned strings. */
struct lp_nsys_db {
	sqlite3 *h;
	const char *path;
	sqlite3_stmt *str_stmt;
	struct lp_map strings;   /* StringIds cache: int64 id -> interned string */
	struct lp_profile *p;
};

/* What lp_nsys_db_string caches and returns for an id that StringIds does not hold: prints as "",
 * and callers that need the name (kernels) tell it apart by its address. */
extern const char lp_nsys_missing_string[1];

int lp_nsys_db_open(struct lp_nsys_db *d, const char *path, struct lp_profile *p, struct lp_err *err);
void lp_nsys_db_close(struct lp_nsys_db *d);
/* "<path>: <what>: <sqlite message>", LP_EPARSE; returns -1. */
int lp_nsys_db_fail(struct lp_nsys_db *d, const char *what, struct lp_err *err);
int lp_nsys_has_table(struct lp_nsys_db *d, const char *name);
/* The table's columns as ",a,b,c," into `out` (for lp_nsys_has_col). */
int lp_nsys_table_columns(struct lp_nsys_db *d, const char *table, struct lp_buf *out, struct lp_err *err);
int lp_nsys_has_col(const struct lp_buf *cols, const char *name);
/* Appends "alias.name, " when the column exists, else "fallback, " (schema versions differ). */
void lp_nsys_add_col(struct lp_buf *q, const struct lp_buf *cols, const char *alias, const char *name,
	const char *fallback);
/* StringIds[id], interned in the profile; lp_nsys_missing_string for a missing id; NULL out of
 * memory. */
const char *lp_nsys_db_string(struct lp_nsys_db *d, int64_t id);
/* A kernel's demangled and short names from their StringIds ids; 0 or -1. */
int lp_nsys_kernel_names(struct lp_nsys_db *d, int64_t name_id, int64_t short_id, const char **name,
	const char **short_name, struct lp_err *err);

#endif
