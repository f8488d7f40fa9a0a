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

#endif /* AGENT_ZEPHYR_PORT_H */
