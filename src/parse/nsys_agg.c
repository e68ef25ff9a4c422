/* nsys_agg.c: `llmprof kernels` on an nsys export without building a profile: the kernel
 * table aggregated straight from CUPTI_ACTIVITY_KIND_KERNEL by (name id, device), names resolved
 * once per row (see lp_nsys_sqlite_kernel_table in nsys_sqlite.h).
 */
#include "parse/nsys_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "parse/ncu_raw.h"
#include "profile/kagg.h"

/* ---- direct aggregation ---- */

struct agg_key {
	int64_t name_id;
	int64_t short_id;
	int32_t device;
	int used;
	uint64_t calls;
	double total_ms, min_ms, max_ms;
};

/* The rows reach lp_kagg in this table's slot order, which fixes the order of the float sums
 * (totals, shares) in the goldens: it moves onto lp_map together with the one kernel aggregator,
 * when a changed summation order can be explained once. */
static size_t id_hash(int64_t id, size_t cap)
{
	uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 17) & (cap - 1);
}

/* (name id, device) as one hash input; unsigned, as ids are any 64-bit value in a damaged file */
static int64_t agg_hash(int64_t name_id, int32_t dev)
{
	return (int64_t)((uint64_t)name_id * 31u + (uint32_t)dev);
}

int lp_nsys_sqlite_kernel_table(const char *path, struct lp_kernel_table *out, struct lp_err *err)
{
	struct lp_profile strings;
	struct lp_nsys_db d;
	struct lp_buf cols = LP_BUF_INIT, q = LP_BUF_INIT;
	sqlite3_stmt *st = NULL;
	struct agg_key *keys = NULL;
	size_t cap = 0, n = 0, i;
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
		size_t j;
		if ((n + 1) * 2 > cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct agg_key *nk = calloc(ncap, sizeof(*nk));
			if (!nk)
				goto oom;
			for (i = 0; i < cap; i++) {
				if (!keys[i].used)
					continue;
				j = id_hash(agg_hash(keys[i].name_id, keys[i].device), ncap);
				while (nk[j].used)
					j = (j + 1) & (ncap - 1);
				nk[j] = keys[i];
			}
			free(keys);
			keys = nk;
			cap = ncap;
		}
		j = id_hash(agg_hash(nid, dev), cap);
		while (keys[j].used && !(keys[j].name_id == nid && keys[j].device == dev))
			j = (j + 1) & (cap - 1);
		if (!keys[j].used) {
			keys[j].used = 1;
			keys[j].name_id = nid;
			keys[j].short_id = sqlite3_column_int64(st, 3);
			keys[j].device = dev;
			keys[j].min_ms = ms;
			n++;
		}
		keys[j].calls++;
		keys[j].total_ms += ms;
		if (ms < keys[j].min_ms)
			keys[j].min_ms = ms;
		if (ms > keys[j].max_ms)
			keys[j].max_ms = ms;
	}
	if (src != SQLITE_DONE) {
		lp_nsys_db_fail(&d, "reading table 'CUPTI_ACTIVITY_KIND_KERNEL'", err);
		goto out;
	}
	agg = lp_kagg_new(0);
	if (!agg)
		goto oom;
	for (i = 0; i < cap; i++) {
		const char *name, *short_name;
		if (!keys[i].used)
			continue;
		if (lp_nsys_kernel_names(&d, keys[i].name_id, keys[i].short_id, &name, &short_name, err) < 0)
			goto out;
		if (lp_kagg_add_summary(agg, name, short_name, keys[i].device, keys[i].calls,
				keys[i].total_ms, keys[i].min_ms, keys[i].max_ms, err) < 0)
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
	free(keys);
	lp_buf_release(&cols);
	lp_buf_release(&q);
	lp_nsys_db_close(&d);
	lp_profile_release(&strings);
	return rc;
}
