/*
 * JSON benchmark: the agent's streaming tokenizer (app/src/agent/wire/json_stream.c) against two
 * parsers packaged by Debian, over the payloads of the recorded provider corpus.
 *
 *   json_bench [--iterations N] PARSER FIXTURES_DIR
 *
 * PARSER: stream (json_stream, each payload in one chunk), stream64 (json_stream, 64-byte
 * chunks as they might come off a socket), cjson (cJSON_ParseWithLength + cJSON_Delete:
 * a tree of the document), jsmn (jsmn_parse into a token array: offsets, nothing decoded).
 *
 * Each payload is parsed N times inside bench_run(), and only bench_run() is meant to be
 * measured (valgrind --tool=callgrind --toggle-collect=bench_run). Before that, one pass
 * outside bench_run() measures the peak memory the parser needs for one payload:
 * json_stream needs its struct; cJSON's allocations are counted through cJSON_InitHooks();
 * jsmn needs its parser and a token array large enough for the largest payload. jsmn and
 * cJSON also need the whole payload in one buffer; json_stream does not.
 *
 * Prints one line: key=value pairs read by scripts/bench_json.py.
 */
#define _XOPEN_SOURCE 700 /* nftw() */
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "json_stream.h"

struct payload {
	char *data;
	size_t len;
};

static struct payload *payloads;
static size_t payload_count;

static void die(const char *what)
{
	fprintf(stderr, "json_bench: %s\n", what);
	exit(2);
}

/* ---- the corpus: the same payloads as tests/unit/test_json_stream.c ---- */

static void add_payload(const char *data, size_t len)
{
	payloads = realloc(payloads, (payload_count + 1) * sizeof(*payloads));
	if (payloads == NULL) {
		die("out of memory");
	}
	payloads[payload_count].data = malloc(len + 1);
	if (payloads[payload_count].data == NULL) {
		die("out of memory");
	}
	memcpy(payloads[payload_count].data, data, len);
	payloads[payload_count].data[len] = '\0';
	payloads[payload_count].len = len;
	payload_count++;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s);
	size_t m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int load_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	bool sse = ends_with(path, ".sse");
	bool jsonl = ends_with(path, ".jsonl");
	FILE *f;
	char *data;
	size_t len;

	(void)ftw;
	if (type != FTW_F || !(sse || jsonl || ends_with(path, ".json"))) {
		return 0;
	}
	f = fopen(path, "rb");
	data = malloc((size_t)st->st_size + 1);
	if (f == NULL || data == NULL) {
		die("cannot read a fixture");
	}
	len = fread(data, 1, (size_t)st->st_size, f);
	fclose(f);
	if (!sse && !jsonl) {
		add_payload(data, len);
		free(data);
		return 0;
	}
	for (char *at = data; at < data + len;) {
		char *nl = memchr(at, '\n', (size_t)(data + len - at));
		char *end = nl != NULL ? nl : data + len;
		size_t n = (size_t)(end - at);

		if (jsonl && n > 0) {
			add_payload(at, n);
		} else if (sse && n >= 5 && memcmp(at, "data:", 5) == 0) {
			const char *v = at + 5 + (n > 5 && at[5] == ' ');
			size_t vn = (size_t)(end - v);

			if (!(vn == 6 && memcmp(v, "[DONE]", 6) == 0)) {
				add_payload(v, vn);
			}
		}
		at = end + 1;
	}
	free(data);
	return 0;
}

/* ---- json_stream ---- */

struct stream_count {
	size_t tokens;
	size_t string_bytes;
};

static int on_value(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct stream_count *c = user_data;

	(void)js;
	c->tokens++;
	c->string_bytes += v->len;
	return 0;
}

static bool stream_parse(const struct payload *p, size_t chunk, struct stream_count *c)
{
	struct json_stream js;
	int rc = 0;

	json_stream_init(&js, on_value, c);
	for (size_t at = 0; at < p->len && rc == 0; at += chunk) {
		rc = json_stream_feed(&js, p->data + at, p->len - at < chunk ? p->len - at : chunk);
	}
	return rc == 0 && json_stream_finish(&js) == 0;
}

/* ---- cJSON, with its allocations counted for the memory pass ---- */

static size_t cjson_now;
static size_t cjson_peak;

/* Each block carries its size in front, so that the free hook can count it back. */
#define CJSON_HEADER 16

static void *counting_malloc(size_t n)
{
	unsigned char *block = malloc(n + CJSON_HEADER);

	if (block == NULL) {
		return NULL;
	}
	memcpy(block, &n, sizeof(n));
	cjson_now += n;
	if (cjson_now > cjson_peak) {
		cjson_peak = cjson_now;
	}
	return block + CJSON_HEADER;
}

static void counting_free(void *p)
{
	unsigned char *block;
	size_t n;

	if (p == NULL) {
		return;
	}
	block = (unsigned char *)p - CJSON_HEADER;
	memcpy(&n, block, sizeof(n));
	cjson_now -= n;
	free(block);
}

static bool cjson_parse(const struct payload *p, size_t *items)
{
	cJSON *root = cJSON_ParseWithLength(p->data, p->len);

	if (root == NULL) {
		return false;
	}
	*items += (size_t)cJSON_GetArraySize(root);
	cJSON_Delete(root);
	return true;
}

/* ---- jsmn ---- */

static jsmntok_t *jsmn_tokens;
static unsigned int jsmn_capacity;

static bool jsmn_parse_one(const struct payload *p, size_t *tokens)
{
	jsmn_parser parser;
	int n;

	jsmn_init(&parser);
	n = jsmn_parse(&parser, p->data, p->len, jsmn_tokens, jsmn_capacity);
	if (n < 0) {
		return false;
	}
	*tokens += (size_t)n;
	return true;
}

/* ---- the measured part ---- */

enum parser {
	STREAM,
	STREAM64,
	CJSON,
	JSMN,
};

/*
 * Only this function is counted by callgrind (--toggle-collect=bench_run): extern and not
 * inlined, so that the symbol keeps its name at -O2.
 */
size_t bench_run(enum parser which, unsigned int iterations, size_t *failures);

__attribute__((noinline)) size_t bench_run(enum parser which, unsigned int iterations,
					   size_t *failures)
{
	struct stream_count count = {0};
	size_t work = 0;

	for (unsigned int i = 0; i < iterations; i++) {
		for (size_t k = 0; k < payload_count; k++) {
			const struct payload *p = &payloads[k];
			bool ok;

			switch (which) {
			case STREAM:
				ok = stream_parse(p, SIZE_MAX, &count);
				break;
			case STREAM64:
				ok = stream_parse(p, 64, &count);
				break;
			case CJSON:
				ok = cjson_parse(p, &work);
				break;
			default:
				ok = jsmn_parse_one(p, &work);
				break;
			}
			*failures += !ok;
		}
	}
	return work + count.tokens + count.string_bytes;
}

/* Peak memory for one payload at a time, over the corpus; outside the measured part. */
static size_t peak_memory(enum parser which)
{
	size_t work = 0;
	jsmn_parser parser;
	unsigned int most = 0;

	switch (which) {
	case STREAM:
	case STREAM64:
		return sizeof(struct json_stream);
	case CJSON: {
		cJSON_Hooks hooks = {.malloc_fn = counting_malloc, .free_fn = counting_free};

		cJSON_InitHooks(&hooks);
		for (size_t k = 0; k < payload_count; k++) {
			cjson_parse(&payloads[k], &work);
		}
		cJSON_InitHooks(NULL);
		return cjson_peak;
	}
	default:
		/* jsmn tells how many tokens a payload needs when given no array. */
		for (size_t k = 0; k < payload_count; k++) {
			int n;

			jsmn_init(&parser);
			n = jsmn_parse(&parser, payloads[k].data, payloads[k].len, NULL, 0);
			if (n > 0 && (unsigned int)n > most) {
				most = (unsigned int)n;
			}
		}
		jsmn_capacity = most;
		jsmn_tokens = calloc(most, sizeof(*jsmn_tokens));
		if (jsmn_tokens == NULL) {
			die("out of memory");
		}
		return sizeof(jsmn_parser) + most * sizeof(jsmntok_t);
	}
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"stream", "stream64", "cjson", "jsmn"};
	unsigned int iterations = 1;
	enum parser which = STREAM;
	size_t failures = 0;
	size_t bytes = 0;
	size_t largest = 0;
	size_t peak;
	size_t work;
	int arg = 1;
	bool known = false;

	if (argc > 2 && strcmp(argv[1], "--iterations") == 0) {
		iterations = (unsigned int)strtoul(argv[2], NULL, 10);
		arg = 3;
	}
	if (argc != arg + 2 || iterations == 0) {
		die("usage: json_bench [--iterations N] stream|stream64|cjson|jsmn FIXTURES_DIR");
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(argv[arg], names[i]) == 0) {
			which = (enum parser)i;
			known = true;
		}
	}
	if (!known) {
		die("unknown parser");
	}
	if (nftw(argv[arg + 1], load_file, 16, FTW_PHYS) != 0 || payload_count == 0) {
		die("no fixtures found");
	}
	for (size_t k = 0; k < payload_count; k++) {
		bytes += payloads[k].len;
		largest = payloads[k].len > largest ? payloads[k].len : largest;
	}
	peak = peak_memory(which);
	work = bench_run(which, iterations, &failures);
	printf("parser=%s payloads=%zu bytes=%zu iterations=%u bytes_parsed=%zu peak_bytes=%zu "
	       "largest_payload=%zu failures=%zu work=%zu\n",
	       names[which], payload_count, bytes, iterations, bytes * iterations, peak, largest,
	       failures, work);
	for (size_t k = 0; k < payload_count; k++) {
		free(payloads[k].data);
	}
	free(payloads);
	free(jsmn_tokens);
	return failures == 0 ? 0 : 1;
}
