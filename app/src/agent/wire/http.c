/*
 * HTTP/1.1 client: one POST per connection over the port's network stream (see http.h).
 * The request head is written (http_wire.c) into a stack buffer of HTTP_REQUEST_HEAD_MAX bytes
 * before any connection is made, and wiped once sent (it carries the key); the response goes
 * through the parser in recv-sized pieces.
 */
#include "http.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent_config.h"
#include "agent_port.h"
#include "agent_version.h"
#include "http_wire.h"

/* Received bytes are parsed in pieces of this size; nothing keeps them afterwards. */
#define HTTP_RECV_CHUNK 512

/* The body is sent in pieces of at most this size (see send_all()). */
#define HTTP_SEND_PIECE 2048

/* Everything of the head but the path, host, key, content type and accept values. */
#define HTTP_HEAD_FIXED_BYTES                                                                  \
	(sizeof("POST  HTTP/1.1\r\n") + sizeof("Host: []:65535\r\n") +                         \
	 sizeof("User-Agent: zephyr-agent/" AGENT_VERSION_STRING "\r\n") +                     \
	 sizeof("Authorization: Bearer \r\n") + sizeof("Content-Type: \r\n") +                 \
	 sizeof("Accept: \r\n") + sizeof("Content-Length: 18446744073709551615\r\n") +         \
	 sizeof("Connection: close\r\n") + sizeof("\r\n"))

/*
 * The longest endpoint (host and path are parts of it) and the longest key must fit with
 * room left for the content type and accept values the adapters send.
 */
_Static_assert(HTTP_HEAD_FIXED_BYTES + CONFIG_AGENT_ENDPOINT_MAX_LEN + CONFIG_AGENT_KEY_MAX_LEN +
			       128 <=
		       HTTP_REQUEST_HEAD_MAX,
	       "HTTP_REQUEST_HEAD_MAX too small for the configured endpoint and key");

/* What one call of http_post() tracks across its steps. */
struct http_call {
	struct agent_net *net;
	const struct agent_cancel *cancel;
	int64_t deadline_at_ms;
	uint32_t io_timeout_ms;
	bool deadline_bound; /* the current step's timeout was cut to the deadline */
};

/* The port polls this when the caller passes no flag; nothing ever raises it. */
static const struct agent_cancel never_cancelled;

int http_url_parse(const char *url, struct http_url *out)
{
	const char *why;

	if (url == NULL || out == NULL || agent_config_check_endpoint(url, &why) != 0) {
		return -EINVAL;
	}

	/* The check above accepted "http://" or "https://" in any case. */
	bool tls = url[4] == 's' || url[4] == 'S';
	const char *authority = url + (tls ? 8 : 7);
	size_t authority_len = strcspn(authority, "/?#");
	const char *host = authority;
	size_t host_len;
	const char *after_host;

	if (authority[0] == '[') {
		host = authority + 1;
		host_len = (size_t)((const char *)memchr(host, ']', authority_len - 1) - host);
		after_host = host + host_len + 1;
	} else {
		const char *colon = memchr(authority, ':', authority_len);

		host_len = colon != NULL ? (size_t)(colon - authority) : authority_len;
		after_host = authority + host_len;
	}
	if (host_len > HTTP_HOST_MAX) {
		return -EINVAL;
	}

	uint32_t port = tls ? 443 : 80;

	if (after_host < authority + authority_len) {
		/* After ':' the check allowed only 1 to 5 digits with a value up to 65535. */
		port = 0;
		for (const char *p = after_host + 1; p < authority + authority_len; p++) {
			port = port * 10 + (uint32_t)(*p - '0');
		}
	}
	out->tls = tls;
	memcpy(out->host, host, host_len);
	out->host[host_len] = '\0';
	out->port = (uint16_t)port;
	out->path = authority + authority_len;
	return 0;
}

/* ---- Steps under the per-I/O timeout, the deadline and the cancel flag ------------------- */

/* Before each step: its timeout, the per-I/O one cut to what is left of the deadline. */
static int step_begin(struct http_call *call, uint32_t *timeout_ms)
{
	if (agent_cancel_is_raised(call->cancel)) {
		return -ECANCELED;
	}

	int64_t left_ms = call->deadline_at_ms - agent_uptime_ms();

	if (left_ms <= 0) {
		return -ETIME;
	}
	call->deadline_bound = left_ms < (int64_t)call->io_timeout_ms;
	*timeout_ms = call->deadline_bound ? (uint32_t)left_ms : call->io_timeout_ms;
	return 0;
}

/* After each step: a timeout that the deadline caused is the deadline's error. */
static int step_end(struct http_call *call, int ret)
{
	if (ret >= 0) {
		return ret;
	}
	if (agent_cancel_is_raised(call->cancel)) {
		return -ECANCELED;
	}
	if (ret == -ETIMEDOUT &&
	    (call->deadline_bound || agent_uptime_ms() >= call->deadline_at_ms)) {
		return -ETIME;
	}
	return ret;
}

/*
 * The port's send restarts its timeout whenever bytes move, so one call with a large body
 * to a slow reader could outlast the deadline: send in pieces and look at the clock and
 * the cancel flag between them.
 */
static int send_all(struct http_call *call, const char *data, size_t len)
{
	while (len > 0) {
		size_t piece = len < HTTP_SEND_PIECE ? len : HTTP_SEND_PIECE;
		uint32_t timeout_ms;
		int ret = step_begin(call, &timeout_ms);

		if (ret != 0) {
			return ret;
		}
		ret = agent_net_send(call->net, data, piece, timeout_ms, call->cancel);
		ret = step_end(call, ret);
		if (ret != 0) {
			return ret;
		}
		data += piece;
		len -= piece;
	}
	return 0;
}

/* The head carries the key (Authorization): it is wiped whatever happens. */
static int head_send(struct http_call *call, const struct http_request *req, char *head)
{
	size_t head_len;
	uint32_t timeout_ms;
	int ret;

	ret = http_head_write(req, head, HTTP_REQUEST_HEAD_MAX, &head_len);
	if (ret != 0) {
		return ret;
	}
	ret = step_begin(call, &timeout_ms);
	if (ret != 0) {
		return ret;
	}
	ret = step_end(call, agent_net_connect(&call->net, req->url->host, req->url->port,
					       req->url->tls, timeout_ms, call->cancel));
	if (ret != 0) {
		call->net = NULL;
		return ret;
	}
	return send_all(call, head, head_len);
}

static int request_send(struct http_call *call, const struct http_request *req)
{
	char head[HTTP_REQUEST_HEAD_MAX];
	int ret = head_send(call, req, head);

	agent_wipe(head, sizeof(head));
	if (ret != 0) {
		return ret;
	}
	return send_all(call, req->body, req->body_len);
}

static int response_read(struct http_call *call, const struct http_callbacks *cb,
			 void *user_data)
{
	struct http_parser parser;
	char buf[HTTP_RECV_CHUNK];

	http_parser_init(&parser, cb, user_data);
	while (!http_parser_done(&parser)) {
		uint32_t timeout_ms;
		int ret = step_begin(call, &timeout_ms);

		if (ret != 0) {
			return ret;
		}
		ret = agent_net_recv(call->net, buf, sizeof(buf), timeout_ms, call->cancel);
		ret = step_end(call, ret);
		if (ret < 0) {
			return ret;
		}
		if (ret == 0) {
			return http_parser_finish(&parser);
		}
		ret = http_parser_feed(&parser, buf, (size_t)ret);
		if (ret != 0) {
			return ret;
		}
	}
	return 0;
}

int http_post(const struct http_request *req, const struct http_callbacks *cb, void *user_data)
{
	if (req == NULL || req->url == NULL || cb == NULL ||
	    (req->body == NULL && req->body_len != 0) || req->io_timeout_ms == 0 ||
	    req->deadline_ms == 0) {
		return -EINVAL;
	}

	struct http_call call = {
		.cancel = req->cancel != NULL ? req->cancel : &never_cancelled,
		.deadline_at_ms = agent_uptime_ms() + req->deadline_ms,
		.io_timeout_ms = req->io_timeout_ms,
	};
	int ret = request_send(&call, req);

	if (ret == 0) {
		ret = response_read(&call, cb, user_data);
	}
	if (call.net != NULL) {
		agent_net_close(call.net);
	}
	return ret;
}
