/*
 * JSON writer into a bounded buffer (json_writer.h).
 *
 * The structure is tracked even after the buffer is full, so jw_finish() can still tell a
 * misplaced call (-EINVAL, a bug in the caller) from a document that did not fit (-ENOSPC).
 * U+FFFD replaces invalid UTF-8 as its raw bytes EF BF BD: valid JSON, and half the size of
 * the escape.
 */
#include "decimal.h"
#include "json_writer.h"
#include "utf8.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char replacement[] = "\xEF\xBF\xBD";

/* Bytes copied into a string unescaped: printable ASCII and DEL, but '"' and '\\'. */
static bool is_plain(uint8_t c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}


static void put(struct json_writer *w, const char *s, size_t n)
{
	/* One byte stays free for the NUL that jw_finish() writes. */
	if (w->overflow || w->cap == 0 || n > w->cap - 1 - w->len) {
		w->overflow = true;
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void put_char(struct json_writer *w, char c)
{
	put(w, &c, 1);
}

static void fail(struct json_writer *w)
{
	w->error = true;
}

static void put_control(struct json_writer *w, uint8_t c)
{
	static const char hex[] = "0123456789abcdef";
	char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};

	switch (c) {
	case '"':
		put(w, "\\\"", 2);
		break;
	case '\\':
		put(w, "\\\\", 2);
		break;
	case '\b':
		put(w, "\\b", 2);
		break;
	case '\f':
		put(w, "\\f", 2);
		break;
	case '\n':
		put(w, "\\n", 2);
		break;
	case '\r':
		put(w, "\\r", 2);
		break;
	case '\t':
		put(w, "\\t", 2);
		break;
	default:
		put(w, esc, sizeof(esc));
		break;
	}
}

/*
 * A whole, valid UTF-8 sequence. U+2028 and U+2029 are valid in JSON but end lines in
 * JavaScript, so they are escaped for consumers that eval or embed the text.
 */
static void put_sequence(struct json_writer *w, const uint8_t *seq, size_t n)
{
	if (n == 3 && seq[0] == 0xE2 && seq[1] == 0x80 && (seq[2] == 0xA8 || seq[2] == 0xA9)) {
		put(w, seq[2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
		return;
	}
	put(w, (const char *)seq, n);
}

/* Continue a sequence held from the previous part; returns bytes of @p s consumed. */
static size_t resume_pending(struct json_writer *w, const uint8_t *s, size_t n)
{
	uint8_t lo;
	uint8_t hi;
	uint8_t need = utf8_lead(w->utf8_pending[0], &lo, &hi);
	size_t used = 0;

	while (used < n && w->utf8_len <= need) {
		if (w->utf8_len > 1) {
			lo = 0x80;
			hi = 0xBF;
		}
		if (s[used] < lo || s[used] > hi) {
			/* Not consumed: the byte starts whatever comes next. */
			w->utf8_len = 0;
			put(w, replacement, 3);
			return used;
		}
		w->utf8_pending[w->utf8_len++] = s[used++];
	}
	if (w->utf8_len == need + 1) {
		put_sequence(w, w->utf8_pending, w->utf8_len);
		w->utf8_len = 0;
	}
	return used;
}

/*
 * Escape @p n bytes of a string value or key. A sequence cut by the end of @p s is kept in
 * utf8_pending when @p hold, else replaced at once.
 */
static void put_escaped(struct json_writer *w, const uint8_t *s, size_t n, bool hold)
{
	const uint8_t *p = s;
	const uint8_t *end = s + n;
	const uint8_t *run;
	uint8_t need;
	uint8_t lo;
	uint8_t hi;
	size_t k;

	if (n == 0) {
		return;
	}
	if (w->utf8_len != 0) {
		p += resume_pending(w, s, n);
	}
	while (p < end) {
		run = p;
		while (p < end && is_plain(*p)) {
			p++;
		}
		put(w, (const char *)run, (size_t)(p - run));
		if (p == end) {
			break;
		}
		if (*p < 0x80) {
			put_control(w, *p++);
			continue;
		}
		need = utf8_lead(*p, &lo, &hi);
		for (k = 1; k <= need && p + k < end; k++) {
			if (p[k] < lo || p[k] > hi) {
				break;
			}
			lo = 0x80;
			hi = 0xBF;
		}
		if (need != 0 && k > need) {
			put_sequence(w, p, k);
			p += k;
		} else if (need != 0 && p + k == end && hold) {
			memcpy(w->utf8_pending, p, k);
			w->utf8_len = (uint8_t)k;
			p = end;
		} else {
			/* The maximal invalid subpart becomes one U+FFFD, as Unicode recommends. */
			put(w, replacement, 3);
			p += need != 0 ? k : 1;
		}
	}
}

static void flush_pending(struct json_writer *w)
{
	if (w->utf8_len != 0) {
		w->utf8_len = 0;
		put(w, replacement, 3);
	}
}

/* Checks that a value may come here and writes the comma before it. */
static bool value_begin(struct json_writer *w)
{
	uint32_t bit = UINT32_C(1) << w->depth;

	if (w->error) {
		return false;
	}
	if (w->in_string || w->root_done) {
		fail(w);
		return false;
	}
	if (w->depth == 0) {
		return true;
	}
	if (w->is_object & bit) {
		if (!w->after_key) {
			fail(w);
			return false;
		}
		w->after_key = false;
		return true;
	}
	if (w->has_items & bit) {
		put_char(w, ',');
	}
	w->has_items |= bit;
	return true;
}

static void value_end(struct json_writer *w)
{
	if (w->depth == 0) {
		w->root_done = true;
	}
}

void jw_init(struct json_writer *w, char *buf, size_t cap)
{
	w->buf = buf;
	w->cap = buf != NULL ? cap : 0;
	w->len = 0;
	w->overflow = false;
	w->error = false;
	w->depth = 0;
	w->after_key = false;
	w->in_string = false;
	w->root_done = false;
	w->has_items = 0;
	w->is_object = 0;
	w->utf8_len = 0;
	if (w->cap > 0) {
		w->buf[0] = '\0';
	}
}

static void container_begin(struct json_writer *w, bool object)
{
	uint32_t bit;

	if (!value_begin(w)) {
		return;
	}
	if (w->depth == JSON_WRITER_DEPTH_MAX) {
		fail(w);
		return;
	}
	w->depth++;
	bit = UINT32_C(1) << w->depth;
	w->has_items &= ~bit;
	if (object) {
		w->is_object |= bit;
	} else {
		w->is_object &= ~bit;
	}
	put_char(w, object ? '{' : '[');
}

static void container_end(struct json_writer *w, bool object)
{
	uint32_t bit = UINT32_C(1) << w->depth;

	if (w->error) {
		return;
	}
	if (w->in_string || w->depth == 0 || w->after_key || ((w->is_object & bit) != 0) != object) {
		fail(w);
		return;
	}
	put_char(w, object ? '}' : ']');
	w->depth--;
	value_end(w);
}

void jw_object_begin(struct json_writer *w)
{
	container_begin(w, true);
}

void jw_object_end(struct json_writer *w)
{
	container_end(w, true);
}

void jw_array_begin(struct json_writer *w)
{
	container_begin(w, false);
}

void jw_array_end(struct json_writer *w)
{
	container_end(w, false);
}

void jw_key(struct json_writer *w, const char *key)
{
	uint32_t bit = UINT32_C(1) << w->depth;

	if (w->error) {
		return;
	}
	if (key == NULL || w->in_string || w->depth == 0 || !(w->is_object & bit) ||
	    w->after_key) {
		fail(w);
		return;
	}
	if (w->has_items & bit) {
		put_char(w, ',');
	}
	w->has_items |= bit;
	put_char(w, '"');
	put_escaped(w, (const uint8_t *)key, strlen(key), false);
	put(w, "\":", 2);
	w->after_key = true;
}

void jw_string_n(struct json_writer *w, const char *text, size_t len)
{
	if (text == NULL && len != 0) {
		fail(w);
		return;
	}
	if (!value_begin(w)) {
		return;
	}
	put_char(w, '"');
	put_escaped(w, (const uint8_t *)text, len, false);
	put_char(w, '"');
	value_end(w);
}

void jw_string(struct json_writer *w, const char *text)
{
	if (text == NULL) {
		fail(w);
		return;
	}
	jw_string_n(w, text, strlen(text));
}

void jw_string_begin(struct json_writer *w)
{
	if (!value_begin(w)) {
		return;
	}
	put_char(w, '"');
	w->in_string = true;
	w->utf8_len = 0;
}

void jw_string_part(struct json_writer *w, const char *text, size_t len)
{
	if (w->error) {
		return;
	}
	if (!w->in_string || (text == NULL && len != 0)) {
		fail(w);
		return;
	}
	put_escaped(w, (const uint8_t *)text, len, true);
}

void jw_string_end(struct json_writer *w)
{
	if (w->error) {
		return;
	}
	if (!w->in_string) {
		fail(w);
		return;
	}
	flush_pending(w);
	put_char(w, '"');
	w->in_string = false;
	value_end(w);
}

void jw_int(struct json_writer *w, int64_t value)
{
	char digits[DECIMAL_U64_MAX];
	/* The magnitude as unsigned, so INT64_MIN needs no special case. */
	uint64_t mag = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;

	if (!value_begin(w)) {
		return;
	}
	if (value < 0) {
		put_char(w, '-');
	}
	put(w, digits, decimal_u64(digits, mag));
	value_end(w);
}

void jw_bool(struct json_writer *w, bool value)
{
	if (!value_begin(w)) {
		return;
	}
	if (value) {
		put(w, "true", 4);
	} else {
		put(w, "false", 5);
	}
	value_end(w);
}

void jw_null(struct json_writer *w)
{
	if (!value_begin(w)) {
		return;
	}
	put(w, "null", 4);
	value_end(w);
}

void jw_raw(struct json_writer *w, const char *json, size_t len)
{
	/* Nothing is never a JSON value: writing it would break the document. */
	if (json == NULL || len == 0) {
		fail(w);
		return;
	}
	if (!value_begin(w)) {
		return;
	}
	put(w, json, len);
	value_end(w);
}

int jw_finish(struct json_writer *w)
{
	int rc;

	if (w->in_string || w->depth != 0 || !w->root_done) {
		fail(w);
	}
	if (w->error) {
		rc = -EINVAL;
	} else if (w->overflow || w->len > INT_MAX) {
		rc = -ENOSPC;
	} else {
		w->buf[w->len] = '\0';
		return (int)w->len;
	}
	/* Whatever was written is no document: leave nothing that could be sent by mistake. */
	if (w->cap > 0) {
		w->buf[0] = '\0';
	}
	return rc;
}
