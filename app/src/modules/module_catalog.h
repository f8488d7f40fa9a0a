/*
 * The module catalog (docs/modules.md "The catalog"): CONFIG_AGENT_MODULE_SLOTS entries and
 * one CONFIG_AGENT_CATALOG_BYTES arena holding each entry's text, its manifest followed by
 * its body. An entry's text is one contiguous run of the arena; the free runs are the gaps
 * between the entries' runs, so freed neighbours always form one run. No malloc.
 *
 * An arrival takes an entry in state MODULE_INCOMPLETE with its whole size reserved at
 * begin; bytes are written at offsets; commit turns it into MODULE_INSTALLED and frees the
 * installed entry of the same name (if any) in the same step. So a name has at most one
 * installed entry and one arrival, and re-importing an installed name needs room for the
 * old and the new text together until the commit. Runs never move: a text pointer stays
 * valid until its entry is freed. Not thread-safe: the import operation (module_import.c)
 * serialises every caller.
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

/** The entry's text size: manifest_len + body_len. */
static inline uint32_t module_entry_size(const struct module_entry *e)
{
	return e->manifest_len + e->body_len;
}

/** Forget every entry (boot, tests). */
void module_catalog_reset(void);

/**
 * Start an arrival of @p name: frees an incomplete arrival of that name first (even when
 * the begin is then refused for room), then takes the lowest free entry and reserves
 * manifest_len + body_len contiguous bytes at the lowest gap large enough (first fit).
 * Returns the entry's index; -ENOSPC when every entry is taken; -ENOMEM when no free run is
 * large enough, with *@p need set to the bytes required and *@p largest to the largest free
 * run (either pointer may be NULL; both are set on -ENOMEM only); -EINVAL for an invalid
 * name (module_name_valid) or kind, or a size of 0 or over the arena (nothing is freed
 * then). @p digest may be NULL (all zero).
 */
int module_catalog_begin(const char *name, enum module_kind kind, uint32_t manifest_len,
			 uint32_t body_len, const uint8_t digest[MODULE_DIGEST_LEN],
			 uint32_t *need, uint32_t *largest);

/**
 * Copy @p len bytes to offset @p off of arrival @p index's text. Parts come in order: a
 * part starts at or before `received` (the next byte expected, or a resend of bytes already
 * there, which may overlap and run on past them), and `received` becomes the largest end
 * written, so the text's first `received` bytes are always all written. -EINVAL when the
 * entry is not an arrival, when off + len would pass its size (overflow-safe), or when the
 * part starts past `received` (a gap: the caller names the entry's received as the offset
 * it expected). A refused write changes nothing.
 */
int module_catalog_write(int index, uint32_t off, const void *data, size_t len);

/**
 * The whole text of arrival @p index, writable, for a reader that fills it in one piece and
 * checks the bytes itself (the journal replay: the record's CRC) instead of writing parts.
 * Every byte counts as received from then on (received = the size), so the caller must fill
 * all of it, or free the entry, before a commit. NULL when @p index is not an arrival.
 */
void *module_catalog_arrival_buffer(int index);

/**
 * Install arrival @p index: it must have received every byte (-EINVAL otherwise, or when
 * the entry is not an arrival). The installed entry of the same name, if any, is freed.
 * The entry's seq is one more than the last commit's (the first after a reset is 1).
 * Returns 0.
 */
int module_catalog_commit(int index);

/** Free entry @p index (an arrival or an installed entry); nothing out of range. */
void module_catalog_free(int index);

/** The entry at @p index (0 .. CONFIG_AGENT_MODULE_SLOTS - 1), or NULL out of range. */
const struct module_entry *module_catalog_entry(int index);

/** The entry's text (manifest then body), or NULL for a free entry. */
const char *module_catalog_text(int index);

/** The index of the entry named @p name in @p state (not MODULE_FREE), or -ENOENT. */
int module_catalog_find(const char *name, enum module_state state);

/**
 * The installed entry with the lowest seq above @p after_seq, or -ENOENT: from 0, then from
 * each found entry's seq, it gives the installed entries in the order they were installed.
 */
int module_catalog_next_installed(uint32_t after_seq);

/** Entries in use, free arena bytes, largest free run (for `agent modules` and tests). */
struct module_catalog_stats {
	uint32_t entries;      /* incomplete and installed */
	uint32_t used_bytes;   /* their runs' bytes (an arrival's whole size) */
	uint32_t free_bytes;   /* CONFIG_AGENT_CATALOG_BYTES - used_bytes */
	uint32_t largest_free; /* the largest gap: the largest text that fits now */
};
void module_catalog_stats(struct module_catalog_stats *out);

#endif /* AGENT_MODULE_CATALOG_H */
