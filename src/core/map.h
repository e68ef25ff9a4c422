/* map.h: the one hash map: byte-string keys -> a 64-bit value (an index, an id, a count).
 *
 * Open addressing with linear probing, at most half full, capacity a power of two that doubles
 * (overflow-checked: a table too large for size_t fails like an allocation failure).
 * Keys are any bytes: a NUL-terminated name (pass strlen), a uint64_t id (LP_MAP_U64), a packed
 * struct of several ids (zero it first so padding bytes compare equal). Keys of up to 16 bytes are
 * stored inside the entry; longer ones are copied into the map's arena, NUL-terminated, so an
 * entry's key is also a usable string. lp_map_intern makes a map a string set whose strings live
 * in the caller's arena (e.g. a profile's, so interned names live as long as the profile).
 * Entry pointers are valid until the next insertion. No removal. Iteration (lp_map_next) is in
 * slot order, which depends on the hash: build anything ordered from the values (indices into an
 * array kept in insertion order), never from the iteration. Not thread-safe.
 *
 *   struct lp_map m = LP_MAP_INIT;
 *   int added;
 *   struct lp_map_entry *e = lp_map_upsert(&m, name, strlen(name), &added, err);
 *   if (!e) return -1;
 *   if (added) e->val = n_rows++;            // a new key: its row index
 *   e = lp_map_find(&m, name, strlen(name));  // NULL when absent
 *   lp_map_release(&m);
 */
#ifndef LP_CORE_MAP_H
#define LP_CORE_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/err.h"

#define LP_MAP_INLINE_KEY 16

struct lp_map_entry {
	uint64_t hash;       /* 0: empty slot */
	uint64_t val;        /* the caller's; 0 in a new entry */
	size_t key_len;
	union {
		unsigned char inl[LP_MAP_INLINE_KEY];
		const char *ptr;   /* key_len > LP_MAP_INLINE_KEY: NUL-terminated copy in the arena */
	} key;
};

struct lp_map {
	struct lp_map_entry *slots;
	size_t cap;          /* 0 or a power of two */
	size_t n;            /* entries in use */
	struct lp_arena keys; /* copies of long keys */
};

#define LP_MAP_INIT { 0, 0, 0, LP_ARENA_INIT }

void lp_map_init(struct lp_map *m);
void lp_map_release(struct lp_map *m);

struct lp_map_entry *lp_map_find(const struct lp_map *m, const void *key, size_t len);
/* Finds `key` or inserts it with val 0; *added (may be NULL) says which. NULL with `err` set
 * (may be NULL) when out of memory; the map is then unchanged. */
struct lp_map_entry *lp_map_upsert(struct lp_map *m, const void *key, size_t len, int *added,
	struct lp_err *err);
/* Sets key -> val (inserting or replacing); 0 or -1. */
int lp_map_put(struct lp_map *m, const void *key, size_t len, uint64_t val, struct lp_err *err);
/* 1 and *val when present, 0 when absent (*val untouched). */
int lp_map_get(const struct lp_map *m, const void *key, size_t len, uint64_t *val);

/* Interning: a stable NUL-terminated copy of s[0..n) in `strings`, the same pointer for the same
 * bytes, valid as long as `strings` (not only until the next insertion). A map used for interning
 * is used for nothing else, always with the same arena: the entry's val holds the copy, and long
 * keys are stored in `strings` too (one copy). NULL with `err` set when out of memory. */
const char *lp_map_intern(struct lp_map *m, struct lp_arena *strings, const char *s, size_t n,
	struct lp_err *err);

/* The key bytes of an entry (NUL-terminated when longer than LP_MAP_INLINE_KEY). */
const void *lp_map_key(const struct lp_map_entry *e);

/* Iteration: `for (i = 0; (e = lp_map_next(&m, &i)); )` visits every entry once. */
struct lp_map_entry *lp_map_next(const struct lp_map *m, size_t *i);

/* A uint64_t as key: LP_MAP_U64(&k) expands to the pointer and length arguments. */
#define LP_MAP_U64(kp) (const void *)(kp), sizeof(uint64_t)

/* The hash the map uses (FNV-1a, then a 64-bit finalizer so that linear probing sees well-mixed
 * low bits even for sequential ids); never 0. */
uint64_t lp_map_hash(const void *key, size_t len);

#endif
