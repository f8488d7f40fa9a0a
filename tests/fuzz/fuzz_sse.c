/*
 * libFuzzer target for the SSE decoder (app/src/agent/wire/sse.c). The first input byte chooses a
 * split position in the rest; the rest is decoded in one chunk, in the two chunks of that
 * split, and one byte at a time, and the three runs must report the same events, the same
 * data and the same discard. Each run also checks the callback rules of sse.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sse.h"

/* What one run reported: "E<type>\0<len><data>" per event, "D<len><data>" per discard. */
struct run {
	unsigned char *log;
	size_t len;
	size_t cap;
	size_t data_start; /* where the pending event's data begins in log */
	bool open;         /* on_data was called for the pending event */
	const struct sse_decoder *dec;
};

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_sse: %s\n", what);
		abort();
	}
}

static void add(struct run *r, const void *p, size_t n)
{
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;

		while (cap < r->len + n) {
			cap *= 2;
		}
		r->log = realloc(r->log, cap);
		check(r->log != NULL, "out of memory");
		r->cap = cap;
	}
	if (n > 0) {
		memcpy(r->log + r->len, p, n);
	}
	r->len += n;
}

/* Data is logged in place, then framed as "<marker><len>" when the event ends. */
static int on_data(void *user_data, const char *data, size_t len, bool first)
{
	struct run *r = user_data;

	check(first != r->open, "first flag wrong");
	check(len > 0 || first, "empty on_data that is not the first");
	if (first) {
		unsigned char header[1 + sizeof(size_t)] = {0};

		add(r, header, sizeof(header)); /* filled in when the event ends */
		r->data_start = r->len;
		r->open = true;
	}
	add(r, data, len);
	return 0;
}

static void close_event(struct run *r, unsigned char marker)
{
	size_t n = r->len - r->data_start;
	unsigned char *header = r->log + r->data_start - 1 - sizeof(size_t);

	header[0] = marker;
	memcpy(header + 1, &n, sizeof(n));
	r->open = false;
}

static int on_event(void *user_data, const char *event_type)
{
	struct run *r = user_data;
	size_t type_len = strlen(event_type);

	check(r->open, "on_event without data");
	check(type_len <= SSE_EVENT_TYPE_MAX, "event type too long");
	close_event(r, 'E');
	add(r, event_type, type_len + 1);
	add(r, sse_event_type_truncated(r->dec) ? "T" : "F", 1);
	return 0;
}

static void on_discard(void *user_data)
{
	struct run *r = user_data;

	check(r->open, "on_discard without data");
	close_event(r, 'D');
}

static const struct sse_callbacks callbacks = {
	.on_data = on_data,
	.on_event = on_event,
	.on_discard = on_discard,
};

/* Decodes @p data in chunks of @p chunk bytes, the first one @p first bytes long. */
static void decode(struct run *r, const char *data, size_t size, size_t first, size_t chunk)
{
	struct sse_decoder dec;
	size_t off = 0;

	memset(r, 0, sizeof(*r));
	r->dec = &dec;
	sse_init(&dec, &callbacks, r);
	check(sse_feed(&dec, data, first) == 0, "feed failed");
	off = first;
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk;

		check(sse_feed(&dec, data + off, n) == 0, "feed failed");
		off += n;
	}
	check(sse_finish(&dec) == 0, "finish failed");
	check(!r->open, "event left open after finish");
}

static void same(const struct run *a, const struct run *b, const char *what)
{
	check(a->len == b->len && (a->len == 0 || memcmp(a->log, b->log, a->len) == 0), what);
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
	struct run whole;
	struct run split;
	struct run bytes;

	if (size == 0) {
		return 0;
	}
	const char *data = (const char *)input + 1;
	size_t n = size - 1;
	/* Every position 0..n is reachable while n <= 255; above that they are spread. */
	size_t pos = (size_t)input[0] * n / 255;

	decode(&whole, data, n, n, n ? n : 1);
	decode(&split, data, n, pos, n ? n : 1);
	decode(&bytes, data, n, 0, 1);
	same(&whole, &split, "two chunks differ from one chunk");
	same(&whole, &bytes, "1-byte chunks differ from one chunk");
	free(whole.log);
	free(split.log);
	free(bytes.log);
	return 0;
}
