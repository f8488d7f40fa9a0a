/* The key decoder (agent_keys.h). */
#include "agent_keys.h"

#include <string.h>

enum {
	IDLE,
	AFTER_ESC,
	CSI, /* ESC [ parameters and intermediates, up to a final byte */
	SS3, /* ESC O, one more byte */
};

void agent_key_decoder_reset(struct agent_key_decoder *dec)
{
	memset(dec, 0, sizeof(*dec));
}

static bool timed_out(const struct agent_key_decoder *dec, int64_t now_ms)
{
	return dec->state != IDLE && now_ms - dec->last_ms > AGENT_KEY_ESC_TIMEOUT_MS;
}

static void keep(struct agent_key_decoder *dec, uint8_t byte, int64_t now_ms)
{
	if (dec->seq_len < AGENT_KEY_SEQ_MAX) {
		dec->seq[dec->seq_len++] = byte;
	} else {
		dec->cut = true;
	}
	dec->last_ms = now_ms;
}

static void sequence_done(struct agent_key_decoder *dec, struct agent_key *key)
{
	key->type = AGENT_KEY_SEQUENCE;
	memcpy(key->seq, dec->seq, dec->seq_len);
	key->seq_len = dec->seq_len;
	key->cut = dec->cut;
	agent_key_decoder_reset(dec);
}

static void lone_esc(struct agent_key *key)
{
	key->type = AGENT_KEY_LONE_ESC;
	key->byte = AGENT_KEY_ESC;
}

/* @p byte with nothing pending: 1 key, or 0 when it starts a sequence. */
static size_t idle_byte(struct agent_key_decoder *dec, uint8_t byte, int64_t now_ms,
			struct agent_key *key)
{
	if (byte == AGENT_KEY_ESC) {
		dec->state = AFTER_ESC;
		dec->seq_len = 0;
		dec->cut = false;
		dec->last_ms = now_ms;
		return 0;
	}
	key->type = AGENT_KEY_CHAR;
	key->byte = byte;
	return 1;
}

size_t agent_key_feed(struct agent_key_decoder *dec, uint8_t byte, int64_t now_ms,
		      struct agent_key keys[2])
{
	size_t n = 0;

	memset(keys, 0, 2 * sizeof(*keys));
	if (timed_out(dec, now_ms)) {
		if (agent_key_expire(dec, now_ms, &keys[0])) {
			n = 1;
		}
	}
	switch (dec->state) {
	case AFTER_ESC:
		if (byte == '[' || byte == 'O') {
			dec->state = byte == '[' ? CSI : SS3;
			keep(dec, byte, now_ms);
			return n;
		}
		if (byte > 0x20 && byte < 0x7f) {
			keep(dec, byte, now_ms); /* Alt with a printable key */
			sequence_done(dec, &keys[n]);
			return n + 1;
		}
		/* ESC then a control byte, a space or a non-ASCII byte: the Esc key, then that byte
		 * (ESC ESC is Esc pressed twice). */
		agent_key_decoder_reset(dec);
		lone_esc(&keys[n++]);
		return n + idle_byte(dec, byte, now_ms, &keys[n]);
	case SS3:
		if (byte >= 0x20 && byte < 0x7f) {
			keep(dec, byte, now_ms);
			sequence_done(dec, &keys[n]);
			return n + 1;
		}
		break;
	case CSI:
		if (byte >= 0x20 && byte <= 0x3f) {
			keep(dec, byte, now_ms); /* parameter or intermediate */
			return n;
		}
		if (byte >= 0x40 && byte < 0x7f) {
			keep(dec, byte, now_ms);
			sequence_done(dec, &keys[n]);
			return n + 1;
		}
		break;
	default:
		return n + idle_byte(dec, byte, now_ms, &keys[n]);
	}
	/* A byte that cannot continue the sequence: the sequence is dropped, the byte is itself. */
	agent_key_decoder_reset(dec);
	return n + idle_byte(dec, byte, now_ms, &keys[n]);
}

bool agent_key_expire(struct agent_key_decoder *dec, int64_t now_ms, struct agent_key *key)
{
	bool esc;

	if (!timed_out(dec, now_ms)) {
		return false;
	}
	esc = dec->state == AFTER_ESC;
	agent_key_decoder_reset(dec);
	if (esc) {
		memset(key, 0, sizeof(*key));
		lone_esc(key);
	}
	return esc;
}

int32_t agent_key_wait_ms(const struct agent_key_decoder *dec, int64_t now_ms)
{
	int64_t left;

	if (dec->state == IDLE) {
		return -1;
	}
	left = dec->last_ms + AGENT_KEY_ESC_TIMEOUT_MS + 1 - now_ms;
	return left > 0 ? (int32_t)left : 0;
}

bool agent_key_is(const struct agent_key *key, const char *seq)
{
	size_t len = strlen(seq);

	return key->type == AGENT_KEY_SEQUENCE && !key->cut && key->seq_len == len &&
	       memcmp(key->seq, seq, len) == 0;
}
