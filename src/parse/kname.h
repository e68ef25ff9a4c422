/* kname.h: kernel names, the one place that knows how a GPU kernel's name reads.
 *
 * Sources print one kernel in several forms: the tracer's CUPTI record is mangled
 * ("_ZN7cutlass13device_kernel..."), __cxa_demangle gives "void cutlass::device_kernel<...>(...)",
 * ncu prints "void k<1, 0>(const T *)" or only the function name, nsys both. Four forms are
 * derived here, each with one rule:
 *  - demangled: __cxa_demangle's output when libstdc++ can be loaded and the name is mangled
 *    ("_Z..."), else the name unchanged;
 *  - short: what the reports show and what joins ncu records to traced kernels when their
 *    template arguments differ. Template arguments dropped; the name ends at the parameter list
 *    (the first '(' outside template arguments, except "(anonymous namespace)"); trailing spaces
 *    trimmed; the return type (up to the last space) and the namespaces (up to the last "::")
 *    dropped; when nothing is left, the whole name.
 *    "void at::native::(anonymous namespace)::foo<int>(float*)" -> "foo";
 *  - ncu function: what Nsight Compute calls the "function" name base (its --kernel-name-base
 *    function), used to write ncu filters and to read what ncu wrote: read from the end, the
 *    identifier before the parameter list and trailing template arguments; a name that is not a
 *    C++ signature (no parameter list at the end) unchanged. "name:with:colons, x" stays whole;
 *  - family: gemm, attention, norm, ... by case-insensitive substrings, first rule wins;
 *    communication first (lp_kname_is_comm: NCCL, custom all-reduce, NVSHMEM, DeepEP...), so
 *    "ncclDevKernel_AllGather" is "comm", never a copy or an elementwise kernel.
 * Two names are the same kernel (lp_kname_same) when they agree up to a leading "void ", spaces
 * and the parameter lists (CUPTI prints "float const*", ncu "const float *").
 *
 * Ownership: the _intern variants return strings interned in the profile (they live as long as
 * it); the others append to / reset a caller-owned lp_buf and return 0 or -1 (out of memory).
 * Thread-safe except the _intern variants (the profile is not).
 *
 *   const char *d = lp_kname_demangle_intern(p, raw);
 *   k->short_name = lp_kname_short_intern(p, d);
 *   lp_kname_short("void ns::gemv<float, 4>(float const*, int)", &b);   // "gemv"
 *   enum lp_kernel_family f = lp_kname_family(d);
 */
#ifndef LP_PARSE_KNAME_H
#define LP_PARSE_KNAME_H

#include <stddef.h>

#include "core/buf.h"
#include "profile/profile.h"

enum lp_kernel_family {
	LP_FAM_GEMM = 0,
	LP_FAM_ATTENTION,
	LP_FAM_NORM,
	LP_FAM_ROPE,
	LP_FAM_SOFTMAX,
	LP_FAM_ELEMENTWISE,
	LP_FAM_MEMCPY,
	LP_FAM_SAMPLING,
	LP_FAM_COMM,         /* collectives and their kernels: lp_kname_is_comm */
	LP_FAM_OTHER,
	LP_FAM_COUNT,
};

/* The demangled name interned in p (the name itself when not mangled or not demangled; "" for NULL). */
const char *lp_kname_demangle_intern(struct lp_profile *p, const char *name);
/* The short name (rule above) into out (reset first). */
int lp_kname_short(const char *demangled, struct lp_buf *out);
/* The same, interned in p; NULL when out of memory. */
const char *lp_kname_short_intern(struct lp_profile *p, const char *demangled);
/* ncu's "function" name base: `void ns::gemv<float, 4>(const float *, int)` -> `gemv` (reset first). */
int lp_kname_ncu_function(const char *name, struct lp_buf *out);
/* From the end of s[0..end): s[end - 1] is the bracket `closing`; scanning back over nested pairs,
 * *at receives the index of the `opening` that matches it. 0 found, -1 unbalanced (*at untouched). */
int lp_kname_bracket_open(const char *s, size_t end, char opening, char closing, size_t *at);
/* Where the qualified function name starts: past the return type, which nsys prints for template
 * kernels and ncu may not ("std::enable_if<!T7, void>::type ns::k<int>(T13)" -> "ns::k<int>(T13)");
 * `name` itself when it is not a C++ signature. A pointer into `name`. */
const char *lp_kname_qualified_start(const char *name);
/* Same function name and template arguments (see above). */
int lp_kname_same(const char *a, const char *b);
/* 1 when the name carries template arguments before its parameter list. */
int lp_kname_has_template_args(const char *name);

/* Is this a communication kernel? NCCL (`ncclKernel_*`, `ncclDevKernel_*`), NVSHMEM, and names
 * carrying allreduce, allgather, reducescatter, alltoall, sendrecv, cross_device_reduce (vLLM's
 * custom all-reduce), deep_ep / dispatch_combine (DeepEP), compared case-insensitively ignoring
 * '_' and '-' (all_reduce == AllReduce). The one rule: the kernel family, the per-rank view
 * (analyze/ranks.h) and ncu's selection (never replays a collective) all use it. NULL: 0. */
int lp_kname_is_comm(const char *name);
/* Case-insensitive substring search ignoring '_' and '-' in both (all_reduce == AllReduce): the
 * comparison of lp_kname_is_comm, also used for collective range names (analyze/ranks.h). */
int lp_kname_has_loose(const char *hay, const char *needle);

enum lp_kernel_family lp_kname_family(const char *name);
/* "gemm", "attention", ... ("other" out of range). */
const char *lp_kname_family_name(enum lp_kernel_family f);

#endif
