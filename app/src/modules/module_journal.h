/*
 * The module journal (docs/modules.md "The journal"): an append-only file on LittleFS of
 * IMPORT and REMOVE records, each holding the accepted text and its digest, checked by a
 * CRC. Boot replays it into the catalog; an incomplete record at the end is cleared and
 * reported, never installed. When an append would pass CONFIG_AGENT_MODULE_JOURNAL_BYTES
 * the journal is compacted (rewritten with the installed entries, then renamed over the
 * old one), so a power cut at any point leaves the old or the new journal.
 */
#ifndef AGENT_MODULE_JOURNAL_H
#define AGENT_MODULE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"

#define MODULE_JOURNAL_DIR  "/lfs/.agent"
#define MODULE_JOURNAL_PATH "/lfs/.agent/modules.journal"

enum module_journal_type {
	MODULE_JOURNAL_IMPORT = 1,
	MODULE_JOURNAL_REMOVE = 2,
};

struct module_journal_record {
	enum module_journal_type type;
	enum module_kind kind;		    /* IMPORT */
	char name[MODULE_NAME_MAX + 1];
	uint8_t digest[MODULE_DIGEST_LEN]; /* IMPORT */
	uint32_t manifest_len;		    /* IMPORT: the text is manifest then body */
	uint32_t body_len;
};

struct module_journal_replay_ops {
	/**
	 * An IMPORT record: where its manifest_len + body_len bytes of text go (the journal
	 * reads them there and checks the CRC), or NULL to skip it (no room). import_end
	 * follows every import_begin, whatever it returned.
	 */
	void *(*import_begin)(void *user, const struct module_journal_record *rec);
	/**
	 * The IMPORT's text was read: @p ok when complete and its CRC and digest matched (a
	 * skipped one is checked too); false: drop what was written at import_begin's pointer.
	 */
	void (*import_end)(void *user, const struct module_journal_record *rec, bool ok);
	void (*remove)(void *user, const struct module_journal_record *rec);
};

struct module_journal_report {
	uint32_t records;    /* complete records replayed */
	uint32_t bytes;	     /* the journal's size after replay */
	bool incomplete;     /* an incomplete or damaged record was cleared */
	char incomplete_name[MODULE_NAME_MAX + 1]; /* its name when its head was readable */
};

/**
 * Replay the journal, record by record, through @p ops; then cut an incomplete or damaged
 * tail (reported in @p report) so the next append follows the last good record. A missing
 * journal is an empty one (0); a stale temporary file of a cut compaction is removed.
 * -ENODEV (no /lfs), -EINVAL (an ops callback missing), or the file system's error (-EIO):
 * the records before it were applied, and appends are refused until a replay succeeds.
 */
int module_journal_replay(const struct module_journal_replay_ops *ops, void *user,
			  struct module_journal_report *report);

/**
 * Append an IMPORT of @p rec with its text (@p manifest, then @p body) and sync. -ENOSPC
 * when it would pass CONFIG_AGENT_MODULE_JOURNAL_BYTES (the caller compacts and retries);
 * -EINVAL for a name, kind or length out of range or a digest that is not the text's
 * SHA-256 (rec->type is not read); -ENODEV without /lfs; -EIO (also after a replay that
 * failed). 0 only once the record is synced; after an error its bytes are cut back (when
 * even that fails, appends are refused until a replay clears them).
 */
int module_journal_append_import(const struct module_journal_record *rec, const void *manifest,
				 const void *body);

/** Append a REMOVE of @p name and sync. */
int module_journal_append_remove(const char *name);

/**
 * The live entries, for compaction: fill *@p rec and the text pointers of the @p i-th one;
 * false past the last.
 */
typedef bool (*module_journal_live_fn)(void *user, size_t i, struct module_journal_record *rec,
				       const void **manifest, const void **body);

/**
 * Rewrite the journal with one IMPORT per live entry: written to a temporary file, synced,
 * read back and checked, renamed over the journal. 0 or a negative errno (the old journal
 * is then untouched): -ENOSPC when the entries pass CONFIG_AGENT_MODULE_JOURNAL_BYTES,
 * -EINVAL for an entry an append would refuse.
 */
int module_journal_compact(module_journal_live_fn live, void *user);

/** The journal's size in bytes now (0 when absent), -ENODEV without /lfs. */
int32_t module_journal_size(void);

#endif /* AGENT_MODULE_JOURNAL_H */
