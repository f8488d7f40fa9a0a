/*
 * Region heaps of the POSIX port (agent_port.h, "Region heaps"; app/src/port/posix/region.c):
 * geometry, the largest free block at N and N+1, alignment, coalescing in every order,
 * realloc's cases, the statistics, a double free, AddressSanitizer's view of the region, and
 * random sequences checked against a model.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_port.h"
#include "posix/posix_asan.h"
#include "posix/posix_port.h"

#define REGION_BYTES 4096u
#define HEADER	     8u /* region.c: a chunk's header */

static uint8_t region_buf[AGENT_REGIONS_MAX + 1u][REGION_BYTES] __attribute__((aligned(8)));

static struct agent_region *make_region(size_t bytes)
{
	struct agent_region *region = NULL;

	assert_int_equal(agent_region_init(&region, "test", region_buf[0], bytes), 0);
	assert_non_null(region);
	return region;
}

static struct agent_region_stats stats_of(struct agent_region *region)
{
	struct agent_region_stats stats;

	assert_int_equal(agent_region_stats(region, &stats), 0);
	return stats;
}

/* The largest free block can be had, one byte more cannot; nothing changes. */
static void check_largest_free(struct agent_region *region)
{
	struct agent_region_stats before = stats_of(region);
	struct agent_region_stats after;
	void *block;

	assert_null(agent_region_alloc(region, before.largest_free_bytes + 1u));
	if (before.largest_free_bytes > 0u) {
		block = agent_region_alloc(region, before.largest_free_bytes);
		assert_non_null(block);
		agent_region_free(region, block);
	}
	after = stats_of(region);
	assert_int_equal(after.largest_free_bytes, before.largest_free_bytes);
	assert_int_equal(after.used_bytes, before.used_bytes);
	assert_int_equal(after.blocks, before.blocks);
	assert_int_equal(after.alloc_failures, before.alloc_failures + 1u);
}

static void test_init_geometry(void **state)
{
	struct agent_region *region = NULL;
	struct agent_region_stats stats;

	(void)state;
	assert_int_equal(agent_region_init(NULL, "r", region_buf[0], 256), -EINVAL);
	assert_int_equal(agent_region_init(&region, "r", NULL, 256), -EINVAL);
	/* Misaligned memory: 1 and 4 bytes off. */
	assert_int_equal(agent_region_init(&region, "r", region_buf[0] + 1, 256), -EINVAL);
	assert_int_equal(agent_region_init(&region, "r", region_buf[0] + 4, 256), -EINVAL);
	/* The smallest region: 256 bytes, not 255. */
	assert_int_equal(agent_region_init(&region, "r", region_buf[0], 255), -EINVAL);
	assert_int_equal(agent_region_init(&region, "small", region_buf[0], 256), 0);
	stats = stats_of(region);
	assert_string_equal(stats.name, "small");
	assert_int_equal(stats.total_bytes, 256);
	assert_int_equal(stats.largest_free_bytes, 256 - HEADER);
	assert_int_equal(stats.used_bytes, 0);
	assert_int_equal(stats.blocks, 0);
	assert_int_equal(agent_region_deinit(region), 0);
	/* Bytes beyond a multiple of 8 are not used. */
	assert_int_equal(agent_region_init(&region, "r", region_buf[0], 263), 0);
	assert_int_equal(stats_of(region).total_bytes, 256);
	assert_int_equal(agent_region_deinit(region), 0);
	/* A record given back cannot be used. */
	assert_int_equal(agent_region_deinit(region), -EINVAL);
	assert_int_equal(agent_region_stats(region, &stats), -EINVAL);
	assert_null(agent_region_alloc(region, 8));
	assert_int_equal(agent_region_deinit(NULL), -EINVAL);
}

/* The largest region, POSIX_REGION_MAX_BYTES, and 8 bytes more (untouched: refused first). */
static void test_init_largest_region(void **state)
{
	size_t bytes = POSIX_REGION_MAX_BYTES;
	struct agent_region *region = NULL;
	uint8_t *mem;
	void *block;

	(void)state;
	assert_int_equal(agent_region_init(&region, "r", region_buf[0], bytes + 8u), -EINVAL);
	mem = mmap(NULL, bytes + 8u, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(mem != MAP_FAILED);
	/* bytes + 7: the 7 are unused. */
	assert_int_equal(agent_region_init(&region, "huge", mem, bytes + 7u), 0);
	assert_int_equal(stats_of(region).total_bytes, bytes);
	assert_int_equal(stats_of(region).largest_free_bytes, bytes - HEADER);
	block = agent_region_alloc(region, 100);
	assert_non_null(block);
	agent_region_free(region, block);
	assert_int_equal(stats_of(region).largest_free_bytes, bytes - HEADER);
	assert_int_equal(agent_region_deinit(region), 0);
	assert_int_equal(munmap(mem, bytes + 8u), 0);
}

static void test_table_full(void **state)
{
	struct agent_region *regions[AGENT_REGIONS_MAX + 1u] = {0};
	struct agent_region *extra = NULL;

	(void)state;
	for (size_t i = 0; i < AGENT_REGIONS_MAX; i++) {
		assert_int_equal(agent_region_init(&regions[i], "r", region_buf[i], REGION_BYTES),
				 0);
	}
	assert_int_equal(agent_region_init(&extra, "r", region_buf[AGENT_REGIONS_MAX],
					   REGION_BYTES),
			 -ENOMEM);
	assert_null(extra);
	/* A record given back is free again. */
	assert_int_equal(agent_region_deinit(regions[1]), 0);
	assert_int_equal(agent_region_init(&regions[1], "r", region_buf[AGENT_REGIONS_MAX],
					   REGION_BYTES),
			 0);
	for (size_t i = 0; i < AGENT_REGIONS_MAX; i++) {
		assert_int_equal(agent_region_deinit(regions[i]), 0);
	}
}

static void test_deinit_busy(void **state)
{
	struct agent_region *region = make_region(REGION_BYTES);
	void *block = agent_region_alloc(region, 10);

	(void)state;
	assert_non_null(block);
	assert_int_equal(agent_region_deinit(region), -EBUSY);
	/* Still usable after the refusal. */
	assert_int_equal(stats_of(region).blocks, 1);
	agent_region_free(region, block);
	agent_region_free(region, NULL);
	assert_int_equal(agent_region_deinit(region), 0);
}

static void test_largest_free_exact(void **state)
{
	struct agent_region *region = make_region(256);
	void *whole;
	void *a;
	void *b;
	void *c;

	(void)state;
	/* The whole region: 248 bytes fit, 249 do not. */
	assert_null(agent_region_alloc(region, 256 - HEADER + 1u));
	whole = agent_region_alloc(region, 256 - HEADER);
	assert_non_null(whole);
	assert_int_equal(stats_of(region).largest_free_bytes, 0);
	assert_null(agent_region_alloc(region, 1));
	assert_int_equal(stats_of(region).alloc_failures, 2);
	agent_region_free(region, whole);
	check_largest_free(region);
	/* Fragmented: a hole between two blocks and the rest after them. */
	a = agent_region_alloc(region, 40);
	b = agent_region_alloc(region, 100);
	c = agent_region_alloc(region, 24);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	agent_region_free(region, b);
	/* Chunks of 48, 112 and 32 bytes, 64 after them: b's 112 is the largest. */
	assert_int_equal(stats_of(region).largest_free_bytes, 112 - HEADER);
	check_largest_free(region);
	agent_region_free(region, a);
	assert_int_equal(stats_of(region).largest_free_bytes, 48 + 112 - HEADER);
	check_largest_free(region);
	agent_region_free(region, c);
	assert_int_equal(stats_of(region).largest_free_bytes, 256 - HEADER);
	assert_int_equal(agent_region_deinit(region), 0);
}

static void test_alignment(void **state)
{
	struct agent_region *region = make_region(REGION_BYTES);
	void *blocks[40];

	(void)state;
	for (size_t i = 0; i < 40; i++) {
		blocks[i] = agent_region_alloc(region, i + 1u);
		assert_non_null(blocks[i]);
		assert_int_equal((uintptr_t)blocks[i] % 8u, 0);
		memset(blocks[i], (int)i, i + 1u);
	}
	for (size_t i = 0; i < 40; i++) {
		for (size_t j = 0; j <= i; j++) {
			assert_int_equal(((uint8_t *)blocks[i])[j], i);
		}
		blocks[i] = agent_region_realloc(region, blocks[i], 3u * i + 5u);
		assert_non_null(blocks[i]);
		assert_int_equal((uintptr_t)blocks[i] % 8u, 0);
	}
	for (size_t i = 0; i < 40; i++) {
		agent_region_free(region, blocks[i]);
	}
	assert_int_equal(agent_region_deinit(region), 0);
}

/*
 * Three blocks filling a 256-byte region (chunks of 88, 88 and 80 bytes) freed in each of the
 * six orders: the region is one free block of 248 bytes again.
 */
static void test_coalescing_every_order(void **state)
{
	static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
					 {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
	struct agent_region *region = make_region(256);

	(void)state;
	for (size_t o = 0; o < 6; o++) {
		void *blocks[3];
		void *whole;

		blocks[0] = agent_region_alloc(region, 80);
		blocks[1] = agent_region_alloc(region, 80);
		blocks[2] = agent_region_alloc(region, 72);
		for (size_t i = 0; i < 3; i++) {
			assert_non_null(blocks[i]);
		}
		assert_int_equal(stats_of(region).largest_free_bytes, 0);
		agent_region_free(region, blocks[orders[o][0]]);
		agent_region_free(region, blocks[orders[o][1]]);
		/* Two adjacent blocks freed are one free block. */
		if (abs(orders[o][0] - orders[o][1]) == 1) {
			size_t both = (orders[o][0] == 2 || orders[o][1] == 2) ? 88u + 80u
									     : 88u + 88u;

			assert_int_equal(stats_of(region).largest_free_bytes, both - HEADER);
		}
		agent_region_free(region, blocks[orders[o][2]]);
		assert_int_equal(stats_of(region).largest_free_bytes, 256 - HEADER);
		whole = agent_region_alloc(region, 256 - HEADER);
		assert_non_null(whole);
		agent_region_free(region, whole);
	}
	assert_int_equal(stats_of(region).blocks, 0);
	assert_int_equal(stats_of(region).used_bytes, 0);
	assert_int_equal(agent_region_deinit(region), 0);
}

static void fill(void *block, size_t bytes, uint8_t seed)
{
	for (size_t i = 0; i < bytes; i++) {
		((uint8_t *)block)[i] = (uint8_t)(seed + i);
	}
}

static void check_fill(const void *block, size_t bytes, uint8_t seed)
{
	for (size_t i = 0; i < bytes; i++) {
		assert_int_equal(((const uint8_t *)block)[i], (uint8_t)(seed + i));
	}
}

static void test_realloc_cases(void **state)
{
	struct agent_region *region = make_region(512);
	struct agent_region_stats stats;
	void *a;
	void *b;
	void *c;
	void *p;

	(void)state;
	/* NULL: an allocation. */
	a = agent_region_realloc(region, NULL, 20);
	assert_non_null(a);
	fill(a, 20, 1);
	/* Grows in place into the free rest of the region. */
	p = agent_region_realloc(region, a, 100);
	assert_ptr_equal(p, a);
	check_fill(a, 20, 1);
	assert_int_equal(stats_of(region).used_bytes, 100);
	/* Shrinks in place; the tail is free again (one block with the rest). */
	fill(a, 100, 2);
	p = agent_region_realloc(region, a, 30);
	assert_ptr_equal(p, a);
	check_fill(a, 30, 2);
	stats = stats_of(region);
	assert_int_equal(stats.used_bytes, 30);
	assert_int_equal(stats.largest_free_bytes, 512 - 2u * HEADER - 32u);
	/* Grows in place into a freed neighbour that is big enough. */
	b = agent_region_alloc(region, 64);
	c = agent_region_alloc(region, 16);
	assert_non_null(b);
	assert_non_null(c);
	agent_region_free(region, b);
	p = agent_region_realloc(region, a, 32 + HEADER + 64);
	assert_ptr_equal(p, a);
	check_fill(a, 30, 2);
	/* Used neighbour: moves, keeps the bytes, frees the old place. */
	fill(a, 104, 3);
	p = agent_region_realloc(region, a, 200);
	assert_non_null(p);
	assert_ptr_not_equal(p, a);
	check_fill(p, 104, 3);
	stats = stats_of(region);
	assert_int_equal(stats.blocks, 2);
	assert_int_equal(stats.used_bytes, 200 + 16);
	a = p;
	/*
	 * The free chunk right of a (the largest, 160 bytes) and a's 200 make 368 bytes in
	 * place; 369 fit nowhere: NULL, counted, the block as it was.
	 */
	stats = stats_of(region);
	assert_int_equal(stats.largest_free_bytes, 160);
	assert_null(agent_region_realloc(region, a, 200 + HEADER + 160 + 1u));
	assert_null(agent_region_realloc(region, a, SIZE_MAX));
	check_fill(a, 104, 3);
	assert_int_equal(stats_of(region).alloc_failures, stats.alloc_failures + 2u);
	assert_int_equal(stats_of(region).used_bytes, stats.used_bytes);
	assert_int_equal(stats_of(region).blocks, stats.blocks);
	assert_ptr_equal(agent_region_realloc(region, a, 200 + HEADER + 160), a);
	check_fill(a, 104, 3);
	assert_int_equal(stats_of(region).largest_free_bytes, 104); /* a's old place */
	assert_ptr_equal(agent_region_realloc(region, a, 200), a);
	assert_int_equal(stats_of(region).largest_free_bytes, 160);
	/* Same size: the same block. */
	assert_ptr_equal(agent_region_realloc(region, a, 200), a);
	/* 0: frees, NULL. */
	assert_null(agent_region_realloc(region, a, 0));
	assert_null(agent_region_realloc(region, c, 0));
	stats = stats_of(region);
	assert_int_equal(stats.blocks, 0);
	assert_int_equal(stats.used_bytes, 0);
	assert_int_equal(stats.largest_free_bytes, 512 - HEADER);
	assert_int_equal(agent_region_deinit(region), 0);
}

static void test_stats(void **state)
{
	struct agent_region *region = make_region(REGION_BYTES);
	struct agent_region_stats stats;
	void *a;
	void *b;

	(void)state;
	a = agent_region_alloc(region, 10);
	b = agent_region_alloc(region, 301);
	assert_non_null(a);
	assert_non_null(b);
	stats = stats_of(region);
	assert_int_equal(stats.used_bytes, 311);
	assert_int_equal(stats.peak_used_bytes, 311);
	assert_int_equal(stats.blocks, 2);
	assert_int_equal(stats.alloc_failures, 0);
	agent_region_free(region, b);
	stats = stats_of(region);
	assert_int_equal(stats.used_bytes, 10);
	assert_int_equal(stats.peak_used_bytes, 311);
	assert_int_equal(stats.blocks, 1);
	agent_region_reset_peak(region);
	assert_int_equal(stats_of(region).peak_used_bytes, 10);
	a = agent_region_realloc(region, a, 50);
	assert_int_equal(stats_of(region).peak_used_bytes, 50);
	a = agent_region_realloc(region, a, 20);
	stats = stats_of(region);
	assert_int_equal(stats.used_bytes, 20);
	assert_int_equal(stats.peak_used_bytes, 50);
	assert_null(agent_region_alloc(region, REGION_BYTES));
	assert_null(agent_region_alloc(region, 0)); /* not a refusal: nothing asked for */
	assert_int_equal(stats_of(region).alloc_failures, 1);
	assert_int_equal(agent_region_stats(region, NULL), -EINVAL);
	agent_region_free(region, a);
	assert_int_equal(agent_region_deinit(region), 0);
}

/* Freeing a block twice, or a pointer inside one, is reported and aborts. */
static void test_bad_free_aborts(void **state)
{
	for (int variant = 0; variant < 2; variant++) {
		pid_t pid = fork();
		int status = 0;

		(void)state;
		assert_true(pid >= 0);
		if (pid == 0) {
			struct agent_region *region = make_region(REGION_BYTES);
			uint8_t *block = agent_region_alloc(region, 64);

			if (variant == 0) {
				agent_region_free(region, block);
				agent_region_free(region, block);
			} else {
				agent_region_free(region, block + 16);
			}
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGABRT);
	}
}

#ifdef POSIX_ASAN
/* AddressSanitizer sees exactly the bytes asked for as addressable. */
static void test_asan_poisoning(void **state)
{
	struct agent_region *region = make_region(REGION_BYTES);
	uint8_t *a;
	uint8_t *b;

	(void)state;
	assert_true(__asan_address_is_poisoned(region_buf[0]));
	a = agent_region_alloc(region, 10);
	b = agent_region_alloc(region, 8);
	assert_false(__asan_address_is_poisoned(a));
	assert_false(__asan_address_is_poisoned(a + 9));
	assert_true(__asan_address_is_poisoned(a + 10));
	assert_true(__asan_address_is_poisoned(a - 1));
	assert_true(__asan_address_is_poisoned(b - 1));
	assert_false(__asan_address_is_poisoned(b + 7));
	a = agent_region_realloc(region, a, 4);
	assert_true(__asan_address_is_poisoned(a + 4));
	agent_region_free(region, b);
	assert_true(__asan_address_is_poisoned(b));
	agent_region_free(region, a);
	assert_true(__asan_address_is_poisoned(a));
	assert_int_equal(agent_region_deinit(region), 0);
	/* The memory is the caller's again. */
	assert_null(__asan_region_is_poisoned(region_buf[0], REGION_BYTES));
}
#endif

/* ---- Random sequences against a model ----------------------------------------------------- */

#define MODEL_SLOTS 48

struct model_block {
	uint8_t *ptr;
	size_t bytes;
	uint8_t seed;
};

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static void check_model(struct agent_region *region, const struct model_block *model)
{
	struct agent_region_stats stats = stats_of(region);
	size_t used = 0;
	uint32_t blocks = 0;

	for (size_t i = 0; i < MODEL_SLOTS; i++) {
		if (model[i].ptr == NULL) {
			continue;
		}
		used += model[i].bytes;
		blocks++;
		assert_true(model[i].ptr >= region_buf[0] + HEADER &&
			    model[i].ptr + model[i].bytes <= region_buf[0] + REGION_BYTES);
		check_fill(model[i].ptr, model[i].bytes, model[i].seed);
		for (size_t j = i + 1u; j < MODEL_SLOTS; j++) {
			if (model[j].ptr != NULL) {
				assert_true(model[i].ptr + model[i].bytes <= model[j].ptr ||
					    model[j].ptr + model[j].bytes <= model[i].ptr);
			}
		}
	}
	assert_int_equal(stats.used_bytes, used);
	assert_int_equal(stats.blocks, blocks);
	assert_true(stats.peak_used_bytes >= used);
	assert_true(stats.largest_free_bytes <= REGION_BYTES - HEADER);
}

static void run_random(uint32_t seed, size_t steps)
{
	struct agent_region *region = make_region(REGION_BYTES);
	struct model_block model[MODEL_SLOTS] = {0};
	size_t initial_largest = stats_of(region).largest_free_bytes;

	rng_state = seed;
	for (size_t step = 0; step < steps; step++) {
		struct model_block *slot = &model[rng() % MODEL_SLOTS];
		size_t bytes = 1u + rng() % ((rng() % 4u == 0u) ? 900u : 120u);
		uint8_t new_seed = (uint8_t)rng();

		if (slot->ptr == NULL) {
			slot->ptr = agent_region_alloc(region, bytes);
			if (slot->ptr != NULL) {
				slot->bytes = bytes;
				slot->seed = new_seed;
				fill(slot->ptr, bytes, new_seed);
			}
		} else if (rng() % 2u == 0u) {
			uint8_t *moved = agent_region_realloc(region, slot->ptr, bytes);

			if (moved != NULL) {
				check_fill(moved, slot->bytes < bytes ? slot->bytes : bytes,
					   slot->seed);
				slot->ptr = moved;
				slot->bytes = bytes;
				slot->seed = new_seed;
				fill(moved, bytes, new_seed);
			}
		} else {
			agent_region_free(region, slot->ptr);
			slot->ptr = NULL;
		}
		check_model(region, model);
		if (step % 64u == 0u) {
			check_largest_free(region);
		}
	}
	for (size_t i = 0; i < MODEL_SLOTS; i++) {
		agent_region_free(region, model[i].ptr);
	}
	assert_int_equal(stats_of(region).used_bytes, 0);
	assert_int_equal(stats_of(region).blocks, 0);
	assert_int_equal(stats_of(region).largest_free_bytes, initial_largest);
	assert_int_equal(agent_region_deinit(region), 0);
}

static void test_random_against_model(void **state)
{
	(void)state;
	for (uint32_t seed = 1; seed <= 8; seed++) {
		run_random(seed * 2654435761u, 3000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_geometry),
		cmocka_unit_test(test_init_largest_region),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_deinit_busy),
		cmocka_unit_test(test_largest_free_exact),
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_coalescing_every_order),
		cmocka_unit_test(test_realloc_cases),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_bad_free_aborts),
#ifdef POSIX_ASAN
		cmocka_unit_test(test_asan_poisoning),
#endif
		cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
