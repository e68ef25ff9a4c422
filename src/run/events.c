/* events.c: delivering run events to the caller's sink (see events.h). */
#include "run/events.h"

#include <stdarg.h>

#include "core/buf.h"

void lp_run_emit(const struct lp_run_sink *sink, const struct lp_run_event *ev)
{
	if (sink && sink->fn)
		sink->fn(sink->ctx, ev);
}

static void emit_text(const struct lp_run_sink *sink, enum lp_run_event_kind kind, const char *fmt, va_list ap)
{
	struct lp_buf b = LP_BUF_INIT;
	struct lp_run_event ev = { 0 };
	if (!sink || !sink->fn)
		return;
	lp_buf_vaddf(&b, fmt, ap);
	ev.kind = kind;
	ev.text = b.data;
	ev.profiled = -1;
	sink->fn(sink->ctx, &ev);
	lp_buf_release(&b);
}

void lp_run_warnf(const struct lp_run_sink *sink, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit_text(sink, LP_RUN_EV_WARN, fmt, ap);
	va_end(ap);
}

void lp_run_infof(const struct lp_run_sink *sink, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit_text(sink, LP_RUN_EV_INFO, fmt, ap);
	va_end(ap);
}
