/*
 * Memory pools of the POSIX port: a fixed table of pools over caller-provided buffers, with
 * the block bookkeeping shared with the Zephyr port (pool_book.c). One lock covers the
 * table and every pool, which is cheap at simulator rates and keeps agent_pool_foreach()
 * from seeing a pool half-initialised.
 */
#include "agent_port.h"
#include "pool_book.h"
#include "posix_port.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

_Static_assert(POSIX_POOL_MAX_BLOCKS == AGENT_POOL_BOOK_MAX_BLOCKS,
	       "posix_port.h and pool_book.h disagree on the pool size bound");

struct agent_pool {
	bool used;
	const char *name;
	enum agent_mem_class mem_class;
	struct agent_pool_book book;
};

static struct agent_pool pool_table[POSIX_POOL_SLOTS];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* A handle is only trusted when it points at a slot in use, so a stale one fails cleanly. */
static bool pool_is_valid(const struct agent_pool *pool)
{
	uintptr_t addr = (uintptr_t)pool;
	uintptr_t first = (uintptr_t)&pool_table[0];

	if (pool == NULL || addr < first || addr >= (uintptr_t)&pool_table[POSIX_POOL_SLOTS]) {
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

	pthread_mutex_lock(&pool_lock);
	for (size_t i = 0; i < POSIX_POOL_SLOTS; i++) {
		struct agent_pool *pool = &pool_table[i];

		if (pool->used) {
			continue;
		}
		pool->used = true;
		pool->name = name;
		pool->mem_class = mem_class;
		pool->book = book;
		pthread_mutex_unlock(&pool_lock);
		*out = pool;
		return 0;
	}
	pthread_mutex_unlock(&pool_lock);
	return -ENOMEM;
}

void *agent_pool_alloc(struct agent_pool *pool)
{
	void *block = NULL;

	pthread_mutex_lock(&pool_lock);
	if (pool_is_valid(pool)) {
		block = agent_pool_book_alloc(&pool->book);
	}
	pthread_mutex_unlock(&pool_lock);
	return block;
}

int agent_pool_free(struct agent_pool *pool, void *block)
{
	int err = -EINVAL;

	pthread_mutex_lock(&pool_lock);
	if (pool_is_valid(pool)) {
		err = agent_pool_book_free(&pool->book, block);
	}
	pthread_mutex_unlock(&pool_lock);
	return err;
}

int agent_pool_stats_get(const struct agent_pool *pool, struct agent_pool_stats *stats)
{
	int err = -EINVAL;

	if (stats == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&pool_lock);
	if (pool_is_valid(pool)) {
		pool_fill_stats(pool, stats);
		err = 0;
	}
	pthread_mutex_unlock(&pool_lock);
	return err;
}

void agent_pool_foreach(agent_pool_visit_fn fn, void *user_data)
{
	if (fn == NULL) {
		return;
	}
	for (size_t i = 0; i < POSIX_POOL_SLOTS; i++) {
		struct agent_pool_stats stats;
		bool used;

		/* Copy under the lock, call without it: the visitor may allocate from a pool. */
		pthread_mutex_lock(&pool_lock);
		used = pool_table[i].used;
		if (used) {
			pool_fill_stats(&pool_table[i], &stats);
		}
		pthread_mutex_unlock(&pool_lock);

		if (used && fn(&stats, user_data) != 0) {
			return;
		}
	}
}

void posix_pool_reset_all(void)
{
	pthread_mutex_lock(&pool_lock);
	memset(pool_table, 0, sizeof(pool_table));
	pthread_mutex_unlock(&pool_lock);
}
