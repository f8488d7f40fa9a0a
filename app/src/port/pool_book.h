/*
 * Block bookkeeping for fixed-block pools, shared by the POSIX and Zephyr ports so that both
 * report the same statistics and catch the same misuse. pool_table.c keeps the table of
 * pools on top of it and implements the agent_pool_* calls of agent_port.h; each port only
 * supplies the lock (agent_port_pool_lock/unlock). Standard C only, no OS header.
 */
#ifndef AGENT_POOL_BOOK_H
#define AGENT_POOL_BOOK_H

#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A bitmap of this many bits bounds the pool; larger pools are refused at init. */
#define AGENT_POOL_BOOK_MAX_BLOCKS 256u
#define AGENT_POOL_BOOK_ALIGN      8u

/* Pools one build can have (agent_pool_init returns -ENOMEM past this). */
#define AGENT_POOL_SLOTS 16

/* Supplied by each port: one lock around the pool table, taken from threads only. */
void agent_port_pool_lock(void);
void agent_port_pool_unlock(void);

/* Forget every pool (host tests only; no pool may be in use). */
void agent_pool_table_reset(void);

struct agent_pool_book {
	uintptr_t base;
	size_t block_bytes;
	uint32_t blocks;
	uint32_t blocks_free;
	uint32_t blocks_free_min;
	uint32_t alloc_failures;
	uint32_t bad_frees;
	size_t written_block_max; /* most bytes written into one block, over its returns */
	size_t written_busy;	  /* bytes written into the blocks returned in this busy period */
	size_t written_peak;	  /* most bytes written in one ended busy period */
	uint32_t used[AGENT_POOL_BOOK_MAX_BLOCKS / 32u];
};

/*
 * Bytes written are measured by painting: every block holds AGENT_POOL_PAINT while it is free.
 * When a block comes back, the books find its high-water mark: the first run of
 * AGENT_POOL_PAINT_RUN paint bytes at a multiple of that length ends the written part, and
 * paint bytes just before it are taken off; that much is painted again. Data that ends in the
 * paint byte, or holds such a run of it, reads short (0xA5 is a UTF-8 continuation byte: text
 * never has 64 in a row). A busy period runs from a moment when every block is free to the
 * next.
 */
#define AGENT_POOL_PAINT     0xA5u
#define AGENT_POOL_PAINT_RUN 64u

/**
 * Check the geometry, paint the buffer and start the books with every block free.
 *
 * @return 0, or -EINVAL when @p buffer is NULL or not 8-byte aligned, @p block_bytes is 0 or
 *         not a multiple of 8, @p blocks is 0 or above AGENT_POOL_BOOK_MAX_BLOCKS, or the
 *         buffer would wrap the address space.
 */
int agent_pool_book_init(struct agent_pool_book *book, void *buffer, size_t block_bytes,
			 uint32_t blocks);

/** The lowest free block, or NULL (counted in alloc_failures) when none is free. */
void *agent_pool_book_alloc(struct agent_pool_book *book);

/**
 * Return @p block to the books: its written bytes are measured and painted over.
 *
 * @return 0; -EINVAL for a pointer outside the buffer or not at the start of a block
 *         (NULL included); -EALREADY for a block that is already free. Both errors are
 *         counted in bad_frees and leave the books otherwise unchanged.
 */
int agent_pool_book_free(struct agent_pool_book *book, const void *block);

/**
 * Fill the counters of @p stats (block_bytes, blocks_total, blocks_free, blocks_free_min,
 * free_bytes, largest_free_bytes, alloc_failures, bad_frees, held_peak_bytes,
 * written_block_max_bytes, written_peak_bytes). The caller fills name and
 * mem_class, which the books do not know.
 */
void agent_pool_book_stats(const struct agent_pool_book *book, struct agent_pool_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* AGENT_POOL_BOOK_H */
