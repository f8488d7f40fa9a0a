/*
 * storage_list and storage_stat: what a directory holds and whether one path exists.
 * Both only inspect (risk read).
 */
#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "storage_fs.h"
#include "storage_params.h"
#include "storage_path.h"
#include "storage_text.h"
#include "tools_listing.h"
#include "tools_storage.h"

/* Bytes of one entry besides its name: {"name":,"type":"file","size":4294967295}, */
#define LIST_ENTRY_FIXED 48

static const char *type_name(enum agent_fs_type type)
{
	return type == AGENT_FS_DIR ? "dir" : "file";
}

/* Why a path could not be opened as a directory: a file says so plainly. */
static int list_fail(struct tool_ctx *ctx, int err, const char *path)
{
	struct agent_dirent entry;

	if (agent_fs_stat(path, &entry) == 0 && entry.type == AGENT_FS_FILE) {
		return tool_fail(ctx, -ENOTDIR,
				 "%.96s is a file, not a directory (storage_stat or storage_read "
				 "show files)",
				 path);
	}
	return storage_fs_fail(ctx, err, "cannot list", path);
}

static int list_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	char path[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;
	struct agent_dir *dir;
	uint32_t count = 0;
	bool truncated = false;
	int err;

	err = storage_path_resolve(ctx, args->v[0].str, args->v[0].len, path);
	if (err != 0) {
		return err;
	}
	err = agent_fs_opendir(&dir, path);
	if (err != 0) {
		return list_fail(ctx, err, path);
	}
	jw_object_begin(out);
	jw_key(out, "path");
	jw_string(out, path);
	jw_key(out, "entries");
	jw_array_begin(out);
	for (;;) {
		size_t name_len;

		if (storage_cancelled(ctx)) {
			err = -ECANCELED;
			break;
		}
		err = agent_fs_readdir(dir, &entry);
		if (err != 0 || entry.name[0] == '\0') {
			break;
		}
		if (storage_entry_is_hidden(path, entry.name)) {
			continue; /* the agent's own state: refused by every tool */
		}
		/* One entry past the bound only tells that there are more. */
		if (count == CONFIG_AGENT_STORAGE_LIST_MAX) {
			truncated = true;
			break;
		}
		name_len = strlen(entry.name);
		if (storage_json_len(entry.name, name_len) + LIST_ENTRY_FIXED > storage_room(out)) {
			truncated = true; /* the names are too long for the result */
			break;
		}
		jw_object_begin(out);
		jw_key(out, "name");
		jw_string_n(out, entry.name, name_len);
		jw_key(out, "type");
		jw_string(out, type_name(entry.type));
		if (entry.type == AGENT_FS_FILE) {
			jw_key(out, "size");
			jw_int(out, entry.size);
		}
		jw_object_end(out);
		count++;
	}
	int close_err = agent_fs_closedir(dir);

	if (err == 0) {
		err = close_err;
	}
	if (err != 0) {
		return storage_fs_fail(ctx, err, "cannot list", path);
	}
	return tools_list_end(out, "count", count, truncated);
}

static int stat_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	char path[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;
	int err;

	err = storage_path_resolve(ctx, args->v[0].str, args->v[0].len, path);
	if (err != 0) {
		return err;
	}
	storage_recover(path); /* a power cut may have left the name to its backup */
	err = agent_fs_stat(path, &entry);
	/* A file where a directory was expected on the way also means "no such path". */
	if (err != 0 && err != -ENOENT && err != -ENOTDIR) {
		return storage_fs_fail(ctx, err, "cannot check", path);
	}
	jw_object_begin(out);
	jw_key(out, "path");
	jw_string_n(out, args->v[0].str, args->v[0].len);
	jw_key(out, "resolved");
	jw_string(out, path);
	jw_key(out, "exists");
	jw_bool(out, err == 0);
	if (err == 0) {
		jw_key(out, "type");
		jw_string(out, type_name(entry.type));
		if (entry.type == AGENT_FS_FILE) {
			jw_key(out, "size");
			jw_int(out, entry.size);
		}
	}
	jw_object_end(out);
	return 0;
}

static const struct tool_param list_params[] = {
	STORAGE_PATH_PARAM(TOOL_TEXT(storage_list_param_1,
		"Directory to list: absolute (\"/lfs/scripts\") or relative to the shell's "
		"current directory (\".\").")),
};

static const struct tool_param stat_params[] = {
	STORAGE_PATH_PARAM(TOOL_TEXT(storage_list_param_2,
		"Exact path to check, absolute (\"/lfs/config.lua\") or relative to the shell's "
		"current directory (\"mandel.py\").")),
};

const struct tool_def tool_storage_list = {
	.name = "storage_list",
	.description = TOOL_TEXT(storage_list_description_1,
		"List one directory: up to {{CONFIG_AGENT_STORAGE_LIST_MAX}} entries with name, "
		"type (file or dir) and size; \"truncated\": true when it holds more."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_READ,
	.params = list_params,
	.param_count = 1,
	.output = TOOL_TEXT(storage_list_output_1,
		"{path, entries: [{name, type: file|dir, size (files)}], count, truncated}"),
	.exec = list_exec,
	.groups = TOOL_GROUP_FS_LIST,
	.keywords = TOOL_TEXT(storage_list_keywords_1,
		"list directory folder files contents ls dir entries browse show"),
};

const struct tool_def tool_storage_stat = {
	.name = "storage_stat",
	.description = TOOL_TEXT(storage_list_description_2,
		"Check whether one exact file or directory path exists; returns exists, the "
		"resolved absolute path, type and size. The required check for any "
		"file-existence question (does X exist, is there a file X)."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_READ,
	.params = stat_params,
	.param_count = 1,
	.output = TOOL_TEXT(storage_list_output_2,
		"{path, resolved, exists, type: file|dir, size (files)}"),
	.exec = stat_exec,
	.groups = TOOL_GROUP_FS_STAT,
	.keywords = TOOL_TEXT(storage_list_keywords_2,
		"exist exists existence present missing whether check stat path size type file"),
};
