/*
 * Encoding and checks of the conversation file format (docs/conversation-format.md).
 */
#include "conv_format.h"

#include <errno.h>
#include <string.h>

#include "utf8.h"

static const uint8_t header_magic[4] = {'A', 'G', 'C', 'V'};
static const uint8_t trailer_magic[4] = {'A', 'G', 'C', 'E'};

/* Four bits at a time: a 64-byte table keeps the footprint small on a microcontroller. */
static const uint32_t crc_nibble[16] = {
	0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
	0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
	0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

uint32_t conv_crc32(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	crc = ~crc;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		crc = (crc >> 4) ^ crc_nibble[crc & 0xFu];
		crc = (crc >> 4) ^ crc_nibble[crc & 0xFu];
	}
	return ~crc;
}

void conv_put_le32(uint8_t *out, uint32_t v)
{
	out[0] = (uint8_t)v;
	out[1] = (uint8_t)(v >> 8);
	out[2] = (uint8_t)(v >> 16);
	out[3] = (uint8_t)(v >> 24);
}

uint32_t conv_get_le32(const uint8_t *in)
{
	return (uint32_t)in[0] | ((uint32_t)in[1] << 8) | ((uint32_t)in[2] << 16) |
	       ((uint32_t)in[3] << 24);
}

static void put_le64(uint8_t *out, int64_t v)
{
	uint64_t u = (uint64_t)v;

	conv_put_le32(out, (uint32_t)u);
	conv_put_le32(out + 4, (uint32_t)(u >> 32));
}

static int64_t get_le64(const uint8_t *in)
{
	uint64_t u = (uint64_t)conv_get_le32(in) | ((uint64_t)conv_get_le32(in + 4) << 32);

	return (int64_t)u;
}

void conv_header_encode(const struct conv_header *hdr, uint8_t out[CONV_HEADER_BYTES])
{
	memcpy(out, header_magic, sizeof(header_magic));
	out[4] = CONV_VERSION;
	out[5] = CONV_HEADER_BYTES;
	out[6] = hdr->slot;
	out[7] = hdr->protocol;
	conv_put_le32(out + 8, hdr->conv_id);
	conv_put_le32(out + 12, hdr->sequence);
	put_le64(out + 16, hdr->created_s);
	put_le64(out + 24, hdr->updated_s);
	conv_put_le32(out + 32, hdr->turns);
	conv_put_le32(out + 36, hdr->records);
	conv_put_le32(out + 40, hdr->file_bytes);
	conv_put_le32(out + 44, conv_crc32(0, out, 44));
}

int conv_header_decode(const uint8_t in[CONV_HEADER_BYTES], struct conv_header *hdr)
{
	uint32_t room;

	if (memcmp(in, header_magic, sizeof(header_magic)) != 0 || in[4] < CONV_VERSION_MIN ||
	    in[4] > CONV_VERSION || in[5] != CONV_HEADER_BYTES ||
	    conv_get_le32(in + 44) != conv_crc32(0, in, 44)) {
		return -EBADMSG;
	}
	hdr->version = in[4];
	hdr->slot = in[6];
	hdr->protocol = in[7];
	hdr->conv_id = conv_get_le32(in + 8);
	hdr->sequence = conv_get_le32(in + 12);
	hdr->created_s = get_le64(in + 16);
	hdr->updated_s = get_le64(in + 24);
	hdr->turns = conv_get_le32(in + 32);
	hdr->records = conv_get_le32(in + 36);
	hdr->file_bytes = conv_get_le32(in + 40);
	if (hdr->slot == 0u || hdr->slot > CONV_SLOT_MAX || hdr->file_bytes < CONV_FILE_MIN_BYTES ||
	    hdr->records < CONV_META_RECORDS) {
		return -EBADMSG;
	}
	/* Every record takes at least its overhead, so the size bounds the count. */
	room = hdr->file_bytes - CONV_HEADER_BYTES - CONV_TRAILER_BYTES;
	if (hdr->records > room / CONV_RECORD_OVERHEAD || hdr->turns > hdr->records) {
		return -EBADMSG;
	}
	return 0;
}

void conv_record_head_encode(uint8_t type, uint16_t len, uint8_t out[CONV_RECORD_HEAD_BYTES])
{
	out[0] = type;
	out[1] = 0;
	out[2] = (uint8_t)len;
	out[3] = (uint8_t)(len >> 8);
}

int conv_record_head_decode(const uint8_t in[CONV_RECORD_HEAD_BYTES], uint8_t *type,
			    uint16_t *len)
{
	if (in[1] != 0u) {
		return -EBADMSG;
	}
	*type = in[0];
	*len = (uint16_t)(in[2] | (in[3] << 8));
	return 0;
}

void conv_trailer_encode(uint32_t file_bytes, uint32_t file_crc, uint8_t out[CONV_TRAILER_BYTES])
{
	memcpy(out, trailer_magic, sizeof(trailer_magic));
	conv_put_le32(out + 4, file_bytes);
	conv_put_le32(out + 8, file_crc);
}

int conv_trailer_check(const uint8_t in[CONV_TRAILER_BYTES], uint32_t file_bytes,
		       uint32_t crc_before_field)
{
	if (memcmp(in, trailer_magic, sizeof(trailer_magic)) != 0 ||
	    conv_get_le32(in + 4) != file_bytes || conv_get_le32(in + 8) != crc_before_field) {
		return -EBADMSG;
	}
	return 0;
}

/*
 * The UTF-8 sequence at @p p: its length when valid (> 0); else 0 with *subpart the length
 * of the maximal invalid subpart, and *cut true when the bytes seen were a valid start that
 * @p avail ended.
 */
static size_t utf8_valid_at(const uint8_t *p, size_t avail, size_t *subpart, bool *cut)
{
	uint8_t lo;
	uint8_t hi;
	uint8_t need = utf8_lead(p[0], &lo, &hi);
	size_t k;

	*cut = false;
	for (k = 1; k <= need && k < avail; k++) {
		if (p[k] < lo || p[k] > hi) {
			break;
		}
		lo = 0x80;
		hi = 0xBF;
	}
	if (need != 0u && k > need) {
		return k;
	}
	*cut = need != 0u && k == avail;
	*subpart = need != 0u ? k : 1u;
	return 0;
}

size_t conv_json_escaped_part(const char *text, size_t len, bool final, size_t *consumed)
{
	const uint8_t *p = (const uint8_t *)text;
	size_t out = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t c = p[i];
		size_t n;
		size_t subpart;
		bool cut;

		if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
		    c == '\t') {
			out += 2u;
			i++;
			continue;
		}
		if (c < 0x20u) {
			out += 6u;
			i++;
			continue;
		}
		if (c < 0x80u) {
			out++;
			i++;
			continue;
		}
		n = utf8_valid_at(p + i, len - i, &subpart, &cut);
		if (n == 0u && cut && !final) {
			break; /* the rest of the sequence is in the next part */
		}
		if (n == 0u) {
			out += 3u; /* U+FFFD for the maximal invalid subpart */
			i += subpart;
			continue;
		}
		if (n == 3u && c == 0xE2 && p[i + 1] == 0x80 && (p[i + 2] == 0xA8 || p[i + 2] == 0xA9)) {
			out += 6u;
		} else {
			out += n;
		}
		i += n;
	}
	*consumed = i;
	return out;
}

size_t conv_json_escaped_len(const char *text, size_t len)
{
	size_t consumed;

	return conv_json_escaped_part(text, len, true, &consumed);
}

size_t conv_utf8_prefix(const char *text, size_t len, size_t max)
{
	return utf8_prefix(text, len, max);
}
