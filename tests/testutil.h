/* testutil.h: shared helpers for the cmocka unit tests.
 * Include after <cmocka.h>'s prerequisites; LP_FIXTURES names tests/fixtures, LP_TEST_TMP a
 * scratch folder under the build tree (created on demand), LP_CONF_DIR the source conf/. */
#ifndef LP_TESTUTIL_H
#define LP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/buf.h"
#include "profile/profile.h"

/* cmocka's failures never return (they jump back to the runner), but its header does not say so:
 * without this, an optimizing build warns "potential null pointer dereference" (-Wnull-dereference)
 * after every assert_non_null(p) or `if (!p) fail_msg(...)` that is followed by p->field. */
void _fail(const char *const file, const int line) __attribute__((noreturn));
#undef assert_non_null
#define assert_non_null(c)                                                                      \
	do {                                                                                    \
		if (!(c))                                                                        \
			_fail_non_null(#c, __FILE__, __LINE__);                                  \
	} while (0)
static inline __attribute__((noreturn)) void _fail_non_null(const char *expr, const char *file, int line)
{
	_assert_true(0, expr, file, line);
	_fail(file, line);   /* not reached: _assert_true(0, ...) fails */
}

/* A fresh, empty scratch folder LP_TEST_TMP/<name>; returns its path (static storage). */
const char *lp_test_tmpdir(const char *name);
/* Path of a fixture file (static storage, overwritten by the next call). */
const char *lp_test_fixture(const char *rel);
/* Writes text to path (asserting success). */
void lp_test_write(const char *path, const char *text);
/* Reads a whole file into a new buffer (asserting success); caller releases. */
void lp_test_read(const char *path, struct lp_buf *out);
/* In-memory profiles: a push/pop range of process 1, thread 1 (depth from its parent), and a kernel
 * of process 1 attributed to `range` (launch time unknown: set launch_ns on the returned kernel,
 * valid until the next add). Both assert on out of memory. */
int32_t lp_test_range(struct lp_profile *p, int32_t parent, const char *domain, const char *name, uint64_t start_ns,
	uint64_t end_ns);
struct lp_kernel *lp_test_kernel(struct lp_profile *p, int32_t range, const char *name, uint64_t start_ns,
	uint64_t end_ns);
/* Runs the tracer's fixture writer (lp_trace_fixture, beside the test executable) with
 * LLMPROF_TRACE_SAMPLE=spec and no other LLMPROF_TRACE* variable: its trace goes to dir (emptied
 * first), its stdout to out (NULL: /dev/null). Asserts that it exits 0. */
void lp_test_trace_fixture(const char *dir, const char *spec, const char *out);
/* 1 when a CUDA device is usable (GPU tests skip with exit 77 otherwise). */
int lp_test_have_gpu(void);

#define LP_SKIP_WITHOUT_GPU()                                              \
	do {                                                               \
		if (!lp_test_have_gpu()) {                                 \
			fprintf(stderr, "skipped: no usable GPU\n");       \
			return 77;                                         \
		}                                                          \
	} while (0)

#endif
