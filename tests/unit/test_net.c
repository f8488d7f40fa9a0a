/*
 * Network stream of the POSIX port over loopback: a server thread in this file plays the
 * peer (echo, hold, reset, count, close), and the tests check the contract of agent_port.h:
 * data both ways, orderly close, timeouts, cancellation from another thread, refused
 * connections, names that do not resolve, the slot table, and the TLS trust store. Real TLS
 * handshakes against a Python server are in tests/test_net_tls.py.
 *
 * Only 127.0.0.1 is ever contacted. The unresolvable name has a 64-character label, which
 * the resolver refuses before building a DNS query, so no packet leaves the host.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "agent_port.h"
#include "ca_bundle.h"
#include "posix/posix_port.h"

#define LOOPBACK "127.0.0.1"
#define LONG_MS	 10000

/* ---- The peer ----------------------------------------------------------------------------- */

enum peer_mode {
	PEER_ECHO,  /* read `expect` bytes, send them back, close */
	PEER_HOLD,  /* accept, send nothing, close when released */
	PEER_RESET, /* accept, wait for a first byte, reset the connection (SO_LINGER 0) */
	PEER_COUNT, /* read `expect` bytes with a checksum, reply with the count, close */
	PEER_CLOSE, /* accept and close at once */
	PEER_JUNK,  /* accept, send bytes that are not TLS, close */
};

struct peer {
	enum peer_mode mode;
	int listen_fd;
	uint16_t port;
	int release[2]; /* a byte on release[1] ends PEER_HOLD */
	pthread_t thread;
	size_t expect;
	size_t counted;
	uint32_t checksum;
};

static void peer_serve(struct peer *peer, int fd)
{
	uint8_t buf[16384];
	ssize_t n;

	switch (peer->mode) {
	case PEER_ECHO:
		while (peer->counted < peer->expect &&
		       (n = recv(fd, buf + peer->counted, peer->expect - peer->counted, 0)) > 0) {
			peer->counted += (size_t)n;
		}
		(void)send(fd, buf, peer->counted, MSG_NOSIGNAL);
		break;
	case PEER_HOLD: {
		struct pollfd pfd = {.fd = peer->release[0], .events = POLLIN};

		(void)poll(&pfd, 1, 30000);
		break;
	}
	case PEER_RESET: {
		struct linger linger = {.l_onoff = 1, .l_linger = 0};

		/* Reset only once the client has connected and sent: a reset right after accept
		 * could reach the client before its connect() finished, and fail that instead.
		 */
		(void)recv(fd, buf, 1, 0);
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof(linger));
		break;
	}
	case PEER_COUNT:
		while (peer->counted < peer->expect &&
		       (n = recv(fd, buf, sizeof(buf), 0)) > 0) {
			for (ssize_t i = 0; i < n; i++) {
				peer->checksum = peer->checksum * 31u + buf[i];
			}
			peer->counted += (size_t)n;
		}
		n = snprintf((char *)buf, sizeof(buf), "%zu", peer->counted);
		(void)send(fd, buf, (size_t)n, MSG_NOSIGNAL);
		break;
	case PEER_CLOSE:
		break;
	case PEER_JUNK:
		(void)send(fd, "HTTP/1.1 400 Bad Request\r\n\r\n", 28, MSG_NOSIGNAL);
		break;
	}
	close(fd);
}

static void *peer_main(void *arg)
{
	struct peer *peer = arg;
	int fd = accept(peer->listen_fd, NULL, NULL);

	if (fd >= 0) {
		peer_serve(peer, fd);
	}
	return NULL;
}

/* A listener on 127.0.0.1 with an ephemeral port; @p serve starts the accepting thread. */
static void peer_open(struct peer *peer, enum peer_mode mode, size_t expect, int backlog,
		      bool serve)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t len = sizeof(addr);

	memset(peer, 0, sizeof(*peer));
	peer->mode = mode;
	peer->expect = expect;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	peer->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(peer->listen_fd >= 0);
	assert_int_equal(bind(peer->listen_fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(peer->listen_fd, backlog), 0);
	assert_int_equal(getsockname(peer->listen_fd, (struct sockaddr *)&addr, &len), 0);
	peer->port = ntohs(addr.sin_port);
	assert_int_equal(pipe(peer->release), 0);
	if (serve) {
		assert_int_equal(pthread_create(&peer->thread, NULL, peer_main, peer), 0);
	}
}

static void peer_close(struct peer *peer, bool served)
{
	assert_int_equal(write(peer->release[1], "x", 1), 1);
	if (served) {
		assert_int_equal(pthread_join(peer->thread, NULL), 0);
	}
	close(peer->release[0]);
	close(peer->release[1]);
	close(peer->listen_fd);
}

static struct agent_net *connect_ok(const char *host, uint16_t port)
{
	struct agent_net *net = NULL;

	assert_int_equal(agent_net_connect(&net, host, port, false, LONG_MS, NULL), 0);
	assert_non_null(net);
	return net;
}

/* ---- Cancellation from another thread ------------------------------------------------------ */

struct raiser {
	struct agent_cancel *cancel;
	uint32_t after_ms;
	int64_t raised_at_ms;
	pthread_t thread;
};

static void *raiser_main(void *arg)
{
	struct raiser *r = arg;

	agent_sleep_ms(r->after_ms);
	r->raised_at_ms = agent_uptime_ms();
	agent_cancel_raise(r->cancel);
	return NULL;
}

static void raiser_start(struct raiser *r, struct agent_cancel *cancel, uint32_t after_ms)
{
	r->cancel = cancel;
	r->after_ms = after_ms;
	assert_int_equal(pthread_create(&r->thread, NULL, raiser_main, r), 0);
}

/* The call returned at @p returned_ms: it must have seen the flag within 200 ms. */
static void raiser_check(struct raiser *r, int64_t returned_ms)
{
	assert_int_equal(pthread_join(r->thread, NULL), 0);
	assert_true(returned_ms >= r->raised_at_ms);
	assert_true(returned_ms - r->raised_at_ms < 200);
}

/* ---- Tests --------------------------------------------------------------------------------- */

static void test_echo_then_orderly_close(void **state)
{
	static const char msg[] = "hello, loopback";
	char buf[64];
	size_t got = 0;
	struct peer peer;
	struct agent_net *net;
	int n;

	(void)state;
	peer_open(&peer, PEER_ECHO, sizeof(msg) - 1, 4, true);
	net = connect_ok(LOOPBACK, peer.port);
	assert_int_equal(agent_net_send(net, msg, sizeof(msg) - 1, LONG_MS, NULL), 0);
	while ((n = agent_net_recv(net, buf + got, sizeof(buf) - got, LONG_MS, NULL)) > 0) {
		got += (size_t)n;
	}
	/* The peer closed after the echo: the end reads as 0, and again as 0. */
	assert_int_equal(n, 0);
	assert_int_equal(got, sizeof(msg) - 1);
	assert_memory_equal(buf, msg, got);
	assert_int_equal(agent_net_recv(net, buf, sizeof(buf), LONG_MS, NULL), 0);
	agent_net_close(net);
	peer_close(&peer, true);
}

static void test_name_resolves_to_loopback(void **state)
{
	static const char msg[] = "by name";
	char buf[16];
	size_t got = 0;
	struct peer peer;
	struct agent_net *net;
	int n;

	(void)state;
	/* "localhost" may resolve to ::1 first, where nothing listens: the next address wins. */
	peer_open(&peer, PEER_ECHO, sizeof(msg) - 1, 4, true);
	net = connect_ok("localhost", peer.port);
	assert_int_equal(agent_net_send(net, msg, sizeof(msg) - 1, LONG_MS, NULL), 0);
	while ((n = agent_net_recv(net, buf + got, sizeof(buf) - got, LONG_MS, NULL)) > 0) {
		got += (size_t)n;
	}
	assert_int_equal(n, 0);
	assert_int_equal(got, sizeof(msg) - 1);
	assert_memory_equal(buf, msg, got);
	agent_net_close(net);
	peer_close(&peer, true);
}

static void test_large_send_arrives_whole(void **state)
{
	static uint8_t data[8u * 1024u * 1024u]; /* far beyond the socket buffers */
	uint32_t checksum = 0;
	char reply[32] = {0};
	size_t got = 0;
	struct peer peer;
	struct agent_net *net;
	int n;

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++) {
		data[i] = (uint8_t)(i * 7u + (i >> 13));
		checksum = checksum * 31u + data[i];
	}
	peer_open(&peer, PEER_COUNT, sizeof(data), 4, true);
	net = connect_ok(LOOPBACK, peer.port);
	assert_int_equal(agent_net_send(net, data, sizeof(data), LONG_MS, NULL), 0);
	while ((n = agent_net_recv(net, reply + got, sizeof(reply) - 1 - got, LONG_MS, NULL)) >
	       0) {
		got += (size_t)n;
	}
	assert_int_equal(n, 0);
	agent_net_close(net);
	peer_close(&peer, true);
	assert_int_equal(peer.counted, sizeof(data));
	assert_int_equal(peer.checksum, checksum);
	assert_int_equal(strtoull(reply, NULL, 10), sizeof(data));
}

static void test_recv_timeout(void **state)
{
	char buf[8];
	struct peer peer;
	struct agent_net *net;
	int64_t t0;
	int64_t elapsed;

	(void)state;
	peer_open(&peer, PEER_HOLD, 0, 4, true);
	net = connect_ok(LOOPBACK, peer.port);

	t0 = agent_uptime_ms();
	assert_int_equal(agent_net_recv(net, buf, sizeof(buf), 300, NULL), -ETIMEDOUT);
	elapsed = agent_uptime_ms() - t0;
	assert_true(elapsed >= 300);
	assert_true(elapsed < 300 + 200);

	/* A zero timeout looks without waiting. */
	t0 = agent_uptime_ms();
	assert_int_equal(agent_net_recv(net, buf, sizeof(buf), 0, NULL), -ETIMEDOUT);
	assert_true(agent_uptime_ms() - t0 < 50);

	agent_net_close(net);
	peer_close(&peer, true);
}

static void test_cancel_ends_blocked_recv(void **state)
{
	struct agent_cancel cancel = {0};
	struct raiser raiser;
	char buf[8];
	struct peer peer;
	struct agent_net *net;
	int64_t t0;

	(void)state;
	peer_open(&peer, PEER_HOLD, 0, 4, true);
	net = connect_ok(LOOPBACK, peer.port);
	raiser_start(&raiser, &cancel, 250);
	t0 = agent_uptime_ms();
	assert_int_equal(agent_net_recv(net, buf, sizeof(buf), LONG_MS, &cancel), -ECANCELED);
	raiser_check(&raiser, agent_uptime_ms());
	assert_true(agent_uptime_ms() - t0 >= 250);

	/* A flag already raised ends every call at once; once reset, the connection works. */
	assert_int_equal(agent_net_recv(net, buf, sizeof(buf), LONG_MS, &cancel), -ECANCELED);
	assert_int_equal(agent_net_send(net, "x", 1, LONG_MS, &cancel), -ECANCELED);
	agent_cancel_reset(&cancel);
	assert_int_equal(agent_net_recv(net, buf, sizeof(buf), 0, &cancel), -ETIMEDOUT);
	agent_net_close(net);
	peer_close(&peer, true);
}

static void test_cancel_ends_blocked_send(void **state)
{
	static uint8_t data[16u * 1024u * 1024u];
	struct agent_cancel cancel = {0};
	struct raiser raiser;
	struct peer peer;
	struct agent_net *net;

	(void)state;
	/* The peer reads nothing, so the socket buffers fill and send waits. */
	peer_open(&peer, PEER_HOLD, 0, 4, true);
	net = connect_ok(LOOPBACK, peer.port);
	raiser_start(&raiser, &cancel, 250);
	assert_int_equal(agent_net_send(net, data, sizeof(data), LONG_MS, &cancel), -ECANCELED);
	raiser_check(&raiser, agent_uptime_ms());
	agent_net_close(net);
	peer_close(&peer, true);
}

static void test_send_timeout_when_peer_stalls(void **state)
{
	static uint8_t data[16u * 1024u * 1024u];
	struct peer peer;
	struct agent_net *net;
	int64_t t0;
	int64_t elapsed;

	(void)state;
	peer_open(&peer, PEER_HOLD, 0, 4, true);
	net = connect_ok(LOOPBACK, peer.port);
	t0 = agent_uptime_ms();
	assert_int_equal(agent_net_send(net, data, sizeof(data), 300, NULL), -ETIMEDOUT);
	elapsed = agent_uptime_ms() - t0;
	assert_true(elapsed >= 300);
	assert_true(elapsed < 300 + 1000);
	agent_net_close(net);
	peer_close(&peer, true);
}

static void test_connect_timeout_and_cancel(void **state)
{
	struct agent_cancel cancel = {0};
	struct raiser raiser;
	struct agent_net *first = NULL;
	struct agent_net *net = NULL;
	struct peer peer;
	int64_t t0;
	int64_t elapsed;

	(void)state;
	/*
	 * A listener that never accepts, with a backlog of 0: Linux queues one connection and
	 * drops the SYN of the next, whose connect then waits.
	 */
	peer_open(&peer, PEER_HOLD, 0, 0, false);
	first = connect_ok(LOOPBACK, peer.port);

	t0 = agent_uptime_ms();
	assert_int_equal(agent_net_connect(&net, LOOPBACK, peer.port, false, 300, NULL),
			 -ETIMEDOUT);
	elapsed = agent_uptime_ms() - t0;
	assert_null(net);
	assert_true(elapsed >= 300);
	assert_true(elapsed < 300 + 200);

	raiser_start(&raiser, &cancel, 250);
	assert_int_equal(agent_net_connect(&net, LOOPBACK, peer.port, false, LONG_MS, &cancel),
			 -ECANCELED);
	raiser_check(&raiser, agent_uptime_ms());
	assert_null(net);

	/* Raised before the call: nothing is attempted. */
	assert_int_equal(agent_net_connect(&net, LOOPBACK, peer.port, false, LONG_MS, &cancel),
			 -ECANCELED);
	agent_net_close(first);
	peer_close(&peer, false);
}

static void test_connection_refused(void **state)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	socklen_t len = sizeof(addr);
	struct agent_net *net = NULL;
	int fd;

	(void)state;
	/* A bound socket that does not listen keeps the port ours and refuses connections. */
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
	assert_int_equal(
		agent_net_connect(&net, LOOPBACK, ntohs(addr.sin_port), false, LONG_MS, NULL),
		-ECONNREFUSED);
	assert_null(net);
	close(fd);
}

static void test_unresolvable_name(void **state)
{
	char host[80];
	struct agent_net *net = NULL;

	(void)state;
	memset(host, 'a', 64);
	strcpy(host + 64, ".invalid");
	assert_int_equal(agent_net_connect(&net, host, 80, false, LONG_MS, NULL), -EHOSTUNREACH);
	assert_int_equal(agent_net_connect(&net, host, 443, true, LONG_MS, NULL), -EHOSTUNREACH);
	assert_null(net);
}

static void test_peer_reset(void **state)
{
	char buf[8];
	struct peer peer;
	struct agent_net *net;
	int n;

	(void)state;
	peer_open(&peer, PEER_RESET, 0, 4, true);
	net = connect_ok(LOOPBACK, peer.port);
	assert_int_equal(agent_net_send(net, "x", 1, LONG_MS, NULL), 0);
	assert_int_equal(pthread_join(peer.thread, NULL), 0);
	n = agent_net_recv(net, buf, sizeof(buf), LONG_MS, NULL);
	assert_int_equal(n, -ECONNRESET);
	agent_net_close(net);
	peer_close(&peer, false);
}

static void test_slot_table_full(void **state)
{
	struct agent_net *nets[POSIX_NET_SLOTS];
	struct agent_net *extra = NULL;
	struct peer peer;

	(void)state;
	/* The kernel completes the handshakes from the backlog; nobody needs to accept. */
	peer_open(&peer, PEER_HOLD, 0, POSIX_NET_SLOTS + 2, false);
	for (size_t i = 0; i < POSIX_NET_SLOTS; i++) {
		nets[i] = connect_ok(LOOPBACK, peer.port);
	}
	assert_int_equal(agent_net_connect(&extra, LOOPBACK, peer.port, false, LONG_MS, NULL),
			 -ENOMEM);
	assert_null(extra);
	agent_net_close(nets[0]);
	nets[0] = connect_ok(LOOPBACK, peer.port);
	for (size_t i = 0; i < POSIX_NET_SLOTS; i++) {
		agent_net_close(nets[i]);
	}
	peer_close(&peer, false);
}

static void test_invalid_arguments(void **state)
{
	char host[300];
	char buf[4];
	struct agent_net *net = NULL;

	(void)state;
	assert_int_equal(agent_net_connect(NULL, LOOPBACK, 80, false, 10, NULL), -EINVAL);
	assert_int_equal(agent_net_connect(&net, NULL, 80, false, 10, NULL), -EINVAL);
	assert_int_equal(agent_net_connect(&net, "", 80, false, 10, NULL), -EINVAL);
	assert_int_equal(agent_net_connect(&net, LOOPBACK, 0, false, 10, NULL), -EINVAL);
	memset(host, 'a', 256);
	host[256] = '\0';
	assert_int_equal(agent_net_connect(&net, host, 80, false, 10, NULL), -EINVAL);
	assert_null(net);
	assert_int_equal(agent_net_send(NULL, "x", 1, 10, NULL), -EINVAL);
	assert_int_equal(agent_net_recv(NULL, buf, sizeof(buf), 10, NULL), -EINVAL);
	agent_net_close(NULL);
}

/* TLS against peers that do not speak it: the handshake fails as "other TLS failure". */
static void test_tls_to_plain_peers(void **state)
{
	static const enum peer_mode modes[] = {PEER_CLOSE, PEER_JUNK, PEER_RESET};
	struct agent_net *net = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct peer peer;

		peer_open(&peer, modes[i], 0, 4, true);
		assert_int_equal(agent_net_connect(&net, LOOPBACK, peer.port, true, LONG_MS, NULL),
				 -ECONNABORTED);
		assert_null(net);
		peer_close(&peer, true);
	}
}

static void test_tls_handshake_timeout_and_cancel(void **state)
{
	struct agent_cancel cancel = {0};
	struct raiser raiser;
	struct agent_net *net = NULL;
	struct peer peer;
	int64_t t0;
	int64_t elapsed;

	(void)state;
	/* The peer accepts and never answers the ClientHello. */
	peer_open(&peer, PEER_HOLD, 0, 4, true);
	t0 = agent_uptime_ms();
	assert_int_equal(agent_net_connect(&net, LOOPBACK, peer.port, true, 300, NULL), -ETIMEDOUT);
	elapsed = agent_uptime_ms() - t0;
	assert_true(elapsed >= 300);
	assert_true(elapsed < 300 + 200);
	assert_null(net);
	peer_close(&peer, true);

	peer_open(&peer, PEER_HOLD, 0, 4, true);
	raiser_start(&raiser, &cancel, 250);
	assert_int_equal(agent_net_connect(&net, LOOPBACK, peer.port, true, LONG_MS, &cancel),
			 -ECANCELED);
	raiser_check(&raiser, agent_uptime_ms());
	assert_null(net);
	peer_close(&peer, true);
}

/* A self-signed EC certificate in PEM, as a test CA file. */
static void write_self_signed(const char *path, const char *cn)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *cert = X509_new();
	X509_NAME *name = X509_NAME_new();
	FILE *file;

	assert_non_null(key);
	assert_non_null(cert);
	assert_non_null(name);
	assert_int_equal(X509_set_version(cert, 2), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(cert), 1), 1);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(cert), 0));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(cert), 3600));
	assert_int_equal(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
						    (const unsigned char *)cn, -1, -1, 0),
			 1);
	assert_int_equal(X509_set_subject_name(cert, name), 1);
	assert_int_equal(X509_set_issuer_name(cert, name), 1);
	assert_int_equal(X509_set_pubkey(cert, key), 1);
	assert_true(X509_sign(cert, key, EVP_sha256()) > 0);
	file = fopen(path, "w");
	assert_non_null(file);
	assert_int_equal(PEM_write_X509(file, cert), 1);
	assert_int_equal(fclose(file), 0);
	X509_NAME_free(name);
	X509_free(cert);
	EVP_PKEY_free(key);
}

static void write_text(const char *path, const char *text)
{
	FILE *file = fopen(path, "w");

	assert_non_null(file);
	assert_true(fputs(text, file) >= 0);
	assert_int_equal(fclose(file), 0);
}

static void test_trust_store(void **state)
{
	char ca[64];
	char empty[64];
	char bad[64];
	char missing[64];
	int before;

	(void)state;
	/* Names of this process's own: two test runs in one directory must not collide. */
	snprintf(ca, sizeof(ca), "net_test_%ld_ca.pem", (long)getpid());
	snprintf(empty, sizeof(empty), "net_test_%ld_empty.pem", (long)getpid());
	snprintf(bad, sizeof(bad), "net_test_%ld_bad.pem", (long)getpid());
	snprintf(missing, sizeof(missing), "net_test_%ld_missing.pem", (long)getpid());

	/* Every root of the compiled-in bundle is trusted, and nothing else (no host store). */
	assert_true(agent_ca_bundle_count > 0);
	before = posix_net_trusted_ca_count();
	assert_true(before >= (int)agent_ca_bundle_count);

	write_self_signed(ca, "agent test CA");
	assert_int_equal(posix_net_add_ca_file(ca), 1);
	assert_int_equal(posix_net_trusted_ca_count(), before + 1);
	/* The same certificate again changes nothing. */
	assert_int_equal(posix_net_add_ca_file(ca), 1);
	assert_int_equal(posix_net_trusted_ca_count(), before + 1);

	assert_int_equal(posix_net_add_ca_file(missing), -ENOENT);
	write_text(empty, "no certificate here\n");
	assert_int_equal(posix_net_add_ca_file(empty), -EINVAL);
	write_text(bad,
		   "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n");
	assert_int_equal(posix_net_add_ca_file(bad), -EINVAL);
	assert_int_equal(posix_net_add_ca_file(NULL), -EINVAL);
	assert_int_equal(posix_net_trusted_ca_count(), before + 1);
	assert_int_equal(remove(ca), 0);
	assert_int_equal(remove(empty), 0);
	assert_int_equal(remove(bad), 0);
}

static void test_trust_store_is_the_bundle_only(void **state)
{
	(void)state;
	/* Run first, in its own process state: the store holds exactly the bundle. */
	assert_int_equal(posix_net_trusted_ca_count(), (int)agent_ca_bundle_count);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trust_store_is_the_bundle_only),
		cmocka_unit_test(test_echo_then_orderly_close),
		cmocka_unit_test(test_name_resolves_to_loopback),
		cmocka_unit_test(test_large_send_arrives_whole),
		cmocka_unit_test(test_recv_timeout),
		cmocka_unit_test(test_cancel_ends_blocked_recv),
		cmocka_unit_test(test_cancel_ends_blocked_send),
		cmocka_unit_test(test_send_timeout_when_peer_stalls),
		cmocka_unit_test(test_connect_timeout_and_cancel),
		cmocka_unit_test(test_connection_refused),
		cmocka_unit_test(test_unresolvable_name),
		cmocka_unit_test(test_peer_reset),
		cmocka_unit_test(test_slot_table_full),
		cmocka_unit_test(test_invalid_arguments),
		cmocka_unit_test(test_tls_to_plain_peers),
		cmocka_unit_test(test_tls_handshake_timeout_and_cancel),
		cmocka_unit_test(test_trust_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
