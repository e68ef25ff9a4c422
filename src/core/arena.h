/* arena.h: a bump allocator; one arena per loaded profile holds its names and rows, and one
 * lp_arena_release frees it all. Allocations are 16-byte aligned and never individually freed.
 * Not thread-safe. Returns NULL when out of memory (callers report it through lp_err).
 *
 *   struct lp_arena a = LP_ARENA_INIT;
 *   char *name = lp_arena_strdup(&a, "decode_all");
 *   lp_arena_release(&a);
 */
#ifndef LP_CORE_ARENA_H
#define LP_CORE_ARENA_H

#include <stddef.h>

struct lp_arena_block;

struct lp_arena {
	struct lp_arena_block *head;
	size_t used_bytes;   /* bytes handed out, for reporting memory bounds */
};

#define LP_ARENA_INIT { 0, 0 }

void *lp_arena_alloc(struct lp_arena *a, size_t size);       /* zeroed */
char *lp_arena_strdup(struct lp_arena *a, const char *s);
char *lp_arena_strndup(struct lp_arena *a, const char *s, size_t n);
void lp_arena_release(struct lp_arena *a);

#endif
