/*
 * Driver for tests/test_json_differential.py: runs json_stream and json_writer on bytes from
 * stdin so that Python's json module can judge the result.
 *
 *   json_dump [--chunk N] [--rewrite | --string] [--batch]
 *
 * Default: tokenize stdin as one document (fed in chunks of N bytes) and print the value it
 * describes as compact JSON, printed here without the writer. --rewrite prints it through
 * json_writer instead (at most JSON_WRITER_DEPTH_MAX deep). --string writes the input bytes
 * as one JSON string with jw_string_part() in parts of N bytes.
 *
 * Without --batch a failure prints "error RC" on stderr and exits 1. With --batch stdin is a
 * series of records "LEN\n" + LEN bytes, and each gives "ok LEN\n" + LEN bytes + "\n" or
 * "error RC\n" on stdout, so one process serves a whole corpus.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_stream.h"
#include "json_writer.h"

enum mode {
	MODE_DUMP,
	MODE_REWRITE,
	MODE_STRING,
};

struct out {
	char *buf;
	size_t len;
	size_t cap;
};

struct dump {
	struct out out;
	struct json_writer jw;
	enum mode mode;
	unsigned int items[JSON_STREAM_DEPTH_MAX + 2];
	bool object[JSON_STREAM_DEPTH_MAX + 2]; /* the container at each depth is an object */
};

/*
 * The name of the member at @p depth: the tokenizer keeps keys for JSON_PATH_DEPTH levels; a
 * member deeper than that is written with the name "?" (tests/test_json_differential.py).
 */
static const char *member_key(const struct dump *d, const struct json_stream *js, int depth)
{
	const char *key = json_stream_key(js, depth);

	return key == NULL && depth > JSON_PATH_DEPTH && d->object[depth] ? "?" : key;
}

static void die(const char *what)
{
	fprintf(stderr, "json_dump: %s\n", what);
	exit(2);
}

static void out_put(struct out *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2 + 64;
		o->buf = realloc(o->buf, o->cap);
		if (o->buf == NULL) {
			die("out of memory");
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* Only what JSON requires is escaped: the tokenizer's output must be valid UTF-8 as is. */
static void out_string_bytes(struct out *o, const char *s, size_t n)
{
	char esc[8];

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			out_put(o, "\\", 1);
			out_put(o, (const char *)&c, 1);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			out_put(o, esc, 6);
		} else {
			out_put(o, (const char *)&c, 1);
		}
	}
}

/* Comma and member name before a value at @p depth, for the dump mode. */
static void dump_value_prefix(struct dump *d, const struct json_stream *js, int depth)
{
	const char *key;

	if (depth == 0) {
		return;
	}
	if (d->items[depth]++ > 0) {
		out_put(&d->out, ",", 1);
	}
	key = member_key(d, js, depth);
	if (key != NULL) {
		out_put(&d->out, "\"", 1);
		out_string_bytes(&d->out, key, strlen(key));
		out_put(&d->out, "\":", 2);
	}
}

static int on_dump(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct dump *d = user_data;
	int depth = json_stream_depth(js);

	switch (v->token) {
	case JSON_OBJECT_BEGIN:
	case JSON_ARRAY_BEGIN:
		dump_value_prefix(d, js, depth);
		d->items[depth + 1] = 0;
		d->object[depth + 1] = v->token == JSON_OBJECT_BEGIN;
		out_put(&d->out, v->token == JSON_OBJECT_BEGIN ? "{" : "[", 1);
		break;
	case JSON_OBJECT_END:
		out_put(&d->out, "}", 1);
		break;
	case JSON_ARRAY_END:
		out_put(&d->out, "]", 1);
		break;
	case JSON_STRING:
		if (v->first) {
			dump_value_prefix(d, js, depth);
			out_put(&d->out, "\"", 1);
		}
		out_string_bytes(&d->out, v->text, v->len);
		if (v->last) {
			out_put(&d->out, "\"", 1);
		}
		break;
	case JSON_NUMBER:
		dump_value_prefix(d, js, depth);
		out_put(&d->out, v->text, v->len);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		dump_value_prefix(d, js, depth);
		out_put(&d->out, v->token == JSON_TRUE ? "true" : v->token == JSON_FALSE ? "false" : "null",
			v->token == JSON_FALSE ? 5 : 4);
		break;
	}
	return 0;
}

static int on_rewrite(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct dump *d = user_data;
	struct json_writer *w = &d->jw;
	int depth = json_stream_depth(js);
	const char *key = depth > 0 ? member_key(d, js, depth) : NULL;
	bool starts = v->token != JSON_OBJECT_END && v->token != JSON_ARRAY_END &&
		      (v->token != JSON_STRING || v->first);

	if (starts && key != NULL) {
		jw_key(w, key);
	}
	switch (v->token) {
	case JSON_OBJECT_BEGIN:
		d->object[depth + 1] = true;
		jw_object_begin(w);
		break;
	case JSON_ARRAY_BEGIN:
		d->object[depth + 1] = false;
		jw_array_begin(w);
		break;
	case JSON_OBJECT_END:
		jw_object_end(w);
		break;
	case JSON_ARRAY_END:
		jw_array_end(w);
		break;
	case JSON_STRING:
		if (v->first) {
			jw_string_begin(w);
		}
		jw_string_part(w, v->text, v->len);
		if (v->last) {
			jw_string_end(w);
		}
		break;
	case JSON_NUMBER:
		jw_raw(w, v->text, v->len);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		jw_bool(w, v->token == JSON_TRUE);
		break;
	case JSON_NULL:
		jw_null(w);
		break;
	}
	return 0;
}

/* One document in, its output (or a negative errno) out. */
static int run(struct dump *d, const char *in, size_t len, size_t chunk)
{
	struct json_stream js;
	char *wbuf = NULL;
	int rc = 0;

	d->out.len = 0;
	if (d->mode != MODE_DUMP) {
		/* Escaping at most triples a byte (U+2028 as \u2028), plus the quotes. */
		size_t cap = len * 6 + 64;

		wbuf = malloc(cap);
		if (wbuf == NULL) {
			die("out of memory");
		}
		jw_init(&d->jw, wbuf, cap);
	}
	if (d->mode == MODE_STRING) {
		jw_string_begin(&d->jw);
		for (size_t at = 0; at < len; at += chunk) {
			jw_string_part(&d->jw, in + at, len - at < chunk ? len - at : chunk);
		}
		jw_string_end(&d->jw);
	} else {
		json_stream_init(&js, d->mode == MODE_DUMP ? on_dump : on_rewrite, d);
		d->items[0] = 0;
		for (size_t at = 0; at < len && rc == 0; at += chunk) {
			rc = json_stream_feed(&js, in + at, len - at < chunk ? len - at : chunk);
		}
		if (rc == 0) {
			rc = json_stream_finish(&js);
		}
	}
	if (rc == 0 && d->mode != MODE_DUMP) {
		rc = jw_finish(&d->jw);
		if (rc >= 0) {
			out_put(&d->out, wbuf, (size_t)rc);
			rc = 0;
		}
	}
	free(wbuf);
	return rc;
}

static char *read_all(FILE *f, size_t *len)
{
	size_t cap = 65536;
	char *buf = malloc(cap);
	size_t n;

	*len = 0;
	while (buf != NULL && (n = fread(buf + *len, 1, cap - *len, f)) > 0) {
		*len += n;
		if (*len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	if (buf == NULL) {
		die("out of memory");
	}
	return buf;
}

static void usage(void)
{
	die("usage: json_dump [--chunk N] [--rewrite | --string] [--batch]");
}

int main(int argc, char **argv)
{
	struct dump d = {.mode = MODE_DUMP};
	size_t chunk = SIZE_MAX;
	bool batch = false;
	size_t len;
	char *in;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--chunk") == 0 && i + 1 < argc) {
			chunk = strtoul(argv[++i], NULL, 10);
			if (chunk == 0) {
				usage();
			}
		} else if (strcmp(argv[i], "--rewrite") == 0) {
			d.mode = MODE_REWRITE;
		} else if (strcmp(argv[i], "--string") == 0) {
			d.mode = MODE_STRING;
		} else if (strcmp(argv[i], "--batch") == 0) {
			batch = true;
		} else {
			usage();
		}
	}
	in = read_all(stdin, &len);
	if (!batch) {
		rc = run(&d, in, len, chunk);
		if (rc != 0) {
			fprintf(stderr, "error %d\n", rc);
		} else {
			fwrite(d.out.buf, 1, d.out.len, stdout);
		}
		free(in);
		free(d.out.buf);
		return rc != 0 ? 1 : 0;
	}
	for (size_t at = 0; at < len;) {
		char *nl = memchr(in + at, '\n', len - at);
		size_t n;

		if (nl == NULL) {
			die("batch record without a length line");
		}
		n = strtoul(in + at, NULL, 10);
		at = (size_t)(nl - in) + 1;
		if (n > len - at) {
			die("batch record longer than the input");
		}
		rc = run(&d, in + at, n, chunk);
		at += n;
		if (rc != 0) {
			printf("error %d\n", rc);
			continue;
		}
		printf("ok %zu\n", d.out.len);
		fwrite(d.out.buf, 1, d.out.len, stdout);
		printf("\n");
	}
	free(in);
	free(d.out.buf);
	return 0;
}
