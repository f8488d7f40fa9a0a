/*
 * The device's memory as `agent status`, system_status and jobs_list report it, and the
 * samples the request path takes (docs/jobs.md, "Memory figures").
 *
 * Per memory class (internal RAM, PSRAM) the free memory is the free bytes of the port's
 * run-time heap of that class (agent_heap_stats(); none where the class has no heap) plus the
 * free blocks of the agent's pools of that class; the largest free block is the larger of the
 * heap's largest free block and the largest free pool block.
 *
 * The provider samples around each request (provider_run(), one turn): PSRAM free before it
 * takes its buffers and at completion (while it still holds them); counts every HTTP request
 * it sends (an empty turn asked again is two); and samples internal free memory while a
 * response streams in: at its first received chunk and then at most once every
 * AGENT_MEM_SAMPLE_INTERVAL_MS (the lowest since start-up is kept). A reading walks the
 * heap under its lock (Zephyr: interrupts off), so it is not taken for every chunk.
 */
#ifndef AGENT_MEM_H
#define AGENT_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

struct agent_mem_figures {
	size_t free_bytes;	   /* heap free plus pool free */
	size_t largest_free_bytes; /* the largest single free block, heap or pool */
	bool heap_present;	   /* the class has a run-time heap; heap is valid */
	struct agent_heap_stats heap;
	size_t pool_free_bytes; /* summed over the pools of the class */
	size_t pool_largest_free_bytes;
	uint32_t pools;
};

struct agent_mem_requests {
	uint32_t requests; /* HTTP requests sent to the provider since start-up */
	/* The lowest internal free memory sampled while a response streamed in (the first
	 * chunk of each response, then at most one sample per AGENT_MEM_SAMPLE_INTERVAL_MS),
	 * since start-up; valid when streamed. */
	bool streamed;
	size_t internal_lowest_streaming;
	/* The last request: PSRAM free before it took its buffers, and at its completion (its
	 * buffers still held); valid when last_known (completion once it completed). */
	bool last_known;
	bool last_completed;
	size_t psram_before;
	size_t psram_at_completion;
};

/* Pools one reading looks at; more are left out (the ports have 16 slots). */
#define AGENT_MEM_POOLS_MAX 16

/* While a response streams in, at most one internal memory sample per this many ms. */
#define AGENT_MEM_SAMPLE_INTERVAL_MS 50

/** The statistics of every pool, as agent_pool_foreach() gives them (at most the first
 * AGENT_MEM_POOLS_MAX). */
struct agent_mem_pool_list {
	struct agent_pool_stats stats[AGENT_MEM_POOLS_MAX];
	size_t count;
};

/** Read every pool's statistics into @p list. */
void agent_mem_pools(struct agent_mem_pool_list *list);

/** Every figure of every class, now (walks the heaps for their largest blocks). */
void agent_mem_read(struct agent_mem_figures out[AGENT_MEM_CLASS_COUNT]);

/** The same from pools read already (@p count of them) and the heaps as they are now. */
void agent_mem_figures_from_pools(struct agent_mem_figures out[AGENT_MEM_CLASS_COUNT],
				  const struct agent_pool_stats *pools, size_t count);

/** The free memory of @p mem_class only (on Zephyr still a walk of the heap). */
size_t agent_mem_free(enum agent_mem_class mem_class);

/** A request to the provider starts, before it takes its buffers: samples PSRAM. */
void agent_mem_request_begin(void);
/** An HTTP request is about to be sent: counts it; its first received chunk is sampled. */
void agent_mem_http_request(void);
/**
 * A chunk of the response came in at @p now_ms (agent_uptime_ms()): samples internal free
 * memory when it is the response's first, or AGENT_MEM_SAMPLE_INTERVAL_MS have passed since
 * the last sample. Returns whether it sampled.
 */
bool agent_mem_stream_chunk(int64_t now_ms);
/** The request completed (or failed), its buffers still held: samples PSRAM. */
void agent_mem_request_end(void);

void agent_mem_requests_get(struct agent_mem_requests *out);

/** Back to no requests (tests). */
void agent_mem_reset(void);

#endif /* AGENT_MEM_H */
