/* Memory figures and the request path's samples (agent_mem.h). */
#include "agent_mem.h"

#include <stdatomic.h>
#include <string.h>

static void pool_add(struct agent_mem_figures *out, const struct agent_pool_stats *s)
{
	struct agent_mem_figures *m = &out[s->mem_class];

	m->pool_free_bytes += s->free_bytes;
	if (s->largest_free_bytes > m->pool_largest_free_bytes) {
		m->pool_largest_free_bytes = s->largest_free_bytes;
	}
	m->pools++;
}

void agent_mem_figures_from_pools(struct agent_mem_figures out[AGENT_MEM_CLASS_COUNT],
				  const struct agent_pool_stats *pools, size_t count)
{
	memset(out, 0, sizeof(*out) * AGENT_MEM_CLASS_COUNT);
	for (size_t i = 0; i < count; i++) {
		pool_add(out, &pools[i]);
	}
	for (size_t c = 0; c < AGENT_MEM_CLASS_COUNT; c++) {
		struct agent_mem_figures *m = &out[c];

		m->heap_present = agent_heap_stats((enum agent_mem_class)c, &m->heap) == 0;
		if (!m->heap_present) {
			memset(&m->heap, 0, sizeof(m->heap));
		}
		m->free_bytes = m->pool_free_bytes + m->heap.free_bytes;
		m->largest_free_bytes = m->heap.largest_free_bytes > m->pool_largest_free_bytes
						? m->heap.largest_free_bytes
						: m->pool_largest_free_bytes;
	}
}

static int pool_collect(const struct agent_pool_stats *s, void *user_data)
{
	struct agent_mem_pool_list *list = user_data;

	if (list->count == AGENT_MEM_POOLS_MAX) {
		return 1;
	}
	list->stats[list->count++] = *s;
	return 0;
}

void agent_mem_pools(struct agent_mem_pool_list *list)
{
	list->count = 0;
	agent_pool_foreach(pool_collect, list);
}

void agent_mem_read(struct agent_mem_figures out[AGENT_MEM_CLASS_COUNT])
{
	struct agent_mem_pool_list list;

	agent_mem_pools(&list);
	agent_mem_figures_from_pools(out, list.stats, list.count);
}

struct class_free {
	enum agent_mem_class mem_class;
	size_t bytes;
};

static int pool_free_add(const struct agent_pool_stats *s, void *user_data)
{
	struct class_free *sum = user_data;

	if (s->mem_class == sum->mem_class) {
		sum->bytes += s->free_bytes;
	}
	return 0;
}

size_t agent_mem_free(enum agent_mem_class mem_class)
{
	struct class_free sum = {.mem_class = mem_class};
	size_t heap_free;

	agent_pool_foreach(pool_free_add, &sum);
	if (agent_heap_free(mem_class, &heap_free) == 0) {
		sum.bytes += heap_free;
	}
	return sum.bytes;
}

/*
 * Written by the request worker, read by the shell and the tools: each figure is one atomic
 * word, so a reader never sees half of one (a reader during a request may pair a new
 * "before" with the previous completion, which the flags below make visible).
 */
static atomic_uint mem_requests;
static atomic_bool mem_streamed;
static atomic_size_t mem_internal_lowest;
static atomic_bool mem_last_known;
static atomic_bool mem_last_completed;
static atomic_size_t mem_psram_before;
static atomic_size_t mem_psram_at_completion;

/* The sampling schedule: only the request worker touches these, one request at a time. */
static bool mem_sample_due;
static int64_t mem_sample_last_ms;

void agent_mem_request_begin(void)
{
	atomic_store(&mem_last_completed, false);
	atomic_store(&mem_psram_before, agent_mem_free(AGENT_MEM_PSRAM));
	atomic_store(&mem_last_known, true);
}

void agent_mem_http_request(void)
{
	atomic_fetch_add(&mem_requests, 1u);
	mem_sample_due = true;
}

bool agent_mem_stream_chunk(int64_t now_ms)
{
	size_t now;

	if (!mem_sample_due && now_ms - mem_sample_last_ms < AGENT_MEM_SAMPLE_INTERVAL_MS) {
		return false;
	}
	mem_sample_due = false;
	mem_sample_last_ms = now_ms;
	now = agent_mem_free(AGENT_MEM_INTERNAL);
	/* Only the request worker writes, one request at a time: no lost update. */
	if (!atomic_load(&mem_streamed) || now < atomic_load(&mem_internal_lowest)) {
		atomic_store(&mem_internal_lowest, now);
		atomic_store(&mem_streamed, true);
	}
	return true;
}

void agent_mem_request_end(void)
{
	atomic_store(&mem_psram_at_completion, agent_mem_free(AGENT_MEM_PSRAM));
	atomic_store(&mem_last_completed, true);
}

void agent_mem_requests_get(struct agent_mem_requests *out)
{
	out->requests = atomic_load(&mem_requests);
	out->streamed = atomic_load(&mem_streamed);
	out->internal_lowest_streaming = out->streamed ? atomic_load(&mem_internal_lowest) : 0u;
	out->last_known = atomic_load(&mem_last_known);
	out->last_completed = out->last_known && atomic_load(&mem_last_completed);
	out->psram_before = out->last_known ? atomic_load(&mem_psram_before) : 0u;
	out->psram_at_completion = out->last_completed ? atomic_load(&mem_psram_at_completion) : 0u;
}

void agent_mem_reset(void)
{
	atomic_store(&mem_requests, 0u);
	atomic_store(&mem_streamed, false);
	atomic_store(&mem_internal_lowest, 0u);
	atomic_store(&mem_last_known, false);
	atomic_store(&mem_last_completed, false);
	atomic_store(&mem_psram_before, 0u);
	atomic_store(&mem_psram_at_completion, 0u);
	mem_sample_due = false;
	mem_sample_last_ms = 0;
}
