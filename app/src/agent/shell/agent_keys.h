/*
 * Keys read raw from the console (bypass): what an escape byte starts (docs/chat.md, "Keys").
 *
 * The Esc key and the cursor and function keys all begin with the byte ESC; a UART may hand
 * over ESC and the rest of a key ("[A") in separate reads. The decoder tells them apart the
 * usual way: ESC followed by more bytes within AGENT_KEY_ESC_TIMEOUT_MS is one key (a
 * sequence), ESC followed by nothing for longer is the Esc key. Its clock is the caller's, so
 * a test can drive it with made-up times.
 */
#ifndef AGENT_KEYS_H
#define AGENT_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_KEY_ESC	   0x1b
#define AGENT_KEY_APP_EXIT 0x18 /* Ctrl-X: leave a full-screen app */
#define AGENT_KEY_CTRL_C   0x03

/* How long an ESC (or an unfinished sequence) waits for its next byte. */
#define AGENT_KEY_ESC_TIMEOUT_MS 100
/* Bytes of a sequence kept after its ESC; a longer one is reported cut (its first bytes). */
#define AGENT_KEY_SEQ_MAX 8

enum agent_key_type {
	AGENT_KEY_CHAR, /* an ordinary byte (a control byte, or a byte of UTF-8 text): byte */
	AGENT_KEY_LONE_ESC, /* the Esc key */
	/* A whole sequence after ESC: "[5~" (Page Up), "[A" (cursor up), "OP" (F1), or one
	 * printable byte (Alt with that key). Never Esc. */
	AGENT_KEY_SEQUENCE,
};

struct agent_key {
	enum agent_key_type type;
	uint8_t byte;
	uint8_t seq[AGENT_KEY_SEQ_MAX];
	size_t seq_len;
	bool cut; /* the sequence was longer than AGENT_KEY_SEQ_MAX: no key agent_key_is() names */
};

struct agent_key_decoder {
	uint8_t state; /* idle, after ESC, in a CSI (ESC [), after ESC O */
	uint8_t seq[AGENT_KEY_SEQ_MAX];
	size_t seq_len;
	bool cut;
	int64_t last_ms; /* when the pending sequence's last byte came */
};

void agent_key_decoder_reset(struct agent_key_decoder *dec);

/**
 * One byte of input, arrived at @p now_ms. Writes the keys it completes to @p keys and
 * returns their number: 0 (the byte is part of an unfinished sequence), 1, or 2 (a pending
 * ESC older than the timeout is a lone Esc, then the byte's own key).
 */
size_t agent_key_feed(struct agent_key_decoder *dec, uint8_t byte, int64_t now_ms,
		      struct agent_key keys[2]);

/**
 * At @p now_ms with no byte: true, with a lone Esc in @p key, when an ESC has waited longer
 * than the timeout. An unfinished sequence that timed out is dropped (false).
 */
bool agent_key_expire(struct agent_key_decoder *dec, int64_t now_ms, struct agent_key *key);

/**
 * Milliseconds from @p now_ms until the pending ESC or sequence times out (0 when it has),
 * or -1 when nothing is pending: how long the caller asks the console to wait before waking
 * it without input (agent_console_wake_after()).
 */
int32_t agent_key_wait_ms(const struct agent_key_decoder *dec, int64_t now_ms);

/** Whether @p key is the sequence @p seq (NUL-terminated, without the ESC). */
bool agent_key_is(const struct agent_key *key, const char *seq);

#endif /* AGENT_KEYS_H */
