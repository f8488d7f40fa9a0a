/*
 * What the files of the conversation store share (conv_store.h, docs/conversation-format.md):
 *
 *   conv_store.c    the store's state, lock and I/O block; init and recovery at boot
 *   conv_scan.c     walking a file record by record, checking CRCs as it goes
 *   conv_slots.c    listing, create, open and delete
 *   conv_commit.c   a turn appended through the temporary and backup files
 *   conv_read.c     records delivered in pieces, the last response id, export
 *   conv_history.c  the bounded Chat Completions history
 *
 * Files are never held in RAM: a commit copies the old records into the temporary file
 * through one I/O block, checking each record's CRC and the old file's checksum as it
 * goes, and a read delivers records in pieces of that block. The only other buffers are
 * a few header-sized arrays on the stack.
 *
 * Not part of the store's interface: only its own files include this header.
 */
#ifndef AGENT_CONV_STORE_INTERNAL_H
#define AGENT_CONV_STORE_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_fs_io.h"
#include "agent_port.h"
#include "conv_format.h"
#include "conv_store.h"

#define CONV_PATH_BYTES 64u

struct conv_store_state {
	bool ready;
	enum conv_medium medium;
	const char *root;
	uint8_t slots;
	uint32_t file_max;
	uint32_t next_seq;
	uint32_t damaged_mask; /* bit (slot - 1): damaged without a valid backup */
	uint8_t recovered;
	char dir[32];
};

/* Read and written only under the store's lock (conv_enter() .. conv_leave()). */
extern struct conv_store_state conv_state;

/* A file being walked record by record, with the running CRC of everything read. */
struct conv_scan {
	struct agent_file *file;
	struct conv_header hdr;
	uint32_t crc;
	uint32_t pos;	/* bytes consumed from the start of the file */
	uint32_t index; /* records consumed */
	uint32_t users;
	uint32_t rec_crc; /* CRC of the last record read */
	uint8_t last_type; /* type of the last record consumed (a tool id follows a tool) */
	uint8_t *buf;	  /* the I/O block */
};

/* The commit's copy: where the bytes of the old records go, and the new file's CRC. */
struct conv_sink {
	struct agent_file *file;
	uint32_t crc;
};

/* ---- conv_store.c: state and small helpers ------------------------------------------------ */

/* "<dir>/conv<slot>.<ext>" into @p out (CONV_PATH_BYTES). */
void conv_slot_path(char *out, uint8_t slot, const char *ext);

/* Take the store's lock; -ENODEV (lock not taken) before a successful init. */
int conv_enter(void);
void conv_leave(void);

/* The one I/O block (CONV_IO_BYTES); NULL when it is taken. */
uint8_t *conv_io_take(void);
void conv_io_give(uint8_t *buf);

/* Read exactly @p len bytes; the end of the file before them means a damaged file. */
int conv_read_exact(struct agent_file *file, void *buf, size_t len);

/* Wall-clock seconds, 0 when unknown. */
int64_t conv_wall_now(void);

static inline bool conv_slot_valid(uint8_t slot)
{
	return conv_state.ready && slot >= 1u && slot <= conv_state.slots;
}

static inline bool conv_slot_damaged(uint8_t slot)
{
	return (conv_state.damaged_mask & (1u << (slot - 1u))) != 0u;
}

static inline int conv_ignore_enoent(int err)
{
	return err == -ENOENT ? 0 : err;
}

/* ---- conv_scan.c: walking a file ---------------------------------------------------------- */

/* Open @p path and check its header against @p slot; @p buf is the I/O block. */
int conv_scan_open(struct conv_scan *s, const char *path, uint8_t slot, uint8_t *buf);
void conv_scan_close(struct conv_scan *s);

/*
 * Read the next record's head; checks that the record fits before the trailer and that the
 * meta records come first. On success *type and *len describe it and the payload is next.
 */
int conv_scan_head(struct conv_scan *s, uint8_t head[CONV_RECORD_HEAD_BYTES], uint8_t *type,
		   uint16_t *len);

/*
 * Read the payload and CRC of the current record through the I/O block, checking the CRC;
 * each piece is also written to @p sink when not NULL.
 */
int conv_scan_payload(struct conv_scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
		      uint16_t len, struct conv_sink *sink);

/* Account for a record whose head, payload and CRC were read and checked. */
void conv_scan_done(struct conv_scan *s, uint8_t type, uint16_t len);

/* After the last record: counts, trailer, and nothing after it. */
int conv_scan_finish(struct conv_scan *s);

/* Read a meta record (the next one) into a string of at most @p max bytes. */
int conv_scan_meta(struct conv_scan *s, char *out, size_t max);

/* Check a whole file: 0 valid, -EBADMSG damaged, -ENOENT missing, another fs error. */
int conv_check_file(const char *path, uint8_t slot, uint8_t *buf, struct conv_header *hdr);

/* Add @p data to the sink's CRC and write it; nothing when @p sink is NULL. */
int conv_sink_put(struct conv_sink *sink, const void *data, size_t len);

/* One record of a walk: its head was read and checked; the visitor reads the rest. */
typedef int (*conv_visit_fn)(struct conv_scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
			     uint8_t type, uint16_t len, void *ctx);

/* Walk every record of @p slot, handing each to @p visit, then check the trailer; lock held. */
int conv_walk_slot(uint8_t slot, uint8_t *buf, conv_visit_fn visit, void *ctx);

#endif /* AGENT_CONV_STORE_INTERNAL_H */
