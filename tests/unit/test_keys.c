/*
 * The key decoder (app/src/agent/shell/agent_keys.c) with a made-up clock: the Esc key against
 * the ESC that starts a cursor or function key, at the timeout and one millisecond past it,
 * and whatever bytes come in the same read or in later ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "agent_keys.h"

#define T AGENT_KEY_ESC_TIMEOUT_MS

/* What feeding @p bytes at @p now gave, as text: "c:x" a byte, "esc" the Esc key, "seq:[A". */
struct log {
	char text[512];
};

static void log_key(struct log *log, const struct agent_key *key)
{
	char one[AGENT_KEY_SEQ_MAX + 8];

	switch (key->type) {
	case AGENT_KEY_CHAR:
		snprintf(one, sizeof(one), key->byte >= 0x20 && key->byte < 0x7f ? "c:%c " : "c:%02x ",
			 key->byte);
		break;
	case AGENT_KEY_LONE_ESC:
		snprintf(one, sizeof(one), "esc ");
		break;
	case AGENT_KEY_SEQUENCE:
		snprintf(one, sizeof(one), "seq:%.*s ", (int)key->seq_len, (const char *)key->seq);
		break;
	}
	strncat(log->text, one, sizeof(log->text) - strlen(log->text) - 1);
}

static void feed(struct agent_key_decoder *dec, struct log *log, const char *bytes, int64_t now)
{
	struct agent_key keys[2];

	for (size_t i = 0; bytes[i] != '\0'; i++) {
		size_t n = agent_key_feed(dec, (uint8_t)bytes[i], now, keys);

		assert_true(n <= 2);
		for (size_t k = 0; k < n; k++) {
			log_key(log, &keys[k]);
		}
	}
}

static void expire(struct agent_key_decoder *dec, struct log *log, int64_t now)
{
	struct agent_key key;

	if (agent_key_expire(dec, now, &key)) {
		log_key(log, &key);
	}
}

static void test_whole_keys_in_one_read(void **state)
{
	struct agent_key_decoder dec;
	struct log log = {""};

	(void)state;
	agent_key_decoder_reset(&dec);
	feed(&dec, &log, "a\x1b[A\x1b[5~\x1b[6~\x1bOP\x1b[1;5C\r\x18", 1000);
	assert_string_equal(log.text, "c:a seq:[A seq:[5~ seq:[6~ seq:OP seq:[1;5C c:0d c:18 ");
	assert_int_equal(agent_key_wait_ms(&dec, 1000), -1);
}

/* ESC in one read, "[A" in the next: one key when the rest comes within the timeout. */
static void test_split_sequence_at_the_timeout(void **state)
{
	struct agent_key_decoder dec;
	struct log log = {""};

	(void)state;
	agent_key_decoder_reset(&dec);
	feed(&dec, &log, "\x1b", 1000);
	assert_string_equal(log.text, "");
	assert_int_equal(agent_key_wait_ms(&dec, 1000), T + 1);
	expire(&dec, &log, 1000 + T); /* a wake-up at the timeout: still waiting */
	assert_string_equal(log.text, "");
	assert_int_equal(agent_key_wait_ms(&dec, 1000 + T), 1);
	feed(&dec, &log, "[", 1000 + T);
	/* The timeout runs from each byte of the sequence. */
	feed(&dec, &log, "5", 1000 + 2 * T);
	feed(&dec, &log, "~", 1000 + 3 * T);
	assert_string_equal(log.text, "seq:[5~ ");
}

/* One millisecond later the ESC was the Esc key, and the bytes are themselves. */
static void test_split_sequence_past_the_timeout(void **state)
{
	struct agent_key_decoder dec;
	struct log log = {""};

	(void)state;
	agent_key_decoder_reset(&dec);
	feed(&dec, &log, "\x1b", 1000);
	feed(&dec, &log, "[A", 1000 + T + 1);
	assert_string_equal(log.text, "esc c:[ c:A ");
	assert_int_equal(agent_key_wait_ms(&dec, 1000 + T + 1), -1);
}

/* A lone Esc found by a wake-up without input, at the timeout and one millisecond past it. */
static void test_lone_esc_by_wake_up(void **state)
{
	struct agent_key_decoder dec;
	struct log log = {""};

	(void)state;
	agent_key_decoder_reset(&dec);
	feed(&dec, &log, "\x1b", 5000);
	expire(&dec, &log, 5000 + T);
	assert_string_equal(log.text, "");
	expire(&dec, &log, 5000 + T + 1);
	assert_string_equal(log.text, "esc ");
	assert_int_equal(agent_key_wait_ms(&dec, 5000 + T + 1), -1);
	expire(&dec, &log, 9000); /* only once */
	assert_string_equal(log.text, "esc ");
	/* The key after it is not swallowed. */
	feed(&dec, &log, "x", 9000);
	assert_string_equal(log.text, "esc c:x ");
}

/* An unfinished sequence that times out is dropped; what follows is itself. */
static void test_unfinished_sequence_times_out(void **state)
{
	struct agent_key_decoder dec;
	struct log log = {""};

	(void)state;
	agent_key_decoder_reset(&dec);
	feed(&dec, &log, "\x1b[1", 0);
	expire(&dec, &log, T);
	assert_string_equal(log.text, "");
	assert_int_equal(agent_key_wait_ms(&dec, T), 1);
	feed(&dec, &log, "x", T + 1);
	assert_string_equal(log.text, "c:x ");
	agent_key_decoder_reset(&dec);
	memset(&log, 0, sizeof(log));
	feed(&dec, &log, "\x1bO", 0);
	expire(&dec, &log, T + 1);
	assert_string_equal(log.text, "");
	assert_int_equal(agent_key_wait_ms(&dec, T + 1), -1);
}

static void test_esc_then_other_bytes(void **state)
{
	struct agent_key_decoder dec;
	struct log log = {""};

	(void)state;
	agent_key_decoder_reset(&dec);
	/* Esc pressed three times then Enter, Ctrl-X, a space, a UTF-8 byte: the Esc key then
	 * the byte; ESC and a printable byte at once: Alt with that key. */
	feed(&dec, &log, "\x1b\x1b\x1b\r\x1b\x18\x1b \x1b\xc3\x1b" "b", 0);
	assert_string_equal(log.text, "esc esc esc c:0d esc c:18 esc c:  esc c:c3 seq:b ");
	/* A byte that cannot go on with a sequence ends it and is itself. */
	memset(&log, 0, sizeof(log));
	feed(&dec, &log, "\x1b[1\r\x1bO\x7f", 0);
	assert_string_equal(log.text, "c:0d c:7f ");
}

/* Feed @p bytes at time 0; the key the last byte completes. */
static struct agent_key last_key(const char *bytes)
{
	struct agent_key_decoder dec;
	struct agent_key keys[2];
	size_t len = strlen(bytes);

	agent_key_decoder_reset(&dec);
	for (size_t i = 0; i < len; i++) {
		size_t n = agent_key_feed(&dec, (uint8_t)bytes[i], 0, keys);

		assert_int_equal(n, i + 1 == len ? 1 : 0);
	}
	return keys[0];
}

/* AGENT_KEY_SEQ_MAX (8) bytes after the ESC are kept whole; 9 are reported cut. */
static void test_long_sequence_is_cut(void **state)
{
	struct agent_key key;

	(void)state;
	assert_int_equal(AGENT_KEY_SEQ_MAX, 8);
	key = last_key("\x1b[1;2;34~");
	assert_int_equal(key.type, AGENT_KEY_SEQUENCE);
	assert_int_equal(key.seq_len, 8);
	assert_false(key.cut);
	assert_true(agent_key_is(&key, "[1;2;34~"));
	key = last_key("\x1b[1;2;3;4~");
	assert_int_equal(key.type, AGENT_KEY_SEQUENCE);
	assert_int_equal(key.seq_len, AGENT_KEY_SEQ_MAX);
	assert_true(key.cut);
	assert_false(agent_key_is(&key, "[1;2;3;4"));
	key = last_key("\x1b[1;2;3;4;5;6;7;8~");
	assert_true(key.cut);
}

static void test_key_is(void **state)
{
	struct agent_key_decoder dec;
	struct agent_key keys[2];

	(void)state;
	agent_key_decoder_reset(&dec);
	(void)agent_key_feed(&dec, 0x1b, 0, keys);
	(void)agent_key_feed(&dec, '[', 0, keys);
	(void)agent_key_feed(&dec, '5', 0, keys);
	assert_int_equal(agent_key_feed(&dec, '~', 0, keys), 1);
	assert_true(agent_key_is(&keys[0], "[5~"));
	assert_false(agent_key_is(&keys[0], "[6~"));
	assert_false(agent_key_is(&keys[0], "[5"));
	assert_int_equal(agent_key_feed(&dec, '5', 0, keys), 1);
	assert_false(agent_key_is(&keys[0], "5"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_keys_in_one_read),
		cmocka_unit_test(test_split_sequence_at_the_timeout),
		cmocka_unit_test(test_split_sequence_past_the_timeout),
		cmocka_unit_test(test_lone_esc_by_wake_up),
		cmocka_unit_test(test_unfinished_sequence_times_out),
		cmocka_unit_test(test_esc_then_other_bytes),
		cmocka_unit_test(test_long_sequence_is_cut),
		cmocka_unit_test(test_key_is),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
