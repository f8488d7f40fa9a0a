/*
 * storage_read_range: up to CONFIG_AGENT_STORAGE_RANGE_MAX_LEN bytes of a text file at a byte
 * offset, with the SHA-256 of the whole file (what storage_patch asks for), the offset to
 * continue at and whether the end was reached. The file is read once: the hash and the
 * range come from the same pass.
 *
 * The content is returned byte-exact as a JSON string, so it stops before a UTF-8 character
 * the range cuts, before a byte that is not text, and where escaping would exhaust the
 * result; "truncated" and "reason" say which.
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

/* Bytes before the offset kept to tell where a character the offset falls into starts. */
#define LEAD_BACK 3u

static uint8_t range_buf[LEAD_BACK + CONFIG_AGENT_STORAGE_RANGE_MAX_LEN] AGENT_PSRAM_ATTR;

static bool is_continuation(uint8_t c)
{
	return c >= 0x80 && c <= 0xBF;
}

static int range_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	char path[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;
	uint8_t digest[SHA256_DIGEST_BYTES];
	char hex[SHA256_HEX_LEN + 1];
	uint32_t offset = (uint32_t)args->v[1].integer;
	uint32_t want = args->v[2].present ? (uint32_t)args->v[2].integer
					   : CONFIG_AGENT_STORAGE_RANGE_MAX_LEN;
	uint32_t back;
	uint32_t size = 0;
	size_t copied = 0;
	size_t avail;
	size_t text;
	size_t fit;
	const char *reason = NULL;
	enum storage_text_stop stop;
	const uint8_t *data;
	int err;

	err = storage_path_resolve(ctx, args->v[0].str, args->v[0].len, path);
	if (err != 0) {
		return err;
	}
	storage_recover(path); /* a power cut may have left the name to its backup */
	if (want > CONFIG_AGENT_STORAGE_RANGE_MAX_LEN) {
		return tool_fail(ctx, -EINVAL, "length is above %d bytes",
				 CONFIG_AGENT_STORAGE_RANGE_MAX_LEN);
	}
	err = agent_fs_stat(path, &entry);
	if (err != 0) {
		return storage_fs_fail(ctx, err, "cannot read", path);
	}
	if (entry.type == AGENT_FS_DIR) {
		return tool_fail(ctx, -EISDIR, "%.96s is a directory (storage_list lists it)",
				 path);
	}
	back = offset < LEAD_BACK ? offset : LEAD_BACK;
	err = storage_hash_file(ctx, path, digest, &size, range_buf, offset - back,
				back + want, &copied);
	if (err != 0) {
		return storage_fs_fail(ctx, err, "cannot read", path);
	}
	if (offset > size) {
		return tool_fail(ctx, -EINVAL, "offset %u is past the end of %.96s (%u bytes)",
				 (unsigned int)offset, path, (unsigned int)size);
	}
	/* The bytes from offset on, and how many of them the file holds. */
	data = range_buf + back;
	avail = copied > back ? copied - back : 0;
	if (avail > 0 && is_continuation(data[0])) {
		uint32_t start = offset;

		for (uint32_t k = 1; k <= back; k++) {
			if (!is_continuation(data[-(int32_t)k])) {
				start = offset - k;
				break;
			}
		}
		if (start != offset) {
			return tool_fail(ctx, -EINVAL,
					 "offset %u is inside a UTF-8 character; it starts at %u",
					 (unsigned int)offset, (unsigned int)start);
		}
	}
	text = storage_text_scan(data, avail, &stop);
	if (stop == STORAGE_TEXT_CUT && offset + avail < size) {
		reason = "character_boundary"; /* the rest of the character is in the next range */
	} else if (stop != STORAGE_TEXT_END) {
		if (text == 0) {
			return tool_fail(ctx, -EILSEQ,
					 "%.96s is not text at byte %u (%s); storage_read_range "
					 "returns UTF-8 text only",
					 path, (unsigned int)offset,
					 stop == STORAGE_TEXT_NUL ? "a NUL byte" : "invalid UTF-8");
		}
		reason = "not_text";
	}
	sha256_hex(digest, hex);
	jw_object_begin(out);
	jw_key(out, "path");
	jw_string(out, path);
	jw_key(out, "size");
	jw_int(out, size);
	jw_key(out, "sha256");
	jw_string(out, hex);
	jw_key(out, "offset");
	jw_int(out, offset);
	fit = storage_json_fit((const char *)data, text, storage_room(out));
	if (fit < text) {
		reason = "result_full";
	}
	jw_key(out, "content");
	jw_string_n(out, (const char *)data, fit);
	jw_key(out, "length");
	jw_int(out, (int64_t)fit);
	jw_key(out, "next_offset");
	jw_int(out, (int64_t)offset + (int64_t)fit);
	jw_key(out, "eof");
	jw_bool(out, offset + fit >= size);
	jw_key(out, "truncated");
	jw_bool(out, reason != NULL);
	if (reason != NULL) {
		jw_key(out, "reason");
		jw_string(out, reason);
	}
	jw_object_end(out);
	return 0;
}

static const struct tool_param range_params[] = {
	STORAGE_PATH_PARAM(TOOL_TEXT(storage_range_param_1,
		"Text file (absolute, or relative to the current directory).")),
	{
		.name = "offset",
		.type = TOOL_PARAM_INTEGER,
		.required = true,
		.description = TOOL_TEXT(storage_range_description_1,
			"Byte offset to start at (0 for the start; next_offset continues)."),
		.min = 0,
		.max = INT32_MAX,
	},
	{
		.name = "length",
		.type = TOOL_PARAM_INTEGER,
		.required = false,
		.description = TOOL_TEXT(storage_range_description_2,
			"Bytes to read (default and most "
			"{{CONFIG_AGENT_STORAGE_RANGE_MAX_LEN}})."),
		.min = 1,
		.max = CONFIG_AGENT_STORAGE_RANGE_MAX_LEN,
	},
};

const struct tool_def tool_storage_read_range = {
	.name = "storage_read_range",
	.description = TOOL_TEXT(storage_range_description_3,
		"Read up to {{CONFIG_AGENT_STORAGE_RANGE_MAX_LEN}} bytes of a text file at a "
		"byte offset; returns the content, the whole file's SHA-256 (for "
		"storage_patch), next_offset and eof."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_SENSITIVE,
	.params = range_params,
	.param_count = 3,
	.output = TOOL_TEXT(storage_range_output_1,
		"{path, size, sha256, offset, content, length, next_offset, eof, truncated, "
		"reason (when truncated: character_boundary|not_text|result_full)}"),
	.exec = range_exec,
	.groups = TOOL_GROUP_FS_READ,
	.keywords = TOOL_TEXT(storage_range_keywords_1,
		"read range offset bytes part chunk sha256 hash large file edit before patch"),
};
