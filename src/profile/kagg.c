/* kagg.c: the kernel aggregator (see kagg.h). Sits under every producer of kernel rows: the
 * profile (profile.c), the ncu and nsys parsers (src/parse/). */
#include "profile/kagg.h"

#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "core/vec.h"

struct acc_metric {
	const char *src;    /* the caller's name pointer last seen here (a fast identity check) */
	const char *name;   /* in the aggregator's arena */
	const char *unit;
	double sum;
	uint64_t n;
};

struct acc_row {
	struct acc_metric *m;
	size_t n, cap;
};

struct lp_kagg {
	int interned;
	struct lp_arena arena;
	struct lp_kernel_record *rows;
	struct acc_row *acc;
	size_t n_rows, cap_rows, cap_acc;
	struct lp_map names;     /* not interned by the caller: the names, interned into `arena` */
	struct lp_map index;     /* struct row_key -> row index */
	double total_ms;
};

/* A row's key: the interned name (the caller's or ours) and the device; zeroed padding. */
struct row_key {
	const char *name;
	int64_t device;
};

struct lp_kagg *lp_kagg_new(int interned)
{
	struct lp_kagg *a = calloc(1, sizeof(struct lp_kagg));
	if (a)
		a->interned = interned;
	return a;
}

void lp_kagg_free(struct lp_kagg *a)
{
	size_t i;
	if (!a)
		return;
	for (i = 0; i < a->n_rows; i++)
		free(a->acc[i].m);
	free(a->acc);
	free(a->rows);
	lp_map_release(&a->names);
	lp_map_release(&a->index);
	lp_arena_release(&a->arena);
	free(a);
}

static struct acc_metric *acc_find(struct lp_kagg *a, struct acc_row *ar, size_t hint, const struct lp_metric *m)
{
	size_t i;
	if (hint < ar->n && ar->m[hint].src == m->name)
		return &ar->m[hint];
	if (hint < ar->n && !strcmp(ar->m[hint].name, m->name)) {
		ar->m[hint].src = m->name;
		return &ar->m[hint];
	}
	for (i = 0; i < ar->n; i++)
		if (!strcmp(ar->m[i].name, m->name)) {
			ar->m[i].src = m->name;
			return &ar->m[i];
		}
	if (LP_ARRAY_RESERVE(ar->m, ar->cap, ar->n + 1, NULL) < 0)
		return NULL;
	ar->m[ar->n].src = m->name;
	ar->m[ar->n].name = lp_arena_strdup(&a->arena, m->name);
	ar->m[ar->n].unit = lp_arena_strdup(&a->arena, m->unit ? m->unit : "");
	ar->m[ar->n].sum = 0;
	ar->m[ar->n].n = 0;
	if (!ar->m[ar->n].name || !ar->m[ar->n].unit)
		return NULL;
	return &ar->m[ar->n++];
}

/* The row of (name, device), created on first sight; -1 out of memory. */
static long row_for(struct lp_kagg *a, const char *name, const char *short_name, int32_t device)
{
	struct lp_kernel_record *k;
	struct lp_map_entry *e;
	struct row_key key;
	int added;
	memset(&key, 0, sizeof(key));
	key.name = a->interned ? name : lp_map_intern(&a->names, &a->arena, name, strlen(name), NULL);
	key.device = device;
	if (!key.name)
		return -1;
	if ((e = lp_map_find(&a->index, &key, sizeof(key))))
		return (long)e->val;
	if (LP_ARRAY_RESERVE(a->rows, a->cap_rows, a->n_rows + 1, NULL) < 0 ||
	    LP_ARRAY_RESERVE(a->acc, a->cap_acc, a->n_rows + 1, NULL) < 0)
		return -1;
	k = &a->rows[a->n_rows];
	memset(k, 0, sizeof(*k));
	memset(&a->acc[a->n_rows], 0, sizeof(a->acc[0]));
	k->kernel_name = key.name;
	if (a->interned)
		k->short_name = short_name;   /* as the profile has it */
	else if (!(k->short_name = lp_map_intern(&a->names, &a->arena, short_name ? short_name : name,
			strlen(short_name ? short_name : name), NULL)))
		return -1;
	k->device = device;
	k->min_ms = -1;
	if (!(e = lp_map_upsert(&a->index, &key, sizeof(key), &added, NULL)))
		return -1;
	e->val = a->n_rows++;
	return (long)e->val;
}

int lp_kagg_add(struct lp_kagg *a, const struct lp_kagg_item *it, uint64_t calls, double min_ns, double max_ns,
	struct lp_err *err)
{
	size_t i;
	struct lp_kernel_record *k;
	double mean_ms = it->duration_ns >= 0 ? it->duration_ns / 1e6 : 0, ms = mean_ms * (double)calls;
	double lo = min_ns >= 0 ? min_ns / 1e6 : mean_ms, hi = max_ns >= 0 ? max_ns / 1e6 : mean_ms;
	long row;
	if (calls == 0)
		return 0;
	row = row_for(a, it->name, it->short_name, it->device);
	if (row < 0)
		return lp_oom(err);
	k = &a->rows[row];
	if (k->calls == 0) {
		if (it->grid)
			memcpy(k->grid, it->grid, sizeof(k->grid));
		if (it->block)
			memcpy(k->block, it->block, sizeof(k->block));
		k->registers_per_thread = it->registers_per_thread;
	}
	k->calls += calls;
	k->total_ms += ms;
	if (k->min_ms < 0 || lo < k->min_ms)
		k->min_ms = lo;
	if (hi > k->max_ms)
		k->max_ms = hi;
	a->total_ms += ms;
	for (i = 0; i < it->n_metrics; i++) {
		const struct lp_metric *m = &it->metrics[i];
		struct acc_metric *am = acc_find(a, &a->acc[row], i, m);
		if (!am)
			return lp_oom(err);
		if (m->valid) {
			am->sum += m->value * (double)calls;
			am->n += calls;
		}
	}
	return 0;
}

int lp_kagg_add_summary(struct lp_kagg *a, const char *name, const char *short_name, int32_t device,
	uint64_t calls, double total_ms, double min_ms, double max_ms, struct lp_err *err)
{
	struct lp_kernel_record *k;
	long row = row_for(a, name, short_name, device);
	if (row < 0)
		return lp_oom(err);
	k = &a->rows[row];
	k->calls += calls;
	k->total_ms += total_ms;
	a->total_ms += total_ms;
	if (min_ms >= 0 && (k->min_ms < 0 || min_ms < k->min_ms))
		k->min_ms = min_ms;
	if (max_ms > k->max_ms)
		k->max_ms = max_ms;
	return 0;
}

int lp_kagg_finish(struct lp_kagg *a, struct lp_kernel_table *out, struct lp_err *err)
{
	size_t i, m;
	memset(out, 0, sizeof(*out));
	for (i = 0; i < a->n_rows; i++) {
		struct lp_kernel_record *k = &a->rows[i];
		struct acc_row *ar = &a->acc[i];
		k->mean_ms = k->total_ms / (double)(k->calls ? k->calls : 1);
		if (k->min_ms < 0)
			k->min_ms = 0;
		if (ar->n) {
			k->metrics = lp_arena_alloc(&a->arena, ar->n * sizeof(*k->metrics));
			if (!k->metrics) {
				lp_kagg_free(a);
				return lp_oom(err);
			}
			for (m = 0; m < ar->n; m++) {
				k->metrics[m].name = ar->m[m].name;
				k->metrics[m].unit = ar->m[m].unit;
				k->metrics[m].valid = ar->m[m].n > 0;
				k->metrics[m].value = ar->m[m].n ? ar->m[m].sum / (double)ar->m[m].n : 0;
			}
			k->n_metrics = ar->n;
		}
	}
	out->rows = a->rows;
	out->n_rows = a->n_rows;
	out->total_ms = a->total_ms;
	out->arena = a->arena;
	a->rows = NULL;
	a->arena = (struct lp_arena)LP_ARENA_INIT;
	lp_kernel_table_sort(out);
	lp_kagg_free(a);   /* the accumulators, counted by a->n_rows */
	return 0;
}
