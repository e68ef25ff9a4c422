/* regions_impl.h: the private state of the region model, shared by its files (regions.c builds
 * regions and members from results, regions_tree.c nests and orders them once all are in). Not
 * part of the API: include it from src/analyze/regions*.c only. Owned by struct lp_regions
 * (r->priv), freed by lp_regions_release. */
#ifndef LP_ANALYZE_REGIONS_IMPL_H
#define LP_ANALYZE_REGIONS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/regions.h"
#include "core/buf.h"
#include "core/map.h"

struct lp_regions_priv {
	struct lp_map nodes;        /* "P:" or "S:" + name -> node index */
	struct lp_map names;        /* interned kernel names (copies in the model's arena) */
	struct lp_map seen;         /* seen range expressions (copies in r->seen) */
	int32_t *chain_parent;      /* per node: the node below it on a stack, -1 */
	size_t cap_chain_parent;
	int32_t *pattern_index;     /* per node: first include expression naming it, -1 nested */
	size_t cap_pattern_index;
	const struct lp_metric *mcache;
	size_t mcache_n;
	int *mcol;                  /* spec metric -> index into the result's metrics, -1 */
	struct lp_buf key;          /* scratch */
	int32_t *row_members;       /* scratch: members of the current row */
	size_t n_row_members;
};

#endif
