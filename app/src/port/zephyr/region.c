/*
 * Region heaps of the Zephyr port (agent_port.h, "Region heaps"; docs/zephyr-port.md, "Region
 * heaps"): Zephyr's sys_heap over memory the caller provides, one record of a static table
 * per region, each with a k_spinlock held around every sys_heap call (sys_heap has no lock of
 * its own; k_heap does the same).
 *
 * Blocks are 8-byte aligned: sys_heap_aligned_alloc()/sys_heap_aligned_realloc() with 8. On a
 * big heap (64-bit targets, or more than 32767 units on 32-bit ones) a chunk header is 8 bytes
 * and that is a plain allocation; on a small heap the header is 4 bytes and sys_heap pads.
 *
 * The figures: sys_heap does not keep the bytes asked for, so used_bytes and its peak count
 * each block's usable size (sys_heap_usable_size(): what was asked rounded up to a multiple
 * of 8, as the blocks are 8-byte aligned chunks). largest_free_bytes comes from a
 * walk over the chunks (zephyr_heap_walk(), heap.c): the largest free chunk less its header
 * and, on a small heap, less the 4 bytes of padding an 8-byte aligned allocation takes. One
 * caveat: sys_heap looks at only CONFIG_SYS_HEAP_ALLOC_LOOPS free chunks of the size class
 * it starts in, so when more free chunks share the largest one's class an allocation of
 * largest_free_bytes can still be refused. The walk holds the record's lock for every chunk,
 * so stats are for occasional reading, not for every allocation.
 */
#include <errno.h>
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/sys_heap.h>

#include "agent_port.h"
#include "zephyr_port.h"

#define REGION_ALIGN	 8U
#define REGION_MIN_BYTES 256U

struct agent_region {
	struct k_spinlock lock;
	bool in_use;
	const char *name;
	struct sys_heap heap;
	size_t total_bytes;
	size_t used_bytes;
	size_t peak_used_bytes;
	uint32_t blocks;
	uint32_t alloc_failures;
};

static struct agent_region region_table[AGENT_REGIONS_MAX];
static struct k_spinlock region_table_lock;

/* What sys_heap_init() can hold: a 15-bit chunk count on small-only heaps, 31-bit otherwise. */
static bool region_size_ok(size_t bytes)
{
	size_t max_units = IS_ENABLED(CONFIG_SYS_HEAP_SMALL_ONLY) ? 0x7fffU : 0x7fffffffU;

	return bytes >= REGION_MIN_BYTES && bytes / REGION_ALIGN <= max_units;
}

int agent_region_init(struct agent_region **out, const char *name, void *mem, size_t bytes)
{
	struct agent_region *r = NULL;
	k_spinlock_key_t key;

	if (out == NULL || mem == NULL || (uintptr_t)mem % REGION_ALIGN != 0U ||
	    !region_size_ok(bytes)) {
		return -EINVAL;
	}
	bytes -= bytes % REGION_ALIGN;
	key = k_spin_lock(&region_table_lock);
	for (size_t i = 0; i < AGENT_REGIONS_MAX && r == NULL; i++) {
		if (!region_table[i].in_use) {
			r = &region_table[i];
			r->in_use = true;
		}
	}
	k_spin_unlock(&region_table_lock, key);
	if (r == NULL) {
		return -ENOMEM;
	}
	/* The record is taken: nobody else reaches it until *out is returned. */
	sys_heap_init(&r->heap, mem, bytes);
	r->name = name;
	r->total_bytes = bytes;
	r->used_bytes = 0;
	r->peak_used_bytes = 0;
	r->blocks = 0;
	r->alloc_failures = 0;
	*out = r;
	return 0;
}

int agent_region_deinit(struct agent_region *region)
{
	k_spinlock_key_t key;
	int err = 0;

	if (region == NULL) {
		return -EINVAL;
	}
	key = k_spin_lock(&region->lock);
	if (!region->in_use) {
		err = -EINVAL;
	} else if (region->blocks != 0U) {
		err = -EBUSY;
	} else {
		region->in_use = false;
	}
	k_spin_unlock(&region->lock, key);
	return err;
}

static void used_add(struct agent_region *r, size_t bytes)
{
	r->used_bytes += bytes;
	if (r->used_bytes > r->peak_used_bytes) {
		r->peak_used_bytes = r->used_bytes;
	}
}

void *agent_region_alloc(struct agent_region *region, size_t bytes)
{
	k_spinlock_key_t key;
	void *block = NULL;

	if (region == NULL || bytes == 0U) {
		return NULL;
	}
	key = k_spin_lock(&region->lock);
	if (region->in_use) {
		block = sys_heap_aligned_alloc(&region->heap, REGION_ALIGN, bytes);
		if (block != NULL) {
			used_add(region, sys_heap_usable_size(&region->heap, block));
			region->blocks++;
		} else {
			region->alloc_failures++;
		}
	}
	k_spin_unlock(&region->lock, key);
	return block;
}

void *agent_region_realloc(struct agent_region *region, void *ptr, size_t bytes)
{
	k_spinlock_key_t key;
	void *block = NULL;
	size_t old;

	if (ptr == NULL) {
		return agent_region_alloc(region, bytes);
	}
	if (bytes == 0U) {
		agent_region_free(region, ptr);
		return NULL;
	}
	if (region == NULL) {
		return NULL;
	}
	key = k_spin_lock(&region->lock);
	if (region->in_use) {
		old = sys_heap_usable_size(&region->heap, ptr);
		block = sys_heap_aligned_realloc(&region->heap, ptr, REGION_ALIGN, bytes);
		if (block != NULL) {
			region->used_bytes -= old;
			used_add(region, sys_heap_usable_size(&region->heap, block));
		} else {
			region->alloc_failures++;
		}
	}
	k_spin_unlock(&region->lock, key);
	return block;
}

void agent_region_free(struct agent_region *region, void *ptr)
{
	k_spinlock_key_t key;

	if (region == NULL || ptr == NULL) {
		return;
	}
	key = k_spin_lock(&region->lock);
	if (region->in_use) {
		region->used_bytes -= sys_heap_usable_size(&region->heap, ptr);
		region->blocks--;
		sys_heap_free(&region->heap, ptr);
	}
	k_spin_unlock(&region->lock, key);
}

int agent_region_stats(struct agent_region *region, struct agent_region_stats *out)
{
	struct zephyr_heap_walk walk;
	k_spinlock_key_t key;
	size_t pad;
	int err = 0;

	if (region == NULL || out == NULL) {
		return -EINVAL;
	}
	key = k_spin_lock(&region->lock);
	if (!region->in_use) {
		err = -EINVAL;
	} else {
		zephyr_heap_walk(&region->heap, &walk);
		pad = walk.header_bytes < REGION_ALIGN ? REGION_ALIGN - walk.header_bytes : 0U;
		out->name = region->name;
		out->total_bytes = region->total_bytes;
		out->used_bytes = region->used_bytes;
		out->peak_used_bytes = region->peak_used_bytes;
		out->largest_free_bytes =
			walk.largest_free_bytes > pad ? walk.largest_free_bytes - pad : 0U;
		out->blocks = region->blocks;
		out->alloc_failures = region->alloc_failures;
	}
	k_spin_unlock(&region->lock, key);
	return err;
}

void agent_region_reset_peak(struct agent_region *region)
{
	k_spinlock_key_t key;

	if (region == NULL) {
		return;
	}
	key = k_spin_lock(&region->lock);
	region->peak_used_bytes = region->used_bytes;
	k_spin_unlock(&region->lock, key);
}
