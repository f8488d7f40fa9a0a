/*
 * The simulator's heaps (agent_port.h, "Heaps"). The firmware's internal RAM has a run-time
 * heap from which its system allocates; the simulator simulates one: an arena of
 * POSIX_HEAP_INTERNAL_BYTES handed out first-fit in units of POSIX_HEAP_UNIT_BYTES. What is
 * allocated from it is real: the TLS library's memory for each connection (OpenSSL's
 * allocations while the port works on a connection, net.c), as a device's TLS stack
 * allocates from its internal RAM. Its figures are computed from the arena as it is: free
 * bytes, the longest run of free units, allocated bytes and their high-water mark. The
 * simulator has no PSRAM heap (the firmware images built here have none either): -ENODEV.
 *
 * Under AddressSanitizer the arena is poisoned but for the blocks handed out (each up to the
 * bytes asked for), so a read or write past a block or into a freed one is reported as it
 * would be for malloc(); a block handed out is always unpoisoned first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "agent_port.h"
#include "posix_port.h"

#include "posix_asan.h"

#define HEAP_POISON(addr, size)	  POSIX_POISON((addr), (size))
#define HEAP_UNPOISON(addr, size) POSIX_UNPOISON((addr), (size))

#define HEAP_UNITS (POSIX_HEAP_INTERNAL_BYTES / POSIX_HEAP_UNIT_BYTES)

_Static_assert(POSIX_HEAP_INTERNAL_BYTES % POSIX_HEAP_UNIT_BYTES == 0,
	       "the arena is a whole number of units");
_Static_assert(HEAP_UNITS <= UINT16_MAX, "a run length is kept in 16 bits");
_Static_assert(POSIX_HEAP_INTERNAL_BYTES <= UINT32_MAX, "a block's size is kept in 32 bits");

static uint8_t heap_arena[POSIX_HEAP_INTERNAL_BYTES] __attribute__((aligned(16)));
/* Per unit: the length in units of the block that starts there, 0 when none does. */
static uint16_t heap_run[HEAP_UNITS];
/* Per unit: whether it belongs to an allocated block. */
static bool heap_used[HEAP_UNITS];
/* Per unit that starts a block: the bytes asked for (what realloc copies, what is unpoisoned). */
static uint32_t heap_asked[HEAP_UNITS];
/* The whole arena was poisoned once (ASan): before the first block is handed out. */
static bool heap_poisoned;
static size_t heap_allocated;
static size_t heap_max_allocated;
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;

static bool heap_class_ok(enum agent_mem_class mem_class)
{
	return mem_class == AGENT_MEM_INTERNAL;
}

void *posix_heap_alloc(enum agent_mem_class mem_class, size_t bytes)
{
	size_t units = (bytes + POSIX_HEAP_UNIT_BYTES - 1u) / POSIX_HEAP_UNIT_BYTES;
	void *block = NULL;
	size_t start = 0;
	size_t run = 0;

	if (!heap_class_ok(mem_class) || bytes == 0u || units > HEAP_UNITS) {
		return NULL;
	}
	pthread_mutex_lock(&heap_lock);
	if (!heap_poisoned) {
		HEAP_POISON(heap_arena, sizeof(heap_arena));
		heap_poisoned = true;
	}
	for (size_t i = 0; i < HEAP_UNITS;) {
		if (heap_used[i]) {
			i += heap_run[i];
			run = 0;
			continue;
		}
		if (run == 0u) {
			start = i;
		}
		if (++run == units) {
			for (size_t u = start; u < start + units; u++) {
				heap_used[u] = true;
			}
			heap_run[start] = (uint16_t)units;
			heap_asked[start] = (uint32_t)bytes;
			heap_allocated += units * POSIX_HEAP_UNIT_BYTES;
			if (heap_allocated > heap_max_allocated) {
				heap_max_allocated = heap_allocated;
			}
			block = &heap_arena[start * POSIX_HEAP_UNIT_BYTES];
			HEAP_UNPOISON(block, bytes);
			break;
		}
		i++;
	}
	pthread_mutex_unlock(&heap_lock);
	return block;
}

int posix_heap_free(void *block)
{
	uintptr_t addr = (uintptr_t)block;
	uintptr_t first = (uintptr_t)heap_arena;
	size_t unit;
	int err = 0;

	if (block == NULL) {
		return 0;
	}
	if (addr < first || addr >= first + sizeof(heap_arena) ||
	    (addr - first) % POSIX_HEAP_UNIT_BYTES != 0u) {
		return -EINVAL;
	}
	unit = (addr - first) / POSIX_HEAP_UNIT_BYTES;
	pthread_mutex_lock(&heap_lock);
	if (heap_run[unit] == 0u) {
		err = -EINVAL; /* not the start of an allocated block: freed twice or foreign */
	} else {
		for (size_t u = unit; u < unit + heap_run[unit]; u++) {
			heap_used[u] = false;
		}
		heap_allocated -= (size_t)heap_run[unit] * POSIX_HEAP_UNIT_BYTES;
		HEAP_POISON(block, (size_t)heap_run[unit] * POSIX_HEAP_UNIT_BYTES);
		heap_run[unit] = 0;
		heap_asked[unit] = 0;
	}
	pthread_mutex_unlock(&heap_lock);
	return err;
}

static size_t heap_unit_of(const void *block)
{
	return (size_t)((const uint8_t *)block - heap_arena) / POSIX_HEAP_UNIT_BYTES;
}

bool posix_heap_owns(const void *block)
{
	uintptr_t addr = (uintptr_t)block;
	uintptr_t first = (uintptr_t)heap_arena;

	return block != NULL && addr >= first && addr < first + sizeof(heap_arena);
}

size_t posix_heap_block_bytes(const void *block)
{
	size_t bytes = 0;
	size_t unit;

	if (!posix_heap_owns(block) ||
	    ((uintptr_t)block - (uintptr_t)heap_arena) % POSIX_HEAP_UNIT_BYTES != 0u) {
		return 0;
	}
	unit = heap_unit_of(block);
	pthread_mutex_lock(&heap_lock);
	if (heap_run[unit] != 0u) {
		bytes = heap_asked[unit];
	}
	pthread_mutex_unlock(&heap_lock);
	return bytes;
}

void posix_heap_reset(void)
{
	pthread_mutex_lock(&heap_lock);
	memset(heap_run, 0, sizeof(heap_run));
	memset(heap_used, 0, sizeof(heap_used));
	memset(heap_asked, 0, sizeof(heap_asked));
	HEAP_POISON(heap_arena, sizeof(heap_arena));
	heap_poisoned = true;
	heap_allocated = 0;
	heap_max_allocated = 0;
	pthread_mutex_unlock(&heap_lock);
}

int agent_heap_stats(enum agent_mem_class mem_class, struct agent_heap_stats *out)
{
	size_t run = 0;
	size_t longest = 0;

	if (out == NULL || (unsigned int)mem_class >= AGENT_MEM_CLASS_COUNT) {
		return -EINVAL;
	}
	if (!heap_class_ok(mem_class)) {
		return -ENODEV;
	}
	pthread_mutex_lock(&heap_lock);
	for (size_t i = 0; i < HEAP_UNITS; i++) {
		run = heap_used[i] ? 0u : run + 1u;
		if (run > longest) {
			longest = run;
		}
	}
	out->total_bytes = sizeof(heap_arena);
	out->allocated_bytes = heap_allocated;
	out->free_bytes = sizeof(heap_arena) - heap_allocated;
	out->largest_free_bytes = longest * POSIX_HEAP_UNIT_BYTES;
	out->max_allocated_bytes = heap_max_allocated;
	pthread_mutex_unlock(&heap_lock);
	return 0;
}

int agent_heap_free(enum agent_mem_class mem_class, size_t *free_bytes)
{
	if (free_bytes == NULL || (unsigned int)mem_class >= AGENT_MEM_CLASS_COUNT) {
		return -EINVAL;
	}
	if (!heap_class_ok(mem_class)) {
		return -ENODEV;
	}
	pthread_mutex_lock(&heap_lock);
	*free_bytes = sizeof(heap_arena) - heap_allocated;
	pthread_mutex_unlock(&heap_lock);
	return 0;
}
