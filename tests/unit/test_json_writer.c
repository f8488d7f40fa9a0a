/*
 * The bounded JSON writer (app/src/agent/wire/json_writer.c): layout, escaping and UTF-8 repair
 * (whole and split between parts), every buffer size around the exact fit, and every
 * misplaced call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json_writer.h"

#define FFFD "\xef\xbf\xbd"

/* A document using every call; the same steps run into buffers of every size. */
static void write_sample(struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, "model");
	jw_string(w, "gpt-4o");
	jw_key(w, "stream");
	jw_bool(w, true);
	jw_key(w, "store");
	jw_bool(w, false);
	jw_key(w, "max");
	jw_int(w, -42);
	jw_key(w, "user");
	jw_null(w);
	jw_key(w, "input");
	jw_array_begin(w);
	jw_object_begin(w);
	jw_key(w, "role");
	jw_string_n(w, "userXX", 4);
	jw_key(w, "content");
	jw_string_begin(w);
	jw_string_part(w, "Hello, ", 7);
	jw_string_part(w, "", 0);
	jw_string_part(w, "w\xc3", 2);
	jw_string_part(w, "\xa9rld", 4);
	jw_string_end(w);
	jw_object_end(w);
	jw_array_begin(w);
	jw_array_end(w);
	jw_object_begin(w);
	jw_object_end(w);
	jw_raw(w, "{\"a\": [1, 2]}", 13);
	jw_int(w, 0);
	jw_array_end(w);
	jw_object_end(w);
}

static const char sample_json[] =
	"{\"model\":\"gpt-4o\",\"stream\":true,\"store\":false,\"max\":-42,\"user\":null,"
	"\"input\":[{\"role\":\"user\",\"content\":\"Hello, w\xc3\xa9rld\"},[],{},"
	"{\"a\": [1, 2]},0]}";

static void test_layout(void **state)
{
	char buf[256];
	struct json_writer w;

	(void)state;
	jw_init(&w, buf, sizeof(buf));
	write_sample(&w);
	assert_int_equal(jw_finish(&w), strlen(sample_json));
	assert_string_equal(buf, sample_json);
}

/* Exactly the document plus its NUL fits; one byte less is -ENOSPC and an empty buffer. */
static void test_every_capacity(void **state)
{
	const size_t need = strlen(sample_json) + 1;
	char buf[256];
	struct json_writer w;

	(void)state;
	for (size_t cap = 0; cap <= need + 1; cap++) {
		memset(buf, 'X', sizeof(buf));
		jw_init(&w, buf, cap);
		write_sample(&w);
		if (cap >= need) {
			assert_int_equal(jw_finish(&w), need - 1);
			assert_string_equal(buf, sample_json);
			assert_false(w.overflow);
		} else {
			assert_int_equal(jw_finish(&w), -ENOSPC);
			assert_true(w.overflow);
			if (cap > 0) {
				assert_int_equal(buf[0], '\0');
			}
			/* Nothing past the buffer was touched. */
			assert_int_equal(buf[cap], 'X');
		}
	}
	jw_init(&w, NULL, 0);
	jw_null(&w);
	assert_int_equal(jw_finish(&w), -ENOSPC);
}

static int write_string(char *buf, size_t cap, const char *s, size_t len)
{
	struct json_writer w;

	jw_init(&w, buf, cap);
	jw_string_n(&w, s, len);
	return jw_finish(&w);
}

static void assert_string_json(const char *in, size_t len, const char *expect)
{
	char whole[512];
	char parts[512];
	struct json_writer w;

	assert_int_equal(write_string(whole, sizeof(whole), in, len), strlen(expect));
	assert_string_equal(whole, expect);
	/* Cut between parts at every pair of points: the same text. */
	for (size_t a = 0; a <= len; a++) {
		for (size_t b = a; b <= len; b++) {
			jw_init(&w, parts, sizeof(parts));
			jw_string_begin(&w);
			jw_string_part(&w, in, a);
			jw_string_part(&w, in + a, b - a);
			jw_string_part(&w, in + b, len - b);
			jw_string_end(&w);
			assert_int_equal(jw_finish(&w), strlen(expect));
			assert_string_equal(parts, expect);
		}
	}
}

static void test_escaping(void **state)
{
	char in[2];
	char expect[16];

	(void)state;
	assert_string_json("", 0, "\"\"");
	assert_string_json("a\"b\\c/", 6, "\"a\\\"b\\\\c/\"");
	assert_string_json("\b\f\n\r\t", 5, "\"\\b\\f\\n\\r\\t\"");
	/* Every other control character as \u00XX, including NUL; DEL stays. */
	for (int c = 0; c < 0x20; c++) {
		if (strchr("\b\f\n\r\t", c) != NULL && c != 0) {
			continue;
		}
		in[0] = (char)c;
		snprintf(expect, sizeof(expect), "\"\\u%04x\"", c);
		assert_string_json(in, 1, expect);
	}
	assert_string_json("\x7f", 1, "\"\x7f\"");
	/* U+2028 and U+2029 end lines in JavaScript: escaped. Their neighbours are not. */
	assert_string_json("a\xe2\x80\xa8" "b\xe2\x80\xa9", 8, "\"a\\u2028b\\u2029\"");
	assert_string_json("\xe2\x80\xa7\xe2\x80\xaa", 6, "\"\xe2\x80\xa7\xe2\x80\xaa\"");
	/* Valid UTF-8 of every length is copied. */
	assert_string_json("\xc2\x80\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 13,
			   "\"\xc2\x80\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"");
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	/* One U+FFFD per maximal invalid subpart, the same as Python's errors="replace". */
	assert_string_json("\xff", 1, "\"" FFFD "\"");
	assert_string_json("\x80\xbf", 2, "\"" FFFD FFFD "\"");
	assert_string_json("\xc0\xaf", 2, "\"" FFFD FFFD "\"");
	assert_string_json("\xe2\x82", 2, "\"" FFFD "\"");
	assert_string_json("\xe2\x82x", 3, "\"" FFFD "x\"");
	assert_string_json("\xe2\x82\"", 3, "\"" FFFD "\\\"\"");
	assert_string_json("\xf0\x80\x80", 3, "\"" FFFD FFFD FFFD "\"");
	assert_string_json("\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\"");
	assert_string_json("\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\"");
	assert_string_json("\xf0\x9f\x98", 3, "\"" FFFD "\"");
	assert_string_json("\xf0\x9f\x98\xc3\xa9", 5, "\"" FFFD "\xc3\xa9\"");
	assert_string_json("\xc3\n", 2, "\"" FFFD "\\n\"");
	assert_string_json("\xf5\x80", 2, "\"" FFFD FFFD "\"");
}

static void test_key_escaping(void **state)
{
	char buf[64];
	struct json_writer w;

	(void)state;
	jw_init(&w, buf, sizeof(buf));
	jw_object_begin(&w);
	jw_key(&w, "a\"\n\xe2\x80\xa8\xc3");
	jw_int(&w, 1);
	jw_object_end(&w);
	assert_int_equal(jw_finish(&w), strlen("{\"a\\\"\\n\\u2028" FFFD "\":1}"));
	assert_string_equal(buf, "{\"a\\\"\\n\\u2028" FFFD "\":1}");
}

static void test_integers(void **state)
{
	static const struct {
		int64_t v;
		const char *text;
	} cases[] = {
		{0, "0"},
		{-1, "-1"},
		{9, "9"},
		{10, "10"},
		{INT64_MAX, "9223372036854775807"},
		{INT64_MIN, "-9223372036854775808"},
	};
	char buf[32];
	struct json_writer w;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jw_init(&w, buf, sizeof(buf));
		jw_int(&w, cases[i].v);
		assert_int_equal(jw_finish(&w), strlen(cases[i].text));
		assert_string_equal(buf, cases[i].text);
	}
}

static void test_depth_bound(void **state)
{
	char buf[256];
	struct json_writer w;

	(void)state;
	/* Arrays and objects in turn, a number innermost: 16 deep is fine, 17 is misuse. */
	for (int levels = JSON_WRITER_DEPTH_MAX - 1; levels <= JSON_WRITER_DEPTH_MAX + 1; levels++) {
		size_t expect_len = 1;

		jw_init(&w, buf, sizeof(buf));
		for (int i = 0; i < levels; i++) {
			if (i % 2 == 0) {
				jw_array_begin(&w);
				expect_len += 2;
			} else {
				jw_object_begin(&w);
				jw_key(&w, "k");
				expect_len += 6;
			}
		}
		jw_int(&w, 0);
		for (int i = levels - 1; i >= 0; i--) {
			if (i % 2 == 0) {
				jw_array_end(&w);
			} else {
				jw_object_end(&w);
			}
		}
		if (levels <= JSON_WRITER_DEPTH_MAX) {
			assert_int_equal(jw_finish(&w), expect_len);
			assert_int_equal(strncmp(buf, "[{\"k\":[{\"k\":[", 13), 0);
		} else {
			assert_int_equal(jw_finish(&w), -EINVAL);
		}
	}
}

/* Each misuse, once in an otherwise valid document, makes jw_finish() say -EINVAL. */
static void misuse_value_in_object(struct json_writer *w)
{
	jw_object_begin(w);
	jw_int(w, 1);
	jw_object_end(w);
}

static void misuse_key_in_array(struct json_writer *w)
{
	jw_array_begin(w);
	jw_key(w, "a");
	jw_int(w, 1);
	jw_array_end(w);
}

static void misuse_key_at_top(struct json_writer *w)
{
	jw_key(w, "a");
	jw_int(w, 1);
}

static void misuse_two_keys(struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, "a");
	jw_key(w, "b");
	jw_int(w, 1);
	jw_object_end(w);
}

static void misuse_key_without_value(struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, "a");
	jw_object_end(w);
}

static void misuse_two_documents(struct json_writer *w)
{
	jw_int(w, 1);
	jw_int(w, 2);
}

static void misuse_unclosed(struct json_writer *w)
{
	jw_array_begin(w);
	jw_int(w, 1);
}

static void misuse_extra_end(struct json_writer *w)
{
	jw_array_begin(w);
	jw_array_end(w);
	jw_array_end(w);
}

static void misuse_wrong_end(struct json_writer *w)
{
	jw_array_begin(w);
	jw_object_end(w);
}

static void misuse_nothing(struct json_writer *w)
{
	(void)w;
}

static void misuse_part_outside_string(struct json_writer *w)
{
	jw_array_begin(w);
	jw_string_part(w, "a", 1);
	jw_array_end(w);
}

static void misuse_end_outside_string(struct json_writer *w)
{
	jw_array_begin(w);
	jw_string_end(w);
	jw_array_end(w);
}

static void misuse_value_in_string(struct json_writer *w)
{
	jw_array_begin(w);
	jw_string_begin(w);
	jw_int(w, 1);
	jw_string_end(w);
	jw_array_end(w);
}

static void misuse_end_in_string(struct json_writer *w)
{
	jw_array_begin(w);
	jw_string_begin(w);
	jw_array_end(w);
	jw_string_end(w);
}

static void misuse_unended_string(struct json_writer *w)
{
	jw_string_begin(w);
	jw_string_part(w, "a", 1);
}

static void misuse_empty_raw(struct json_writer *w)
{
	jw_array_begin(w);
	jw_raw(w, "", 0);
	jw_array_end(w);
}

static void misuse_null_string(struct json_writer *w)
{
	jw_array_begin(w);
	jw_string(w, NULL);
	jw_array_end(w);
}

static void misuse_null_key(struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, NULL);
	jw_int(w, 1);
	jw_object_end(w);
}

static void misuse_null_part(struct json_writer *w)
{
	jw_string_begin(w);
	jw_string_part(w, NULL, 1);
	jw_string_end(w);
}

static void test_misuse(void **state)
{
	static void (*const misuses[])(struct json_writer *) = {
		misuse_value_in_object,	    misuse_key_in_array,	  misuse_key_at_top,
		misuse_two_keys,	    misuse_key_without_value,	  misuse_two_documents,
		misuse_unclosed,	    misuse_extra_end,		  misuse_wrong_end,
		misuse_nothing,		    misuse_part_outside_string, misuse_end_outside_string,
		misuse_value_in_string,	    misuse_end_in_string,	  misuse_unended_string,
		misuse_empty_raw,	    misuse_null_string,		  misuse_null_key,
		misuse_null_part,
	};
	char buf[64];
	char tiny[2];
	struct json_writer w;

	(void)state;
	for (size_t i = 0; i < sizeof(misuses) / sizeof(misuses[0]); i++) {
		memset(buf, 'X', sizeof(buf));
		jw_init(&w, buf, sizeof(buf));
		misuses[i](&w);
		if (jw_finish(&w) != -EINVAL) {
			fail_msg("misuse %zu was not reported", i);
		}
		assert_true(w.error);
		assert_int_equal(buf[0], '\0');
		if (misuses[i] == misuse_nothing) {
			continue; /* the string below would make it a valid document */
		}
		/* A misuse is a bug: it is reported even when the buffer also overflowed. */
		jw_init(&w, tiny, sizeof(tiny));
		misuses[i](&w);
		jw_string(&w, "long enough to overflow");
		assert_int_equal(jw_finish(&w), -EINVAL);
	}
	/* Null text of length 0 is the empty string, not a misuse. */
	jw_init(&w, buf, sizeof(buf));
	jw_string_n(&w, NULL, 0);
	assert_int_equal(jw_finish(&w), 2);
	assert_string_equal(buf, "\"\"");
}

/* After a successful finish the document is complete: nothing more may be added. */
static void test_finish_closes(void **state)
{
	char buf[16];
	struct json_writer w;

	(void)state;
	jw_init(&w, buf, sizeof(buf));
	jw_array_begin(&w);
	jw_array_end(&w);
	assert_int_equal(jw_finish(&w), 2);
	jw_int(&w, 1);
	assert_int_equal(jw_finish(&w), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),	      cmocka_unit_test(test_every_capacity),
		cmocka_unit_test(test_escaping),      cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_key_escaping),  cmocka_unit_test(test_integers),
		cmocka_unit_test(test_depth_bound),   cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_finish_closes),
	};

	return cmocka_run_group_tests_name("json_writer", tests, NULL, NULL);
}
