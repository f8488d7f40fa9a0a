/* Filesystem helpers shared by the storage tools (storage_fs.h). */
#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "storage_fs.h"
#include "storage_path.h"

/* One chunk buffer for hashing: the tools run one at a time on the agent worker. */
static uint8_t hash_chunk[STORAGE_CHUNK_BYTES] AGENT_PSRAM_ATTR;

/*
 * The texts by errno, as a table searched in order: a switch over these values becomes a
 * jump table indexed by the errno, 4 bytes for each of the 140 values below ECANCELED on
 * newlib (docs/footprint.md).
 */
static const struct {
	uint8_t err; /* the positive errno (all of these are below 256) */
	const char *text;
} errno_texts[] = {
	{ENOENT, "no such file or directory"},
	{EEXIST, "already exists"},
	{ENOTDIR, "a name on the way is not a directory"},
	{EISDIR, "is a directory"},
	{ENOTEMPTY, "directory not empty"},
	{ENOSPC, "no space left on the volume"},
	{EFBIG, "file too large for the filesystem"},
	{ENAMETOOLONG, "name too long for the filesystem"},
	{EIO, "input/output error"},
	{EILSEQ, "the filesystem is corrupt"},
	{EACCES, "permission denied"},
	{EROFS, "read-only filesystem"},
	{EBUSY, "busy"},
	{ENFILE, "too many open files"},
	{EMFILE, "too many open files"},
	{ENOMEM, "out of memory"},
	{EINVAL, "invalid argument"},
	{ECANCELED, "cancelled"},
};

_Static_assert(ECANCELED < 256 && ENOTEMPTY < 256 && ENAMETOOLONG < 256 && EILSEQ < 256,
	       "the errno table keeps errnos in a byte");

const char *storage_errno_text(int err)
{
	for (size_t i = 0; i < sizeof(errno_texts) / sizeof(errno_texts[0]); i++) {
		if (err == -(int)errno_texts[i].err) {
			return errno_texts[i].text;
		}
	}
	return "filesystem error";
}

int storage_fs_fail(struct tool_ctx *ctx, int err, const char *what, const char *path)
{
	if (err == -ECANCELED) {
		return tool_fail(ctx, err, "cancelled");
	}
	return tool_fail(ctx, err, "%s %.96s: %s (%d)", what, path, storage_errno_text(err), err);
}

bool storage_cancelled(const struct tool_ctx *ctx)
{
	return ctx->cancel != NULL && agent_cancel_is_raised(ctx->cancel);
}

int storage_replace(const char *stage, const char *path)
{
	char backup[STORAGE_STAGE_PATH_MAX + 1];
	int err = agent_fs_rename(stage, path);

	if (err != -EEXIST) {
		return err;
	}
	/* A rename that does not replace: the original becomes the backup for a moment. */
	storage_backup_path(path, backup);
	(void)agent_fs_unlink(backup); /* what an earlier power cut left; path exists */
	err = agent_fs_rename(path, backup);
	if (err != 0) {
		return err;
	}
	err = agent_fs_rename(stage, path);
	if (err != 0) {
		(void)agent_fs_rename(backup, path); /* else storage_recover() does it */
		return err;
	}
	(void)agent_fs_unlink(backup);
	return 0;
}

void storage_recover(const char *path)
{
	char backup[STORAGE_STAGE_PATH_MAX + 1];
	struct agent_dirent entry;

	if (agent_fs_stat(path, &entry) != -ENOENT) {
		return;
	}
	storage_backup_path(path, backup);
	if (agent_fs_stat(backup, &entry) == 0 && entry.type == AGENT_FS_FILE) {
		(void)agent_fs_rename(backup, path);
	}
}

int storage_close(struct agent_file *file, int err)
{
	int rc = agent_fs_close(file);

	return err < 0 ? err : rc;
}

int storage_hash_file(const struct tool_ctx *ctx, const char *path,
		      uint8_t digest[SHA256_DIGEST_BYTES], uint32_t *size, uint8_t *copy,
		      uint32_t copy_offset, size_t copy_cap, size_t *copied)
{
	struct agent_file *file;
	struct sha256 hash;
	uint32_t pos = 0;
	size_t got = 0;
	int err;

	err = agent_fs_open(&file, path, AGENT_FS_O_READ);
	if (err != 0) {
		return err;
	}
	sha256_init(&hash);
	for (;;) {
		int n;

		if (storage_cancelled(ctx)) {
			err = -ECANCELED;
			break;
		}
		n = agent_fs_read(file, hash_chunk, sizeof(hash_chunk));
		if (n <= 0) {
			err = n;
			break;
		}
		if ((uint32_t)n > UINT32_MAX - pos) {
			err = -EFBIG;
			break;
		}
		sha256_update(&hash, hash_chunk, (size_t)n);
		if (copy != NULL) {
			/* The part of [pos, pos + n) at or after copy_offset that still fits. */
			uint32_t end = pos + (uint32_t)n;

			if (end > copy_offset && got < copy_cap) {
				uint32_t from = pos > copy_offset ? pos : copy_offset;
				size_t take = end - from;

				if (take > copy_cap - got) {
					take = copy_cap - got;
				}
				memcpy(copy + got, hash_chunk + (from - pos), take);
				got += take;
			}
		}
		pos += (uint32_t)n;
	}
	err = storage_close(file, err);
	if (err == 0) {
		sha256_final(&hash, digest);
		*size = pos;
		if (copied != NULL) {
			*copied = got;
		}
	}
	return err;
}
