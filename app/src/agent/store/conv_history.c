/*
 * The bounded Chat Completions history of a conversation (conv_store.h;
 * docs/conversation-format.md "Chat Completions history"): a first pass sizes the newest
 * messages in a ring of 64 entries, a second copies the window's texts into the caller's
 * buffer.
 */
#include "conv_store_internal.h"

#include <errno.h>
#include <string.h>

#include "agent_port.h"

/* ---- Chat Completions history ------------------------------------------------------------- */

/* {"role":"","content":""} around each message, a comma between messages. */
#define HISTORY_OBJECT_BYTES 24u

struct history_ctx {
	struct conv_history *out;
	uint32_t head; /* ring start in out->msgs */
	uint32_t count;
	uint32_t raw;
	uint32_t ser;
	uint32_t ser_len[CONV_HISTORY_MESSAGES_MAX];
	bool dropped;
};

static uint32_t history_ser_bytes(uint8_t role, uint32_t escaped)
{
	return HISTORY_OBJECT_BYTES + (role == CONV_REC_USER ? 4u : 9u) + escaped;
}

/* The serialized size of the window: its objects and the commas between them. */
static uint32_t history_total_ser(const struct history_ctx *hc)
{
	return hc->count == 0u ? 0u : hc->ser + hc->count - 1u;
}

static void history_pop(struct history_ctx *hc)
{
	struct conv_history_msg *m = &hc->out->msgs[hc->head];

	hc->raw -= m->len;
	hc->ser -= hc->ser_len[hc->head];
	hc->head = (hc->head + 1u) % CONV_HISTORY_MESSAGES_MAX;
	hc->count--;
	hc->dropped = true;
}

static int history_visit(struct conv_scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
			 uint8_t type, uint16_t len, void *ctx)
{
	struct history_ctx *hc = ctx;
	uint32_t record_pos = s->pos;
	uint32_t escaped = 0;
	uint32_t slot_i;
	size_t left = len;
	int err;

	if (type != CONV_REC_USER && type != CONV_REC_ASSISTANT) {
		return conv_scan_payload(s, head, len, NULL);
	}
	err = conv_scan_payload(s, head, len, NULL);
	if (err != 0) {
		return err;
	}
	if (len <= CONV_IO_BYTES) {
		escaped = (uint32_t)conv_json_escaped_len((const char *)s->buf, len);
	} else {
		/* Checked; now size its escapes piece by piece. */
		err = agent_fs_seek(s->file, (int32_t)(record_pos + CONV_RECORD_HEAD_BYTES),
				    AGENT_FS_SEEK_SET);
		while (err == 0 && left > 0u) {
			size_t n = left < CONV_IO_BYTES ? left : CONV_IO_BYTES;
			size_t used;

			err = conv_read_exact(s->file, s->buf, n);
			if (err != 0) {
				break;
			}
			escaped += (uint32_t)conv_json_escaped_part((const char *)s->buf, n,
								    n == left, &used);
			left -= used;
			/* A cut sequence (at most 3 bytes) is read again with the next part. */
			if (used < n) {
				err = agent_fs_seek(s->file, -(int32_t)(n - used),
						    AGENT_FS_SEEK_CUR);
			}
		}
		if (err == 0) {
			err = agent_fs_seek(s->file,
					    (int32_t)(record_pos + CONV_RECORD_OVERHEAD + len),
					    AGENT_FS_SEEK_SET);
		}
		if (err != 0) {
			return err;
		}
	}
	slot_i = (hc->head + hc->count) % CONV_HISTORY_MESSAGES_MAX;
	if (hc->count == CONV_HISTORY_MESSAGES_MAX) {
		history_pop(hc);
		slot_i = (hc->head + hc->count) % CONV_HISTORY_MESSAGES_MAX;
	}
	hc->out->msgs[slot_i] = (struct conv_history_msg){
		.role = type,
		.len = len,
		.file_pos = record_pos,
	};
	hc->ser_len[slot_i] = history_ser_bytes(type, escaped);
	hc->count++;
	hc->raw += len;
	hc->ser += hc->ser_len[slot_i];
	while (hc->count > 0u && (hc->raw > CONFIG_AGENT_CHAT_HISTORY_RAW_MAX ||
				  history_total_ser(hc) > CONFIG_AGENT_CHAT_HISTORY_FRAGMENT_SIZE)) {
		history_pop(hc);
	}
	return 0;
}

/* Reverse the ring entries [from, to) of @p hc, with their serialized sizes. */
static void history_reverse(struct history_ctx *hc, uint32_t from, uint32_t to)
{
	struct conv_history_msg *msgs = hc->out->msgs;

	while (from + 1u < to) {
		struct conv_history_msg m = msgs[from];
		uint32_t ser = hc->ser_len[from];

		to--;
		msgs[from] = msgs[to];
		hc->ser_len[from] = hc->ser_len[to];
		msgs[to] = m;
		hc->ser_len[to] = ser;
		from++;
	}
}

/*
 * Rotate the ring in place so that the window starts at msgs[0] and runs in order (three
 * reversals): the fill below then reads and writes each entry at the same index.
 */
static void history_linearize(struct history_ctx *hc)
{
	if (hc->head == 0u) {
		return;
	}
	history_reverse(hc, 0, hc->head);
	history_reverse(hc, hc->head, CONV_HISTORY_MESSAGES_MAX);
	history_reverse(hc, 0, CONV_HISTORY_MESSAGES_MAX);
	hc->head = 0;
}

/*
 * Second pass, over the linearized window: copy its texts into out->raw, checking each
 * record again. The first pass kept the window within the raw bound; a text that would not
 * fit the buffer all the same (the medium changed under the reader) is an error, never an
 * overflow.
 */
static int history_fill(struct conv_scan *s, struct history_ctx *hc)
{
	struct conv_history *out = hc->out;
	uint32_t raw_off = 0;

	for (uint32_t i = 0; i < hc->count; i++) {
		struct conv_history_msg *m = &out->msgs[i];
		uint8_t head[CONV_RECORD_HEAD_BYTES];
		uint8_t crc_raw[CONV_RECORD_CRC_BYTES];
		uint32_t crc;
		uint8_t type;
		uint16_t len;
		int err;

		err = agent_fs_seek(s->file, (int32_t)m->file_pos, AGENT_FS_SEEK_SET);
		if (err == 0) {
			err = conv_read_exact(s->file, head, sizeof(head));
		}
		if (err == 0) {
			err = conv_record_head_decode(head, &type, &len);
		}
		if (err == 0 && (type != m->role || len != m->len)) {
			err = -EIO; /* the medium changed under the reader */
		}
		if (err == 0 && (size_t)len > sizeof(out->raw) - raw_off) {
			err = -EIO;
		}
		if (err == 0) {
			err = conv_read_exact(s->file, out->raw + raw_off, len);
		}
		if (err == 0) {
			err = conv_read_exact(s->file, crc_raw, sizeof(crc_raw));
		}
		if (err != 0) {
			return err;
		}
		crc = conv_crc32(conv_crc32(0, head, sizeof(head)), out->raw + raw_off, len);
		if (crc != conv_get_le32(crc_raw)) {
			return -EIO;
		}
		m->offset = raw_off;
		raw_off += len;
	}
	return 0;
}

int conv_store_history(uint8_t slot, struct conv_history *out)
{
	static struct history_ctx hc AGENT_PSRAM_ATTR; /* under the lock; off the stack */
	char path[CONV_PATH_BYTES];
	struct conv_scan s;
	uint8_t *buf;
	int err;

	if (out == NULL) {
		return -EINVAL;
	}
	out->count = 0;
	out->raw_bytes = 0;
	out->serialized_bytes = 0;
	out->truncated = false;
	err = conv_enter();
	if (err != 0) {
		return err;
	}
	if (!conv_slot_valid(slot)) {
		conv_leave();
		return -EINVAL;
	}
	memset(&hc, 0, sizeof(hc));
	hc.out = out;
	buf = conv_io_take();
	err = buf == NULL ? -ENOMEM : conv_walk_slot(slot, buf, history_visit, &hc);
	/* The window starts with a user message. */
	while (err == 0 && hc.count > 0u && out->msgs[hc.head].role != CONV_REC_USER) {
		history_pop(&hc);
	}
	if (err == 0 && hc.count > 0u) {
		history_linearize(&hc);
		conv_slot_path(path, slot, "bin");
		err = conv_scan_open(&s, path, slot, buf);
		if (err == 0) {
			err = history_fill(&s, &hc);
			conv_scan_close(&s);
		}
	}
	conv_io_give(buf);
	conv_leave();
	if (err != 0) {
		out->count = 0;
		return err;
	}
	out->count = hc.count;
	out->raw_bytes = hc.raw;
	out->serialized_bytes = history_total_ser(&hc);
	out->truncated = hc.dropped;
	return 0;
}
