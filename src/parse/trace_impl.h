/* trace_impl.h: what the files of the tracer's parse stage share (trace_file.c,
 * trace_read.c) and nothing else includes. The public contract is trace_read.h. */
#ifndef LP_PARSE_TRACE_IMPL_H
#define LP_PARSE_TRACE_IMPL_H

#include <stddef.h>

#include "core/err.h"
#include "parse/trace_read.h"

/* "corrupt trace '<path>' at byte offset <off>: <what>"; returns -1. */
int lp_trace_corrupt(struct lp_err *err, const struct lp_trace_file *f, size_t off, const char *what);

#endif
