/*
 * Walking a conversation file record by record (conv_store_internal.h): the header, each
 * record's head, payload and CRC through the I/O block, the running checksum of the whole
 * file, and the trailer. Every reader and the commit's copy go through here, so a file is
 * checked the same way wherever it is read.
 */
#include "conv_store_internal.h"

#include <errno.h>
#include <string.h>

#include "agent_port.h"

/* ---- records ------------------------------------------------------------------------------ */

/* Open @p path and check its header against @p slot. */
int conv_scan_open(struct conv_scan *s, const char *path, uint8_t slot, uint8_t *buf)
{
	uint8_t raw[CONV_HEADER_BYTES];
	int err;

	memset(s, 0, sizeof(*s));
	s->buf = buf;
	err = agent_fs_open(&s->file, path, AGENT_FS_O_READ);
	if (err != 0) {
		s->file = NULL;
		return err;
	}
	err = conv_read_exact(s->file, raw, sizeof(raw));
	if (err == 0) {
		err = conv_header_decode(raw, &s->hdr);
	}
	if (err == 0 && s->hdr.slot != slot) {
		err = -EBADMSG;
	}
	if (err != 0) {
		(void)agent_fs_close(s->file);
		s->file = NULL;
		return err;
	}
	s->crc = conv_crc32(0, raw, sizeof(raw));
	s->pos = CONV_HEADER_BYTES;
	return 0;
}

void conv_scan_close(struct conv_scan *s)
{
	if (s->file != NULL) {
		(void)agent_fs_close(s->file);
		s->file = NULL;
	}
}

/* Where the records end and the trailer starts. */
static uint32_t scan_records_end(const struct conv_scan *s)
{
	return s->hdr.file_bytes - CONV_TRAILER_BYTES;
}

/*
 * Read the next record's head; checks that the record fits before the trailer and that the
 * meta records come first. On success *type and *len describe it and the payload is next.
 */
int conv_scan_head(struct conv_scan *s, uint8_t head[CONV_RECORD_HEAD_BYTES], uint8_t *type,
		   uint16_t *len)
{
	int err;

	if (s->index >= s->hdr.records) {
		return -EBADMSG;
	}
	err = conv_read_exact(s->file, head, CONV_RECORD_HEAD_BYTES);
	if (err == 0) {
		err = conv_record_head_decode(head, type, len);
	}
	if (err != 0) {
		return err;
	}
	if ((uint64_t)s->pos + CONV_RECORD_OVERHEAD + *len > scan_records_end(s)) {
		return -EBADMSG;
	}
	/* Records 0..2 are provider, model and title; none of those types appear later. */
	if (s->index < CONV_META_RECORDS) {
		if (*type != CONV_REC_PROVIDER + s->index) {
			return -EBADMSG;
		}
	} else if (*type == CONV_REC_PROVIDER || *type == CONV_REC_MODEL ||
		   *type == CONV_REC_TITLE) {
		return -EBADMSG;
	}
	/* Version 2: a tool id is 2 bytes and follows a tool record (version 1: unknown). */
	if (*type == CONV_REC_TOOL_ID && s->hdr.version >= 2u &&
	    (*len != CONV_TOOL_ID_BYTES || s->last_type != CONV_REC_TOOL)) {
		return -EBADMSG;
	}
	return 0;
}

/* Account for a record whose head, payload and CRC were read and checked. */
void conv_scan_done(struct conv_scan *s, uint8_t type, uint16_t len)
{
	s->pos += CONV_RECORD_OVERHEAD + len;
	s->index++;
	s->last_type = type;
	if (type == CONV_REC_USER) {
		s->users++;
	}
}

int conv_sink_put(struct conv_sink *sink, const void *data, size_t len)
{
	if (sink == NULL) {
		return 0;
	}
	sink->crc = conv_crc32(sink->crc, data, len);
	return agent_fs_write_all(sink->file, data, len);
}

/*
 * Read the payload and CRC of the current record through the I/O block, checking the CRC;
 * each piece is also written to @p sink when not NULL.
 */
int conv_scan_payload(struct conv_scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
		      uint16_t len, struct conv_sink *sink)
{
	uint32_t rec_crc = conv_crc32(0, head, CONV_RECORD_HEAD_BYTES);
	uint8_t crc_raw[CONV_RECORD_CRC_BYTES];
	size_t left = len;
	int err;

	s->crc = conv_crc32(s->crc, head, CONV_RECORD_HEAD_BYTES);
	err = conv_sink_put(sink, head, CONV_RECORD_HEAD_BYTES);
	while (err == 0 && left > 0u) {
		size_t n = left < CONV_IO_BYTES ? left : CONV_IO_BYTES;

		err = conv_read_exact(s->file, s->buf, n);
		if (err != 0) {
			return err;
		}
		rec_crc = conv_crc32(rec_crc, s->buf, n);
		s->crc = conv_crc32(s->crc, s->buf, n);
		err = conv_sink_put(sink, s->buf, n);
		left -= n;
	}
	if (err == 0) {
		err = conv_read_exact(s->file, crc_raw, sizeof(crc_raw));
	}
	if (err != 0) {
		return err;
	}
	if (conv_get_le32(crc_raw) != rec_crc) {
		return -EBADMSG;
	}
	s->rec_crc = rec_crc;
	s->crc = conv_crc32(s->crc, crc_raw, sizeof(crc_raw));
	return conv_sink_put(sink, crc_raw, sizeof(crc_raw));
}

/* After the last record: counts, trailer, and nothing after it. */
int conv_scan_finish(struct conv_scan *s)
{
	uint8_t trailer[CONV_TRAILER_BYTES];
	uint8_t extra;
	int err;

	if (s->index != s->hdr.records || s->users != s->hdr.turns ||
	    s->pos != scan_records_end(s)) {
		return -EBADMSG;
	}
	err = conv_read_exact(s->file, trailer, sizeof(trailer));
	if (err != 0) {
		return err;
	}
	err = conv_trailer_check(trailer, s->hdr.file_bytes, conv_crc32(s->crc, trailer, 8));
	if (err != 0) {
		return err;
	}
	err = agent_fs_read(s->file, &extra, 1);
	if (err < 0) {
		return err;
	}
	return err == 0 ? 0 : -EBADMSG;
}

/* Check a whole file: 0 valid, -EBADMSG damaged, -ENOENT missing, another fs error. */
int conv_check_file(const char *path, uint8_t slot, uint8_t *buf, struct conv_header *hdr)
{
	struct conv_scan s;
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	uint8_t type;
	uint16_t len;
	int err;

	err = conv_scan_open(&s, path, slot, buf);
	if (err != 0) {
		return err;
	}
	while (err == 0 && s.index < s.hdr.records) {
		err = conv_scan_head(&s, head, &type, &len);
		if (err == 0) {
			err = conv_scan_payload(&s, head, len, NULL);
		}
		if (err == 0) {
			conv_scan_done(&s, type, len);
		}
	}
	if (err == 0) {
		err = conv_scan_finish(&s);
	}
	if (err == 0 && hdr != NULL) {
		*hdr = s.hdr;
	}
	conv_scan_close(&s);
	return err;
}

/* Read a meta record (the next one) into a string of at most @p max bytes. */
int conv_scan_meta(struct conv_scan *s, char *out, size_t max)
{
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	uint8_t type;
	uint16_t len;
	int err;

	err = conv_scan_head(s, head, &type, &len);
	if (err != 0) {
		return err;
	}
	if (len > max || len > CONV_IO_BYTES) {
		return -EBADMSG;
	}
	err = conv_scan_payload(s, head, len, NULL);
	if (err != 0) {
		return err;
	}
	memcpy(out, s->buf, len);
	out[len] = '\0';
	conv_scan_done(s, type, len);
	return 0;
}

/* ---- walking a slot ------------------------------------------------------------------------ */

/* Every record of @p slot to @p visit, then the trailer; lock held. */
int conv_walk_slot(uint8_t slot, uint8_t *buf, conv_visit_fn visit, void *ctx)
{
	char path[CONV_PATH_BYTES];
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	struct conv_scan s;
	uint8_t type;
	uint16_t len;
	int err;

	conv_slot_path(path, slot, "bin");
	err = conv_scan_open(&s, path, slot, buf);
	while (err == 0 && s.index < s.hdr.records) {
		err = conv_scan_head(&s, head, &type, &len);
		if (err == 0) {
			err = visit(&s, head, type, len, ctx);
		}
		if (err == 0) {
			conv_scan_done(&s, type, len);
		}
	}
	if (err == 0) {
		err = conv_scan_finish(&s);
	}
	conv_scan_close(&s);
	return err;
}
