/* vec.c: the growth rule of every array (see vec.h). Part of src/core, used by every stage.
 *
 * The array pointer is read and written through memcpy, so one function serves arrays of any
 * element type without type-punning a `T **` to `void **`. */
#include "core/vec.h"

#include <stdint.h>
#include <string.h>

void *lp_reallocarray(void *p, size_t n, size_t elem_size)
{
	if (elem_size && n > SIZE_MAX / elem_size)
		return NULL;
	if (n == 0 || elem_size == 0)
		n = elem_size = 1;  /* realloc(p, 0) may free p and return NULL */
	return realloc(p, n * elem_size);
}

int lp_array_reserve_(void *arrp, size_t *cap, size_t need, size_t elem_size, struct lp_err *err)
{
	size_t ncap;
	void *old, *nw;
	if (need <= *cap)
		return 0;
	if (elem_size == 0 || need > SIZE_MAX / elem_size)
		goto fail;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (ncap > SIZE_MAX / elem_size)
		ncap = need;  /* doubling would overflow; `need` alone fits */
	memcpy(&old, arrp, sizeof(old));
	nw = realloc(old, ncap * elem_size);
	if (!nw)
		goto fail;
	memcpy(arrp, &nw, sizeof(nw));
	*cap = ncap;
	return 0;
fail:
	return lp_oom(err);
}

void *lp_array_push_(void *arrp, size_t *n, size_t *cap, size_t elem_size, struct lp_err *err)
{
	char *a;
	if (*n == SIZE_MAX) {
		lp_oom(err);
		return NULL;
	}
	if (lp_array_reserve_(arrp, cap, *n + 1, elem_size, err) < 0)
		return NULL;
	memcpy(&a, arrp, sizeof(a));
	a += *n * elem_size;
	memset(a, 0, elem_size);
	(*n)++;
	return a;
}
