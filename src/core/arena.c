/* arena.c: bump allocation in 64 KiB+ blocks (see arena.h). */
#include "core/arena.h"

#include <stdlib.h>
#include <string.h>

struct lp_arena_block {
	struct lp_arena_block *next;
	size_t cap;
	size_t used;
	_Alignas(16) unsigned char mem[];
};

#define LP_ARENA_BLOCK_MIN (64 * 1024)

void *lp_arena_alloc(struct lp_arena *a, size_t size)
{
	struct lp_arena_block *b = a->head;
	size_t need = (size + 15) & ~(size_t)15;
	void *p;
	if (size == 0)
		need = 16;
	if (need < size)
		return NULL;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > LP_ARENA_BLOCK_MIN ? need : LP_ARENA_BLOCK_MIN;
		if (cap > (size_t)-1 - sizeof(*b))
			return NULL;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	p = b->mem + b->used;
	b->used += need;
	a->used_bytes += need;
	memset(p, 0, need);
	return p;
}

char *lp_arena_strndup(struct lp_arena *a, const char *s, size_t n)
{
	char *p = n == (size_t)-1 ? NULL : lp_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *lp_arena_strdup(struct lp_arena *a, const char *s)
{
	return lp_arena_strndup(a, s, strlen(s));
}

void lp_arena_release(struct lp_arena *a)
{
	struct lp_arena_block *b = a->head;
	while (b) {
		struct lp_arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->used_bytes = 0;
}
