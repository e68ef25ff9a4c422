/* trace_names.c: kernel names as the tracer recorded them (mangled) made readable: the demangled
 * name and the short name (no template arguments, parameters, return type or namespaces), both
 * interned in the profile. Used by the replay (trace_read.c) and the nsys reader.
 */
#include "parse/trace_read.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

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

const char *lp_trace_demangle(struct lp_profile *p, const char *name)
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

const char *lp_trace_short_name(struct lp_profile *p, const char *s)
{
	static const char anon[] = "(anonymous namespace)";
	struct lp_buf b = LP_BUF_INIT;
	const char *out, *start, *q;
	size_t i, n = strlen(s);
	int depth = 0;

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
	/* drop a return type ("void ns::f") and the namespaces */
	start = b.data;
	q = strrchr(start, ' ');
	if (q && q[1])
		start = q + 1;
	for (q = start; (q = strstr(q, "::")) != NULL; q += 2)
		if (q[2])
			start = q + 2;
	out = lp_profile_intern(p, *start ? start : s);
	lp_buf_release(&b);
	return out;
}
