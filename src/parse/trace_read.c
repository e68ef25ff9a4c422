/* trace_read.c: placeholder until the tracer's reader lands (issue 4). */
#include "parse/trace_read.h"

int lp_trace_load(const char *path, struct lp_profile *out, struct lp_err *err)
{
	(void)out;
	return lp_err_set(err, LP_EUSAGE, "cannot read trace '%s': the trace reader is not built yet", path);
}
