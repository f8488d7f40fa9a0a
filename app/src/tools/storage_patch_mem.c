/*
 * storage_patch's fallback when the volume has no room for a staged copy: the whole file is
 * copied into one PSRAM pool block (CONFIG_AGENT_STORAGE_PATCH_FILE_MAX bytes), checked
 * against the SHA-256 the caller gave, and the file is rewritten in place from the first
 * edited byte on. When a step fails the file is read back: if it still is the original
 * nothing more is done, else the original is written back from the copy and checked again.
 *
 * On littlefs an in-place rewrite only becomes visible when the file is synced, so a power
 * cut before that leaves the original; on FAT the bytes written so far are visible, so a
 * power cut in the middle of this fallback can leave a mix (docs/tools-storage.md).
 */
#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "sha256.h"
#include "storage_fs.h"
#include "storage_patch.h"
#include "storage_path.h"

/* Pool blocks are multiples of 8 bytes. */
#define COPY_BLOCK_BYTES ((CONFIG_AGENT_STORAGE_PATCH_FILE_MAX + 7u) & ~7u)

static uint8_t copy_buffer[COPY_BLOCK_BYTES] AGENT_PSRAM_ATTR;
static struct agent_pool *copy_pool;

/* The pool is made on first use and kept for the rest of the run, as every pool is. */
static uint8_t *copy_alloc(void)
{
	if (copy_pool == NULL &&
	    agent_pool_init(&copy_pool, "storage_patch", copy_buffer, COPY_BLOCK_BYTES, 1,
			    AGENT_MEM_PSRAM) != 0) {
		copy_pool = NULL;
		return NULL;
	}
	return agent_pool_alloc(copy_pool);
}

/*
 * Write the bytes from @p from on: the patched content (@p plan) or, with @p plan NULL, the
 * original from @p copy; then cut the file to its size and sync it.
 */
static int rewrite(const struct tool_ctx *ctx, const char *path, const uint8_t *copy,
		   uint32_t from, uint32_t old_size, const struct patch_plan *plan)
{
	struct patch_io io = {.ctx = ctx, .mem = copy, .pos = from};
	int err;

	err = agent_fs_open(&io.dst, path, AGENT_FS_O_RDWR);
	if (err != 0) {
		return err;
	}
	sha256_init(&io.in);
	sha256_init(&io.out);
	err = agent_fs_seek(io.dst, (int32_t)from, AGENT_FS_SEEK_SET);
	if (err == 0) {
		if (plan != NULL) {
			err = patch_stream(&io, plan);
		} else {
			err = patch_write(&io, copy + from, old_size - from);
		}
	}
	if (err == 0) {
		uint32_t size = plan != NULL ? plan->new_size : old_size;

		err = agent_fs_truncate(io.dst, size);
	}
	if (err == 0) {
		err = agent_fs_sync(io.dst);
	}
	return storage_close(io.dst, err);
}

/* 1: the file is @p want (size and hash), 0: it is not, < 0: it could not be read. */
static int file_is(const struct tool_ctx *ctx, const char *path,
		   const uint8_t want[SHA256_DIGEST_BYTES], uint32_t want_size)
{
	uint8_t digest[SHA256_DIGEST_BYTES];
	uint32_t size = 0;
	int err = storage_hash_file(ctx, path, digest, &size, NULL, 0, 0, NULL);

	if (err != 0) {
		return err;
	}
	return size == want_size && memcmp(digest, want, SHA256_DIGEST_BYTES) == 0;
}

/* Append @p text to the message already in ctx->error, when it fits. */
static void add_note(struct tool_ctx *ctx, const char *text)
{
	size_t len = strlen(ctx->error);

	if (len + strlen(text) < sizeof(ctx->error)) {
		memcpy(ctx->error + len, text, strlen(text) + 1u);
	}
}

/*
 * After a failed rewrite (@p cause): find out what the file holds now, put the original
 * back when it is neither the original nor the patched content, and say what happened.
 */
static int recover(struct tool_ctx *ctx, const struct patch_plan *plan, const uint8_t *copy,
		   uint32_t from, int cause)
{
	/* Recovery runs to its end even when the request was cancelled. On the stack: a const
	 * static of this size would be 180 bytes of zeros in flash. */
	const struct tool_ctx steady = {.cancel = NULL};
	const char *path = plan->path;
	int state = file_is(&steady, path, plan->old_digest, plan->old_size);

	if (state == 1) {
		storage_fs_fail(ctx, cause, "cannot patch in place", path);
		add_note(ctx, "; the file is unchanged");
		return cause;
	}
	if (state == 0 && cause != -ECANCELED &&
	    file_is(&steady, path, plan->new_digest, plan->new_size) == 1) {
		return 0; /* every byte is in place; only a late step reported a failure */
	}
	if (rewrite(&steady, path, copy, from, plan->old_size, NULL) == 0 &&
	    file_is(&steady, path, plan->old_digest, plan->old_size) == 1) {
		storage_fs_fail(ctx, cause, "cannot patch in place", path);
		add_note(ctx, "; the original was restored");
		return cause;
	}
	return tool_fail(ctx, -EIO,
			 "cannot patch %.96s in place (%d) and restoring the original failed: it "
			 "may hold the original, the patched or a mixed content",
			 path, cause);
}

int patch_in_memory(struct tool_ctx *ctx, struct patch_plan *plan)
{
	struct patch_io hash_only = {.ctx = ctx};
	uint8_t digest[SHA256_DIGEST_BYTES];
	uint32_t size = 0;
	size_t copied = 0;
	uint32_t from = plan->edits[0].offset;
	uint8_t *copy = copy_alloc();
	int err;

	if (copy == NULL) {
		return tool_fail(ctx, -ENOSPC,
				 "no room on the volume to stage the patch and the in-memory copy "
				 "is unavailable; %.96s is unchanged",
				 plan->path);
	}
	err = storage_hash_file(ctx, plan->path, digest, &size, copy, 0, COPY_BLOCK_BYTES,
				&copied);
	if (err != 0) {
		storage_fs_fail(ctx, err, "cannot read", plan->path);
		add_note(ctx, "; the file is unchanged");
		goto out;
	}
	if (size != plan->old_size || copied != size ||
	    memcmp(digest, plan->old_digest, sizeof(digest)) != 0) {
		err = tool_fail(ctx, -ESTALE,
				"%.96s changed while it was being patched; the file is unchanged, "
				"read it again",
				plan->path);
		goto out;
	}
	/* The digest the rewrite must produce, known before anything is written. */
	hash_only.mem = copy;
	sha256_init(&hash_only.in);
	sha256_init(&hash_only.out);
	err = patch_stream(&hash_only, plan);
	if (err != 0) {
		storage_fs_fail(ctx, err, "cannot patch", plan->path);
		goto out;
	}
	sha256_final(&hash_only.out, plan->new_digest);

	err = rewrite(ctx, plan->path, copy, from, plan->old_size, plan);
	if (err == 0) {
		int state = file_is(ctx, plan->path, plan->new_digest, plan->new_size);

		err = state == 1 ? 0 : state == 0 ? -EIO : state;
	}
	if (err != 0) {
		err = recover(ctx, plan, copy, from, err);
	}
out:
	(void)agent_pool_free(copy_pool, copy);
	return err;
}
