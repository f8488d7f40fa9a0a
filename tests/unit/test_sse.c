/*
 * The SSE decoder (app/src/agent/wire/sse.c): exact output for each rule of docs/sse.md, and the
 * incremental decoder against a whole-buffer reference decoder written here from the HTML
 * standard, for every split position of synthetic streams and of the recorded streams
 * (RECORDED_DIR/ ** / *.sse: the repository's corpus, host/agent_host/testserver/recorded/,
 * whose path tests/unit/CMakeLists.txt passes), in LF, CR and CRLF.
 *
 * Both decoders write the same log: per dispatched event "event[TYPE] data[LEN]DATA\n", per
 * discarded event "discard[LEN]DATA\n" (the data handed on before the stream ended).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__SANITIZE_ADDRESS__)
#define SSE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SSE_TEST_ASAN 1
#endif
#endif
#ifdef SSE_TEST_ASAN
/* From the sanitizer runtime (gcc installs no header for it). */
size_t __sanitizer_get_current_allocated_bytes(void);
#else
#include <malloc.h>
#endif

#include "sse.h"

/* ---- growing byte buffer (test side only) ---- */

struct buf {
	char *p;
	size_t len;
	size_t cap;
};

static void buf_add(struct buf *b, const void *data, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + len + 1) {
			cap *= 2;
		}
		b->p = realloc(b->p, cap);
		assert_non_null(b->p);
		b->cap = cap;
	}
	if (len > 0) {
		memcpy(b->p + b->len, data, len);
	}
	b->len += len;
	b->p[b->len] = '\0';
}

static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[160];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(tmp));
	buf_add(b, tmp, (size_t)n);
}

/* snprintf that fails the test instead of cutting. */
static void format(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		fail_msg("text too long for a %zu-byte buffer: %s", size, fmt);
	}
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static void log_event(struct buf *log, const char *type, size_t type_len, const char *data,
		      size_t len)
{
	buf_add(log, "event[", 6);
	buf_add(log, type, type_len);
	buf_printf(log, "] data[%zu]", len);
	buf_add(log, data, len);
	buf_add(log, "\n", 1);
}

static void log_discard(struct buf *log, const char *data, size_t len)
{
	buf_printf(log, "discard[%zu]", len);
	buf_add(log, data, len);
	buf_add(log, "\n", 1);
}

/* ---- the incremental decoder, recorded ---- */

struct rec {
	struct buf log;
	struct buf data; /* the pending event's data */
	bool open;       /* on_data was called for the pending event */
	bool truncated;  /* sse_event_type_truncated() in the last on_event */
	const struct sse_decoder *dec;
	char error[160]; /* the first broken callback rule */
	int stop_data_at; /* return 1 from the Nth on_data (1-based); 0: never */
	int stop_event_at;
	int data_calls;
	int event_calls;
};

static void rec_error(struct rec *r, const char *msg)
{
	if (r->error[0] == '\0') {
		snprintf(r->error, sizeof(r->error), "%s", msg);
	}
}

static int rec_on_data(void *user_data, const char *data, size_t len, bool first)
{
	struct rec *r = user_data;

	if (first == r->open) {
		rec_error(r, first ? "first twice in one event" : "first call without first");
	}
	if (len == 0 && !first) {
		rec_error(r, "empty on_data that is not the first");
	}
	r->open = true;
	buf_add(&r->data, data, len);
	r->data_calls++;
	return r->data_calls == r->stop_data_at ? 1 : 0;
}

static int rec_on_event(void *user_data, const char *event_type)
{
	struct rec *r = user_data;
	size_t type_len = strlen(event_type);

	if (!r->open) {
		rec_error(r, "on_event without on_data");
	}
	if (type_len > SSE_EVENT_TYPE_MAX) {
		rec_error(r, "event type longer than SSE_EVENT_TYPE_MAX");
	}
	r->truncated = r->dec != NULL && sse_event_type_truncated(r->dec);
	log_event(&r->log, event_type, type_len, r->data.p ? r->data.p : "", r->data.len);
	r->data.len = 0;
	r->open = false;
	r->event_calls++;
	return r->event_calls == r->stop_event_at ? 2 : 0;
}

static void rec_on_discard(void *user_data)
{
	struct rec *r = user_data;

	if (!r->open) {
		rec_error(r, "on_discard without on_data");
	}
	log_discard(&r->log, r->data.p ? r->data.p : "", r->data.len);
	r->data.len = 0;
	r->open = false;
}

static const struct sse_callbacks rec_callbacks = {
	.on_data = rec_on_data,
	.on_event = rec_on_event,
	.on_discard = rec_on_discard,
};

static void rec_free(struct rec *r)
{
	buf_free(&r->log);
	buf_free(&r->data);
}

/* Feeds @p in in chunks of the given sizes (the last one takes the rest), then finishes. */
static void decode_chunks(struct rec *r, const char *in, size_t len, const size_t *sizes,
			  size_t n_sizes)
{
	struct sse_decoder dec;
	size_t off = 0;

	memset(r, 0, sizeof(*r));
	r->dec = &dec;
	sse_init(&dec, &rec_callbacks, r);
	for (size_t i = 0; i < n_sizes && off < len; i++) {
		size_t n = sizes[i] < len - off ? sizes[i] : len - off;

		assert_int_equal(sse_feed(&dec, in + off, n), 0);
		off += n;
	}
	assert_int_equal(sse_feed(&dec, in + off, len - off), 0);
	assert_int_equal(sse_finish(&dec), 0);
	r->dec = NULL;
	if (r->error[0] != '\0') {
		fail_msg("callback rule broken: %s", r->error);
	}
	if (r->log.p == NULL) {
		buf_add(&r->log, "", 0);
	}
}

static void decode_whole(struct rec *r, const char *in, size_t len)
{
	decode_chunks(r, in, len, NULL, 0);
}

/* ---- the reference decoder: whole buffer, line by line, as the HTML standard reads ---- */

static void reference_decode(const char *in, size_t len, struct buf *log)
{
	struct buf data = {0};
	char type[SSE_EVENT_TYPE_MAX];
	size_t type_len = 0;
	size_t data_lines = 0;
	size_t pos = 0;

	buf_add(log, "", 0);
	if (len >= 3 && memcmp(in, "\xEF\xBB\xBF", 3) == 0) {
		pos = 3;
	}
	for (;;) {
		size_t e = pos;

		while (e < len && in[e] != '\r' && in[e] != '\n') {
			e++;
		}
		if (e == len) {
			break; /* no line end: an incomplete last line */
		}
		const char *line = in + pos;
		size_t line_len = e - pos;

		pos = e + 1;
		if (in[e] == '\r' && pos < len && in[pos] == '\n') {
			pos++;
		}
		if (line_len == 0) {
			if (data_lines > 0) {
				log_event(log, type, type_len, data.p, data.len);
			}
			data.len = 0;
			data_lines = 0;
			type_len = 0;
			continue;
		}
		if (line[0] == ':') {
			continue;
		}
		const char *colon = memchr(line, ':', line_len);
		size_t name_len = colon ? (size_t)(colon - line) : line_len;
		const char *value = colon ? colon + 1 : line + line_len;
		size_t value_len = line_len - (size_t)(value - line);

		if (value_len > 0 && value[0] == ' ') {
			value++;
			value_len--;
		}
		if (name_len == 4 && memcmp(line, "data", 4) == 0) {
			if (data_lines > 0) {
				buf_add(&data, "\n", 1);
			}
			buf_add(&data, value, value_len);
			data_lines++;
		} else if (name_len == 5 && memcmp(line, "event", 5) == 0) {
			type_len = value_len < sizeof(type) ? value_len : sizeof(type);
			memcpy(type, value, type_len);
			/* on_event gets a C string: a NUL ends the type there. */
			const char *nul = memchr(type, '\0', type_len);

			if (nul != NULL) {
				type_len = (size_t)(nul - type);
			}
		}
	}
	/*
	 * The stream ended. Data handed on for the pending event: its complete data lines and,
	 * when the incomplete last line got past "data:", the "\n" before it and its value.
	 */
	bool handed_on = data_lines > 0;
	size_t tail_len = len - pos;

	if (tail_len >= 5 && memcmp(in + pos, "data:", 5) == 0) {
		const char *value = in + pos + 5;
		size_t value_len = tail_len - 5;

		if (value_len > 0 && value[0] == ' ') {
			value++;
			value_len--;
		}
		if (data_lines > 0) {
			buf_add(&data, "\n", 1);
		}
		buf_add(&data, value, value_len);
		handed_on = handed_on || value_len > 0;
	}
	if (handed_on) {
		log_discard(log, data.p, data.len);
	}
	buf_free(&data);
}

/* ---- comparison helpers ---- */

static void assert_same_log(const struct buf *want, const struct buf *got, const char *what)
{
	if (want->len == got->len && memcmp(want->p, got->p, want->len) == 0) {
		return;
	}
	size_t i = 0;

	while (i < want->len && i < got->len && want->p[i] == got->p[i]) {
		i++;
	}
	size_t from = i > 60 ? i - 60 : 0;

	fail_msg("%s: logs differ at byte %zu (lengths %zu and %zu)\nwant ...%.120s\ngot  ...%.120s",
		 what, i, want->len, got->len, want->p + from, got->p + from);
}

/* Reference and whole-buffer decoding agree, and so does every split into two chunks. */
static void check_every_split(const char *in, size_t len, const char *what)
{
	struct buf want = {0};
	struct rec r;
	char label[200];

	reference_decode(in, len, &want);
	decode_whole(&r, in, len);
	format(label, sizeof(label), "%s: whole buffer", what);
	assert_same_log(&want, &r.log, label);
	rec_free(&r);
	for (size_t split = 0; split <= len; split++) {
		decode_chunks(&r, in, len, &split, 1);
		format(label, sizeof(label), "%s: split at %zu", what, split);
		assert_same_log(&want, &r.log, label);
		rec_free(&r);
	}
	buf_free(&want);
}

/* Every pair of split positions (three chunks): for short inputs. */
static void check_every_double_split(const char *in, size_t len, const char *what)
{
	struct buf want = {0};
	struct rec r;
	char label[200];

	reference_decode(in, len, &want);
	for (size_t a = 0; a <= len; a++) {
		for (size_t b = a; b <= len; b++) {
			size_t sizes[2] = {a, b - a};

			decode_chunks(&r, in, len, sizes, 2);
			format(label, sizeof(label), "%s: splits at %zu and %zu", what, a, b);
			assert_same_log(&want, &r.log, label);
			rec_free(&r);
		}
	}
	buf_free(&want);
}

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* Chunk sizes: mostly small (1..16), sometimes up to 4096. */
static size_t random_chunk_size(void)
{
	uint64_t x = rng_next();

	return (x & 3) != 0 ? 1 + (size_t)((x >> 8) % 16) : 1 + (size_t)((x >> 8) % 4096);
}

static void check_random_chunkings(const char *in, size_t len, int runs, const char *what)
{
	struct buf want = {0};
	struct rec r;
	char label[200];
	size_t *sizes = malloc((len + 1) * sizeof(*sizes));

	assert_non_null(sizes);
	reference_decode(in, len, &want);
	for (int run = 0; run < runs; run++) {
		size_t n = 0;
		size_t total = 0;
		uint64_t seed = rng_state;

		while (total < len) {
			sizes[n] = random_chunk_size();
			total += sizes[n++];
		}
		decode_chunks(&r, in, len, sizes, n);
		format(label, sizeof(label), "%s: random chunking %d (rng state %llu)", what, run,
			 (unsigned long long)seed);
		assert_same_log(&want, &r.log, label);
		rec_free(&r);
	}
	/* And one byte at a time. */
	for (size_t i = 0; i < len; i++) {
		sizes[i] = 1;
	}
	decode_chunks(&r, in, len, sizes, len);
	format(label, sizeof(label), "%s: 1-byte chunks", what);
	assert_same_log(&want, &r.log, label);
	rec_free(&r);
	free(sizes);
	buf_free(&want);
}

/* The decoder's log for @p in equals @p expected, fed whole, in 1-byte chunks and split. */
static void expect_log_n(const char *in, size_t len, const char *expected, size_t expected_len)
{
	struct buf want = {0};
	struct rec r;

	buf_add(&want, expected, expected_len);
	decode_whole(&r, in, len);
	assert_same_log(&want, &r.log, in);
	rec_free(&r);
	/* The reference decoder must agree with the hand-written expectation too. */
	struct buf ref = {0};

	reference_decode(in, len, &ref);
	assert_same_log(&want, &ref, "reference decoder");
	buf_free(&ref);
	check_every_double_split(in, len, in);
	buf_free(&want);
}

static void expect_log(const char *in, size_t len, const char *expected)
{
	expect_log_n(in, len, expected, strlen(expected));
}

#define EXPECT(in, expected) expect_log((in), sizeof(in) - 1, (expected))

/* ---- the rules, one by one ---- */

static void test_line_ends(void **state)
{
	(void)state;
	EXPECT("data: a\n\n", "event[] data[1]a\n");
	EXPECT("data: a\r\r", "event[] data[1]a\n");
	EXPECT("data: a\r\n\r\n", "event[] data[1]a\n");
	/* Mixed: each of CR, LF and CR LF ends one line; LF CR is two line ends. */
	EXPECT("data: a\r\ndata: b\rdata: c\n\r\n", "event[] data[5]a\nb\nc\n");
	EXPECT("data: a\n\rdata: b\r\n\n", "event[] data[1]a\nevent[] data[1]b\n");
	/* CR CR LF: the LF belongs to the second CR, so one blank line, not two. */
	EXPECT("data: a\r\r\ndata: b\n\n", "event[] data[1]a\nevent[] data[1]b\n");
}

static void test_comments(void **state)
{
	(void)state;
	EXPECT(": hello\ndata: a\n: between\n\n", "event[] data[1]a\n");
	EXPECT(":\r:x\r\ndata:a\r\r", "event[] data[1]a\n");
	/* A comment line with a colon inside, and one that looks like a field. */
	EXPECT(":data: no\n\n", "");
	EXPECT(": OPENROUTER PROCESSING\n\ndata: {}\n\n", "event[] data[2]{}\n");
}

static void test_multi_line_data(void **state)
{
	(void)state;
	EXPECT("data: a\ndata: b\ndata: c\n\n", "event[] data[5]a\nb\nc\n");
	EXPECT("data: a\n: comment\ndata: b\n\n", "event[] data[3]a\nb\n");
	EXPECT("data:\ndata:\n\n", "event[] data[1]\n\n");
	EXPECT("data: a\ndata:\n\n", "event[] data[2]a\n\n");
}

static void test_data_space(void **state)
{
	(void)state;
	EXPECT("data:a\n\n", "event[] data[1]a\n");
	EXPECT("data: a\n\n", "event[] data[1]a\n");
	EXPECT("data:  a\n\n", "event[] data[2] a\n");
	EXPECT("data:\ta\n\n", "event[] data[2]\ta\n");
	EXPECT("data: \n\n", "event[] data[0]\n");
	EXPECT("data:a:b: c\n\n", "event[] data[6]a:b: c\n");
}

static void test_event_type(void **state)
{
	(void)state;
	EXPECT("event: x\ndata: a\n\n", "event[x] data[1]a\n");
	EXPECT("data: a\nevent: x\n\n", "event[x] data[1]a\n");
	EXPECT("event:x\ndata: a\nevent:  y\n\n", "event[ y] data[1]a\n");
	/* The type belongs to one event only. */
	EXPECT("event: x\ndata: a\n\ndata: b\n\n", "event[x] data[1]a\nevent[] data[1]b\n");
	/* A blank line without data dispatches nothing and forgets the type. */
	EXPECT("event: x\n\ndata: b\n\n", "event[] data[1]b\n");
	EXPECT("event: x\n\n\n\n", "");
	/* "event" without colon: an empty type. */
	EXPECT("event: x\nevent\ndata: a\n\n", "event[] data[1]a\n");
	EXPECT("event:\ndata: a\n\n", "event[] data[1]a\n");
	EXPECT("event: response.output_text.delta\r\ndata: {}\r\n\r\n",
	       "event[response.output_text.delta] data[2]{}\n");
}

static void test_event_type_length_bounds(void **state)
{
	char in[200];
	char want[200];
	char type[SSE_EVENT_TYPE_MAX + 2];
	struct rec r;

	(void)state;
	for (size_t n = SSE_EVENT_TYPE_MAX - 1; n <= SSE_EVENT_TYPE_MAX + 1; n++) {
		size_t kept = n < SSE_EVENT_TYPE_MAX ? n : SSE_EVENT_TYPE_MAX;
		struct sse_decoder dec;

		for (size_t i = 0; i < n; i++) {
			type[i] = (char)('a' + i % 26);
		}
		int in_len = snprintf(in, sizeof(in), "event: %.*s\ndata: d\n\n", (int)n, type);
		format(want, sizeof(want), "event[%.*s] data[1]d\n", (int)kept, type);

		memset(&r, 0, sizeof(r));
		r.dec = &dec;
		sse_init(&dec, &rec_callbacks, &r);
		assert_int_equal(sse_feed(&dec, in, (size_t)in_len), 0);
		assert_int_equal(sse_finish(&dec), 0);
		assert_string_equal(r.log.p, want);
		assert_int_equal(r.truncated, n > SSE_EVENT_TYPE_MAX);
		rec_free(&r);
		check_every_split(in, (size_t)in_len, "event type bound");
	}
	/* A later short type clears the mark. */
	memset(&r, 0, sizeof(r));
	{
		struct sse_decoder dec;
		const char *s = "event: 0123456789012345678901234567890123456789012345678901234567890123456789"
				"\nevent: ok\ndata: d\n\n";

		r.dec = &dec;
		sse_init(&dec, &rec_callbacks, &r);
		assert_int_equal(sse_feed(&dec, s, strlen(s)), 0);
		assert_string_equal(r.log.p, "event[ok] data[1]d\n");
		assert_false(r.truncated);
		rec_free(&r);
	}
}

static void test_unterminated_final_event(void **state)
{
	(void)state;
	EXPECT("data: a\n\ndata: b\n", "event[] data[1]a\ndiscard[1]b\n");
	EXPECT("data: a\n\ndata: b", "event[] data[1]a\ndiscard[1]b\n");
	EXPECT("data: a\ndata: b", "discard[3]a\nb\n");
	EXPECT("data: a\ndata:", "discard[2]a\n\n");
	/* Nothing of the event was handed on: no discard. */
	EXPECT("data: a\n\ndata: ", "event[] data[1]a\n");
	EXPECT("data: a\n\ndata", "event[] data[1]a\n");
	EXPECT("data: a\n\nevent: x\n", "event[] data[1]a\n");
	/* An empty first data line was handed on (len 0): discarded. */
	EXPECT("data:\n", "discard[0]\n");
	/* The recorded gateway stream ends with "data: [DONE]\n" and no blank line. */
	EXPECT("data: {}\n\ndata: [DONE]\n", "event[] data[2]{}\ndiscard[6][DONE]\n");
}

static void test_unicode_separators_are_not_line_ends(void **state)
{
	(void)state;
	/* U+2028, U+2029, U+0085 (NEL), VT, FF, NUL are data. */
	EXPECT("data: a\xE2\x80\xA8"
	       "b\xE2\x80\xA9"
	       "c\xC2\x85"
	       "d\v\f\n\n",
	       "event[] data[14]a\xE2\x80\xA8"
	       "b\xE2\x80\xA9"
	       "c\xC2\x85"
	       "d\v\f\n");
	EXPECT("event: x\xE2\x80\xA8y\ndata: 1\n\n", "event[x\xE2\x80\xA8y] data[1]1\n");
	static const char with_nul[] = "data: a\0b\n\n";
	static const char with_nul_log[] = "event[] data[3]a\0b\n";

	expect_log_n(with_nul, sizeof(with_nul) - 1, with_nul_log, sizeof(with_nul_log) - 1);
	/* The type is a C string: a NUL in it ends it for the consumer. */
	static const char type_nul[] = "event: a\0b\ndata: 1\n\n";

	expect_log(type_nul, sizeof(type_nul) - 1, "event[a] data[1]1\n");
}

static void test_field_without_colon(void **state)
{
	(void)state;
	EXPECT("data\n\n", "event[] data[0]\n");
	EXPECT("data\ndata\n\n", "event[] data[1]\n\n");
	EXPECT("data: a\ndata\ndata: b\n\n", "event[] data[4]a\n\nb\n");
	EXPECT("dataa\n\n", "");
	EXPECT("data \n\n", "");
	EXPECT("Data: a\n\n", "");
}

static void test_ignored_fields(void **state)
{
	(void)state;
	EXPECT("id: 1\ndata: a\nretry: 10\n\n", "event[] data[1]a\n");
	EXPECT("id: 1\n\n\n", "");
	EXPECT("retry: 1000\n\n", "");
	EXPECT("foo: bar\nx\n: c\n\n", "");
	EXPECT("foo: bar\ndata: a\nevent2: b\n\n", "event[] data[1]a\n");
	/* A name longer than SSE_FIELD_NAME_MAX, even one that starts like a known field. */
	EXPECT("dataaaaaaaaaaaaaaaaaaaaaaa: a\neventttttttttttttttttttt: x\ndata: b\n\n",
	       "event[] data[1]b\n");
	EXPECT("0123456789abcde: a\n0123456789abcdef\ndata: b\n\n", "event[] data[1]b\n");
}

static void test_blank_lines_without_data(void **state)
{
	(void)state;
	EXPECT("\n\n\r\n\r\r", "");
	EXPECT("\n\ndata: a\n\n\n\n", "event[] data[1]a\n");
	EXPECT("", "");
}

static void test_bom(void **state)
{
	(void)state;
	EXPECT("\xEF\xBB\xBF"
	       "data: a\n\n",
	       "event[] data[1]a\n");
	EXPECT("\xEF\xBB\xBF:c\ndata: a\n\n", "event[] data[1]a\n");
	EXPECT("\xEF\xBB\xBF\n\ndata: a\n\n", "event[] data[1]a\n");
	/* Only one, only at the start of the stream. */
	EXPECT("\xEF\xBB\xBF\xEF\xBB\xBF"
	       "data: a\n\n",
	       "");
	EXPECT("data: a\n\n\xEF\xBB\xBF"
	       "data: b\n\n",
	       "event[] data[1]a\n");
	/* A partial BOM is the start of a field name. */
	EXPECT("\xEF\xBB"
	       "data: a\n\n",
	       "");
	EXPECT("\xEF"
	       "data: a\n\ndata: b\n\n",
	       "event[] data[1]b\n");
	EXPECT("\xEF\n\ndata: b\n\n", "event[] data[1]b\n");
	EXPECT("\xEF\xBB\n\ndata: b\n\n", "event[] data[1]b\n");
	EXPECT("\xEF\xBB", "");
	/* In a data value, EF BB BF is data. */
	EXPECT("data: \xEF\xBB\xBF\n\n", "event[] data[3]\xEF\xBB\xBF\n");
}

static void test_first_flag(void **state)
{
	(void)state;
	/* The recorder fails the test when first is wrong; here also its exact call pattern. */
	EXPECT("data:\ndata: x\n\ndata: y\n\ndata\n\n", "event[] data[2]\nx\nevent[] data[1]y\n"
							 "event[] data[0]\n");
}

/* Data handed on points into the caller's bytes: the decoder copies no data. */
struct zero_copy {
	const char *chunk;
	size_t chunk_len;
	size_t bytes;
	int outside;
};

static int zero_copy_on_data(void *user_data, const char *data, size_t len, bool first)
{
	struct zero_copy *z = user_data;

	(void)first;
	if (len > 0 && !(len == 1 && data[0] == '\n') &&
	    (data < z->chunk || data + len > z->chunk + z->chunk_len)) {
		z->outside++;
	}
	z->bytes += len;
	return 0;
}

static void test_data_is_not_copied(void **state)
{
	static const struct sse_callbacks cb = {.on_data = zero_copy_on_data};
	const char in[] = "data: hello world\ndata: second line\n\n";
	struct zero_copy z = {0};
	struct sse_decoder dec;

	(void)state;
	sse_init(&dec, &cb, &z);
	for (size_t step = 1; step <= 7; step++) {
		for (size_t off = 0; off < sizeof(in) - 1; off += step) {
			z.chunk = in + off;
			z.chunk_len = sizeof(in) - 1 - off < step ? sizeof(in) - 1 - off : step;
			assert_int_equal(sse_feed(&dec, z.chunk, z.chunk_len), 0);
		}
	}
	assert_int_equal(z.outside, 0);
	assert_int_equal(z.bytes, 7 * strlen("hello world\nsecond line"));
}

static void test_callback_stops_decoding(void **state)
{
	const char in[] = "data: a\n\ndata: b\ndata: c\n\ndata: d\n\n";
	struct sse_decoder dec;
	struct rec r;

	(void)state;
	/* on_data stops: the decoder stays stopped; finish discards the open event. */
	memset(&r, 0, sizeof(r));
	r.stop_data_at = 2; /* "b" */
	sse_init(&dec, &rec_callbacks, &r);
	assert_int_equal(sse_feed(&dec, in, sizeof(in) - 1), 1);
	assert_int_equal(sse_feed(&dec, in, sizeof(in) - 1), 1);
	assert_int_equal(r.data_calls, 2);
	assert_int_equal(sse_finish(&dec), 0);
	assert_string_equal(r.log.p, "event[] data[1]a\ndiscard[1]b\n");
	/* After finish the decoder decodes a new stream. */
	r.stop_data_at = 0;
	assert_int_equal(sse_feed(&dec, "\xEF\xBB\xBF" "data: z\n\n", 12), 0);
	assert_string_equal(r.log.p, "event[] data[1]a\ndiscard[1]b\nevent[] data[1]z\n");
	rec_free(&r);

	/* on_event stops: the event was dispatched, nothing to discard. */
	memset(&r, 0, sizeof(r));
	r.stop_event_at = 2;
	sse_init(&dec, &rec_callbacks, &r);
	assert_int_equal(sse_feed(&dec, in, sizeof(in) - 1), 2);
	assert_int_equal(sse_feed(&dec, "data: e\n\n", 9), 2);
	assert_int_equal(sse_finish(&dec), 0);
	assert_string_equal(r.log.p, "event[] data[1]a\nevent[] data[3]b\nc\n");
	rec_free(&r);

	/* The "\n" between data lines can stop too; and an empty first line's call. */
	memset(&r, 0, sizeof(r));
	r.stop_data_at = 1;
	sse_init(&dec, &rec_callbacks, &r);
	assert_int_equal(sse_feed(&dec, "data\n", 5), 1);
	assert_int_equal(sse_finish(&dec), 0);
	assert_string_equal(r.log.p, "discard[0]\n");
	rec_free(&r);
}

static void test_null_callbacks(void **state)
{
	static const struct sse_callbacks none = {0};
	const char in[] = "event: x\ndata: a\n\ndata: b\n";
	struct sse_decoder dec;

	(void)state;
	sse_init(&dec, &none, NULL);
	assert_int_equal(sse_feed(&dec, NULL, 0), 0);
	assert_int_equal(sse_feed(&dec, in, sizeof(in) - 1), 0);
	assert_int_equal(sse_finish(&dec), 0);
}

/* ---- synthetic streams against the reference, at every split ---- */

static const char *const synthetic[] = {
	"event: response.created\ndata: {\"a\":1}\n\n"
	"data: {\"b\":2}\nevent: response.done\n\n",
	": keep-alive\r\n\r\ndata:x\r\ndata: y\r\n\r\nevent: e\r\nid: 7\r\nretry: 3\r\n"
	"data\r\n\r\n",
	"\xEF\xBB\xBF: c\rdata: \xE2\x80\xA8\r\r\revent\rdata:\r\r",
	"data: a\n\rdata: b\r\r\ndata: c\r\n\rfoo\nbar: baz\n\ndata: end",
	"event: " "0123456789012345678901234567890123456789012345678901234567890123456789"
	"\ndata: long type\n\n\xEF\xBB\xBF\n\ndata:  two spaces\n\n",
	"dataaaaaaaaaaaaaaaaaa: no\n0123456789abcdef\n0123456789abcde\ndata\ndata\n\ndata: a",
	"\xEF\xBB"
	"data: x\n\ndata:\n",
};

static void test_synthetic_every_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(synthetic) / sizeof(synthetic[0]); i++) {
		char label[32];

		format(label, sizeof(label), "synthetic %zu", i);
		check_every_double_split(synthetic[i], strlen(synthetic[i]), label);
		check_random_chunkings(synthetic[i], strlen(synthetic[i]), 50, label);
	}
}

/* Random streams over a small alphabet that hits every rule, against the reference. */
static void test_random_streams(void **state)
{
	static const char *const pieces[] = {
		"data", "data:", "data: ", "event", "event:", "event: ", ":", "id: 1", "retry: 5",
		"x", " ", "\xEF\xBB\xBF", "\xEF", "\xE2\x80\xA8", "\r", "\n", "\r\n", "\n\n",
		"\r\r", "foo", "a", "\0",
	};
	char in[256];
	char label[64];

	(void)state;
	rng_state = 0x5eed5eedULL;
	for (int i = 0; i < 3000; i++) {
		size_t len = 0;
		size_t n = 1 + (size_t)(rng_next() % 24);

		for (size_t k = 0; k < n; k++) {
			const char *p = pieces[rng_next() % (sizeof(pieces) / sizeof(pieces[0]))];
			size_t pl = p[0] == '\0' ? 1 : strlen(p); /* "\0" is one NUL byte */

			if (len + pl >= sizeof(in)) {
				break;
			}
			memcpy(in + len, p, pl);
			len += pl;
		}
		format(label, sizeof(label), "random stream %d", i);
		check_every_split(in, len, label);
	}
}

/* ---- recorded streams (RECORDED_DIR) ---- */

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct buf b = {0};
	char tmp[8192];
	size_t n;

	if (f == NULL) {
		fail_msg("cannot open %s: %s", path, strerror(errno));
	}
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		buf_add(&b, tmp, n);
	}
	assert_int_equal(ferror(f), 0);
	fclose(f);
	*len = b.len;
	return b.p;
}

struct paths {
	char **p;
	size_t n;
};

static int compare_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void find_sse_files(const char *dir, struct paths *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL) {
		fail_msg("cannot open %s: %s", dir, strerror(errno));
	}
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		size_t nl = strlen(e->d_name);

		if (e->d_name[0] == '.') {
			continue;
		}
		format(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (is_dir(path)) {
			find_sse_files(path, out);
		} else if (nl > 4 && strcmp(e->d_name + nl - 4, ".sse") == 0) {
			out->p = realloc(out->p, (out->n + 1) * sizeof(*out->p));
			assert_non_null(out->p);
			out->p[out->n] = strdup(path);
			assert_non_null(out->p[out->n]);
			out->n++;
		}
	}
	closedir(d);
}

/* The stream with every line end (CR LF, CR or LF) written as @p eol. */
static char *reencode(const char *in, size_t len, const char *eol, size_t *out_len)
{
	struct buf b = {0};

	for (size_t i = 0; i < len; i++) {
		if (in[i] == '\r' || in[i] == '\n') {
			if (in[i] == '\r' && i + 1 < len && in[i + 1] == '\n') {
				i++;
			}
			buf_add(&b, eol, strlen(eol));
		} else {
			buf_add(&b, &in[i], 1);
		}
	}
	buf_add(&b, "", 0);
	*out_len = b.len;
	return b.p;
}

static size_t count_substr(const char *s, size_t len, const char *needle)
{
	size_t n = 0;
	size_t nl = strlen(needle);

	for (size_t i = 0; i + nl <= len; i++) {
		if (memcmp(s + i, needle, nl) == 0) {
			n++;
		}
	}
	return n;
}

static void check_fixture(const char *name, const char *in, size_t len, size_t data_lines)
{
	char label[4200];
	struct rec r;
	size_t prefix = len < 4096 ? len : 4096;

	format(label, sizeof(label), "%s (first %zu bytes)", name, prefix);
	check_every_split(in, prefix, label);
	format(label, sizeof(label), "%s", name);
	check_random_chunkings(in, len, 200, label);

	/*
	 * Independent of the reference: the recorded streams put each payload on one data line,
	 * so every "data:" line start is one event (or the discarded last one), and the payload
	 * bytes handed on are the file's bytes of those lines.
	 */
	decode_whole(&r, in, len);
	size_t dispatched = count_substr(r.log.p, r.log.len, "event[");
	size_t discarded = count_substr(r.log.p, r.log.len, "discard[");

	if (dispatched + discarded != data_lines) {
		fail_msg("%s: %zu data lines, but %zu events and %zu discards", name, data_lines,
			 dispatched, discarded);
	}
	assert_true(dispatched > 0);
	rec_free(&r);
}

static void test_fixtures(void **state)
{
	struct paths files = {0};

	(void)state;
	if (!is_dir(RECORDED_DIR)) {
		fail_msg("the recorded streams are missing: %s is not a directory", RECORDED_DIR);
	}
	find_sse_files(RECORDED_DIR, &files);
	if (files.n == 0) {
		fail_msg("no *.sse files under %s", RECORDED_DIR);
	}
	qsort(files.p, files.n, sizeof(*files.p), compare_paths);
	rng_state = 0xf1c7u;
	for (size_t i = 0; i < files.n; i++) {
		static const char *const eols[][2] = {{"\n", "LF"}, {"\r", "CR"}, {"\r\n", "CRLF"}};
		size_t len;
		char *raw = read_file(files.p[i], &len);

		/* Each "data:" at a line start in the LF form. */
		size_t lf_len;
		char *lf = reencode(raw, len, "\n", &lf_len);
		size_t data_lines = count_substr(lf, lf_len, "\ndata:") +
				    (lf_len >= 5 && memcmp(lf, "data:", 5) == 0);

		free(lf);
		print_message("fixture %s (%zu bytes, %zu data lines)\n", files.p[i], len, data_lines);
		for (size_t k = 0; k < 3; k++) {
			char name[4200];
			size_t elen;
			char *enc = reencode(raw, len, eols[k][0], &elen);

			format(name, sizeof(name), "%s [%s]", files.p[i], eols[k][1]);
			check_fixture(name, enc, elen, data_lines);
			free(enc);
		}
		free(raw);
		free(files.p[i]);
	}
	free(files.p);
}

/* ---- constant memory: 10,000 comment lines and a 1 MiB data line ---- */

#define BIG_DATA_BYTES (1024u * 1024u)
#define COMMENT_LINES 10000

static char big_byte(size_t i)
{
	/* Printable ASCII: never a line end. */
	return (char)(' ' + (char)(i * 7 % 95));
}

static size_t heap_in_use(void);

struct big_check {
	size_t heap_start;
	size_t heap_changes; /* on_data calls that saw another heap size than at the start */
	size_t data_bytes;
	size_t bad_bytes;
	int events;
	int firsts;
	int outside_chunk;
	const char *chunk;
	size_t chunk_len;
	char type[SSE_EVENT_TYPE_MAX + 1];
};

static int big_on_data(void *user_data, const char *data, size_t len, bool first)
{
	struct big_check *c = user_data;

	if (first) {
		c->firsts++;
	}
	if (heap_in_use() != c->heap_start) {
		c->heap_changes++;
	}
	if (len > 0 && (data < c->chunk || data + len > c->chunk + c->chunk_len)) {
		c->outside_chunk++;
	}
	for (size_t i = 0; i < len; i++) {
		if (data[i] != big_byte(c->data_bytes + i)) {
			c->bad_bytes++;
		}
	}
	c->data_bytes += len;
	return 0;
}

static int big_on_event(void *user_data, const char *event_type)
{
	struct big_check *c = user_data;

	c->events++;
	format(c->type, sizeof(c->type), "%s", event_type);
	return 0;
}

static size_t heap_in_use(void)
{
#ifdef SSE_TEST_ASAN
	return __sanitizer_get_current_allocated_bytes();
#else
	return mallinfo2().uordblks;
#endif
}

#define GUARD_BYTES 64

struct guarded_decoder {
	unsigned char before[GUARD_BYTES];
	struct sse_decoder dec;
	unsigned char after[GUARD_BYTES];
};

static void test_constant_memory(void **state)
{
	static const struct sse_callbacks cb = {.on_data = big_on_data, .on_event = big_on_event};
	const size_t decoder_size = sizeof(struct sse_decoder);
	struct buf in = {0};
	char line[64];

	(void)state;
	/* The decoder is small and fixed: this is all its memory. */
	assert_true(decoder_size <= 128);

	buf_add(&in, "event: big\n", 11);
	for (int i = 0; i < COMMENT_LINES; i++) {
		int n = snprintf(line, sizeof(line), ": keep-alive %d OPENROUTER PROCESSING\n", i);

		buf_add(&in, line, (size_t)n);
	}
	buf_add(&in, "data: ", 6);
	for (size_t i = 0; i < BIG_DATA_BYTES; i++) {
		char b = big_byte(i);

		buf_add(&in, &b, 1);
	}
	buf_add(&in, "\n", 1);
	for (int i = 0; i < COMMENT_LINES; i++) {
		buf_add(&in, ":\n", 2);
	}
	buf_add(&in, "\n", 1);

	for (int mode = 0; mode < 2; mode++) {
		struct guarded_decoder g;
		struct big_check c = {0};
		size_t off = 0;

		memset(g.before, 0xA5, sizeof(g.before));
		memset(g.after, 0x5A, sizeof(g.after));
		rng_state = 0xb16u;
		sse_init(&g.dec, &cb, &c);

		size_t heap_before = heap_in_use();

		c.heap_start = heap_before;

		while (off < in.len) {
			size_t n = mode == 0 ? 1 : random_chunk_size();

			if (n > in.len - off) {
				n = in.len - off;
			}
			c.chunk = in.p + off;
			c.chunk_len = n;
			assert_int_equal(sse_feed(&g.dec, in.p + off, n), 0);
			off += n;
		}
		size_t heap_after = heap_in_use();

		assert_int_equal(sse_finish(&g.dec), 0);
		/* Nothing was allocated, at any time; nothing outside the struct was written. */
		assert_int_equal(heap_after, heap_before);
		assert_int_equal(heap_in_use(), heap_before);
		assert_int_equal(c.heap_changes, 0);
		for (size_t i = 0; i < GUARD_BYTES; i++) {
			assert_int_equal(g.before[i], 0xA5);
			assert_int_equal(g.after[i], 0x5A);
		}
		assert_int_equal(sizeof(g.dec), decoder_size);
		/* The output is right: one event with all 1 MiB, handed on from the input. */
		assert_int_equal(c.events, 1);
		assert_int_equal(c.firsts, 1);
		assert_string_equal(c.type, "big");
		assert_int_equal(c.data_bytes, BIG_DATA_BYTES);
		assert_int_equal(c.bad_bytes, 0);
		assert_int_equal(c.outside_chunk, 0);
	}
	buf_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_ends),
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_multi_line_data),
		cmocka_unit_test(test_data_space),
		cmocka_unit_test(test_event_type),
		cmocka_unit_test(test_event_type_length_bounds),
		cmocka_unit_test(test_unterminated_final_event),
		cmocka_unit_test(test_unicode_separators_are_not_line_ends),
		cmocka_unit_test(test_field_without_colon),
		cmocka_unit_test(test_ignored_fields),
		cmocka_unit_test(test_blank_lines_without_data),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_first_flag),
		cmocka_unit_test(test_data_is_not_copied),
		cmocka_unit_test(test_callback_stops_decoding),
		cmocka_unit_test(test_null_callbacks),
		cmocka_unit_test(test_synthetic_every_split),
		cmocka_unit_test(test_random_streams),
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_constant_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
