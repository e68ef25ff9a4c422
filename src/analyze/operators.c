/* operators.c: op ranges -> the operator table (see operators.h). Runs after stages.c (it reuses
 * the stage occurrences to place each op in its stage); reports render the rows. */
#include "analyze/operators.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "core/vec.h"

#define MAX_WALK 512

static const char *const known_ops[] = {
	"embed", "layer", "attn_norm", "qkv", "rope", "attention", "o_proj", "mlp_norm", "mlp", "moe",
	"router", "experts", "shared_experts", "final_norm", "lm_head", "sample", NULL,
};

int lp_op_is_known(const char *name)
{
	size_t i;
	for (i = 0; known_ops[i]; i++)
		if (!strcmp(name, known_ops[i]))
			return 1;
	return 0;
}

static const char *suffix_at(const char *name)
{
	const char *a = strstr(name, ", seq = "), *b = strstr(name, ", op_id = ");
	if (a && b)
		return a < b ? a : b;
	return a ? a : b;
}

int lp_op_is_pytorch(const char *name)
{
	return suffix_at(name) != NULL || strstr(name, "::") != NULL;
}

int lp_op_strip_suffix(const char *name, struct lp_buf *out)
{
	const char *s = suffix_at(name);
	lp_buf_reset(out);
	return lp_buf_add(out, name, s ? (size_t)(s - name) : strlen(name));
}

void lp_op_table_release(struct lp_op_table *t)
{
	free(t->rows);
	lp_arena_release(&t->arena);
	memset(t, 0, sizeof(*t));
}

/* A row's key: the operator name interned in the table's arena, and the stage index. */
struct row_key {
	const char *name;
	int64_t stage;
};

struct ctx {
	struct lp_op_table *t;
	size_t cap_rows;
	struct lp_map names;   /* operator names, interned into t->arena */
	struct lp_map rows;    /* struct row_key -> row index */
};

static struct lp_op_row *find_row(struct ctx *c, int32_t stage, const char *stage_name, const char *name, int pytorch)
{
	struct row_key key;
	struct lp_map_entry *e;
	struct lp_op_row *r;
	memset(&key, 0, sizeof(key));   /* no undefined padding in the key bytes */
	if (!(key.name = lp_map_intern(&c->names, &c->t->arena, name, strlen(name), NULL)))
		return NULL;
	key.stage = stage;
	if ((e = lp_map_find(&c->rows, &key, sizeof(key))))
		return &c->t->rows[e->val];
	if (LP_ARRAY_RESERVE(c->t->rows, c->cap_rows, c->t->n_rows + 1, NULL) < 0)
		return NULL;
	r = &c->t->rows[c->t->n_rows];
	memset(r, 0, sizeof(*r));
	r->stage_index = stage;
	r->stage = lp_arena_strdup(&c->t->arena, stage_name);
	r->name = key.name;
	r->pytorch = pytorch;
	r->share = -1;
	if (!r->stage || lp_map_put(&c->rows, &key, sizeof(key), c->t->n_rows, NULL) < 0)
		return NULL;
	return &c->t->rows[c->t->n_rows++];
}

static int cmp_rows(const void *a, const void *b)
{
	const struct lp_op_row *x = a, *y = b;
	uint32_t sx = (uint32_t)x->stage_index, sy = (uint32_t)y->stage_index;  /* -1 (other) last */
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (x->gpu_incl_ms != y->gpu_incl_ms)
		return x->gpu_incl_ms < y->gpu_incl_ms ? 1 : -1;
	if (x->host_ms != y->host_ms)
		return x->host_ms < y->host_ms ? 1 : -1;
	return strcmp(x->name, y->name);
}


/* Walks up from range i: *st receives the stage of the nearest ancestor that is a stage occurrence
 * (-1 none), *nested_same whether an ancestor is an op of the same name. Returns 1 when an
 * ancestor is warm-up or a skipped first iteration. */
static int walk_up(const struct lp_profile *p, const struct lp_stage_set *stages, const int32_t *stage_of,
	char *const *opname, int32_t i, int32_t *st, int *nested_same)
{
	int32_t a;
	int guard = 0, warm = 0;
	*st = -1;
	*nested_same = 0;
	for (a = p->ranges[i].parent; a >= 0 && guard++ < MAX_WALK; a = p->ranges[a].parent) {
		if (lp_stage_range_excluded(stages, a))
			warm = 1;
		if (*st < 0 && stage_of[a] >= 0)
			*st = stage_of[a];
		if (opname[a] && !strcmp(opname[a], opname[i]))
			*nested_same = 1;
	}
	return warm;
}

int lp_operators_compute(const struct lp_profile *p, const struct lp_stage_set *stages,
	struct lp_op_table *out, struct lp_err *err)
{
	struct ctx c = { out, 0, LP_MAP_INIT, LP_MAP_INIT };
	int32_t *stage_of = NULL;        /* per range: stage index of its occurrence ancestor */
	char **opname = NULL;            /* per range: stripped op name or NULL */
	uint64_t *incl_ns = NULL, *incl_n = NULL, *excl_ns = NULL;
	uint64_t unattributed = 0;
	double stage_kernel_ms[LP_STAGES_MAX + 1], stage_host_ms[LP_STAGES_MAX + 1];
	struct lp_buf nb = LP_BUF_INIT;
	size_t i, j;
	char why_other[256];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	stage_of = malloc((p->n_ranges + 1) * sizeof(*stage_of));
	opname = calloc(p->n_ranges + 1, sizeof(*opname));
	incl_ns = calloc(p->n_ranges + 1, sizeof(*incl_ns));
	incl_n = calloc(p->n_ranges + 1, sizeof(*incl_n));
	excl_ns = calloc(p->n_ranges + 1, sizeof(*excl_ns));
	if (!stage_of || !opname || !incl_ns || !incl_n || !excl_ns)
		goto done;
	lp_stage_of_ranges(stages, p->n_ranges, stage_of);
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		if (r->kind == LP_RANGE_MARK || !(lp_op_is_known(r->name) || lp_op_is_pytorch(r->name)))
			continue;
		if (lp_op_strip_suffix(r->name, &nb) < 0)
			goto done;
		opname[i] = lp_arena_strdup(&out->arena, nb.data);
		if (!opname[i])
			goto done;
	}

	/* kernel sums: inclusive on every ancestor, exclusive on the innermost op range */
	for (i = 0; i < p->n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		uint64_t d = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
		int32_t r;
		int guard = 0, excl_done = 0;
		if (stages->kernel_stage && i < stages->n_kernels && stages->kernel_stage[i] == -2)
			continue;
		if (k->range < 0 || (size_t)k->range >= p->n_ranges) {
			unattributed++;
			continue;
		}
		for (r = k->range; r >= 0 && guard++ < MAX_WALK; r = p->ranges[r].parent) {
			incl_ns[r] += d;
			incl_n[r]++;
			if (!excl_done && opname[r]) {
				excl_ns[r] += d;
				excl_done = 1;
			}
		}
	}

	snprintf(why_other, sizeof(why_other),
		"no kernel was launched from this range on its thread; %llu kernels were launched outside any "
		"range (another thread, e.g. autograd or an async scheduler) and may hold its work",
		(unsigned long long)unattributed);

	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		struct lp_op_row *row;
		int32_t st;
		int nested_same, warm;
		if (!opname[i])
			continue;
		warm = walk_up(p, stages, stage_of, opname, (int32_t)i, &st, &nested_same);
		if (warm)
			continue;
		row = find_row(&c, st, st >= 0 ? stages->stages[st].name : "other", opname[i], lp_op_is_pytorch(r->name));
		if (!row)
			goto done;
		row->calls++;
		if (nested_same)
			continue;
		row->kernels += incl_n[i];
		row->gpu_incl_ms += (double)incl_ns[i] / 1e6;
		row->gpu_excl_ms += (double)excl_ns[i] / 1e6;
		/* a synthetic range (an op captured into a CUDA graph, per graph launch) spans GPU time:
		 * its host time was spent once, at capture, in the captured range itself */
		if (!r->synthetic && r->end_ns > r->start_ns)
			row->host_ms += (double)(r->end_ns - r->start_ns) / 1e6;
	}
	/* nested same-name exclusive time was added to the inner range: fold it in */
	for (i = 0; i < p->n_ranges; i++) {
		int32_t st;
		int nested_same, warm;
		struct lp_op_row *row;
		if (!opname[i] || !excl_ns[i])
			continue;
		warm = walk_up(p, stages, stage_of, opname, (int32_t)i, &st, &nested_same);
		if (warm || !nested_same)
			continue;
		row = find_row(&c, st, st >= 0 ? stages->stages[st].name : "other", opname[i], 0);
		if (!row)
			goto done;
		row->gpu_excl_ms += (double)excl_ns[i] / 1e6;
	}

	/* shares */
	memset(stage_kernel_ms, 0, sizeof(stage_kernel_ms));
	memset(stage_host_ms, 0, sizeof(stage_host_ms));
	for (i = 0; i < stages->n_stages; i++) {
		for (j = 0; j < stages->stages[i].n_iters; j++) {
			stage_kernel_ms[i] += (double)stages->stages[i].iters[j].kernel_ns / 1e6;
			stage_host_ms[i] += (double)stages->stages[i].iters[j].host_ns / 1e6;
		}
	}
	{
		double staged = 0;
		for (i = 0; i < stages->n_stages; i++)
			staged += stage_kernel_ms[i];
		stage_kernel_ms[LP_STAGES_MAX] = (double)stages->measured_kernel_ns / 1e6 - staged;
	}
	for (i = 0; i < out->n_rows; i++) {
		struct lp_op_row *row = &out->rows[i];
		size_t s = row->stage_index >= 0 ? (size_t)row->stage_index : LP_STAGES_MAX;
		if (stages->have_gpu) {
			if (stage_kernel_ms[s] > 0)
				row->share = row->gpu_incl_ms / stage_kernel_ms[s];
			if (row->kernels == 0) {
				row->zero_gpu_why = unattributed
					? lp_arena_strdup(&out->arena, why_other)
					: "no kernel was launched from this range: a CPU-only op (views, shape ops, host work)";
				if (!row->zero_gpu_why)
					goto done;
			}
		} else if (stage_host_ms[s] > 0) {
			row->share = row->host_ms / stage_host_ms[s];
		}
	}
	if (out->n_rows > 1)
		qsort(out->rows, out->n_rows, sizeof(*out->rows), cmp_rows);
	rc = 0;
done:
	lp_map_release(&c.names);
	lp_map_release(&c.rows);
	free(stage_of);
	free(opname);
	free(incl_ns);
	free(incl_n);
	free(excl_ns);
	lp_buf_release(&nb);
	if (rc < 0) {
		lp_op_table_release(out);
		return lp_oom(err);
	}
	return 0;
}
