/*
 * The confirmation's text (app/src/agent/shell/agent_confirm_text.c): the canonical form of
 * the arguments whatever white space the model put between them, every control and invisible
 * character escaped, long values cut with the byte count, lines shared so short values stay
 * whole, and the width and height bounds at N and N+1, also over generated arguments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_confirm_text.h"

#define OUT_MAX	  65536
#define LINES_CAP 64

static char out[OUT_MAX];
static size_t out_len;
static char lines[LINES_CAP][1024];
static unsigned int line_count;

static void collect(void *user, const char *line, size_t len)
{
	(void)user;
	assert_true(len > 0 && line[len - 1] == '\n');
	assert_true(out_len + len < sizeof(out));
	memcpy(out + out_len, line, len);
	out_len += len;
	out[out_len] = '\0';
	assert_true(line_count < LINES_CAP && len < sizeof(lines[0]));
	memcpy(lines[line_count], line, len - 1);
	lines[line_count][len - 1] = '\0';
	line_count++;
}

/* Columns as the formatter promises to count them: ASCII one, any other character two. */
static unsigned int columns(const char *s)
{
	unsigned int cols = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p < 0x80) {
			cols++;
		} else if ((*p & 0xC0) != 0x80) {
			cols += 2;
		}
	}
	return cols;
}

/* Nothing that steers a terminal or hides text: no C0 but the line ends, no DEL, no C1, no
 * bidi or zero-width character. */
static void check_safe(void)
{
	static const char *const hidden[] = {
		"\xe2\x80\xae", "\xe2\x80\xab", "\xe2\x81\xa6", "\xe2\x81\xa9", "\xe2\x80\x8e",
		"\xe2\x80\x8f", "\xd8\x9c",	"\xe2\x80\x8b", "\xef\xbb\xbf", "\xf3\xa0\x81\x81",
	};

	for (size_t i = 0; i < out_len; i++) {
		unsigned char c = (unsigned char)out[i];

		assert_false(c < 0x20 && c != '\n');
		assert_false(c == 0x7F);
		assert_false(c == 0xC2 && i + 1 < out_len && (unsigned char)out[i + 1] >= 0x80 &&
			     (unsigned char)out[i + 1] <= 0x9F);
	}
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
		assert_null(strstr(out, hidden[i]));
	}
}

static unsigned int run(const char *name, const char *args, size_t len, unsigned int cols,
			unsigned int max_lines)
{
	/* the bounds the formatter clamps to */
	unsigned int width = (cols < 20 ? 20 : cols > 255 ? 255 : cols) - 1;
	unsigned int height = max_lines < 2 ? 2 : max_lines > 48 ? 48 : max_lines;
	unsigned int n;

	out_len = 0;
	out[0] = '\0';
	line_count = 0;
	n = agent_confirm_text(name, args, len, cols, max_lines, collect, NULL);
	assert_int_equal(n, line_count);
	for (unsigned int i = 0; i < line_count; i++) {
		assert_true(columns(lines[i]) <= width);
	}
	assert_true(line_count <= height);
	check_safe();
	return n;
}

static unsigned int runs(const char *name, const char *args, unsigned int cols,
			 unsigned int max_lines)
{
	return run(name, args, strlen(args), cols, max_lines);
}

static void test_compact_and_padded_arguments_look_the_same(void **state)
{
	static const char padded[] = "\n\n  {\r\n\t\"path\"  \n:\n \"notes.txt\" ,\n\n\n\n"
				     "\"content\":\t\"hello\"   }\n\n";

	(void)state;
	assert_int_equal(runs("storage_write", "{\"path\":\"notes.txt\",\"content\":\"hello\"}",
			      80, 23),
			 3);
	assert_string_equal(out, "[confirm] storage_write\n"
				 "  path: \"notes.txt\"\n"
				 "  content: \"hello\"\n");
	assert_int_equal(runs("storage_write", padded, 80, 23), 3);
	assert_string_equal(out, "[confirm] storage_write\n"
				 "  path: \"notes.txt\"\n"
				 "  content: \"hello\"\n");
}

static void test_nested_values_are_compact_json(void **state)
{
	(void)state;
	runs("t", "{ \"edits\" : [ {\"offset\" : 1 , \"insert\" : \"a\\u0041\"} , [ ] , { } ],"
		  " \"flag\" : true , \"n\" : -1.5e3 , \"none\" : null, \"f\": false }",
	     80, 23);
	assert_string_equal(out, "[confirm] t\n"
				 "  edits: [{\"offset\":1,\"insert\":\"aA\"},[],{}]\n"
				 "  flag: true\n"
				 "  n: -1.5e3\n"
				 "  none: null\n"
				 "  f: false\n");
}

/* Keys are kept for JSON_PATH_DEPTH (8) levels: a member deeper than that shows "..." as its
 * name; its value is shown. */
static void test_members_deeper_than_the_kept_keys(void **state)
{
	(void)state;
	runs("t", "{\"a\":{\"b\":[{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":1,\"i\":[2]}}}}}}]}}",
	     120, 23);
	assert_string_equal(out, "[confirm] t\n"
				 "  a: {\"b\":[{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"...\":1,"
				 "\"...\":[2]}}}}}}]}\n");
}

static void test_controls_and_invisible_characters_are_escaped(void **state)
{
	(void)state;
	runs("storage_write",
	     "{\"path\":\"a\\u202eb\\u202ac\\u2066d\\u2069e\\u200ef\\u200fg\\u061ch\",\"content\":"
	     "\"\\u001b[2J\\u001b]52;c;eA==\\u0007\\u009b31m\\u0085\\n\\t\\r\\b\\f\\u0000\\u007f"
	     "\\\"q\\\\ \\u200b\\ufeff\\u2028\\u00ad\\ud83d\\ude00\\udb40\\udc41 caf\\u00e9\"}",
	     200, 23);
	assert_string_equal(lines[1], "  path: \"a\\u202eb\\u202ac\\u2066d\\u2069e\\u200ef\\u200fg"
				      "\\u061ch\"");
	assert_string_equal(lines[2],
			    "  content: \"\\u001b[2J\\u001b]52;c;eA==\\u0007\\u009b31m\\u0085"
			    "\\n\\t\\r\\b\\f\\u0000\\u007f\\\"q\\\\ \\u200b\\ufeff\\u2028\\u00ad"
			    "\xf0\x9f\x98\x80\\udb40\\udc41 caf\xc3\xa9\"");
	/* Raw C1 and bidi bytes in the JSON text (valid UTF-8 there) are escaped too. */
	runs("x", "{\"k\":\"\xc2\x9b\xe2\x80\xae\xc2\x85\"}", 80, 23);
	assert_string_equal(lines[1], "  k: \"\\u009b\\u202e\\u0085\"");
	/* Keys in all their bytes: a NUL does not end them, a control inside is escaped. */
	runs("x", "{\"path\\u0000x\":1,\"o\":{\"a\\u0000\\u001bb\":2}}", 80, 23);
	assert_string_equal(lines[1], "  path\\u0000x: 1");
	assert_string_equal(lines[2], "  o: {\"a\\u0000\\u001bb\":2}");
}

static void test_a_long_value_is_cut_with_the_byte_count(void **state)
{
	static char args[4096];
	char want[64];
	const char *x;
	size_t shown;

	(void)state;
	snprintf(args, sizeof(args), "{\"path\":\"/lfs/notes.txt\",\"content\":\"%3000s\"}", "");
	memset(strchr(args, ' '), 'x', 3000);
	runs("storage_write", args, 80, 23);
	assert_int_equal(line_count, 23);
	assert_string_equal(lines[1], "  path: \"/lfs/notes.txt\"");
	assert_true(strncmp(lines[2], "  content: \"xxx", 15) == 0);
	/* Every x shown, then the count of the bytes not shown: 3000 x and the closing quote. */
	shown = 0;
	for (x = strstr(out, "content: \"") + 10; *x != '\0' && *x != '\xe2'; x++) {
		shown += *x == 'x';
	}
	snprintf(want, sizeof(want), " \xe2\x80\xa6 (+%zu bytes)", 3000 - shown + 1);
	assert_non_null(strstr(lines[22], want));
	assert_int_equal(strlen(strstr(lines[22], want)), strlen(want));
	for (unsigned int i = 3; i < 23; i++) {
		assert_true(strncmp(lines[i], "    x", 5) == 0);
	}
}

static void test_short_values_stay_whole_next_to_a_long_one(void **state)
{
	static char args[4096];
	static const char path[] = "/lfs/a/rather/long/folder/name/that/wraps/over/lines/f.txt";

	(void)state;
	snprintf(args, sizeof(args), "{\"content\":\"%3000s\",\"path\":\"%s\",\"n\":1}", "",
		 path);
	memset(strchr(args, ' '), 'y', 3000);
	/* 40 columns, 9 lines: the path needs 2, n one, the content gets the other 5. */
	runs("storage_write", args, 40, 9);
	assert_int_equal(line_count, 9);
	assert_string_equal(lines[0], "[confirm] storage_write");
	assert_true(strncmp(lines[1], "  content: \"yyy", 15) == 0);
	assert_non_null(strstr(lines[5], "bytes)"));
	assert_string_equal(lines[6], "  path: \"/lfs/a/rather/long/folder/name");
	assert_string_equal(lines[7], "    /that/wraps/over/lines/f.txt\"");
	assert_string_equal(lines[8], "  n: 1");
}

/* A value that needs exactly K lines is whole with K lines and cut with K - 1. */
static void test_height_bound_at_n_and_n_plus_one(void **state)
{
	char args[512];

	(void)state;
	/* 20 columns: 19 a line; "  k: \"" is 6, so 13 characters on the first line. */
	snprintf(args, sizeof(args), "{\"k\":\"%41s\"}", "");
	memset(strchr(args, ' '), 'z', 41);
	/* 6 + 42 (41 z and the quote) = 48 columns: 19 on the first line, then at most 15 on
	 * each: 3 lines, the name's line besides. */
	runs("t", args, 20, 4);
	assert_int_equal(line_count, 4);
	assert_null(strstr(out, "bytes)"));
	assert_string_equal(lines[3], "    zzzzzzzzzzzzz\"");
	runs("t", args, 20, 3);
	assert_int_equal(line_count, 3);
	assert_non_null(strstr(lines[2], "bytes)"));
}

/*
 * At the narrowest screen (20 columns, 19 a line) a value cut on a continuation line: the
 * marker with a 4-digit count (" … (+NNNN bytes)", 17 columns) does not fit after the four
 * columns of indent, so that line shows " … (+NNNN B)"; a 5-digit count the same. Before, the
 * marker went unspaced at column 4 and the line was 20 columns wide. The count is exact.
 */
static void test_a_cut_at_the_narrowest_screen_keeps_the_width(void **state)
{
	static char args[16384];
	char want[64];
	size_t len;

	(void)state;
	/* 2000 x: 2001 bytes of value with its closing quote; 13 x on the first line. */
	len = (size_t)snprintf(args, sizeof(args), "{\"k\":\"%2000s\"}", "");
	memset(strchr(args, ' '), 'x', 2000);
	run("t", args, len, 20, 3);
	assert_int_equal(line_count, 3);
	assert_string_equal(lines[1], "  k: \"xxxxxxxxxxxxx");
	/* 4 indent, 2 x, 13 for the marker: 19 columns. */
	snprintf(want, sizeof(want), "    xx \xe2\x80\xa6 (+%d B)", 2001 - 13 - 2);
	assert_string_equal(lines[2], want);
	assert_int_equal(columns(lines[2]), 19);
	/* 2000 \u0001: 12001 bytes shown escaped; 2 on the first line (6 columns each). */
	len = (size_t)snprintf(args, sizeof(args), "{\"k\":\"");
	for (int i = 0; i < 2000; i++) {
		len += (size_t)snprintf(args + len, sizeof(args) - len, "\\u0001");
	}
	len += (size_t)snprintf(args + len, sizeof(args) - len, "\"}");
	run("t", args, len, 20, 3);
	assert_int_equal(line_count, 3);
	assert_string_equal(lines[1], "  k: \"\\u0001\\u0001");
	/* 4 indent and 14 for the marker: no escape fits before it. */
	snprintf(want, sizeof(want), "     \xe2\x80\xa6 (+%d B)", 12001 - 12);
	assert_string_equal(lines[2], want);
	/* One member line only: the brief marker leaves room for the key. */
	run("t", args, len, 20, 2);
	assert_int_equal(line_count, 2);
	snprintf(want, sizeof(want), "  k:  \xe2\x80\xa6 (+%d B)", 12001 + 1);
	assert_string_equal(lines[1], want);
	/* The whole marker with a 4-digit count needs 4 + 17 columns of a continuation line:
	 * 21 columns (20 a line) still get the brief one, 22 the whole one. */
	len = (size_t)snprintf(args, sizeof(args), "{\"k\":\"%2000s\"}", "");
	memset(strchr(args, ' '), 'x', 2000);
	run("t", args, len, 21, 3);
	snprintf(want, sizeof(want), "    xxx \xe2\x80\xa6 (+%d B)", 2001 - 14 - 3);
	assert_string_equal(lines[2], want);
	run("t", args, len, 22, 3);
	snprintf(want, sizeof(want), "     \xe2\x80\xa6 (+%d bytes)", 2001 - 15);
	assert_string_equal(lines[2], want);
	assert_int_equal(columns(lines[2]), 21);
}

/* A line of exactly the width stays one line; one character more wraps. */
static void test_width_bound_at_n_and_n_plus_one(void **state)
{
	char args[256];

	(void)state;
	/* "  k: \"" (6) + 12 + quote = 19 = width at 20 columns. */
	snprintf(args, sizeof(args), "{\"k\":\"%12s\"}", "");
	memset(strchr(args, ' '), 'w', 12);
	runs("t", args, 20, 10);
	assert_int_equal(line_count, 2);
	assert_int_equal(columns(lines[1]), 19);
	snprintf(args, sizeof(args), "{\"k\":\"%13s\"}", "");
	memset(strchr(args, ' '), 'w', 13);
	runs("t", args, 20, 10);
	assert_int_equal(line_count, 3);
	assert_string_equal(lines[2], "    \"");
	/* An escape is never split between lines. */
	runs("t", "{\"k\":\"wwwwwwwwwww\\u202e\"}", 20, 10);
	assert_string_equal(lines[1], "  k: \"wwwwwwwwwww");
	assert_string_equal(lines[2], "    \\u202e\"");
}

/* The clamps: at most 48 lines and 254 columns a line however large the screen, at least 2
 * lines and 19 columns however small. */
static void test_size_bounds_at_n_and_n_plus_one(void **state)
{
	static char args[4096];
	size_t len = 0;

	(void)state;
	len += (size_t)snprintf(args, sizeof(args), "{\"long\":\"%600s\"", "");
	memset(strchr(args, ' '), 'v', 600);
	for (int i = 0; i < 60; i++) {
		len += (size_t)snprintf(args + len, sizeof(args) - len, ",\"m%d\":%d", i, i);
	}
	snprintf(args + len, sizeof(args) - len, "}");
	assert_int_equal(runs("t", args, 80, 47), 47);
	assert_int_equal(runs("t", args, 80, 48), 48);
	assert_int_equal(runs("t", args, 80, 49), 48);
	assert_string_equal(lines[47], "  \xe2\x80\xa6 (+15 more arguments)");
	assert_int_equal(runs("t", "{\"a\":1,\"b\":2}", 80, 1), 2);
	assert_int_equal(runs("t", "{\"a\":1,\"b\":2}", 80, 2), 2);
	assert_int_equal(runs("t", "{\"a\":1,\"b\":2}", 80, 3), 3);
	/* 600 v on lines of 254 (255 columns) and of 254 still (256 columns) */
	snprintf(args, sizeof(args), "{\"long\":\"%600s\"}", "");
	memset(strchr(args, ' '), 'v', 600);
	runs("t", args, 255, 10);
	assert_int_equal(columns(lines[1]), 254);
	runs("t", args, 256, 10);
	assert_int_equal(columns(lines[1]), 254);
	runs("t", args, 254, 10);
	assert_int_equal(columns(lines[1]), 253);
	runs("t", args, 19, 40);
	assert_int_equal(columns(lines[1]), 19);
	runs("t", args, 21, 40);
	assert_int_equal(columns(lines[1]), 20);
}

static void test_more_members_than_lines(void **state)
{
	(void)state;
	/* 2 lines: the name, then only the count. */
	runs("t", "{\"a\":1,\"b\":2,\"c\":3}", 80, 2);
	assert_string_equal(out, "[confirm] t\n  \xe2\x80\xa6 (+3 more arguments)\n");
	runs("t", "{\"a\":1,\"b\":2,\"c\":3}", 80, 3);
	assert_string_equal(out, "[confirm] t\n  a: 1\n  \xe2\x80\xa6 (+2 more arguments)\n");
	runs("t", "{\"a\":1,\"b\":2,\"c\":3}", 80, 4);
	assert_string_equal(out, "[confirm] t\n  a: 1\n  b: 2\n  c: 3\n");
}

static void test_odd_inputs(void **state)
{
	(void)state;
	runs("t", "{}", 80, 23);
	assert_string_equal(out, "[confirm] t\n  (no arguments)\n");
	runs("t", "[1,2]", 80, 23);
	assert_string_equal(out, "[confirm] t\n  not JSON: [1,2]\n");
	run("t", "{\"a\":\n\x1b[2J\xff", 11, 80, 23);
	assert_string_equal(out, "[confirm] t\n  not JSON: {\\\"a\\\":\\n\\u001b[2J\xef\xbf\xbd\n");
	run(NULL, NULL, 0, 80, 23);
	assert_string_equal(out, "[confirm] \n  not JSON: \n");
	/* Out-of-range sizes are clamped: 20 columns, 2 lines. */
	runs("a_tool_name_longer_than_the_line", "{\"a\":1,\"b\":2}", 5, 0);
	assert_string_equal(out, "[confirm] a_tool_\xe2\x80\xa6\n  \xe2\x80\xa6 (+2 more)\n");
	runs("t", "{\"a\":1}", 1000, 1000);
	assert_string_equal(out, "[confirm] t\n  a: 1\n");
}

/* Generated arguments at every size: each line within the width, the height bound kept, and
 * nothing unsafe; the path of a storage_write is whole whenever it can be. */
static void test_generated_arguments_fit_every_screen(void **state)
{
	static const char *const pieces[] = {
		"\\u202e", "\\u001b[2J", "\\n", "\xc3\xa9", "\xe2\x9c\x93", "\xf0\x9f\x98\x80",
		"\\\"",	    "\\\\",	"x",   " ",	   "\\ud83d\\ude00",	"\\u0085",
	};
	static char args[4096];
	unsigned int seed = 12345;

	(void)state;
	for (int round = 0; round < 300; round++) {
		size_t len = 0;
		int members;

		seed = seed * 1103515245u + 12345u;
		members = 1 + (int)(seed >> 16) % 6;
		len += (size_t)snprintf(args + len, sizeof(args) - len, "{\"path\":\"/lfs/p%d\"",
					round);
		for (int m = 0; m < members; m++) {
			int count;

			seed = seed * 1103515245u + 12345u;
			count = (int)(seed >> 16) % 50;
			len += (size_t)snprintf(args + len, sizeof(args) - len, ",\n \"m%d\" : \"", m);
			for (int k = 0; k < count; k++) {
				seed = seed * 1103515245u + 12345u;
				len += (size_t)snprintf(args + len, sizeof(args) - len, "%s",
							pieces[(seed >> 16) % 12]);
			}
			len += (size_t)snprintf(args + len, sizeof(args) - len, "\"");
		}
		len += (size_t)snprintf(args + len, sizeof(args) - len, "}");
		for (unsigned int cols = 20; cols <= 100; cols += 7) {
			for (unsigned int h = 2; h <= 24; h += 3) {
				char want[32];

				run("storage_write", args, len, cols, h);
				assert_string_equal(lines[0], cols > 23 ? "[confirm] storage_write"
									: "[confirm] storage\xe2\x80\xa6");
				snprintf(want, sizeof(want), "  path: \"/lfs/p%d\"", round);
				if (h >= 3) {
					assert_string_equal(lines[1], want);
				} else {
					assert_non_null(strstr(lines[1], "more"));
				}
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact_and_padded_arguments_look_the_same),
		cmocka_unit_test(test_nested_values_are_compact_json),
		cmocka_unit_test(test_members_deeper_than_the_kept_keys),
		cmocka_unit_test(test_controls_and_invisible_characters_are_escaped),
		cmocka_unit_test(test_a_long_value_is_cut_with_the_byte_count),
		cmocka_unit_test(test_short_values_stay_whole_next_to_a_long_one),
		cmocka_unit_test(test_height_bound_at_n_and_n_plus_one),
		cmocka_unit_test(test_a_cut_at_the_narrowest_screen_keeps_the_width),
		cmocka_unit_test(test_width_bound_at_n_and_n_plus_one),
		cmocka_unit_test(test_size_bounds_at_n_and_n_plus_one),
		cmocka_unit_test(test_more_members_than_lines),
		cmocka_unit_test(test_odd_inputs),
		cmocka_unit_test(test_generated_arguments_fit_every_screen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
