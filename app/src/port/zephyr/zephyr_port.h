/*
 * Zephyr port internals shared by the files of app/src/port/zephyr/. The portable core
 * never includes this header; it sees only agent_port.h.
 */
#ifndef AGENT_ZEPHYR_PORT_H
#define AGENT_ZEPHYR_PORT_H

#include <zephyr/shell/shell.h>
#include <zephyr/sys/sys_heap.h>

#include "agent_port.h"

/* Fixed table sizes; the POSIX port uses the same numbers (posix_port.h). */
#define ZEPHYR_PORT_MUTEX_SLOTS 16
#define ZEPHYR_PORT_SEM_SLOTS   16
/* Open files and directories at once; keep CONFIG_FS_LITTLEFS_NUM_FILES/DIRS at least this. */
#define ZEPHYR_PORT_FILE_SLOTS  8
#define ZEPHYR_PORT_DIR_SLOTS   4
/* Shell instances that can run `agent` (the console UART, later maybe telnet). */
#define ZEPHYR_PORT_CONSOLE_SLOTS 2
/* Keys agent_settings_foreach() collects in one walk before visiting them. */
#define ZEPHYR_PORT_SETTINGS_FOREACH_MAX 32

/**
 * Start Zephyr's settings subsystem (settings_subsys_init()) and let agent_settings_* use it.
 * Call from main(), after the fstab has mounted "/lfs": the file backend keeps its file there.
 * Until it succeeds, agent_settings_* return -ENODEV.
 */
int zephyr_settings_init(void);

/**
 * The agent console of shell instance @p sh, created on first use and kept for the life of
 * the image (a bypass callback may outlive the command that set it). NULL when every console
 * slot is taken.
 */
struct agent_console *zephyr_console_get(const struct shell *sh);

/* What one walk over a sys_heap's chunks found (heap.c). */
struct zephyr_heap_walk {
	size_t used_bytes;	   /* in used chunks, their headers included */
	size_t free_bytes;	   /* in free chunks, their headers included */
	size_t largest_free_bytes; /* the largest free chunk less its header */
	size_t header_bytes;	   /* a chunk header in this heap: 4 (small heap) or 8 */
};

/**
 * Walk every chunk of @p heap with the chunk layout of ${ZEPHYR_BASE}/lib/heap/heap.h (4.3 has
 * no public call for the largest free block). The caller holds the lock that guards the heap
 * (interrupts are off for the whole walk). Used for the system heap (heap.c) and the region
 * heaps (region.c).
 */
void zephyr_heap_walk(struct sys_heap *heap, struct zephyr_heap_walk *out);

#if defined(CONFIG_ARCH_POSIX)
/*
 * The stack one call takes on native_sim's host stack (thread.c): zephyr_stack_mark() paints
 * below its caller's frame and returns the mark; zephyr_stack_depth(mark, ...) after the call
 * gives the deepest point reached since then, in bytes below the current agent thread's entry
 * (0 on another thread) and below the mark (the call's own use). net.c measures the connect
 * (with TLS, the handshake) so. The thread's own figure keeps what the paint covered.
 */
uintptr_t zephyr_stack_mark(void);
void zephyr_stack_depth(uintptr_t mark, size_t *below_entry, size_t *below_mark);
/* The deepest call of each kind so far (net.c): below the worker's entry (@entry) and the
 * call's own (@own). */
enum { ZEPHYR_NET_STACK_TCP, ZEPHYR_NET_STACK_TLS, ZEPHYR_NET_STACK_RESOLVE, ZEPHYR_NET_STACK_KINDS };
void zephyr_net_connect_stack(size_t entry[ZEPHYR_NET_STACK_KINDS], size_t own[ZEPHYR_NET_STACK_KINDS]);
#endif

#endif /* AGENT_ZEPHYR_PORT_H */
