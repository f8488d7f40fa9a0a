/*
 * The conversation file format (docs/conversation-format.md): CRC-32, the header, record
 * and trailer encodings and their checks. Pure functions over caller buffers; the store
 * (conv_store.c) does the file I/O.
 */
#ifndef AGENT_CONV_FORMAT_H
#define AGENT_CONV_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONV_VERSION	       2u /* written; version 1 files are read too */
#define CONV_VERSION_MIN       1u
#define CONV_HEADER_BYTES      48u
#define CONV_RECORD_HEAD_BYTES 4u /* type, flags, length */
#define CONV_RECORD_CRC_BYTES  4u
#define CONV_RECORD_OVERHEAD   (CONV_RECORD_HEAD_BYTES + CONV_RECORD_CRC_BYTES)
#define CONV_TRAILER_BYTES     12u
#define CONV_PAYLOAD_MAX       65535u
#define CONV_META_RECORDS      3u /* provider, model, title */
/* The smallest valid file: header, three empty meta records, trailer. */
#define CONV_FILE_MIN_BYTES                                                                   \
	(CONV_HEADER_BYTES + CONV_META_RECORDS * CONV_RECORD_OVERHEAD + CONV_TRAILER_BYTES)

/* Bounds of the payloads (bytes, no terminator). */
#define CONV_PROVIDER_MAX    31u
#define CONV_TITLE_MAX	     63u
#define CONV_TOOL_LINE_MAX   255u
#define CONV_RESPONSE_ID_MAX 95u /* PROVIDER_ID_MAX */
#define CONV_USAGE_BYTES     16u
#define CONV_TOOL_ID_BYTES   2u /* a tool id record's payload: u16, exactly (version 2) */
#define CONV_SLOT_MAX	     32u /* the slot field's range, 1..32 */

enum conv_record_type {
	CONV_REC_PROVIDER = 1,
	CONV_REC_MODEL = 2,
	CONV_REC_TITLE = 3,
	CONV_REC_USER = 16,
	CONV_REC_ASSISTANT = 17,
	CONV_REC_TOOL = 18,
	CONV_REC_RESPONSE_ID = 19,
	CONV_REC_USAGE = 20,
	CONV_REC_TOOL_ID = 21, /* version 2: the numeric id of the tool record before it */
};

struct conv_header {
	uint8_t version; /* decoded: CONV_VERSION_MIN..CONV_VERSION; encode writes CONV_VERSION */
	uint8_t slot;
	uint8_t protocol; /* enum agent_protocol */
	uint32_t conv_id;
	uint32_t sequence;
	int64_t created_s;
	int64_t updated_s;
	uint32_t turns;
	uint32_t records;
	uint32_t file_bytes;
};

/** CRC-32/ISO-HDLC (zlib's crc32): pass 0 to start, the previous result to continue. */
uint32_t conv_crc32(uint32_t crc, const void *data, size_t len);

void conv_header_encode(const struct conv_header *hdr, uint8_t out[CONV_HEADER_BYTES]);
/**
 * Decode and check magic, version (1 or 2), size, header CRC, slot range (1..32), the file size
 * (at least CONV_FILE_MIN_BYTES) and the record count (at least the meta records, at
 * most what the size allows). 0 or -EBADMSG.
 */
int conv_header_decode(const uint8_t in[CONV_HEADER_BYTES], struct conv_header *hdr);

void conv_record_head_encode(uint8_t type, uint16_t len, uint8_t out[CONV_RECORD_HEAD_BYTES]);
/** Type and length of a record head; -EBADMSG when the flags are not 0. */
int conv_record_head_decode(const uint8_t in[CONV_RECORD_HEAD_BYTES], uint8_t *type,
			    uint16_t *len);

void conv_trailer_encode(uint32_t file_bytes, uint32_t file_crc,
			 uint8_t out[CONV_TRAILER_BYTES]);
/**
 * Check a trailer against the file size and the CRC-32 of every byte before its CRC field
 * (@p crc_before_field: the running CRC including the trailer's first 8 bytes).
 * 0 or -EBADMSG.
 */
int conv_trailer_check(const uint8_t in[CONV_TRAILER_BYTES], uint32_t file_bytes,
		       uint32_t crc_before_field);

void conv_put_le32(uint8_t *out, uint32_t v);
uint32_t conv_get_le32(const uint8_t *in);

/**
 * Bytes that json_writer's jw_string_n() writes for @p text between the quotes: quote and
 * backslash 2, control characters 2 or 6, U+2028/U+2029 6, each maximal invalid UTF-8
 * subpart 3 (its U+FFFD), everything else as is.
 */
size_t conv_json_escaped_len(const char *text, size_t len);

/**
 * The same for a part of a longer text: unless @p final, stops before a UTF-8 sequence that
 * the end of the part cuts; *consumed is the bytes accounted for (the rest belongs to the
 * next part).
 */
size_t conv_json_escaped_part(const char *text, size_t len, bool final, size_t *consumed);

/** Longest prefix of @p text of at most @p max bytes that ends at a character boundary. */
size_t conv_utf8_prefix(const char *text, size_t len, size_t max);

#endif /* AGENT_CONV_FORMAT_H */
