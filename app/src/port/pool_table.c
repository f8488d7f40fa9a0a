/*
 * The agent_pool_* calls of agent_port.h for both ports: a fixed table of pools over
 * caller-provided buffers (static arrays; those that prefer PSRAM are marked
 * AGENT_PSRAM_ATTR), the blocks handed out by the books of pool_book.c. One lock covers the
 * table and every pool: the critical sections are a few bit operations. Standard C only;
 * the lock comes from the port.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "agent_port.h"
#include "pool_book.h"

struct agent_pool {
	bool used;
	const char *name;
	enum agent_mem_class mem_class;
	struct agent_pool_book book;
};

static struct agent_pool pool_table[AGENT_POOL_SLOTS];

/* A handle is only trusted when it points at a slot in use, so a stale one fails cleanly. */
static bool pool_is_valid(const struct agent_pool *pool)
{
	uintptr_t addr = (uintptr_t)pool;
	uintptr_t first = (uintptr_t)&pool_table[0];

	if (pool == NULL || addr < first || addr >= (uintptr_t)&pool_table[AGENT_POOL_SLOTS]) {
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
	int err;

	if (out == NULL || name == NULL || (unsigned int)mem_class >= AGENT_MEM_CLASS_COUNT) {
		return -EINVAL;
	}
	err = agent_pool_book_init(&book, buffer, block_bytes, blocks);
	if (err != 0) {
		return err;
	}
	err = -ENOMEM;
	agent_port_pool_lock();
	for (size_t i = 0; i < AGENT_POOL_SLOTS; i++) {
		struct agent_pool *pool = &pool_table[i];

		if (!pool->used) {
			pool->used = true;
			pool->name = name;
			pool->mem_class = mem_class;
			pool->book = book;
			*out = pool;
			err = 0;
			break;
		}
	}
	agent_port_pool_unlock();
	return err;
}

void *agent_pool_alloc(struct agent_pool *pool)
{
	void *block = NULL;

	agent_port_pool_lock();
	if (pool_is_valid(pool)) {
		block = agent_pool_book_alloc(&pool->book);
	}
	agent_port_pool_unlock();
	return block;
}

int agent_pool_free(struct agent_pool *pool, void *block)
{
	int err = -EINVAL;

	agent_port_pool_lock();
	if (pool_is_valid(pool)) {
		err = agent_pool_book_free(&pool->book, block);
	}
	agent_port_pool_unlock();
	return err;
}

int agent_pool_stats_get(const struct agent_pool *pool, struct agent_pool_stats *stats)
{
	int err = -EINVAL;

	if (stats == NULL) {
		return -EINVAL;
	}
	agent_port_pool_lock();
	if (pool_is_valid(pool)) {
		pool_fill_stats(pool, stats);
		err = 0;
	}
	agent_port_pool_unlock();
	return err;
}

void agent_pool_foreach(agent_pool_visit_fn fn, void *user_data)
{
	if (fn == NULL) {
		return;
	}
	for (size_t i = 0; i < AGENT_POOL_SLOTS; i++) {
		struct agent_pool_stats stats;
		bool used;

		/* Copy under the lock, call without it: the visitor may allocate from a pool. */
		agent_port_pool_lock();
		used = pool_table[i].used;
		if (used) {
			pool_fill_stats(&pool_table[i], &stats);
		}
		agent_port_pool_unlock();

		if (used && fn(&stats, user_data) != 0) {
			return;
		}
	}
}

void agent_pool_table_reset(void)
{
	agent_port_pool_lock();
	memset(pool_table, 0, sizeof(pool_table));
	agent_port_pool_unlock();
}
