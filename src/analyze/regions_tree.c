/* regions_tree.c: the nesting of the region model (see regions.h), once every result is in:
 * parents (by name for push/pop regions, by containment for start/end ones), depths, the report
 * order, the exclusive member of each result per tree (lp_regions_finish), and each region's
 * folder name under ncu/regions/ (lp_regions_assign_dirs). regions.c builds the regions and
 * members this reads; regions_scope.c sums them. */
#include "analyze/regions.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/regions_impl.h"
#include "core/map.h"

/* ---- structure: parents, depths, exclusive members, order ---- */

/* Parent by name: strip `::` levels until a region of that name exists. */
static int32_t parent_by_name(struct lp_regions *r, int32_t idx)
{
	struct lp_regions_priv *pv = r->priv;
	const char *name = r->nodes[idx].name;
	size_t len = strlen(name);
	while (len > 2) {
		size_t k = len;
		uint64_t v;
		while (k >= 2 && !(name[k - 2] == ':' && name[k - 1] == ':'))
			k--;
		if (k < 2)
			break;
		len = k - 2;
		lp_buf_reset(&pv->key);
		lp_buf_addf(&pv->key, "P:%.*s", (int)len, name);
		if (lp_map_get(&pv->nodes, pv->key.data, pv->key.len, &v) && (int32_t)v != idx)
			return (int32_t)v;
	}
	return -1;
}

/* Start/end: X's parent is the region whose results contain all of X's (smallest, then the one
 * started later by range id, then by name); equal sets nest by (first id, name). */
static int se_before(const struct lp_region *a, const struct lp_region *b)
{
	if (a->first_range_id != b->first_range_id)
		return a->first_range_id < b->first_range_id;
	return strcmp(a->name, b->name) < 0;
}

static int startend_parents(struct lp_regions *r, struct lp_err *err)
{
	size_t n_se = 0, i, j, k, a, b;
	int32_t *se;
	uint64_t *cnt;
	for (i = 0; i < r->n_nodes; i++)
		n_se += r->nodes[i].kind == LP_REGION_STARTEND;
	if (n_se < 2)
		return 0;
	if (n_se > 1024) {
		lp_buf_addf(&r->warnings, "%zu start/end regions: too many to nest, all kept as roots\n", n_se);
		return 0;
	}
	se = calloc(r->n_nodes, sizeof(*se));
	cnt = calloc(n_se * n_se, sizeof(*cnt));
	if (!se || !cnt) {
		free(se);
		free(cnt);
		return lp_oom(err);
	}
	for (i = 0, k = 0; i < r->n_nodes; i++)
		se[i] = r->nodes[i].kind == LP_REGION_STARTEND ? (int32_t)k++ : -1;
	for (i = 0; i < r->n_rows; i++) {
		const struct lp_region_row *row = &r->rows[i];
		for (a = 0; a < row->n_members; a++) {
			int32_t x = se[r->members[row->first_member + a].node];
			if (x < 0)
				continue;
			for (b = 0; b < row->n_members; b++) {
				int32_t y = se[r->members[row->first_member + b].node];
				if (y >= 0)
					cnt[(size_t)x * n_se + (size_t)y]++;
			}
		}
	}
	for (i = 0; i < r->n_nodes; i++) {
		struct lp_region *x = &r->nodes[i];
		int32_t best = -1;
		if (se[i] < 0 || !x->n_rows)
			continue;
		for (j = 0; j < r->n_nodes; j++) {
			struct lp_region *y = &r->nodes[j];
			if (j == i || se[j] < 0 || cnt[(size_t)se[i] * n_se + (size_t)se[j]] != x->n_rows)
				continue;
			if (y->n_rows == x->n_rows && !se_before(y, x))
				continue;  /* equal sets: only an earlier one contains */
			if (best < 0) {
				best = (int32_t)j;
				continue;
			}
			{
				struct lp_region *bb = &r->nodes[best];
				if (y->n_rows < bb->n_rows || (y->n_rows == bb->n_rows && se_before(bb, y)))
					best = (int32_t)j;
			}
		}
		x->parent = best;
	}
	free(se);
	free(cnt);
	return 0;
}

static struct lp_regions *sort_ctx;

static int cmp_nodes(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
	const struct lp_regions_priv *pv = sort_ctx->priv;
	const struct lp_region *x = &sort_ctx->nodes[a], *y = &sort_ctx->nodes[b];
	int32_t ia = pv->pattern_index[a], ib = pv->pattern_index[b];
	/* configured regions first, in config order; then by first sight */
	if ((ia >= 0) != (ib >= 0))
		return ia >= 0 ? -1 : 1;
	if (ia != ib)
		return ia < ib ? -1 : 1;
	if (x->kind == LP_REGION_STARTEND && y->kind == LP_REGION_STARTEND && x->first_range_id != y->first_range_id)
		return x->first_range_id < y->first_range_id ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int build_order(struct lp_regions *r, struct lp_err *err)
{
	int32_t *sorted = malloc((r->n_nodes + 1) * sizeof(*sorted));
	int32_t *stack = malloc((r->n_nodes + 1) * sizeof(*stack));
	size_t i, n_out = 0, sp = 0;
	r->order = malloc((r->n_nodes + 1) * sizeof(*r->order));
	if (!sorted || !stack || !r->order) {
		free(sorted);
		free(stack);
		return lp_oom(err);
	}
	for (i = 0; i < r->n_nodes; i++)
		sorted[i] = (int32_t)i;
	sort_ctx = r;
	qsort(sorted, r->n_nodes, sizeof(*sorted), cmp_nodes);
	sort_ctx = NULL;
	/* pre-order: push roots in reverse so the first comes out first */
	for (i = r->n_nodes; i-- > 0;)
		if (r->nodes[sorted[i]].parent < 0)
			stack[sp++] = sorted[i];
	while (sp) {
		int32_t n = stack[--sp];
		r->nodes[n].order = (int32_t)n_out;
		r->order[n_out++] = n;
		for (i = r->n_nodes; i-- > 0;)
			if (r->nodes[sorted[i]].parent == n)
				stack[sp++] = sorted[i];
	}
	free(sorted);
	free(stack);
	if (n_out != r->n_nodes)
		return lp_err_set(err, LP_EOTHER, "regions: the nesting has a cycle (a bug)");
	return 0;
}

int lp_regions_finish(struct lp_regions *r, struct lp_err *err)
{
	struct lp_regions_priv *pv = r->priv;
	size_t i, j, k;
	if (r->finished)
		return 0;
	r->finished = 1;
	for (i = 0; i < r->n_nodes; i++)
		if (r->nodes[i].kind == LP_REGION_PUSHPOP)
			r->nodes[i].parent = pv->chain_parent[i] >= 0 ? pv->chain_parent[i] : parent_by_name(r, (int32_t)i);
	if (startend_parents(r, err) < 0)
		return -1;
	for (i = 0; i < r->n_nodes; i++) {
		int32_t p = r->nodes[i].parent;
		size_t d = 0;
		while (p >= 0 && d <= r->n_nodes) {
			d++;
			p = r->nodes[p].parent;
		}
		if (d > r->n_nodes)
			return lp_err_set(err, LP_EOTHER, "regions: the nesting has a cycle (a bug)");
		r->nodes[i].depth = (uint16_t)(d > UINT16_MAX ? UINT16_MAX : d);
	}
	if (build_order(r, err) < 0)
		return -1;
	/* per row and tree: the deepest member is the exclusive one (ties: earlier in report order) */
	for (i = 0; i < r->n_rows; i++) {
		struct lp_region_member *m = &r->members[r->rows[i].first_member];
		size_t n = r->rows[i].n_members;
		for (j = 0; j < n; j++) {
			int32_t root = m[j].node, best = -1;
			while (r->nodes[root].parent >= 0)
				root = r->nodes[root].parent;
			for (k = 0; k < n; k++) {
				int32_t rk = m[k].node;
				while (r->nodes[rk].parent >= 0)
					rk = r->nodes[rk].parent;
				if (rk != root)
					continue;
				if (best < 0 || r->nodes[m[k].node].depth > r->nodes[m[best].node].depth ||
						(r->nodes[m[k].node].depth == r->nodes[m[best].node].depth &&
						 r->nodes[m[k].node].order < r->nodes[m[best].node].order))
					best = (int32_t)k;
			}
			m[j].exclusive = (size_t)best == j;
		}
	}
	/* seen ranges, sorted */
	for (i = 1; i < r->n_seen; i++) {
		const char *x = r->seen[i];
		for (j = i; j > 0 && strcmp(r->seen[j - 1], x) > 0; j--)
			r->seen[j] = r->seen[j - 1];
		r->seen[j] = x;
	}
	return 0;
}

/* ---- folder names ---- */

int lp_regions_sanitize(const char *name, struct lp_buf *out)
{
	const unsigned char *c;
	size_t start;
	lp_buf_reset(out);
	for (c = (const unsigned char *)name; *c; c++) {
		int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			*c == '.' || *c == '-' || *c == '_';
		if (ok)
			lp_buf_addc(out, (char)*c);
		else if (out->len && out->data[out->len - 1] != '_')
			lp_buf_addc(out, '_');
	}
	while (out->len && (out->data[out->len - 1] == '_' || out->data[out->len - 1] == '.'))
		lp_buf_setlen(out, out->len - 1);
	for (start = 0; start < out->len && (out->data[start] == '_' || out->data[start] == '.'); start++)
		;
	if (start) {
		memmove(out->data, out->data + start, out->len - start);
		lp_buf_setlen(out, out->len - start);
	}
	if (out->len > 96)
		lp_buf_setlen(out, 96);
	while (out->len && (out->data[out->len - 1] == '_' || out->data[out->len - 1] == '.'))
		lp_buf_setlen(out, out->len - 1);
	if (!out->len)
		lp_buf_adds(out, "region");
	return out->oom ? -1 : 0;
}

int lp_regions_assign_dirs(struct lp_regions *r, struct lp_err *err)
{
	struct lp_map used = LP_MAP_INIT;
	struct lp_buf b = LP_BUF_INIT, c = LP_BUF_INIT;
	size_t i;
	int ret = -1;
	if (lp_map_put(&used, "report.json", strlen("report.json"), 0, NULL) < 0 ||
	    lp_map_put(&used, "report.md", strlen("report.md"), 0, NULL) < 0)
		goto out;
	for (i = 0; i < r->n_nodes; i++) {
		struct lp_region *n = &r->nodes[r->order[i]];
		int k = 1;
		char *d;
		if (lp_regions_sanitize(n->name, &b) < 0)
			goto out;
		lp_buf_reset(&c);
		lp_buf_adds(&c, b.data);
		while (lp_map_find(&used, c.data, c.len)) {
			lp_buf_reset(&c);
			lp_buf_addf(&c, "%s-%d", b.data, ++k);
		}
		if (c.oom || !(d = lp_arena_strdup(&r->arena, c.data)) || lp_map_put(&used, d, c.len, 0, NULL) < 0)
			goto out;
		n->dir = d;
	}
	ret = 0;
out:
	lp_map_release(&used);
	lp_buf_release(&b);
	lp_buf_release(&c);
	return ret < 0 ? lp_oom(err) : 0;
}
