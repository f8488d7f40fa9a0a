/*
 * SHA-256 (FIPS 180-4) in portable C, streaming: init, any number of updates, final. No
 * allocation, no tables beyond the 64 round constants; a context is 108 bytes.
 */
#ifndef AGENT_SHA256_H
#define AGENT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_BYTES 32
#define SHA256_HEX_LEN	    64 /* lowercase hex digits, without the terminator */

struct sha256 {
	uint32_t state[8];
	uint64_t bytes;	   /* message length so far */
	uint8_t block[64]; /* a block being filled */
	uint8_t fill;	   /* bytes in block */
};

void sha256_init(struct sha256 *ctx);
void sha256_update(struct sha256 *ctx, const void *data, size_t len);
/** Pads, writes the digest and leaves @p ctx to be initialised again. */
void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES]);

/** One-shot digest of @p len bytes. */
void sha256_digest(const void *data, size_t len, uint8_t digest[SHA256_DIGEST_BYTES]);

/** Lowercase hex of @p digest into @p hex (SHA256_HEX_LEN + 1 bytes, NUL-terminated). */
void sha256_hex(const uint8_t digest[SHA256_DIGEST_BYTES], char hex[SHA256_HEX_LEN + 1]);

/**
 * The digest whose lowercase hex is @p hex (@p len bytes, exactly SHA256_HEX_LEN, no
 * terminator needed) into @p digest: 0, or -EINVAL for any other length or any other
 * character (upper case included); @p digest may then be partly written.
 */
int sha256_from_hex(const char *hex, size_t len, uint8_t digest[SHA256_DIGEST_BYTES]);

#endif /* AGENT_SHA256_H */
