/*
 * Not a test: SHA-256 (app/src/tools/sha256.c) as a filter, for tests/test_storage_sha256.py.
 *
 * Reads records "<length>\n<bytes>" from stdin until its end and prints the lowercase hex
 * digest of each on its own line. The bytes are fed to sha256_update() in pieces of at most
 * --chunk N bytes (default: all at once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 16];
	size_t chunk = sizeof(buf);
	unsigned long len;

	if (argc == 3 && strcmp(argv[1], "--chunk") == 0) {
		chunk = strtoul(argv[2], NULL, 10);
		if (chunk == 0 || chunk > sizeof(buf)) {
			return 2;
		}
	}
	while (scanf("%lu", &len) == 1) {
		struct sha256 ctx;
		uint8_t digest[SHA256_DIGEST_BYTES];
		char hex[SHA256_HEX_LEN + 1];

		if (getchar() != '\n') {
			return 2;
		}
		sha256_init(&ctx);
		while (len > 0) {
			size_t want = len < chunk ? len : chunk;

			if (fread(buf, 1, want, stdin) != want) {
				return 2;
			}
			sha256_update(&ctx, buf, want);
			len -= want;
		}
		sha256_final(&ctx, digest);
		sha256_hex(digest, hex);
		printf("%s\n", hex);
	}
	return 0;
}
