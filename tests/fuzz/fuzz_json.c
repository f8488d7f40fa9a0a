/*
 * libFuzzer target for the JSON tokenizer and writer (app/src/agent/wire/json_stream.c,
 * json_writer.c). The first input byte seeds the chunk sizes; the rest is the document.
 *
 * - Tokenized whole, in seeded random chunks and one byte at a time, it must give the same
 *   tokens, paths, joined strings and result, and every callback must keep the rules of
 *   json_stream.h (fragment flags, fragments pointing into the chunk or the tokenizer).
 * - A document that tokenizes is written again through json_writer (when it is no deeper
 *   than the writer allows, else jw_finish() must say -EINVAL); the output must tokenize to
 *   the same tokens.
 * - The document bytes written as one string, whole and in seeded parts, must give the same
 *   output: one string, with no raw control character, that equals the input when the input
 *   is valid UTF-8.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_stream.h"
#include "json_writer.h"

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_json: %s\n", what);
		abort();
	}
}

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

static void put(struct buf *b, const void *s, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;

		while (cap < b->len + n) {
			cap *= 2;
		}
		b->data = realloc(b->data, cap);
		check(b->data != NULL, "out of memory");
		b->cap = cap;
	}
	if (n > 0) {
		memcpy(b->data + b->len, s, n);
	}
	b->len += n;
}

static void put_num(struct buf *b, char tag, long v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%c%ld", tag, v);

	put(b, tmp, (size_t)n);
}

/* One run's callbacks as bytes; a string is logged once, joined, when it ends. */
struct run {
	struct buf log;
	struct buf str;
	bool in_string;
	int max_nesting; /* containers open at once, at most */
	const struct json_stream *js;
	const char *chunk;
	size_t chunk_len;
	/* Optional: the same document written again. */
	struct json_writer *jw;
};

static void log_path(struct run *r, const struct json_stream *js)
{
	int depth = json_stream_depth(js);

	put_num(&r->log, 'd', depth);
	for (int d = 1; d <= depth; d++) {
		const char *key = json_stream_key(js, d);
		int index = json_stream_index(js, d);

		if (d > JSON_PATH_DEPTH) {
			/* Nothing is kept this deep (json_stream.h): neither key nor index. */
			check(key == NULL && index == -1, "a level past JSON_PATH_DEPTH answers");
			put(&r->log, "-", 1);
			continue;
		}
		check((key != NULL) != (index >= 0), "a level is not exactly key or index");
		if (key != NULL) {
			put_num(&r->log, 'k', (long)strlen(key));
			put(&r->log, key, strlen(key));
		} else {
			put_num(&r->log, 'i', index);
		}
	}
}

static void rewrite(struct json_writer *w, const struct json_stream *js,
		    const struct json_value *v)
{
	/* Bit d: the container at depth d is an object (keys are not kept past JSON_PATH_DEPTH:
	 * such members are written with the name "?"; the logs show no key there either). */
	static uint64_t objects;
	int depth = json_stream_depth(js);
	const char *key = depth > 0 ? json_stream_key(js, depth) : NULL;
	bool starts = v->token != JSON_OBJECT_END && v->token != JSON_ARRAY_END &&
		      (v->token != JSON_STRING || v->first);

	if (key == NULL && depth > JSON_PATH_DEPTH && ((objects >> depth) & 1u) != 0u) {
		key = "?";
	}
	if (starts && key != NULL) {
		jw_key(w, key);
	}
	if (v->token == JSON_OBJECT_BEGIN || v->token == JSON_ARRAY_BEGIN) {
		uint64_t bit = (uint64_t)1 << (depth + 1);

		objects = v->token == JSON_OBJECT_BEGIN ? objects | bit : objects & ~bit;
	}
	switch (v->token) {
	case JSON_OBJECT_BEGIN:
		jw_object_begin(w);
		break;
	case JSON_OBJECT_END:
		jw_object_end(w);
		break;
	case JSON_ARRAY_BEGIN:
		jw_array_begin(w);
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
}

static int on_value(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct run *r = user_data;
	int depth = json_stream_depth(js);
	char tag = (char)('A' + v->token);

	check(js == r->js, "callback for another tokenizer");
	check(depth >= 0 && depth <= JSON_STREAM_DEPTH_MAX, "depth out of range");
	if ((v->token == JSON_OBJECT_BEGIN || v->token == JSON_ARRAY_BEGIN) &&
	    depth + 1 > r->max_nesting) {
		r->max_nesting = depth + 1;
	}
	if (r->jw != NULL) {
		rewrite(r->jw, js, v);
	}
	if (v->token == JSON_STRING) {
		bool in_chunk = r->chunk != NULL && v->text >= r->chunk &&
				v->text + v->len <= r->chunk + r->chunk_len;
		bool in_self = (const char *)v->text >= (const char *)js &&
			       (const char *)(v->text + v->len) <= (const char *)(js + 1);

		check(v->text != NULL && (in_chunk || in_self), "fragment points elsewhere");
		check(v->first != r->in_string, "first flag out of order");
		check(v->len > 0 || v->last, "empty fragment in the middle");
		if (v->first) {
			r->in_string = true;
			r->str.len = 0;
			put(&r->log, &tag, 1);
			log_path(r, js);
		}
		put(&r->str, v->text, v->len);
		if (v->last) {
			r->in_string = false;
			put_num(&r->log, '=', (long)r->str.len);
			put(&r->log, r->str.data, r->str.len);
		}
		return 0;
	}
	check(!r->in_string, "token inside a string");
	check(!v->first && !v->last, "flags on a non-string");
	put(&r->log, &tag, 1);
	log_path(r, js);
	if (v->token == JSON_NUMBER) {
		check(v->len > 0 && v->len <= JSON_NUMBER_MAX && strlen(v->text) == v->len,
		      "number text");
		put(&r->log, v->text, v->len);
	} else {
		check(v->text == NULL && v->len == 0, "text on a token without text");
	}
	return 0;
}

static uint32_t rng_next(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Chunk sizes: 0 = whole, 1 = byte by byte, else seeded sizes of 1..64 bytes. */
static size_t next_chunk(uint32_t *rng, int mode, size_t left)
{
	size_t n = mode == 0 ? left : mode == 1 ? 1 : 1 + rng_next(rng) % 64;

	return n < left ? n : left;
}

static int tokenize(struct run *r, const uint8_t *doc, size_t len, int mode, uint32_t seed)
{
	struct json_stream js;
	uint32_t rng = seed | 1;
	int rc = 0;
	struct json_writer *jw = r->jw;

	memset(r, 0, sizeof(*r));
	r->jw = jw;
	r->js = &js;
	json_stream_init(&js, on_value, r);
	for (size_t at = 0; at < len && rc == 0;) {
		size_t n = next_chunk(&rng, mode, len - at);
		/* A copy of exactly the chunk, so that a read past it is caught. */
		char *chunk = malloc(n);

		check(chunk != NULL, "out of memory");
		memcpy(chunk, doc + at, n);
		r->chunk = chunk;
		r->chunk_len = n;
		rc = json_stream_feed(&js, chunk, n);
		r->chunk = NULL;
		r->chunk_len = 0;
		free(chunk);
		at += n;
	}
	if (rc == 0) {
		rc = json_stream_finish(&js);
	}
	check(rc == 0 || rc == -EBADMSG || rc == -E2BIG, "unexpected result");
	put_num(&r->log, 'r', rc);
	return rc;
}

static void free_run(struct run *r)
{
	free(r->log.data);
	free(r->str.data);
}

static bool same_log(const struct run *a, const struct run *b)
{
	return a->log.len == b->log.len && memcmp(a->log.data, b->log.data, a->log.len) == 0;
}

/* An independent check of well-formed UTF-8 (Unicode Table 3-7). */
static bool valid_utf8(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint8_t c = s[i];
		size_t need;
		uint8_t lo = 0x80;
		uint8_t hi = 0xBF;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF) {
			need = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			need = 2;
			lo = c == 0xE0 ? 0xA0 : 0x80;
			hi = c == 0xED ? 0x9F : 0xBF;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3;
			lo = c == 0xF0 ? 0x90 : 0x80;
			hi = c == 0xF4 ? 0x8F : 0xBF;
		} else {
			return false;
		}
		if (n - i - 1 < need) {
			return false;
		}
		for (size_t k = 1; k <= need; k++) {
			if (s[i + k] < lo || s[i + k] > hi) {
				return false;
			}
			lo = 0x80;
			hi = 0xBF;
		}
		i += need + 1;
	}
	return true;
}

static void check_rewrite(const struct run *whole, const uint8_t *doc, size_t len)
{
	size_t cap = len * 6 + 64;
	char *out = malloc(cap);
	struct json_writer w;
	struct run again;
	struct run written;
	int n;

	check(out != NULL, "out of memory");
	jw_init(&w, out, cap);
	again.jw = &w;
	tokenize(&again, doc, len, 0, 0);
	n = jw_finish(&w);
	if (whole->max_nesting > JSON_WRITER_DEPTH_MAX) {
		check(n == -EINVAL, "writer took more levels than it holds");
	} else {
		check(n >= 0, "writer rejected a tokenized document");
	}
	if (n >= 0) {
		written.jw = NULL;
		check(tokenize(&written, (const uint8_t *)out, (size_t)n, 0, 0) == 0,
		      "writer output does not tokenize");
		check(same_log(whole, &written), "writer output tokenizes differently");
		free_run(&written);
	}
	free_run(&again);
	free(out);
}

static int write_string(char *out, size_t cap, const uint8_t *s, size_t len, uint32_t seed)
{
	struct json_writer w;
	uint32_t rng = seed | 1;

	jw_init(&w, out, cap);
	if (seed == 0) {
		jw_string_n(&w, (const char *)s, len);
	} else {
		jw_string_begin(&w);
		for (size_t at = 0; at < len;) {
			/* Parts of 0..4 bytes, so every UTF-8 sequence is cut somewhere. */
			size_t n = rng_next(&rng) % 5;

			n = n < len - at ? n : len - at;
			jw_string_part(&w, (const char *)s + at, n);
			at += n;
		}
		jw_string_end(&w);
	}
	return jw_finish(&w);
}

static void check_string(const uint8_t *doc, size_t len, uint32_t seed)
{
	size_t cap = len * 6 + 3;
	char *whole = malloc(cap);
	char *parts = malloc(cap);
	struct run r;
	int n;

	check(whole != NULL && parts != NULL, "out of memory");
	n = write_string(whole, cap, doc, len, 0);
	check(n >= 2, "string did not fit six times its size");
	check(write_string(parts, cap, doc, len, seed) == n && memcmp(whole, parts, n) == 0,
	      "string written in parts differs");
	for (int i = 0; i < n; i++) {
		check((uint8_t)whole[i] >= 0x20, "raw control character in a string");
	}
	r.jw = NULL;
	check(tokenize(&r, (const uint8_t *)whole, (size_t)n, 0, 0) == 0, "string does not parse");
	check(r.log.data[0] == 'A' + JSON_STRING, "not one string");
	if (valid_utf8(doc, len)) {
		check(r.str.len == len && (len == 0 || memcmp(r.str.data, doc, len) == 0),
		      "string changed");
	}
	free_run(&r);
	free(whole);
	free(parts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run whole;
	struct run split;
	uint32_t seed;
	int rc;

	if (size < 1) {
		return 0;
	}
	seed = data[0] * 2654435761u;
	data++;
	size--;

	whole.jw = NULL;
	split.jw = NULL;
	rc = tokenize(&whole, data, size, 0, 0);
	check(tokenize(&split, data, size, 2, seed) == rc, "result depends on the chunks");
	check(same_log(&whole, &split), "tokens depend on the chunks");
	free_run(&split);
	if (size <= 4096) {
		check(tokenize(&split, data, size, 1, 0) == rc, "byte by byte: other result");
		check(same_log(&whole, &split), "byte by byte: other tokens");
		free_run(&split);
	}
	if (rc == 0) {
		check_rewrite(&whole, data, size);
	}
	free_run(&whole);
	check_string(data, size, seed);
	return 0;
}
