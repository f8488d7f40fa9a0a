/*
 * libFuzzer target for the memory tools' embeddings answer parser
 * (app/src/tools/memory_embed_parse.c). The first input byte chooses the required dimension
 * (1..64) and seeds the chunk sizes; the rest is the answer.
 *
 * - Parsed whole, in seeded chunks and one byte at a time, it must give the same result,
 *   reason, error message and vector.
 * - A success has exactly the required dimension of finite numbers and no reason; a failure
 *   has a reason.
 * - The reason and the error message are one line: NUL-terminated within their bounds,
 *   without control characters.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory_embed.h"

#define DIM_MAX 64

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_memory_embed: %s\n", what);
		abort();
	}
}

struct run {
	struct memory_embed_parse p;
	float out[DIM_MAX];
	int rc;
};

static struct run runs[3];

static void parse(struct run *r, const char *data, size_t len, size_t dim, uint8_t seed,
		  size_t fixed)
{
	size_t at = 0;
	uint32_t state = seed * 2654435761u + 1u;

	memset(r->out, 0, sizeof(r->out));
	memory_embed_parse_init(&r->p, r->out, dim);
	while (at < len) {
		size_t n = fixed;

		if (n == 0) {
			state = state * 1103515245u + 12345u;
			n = 1 + (state >> 16) % 37;
		}
		if (n > len - at) {
			n = len - at;
		}
		(void)memory_embed_parse_feed(&r->p, data + at, n);
		at += n;
	}
	r->rc = memory_embed_parse_finish(&r->p);
}

static void one_line(const char *text, size_t max)
{
	size_t len = 0;

	while (len <= max && text[len] != '\0') {
		len++;
	}

	check(len <= max, "a text is not terminated within its bound");
	for (size_t i = 0; i < len; i++) {
		check((unsigned char)text[i] >= 0x20, "a control character in a one-line text");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t dim;

	if (size < 1) {
		return 0;
	}
	dim = 1 + data[0] % DIM_MAX;
	parse(&runs[0], (const char *)data + 1, size - 1, dim, data[0], size);
	parse(&runs[1], (const char *)data + 1, size - 1, dim, data[0], 0);
	parse(&runs[2], (const char *)data + 1, size - 1, dim, data[0], 1);
	for (int i = 1; i < 3; i++) {
		check(runs[i].rc == runs[0].rc, "the result depends on the chunks");
		check(strcmp(runs[i].p.why, runs[0].p.why) == 0, "the reason depends on the chunks");
		check(strcmp(runs[i].p.message, runs[0].p.message) == 0,
		      "the error message depends on the chunks");
		check(memcmp(runs[i].out, runs[0].out, sizeof(runs[0].out)) == 0,
		      "the vector depends on the chunks");
	}
	one_line(runs[0].p.why, MEMORY_EMBED_WHY_MAX);
	one_line(runs[0].p.message, MEMORY_EMBED_MESSAGE_MAX);
	check(runs[0].p.message_len == strlen(runs[0].p.message), "message_len is wrong");
	if (runs[0].rc == 0) {
		check(runs[0].p.dim == dim, "a success of another dimension");
		check(runs[0].p.why[0] == '\0', "a success with a reason");
		for (size_t i = 0; i < dim; i++) {
			float v = runs[0].out[i];

			check(v == v && (double)v < 3.5e38 && (double)v > -3.5e38,
			      "a number that is not finite");
		}
	} else {
		check(runs[0].rc == -EBADMSG, "a failure other than -EBADMSG");
		check(runs[0].p.why[0] != '\0', "a failure without a reason");
	}
	return 0;
}
