/*
 * The bytes on the wire of the HTTP client (http.c), kept apart from the socket code so that
 * unit tests and the fuzz target can drive them without a connection: the request head
 * writer and an incremental response parser.
 *
 * The parser's memory is struct http_parser: the first HTTP_HEADER_KEPT bytes of a header
 * line (the names and values the client reads are short); the rest of a longer line is
 * checked as it streams past and not kept: such a header is not handed to on_header (but a
 * Content-Type, handed on as its kept start, which holds the media type), and a
 * Content-Length or Transfer-Encoding that long is refused (-EMSGSIZE). Body bytes go
 * straight to the on_body callback, never into a buffer. It accepts a status line "HTTP/1.0" or "HTTP/1.1",
 * one space, a status code from 100 to 599 and an optional reason; header lines of at most
 * HTTP_HEADER_LINE_MAX bytes (without the line end), at most HTTP_HEADERS_MAX of them; lines
 * ending in CR LF or a bare LF. Interim responses (1xx but 101) are read and dropped without
 * any callback. The body is framed by "Transfer-Encoding: chunked", by "Content-Length", or
 * by the close of the stream; 204 and 304 responses have none. Trailers of a chunked body
 * are checked like header lines and dropped.
 */
#ifndef AGENT_HTTP_WIRE_H
#define AGENT_HTTP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"

/**
 * Write the head of @p req (request line, headers, blank line) into @p buf. 0 with the
 * length in @p len; -EMSGSIZE when it needs more than @p cap bytes; -EINVAL for a path
 * that does not start with '/', an empty host, or a control character (or, outside the
 * content type and accept values, a space) in the path, host, key, content type or accept.
 */
int http_head_write(const struct http_request *req, char *buf, size_t cap, size_t *len);

struct http_parser {
	const struct http_callbacks *cb;
	void *user_data;
	/* Private state below: http_parse.c owns its meaning. */
	uint64_t remaining;	 /* bytes left of the Content-Length body or of this chunk */
	uint64_t content_length; /* the value of the Content-Length header(s) seen so far */
	int result;		 /* sticky: the error or stop value that ended parsing */
	uint16_t status;
	uint16_t line_len;   /* bytes of the line kept in line[] */
	uint16_t line_total; /* bytes of the line read, kept or not */
	uint8_t state;
	uint8_t header_count;
	bool cr;	       /* the last byte was a CR: only an LF may follow */
	bool has_length;       /* a Content-Length header was seen */
	bool chunked;	       /* Transfer-Encoding ends in chunked */
	bool chunk_size_ended; /* white space followed the chunk size digits */
	bool line_cut;	       /* the line is longer than HTTP_HEADER_KEPT */
	bool cut_in_name;      /* its name goes on past the kept bytes */
	char line[HTTP_HEADER_KEPT + 1];
};

/** Start parsing a response; the callbacks (each may be NULL) get what it holds. */
void http_parser_init(struct http_parser *parser, const struct http_callbacks *cb,
		      void *user_data);

/**
 * Parse the next @p len bytes of the stream. Returns 0 (more may follow, or the response is
 * complete: see http_parser_done()), the non-zero value a callback returned, -EPROTO
 * (malformed status line, header, framing or chunk) or -EMSGSIZE (a header line or chunk
 * size line longer than HTTP_HEADER_LINE_MAX, or more than HTTP_HEADERS_MAX header lines).
 * Once it has returned non-zero it returns the same value again. Bytes after the end of
 * the response are ignored.
 */
int http_parser_feed(struct http_parser *parser, const char *data, size_t len);

/**
 * The stream ended in order. 0 when that completes the response (or it was complete),
 * -ECONNRESET when the response was cut short, or the earlier error.
 */
int http_parser_finish(struct http_parser *parser);

/** The response is complete: its framing says the body has ended. */
bool http_parser_done(const struct http_parser *parser);

#endif /* AGENT_HTTP_WIRE_H */
