/*
 * The module catalog (module_catalog.h; docs/modules.md "The catalog"): a fixed table of
 * entries and one static arena. The free runs are not recorded anywhere: they are the gaps
 * between the runs of the entries in use, found by walking those runs in offset order, so
 * a freed run and its free neighbours are one gap as soon as the entry is freed.
 */
#include "module_catalog.h"

#include <errno.h>
#include <string.h>

#define SLOTS	    CONFIG_AGENT_MODULE_SLOTS
#define ARENA_BYTES ((uint32_t)CONFIG_AGENT_CATALOG_BYTES)

static struct module_entry entries[SLOTS] AGENT_PSRAM_ATTR;
static char arena[ARENA_BYTES] AGENT_PSRAM_ATTR;
static uint32_t last_seq;

/* What a walk over the gaps found. */
struct gaps {
	bool fit;	 /* a gap of the size asked for exists */
	uint32_t fit_off; /* the lowest such gap's offset */
	uint32_t largest;
	uint32_t free_bytes;
};

/* Bytes of @p name up to its NUL, at most MODULE_NAME_MAX + 1 (C11 has no strnlen). */
static size_t name_length(const char *name)
{
	size_t n = 0;

	while (name != NULL && n <= MODULE_NAME_MAX && name[n] != '\0') {
		n++;
	}
	return n;
}

static bool valid_index(int index)
{
	return index >= 0 && index < SLOTS;
}

/* The entry in use whose run starts lowest at or after @p pos, or -1. */
static int next_run(uint32_t pos)
{
	int best = -1;

	for (int i = 0; i < SLOTS; i++) {
		const struct module_entry *e = &entries[i];

		if (e->state != MODULE_FREE && e->off >= pos &&
		    (best < 0 || e->off < entries[best].off)) {
			best = i;
		}
	}
	return best;
}

/* Walk the gaps from offset 0 up: the first that holds @p size bytes (0: none asked). */
static void walk_gaps(uint32_t size, struct gaps *g)
{
	uint32_t pos = 0;

	memset(g, 0, sizeof(*g));
	for (;;) {
		int i = next_run(pos);
		uint32_t end = i < 0 ? ARENA_BYTES : entries[i].off;
		uint32_t gap = end - pos;

		if (size > 0u && !g->fit && gap >= size) {
			g->fit = true;
			g->fit_off = pos;
		}
		if (gap > g->largest) {
			g->largest = gap;
		}
		g->free_bytes += gap;
		if (i < 0) {
			return;
		}
		pos = entries[i].off + module_entry_size(&entries[i]);
	}
}

void module_catalog_reset(void)
{
	memset(entries, 0, sizeof(entries));
	last_seq = 0;
}

int module_catalog_begin(const char *name, enum module_kind kind, uint32_t manifest_len,
			 uint32_t body_len, const uint8_t digest[MODULE_DIGEST_LEN],
			 uint32_t *need, uint32_t *largest)
{
	uint64_t size = (uint64_t)manifest_len + body_len;
	size_t name_len = name_length(name);
	struct gaps g;
	int slot = -1;

	if (!module_name_valid(name, name_len) || (unsigned int)kind >= MODULE_KIND_COUNT ||
	    size == 0u || size > ARENA_BYTES) {
		return -EINVAL;
	}
	int old = module_catalog_find(name, MODULE_INCOMPLETE);

	if (old >= 0) {
		module_catalog_free(old);
	}
	for (int i = 0; i < SLOTS && slot < 0; i++) {
		if (entries[i].state == MODULE_FREE) {
			slot = i;
		}
	}
	if (slot < 0) {
		return -ENOSPC;
	}
	walk_gaps((uint32_t)size, &g);
	if (!g.fit) {
		if (need != NULL) {
			*need = (uint32_t)size;
		}
		if (largest != NULL) {
			*largest = g.largest;
		}
		return -ENOMEM;
	}
	struct module_entry *e = &entries[slot];

	memset(e, 0, sizeof(*e));
	e->state = MODULE_INCOMPLETE;
	e->kind = kind;
	memcpy(e->name, name, name_len);
	if (digest != NULL) {
		memcpy(e->digest, digest, MODULE_DIGEST_LEN);
	}
	e->off = g.fit_off;
	e->manifest_len = manifest_len;
	e->body_len = body_len;
	return slot;
}

int module_catalog_write(int index, uint32_t off, const void *data, size_t len)
{
	if (!valid_index(index) || entries[index].state != MODULE_INCOMPLETE) {
		return -EINVAL;
	}
	struct module_entry *e = &entries[index];
	uint32_t size = module_entry_size(e);

	/* off <= size first, so size - off cannot wrap; len is compared whole (size_t). */
	if (off > size || len > (size_t)(size - off) || off > e->received ||
	    (len > 0u && data == NULL)) {
		return -EINVAL;
	}
	if (len > 0u) {
		memcpy(&arena[e->off + off], data, len);
	}
	if (off + (uint32_t)len > e->received) {
		e->received = off + (uint32_t)len;
	}
	return 0;
}

void *module_catalog_arrival_buffer(int index)
{
	if (!valid_index(index) || entries[index].state != MODULE_INCOMPLETE) {
		return NULL;
	}
	entries[index].received = module_entry_size(&entries[index]);
	return &arena[entries[index].off];
}

int module_catalog_commit(int index)
{
	if (!valid_index(index) || entries[index].state != MODULE_INCOMPLETE ||
	    entries[index].received != module_entry_size(&entries[index])) {
		return -EINVAL;
	}
	int old = module_catalog_find(entries[index].name, MODULE_INSTALLED);

	if (old >= 0) {
		module_catalog_free(old);
	}
	entries[index].state = MODULE_INSTALLED;
	entries[index].seq = ++last_seq;
	return 0;
}

void module_catalog_free(int index)
{
	if (valid_index(index)) {
		memset(&entries[index], 0, sizeof(entries[index]));
	}
}

const struct module_entry *module_catalog_entry(int index)
{
	return valid_index(index) ? &entries[index] : NULL;
}

const char *module_catalog_text(int index)
{
	if (!valid_index(index) || entries[index].state == MODULE_FREE) {
		return NULL;
	}
	return &arena[entries[index].off];
}

int module_catalog_find(const char *name, enum module_state state)
{
	if (name == NULL || state == MODULE_FREE) {
		return -ENOENT;
	}
	for (int i = 0; i < SLOTS; i++) {
		if (entries[i].state == state && strcmp(entries[i].name, name) == 0) {
			return i;
		}
	}
	return -ENOENT;
}

int module_catalog_next_installed(uint32_t after_seq)
{
	int best = -ENOENT;

	for (int i = 0; i < SLOTS; i++) {
		const struct module_entry *e = &entries[i];

		if (e->state == MODULE_INSTALLED && e->seq > after_seq &&
		    (best < 0 || e->seq < entries[best].seq)) {
			best = i;
		}
	}
	return best;
}

void module_catalog_stats(struct module_catalog_stats *out)
{
	struct gaps g;

	walk_gaps(0, &g);
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < SLOTS; i++) {
		if (entries[i].state != MODULE_FREE) {
			out->entries++;
			out->used_bytes += module_entry_size(&entries[i]);
		}
	}
	out->free_bytes = g.free_bytes;
	out->largest_free = g.largest;
}
