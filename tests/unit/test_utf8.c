/*
 * utf8_shown() (app/src/agent/wire/utf8.c): a name from outside as a message shows it, with
 * the controls made visible, ill-formed sequences replaced, and every cut between characters,
 * by the bytes of the name (max) and by the room of the output (cap), at N and N+1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "utf8.h"

#define FFFD "\xef\xbf\xbd"

/* @p text shown with room enough and no byte bound; returns the bytes of @p text shown. */
static size_t shown(const char *text, size_t len, char *out, size_t cap)
{
	return utf8_shown(out, cap, text, len, len);
}

static void test_controls_are_escaped_and_characters_kept(void **state)
{
	/* C0, DEL, C1 (U+0085, U+009B: C2 85, C2 9B), then U+00A0, é, U+20AC, U+1F600 as they are. */
	static const char text[] = "a\x01\x1b\x7f\xc2\x85\xc2\x9b\xc2\xa0\xc3\xa9\xe2\x82\xac"
				   "\xf0\x9f\x98\x80z";
	char out[128];

	(void)state;
	assert_int_equal(shown(text, sizeof(text) - 1, out, sizeof(out)), sizeof(text) - 1);
	assert_string_equal(out, "a\\u0001\\u001b\\u007f\\u0085\\u009b\xc2\xa0\xc3\xa9\xe2\x82\xac"
				 "\xf0\x9f\x98\x80z");
	/* A NUL inside is a character of the name too. */
	assert_int_equal(shown("x\0y", 3, out, sizeof(out)), 3);
	assert_string_equal(out, "x\\u0000y");
}

static void test_ill_formed_sequences_are_replaced(void **state)
{
	char out[64];

	(void)state;
	/* A Latin-1 byte, a stray continuation byte, a 3-byte start cut short (one maximal
	 * subpart), a surrogate (ED A0: ED takes 80..9F only) and F5 (never a start). */
	assert_int_equal(shown("caf\xe9", 4, out, sizeof(out)), 4);
	assert_string_equal(out, "caf" FFFD);
	assert_int_equal(shown("\x80" "a\xe2\x82" "b", 5, out, sizeof(out)), 5);
	assert_string_equal(out, FFFD "a" FFFD "b");
	assert_int_equal(shown("\xed\xa0\x80\xf5", 4, out, sizeof(out)), 4);
	assert_string_equal(out, FFFD FFFD FFFD FFFD);
	/* C2 alone at the end: ill-formed, not a C1 control. */
	assert_int_equal(shown("a\xc2", 2, out, sizeof(out)), 2);
	assert_string_equal(out, "a" FFFD);
}

static void test_max_cuts_between_characters(void **state)
{
	static const char text[] = "ab\xc3\xa9\xf0\x9f\x98\x80";
	char out[64];

	(void)state;
	assert_int_equal(utf8_shown(out, sizeof(out), text, 8, 2), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(utf8_shown(out, sizeof(out), text, 8, 3), 2); /* not half of é */
	assert_string_equal(out, "ab");
	assert_int_equal(utf8_shown(out, sizeof(out), text, 8, 4), 4);
	assert_string_equal(out, "ab\xc3\xa9");
	assert_int_equal(utf8_shown(out, sizeof(out), text, 8, 7), 4);
	assert_int_equal(utf8_shown(out, sizeof(out), text, 8, 8), 8);
	assert_string_equal(out, text);
}

static void test_cap_cuts_between_shown_units(void **state)
{
	char out[16];

	(void)state;
	/* "\u0001" is 6 bytes: it needs a cap of 7 (the NUL); 6 shows nothing of it. */
	memset(out, 'x', sizeof(out));
	assert_int_equal(shown("\x01\x01", 2, out, 7), 1);
	assert_string_equal(out, "\\u0001");
	assert_int_equal(shown("\x01\x01", 2, out, 6), 0);
	assert_string_equal(out, "");
	assert_int_equal(shown("\x01\x01", 2, out, 13), 2);
	assert_int_equal(shown("\x01\x01", 2, out, 12), 1);
	/* é after "a" needs 4 bytes with the NUL. */
	assert_int_equal(shown("a\xc3\xa9", 3, out, 4), 3);
	assert_int_equal(shown("a\xc3\xa9", 3, out, 3), 1);
	assert_string_equal(out, "a");
	/* No room at all: nothing written. */
	out[0] = 'x';
	assert_int_equal(shown("a", 1, out, 0), 0);
	assert_int_equal(out[0], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls_are_escaped_and_characters_kept),
		cmocka_unit_test(test_ill_formed_sequences_are_replaced),
		cmocka_unit_test(test_max_cuts_between_characters),
		cmocka_unit_test(test_cap_cuts_between_shown_units),
	};

	return cmocka_run_group_tests_name("utf8", tests, NULL, NULL);
}
