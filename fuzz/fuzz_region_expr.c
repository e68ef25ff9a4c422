/* fuzz_region_expr.c: NVTX region expressions (analyze/regions.h), the entries of
 * profiling.ncu.regions.{include,exclude}: parsed into a pattern, turned into the form ncu takes,
 * and matched against the stack of its own parts; a region name made into a folder name
 * (lp_regions_sanitize). An expression is accepted or refused with one line; a folder name is
 * never empty and never holds '/'. Corpus: fuzz/corpus/region_expr (the expressions of
 * tests/data/regions.test and conf/). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/regions.h"
#include "core/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_arena a = LP_ARENA_INIT;
	struct lp_region_pattern p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b = LP_BUF_INIT;
	char *text;
	if (size > 4096)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (lp_region_pattern_parse(text, &a, &p, &err) == 0) {
		struct lp_ncu_nvtx_stack st = LP_NCU_NVTX_STACK_INIT;
		size_t i, lo = 0, hi = 0;
		if (!p.name || !p.domain || p.n_parts < 1 || p.n_parts > LP_REGIONS_MAX_PARTS ||
		    p.n_parts > LP_NCU_NVTX_MAX_DEPTH)
			abort();
		for (i = 0; i < p.n_parts; i++) {
			st.levels[i].domain = p.domain;
			st.levels[i].name = st.levels[i].message = p.parts[i];
		}
		st.n = p.n_parts;
		if (lp_region_pattern_match(&p, &st, &lo, &hi) && p.kind == LP_REGION_PUSHPOP && (lo > hi || hi >= st.n))
			abort();   /* a push/pop match names levels of the stack */
		lp_region_pattern_ncu(text, &b);
		if (lp_regions_sanitize(p.name, &b) == 0 && (!b.len || strchr(b.data, '/')))
			abort();
	} else if (!err.msg[0] || (strchr(err.msg, '\n') && !strchr(text, '\n'))) {
		abort();   /* one line, unless the expression itself holds a newline */
	}
	lp_buf_release(&b);
	lp_arena_release(&a);
	free(text);
	return 0;
}
