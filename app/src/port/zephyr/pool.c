/*
 * Memory pools of the Zephyr port: a fixed table of fixed-block pools over caller-provided
 * buffers (static arrays, those that prefer PSRAM marked AGENT_PSRAM_ATTR).
 *
 * The blocks are handed out by the bookkeeping shared with the POSIX port (pool_book.c),
 * under a spinlock, so that the simulator and the firmware give out the same blocks, report
 * the same statistics and catch the same double frees and foreign pointers. A k_mem_slab is
 * deliberately not layered underneath: it would choose blocks of its own, and the books have
 * no way to record a block chosen elsewhere (see docs/zephyr-port.md).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <zephyr/kernel.h>

#include "agent_port.h"
#include "pool_book.h"
#include "zephyr_port.h"

struct agent_pool {
	bool used;
	const char *name;
	enum agent_mem_class mem_class;
	struct agent_pool_book book;
};

static struct agent_pool pool_table[ZEPHYR_PORT_POOL_SLOTS];
/* One lock for the table and every pool: the critical sections are a few bit operations. */
static struct k_spinlock pool_lock;

/* A handle is only trusted when it points at a slot in use, so a stale one fails cleanly. */
static bool pool_is_valid(const struct agent_pool *pool)
{
	uintptr_t addr = (uintptr_t)pool;
	uintptr_t first = (uintptr_t)&pool_table[0];

	if (pool == NULL || addr < first ||
	    addr >= (uintptr_t)&pool_table[ZEPHYR_PORT_POOL_SLOTS]) {
		return false;
	}
	if ((addr - first) % sizeof(pool_table[0]) != 0u) {
		return false;
	}
	return pool->used;
}

static void pool_fill_stats(const struct agent_pool *pool, struct agent_pool_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	stats->name = pool->name;
	stats->mem_class = pool->mem_class;
	agent_pool_book_stats(&pool->book, stats);
}

int agent_pool_init(struct agent_pool **out, const char *name, void *buffer, size_t block_bytes,
		    uint32_t blocks, enum agent_mem_class mem_class)
{
	struct agent_pool_book book;
	k_spinlock_key_t key;
	int err;

	if (out == NULL || name == NULL || (unsigned int)mem_class >= AGENT_MEM_CLASS_COUNT) {
		return -EINVAL;
	}
	err = agent_pool_book_init(&book, buffer, block_bytes, blocks);
	if (err != 0) {
		return err;
	}

	key = k_spin_lock(&pool_lock);
	for (size_t i = 0; i < ZEPHYR_PORT_POOL_SLOTS; i++) {
		struct agent_pool *pool = &pool_table[i];

		if (pool->used) {
			continue;
		}
		pool->used = true;
		pool->name = name;
		pool->mem_class = mem_class;
		pool->book = book;
		k_spin_unlock(&pool_lock, key);
		*out = pool;
		return 0;
	}
	k_spin_unlock(&pool_lock, key);
	return -ENOMEM;
}

void *agent_pool_alloc(struct agent_pool *pool)
{
	void *block = NULL;
	k_spinlock_key_t key = k_spin_lock(&pool_lock);

	if (pool_is_valid(pool)) {
		block = agent_pool_book_alloc(&pool->book);
	}
	k_spin_unlock(&pool_lock, key);
	return block;
}

int agent_pool_free(struct agent_pool *pool, void *block)
{
	int err = -EINVAL;
	k_spinlock_key_t key = k_spin_lock(&pool_lock);

	if (pool_is_valid(pool)) {
		err = agent_pool_book_free(&pool->book, block);
	}
	k_spin_unlock(&pool_lock, key);
	return err;
}

int agent_pool_stats_get(const struct agent_pool *pool, struct agent_pool_stats *stats)
{
	int err = -EINVAL;
	k_spinlock_key_t key;

	if (stats == NULL) {
		return -EINVAL;
	}
	key = k_spin_lock(&pool_lock);
	if (pool_is_valid(pool)) {
		pool_fill_stats(pool, stats);
		err = 0;
	}
	k_spin_unlock(&pool_lock, key);
	return err;
}

void agent_pool_foreach(agent_pool_visit_fn fn, void *user_data)
{
	if (fn == NULL) {
		return;
	}
	for (size_t i = 0; i < ZEPHYR_PORT_POOL_SLOTS; i++) {
		struct agent_pool_stats stats;
		bool used;
		/* Copy under the lock, call without it: the visitor may allocate from a pool. */
		k_spinlock_key_t key = k_spin_lock(&pool_lock);

		used = pool_table[i].used;
		if (used) {
			pool_fill_stats(&pool_table[i], &stats);
		}
		k_spin_unlock(&pool_lock, key);

		if (used && fn(&stats, user_data) != 0) {
			return;
		}
	}
}
