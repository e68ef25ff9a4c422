/* profile.c: the shared profile model (see profile.h): growth of its arrays, string interning,
 * range ancestry and the aggregation of kernel executions into KernelRecord rows. Every source
 * (tracer files, nsys sqlite) fills a profile; analysis and reports read it. */
#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/vec.h"
#include "profile/kagg.h"

void lp_profile_init(struct lp_profile *p, const char *source)
{
	memset(p, 0, sizeof(*p));
	p->source = source ? lp_profile_intern(p, source) : "";
	p->source_kind = "";
}

void lp_profile_release(struct lp_profile *p)
{
	free(p->devices);
	free(p->processes);
	free(p->ranges);
	free(p->kernels);
	free(p->copies);
	lp_map_release(&p->intern);
	lp_arena_release(&p->arena);
	memset(p, 0, sizeof(*p));
}

const char *lp_profile_intern_n(struct lp_profile *p, const char *s, size_t n)
{
	return lp_map_intern(&p->intern, &p->arena, s, n, NULL);
}

const char *lp_profile_intern(struct lp_profile *p, const char *s)
{
	return lp_profile_intern_n(p, s ? s : "", s ? strlen(s) : 0);
}

#define LP_GROW(p, field) LP_ARRAY_PUSH((p)->field, (p)->n_##field, (p)->cap_##field, NULL)

struct lp_device *lp_profile_add_device(struct lp_profile *p)
{
	struct lp_device *d = LP_GROW(p, devices);
	if (d) {
		d->name = "";
		d->uuid = "";
	}
	return d;
}

struct lp_process *lp_profile_add_process(struct lp_profile *p)
{
	struct lp_process *r = LP_GROW(p, processes);
	if (r) {
		r->host = "";
		r->name = "";
		r->cupti_status = "";
		r->rank = r->local_rank = r->world_size = -1;
		r->rank_source = "";
		r->visible_devices = "";
		r->sampling.unit = "";
	}
	return r;
}

struct lp_range *lp_profile_add_range(struct lp_profile *p)
{
	struct lp_range *r = LP_GROW(p, ranges);
	if (r) {
		r->parent = -1;
		r->domain = "";
		r->name = "";
	}
	return r;
}

struct lp_kernel *lp_profile_add_kernel(struct lp_profile *p)
{
	struct lp_kernel *k = LP_GROW(p, kernels);
	if (k) {
		k->range = -1;
		k->name = "";
		k->short_name = "";
	}
	return k;
}

struct lp_copy *lp_profile_add_copy(struct lp_profile *p)
{
	struct lp_copy *c = LP_GROW(p, copies);
	if (c)
		c->range = -1;
	return c;
}

const struct lp_device *lp_profile_device(const struct lp_profile *p, int32_t id)
{
	size_t i;
	for (i = 0; i < p->n_devices; i++)
		if (p->devices[i].id == id)
			return &p->devices[i];
	return NULL;
}

const struct lp_process *lp_profile_process(const struct lp_profile *p, uint32_t pid)
{
	size_t i;
	for (i = 0; i < p->n_processes; i++)
		if (p->processes[i].pid == pid)
			return &p->processes[i];
	return NULL;
}

static int range_matches(const struct lp_range *r, const char *expr)
{
	const char *at = strchr(expr, '@');
	if (!at)
		return strcmp(r->name, expr) == 0;
	if (strcmp(r->name, at + 1) != 0)
		return 0;
	return strlen(r->domain) == (size_t)(at - expr) && strncmp(r->domain, expr, (size_t)(at - expr)) == 0;
}

int32_t lp_profile_range_find_ancestor(const struct lp_profile *p, int32_t idx, const char *expr)
{
	int guard = 0;
	while (idx >= 0 && (size_t)idx < p->n_ranges && guard++ < 4096) {
		if (range_matches(&p->ranges[idx], expr))
			return idx;
		idx = p->ranges[idx].parent;
	}
	return -1;
}

int lp_profile_range_path(const struct lp_profile *p, int32_t idx, struct lp_buf *out)
{
	int32_t chain[256];
	int n = 0, i;
	lp_buf_reset(out);
	while (idx >= 0 && (size_t)idx < p->n_ranges && n < 256) {
		chain[n++] = idx;
		idx = p->ranges[idx].parent;
	}
	for (i = n - 1; i >= 0; i--) {
		if (i != n - 1 && lp_buf_addc(out, '/') < 0)
			return -1;
		if (lp_buf_adds(out, p->ranges[chain[i]].name) < 0)
			return -1;
	}
	return 0;
}

/* ---- kernel table ---- */

static int cmp_records(const void *a, const void *b)
{
	const struct lp_kernel_record *x = a, *y = b;
	int c;
	if (x->total_ms != y->total_ms)
		return x->total_ms < y->total_ms ? 1 : -1;
	c = strcmp(x->kernel_name, y->kernel_name);
	if (c)
		return c;
	return (x->device > y->device) - (x->device < y->device);
}

void lp_kernel_table_sort(struct lp_kernel_table *t)
{
	if (t->n_rows > 1)
		qsort(t->rows, t->n_rows, sizeof(*t->rows), cmp_records);
}

int lp_kernel_table_build(const struct lp_profile *p, const struct lp_kernel_filter *filter,
	struct lp_kernel_table *out, struct lp_err *err)
{
	struct lp_kagg *agg = lp_kagg_new(1);   /* kernel names are interned in the profile */
	size_t i;
	memset(out, 0, sizeof(*out));
	if (!agg)
		return lp_oom(err);
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		struct lp_kagg_item it;
		if (filter && filter->device >= 0 && k->device != filter->device)
			continue;
		if (filter && filter->omit && filter->omit[i])
			continue;
		if (filter && filter->stage && lp_profile_range_find_ancestor(p, k->range, filter->stage) < 0)
			continue;
		if (filter && filter->exclude_warmup && lp_profile_range_find_ancestor(p, k->range, "warmup") >= 0)
			continue;
		memset(&it, 0, sizeof(it));
		it.name = k->name;
		it.short_name = k->short_name;
		it.device = k->device;
		it.duration_ns = k->end_ns < k->start_ns ? 0 : (double)(k->end_ns - k->start_ns);
		it.grid = k->grid;
		it.block = k->block;
		it.registers_per_thread = k->registers_per_thread;
		if (lp_kagg_add(agg, &it, 1, -1, -1, err) < 0) {
			lp_kagg_free(agg);
			return -1;
		}
	}
	return lp_kagg_finish(agg, out, err);
}

void lp_kernel_table_release(struct lp_kernel_table *t)
{
	free(t->rows);
	lp_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

const struct lp_metric *lp_kernel_record_metric(const struct lp_kernel_record *r, const char *name)
{
	size_t i;
	for (i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return &r->metrics[i];
	return NULL;
}
