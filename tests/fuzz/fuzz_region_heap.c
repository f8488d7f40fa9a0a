/*
 * libFuzzer target for the POSIX port's region heap (app/src/port/posix/region.c;
 * agent_port.h, "Region heaps"). The first two input bytes choose the region's size (256
 * bytes to 16 KiB); then every four bytes are one call: alloc, realloc or free of one of 32
 * slots with a size of up to twice the region. A model holds each live block's size and fill
 * pattern. After every call: no two blocks overlap, every block is inside the region and
 * 8-byte aligned, its bytes are as written (realloc keeps the common part), the statistics
 * agree with the model (used bytes, blocks, peak), and the largest free block can be had
 * while one byte more cannot. At the end everything is freed: nothing used, no blocks, the
 * largest free block the whole region's again, and the record can be given back. The
 * region's poisoning lets AddressSanitizer catch any write of the heap's into a block.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"

#define REGION_MAX_BYTES (16u * 1024u)
#define SLOTS		 32u

struct block {
	uint8_t *ptr;
	size_t bytes;
	uint8_t seed;
};

static uint8_t region_mem[REGION_MAX_BYTES] __attribute__((aligned(8)));

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_region_heap: %s\n", what);
		abort();
	}
}

static void fill(const struct block *b)
{
	for (size_t i = 0; i < b->bytes; i++) {
		b->ptr[i] = (uint8_t)(b->seed + i * 7u);
	}
}

static bool filled(const uint8_t *ptr, size_t bytes, uint8_t seed)
{
	for (size_t i = 0; i < bytes; i++) {
		if (ptr[i] != (uint8_t)(seed + i * 7u)) {
			return false;
		}
	}
	return true;
}

static struct agent_region_stats stats_of(struct agent_region *region)
{
	struct agent_region_stats stats;

	check(agent_region_stats(region, &stats) == 0, "stats refused");
	return stats;
}

static void check_model(struct agent_region *region, const struct block *model, size_t total,
			size_t *peak)
{
	struct agent_region_stats stats = stats_of(region);
	size_t used = 0;
	uint32_t blocks = 0;

	for (size_t i = 0; i < SLOTS; i++) {
		const struct block *b = &model[i];

		if (b->ptr == NULL) {
			continue;
		}
		used += b->bytes;
		blocks++;
		check(b->ptr >= region_mem && b->ptr + b->bytes <= region_mem + total,
		      "a block outside the region");
		check((uintptr_t)b->ptr % 8u == 0u, "a block not 8-byte aligned");
		check(filled(b->ptr, b->bytes, b->seed), "a block's bytes changed");
		for (size_t j = i + 1u; j < SLOTS; j++) {
			const struct block *o = &model[j];

			check(o->ptr == NULL || b->ptr + b->bytes <= o->ptr ||
				      o->ptr + o->bytes <= b->ptr,
			      "two blocks overlap");
		}
	}
	if (used > *peak) {
		*peak = used;
	}
	check(stats.used_bytes == used, "used_bytes is not the sum of the blocks");
	check(stats.blocks == blocks, "blocks is not the count of the blocks");
	check(stats.peak_used_bytes >= *peak, "peak_used_bytes below what was used");
	check(stats.largest_free_bytes + used <= total, "more free than the region has");
}

static void check_largest_free(struct agent_region *region)
{
	size_t largest = stats_of(region).largest_free_bytes;
	void *block;

	check(agent_region_alloc(region, largest + 1u) == NULL, "more than the largest free fit");
	if (largest > 0u) {
		block = agent_region_alloc(region, largest);
		check(block != NULL, "the largest free block was refused");
		agent_region_free(region, block);
	}
	check(stats_of(region).largest_free_bytes == largest, "the largest free block moved");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct block model[SLOTS] = {0};
	struct agent_region *region = NULL;
	size_t total;
	size_t initial_largest;
	size_t peak = 0;

	if (size < 2u) {
		return 0;
	}
	total = 256u + ((size_t)data[0] | (size_t)data[1] << 8) % (REGION_MAX_BYTES - 255u);
	check(agent_region_init(&region, "fuzz", region_mem, total) == 0, "init refused");
	total &= ~(size_t)7u;
	check(stats_of(region).total_bytes == total, "total_bytes is not the region");
	initial_largest = stats_of(region).largest_free_bytes;
	check(initial_largest == total - 8u, "a new region is not one free block");
	for (size_t at = 2u; at + 4u <= size; at += 4u) {
		struct block *b = &model[data[at] % SLOTS];
		size_t bytes = ((size_t)data[at + 2] | (size_t)data[at + 3] << 8) % (2u * total);
		uint8_t seed = (uint8_t)(data[at + 1] ^ data[at + 2]);

		switch (data[at + 1] % 4u) {
		case 0: /* alloc (a live slot's block is freed first) */
			agent_region_free(region, b->ptr);
			b->ptr = agent_region_alloc(region, bytes);
			b->bytes = b->ptr != NULL ? bytes : 0u;
			check(bytes != 0u || b->ptr == NULL, "a block of 0 bytes");
			break;
		case 1:
		case 2: { /* realloc */
			uint8_t *moved = agent_region_realloc(region, b->ptr, bytes);

			if (moved != NULL) {
				size_t kept = b->bytes < bytes ? b->bytes : bytes;

				check(b->ptr == NULL || filled(moved, kept, b->seed),
				      "realloc lost bytes");
				b->ptr = moved;
				b->bytes = bytes;
			} else if (bytes == 0u) {
				b->ptr = NULL;
				b->bytes = 0u;
			}
			break;
		}
		default:
			agent_region_free(region, b->ptr);
			b->ptr = NULL;
			b->bytes = 0u;
			break;
		}
		if (b->ptr != NULL) {
			b->seed = seed;
			fill(b);
		}
		check_model(region, model, total, &peak);
		if (data[at + 3] % 8u == 0u) {
			check_largest_free(region);
		}
	}
	for (size_t i = 0; i < SLOTS; i++) {
		agent_region_free(region, model[i].ptr);
	}
	check(stats_of(region).used_bytes == 0u, "bytes used after freeing everything");
	check(stats_of(region).blocks == 0u, "blocks left after freeing everything");
	check(stats_of(region).largest_free_bytes == initial_largest,
	      "the region is not one free block after freeing everything");
	check(agent_region_deinit(region) == 0, "deinit refused");
	return 0;
}
