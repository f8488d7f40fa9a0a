/*
 * The streaming JSON tokenizer (app/src/agent/wire/json_stream.c): every recorded provider
 * payload split at every point (or in 100 random ways when large) gives the same tokens,
 * the exact bounds, malformed input, UTF-8 and surrogate handling across chunk ends, path
 * matching, and a 1 MiB string that passes through without a buffer of its own.
 *
 * The recorded payloads are the repository's corpus (host/agent_host/testserver/recorded/),
 * whose path tests/unit/CMakeLists.txt passes as RECORDED_DIR.
 */
#define _XOPEN_SOURCE 700 /* nftw() */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json_stream.h"

/* ---- a growable byte buffer (test code may allocate) ---- */

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

static void buf_put(struct buf *b, const void *s, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->data = realloc(b->data, b->cap);
		assert_non_null(b->data);
	}
	if (n > 0) {
		memcpy(b->data + b->len, s, n);
	}
	b->len += n;
}

static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(tmp));
	buf_put(b, tmp, (size_t)n);
}

static void buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* ---- the recorder: every callback as text, fragments of a string joined ---- */

struct rec {
	struct buf out;	   /* the token stream, comparable with memcmp */
	struct buf str;	   /* the string being received */
	bool in_string;	   /* between a first and a last fragment */
	int string_depth;  /* depth reported with the first fragment */
	size_t fragments;  /* string fragments received in all */
	size_t calls;	   /* callbacks in all */
	size_t stop_after; /* return stop_rc from this callback (1-based); 0 never */
	int stop_rc;
	/* Where fragments may point: the chunk being fed, or the tokenizer itself. */
	const char *chunk;
	size_t chunk_len;
	const struct json_stream *js;
	bool check_paths;
};

static const char *const token_names[] = {"{", "}", "[", "]", "str", "num", "true", "false", "null"};

/* The path as json_stream_path_is() spells it, when every key can be spelt. */
static bool spell_path(const struct json_stream *js, char *path, size_t cap)
{
	size_t used = 0;

	path[0] = '\0';
	if (json_stream_depth(js) > JSON_PATH_DEPTH) {
		return false; /* no path answers this deep (test_kept_path_depth) */
	}
	for (int d = 1; d <= json_stream_depth(js); d++) {
		const char *key = json_stream_key(js, d);
		const char *seg = key != NULL ? key : "#";
		size_t n = strlen(seg);

		if (key != NULL && (strchr(key, '.') != NULL || n >= JSON_KEY_MAX - 7 || n == 0 ||
				    strcmp(key, "*") == 0)) {
			return false;
		}
		if (used + n + 2 > cap) {
			return false;
		}
		if (d > 1) {
			path[used++] = '.';
		}
		memcpy(path + used, seg, n + 1);
		used += n;
	}
	return true;
}

static void rec_path(struct rec *r, const struct json_stream *js)
{
	int depth = json_stream_depth(js);
	char path[512];

	buf_printf(&r->out, " d%d", depth);
	for (int d = 1; d <= depth; d++) {
		const char *key = json_stream_key(js, d);
		int index = json_stream_index(js, d);

		/* Each level is exactly one of the two; below JSON_PATH_DEPTH neither is kept. */
		if (d > JSON_PATH_DEPTH) {
			assert_null(key);
			assert_int_equal(index, -1);
			buf_printf(&r->out, " -");
			continue;
		}
		assert_true((key != NULL) != (index >= 0));
		if (key != NULL) {
			buf_printf(&r->out, " k%zu:", strlen(key));
			buf_put(&r->out, key, strlen(key));
		} else {
			buf_printf(&r->out, " i%d", index);
		}
	}
	assert_null(json_stream_key(js, 0));
	assert_null(json_stream_key(js, depth + 1));
	assert_int_equal(json_stream_index(js, 0), -1);
	assert_int_equal(json_stream_index(js, depth + 1), -1);
	if (r->check_paths && spell_path(js, path, sizeof(path))) {
		assert_true(json_stream_path_is(js, path));
		strcat(path, depth > 0 ? ".x" : "x");
		assert_false(json_stream_path_is(js, path));
	}
}

static int rec_cb(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct rec *r = user_data;
	bool in_chunk;
	bool in_self;

	assert_ptr_equal(js, r->js);
	r->calls++;
	assert_true(v->token <= JSON_NULL);
	if (v->token == JSON_STRING) {
		assert_non_null(v->text);
		in_chunk = r->chunk != NULL && v->text >= r->chunk &&
			   v->text + v->len <= r->chunk + r->chunk_len;
		in_self = (const char *)v->text >= (const char *)js &&
			  (const char *)(v->text + v->len) <= (const char *)(js + 1);
		assert_true(in_chunk || in_self);
		assert_true(v->first != r->in_string);
		/* An empty fragment only ends a string (or is the whole, empty string). */
		assert_true(v->len > 0 || v->last);
		r->fragments++;
		if (v->first) {
			r->in_string = true;
			r->string_depth = json_stream_depth(js);
			r->str.len = 0;
			buf_printf(&r->out, "str");
			rec_path(r, js);
		}
		assert_int_equal(json_stream_depth(js), r->string_depth);
		buf_put(&r->str, v->text, v->len);
		if (v->last) {
			r->in_string = false;
			buf_printf(&r->out, " =%zu:", r->str.len);
			buf_put(&r->out, r->str.data, r->str.len);
			buf_put(&r->out, "\n", 1);
		}
	} else {
		assert_false(r->in_string);
		assert_false(v->first || v->last);
		buf_printf(&r->out, "%s", token_names[v->token]);
		rec_path(r, js);
		if (v->token == JSON_NUMBER) {
			assert_non_null(v->text);
			assert_int_equal(strlen(v->text), v->len);
			assert_true(v->len > 0 && v->len <= JSON_NUMBER_MAX);
			buf_printf(&r->out, " =%.*s", (int)v->len, v->text);
		} else {
			assert_null(v->text);
			assert_int_equal(v->len, 0);
		}
		buf_put(&r->out, "\n", 1);
	}
	if (r->stop_after != 0 && r->calls == r->stop_after) {
		return r->stop_rc;
	}
	return 0;
}

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->check_paths = true;
}

static void rec_free(struct rec *r)
{
	buf_free(&r->out);
	buf_free(&r->str);
}

/*
 * Tokenize @p doc cut at @p cuts (ascending positions), each chunk copied to a buffer of
 * its own size so that AddressSanitizer sees any read past its end. The result code goes
 * into the record too.
 */
static int tokenize_cuts(struct rec *r, struct json_stream *js, const char *doc, size_t len,
			 const size_t *cuts, size_t ncuts)
{
	size_t at = 0;
	int rc = 0;

	json_stream_init(js, rec_cb, r);
	r->js = js;
	r->in_string = false;
	for (size_t i = 0; i <= ncuts && rc == 0; i++) {
		size_t to = i < ncuts ? cuts[i] : len;
		size_t n = to - at;
		char *chunk = malloc(n > 0 ? n : 1);

		assert_non_null(chunk);
		memcpy(chunk, doc + at, n);
		r->chunk = chunk;
		r->chunk_len = n;
		rc = json_stream_feed(js, chunk, n);
		r->chunk = NULL;
		r->chunk_len = 0;
		free(chunk);
		at = to;
	}
	if (rc == 0) {
		rc = json_stream_finish(js);
	}
	buf_printf(&r->out, "rc %d\n", rc);
	return rc;
}

static int tokenize(struct rec *r, const char *doc, size_t len, const size_t *cuts, size_t ncuts)
{
	struct json_stream js;

	return tokenize_cuts(r, &js, doc, len, cuts, ncuts);
}

static int tokenize_str(struct rec *r, const char *doc)
{
	return tokenize(r, doc, strlen(doc), NULL, 0);
}

static int tokenize_bytewise(struct rec *r, const char *doc, size_t len)
{
	size_t *cuts = malloc((len > 0 ? len : 1) * sizeof(*cuts));
	int rc;

	assert_non_null(cuts);
	for (size_t i = 0; i + 1 < len; i++) {
		cuts[i] = i + 1;
	}
	rc = tokenize(r, doc, len, cuts, len > 0 ? len - 1 : 0);
	free(cuts);
	return rc;
}

static void assert_same_records(const struct rec *a, const struct rec *b, const char *what)
{
	if (a->out.len != b->out.len || memcmp(a->out.data, b->out.data, a->out.len) != 0) {
		fail_msg("%s: token streams differ\n--- whole:\n%.*s\n--- split:\n%.*s", what,
			 (int)a->out.len, a->out.data, (int)b->out.len, b->out.data);
	}
}

/* Whole, byte by byte and at every single cut: the same tokens and result. */
static int check_all_splits(const char *doc, size_t len, struct rec *whole)
{
	struct rec split;
	int rc = tokenize(whole, doc, len, NULL, 0);

	rec_init(&split);
	assert_int_equal(tokenize_bytewise(&split, doc, len), rc);
	assert_same_records(whole, &split, "byte by byte");
	for (size_t cut = 1; cut < len; cut++) {
		split.out.len = 0;
		assert_int_equal(tokenize(&split, doc, len, &cut, 1), rc);
		assert_same_records(whole, &split, "one cut");
	}
	rec_free(&split);
	return rc;
}

/* The joined value of the first string of @p doc (fed split at every point). */
static void assert_string_value(const char *doc, const char *expect, size_t expect_len)
{
	struct rec r;

	rec_init(&r);
	assert_int_equal(check_all_splits(doc, strlen(doc), &r), 0);
	assert_int_equal(r.str.len, expect_len);
	assert_memory_equal(r.str.data, expect, expect_len);
	rec_free(&r);
}

/* ---- the recorded provider corpus ---- */

struct payload {
	char *data;
	size_t len;
	char origin[96];
};

static struct payload *payloads;
static size_t payload_count;
static size_t files_by_kind[3]; /* .sse, .jsonl, .json */

static void add_payload(const char *data, size_t len, const char *path, size_t line)
{
	struct payload *p;
	const char *base = strrchr(path, '/');

	payloads = realloc(payloads, (payload_count + 1) * sizeof(*payloads));
	assert_non_null(payloads);
	p = &payloads[payload_count++];
	p->data = malloc(len > 0 ? len : 1);
	assert_non_null(p->data);
	memcpy(p->data, data, len);
	p->len = len;
	snprintf(p->origin, sizeof(p->origin), "%s:%zu", base != NULL ? base + 1 : path, line);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size >= 0);
	rewind(f);
	data = malloc((size_t)size + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	data[size] = '\0';
	*len = (size_t)size;
	return data;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s);
	size_t m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* SSE: every data line but [DONE]; JSON lines: every line; .json: the file. */
static int load_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	bool sse = ends_with(path, ".sse");
	bool jsonl = ends_with(path, ".jsonl");
	size_t len;
	char *data;
	size_t line = 0;

	(void)st;
	(void)ftw;
	if (type != FTW_F || !(sse || jsonl || ends_with(path, ".json"))) {
		return 0;
	}
	data = read_file(path, &len);
	files_by_kind[sse ? 0 : jsonl ? 1 : 2]++;
	if (!sse && !jsonl) {
		add_payload(data, len, path, 0);
		free(data);
		return 0;
	}
	for (char *at = data; at < data + len;) {
		char *nl = memchr(at, '\n', (size_t)(data + len - at));
		char *end = nl != NULL ? nl : data + len;
		size_t n = (size_t)(end - at);

		line++;
		if (jsonl && n > 0) {
			add_payload(at, n, path, line);
		} else if (sse && n >= 5 && memcmp(at, "data:", 5) == 0) {
			const char *v = at + 5 + (n > 5 && at[5] == ' ');
			size_t vn = (size_t)(end - v);

			if (!(vn == 6 && memcmp(v, "[DONE]", 6) == 0)) {
				add_payload(v, vn, path, line);
			}
		}
		at = end + 1;
	}
	free(data);
	return 0;
}

static int load_corpus(void **state)
{
	const char *dir = RECORDED_DIR;
	struct stat st;

	(void)state;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "the recorded streams are missing: %s is not a directory\n", dir);
		return -1;
	}
	if (nftw(dir, load_file, 16, FTW_PHYS) != 0) {
		fprintf(stderr, "cannot read the fixtures in %s\n", dir);
		return -1;
	}
	/* A corpus without all three kinds is the wrong directory, not a pass. */
	if (files_by_kind[0] == 0 || files_by_kind[1] == 0 || files_by_kind[2] == 0 ||
	    payload_count < 100) {
		fprintf(stderr, "fixtures in %s: %zu .sse, %zu .jsonl, %zu .json, %zu payloads\n",
			dir, files_by_kind[0], files_by_kind[1], files_by_kind[2], payload_count);
		return -1;
	}
	return 0;
}

static int free_corpus(void **state)
{
	(void)state;
	for (size_t i = 0; i < payload_count; i++) {
		free(payloads[i].data);
	}
	free(payloads);
	payloads = NULL;
	payload_count = 0;
	return 0;
}

/* A fixed generator, so a failure can be reproduced. */
static uint32_t rng_state = 12345;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

#define SMALL_PAYLOAD_BYTES 1024

static void test_corpus_splits(void **state)
{
	size_t cuts[SMALL_PAYLOAD_BYTES * 16];
	size_t small = 0;
	struct rec whole;
	struct rec split;

	(void)state;
	rec_init(&whole);
	rec_init(&split);
	for (size_t i = 0; i < payload_count; i++) {
		const struct payload *p = &payloads[i];

		whole.out.len = 0;
		if (p->len <= SMALL_PAYLOAD_BYTES) {
			small++;
			if (check_all_splits(p->data, p->len, &whole) != 0) {
				fail_msg("%s does not tokenize", p->origin);
			}
			continue;
		}
		if (tokenize(&whole, p->data, p->len, NULL, 0) != 0) {
			fail_msg("%s does not tokenize", p->origin);
		}
		for (int round = 0; round < 100; round++) {
			size_t n = 0;

			/* Mostly short chunks, now and then a long one. */
			for (size_t at = 1 + rng() % 64; at < p->len && n < sizeof(cuts) / sizeof(cuts[0]);
			     at += 1 + (rng() % 8 == 0 ? rng() % 2048 : rng() % 24)) {
				cuts[n++] = at;
			}
			split.out.len = 0;
			assert_int_equal(tokenize(&split, p->data, p->len, cuts, n), 0);
			assert_same_records(&whole, &split, p->origin);
		}
	}
	/* Both branches ran on real data. */
	assert_true(small > 1000);
	assert_true(payload_count - small > 10);
	rec_free(&whole);
	rec_free(&split);
}

/* ---- exact bounds ---- */

static char *nested(int levels, bool objects, const char *inner)
{
	struct buf b = {0};

	for (int i = 0; i < levels; i++) {
		buf_put(&b, objects ? "{\"a\":" : "[", objects ? 5 : 1);
	}
	buf_put(&b, inner, strlen(inner));
	for (int i = 0; i < levels; i++) {
		buf_put(&b, objects ? "}" : "]", 1);
	}
	buf_put(&b, "", 1);
	return b.data;
}

static int max_depth_seen;

static int depth_cb(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	(void)user_data;
	(void)v;
	if (json_stream_depth(js) > max_depth_seen) {
		max_depth_seen = json_stream_depth(js);
	}
	return 0;
}

static int feed_all(const char *doc, json_value_fn fn, void *user_data)
{
	struct json_stream js;
	int rc;

	json_stream_init(&js, fn, user_data);
	rc = json_stream_feed(&js, doc, strlen(doc));
	return rc != 0 ? rc : json_stream_finish(&js);
}

static void test_depth_bound(void **state)
{
	struct rec r;
	char *doc;

	(void)state;
	for (int objects = 0; objects < 2; objects++) {
		doc = nested(JSON_STREAM_DEPTH_MAX, objects, "1");
		max_depth_seen = 0;
		assert_int_equal(feed_all(doc, depth_cb, NULL), 0);
		/* The number sits inside the 32nd container. */
		assert_int_equal(max_depth_seen, JSON_STREAM_DEPTH_MAX);
		rec_init(&r);
		assert_int_equal(check_all_splits(doc, strlen(doc), &r), 0);
		rec_free(&r);
		free(doc);

		doc = nested(JSON_STREAM_DEPTH_MAX + 1, objects, "1");
		assert_int_equal(feed_all(doc, depth_cb, NULL), -E2BIG);
		rec_init(&r);
		assert_int_equal(check_all_splits(doc, strlen(doc), &r), -E2BIG);
		rec_free(&r);
		free(doc);

		doc = nested(JSON_STREAM_DEPTH_MAX, objects, objects ? "{}" : "[]");
		assert_int_equal(feed_all(doc, depth_cb, NULL), -E2BIG);
		free(doc);
		doc = nested(JSON_STREAM_DEPTH_MAX - 1, objects, objects ? "{}" : "[]");
		assert_int_equal(feed_all(doc, depth_cb, NULL), 0);
		free(doc);
	}
}

/*
 * Keys and indices are kept for JSON_PATH_DEPTH levels; deeper levels are still read and
 * checked (their kind is kept: a wrong closer is an error at any depth) but answer no path.
 */
static int deep_ok_depth;
static bool deep_key_seen[JSON_STREAM_DEPTH_MAX + 1];
static bool deep_path_hit;

static int deep_cb(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	int d = json_stream_depth(js);

	(void)user_data;
	if (v->token != JSON_NUMBER) {
		return 0;
	}
	deep_ok_depth = d;
	for (int level = 1; level <= d; level++) {
		deep_key_seen[level] = json_stream_key(js, level) != NULL ||
				       json_stream_index(js, level) >= 0;
	}
	deep_path_hit = json_stream_path_is(js, "a.#.a.#.a.#.a.#") ||
			json_stream_path_is(js, "a.#.a.#.a.#.a.#.a");
	return 0;
}

static void test_kept_path_depth(void **state)
{
	struct json_stream js;
	struct buf b = {0};
	char *doc;

	(void)state;
	/* Levels alternate: objects at odd depths, arrays at even ones. */
	for (int levels = JSON_PATH_DEPTH - 1; levels <= JSON_STREAM_DEPTH_MAX; levels++) {
		b = (struct buf){0};
		for (int i = 0; i < levels; i++) {
			buf_put(&b, (i % 2) == 0 ? "{\"a\":" : "[", (i % 2) == 0 ? 5 : 1);
		}
		buf_put(&b, "7", 1);
		for (int i = levels - 1; i >= 0; i--) {
			buf_put(&b, (i % 2) == 0 ? "}" : "]", 1);
		}
		doc = b.data;
		memset(deep_key_seen, 0, sizeof(deep_key_seen));
		json_stream_init(&js, deep_cb, NULL);
		assert_int_equal(json_stream_feed(&js, doc, b.len), 0);
		assert_int_equal(json_stream_finish(&js), 0);
		assert_int_equal(deep_ok_depth, levels);
		for (int level = 1; level <= levels; level++) {
			assert_int_equal(deep_key_seen[level], level <= JSON_PATH_DEPTH);
		}
		/* 8 levels answer their path; 9 do not. */
		assert_int_equal(deep_path_hit, levels == JSON_PATH_DEPTH);
		/* A wrong closer for the innermost level is refused, however deep. */
		doc[b.len - levels] = ((levels - 1) % 2) == 0 ? ']' : '}';
		json_stream_init(&js, deep_cb, NULL);
		assert_int_equal(json_stream_feed(&js, doc, b.len), -EBADMSG);
		free(doc);
	}
}

static void test_number_bound(void **state)
{
	char digits[JSON_NUMBER_MAX + 2];
	char doc[JSON_NUMBER_MAX + 8];
	struct rec r;

	(void)state;
	for (size_t n = JSON_NUMBER_MAX - 1; n <= JSON_NUMBER_MAX + 1; n++) {
		int expect = n <= JSON_NUMBER_MAX ? 0 : -E2BIG;

		memset(digits, '7', n);
		digits[n] = '\0';
		/* At the top level the number ends with the input, in an array with ']'. */
		rec_init(&r);
		assert_int_equal(check_all_splits(digits, n, &r), expect);
		if (expect == 0) {
			buf_put(&r.out, "", 1);
			assert_non_null(strstr(r.out.data, digits));
		}
		rec_free(&r);
		snprintf(doc, sizeof(doc), "[%s]", digits);
		rec_init(&r);
		assert_int_equal(check_all_splits(doc, strlen(doc), &r), expect);
		rec_free(&r);
		/* Sign, fraction and exponent count too. */
		memcpy(digits, "-1.5e+", 6);
		snprintf(doc, sizeof(doc), "{\"n\":%s}", digits);
		assert_int_equal(feed_all(doc, depth_cb, NULL), expect);
	}
}

struct key_probe {
	const char *path;
	int hits;
	int star_hits;
	char key[JSON_KEY_MAX + 1];
};

static int key_cb(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct key_probe *k = user_data;

	if (v->token == JSON_NUMBER && json_stream_depth(js) == 1) {
		k->hits += json_stream_path_is(js, k->path);
		k->star_hits += json_stream_path_is(js, "*");
		snprintf(k->key, sizeof(k->key), "%s", json_stream_key(js, 1));
	}
	return 0;
}

/* A key holding '.' or NUL is one segment: it matches no path but "*" (path_is compares as it reads). */
static void test_key_dot_nul(void **state)
{
	static const struct {
		const char *doc;
		const char *path;
		int hits;
	} cases[] = {
		{"{\"a.b\":1}", "a.b", 0}, {"{\"a.b\":1}", "a", 0},   {"{\"a\\u0000\":1}", "a", 0},
		{"{\"a\\u0000b\":1}", "a", 0}, {"{\"ab\":1}", "a", 0},  {"{\"a\":1}", "ab", 0},
		{"{\"a\":1}", "a.b", 0},         {"{\"a\":1}", "a", 1},   {"{\"a\":1}", "*", 1},
		{"{\"a.b\":1}", "*", 1},
	};
	struct key_probe k;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&k, 0, sizeof(k));
		k.path = cases[i].path;
		assert_int_equal(feed_all(cases[i].doc, key_cb, &k), 0);
		assert_int_equal(k.hits, cases[i].hits);
	}
}

static void test_key_bound(void **state)
{
	char key[JSON_KEY_MAX + 2];
	char doc[128];
	struct key_probe k;

	(void)state;
	for (size_t n = JSON_KEY_MAX - 1; n <= JSON_KEY_MAX + 1; n++) {
		memset(key, 'k', n);
		key[n] = '\0';
		snprintf(doc, sizeof(doc), "{\"%s\":1}", key);
		memset(&k, 0, sizeof(k));
		k.path = key;
		assert_int_equal(feed_all(doc, key_cb, &k), 0);
		assert_int_equal(k.hits, n <= JSON_KEY_MAX ? 1 : 0);
		assert_int_equal(k.star_hits, 1);
		/* A long key is kept cut to the bound. */
		assert_int_equal(strlen(k.key), n <= JSON_KEY_MAX ? n : JSON_KEY_MAX);
		/* The cut prefix itself does not match either. */
		key[JSON_KEY_MAX] = '\0';
		k.path = key;
		k.hits = 0;
		assert_int_equal(feed_all(doc, key_cb, &k), 0);
		assert_int_equal(k.hits, n <= JSON_KEY_MAX ? 1 : 0);
	}

	/* 46 ASCII bytes and a 2-byte character: cut before the character, not inside it. */
	memset(&k, 0, sizeof(k));
	k.path = "*";
	snprintf(doc, sizeof(doc), "{\"%.*s\xc3\xa9\":1}", JSON_KEY_MAX - 1,
		 "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk");
	assert_int_equal(feed_all(doc, key_cb, &k), 0);
	assert_int_equal(strlen(k.key), JSON_KEY_MAX - 1);
	/* An escaped 45 + 2 bytes fits exactly and matches. */
	memset(&k, 0, sizeof(k));
	k.path = "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\xc3\xa9";
	assert_int_equal(strlen(k.path), JSON_KEY_MAX);
	assert_int_equal(
		feed_all("{\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\\u00e9\":1}", key_cb, &k), 0);
	assert_int_equal(k.hits, 1);
}

/* ---- accepted and rejected documents ---- */

struct doc_case {
	const char *doc;
	int rc;
	size_t len; /* 0: strlen(doc) */
};

static const struct doc_case valid_docs[] = {
	{"0", 0, 0},
	{"-0", 0, 0},
	{"0.0", 0, 0},
	{"-0.5e-7", 0, 0},
	{"1E5", 0, 0},
	{"1e+05", 0, 0},
	{"10", 0, 0},
	{"123.456E-789", 0, 0},
	{" \t\r\n[ ] \t\r\n", 0, 0},
	{"[[],{}]", 0, 0},
	{"{}", 0, 0},
	{"\"\"", 0, 0},
	{"true", 0, 0},
	{"false", 0, 0},
	{"null", 0, 0},
	{"[true,false,null,0,\"\",{},[]]", 0, 0},
	{"{\"a\":1,\"b\":[1,2,{\"c\":null}],\"\":\"\"}", 0, 0},
	{"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\uFFFF\"", 0, 0},
	{"\"\x7f\"", 0, 0},
	{"{\"a\":1,\"a\":2}", 0, 0},
};

static const struct doc_case malformed_docs[] = {
	{"", -EBADMSG, 0},
	{" \n\t", -EBADMSG, 0},
	{"[1,]", -EBADMSG, 0},
	{"{\"a\":1,}", -EBADMSG, 0},
	{"[,1]", -EBADMSG, 0},
	{"{,}", -EBADMSG, 0},
	{"[1 2]", -EBADMSG, 0},
	{"[1,,2]", -EBADMSG, 0},
	{"{\"a\" 1}", -EBADMSG, 0},
	{"{\"a\"::1}", -EBADMSG, 0},
	{"{\"a\":}", -EBADMSG, 0},
	{"{\"a\"}", -EBADMSG, 0},
	{"{1:2}", -EBADMSG, 0},
	{"{a:1}", -EBADMSG, 0},
	{"{'a':1}", -EBADMSG, 0},
	{"01", -EBADMSG, 0},
	{"-01", -EBADMSG, 0},
	{"00", -EBADMSG, 0},
	{"[01]", -EBADMSG, 0},
	{"+1", -EBADMSG, 0},
	{"-", -EBADMSG, 0},
	{"[-]", -EBADMSG, 0},
	{"1.", -EBADMSG, 0},
	{"[1.]", -EBADMSG, 0},
	{".5", -EBADMSG, 0},
	{"1.e5", -EBADMSG, 0},
	{"1e", -EBADMSG, 0},
	{"1e+", -EBADMSG, 0},
	{"[1e-]", -EBADMSG, 0},
	{"1.5.2", -EBADMSG, 0},
	{"0x10", -EBADMSG, 0},
	{"1true", -EBADMSG, 0},
	{"NaN", -EBADMSG, 0},
	{"Infinity", -EBADMSG, 0},
	{"-Infinity", -EBADMSG, 0},
	{"tru", -EBADMSG, 0},
	{"True", -EBADMSG, 0},
	{"nul", -EBADMSG, 0},
	{"nulll", -EBADMSG, 0},
	{"falsey", -EBADMSG, 0},
	{"undefined", -EBADMSG, 0},
	{"[true false]", -EBADMSG, 0},
	{"\"abc", -EBADMSG, 0},
	{"\"a\x01\"", -EBADMSG, 0},
	{"\"a\tb\"", -EBADMSG, 0},
	{"\"a\nb\"", -EBADMSG, 0},
	{"\"\\x\"", -EBADMSG, 0},
	{"\"\\a\"", -EBADMSG, 0},
	{"\"\\U0041\"", -EBADMSG, 0},
	{"\"\\u12G4\"", -EBADMSG, 0},
	{"\"\\u123\"", -EBADMSG, 0},
	{"\"\\", -EBADMSG, 0},
	{"\"\\u00", -EBADMSG, 0},
	{"\"\\ud800\\x\"", -EBADMSG, 0},
	{"[", -EBADMSG, 0},
	{"{", -EBADMSG, 0},
	{"]", -EBADMSG, 0},
	{"}", -EBADMSG, 0},
	{"[1}", -EBADMSG, 0},
	{"{\"a\":1]", -EBADMSG, 0},
	{"[1]]", -EBADMSG, 0},
	{"[1] 2", -EBADMSG, 0},
	{"{}{}", -EBADMSG, 0},
	{"1 2", -EBADMSG, 0},
	{"\"a\" \"b\"", -EBADMSG, 0},
	{"\xef\xbb\xbf{}", -EBADMSG, 0},
	{"[1]\x00", -EBADMSG, 4},
	{"\x0b[]", -EBADMSG, 0},
	{"[\f]", -EBADMSG, 0},
	{"/*c*/1", -EBADMSG, 0},
	{"[1]x", -EBADMSG, 0},
};

static void check_doc_cases(const struct doc_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct rec r;
		size_t len = cases[i].len != 0 ? cases[i].len : strlen(cases[i].doc);

		rec_init(&r);
		if (check_all_splits(cases[i].doc, len, &r) != cases[i].rc) {
			fail_msg("case %zu '%s': expected %d\n%.*s", i, cases[i].doc, cases[i].rc,
				 (int)r.out.len, r.out.data);
		}
		rec_free(&r);
	}
}

static void test_valid_documents(void **state)
{
	(void)state;
	check_doc_cases(valid_docs, sizeof(valid_docs) / sizeof(valid_docs[0]));
}

static void test_malformed_documents(void **state)
{
	(void)state;
	check_doc_cases(malformed_docs, sizeof(malformed_docs) / sizeof(malformed_docs[0]));
}

/* Every byte value alone inside a string, outside one, and as the document. */
static void test_every_byte(void **state)
{
	char doc[8];
	struct rec r;

	(void)state;
	for (int c = 0; c < 256; c++) {
		int in_string;
		int alone;

		doc[0] = '"';
		doc[1] = (char)c;
		doc[2] = '"';
		rec_init(&r);
		in_string = tokenize(&r, doc, 3, NULL, 0);
		if (c < 0x20 || c == '"' || c == '\\') {
			assert_int_equal(in_string, -EBADMSG);
		} else if (c < 0x80) {
			assert_int_equal(in_string, 0);
			assert_int_equal(r.str.len, 1);
			assert_int_equal((unsigned char)r.str.data[0], c);
		} else {
			/* A lone non-ASCII byte is never valid UTF-8. */
			assert_int_equal(in_string, 0);
			assert_int_equal(r.str.len, 3);
			assert_memory_equal(r.str.data, "\xef\xbf\xbd", 3);
		}
		rec_free(&r);

		doc[0] = (char)c;
		rec_init(&r);
		alone = tokenize(&r, doc, 1, NULL, 0);
		assert_int_equal(alone, c >= '0' && c <= '9' ? 0 : -EBADMSG);
		rec_free(&r);
	}
}

/* A string of @p run plain bytes ('a') between quotes, @p run + 2 bytes at @p doc. */
static void plain_string_doc(char *doc, size_t run)
{
	doc[0] = '"';
	memset(doc + 1, 'a', run);
	doc[run + 1] = '"';
}

/*
 * Every byte value at every place of a run of plain bytes longer than two words: the string
 * loop tests a word at a time (stop_mask()), so a byte that stops the run must be found
 * in any lane of a word, and the bytes around it stay where they were.
 */
static void test_every_byte_in_every_lane(void **state)
{
	enum { RUN = 24 };
	char doc[RUN + 2];
	char want[RUN + 2];
	struct rec r;

	(void)state;
	for (int c = 0; c < 256; c++) {
		for (int at = 0; at < RUN; at++) {
			int rc;

			plain_string_doc(doc, RUN);
			doc[1 + at] = (char)c;
			rec_init(&r);
			rc = tokenize(&r, doc, sizeof(doc), NULL, 0);
			if (c < 0x20 || c == '"' || c == '\\') {
				/* a control byte; a quote ends the string early; "\a" is no escape */
				assert_int_equal(rc, -EBADMSG);
			} else if (c < 0x80) {
				assert_int_equal(rc, 0);
				assert_int_equal(r.str.len, RUN);
				assert_memory_equal(r.str.data, doc + 1, RUN);
			} else {
				memset(want, 'a', RUN + 2);
				memcpy(want + at, "\xef\xbf\xbd", 3);
				assert_int_equal(rc, 0);
				assert_int_equal(r.str.len, RUN + 2);
				assert_memory_equal(r.str.data, want, RUN + 2);
			}
			rec_free(&r);
		}
	}
}

/*
 * Two bytes that stop a run in one word, every pair of places: the first must be the one
 * found (an invalid UTF-8 byte, which becomes U+FFFD where it stood), then the escape after
 * it. Taking any flagged lane but the lowest would copy the 0x80 through raw.
 */
static void test_first_stop_in_a_word_wins(void **state)
{
	enum { RUN = 24 };
	char doc[RUN + 2];
	char want[RUN + 2];
	struct rec r;

	(void)state;
	for (int i = 0; i + 2 < RUN; i++) {
		for (int j = i + 1; j + 1 < RUN; j++) {
			int rc;
			size_t n = 0;

			plain_string_doc(doc, RUN);
			doc[1 + i] = (char)0x80;
			doc[1 + j] = '\\';
			doc[2 + j] = 'n';
			for (int k = 0; k < RUN; k++) {
				if (k == i) {
					memcpy(want + n, "\xef\xbf\xbd", 3);
					n += 3;
				} else if (k == j) {
					want[n++] = '\n';
					k++;
				} else {
					want[n++] = 'a';
				}
			}
			rec_init(&r);
			rc = tokenize(&r, doc, sizeof(doc), NULL, 0);
			assert_int_equal(rc, 0);
			assert_int_equal(r.str.len, n);
			assert_memory_equal(r.str.data, want, n);
			rec_free(&r);
		}
	}
}

/* ---- strings: escapes, surrogates, UTF-8 ---- */

static void test_escapes(void **state)
{
	(void)state;
	assert_string_value("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t", 8);
	assert_string_value("\"\\u0000a\"", "\0a", 2);
	assert_string_value("\"\\u0041\\u00e9\\u20AC\"", "A\xc3\xa9\xe2\x82\xac", 6);
	assert_string_value("\"\\uFFFF\"", "\xef\xbf\xbf", 3);
	/* A pair joins into one 4-byte character, however it is cut. */
	assert_string_value("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4);
	assert_string_value("\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf", 4);
	assert_string_value("\"x\\ud800\\udc00y\"", "x\xf0\x90\x80\x80y", 6);
	/* Lone halves become U+FFFD; what follows them is read normally. */
	assert_string_value("\"\\ud800\"", "\xef\xbf\xbd", 3);
	assert_string_value("\"\\udc00\"", "\xef\xbf\xbd", 3);
	assert_string_value("\"\\ud800x\"", "\xef\xbf\xbdx", 4);
	assert_string_value("\"\\ud800\\n\"", "\xef\xbf\xbd\n", 4);
	assert_string_value("\"\\ud800\\u0041\"", "\xef\xbf\xbd" "A", 4);
	assert_string_value("\"\\ud800\\ud83d\\ude00\"", "\xef\xbf\xbd\xf0\x9f\x98\x80", 7);
	assert_string_value("\"\\ude00\\ud83d\"", "\xef\xbf\xbd\xef\xbf\xbd", 6);
}

static void test_utf8(void **state)
{
	(void)state;
	/* Valid sequences of every length pass through unchanged. */
	assert_string_value("\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"",
			    "\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
			    18);
	/* Invalid ones: one U+FFFD per maximal subpart, as Python's errors="replace". */
	assert_string_value("\"\xe2\x82\"", "\xef\xbf\xbd", 3);
	assert_string_value("\"\xe2\x82x\"", "\xef\xbf\xbdx", 4);
	assert_string_value("\"\xf0\x80\x80\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9);
	assert_string_value("\"\xed\xa0\x80\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9);
	assert_string_value("\"\xc0\xaf\"", "\xef\xbf\xbd\xef\xbf\xbd", 6);
	/* Overlong 3- and 4-byte forms, surrogates, above U+10FFFF: each bound of Table 3-7. */
	assert_string_value("\"\xe0\x9f\xbf\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9);
	assert_string_value("\"\xe0\xa0\x80\"", "\xe0\xa0\x80", 3);
	assert_string_value("\"\xf0\x8f\xbf\xbf\"",
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 12);
	assert_string_value("\"\xed\x9f\xbf\"", "\xed\x9f\xbf", 3);
	assert_string_value("\"\xf4\x8f\xbf\xbf\"", "\xf4\x8f\xbf\xbf", 4);
	assert_string_value("\"\xc1\xbf\xc2\x80\"", "\xef\xbf\xbd\xef\xbf\xbd\xc2\x80", 8);
	assert_string_value("\"\xf5\x80\x80\x80\"",
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 12);
	assert_string_value("\"\xf4\x90\x80\x80\"",
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 12);
	assert_string_value("\"\xf0\x9f\x98\"", "\xef\xbf\xbd", 3);
	assert_string_value("\"\xf0\x9f\x98\xc3\xa9\"", "\xef\xbf\xbd\xc3\xa9", 5);
	assert_string_value("\"a\x80\xbf" "b\"", "a\xef\xbf\xbd\xef\xbf\xbd" "b", 8);
	assert_string_value("\"\xc3\\n\"", "\xef\xbf\xbd\n", 4);
	/* Outside strings non-ASCII bytes are no JSON at all. */
	assert_int_equal(feed_all("[\xc3\xa9]", depth_cb, NULL), -EBADMSG);
	/* A control byte ends the sequence and is itself an error. */
	assert_int_equal(feed_all("\"\xe2\x0a\"", depth_cb, NULL), -EBADMSG);
}

/* ---- fragments ---- */

struct frag_log {
	size_t count;
	size_t lens[16];
	bool from_input[16];
	const char *input;
	size_t input_len;
};

static int frag_cb(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct frag_log *f = user_data;

	(void)js;
	if (v->token == JSON_STRING && f->count < 16) {
		f->lens[f->count] = v->len;
		f->from_input[f->count] = v->text >= f->input && v->text < f->input + f->input_len;
		f->count++;
	}
	return 0;
}

static void test_fragments_are_long(void **state)
{
	const char *text = "plain text, one slice of the input";
	const char *esc = "\"ab\\ncd\\\"ef\"";
	struct json_stream js;
	struct frag_log f = {0};
	char doc[JSON_STREAM_OUT_MAX + 8];

	(void)state;
	snprintf(doc, sizeof(doc), "[\"%s\"]", text);
	/* Unescaped text in one chunk: one fragment, pointing into the input. */
	f.input = doc;
	f.input_len = strlen(doc);
	json_stream_init(&js, frag_cb, &f);
	assert_int_equal(json_stream_feed(&js, doc, strlen(doc)), 0);
	assert_int_equal(json_stream_finish(&js), 0);
	assert_int_equal(f.count, 1);
	assert_int_equal(f.lens[0], strlen(text));
	assert_true(f.from_input[0]);

	/* Escapes and the short runs after them are gathered: "ab", then "\ncd\"ef" (6). */
	memset(&f, 0, sizeof(f));
	f.input = esc;
	f.input_len = strlen(esc);
	json_stream_init(&js, frag_cb, &f);
	assert_int_equal(json_stream_feed(&js, esc, strlen(esc)), 0);
	assert_int_equal(f.count, 2);
	assert_int_equal(f.lens[0], 2);
	assert_true(f.from_input[0]);
	assert_int_equal(f.lens[1], 6);
	assert_false(f.from_input[1]);

	/* Decoded bytes and the run after them fill out[] exactly: still one fragment. */
	memset(&f, 0, sizeof(f));
	snprintf(doc, sizeof(doc), "\"\\n%.*s\"", JSON_STREAM_OUT_MAX - 1,
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	json_stream_init(&js, frag_cb, &f);
	assert_int_equal(json_stream_feed(&js, doc, strlen(doc)), 0);
	assert_int_equal(f.count, 1);
	assert_int_equal(f.lens[0], JSON_STREAM_OUT_MAX);
	/* One byte more does not fit: the run goes on as a slice of the input. */
	memset(&f, 0, sizeof(f));
	snprintf(doc, sizeof(doc), "\"\\n%.*s\"", JSON_STREAM_OUT_MAX,
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	f.input = doc;
	f.input_len = strlen(doc);
	json_stream_init(&js, frag_cb, &f);
	assert_int_equal(json_stream_feed(&js, doc, strlen(doc)), 0);
	assert_int_equal(f.count, 2);
	assert_int_equal(f.lens[0], 1);
	assert_false(f.from_input[0]);
	assert_int_equal(f.lens[1], JSON_STREAM_OUT_MAX);
	assert_true(f.from_input[1]);

	/* Cut in two: one fragment per chunk, the second ends the string. */
	snprintf(doc, sizeof(doc), "[\"%s\"]", text);
	memset(&f, 0, sizeof(f));
	f.input = doc;
	f.input_len = strlen(doc);
	json_stream_init(&js, frag_cb, &f);
	assert_int_equal(json_stream_feed(&js, doc, 10), 0);
	assert_int_equal(json_stream_feed(&js, doc + 10, strlen(doc) - 10), 0);
	assert_int_equal(f.count, 2);
	assert_int_equal(f.lens[0], 8);
	assert_int_equal(f.lens[0] + f.lens[1], strlen(text));
}

/* A 1 MiB value streams through: every fragment is a slice of the chunk being fed or of the
 * tokenizer itself, so the tokenizer needs no memory beyond its struct. */
struct big_probe {
	const char *chunk;
	size_t chunk_len;
	const struct json_stream *js;
	size_t total;
	size_t fragments;
	size_t newlines;
	bool last_seen;
	bool outside;
};

static int big_cb(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct big_probe *b = user_data;
	bool in_chunk = v->text >= b->chunk && v->text + v->len <= b->chunk + b->chunk_len;
	bool in_self = (const char *)v->text >= (const char *)b->js &&
		       (const char *)(v->text + v->len) <= (const char *)(b->js + 1);

	(void)js;
	if (v->token != JSON_STRING) {
		return 0;
	}
	b->outside |= !(in_chunk || in_self);
	b->total += v->len;
	b->fragments++;
	b->last_seen |= v->last;
	for (size_t i = 0; i < v->len; i++) {
		b->newlines += v->text[i] == '\n';
	}
	return 0;
}

static void big_string(bool escapes)
{
	enum { BIG = 1 << 20, CHUNK = 4096 };
	char *doc = malloc(2 * BIG + 2);
	struct json_stream js;
	struct big_probe b = {0};
	size_t newlines = 0;
	size_t chunks = 0;
	size_t len = 0;

	assert_non_null(doc);
	doc[len++] = '"';
	for (size_t value = 0; value < BIG; value++) {
		/* With escapes a "\n" every 100 bytes of the value, which stays 1 MiB. */
		if (escapes && value % 100 == 99) {
			doc[len++] = '\\';
			doc[len++] = 'n';
			newlines++;
		} else {
			doc[len++] = (char)('a' + value % 26);
		}
	}
	doc[len++] = '"';
	b.js = &js;
	json_stream_init(&js, big_cb, &b);
	for (size_t at = 0; at < len; at += CHUNK) {
		size_t n = len - at < CHUNK ? len - at : CHUNK;
		char *chunk = malloc(n);

		assert_non_null(chunk);
		memcpy(chunk, doc + at, n);
		b.chunk = chunk;
		b.chunk_len = n;
		assert_int_equal(json_stream_feed(&js, chunk, n), 0);
		free(chunk);
		chunks++;
	}
	assert_int_equal(json_stream_finish(&js), 0);
	assert_false(b.outside);
	assert_true(b.last_seen);
	assert_int_equal(b.total, BIG);
	assert_int_equal(b.newlines, newlines);
	if (!escapes) {
		/* One fragment per chunk: none is split without need. */
		assert_int_equal(b.fragments, chunks);
	}
	free(doc);
}

/* Malformed input: what was read of a string before the error is still handed on. */
static void test_string_before_error(void **state)
{
	static const char *const docs[] = {
		"[\"\\nab\\x\"]",	  /* invalid escape */
		"[\"\\nab\x01\"]",	  /* control character */
		"[\"\\nab\\u12x4\"]", /* bad hex digit */
		"[\"\\nab",	  /* end of input inside the string (at finish) */
	};
	struct rec r;

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		rec_init(&r);
		assert_int_equal(check_all_splits(docs[i], strlen(docs[i]), &r), -EBADMSG);
		assert_int_equal(r.str.len, 3);
		assert_memory_equal(r.str.data, "\nab", 3);
		rec_free(&r);
	}
}

static void test_one_mib_string(void **state)
{
	(void)state;
	big_string(false);
	big_string(true);
}

/* ---- paths ---- */

struct path_probe {
	struct buf args;
	char input_tokens[JSON_NUMBER_MAX + 1];
	int root_hits;
	int star_hits;
	int hash_hits;
	int wrong_hits;
};

static const char *const wrong_paths[] = {
	"Choices",
	"choices.0.delta",
	"id.x",
	"choices.#.delta.tool_calls.#.function.arguments.x",
	"choices.#.delta.tool_calls.#.function.arguments.",
	"choices.*.delta.tool_calls.#.function.arguments",
	"#.#.delta.tool_calls.#.function.arguments",
	"choices.#.delta.tool_calls.#.function.argument",
	"choices.#.delta.tool_calls.#.function.argumentss",
	"choices..delta.tool_calls.#.function.arguments",
	".choices.#.delta.tool_calls.#.function.arguments",
};

static int path_cb(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct path_probe *p = user_data;

	if (json_stream_path_is(js, "choices.#.delta.tool_calls.#.function.arguments")) {
		assert_int_equal(v->token, JSON_STRING);
		assert_int_equal(json_stream_depth(js), 7);
		assert_string_equal(json_stream_key(js, 1), "choices");
		assert_int_equal(json_stream_index(js, 2), 0);
		assert_int_equal(json_stream_index(js, 5), 1);
		assert_string_equal(json_stream_key(js, 7), "arguments");
		buf_put(&p->args, v->text, v->len);
	}
	if (json_stream_path_is(js, "response.usage.input_tokens")) {
		assert_int_equal(v->token, JSON_NUMBER);
		snprintf(p->input_tokens, sizeof(p->input_tokens), "%s", v->text);
	}
	if (json_stream_path_is(js, "")) {
		assert_int_equal(json_stream_depth(js), 0);
		p->root_hits++;
	}
	if (json_stream_path_is(js, "*") && (v->token != JSON_STRING || v->first)) {
		assert_int_equal(json_stream_depth(js), 1);
		assert_non_null(json_stream_key(js, 1));
		p->star_hits++;
	}
	if (json_stream_path_is(js, "#")) {
		p->hash_hits++;
	}
	for (size_t i = 0; i < sizeof(wrong_paths) / sizeof(wrong_paths[0]); i++) {
		p->wrong_hits += json_stream_path_is(js, wrong_paths[i]);
	}
	return 0;
}

static void test_paths(void **state)
{
	const char *chat =
		"{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
		"{\"index\":0,\"function\":{\"name\":\"a\"}},"
		"{\"index\":1,\"function\":{\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}}]}";
	const char *resp = "{\"type\":\"response.completed\",\"response\":{\"id\":\"r\","
			   "\"usage\":{\"input_tokens\":1234,\"output_tokens\":5}}}";
	struct path_probe p = {0};
	struct json_stream js;

	(void)state;
	json_stream_init(&js, path_cb, &p);
	for (size_t i = 0; chat[i] != '\0'; i++) {
		assert_int_equal(json_stream_feed(&js, chat + i, 1), 0);
	}
	assert_int_equal(json_stream_finish(&js), 0);
	buf_put(&p.args, "", 1);
	assert_string_equal(p.args.data, "{\"city\":\"Paris\"}");
	/* The root object's begin and end; the two members at depth 1. */
	assert_int_equal(p.root_hits, 2);
	assert_int_equal(p.star_hits, 1 + 2);
	assert_int_equal(p.hash_hits, 0);
	assert_int_equal(p.wrong_hits, 0);
	buf_free(&p.args);

	memset(&p, 0, sizeof(p));
	json_stream_init(&js, path_cb, &p);
	assert_int_equal(json_stream_feed(&js, resp, strlen(resp)), 0);
	assert_int_equal(json_stream_finish(&js), 0);
	assert_string_equal(p.input_tokens, "1234");
	assert_int_equal(p.star_hits, 1 + 2);

	/* "#" is any element of the root array; a scalar document is the root itself. */
	memset(&p, 0, sizeof(p));
	assert_int_equal(feed_all("[1,[2],\"x\"]", path_cb, &p), 0);
	assert_int_equal(p.hash_hits, 1 + 2 + 1);
	assert_int_equal(p.root_hits, 2);
	memset(&p, 0, sizeof(p));
	assert_int_equal(feed_all("\"only\"", path_cb, &p), 0);
	assert_int_equal(p.root_hits, 1);
	assert_false(json_stream_path_is(&js, NULL));
	buf_free(&p.args);
}

/* On an object level "#" and "." are ordinary key text; "*" never matches an element. */
static int literal_cb(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	int *hits = user_data;

	if (v->token == JSON_NUMBER) {
		hits[0] += json_stream_path_is(js, "#");
		hits[1] += json_stream_path_is(js, "a.*");
		hits[2] += json_stream_path_is(js, "a.#");
	}
	return 0;
}

static void test_path_literals(void **state)
{
	int hits[3] = {0};

	(void)state;
	assert_int_equal(feed_all("{\"#\":1,\"a\":[2],\"b\":{\"#\":3}}", literal_cb, hits), 0);
	assert_int_equal(hits[0], 1);
	assert_int_equal(hits[1], 0);
	assert_int_equal(hits[2], 1);
}

/* ---- control flow ---- */

static void test_callback_stops(void **state)
{
	const char *doc = "{\"a\":[1,2,3],\"b\":\"text\"}";
	struct json_stream js;
	struct rec r;

	(void)state;
	rec_init(&r);
	r.stop_after = 3;
	r.stop_rc = 42;
	json_stream_init(&js, rec_cb, &r);
	r.js = &js;
	r.chunk = doc;
	r.chunk_len = strlen(doc);
	assert_int_equal(json_stream_feed(&js, doc, strlen(doc)), 42);
	assert_int_equal(r.calls, 3);
	/* Stopped stays stopped until reset. */
	assert_int_equal(json_stream_feed(&js, "]", 1), 42);
	assert_int_equal(r.calls, 3);
	assert_int_equal(json_stream_finish(&js), -EBADMSG);
	json_stream_reset(&js);
	r.stop_after = 0;
	assert_int_equal(json_stream_feed(&js, doc, strlen(doc)), 0);
	assert_int_equal(json_stream_finish(&js), 0);

	/* A top-level number is reported by finish, which passes a stop on. */
	json_stream_reset(&js);
	r.calls = 0;
	r.stop_after = 1;
	r.stop_rc = -7;
	r.chunk = "12";
	r.chunk_len = 2;
	assert_int_equal(json_stream_feed(&js, "12", 2), 0);
	assert_int_equal(r.calls, 0);
	assert_int_equal(json_stream_finish(&js), -7);
	assert_int_equal(r.calls, 1);
	rec_free(&r);
}

static void test_reset_between_documents(void **state)
{
	struct json_stream js;
	struct rec r;

	(void)state;
	rec_init(&r);
	json_stream_init(&js, rec_cb, &r);
	r.js = &js;
	r.check_paths = false;
	r.chunk = "{\"a\":[1";
	r.chunk_len = 7;
	/* A document cut short, then reset: the next one starts clean. */
	assert_int_equal(json_stream_feed(&js, r.chunk, r.chunk_len), 0);
	assert_int_equal(json_stream_finish(&js), -EBADMSG);
	json_stream_reset(&js);
	assert_int_equal(json_stream_depth(&js), 0);
	r.chunk = "  [\"x\"]  ";
	r.chunk_len = 9;
	assert_int_equal(json_stream_feed(&js, r.chunk, r.chunk_len), 0);
	assert_int_equal(json_stream_finish(&js), 0);
	/* An error is sticky too. */
	json_stream_reset(&js);
	assert_int_equal(json_stream_feed(&js, "[1,]", 4), -EBADMSG);
	assert_int_equal(json_stream_feed(&js, "[1]", 3), -EBADMSG);
	assert_int_equal(json_stream_finish(&js), -EBADMSG);
	/* An empty feed changes nothing. */
	json_stream_reset(&js);
	assert_int_equal(json_stream_feed(&js, NULL, 0), 0);
	assert_int_equal(json_stream_feed(&js, "[]", 2), 0);
	assert_int_equal(json_stream_finish(&js), 0);
	rec_free(&r);
}

static void test_depth_reports(void **state)
{
	struct rec r;

	(void)state;
	rec_init(&r);
	assert_int_equal(tokenize_str(&r, "{\"a\":[{}]}"), 0);
	buf_put(&r.out, "", 1);
	assert_string_equal(r.out.data, "{ d0\n"
					"[ d1 k1:a\n"
					"{ d2 k1:a i0\n"
					"} d2 k1:a i0\n"
					"] d1 k1:a\n"
					"} d0\n"
					"rc 0\n");
	rec_free(&r);
	rec_init(&r);
	assert_int_equal(tokenize_str(&r, "[\"\",3,true,false,null,\"s\"]"), 0);
	buf_put(&r.out, "", 1);
	assert_string_equal(r.out.data, "[ d0\n"
					"str d1 i0 =0:\n"
					"num d1 i1 =3\n"
					"true d1 i2\n"
					"false d1 i3\n"
					"null d1 i4\n"
					"str d1 i5 =1:s\n"
					"] d0\n"
					"rc 0\n");
	rec_free(&r);
}

int main(void)
{
	const struct CMUnitTest corpus[] = {
		cmocka_unit_test(test_corpus_splits),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth_bound),
		cmocka_unit_test(test_kept_path_depth),
		cmocka_unit_test(test_number_bound),
		cmocka_unit_test(test_key_bound),
		cmocka_unit_test(test_key_dot_nul),
		cmocka_unit_test(test_valid_documents),
		cmocka_unit_test(test_malformed_documents),
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_every_byte_in_every_lane),
		cmocka_unit_test(test_first_stop_in_a_word_wins),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_fragments_are_long),
		cmocka_unit_test(test_one_mib_string),
		cmocka_unit_test(test_string_before_error),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_path_literals),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_reset_between_documents),
		cmocka_unit_test(test_depth_reports),
	};
	int failed = cmocka_run_group_tests_name("json_stream", tests, NULL, NULL);

	return failed + cmocka_run_group_tests_name("json_stream corpus", corpus, load_corpus,
						    free_corpus);
}
