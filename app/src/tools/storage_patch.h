/*
 * storage_patch internals shared by its two ways of applying edits (storage_patch.c stages
 * a new file on the volume, storage_patch_mem.c rewrites the file in place from a copy in a
 * PSRAM pool block when the volume has no room to stage).
 */
#ifndef AGENT_STORAGE_PATCH_H
#define AGENT_STORAGE_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sha256.h"
#include "tool.h"

struct patch_edit {
	uint32_t offset; /* in the original file */
	uint32_t del;	 /* bytes of the original removed from offset on */
	const char *ins; /* bytes put in their place */
	size_t ins_len;
};

struct patch_plan {
	const char *path;
	struct patch_edit edits[CONFIG_AGENT_STORAGE_PATCH_EDITS_MAX];
	size_t count;
	uint32_t old_size;
	uint32_t new_size;
	uint8_t old_digest[SHA256_DIGEST_BYTES];
	uint8_t new_digest[SHA256_DIGEST_BYTES]; /* set by the apply step */
};

/* Streams the patched content: source bytes from a file or memory, output to a file. */
struct patch_io {
	const struct tool_ctx *ctx;
	struct agent_file *src; /* NULL: the source is mem */
	const uint8_t *mem;
	uint32_t pos; /* next source byte */
	struct agent_file *dst; /* NULL: only hash what would be written */
	struct sha256 in;  /* of the source bytes passed */
	struct sha256 out; /* of the bytes written */
};

/**
 * Write the patched content from source byte io->pos (the start of an edit or 0) to the end
 * of the original into io->dst, feeding the hashes. 0 or a negative errno; -ESTALE when the
 * source file ends early (it changed under the patch).
 */
int patch_stream(struct patch_io *io, const struct patch_plan *plan);

/** Write all of @p len bytes of @p data to io->dst (if any), feeding io->out. */
int patch_write(struct patch_io *io, const void *data, size_t len);

/**
 * The fallback: apply @p plan in place from a copy of the file in a pool block, restoring
 * the original from that copy when a write fails. 0 (plan->new_digest set), or a negative
 * errno with the message in ctx->error.
 */
int patch_in_memory(struct tool_ctx *ctx, struct patch_plan *plan);

#endif /* AGENT_STORAGE_PATCH_H */
