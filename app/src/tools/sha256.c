/*
 * SHA-256 as specified in FIPS 180-4 sections 4.1.2, 4.2.2, 5.1.1, 5.3.3 and 6.2.
 *
 * Words are assembled big-endian byte by byte, so the code does not depend on the host's
 * byte order or alignment. The message schedule is kept as a 16-word ring (W[t] only needs
 * W[t-2], W[t-7], W[t-15] and W[t-16]), so one compression uses 64 bytes of stack for it.
 */
#include <errno.h>
#include <string.h>

#include "sha256.h"

/* The first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
static const uint32_t round_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32u - n));
}

static inline uint32_t load_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
	       (uint32_t)p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void compress(uint32_t state[8], const uint8_t block[64])
{
	uint32_t w[16];
	uint32_t a = state[0];
	uint32_t b = state[1];
	uint32_t c = state[2];
	uint32_t d = state[3];
	uint32_t e = state[4];
	uint32_t f = state[5];
	uint32_t g = state[6];
	uint32_t h = state[7];

	for (unsigned int t = 0; t < 64; t++) {
		uint32_t wt;

		if (t < 16) {
			wt = load_be32(block + 4u * t);
		} else {
			uint32_t w15 = w[(t - 15) & 15];
			uint32_t w2 = w[(t - 2) & 15];
			uint32_t s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >> 3);
			uint32_t s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >> 10);

			wt = s1 + w[(t - 7) & 15] + s0 + w[t & 15];
		}
		w[t & 15] = wt;

		uint32_t big_s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = h + big_s1 + ch + round_k[t] + wt;
		uint32_t big_s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
		uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
		uint32_t t2 = big_s0 + maj;

		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	state[4] += e;
	state[5] += f;
	state[6] += g;
	state[7] += h;
}

void sha256_init(struct sha256 *ctx)
{
	/* The first 32 bits of the fractional parts of the square roots of the first 8 primes. */
	static const uint32_t initial[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(ctx->state, initial, sizeof(initial));
	ctx->bytes = 0;
	ctx->fill = 0;
}

void sha256_update(struct sha256 *ctx, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (len == 0) {
		return;
	}
	ctx->bytes += len;
	if (ctx->fill > 0) {
		size_t take = 64u - ctx->fill;

		if (take > len) {
			take = len;
		}
		memcpy(ctx->block + ctx->fill, p, take);
		ctx->fill = (uint8_t)(ctx->fill + take);
		p += take;
		len -= take;
		if (ctx->fill < 64u) {
			return;
		}
		compress(ctx->state, ctx->block);
		ctx->fill = 0;
	}
	while (len >= 64u) {
		compress(ctx->state, p);
		p += 64;
		len -= 64;
	}
	if (len > 0) {
		memcpy(ctx->block, p, len);
		ctx->fill = (uint8_t)len;
	}
}

void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES])
{
	uint64_t bits = ctx->bytes * 8u;

	/* A one bit, zeros up to 56 bytes into a block, then the length in bits (5.1.1). */
	ctx->block[ctx->fill++] = 0x80;
	if (ctx->fill > 56u) {
		memset(ctx->block + ctx->fill, 0, 64u - ctx->fill);
		compress(ctx->state, ctx->block);
		ctx->fill = 0;
	}
	memset(ctx->block + ctx->fill, 0, 56u - ctx->fill);
	store_be32(ctx->block + 56, (uint32_t)(bits >> 32));
	store_be32(ctx->block + 60, (uint32_t)bits);
	compress(ctx->state, ctx->block);
	for (unsigned int i = 0; i < 8; i++) {
		store_be32(digest + 4u * i, ctx->state[i]);
	}
	memset(ctx, 0, sizeof(*ctx));
}

void sha256_digest(const void *data, size_t len, uint8_t digest[SHA256_DIGEST_BYTES])
{
	struct sha256 ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, data, len);
	sha256_final(&ctx, digest);
}

void sha256_hex(const uint8_t digest[SHA256_DIGEST_BYTES], char hex[SHA256_HEX_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned int i = 0; i < SHA256_DIGEST_BYTES; i++) {
		hex[2u * i] = digits[digest[i] >> 4];
		hex[2u * i + 1u] = digits[digest[i] & 0x0f];
	}
	hex[SHA256_HEX_LEN] = '\0';
}

/* The value of a lowercase hex digit, or -1. */
static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int sha256_from_hex(const char *hex, size_t len, uint8_t digest[SHA256_DIGEST_BYTES])
{
	if (len != SHA256_HEX_LEN) {
		return -EINVAL;
	}
	for (unsigned int i = 0; i < SHA256_DIGEST_BYTES; i++) {
		int hi = hex_digit(hex[2u * i]);
		int lo = hex_digit(hex[2u * i + 1u]);

		if (hi < 0 || lo < 0) {
			return -EINVAL;
		}
		digest[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
