/*
 * Network stream of the POSIX port: TCP over the host's sockets, TLS with OpenSSL.
 *
 * Every wait is a poll() of at most NET_SLICE_MS, so that a raised cancel flag or an expired
 * timeout ends the call within that slice. Names are resolved with getaddrinfo_a() for the
 * same reason. Sockets are non-blocking; OpenSSL reads and writes them through a small BIO of
 * our own that sends with MSG_NOSIGNAL, so a peer that went away gives EPIPE, not SIGPIPE.
 *
 * TLS trusts only the CA bundle compiled into the image (app/src/port/ca_bundle.h) and the
 * files given to posix_net_add_ca_file(), never the host's certificate store: a test with a
 * wrong CA must fail here as it would on the device. See docs/tls.md.
 *
 * Connections come from a fixed table (POSIX_NET_SLOTS). One connection is used by one
 * thread at a time; different connections may be used from different threads.
 *
 * Memory: OpenSSL allocates through this file's functions (CRYPTO_set_mem_functions(), set
 * before OpenSSL allocates anything). While a thread works on a TLS connection (handshake,
 * send, receive, close) they take from the simulated internal heap (heap.c), as Mbed TLS on a
 * device takes from internal RAM: agent status shows a TLS request's real memory there. The
 * rest (the library's own state, the SSL_CTX with its trust store, each thread's error queue
 * and random generators) comes from the host's heap: made once (per thread), shared by every
 * connection, it would move the idle figure, not a request's. A plain TCP connection takes
 * nothing from the simulated heap (the host's kernel holds its buffers). An allocation the
 * simulated heap cannot serve fails, OpenSSL's call fails, and the port returns -ENOMEM.
 * docs/simulator.md, "Simulated heap".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getaddrinfo_a, MSG_NOSIGNAL, SOCK_NONBLOCK */
#endif

#include "agent_port.h"
#include "ca_bundle.h"
#include "posix_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
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

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

/* Longest wait between two looks at the cancel flag. */
#define NET_SLICE_MS 100

/* A DNS name is at most 253 characters; leave room for a literal and a trailing dot. */
#define NET_HOST_MAX 255

enum net_state {
	NET_FREE = 0,
	NET_USED,
	/* A resolution was given up while glibc still works on it: the slot's gaicb stays
	 * referenced until it completes, so the slot is reclaimed only after that.
	 */
	NET_ABANDONED,
};

struct agent_net {
	enum net_state state;
	int fd;
	SSL *ssl;
	int io_errno; /* errno of the last failed socket call of the BIO */
	bool io_eof;  /* the BIO read the end of the stream */
	struct gaicb gai;
	struct addrinfo hints;
	char host[NET_HOST_MAX + 1];
	char service[8];
};

static struct agent_net net_table[POSIX_NET_SLOTS];
/* Guards the table's states and the creation of net_ctx and net_bio_method. */
static pthread_mutex_t net_lock = PTHREAD_MUTEX_INITIALIZER;
static SSL_CTX *net_ctx;
static BIO_METHOD *net_bio_method;

/* ---- OpenSSL's memory ------------------------------------------------------------------ */

/* CRYPTO_set_mem_functions() took ours: it must come before OpenSSL's first allocation. */
static bool net_mem_routed;
/* Above 0 while this thread works on a connection: OpenSSL's allocations go to the heap. */
static _Thread_local unsigned int net_heap_scope;
/* An allocation of this thread found the simulated heap short since the scope began. */
static _Thread_local bool net_heap_short;
/* This thread's own OpenSSL state (error queue, random generators) exists. */
static _Thread_local bool net_thread_ready;

static void *net_crypto_malloc(size_t num, const char *file, int line)
{
	void *block;

	(void)file;
	(void)line;
	if (num == 0u) {
		return NULL; /* as OpenSSL's own allocator */
	}
	if (net_heap_scope == 0u) {
		return malloc(num);
	}
	block = posix_heap_alloc(AGENT_MEM_INTERNAL, num);
	if (block == NULL) {
		net_heap_short = true;
	}
	return block;
}

static void net_crypto_free(void *addr, const char *file, int line)
{
	if (!posix_heap_owns(addr)) {
		free(addr);
	} else if (posix_heap_free(addr) != 0) {
		fprintf(stderr, "net: OpenSSL freed %p (%s:%d), not a block of the heap\n", addr,
			file != NULL ? file : "?", line);
		abort();
	}
}

/* A block stays in the heap it came from, whichever thread or scope reallocates it. */
static void *net_crypto_realloc(void *addr, size_t num, const char *file, int line)
{
	size_t old;
	void *block;

	if (addr == NULL) {
		return net_crypto_malloc(num, file, line);
	}
	if (num == 0u) {
		net_crypto_free(addr, file, line);
		return NULL;
	}
	if (!posix_heap_owns(addr)) {
		return realloc(addr, num);
	}
	old = posix_heap_block_bytes(addr);
	block = posix_heap_alloc(AGENT_MEM_INTERNAL, num);
	if (block == NULL) {
		net_heap_short = true;
		return NULL; /* the old block stays valid, as with realloc() */
	}
	memcpy(block, addr, old < num ? old : num);
	net_crypto_free(addr, file, line);
	return block;
}

/* Before main() and before anything can call OpenSSL: afterwards the call is refused. */
__attribute__((constructor)) static void net_route_crypto_memory(void)
{
	net_mem_routed =
		CRYPTO_set_mem_functions(net_crypto_malloc, net_crypto_realloc, net_crypto_free) == 1;
}

/*
 * This thread begins work on a connection (@p tls: a TLS one). Its own OpenSSL state, which
 * lives as long as the thread, is made first, outside the scope, so that only the
 * connection's memory is taken from the simulated heap.
 */
static void net_heap_enter(bool tls)
{
	if (tls && !net_thread_ready) {
		ERR_clear_error();
		(void)RAND_get0_public(NULL);
		(void)RAND_get0_private(NULL);
		net_thread_ready = true;
	}
	if (net_heap_scope++ == 0u) {
		net_heap_short = false;
	}
}

static void net_heap_leave(void)
{
	net_heap_scope--;
}

/* ---- Waiting -------------------------------------------------------------------------- */

static bool net_cancelled(const struct agent_cancel *cancel)
{
	return cancel != NULL && agent_cancel_is_raised(cancel);
}

static int64_t net_deadline(uint32_t timeout_ms)
{
	return agent_uptime_ms() + (int64_t)timeout_ms;
}

/*
 * Wait until @p fd is ready for @p events (or has an error the next call will report).
 * 0, -ECANCELED, -ETIMEDOUT (the deadline passed; a zero timeout never waits) or -errno.
 */
static int net_wait(int fd, short events, int64_t deadline_ms, const struct agent_cancel *cancel)
{
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = events};
		int64_t left_ms;
		int n;

		if (net_cancelled(cancel)) {
			return -ECANCELED;
		}
		left_ms = deadline_ms - agent_uptime_ms();
		if (left_ms <= 0) {
			return -ETIMEDOUT;
		}
		n = poll(&pfd, 1, left_ms < NET_SLICE_MS ? (int)left_ms : NET_SLICE_MS);
		if (n > 0) {
			return 0;
		}
		if (n < 0 && errno != EINTR) {
			return -errno;
		}
	}
}

/* ---- Slots ---------------------------------------------------------------------------- */

static bool net_valid(const struct agent_net *net)
{
	return net != NULL && net >= net_table && net < net_table + POSIX_NET_SLOTS &&
	       net->state == NET_USED;
}

static struct agent_net *net_claim(void)
{
	struct agent_net *found = NULL;

	pthread_mutex_lock(&net_lock);
	for (size_t i = 0; i < POSIX_NET_SLOTS; i++) {
		struct agent_net *net = &net_table[i];

		if (net->state == NET_ABANDONED && gai_error(&net->gai) != EAI_INPROGRESS) {
			if (gai_error(&net->gai) == 0) {
				freeaddrinfo(net->gai.ar_result);
			}
			net->state = NET_FREE;
		}
		if (found == NULL && net->state == NET_FREE) {
			found = net;
		}
	}
	if (found != NULL) {
		memset(found, 0, sizeof(*found));
		found->state = NET_USED;
		found->fd = -1;
	}
	pthread_mutex_unlock(&net_lock);
	return found;
}

static void net_release(struct agent_net *net, enum net_state state)
{
	pthread_mutex_lock(&net_lock);
	net->state = state;
	pthread_mutex_unlock(&net_lock);
}

/* ---- Name resolution ------------------------------------------------------------------ */

static int net_gai_error(int rc)
{
	switch (rc) {
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno != 0 ? -errno : -EHOSTUNREACH;
	default:
		/* EAI_NONAME, EAI_AGAIN, EAI_FAIL, EAI_NODATA...: the name did not resolve. */
		return -EHOSTUNREACH;
	}
}

/*
 * Give up a resolution in progress. Returns the state the slot must take: free when glibc
 * no longer refers to it, abandoned otherwise.
 */
static enum net_state net_resolve_abandon(struct agent_net *net)
{
	int rc = gai_cancel(&net->gai);

	if (rc == EAI_NOTCANCELED) {
		return NET_ABANDONED;
	}
	if (rc == EAI_ALLDONE && gai_error(&net->gai) == 0) {
		freeaddrinfo(net->gai.ar_result);
	}
	return NET_FREE;
}

/* 0 with *res set, or a negative errno; on -ECANCELED/-ETIMEDOUT *state says how to release. */
static int net_resolve(struct agent_net *net, const char *host, uint16_t port,
		       int64_t deadline_ms, const struct agent_cancel *cancel,
		       struct addrinfo **res, enum net_state *state)
{
	struct gaicb *list[1] = {&net->gai};
	int rc;

	*state = NET_FREE;
	strcpy(net->host, host);
	snprintf(net->service, sizeof(net->service), "%u", (unsigned int)port);
	net->hints.ai_family = AF_UNSPEC;
	net->hints.ai_socktype = SOCK_STREAM;
	net->hints.ai_flags = AI_NUMERICSERV;
	net->gai.ar_name = net->host;
	net->gai.ar_service = net->service;
	net->gai.ar_request = &net->hints;
	net->gai.ar_result = NULL;

	rc = getaddrinfo_a(GAI_NOWAIT, list, 1, NULL);
	if (rc != 0) {
		return net_gai_error(rc);
	}
	for (;;) {
		struct timespec slice = {.tv_nsec = NET_SLICE_MS * 1000000L};
		int64_t left_ms;

		rc = gai_error(&net->gai);
		if (rc != EAI_INPROGRESS) {
			break;
		}
		left_ms = deadline_ms - agent_uptime_ms();
		if (net_cancelled(cancel) || left_ms <= 0) {
			*state = net_resolve_abandon(net);
			return net_cancelled(cancel) ? -ECANCELED : -ETIMEDOUT;
		}
		if (left_ms < NET_SLICE_MS) {
			slice.tv_nsec = left_ms * 1000000L;
		}
		(void)gai_suspend((const struct gaicb *const *)list, 1, &slice);
	}
	if (rc != 0) {
		return net_gai_error(rc);
	}
	*res = net->gai.ar_result;
	return 0;
}

/* ---- TCP ------------------------------------------------------------------------------ */

static int net_tcp_connect_one(const struct addrinfo *ai, int64_t deadline_ms,
			       const struct agent_cancel *cancel, int *out_fd)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			ai->ai_protocol);
	int err = 0;

	if (fd < 0) {
		return -errno;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		err = errno == EINPROGRESS ? net_wait(fd, POLLOUT, deadline_ms, cancel) : -errno;
		if (err == 0) {
			int so_error = 0;
			socklen_t len = sizeof(so_error);

			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) {
				err = -errno;
			} else {
				err = -so_error;
			}
		}
	}
	if (err != 0) {
		close(fd);
		return err;
	}
	/* Requests and the replies to them are small writes; do not hold them back. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
	*out_fd = fd;
	return 0;
}

/* Try each address in turn; the error of the last one is the result. */
static int net_tcp_connect(struct agent_net *net, const struct addrinfo *res,
			   int64_t deadline_ms, const struct agent_cancel *cancel)
{
	int err = -EHOSTUNREACH;

	for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		err = net_tcp_connect_one(ai, deadline_ms, cancel, &net->fd);
		if (err == 0 || err == -ECANCELED || err == -ETIMEDOUT) {
			break;
		}
	}
	return err;
}

/* ---- TLS ------------------------------------------------------------------------------ */

static int net_bio_write(BIO *bio, const char *data, int len)
{
	struct agent_net *net = BIO_get_data(bio);
	ssize_t n;

	BIO_clear_retry_flags(bio);
	n = send(net->fd, data, (size_t)len, MSG_NOSIGNAL);
	if (n >= 0) {
		return (int)n;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
		BIO_set_retry_write(bio);
	} else {
		net->io_errno = errno;
	}
	return -1;
}

static int net_bio_read(BIO *bio, char *buf, int len)
{
	struct agent_net *net = BIO_get_data(bio);
	ssize_t n;

	BIO_clear_retry_flags(bio);
	n = recv(net->fd, buf, (size_t)len, 0);
	if (n > 0) {
		return (int)n;
	}
	if (n == 0) {
		net->io_eof = true;
		return 0;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
		BIO_set_retry_read(bio);
	} else {
		net->io_errno = errno;
	}
	return -1;
}

static long net_bio_ctrl(BIO *bio, int cmd, long num, void *ptr)
{
	struct agent_net *net = BIO_get_data(bio);

	(void)num;
	(void)ptr;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_EOF:
		/* OpenSSL asks this to tell an end of stream from a socket error. */
		return net->io_eof ? 1 : 0;
	default:
		return 0;
	}
}

static int net_ctx_add_der(X509_STORE *store, const uint8_t *der, size_t der_bytes)
{
	const unsigned char *p = der;
	X509 *cert;
	int ok;

	if (der_bytes > LONG_MAX) {
		return -EINVAL;
	}
	cert = d2i_X509(NULL, &p, (long)der_bytes);
	if (cert == NULL || p != der + der_bytes) {
		X509_free(cert);
		return -EINVAL;
	}
	ok = X509_STORE_add_cert(store, cert);
	X509_free(cert);
	return ok == 1 ? 0 : -ENOMEM;
}

/* Create the shared SSL_CTX and BIO method once; the caller holds net_lock. */
static int net_tls_init_locked(void)
{
	SSL_CTX *ctx;
	X509_STORE *store;

	if (net_ctx != NULL) {
		return 0;
	}
	if (!net_mem_routed) {
		fprintf(stderr, "net: OpenSSL allocated memory before the port could route it to "
				"the simulated heap: TLS is off\n");
		return -ECONNABORTED;
	}
	if (net_bio_method == NULL) {
		net_bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
					      "agent_net");
		if (net_bio_method == NULL ||
		    BIO_meth_set_write(net_bio_method, net_bio_write) != 1 ||
		    BIO_meth_set_read(net_bio_method, net_bio_read) != 1 ||
		    BIO_meth_set_ctrl(net_bio_method, net_bio_ctrl) != 1) {
			BIO_meth_free(net_bio_method);
			net_bio_method = NULL;
			return -ENOMEM;
		}
	}
	ctx = SSL_CTX_new(TLS_client_method());
	if (ctx == NULL) {
		return -ENOMEM;
	}
	/*
	 * TLS 1.2 or newer, the peer verified against our store only (no default paths are
	 * loaded). Servers that close without close_notify are common; HTTP framing, not TLS,
	 * tells a complete body from a cut one, so such an end reads as an orderly close.
	 */
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		SSL_CTX_free(ctx);
		return -ECONNABORTED;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	store = SSL_CTX_get_cert_store(ctx);
	for (size_t i = 0; i < agent_ca_bundle_count; i++) {
		if (net_ctx_add_der(store, agent_ca_bundle[i].der, agent_ca_bundle[i].der_bytes) !=
		    0) {
			fprintf(stderr, "net: CA bundle entry %s cannot be loaded\n",
				agent_ca_bundle[i].name);
			SSL_CTX_free(ctx);
			ERR_clear_error();
			return -ECONNABORTED;
		}
	}
	net_ctx = ctx;
	return 0;
}

static int net_tls_init(void)
{
	int err;

	pthread_mutex_lock(&net_lock);
	err = net_tls_init_locked();
	pthread_mutex_unlock(&net_lock);
	return err;
}

static bool net_is_ip_literal(const char *host)
{
	unsigned char addr[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
}

/* Map a failed SSL call; WANT_READ/WANT_WRITE are handled by the callers. */
static int net_tls_error(struct agent_net *net, int ssl_error, bool handshake)
{
	int err;

	if (net_heap_short) {
		err = -ENOMEM; /* the simulated heap could not serve an allocation */
	} else if (handshake) {
		err = SSL_get_verify_result(net->ssl) != X509_V_OK ? -EACCES : -ECONNABORTED;
	} else if (ssl_error == SSL_ERROR_SYSCALL && net->io_errno != 0) {
		err = net->io_errno == EPIPE ? -EPIPE : -net->io_errno;
	} else if (ssl_error == SSL_ERROR_SYSCALL && net->io_eof) {
		err = -ECONNRESET;
	} else {
		err = -ECONNABORTED;
	}
	ERR_clear_error();
	return err;
}

static int net_tls_handshake(struct agent_net *net, const char *host, int64_t deadline_ms,
			     const struct agent_cancel *cancel)
{
	BIO *bio;
	bool ok;

	net->ssl = SSL_new(net_ctx);
	bio = BIO_new(net_bio_method);
	if (net->ssl == NULL || bio == NULL) {
		BIO_free(bio);
		ERR_clear_error();
		return -ENOMEM;
	}
	BIO_set_data(bio, net);
	BIO_set_init(bio, 1);
	SSL_set_bio(net->ssl, bio, bio);

	/*
	 * A name is sent as SNI and checked against the certificate's DNS names; an address
	 * literal (no SNI, RFC 6066) is checked against its IP address entries.
	 */
	if (net_is_ip_literal(host)) {
		ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(net->ssl), host) == 1;
	} else {
		SSL_set_hostflags(net->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		ok = SSL_set_tlsext_host_name(net->ssl, host) == 1 &&
		     SSL_set1_host(net->ssl, host) == 1;
	}
	if (!ok) {
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_set_connect_state(net->ssl);

	for (;;) {
		int ret;
		int ssl_error;
		int err;

		if (net_cancelled(cancel)) {
			return -ECANCELED;
		}
		ERR_clear_error();
		net->io_errno = 0;
		ret = SSL_do_handshake(net->ssl);
		if (ret == 1) {
			return 0;
		}
		ssl_error = SSL_get_error(net->ssl, ret);
		if (ssl_error == SSL_ERROR_WANT_READ) {
			err = net_wait(net->fd, POLLIN, deadline_ms, cancel);
		} else if (ssl_error == SSL_ERROR_WANT_WRITE) {
			err = net_wait(net->fd, POLLOUT, deadline_ms, cancel);
		} else {
			return net_tls_error(net, ssl_error, true);
		}
		if (err != 0) {
			return err;
		}
	}
}

/* ---- The boundary --------------------------------------------------------------------- */

static void net_teardown(struct agent_net *net)
{
	if (net->ssl != NULL) {
		/* Best effort close_notify; the socket is non-blocking, so this never waits. */
		if (SSL_is_init_finished(net->ssl)) {
			(void)SSL_shutdown(net->ssl);
		}
		SSL_free(net->ssl);
		net->ssl = NULL;
		ERR_clear_error();
	}
	if (net->fd >= 0) {
		close(net->fd);
		net->fd = -1;
	}
}

int agent_net_connect(struct agent_net **out, const char *host, uint16_t port, bool tls,
		      uint32_t timeout_ms, const struct agent_cancel *cancel)
{
	int64_t deadline_ms = net_deadline(timeout_ms);
	struct agent_net *net;
	struct addrinfo *res = NULL;
	enum net_state release_state;
	int err;

	if (out == NULL || host == NULL || host[0] == '\0' || strlen(host) > NET_HOST_MAX ||
	    port == 0) {
		return -EINVAL;
	}
	*out = NULL;
	if (net_cancelled(cancel)) {
		return -ECANCELED;
	}
	if (tls) {
		err = net_tls_init();
		if (err != 0) {
			return err;
		}
	}
	net = net_claim();
	if (net == NULL) {
		return -ENOMEM;
	}
	err = net_resolve(net, host, port, deadline_ms, cancel, &res, &release_state);
	if (err != 0) {
		net_release(net, release_state);
		return err;
	}
	err = net_tcp_connect(net, res, deadline_ms, cancel);
	freeaddrinfo(res);
	if (tls && err == -ECONNRESET) {
		/* Reset as soon as it was accepted: for TLS, a handshake that failed. */
		err = -ECONNABORTED;
	}
	net_heap_enter(tls);
	if (err == 0 && tls) {
		err = net_tls_handshake(net, host, deadline_ms, cancel);
	}
	if (err != 0) {
		net_teardown(net);
	}
	net_heap_leave();
	if (err != 0) {
		net_release(net, NET_FREE);
		return err;
	}
	*out = net;
	return 0;
}

static int net_send_some(struct agent_net *net, const uint8_t *data, size_t len, short *wait_for)
{
	size_t chunk = len > INT_MAX ? INT_MAX : len;
	ssize_t n;
	int ret;
	int ssl_error;

	*wait_for = POLLOUT;
	if (net->ssl == NULL) {
		n = send(net->fd, data, chunk, MSG_NOSIGNAL);
		if (n >= 0) {
			return (int)n;
		}
		return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -errno;
	}
	ERR_clear_error();
	net->io_errno = 0;
	ret = SSL_write(net->ssl, data, (int)chunk);
	if (ret > 0) {
		return ret;
	}
	ssl_error = SSL_get_error(net->ssl, ret);
	switch (ssl_error) {
	case SSL_ERROR_WANT_WRITE:
		return 0;
	case SSL_ERROR_WANT_READ:
		*wait_for = POLLIN;
		return 0;
	case SSL_ERROR_ZERO_RETURN:
		/* The peer closed its side with close_notify: nothing more can be sent. */
		ERR_clear_error();
		return -EPIPE;
	default:
		return net_tls_error(net, ssl_error, false);
	}
}

static int net_send_all(struct agent_net *net, const uint8_t *p, size_t len,
			uint32_t timeout_ms, const struct agent_cancel *cancel)
{
	int64_t deadline_ms = net_deadline(timeout_ms);

	while (len > 0) {
		short wait_for;
		int n;

		if (net_cancelled(cancel)) {
			return -ECANCELED;
		}
		n = net_send_some(net, p, len, &wait_for);
		if (n < 0) {
			return n;
		}
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			/* The timeout bounds a stall, not the whole transfer. */
			deadline_ms = net_deadline(timeout_ms);
			continue;
		}
		n = net_wait(net->fd, wait_for, deadline_ms, cancel);
		if (n != 0) {
			return n;
		}
	}
	return 0;
}

int agent_net_send(struct agent_net *net, const void *data, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel)
{
	int err;

	if (!net_valid(net) || (data == NULL && len > 0)) {
		return -EINVAL;
	}
	net_heap_enter(net->ssl != NULL);
	err = net_send_all(net, data, len, timeout_ms, cancel);
	net_heap_leave();
	return err;
}

/* Bytes (> 0), 0 at an orderly end, -EAGAIN when the caller must wait, or an error. */
static int net_recv_some(struct agent_net *net, void *buf, size_t len, short *wait_for)
{
	size_t chunk = len > INT_MAX ? INT_MAX : len;
	int ssl_error;
	int n;

	*wait_for = POLLIN;
	if (net->ssl == NULL) {
		ssize_t got = recv(net->fd, buf, chunk, 0);

		if (got >= 0) {
			return (int)got;
		}
		return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -EAGAIN
										    : -errno;
	}
	/* SSL_read first: records already buffered by OpenSSL need no wait on the socket. */
	ERR_clear_error();
	net->io_errno = 0;
	n = SSL_read(net->ssl, buf, (int)chunk);
	if (n > 0) {
		return n;
	}
	ssl_error = SSL_get_error(net->ssl, n);
	switch (ssl_error) {
	case SSL_ERROR_ZERO_RETURN:
		ERR_clear_error();
		return 0;
	case SSL_ERROR_WANT_READ:
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		*wait_for = POLLOUT;
		return -EAGAIN;
	default:
		return net_tls_error(net, ssl_error, false);
	}
}

static int net_recv_wait(struct agent_net *net, void *buf, size_t len, uint32_t timeout_ms,
			 const struct agent_cancel *cancel)
{
	int64_t deadline_ms = net_deadline(timeout_ms);

	for (;;) {
		short wait_for;
		int n;

		if (net_cancelled(cancel)) {
			return -ECANCELED;
		}
		n = net_recv_some(net, buf, len, &wait_for);
		if (n != -EAGAIN) {
			return n;
		}
		n = net_wait(net->fd, wait_for, deadline_ms, cancel);
		if (n != 0) {
			return n;
		}
	}
}

int agent_net_recv(struct agent_net *net, void *buf, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel)
{
	int n;

	if (!net_valid(net) || buf == NULL || len == 0) {
		return -EINVAL;
	}
	net_heap_enter(net->ssl != NULL);
	n = net_recv_wait(net, buf, len, timeout_ms, cancel);
	net_heap_leave();
	return n;
}

void agent_net_close(struct agent_net *net)
{
	if (!net_valid(net)) {
		return;
	}
	net_heap_enter(net->ssl != NULL);
	net_teardown(net);
	net_heap_leave();
	net_release(net, NET_FREE);
}

/* ---- Simulator API -------------------------------------------------------------------- */

int posix_net_add_ca_file(const char *pem_path)
{
	X509_STORE *store;
	FILE *file;
	BIO *in;
	int count = 0;
	int err;

	if (pem_path == NULL) {
		return -EINVAL;
	}
	err = net_tls_init();
	if (err != 0) {
		return err;
	}
	file = fopen(pem_path, "r");
	if (file == NULL) {
		return -errno;
	}
	in = BIO_new_fp(file, BIO_CLOSE);
	if (in == NULL) {
		fclose(file);
		return -ENOMEM;
	}
	store = SSL_CTX_get_cert_store(net_ctx);
	ERR_clear_error();
	for (;;) {
		X509 *cert = PEM_read_bio_X509(in, NULL, NULL, NULL);
		int ok;

		if (cert == NULL) {
			break;
		}
		ok = X509_STORE_add_cert(store, cert);
		X509_free(cert);
		if (ok != 1) {
			err = -ENOMEM;
			break;
		}
		count++;
	}
	/* The loop ends at the first PEM_read failure: fine at the end of the file only. */
	if (err == 0 &&
	    (count == 0 || ERR_GET_REASON(ERR_peek_last_error()) != PEM_R_NO_START_LINE)) {
		err = -EINVAL;
	}
	ERR_clear_error();
	BIO_free(in);
	return err != 0 ? err : count;
}

int posix_net_trusted_ca_count(void)
{
	STACK_OF(X509_OBJECT) * objects;
	X509_STORE *store;
	int count = 0;
	int err = net_tls_init();

	if (err != 0) {
		return err;
	}
	store = SSL_CTX_get_cert_store(net_ctx);
	if (X509_STORE_lock(store) != 1) {
		return -EIO;
	}
	objects = X509_STORE_get0_objects(store);
	for (int i = 0; i < sk_X509_OBJECT_num(objects); i++) {
		if (X509_OBJECT_get_type(sk_X509_OBJECT_value(objects, i)) == X509_LU_X509) {
			count++;
		}
	}
	X509_STORE_unlock(store);
	return count;
}
