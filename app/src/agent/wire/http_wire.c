/*
 * The HTTP client's wire format (see http_wire.h): the request head writer and the
 * incremental response parser. The parser takes header-section bytes one at a time into the
 * line buffer and hands body bytes on in the largest runs the input allows, so a 1-byte feed
 * and a whole-response feed give the same callbacks apart from how the body is split.
 */
#include "http_wire.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent_version.h"
#include "decimal.h"

/* ---- Request head ---------------------------------------------------------------------------- */

static bool is_default_port(const struct http_url *url)
{
	return url->port == (url->tls ? 443 : 80);
}

struct head_writer {
	char *buf;
	size_t len;
	size_t cap;
	bool overflow;
};

static void head_put(struct head_writer *w, const char *text, size_t len)
{
	if (w->overflow || len > w->cap - w->len) {
		w->overflow = true;
		return;
	}
	memcpy(w->buf + w->len, text, len);
	w->len += len;
}

static void head_puts(struct head_writer *w, const char *text)
{
	head_put(w, text, strlen(text));
}

static void head_put_u64(struct head_writer *w, uint64_t value)
{
	char digits[DECIMAL_U64_MAX];

	head_put(w, digits, decimal_u64(digits, value));
}

/*
 * A value that goes into the head verbatim: control characters (CR and LF above all) would
 * let a key or a path written by the user add header lines of its own.
 */
static bool head_value_ok(const char *text, bool space_ok)
{
	for (; *text != '\0'; text++) {
		unsigned char c = (unsigned char)*text;

		if (c < 0x20 || c == 0x7f || (c == ' ' && !space_ok)) {
			return false;
		}
	}
	return true;
}

int http_head_write(const struct http_request *req, char *buf, size_t cap, size_t *len)
{
	const struct http_url *url = req->url;
	struct head_writer w = {.buf = buf, .cap = cap};

	if (url->path == NULL || url->path[0] != '/' || url->host[0] == '\0' ||
	    !head_value_ok(url->path, false) || !head_value_ok(url->host, false) ||
	    (req->bearer != NULL && !head_value_ok(req->bearer, false)) ||
	    (req->content_type != NULL && !head_value_ok(req->content_type, true)) ||
	    (req->accept != NULL && !head_value_ok(req->accept, true))) {
		return -EINVAL;
	}

	head_puts(&w, "POST ");
	head_puts(&w, url->path);
	head_puts(&w, " HTTP/1.1\r\nHost: ");
	/* RFC 3986: an IPv6 literal goes in brackets, so its colons are not the port's. */
	bool ipv6 = strchr(url->host, ':') != NULL;

	if (ipv6) {
		head_puts(&w, "[");
	}
	head_puts(&w, url->host);
	if (ipv6) {
		head_puts(&w, "]");
	}
	if (!is_default_port(url)) {
		head_puts(&w, ":");
		head_put_u64(&w, url->port);
	}
	head_puts(&w, "\r\nUser-Agent: zephyr-agent/" AGENT_VERSION_STRING "\r\n");
	if (req->bearer != NULL) {
		head_puts(&w, "Authorization: Bearer ");
		head_puts(&w, req->bearer);
		head_puts(&w, "\r\n");
	}
	if (req->content_type != NULL) {
		head_puts(&w, "Content-Type: ");
		head_puts(&w, req->content_type);
		head_puts(&w, "\r\n");
	}
	if (req->accept != NULL) {
		head_puts(&w, "Accept: ");
		head_puts(&w, req->accept);
		head_puts(&w, "\r\n");
	}
	head_puts(&w, "Content-Length: ");
	head_put_u64(&w, req->body_len);
	/* One request per connection: the server may end the body by closing. */
	head_puts(&w, "\r\nConnection: close\r\n\r\n");
	if (w.overflow) {
		return -EMSGSIZE;
	}
	*len = w.len;
	return 0;
}

/* ---- Response parser ------------------------------------------------------------------------- */

enum parse_state {
	ST_STATUS_LINE = 0,
	ST_HEADER_LINE,
	ST_BODY_LENGTH,
	ST_BODY_CLOSE,
	ST_CHUNK_SIZE,
	ST_CHUNK_EXT,
	ST_CHUNK_DATA,
	ST_CHUNK_DATA_END,
	ST_TRAILER_LINE,
	ST_DONE,
	ST_FAILED,
};

static const char status_prefix[] = "HTTP/1.";

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
	if (is_digit(c)) {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* RFC 9110 tchar: the characters of a header name and of a transfer coding. */
static bool is_tchar(char c)
{
	if (is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
		return true;
	}
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/*
 * Control characters other than HTAB are refused in values and reasons: besides being
 * invalid there, they would reach the console when a caller shows a header or a reason.
 */
static bool is_ctl(char c)
{
	return ((unsigned char)c < 0x20 && c != '\t') || c == 0x7f;
}

static char to_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool eq_nocase(const char *a, size_t a_len, const char *lower)
{
	size_t i;

	for (i = 0; i < a_len && lower[i] != '\0'; i++) {
		if (to_lower(a[i]) != lower[i]) {
			return false;
		}
	}
	return i == a_len && lower[i] == '\0';
}

static int fail(struct http_parser *parser, int result)
{
	parser->state = ST_FAILED;
	parser->result = result;
	return result;
}

void http_parser_init(struct http_parser *parser, const struct http_callbacks *cb,
		      void *user_data)
{
	memset(parser, 0, sizeof(*parser));
	parser->cb = cb;
	parser->user_data = user_data;
	parser->state = ST_STATUS_LINE;
}

bool http_parser_done(const struct http_parser *parser)
{
	return parser->state == ST_DONE;
}

/*
 * A byte of a line past HTTP_HEADER_KEPT: not kept, checked as split_field() and the status
 * line's reason would check it (a name's characters up to its colon, then no control).
 */
static int cut_byte(struct http_parser *parser, char c)
{
	if (!parser->line_cut) {
		parser->line_cut = true;
		parser->cut_in_name = parser->state != ST_STATUS_LINE &&
				      memchr(parser->line, ':', parser->line_len) == NULL;
	}
	if (parser->cut_in_name) {
		if (c == ':') {
			parser->cut_in_name = false;
			return 0;
		}
		return is_tchar(c) ? 0 : -EPROTO;
	}
	return is_ctl(c) ? -EPROTO : 0;
}

/*
 * Take one byte of a line. 1 when the byte ended the line (now NUL-terminated in
 * parser->line), 0 when more is needed, or a negative errno. RFC 9112 lets a recipient take a
 * bare LF as a line end; a bare CR it must refuse.
 */
static int line_byte(struct http_parser *parser, char c)
{
	if (parser->cr) {
		if (c != '\n') {
			return -EPROTO;
		}
		parser->cr = false;
		parser->line[parser->line_len] = '\0';
		return 1;
	}
	if (c == '\r') {
		parser->cr = true;
		return 0;
	}
	if (c == '\n') {
		parser->line[parser->line_len] = '\0';
		return 1;
	}
	if (c == '\0') {
		return -EPROTO;
	}
	if (parser->line_total == HTTP_HEADER_LINE_MAX) {
		return -EMSGSIZE;
	}
	parser->line_total++;
	if (parser->line_len < HTTP_HEADER_KEPT) {
		parser->line[parser->line_len++] = c;
		return 0;
	}
	return cut_byte(parser, c);
}

static int parse_status_line(struct http_parser *parser)
{
	const char *line = parser->line;
	size_t prefix_len = sizeof(status_prefix) - 1;

	/* "HTTP/1.x 200" is 12 bytes; the reason and the space before it are optional. */
	if (parser->line_len < prefix_len + 5 || memcmp(line, status_prefix, prefix_len) != 0) {
		return -EPROTO;
	}
	line += prefix_len;
	if ((line[0] != '0' && line[0] != '1') || line[1] != ' ' || !is_digit(line[2]) ||
	    !is_digit(line[3]) || !is_digit(line[4])) {
		return -EPROTO;
	}
	if (line[5] != '\0' && line[5] != ' ') {
		return -EPROTO;
	}
	for (const char *reason = line + 5; *reason != '\0'; reason++) {
		if (is_ctl(*reason)) {
			return -EPROTO;
		}
	}

	int status = (line[2] - '0') * 100 + (line[3] - '0') * 10 + (line[4] - '0');

	/* RFC 9110 section 15: codes outside 100..599 are invalid. */
	if (status < 100 || status > 599) {
		return -EPROTO;
	}
	parser->status = (uint16_t)status;
	return 0;
}

/*
 * Split a header line in place: the name is lower-cased and NUL-terminated at its colon, the
 * value trimmed of white space on both sides. A line starting with white space is an obs-fold
 * continuation (or, right after the status line, a line the RFC says to refuse): both -EPROTO.
 */
static int split_field(struct http_parser *parser, const char **name, const char **value)
{
	char *line = parser->line;
	size_t len = parser->line_len;
	size_t colon = 0;

	while (colon < len && is_tchar(line[colon])) {
		line[colon] = to_lower(line[colon]);
		colon++;
	}
	if (colon == 0 || colon == len || line[colon] != ':') {
		return -EPROTO;
	}
	line[colon] = '\0';

	size_t start = colon + 1;
	size_t end = len;

	while (start < end && is_ows(line[start])) {
		start++;
	}
	while (end > start && is_ows(line[end - 1])) {
		end--;
	}
	for (size_t i = start; i < end; i++) {
		if (is_ctl(line[i])) {
			return -EPROTO;
		}
	}
	line[end] = '\0';
	*name = line;
	*value = line + start;
	return 0;
}

/*
 * Content-Length: digits, or a list of equal values (RFC 9110 section 8.6 lets a recipient
 * take "5, 5" as 5). Repeated headers must agree as well; anything else is a framing attack
 * or a broken server, and the body could not be delimited safely.
 */
static int parse_content_length(struct http_parser *parser, const char *value)
{
	const char *p = value;

	for (;;) {
		uint64_t length = 0;
		bool digits = false;

		while (is_digit(*p)) {
			unsigned int digit = (unsigned int)(*p - '0');

			/* length * 10 + digit > UINT64_MAX, with constant divisions only. */
			if (length > UINT64_MAX / 10 ||
			    (length == UINT64_MAX / 10 && digit > UINT64_MAX % 10)) {
				return -EPROTO;
			}
			length = length * 10 + digit;
			digits = true;
			p++;
		}
		if (!digits) {
			return -EPROTO;
		}
		if (parser->has_length && parser->content_length != length) {
			return -EPROTO;
		}
		parser->has_length = true;
		parser->content_length = length;
		while (is_ows(*p)) {
			p++;
		}
		if (*p == '\0') {
			return 0;
		}
		if (*p != ',') {
			return -EPROTO;
		}
		p++;
		while (is_ows(*p)) {
			p++;
		}
	}
}

/*
 * Transfer-Encoding: a list of codings, possibly over several header lines. The only one
 * this client can undo is chunked, which must come last and only once; the request asks for
 * no other, so any other coding is refused rather than handed on as if it were the body.
 */
static int parse_transfer_encoding(struct http_parser *parser, const char *value)
{
	const char *p = value;

	while (*p != '\0') {
		const char *token = p;

		while (is_tchar(*p)) {
			p++;
		}

		size_t token_len = (size_t)(p - token);

		if (token_len > 0) {
			if (parser->chunked || !eq_nocase(token, token_len, "chunked")) {
				return -EPROTO;
			}
			parser->chunked = true;
		}
		while (is_ows(*p)) {
			p++;
		}
		if (*p == '\0') {
			break;
		}
		if (*p != ',') {
			return -EPROTO;
		}
		p++;
		while (is_ows(*p)) {
			p++;
		}
	}
	return 0;
}

static bool interim(const struct http_parser *parser)
{
	return parser->status < 200;
}

static int header_line(struct http_parser *parser)
{
	const char *name;
	const char *value;
	int err;

	if (parser->header_count == HTTP_HEADERS_MAX) {
		return -EMSGSIZE;
	}
	parser->header_count++;
	if (parser->line_cut && parser->cut_in_name) {
		return -EPROTO; /* no colon */
	}
	if (parser->line_cut && memchr(parser->line, ':', parser->line_len) == NULL) {
		/* A name longer than what is kept: no header the client reads; checked, dropped. */
		for (size_t i = 0; i < parser->line_len; i++) {
			if (!is_tchar(parser->line[i])) {
				return -EPROTO;
			}
		}
		return 0;
	}
	err = split_field(parser, &name, &value);
	if (err != 0) {
		return err;
	}
	if (interim(parser) || parser->state == ST_TRAILER_LINE) {
		return 0;
	}
	if (parser->line_cut) {
		/* Read past: the framing headers must be read whole; a Content-Type is handed on as
		 * its kept start, which holds the media type; the others are not used. */
		if (strcmp(name, "content-length") == 0 || strcmp(name, "transfer-encoding") == 0) {
			return -EMSGSIZE;
		}
		if (strcmp(name, "content-type") != 0) {
			return 0;
		}
	}
	if (strcmp(name, "content-length") == 0) {
		err = parse_content_length(parser, value);
	} else if (strcmp(name, "transfer-encoding") == 0) {
		err = parse_transfer_encoding(parser, value);
	}
	if (err != 0) {
		return err;
	}
	if (parser->cb != NULL && parser->cb->on_header != NULL) {
		return parser->cb->on_header(parser->user_data, name, value);
	}
	return 0;
}

static int headers_end(struct http_parser *parser)
{
	if (interim(parser)) {
		/* 101 would switch protocols, which this client never asks for. */
		if (parser->status == 101) {
			return -EPROTO;
		}
		parser->state = ST_STATUS_LINE;
		parser->header_count = 0;
		return 0;
	}
	if (parser->status == 204 || parser->status == 304) {
		parser->state = ST_DONE;
		return 0;
	}
	if (parser->chunked) {
		/* RFC 9112 section 6.3 allows ignoring Content-Length here; refusing is safer. */
		if (parser->has_length) {
			return -EPROTO;
		}
		parser->state = ST_CHUNK_SIZE;
		parser->remaining = 0;
		parser->chunk_size_ended = false;
		return 0;
	}
	if (parser->has_length) {
		parser->remaining = parser->content_length;
		parser->state = parser->remaining == 0 ? ST_DONE : ST_BODY_LENGTH;
		return 0;
	}
	parser->state = ST_BODY_CLOSE;
	return 0;
}

/* One complete line of the status line, header or trailer sections. */
static int line_done(struct http_parser *parser)
{
	int err;

	switch (parser->state) {
	case ST_STATUS_LINE:
		err = parse_status_line(parser);
		if (err != 0) {
			return err;
		}
		parser->state = ST_HEADER_LINE;
		if (!interim(parser) && parser->cb != NULL && parser->cb->on_status != NULL) {
			return parser->cb->on_status(parser->user_data, parser->status);
		}
		return 0;
	case ST_HEADER_LINE:
		if (parser->line_len == 0) {
			return headers_end(parser);
		}
		return header_line(parser);
	default: /* ST_TRAILER_LINE */
		if (parser->line_len == 0) {
			parser->state = ST_DONE;
			return 0;
		}
		return header_line(parser);
	}
}

static int head_byte(struct http_parser *parser, char c)
{
	int ret = line_byte(parser, c);

	if (ret < 0) {
		return ret;
	}
	/* Refuse a stream that is not HTTP at its first bytes, not after a line's worth. */
	if (parser->state == ST_STATUS_LINE && ret == 0 && parser->line_len > 0 &&
	    parser->line_len < sizeof(status_prefix) &&
	    parser->line[parser->line_len - 1] != status_prefix[parser->line_len - 1]) {
		return -EPROTO;
	}
	if (ret == 0) {
		return 0;
	}
	ret = line_done(parser);
	parser->line_len = 0;
	parser->line_total = 0;
	parser->line_cut = false;
	parser->cut_in_name = false;
	return ret;
}

/*
 * One byte of a chunk-size line: hex digits, optional white space, then an optional
 * extension (";" and anything visible, skipped) up to the line end. The line is bounded like
 * a header line so that an endless extension cannot hold the client.
 */
static int chunk_size_byte(struct http_parser *parser, char c)
{
	if (parser->cr) {
		if (c != '\n') {
			return -EPROTO;
		}
		parser->cr = false;
	} else if (c == '\r') {
		if (parser->line_len == 0) {
			return -EPROTO;
		}
		parser->cr = true;
		return 0;
	} else if (c != '\n') {
		if (parser->line_len == HTTP_HEADER_LINE_MAX) {
			return -EMSGSIZE;
		}
		parser->line_len++;
		if (parser->state == ST_CHUNK_EXT) {
			return is_ctl(c) ? -EPROTO : 0;
		}

		int digit = hex_value(c);

		if (digit >= 0 && !parser->chunk_size_ended) {
			if (parser->remaining > (UINT64_MAX >> 4)) {
				return -EPROTO;
			}
			parser->remaining = (parser->remaining << 4) | (uint64_t)digit;
			return 0;
		}
		/* Everything below needs at least one digit before it. */
		if (parser->line_len == 1) {
			return -EPROTO;
		}
		if (is_ows(c)) {
			parser->chunk_size_ended = true;
			return 0;
		}
		if (c == ';') {
			parser->state = ST_CHUNK_EXT;
			return 0;
		}
		return -EPROTO;
	}
	/* The line ended. */
	if (parser->line_len == 0) {
		return -EPROTO;
	}
	parser->line_len = 0;
	parser->chunk_size_ended = false;
	if (parser->remaining == 0) {
		parser->state = ST_TRAILER_LINE;
		parser->header_count = 0;
	} else {
		parser->state = ST_CHUNK_DATA;
	}
	return 0;
}

/* The line end after a chunk's data: CR LF, or a bare LF. */
static int chunk_end_byte(struct http_parser *parser, char c)
{
	if (c == '\r' && !parser->cr) {
		parser->cr = true;
		return 0;
	}
	if (c != '\n') {
		return -EPROTO;
	}
	parser->cr = false;
	parser->state = ST_CHUNK_SIZE;
	parser->remaining = 0;
	return 0;
}

static int body(struct http_parser *parser, const char *data, size_t len)
{
	if (parser->cb != NULL && parser->cb->on_body != NULL) {
		return parser->cb->on_body(parser->user_data, data, len);
	}
	return 0;
}

int http_parser_feed(struct http_parser *parser, const char *data, size_t len)
{
	size_t i = 0;
	int ret = 0;

	if (parser->state == ST_FAILED) {
		return parser->result;
	}
	while (i < len && ret == 0) {
		size_t run;

		switch (parser->state) {
		case ST_STATUS_LINE:
		case ST_HEADER_LINE:
		case ST_TRAILER_LINE:
			ret = head_byte(parser, data[i++]);
			break;
		case ST_CHUNK_SIZE:
		case ST_CHUNK_EXT:
			ret = chunk_size_byte(parser, data[i++]);
			break;
		case ST_CHUNK_DATA_END:
			ret = chunk_end_byte(parser, data[i++]);
			break;
		case ST_BODY_LENGTH:
		case ST_CHUNK_DATA:
			run = len - i;
			if (run > parser->remaining) {
				run = (size_t)parser->remaining;
			}
			parser->remaining -= run;
			if (parser->remaining == 0) {
				parser->state = parser->state == ST_CHUNK_DATA ? ST_CHUNK_DATA_END
									       : ST_DONE;
			}
			ret = body(parser, data + i, run);
			i += run;
			break;
		case ST_BODY_CLOSE:
			ret = body(parser, data + i, len - i);
			i = len;
			break;
		default: /* ST_DONE */
			return 0;
		}
	}
	if (ret != 0) {
		return fail(parser, ret);
	}
	return 0;
}

int http_parser_finish(struct http_parser *parser)
{
	switch (parser->state) {
	case ST_DONE:
		return 0;
	case ST_BODY_CLOSE:
		parser->state = ST_DONE;
		return 0;
	case ST_FAILED:
		return parser->result;
	default:
		return fail(parser, -ECONNRESET);
	}
}
