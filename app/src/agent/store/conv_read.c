/*
 * Reading the conversation store (conv_store.h): records delivered in pieces after their CRC
 * was checked, the last Responses id, and the stored file copied as it is (export).
 */
#include "conv_store_internal.h"

#include <errno.h>
#include <string.h>

#include "agent_port.h"

/* ---- reading ------------------------------------------------------------------------------ */

/* Deliver the current record's payload in pieces once its CRC is known to be good. */
static int deliver_record(struct conv_scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
			  uint8_t type, uint16_t len, conv_read_fn fn, void *user_data)
{
	struct conv_chunk chunk = {
		.type = type,
		.record = s->index,
		.total_len = len,
		.data = s->buf,
	};
	uint32_t payload_pos = s->pos + CONV_RECORD_HEAD_BYTES;
	uint32_t crc_again;
	int err;

	err = conv_scan_payload(s, head, len, NULL);
	if (err != 0) {
		return err;
	}
	if (len <= CONV_IO_BYTES) {
		/* The payload is still in the block: one read was enough. */
		chunk.len = len;
		chunk.last = true;
		return fn(&chunk, user_data);
	}
	/*
	 * Larger: read it again and hand it out piece by piece. A medium that returns other
	 * bytes the second time is caught before the last piece (-EIO).
	 */
	err = agent_fs_seek(s->file, (int32_t)payload_pos, AGENT_FS_SEEK_SET);
	if (err != 0) {
		return err;
	}
	crc_again = conv_crc32(0, head, CONV_RECORD_HEAD_BYTES);
	for (uint32_t off = 0; off < len; off += (uint32_t)chunk.len) {
		chunk.len = len - off < CONV_IO_BYTES ? len - off : CONV_IO_BYTES;
		err = conv_read_exact(s->file, s->buf, chunk.len);
		if (err != 0) {
			return err;
		}
		crc_again = conv_crc32(crc_again, s->buf, chunk.len);
		chunk.offset = off;
		chunk.last = off + chunk.len == len;
		if (chunk.last && crc_again != s->rec_crc) {
			return -EIO;
		}
		err = fn(&chunk, user_data);
		if (err != 0) {
			return err;
		}
	}
	/* Back to where the scan stands: after the record's CRC. */
	return agent_fs_seek(s->file, (int32_t)(payload_pos + len + CONV_RECORD_CRC_BYTES),
			     AGENT_FS_SEEK_SET);
}

struct read_ctx {
	conv_read_fn fn;
	void *user_data;
};

static int read_visit(struct conv_scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES], uint8_t type,
		      uint16_t len, void *ctx)
{
	struct read_ctx *rc = ctx;

	return deliver_record(s, head, type, len, rc->fn, rc->user_data);
}

/* Common frame of the reading calls: lock, slot check, I/O block. */
static int with_slot(uint8_t slot, conv_visit_fn visit, void *ctx)
{
	uint8_t *buf;
	int err = conv_enter();

	if (err != 0) {
		return err;
	}
	if (!conv_slot_valid(slot)) {
		conv_leave();
		return -EINVAL;
	}
	buf = conv_io_take();
	err = buf == NULL ? -ENOMEM : conv_walk_slot(slot, buf, visit, ctx);
	conv_io_give(buf);
	conv_leave();
	return err;
}

int conv_store_read(uint8_t slot, conv_read_fn fn, void *user_data)
{
	struct read_ctx ctx = {fn, user_data};

	if (fn == NULL) {
		return -EINVAL;
	}
	return with_slot(slot, read_visit, &ctx);
}

struct response_id_ctx {
	char *buf;
	size_t cap;
	int len; /* -ENOENT until one is found */
};

static int response_id_visit(struct conv_scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
			     uint8_t type, uint16_t len, void *ctx)
{
	struct response_id_ctx *rc = ctx;
	int err = conv_scan_payload(s, head, len, NULL);

	if (err != 0 || type != CONV_REC_RESPONSE_ID) {
		return err;
	}
	/* The writer never stores a longer id; a reader cannot use a cut one. */
	if (len > CONV_RESPONSE_ID_MAX) {
		return -EBADMSG;
	}
	if ((size_t)len + 1u > rc->cap) {
		return -ENOSPC;
	}
	memcpy(rc->buf, s->buf, len);
	rc->buf[len] = '\0';
	rc->len = len;
	return 0;
}

int conv_store_last_response_id(uint8_t slot, char *buf, size_t len)
{
	struct response_id_ctx ctx = {buf, len, -ENOENT};
	int err;

	if (buf == NULL || len == 0u) {
		return -EINVAL;
	}
	buf[0] = '\0';
	err = with_slot(slot, response_id_visit, &ctx);
	if (err != 0) {
		buf[0] = '\0';
		return err;
	}
	return ctx.len;
}

/* ---- export ------------------------------------------------------------------------------- */

int conv_store_export(uint8_t slot, uint32_t off, void *buf, size_t len, uint32_t *total)
{
	char path[CONV_PATH_BYTES];
	struct agent_dirent entry;
	struct agent_file *file;
	size_t done = 0;
	int err = conv_enter();

	if (err != 0) {
		return err;
	}
	if (!conv_slot_valid(slot)) {
		conv_leave();
		return -EINVAL;
	}
	conv_slot_path(path, slot, "bin");
	err = agent_fs_stat(path, &entry);
	if (err != 0) {
		conv_leave();
		return err;
	}
	*total = entry.size;
	if (off > entry.size) {
		conv_leave();
		return -ERANGE;
	}
	if (len > entry.size - off) {
		len = entry.size - off;
	}
	err = agent_fs_open(&file, path, AGENT_FS_O_READ);
	if (err == 0 && off > 0) {
		err = agent_fs_seek(file, (int32_t)off, AGENT_FS_SEEK_SET);
		if (err != 0) {
			(void)agent_fs_close(file);
		}
	}
	while (err == 0 && done < len) {
		int n = agent_fs_read(file, (uint8_t *)buf + done, len - done);

		if (n <= 0) {
			err = n < 0 ? n : -EIO; /* shorter than its size: changed under us */
			(void)agent_fs_close(file);
			break;
		}
		done += (size_t)n;
	}
	if (err == 0) {
		err = agent_fs_close(file);
	}
	conv_leave();
	return err != 0 ? err : (int)done;
}
