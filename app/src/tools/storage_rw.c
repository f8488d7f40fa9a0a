/*
 * storage_read and storage_write: a whole text file of up to CONFIG_AGENT_STORAGE_IO_MAX_LEN
 * bytes. A write goes to a staging file in the target's directory, is synced, and is then
 * renamed over the target, so a failure at any step leaves the old file as it was.
 */
#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "sha256.h"
#include "storage_fs.h"
#include "storage_params.h"
#include "storage_path.h"
#include "storage_text.h"
#include "tools_storage.h"

/* The content of one read: static, the tools run one at a time on the agent worker. */
static uint8_t read_buf[CONFIG_AGENT_STORAGE_IO_MAX_LEN] AGENT_PSRAM_ATTR;

/* Read up to @p cap bytes; *more tells whether the file holds further bytes. */
static int read_head(const struct tool_ctx *ctx, const char *path, uint8_t *buf, size_t cap,
		     size_t *got, bool *more)
{
	struct agent_file *file;
	uint8_t extra;
	size_t n = 0;
	int err;

	err = agent_fs_open(&file, path, AGENT_FS_O_READ);
	if (err != 0) {
		return err;
	}
	while (n < cap) {
		int r;

		if (storage_cancelled(ctx)) {
			return storage_close(file, -ECANCELED);
		}
		r = agent_fs_read(file, buf + n, cap - n);
		if (r < 0) {
			return storage_close(file, r);
		}
		if (r == 0) {
			break;
		}
		n += (size_t)r;
	}
	*more = false;
	if (n == cap) {
		err = agent_fs_read(file, &extra, 1);
		if (err < 0) {
			return storage_close(file, err);
		}
		*more = err > 0;
	}
	*got = n;
	return storage_close(file, 0);
}

static int read_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	char path[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;
	enum storage_text_stop stop;
	size_t got = 0;
	size_t text;
	size_t fit;
	bool more = false;
	int err;

	err = storage_path_resolve(ctx, args->v[0].str, args->v[0].len, path);
	if (err != 0) {
		return err;
	}
	storage_recover(path); /* a power cut may have left the name to its backup */
	err = agent_fs_stat(path, &entry);
	if (err != 0) {
		return storage_fs_fail(ctx, err, "cannot read", path);
	}
	if (entry.type == AGENT_FS_DIR) {
		return tool_fail(ctx, -EISDIR, "%.96s is a directory (storage_list lists it)",
				 path);
	}
	err = read_head(ctx, path, read_buf, sizeof(read_buf), &got, &more);
	if (err != 0) {
		return storage_fs_fail(ctx, err, "cannot read", path);
	}
	text = storage_text_scan(read_buf, got, &stop);
	if (stop == STORAGE_TEXT_NUL || stop == STORAGE_TEXT_INVALID ||
	    (stop == STORAGE_TEXT_CUT && !more)) {
		return tool_fail(ctx, -EILSEQ,
				 "%.96s is not a text file (%s at byte %u); storage_read reads "
				 "UTF-8 text only",
				 path, stop == STORAGE_TEXT_NUL ? "a NUL byte" : "invalid UTF-8",
				 (unsigned int)text);
	}
	jw_object_begin(out);
	jw_key(out, "path");
	jw_string(out, path);
	jw_key(out, "size");
	jw_int(out, more ? entry.size : got);
	fit = storage_json_fit((const char *)read_buf, text, storage_room(out));
	jw_key(out, "content");
	jw_string_n(out, (const char *)read_buf, fit);
	jw_key(out, "bytes");
	jw_int(out, (int64_t)fit);
	jw_key(out, "truncated");
	jw_bool(out, more || fit < got);
	if (more || fit < got) {
		/* Where storage_read_range continues. */
		jw_key(out, "next_offset");
		jw_int(out, (int64_t)fit);
	}
	jw_object_end(out);
	return 0;
}

/* Write all of @p len bytes of @p data into a new file @p stage, synced. */
static int write_stage(const char *stage, const char *data, size_t len)
{
	struct agent_file *file;
	size_t done = 0;
	int err;

	err = agent_fs_open(&file, stage,
			    AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC);
	if (err != 0) {
		return err;
	}
	while (done < len) {
		int n = agent_fs_write(file, data + done, len - done);

		if (n < 0) {
			return storage_close(file, n);
		}
		if (n == 0) {
			return storage_close(file, -ENOSPC);
		}
		done += (size_t)n;
	}
	err = agent_fs_sync(file);
	return storage_close(file, err);
}

static int write_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	char path[STORAGE_PATH_MAX + 1];
	char stage[STORAGE_STAGE_PATH_MAX + 1];
	const struct tool_value *content = &args->v[1];
	struct agent_dirent entry;
	uint8_t digest[SHA256_DIGEST_BYTES];
	char hex[SHA256_HEX_LEN + 1];
	bool created;
	int err;

	err = storage_path_resolve(ctx, args->v[0].str, args->v[0].len, path);
	if (err != 0) {
		return err;
	}
	storage_recover(path); /* a power cut may have left the name to its backup */
	if (content->len > CONFIG_AGENT_STORAGE_IO_MAX_LEN) {
		return tool_fail(ctx, -EFBIG, "content is longer than %d bytes",
				 CONFIG_AGENT_STORAGE_IO_MAX_LEN);
	}
	if (memchr(content->str, '\0', content->len) != NULL) {
		return tool_fail(ctx, -EINVAL,
				 "content contains a NUL byte; storage_write writes text only");
	}
	err = agent_fs_stat(path, &entry);
	if (err == 0 && entry.type == AGENT_FS_DIR) {
		return tool_fail(ctx, -EISDIR, "%.96s is a directory", path);
	}
	if (err != 0 && err != -ENOENT) {
		return storage_fs_fail(ctx, err, "cannot write", path);
	}
	created = err == -ENOENT;
	if (storage_cancelled(ctx)) {
		return storage_fs_fail(ctx, -ECANCELED, "", path);
	}
	storage_stage_path(path, STORAGE_WRITE_STAGE_NAME, stage);
	err = write_stage(stage, content->str, content->len);
	if (err == 0) {
		err = storage_replace(stage, path);
	}
	if (err != 0) {
		(void)agent_fs_unlink(stage);
		if (err == -ENOENT) {
			return tool_fail(ctx, -ENOENT,
					 "cannot write %.96s: its directory does not exist", path);
		}
		storage_fs_fail(ctx, err, "cannot write", path);
		if (strlen(ctx->error) + 24 < sizeof(ctx->error)) {
			strcat(ctx->error, created ? "; nothing was created"
						   : "; the file is unchanged");
		}
		return err;
	}
	sha256_digest(content->str, content->len, digest);
	sha256_hex(digest, hex);
	jw_object_begin(out);
	jw_key(out, "path");
	jw_string(out, path);
	jw_key(out, "bytes");
	jw_int(out, (int64_t)content->len);
	jw_key(out, "created");
	jw_bool(out, created);
	jw_key(out, "sha256");
	jw_string(out, hex);
	jw_object_end(out);
	return 0;
}

static const struct tool_param read_params[] = {
	STORAGE_PATH_PARAM(TOOL_TEXT(storage_rw_param_1,
		"Text file (absolute, or relative to the current directory).")),
};

static const struct tool_param write_params[] = {
	STORAGE_PATH_PARAM(TOOL_TEXT(storage_rw_param_2,
		"File to create or replace (absolute, or relative to the current directory); "
		"its directory must exist.")),
	{
		.name = "content",
		.type = TOOL_PARAM_STRING,
		.required = true,
		.description = TOOL_TEXT(storage_rw_description_1,
			"The whole new content (UTF-8 text, at most "
			"{{CONFIG_AGENT_STORAGE_IO_MAX_LEN}} bytes)."),
		.min = 0,
		.max = CONFIG_AGENT_STORAGE_IO_MAX_LEN,
	},
};

const struct tool_def tool_storage_read = {
	.name = "storage_read",
	.description = TOOL_TEXT(storage_rw_description_2,
		"Read a text file: up to {{CONFIG_AGENT_STORAGE_IO_MAX_LEN}} bytes; a longer "
		"file returns its start with \"truncated\": true (continue with "
		"storage_read_range). Files that are not UTF-8 text are refused."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_SENSITIVE,
	.params = read_params,
	.param_count = 1,
	.output = TOOL_TEXT(storage_rw_output_1,
		"{path, size, content, bytes, truncated, next_offset (when truncated)}"),
	.exec = read_exec,
	.groups = TOOL_GROUP_FS_READ,
	.keywords = TOOL_TEXT(storage_rw_keywords_1,
		"read open show cat view print file contents text source script"),
};

const struct tool_def tool_storage_write = {
	.name = "storage_write",
	.description = TOOL_TEXT(storage_rw_description_3,
		"Create or replace a text file with up to {{CONFIG_AGENT_STORAGE_IO_MAX_LEN}} "
		"bytes, atomically (the old file stays whole if the write fails). Returns the "
		"new SHA-256."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_MUTATING,
	.params = write_params,
	.param_count = 2,
	.output = TOOL_TEXT(storage_rw_output_2, "{path, bytes, created, sha256}"),
	.exec = write_exec,
	.groups = TOOL_GROUP_FS_WRITE,
	.keywords = TOOL_TEXT(storage_rw_keywords_2,
		"write create save replace overwrite new file store text script"),
};
