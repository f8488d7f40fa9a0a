/*
 * Filesystem helpers shared by the storage tools: failure messages that name the
 * operation, the path and the reason, hashing a whole file, and cancellation.
 */
#ifndef AGENT_STORAGE_FS_H
#define AGENT_STORAGE_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sha256.h"
#include "tool.h"

/* Bytes read per filesystem call when streaming a file. */
#define STORAGE_CHUNK_BYTES 512

/** Short text for a filesystem errno ("no such file or directory", ...). */
const char *storage_errno_text(int err);

/**
 * tool_fail() with "<what> <path>: <reason>" (the path cut to fit); returns @p err.
 * -ECANCELED becomes "cancelled".
 */
int storage_fs_fail(struct tool_ctx *ctx, int err, const char *what, const char *path);

/** Whether the request was cancelled (ctx->cancel raised). */
bool storage_cancelled(const struct tool_ctx *ctx);

/**
 * Read the whole of @p path, feeding every byte to @p hash (initialised here) and, when
 * @p copy is not NULL, copying the bytes from @p copy_offset on into @p copy (at most
 * @p copy_cap bytes; *@p copied tells how many). *@p size is the number of bytes read. Polls
 * the cancel flag per chunk. 0 or a negative errno (no message set).
 */
int storage_hash_file(const struct tool_ctx *ctx, const char *path,
		      uint8_t digest[SHA256_DIGEST_BYTES], uint32_t *size, uint8_t *copy,
		      uint32_t copy_offset, size_t copy_cap, size_t *copied);

/**
 * Give the synced, closed file @p stage the name @p path. Where rename replaces its target
 * (littlefs) that is one atomic rename. Where it refuses an existing target with -EEXIST
 * (FAT), the original is renamed to its backup name, the staged file to @p path, and the
 * backup removed; a failure in between puts the original back, and a power cut in between is
 * repaired by storage_recover(). 0 or a negative errno; on failure @p path is the original.
 */
int storage_replace(const char *stage, const char *path);

/**
 * Repair what a power cut in the middle of storage_replace() left: when @p path is missing
 * and its backup exists, the backup takes the name back. Called before a file is used.
 */
void storage_recover(const char *path);

/** Close @p file, keeping the first error: returns @p err when it is already negative. */
int storage_close(struct agent_file *file, int err);

#endif /* AGENT_STORAGE_FS_H */
