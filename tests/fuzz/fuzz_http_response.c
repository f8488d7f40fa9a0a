/*
 * libFuzzer target for the HTTP response parser (app/src/agent/wire/http_wire.c). The first input
 * byte chooses a split position in the rest; the rest is parsed in one piece, in the two
 * pieces of that split, and one byte at a time, each followed by the end of the stream. The
 * three runs must end with the same result and report the same status, headers and body
 * bytes; each run also checks the callback rules of http.h and http_wire.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_wire.h"

/* What one run reported, as hashes: the order of the callbacks matters, body splits do not. */
struct run {
	uint64_t events; /* status and headers, in order */
	uint64_t body;	 /* body bytes as one stream */
	size_t body_len;
	unsigned int status_calls;
	bool body_started;
};

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_http_response: %s\n", what);
		abort();
	}
}

static uint64_t hash(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ p[i]) * 0x100000001b3ULL;
	}
	return h;
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static int on_status(void *user_data, int status)
{
	struct run *r = user_data;

	check(r->status_calls == 0, "on_status called twice");
	check(status >= 200 && status <= 599, "status out of range or interim");
	r->status_calls++;
	r->events = hash(r->events, "S", 1);
	r->events = hash(r->events, &status, sizeof(status));
	return 0;
}

static int on_header(void *user_data, const char *name, const char *value)
{
	struct run *r = user_data;
	size_t name_len = strlen(name);
	size_t value_len = strlen(value);

	check(r->status_calls == 1, "on_header before on_status");
	check(!r->body_started, "on_header after on_body");
	check(name_len > 0, "empty header name");
	check(name_len + value_len <= HTTP_HEADER_LINE_MAX, "header longer than a line");
	for (size_t i = 0; i < name_len; i++) {
		check(!(name[i] >= 'A' && name[i] <= 'Z'), "header name not lower case");
		check(name[i] > 0x20 && name[i] < 0x7f && name[i] != ':', "bad byte in name");
	}
	if (value_len > 0) {
		check(!is_ows(value[0]) && !is_ows(value[value_len - 1]), "value not trimmed");
	}
	for (size_t i = 0; i < value_len; i++) {
		unsigned char c = (unsigned char)value[i];

		check(c >= 0x20 || c == '\t', "control character in value");
		check(c != 0x7f, "DEL in value");
	}
	r->events = hash(r->events, "H", 1);
	r->events = hash(r->events, name, name_len + 1);
	r->events = hash(r->events, value, value_len + 1);
	return 0;
}

static int on_body(void *user_data, const char *data, size_t len)
{
	struct run *r = user_data;

	check(r->status_calls == 1, "on_body before on_status");
	check(len > 0, "empty on_body");
	r->body_started = true;
	r->body = hash(r->body, data, len);
	r->body_len += len;
	return 0;
}

static const struct http_callbacks callbacks = {
	.on_status = on_status,
	.on_header = on_header,
	.on_body = on_body,
};

static int parse(const uint8_t *data, size_t len, size_t piece, struct run *r)
{
	struct http_parser parser;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	http_parser_init(&parser, &callbacks, r);
	for (size_t off = 0; off < len && ret == 0; off += piece) {
		size_t n = len - off < piece ? len - off : piece;

		ret = http_parser_feed(&parser, (const char *)data + off, n);
		check(ret == 0 || !http_parser_done(&parser), "done and failed at once");
	}
	if (ret == 0) {
		ret = http_parser_finish(&parser);
		check(ret != 0 || http_parser_done(&parser), "finish gave 0 but not done");
	} else {
		check(http_parser_feed(&parser, "x", 1) == ret, "error not sticky");
		check(http_parser_feed(&parser, "", 0) == ret, "error not sticky for no bytes");
		check(http_parser_finish(&parser) == ret, "error not sticky at finish");
	}
	check(ret == 0 || ret == -EPROTO || ret == -EMSGSIZE || ret == -ECONNRESET,
	      "unexpected result");
	return ret;
}

static int parse_split(const uint8_t *data, size_t len, size_t at, struct run *r)
{
	struct http_parser parser;
	int ret;

	memset(r, 0, sizeof(*r));
	http_parser_init(&parser, &callbacks, r);
	ret = http_parser_feed(&parser, (const char *)data, at);
	if (ret == 0) {
		ret = http_parser_feed(&parser, (const char *)data + at, len - at);
	}
	return ret != 0 ? ret : http_parser_finish(&parser);
}

static void same(const struct run *a, int a_ret, const struct run *b, int b_ret)
{
	check(a_ret == b_ret, "results differ between splits");
	check(a->events == b->events, "status or headers differ between splits");
	check(a->body_len == b->body_len && a->body == b->body, "body differs between splits");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run whole;
	struct run split;
	struct run bytes;

	if (size == 0) {
		return 0;
	}

	size_t at = data[0];
	const uint8_t *text = data + 1;
	size_t len = size - 1;

	if (at > len) {
		at = len;
	}

	int whole_ret = parse(text, len, len == 0 ? 1 : len, &whole);
	int split_ret = parse_split(text, len, at, &split);
	int bytes_ret = parse(text, len, 1, &bytes);

	same(&whole, whole_ret, &split, split_ret);
	same(&whole, whole_ret, &bytes, bytes_ret);
	return 0;
}
