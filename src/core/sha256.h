/* sha256.h: SHA-256 for the artifact manifest and config fingerprints (FIPS 180-4).
 * Streaming: init, update any number of times, final. No allocation, thread-safe per context. */
#ifndef LP_CORE_SHA256_H
#define LP_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct lp_sha256 {
	uint32_t state[8];
	uint64_t total_bytes;
	unsigned char block[64];
	size_t block_len;
};

void lp_sha256_init(struct lp_sha256 *s);
void lp_sha256_update(struct lp_sha256 *s, const void *data, size_t len);
void lp_sha256_final(struct lp_sha256 *s, unsigned char out[32]);
/* Hex digest (64 chars + NUL) of a buffer or of a file's contents. */
void lp_sha256_hex(const void *data, size_t len, char out[65]);
int lp_sha256_file_hex(const char *path, char out[65], struct lp_err *err);

#endif
