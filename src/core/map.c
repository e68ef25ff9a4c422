/* map.c: the hash map (see map.h). Part of src/core; the parsers index ids and names with it and
 * the profile interns its strings in it. */
#include "core/map.h"

#include <stdlib.h>
#include <string.h>

uint64_t lp_map_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
	size_t i;
	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	/* murmur3's fmix64: every input bit reaches the low bits the probe uses */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h ? h : 1;
}

void lp_map_init(struct lp_map *m)
{
	memset(m, 0, sizeof(*m));
}

void lp_map_release(struct lp_map *m)
{
	free(m->slots);
	lp_arena_release(&m->keys);
	lp_map_init(m);
}

const void *lp_map_key(const struct lp_map_entry *e)
{
	return e->key_len > LP_MAP_INLINE_KEY ? (const void *)e->key.ptr : (const void *)e->key.inl;
}

static int entry_is(const struct lp_map_entry *e, uint64_t h, const void *key, size_t len)
{
	return e->hash == h && e->key_len == len && (len == 0 || memcmp(lp_map_key(e), key, len) == 0);
}

/* The slot holding `key`, or the empty slot where it would go. cap > 0. */
static size_t probe(const struct lp_map *m, uint64_t h, const void *key, size_t len)
{
	size_t mask = m->cap - 1, j = (size_t)h & mask;
	while (m->slots[j].hash && !entry_is(&m->slots[j], h, key, len))
		j = (j + 1) & mask;
	return j;
}

struct lp_map_entry *lp_map_find(const struct lp_map *m, const void *key, size_t len)
{
	uint64_t h;
	size_t j;
	if (!m->n)
		return NULL;
	h = lp_map_hash(key, len);
	j = probe(m, h, key, len);
	return m->slots[j].hash ? &m->slots[j] : NULL;
}

int lp_map_get(const struct lp_map *m, const void *key, size_t len, uint64_t *val)
{
	struct lp_map_entry *e = lp_map_find(m, key, len);
	if (!e)
		return 0;
	*val = e->val;
	return 1;
}

static int rehash(struct lp_map *m, struct lp_err *err)
{
	size_t ncap, i, mask;
	struct lp_map_entry *ns;
	if (m->cap > SIZE_MAX / 2 / sizeof(*ns))
		return lp_oom(err);
	ncap = m->cap ? m->cap * 2 : 64;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return lp_oom(err);
	mask = ncap - 1;
	for (i = 0; i < m->cap; i++) {
		size_t j;
		if (!m->slots[i].hash)
			continue;
		j = (size_t)m->slots[i].hash & mask;
		while (ns[j].hash)
			j = (j + 1) & mask;
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

static struct lp_map_entry *upsert(struct lp_map *m, struct lp_arena *keys, const void *key,
	size_t len, int *added, struct lp_err *err)
{
	uint64_t h = lp_map_hash(key, len);
	struct lp_map_entry *e;
	size_t j;
	if (added)
		*added = 0;
	if (m->cap) {
		j = probe(m, h, key, len);
		if (m->slots[j].hash)
			return &m->slots[j];
	}
	/* a new key: keep the table at most half full (m->n < m->cap <= SIZE_MAX/40, no wrap) */
	if ((m->n + 1) * 2 > m->cap && rehash(m, err) < 0)
		return NULL;
	j = probe(m, h, key, len);
	e = &m->slots[j];
	if (len > LP_MAP_INLINE_KEY) {
		char *copy = lp_arena_strndup(keys, key, len);
		if (!copy) {
			lp_oom(err);
			return NULL;
		}
		e->key.ptr = copy;
	} else if (len) {
		memcpy(e->key.inl, key, len);
	}
	e->key_len = len;
	e->val = 0;
	e->hash = h;
	m->n++;
	if (added)
		*added = 1;
	return e;
}

struct lp_map_entry *lp_map_upsert(struct lp_map *m, const void *key, size_t len, int *added,
	struct lp_err *err)
{
	return upsert(m, &m->keys, key, len, added, err);
}

int lp_map_put(struct lp_map *m, const void *key, size_t len, uint64_t val, struct lp_err *err)
{
	struct lp_map_entry *e = lp_map_upsert(m, key, len, NULL, err);
	if (!e)
		return -1;
	e->val = val;
	return 0;
}

const char *lp_map_intern(struct lp_map *m, struct lp_arena *strings, const char *s, size_t n,
	struct lp_err *err)
{
	int added;
	struct lp_map_entry *e = upsert(m, strings, s, n, &added, err);
	if (!e)
		return NULL;
	if (added) {
		/* a long key already has its stable copy; a short one lives in the moving slot */
		const char *copy = n > LP_MAP_INLINE_KEY ? e->key.ptr
			: lp_arena_strndup(strings, s, n);
		if (!copy) {
			/* leave no entry whose val is not a string */
			memset(e, 0, sizeof(*e));
			m->n--;
			lp_oom(err);
			return NULL;
		}
		e->val = (uint64_t)(uintptr_t)copy;
	}
	return (const char *)(uintptr_t)e->val;
}

struct lp_map_entry *lp_map_next(const struct lp_map *m, size_t *i)
{
	while (*i < m->cap) {
		struct lp_map_entry *e = &m->slots[(*i)++];
		if (e->hash)
			return e;
	}
	return NULL;
}
