/* stage_hooks.h: the grammar of `stages.hooks` entries, checked when the config is validated.
 *
 * An entry names a Python function and the stage its calls are (docs/nvtx.md "Stage hooks by
 * name"; python/llmprof_auto/hooks.py applies them, with the same grammar):
 *
 *   MODULE:QUALNAME=STAGE[@PAYLOAD]
 *   MODULE   dotted identifiers (`__main__`: the script Python was started with)
 *   QUALNAME dotted identifiers, at most 8: a function or Class.method
 *   STAGE    prefill | decode_step | decode_all | mixed | warmup
 *   PAYLOAD  TERM | len(TERM);  TERM = (argN | kw.NAME) then at most 8 of .NAME / [N] / [-N];
 *            NAME = [A-Za-z][A-Za-z0-9_]* (no leading underscore: no dunder walking)
 *
 * Pure functions of their input; no allocation, thread-safe.
 *
 *   char why[160];
 *   if (lp_stage_hook_check("m:Engine.step=decode_step@len(arg1)", why, sizeof(why)) < 0) ...;
 */
#ifndef LP_CONFIG_STAGE_HOOKS_H
#define LP_CONFIG_STAGE_HOOKS_H

#include <stddef.h>

#define LP_STAGE_HOOKS_MAX 64          /* entries in stages.hooks (the shim reads no more) */
#define LP_STAGE_HOOK_MAX_LEN 512      /* characters per entry */

/* 0 when `entry` follows the grammar; else -1 with what is wrong in why (one line, no entry). */
int lp_stage_hook_check(const char *entry, char *why, size_t why_cap);

#endif
