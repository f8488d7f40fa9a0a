/*
 * The module catalog (docs/modules.md "The catalog"): CONFIG_AGENT_MODULE_SLOTS entries and
 * one CONFIG_AGENT_CATALOG_BYTES arena holding each entry's text, its manifest followed by
 * its body. An entry's text is one contiguous run of the arena; the free runs are the gaps
 * between the entries' runs, so freed neighbours always form one run. No malloc.
 *
 * An arrival takes an entry in state MODULE_INCOMPLETE with its whole size reserved at
 * begin; bytes are written at offsets; commit turns it into MODULE_INSTALLED and frees the
 * installed entry of the same name (if any) in the same step. Not thread-safe: the import
 * operation (module_import.c) serialises every caller.
 */
#ifndef AGENT_MODULE_CATALOG_H
#define AGENT_MODULE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"

struct module_entry {
	enum module_state state;
	enum module_kind kind;
	char name[MODULE_NAME_MAX + 1];
	uint8_t digest[MODULE_DIGEST_LEN];
	uint32_t off;	       /* of the text in the arena */
	uint32_t manifest_len; /* the text is manifest_len + body_len bytes */
	uint32_t body_len;
	uint32_t received;     /* bytes written so far (an arrival); the whole size once installed */
	uint32_t seq;	       /* order of installation (restore and listing keep it) */
};

/** Forget every entry (boot, tests). */
void module_catalog_reset(void);

/**
 * Start an arrival of @p name: frees an incomplete arrival of that name first, then takes a
 * free entry and reserves manifest_len + body_len contiguous bytes (first fit). Returns
 * the entry's index; -ENOSPC when every entry is taken; -ENOMEM when no free run is large
 * enough, with *@p need set to the bytes required (and *@p largest to the largest free run);
 * -EINVAL for a size of 0 or over the arena.
 */
int module_catalog_begin(const char *name, enum module_kind kind, uint32_t manifest_len,
			 uint32_t body_len, const uint8_t digest[MODULE_DIGEST_LEN],
			 uint32_t *need, uint32_t *largest);

/**
 * Copy @p len bytes to offset @p off of arrival @p index's text. -EINVAL when the entry is
 * not an arrival or the bytes would pass its size; parts may come in any order and
 * overlap; received counts the highest contiguous end written from 0 (a gap is not
 * counted).
 */
int module_catalog_write(int index, uint32_t off, const void *data, size_t len);

/**
 * Install arrival @p index: it must have received every byte (-EINVAL otherwise). The
 * installed entry of the same name, if any, is freed. Returns 0.
 */
int module_catalog_commit(int index);

/** Free entry @p index (an arrival or an installed entry). */
void module_catalog_free(int index);

/** The entry at @p index (0 .. CONFIG_AGENT_MODULE_SLOTS - 1), or NULL out of range. */
const struct module_entry *module_catalog_entry(int index);

/** The entry's text (manifest then body), or NULL for a free entry. */
const char *module_catalog_text(int index);

/** The index of the entry named @p name in @p state, or -ENOENT. */
int module_catalog_find(const char *name, enum module_state state);

/** Entries in use, free arena bytes, largest free run (for `agent modules` and tests). */
struct module_catalog_stats {
	uint32_t entries;
	uint32_t used_bytes;
	uint32_t free_bytes;
	uint32_t largest_free;
};
void module_catalog_stats(struct module_catalog_stats *out);

#endif /* AGENT_MODULE_CATALOG_H */
