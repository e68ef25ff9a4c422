/* trace_read.h: loads the built-in tracer's per-process files (docs/trace-format.md) into the
 * shared profile model (profile/profile.h). `path` is a trace folder (every *.lptrace in it) or
 * one file. A truncated tail is read up to the last complete record with a warning counted in
 * profile->warnings; a corrupt file fails with an error naming the file and byte offset. */
#ifndef LP_PARSE_TRACE_READ_H
#define LP_PARSE_TRACE_READ_H

#include "core/err.h"
#include "profile/profile.h"

int lp_trace_load(const char *path, struct lp_profile *out, struct lp_err *err);

#endif
