/* str.h: small string helpers shared by the config, parsers and reports.
 * Strict number parsing (the whole string must be a number), prefix/suffix tests, edit distance
 * for "did you mean" hints. No allocation except where a buffer is passed in. */
#ifndef LP_CORE_STR_H
#define LP_CORE_STR_H

#include <stddef.h>
#include <stdint.h>

int lp_str_starts_with(const char *s, const char *prefix);
int lp_str_ends_with(const char *s, const char *suffix);
/* Whole-string parses: 0 ok, -1 not a number / out of range. */
int lp_str_to_i64(const char *s, int64_t *out);
int lp_str_to_u64(const char *s, uint64_t *out);
int lp_str_to_double(const char *s, double *out);
/* Levenshtein distance, capped at `cap` (returns cap when larger); strings up to 255 chars. */
int lp_str_edit_distance(const char *a, const char *b, int cap);
/* Trims ASCII white space on both ends in place; returns s. */
char *lp_str_trim(char *s);

#endif
