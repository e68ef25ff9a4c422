/* nsys_agg.c: `llmprof kernels` on an nsys export without building a profile: the kernel
 * table aggregated straight from CUPTI_ACTIVITY_KIND_KERNEL by (name id, device), names resolved
 * once per row (see lp_nsys_sqlite_kernel_table in nsys_sqlite.h).
 */
#include "parse/nsys_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/map.h"
#include "core/vec.h"
#include "parse/ncu_raw.h"
#include "profile/kagg.h"

/* ---- direct aggregation ---- */

/* (name id, device): the map key (zeroed, no padding bytes left undefined) */
struct agg_id {
	int64_t name_id;
	int64_t device;
};

struct agg_key {
	struct agg_id id;
	int64_t short_id;
	uint64_t calls;
	double total_ms, min_ms, max_ms;
};

/* The rows reach lp_kagg sorted by (name id, device), so the float sums there (totals, shares)
 * do not depend on the order of the rows in the file or on a hash. */
static int cmp_agg(const void *a, const void *b)
{
	const struct agg_key *x = a, *y = b;
	if (x->id.name_id != y->id.name_id)
		return x->id.name_id < y->id.name_id ? -1 : 1;
	return (x->id.device > y->id.device) - (x->id.device < y->id.device);
}

int lp_nsys_sqlite_kernel_table(const char *path, struct lp_kernel_table *out, struct lp_err *err)
{
	struct lp_profile strings;
	struct lp_nsys_db d;
	struct lp_buf cols = LP_BUF_INIT, q = LP_BUF_INIT;
	sqlite3_stmt *st = NULL;
	LP_VEC(struct agg_key) keys = LP_VEC_INIT;
	struct lp_map index = LP_MAP_INIT;   /* struct agg_id -> index in keys */
	size_t i;
	struct lp_kagg *agg = NULL;
	int rc = -1, src;
	memset(out, 0, sizeof(*out));
	lp_profile_init(&strings, path);
	if (lp_nsys_db_open(&d, path, &strings, err) < 0)
		goto out;
	if (!lp_nsys_has_table(&d, "CUPTI_ACTIVITY_KIND_KERNEL")) {
		rc = 0;
		goto out;
	}
	if (lp_nsys_table_columns(&d, "CUPTI_ACTIVITY_KIND_KERNEL", &cols, err) < 0)
		goto out;
	if (!lp_nsys_has_col(&cols, "start") || !lp_nsys_has_col(&cols, "end") ||
			(!lp_nsys_has_col(&cols, "demangledName") && !lp_nsys_has_col(&cols, "shortName"))) {
		lp_err_set(err, LP_EPARSE, "%s: table 'CUPTI_ACTIVITY_KIND_KERNEL' lacks start/end/demangledName", path);
		goto out;
	}
	lp_buf_adds(&q, "SELECT k.start, k.end, ");
	lp_nsys_add_col(&q, &cols, "k", "demangledName", "k.shortName");
	lp_nsys_add_col(&q, &cols, "k", "shortName", "k.demangledName");
	lp_nsys_add_col(&q, &cols, "k", "deviceId", "0");
	lp_buf_adds(&q, "1 FROM CUPTI_ACTIVITY_KIND_KERNEL k");
	if (q.oom || cols.oom)
		goto oom;
	if (sqlite3_prepare_v2(d.h, q.data, -1, &st, NULL) != SQLITE_OK) {
		lp_nsys_db_fail(&d, "table 'CUPTI_ACTIVITY_KIND_KERNEL'", err);
		goto out;
	}
	while ((src = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
		int64_t nid = sqlite3_column_int64(st, 2);
		int32_t dev = sqlite3_column_int(st, 4);
		double ms = e > s ? (double)(e - s) / 1e6 : 0;
		struct agg_id id;
		struct lp_map_entry *me;
		struct agg_key *k;
		int added;
		memset(&id, 0, sizeof(id));
		id.name_id = nid;
		id.device = dev;
		if (!(me = lp_map_upsert(&index, &id, sizeof(id), &added, err)))
			goto out;
		if (added) {
			if (!(k = lp_vec_push(&keys, err)))
				goto out;   /* the map keeps an entry with no row: it is not read again */
			me->val = keys.n - 1;
			k->id = id;
			k->short_id = sqlite3_column_int64(st, 3);
			k->min_ms = ms;
		}
		k = &keys.v[me->val];
		k->calls++;
		k->total_ms += ms;
		if (ms < k->min_ms)
			k->min_ms = ms;
		if (ms > k->max_ms)
			k->max_ms = ms;
	}
	if (src != SQLITE_DONE) {
		lp_nsys_db_fail(&d, "reading table 'CUPTI_ACTIVITY_KIND_KERNEL'", err);
		goto out;
	}
	agg = lp_kagg_new(0);
	if (!agg)
		goto oom;
	if (keys.n > 1)
		qsort(keys.v, keys.n, sizeof(*keys.v), cmp_agg);
	for (i = 0; i < keys.n; i++) {
		const struct agg_key *k = &keys.v[i];
		const char *name, *short_name;
		if (lp_nsys_kernel_names(&d, k->id.name_id, k->short_id, &name, &short_name, err) < 0)
			goto out;
		if (lp_kagg_add_summary(agg, name, short_name, (int32_t)k->id.device, k->calls,
				k->total_ms, k->min_ms, k->max_ms, err) < 0)
			goto out;
	}
	rc = lp_kagg_finish(agg, out, err);
	agg = NULL;
	goto out;
oom:
	lp_oom(err);
out:
	sqlite3_finalize(st);
	lp_kagg_free(agg);
	lp_vec_free(&keys);
	lp_map_release(&index);
	lp_buf_release(&cols);
	lp_buf_release(&q);
	lp_nsys_db_close(&d);
	lp_profile_release(&strings);
	return rc;
}
