/*
 * Test-only HTTP stream server inside the firmware image of the Twister scenario
 * agent.e2e.qemu.stream (testcase.yaml; built only with -DAGENT_TEST_STREAM_SERVER=ON, see
 * CMakeLists.txt here). mps2/an385 under QEMU has no network, so this thread plays the model
 * provider inside the image: it gives the default interface (the board's Ethernet, which
 * QEMU leaves unconnected) the address STREAM_ADDR (TEST-NET-1, RFC 5737), listens on
 * STREAM_ADDR:8080 (the IP stack loops packets to its own address back itself), reads one
 * request per connection (the head up to the blank line, then Content-Length bytes of body)
 * and answers with a recorded stream of host/agent_host/testserver/recorded/ chosen by the
 * request path (the table stream_server_routes, generated into the build directory), as
 * `Content-Type: text/event-stream` in chunks of STREAM_CHUNK bytes, then closes.
 *
 * The agent's worker then runs the whole request path on its own stack: HTTP request, the
 * chunked body, the SSE parser, the provider's JSON adapter and the tool-call handling, which
 * tests/e2e/test_firmware_stream_stacks.py measures. Nothing here is part of the product.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zephyr/kernel.h>
#include <zephyr/net/net_if.h>
#include <zephyr/net/socket.h>
#include <zephyr/random/random.h>

#include "stream_server_routes.h"
#include "test_xorshift.h"

#define STREAM_ADDR "192.0.2.1"

#if defined(STREAM_SERVER_TLS)
/*
 * agent.e2e.qemu.stream.tls (AGENT_TEST_STREAM_TLS): the same server over TLS, with the
 * certificate stream_cert.py made for STREAM_ADDR and signed by the build's test CA, which the
 * agent trusts (AGENT_EXTRA_CA). The handshake runs in zsock_accept() on this thread.
 */
#include <zephyr/net/tls_credentials.h>

#include "stream_server_cert.h"

#define STREAM_PORT	  8443
#define STREAM_PROTO	  IPPROTO_TLS_1_2
#define STREAM_KIND	  " (TLS)"
/* Beside the agent's own tags (net.c numbers its roots from 1). */
#define STREAM_SEC_TAG	  0x5e1
/* Mbed TLS's server handshake (ECDSA signing, ECDHE) runs on this stack: 2720 B measured. */
#define STREAM_STACK_SIZE 4608
#else
#define STREAM_PORT	  8080
#define STREAM_PROTO	  IPPROTO_TCP
#define STREAM_KIND	  ""
#define STREAM_STACK_SIZE 2048
#endif
/* Lowest application priority but one: above the agent's worker, below the shell. */
#define STREAM_PRIORITY	  (K_LOWEST_APPLICATION_THREAD_PRIO - 1)
/* The client's request head is at most 1024 bytes (HTTP_REQUEST_HEAD_MAX). */
#define STREAM_HEAD_MAX	  1536
#define STREAM_CHUNK	  512

static char head[STREAM_HEAD_MAX + 1];
static char scratch[256];

static int send_all(int sock, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = zsock_send(sock, p, len, 0);

		if (n < 0) {
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_str(int sock, const char *s)
{
	return send_all(sock, s, strlen(s));
}

/* Case-insensitive search for a header's value; -1 when absent. */
static long header_number(const char *lines, const char *name)
{
	size_t name_len = strlen(name);

	for (const char *line = strstr(lines, "\r\n"); line != NULL;
	     line = strstr(line + 2, "\r\n")) {
		const char *start = line + 2;

		if (strncasecmp(start, name, name_len) == 0 && start[name_len] == ':') {
			return strtol(start + name_len + 1, NULL, 10);
		}
	}
	return -1;
}

/*
 * Read the request head into head[] (NUL-terminated at the blank line) and drop the body.
 * Returns the path (inside head[]), or NULL for a request this server cannot read.
 */
static const char *read_request(int sock)
{
	size_t have = 0;
	char *end = NULL;
	long body;
	size_t extra;

	while (end == NULL) {
		ssize_t n;

		if (have == STREAM_HEAD_MAX) {
			return NULL;
		}
		n = zsock_recv(sock, head + have, STREAM_HEAD_MAX - have, 0);
		if (n <= 0) {
			return NULL;
		}
		have += (size_t)n;
		head[have] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	extra = have - (size_t)(end + 4 - head);
	end[2] = '\0';
	body = header_number(head, "Content-Length");
	for (long left = body > 0 ? body - (long)extra : 0; left > 0;) {
		ssize_t n = zsock_recv(sock, scratch,
				       left < (long)sizeof(scratch) ? (size_t)left : sizeof(scratch),
				       0);

		if (n <= 0) {
			return NULL;
		}
		left -= n;
	}
	/* "POST /path HTTP/1.1": the path ends at the next space. */
	char *path = strchr(head, ' ');

	if (path == NULL) {
		return NULL;
	}
	path++;
	char *space = strchr(path, ' ');

	if (space == NULL) {
		return NULL;
	}
	*space = '\0';
	return path;
}

/*
 * The route for @path. A path may have several routes (a dialogue: stream_dialogue.py): its
 * n-th request gets the n-th of them, in table order, then the first again.
 */
static unsigned int route_hits[STREAM_SERVER_ROUTES];

static const struct stream_server_route *pick_route(const char *path)
{
	size_t first = STREAM_SERVER_ROUTES;
	size_t count = 0;
	size_t want;

	for (size_t i = 0; path != NULL && i < STREAM_SERVER_ROUTES; i++) {
		if (strcmp(path, stream_server_routes[i].path) == 0) {
			first = count == 0 ? i : first;
			count++;
		}
	}
	if (count == 0) {
		return NULL;
	}
	want = route_hits[first]++ % count;
	for (size_t i = first; i < STREAM_SERVER_ROUTES; i++) {
		if (strcmp(path, stream_server_routes[i].path) == 0 && want-- == 0) {
			return &stream_server_routes[i];
		}
	}
	return NULL;
}

static void answer(int sock, const struct stream_server_route *route)
{
	if (route == NULL) {
		(void)send_str(sock, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
				     "Connection: close\r\n\r\n");
		return;
	}
	if (send_str(sock, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
			   "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
			   "Connection: close\r\n\r\n") != 0) {
		return;
	}
	for (size_t at = 0; at < route->len; at += STREAM_CHUNK) {
		size_t n = route->len - at < STREAM_CHUNK ? route->len - at : STREAM_CHUNK;

		snprintf(scratch, sizeof(scratch), "%zx\r\n", n);
		if (send_str(sock, scratch) != 0 || send_all(sock, route->body + at, n) != 0 ||
		    send_str(sock, "\r\n") != 0) {
			return;
		}
	}
	(void)send_str(sock, "0\r\n\r\n");
}

static int listen_on_own_address(void)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(STREAM_PORT),
	};
	struct in_addr netmask = {{{255, 255, 255, 0}}};
	struct net_if *iface = net_if_get_default();
	int sock;

	if (iface == NULL || net_addr_pton(AF_INET, STREAM_ADDR, &addr.sin_addr) != 0) {
		return -ENODEV;
	}
	if (net_if_ipv4_addr_lookup(&addr.sin_addr, NULL) == NULL) {
		if (net_if_ipv4_addr_add(iface, &addr.sin_addr, NET_ADDR_MANUAL, 0) == NULL) {
			return -ENOMEM;
		}
		(void)net_if_ipv4_set_netmask_by_addr(iface, &addr.sin_addr, &netmask);
	}
	sock = zsock_socket(AF_INET, SOCK_STREAM, STREAM_PROTO);
	if (sock < 0) {
		return -errno;
	}
#if defined(STREAM_SERVER_TLS)
	static bool credentials_added;
	static const sec_tag_t tags[] = {STREAM_SEC_TAG};

	if (!credentials_added) {
		if (tls_credential_add(STREAM_SEC_TAG, TLS_CREDENTIAL_PUBLIC_CERTIFICATE,
				       stream_server_cert, sizeof(stream_server_cert)) != 0 ||
		    tls_credential_add(STREAM_SEC_TAG, TLS_CREDENTIAL_PRIVATE_KEY, stream_server_key,
				       sizeof(stream_server_key)) != 0) {
			(void)zsock_close(sock);
			return -ENOMEM;
		}
		credentials_added = true;
	}
	if (zsock_setsockopt(sock, SOL_TLS, TLS_SEC_TAG_LIST, tags, sizeof(tags)) != 0) {
		int err = -errno;

		(void)zsock_close(sock);
		return err;
	}
#endif
	if (zsock_bind(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    zsock_listen(sock, 2) != 0) {
		int err = -errno;

		(void)zsock_close(sock);
		return err;
	}
	return sock;
}

static void stream_server(void *a, void *b, void *c)
{
	int listener;

	(void)a;
	(void)b;
	(void)c;
	/* Retry until the network stack's init has run. */
	while ((listener = listen_on_own_address()) < 0) {
		k_msleep(100);
	}
	printk("stream server: listening on %s:%d%s\n", STREAM_ADDR, STREAM_PORT, STREAM_KIND);
	for (;;) {
		int sock = zsock_accept(listener, NULL, NULL);
		const struct stream_server_route *route = NULL;
		const char *path;

		if (sock < 0) {
			k_msleep(10);
			continue;
		}
		path = read_request(sock);
		route = pick_route(path);
		if (path != NULL) {
			answer(sock, route);
		}
		(void)zsock_close(sock);
	}
}

#if !defined(CONFIG_ENTROPY_DEVICE_RANDOM_GENERATOR) &&                                          \
	!defined(CONFIG_TIMER_RANDOM_GENERATOR) && !defined(CONFIG_XOSHIRO_RANDOM_GENERATOR)
/*
 * TCP asks sys_rand_get() for initial sequence numbers and timer jitter. mps2/an385 has no
 * entropy device, and the Zephyr kit this project builds with has none of the test
 * generators' sources (subsys/random/ holds random_entropy_device.c only), so this image gets
 * a plain xorshift, seeded from the cycle counter. Test-only: nothing here is secure.
 */
void z_impl_sys_rand_get(void *dst, size_t len)
{
	static uint32_t state;

	test_xorshift_fill(&state, dst, len);
}
#endif

K_THREAD_DEFINE(agent_stream_server, STREAM_STACK_SIZE, stream_server, NULL, NULL, NULL,
		STREAM_PRIORITY, 0, 0);
