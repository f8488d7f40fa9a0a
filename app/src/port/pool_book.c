/*
 * Block bookkeeping for fixed-block pools: one bit per block, set while the block is lent out.
 * The bitmap is what lets a port tell a double free from a valid one, which a free list
 * threaded through the blocks themselves cannot do.
 */
#include "pool_book.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define BOOK_WORD_BITS 32u

static bool book_is_used(const struct agent_pool_book *book, uint32_t index)
{
	return (book->used[index / BOOK_WORD_BITS] >> (index % BOOK_WORD_BITS)) & 1u;
}

#define P8  AGENT_POOL_PAINT, AGENT_POOL_PAINT, AGENT_POOL_PAINT, AGENT_POOL_PAINT, \
	    AGENT_POOL_PAINT, AGENT_POOL_PAINT, AGENT_POOL_PAINT, AGENT_POOL_PAINT
/* A run of paint this long, at a multiple of its length, ends what was written. */
static const uint8_t paint_run[AGENT_POOL_PAINT_RUN] = {P8, P8, P8, P8, P8, P8, P8, P8};

/*
 * The block's high-water mark, counted and painted over for its next use. Written data sits
 * at the start of a block: the first aligned run of paint ends it, then the last bytes of
 * paint before that run are taken off. The cost follows what was written, not the block.
 */
static void book_measure(struct agent_pool_book *book, uint8_t *block)
{
	size_t end = book->block_bytes;
	size_t written = 0;

	while (written + AGENT_POOL_PAINT_RUN <= end &&
	       memcmp(block + written, paint_run, AGENT_POOL_PAINT_RUN) != 0) {
		written += AGENT_POOL_PAINT_RUN;
	}
	if (written + AGENT_POOL_PAINT_RUN > end) {
		written = end;
	}
	while (written > 0u && block[written - 1u] == AGENT_POOL_PAINT) {
		written--;
	}
	memset(block, AGENT_POOL_PAINT, written);
	if (written > book->written_block_max) {
		book->written_block_max = written;
	}
	book->written_busy += written;
}

int agent_pool_book_init(struct agent_pool_book *book, void *buffer, size_t block_bytes,
			 uint32_t blocks)
{
	uintptr_t base = (uintptr_t)buffer;

	if (book == NULL || buffer == NULL) {
		return -EINVAL;
	}
	if ((base % AGENT_POOL_BOOK_ALIGN) != 0u) {
		return -EINVAL;
	}
	if (block_bytes == 0u || (block_bytes % AGENT_POOL_BOOK_ALIGN) != 0u) {
		return -EINVAL;
	}
	if (blocks == 0u || blocks > AGENT_POOL_BOOK_MAX_BLOCKS) {
		return -EINVAL;
	}
	/* The end address must be representable, or the range checks in free would wrap. */
	if (block_bytes > (UINTPTR_MAX - base) / blocks) {
		return -EINVAL;
	}

	memset(buffer, AGENT_POOL_PAINT, block_bytes * blocks);
	memset(book, 0, sizeof(*book));
	book->base = base;
	book->block_bytes = block_bytes;
	book->blocks = blocks;
	book->blocks_free = blocks;
	book->blocks_free_min = blocks;
	return 0;
}

void *agent_pool_book_alloc(struct agent_pool_book *book)
{
	for (uint32_t word = 0u; word * BOOK_WORD_BITS < book->blocks; word++) {
		if (book->used[word] == UINT32_MAX) {
			continue;
		}
		for (uint32_t bit = 0u; bit < BOOK_WORD_BITS; bit++) {
			uint32_t index = word * BOOK_WORD_BITS + bit;

			if (index >= book->blocks) {
				break;
			}
			if ((book->used[word] & (1u << bit)) != 0u) {
				continue;
			}
			book->used[word] |= 1u << bit;
			book->blocks_free--;
			if (book->blocks_free < book->blocks_free_min) {
				book->blocks_free_min = book->blocks_free;
			}
			return (void *)(book->base + (uintptr_t)index * book->block_bytes);
		}
	}
	book->alloc_failures++;
	return NULL;
}

int agent_pool_book_free(struct agent_pool_book *book, const void *block)
{
	uintptr_t addr = (uintptr_t)block;
	uintptr_t offset;
	uint32_t index;

	if (block == NULL || addr < book->base) {
		book->bad_frees++;
		return -EINVAL;
	}
	offset = addr - book->base;
	if (offset / book->block_bytes >= book->blocks || (offset % book->block_bytes) != 0u) {
		book->bad_frees++;
		return -EINVAL;
	}
	index = (uint32_t)(offset / book->block_bytes);
	if (!book_is_used(book, index)) {
		book->bad_frees++;
		return -EALREADY;
	}
	book_measure(book, (uint8_t *)addr);
	book->used[index / BOOK_WORD_BITS] &= ~(1u << (index % BOOK_WORD_BITS));
	book->blocks_free++;
	if (book->blocks_free == book->blocks) {
		if (book->written_busy > book->written_peak) {
			book->written_peak = book->written_busy;
		}
		book->written_busy = 0;
	}
	return 0;
}

void agent_pool_book_stats(const struct agent_pool_book *book, struct agent_pool_stats *stats)
{
	stats->block_bytes = book->block_bytes;
	stats->blocks_total = book->blocks;
	stats->blocks_free = book->blocks_free;
	stats->blocks_free_min = book->blocks_free_min;
	stats->free_bytes = (size_t)book->blocks_free * book->block_bytes;
	stats->largest_free_bytes = book->blocks_free > 0u ? book->block_bytes : 0u;
	stats->alloc_failures = book->alloc_failures;
	stats->bad_frees = book->bad_frees;
	stats->held_peak_bytes = (size_t)(book->blocks - book->blocks_free_min) * book->block_bytes;
	stats->written_block_max_bytes = book->written_block_max;
	stats->written_peak_bytes = book->written_peak;
}
