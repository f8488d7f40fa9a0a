/*
 * The reader of packed text (docs/reference-format.md, "Packed text"), with any dictionary:
 * the reference pages' fields (reference.h) and the tool definitions' texts (packed_text.c).
 * Built whether or not the reference pages are.
 */
#include "reference.h"

#include <stdbool.h>
#include <string.h>

void reference_open(struct reference_reader *r, const struct reference_page *page,
		    enum reference_field field)
{
	bool body = field == REFERENCE_BODY;
	bool packed = page->codec != NULL;

	r->codec = page->codec;
	r->src = (const uint8_t *)(body ? page->body : page->contract);
	r->next = 0;
	r->left = body ? page->body_len : page->contract_len;
	r->src_left = packed ? (body ? page->body_size : page->contract_size) : r->left;
	r->depth = 0;
	r->corrupt = false;
}

/*
 * Code @p i of codes packed @p bits to a code, least significant bit first: reads the bytes
 * that hold its bits and no other.
 */
static unsigned int code_at(const uint8_t *codes, size_t i, unsigned int bits)
{
	size_t bit = i * bits;
	const uint8_t *p = codes + bit / 8;
	unsigned int have = 8 - (unsigned int)(bit % 8);
	uint32_t v = (uint32_t)*p >> (bit % 8);

	while (have < bits) {
		v |= (uint32_t)*++p << have;
		have += 8;
	}
	return v & ((1u << bits) - 1u);
}

/* The next byte of packed text, or -1 at its end (or at a corrupt code). */
static int next_packed(struct reference_reader *r)
{
	const struct reference_codec *c = r->codec;
	unsigned int bits = c->code_bits;
	unsigned int code;

	if (r->left == 0) {
		return -1;
	}
	if (bits < REFERENCE_CODE_BITS_MIN || bits > REFERENCE_CODE_BITS_MAX) {
		goto corrupt;
	}
	if (r->depth > 0) {
		code = r->stack[--r->depth];
	} else if (r->src_left > 0) {
		code = code_at(r->src, r->next++, bits);
		r->src_left--;
	} else {
		goto corrupt;
	}
	while (code >= c->literal_count) {
		size_t i = code - c->literal_count;
		unsigned int left;
		unsigned int right;

		if (i >= c->pair_count || r->depth == REFERENCE_CODEC_DEPTH) {
			goto corrupt;
		}
		left = code_at(c->pairs, 2 * i, bits);
		right = code_at(c->pairs, 2 * i + 1, bits);
		if (left >= code || right >= code) {
			goto corrupt;
		}
		r->stack[r->depth++] = (uint16_t)right;
		code = left;
	}
	r->left--;
	return c->literals[code];
corrupt:
	r->corrupt = true;
	r->left = 0;
	return -1;
}

size_t reference_read(struct reference_reader *r, char *buf, size_t size)
{
	size_t n = 0;

	if (r->codec == NULL) {
		n = size < r->left ? size : r->left;
		memcpy(buf, r->src, n);
		r->src += n;
		r->left -= n;
		return n;
	}
	while (n < size) {
		int c = next_packed(r);

		if (c < 0) {
			break;
		}
		buf[n++] = (char)c;
	}
	return n;
}
