/*
 * The conversation store: completed chat turns in numbered slots on the preferred
 * persistent filesystem (the SD card when mounted, else internal flash), one checksummed
 * file per conversation, replaced through temporary and backup names and recovered at
 * boot. The format, the replace sequence, recovery, eviction and every error are in
 * docs/conversation-format.md.
 *
 * Nothing here takes or stores the API key. No file is held in RAM: files are copied,
 * checked and read through one 512-byte I/O block (pool "conv"). Every function takes the
 * store's lock; callbacks run under it and must not call the store again (-ENOMEM).
 */
#ifndef AGENT_CONV_STORE_H
#define AGENT_CONV_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv_format.h"

#define CONV_IO_BYTES		  512u
#define CONV_HISTORY_MESSAGES_MAX 64u
#define CONV_MODEL_MAX		  CONFIG_AGENT_MODEL_MAX_LEN

#define CONV_SLOTS_MAX                                                                        \
	(CONFIG_AGENT_CONV_FLASH_SLOTS > CONFIG_AGENT_CONV_SD_SLOTS                            \
		 ? CONFIG_AGENT_CONV_FLASH_SLOTS                                               \
		 : CONFIG_AGENT_CONV_SD_SLOTS)

enum conv_medium {
	CONV_MEDIUM_NONE = 0, /* not initialised */
	CONV_MEDIUM_FLASH,    /* LittleFS at /lfs: rename replaces atomically */
	CONV_MEDIUM_SD,	      /* FAT at /SD:: no rename over an existing file */
};

struct conv_store_info {
	enum conv_medium medium;
	const char *dir; /* "/lfs/.agent/conversations" or "/SD:/.agent/conversations" */
	uint8_t slots;
	uint32_t file_max_bytes;
	uint8_t recovered; /* slots restored from their backup by the last init */
	uint8_t damaged;   /* slots whose file is damaged without a valid backup */
};

/** One stored conversation, as listed. */
struct conv_summary {
	uint8_t slot;
	bool damaged;	  /* the file fails its checks; only slot and bytes are meaningful */
	uint8_t protocol; /* enum agent_protocol */
	uint32_t conv_id;
	uint32_t sequence; /* eviction order: the lowest is replaced first */
	uint32_t turns;
	uint32_t bytes;
	int64_t created_s; /* wall clock, 0 when unknown */
	int64_t updated_s;
	char provider[CONV_PROVIDER_MAX + 1];
	char model[CONV_MODEL_MAX + 1];
	char title[CONV_TITLE_MAX + 1];
};

/** What a new conversation records besides its turns. */
struct conv_meta {
	uint8_t protocol;     /* enum agent_protocol */
	const char *provider; /* cut to CONV_PROVIDER_MAX bytes at a character boundary */
	const char *model;    /* at most CONV_MODEL_MAX bytes */
	const char *title;    /* cut to CONV_TITLE_MAX bytes at a character boundary */
};

/**
 * The conversation a frontend is in. Made by conv_store_create() (pending: nothing is
 * stored until the first commit) or conv_store_open() (resume). Plain data: the caller
 * owns it; the store keeps no pointer to it.
 */
struct conv_handle {
	uint8_t slot; /* 0: not open */
	bool pending;
	uint8_t protocol;
	uint32_t conv_id; /* 0 while pending */
	uint32_t turns;
	uint32_t bytes; /* size of the stored file, 0 while pending */
	int64_t created_s;
	char provider[CONV_PROVIDER_MAX + 1];
	char model[CONV_MODEL_MAX + 1];
	char title[CONV_TITLE_MAX + 1];
};

struct conv_usage {
	uint32_t input_tokens;
	uint32_t output_tokens;
	uint32_t total_tokens;
	uint32_t reasoning_tokens;
};

/** One completed turn. */
struct conv_turn {
	const char *user; /* at least 1 byte */
	size_t user_len;
	const char *assistant; /* the final answer; may be empty */
	size_t assistant_len;
	const char *const *tools; /* tool_count summary lines, each at most 255 bytes */
	size_t tool_count;
	/* tool_count numeric tool ids (tool_numeric_id(): 0 for an imported tool), each stored
	 * as a tool id record after its tool record; NULL stores none. */
	const uint16_t *tool_ids;
	const char *response_id;	/* Responses continuation id; NULL or "" for none */
	const struct conv_usage *usage; /* NULL for none */
};

/** A piece of a record, delivered by conv_store_read() after the record's CRC was checked. */
struct conv_chunk {
	uint8_t type;	    /* enum conv_record_type, or an unknown type to skip */
	uint32_t record;    /* index of the record in the file, from 0 */
	uint32_t total_len; /* payload bytes of the whole record */
	uint32_t offset;    /* of this piece in the payload */
	const uint8_t *data;
	size_t len; /* at most CONV_IO_BYTES; 0 only for an empty record */
	bool last;  /* the record's last piece */
};

typedef int (*conv_read_fn)(const struct conv_chunk *chunk, void *user_data);
typedef int (*conv_list_fn)(const struct conv_summary *summary, void *user_data);

struct conv_history_msg {
	uint8_t role;	   /* CONV_REC_USER or CONV_REC_ASSISTANT */
	uint32_t offset;   /* of the text in raw */
	uint32_t len;	   /* bytes of text */
	uint32_t file_pos; /* where its record starts in the file (internal) */
};

/** Local history for a Chat Completions request (docs/conversation-format.md). */
struct conv_history {
	char raw[CONFIG_AGENT_CHAT_HISTORY_RAW_MAX];
	struct conv_history_msg msgs[CONV_HISTORY_MESSAGES_MAX];
	uint32_t count;		   /* messages, oldest first */
	uint32_t raw_bytes;	   /* sum of len */
	uint32_t serialized_bytes; /* as {"role":..,"content":..} objects with commas between */
	bool truncated;		   /* older messages were left out */
};

/**
 * Choose the filesystem ("/SD:" when agent_fs_statvfs() succeeds there, else "/lfs"), make
 * the directory, and recover every slot. May be called again ("next start"). Returns 0 or
 * the first error; the store is usable unless the directory could not be made.
 */
int conv_store_init(void);

int conv_store_info_get(struct conv_store_info *info);

/**
 * Visit the stored conversations by slot number, damaged ones included (damaged set); a
 * non-zero return of @p fn stops the walk. Returns how many were visited, or an error.
 */
int conv_store_list(conv_list_fn fn, void *user_data);

/** The conversation in @p slot; -ENOENT when empty, -EBADMSG (damaged set) when damaged. */
int conv_store_summary(uint8_t slot, struct conv_summary *out);

/**
 * Start a conversation: choose its slot (the lowest empty one, else the least recently
 * written) and fill @p h. Nothing is stored or evicted until the first commit.
 * Returns the slot (> 0) or a negative errno.
 */
int conv_store_create(struct conv_handle *h, const struct conv_meta *meta);

/** Resume the conversation in @p slot. */
int conv_store_open(struct conv_handle *h, uint8_t slot);

/**
 * Append one completed turn, replacing the file through its temporary and backup names.
 * On -EFBIG (and other refusals) @p why, when not NULL, points to a one-line reason.
 */
int conv_store_commit(struct conv_handle *h, const struct conv_turn *turn, const char **why);

/**
 * Deliver every record of @p slot in order, in pieces, each record only after its CRC was
 * checked, then check the file's checksum. -EBADMSG at the first bad record (the good ones
 * before it were delivered); a non-zero return of @p fn stops and is returned.
 */
int conv_store_read(uint8_t slot, conv_read_fn fn, void *user_data);

/** Copy the last response id of @p slot; its length, -ENOENT when it has none. */
int conv_store_last_response_id(uint8_t slot, char *buf, size_t len);

/** Rebuild the bounded Chat Completions history of @p slot into @p out. */
int conv_store_history(uint8_t slot, struct conv_history *out);

/**
 * Copy the stored file of @p slot, as it is on the medium, from byte @p off: up to @p len
 * bytes into @p buf; @p total gets the file's size. Returns the bytes copied (0 at the end),
 * -ENOENT when the slot is empty, -ERANGE when @p off is past the end, -EINVAL for a slot
 * outside 1..slots, or the file system's error.
 */
int conv_store_export(uint8_t slot, uint32_t off, void *buf, size_t len, uint32_t *total);

/** Remove the conversation in @p slot (and its backup); -ENOENT when empty. */
int conv_store_delete(uint8_t slot);

#endif /* AGENT_CONV_STORE_H */
