/*
 * storage_patch: byte-offset edits to a file of up to CONFIG_AGENT_STORAGE_PATCH_FILE_MAX
 * bytes, guarded by the SHA-256 the caller read (storage_read_range). A stale hash returns a
 * structured conflict and changes nothing.
 *
 * Staged sequence (docs/tools-storage.md "storage_patch"): the original is streamed through
 * the edits into a staging file in the same directory, which is synced, closed, read back
 * and checked against the SHA-256 computed while writing; only then is it renamed over the
 * public name (littlefs replaces the target atomically). Until that rename the original stays
 * untouched under its name, so a failure or a power cut at any earlier point leaves it
 * exactly as it was; the staging file is removed on failure and reused (truncated) by the
 * next patch when a power cut left it behind. When the volume has no room to stage
 * (-ENOSPC, or statvfs says so up front) the edits are applied in place from a copy in a
 * PSRAM pool block instead (storage_patch_mem.c).
 */
#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "sha256.h"
#include "storage_fs.h"
#include "storage_params.h"
#include "storage_patch.h"
#include "storage_path.h"
#include "tools_storage.h"

_Static_assert(CONFIG_AGENT_STORAGE_PATCH_EDITS_MAX <= TOOL_ITEMS_MAX,
	       "the argument parser holds TOOL_ITEMS_MAX elements of one array");

enum { EDIT_OFFSET, EDIT_DELETE, EDIT_INSERT };

static uint8_t patch_chunk[STORAGE_CHUNK_BYTES] AGENT_PSRAM_ATTR;

int patch_write(struct patch_io *io, const void *data, size_t len)
{
	const uint8_t *p = data;

	sha256_update(&io->out, data, len);
	if (io->dst == NULL) {
		return 0; /* hashing only */
	}
	while (len > 0) {
		int n;

		if (storage_cancelled(io->ctx)) {
			return -ECANCELED;
		}
		n = agent_fs_write(io->dst, p, len);
		if (n < 0) {
			return n;
		}
		if (n == 0) {
			return -ENOSPC;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Pass @p n source bytes: hashed as input, and written when @p keep. */
static int pass_source(struct patch_io *io, uint32_t n, bool keep)
{
	if (io->src == NULL) {
		const uint8_t *p = io->mem + io->pos;

		sha256_update(&io->in, p, n);
		io->pos += n;
		/* Written in chunks so that cancellation is polled as often as from a file. */
		while (keep && n > 0) {
			uint32_t part = n < STORAGE_CHUNK_BYTES ? n : STORAGE_CHUNK_BYTES;
			int err = patch_write(io, p, part);

			if (err != 0) {
				return err;
			}
			p += part;
			n -= part;
		}
		return 0;
	}
	while (n > 0) {
		size_t want = n < sizeof(patch_chunk) ? n : sizeof(patch_chunk);
		int got;
		int err;

		if (storage_cancelled(io->ctx)) {
			return -ECANCELED;
		}
		got = agent_fs_read(io->src, patch_chunk, want);
		if (got < 0) {
			return got;
		}
		if (got == 0) {
			return -ESTALE; /* shorter than it was a moment ago */
		}
		sha256_update(&io->in, patch_chunk, (size_t)got);
		io->pos += (uint32_t)got;
		n -= (uint32_t)got;
		if (keep) {
			err = patch_write(io, patch_chunk, (size_t)got);
			if (err != 0) {
				return err;
			}
		}
	}
	return 0;
}

int patch_stream(struct patch_io *io, const struct patch_plan *plan)
{
	int err;

	for (size_t i = 0; i < plan->count; i++) {
		const struct patch_edit *e = &plan->edits[i];

		/* io->pos <= e->offset: the stream starts at or before the first edit. */
		err = pass_source(io, e->offset - io->pos, true);
		if (err == 0) {
			err = patch_write(io, e->ins, e->ins_len);
		}
		if (err == 0) {
			err = pass_source(io, e->del, false);
		}
		if (err != 0) {
			return err;
		}
	}
	return pass_source(io, plan->old_size - io->pos, true);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

static bool parse_digest(const struct tool_value *v, uint8_t digest[SHA256_DIGEST_BYTES])
{
	if (v->len != SHA256_HEX_LEN) {
		return false;
	}
	for (size_t i = 0; i < SHA256_DIGEST_BYTES; i++) {
		int hi = hex_digit(v->str[2 * i]);
		int lo = hex_digit(v->str[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			return false;
		}
		digest[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/* The edits as given: in order, not overlapping, each within the bounds. */
static int load_edits(struct tool_ctx *ctx, const struct tool_args *args, struct patch_plan *plan)
{
	uint64_t end = 0;

	plan->count = args->v[2].count;
	if (plan->count == 0 || plan->count > CONFIG_AGENT_STORAGE_PATCH_EDITS_MAX) {
		return tool_fail(ctx, -EINVAL, "give 1 to %d edits",
				 CONFIG_AGENT_STORAGE_PATCH_EDITS_MAX);
	}
	for (size_t i = 0; i < plan->count; i++) {
		const struct tool_value *f = args->item[i];
		struct patch_edit *e = &plan->edits[i];

		if (f[EDIT_OFFSET].integer < 0 ||
		    f[EDIT_OFFSET].integer > CONFIG_AGENT_STORAGE_PATCH_FILE_MAX ||
		    (f[EDIT_DELETE].present && (f[EDIT_DELETE].integer < 0 ||
						f[EDIT_DELETE].integer >
							CONFIG_AGENT_STORAGE_PATCH_FILE_MAX))) {
			return tool_fail(ctx, -EINVAL, "edit %u: offset or delete out of range",
					 (unsigned int)i);
		}
		e->offset = (uint32_t)f[EDIT_OFFSET].integer;
		e->del = f[EDIT_DELETE].present ? (uint32_t)f[EDIT_DELETE].integer : 0u;
		e->ins = f[EDIT_INSERT].present ? f[EDIT_INSERT].str : "";
		e->ins_len = f[EDIT_INSERT].present ? f[EDIT_INSERT].len : 0u;
		if (e->ins_len > CONFIG_AGENT_STORAGE_PATCH_INSERT_MAX) {
			return tool_fail(ctx, -EINVAL, "edit %u: insert is longer than %d bytes",
					 (unsigned int)i, CONFIG_AGENT_STORAGE_PATCH_INSERT_MAX);
		}
		if (memchr(e->ins, '\0', e->ins_len) != NULL) {
			return tool_fail(ctx, -EINVAL,
					 "edit %u: insert contains a NUL byte; storage_patch edits "
					 "text",
					 (unsigned int)i);
		}
		if (e->offset < end) {
			return tool_fail(ctx, -EINVAL,
					 "edit %u starts at %u, before the end (%u) of the edit "
					 "before it: edits must be ascending and must not overlap",
					 (unsigned int)i, (unsigned int)e->offset,
					 (unsigned int)end);
		}
		end = (uint64_t)e->offset + e->del;
	}
	return 0;
}

/* With the file's size known: every edit inside it, and the result within the bound. */
static int check_size(struct tool_ctx *ctx, struct patch_plan *plan)
{
	int64_t size = plan->old_size;

	for (size_t i = 0; i < plan->count; i++) {
		const struct patch_edit *e = &plan->edits[i];

		if ((uint64_t)e->offset + e->del > plan->old_size) {
			return tool_fail(ctx, -EINVAL,
					 "edit %u reaches byte %u, past the end of the file (%u "
					 "bytes)",
					 (unsigned int)i, (unsigned int)(e->offset + e->del),
					 (unsigned int)plan->old_size);
		}
		size += (int64_t)e->ins_len - (int64_t)e->del;
	}
	if (size > CONFIG_AGENT_STORAGE_PATCH_FILE_MAX) {
		return tool_fail(ctx, -EFBIG,
				 "the patched file would be %lld bytes, above the %d-byte bound",
				 (long long)size, CONFIG_AGENT_STORAGE_PATCH_FILE_MAX);
	}
	plan->new_size = (uint32_t)size;
	return 0;
}

/* Whether the volume visibly lacks room for a staged copy (an estimate; 0: try). */
static bool no_room_to_stage(const struct patch_plan *plan)
{
	struct agent_statvfs vfs;

	if (agent_fs_statvfs(plan->path, &vfs) != 0 || vfs.block_bytes == 0) {
		return false;
	}
	/* The copy's blocks, plus one for its metadata and one for littlefs to move into. */
	uint64_t need = (uint64_t)(plan->new_size / vfs.block_bytes) + 3u;

	return (uint64_t)vfs.blocks_free < need;
}

/* Stream the original through the edits into @p stage, synced and closed. */
static int stage_write(struct tool_ctx *ctx, struct patch_plan *plan, const char *stage)
{
	struct patch_io io = {.ctx = ctx};
	uint8_t in_digest[SHA256_DIGEST_BYTES];
	int err;

	err = agent_fs_open(&io.src, plan->path, AGENT_FS_O_READ);
	if (err != 0) {
		return err;
	}
	err = agent_fs_open(&io.dst, stage, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE |
						    AGENT_FS_O_TRUNC);
	if (err != 0) {
		return storage_close(io.src, err);
	}
	sha256_init(&io.in);
	sha256_init(&io.out);
	err = patch_stream(&io, plan);
	if (err == 0) {
		/* Nothing may follow what was hashed: the file must not have grown either. */
		int extra = agent_fs_read(io.src, patch_chunk, 1);

		err = extra < 0 ? extra : extra > 0 ? -ESTALE : 0;
	}
	if (err == 0) {
		sha256_final(&io.in, in_digest);
		if (memcmp(in_digest, plan->old_digest, sizeof(in_digest)) != 0) {
			err = -ESTALE;
		}
	}
	if (err == 0) {
		err = agent_fs_sync(io.dst);
	}
	err = storage_close(io.dst, err);
	err = storage_close(io.src, err);
	if (err == 0) {
		sha256_final(&io.out, plan->new_digest);
	}
	return err;
}

/* Read the staged file back: exactly the bytes meant. */
static int stage_verify(struct tool_ctx *ctx, const struct patch_plan *plan, const char *stage)
{
	uint8_t digest[SHA256_DIGEST_BYTES];
	uint32_t size = 0;
	int err = storage_hash_file(ctx, stage, digest, &size, NULL, 0, 0, NULL);

	if (err != 0) {
		return err;
	}
	if (size != plan->new_size || memcmp(digest, plan->new_digest, sizeof(digest)) != 0) {
		return -EBADMSG;
	}
	return 0;
}

/* The staged sequence; -ENOSPC (staging removed) means "fall back". */
static int patch_staged(struct tool_ctx *ctx, struct patch_plan *plan)
{
	char stage[STORAGE_STAGE_PATH_MAX + 1];
	int err;

	if (no_room_to_stage(plan)) {
		return -ENOSPC;
	}
	storage_stage_path(plan->path, STORAGE_PATCH_STAGE_NAME, stage);
	err = stage_write(ctx, plan, stage);
	if (err == 0) {
		err = stage_verify(ctx, plan, stage);
	}
	if (err == 0) {
		err = storage_replace(stage, plan->path);
		if (err == 0) {
			return 0;
		}
	}
	(void)agent_fs_unlink(stage);
	if (err == -ENOSPC) {
		return err;
	}
	if (err == -ESTALE) {
		return tool_fail(ctx, err,
				 "%.96s changed while it was being patched; the file is "
				 "unchanged, read it again",
				 plan->path);
	}
	if (err == -EBADMSG) {
		return tool_fail(ctx, -EIO,
				 "the staged copy of %.96s did not read back as written; the file "
				 "is unchanged",
				 plan->path);
	}
	storage_fs_fail(ctx, err, "cannot patch", plan->path);
	if (strlen(ctx->error) + 24 < sizeof(ctx->error)) {
		strcat(ctx->error, "; the file is unchanged");
	}
	return err;
}

static void write_conflict(struct json_writer *out, const struct patch_plan *plan,
			   const struct tool_value *given)
{
	char hex[SHA256_HEX_LEN + 1];

	sha256_hex(plan->old_digest, hex);
	jw_object_begin(out);
	jw_key(out, "conflict");
	jw_bool(out, true);
	jw_key(out, "path");
	jw_string(out, plan->path);
	jw_key(out, "sha256");
	jw_string(out, hex);
	jw_key(out, "size");
	jw_int(out, plan->old_size);
	jw_key(out, "expected");
	jw_string_n(out, given->str, given->len);
	jw_key(out, "changed");
	jw_bool(out, false);
	jw_key(out, "message");
	jw_string(out, "The file is not the version the edits were made for; nothing was "
		       "changed. Read it again with storage_read_range and redo the edits.");
	jw_object_end(out);
}

static int patch_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	static struct patch_plan plan AGENT_PSRAM_ATTR; /* ~250 bytes; one call at a time */
	char path[STORAGE_PATH_MAX + 1];
	uint8_t given[SHA256_DIGEST_BYTES];
	char hex[SHA256_HEX_LEN + 1];
	char old_hex[SHA256_HEX_LEN + 1];
	struct agent_dirent entry;
	uint32_t size = 0;
	bool in_place = false;
	int err;

	err = storage_path_resolve(ctx, args->v[0].str, args->v[0].len, path);
	if (err != 0) {
		return err;
	}
	storage_recover(path); /* a power cut may have left the name to its backup */
	memset(&plan, 0, sizeof(plan));
	plan.path = path;
	if (!parse_digest(&args->v[1], given)) {
		return tool_fail(ctx, -EINVAL,
				 "sha256 must be the 64 hex digits storage_read_range returned");
	}
	err = load_edits(ctx, args, &plan);
	if (err != 0) {
		return err;
	}
	err = agent_fs_stat(path, &entry);
	if (err != 0) {
		return storage_fs_fail(ctx, err, "cannot patch", path);
	}
	if (entry.type == AGENT_FS_DIR) {
		return tool_fail(ctx, -EISDIR, "%.96s is a directory", path);
	}
	if (entry.size > CONFIG_AGENT_STORAGE_PATCH_FILE_MAX) {
		return tool_fail(ctx, -EFBIG,
				 "%.96s is %u bytes; storage_patch edits files of at most %d bytes",
				 path, (unsigned int)entry.size,
				 CONFIG_AGENT_STORAGE_PATCH_FILE_MAX);
	}
	err = storage_hash_file(ctx, path, plan.old_digest, &size, NULL, 0, 0, NULL);
	if (err != 0) {
		return storage_fs_fail(ctx, err, "cannot read", path);
	}
	if (size > CONFIG_AGENT_STORAGE_PATCH_FILE_MAX) {
		return tool_fail(ctx, -EFBIG, "%.96s grew above %d bytes", path,
				 CONFIG_AGENT_STORAGE_PATCH_FILE_MAX);
	}
	plan.old_size = size;
	if (memcmp(given, plan.old_digest, sizeof(given)) != 0) {
		write_conflict(out, &plan, &args->v[1]);
		return 0;
	}
	err = check_size(ctx, &plan);
	if (err != 0) {
		return err;
	}
	err = patch_staged(ctx, &plan);
	if (err == -ENOSPC) {
		in_place = true;
		err = patch_in_memory(ctx, &plan);
	}
	if (err != 0) {
		return err;
	}
	sha256_hex(plan.new_digest, hex);
	sha256_hex(plan.old_digest, old_hex);
	jw_object_begin(out);
	jw_key(out, "path");
	jw_string(out, path);
	jw_key(out, "size");
	jw_int(out, plan.new_size);
	jw_key(out, "sha256");
	jw_string(out, hex);
	jw_key(out, "previous_size");
	jw_int(out, plan.old_size);
	jw_key(out, "previous_sha256");
	jw_string(out, old_hex);
	jw_key(out, "edits");
	jw_int(out, (int64_t)plan.count);
	jw_key(out, "method");
	jw_string(out, in_place ? "in_place" : "staged");
	jw_object_end(out);
	return 0;
}

static const struct tool_param edit_fields[] = {
	{
		.name = "offset",
		.type = TOOL_PARAM_INTEGER,
		.required = true,
		.description = TOOL_TEXT(storage_patch_description_1,
			"Byte offset in the original file."),
		.min = 0,
		.max = CONFIG_AGENT_STORAGE_PATCH_FILE_MAX,
	},
	{
		.name = "delete",
		.type = TOOL_PARAM_INTEGER,
		.required = false,
		.description = TOOL_TEXT(storage_patch_description_2,
			"Bytes removed at offset (default 0)."),
		.min = 0,
		.max = CONFIG_AGENT_STORAGE_PATCH_FILE_MAX,
	},
	{
		.name = "insert",
		.type = TOOL_PARAM_STRING,
		.required = false,
		.description = TOOL_TEXT(storage_patch_description_3,
			"Text put at offset (default none)."),
		.min = 0,
		.max = CONFIG_AGENT_STORAGE_PATCH_INSERT_MAX,
	},
};

static const struct tool_param patch_params[] = {
	STORAGE_PATH_PARAM(TOOL_TEXT(storage_patch_param_1,
		"File to edit (absolute, or relative to the current directory).")),
	{
		.name = "sha256",
		.type = TOOL_PARAM_STRING,
		.required = true,
		.description = TOOL_TEXT(storage_patch_description_4,
			"The file's sha256 from storage_read_range."),
		.min = SHA256_HEX_LEN,
		.max = SHA256_HEX_LEN,
	},
	{
		.name = "edits",
		.type = TOOL_PARAM_OBJECTS,
		.required = true,
		.description = TOOL_TEXT(storage_patch_description_5,
			"Ascending, non-overlapping edits of the original."),
		.min = 1,
		.max = CONFIG_AGENT_STORAGE_PATCH_EDITS_MAX,
		.fields = edit_fields,
		.field_count = 3,
	},
};

const struct tool_def tool_storage_patch = {
	.name = "storage_patch",
	.description = TOOL_TEXT(storage_patch_description_6,
		"Edit a text file (at most {{CONFIG_AGENT_STORAGE_PATCH_FILE_MAX}} bytes) with "
		"up to {{CONFIG_AGENT_STORAGE_PATCH_EDITS_MAX}} byte-offset edits. A stale "
		"sha256 returns a conflict and changes nothing."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_MUTATING,
	.params = patch_params,
	.param_count = 3,
	.output = TOOL_TEXT(storage_patch_output_1,
		"{path, size, sha256, previous_size, previous_sha256, edits, method: "
		"staged|in_place} or {conflict: true, path, sha256, size, expected, changed: "
		"false, message}"),
	.exec = patch_exec,
	.groups = TOOL_GROUP_FS_UPDATE,
	.keywords = TOOL_TEXT(storage_patch_keywords_1,
		"patch edit modify change update replace insert delete fix lines large file"),
};
