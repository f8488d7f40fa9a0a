/*
 * Heaps of the Zephyr port (agent_port.h, "Heaps"): internal RAM's run-time heap is Zephyr's
 * system heap (_system_heap, what k_malloc() uses), present when K_HEAP_MEM_POOL_SIZE > 0
 * (prj.conf gives every image one). PSRAM has no heap in the images built here: -ENODEV.
 *
 * Zephyr 4.3 has no public call for the largest free block, and its runtime statistics
 * (CONFIG_SYS_HEAP_RUNTIME_STATS) need lib/heap/heap_stats.c, which the trimmed CI tree lacks.
 * So every figure comes from one walk over the heap's chunks under the heap's lock, with the
 * chunk layout of lib/heap/heap.h (the same walk as its get_alloc_info()): allocated bytes
 * are the used chunks, free bytes the free ones, the largest free block the largest free
 * chunk less its header. The high-water mark is the most this port's walks have seen
 * allocated. The walk holds the heap's lock (interrupts off) for every chunk of the heap, so
 * the agent's stream samples are rate-limited (agent_mem.h, AGENT_MEM_SAMPLE_INTERVAL_MS).
 * The walk itself, zephyr_heap_walk(), serves the region heaps too (region.c).
 * docs/zephyr-port.md, "Heaps".
 */
#include <errno.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/sys_heap.h>

#include "agent_port.h"

#include "heap.h" /* ${ZEPHYR_BASE}/lib/heap, added to the include path by app/CMakeLists.txt */
#include "zephyr_port.h"

BUILD_ASSERT(CHUNK_UNIT == 8U, "lib/heap/heap.h changed its chunk layout: review heap.c");

void zephyr_heap_walk(struct sys_heap *heap, struct zephyr_heap_walk *out)
{
	struct z_heap *h = heap->heap;

	out->used_bytes = 0;
	out->free_bytes = 0;
	out->largest_free_bytes = 0;
	out->header_bytes = chunk_header_bytes(h);
	for (chunkid_t c = right_chunk(h, 0); c < h->end_chunk; c = right_chunk(h, c)) {
		size_t bytes = chunksz_to_bytes(h, chunk_size(h, c));

		if (chunk_used(h, c)) {
			out->used_bytes += bytes;
		} else if (!solo_free_header(h, c)) {
			out->free_bytes += bytes;
			if (bytes - chunk_header_bytes(h) > out->largest_free_bytes) {
				out->largest_free_bytes = bytes - chunk_header_bytes(h);
			}
		}
	}
}

#if K_HEAP_MEM_POOL_SIZE > 0

extern struct k_heap _system_heap;

static size_t heap_max_seen; /* under _system_heap.lock */

static void heap_walk(struct agent_heap_stats *out)
{
	struct zephyr_heap_walk walk;
	k_spinlock_key_t key = k_spin_lock(&_system_heap.lock);

	zephyr_heap_walk(&_system_heap.heap, &walk);
	if (walk.used_bytes > heap_max_seen) {
		heap_max_seen = walk.used_bytes;
	}
	out->allocated_bytes = walk.used_bytes;
	out->free_bytes = walk.free_bytes;
	out->largest_free_bytes = walk.largest_free_bytes;
	out->max_allocated_bytes = heap_max_seen;
	k_spin_unlock(&_system_heap.lock, key);
	out->total_bytes = _system_heap.heap.init_bytes;
}

#endif /* K_HEAP_MEM_POOL_SIZE > 0 */

int agent_heap_stats(enum agent_mem_class mem_class, struct agent_heap_stats *out)
{
	if (out == NULL || (unsigned int)mem_class >= AGENT_MEM_CLASS_COUNT) {
		return -EINVAL;
	}
#if K_HEAP_MEM_POOL_SIZE > 0
	if (mem_class == AGENT_MEM_INTERNAL) {
		heap_walk(out);
		return 0;
	}
#endif
	return -ENODEV;
}

int agent_heap_free(enum agent_mem_class mem_class, size_t *free_bytes)
{
	struct agent_heap_stats stats;
	int err;

	if (free_bytes == NULL) {
		return -EINVAL;
	}
	err = agent_heap_stats(mem_class, &stats);
	if (err == 0) {
		*free_bytes = stats.free_bytes;
	}
	return err;
}
