/*
 * Incremental JSON tokenizer (json_stream.h).
 *
 * All state between two bytes lives in struct json_stream: the grammar position (state),
 * the token being read (lex) and the stack of open containers (level[]). Nothing recurses
 * and nothing is allocated. String bytes that need no decoding are handed on as slices of
 * the caller's chunk; only decoded escapes, bytes of a UTF-8 sequence cut by the end of a
 * chunk and short runs between escapes are copied, into out[].
 */
#include "json_stream.h"
#include "utf8.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
	ST_VALUE,	 /* a value is due: document start, after ':', after ',' in an array */
	ST_ARRAY_FIRST,	 /* after '[': a value or ']' */
	ST_OBJECT_FIRST, /* after '{': a key or '}' */
	ST_KEY,		 /* after ',' in an object: a key */
	ST_COLON,	 /* after a key */
	ST_AFTER_VALUE,	 /* after a member or an element: ',' or the closing bracket */
	ST_DONE,	 /* the document is complete: only white space may follow */
};

enum {
	LEX_NONE,
	LEX_STRING,
	LEX_ESCAPE,    /* after a backslash */
	LEX_HEX,       /* in the four digits of \uXXXX */
	LEX_SURROGATE, /* after a high surrogate escape: only "\u" can complete it */
	LEX_NUMBER,
	LEX_LITERAL,
};

/* Number grammar of RFC 8259 section 6, one state per position. */
enum {
	NUM_MINUS,    /* "-": a digit must follow */
	NUM_ZERO,     /* "0" or "-0": no more integer digits */
	NUM_INT,      /* in the integer digits */
	NUM_DOT,      /* ".": a digit must follow */
	NUM_FRAC,     /* in the fraction digits */
	NUM_EXP,      /* "e": a sign or digit must follow */
	NUM_EXP_SIGN, /* "e+": a digit must follow */
	NUM_EXP_INT,  /* in the exponent digits */
};

static const char *const literal_text[] = {"true", "false", "null"};
static const uint8_t literal_len[] = {4, 5, 4};
static const enum json_token literal_token[] = {JSON_TRUE, JSON_FALSE, JSON_NULL};

/* U+FFFD REPLACEMENT CHARACTER in UTF-8. */
static const uint8_t replacement[] = {0xEF, 0xBF, 0xBD};

/*
 * String bytes that are copied through unchanged: printable ASCII but the quote and the
 * backslash. A table keeps the inner loop at one load and one branch per byte.
 */
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
static const uint8_t plain[256] = {
	R16(0), R16(0),
	1,	1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20: '"' is 0x22 */
	R16(1), R16(1),
	1,	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50: '\\' is 0x5c */
	R16(1), R16(1),
	R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0),
};

/*
 * The bytes of the word at @p p that are not plain (as in plain[]), as a mask with the top bit
 * of each such byte set, tested together. A byte from 0x80 has its top bit set already; for the
 * others, subtracting 0x20 from every byte sets the top bit of those below 0x20, and
 * subtracting 1 from x ^ '"' (x ^ '\\') sets it in those equal to the quote (backslash). A
 * borrow only reaches the bytes above a hit, so the mask is 0 exactly when every byte is plain
 * and its lowest byte in memory order that is set is the first byte that is not.
 */
#ifndef JSON_STREAM_WORD
#define JSON_STREAM_WORD size_t /* a unit test builds the 32-bit word on a 64-bit host too */
#endif
typedef JSON_STREAM_WORD word_t;
#define WORD_ONES ((word_t)-1 / 0xFF)
#define WORD_HIGH (WORD_ONES * 0x80)

static word_t stop_mask(const uint8_t *p)
{
	word_t x;

	memcpy(&x, p, sizeof(x));
	return ((x - WORD_ONES * 0x20) | ((x ^ (WORD_ONES * '"')) - WORD_ONES) |
		((x ^ (WORD_ONES * '\\')) - WORD_ONES) | x) &
	       WORD_HIGH;
}

/* The first byte at or after @p, before @p end, that is not plain; @p end if none. */
static const uint8_t *plain_run_end(const uint8_t *p, const uint8_t *end)
{
	while ((size_t)(end - p) >= sizeof(word_t)) {
		word_t m = stop_mask(p);

		if (m != 0) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                                             \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(JSON_STREAM_NO_CTZ)
			/* One instruction pair on a 32-bit word (a Cortex-M's RBIT and CLZ); the
			 * 64-bit builtin on a 32-bit target is a library call. */
			unsigned int bit = sizeof(word_t) <= sizeof(unsigned int)
						   ? (unsigned int)__builtin_ctz((unsigned int)m)
						   : (unsigned int)__builtin_ctzll((unsigned long long)m);

			return p + bit / 8u;
#else
			break; /* the byte loop below finds it */
#endif
		}
		p += sizeof(word_t);
	}
	while (p < end && plain[*p]) {
		p++;
	}
	return p;
}

static bool is_space(uint8_t c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}


static int token(struct json_stream *js, enum json_token tok, const char *text, size_t len)
{
	struct json_value v = {
		.token = tok,
		.text = text,
		.len = len,
		.first = false,
		.last = false,
	};

	return js->fn(js->user_data, js, &v);
}

/*
 * Keys are kept whole up to JSON_KEY_MAX bytes. A longer one is cut back to whole
 * characters, so that json_stream_key() still returns valid UTF-8, and marked truncated.
 */
_Static_assert(JSON_STREAM_DEPTH_MAX - JSON_PATH_DEPTH <= 32, "deep_array holds the deep levels");

/*
 * The level at depth @p d: its own entry up to JSON_PATH_DEPTH; deeper ones share one entry
 * whose key and index are thrown away, their kind (object or array) kept in deep_array.
 */
static struct json_level *level_at(struct json_stream *js, int d)
{
	if (d <= JSON_PATH_DEPTH) {
		return &js->level[d];
	}
	js->deep.is_array = ((js->deep_array >> (d - JSON_PATH_DEPTH - 1)) & 1u) != 0u;
	return &js->deep;
}

static void key_append(struct json_level *lv, const char *s, size_t n)
{
	size_t room = JSON_KEY_MAX - lv->key_len;
	size_t len;
	size_t lead;
	size_t need;
	uint8_t c;

	if (lv->key_truncated) {
		return;
	}
	if (n <= room) {
		memcpy(lv->key + lv->key_len, s, n);
		lv->key_len = (uint8_t)(lv->key_len + n);
		lv->key[lv->key_len] = '\0';
		return;
	}
	memcpy(lv->key + lv->key_len, s, room);
	len = JSON_KEY_MAX;
	lead = len;
	while (lead > 0 && ((uint8_t)lv->key[lead - 1] & 0xC0) == 0x80) {
		lead--;
	}
	if (lead > 0) {
		c = (uint8_t)lv->key[lead - 1];
		need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		if (len - (lead - 1) < need) {
			len = lead - 1;
		}
	}
	lv->key_len = (uint8_t)len;
	lv->key[len] = '\0';
	lv->key_truncated = true;
}

/* One fragment of the string being read: to the key buffer, or to the callback. */
static int emit(struct json_stream *js, const char *s, size_t n, bool last)
{
	struct json_value v;

	if (js->in_key) {
		key_append(level_at(js, js->depth), s, n);
		return 0;
	}
	if (n == 0 && !last) {
		return 0;
	}
	v.token = JSON_STRING;
	v.text = s;
	v.len = n;
	v.first = js->str_first;
	v.last = last;
	js->str_first = false;
	return js->fn(js->user_data, js, &v);
}

static int flush_out(struct json_stream *js, bool last)
{
	size_t n = js->out_len;

	js->out_len = 0;
	return emit(js, js->out, n, last);
}

/* Append decoded bytes; the raw run before them must have been handed on already. */
static int out_put(struct json_stream *js, const uint8_t *s, size_t n)
{
	int rc;

	if (js->out_len + n > sizeof(js->out)) {
		rc = flush_out(js, false);
		if (rc != 0) {
			return rc;
		}
	}
	memcpy(js->out + js->out_len, s, n);
	js->out_len = (uint8_t)(js->out_len + n);
	return 0;
}

/*
 * Hand on the raw run [run, end) of the current chunk, after what out[] holds. A run short
 * enough to join the decoded bytes before it goes into out[] too, so text dense with escapes
 * still arrives in few fragments; otherwise it is passed as a slice of the input.
 */
static int flush_run(struct json_stream *js, const uint8_t *run, const uint8_t *end, bool last)
{
	size_t n = (size_t)(end - run);
	int rc;

	if (js->out_len != 0) {
		if (n <= sizeof(js->out) - js->out_len) {
			memcpy(js->out + js->out_len, run, n);
			js->out_len = (uint8_t)(js->out_len + n);
			return last ? flush_out(js, true) : 0;
		}
		rc = flush_out(js, false);
		if (rc != 0) {
			return rc;
		}
	}
	return emit(js, (const char *)run, n, last);
}

/*
 * Malformed input inside a string: what was read of the value before the error is handed on
 * first, so that the callbacks do not depend on where the input was cut.
 */
static int string_error(struct json_stream *js)
{
	int rc = js->out_len != 0 ? flush_out(js, false) : 0;

	return rc != 0 ? rc : -EBADMSG;
}

static void after_value(struct json_stream *js)
{
	js->state = js->depth == 0 ? ST_DONE : ST_AFTER_VALUE;
}

static int string_end(struct json_stream *js, const uint8_t *run, const uint8_t *end)
{
	int rc;

	js->lex = LEX_NONE;
	if (js->in_key) {
		rc = flush_run(js, run, end, true);
		js->in_key = false;
		js->state = ST_COLON;
		return rc;
	}
	after_value(js);
	return flush_run(js, run, end, true);
}

/* A chunk starts inside a UTF-8 sequence whose first bytes came with the chunk before. */
static int utf8_resume(struct json_stream *js, const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint8_t c;
	int rc;

	while (p < end && js->u8_need != 0) {
		c = *p;
		if (c < js->u8_lo || c > js->u8_hi) {
			/* The byte is not consumed: it starts whatever comes next. */
			js->u8_hold_len = 0;
			js->u8_need = 0;
			*pp = p;
			return out_put(js, replacement, sizeof(replacement));
		}
		js->u8_hold[js->u8_hold_len++] = c;
		js->u8_lo = 0x80;
		js->u8_hi = 0xBF;
		js->u8_need--;
		p++;
	}
	*pp = p;
	if (js->u8_need != 0) {
		return 0;
	}
	rc = out_put(js, js->u8_hold, js->u8_hold_len);
	js->u8_hold_len = 0;
	return rc;
}

static uint8_t escaped_byte(uint8_t c);

/*
 * The body of a string up to a backslash, the closing quote or the end of the chunk. Runs
 * of bytes that need no decoding are handed on whole.
 */
static int scan_string(struct json_stream *js, const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	const uint8_t *run;
	uint8_t need;
	uint8_t lo;
	uint8_t hi;
	uint8_t c;
	size_t k;
	int rc;

	if (js->u8_hold_len != 0) {
		rc = utf8_resume(js, &p, end);
		if (rc != 0 || p == end) {
			*pp = p;
			return rc;
		}
	}
	run = p;
	for (;;) {
		p = plain_run_end(p, end);
		if (p == end) {
			*pp = p;
			return flush_run(js, run, p, false);
		}
		c = *p;
		if (c >= 0x80) {
			need = utf8_lead(c, &lo, &hi);
			for (k = 1; k <= need && p + k < end; k++) {
				if (p[k] < lo || p[k] > hi) {
					break;
				}
				lo = 0x80;
				hi = 0xBF;
			}
			if (need != 0 && k > need) {
				p += k; /* whole and valid: stays in the run */
				continue;
			}
			rc = flush_run(js, run, p, false);
			if (rc != 0) {
				return rc;
			}
			if (need != 0 && p + k == end) {
				/* Cut by the end of the chunk: keep the start for the next one. */
				memcpy(js->u8_hold, p, k);
				js->u8_hold_len = (uint8_t)k;
				js->u8_need = (uint8_t)(need + 1 - k);
				js->u8_lo = lo;
				js->u8_hi = hi;
				*pp = end;
				return 0;
			}
			/* The maximal invalid subpart becomes one U+FFFD (as Unicode recommends). */
			rc = out_put(js, replacement, sizeof(replacement));
			if (rc != 0) {
				return rc;
			}
			p += need != 0 ? k : 1;
			run = p;
			continue;
		}
		if (c == '"') {
			*pp = p + 1;
			return string_end(js, run, p);
		}
		if (c != '\\') {
			/* A control character must be escaped. */
			rc = flush_run(js, run, p, false);
			return rc != 0 ? rc : string_error(js);
		}
		if (p + 1 < end && js->pending_high == 0 && escaped_byte(p[1]) != 0) {
			/* A one-character escape whose second byte is here: decoded in this loop. */
			uint8_t b = escaped_byte(p[1]);
			size_t n = (size_t)(p - run);

			if (js->out_len != 0 && js->out_len + n < sizeof(js->out)) {
				/* The run and the byte join what out[] holds, as flush_run() does. */
				for (size_t i = 0; i < n; i++) {
					js->out[js->out_len + i] = (char)run[i];
				}
				js->out_len = (uint8_t)(js->out_len + n);
				js->out[js->out_len++] = (char)b;
				p += 2;
				run = p;
				continue;
			}
			rc = flush_run(js, run, p, false);
			if (rc == 0 && js->out_len < sizeof(js->out)) {
				js->out[js->out_len++] = (char)b;
			} else if (rc == 0) {
				rc = out_put(js, &b, 1);
			}
			if (rc != 0) {
				return rc;
			}
			p += 2;
			run = p;
			continue;
		}
		*pp = p + 1;
		js->lex = LEX_ESCAPE;
		return flush_run(js, run, p, false);
	}
}

static int put_code_point(struct json_stream *js, uint32_t cp)
{
	uint8_t buf[4];

	return out_put(js, buf, utf8_encode(cp, buf));
}

/* Four hex digits were read: join surrogate halves, replace lone ones. */
static int code_unit(struct json_stream *js, uint32_t cu)
{
	uint32_t high = js->pending_high;
	int rc;

	js->lex = LEX_STRING;
	if (high != 0) {
		js->pending_high = 0;
		if (cu >= 0xDC00 && cu <= 0xDFFF) {
			return put_code_point(js, 0x10000 + ((high - 0xD800) << 10) + (cu - 0xDC00));
		}
		rc = out_put(js, replacement, sizeof(replacement));
		if (rc != 0) {
			return rc;
		}
	}
	if (cu >= 0xD800 && cu <= 0xDBFF) {
		js->pending_high = (uint16_t)cu;
		js->lex = LEX_SURROGATE;
		return 0;
	}
	if (cu >= 0xDC00 && cu <= 0xDFFF) {
		cu = 0xFFFD;
	}
	return put_code_point(js, cu);
}

/* The byte a one-character escape stands for ("\\n" -> LF), 0 for none ('u' is not one). */
static uint8_t escaped_byte(uint8_t c)
{
	switch (c) {
	case '"':
	case '\\':
	case '/':
		return c;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	default:
		return 0;
	}
}

static int escape_char(struct json_stream *js, uint8_t c)
{
	uint8_t b;
	int rc;

	if (c == 'u') {
		js->lex = LEX_HEX;
		js->hex_count = 0;
		js->ucs = 0;
		return 0;
	}
	b = escaped_byte(c);
	if (b == 0) {
		return string_error(js);
	}
	if (js->pending_high != 0) {
		js->pending_high = 0;
		rc = out_put(js, replacement, sizeof(replacement));
		if (rc != 0) {
			return rc;
		}
	}
	js->lex = LEX_STRING;
	if (js->out_len < sizeof(js->out)) {
		js->out[js->out_len++] = (char)b; /* the usual case: room for one more byte */
		return 0;
	}
	return out_put(js, &b, 1);
}

static int hex_digit(struct json_stream *js, uint8_t c)
{
	uint32_t v;

	if (c >= '0' && c <= '9') {
		v = c - '0';
	} else if (c >= 'a' && c <= 'f') {
		v = c - 'a' + 10;
	} else if (c >= 'A' && c <= 'F') {
		v = c - 'A' + 10;
	} else {
		return string_error(js);
	}
	js->ucs = (js->ucs << 4) | v;
	if (++js->hex_count < 4) {
		return 0;
	}
	return code_unit(js, js->ucs);
}

static bool number_complete(uint8_t sub)
{
	return sub == NUM_ZERO || sub == NUM_INT || sub == NUM_FRAC || sub == NUM_EXP_INT;
}

static int number_end(struct json_stream *js)
{
	js->lex = LEX_NONE;
	js->num[js->num_len] = '\0';
	after_value(js);
	return token(js, JSON_NUMBER, js->num, js->num_len);
}

/* Number characters up to the first byte that cannot continue the number. */
static int scan_number(struct json_stream *js, const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint8_t sub = js->sub;
	uint8_t c;
	int rc = 0;

	for (; p < end; p++) {
		c = *p;
		switch (sub) {
		case NUM_MINUS:
			if (!is_digit(c)) {
				return -EBADMSG;
			}
			sub = c == '0' ? NUM_ZERO : NUM_INT;
			break;
		case NUM_ZERO:
		case NUM_INT:
		case NUM_FRAC:
			if (is_digit(c) && sub != NUM_ZERO) {
				break;
			}
			if (c == '.' && sub != NUM_FRAC) {
				sub = NUM_DOT;
			} else if (c == 'e' || c == 'E') {
				sub = NUM_EXP;
			} else {
				goto ended;
			}
			break;
		case NUM_DOT:
			if (!is_digit(c)) {
				return -EBADMSG;
			}
			sub = NUM_FRAC;
			break;
		case NUM_EXP:
			if (c == '+' || c == '-') {
				sub = NUM_EXP_SIGN;
				break;
			}
			/* fall through */
		case NUM_EXP_SIGN:
			if (!is_digit(c)) {
				return -EBADMSG;
			}
			sub = NUM_EXP_INT;
			break;
		default: /* NUM_EXP_INT */
			if (!is_digit(c)) {
				goto ended;
			}
			break;
		}
		if (js->num_len == JSON_NUMBER_MAX) {
			return -E2BIG;
		}
		js->num[js->num_len++] = (char)c;
	}
	js->sub = sub;
	*pp = p;
	return 0;

ended:
	/* The byte after the number is not consumed: the grammar decides what it may be. */
	js->sub = sub;
	*pp = p;
	rc = number_end(js);
	return rc;
}

static int scan_literal(struct json_stream *js, const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	const char *text = literal_text[js->lit];

	while (p < end && js->sub < literal_len[js->lit]) {
		if (*p != (uint8_t)text[js->sub]) {
			return -EBADMSG;
		}
		js->sub++;
		p++;
	}
	*pp = p;
	if (js->sub < literal_len[js->lit]) {
		return 0;
	}
	js->lex = LEX_NONE;
	after_value(js);
	return token(js, literal_token[js->lit], NULL, 0);
}

static int open_container(struct json_stream *js, bool is_array)
{
	struct json_level *lv;
	int rc;

	if (js->depth == JSON_STREAM_DEPTH_MAX) {
		return -E2BIG;
	}
	rc = token(js, is_array ? JSON_ARRAY_BEGIN : JSON_OBJECT_BEGIN, NULL, 0);
	if (rc != 0) {
		return rc;
	}
	lv = level_at(js, ++js->depth);
	if (js->depth > JSON_PATH_DEPTH) {
		uint32_t bit = 1u << (js->depth - JSON_PATH_DEPTH - 1);

		js->deep_array = is_array ? js->deep_array | bit : js->deep_array & ~bit;
	}
	lv->is_array = is_array;
	lv->index = 0;
	lv->key_len = 0;
	lv->key[0] = '\0';
	lv->key_truncated = false;
	js->state = is_array ? ST_ARRAY_FIRST : ST_OBJECT_FIRST;
	return 0;
}

static int close_container(struct json_stream *js, bool is_array)
{
	bool open_here = js->depth > 0 && level_at(js, js->depth)->is_array == is_array;

	if (!open_here || !(js->state == ST_AFTER_VALUE ||
			    js->state == (is_array ? ST_ARRAY_FIRST : ST_OBJECT_FIRST))) {
		return -EBADMSG;
	}
	js->depth--;
	after_value(js);
	return token(js, is_array ? JSON_ARRAY_END : JSON_OBJECT_END, NULL, 0);
}

static void string_begin(struct json_stream *js, bool in_key)
{
	js->lex = LEX_STRING;
	js->in_key = in_key;
	js->str_first = true;
	js->out_len = 0;
	if (in_key) {
		struct json_level *lv = level_at(js, js->depth);

		lv->key_len = 0;
		lv->key[0] = '\0';
		lv->key_truncated = false;
	}
}

/*
 * Between tokens: white space, punctuation, or the first byte of a token. Punctuation and
 * white space are read in one loop; a string is read on from its opening quote here, so a
 * short member costs no trip through json_stream_feed()'s dispatch. After the document, every
 * byte but white space is refused by the grammar below (no value is due, no container open).
 */
static int structural(struct json_stream *js, const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	struct json_level *lv;
	bool value_due;
	uint8_t c;
	int rc;

	for (;;) {
		while (p < end && is_space(*p)) {
			p++;
		}
		if (p == end) {
			*pp = p;
			return 0;
		}
		c = *p++;
		*pp = p;
		value_due = js->state == ST_VALUE || js->state == ST_ARRAY_FIRST;
		switch (c) {
		case '"':
			if (js->state == ST_OBJECT_FIRST || js->state == ST_KEY) {
				string_begin(js, true);
			} else if (value_due) {
				string_begin(js, false);
			} else {
				return -EBADMSG;
			}
			return p < end ? scan_string(js, pp, end) : 0;
		case ',':
			if (js->state != ST_AFTER_VALUE) {
				return -EBADMSG;
			}
			lv = level_at(js, js->depth);
			if (lv->is_array) {
				if (lv->index < INT32_MAX) {
					lv->index++;
				}
				js->state = ST_VALUE;
			} else {
				js->state = ST_KEY;
			}
			continue;
		case ':':
			if (js->state != ST_COLON) {
				return -EBADMSG;
			}
			js->state = ST_VALUE;
			continue;
		case '{':
		case '[':
			rc = value_due ? open_container(js, c == '[') : -EBADMSG;
			break;
		case '}':
		case ']':
			rc = close_container(js, c == ']');
			break;
		case 't':
		case 'f':
		case 'n':
			if (!value_due) {
				return -EBADMSG;
			}
			js->lex = LEX_LITERAL;
			js->lit = c == 't' ? 0 : c == 'f' ? 1 : 2;
			js->sub = 1;
			return 0;
		default:
			if (!value_due || !(c == '-' || is_digit(c))) {
				return -EBADMSG;
			}
			js->lex = LEX_NUMBER;
			js->sub = c == '-' ? NUM_MINUS : c == '0' ? NUM_ZERO : NUM_INT;
			js->num[0] = (char)c;
			js->num_len = 1;
			return 0;
		}
		if (rc != 0) {
			return rc;
		}
	}
}

void json_stream_init(struct json_stream *js, json_value_fn fn, void *user_data)
{
	js->fn = fn;
	js->user_data = user_data;
	json_stream_reset(js);
}

void json_stream_reset(struct json_stream *js)
{
	/* level[] is filled as containers open: clearing it here would cost ~600 B per event. */
	js->status = 0;
	js->ucs = 0;
	js->pending_high = 0;
	js->depth = 0;
	js->state = ST_VALUE;
	js->lex = LEX_NONE;
	js->sub = 0;
	js->lit = 0;
	js->hex_count = 0;
	js->num_len = 0;
	js->num[0] = '\0';
	js->out_len = 0;
	js->u8_need = 0;
	js->u8_hold_len = 0;
	js->in_key = false;
	js->str_first = false;
}

int json_stream_feed(struct json_stream *js, const char *data, size_t len)
{
	const uint8_t *p = (const uint8_t *)data;
	const uint8_t *end = p + len;
	int rc = 0;

	if (js->status != 0 || len == 0) {
		return js->status;
	}
	while (p < end && rc == 0) {
		switch (js->lex) {
		case LEX_NONE:
			rc = structural(js, &p, end);
			break;
		case LEX_STRING:
			rc = scan_string(js, &p, end);
			break;
		case LEX_ESCAPE:
			rc = escape_char(js, *p++);
			break;
		case LEX_HEX:
			rc = hex_digit(js, *p++);
			break;
		case LEX_SURROGATE:
			if (*p == '\\') {
				js->lex = LEX_ESCAPE;
				p++;
				break;
			}
			/* Anything else leaves the high half alone; the byte itself is read next. */
			js->pending_high = 0;
			js->lex = LEX_STRING;
			rc = out_put(js, replacement, sizeof(replacement));
			break;
		case LEX_NUMBER:
			rc = scan_number(js, &p, end);
			break;
		default:
			rc = scan_literal(js, &p, end);
			break;
		}
	}
	js->status = rc;
	return rc;
}

int json_stream_finish(struct json_stream *js)
{
	int rc;

	if (js->status != 0) {
		return -EBADMSG;
	}
	if (js->lex == LEX_NUMBER && js->depth == 0 && number_complete(js->sub)) {
		rc = number_end(js);
		if (rc != 0) {
			js->status = rc;
			return rc;
		}
	}
	if (js->lex >= LEX_STRING && js->lex <= LEX_SURROGATE && !js->in_key) {
		rc = string_error(js);
		js->status = rc;
		return rc;
	}
	return js->state == ST_DONE ? 0 : -EBADMSG;
}

/* Whether @p seg starts with the one-character segment @p c ("#" or "*"). */
static bool seg_is(const char *seg, char c)
{
	return seg[0] == c && (seg[1] == '.' || seg[1] == '\0');
}

bool json_stream_path_is(const struct json_stream *js, const char *path)
{
	const struct json_level *lv;
	const char *seg = path;
	size_t n;
	int d;

	if (path == NULL) {
		return false;
	}
	if (*seg == '\0') {
		return js->depth == 0;
	}
	/* Each segment is compared as it is read: no pass to find its end first. */
	for (d = 1; d <= js->depth; d++) {
		if (d > JSON_PATH_DEPTH) {
			return false; /* no key is kept this deep: no path reaches it */
		}
		lv = &js->level[d];
		if (lv->is_array) {
			if (!seg_is(seg, '#')) {
				return false;
			}
			n = 1;
		} else if (seg_is(seg, '*')) {
			n = 1;
		} else {
			if (lv->key_truncated) {
				return false;
			}
			n = lv->key_len;
			for (size_t i = 0; i < n; i++) {
				char sc = seg[i];

				/* A key holding '.' or NUL matches no segment (a segment has neither);
				 * both sort at or below '.', where few key bytes are. */
				if (sc != lv->key[i] ||
				    ((unsigned char)sc <= '.' && (sc == '.' || sc == '\0'))) {
					return false;
				}
			}
			if (seg[n] != '.' && seg[n] != '\0') {
				return false;
			}
		}
		if (seg[n] == '\0') {
			return d == js->depth;
		}
		seg += n + 1;
	}
	return false;
}

int json_stream_index(const struct json_stream *js, int level)
{
	if (level < 1 || level > js->depth || level > JSON_PATH_DEPTH ||
	    !js->level[level].is_array) {
		return -1;
	}
	return js->level[level].index;
}
