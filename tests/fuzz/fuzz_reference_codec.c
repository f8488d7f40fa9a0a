/*
 * libFuzzer target for the reader of packed reference pages (reference_read() in
 * app/src/tools/reference.c, docs/reference-format.md "Packed text"). The input is a
 * dictionary and a field, any bytes: [literal count][pair count][width and piece][literals]
 * [pairs][text length, 2 bytes][codes...], each table copied to a buffer of its exact size so
 * that a read past it is caught. The third byte's top three bits give the code width, 8 to
 * 15 bits (13 to 15 are out of bounds: every such field is corrupt), its low five bits the
 * piece size; pairs and codes are packed at that width. For any input: the reader gives at most the field's length,
 * only bytes of the literal table, the same bytes in any piece size, and exactly what a
 * recursive decoder written apart from it gives, with the same verdict on corruption.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* reference.c's reference_builtin() names it; no page here. */
const struct reference_index reference_builtin_index = {.pages = NULL, .count = 0};

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_reference_codec: %s\n", what);
		abort();
	}
}

struct model {
	const struct reference_codec *c;
	uint8_t *out;
	size_t n;
	size_t len;
};

/*
 * Appends the bytes of @p code until the length is reached; false when a code is corrupt
 * before that. @p pending is the reader's stack depth: the right halves still to read.
 */
/* Code @p i of @p codes packed @p bits wide, least significant bit first, a bit at a time. */
static unsigned int model_code(const uint8_t *codes, size_t i, unsigned int bits)
{
	unsigned int v = 0;

	for (unsigned int b = 0; b < bits; b++) {
		size_t at = i * bits + b;

		v |= (unsigned int)((codes[at / 8] >> (at % 8)) & 1u) << b;
	}
	return v;
}

static bool expand(struct model *m, unsigned int code, unsigned int pending)
{
	unsigned int left;
	unsigned int right;
	size_t i;

	if (m->n == m->len) {
		return true;
	}
	if (code < m->c->literal_count) {
		m->out[m->n++] = m->c->literals[code];
		return true;
	}
	if (code - m->c->literal_count >= m->c->pair_count || pending == REFERENCE_CODEC_DEPTH) {
		return false;
	}
	i = code - m->c->literal_count;
	left = model_code(m->c->pairs, 2 * i, m->c->code_bits);
	right = model_code(m->c->pairs, 2 * i + 1, m->c->code_bits);
	if (left >= code || right >= code) {
		return false;
	}
	return expand(m, left, pending + 1) && expand(m, right, pending);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reference_codec codec;
	struct reference_page page;
	struct reference_reader r;
	struct model m;
	uint8_t *literals;
	uint8_t *pairs;
	uint8_t *codes;
	uint8_t *got;
	size_t literal_count;
	size_t pair_count;
	size_t pair_bytes;
	unsigned int bits;
	bool bits_ok;
	size_t count;
	size_t len;
	size_t n = 0;
	size_t piece;
	size_t k;
	bool model_ok = true;

	if (size < 4) {
		return 0;
	}
	literal_count = data[0];
	pair_count = data[1];
	bits = 8u + (data[2] >> 5);
	bits_ok = bits >= REFERENCE_CODE_BITS_MIN && bits <= REFERENCE_CODE_BITS_MAX;
	piece = (size_t)((data[2] & 31u) % 17) + 1;
	pair_bytes = (2 * pair_count * bits + 7) / 8;
	data += 3;
	size -= 3;
	if (literal_count + pair_bytes + 2 > size) {
		return 0;
	}
	/* Exact sizes (malloc(0) may give NULL: one byte more, never read when the size is 0). */
	literals = malloc(literal_count + 1);
	pairs = malloc(pair_bytes + (pair_bytes == 0));
	check(literals != NULL && pairs != NULL, "out of memory");
	memcpy(literals, data, literal_count);
	memcpy(pairs, data + literal_count, pair_bytes);
	data += literal_count + pair_bytes;
	size -= literal_count + pair_bytes;
	len = (size_t)data[0] | (size_t)data[1] << 8;
	data += 2;
	size -= 2;
	count = size * 8 / bits > UINT16_MAX ? UINT16_MAX : size * 8 / bits;
	codes = malloc((count * bits + 7) / 8 + (count == 0));
	got = malloc(len + 1);
	m.out = malloc(len + 1);
	check(codes != NULL && got != NULL && m.out != NULL, "out of memory");
	memcpy(codes, data, (count * bits + 7) / 8);

	codec = (struct reference_codec){.literals = literals, .pairs = pairs,
					 .literal_count = (uint16_t)literal_count,
					 .pair_count = (uint16_t)pair_count,
					 .code_bits = (uint8_t)bits};
	page = (struct reference_page){.topic = "t", .summary = "s", .keywords = "k",
				       .body = (const char *)codes, .contract = "",
				       .codec = &codec, .body_len = (uint16_t)len,
				       .body_size = (uint16_t)count};
	reference_open(&r, &page, REFERENCE_BODY);
	for (;;) {
		size_t want = len - n < piece ? len - n : piece;
		size_t got_n = reference_read(&r, (char *)got + n, want);

		check(got_n <= want, "more than asked");
		if (got_n == 0) {
			break;
		}
		n += got_n;
	}
	check(n <= len, "more than the field's length");
	check(reference_read(&r, (char *)got, len) == 0, "bytes after the end");

	m.c = &codec;
	m.n = 0;
	m.len = len;
	if (!bits_ok) {
		model_ok = len == 0; /* an empty field reads as empty whatever the width */
	}
	for (k = 0; k < count && model_ok && m.n < len; k++) {
		model_ok = expand(&m, model_code(codes, k, bits), 0);
	}
	if (m.n < len) {
		model_ok = false;
	}
	check(m.n == n && memcmp(m.out, got, n) == 0, "not the bytes of the recursive decoder");
	check(r.corrupt == !model_ok, "not the recursive decoder's verdict");
	for (k = 0; k < n; k++) {
		check(memchr(literals, got[k], literal_count) != NULL, "a byte that is no literal");
	}
	free(literals);
	free(pairs);
	free(codes);
	free(got);
	free(m.out);
	return 0;
}
