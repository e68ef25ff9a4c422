/* ncu_nvtx.h: decodes the two NVTX cells of an Nsight Compute raw page into range stacks.
 *
 * With `--nvtx`, ncu's raw page carries two columns (docs/parsers.md has the real samples):
 *   "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
 *     cell: `<tid>` then, per stack level bottom to top, two spaces and a quoted
 *     `Domain:Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg`
 *   "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
 *     cell: per open start/end range, a space and a quoted `<id>:Domain:Range:...`
 * Push/pop levels of several domains: ncu prints the default domain's levels first, then each
 * named domain's, whatever the real nesting; the parser orders them default-domain ranges,
 * named-domain ranges, then default-domain operator ranges (PyTorch emit_nvtx: "aten::mm",
 * "..., seq = 5") innermost, each domain in its own order (the rule and the capture that shows
 * ncu's order: ncu_nvtx.c order_domains).
 * `<default domain>` becomes "". A range name may contain ':' (and the message repeats it), so the
 * domain is split off the front and the split between the name and the six trailing fields is
 * the one where the message equals the name, else the six fields are taken off the end.
 *
 * Ownership: the stack owns a copy of the cell (`text`); every string in `levels` points into it
 * and stays valid until lp_ncu_nvtx_stack_release or the next parse into the same stack.
 * Not thread-safe. Limits: LP_NCU_NVTX_MAX_DEPTH levels, cells up to the CSV field limit.
 *
 *   struct lp_ncu_nvtx_stack st = LP_NCU_NVTX_STACK_INIT;
 *   if (lp_ncu_nvtx_parse(cell, 0, &st, err) == 0 && st.n)
 *       printf("%s@%s\n", st.levels[0].domain, st.levels[0].name);
 *   lp_ncu_nvtx_stack_release(&st);
 */
#ifndef LP_PARSE_NCU_NVTX_H
#define LP_PARSE_NCU_NVTX_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"

#define LP_NCU_NVTX_MAX_DEPTH 64

struct lp_ncu_nvtx_level {
	const char *domain;       /* "" for the default domain */
	const char *name;
	const char *message;      /* the Msg field as printed (usually equal to name) */
	uint64_t id;              /* start/end ranges: the range id; push/pop: 0 */
	uint8_t payload_type;     /* enum lp_payload_type (profile/profile.h) */
	union {
		uint64_t u64;
		int64_t i64;
		double f64;
	} payload;
};

struct lp_ncu_nvtx_stack {
	uint64_t tid;             /* push/pop: the thread id printed first; 0 otherwise */
	size_t n;
	struct lp_ncu_nvtx_level levels[LP_NCU_NVTX_MAX_DEPTH];  /* bottom to top */
	struct lp_buf text;
};

#define LP_NCU_NVTX_STACK_INIT { 0, 0, { { 0, 0, 0, 0, 0, { 0 } } }, LP_BUF_INIT }

/* Parses one cell (after CSV unquoting). `startend` selects the start/end column's form.
 * An empty cell is an empty stack. Errors (LP_EPARSE) describe the malformed part. */
int lp_ncu_nvtx_parse(const char *cell, int startend, struct lp_ncu_nvtx_stack *out, struct lp_err *err);
void lp_ncu_nvtx_stack_release(struct lp_ncu_nvtx_stack *st);

/* Writes "LLM@decode_all/LLM@decode_step" (bottom to top, default domain without "@") into out. */
int lp_ncu_nvtx_stack_path(const struct lp_ncu_nvtx_stack *st, struct lp_buf *out);

#endif
