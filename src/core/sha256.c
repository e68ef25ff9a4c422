/* sha256.c: SHA-256 (FIPS 180-4, section 6.2) for manifest.json and config fingerprints. */
#include "core/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void compress(uint32_t st[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;
	int i;
	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = st[0]; b = st[1]; c = st[2]; d = st[3]; e = st[4]; f = st[5]; g = st[6]; h = st[7];
	for (i = 0; i < 64; i++) {
		uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
	}
	st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

void lp_sha256_init(struct lp_sha256 *s)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(s->state, iv, sizeof(iv));
	s->total_bytes = 0;
	s->block_len = 0;
}

void lp_sha256_update(struct lp_sha256 *s, const void *data, size_t len)
{
	const unsigned char *p = data;
	s->total_bytes += len;
	while (len > 0) {
		size_t n = 64 - s->block_len;
		if (n > len)
			n = len;
		memcpy(s->block + s->block_len, p, n);
		s->block_len += n;
		p += n;
		len -= n;
		if (s->block_len == 64) {
			compress(s->state, s->block);
			s->block_len = 0;
		}
	}
}

void lp_sha256_final(struct lp_sha256 *s, unsigned char out[32])
{
	uint64_t bits = s->total_bytes * 8;
	unsigned char pad = 0x80, zero = 0, len_be[8];
	int i;
	lp_sha256_update(s, &pad, 1);
	while (s->block_len != 56)
		lp_sha256_update(s, &zero, 1);
	for (i = 0; i < 8; i++)
		len_be[i] = (unsigned char)(bits >> (56 - 8 * i));
	lp_sha256_update(s, len_be, 8);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->state[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->state[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->state[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->state[i];
	}
}

static void to_hex(const unsigned char d[32], char out[65])
{
	static const char hex[] = "0123456789abcdef";
	int i;
	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}

void lp_sha256_hex(const void *data, size_t len, char out[65])
{
	struct lp_sha256 s;
	unsigned char d[32];
	lp_sha256_init(&s);
	lp_sha256_update(&s, data, len);
	lp_sha256_final(&s, d);
	to_hex(d, out);
}

int lp_sha256_file_hex(const char *path, char out[65], struct lp_err *err)
{
	unsigned char chunk[65536], d[32];
	struct lp_sha256 s;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lp_err_set(err, LP_EOTHER, "cannot open '%s': %s", path, strerror(errno));
	lp_sha256_init(&s);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			return lp_err_set(err, LP_EOTHER, "cannot read '%s': %s", path, strerror(e));
		}
		if (n == 0)
			break;
		lp_sha256_update(&s, chunk, (size_t)n);
	}
	close(fd);
	lp_sha256_final(&s, d);
	to_hex(d, out);
	return 0;
}
