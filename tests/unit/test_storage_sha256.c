/*
 * SHA-256 of the storage tools (app/src/tools/sha256.c) against the FIPS 180-4 example
 * vectors, with every way of splitting an input between updates, and its hex both ways.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "sha256.h"

static const char msg448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char msg896[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
			     "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

static void assert_hex(const uint8_t digest[SHA256_DIGEST_BYTES], const char *want)
{
	char hex[SHA256_HEX_LEN + 1];

	sha256_hex(digest, hex);
	assert_string_equal(hex, want);
}

static void one_shot(const void *data, size_t len, const char *want)
{
	uint8_t digest[SHA256_DIGEST_BYTES];

	sha256_digest(data, len, digest);
	assert_hex(digest, want);
}

static void test_vectors(void **state)
{
	(void)state;
	one_shot("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	one_shot("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	one_shot(msg448, strlen(msg448),
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	one_shot(msg896, strlen(msg896),
		 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_million_a(void **state)
{
	static char a[1000];
	struct sha256 ctx;
	uint8_t digest[SHA256_DIGEST_BYTES];

	(void)state;
	memset(a, 'a', sizeof(a));
	sha256_init(&ctx);
	for (int i = 0; i < 1000; i++) {
		sha256_update(&ctx, a, sizeof(a));
	}
	sha256_final(&ctx, digest);
	assert_hex(digest, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

	/* The same million bytes in uneven updates (1, 2, 3, ... bytes). */
	sha256_init(&ctx);
	for (size_t done = 0, step = 1; done < 1000000; step = step % 997 + 1) {
		size_t n = 1000000 - done < step ? 1000000 - done : step;

		sha256_update(&ctx, a, n);
		done += n;
	}
	sha256_final(&ctx, digest);
	assert_hex(digest, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Every split of @p msg into two updates, and into three around each block boundary. */
static void splits(const char *msg, const char *want)
{
	size_t len = strlen(msg);
	uint8_t digest[SHA256_DIGEST_BYTES];
	struct sha256 ctx;

	for (size_t i = 0; i <= len; i++) {
		sha256_init(&ctx);
		sha256_update(&ctx, msg, i);
		sha256_update(&ctx, msg + i, len - i);
		sha256_final(&ctx, digest);
		assert_hex(digest, want);
		for (size_t j = i; j <= len; j++) {
			sha256_init(&ctx);
			sha256_update(&ctx, msg, i);
			sha256_update(&ctx, NULL, 0);
			sha256_update(&ctx, msg + i, j - i);
			sha256_update(&ctx, msg + j, len - j);
			sha256_final(&ctx, digest);
			assert_hex(digest, want);
		}
	}
}

static void test_split_updates(void **state)
{
	(void)state;
	splits("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	splits(msg448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	splits(msg896, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

/*
 * Lengths around the padding edges (55, 56, 63, 64, 119, 120 bytes...): byte by byte equals
 * one shot. The one-shot values themselves are checked against hashlib by
 * tests/test_storage_sha256.py.
 */
static void test_padding_edges(void **state)
{
	uint8_t msg[200];
	uint8_t a[SHA256_DIGEST_BYTES];
	uint8_t b[SHA256_DIGEST_BYTES];
	struct sha256 ctx;

	(void)state;
	for (size_t i = 0; i < sizeof(msg); i++) {
		msg[i] = (uint8_t)(i * 7 + 3);
	}
	for (size_t len = 0; len <= sizeof(msg); len++) {
		sha256_digest(msg, len, a);
		sha256_init(&ctx);
		for (size_t i = 0; i < len; i++) {
			sha256_update(&ctx, msg + i, 1);
		}
		sha256_final(&ctx, b);
		assert_memory_equal(a, b, sizeof(a));
	}
	/* 55 'a' fit one block with the length; 56 need a second. */
	memset(msg, 'a', 64);
	one_shot(msg, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	one_shot(msg, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
	one_shot(msg, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

/* sha256_from_hex(): the inverse of sha256_hex() and nothing else; 64 digits, not 63 or 65. */
static void test_from_hex(void **state)
{
	uint8_t digest[SHA256_DIGEST_BYTES];
	uint8_t back[SHA256_DIGEST_BYTES];
	char hex[SHA256_HEX_LEN + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(digest); i++) {
		digest[i] = (uint8_t)(i * 37 + 11); /* every digit value turns up */
	}
	sha256_hex(digest, hex);
	assert_int_equal(sha256_from_hex(hex, SHA256_HEX_LEN, back), 0);
	assert_memory_equal(back, digest, sizeof(digest));
	assert_int_equal(sha256_from_hex(hex, SHA256_HEX_LEN - 1, back), -EINVAL);
	hex[SHA256_HEX_LEN] = '0';
	assert_int_equal(sha256_from_hex(hex, SHA256_HEX_LEN + 1, back), -EINVAL);
	/* Each position refuses upper case, the characters next to the ranges and a NUL. */
	for (size_t at = 0; at < SHA256_HEX_LEN; at++) {
		static const char bad[] = {'A', 'F', 'g', '/', ':', '`', ' ', '\0'};

		for (size_t b = 0; b < sizeof(bad); b++) {
			char saved = hex[at];

			hex[at] = bad[b];
			assert_int_equal(sha256_from_hex(hex, SHA256_HEX_LEN, back), -EINVAL);
			hex[at] = saved;
		}
	}
	assert_int_equal(sha256_from_hex(hex, SHA256_HEX_LEN, back), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_million_a),
		cmocka_unit_test(test_split_updates),
		cmocka_unit_test(test_padding_edges),
		cmocka_unit_test(test_from_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
