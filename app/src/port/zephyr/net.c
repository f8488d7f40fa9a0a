/*
 * Network stream of the Zephyr port, over Zephyr's BSD-style sockets (zsock_*), with TLS by
 * Zephyr's TLS sockets (IPPROTO_TLS_1_2, Mbed TLS underneath). On native_sim the sockets are
 * the host's, through the offloaded-sockets driver (NSOS); TLS still runs in the image.
 *
 * Trust: the CA bundle compiled into the image (app/src/port/ca_bundle.h), each root
 * registered once with tls_credential_add() under its own security tag, all tags given to
 * every TLS socket, peer verification required and the host name set (TLS_HOSTNAME).
 *
 * Waiting: send and receive use ZSOCK_MSG_DONTWAIT and zsock_poll() in slices of at most
 * NET_SLICE_MS, so cancellation and timeouts end them within a slice. zsock_getaddrinfo()
 * and zsock_connect() (which for TLS includes the handshake) block inside Zephyr; they are
 * bounded by Zephyr's own Kconfig timeouts, and the cancel flag is looked at before and after
 * them only. docs/tls.md lists this and the other differences from the POSIX port.
 *
 * Names are the prefixed ones (NET_*, ZSOCK_*), which Zephyr 4.4 defines whether or not its
 * POSIX-name compatibility mode is on; zephyr_compat.h maps them to 4.3's spelling. Every one
 * is listed in docs/zephyr-port.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <zephyr/kernel.h>

#include "agent_port.h"
#include "zephyr_port.h"

#if defined(CONFIG_NET_SOCKETS)

#include <zephyr/net/socket.h>

#include "zephyr_compat.h"

#if defined(CONFIG_NET_SOCKETS_SOCKOPT_TLS)
#include <zephyr/net/tls_credentials.h>

#include "agent_ca_bundle_count.h"
#include "ca_bundle.h"

/* Each root takes one credential slot and one entry of every socket's tag list. */
_Static_assert(AGENT_CA_BUNDLE_COUNT <= CONFIG_TLS_MAX_CREDENTIALS_NUMBER,
	       "raise CONFIG_TLS_MAX_CREDENTIALS_NUMBER to the number of app/certs/ roots");
_Static_assert(AGENT_CA_BUNDLE_COUNT <= CONFIG_NET_SOCKETS_TLS_MAX_CREDENTIALS,
	       "raise CONFIG_NET_SOCKETS_TLS_MAX_CREDENTIALS to the number of app/certs/ roots");

/* Security tags of the bundle: NET_CA_TAG_BASE + index. Positive, as Zephyr requires. */
#define NET_CA_TAG_BASE 0x41470000
#endif /* CONFIG_NET_SOCKETS_SOCKOPT_TLS */

/* Longest wait between two looks at the cancel flag. */
#define NET_SLICE_MS 100

/* Connections open at once; one more agent_net_connect() fails with -ENOMEM. */
#define NET_SLOTS 2

/* A DNS name is at most 253 characters; leave room for a literal and a trailing dot. */
#define NET_HOST_MAX 255

struct agent_net {
	bool used;
	int sock;
};

static struct agent_net net_table[NET_SLOTS];
K_MUTEX_DEFINE(agent_port_net_lock);

#if defined(CONFIG_NET_SOCKETS_SOCKOPT_TLS)
static bool net_ca_registered;
static sec_tag_t net_ca_tags[AGENT_CA_BUNDLE_COUNT];
#endif

static bool net_cancelled(const struct agent_cancel *cancel)
{
	return cancel != NULL && agent_cancel_is_raised(cancel);
}

static int64_t net_deadline(uint32_t timeout_ms)
{
	return agent_uptime_ms() + (int64_t)timeout_ms;
}

/* 0 when @p sock is ready (or has an error the next call reports), else a negative errno. */
static int net_wait(int sock, short events, int64_t deadline_ms,
		    const struct agent_cancel *cancel)
{
	for (;;) {
		struct zsock_pollfd pfd = {.fd = sock, .events = events};
		int64_t left_ms;
		int n;

		if (net_cancelled(cancel)) {
			return -ECANCELED;
		}
		left_ms = deadline_ms - agent_uptime_ms();
		if (left_ms <= 0) {
			return -ETIMEDOUT;
		}
		n = zsock_poll(&pfd, 1, left_ms < NET_SLICE_MS ? (int)left_ms : NET_SLICE_MS);
		if (n > 0) {
			return 0;
		}
		if (n < 0 && errno != EINTR) {
			return -errno;
		}
	}
}

static bool net_valid(const struct agent_net *net)
{
	return net != NULL && net >= net_table && net < net_table + NET_SLOTS && net->used;
}

static struct agent_net *net_claim(void)
{
	struct agent_net *found = NULL;

	k_mutex_lock(&agent_port_net_lock, K_FOREVER);
	for (size_t i = 0; i < NET_SLOTS; i++) {
		if (!net_table[i].used) {
			found = &net_table[i];
			found->used = true;
			found->sock = -1;
			break;
		}
	}
	k_mutex_unlock(&agent_port_net_lock);
	return found;
}

static void net_release(struct agent_net *net)
{
	k_mutex_lock(&agent_port_net_lock, K_FOREVER);
	net->used = false;
	k_mutex_unlock(&agent_port_net_lock);
}

#if defined(CONFIG_NET_SOCKETS_SOCKOPT_TLS)
/* Register the bundle's roots once. The DER arrays are static, so no copy is needed. */
static int net_ca_register(void)
{
	int err = 0;

	k_mutex_lock(&agent_port_net_lock, K_FOREVER);
	for (size_t i = 0; !net_ca_registered && i < agent_ca_bundle_count; i++) {
		net_ca_tags[i] = (sec_tag_t)(NET_CA_TAG_BASE + (int)i);
		err = tls_credential_add(net_ca_tags[i], TLS_CREDENTIAL_CA_CERTIFICATE,
					 agent_ca_bundle[i].der, agent_ca_bundle[i].der_bytes);
		/* -EEXIST: registered by an earlier attempt that failed on a later root. */
		if (err == -EEXIST) {
			err = 0;
		}
		if (err != 0) {
			break;
		}
	}
	if (err == 0) {
		net_ca_registered = true;
	}
	k_mutex_unlock(&agent_port_net_lock);
	return err;
}

#if defined(CONFIG_NET_SOCKETS_TLS_CERT_VERIFY_CALLBACK)
/*
 * Why a handshake failed. Zephyr's TLS sockets report every handshake failure as
 * -ECONNABORTED; the port contract says -EACCES when the server's certificate is not trusted
 * (agent_port.h), which the simulator's port can tell. So each TLS socket gets a
 * verification callback (mbedtls_ssl_conf_verify(), through TLS_CERT_VERIFY_CALLBACK): Mbed TLS
 * calls it for every certificate of the chain with the flags of its own checks (chain, name),
 * and it only collects them; returning 0 leaves the flags, so the verification still fails
 * as before. The connect runs in the caller's thread, so one word per connection slot is
 * enough. The certificate type stays opaque here: Mbed TLS's x509_crt.h is not needed.
 */
struct mbedtls_x509_crt;
static uint32_t net_verify_flags[NET_SLOTS];

static int net_verify_cb(void *ctx, struct mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	uint32_t *seen = ctx;

	(void)crt;
	(void)depth;
	*seen |= *flags;
	return 0;
}
#endif

static int net_tls_setup(int sock, const char *host, uint32_t *verify_flags)
{
	int verify = ZSOCK_TLS_PEER_VERIFY_REQUIRED;
	int nocopy = ZSOCK_TLS_CERT_NOCOPY_OPTIONAL;

#if defined(CONFIG_NET_SOCKETS_TLS_CERT_VERIFY_CALLBACK)
	struct tls_cert_verify_cb cb = {.cb = (void *)net_verify_cb, .ctx = verify_flags};

	*verify_flags = 0;
	if (zsock_setsockopt(sock, ZSOCK_SOL_TLS, ZSOCK_TLS_CERT_VERIFY_CALLBACK, &cb,
			     sizeof(cb)) != 0) {
		return -errno;
	}
#else
	(void)verify_flags;
#endif
	if (zsock_setsockopt(sock, ZSOCK_SOL_TLS, ZSOCK_TLS_SEC_TAG_LIST, net_ca_tags,
			     sizeof(net_ca_tags)) != 0 ||
	    zsock_setsockopt(sock, ZSOCK_SOL_TLS, ZSOCK_TLS_PEER_VERIFY, &verify,
			     sizeof(verify)) != 0 ||
	    zsock_setsockopt(sock, ZSOCK_SOL_TLS, ZSOCK_TLS_CERT_NOCOPY, &nocopy,
			     sizeof(nocopy)) != 0 ||
	    zsock_setsockopt(sock, ZSOCK_SOL_TLS, ZSOCK_TLS_HOSTNAME, host, strlen(host) + 1) !=
		    0) {
		return -errno;
	}
	return 0;
}
#endif /* CONFIG_NET_SOCKETS_SOCKOPT_TLS */

/* "0".."65535" into @p out (at least 6 bytes). */
static void net_port_string(uint16_t port, char *out)
{
	char digits[5];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + port % 10);
		port /= 10;
	} while (port != 0);
	while (n > 0) {
		*out++ = digits[--n];
	}
	*out = '\0';
}

#if defined(CONFIG_ARCH_POSIX)
/*
 * native_sim: the deepest stack a connect (with TLS, the handshake runs inside zsock_connect())
 * and a name resolution took on the worker, per kind (zephyr_port.h). Host ABI figures, read by
 * the `port_measure` shell command (port_measure.c) for tests/e2e/test_firmware_tls_stacks.py.
 */
static size_t net_connect_stack_entry[ZEPHYR_NET_STACK_KINDS];
static size_t net_connect_stack_own[ZEPHYR_NET_STACK_KINDS];

static void net_connect_stack_note(size_t kind, uintptr_t mark)
{
	size_t entry;
	size_t own;

	zephyr_stack_depth(mark, &entry, &own);
	if (entry > net_connect_stack_entry[kind]) {
		net_connect_stack_entry[kind] = entry;
	}
	if (own > net_connect_stack_own[kind]) {
		net_connect_stack_own[kind] = own;
	}
}

void zephyr_net_connect_stack(size_t entry[ZEPHYR_NET_STACK_KINDS], size_t own[ZEPHYR_NET_STACK_KINDS])
{
	for (size_t i = 0; i < ZEPHYR_NET_STACK_KINDS; i++) {
		entry[i] = net_connect_stack_entry[i];
		own[i] = net_connect_stack_own[i];
	}
}
#endif

static int net_connect_any(struct agent_net *net, const struct zsock_addrinfo *res, bool tls,
			   const char *host, int64_t deadline_ms,
			   const struct agent_cancel *cancel)
{
	int err = -EHOSTUNREACH;
#if defined(CONFIG_NET_SOCKETS_TLS_CERT_VERIFY_CALLBACK)
	uint32_t *verify_flags = &net_verify_flags[net - net_table];
#elif defined(CONFIG_NET_SOCKETS_SOCKOPT_TLS)
	uint32_t *verify_flags = NULL;
#endif

	for (const struct zsock_addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		int sock = zsock_socket(ai->ai_family, NET_SOCK_STREAM,
					tls ? NET_IPPROTO_TLS_1_2 : NET_IPPROTO_TCP);

		if (sock < 0) {
			err = -errno;
			continue;
		}
#if defined(CONFIG_NET_SOCKETS_SOCKOPT_TLS)
		if (tls) {
			err = net_tls_setup(sock, host, verify_flags);
			if (err != 0) {
				(void)zsock_close(sock);
				return err;
			}
		}
#else
		(void)host;
#endif
		/* Blocking: Zephyr bounds the TCP connect and the TLS handshake itself. */
#if defined(CONFIG_ARCH_POSIX)
		uintptr_t mark = zephyr_stack_mark();
		int rc = zsock_connect(sock, ai->ai_addr, ai->ai_addrlen);
		int connect_errno = errno;

		net_connect_stack_note(tls ? ZEPHYR_NET_STACK_TLS : ZEPHYR_NET_STACK_TCP, mark);
		errno = connect_errno;
#else
		int rc = zsock_connect(sock, ai->ai_addr, ai->ai_addrlen);
#endif
		if (rc == 0) {
			net->sock = sock;
			return 0;
		}
		err = -errno;
		(void)zsock_close(sock);
#if defined(CONFIG_NET_SOCKETS_TLS_CERT_VERIFY_CALLBACK)
		if (tls && err == -ECONNABORTED && *verify_flags != 0) {
			return -EACCES; /* the chain or the name did not verify */
		}
#endif
		if (net_cancelled(cancel)) {
			return -ECANCELED;
		}
		if (agent_uptime_ms() >= deadline_ms) {
			return -ETIMEDOUT;
		}
	}
	return err;
}

int agent_net_connect(struct agent_net **out, const char *host, uint16_t port, bool tls,
		      uint32_t timeout_ms, const struct agent_cancel *cancel)
{
	int64_t deadline_ms = net_deadline(timeout_ms);
	struct zsock_addrinfo hints;
	struct zsock_addrinfo *res = NULL;
	struct agent_net *net;
	char service[6];
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
#if defined(CONFIG_NET_SOCKETS_SOCKOPT_TLS)
		err = net_ca_register();
		if (err != 0) {
			return err;
		}
#else
		return -EPROTONOSUPPORT;
#endif
	}
	net = net_claim();
	if (net == NULL) {
		return -ENOMEM;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = NET_SOCK_STREAM;
	net_port_string(port, service);
#if defined(CONFIG_ARCH_POSIX)
	uintptr_t mark = zephyr_stack_mark();
	int found = zsock_getaddrinfo(host, service, &hints, &res);

	net_connect_stack_note(ZEPHYR_NET_STACK_RESOLVE, mark);
#else
	int found = zsock_getaddrinfo(host, service, &hints, &res);
#endif
	if (found != 0) {
		net_release(net);
		return -EHOSTUNREACH;
	}
	if (net_cancelled(cancel)) {
		err = -ECANCELED;
	} else {
		err = net_connect_any(net, res, tls, host, deadline_ms, cancel);
	}
	zsock_freeaddrinfo(res);
	if (err == 0 && net_cancelled(cancel)) {
		(void)zsock_close(net->sock);
		err = -ECANCELED;
	}
	if (err != 0) {
		net_release(net);
		return err;
	}
	*out = net;
	return 0;
}

int agent_net_send(struct agent_net *net, const void *data, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel)
{
	const uint8_t *p = data;
	int64_t deadline_ms = net_deadline(timeout_ms);

	if (!net_valid(net) || (data == NULL && len > 0)) {
		return -EINVAL;
	}
	while (len > 0) {
		ssize_t n;
		int err;

		if (net_cancelled(cancel)) {
			return -ECANCELED;
		}
		n = zsock_send(net->sock, p, len, ZSOCK_MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			/* The timeout bounds a stall, not the whole transfer. */
			deadline_ms = net_deadline(timeout_ms);
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			return -errno;
		}
		err = net_wait(net->sock, ZSOCK_POLLOUT, deadline_ms, cancel);
		if (err != 0) {
			return err;
		}
	}
	return 0;
}

int agent_net_recv(struct agent_net *net, void *buf, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel)
{
	int64_t deadline_ms = net_deadline(timeout_ms);

	if (!net_valid(net) || buf == NULL || len == 0) {
		return -EINVAL;
	}
	if (len > INT32_MAX) {
		len = INT32_MAX;
	}
	for (;;) {
		ssize_t n;
		int err;

		if (net_cancelled(cancel)) {
			return -ECANCELED;
		}
		/* Try first: TLS may hold decrypted bytes that poll() has no reason to report. */
		n = zsock_recv(net->sock, buf, len, ZSOCK_MSG_DONTWAIT);
		if (n >= 0) {
			return (int)n;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			return -errno;
		}
		err = net_wait(net->sock, ZSOCK_POLLIN, deadline_ms, cancel);
		if (err != 0) {
			return err;
		}
	}
}

void agent_net_close(struct agent_net *net)
{
	if (!net_valid(net)) {
		return;
	}
	(void)zsock_close(net->sock);
	net->sock = -1;
	net_release(net);
}

#else /* !CONFIG_NET_SOCKETS */

/*
 * An image built without networking (the ESP32-S3 until its Wi-Fi is configured): there is
 * no network to reach, and no connection can exist.
 */
int agent_net_connect(struct agent_net **out, const char *host, uint16_t port, bool tls,
		      uint32_t timeout_ms, const struct agent_cancel *cancel)
{
	(void)host;
	(void)port;
	(void)tls;
	(void)timeout_ms;
	(void)cancel;
	if (out != NULL) {
		*out = NULL;
	}
	return -ENETDOWN;
}

int agent_net_send(struct agent_net *net, const void *data, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel)
{
	(void)net;
	(void)data;
	(void)len;
	(void)timeout_ms;
	(void)cancel;
	return -EINVAL;
}

int agent_net_recv(struct agent_net *net, void *buf, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel)
{
	(void)net;
	(void)buf;
	(void)len;
	(void)timeout_ms;
	(void)cancel;
	return -EINVAL;
}

void agent_net_close(struct agent_net *net)
{
	(void)net;
}

#endif /* CONFIG_NET_SOCKETS */
