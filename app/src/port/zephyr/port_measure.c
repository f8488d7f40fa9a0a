/*
 * `port_measure`: figures of the port that only a measurement needs, one line each, read by
 * tests/e2e/test_firmware_tls_stacks.py (docs/zephyr-port.md, "Measured stacks and heaps").
 *
 *   tls heap: peak N B in M blocks, now N B in M blocks, block header H B, size S B
 * Mbed TLS's heap (CONFIG_MBEDTLS_ENABLE_HEAP: a static array of CONFIG_MBEDTLS_HEAP_SIZE
 * bytes that Zephyr's modules/mbedtls/zephyr_init.c hands to mbedtls_memory_buffer_alloc_init()
 * at boot). Its counters exist with CONFIG_MBEDTLS_MEMORY_DEBUG, which the Twister scenario
 * agent.e2e.tls sets and the product's overlay-tls.conf does not. N counts the bytes handed out
 * (each request rounded up to the allocator's alignment), M the blocks; each block also takes a
 * header of H bytes from the array. The two peaks may come from different moments, so
 * N + M * H bounds the most of the array in use at once.
 *
 *   connect stack: tcp N B (C B in the call), tls N B (C B in the call)
 * native_sim: the deepest the worker's host stack went during a connect, below the worker's
 * entry (N) and below the frame that called zsock_connect() (C, the connect's own use; net.c,
 * zephyr_stack_mark() in thread.c); with TLS the handshake runs in the connect. Host ABI
 * figures (x86-64 or i386 frames, the host C library's calls through NSOS included), 0 for a
 * kind not used yet.
 *
 *   resolve stack: N B (C B in the call)
 * The same for zsock_getaddrinfo(), which NSOS hands to the host C library's getaddrinfo().
 */
#include <stddef.h>

#include <zephyr/shell/shell.h>

#include "zephyr_port.h"

#if defined(CONFIG_MBEDTLS_MEMORY_DEBUG) && defined(CONFIG_MBEDTLS_ENABLE_HEAP)
#include <mbedtls/memory_buffer_alloc.h>

/* The allocator's private header (struct _memory_header, library/memory_buffer_alloc.c): four
 * size_t (two magics, size, alloc) and four pointers, without MBEDTLS_MEMORY_BACKTRACE, which
 * Zephyr's configuration never sets. */
#define TLS_HEAP_HEADER_BYTES (4u * sizeof(size_t) + 4u * sizeof(void *))

static void print_tls_heap(const struct shell *sh)
{
	size_t peak_bytes = 0;
	size_t peak_blocks = 0;
	size_t now_bytes = 0;
	size_t now_blocks = 0;

	mbedtls_memory_buffer_alloc_max_get(&peak_bytes, &peak_blocks);
	mbedtls_memory_buffer_alloc_cur_get(&now_bytes, &now_blocks);
	shell_print(sh,
		    "tls heap: peak %zu B in %zu blocks, now %zu B in %zu blocks, block header %zu B, "
		    "size %u B",
		    peak_bytes, peak_blocks, now_bytes, now_blocks, (size_t)TLS_HEAP_HEADER_BYTES,
		    (unsigned int)CONFIG_MBEDTLS_HEAP_SIZE);
}
#endif

#if defined(CONFIG_ARCH_POSIX) || defined(CONFIG_MBEDTLS_MEMORY_DEBUG)
static int cmd_port_measure(const struct shell *sh, size_t argc, char **argv)
{
	(void)argc;
	(void)argv;
#if defined(CONFIG_MBEDTLS_MEMORY_DEBUG) && defined(CONFIG_MBEDTLS_ENABLE_HEAP)
	print_tls_heap(sh);
#endif
#if defined(CONFIG_ARCH_POSIX) && defined(CONFIG_NET_SOCKETS)
	size_t entry[ZEPHYR_NET_STACK_KINDS];
	size_t own[ZEPHYR_NET_STACK_KINDS];

	zephyr_net_connect_stack(entry, own);
	shell_print(sh, "connect stack: tcp %zu B (%zu B in the call), tls %zu B (%zu B in the call)",
		    entry[ZEPHYR_NET_STACK_TCP], own[ZEPHYR_NET_STACK_TCP], entry[ZEPHYR_NET_STACK_TLS],
		    own[ZEPHYR_NET_STACK_TLS]);
	shell_print(sh, "resolve stack: %zu B (%zu B in the call)", entry[ZEPHYR_NET_STACK_RESOLVE],
		    own[ZEPHYR_NET_STACK_RESOLVE]);
#endif
	return 0;
}

SHELL_CMD_REGISTER(port_measure, NULL, "Measured figures of the port (test builds).",
		   cmd_port_measure);
#endif
