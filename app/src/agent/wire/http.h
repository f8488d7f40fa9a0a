/*
 * HTTP/1.1 client for one request per connection over the port's network stream: a POST
 * with a body, the response's status line and headers parsed in bounded memory, and the
 * body handed on as it arrives (chunked, Content-Length or delimited by the close).
 */
#ifndef AGENT_HTTP_H
#define AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

#define HTTP_HOST_MAX	      253
#define HTTP_HEADER_LINE_MAX  1024 /* longer header lines: -EMSGSIZE */
#define HTTP_HEADER_KEPT      128  /* bytes of a line kept; the rest is checked and read past */
#define HTTP_HEADERS_MAX      64   /* more header lines: -EMSGSIZE */
#define HTTP_REQUEST_HEAD_MAX 1024 /* request line and headers; a longer head: -EMSGSIZE */

/* The spec's per-I/O timeout and request deadline (Kconfig), for struct http_request. */
#define HTTP_IO_TIMEOUT_MS_DEFAULT ((uint32_t)CONFIG_AGENT_IO_TIMEOUT_S * 1000U)
#define HTTP_DEADLINE_MS_DEFAULT   ((uint32_t)CONFIG_AGENT_REQUEST_DEADLINE_S * 1000U)

/* An endpoint URL, split; @path points into the URL it was parsed from (query included). */
struct http_url {
	bool tls;
	char host[HTTP_HOST_MAX + 1]; /* without brackets for IPv6 */
	uint16_t port;
	const char *path;
};

/** Split a URL that agent_config_check_endpoint() accepted. -EINVAL otherwise. */
int http_url_parse(const char *url, struct http_url *out);

/* Any callback may be NULL: what it would get is dropped. */
struct http_callbacks {
	/** The status code, once. Non-zero stops the request (http_post returns it). */
	int (*on_status)(void *user_data, int status);
	/** One header; @p name in lower case, @p value without surrounding white space. */
	int (*on_header)(void *user_data, const char *name, const char *value);
	/** Body bytes, de-chunked, as they arrive. */
	int (*on_body)(void *user_data, const char *data, size_t len);
};

struct http_request {
	const struct http_url *url;
	const char *bearer;	  /* API key for "Authorization: Bearer", NULL for none */
	const char *content_type; /* e.g. "application/json"; NULL: no Content-Type header */
	const char *accept;	  /* e.g. "text/event-stream"; NULL: no Accept header */
	const char *body;	  /* sent as is; may be NULL when body_len is 0 */
	size_t body_len;
	uint32_t io_timeout_ms; /* no progress for this long: -ETIMEDOUT; must be > 0 */
	uint32_t deadline_ms;	/* whole request, connect included: -ETIME; must be > 0 */
	const struct agent_cancel *cancel; /* raised from another thread: -ECANCELED; may be NULL */
};

/**
 * Send the request and read the whole response. Returns 0 when the body ended as its
 * framing says (the last chunk, Content-Length bytes, or the close for a body without
 * either), the non-zero value a callback returned, or a negative errno: the port's
 * connection errors, -ETIMEDOUT, -ETIME (deadline), -ECANCELED, -ECONNRESET (the stream
 * ended early: inside the headers, a chunk or before Content-Length bytes), -EPROTO
 * (malformed status line, header or chunk framing), -EMSGSIZE (header bounds, or a
 * request head longer than HTTP_REQUEST_HEAD_MAX, refused before connecting), -EINVAL (a
 * missing argument, a zero timeout, or a control character in the path, host, key, content
 * type or accept value). The connection is always closed before it returns.
 */
int http_post(const struct http_request *req, const struct http_callbacks *cb, void *user_data);

#endif /* AGENT_HTTP_H */
