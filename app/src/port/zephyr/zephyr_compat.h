/*
 * Names of Zephyr's API that differ between the versions the port supports (docs/zephyr-port.md,
 * "Supported versions"): 4.3 and 4.4. The port's sources use the 4.4 spelling; on an older
 * tree this header maps each name to the older one. Chosen by the tree's version, so a 4.4
 * tree keeps its own definitions; each mapping is also guarded so a tree that already has
 * the name wins.
 *
 * Sockets: Zephyr 4.4 gave every socket constant a prefixed name (NET_SOCK_*, NET_IPPROTO_*,
 * ZSOCK_SOL_TLS, ZSOCK_TLS_*) that exists whether or not the POSIX names are enabled; 4.3 has
 * only the unprefixed ones, from <zephyr/net/socket.h> and <zephyr/net/net_ip.h>. Include
 * this after <zephyr/net/socket.h>.
 */
#ifndef ZEPHYR_COMPAT_H
#define ZEPHYR_COMPAT_H

#include <zephyr/version.h>

#if ZEPHYR_VERSION_CODE < ZEPHYR_VERSION(4, 4, 0)

#ifndef NET_SOCK_STREAM
#define NET_SOCK_STREAM SOCK_STREAM
#endif
#ifndef NET_IPPROTO_TCP
#define NET_IPPROTO_TCP IPPROTO_TCP
#endif
#ifndef NET_IPPROTO_TLS_1_2
#define NET_IPPROTO_TLS_1_2 IPPROTO_TLS_1_2
#endif
#ifndef ZSOCK_SOL_TLS
#define ZSOCK_SOL_TLS SOL_TLS
#endif
#ifndef ZSOCK_TLS_SEC_TAG_LIST
#define ZSOCK_TLS_SEC_TAG_LIST TLS_SEC_TAG_LIST
#endif
#ifndef ZSOCK_TLS_HOSTNAME
#define ZSOCK_TLS_HOSTNAME TLS_HOSTNAME
#endif
#ifndef ZSOCK_TLS_PEER_VERIFY
#define ZSOCK_TLS_PEER_VERIFY TLS_PEER_VERIFY
#endif
#ifndef ZSOCK_TLS_PEER_VERIFY_REQUIRED
#define ZSOCK_TLS_PEER_VERIFY_REQUIRED TLS_PEER_VERIFY_REQUIRED
#endif
#ifndef ZSOCK_TLS_CERT_NOCOPY
#define ZSOCK_TLS_CERT_NOCOPY TLS_CERT_NOCOPY
#endif
#ifndef ZSOCK_TLS_CERT_VERIFY_CALLBACK
#define ZSOCK_TLS_CERT_VERIFY_CALLBACK TLS_CERT_VERIFY_CALLBACK
#endif
#ifndef ZSOCK_TLS_CERT_NOCOPY_OPTIONAL
#define ZSOCK_TLS_CERT_NOCOPY_OPTIONAL TLS_CERT_NOCOPY_OPTIONAL
#endif

#endif /* Zephyr < 4.4 */

#endif /* ZEPHYR_COMPAT_H */
