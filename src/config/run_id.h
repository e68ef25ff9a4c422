/* run_id.h: the grammar of a run id, the name of a run folder (docs/run-directory.md): the
 * config schema checks run.id with it, the run folder (collect/rundir.h) names folders by it.
 * Pure functions, thread-safe.
 *
 *   if (lp_rundir_validate_id(json_string_value(v), err) < 0) return -1;
 */
#ifndef LP_CONFIG_RUN_ID_H
#define LP_CONFIG_RUN_ID_H

#include "core/err.h"

#define LP_RUNDIR_ID_MAX 128

/* A run id or run.id value: [A-Za-z0-9._-], 1..128 chars, no "..", not starting with '.'. */
int lp_rundir_validate_id(const char *id, struct lp_err *err);
/* 1 when `id` has the generated form YYYYmmdd-HHMMSS-xxxx. */
int lp_rundir_is_generated_id(const char *id);

#endif
