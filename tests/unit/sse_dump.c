/*
 * sse_dump [CHUNK_BYTES]: decode an event stream from standard input with the SSE decoder and
 * print each dispatched event as one JSON line {"event": TYPE, "data": DATA}. Input is fed
 * to the decoder in pieces of CHUNK_BYTES (default 4096). A discarded last event prints
 * {"discard": DATA}. Bytes of 0x80 and above are copied as they are (UTF-8 in, UTF-8 out).
 * Used by tests/test_sse_differential.py; not a test by itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sse.h"

struct dump {
	char *data;
	size_t len;
	size_t cap;
	int failed;
};

static void put_json_string(const char *s, size_t len)
{
	putchar('"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			putchar('\\');
			putchar(c);
		} else if (c < 0x20) {
			printf("\\u%04x", c);
		} else {
			putchar(c);
		}
	}
	putchar('"');
}

static int on_data(void *user_data, const char *data, size_t len, bool first)
{
	struct dump *d = user_data;

	if (first) {
		d->len = 0;
	}
	if (d->len + len > d->cap) {
		size_t cap = d->cap ? d->cap : 1024;

		while (cap < d->len + len) {
			cap *= 2;
		}
		char *p = realloc(d->data, cap);

		if (p == NULL) {
			d->failed = 1;
			return 1;
		}
		d->data = p;
		d->cap = cap;
	}
	if (len > 0) {
		memcpy(d->data + d->len, data, len);
	}
	d->len += len;
	return 0;
}

static int on_event(void *user_data, const char *event_type)
{
	struct dump *d = user_data;

	fputs("{\"event\": ", stdout);
	put_json_string(event_type, strlen(event_type));
	fputs(", \"data\": ", stdout);
	put_json_string(d->data, d->len);
	fputs("}\n", stdout);
	d->len = 0;
	return 0;
}

static void on_discard(void *user_data)
{
	struct dump *d = user_data;

	fputs("{\"discard\": ", stdout);
	put_json_string(d->data, d->len);
	fputs("}\n", stdout);
	d->len = 0;
}

int main(int argc, char **argv)
{
	static const struct sse_callbacks cb = {
		.on_data = on_data,
		.on_event = on_event,
		.on_discard = on_discard,
	};
	struct dump d = {0};
	struct sse_decoder dec;
	size_t chunk = 4096;
	char *buf;
	size_t n;

	if (argc > 2 || (argc == 2 && (chunk = strtoul(argv[1], NULL, 10)) == 0)) {
		fprintf(stderr, "usage: sse_dump [CHUNK_BYTES] < stream\n");
		return 2;
	}
	buf = malloc(chunk);
	if (buf == NULL) {
		return 1;
	}
	sse_init(&dec, &cb, &d);
	while ((n = fread(buf, 1, chunk, stdin)) > 0) {
		if (sse_feed(&dec, buf, n) != 0) {
			break;
		}
	}
	sse_finish(&dec);
	free(buf);
	free(d.data);
	if (d.failed || ferror(stdin)) {
		fprintf(stderr, "sse_dump: out of memory or read error\n");
		return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
