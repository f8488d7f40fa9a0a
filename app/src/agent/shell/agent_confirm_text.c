/*
 * The confirmation's text (agent_confirm_text.h). Two passes over the arguments with the JSON
 * tokenizer: the first measures every member (its bytes and the lines it needs whole), the
 * lines are shared out, the second writes. Text is laid out in units (a character, or one
 * escape such as \u202e, never split) with the same wrapping rule in both passes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agent_confirm_text.h"
#include "agent_port.h"
#include "json_stream.h"
#include "utf8.h"

#define HEAD	     "[confirm] "
#define FIELD_INDENT "  "
#define MORE_INDENT  "    "
#define ELLIPSIS     "\xe2\x80\xa6" /* U+2026, counted as two columns like all non-ASCII */
#define LINE_BYTES   (2 * AGENT_CONFIRM_TEXT_COLS_MAX + 16)

enum pass {
	MEASURE,
	RENDER,
};

struct member {
	uint32_t bytes; /* its text after the indent: key, ": ", value */
	uint16_t need;	/* lines it needs whole */
	uint16_t lines; /* lines it gets */
};

static struct {
	struct json_stream js;
	enum pass pass;
	unsigned int width; /* columns of a line */
	/* the members */
	unsigned int count; /* top-level members read so far */
	unsigned int shown; /* members that get lines */
	bool in_piece;	    /* units belong to a piece being measured or shown */
	bool not_object;
	uint64_t has_items; /* bit per depth: a comma is due before the next item */
	uint64_t is_object; /* bit per depth: the container there is an object */
	/* a UTF-8 character being gathered (string fragments may split one) */
	uint8_t u8[4];
	uint8_t u8_len;
	uint8_t u8_need;
	uint8_t u8_lo;
	uint8_t u8_hi;
	/* the piece (the name or one member) being laid out */
	unsigned int line_no; /* its line, from 0 */
	unsigned int col;     /* columns used on that line */
	uint32_t bytes;	      /* its bytes so far, indent not counted */
	uint32_t shown_bytes;
	unsigned int allot;   /* lines it gets (render) */
	unsigned int reserve; /* columns kept on its last line for the cut marker (render) */
	bool stopped;	      /* cut: nothing more of it is shown */
	/* output */
	char line[LINE_BYTES];
	size_t line_len;
	unsigned int out_lines;
	agent_confirm_text_put_fn put;
	void *user;
	struct member members[AGENT_CONFIRM_TEXT_LINES_MAX];
} ct AGENT_PSRAM_ATTR;

/* ---- Lines ----------------------------------------------------------------------------------- */

static void line_add(const char *s, size_t n)
{
	if (ct.line_len + n < sizeof(ct.line)) { /* always: a line is at most 2 bytes a column */
		memcpy(ct.line + ct.line_len, s, n);
		ct.line_len += n;
	}
}

static void line_end(void)
{
	ct.line[ct.line_len++] = '\n';
	ct.put(ct.user, ct.line, ct.line_len);
	ct.line_len = 0;
	ct.out_lines++;
}

static unsigned int room(void)
{
	return ct.width - (ct.line_no + 1 >= ct.allot ? ct.reserve : 0);
}

/* One unit of @p w columns: wrapped to a continuation line when it does not fit. */
static void unit(const char *s, size_t n, unsigned int w)
{
	if (!ct.in_piece) {
		return;
	}
	ct.bytes += (uint32_t)n;
	if (ct.pass == MEASURE) {
		if (ct.col + w > ct.width) {
			ct.line_no++;
			ct.col = sizeof(MORE_INDENT) - 1;
		}
		ct.col += w;
		return;
	}
	if (ct.stopped) {
		return;
	}
	if (ct.col + w > room()) {
		if (ct.line_no + 1 >= ct.allot) {
			ct.stopped = true;
			return;
		}
		line_end();
		line_add(MORE_INDENT, sizeof(MORE_INDENT) - 1);
		ct.line_no++;
		ct.col = sizeof(MORE_INDENT) - 1;
		if (ct.col + w > room()) {
			ct.stopped = true;
			return;
		}
	}
	line_add(s, n);
	ct.col += w;
	ct.shown_bytes += (uint32_t)n;
}

/* ASCII that needs no escaping, one unit per character. */
static void plain_n(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unit(s + i, 1, 1);
	}
}

static void plain(const char *s)
{
	plain_n(s, strlen(s));
}

static void piece_begin(const char *indent, unsigned int allot, unsigned int reserve)
{
	ct.in_piece = true;
	ct.line_no = 0;
	ct.col = (unsigned int)strlen(indent);
	ct.bytes = 0;
	ct.shown_bytes = 0;
	ct.allot = allot;
	ct.reserve = reserve;
	ct.stopped = false;
	if (ct.pass == RENDER) {
		line_add(indent, strlen(indent));
	}
}

/*
 * The cut marker for @p bytes not shown, into @p m: " … (+N bytes)", or with @p brief
 * " … (+N B)" for a line too narrow for that after its indent (at 20 columns a 4-digit count
 * does not fit a continuation line). Returns its bytes; its columns are one fewer (the
 * ellipsis is three bytes, counted as two columns).
 */
static size_t marker(char m[40], uint32_t bytes, bool brief)
{
	return (size_t)snprintf(m, 40, " " ELLIPSIS " (+%lu %s)", (unsigned long)bytes,
				brief ? "B" : "bytes");
}

/*
 * Columns a piece of @p allot lines, cut, keeps on its last line for the marker of at most
 * @p bytes: the whole marker when it fits after that line's indent (a continuation line's
 * four columns, or @p indent when the piece has one line), else the brief one. So the text
 * stops where the marker fits after it.
 */
static unsigned int marker_reserve(const char *indent, unsigned int allot, uint32_t bytes)
{
	char m[40];
	unsigned int start = allot > 1 ? sizeof(MORE_INDENT) - 1 : (unsigned int)strlen(indent);
	unsigned int cols = (unsigned int)marker(m, bytes, false) - 1u;

	return start + cols <= ct.width ? cols : (unsigned int)marker(m, bytes, true) - 1u;
}

/* End a piece being rendered: the cut marker when it did not fit, and its last line. */
static void piece_close(bool count_bytes)
{
	if (ct.stopped && count_bytes) {
		char m[40];
		uint32_t cut = ct.bytes - ct.shown_bytes;
		size_t n = marker(m, cut, false);

		/* The reserve left room for one form with its space; at 20 columns the brief
		 * one needs 9 + digits after a continuation line's 4, so a count of 7 digits
		 * or more would lose the space (and overflow): the arguments are at most 4095
		 * bytes, a few times that shown escaped. */
		if (ct.col + (unsigned int)n - 1u > ct.width) {
			n = marker(m, cut, true);
		}
		if (ct.col + (unsigned int)n - 1u <= ct.width) {
			line_add(m, n);
		} else {
			line_add(m + 1, n - 1u);
		}
	} else if (ct.stopped) {
		line_add(ELLIPSIS, sizeof(ELLIPSIS) - 1);
	}
	line_end();
	ct.in_piece = false;
}

/* ---- Escaping -------------------------------------------------------------------------------- */

/* Code points shown escaped besides the controls: invisible, or changing the direction. */
static const uint32_t hidden[][2] = {
	{0x00AD, 0x00AD},   {0x034F, 0x034F},	{0x061C, 0x061C},   {0x115F, 0x1160},
	{0x17B4, 0x17B5},   {0x180B, 0x180F},	{0x200B, 0x200F},   {0x2028, 0x202E},
	{0x2060, 0x206F},   {0x3164, 0x3164},	{0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},
	{0xFFA0, 0xFFA0},   {0xFFF0, 0xFFFB},	{0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
	{0xE0000, 0xE0FFF},
};

static bool escaped(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
		return true;
	}
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
		if (cp >= hidden[i][0] && cp <= hidden[i][1]) {
			return true;
		}
	}
	return false;
}

static void code_point(uint32_t cp, const uint8_t *bytes, size_t n)
{
	static const char shorts[] = "\"\"\\\\\nn\rr\tt\bb\ff";
	char esc[16];

	for (size_t i = 0; i + 1 < sizeof(shorts); i += 2) {
		if (cp == (uint8_t)shorts[i]) {
			esc[0] = '\\';
			esc[1] = shorts[i + 1];
			unit(esc, 2, 2);
			return;
		}
	}
	if (escaped(cp)) {
		int len;

		if (cp > 0xFFFF) {
			uint32_t v = cp - 0x10000;

			len = snprintf(esc, sizeof(esc), "\\u%04lx\\u%04lx",
				       (unsigned long)(0xD800 + (v >> 10)),
				       (unsigned long)(0xDC00 + (v & 0x3FF)));
		} else {
			len = snprintf(esc, sizeof(esc), "\\u%04lx", (unsigned long)cp);
		}
		unit(esc, (size_t)len, (unsigned int)len);
		return;
	}
	unit((const char *)bytes, n, cp < 0x80 ? 1 : 2);
}

static void replacement(void)
{
	static const uint8_t fffd[] = {0xEF, 0xBF, 0xBD};

	code_point(0xFFFD, fffd, sizeof(fffd));
	ct.u8_len = 0;
	ct.u8_need = 0;
}

/* Text (a string's content, a key) escaped; invalid UTF-8 becomes U+FFFD. */
static void text_bytes(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t b = (uint8_t)s[i];

		if (ct.u8_need > 0) {
			uint8_t lo = ct.u8_len == 1 ? ct.u8_lo : 0x80;
			uint8_t hi = ct.u8_len == 1 ? ct.u8_hi : 0xBF;

			if (b >= lo && b <= hi) {
				ct.u8[ct.u8_len++] = b;
				if (--ct.u8_need == 0) {
					uint32_t cp = ct.u8[0] & (0x7Fu >> ct.u8_len);

					for (uint8_t k = 1; k < ct.u8_len; k++) {
						cp = (cp << 6) | (ct.u8[k] & 0x3Fu);
					}
					code_point(cp, ct.u8, ct.u8_len);
					ct.u8_len = 0;
				}
				continue;
			}
			replacement(); /* and b starts afresh */
		}
		if (b < 0x80) {
			code_point(b, &b, 1);
			continue;
		}
		ct.u8_need = utf8_lead(b, &ct.u8_lo, &ct.u8_hi);
		if (ct.u8_need == 0) {
			replacement();
			continue;
		}
		ct.u8[0] = b;
		ct.u8_len = 1;
	}
}

static void text_end(void)
{
	if (ct.u8_len > 0) {
		replacement();
	}
}

static void text(const char *s, size_t n)
{
	text_bytes(s, n);
	text_end();
}

/* ---- The members ----------------------------------------------------------------------------- */

static void member_begin(const struct json_stream *js)
{
	unsigned int i = ct.count++;
	size_t klen;
	bool cut;
	const char *key = json_stream_key_n(js, 1, &klen, &cut);

	if (ct.pass == RENDER && i >= ct.shown) {
		return; /* counted in the "more arguments" line */
	}
	if (ct.pass == RENDER) {
		const struct member *m = &ct.members[i];

		piece_begin(FIELD_INDENT, m->lines,
			    m->need > m->lines ? marker_reserve(FIELD_INDENT, m->lines, m->bytes)
					       : 0);
	} else {
		piece_begin(FIELD_INDENT, 0, 0);
	}
	text(key != NULL ? key : "", klen); /* all its bytes: a NUL shows as \u0000 */
	plain(cut ? "...: " : ": ");
}

static void member_end(void)
{
	unsigned int i = ct.count - 1;

	if (!ct.in_piece) {
		return;
	}
	if (ct.pass == RENDER) {
		piece_close(true);
		return;
	}
	if (i < AGENT_CONFIRM_TEXT_LINES_MAX) {
		ct.members[i].bytes = ct.bytes;
		ct.members[i].need = (uint16_t)(ct.line_no + 1 < UINT16_MAX ? ct.line_no + 1 : UINT16_MAX);
	}
	ct.in_piece = false;
}

static int on_value(void *user, const struct json_stream *js, const struct json_value *v)
{
	int depth = json_stream_depth(js);
	bool closes = v->token == JSON_OBJECT_END || v->token == JSON_ARRAY_END;
	bool opens = v->token == JSON_OBJECT_BEGIN || v->token == JSON_ARRAY_BEGIN;

	(void)user;
	if (depth == 0) {
		ct.not_object = v->token != JSON_OBJECT_BEGIN && v->token != JSON_OBJECT_END;
		return ct.not_object ? 1 : 0;
	}
	if (!closes && (v->token != JSON_STRING || v->first)) {
		if (depth == 1) {
			member_begin(js);
		} else {
			uint64_t bit = (uint64_t)1 << (depth - 1);
			size_t klen;
			bool cut;
			const char *key = json_stream_key_n(js, depth, &klen, &cut);

			if (ct.has_items & bit) {
				plain(",");
			}
			ct.has_items |= bit;
			if (key == NULL && (ct.is_object & bit) != 0u) {
				/* Deeper than the tokenizer keeps keys (JSON_PATH_DEPTH): not shown. */
				plain("\"...\":");
			} else if (key != NULL) {
				plain("\"");
				text(key, klen);
				plain(cut ? "...\":" : "\":");
			}
		}
	}
	switch (v->token) {
	case JSON_OBJECT_BEGIN:
	case JSON_ARRAY_BEGIN:
		plain(v->token == JSON_OBJECT_BEGIN ? "{" : "[");
		ct.has_items &= ~((uint64_t)1 << depth);
		ct.is_object = v->token == JSON_OBJECT_BEGIN ? ct.is_object | ((uint64_t)1 << depth)
							    : ct.is_object & ~((uint64_t)1 << depth);
		break;
	case JSON_OBJECT_END:
		plain("}");
		break;
	case JSON_ARRAY_END:
		plain("]");
		break;
	case JSON_STRING:
		if (v->first) {
			plain("\"");
		}
		text_bytes(v->text, v->len);
		if (v->last) {
			text_end();
			plain("\"");
		}
		break;
	case JSON_NUMBER:
		plain(v->text);
		break;
	case JSON_TRUE:
		plain("true");
		break;
	case JSON_FALSE:
		plain("false");
		break;
	case JSON_NULL:
		plain("null");
		break;
	}
	if (depth == 1 && (closes || (!opens && (v->token != JSON_STRING || v->last)))) {
		member_end();
	}
	return 0;
}

static bool parse(const char *args, size_t len)
{
	int err;

	ct.count = 0;
	ct.in_piece = false;
	ct.not_object = false;
	ct.has_items = 0;
	ct.u8_len = 0;
	ct.u8_need = 0;
	json_stream_init(&ct.js, on_value, NULL);
	err = json_stream_feed(&ct.js, args, len);
	if (err == 0) {
		err = json_stream_finish(&ct.js);
	}
	return err == 0 && !ct.not_object;
}

/* Short values whole, long ones share the rest; one line says how many members have none. */
static void share_lines(unsigned int avail)
{
	unsigned int rest;
	bool gave = true;

	ct.shown = ct.count <= avail ? ct.count : avail - 1;
	rest = avail - ct.shown - (ct.count > ct.shown ? 1 : 0);
	for (unsigned int i = 0; i < ct.shown; i++) {
		ct.members[i].lines = 1;
	}
	while (rest > 0 && gave) {
		gave = false;
		for (unsigned int i = 0; i < ct.shown && rest > 0; i++) {
			if (ct.members[i].lines < ct.members[i].need) {
				ct.members[i].lines++;
				rest--;
				gave = true;
			}
		}
	}
}

/* Laid out like a member: measured, then given @p avail lines. */
static void note_line(const char *label, const char *s, size_t n, unsigned int avail)
{
	unsigned int need;

	ct.pass = MEASURE;
	piece_begin(FIELD_INDENT, 0, 0);
	plain(label);
	text(s, n);
	need = ct.line_no + 1;
	ct.pass = RENDER;
	piece_begin(FIELD_INDENT, avail,
		    need > avail ? marker_reserve(FIELD_INDENT, avail, ct.bytes) : 0);
	plain(label);
	text(s, n);
	piece_close(true);
}

static void name_line(const char *name)
{
	ct.pass = MEASURE;
	piece_begin(HEAD, 0, 0);
	text(name, strlen(name));
	ct.pass = RENDER;
	piece_begin(HEAD, 1, ct.line_no > 0 ? 2 : 0);
	text(name, strlen(name));
	piece_close(false);
}

unsigned int agent_confirm_text(const char *name, const char *args, size_t len,
				unsigned int cols, unsigned int lines, agent_confirm_text_put_fn put,
				void *user)
{
	unsigned int avail;

	cols = cols < AGENT_CONFIRM_TEXT_COLS_MIN   ? AGENT_CONFIRM_TEXT_COLS_MIN
	       : cols > AGENT_CONFIRM_TEXT_COLS_MAX ? AGENT_CONFIRM_TEXT_COLS_MAX
						    : cols;
	lines = lines < AGENT_CONFIRM_TEXT_LINES_MIN   ? AGENT_CONFIRM_TEXT_LINES_MIN
		: lines > AGENT_CONFIRM_TEXT_LINES_MAX ? AGENT_CONFIRM_TEXT_LINES_MAX
						       : lines;
	avail = lines - 1;
	ct.width = cols - 1;
	ct.put = put;
	ct.user = user;
	ct.line_len = 0;
	ct.out_lines = 0;
	ct.u8_len = 0;
	ct.u8_need = 0;
	name_line(name != NULL ? name : "");
	if (args == NULL) {
		args = "";
		len = 0;
	}
	ct.pass = MEASURE;
	if (!parse(args, len)) {
		note_line("not JSON: ", args, len, avail);
		return ct.out_lines;
	}
	share_lines(avail);
	ct.pass = RENDER;
	(void)parse(args, len);
	if (ct.count == 0) {
		note_line("(no arguments)", "", 0, avail);
	} else if (ct.count > ct.shown) {
		char more[48];
		int n = snprintf(more, sizeof(more), FIELD_INDENT ELLIPSIS " (+%u more arguments)",
				 ct.count - ct.shown);

		if ((unsigned int)n - 1u > ct.width) {
			n = snprintf(more, sizeof(more), FIELD_INDENT ELLIPSIS " (+%u more)",
				     ct.count - ct.shown);
		}
		line_add(more, (size_t)n);
		line_end();
	}
	return ct.out_lines;
}
