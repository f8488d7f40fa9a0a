/*
 * The HTTP/1.1 client (app/src/agent/wire/http.c, http_wire.c).
 *
 * The wire format is tested without sockets (request heads, and the response parser fed with
 * every split of its input); http_post() is tested over the POSIX port's real network stream
 * against a loopback TCP server on a thread of this test, which reads each request and
 * answers with a scripted response in a scripted write pattern. The server also checks that
 * the client closed the connection, whatever way the request ended.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent_port.h"
#include "agent_version.h"
#include "http.h"
#include "http_wire.h"

#define USER_AGENT "User-Agent: zephyr-agent/" AGENT_VERSION_STRING "\r\n"

/* ---- Recording callbacks ------------------------------------------------------------------- */

struct capture {
	char log[16384]; /* "status N\n" and "name: value\n" lines, in order */
	size_t log_len;
	char body[65536];
	size_t body_len;
	unsigned int status_calls;
	unsigned int header_calls;
	unsigned int body_calls;
	/* Stop on the status, the Nth header or the Nth body piece (1-based) with stop_value. */
	bool stop_on_status;
	unsigned int stop_header_at;
	unsigned int stop_body_at;
	int stop_value;
};

static void log_add(struct capture *cap, const char *text)
{
	size_t len = strlen(text);

	assert_true(cap->log_len + len < sizeof(cap->log));
	memcpy(cap->log + cap->log_len, text, len + 1);
	cap->log_len += len;
}

static int on_status(void *user_data, int status)
{
	struct capture *cap = user_data;
	char line[32];

	cap->status_calls++;
	snprintf(line, sizeof(line), "status %d\n", status);
	log_add(cap, line);
	return cap->stop_on_status ? cap->stop_value : 0;
}

static int on_header(void *user_data, const char *name, const char *value)
{
	struct capture *cap = user_data;

	cap->header_calls++;
	log_add(cap, name);
	log_add(cap, ": ");
	log_add(cap, value);
	log_add(cap, "\n");
	return cap->header_calls == cap->stop_header_at ? cap->stop_value : 0;
}

static int on_body(void *user_data, const char *data, size_t len)
{
	struct capture *cap = user_data;

	assert_true(len > 0);
	assert_true(cap->body_len + len <= sizeof(cap->body));
	memcpy(cap->body + cap->body_len, data, len);
	cap->body_len += len;
	cap->body_calls++;
	return cap->body_calls == cap->stop_body_at ? cap->stop_value : 0;
}

static const struct http_callbacks callbacks = {
	.on_status = on_status,
	.on_header = on_header,
	.on_body = on_body,
};

static struct capture *capture_new(void)
{
	static struct capture caps[2];
	static unsigned int next;
	struct capture *cap = &caps[next++ % 2];

	memset(cap, 0, sizeof(*cap));
	return cap;
}

static void assert_body(const struct capture *cap, const char *expected)
{
	assert_int_equal(cap->body_len, strlen(expected));
	assert_memory_equal(cap->body, expected, cap->body_len);
}

/* ---- Parser driven directly ---------------------------------------------------------------- */

/* Feed @p len bytes in pieces of @p piece bytes, then the end of the stream when @p eof. */
static int parse_pieces(const char *data, size_t len, size_t piece, bool eof,
			struct capture *cap)
{
	struct http_parser parser;

	http_parser_init(&parser, &callbacks, cap);
	for (size_t off = 0; off < len; off += piece) {
		size_t n = len - off < piece ? len - off : piece;
		int ret = http_parser_feed(&parser, data + off, n);

		if (ret != 0) {
			/* Sticky: the same value again, whatever follows. */
			assert_int_equal(http_parser_feed(&parser, "x", 1), ret);
			assert_int_equal(http_parser_feed(&parser, "", 0), ret);
			assert_int_equal(http_parser_finish(&parser), ret);
			return ret;
		}
	}
	return eof ? http_parser_finish(&parser) : 0;
}

static int parse_split(const char *data, size_t len, size_t at, struct capture *cap)
{
	struct http_parser parser;
	int ret;

	http_parser_init(&parser, &callbacks, cap);
	ret = http_parser_feed(&parser, data, at);
	if (ret == 0) {
		ret = http_parser_feed(&parser, data + at, len - at);
	}
	return ret != 0 ? ret : http_parser_finish(&parser);
}

/* Whole, and one byte at a time: both must give @p expected (and the same callbacks). */
static void expect_parse(const char *data, size_t len, int expected)
{
	struct capture *whole = capture_new();
	struct capture *bytes = capture_new();

	assert_int_equal(parse_pieces(data, len, len == 0 ? 1 : len, true, whole), expected);
	assert_int_equal(parse_pieces(data, len, 1, true, bytes), expected);
	assert_string_equal(whole->log, bytes->log);
	assert_int_equal(whole->body_len, bytes->body_len);
	assert_memory_equal(whole->body, bytes->body, whole->body_len);
}

#define EXPECT_PARSE(text, expected) expect_parse(text, sizeof(text) - 1, expected)

/* A response using most of what the parser knows: interim responses, chunks, trailers. */
static const char rich_response[] =
	"HTTP/1.1 100 Continue\r\n\r\n"
	"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n"
	"HTTP/1.1 200 OK\r\n"
	"Content-Type: text/event-stream; charset=utf-8\r\n"
	"X-Request-ID:   req-1 \t\r\n"
	"Transfer-Encoding: chunked\r\n"
	"\r\n"
	"5;name=value\r\nhello\r\n"
	"00006 ; a=\"b;c\"\r\n world\r\n"
	"A\r\n0123456789\r\n"
	"0;last\r\nX-Trailer: t\r\nServer-Timing: x\r\n\r\n";

static const char rich_log[] = "status 200\n"
			       "content-type: text/event-stream; charset=utf-8\n"
			       "x-request-id: req-1\n"
			       "transfer-encoding: chunked\n";

static const char rich_body[] = "hello world0123456789";

static void test_parse_rich_every_split(void **state)
{
	size_t len = sizeof(rich_response) - 1;

	(void)state;
	for (size_t at = 0; at <= len; at++) {
		struct capture *cap = capture_new();

		assert_int_equal(parse_split(rich_response, len, at, cap), 0);
		assert_string_equal(cap->log, rich_log);
		assert_body(cap, rich_body);
		assert_int_equal(cap->status_calls, 1);
	}
	for (size_t piece = 1; piece <= 7; piece++) {
		struct capture *cap = capture_new();

		assert_int_equal(parse_pieces(rich_response, len, piece, true, cap), 0);
		assert_string_equal(cap->log, rich_log);
		assert_body(cap, rich_body);
	}
}

/* Every cut of the rich response short of its end is an early close. */
static void test_parse_every_cut(void **state)
{
	size_t len = sizeof(rich_response) - 1;

	(void)state;
	for (size_t cut = 0; cut < len; cut++) {
		struct capture *cap = capture_new();

		assert_int_equal(parse_pieces(rich_response, cut, 3, true, cap), -ECONNRESET);
	}
}

/* The framing ends the response: later bytes are not body, and no close is needed. */
static void test_parse_done_by_framing(void **state)
{
	static const char cl[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef";
	static const char chunked[] =
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGARBAGE";
	static const char no_content[] =
		"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello";
	static const char not_modified[] = "HTTP/1.1 304 Not Modified\r\n\r\nhello";
	static const char zero[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nhello";
	const char *cases[] = {cl, chunked, no_content, not_modified, zero};
	const char *bodies[] = {"abc", "abc", "", "", ""};
	struct http_parser parser;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct capture *cap = capture_new();

		http_parser_init(&parser, &callbacks, cap);
		assert_false(http_parser_done(&parser));
		assert_int_equal(http_parser_feed(&parser, cases[i], strlen(cases[i])), 0);
		assert_true(http_parser_done(&parser));
		assert_body(cap, bodies[i]);
		assert_int_equal(http_parser_feed(&parser, "more", 4), 0);
		assert_int_equal(http_parser_finish(&parser), 0);
		assert_body(cap, bodies[i]);
	}
}

static void test_parse_accepted_forms(void **state)
{
	(void)state;
	/* Close-delimited, HTTP/1.0, no reason, empty reason, bare LF line ends. */
	EXPECT_PARSE("HTTP/1.0 200 OK\r\n\r\nabc", 0);
	EXPECT_PARSE("HTTP/1.1 200\r\nContent-Length: 3\r\n\r\nabc", 0);
	EXPECT_PARSE("HTTP/1.1 200 \r\nContent-Length: 3\r\n\r\nabc", 0);
	EXPECT_PARSE("HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 0);
	EXPECT_PARSE("HTTP/1.1 599 \xc3\xa9trange\tok\r\n\r\n", 0);
	EXPECT_PARSE("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", 0);
	/* Equal Content-Length values, in a list or repeated. */
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 2 , 2\r\n\r\nok", 0);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length:2\r\n\r\nok", 0);
	/* Coding names are case-insensitive; empty list elements are allowed. */
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n", 0);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: , chunked,\r\n\r\n0\r\n\r\n", 0);
	/* Chunk sizes: leading zeros, white space before an extension or the line end, bare LF. */
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		     "0002\r\nok\r\n2 \r\nok\r\n2\t;x\r\nok\r\n1\nx\n0\n\n",
		     0);
	/* The largest chunk size that fits 64 bits is a size, not an overflow: cut short. */
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\nab",
		     -ECONNRESET);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nab",
		     -ECONNRESET);
}

static void test_parse_callbacks(void **state)
{
	static const char text[] = "HTTP/1.1 201 Created\r\n"
				   "Content-Type: text/plain\r\n"
				   "X-Mixed-CASE:   padded value \t\r\n"
				   "Empty:\r\n"
				   "Content-Length: 5\r\n\r\nhello";
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(parse_pieces(text, sizeof(text) - 1, 1, true, cap), 0);
	assert_string_equal(cap->log, "status 201\n"
				      "content-type: text/plain\n"
				      "x-mixed-case: padded value\n"
				      "empty: \n"
				      "content-length: 5\n");
	assert_body(cap, "hello");
	assert_int_equal(cap->status_calls, 1);
	assert_int_equal(cap->header_calls, 4);

	/* NULL callbacks are allowed. */
	struct http_callbacks none = {0};
	struct http_parser parser;

	http_parser_init(&parser, &none, NULL);
	assert_int_equal(http_parser_feed(&parser, text, sizeof(text) - 1), 0);
	assert_true(http_parser_done(&parser));
}

static void test_parse_malformed(void **state)
{
	(void)state;
	/* Status lines. */
	EXPECT_PARSE("HTTP/2 200 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.2 200 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("http/1.1 200 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 20 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 2000 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1  200 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 2x0 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 099 Low\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 600 High\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 O\x1bK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200\0 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\rX\r\n\r\n", -EPROTO);
	EXPECT_PARSE("\r\nHTTP/1.1 200 OK\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 101 Switching Protocols\r\n\r\n", -EPROTO);
	/* Not HTTP at all is refused at its first byte, not after a line's worth. */
	EXPECT_PARSE("I", -EPROTO);
	EXPECT_PARSE("HTTP/1.", -ECONNRESET);
	EXPECT_PARSE("HTTP/1.1", -ECONNRESET);
	/* Header lines: obs-fold, white space or nothing before the colon, bad bytes. */
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nX: a\r\n\tb\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\n X: a\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nName : x\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\n: x\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nX: a\x1b[2Jb\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nX: a\r\n\r\r\n", -EPROTO);
	/* Content-Length. */
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 2,\r\n\r\nok", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
		     -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n", -EPROTO);
	/* Transfer-Encoding: only chunked, once, last; never with Content-Length. */
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		     "Transfer-Encoding: chunked\r\n\r\n",
		     -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
		     "Content-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		     -EPROTO);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
		     "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		     -EPROTO);
}

#define CHUNKED_HEAD "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"

static void test_parse_chunk_framing(void **state)
{
	(void)state;
	EXPECT_PARSE(CHUNKED_HEAD "\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "x\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "-1\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "5x\r\nhello\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD " 5\r\nhello\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "0x5\r\nhello\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "5 5\r\nhello\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD ";x\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "5\rhello\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "5;\x01\r\nhello\r\n", -EPROTO);
	/* Overflow: 2^64 needs 17 hex digits; leading zeros are not an overflow. */
	EXPECT_PARSE(CHUNKED_HEAD "10000000000000000\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "FFFFFFFFFFFFFFFFF\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "000000000000000000001\r\nx\r\n0\r\n\r\n", 0);
	/* The data must be followed by its line end. */
	EXPECT_PARSE(CHUNKED_HEAD "5\r\nhelloX\r\n0\r\n\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "5\r\nhello\r\r\n0\r\n\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "5\r\nhello0\r\n\r\n", -EPROTO);
	/* Trailers are header lines: the same checks, and no callback. */
	EXPECT_PARSE(CHUNKED_HEAD "0\r\nBad Trailer: x\r\n\r\n", -EPROTO);
	EXPECT_PARSE(CHUNKED_HEAD "0\r\nX: a\r\n b\r\n\r\n", -EPROTO);
	/* Cut anywhere in the framing. */
	EXPECT_PARSE(CHUNKED_HEAD, -ECONNRESET);
	EXPECT_PARSE(CHUNKED_HEAD "5", -ECONNRESET);
	EXPECT_PARSE(CHUNKED_HEAD "5;ext", -ECONNRESET);
	EXPECT_PARSE(CHUNKED_HEAD "5\r\nhel", -ECONNRESET);
	EXPECT_PARSE(CHUNKED_HEAD "5\r\nhello", -ECONNRESET);
	EXPECT_PARSE(CHUNKED_HEAD "5\r\nhello\r\n", -ECONNRESET);
	EXPECT_PARSE(CHUNKED_HEAD "0\r\n", -ECONNRESET);
	EXPECT_PARSE(CHUNKED_HEAD "0\r\nX: y\r\n", -ECONNRESET);
	EXPECT_PARSE("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhell", -ECONNRESET);
}

/* "name: " padded with 'a' to a line of exactly @p line_len bytes, then CR LF. */
static size_t put_header(char *buf, const char *name, size_t line_len)
{
	size_t name_len = strlen(name);

	memcpy(buf, name, name_len);
	memcpy(buf + name_len, ": ", 2);
	memset(buf + name_len + 2, 'a', line_len - name_len - 2);
	memcpy(buf + line_len, "\r\n", 2);
	return line_len + 2;
}

static size_t put_text(char *buf, const char *text)
{
	size_t len = strlen(text);

	memcpy(buf, text, len);
	return len;
}

static char big[HTTP_HEADER_LINE_MAX * (HTTP_HEADERS_MAX + 2) + 1024];

/* A response whose one header line is @p line_len bytes long (CR LF not counted). */
static size_t long_header_response(size_t line_len)
{
	size_t n = put_text(big, "HTTP/1.1 200 OK\r\n");

	n += put_header(big + n, "X-Long", line_len);
	n += put_text(big + n, "Content-Length: 2\r\n\r\nok");
	return n;
}

static void test_parse_header_line_bounds(void **state)
{
	size_t n;

	(void)state;
	n = long_header_response(HTTP_HEADER_LINE_MAX - 1);
	expect_parse(big, n, 0);
	n = long_header_response(HTTP_HEADER_LINE_MAX);
	expect_parse(big, n, 0);

	struct capture *cap = capture_new();

	assert_int_equal(parse_pieces(big, n, 1, true, cap), 0);
	/* Longer than HTTP_HEADER_KEPT: read past, not handed on. */
	assert_string_equal(cap->log, "status 200\ncontent-length: 2\n");
	n = long_header_response(HTTP_HEADER_LINE_MAX + 1);
	expect_parse(big, n, -EMSGSIZE);

	/* The status line has the same bound. */
	n = put_text(big, "HTTP/1.1 200 ");
	memset(big + n, 'r', HTTP_HEADER_LINE_MAX - n);
	n = HTTP_HEADER_LINE_MAX;
	n += put_text(big + n, "\r\n\r\n");
	expect_parse(big, n, 0);
	n = put_text(big, "HTTP/1.1 200 ");
	memset(big + n, 'r', HTTP_HEADER_LINE_MAX + 1 - n);
	n = HTTP_HEADER_LINE_MAX + 1;
	n += put_text(big + n, "\r\n\r\n");
	expect_parse(big, n, -EMSGSIZE);

	/* And a trailer line. */
	n = put_text(big, CHUNKED_HEAD "0\r\n");
	n += put_header(big + n, "X-Trailer", HTTP_HEADER_LINE_MAX);
	n += put_text(big + n, "\r\n");
	expect_parse(big, n, 0);
	n = put_text(big, CHUNKED_HEAD "0\r\n");
	n += put_header(big + n, "X-Trailer", HTTP_HEADER_LINE_MAX + 1);
	n += put_text(big + n, "\r\n");
	expect_parse(big, n, -EMSGSIZE);
}

/*
 * Only HTTP_HEADER_KEPT bytes of a line are kept: a header of that length reaches on_header
 * whole, one byte more is read past (checked, not handed on); a framing header that long is
 * refused; what is read past is checked as a kept line would be.
 */
static void test_parse_header_kept_bytes(void **state)
{
	struct capture *cap;
	char want[HTTP_HEADER_KEPT + 64];
	size_t n;

	(void)state;
	for (size_t len = HTTP_HEADER_KEPT; len <= HTTP_HEADER_KEPT + 1; len++) {
		n = long_header_response(len);
		cap = capture_new();
		assert_int_equal(parse_pieces(big, n, 7, true, cap), 0);
		if (len == HTTP_HEADER_KEPT) {
			snprintf(want, sizeof(want), "status 200\nx-long: %.*s\ncontent-length: 2\n",
				 (int)(len - 8), big + strlen("HTTP/1.1 200 OK\r\nX-Long: "));
			assert_string_equal(cap->log, want);
		} else {
			assert_string_equal(cap->log, "status 200\ncontent-length: 2\n");
		}
	}
	/* Content-Length and Transfer-Encoding: whole at HTTP_HEADER_KEPT, refused past it. */
	for (size_t len = HTTP_HEADER_KEPT; len <= HTTP_HEADER_KEPT + 1; len++) {
		n = put_text(big, "HTTP/1.1 200 OK\r\nContent-Length: ");
		memset(big + n, '0', len - strlen("Content-Length: ") - 1);
		n += len - strlen("Content-Length: ") - 1;
		n += put_text(big + n, "2\r\n\r\nok");
		expect_parse(big, n, len == HTTP_HEADER_KEPT ? 0 : -EMSGSIZE);
		n = put_text(big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: ");
		memset(big + n, ' ', len - strlen("Transfer-Encoding: ") - 7);
		n += len - strlen("Transfer-Encoding: ") - 7;
		n += put_text(big + n, "chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n");
		expect_parse(big, n, len == HTTP_HEADER_KEPT ? 0 : -EMSGSIZE);
	}
	/* A Content-Type that long is handed on as its kept start: the media type is there. */
	n = put_text(big, "HTTP/1.1 200 OK\r\nContent-Type: text/html; x=");
	memset(big + n, 'p', HTTP_HEADER_KEPT);
	n += HTTP_HEADER_KEPT;
	n += put_text(big + n, "\r\nContent-Length: 2\r\n\r\nok");
	cap = capture_new();
	assert_int_equal(parse_pieces(big, n, 5, true, cap), 0);
	snprintf(want, sizeof(want), "status 200\ncontent-type: text/html; x=%.*s\ncontent-length: 2\n",
		 (int)(HTTP_HEADER_KEPT - strlen("Content-Type: text/html; x=")),
		 big + strlen("HTTP/1.1 200 OK\r\nContent-Type: text/html; x="));
	assert_string_equal(cap->log, want);
	/* Past the kept bytes: a control character in a value or a reason, a name without a
	 * colon or with a character no name has, are refused as in a kept line. */
	n = long_header_response(HTTP_HEADER_KEPT + 40);
	big[strlen("HTTP/1.1 200 OK\r\n") + HTTP_HEADER_KEPT + 20] = '\x01';
	expect_parse(big, n, -EPROTO);
	n = put_text(big, "HTTP/1.1 200 ");
	memset(big + n, 'r', HTTP_HEADER_KEPT + 20);
	big[n + HTTP_HEADER_KEPT] = '\x7f';
	n += HTTP_HEADER_KEPT + 20;
	n += put_text(big + n, "\r\nContent-Length: 0\r\n\r\n");
	expect_parse(big, n, -EPROTO);
	for (int kind = 0; kind < 3; kind++) {
		n = put_text(big, "HTTP/1.1 200 OK\r\nX-");
		memset(big + n, 'n', HTTP_HEADER_KEPT + 20);
		if (kind == 1) {
			big[n + HTTP_HEADER_KEPT + 5] = '@';
		}
		n += HTTP_HEADER_KEPT + 20;
		n += put_text(big + n, kind == 2 ? "\r\n" : ": v\r\n");
		n += put_text(big + n, "Content-Length: 2\r\n\r\nok");
		cap = capture_new();
		assert_int_equal(parse_pieces(big, n, 3, true, cap), kind == 0 ? 0 : -EPROTO);
		if (kind == 0) {
			assert_string_equal(cap->log, "status 200\ncontent-length: 2\n");
		}
	}
}

/* A chunk-size line of exactly @p line_len bytes: "3;" and an extension. */
static size_t long_chunk_line_response(size_t line_len)
{
	size_t n = put_text(big, CHUNKED_HEAD "3;");
	size_t ext = line_len - 2;

	memset(big + n, 'e', ext);
	n += ext;
	n += put_text(big + n, "\r\nabc\r\n0\r\n\r\n");
	return n;
}

static void test_parse_chunk_line_bounds(void **state)
{
	(void)state;
	expect_parse(big, long_chunk_line_response(HTTP_HEADER_LINE_MAX), 0);
	expect_parse(big, long_chunk_line_response(HTTP_HEADER_LINE_MAX + 1), -EMSGSIZE);
}

/* @p count header lines (the last is Content-Length) in a response of @p status. */
static size_t headers_response(char *buf, int status, unsigned int count)
{
	size_t n = (size_t)sprintf(buf, "HTTP/1.1 %d Status\r\n", status);

	for (unsigned int i = 1; i < count; i++) {
		n += (size_t)sprintf(buf + n, "X-H%u: %u\r\n", i, i);
	}
	n += put_text(buf + n, "Content-Length: 2\r\n\r\n");
	if (status >= 200) {
		n += put_text(buf + n, "ok");
	}
	return n;
}

static void test_parse_header_count_bounds(void **state)
{
	struct capture *cap;
	size_t n;

	(void)state;
	n = headers_response(big, 200, HTTP_HEADERS_MAX);
	expect_parse(big, n, 0);
	cap = capture_new();
	assert_int_equal(parse_pieces(big, n, n, true, cap), 0);
	assert_int_equal(cap->header_calls, HTTP_HEADERS_MAX);
	n = headers_response(big, 200, HTTP_HEADERS_MAX + 1);
	expect_parse(big, n, -EMSGSIZE);

	/* Counted per response: an interim response's lines do not count for the final one. */
	n = headers_response(big, 100, HTTP_HEADERS_MAX);
	n += headers_response(big + n, 200, HTTP_HEADERS_MAX);
	expect_parse(big, n, 0);
	n = headers_response(big, 100, HTTP_HEADERS_MAX + 1);
	n += headers_response(big + n, 200, 1);
	expect_parse(big, n, -EMSGSIZE);

	/* Trailers have the same bound. */
	n = put_text(big, CHUNKED_HEAD "0\r\n");
	for (unsigned int i = 0; i < HTTP_HEADERS_MAX; i++) {
		n += (size_t)sprintf(big + n, "T%u: x\r\n", i);
	}
	n += put_text(big + n, "\r\n");
	expect_parse(big, n, 0);
	n = put_text(big, CHUNKED_HEAD "0\r\n");
	for (unsigned int i = 0; i <= HTTP_HEADERS_MAX; i++) {
		n += (size_t)sprintf(big + n, "T%u: x\r\n", i);
	}
	n += put_text(big + n, "\r\n");
	expect_parse(big, n, -EMSGSIZE);
}

static void test_parse_stop_values(void **state)
{
	static const char text[] =
		"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
		"1\r\nx\r\n1\r\ny\r\n0\r\n\r\n";
	struct capture *cap;

	(void)state;
	cap = capture_new();
	cap->stop_on_status = true;
	cap->stop_value = 42;
	assert_int_equal(parse_pieces(text, sizeof(text) - 1, 1, true, cap), 42);
	assert_string_equal(cap->log, "status 200\n");

	cap = capture_new();
	cap->stop_header_at = 2;
	cap->stop_value = -7;
	assert_int_equal(parse_pieces(text, sizeof(text) - 1, 1, true, cap), -7);
	assert_string_equal(cap->log, "status 200\na: 1\nb: 2\n");
	assert_int_equal(cap->body_calls, 0);

	cap = capture_new();
	cap->stop_body_at = 1;
	cap->stop_value = 5;
	assert_int_equal(parse_pieces(text, sizeof(text) - 1, sizeof(text) - 1, true, cap), 5);
	assert_body(cap, "x");
}

/* ---- Request head written directly --------------------------------------------------------- */

static int head(const char *host, uint16_t port, bool tls, const char *path, const char *bearer,
		char *buf, size_t cap)
{
	struct http_url url = {.tls = tls, .port = port, .path = path};
	struct http_request req = {
		.url = &url,
		.bearer = bearer,
		.content_type = "application/json",
		.accept = "text/event-stream",
		.body = "{}",
		.body_len = 2,
	};
	size_t len = 0;
	int ret;

	snprintf(url.host, sizeof(url.host), "%s", host);
	ret = http_head_write(&req, buf, cap, &len);
	if (ret == 0) {
		assert_true(len <= cap);
		if (len < cap) {
			buf[len] = '\0';
		}
		return (int)len;
	}
	return ret;
}

static void assert_host_line(const char *host, uint16_t port, bool tls, const char *expected)
{
	char buf[HTTP_REQUEST_HEAD_MAX];
	char line[300];

	assert_true(head(host, port, tls, "/v1/responses", NULL, buf, sizeof(buf)) > 0);
	snprintf(line, sizeof(line), "\r\nHost: %s\r\n", expected);
	assert_non_null(strstr(buf, line));
}

static void test_head_host(void **state)
{
	(void)state;
	assert_host_line("api.example.com", 80, false, "api.example.com");
	assert_host_line("api.example.com", 443, true, "api.example.com");
	assert_host_line("api.example.com", 443, false, "api.example.com:443");
	assert_host_line("api.example.com", 80, true, "api.example.com:80");
	assert_host_line("localhost", 8080, false, "localhost:8080");
	assert_host_line("::1", 8080, false, "[::1]:8080");
	assert_host_line("2001:db8::1", 443, true, "[2001:db8::1]");
	assert_host_line("2001:db8::1", 80, false, "[2001:db8::1]");
	assert_host_line("10.0.0.1", 65535, false, "10.0.0.1:65535");
}

static void test_head_bytes(void **state)
{
	char buf[HTTP_REQUEST_HEAD_MAX];
	struct http_url url = {.tls = true, .port = 443, .host = "api.openai.com",
			       .path = "/v1/responses?x=1"};
	struct http_request req = {.url = &url};
	size_t len;
	int ret;

	(void)state;
	ret = head("api.openai.com", 443, true, "/v1/responses", "sk-123", buf, sizeof(buf));
	assert_int_equal(ret, strlen(buf));
	assert_string_equal(buf, "POST /v1/responses HTTP/1.1\r\n"
				 "Host: api.openai.com\r\n" USER_AGENT
				 "Authorization: Bearer sk-123\r\n"
				 "Content-Type: application/json\r\n"
				 "Accept: text/event-stream\r\n"
				 "Content-Length: 2\r\n"
				 "Connection: close\r\n\r\n");

	/* No key, no content type, no accept, no body: those headers are absent. */
	assert_int_equal(http_head_write(&req, buf, sizeof(buf), &len), 0);
	buf[len] = '\0';
	assert_string_equal(buf, "POST /v1/responses?x=1 HTTP/1.1\r\n"
				 "Host: api.openai.com\r\n" USER_AGENT "Content-Length: 0\r\n"
				 "Connection: close\r\n\r\n");
}

static void test_head_bounds(void **state)
{
	char buf[HTTP_REQUEST_HEAD_MAX];
	int len;

	(void)state;
	len = head("h", 80, false, "/p", "key", buf, sizeof(buf));
	assert_true(len > 0);
	/* Exactly the length fits; one byte less is -EMSGSIZE. */
	assert_int_equal(head("h", 80, false, "/p", "key", buf, (size_t)len + 1), len);
	assert_int_equal(head("h", 80, false, "/p", "key", buf, (size_t)len), len);
	assert_int_equal(head("h", 80, false, "/p", "key", buf, (size_t)len - 1), -EMSGSIZE);
}

static void test_head_refuses_injection(void **state)
{
	char buf[HTTP_REQUEST_HEAD_MAX];

	(void)state;
	assert_int_equal(head("h", 80, false, "/p", "k\r\nX-Evil: 1", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(head("h", 80, false, "/p", "k\n", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(head("h", 80, false, "/p", "k k", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(head("h", 80, false, "/p", "k\x7f", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(head("h", 80, false, "/p q", NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(head("h", 80, false, "/p\r\n", NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(head("h", 80, false, "p", NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(head("h\r\n", 80, false, "/p", NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(head("", 80, false, "/p", NULL, buf, sizeof(buf)), -EINVAL);

	struct http_url url = {.port = 80, .host = "h", .path = "/p"};
	struct http_request req = {.url = &url, .content_type = "text/plain\r\nX: y"};
	size_t len;

	assert_int_equal(http_head_write(&req, buf, sizeof(buf), &len), -EINVAL);
	req.content_type = NULL;
	req.accept = "a\nb";
	assert_int_equal(http_head_write(&req, buf, sizeof(buf), &len), -EINVAL);
	/* A space is fine inside those two values. */
	req.accept = "text/event-stream; q=1";
	assert_int_equal(http_head_write(&req, buf, sizeof(buf), &len), 0);
}

/* ---- URL parsing --------------------------------------------------------------------------- */

static void test_url_parse(void **state)
{
	struct http_url url;
	static const char u1[] = "http://example.com/v1/chat/completions";
	static const char u2[] = "HTTPS://Api.Example.COM:8443/v1/responses?api-version=1&x=y";
	static const char u3[] = "http://[::1]:8080/v1/responses";
	static const char u4[] = "https://[2001:db8::a]/p";
	static const char u5[] = "hTTpS://h:443/p";
	static const char u6[] = "http://h:65535/p";
	static const char u7[] = "http://127.0.0.1:1/p";

	(void)state;
	assert_int_equal(http_url_parse(u1, &url), 0);
	assert_false(url.tls);
	assert_string_equal(url.host, "example.com");
	assert_int_equal(url.port, 80);
	assert_ptr_equal(url.path, u1 + strlen("http://example.com"));

	assert_int_equal(http_url_parse(u2, &url), 0);
	assert_true(url.tls);
	assert_string_equal(url.host, "Api.Example.COM");
	assert_int_equal(url.port, 8443);
	assert_ptr_equal(url.path, u2 + strlen("HTTPS://Api.Example.COM:8443"));
	assert_string_equal(url.path, "/v1/responses?api-version=1&x=y");

	assert_int_equal(http_url_parse(u3, &url), 0);
	assert_false(url.tls);
	assert_string_equal(url.host, "::1");
	assert_int_equal(url.port, 8080);
	assert_string_equal(url.path, "/v1/responses");

	assert_int_equal(http_url_parse(u4, &url), 0);
	assert_true(url.tls);
	assert_string_equal(url.host, "2001:db8::a");
	assert_int_equal(url.port, 443);

	assert_int_equal(http_url_parse(u5, &url), 0);
	assert_true(url.tls);
	assert_int_equal(url.port, 443);
	assert_int_equal(http_url_parse(u6, &url), 0);
	assert_int_equal(url.port, 65535);
	assert_int_equal(http_url_parse(u7, &url), 0);
	assert_int_equal(url.port, 1);
	assert_string_equal(url.host, "127.0.0.1");

	static const char *const bad[] = {
		"ftp://h/p",	 "http://h",	      "http://h/",	"http:///p",
		"http://h:0/p",	 "http://h:65536/p", "http://h:/p",	"http://[::1/p",
		"http://u@h/p", "http://h/p#frag",  "http://h/p q", "h/p",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(http_url_parse(bad[i], &url), -EINVAL);
	}
	assert_int_equal(http_url_parse(NULL, &url), -EINVAL);
	assert_int_equal(http_url_parse(u1, NULL), -EINVAL);
}

/* ---- Loopback server ----------------------------------------------------------------------- */

enum write_mode {
	WRITE_WHOLE,	/* the response in one write */
	WRITE_BYTES,	/* one byte per write, 1 ms apart */
	WRITE_SPLIT,	/* two writes, split at .at */
	WRITE_CLOSE_AT, /* the first .at bytes, then close */
	WRITE_STALL,	/* the first .at bytes, then nothing until the client closes */
	WRITE_DRIP,	/* one byte every .gap_ms */
	READ_SLOWLY,	/* no response: read the request slowly until the client closes */
};

struct script {
	const char *response;
	size_t len;
	enum write_mode mode;
	size_t at;
	uint32_t gap_ms;
};

struct server {
	int listen_fd;
	uint16_t port;
	pthread_t thread;
	struct script script;
	/* What the server thread saw; read after server_join(). */
	bool accepted;
	char request[4096];
	size_t request_len;
	bool request_complete;
	bool client_closed;
	int64_t client_closed_ms;
};

static struct server srv;

static void sleep_ms(uint32_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, timeout_ms) == 1;
}

/* The request head up to its blank line, then Content-Length bytes of body. */
static void server_read_request(struct server *s, int fd)
{
	size_t need = SIZE_MAX;

	while (s->request_len < need && s->request_len < sizeof(s->request) - 1) {
		if (!readable(fd, 5000)) {
			return;
		}

		ssize_t n = recv(fd, s->request + s->request_len,
				 sizeof(s->request) - 1 - s->request_len, 0);

		if (n <= 0) {
			return;
		}
		s->request_len += (size_t)n;
		s->request[s->request_len] = '\0';

		const char *end = strstr(s->request, "\r\n\r\n");

		if (need == SIZE_MAX && end != NULL) {
			const char *cl = strstr(s->request, "\r\nContent-Length: ");
			size_t body = (cl != NULL && cl < end) ? strtoul(cl + 18, NULL, 10) : 0;

			need = (size_t)(end + 4 - s->request) + body;
		}
	}
	s->request_complete = s->request_len == need;
}

/*
 * A reader slower than the sender (at most 64 KiB every 16 ms, about 4 MiB/s) but quick
 * enough that the sender's socket never stalls for a whole timeout.
 */
static void server_read_slowly(struct server *s, int fd)
{
	static char buf[64 * 1024];

	while (readable(fd, 5000)) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n == 0 || (n < 0 && errno == ECONNRESET)) {
			s->client_closed = true;
			s->client_closed_ms = agent_uptime_ms();
			return;
		}
		if (n < 0) {
			return;
		}
		s->request_len += (size_t)n;
		sleep_ms(16);
	}
}

/* False when the client is gone (its own result says why). */
static bool server_put(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

		if (n <= 0) {
			return false;
		}
		data += n;
		len -= (size_t)n;
	}
	return true;
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	const struct script *sc = &s->script;
	int one = 1;

	if (!readable(s->listen_fd, 5000)) {
		return NULL;
	}

	int fd = accept(s->listen_fd, NULL, NULL);

	if (fd < 0) {
		return NULL;
	}
	s->accepted = true;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (sc->mode == READ_SLOWLY) {
		server_read_slowly(s, fd);
		close(fd);
		return NULL;
	}
	server_read_request(s, fd);
	switch (sc->mode) {
	case WRITE_WHOLE:
		server_put(fd, sc->response, sc->len);
		break;
	case WRITE_BYTES:
	case WRITE_DRIP:
		for (size_t i = 0; i < sc->len && server_put(fd, sc->response + i, 1); i++) {
			sleep_ms(sc->mode == WRITE_BYTES ? 1 : sc->gap_ms);
		}
		break;
	case WRITE_SPLIT:
		if (server_put(fd, sc->response, sc->at)) {
			sleep_ms(2);
			server_put(fd, sc->response + sc->at, sc->len - sc->at);
		}
		break;
	case WRITE_CLOSE_AT:
	case WRITE_STALL:
	default:
		server_put(fd, sc->response, sc->at);
		break;
	}
	if (sc->mode != WRITE_STALL) {
		shutdown(fd, SHUT_WR);
	}

	/* Whatever happened, the client must close its end: EOF, or a reset if data was left. */
	char buf[256];

	while (readable(fd, 5000)) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n == 0 || (n < 0 && errno == ECONNRESET)) {
			s->client_closed = true;
			s->client_closed_ms = agent_uptime_ms();
			break;
		}
		if (n < 0) {
			break;
		}
	}
	close(fd);
	return NULL;
}

static void server_start(const struct script *script)
{
	srv.script = *script;
	srv.accepted = false;
	srv.request_len = 0;
	srv.request[0] = '\0';
	srv.request_complete = false;
	srv.client_closed = false;
	assert_int_equal(pthread_create(&srv.thread, NULL, server_main, &srv), 0);
}

/* Join the server thread; the client connected, sent a whole request and closed. */
static void server_join(void)
{
	assert_int_equal(pthread_join(srv.thread, NULL), 0);
	assert_true(srv.accepted);
	assert_true(srv.request_complete);
	assert_true(srv.client_closed);
}

/* Nothing tried to connect. */
static void assert_no_connection(void)
{
	assert_false(readable(srv.listen_fd, 0));
}

/* A listening socket on 127.0.0.1 and a free port; @p rcvbuf_bytes > 0 sets SO_RCVBUF. */
static int listen_loopback(int rcvbuf_bytes, uint16_t *port)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t addr_len = sizeof(addr);
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    (rcvbuf_bytes > 0 &&
	     setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf_bytes, sizeof(rcvbuf_bytes)) != 0) ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 4) != 0 ||
	    getsockname(fd, (struct sockaddr *)&addr, &addr_len) != 0) {
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	*port = ntohs(addr.sin_port);
	return fd;
}

static int group_setup(void **state)
{
	(void)state;
	srv.listen_fd = listen_loopback(0, &srv.port);
	return srv.listen_fd < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	close(srv.listen_fd);
	return 0;
}

/* ---- http_post() over loopback ------------------------------------------------------------- */

static const char request_body[] = "{\"model\":\"m\",\"stream\":true}";

struct call {
	struct http_url url;
	struct http_request req;
};

static void call_init(struct call *c, const char *bearer)
{
	memset(c, 0, sizeof(*c));
	c->url.tls = false;
	c->url.port = srv.port;
	strcpy(c->url.host, "127.0.0.1");
	c->url.path = "/v1/chat/completions?x=1";
	c->req.url = &c->url;
	c->req.bearer = bearer;
	c->req.content_type = "application/json";
	c->req.accept = "text/event-stream";
	c->req.body = request_body;
	c->req.body_len = sizeof(request_body) - 1;
	c->req.io_timeout_ms = 5000;
	c->req.deadline_ms = 10000;
}

/* Serve @p script to one request of @p c; the result of http_post(). */
static int exchange(struct call *c, const struct script *script, struct capture *cap)
{
	int ret;

	server_start(script);
	ret = http_post(&c->req, &callbacks, cap);
	server_join();
	return ret;
}

static int exchange_text(const char *response, enum write_mode mode, size_t at,
			 struct capture *cap)
{
	struct call c;
	struct script script = {.response = response, .len = strlen(response), .mode = mode,
				.at = at};

	call_init(&c, "sk-test");
	return exchange(&c, &script, cap);
}

static const char ok_response[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

static void test_post_request_bytes(void **state)
{
	char expected[1024];
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(exchange_text(ok_response, WRITE_WHOLE, 0, cap), 0);
	snprintf(expected, sizeof(expected),
		 "POST /v1/chat/completions?x=1 HTTP/1.1\r\n"
		 "Host: 127.0.0.1:%u\r\n" USER_AGENT "Authorization: Bearer sk-test\r\n"
		 "Content-Type: application/json\r\n"
		 "Accept: text/event-stream\r\n"
		 "Content-Length: %zu\r\n"
		 "Connection: close\r\n\r\n%s",
		 srv.port, sizeof(request_body) - 1, request_body);
	assert_string_equal(srv.request, expected);
	assert_string_equal(cap->log, "status 200\ncontent-length: 5\n");
	assert_body(cap, "hello");
}

static void test_post_no_key(void **state)
{
	struct call c;
	struct script script = {.response = ok_response, .len = strlen(ok_response)};
	struct capture *cap = capture_new();

	(void)state;
	call_init(&c, NULL);
	c.req.body = NULL;
	c.req.body_len = 0;
	assert_int_equal(exchange(&c, &script, cap), 0);
	assert_null(strstr(srv.request, "Authorization"));
	assert_null(strstr(srv.request, "Bearer"));
	assert_non_null(strstr(srv.request, "\r\nContent-Length: 0\r\n"));
	assert_body(cap, "hello");
}

static void test_post_head_bound(void **state)
{
	static char path[HTTP_REQUEST_HEAD_MAX + 1];
	char probe[HTTP_REQUEST_HEAD_MAX];
	struct call c;
	struct script script = {.response = ok_response, .len = strlen(ok_response)};
	size_t base;

	(void)state;
	call_init(&c, "sk-test");
	c.url.path = "/";
	assert_int_equal(http_head_write(&c.req, probe, sizeof(probe), &base), 0);

	/* A path that makes the head exactly HTTP_REQUEST_HEAD_MAX bytes: sent. */
	size_t path_len = 1 + HTTP_REQUEST_HEAD_MAX - base;

	path[0] = '/';
	memset(path + 1, 'p', path_len - 1);
	path[path_len] = '\0';
	c.url.path = path;
	assert_int_equal(exchange(&c, &script, capture_new()), 0);
	assert_non_null(strstr(srv.request, "\r\n\r\n"));
	assert_int_equal(strstr(srv.request, "\r\n\r\n") + 4 - srv.request, HTTP_REQUEST_HEAD_MAX);

	/* One byte more: refused before connecting. */
	path[path_len] = 'p';
	path[path_len + 1] = '\0';
	assert_int_equal(http_post(&c.req, &callbacks, capture_new()), -EMSGSIZE);
	assert_no_connection();

	/* A key that would add a header line: refused before connecting. */
	call_init(&c, "sk\r\nX-Evil: 1");
	assert_int_equal(http_post(&c.req, &callbacks, capture_new()), -EINVAL);
	assert_no_connection();
}

static void test_post_bad_arguments(void **state)
{
	struct call c;

	(void)state;
	call_init(&c, NULL);
	assert_int_equal(http_post(NULL, &callbacks, NULL), -EINVAL);
	assert_int_equal(http_post(&c.req, NULL, NULL), -EINVAL);
	c.req.io_timeout_ms = 0;
	assert_int_equal(http_post(&c.req, &callbacks, NULL), -EINVAL);
	call_init(&c, NULL);
	c.req.deadline_ms = 0;
	assert_int_equal(http_post(&c.req, &callbacks, NULL), -EINVAL);
	call_init(&c, NULL);
	c.req.body = NULL;
	assert_int_equal(http_post(&c.req, &callbacks, NULL), -EINVAL);
	call_init(&c, NULL);
	c.req.url = NULL;
	assert_int_equal(http_post(&c.req, &callbacks, NULL), -EINVAL);
	assert_no_connection();
}

static void test_post_connection_refused(void **state)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t addr_len = sizeof(addr);
	struct call c;
	/* Bound but not listening: the port is ours, and a connect to it is refused. */
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)state;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &addr_len), 0);
	call_init(&c, NULL);
	c.url.port = ntohs(addr.sin_port);
	assert_int_equal(http_post(&c.req, &callbacks, capture_new()), -ECONNREFUSED);
	close(fd);
}

static void test_post_headers_and_status(void **state)
{
	static const char response[] = "HTTP/1.1 429 Too Many Requests\r\n"
				       "Retry-After: 20\r\n"
				       "X-RateLimit-Remaining:  0 \r\n"
				       "Content-Type: application/json\r\n"
				       "Content-Length: 17\r\n\r\n"
				       "{\"error\":\"slow\"}\n";
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(exchange_text(response, WRITE_WHOLE, 0, cap), 0);
	assert_string_equal(cap->log, "status 429\n"
				      "retry-after: 20\n"
				      "x-ratelimit-remaining: 0\n"
				      "content-type: application/json\n"
				      "content-length: 17\n");
	assert_body(cap, "{\"error\":\"slow\"}\n");
	assert_int_equal(cap->status_calls, 1);
}

static void test_post_header_bounds(void **state)
{
	struct call c;
	struct script script = {.response = big, .mode = WRITE_WHOLE};

	(void)state;
	call_init(&c, NULL);
	script.len = long_header_response(HTTP_HEADER_LINE_MAX);
	assert_int_equal(exchange(&c, &script, capture_new()), 0);
	script.len = long_header_response(HTTP_HEADER_LINE_MAX + 1);
	assert_int_equal(exchange(&c, &script, capture_new()), -EMSGSIZE);

	script.len = headers_response(big, 200, HTTP_HEADERS_MAX);
	assert_int_equal(exchange(&c, &script, capture_new()), 0);
	script.len = headers_response(big, 200, HTTP_HEADERS_MAX + 1);
	assert_int_equal(exchange(&c, &script, capture_new()), -EMSGSIZE);
}

static void test_post_chunked(void **state)
{
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(exchange_text(rich_response, WRITE_WHOLE, 0, cap), 0);
	assert_string_equal(cap->log, rich_log);
	assert_body(cap, rich_body);
}

static void test_post_chunk_overflow(void **state)
{
	(void)state;
	assert_int_equal(exchange_text(CHUNKED_HEAD "10000000000000000\r\nx\r\n0\r\n\r\n",
				       WRITE_WHOLE, 0, capture_new()),
			 -EPROTO);
}

static void test_post_close_delimited(void **state)
{
	static const char response[] = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n"
				       "data: one\n\ndata: two\n\n";
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(exchange_text(response, WRITE_WHOLE, 0, cap), 0);
	assert_body(cap, "data: one\n\ndata: two\n\n");
}

static void test_post_early_close(void **state)
{
	static const char cl[] = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
	size_t headers_end = strstr(rich_response, "5;name") - rich_response;
	size_t inside_chunk = strstr(rich_response, "0123") + 2 - rich_response;

	(void)state;
	assert_int_equal(exchange_text(rich_response, WRITE_CLOSE_AT, 0, capture_new()),
			 -ECONNRESET);
	assert_int_equal(exchange_text(rich_response, WRITE_CLOSE_AT, 60, capture_new()),
			 -ECONNRESET);
	assert_int_equal(exchange_text(rich_response, WRITE_CLOSE_AT, headers_end - 3,
				       capture_new()),
			 -ECONNRESET);
	assert_int_equal(exchange_text(rich_response, WRITE_CLOSE_AT, inside_chunk,
				       capture_new()),
			 -ECONNRESET);
	assert_int_equal(exchange_text(cl, WRITE_CLOSE_AT, strlen(cl) - 1, capture_new()),
			 -ECONNRESET);
	/* The whole Content-Length body and then the close: complete. */
	assert_int_equal(exchange_text(cl, WRITE_CLOSE_AT, strlen(cl), capture_new()), 0);
}

static void test_post_malformed_status(void **state)
{
	(void)state;
	assert_int_equal(exchange_text("HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n", WRITE_WHOLE,
				       0, capture_new()),
			 -EPROTO);
	/* Not HTTP: refused at once, not after the per-I/O timeout. */
	assert_int_equal(exchange_text("SSH-2.0-OpenSSH_9.2\r\n", WRITE_STALL, 21, capture_new()),
			 -EPROTO);
}

static void test_post_interim_skipped(void **state)
{
	static const char response[] = "HTTP/1.1 100 Continue\r\n\r\n"
				       "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(exchange_text(response, WRITE_BYTES, 0, cap), 0);
	assert_string_equal(cap->log, "status 200\ncontent-length: 2\n");
	assert_body(cap, "ok");
}

static void test_post_stop_value(void **state)
{
	struct capture *cap = capture_new();

	(void)state;
	cap->stop_on_status = true;
	cap->stop_value = 401;
	assert_int_equal(exchange_text(rich_response, WRITE_WHOLE, 0, cap), 401);
	assert_string_equal(cap->log, "status 200\n");

	/* Stopping in the body while the server still has more to send. */
	cap = capture_new();
	cap->stop_body_at = 1;
	cap->stop_value = -ENOSPC;
	assert_int_equal(exchange_text(rich_response, WRITE_STALL, sizeof(rich_response) - 20,
				       cap),
			 -ENOSPC);
	assert_int_equal(cap->body_calls, 1);
}

/* 1-byte writes, and a split at every offset of one response: the same result. */
static void test_post_write_patterns(void **state)
{
	size_t len = sizeof(rich_response) - 1;
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(exchange_text(rich_response, WRITE_BYTES, 0, cap), 0);
	assert_string_equal(cap->log, rich_log);
	assert_body(cap, rich_body);
	/* The client did see small reads: the body came in more than its chunks' pieces. */
	assert_true(cap->body_calls > 3);

	for (size_t at = 0; at <= len; at++) {
		cap = capture_new();
		assert_int_equal(exchange_text(rich_response, WRITE_SPLIT, at, cap), 0);
		assert_string_equal(cap->log, rich_log);
		assert_body(cap, rich_body);
	}
}

/* A response complete by its framing ends the request although the server keeps it open. */
static void test_post_complete_without_close(void **state)
{
	static const char response[] = CHUNKED_HEAD "2\r\nok\r\n0\r\n\r\n";
	struct call c;
	struct script script = {.response = response, .len = strlen(response),
				.mode = WRITE_STALL, .at = strlen(response)};
	struct capture *cap = capture_new();
	int64_t start;

	(void)state;
	call_init(&c, NULL);
	c.req.io_timeout_ms = 3000;
	start = agent_uptime_ms();
	assert_int_equal(exchange(&c, &script, cap), 0);
	assert_true(srv.client_closed_ms - start < 1000);
	assert_body(cap, "ok");
}

static void test_post_io_timeout(void **state)
{
	struct call c;
	struct script script = {.response = ok_response, .len = strlen(ok_response),
				.mode = WRITE_STALL, .at = 20};
	int64_t start;
	int64_t took;

	(void)state;
	call_init(&c, NULL);
	c.req.io_timeout_ms = 200;
	start = agent_uptime_ms();
	assert_int_equal(exchange(&c, &script, capture_new()), -ETIMEDOUT);
	took = srv.client_closed_ms - start;
	assert_true(took >= 200);
	assert_true(took < 1000);

	/* No response at all. */
	script.at = 0;
	start = agent_uptime_ms();
	assert_int_equal(exchange(&c, &script, capture_new()), -ETIMEDOUT);
	took = srv.client_closed_ms - start;
	assert_true(took >= 200);
	assert_true(took < 1000);

	/* Progress restarts the per-I/O timeout: bytes 50 ms apart outlast a 300 ms one. */
	static const char slow[] = "HTTP/1.1 200 OK\r\n\r\n0123456789";
	struct capture *cap = capture_new();

	script = (struct script){.response = slow, .len = strlen(slow), .mode = WRITE_DRIP,
				 .gap_ms = 50};
	c.req.io_timeout_ms = 300;
	start = agent_uptime_ms();
	assert_int_equal(exchange(&c, &script, cap), 0);
	assert_true(agent_uptime_ms() - start > 1000);
	assert_body(cap, "0123456789");
}

static void test_post_deadline(void **state)
{
	/* A server that keeps sending, too slowly: only the deadline ends it. */
	static const char response[] = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
				       "................................................";
	struct call c;
	struct script script = {.response = response, .len = strlen(response),
				.mode = WRITE_DRIP, .gap_ms = 20};
	int64_t start;
	int64_t took;

	(void)state;
	call_init(&c, NULL);
	c.req.io_timeout_ms = 1000;
	c.req.deadline_ms = 500;
	start = agent_uptime_ms();
	assert_int_equal(exchange(&c, &script, capture_new()), -ETIME);
	took = agent_uptime_ms() - start;
	assert_true(took >= 500);
	/* The server would drip for about 1.8 s; the client left well before. */
	assert_true(srv.client_closed_ms - start < 800);

	/* A stall with a deadline shorter than the per-I/O timeout: the deadline's error. */
	script = (struct script){.response = response, .len = strlen(response),
				 .mode = WRITE_STALL, .at = 10};
	c.req.io_timeout_ms = 5000;
	c.req.deadline_ms = 300;
	start = agent_uptime_ms();
	assert_int_equal(exchange(&c, &script, capture_new()), -ETIME);
	took = srv.client_closed_ms - start;
	assert_true(took >= 300);
	assert_true(took < 1000);
}

/*
 * A body sent to a slow reader: the deadline holds although every send makes progress (the
 * port restarts its timeout whenever bytes move). The 32 MiB body is far more than the
 * kernel buffers between the two ends (a send buffer of at most 4 MiB by default, the
 * reader's 256 KiB receive buffer) and than the reader takes in the deadline, so sending all
 * of it would take several seconds.
 */
static void test_post_deadline_while_sending(void **state)
{
	static char body[32 * 1024 * 1024];
	struct call c;
	struct script script = {.mode = READ_SLOWLY};
	int main_listen_fd = srv.listen_fd;
	int64_t start;
	int ret;

	(void)state;
	memset(body, 'b', sizeof(body));
	call_init(&c, NULL);
	srv.listen_fd = listen_loopback(256 * 1024, &c.url.port);
	assert_true(srv.listen_fd >= 0);
	c.req.body = body;
	c.req.body_len = sizeof(body);
	c.req.io_timeout_ms = 5000;
	c.req.deadline_ms = 1000;
	server_start(&script);
	start = agent_uptime_ms();
	ret = http_post(&c.req, &callbacks, capture_new());
	int64_t took = agent_uptime_ms() - start;

	assert_int_equal(pthread_join(srv.thread, NULL), 0);
	close(srv.listen_fd);
	srv.listen_fd = main_listen_fd;
	assert_int_equal(ret, -ETIME);
	assert_true(took >= 1000);
	assert_true(took < 2500);
	assert_true(srv.accepted);
	assert_true(srv.client_closed);
	/* The reader got far less than the body: the deadline, not the end of the body. */
	assert_true(srv.request_len < sizeof(body) / 2);
}

struct canceller {
	struct agent_cancel *cancel;
	uint32_t after_ms;
	int64_t raised_ms;
};

static void *canceller_main(void *arg)
{
	struct canceller *k = arg;

	sleep_ms(k->after_ms);
	k->raised_ms = agent_uptime_ms();
	agent_cancel_raise(k->cancel);
	return NULL;
}

static void test_post_cancel(void **state)
{
	struct agent_cancel cancel;
	struct canceller k = {.cancel = &cancel, .after_ms = 150};
	struct call c;
	struct script script = {.response = rich_response, .len = sizeof(rich_response) - 1,
				.mode = WRITE_STALL, .at = 100};
	pthread_t thread;
	int ret;

	(void)state;
	agent_cancel_reset(&cancel);
	call_init(&c, NULL);
	c.req.cancel = &cancel;
	server_start(&script);
	assert_int_equal(pthread_create(&thread, NULL, canceller_main, &k), 0);
	ret = http_post(&c.req, &callbacks, capture_new());
	int64_t returned_ms = agent_uptime_ms();

	assert_int_equal(pthread_join(thread, NULL), 0);
	server_join();
	assert_int_equal(ret, -ECANCELED);
	assert_true(returned_ms - k.raised_ms <= 200);

	/* Raised before the call: nothing is sent, no connection made. */
	assert_int_equal(http_post(&c.req, &callbacks, capture_new()), -ECANCELED);
	assert_no_connection();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rich_every_split),
		cmocka_unit_test(test_parse_every_cut),
		cmocka_unit_test(test_parse_done_by_framing),
		cmocka_unit_test(test_parse_accepted_forms),
		cmocka_unit_test(test_parse_callbacks),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_chunk_framing),
		cmocka_unit_test(test_parse_header_line_bounds),
		cmocka_unit_test(test_parse_header_kept_bytes),
		cmocka_unit_test(test_parse_chunk_line_bounds),
		cmocka_unit_test(test_parse_header_count_bounds),
		cmocka_unit_test(test_parse_stop_values),
		cmocka_unit_test(test_head_host),
		cmocka_unit_test(test_head_bytes),
		cmocka_unit_test(test_head_bounds),
		cmocka_unit_test(test_head_refuses_injection),
		cmocka_unit_test(test_url_parse),
		cmocka_unit_test(test_post_request_bytes),
		cmocka_unit_test(test_post_no_key),
		cmocka_unit_test(test_post_head_bound),
		cmocka_unit_test(test_post_bad_arguments),
		cmocka_unit_test(test_post_connection_refused),
		cmocka_unit_test(test_post_headers_and_status),
		cmocka_unit_test(test_post_header_bounds),
		cmocka_unit_test(test_post_chunked),
		cmocka_unit_test(test_post_chunk_overflow),
		cmocka_unit_test(test_post_close_delimited),
		cmocka_unit_test(test_post_early_close),
		cmocka_unit_test(test_post_malformed_status),
		cmocka_unit_test(test_post_interim_skipped),
		cmocka_unit_test(test_post_stop_value),
		cmocka_unit_test(test_post_write_patterns),
		cmocka_unit_test(test_post_complete_without_close),
		cmocka_unit_test(test_post_io_timeout),
		cmocka_unit_test(test_post_deadline),
		cmocka_unit_test(test_post_deadline_while_sending),
		cmocka_unit_test(test_post_cancel),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
