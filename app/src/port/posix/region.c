/*
 * Region heaps of the POSIX port (agent_port.h, "Region heaps"; docs/simulator.md, "Region
 * heaps"): a first-fit heap of the port's own inside memory the caller provides.
 *
 * The region is cut into chunks of whole 8-byte units. Every chunk starts with an 8-byte
 * header: the previous chunk's size in units (0 for the first chunk) and a word holding this
 * chunk's size in units, the used bit and, for a used chunk, the slack (payload bytes beyond
 * those asked for, 0..15), so the bytes asked for are known exactly. The payload follows the
 * header, so blocks are 8-byte aligned. A free chunk keeps its free-list links (unit offsets
 * of the next and previous free chunk) in its first payload unit, so a chunk is at least two
 * units and an allocation of up to 8 bytes takes 16.
 *
 * alloc takes the first chunk of the free list (newest freed first) that fits and splits off
 * the rest when it is a chunk of its own (two units or more). free merges the chunk with a
 * free neighbour on either side at once, so no two free chunks are ever adjacent. realloc
 * shrinks in place (the tail becomes free, merged with a free right neighbour), grows in
 * place into a free right neighbour that is big enough, and otherwise allocates, copies and
 * frees; when that allocation fails the block is left as it was.
 *
 * Under AddressSanitizer everything in the region is poisoned but the bytes asked for by live
 * blocks: headers and links are unpoisoned only while this file reads or writes them (under
 * the record's lock), so a runtime's overflow past its block, underflow into a header or use
 * of a freed block is reported where it happens.
 *
 * A free of a pointer that is not a live block of the region (a double free, a pointer into
 * a block) is a bug of the caller: reported on stderr, then abort(), like the C library's
 * checks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "posix_asan.h"
#include "posix_port.h"

#define UNIT		8u
#define NONE		UINT32_MAX   /* no chunk: the end of the free list */
#define MIN_UNITS	2u	     /* header + links */
#define MIN_BYTES	256u	     /* agent_port.h: the smallest region */
#define UNITS_SHIFT	5u	     /* word: units << 5 | slack << 1 | used */
#define SLACK_MASK	0x1eu
#define USED_BIT	0x1u
#define MAX_UNITS	(POSIX_REGION_MAX_BYTES / UNIT) /* what the header's size field holds */

_Static_assert(MAX_UNITS < NONE, "a chunk offset never looks like NONE");

struct chunk_header {
	uint32_t prev_units; /* the chunk on the left's size; 0: none (the first chunk) */
	uint32_t word;
};

struct free_links {
	uint32_t next;
	uint32_t prev;
};

struct agent_region {
	pthread_mutex_t lock;
	bool in_use;
	const char *name;
	uint8_t *base;
	uint32_t units;	    /* chunks cover units [0, units) */
	uint32_t free_head; /* first chunk of the free list, NONE when empty */
	size_t used_bytes;
	size_t peak_used_bytes;
	uint32_t blocks;
	uint32_t alloc_failures;
};

static struct agent_region region_table[AGENT_REGIONS_MAX];
static pthread_mutex_t region_table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t region_once = PTHREAD_ONCE_INIT;

static void region_locks_init(void)
{
	for (size_t i = 0; i < AGENT_REGIONS_MAX; i++) {
		pthread_mutex_init(&region_table[i].lock, NULL);
	}
}

/* ---- Bookkeeping in the region (poisoned but while it is read or written) ---------------- */

static uint8_t *unit_at(const struct agent_region *r, uint32_t unit)
{
	return r->base + (size_t)unit * UNIT;
}

static struct chunk_header header_get(const struct agent_region *r, uint32_t c)
{
	struct chunk_header h;

	POSIX_UNPOISON(unit_at(r, c), UNIT);
	memcpy(&h, unit_at(r, c), sizeof(h));
	POSIX_POISON(unit_at(r, c), UNIT);
	return h;
}

static void header_put(struct agent_region *r, uint32_t c, struct chunk_header h)
{
	POSIX_UNPOISON(unit_at(r, c), UNIT);
	memcpy(unit_at(r, c), &h, sizeof(h));
	POSIX_POISON(unit_at(r, c), UNIT);
}

static uint32_t chunk_units(const struct agent_region *r, uint32_t c)
{
	return header_get(r, c).word >> UNITS_SHIFT;
}

static bool chunk_used(const struct agent_region *r, uint32_t c)
{
	return (header_get(r, c).word & USED_BIT) != 0u;
}

/* The payload bytes of a used chunk that were asked for. */
static size_t chunk_asked(struct chunk_header h)
{
	return (size_t)((h.word >> UNITS_SHIFT) - 1u) * UNIT - ((h.word & SLACK_MASK) >> 1);
}

/* Write chunk @p c's size, state and asked bytes, keeping its left size. */
static void chunk_set(struct agent_region *r, uint32_t c, uint32_t units, bool used,
		      size_t asked)
{
	struct chunk_header h = header_get(r, c);
	uint32_t slack = used ? (uint32_t)((size_t)(units - 1u) * UNIT - asked) : 0u;

	h.word = (units << UNITS_SHIFT) | (slack << 1) | (used ? USED_BIT : 0u);
	header_put(r, c, h);
}

/* Tell the chunk right of @p c (if any) that @p c is now @p units long. */
static void right_prev_set(struct agent_region *r, uint32_t c, uint32_t units)
{
	uint32_t right = c + units;

	if (right < r->units) {
		struct chunk_header h = header_get(r, right);

		h.prev_units = units;
		header_put(r, right, h);
	}
}

/* A chunk swallowed by its left neighbour: its old header must not pass for a live block. */
static void header_clear(struct agent_region *r, uint32_t c)
{
	header_put(r, c, (struct chunk_header){0});
}

static struct free_links links_get(const struct agent_region *r, uint32_t c)
{
	struct free_links l;

	POSIX_UNPOISON(unit_at(r, c + 1u), UNIT);
	memcpy(&l, unit_at(r, c + 1u), sizeof(l));
	POSIX_POISON(unit_at(r, c + 1u), UNIT);
	return l;
}

static void links_put(struct agent_region *r, uint32_t c, struct free_links l)
{
	POSIX_UNPOISON(unit_at(r, c + 1u), UNIT);
	memcpy(unit_at(r, c + 1u), &l, sizeof(l));
	POSIX_POISON(unit_at(r, c + 1u), UNIT);
}

static void free_list_push(struct agent_region *r, uint32_t c)
{
	if (r->free_head != NONE) {
		struct free_links head = links_get(r, r->free_head);

		head.prev = c;
		links_put(r, r->free_head, head);
	}
	links_put(r, c, (struct free_links){.next = r->free_head, .prev = NONE});
	r->free_head = c;
}

static void free_list_remove(struct agent_region *r, uint32_t c)
{
	struct free_links l = links_get(r, c);

	if (l.prev != NONE) {
		struct free_links prev = links_get(r, l.prev);

		prev.next = l.next;
		links_put(r, l.prev, prev);
	} else {
		r->free_head = l.next;
	}
	if (l.next != NONE) {
		struct free_links next = links_get(r, l.next);

		next.prev = l.prev;
		links_put(r, l.next, next);
	}
}

/* ---- The heap (the record's lock held) ---------------------------------------------------- */

/* Units of a chunk whose payload holds @p bytes; 0 when no chunk of the region could. */
static uint32_t units_for(const struct agent_region *r, size_t bytes)
{
	size_t units;

	if (bytes >= (size_t)r->units * UNIT) {
		return 0;
	}
	units = 1u + (bytes + UNIT - 1u) / UNIT;
	return units < MIN_UNITS ? MIN_UNITS : (uint32_t)units;
}

static void *payload_of(const struct agent_region *r, uint32_t c)
{
	return unit_at(r, c + 1u);
}

/*
 * Make chunk @p c (not on the free list, @p have units) a used chunk of @p need units holding
 * @p asked bytes: a tail of two units or more becomes a free chunk, merged with a free right
 * neighbour. The payload is poisoned but for the bytes asked for.
 */
static void chunk_take(struct agent_region *r, uint32_t c, uint32_t have, uint32_t need,
		       size_t asked)
{
	if (have - need >= MIN_UNITS) {
		uint32_t tail = c + need;
		uint32_t tail_units = have - need;
		uint32_t right = c + have;

		if (right < r->units && !chunk_used(r, right)) {
			tail_units += chunk_units(r, right);
			free_list_remove(r, right);
			header_clear(r, right);
		}
		header_put(r, tail, (struct chunk_header){.prev_units = need});
		chunk_set(r, tail, tail_units, false, 0);
		right_prev_set(r, tail, tail_units);
		free_list_push(r, tail);
		have = need;
	}
	chunk_set(r, c, have, true, asked);
	POSIX_POISON(payload_of(r, c), (size_t)(have - 1u) * UNIT);
	POSIX_UNPOISON(payload_of(r, c), asked);
}

static void used_add(struct agent_region *r, size_t bytes)
{
	r->used_bytes += bytes;
	if (r->used_bytes > r->peak_used_bytes) {
		r->peak_used_bytes = r->used_bytes;
	}
}

static void *alloc_locked(struct agent_region *r, size_t bytes)
{
	uint32_t need = units_for(r, bytes);

	if (need != 0u) {
		for (uint32_t c = r->free_head; c != NONE; c = links_get(r, c).next) {
			uint32_t have = chunk_units(r, c);

			if (have >= need) {
				free_list_remove(r, c);
				chunk_take(r, c, have, need, bytes);
				used_add(r, bytes);
				r->blocks++;
				return payload_of(r, c);
			}
		}
	}
	r->alloc_failures++;
	return NULL;
}

/* The chunk of live block @p ptr; reports and aborts when @p ptr is none. */
static uint32_t chunk_of(const struct agent_region *r, const void *ptr, const char *what)
{
	uintptr_t addr = (uintptr_t)ptr;
	uintptr_t first = (uintptr_t)r->base + UNIT;
	uintptr_t end = (uintptr_t)r->base + (size_t)r->units * UNIT;

	if (addr >= first && addr < end && (addr - first) % UNIT == 0u) {
		uint32_t c = (uint32_t)((addr - first) / UNIT);
		struct chunk_header h = header_get(r, c);
		uint32_t units = h.word >> UNITS_SHIFT;
		bool left_ok = c == 0u ? h.prev_units == 0u
				       : h.prev_units != 0u && h.prev_units <= c &&
						 chunk_units(r, c - h.prev_units) == h.prev_units;

		if ((h.word & USED_BIT) != 0u && units >= MIN_UNITS && units <= r->units - c &&
		    left_ok &&
		    (c + units == r->units || header_get(r, c + units).prev_units == units)) {
			return c;
		}
	}
	fprintf(stderr, "agent_region_%s: region \"%s\": %p is not a live block of it\n", what,
		r->name != NULL ? r->name : "", ptr);
	abort();
}

static void free_locked(struct agent_region *r, uint32_t c)
{
	struct chunk_header h = header_get(r, c);
	uint32_t units = h.word >> UNITS_SHIFT;
	uint32_t right = c + units;

	r->used_bytes -= chunk_asked(h);
	r->blocks--;
	POSIX_POISON(payload_of(r, c), (size_t)(units - 1u) * UNIT);
	if (right < r->units && !chunk_used(r, right)) {
		units += chunk_units(r, right);
		free_list_remove(r, right);
		header_clear(r, right);
	}
	if (h.prev_units != 0u && !chunk_used(r, c - h.prev_units)) {
		uint32_t left = c - h.prev_units;

		free_list_remove(r, left);
		header_clear(r, c);
		units += h.prev_units;
		c = left;
	}
	chunk_set(r, c, units, false, 0);
	right_prev_set(r, c, units);
	free_list_push(r, c);
}

static void *realloc_locked(struct agent_region *r, void *ptr, size_t bytes)
{
	uint32_t c = chunk_of(r, ptr, "realloc");
	struct chunk_header h = header_get(r, c);
	uint32_t have = h.word >> UNITS_SHIFT;
	size_t old = chunk_asked(h);
	uint32_t need = units_for(r, bytes);
	uint32_t right = c + have;
	void *moved;

	if (need == 0u) {
		r->alloc_failures++;
		return NULL;
	}
	if (need <= have) {
		chunk_take(r, c, have, need, bytes);
	} else if (right < r->units && !chunk_used(r, right) &&
		   have + chunk_units(r, right) >= need) {
		uint32_t grown = have + chunk_units(r, right);

		free_list_remove(r, right);
		header_clear(r, right);
		right_prev_set(r, c, grown);
		chunk_take(r, c, grown, need, bytes);
	} else {
		moved = alloc_locked(r, bytes);
		if (moved != NULL) {
			memcpy(moved, ptr, old < bytes ? old : bytes);
			free_locked(r, c);
		}
		return moved;
	}
	r->used_bytes -= old;
	used_add(r, bytes);
	return ptr;
}

/* ---- The API ------------------------------------------------------------------------------ */

int agent_region_init(struct agent_region **out, const char *name, void *mem, size_t bytes)
{
	struct agent_region *r = NULL;
	size_t units = bytes / UNIT;

	if (out == NULL || mem == NULL || (uintptr_t)mem % UNIT != 0u || bytes < MIN_BYTES ||
	    units > MAX_UNITS) {
		return -EINVAL;
	}
	pthread_once(&region_once, region_locks_init);
	pthread_mutex_lock(&region_table_lock);
	for (size_t i = 0; i < AGENT_REGIONS_MAX && r == NULL; i++) {
		if (!region_table[i].in_use) {
			r = &region_table[i];
		}
	}
	if (r != NULL) {
		pthread_mutex_lock(&r->lock);
		r->in_use = true;
		r->name = name;
		r->base = mem;
		r->units = (uint32_t)units;
		r->free_head = NONE;
		r->used_bytes = 0;
		r->peak_used_bytes = 0;
		r->blocks = 0;
		r->alloc_failures = 0;
		POSIX_POISON(r->base, units * UNIT);
		header_put(r, 0, (struct chunk_header){.prev_units = 0});
		chunk_set(r, 0, r->units, false, 0);
		free_list_push(r, 0);
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_unlock(&region_table_lock);
	if (r == NULL) {
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

/* Lock @p r when it is a record in use; false (nothing locked) otherwise. */
static bool region_lock(struct agent_region *r)
{
	if (r == NULL) {
		return false;
	}
	pthread_once(&region_once, region_locks_init);
	pthread_mutex_lock(&r->lock);
	if (!r->in_use) {
		pthread_mutex_unlock(&r->lock);
		return false;
	}
	return true;
}

int agent_region_deinit(struct agent_region *region)
{
	int err = 0;

	pthread_mutex_lock(&region_table_lock);
	if (!region_lock(region)) {
		err = -EINVAL;
	} else {
		if (region->blocks != 0u) {
			err = -EBUSY;
		} else {
			/* The memory is the caller's again, to use as it likes. */
			POSIX_UNPOISON(region->base, (size_t)region->units * UNIT);
			region->in_use = false;
		}
		pthread_mutex_unlock(&region->lock);
	}
	pthread_mutex_unlock(&region_table_lock);
	return err;
}

void *agent_region_alloc(struct agent_region *region, size_t bytes)
{
	void *block;

	if (bytes == 0u || !region_lock(region)) {
		return NULL;
	}
	block = alloc_locked(region, bytes);
	pthread_mutex_unlock(&region->lock);
	return block;
}

void *agent_region_realloc(struct agent_region *region, void *ptr, size_t bytes)
{
	void *block = NULL;

	if (ptr == NULL) {
		return agent_region_alloc(region, bytes);
	}
	if (bytes == 0u) {
		agent_region_free(region, ptr);
		return NULL;
	}
	if (region_lock(region)) {
		block = realloc_locked(region, ptr, bytes);
		pthread_mutex_unlock(&region->lock);
	}
	return block;
}

void agent_region_free(struct agent_region *region, void *ptr)
{
	if (ptr == NULL || !region_lock(region)) {
		return;
	}
	free_locked(region, chunk_of(region, ptr, "free"));
	pthread_mutex_unlock(&region->lock);
}

int agent_region_stats(struct agent_region *region, struct agent_region_stats *out)
{
	uint32_t largest = 0;

	if (out == NULL || !region_lock(region)) {
		return -EINVAL;
	}
	for (uint32_t c = region->free_head; c != NONE; c = links_get(region, c).next) {
		uint32_t units = chunk_units(region, c);

		if (units > largest) {
			largest = units;
		}
	}
	out->name = region->name;
	out->total_bytes = (size_t)region->units * UNIT;
	out->used_bytes = region->used_bytes;
	out->peak_used_bytes = region->peak_used_bytes;
	out->largest_free_bytes = largest != 0u ? (size_t)(largest - 1u) * UNIT : 0u;
	out->blocks = region->blocks;
	out->alloc_failures = region->alloc_failures;
	pthread_mutex_unlock(&region->lock);
	return 0;
}

void agent_region_reset_peak(struct agent_region *region)
{
	if (region_lock(region)) {
		region->peak_used_bytes = region->used_bytes;
		pthread_mutex_unlock(&region->lock);
	}
}
