/*
 * Memory pools of the POSIX port (agent_port.h), with the shared bookkeeping in pool_book.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "pool_book.h"
#include "posix/posix_port.h"

#define BLOCK_BYTES 64u
#define BLOCKS      8u

static uint8_t pool_buf[BLOCK_BYTES * POSIX_POOL_MAX_BLOCKS + 16u] __attribute__((aligned(8)));

static int setup(void **state)
{
	(void)state;
	posix_pool_reset_all();
	memset(pool_buf, 0, sizeof(pool_buf));
	return 0;
}

static struct agent_pool *make_pool(size_t block_bytes, uint32_t blocks)
{
	struct agent_pool *pool = NULL;

	assert_int_equal(agent_pool_init(&pool, "test", pool_buf, block_bytes, blocks,
					 AGENT_MEM_INTERNAL),
			 0);
	assert_non_null(pool);
	return pool;
}

static struct agent_pool_stats stats_of(const struct agent_pool *pool)
{
	struct agent_pool_stats stats;

	assert_int_equal(agent_pool_stats_get(pool, &stats), 0);
	return stats;
}

static void test_geometry_validation(void **state)
{
	struct agent_pool *pool = NULL;

	(void)state;
	/* Block size: 0 and non-multiples of 8 refused, 8 the smallest accepted. */
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 0, 4, AGENT_MEM_INTERNAL), -EINVAL);
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 7, 4, AGENT_MEM_INTERNAL), -EINVAL);
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 9, 4, AGENT_MEM_INTERNAL), -EINVAL);
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 12, 4, AGENT_MEM_INTERNAL), -EINVAL);
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 8, 4, AGENT_MEM_INTERNAL), 0);

	/* Block count: 0 refused, 1 and the bitmap's 256 accepted, 257 refused. */
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 8, 0, AGENT_MEM_INTERNAL), -EINVAL);
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 8, 1, AGENT_MEM_INTERNAL), 0);
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 8, POSIX_POOL_MAX_BLOCKS,
					 AGENT_MEM_INTERNAL),
			 0);
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 8, POSIX_POOL_MAX_BLOCKS + 1u,
					 AGENT_MEM_INTERNAL),
			 -EINVAL);

	/* Buffer: NULL and each misalignment below 8 refused. */
	assert_int_equal(agent_pool_init(&pool, "p", NULL, 8, 4, AGENT_MEM_INTERNAL), -EINVAL);
	for (size_t off = 1; off < 8; off++) {
		assert_int_equal(
			agent_pool_init(&pool, "p", pool_buf + off, 8, 4, AGENT_MEM_INTERNAL),
			-EINVAL);
	}
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf + 8, 8, 4, AGENT_MEM_PSRAM), 0);

	/* Memory class outside the enum, NULL out and NULL name. */
	assert_int_equal(agent_pool_init(&pool, "p", pool_buf, 8, 4,
					 (enum agent_mem_class)AGENT_MEM_CLASS_COUNT),
			 -EINVAL);
	assert_int_equal(agent_pool_init(NULL, "p", pool_buf, 8, 4, AGENT_MEM_INTERNAL), -EINVAL);
	assert_int_equal(agent_pool_init(&pool, NULL, pool_buf, 8, 4, AGENT_MEM_INTERNAL), -EINVAL);
}

static void test_table_full(void **state)
{
	struct agent_pool *pools[POSIX_POOL_SLOTS];
	struct agent_pool *extra = NULL;

	(void)state;
	for (size_t i = 0; i < POSIX_POOL_SLOTS; i++) {
		assert_int_equal(
			agent_pool_init(&pools[i], "p", pool_buf, 8, 1, AGENT_MEM_INTERNAL), 0);
		for (size_t j = 0; j < i; j++) {
			assert_ptr_not_equal(pools[i], pools[j]);
		}
	}
	assert_int_equal(agent_pool_init(&extra, "p", pool_buf, 8, 1, AGENT_MEM_INTERNAL),
			 -ENOMEM);
	assert_null(extra);

	/* Bad geometry is reported as such even when the table is full. */
	assert_int_equal(agent_pool_init(&extra, "p", pool_buf, 7, 1, AGENT_MEM_INTERNAL), -EINVAL);

	posix_pool_reset_all();
	assert_int_equal(agent_pool_init(&extra, "p", pool_buf, 8, 1, AGENT_MEM_INTERNAL), 0);
}

static void test_alloc_all_then_exhausted(void **state)
{
	struct agent_pool *pool = make_pool(BLOCK_BYTES, BLOCKS);
	uint8_t *blocks[BLOCKS];
	struct agent_pool_stats stats;

	(void)state;
	for (size_t i = 0; i < BLOCKS; i++) {
		blocks[i] = agent_pool_alloc(pool);
		assert_non_null(blocks[i]);
		/* Inside the buffer, on a block boundary, and distinct from the others. */
		assert_true(blocks[i] >= pool_buf);
		assert_true(blocks[i] + BLOCK_BYTES <= pool_buf + BLOCK_BYTES * BLOCKS);
		assert_int_equal((size_t)(blocks[i] - pool_buf) % BLOCK_BYTES, 0);
		for (size_t j = 0; j < i; j++) {
			assert_ptr_not_equal(blocks[i], blocks[j]);
		}
		/* Writing the whole block must not disturb another (ASan checks the bounds). */
		memset(blocks[i], (int)i + 1, BLOCK_BYTES);
	}
	for (size_t i = 0; i < BLOCKS; i++) {
		for (size_t b = 0; b < BLOCK_BYTES; b++) {
			assert_int_equal(blocks[i][b], (uint8_t)(i + 1));
		}
	}

	stats = stats_of(pool);
	assert_int_equal(stats.blocks_free, 0);
	assert_int_equal(stats.alloc_failures, 0);
	assert_int_equal(stats.largest_free_bytes, 0);

	assert_null(agent_pool_alloc(pool));
	assert_int_equal(stats_of(pool).alloc_failures, 1);
	assert_null(agent_pool_alloc(pool));
	assert_int_equal(stats_of(pool).alloc_failures, 2);

	/* One free block makes the next allocation succeed with that very block. */
	assert_int_equal(agent_pool_free(pool, blocks[3]), 0);
	assert_ptr_equal(agent_pool_alloc(pool), blocks[3]);
	assert_int_equal(stats_of(pool).alloc_failures, 2);
}

static void test_stats_and_low_water(void **state)
{
	struct agent_pool *pool = NULL;
	struct agent_pool_stats stats;
	void *blocks[BLOCKS];

	(void)state;
	assert_int_equal(
		agent_pool_init(&pool, "stats", pool_buf, BLOCK_BYTES, BLOCKS, AGENT_MEM_PSRAM), 0);
	stats = stats_of(pool);
	assert_string_equal(stats.name, "stats");
	assert_int_equal(stats.mem_class, AGENT_MEM_PSRAM);
	assert_int_equal(stats.block_bytes, BLOCK_BYTES);
	assert_int_equal(stats.blocks_total, BLOCKS);
	assert_int_equal(stats.blocks_free, BLOCKS);
	assert_int_equal(stats.blocks_free_min, BLOCKS);
	assert_int_equal(stats.free_bytes, BLOCK_BYTES * BLOCKS);
	assert_int_equal(stats.largest_free_bytes, BLOCK_BYTES);
	assert_int_equal(stats.alloc_failures, 0);
	assert_int_equal(stats.bad_frees, 0);

	/* Down to one free block (N-1 taken): largest is still a block. */
	for (size_t i = 0; i < BLOCKS - 1u; i++) {
		blocks[i] = agent_pool_alloc(pool);
		assert_non_null(blocks[i]);
	}
	stats = stats_of(pool);
	assert_int_equal(stats.blocks_free, 1);
	assert_int_equal(stats.blocks_free_min, 1);
	assert_int_equal(stats.free_bytes, BLOCK_BYTES);
	assert_int_equal(stats.largest_free_bytes, BLOCK_BYTES);

	/* All N taken: nothing free, low-water at 0. */
	blocks[BLOCKS - 1u] = agent_pool_alloc(pool);
	assert_non_null(blocks[BLOCKS - 1u]);
	stats = stats_of(pool);
	assert_int_equal(stats.blocks_free, 0);
	assert_int_equal(stats.blocks_free_min, 0);
	assert_int_equal(stats.free_bytes, 0);
	assert_int_equal(stats.largest_free_bytes, 0);

	/* Freeing everything restores the counts but not the low-water mark. */
	for (size_t i = 0; i < BLOCKS; i++) {
		assert_int_equal(agent_pool_free(pool, blocks[i]), 0);
	}
	stats = stats_of(pool);
	assert_int_equal(stats.blocks_free, BLOCKS);
	assert_int_equal(stats.free_bytes, BLOCK_BYTES * BLOCKS);
	assert_int_equal(stats.blocks_free_min, 0);
	assert_int_equal(stats.bad_frees, 0);

	assert_int_equal(agent_pool_stats_get(pool, NULL), -EINVAL);
	assert_int_equal(agent_pool_stats_get(NULL, &stats), -EINVAL);
}

/*
 * Held against written: a block's written bytes are its high-water mark, found by the paint
 * when it comes back; a busy period's figure is the sum over its blocks and counts once every
 * block is free again.
 */
static void test_written_high_water(void **state)
{
	struct agent_pool *pool;
	struct agent_pool_stats s;
	uint8_t *a;
	uint8_t *b;

	(void)state;
	pool = make_pool(BLOCK_BYTES, 4);
	s = stats_of(pool);
	assert_int_equal(s.held_peak_bytes, 0);
	assert_int_equal(s.written_peak_bytes, 0);
	assert_int_equal(s.written_block_max_bytes, 0);
	/* The buffer is painted at init: a block is handed out painted. */
	a = agent_pool_alloc(pool);
	for (size_t i = 0; i < BLOCK_BYTES; i++) {
		assert_int_equal(a[i], AGENT_POOL_PAINT);
	}
	b = agent_pool_alloc(pool);
	a[0] = 'x'; /* 1 byte */
	memset(b, 'y', BLOCK_BYTES - 1u); /* N - 1 bytes */
	assert_int_equal(agent_pool_free(pool, a), 0);
	s = stats_of(pool);
	assert_int_equal(s.written_block_max_bytes, 1);
	assert_int_equal(s.written_peak_bytes, 0); /* the busy period has not ended */
	assert_int_equal(agent_pool_free(pool, b), 0);
	s = stats_of(pool);
	assert_int_equal(s.held_peak_bytes, 2u * BLOCK_BYTES);
	assert_int_equal(s.written_block_max_bytes, BLOCK_BYTES - 1u);
	assert_int_equal(s.written_peak_bytes, BLOCK_BYTES);
	/* Painted over: the next user of the block finds it as new. */
	for (size_t i = 0; i < BLOCK_BYTES; i++) {
		assert_int_equal(a[i], AGENT_POOL_PAINT);
		assert_int_equal(b[i], AGENT_POOL_PAINT);
	}
	/* A whole block (N), a write in the middle counts up to its end, a smaller period keeps
	 * the peak. */
	a = agent_pool_alloc(pool);
	memset(a, 0, BLOCK_BYTES);
	assert_int_equal(agent_pool_free(pool, a), 0);
	s = stats_of(pool);
	assert_int_equal(s.written_block_max_bytes, BLOCK_BYTES);
	assert_int_equal(s.written_peak_bytes, BLOCK_BYTES);
	a = agent_pool_alloc(pool);
	a[9] = 0;
	assert_int_equal(agent_pool_free(pool, a), 0);
	s = stats_of(pool);
	assert_int_equal(s.written_peak_bytes, BLOCK_BYTES);
	/* Three blocks in one period: 10 + N + 5. */
	a = agent_pool_alloc(pool);
	b = agent_pool_alloc(pool);
	a[9] = 1;
	memset(b, 2, BLOCK_BYTES);
	assert_int_equal(agent_pool_free(pool, b), 0);
	b = agent_pool_alloc(pool);
	b[4] = 3;
	assert_int_equal(agent_pool_free(pool, a), 0);
	assert_int_equal(agent_pool_free(pool, b), 0);
	s = stats_of(pool);
	assert_int_equal(s.written_peak_bytes, 10u + BLOCK_BYTES + 5u);
	/* Paint bytes inside what was written (shorter than a run) are counted: 200 of 256. */
	{
		struct agent_pool *big = NULL;
		static uint8_t big_buf[256 * 2] __attribute__((aligned(8)));
		uint8_t *blk;

		assert_int_equal(agent_pool_init(&big, "big", big_buf, 256, 2, AGENT_MEM_INTERNAL),
				 0);
		blk = agent_pool_alloc(big);
		memset(blk, 'z', 200);
		memset(blk + 50, AGENT_POOL_PAINT, AGENT_POOL_PAINT_RUN - 1);
		assert_int_equal(agent_pool_free(big, blk), 0);
		assert_int_equal(stats_of(big).written_block_max_bytes, 200);
		/* The documented limit: a whole aligned run of paint ends the measure, and the
		 * paint byte just before it is taken off: 63 bytes read, not 200, and what lies
		 * past the run is not painted again. */
		assert_int_equal(agent_pool_init(&big, "big2", big_buf, 256, 2, AGENT_MEM_INTERNAL),
				 0);
		blk = agent_pool_alloc(big);
		memset(blk, 'z', 200);
		memset(blk + AGENT_POOL_PAINT_RUN, AGENT_POOL_PAINT, AGENT_POOL_PAINT_RUN);
		blk[AGENT_POOL_PAINT_RUN - 1] = AGENT_POOL_PAINT;
		assert_int_equal(agent_pool_free(big, blk), 0);
		assert_int_equal(stats_of(big).written_block_max_bytes, AGENT_POOL_PAINT_RUN - 1);
		for (size_t i = 0; i < 256; i++) {
			assert_int_equal(blk[i], i < 128 || i >= 200 ? AGENT_POOL_PAINT : 'z');
		}
	}
	/* A bad free measures nothing. */
	assert_int_equal(agent_pool_free(pool, b), -EALREADY);
	assert_int_equal(stats_of(pool).written_peak_bytes, 10u + BLOCK_BYTES + 5u);
}

static void test_double_free(void **state)
{
	struct agent_pool *pool = make_pool(BLOCK_BYTES, BLOCKS);
	void *a = agent_pool_alloc(pool);
	void *b = agent_pool_alloc(pool);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(agent_pool_free(pool, a), 0);
	assert_int_equal(agent_pool_free(pool, a), -EALREADY);
	assert_int_equal(stats_of(pool).bad_frees, 1);
	assert_int_equal(stats_of(pool).blocks_free, BLOCKS - 1u);

	/* A block never handed out is "already free" too. */
	assert_int_equal(agent_pool_free(pool, pool_buf + BLOCK_BYTES * (BLOCKS - 1u)), -EALREADY);
	assert_int_equal(stats_of(pool).bad_frees, 2);

	/* The caught double free did not corrupt the books: b still frees once. */
	assert_int_equal(agent_pool_free(pool, b), 0);
	assert_int_equal(stats_of(pool).blocks_free, BLOCKS);
	assert_int_equal(agent_pool_free(pool, b), -EALREADY);
	assert_int_equal(stats_of(pool).bad_frees, 3);
}

static void test_foreign_pointers(void **state)
{
	/* The pool sits in the middle of pool_buf so that both sides are addressable. */
	struct agent_pool *pool = NULL;
	uint8_t *base = pool_buf + BLOCK_BYTES;
	uint8_t *end = base + BLOCK_BYTES * BLOCKS;
	uint8_t *block;
	int local;

	(void)state;
	assert_int_equal(
		agent_pool_init(&pool, "f", base, BLOCK_BYTES, BLOCKS, AGENT_MEM_INTERNAL), 0);
	block = agent_pool_alloc(pool);
	assert_ptr_equal(block, base);

	assert_int_equal(agent_pool_free(pool, base - BLOCK_BYTES), -EINVAL); /* block before */
	assert_int_equal(agent_pool_free(pool, base - 8), -EINVAL);
	assert_int_equal(agent_pool_free(pool, end), -EINVAL); /* first byte past the end */
	assert_int_equal(agent_pool_free(pool, end - BLOCK_BYTES + 8), -EINVAL);
	assert_int_equal(agent_pool_free(pool, block + 1), -EINVAL); /* misaligned */
	assert_int_equal(agent_pool_free(pool, block + 8), -EINVAL);
	assert_int_equal(agent_pool_free(pool, block + BLOCK_BYTES - 1), -EINVAL);
	assert_int_equal(agent_pool_free(pool, &local), -EINVAL);
	assert_int_equal(agent_pool_free(pool, NULL), -EINVAL);
	assert_int_equal(stats_of(pool).bad_frees, 9);
	assert_int_equal(stats_of(pool).blocks_free, BLOCKS - 1u);

	/* The last block is a block of the pool (N-1 is inside). */
	assert_int_equal(agent_pool_free(pool, end - BLOCK_BYTES), -EALREADY);
	assert_int_equal(agent_pool_free(pool, block), 0);

	/* A block of another pool is foreign to this one. */
	{
		struct agent_pool *other = NULL;
		void *theirs;

		assert_int_equal(
			agent_pool_init(&other, "o", end, BLOCK_BYTES, 2, AGENT_MEM_INTERNAL), 0);
		theirs = agent_pool_alloc(other);
		assert_non_null(theirs);
		assert_int_equal(agent_pool_free(pool, theirs), -EINVAL);
		assert_int_equal(agent_pool_free(other, theirs), 0);
		assert_int_equal(stats_of(other).bad_frees, 0);
	}
}

static void test_stale_handle(void **state)
{
	struct agent_pool *pool = make_pool(BLOCK_BYTES, BLOCKS);
	struct agent_pool_stats stats;
	void *block = agent_pool_alloc(pool);

	(void)state;
	posix_pool_reset_all();
	assert_null(agent_pool_alloc(pool));
	assert_int_equal(agent_pool_free(pool, block), -EINVAL);
	assert_int_equal(agent_pool_stats_get(pool, &stats), -EINVAL);
	assert_null(agent_pool_alloc(NULL));
	assert_int_equal(agent_pool_free((struct agent_pool *)(void *)pool_buf, block), -EINVAL);
}

struct visit_log {
	size_t count;
	size_t stop_after;
	char names[POSIX_POOL_SLOTS][8];
};

static int visit(const struct agent_pool_stats *stats, void *user_data)
{
	struct visit_log *log = user_data;

	strncpy(log->names[log->count], stats->name, sizeof(log->names[0]) - 1u);
	log->count++;
	return log->count == log->stop_after;
}

static void test_foreach(void **state)
{
	static const char *const names[] = {"a", "b", "c"};
	struct visit_log log = {0};
	struct agent_pool *pool;

	(void)state;
	agent_pool_foreach(visit, &log);
	assert_int_equal(log.count, 0);

	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(
			agent_pool_init(&pool, names[i], pool_buf, 8, 1, AGENT_MEM_INTERNAL), 0);
	}
	agent_pool_foreach(visit, &log);
	assert_int_equal(log.count, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(log.names[i], names[i]);
	}

	memset(&log, 0, sizeof(log));
	log.stop_after = 2;
	agent_pool_foreach(visit, &log);
	assert_int_equal(log.count, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_geometry_validation, setup),
		cmocka_unit_test_setup(test_table_full, setup),
		cmocka_unit_test_setup(test_alloc_all_then_exhausted, setup),
		cmocka_unit_test_setup(test_stats_and_low_water, setup),
		cmocka_unit_test_setup(test_written_high_water, setup),
		cmocka_unit_test_setup(test_double_free, setup),
		cmocka_unit_test_setup(test_foreign_pointers, setup),
		cmocka_unit_test_setup(test_stale_handle, setup),
		cmocka_unit_test_setup(test_foreach, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
