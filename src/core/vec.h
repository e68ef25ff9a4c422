/* vec.h: growable arrays with overflow-checked growth, the one way arrays grow in llmprof.
 *
 * Two forms over the same growth rule (capacity doubles from 16, counted in elements):
 *  - LP_ARRAY_*: for an array that lives as plain fields of a struct (`rows`, `n_rows`,
 *    `cap_rows`), as the profile model and the parsers' outputs keep theirs. `cap` must be a
 *    size_t lvalue; `arr` any object-pointer lvalue, grown with realloc in place.
 *  - LP_VEC(T): a small typed struct { T *v; size_t n, cap; } for arrays private to a module.
 * Growth never wraps: a capacity whose byte size would not fit a size_t fails like an allocation
 * failure. On failure the array is left as it was (still owned by the caller, still valid) and
 * `err` (may be NULL) is set by lp_oom ("out of memory", LP_ENOMEM). Pushed elements are zeroed.
 * The memory is the caller's: free(arr) / lp_vec_free(&v). Not thread-safe.
 *
 *   struct lp_range *r = LP_ARRAY_PUSH(p->ranges, p->n_ranges, p->cap_ranges, err);
 *   if (!r) return -1;
 *
 *   LP_VEC(uint64_t) ids = LP_VEC_INIT;
 *   if (LP_VEC_APPEND(&ids, 42, err) < 0) return -1;
 *   lp_vec_free(&ids);
 */
#ifndef LP_CORE_VEC_H
#define LP_CORE_VEC_H

#include <stddef.h>
#include <stdlib.h>

#include "core/err.h"

/* Makes room for `need` elements of `elem_size` bytes: grows the array whose pointer is stored at
 * `arrp` (a `T **`) and whose capacity is *cap. 0, or -1 with the array unchanged. */
int lp_array_reserve_(void *arrp, size_t *cap, size_t need, size_t elem_size, struct lp_err *err);

/* Appends one zeroed element, returns it (NULL on failure, nothing changed). */
void *lp_array_push_(void *arrp, size_t *n, size_t *cap, size_t elem_size, struct lp_err *err);

/* realloc for `n` elements of `elem_size` bytes; NULL on overflow or out of memory (`p` is then
 * untouched and still the caller's). For the rare array sized once rather than grown. */
void *lp_reallocarray(void *p, size_t n, size_t elem_size);

#define LP_ARRAY_RESERVE(arr, cap, need, err) \
	lp_array_reserve_(&(arr), &(cap), (need), sizeof(*(arr)), (err))
#define LP_ARRAY_PUSH(arr, n, cap, err) \
	lp_array_push_(&(arr), &(n), &(cap), sizeof(*(arr)), (err))

#define LP_VEC(T) struct { T *v; size_t n; size_t cap; }
#define LP_VEC_INIT { 0, 0, 0 }

#define lp_vec_reserve(vec, need, err) LP_ARRAY_RESERVE((vec)->v, (vec)->cap, (need), (err))
/* Returns a pointer to the new zeroed element, or NULL. */
#define lp_vec_push(vec, err) LP_ARRAY_PUSH((vec)->v, (vec)->n, (vec)->cap, (err))
/* Appends a value (an expression of the element type); 0 or -1. */
#define LP_VEC_APPEND(vec, value, err) \
	(lp_vec_reserve((vec), (vec)->n + 1, (err)) < 0 ? -1 : ((vec)->v[(vec)->n++] = (value), 0))
#define lp_vec_free(vec) \
	do { free((vec)->v); (vec)->v = NULL; (vec)->n = 0; (vec)->cap = 0; } while (0)

#endif
