/*
 * The conversation file format (docs/conversation-format.md): the CRC, the header, the exact
 * bytes of a small file, every single-byte corruption and every truncation detected, and the
 * JSON escape sizes the history bound relies on.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "conv_format.h"
#include "conv_store.h"
#include "json_writer.h"

#include "conv_test_util.h"
#include "flash_fixture.h"

static int setup(void **state)
{
	(void)state;
	posix_fs_fail_after(-1);
	return flash_fixture_setup("test_conv_format");
}

static int teardown(void **state)
{
	(void)state;
	(void)posix_flash_unmount();
	host_rm_tree(scratch_dir);
	return 0;
}

static void crc32_check_value(void **state)
{
	(void)state;
	/* The CRC-32/ISO-HDLC check value, as zlib.crc32(b"123456789"). */
	assert_int_equal(conv_crc32(0, "123456789", 9), 0xCBF43926u);
	/* Continuing a CRC equals computing it over the concatenation. */
	assert_int_equal(conv_crc32(conv_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
	assert_int_equal(conv_crc32(0, "", 0), 0u);
}

static void header_round_trip_and_checks(void **state)
{
	struct conv_header in = {
		.slot = 8,
		.protocol = 1,
		.conv_id = 0x01020304u,
		.sequence = 0xA0B0C0D0u,
		.created_s = -5,
		.updated_s = INT64_C(0x0102030405060708),
		.turns = 2,
		.records = 9,
		.file_bytes = 4000,
	};
	struct conv_header out;
	uint8_t raw[CONV_HEADER_BYTES];
	uint8_t bad[CONV_HEADER_BYTES];

	(void)state;
	conv_header_encode(&in, raw);
	assert_memory_equal(raw, "AGCV\x02\x30\x08\x01\x04\x03\x02\x01", 12);
	assert_int_equal(conv_header_decode(raw, &out), 0);
	assert_int_equal(out.version, CONV_VERSION);
	assert_int_equal(out.slot, in.slot);
	assert_int_equal(out.protocol, in.protocol);
	assert_int_equal(out.conv_id, in.conv_id);
	assert_int_equal(out.sequence, in.sequence);
	assert_true(out.created_s == in.created_s && out.updated_s == in.updated_s);
	assert_int_equal(out.turns, in.turns);
	assert_int_equal(out.records, in.records);
	assert_int_equal(out.file_bytes, in.file_bytes);

	/* Every single bit flip of the header is caught (by its CRC or a field check). */
	for (size_t i = 0; i < sizeof(raw); i++) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(bad, raw, sizeof(raw));
			bad[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(conv_header_decode(bad, &out), -EBADMSG);
		}
	}
	/* Well-formed headers with impossible fields. */
	struct conv_header cases[] = {in, in, in, in, in};

	cases[0].slot = 0;
	cases[1].slot = 33;
	cases[2].file_bytes = CONV_FILE_MIN_BYTES - 1u;
	cases[3].records = 2;
	cases[4].turns = 10; /* more turns than records */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		conv_header_encode(&cases[i], bad);
		assert_int_equal(conv_header_decode(bad, &out), -EBADMSG);
	}
}

/*
 * The bytes of docs/conversation-format.md's example, computed from the description with
 * Python's zlib (timestamps 0): version 2, slot 1, Responses, provider "openai", model
 * "gpt-test", title "Hi", one turn "hello" / "world" with one tool call "system_status {}"
 * (tool id 1) and response id "resp_1".
 */
static const uint8_t golden[174] = {
	0x41, 0x47, 0x43, 0x56, 0x02, 0x30, 0x01, 0x02, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0xae, 0x00,
	0x00, 0x00, 0x87, 0x32, 0x70, 0x6c, 0x01, 0x00, 0x06, 0x00, 0x6f, 0x70, 0x65, 0x6e,
	0x61, 0x69, 0x8e, 0x35, 0x6e, 0xcc, 0x02, 0x00, 0x08, 0x00, 0x67, 0x70, 0x74, 0x2d,
	0x74, 0x65, 0x73, 0x74, 0xff, 0x64, 0xa6, 0xe2, 0x03, 0x00, 0x02, 0x00, 0x48, 0x69,
	0x77, 0x07, 0x91, 0x91, 0x10, 0x00, 0x05, 0x00, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0xe3,
	0x28, 0xc3, 0xe8, 0x12, 0x00, 0x10, 0x00, 0x73, 0x79, 0x73, 0x74, 0x65, 0x6d, 0x5f,
	0x73, 0x74, 0x61, 0x74, 0x75, 0x73, 0x20, 0x7b, 0x7d, 0x17, 0xae, 0xdf, 0xcc, 0x15,
	0x00, 0x02, 0x00, 0x01, 0x00, 0x41, 0xcb, 0xcb, 0x51, 0x11, 0x00, 0x05, 0x00, 0x77,
	0x6f, 0x72, 0x6c, 0x64, 0x65, 0x8b, 0xdf, 0xf3, 0x13, 0x00, 0x06, 0x00, 0x72, 0x65,
	0x73, 0x70, 0x5f, 0x31, 0x6e, 0x29, 0xc2, 0xbf, 0x41, 0x47, 0x43, 0x45, 0xae, 0x00,
	0x00, 0x00, 0xee, 0xdb, 0x8b, 0xf3,
};

/* Write the example conversation into slot 1 of a fresh store; returns the file's size. */
static int write_example(uint8_t *file, size_t cap)
{
	struct conv_handle h;
	static const char *const tools[] = {"system_status {}"};
	static const uint16_t ids[] = {1};
	struct conv_meta meta = {2, "openai", "gpt-test", "Hi"};
	struct conv_turn turn = {
		.user = "hello",
		.user_len = 5,
		.assistant = "world",
		.assistant_len = 5,
		.tools = tools,
		.tool_count = 1,
		.tool_ids = ids,
		.response_id = "resp_1",
	};
	char path[64];

	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_create(&h, &meta), 1);
	assert_int_equal(conv_store_commit(&h, &turn, NULL), 0);
	slot_file_path(path, sizeof(path), CONV_DIR_LFS, 1, "bin");
	return file_get(path, file, cap);
}

static void file_bytes_match_the_spec(void **state)
{
	uint8_t file[512];
	int len;

	(void)state;
	len = write_example(file, sizeof(file));
	assert_int_equal(len, (int)sizeof(golden));
	/* Wall-clock timestamps vary: zero them and recompute the two CRCs that cover them. */
	memset(file + 16, 0, 16);
	conv_put_le32(file + 44, conv_crc32(0, file, 44));
	conv_put_le32(file + sizeof(golden) - 4u, conv_crc32(0, file, sizeof(golden) - 4u));
	assert_memory_equal(file, golden, sizeof(golden));
}

static int count_chunk(const struct conv_chunk *chunk, void *user_data)
{
	(void)chunk;
	(*(int *)user_data)++;
	return 0;
}

/* With no backup, a damaged main file leaves the slot damaged: listed, unreadable. */
static void expect_damaged(const char *path, const uint8_t *bytes, size_t len, const char *what,
			   size_t at)
{
	struct conv_store_info info;
	struct conv_summary sum;
	int chunks = 0;

	assert_int_equal(file_put(path, bytes, len), 0);
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_info_get(&info), 0);
	if (info.damaged != 1u) {
		fail_msg("%s at %zu not detected", what, at);
	}
	assert_int_equal(conv_store_summary(1, &sum), -EBADMSG);
	assert_true(sum.damaged);
	assert_int_equal(conv_store_read(1, count_chunk, &chunks), -EBADMSG);
}

static void every_byte_flip_and_truncation_is_detected(void **state)
{
	uint8_t file[512];
	uint8_t bad[513];
	char path[64];
	int len;

	(void)state;
	len = write_example(file, sizeof(file));
	assert_int_equal(len, (int)sizeof(golden));
	slot_file_path(path, sizeof(path), CONV_DIR_LFS, 1, "bin");

	for (int i = 0; i < len; i++) {
		memcpy(bad, file, (size_t)len);
		bad[i] ^= 0x5A;
		expect_damaged(path, bad, (size_t)len, "flip", (size_t)i);
		memcpy(bad, file, (size_t)len);
		bad[i] ^= 0x01;
		expect_damaged(path, bad, (size_t)len, "low-bit flip", (size_t)i);
	}
	for (int cut = 0; cut < len; cut++) {
		expect_damaged(path, file, (size_t)cut, "truncation", (size_t)cut);
	}
	/* A byte after the trailer is as wrong as one missing. */
	memcpy(bad, file, (size_t)len);
	bad[len] = 0;
	expect_damaged(path, bad, (size_t)len + 1u, "extra byte", (size_t)len);

	/* The untouched file is whole again. */
	int chunks = 0;

	assert_int_equal(file_put(path, file, (size_t)len), 0);
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(conv_store_read(1, count_chunk, &chunks), 0);
	assert_int_equal(chunks, 8);
}

/* The size json_writer really writes for one string, quotes excluded. */
static size_t jw_len(const char *text, size_t len)
{
	static char out[70000];
	struct json_writer w;
	int n;

	jw_init(&w, out, sizeof(out));
	jw_string_n(&w, text, len);
	n = jw_finish(&w);
	assert_true(n >= 2);
	return (size_t)n - 2u;
}

static void escaped_length_equals_the_writer(void **state)
{
	static const char *const samples[] = {
		"", "plain", "\"quoted\" \\ back", "\b\f\n\r\t", "\x01\x1f\x7f", "caf\xc3\xa9",
		"\xe2\x80\xa8 \xe2\x80\xa9", "\xf0\x9f\x98\x80", "\xc3", "\xe2\x80", "\xff\xfe",
		"\xed\xa0\x80", "\xe0\x80\xaf", "\xf4\x90\x80\x80", "a\xc3(b", "\xf0\x9f\x98",
	};
	char buf[600];
	uint32_t rnd = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		size_t len = strlen(samples[i]);

		assert_int_equal(conv_json_escaped_len(samples[i], len), jw_len(samples[i], len));
	}
	/* Random bytes, biased towards the interesting ones. */
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)(round % 97);

		for (size_t i = 0; i < len; i++) {
			static const uint8_t pick[] = {0x00, 0x1f, '"', '\\', 'a', 0x7f, 0x80,
						       0xbf, 0xc2, 0xe0, 0xe2, 0xed, 0xf0, 0xf4,
						       0xa8, 0xa9, 0x90, 0xff};

			rnd = rnd * 1103515245u + 12345u;
			buf[i] = (char)(rnd % 3u == 0u ? (uint8_t)(rnd >> 16)
						       : pick[(rnd >> 8) % sizeof(pick)]);
		}
		assert_int_equal(conv_json_escaped_len(buf, len), jw_len(buf, len));
	}
	/* In parts: a sequence cut by the end of a part is left to the next part. */
	size_t used;

	assert_int_equal(conv_json_escaped_part("ab\xe2\x80", 4, false, &used), 2);
	assert_int_equal(used, 2);
	assert_int_equal(conv_json_escaped_part("ab\xe2\x80", 4, true, &used), 5);
	assert_int_equal(used, 4);
	assert_int_equal(conv_json_escaped_part("ab\xff", 3, false, &used), 5);
	assert_int_equal(used, 3);
}

static void utf8_prefix_keeps_characters_whole(void **state)
{
	(void)state;
	assert_int_equal(conv_utf8_prefix("abc", 3, 5), 3);
	assert_int_equal(conv_utf8_prefix("abc", 3, 2), 2);
	/* "aé" is 61 C3 A9: two bytes would cut the é. */
	assert_int_equal(conv_utf8_prefix("a\xc3\xa9", 3, 2), 1);
	assert_int_equal(conv_utf8_prefix("\xf0\x9f\x98\x80z", 5, 3), 0);
	assert_int_equal(conv_utf8_prefix("\xf0\x9f\x98\x80z", 5, 4), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32_check_value),
		cmocka_unit_test(header_round_trip_and_checks),
		cmocka_unit_test_setup_teardown(file_bytes_match_the_spec, setup, teardown),
		cmocka_unit_test_setup_teardown(every_byte_flip_and_truncation_is_detected, setup,
						teardown),
		cmocka_unit_test(escaped_length_equals_the_writer),
		cmocka_unit_test(utf8_prefix_keeps_characters_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
