/* kname.c: kernel names (see kname.h): demangling, the short name, ncu's function name, the
 * qualified start, sameness, families. Used by the readers that load kernels (trace_read.c,
 * nsys_sqlite.c, the ncu parsers) and by the analysis that joins and classifies them. */
#include "parse/kname.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- demangled ---- */

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn demangler(void)
{
	static int tried;
	static cxa_demangle_fn fn;
	if (!tried) {
		void *h;
		tried = 1;
		h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
		if (!h)
			h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			fn = (cxa_demangle_fn)(uintptr_t)dlsym(h, "__cxa_demangle");
	}
	return fn;
}

const char *lp_kname_demangle_intern(struct lp_profile *p, const char *name)
{
	cxa_demangle_fn fn;
	char *d;
	int status = -1;
	const char *out;
	if (!name || strncmp(name, "_Z", 2) || !(fn = demangler()))
		return name ? lp_profile_intern(p, name) : lp_profile_intern(p, "");
	d = fn(name, NULL, NULL, &status);
	out = lp_profile_intern(p, status == 0 && d ? d : name);
	free(d);
	return out;
}

/* ---- short ---- */

int lp_kname_short(const char *s, struct lp_buf *out)
{
	static const char anon[] = "(anonymous namespace)";
	struct lp_buf b = LP_BUF_INIT;
	const char *start, *q;
	size_t i, n = strlen(s);
	int depth = 0, rc;

	lp_buf_reset(out);
	/* drop template arguments, stop at the parameter list */
	for (i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '(' && depth == 0) {
			if (!strncmp(s + i, anon, sizeof(anon) - 1)) {
				lp_buf_add(&b, s + i, sizeof(anon) - 1);
				i += sizeof(anon) - 2;
				continue;
			}
			if (b.len)
				break;
		}
		if (ch == '<') {
			depth++;
			continue;
		}
		if (ch == '>' && depth > 0) {
			depth--;
			continue;
		}
		if (depth == 0)
			lp_buf_addc(&b, ch);
	}
	while (b.len && b.data[b.len - 1] == ' ')
		lp_buf_setlen(&b, b.len - 1);
	/* drop a return type ("void ns::f") and the namespaces */
	start = b.data;
	q = strrchr(start, ' ');
	if (q && q[1])
		start = q + 1;
	for (q = start; (q = strstr(q, "::")) != NULL; q += 2)
		if (q[2])
			start = q + 2;
	rc = b.oom ? -1 : lp_buf_adds(out, *start ? start : s);
	lp_buf_release(&b);
	return rc < 0 || out->oom ? -1 : 0;
}

const char *lp_kname_short_intern(struct lp_profile *p, const char *demangled)
{
	struct lp_buf b = LP_BUF_INIT;
	const char *out = lp_kname_short(demangled, &b) < 0 ? NULL : lp_profile_intern(p, b.data);
	lp_buf_release(&b);
	return out;
}

/* ---- read from the end: ncu's function name, the qualified start ---- */

int lp_kname_bracket_open(const char *s, size_t end, char opening, char closing, size_t *at)
{
	int depth = 0;
	size_t i = end;
	while (i > 0) {
		char c = s[--i];
		if (c == closing) {
			depth++;
		} else if (c == opening && --depth == 0) {
			*at = i;
			return 0;
		}
	}
	return -1;
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '~';
}

int lp_kname_ncu_function(const char *s, struct lp_buf *out)
{
	size_t n = strlen(s), end = n, start, at;
	lp_buf_reset(out);
	while (end > 0 && s[end - 1] == ' ')
		end--;
	if (end >= 6 && !strncmp(s + end - 6, " const", 6))
		end -= 6;
	/* the parameter list: match the final ')' back to its '('; no list: not a C++ signature */
	if (end == 0 || s[end - 1] != ')')
		return lp_buf_adds(out, s);
	if (lp_kname_bracket_open(s, end, '(', ')', &at) == 0)
		end = at;
	/* trailing template arguments */
	if (end > 0 && s[end - 1] == '>' && lp_kname_bracket_open(s, end, '<', '>', &at) == 0)
		end = at;
	start = end;
	while (start > 0 && ident_char(s[start - 1]))
		start--;
	if (start == end)
		return lp_buf_adds(out, s);
	return lp_buf_add(out, s + start, end - start);
}

const char *lp_kname_qualified_start(const char *s)
{
	size_t n = strlen(s), end = n, start, at;
	while (end > 0 && s[end - 1] == ' ')
		end--;
	if (end == 0 || s[end - 1] != ')')
		return s;
	end = lp_kname_bracket_open(s, end, '(', ')', &at) == 0 ? at : 0;
	for (;;) {
		if (end > 0 && s[end - 1] == '>')  /* template arguments */
			end = lp_kname_bracket_open(s, end, '<', '>', &at) == 0 ? at : 0;
		start = end;
		while (start > 0 && ident_char(s[start - 1]))
			start--;
		if (start >= 2 && s[start - 1] == ':' && s[start - 2] == ':') {
			end = start - 2;
			continue;
		}
		return s + start;
	}
}

/* ---- sameness ---- */

/* End of the function name with its template arguments: the '(' of the parameter list (outside
 * any <...>), or the end. */
static const char *name_end(const char *s)
{
	int depth = 0;
	for (; *s; s++) {
		if (*s == '<')
			depth++;
		else if (*s == '>' && depth > 0)
			depth--;
		else if (*s == '(' && !depth)
			break;
	}
	return s;
}

int lp_kname_same(const char *a, const char *b)
{
	const char *ea, *eb;
	a += strncmp(a, "void ", 5) ? 0 : 5;
	b += strncmp(b, "void ", 5) ? 0 : 5;
	ea = name_end(a);
	eb = name_end(b);
	for (;;) {
		while (a < ea && *a == ' ')
			a++;
		while (b < eb && *b == ' ')
			b++;
		if (a == ea || b == eb)
			return a == ea && b == eb;
		if (*a++ != *b++)
			return 0;
	}
}

int lp_kname_has_template_args(const char *s)
{
	const char *e = name_end(s);
	return memchr(s, '<', (size_t)(e - s)) != NULL;
}

/* ---- families ---- */

static const char *const fam_names[LP_FAM_COUNT] = {
	"gemm", "attention", "norm", "rope", "softmax", "elementwise", "memcpy", "sampling", "comm", "other",
};

const char *lp_kname_family_name(enum lp_kernel_family f)
{
	return (unsigned)f < LP_FAM_COUNT ? fam_names[f] : "other";
}

static int has_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle), i, j;
	for (i = 0; hay[i]; i++) {
		for (j = 0; j < n && hay[i + j]; j++)
			if (tolower((unsigned char)hay[i + j]) != needle[j])
				break;
		if (j == n)
			return 1;
	}
	return 0;
}

int lp_kname_has_loose(const char *hay, const char *needle)
{
	size_t i;
	for (i = 0; hay[i]; i++) {
		const char *h = hay + i, *n = needle;
		while (*n) {
			while (*h == '_' || *h == '-')
				h++;
			while (*n == '_' || *n == '-')
				n++;
			if (!*n)
				break;
			if (!*h || tolower((unsigned char)*h) != tolower((unsigned char)*n))
				break;
			h++;
			n++;
		}
		if (!*n)
			return 1;
	}
	return 0;
}

int lp_kname_is_comm(const char *name)
{
	/* NCCL (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_Generic), vLLM's and
	 * TensorRT-LLM's custom all-reduce (cross_device_reduce_1stage, allReduceTwoShot...),
	 * PyTorch symmetric memory (one_shot_all_reduce, multimem_all_reduce), NVSHMEM, DeepEP */
	static const char *const pats[] = {
		"nccl", "nvshmem", "allreduce", "allgather", "reducescatter", "alltoall", "cross_device_reduce",
		"sendrecv", "deep_ep", "dispatch_combine",
	};
	size_t i;
	if (!name)
		return 0;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (lp_kname_has_loose(name, pats[i]))
			return 1;
	return 0;
}

enum lp_kernel_family lp_kname_family(const char *name)
{
	/* order matters: "flash_fwd ... softmax" is attention, "gemm_rmsnorm_fused" a GEMM */
	static const struct { const char *pat; enum lp_kernel_family f; } rules[] = {
		{ "memcpy", LP_FAM_MEMCPY }, { "memset", LP_FAM_MEMCPY },
		{ "flash", LP_FAM_ATTENTION }, { "attention", LP_FAM_ATTENTION }, { "attn", LP_FAM_ATTENTION },
		{ "sdpa", LP_FAM_ATTENTION }, { "fmha", LP_FAM_ATTENTION }, { "mha", LP_FAM_ATTENTION },
		{ "gemm", LP_FAM_GEMM }, { "gemv", LP_FAM_GEMM }, { "cublas", LP_FAM_GEMM },
		{ "cutlass", LP_FAM_GEMM }, { "nvjet", LP_FAM_GEMM }, { "matmul", LP_FAM_GEMM },
		{ "sm90_xmma", LP_FAM_GEMM }, { "sm80_xmma", LP_FAM_GEMM }, { "ampere_", LP_FAM_GEMM },
		{ "norm", LP_FAM_NORM }, { "rope", LP_FAM_ROPE }, { "rotary", LP_FAM_ROPE },
		{ "softmax", LP_FAM_SOFTMAX },
		{ "argmax", LP_FAM_SAMPLING }, { "sample", LP_FAM_SAMPLING }, { "topk", LP_FAM_SAMPLING },
		{ "elementwise", LP_FAM_ELEMENTWISE }, { "vectorized", LP_FAM_ELEMENTWISE },
		{ "silu", LP_FAM_ELEMENTWISE }, { "swiglu", LP_FAM_ELEMENTWISE }, { "gelu", LP_FAM_ELEMENTWISE },
		{ "add", LP_FAM_ELEMENTWISE }, { "mul", LP_FAM_ELEMENTWISE }, { "copy", LP_FAM_ELEMENTWISE },
		{ "cast", LP_FAM_ELEMENTWISE }, { "fill", LP_FAM_ELEMENTWISE }, { "embed", LP_FAM_ELEMENTWISE },
	};
	size_t i;
	if (lp_kname_is_comm(name))
		return LP_FAM_COMM;
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (has_ci(name, rules[i].pat))
			return rules[i].f;
	return LP_FAM_OTHER;
}
