/*
 * Paths of the storage tools: resolution against the shell's current directory, the
 * reserved names (.ssh, the agent's own .agent directory, the staging names storage_write
 * and storage_patch use next to their target). See docs/tools-storage.md "Paths".
 */
#ifndef AGENT_STORAGE_PATH_H
#define AGENT_STORAGE_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "tool.h"

/* Longest resolved absolute path, in bytes (as the shell's cwd, TOOL_CWD_MAX). */
#define STORAGE_PATH_MAX TOOL_CWD_MAX
/* A staging path: the target's directory, '/', and a staging name. */
#define STORAGE_STAGE_NAME_MAX 24
#define STORAGE_STAGE_PATH_MAX (STORAGE_PATH_MAX + 1 + STORAGE_STAGE_NAME_MAX)

/* Staging names, one per tool, in the target's directory (single-threaded worker). */
#define STORAGE_WRITE_STAGE_NAME ".agent_write.tmp"
#define STORAGE_PATCH_STAGE_NAME ".agent_patch.tmp"
/*
 * Where a filesystem whose rename does not replace (FAT) keeps the original while the staged
 * file takes its name: this prefix and 8 hex digits of a hash of the target's name.
 */
#define STORAGE_BACKUP_PREFIX ".agent_bak_"
/* The agent's own directory on each volume (the conversation store: conv_store.c). */
#define STORAGE_AGENT_DIR_NAME ".agent"

/* What a name is to the storage tools, compared as FAT compares names. */
enum storage_name_kind {
	STORAGE_NAME_ORDINARY,
	STORAGE_NAME_SSH,   /* ".ssh": the device's SSH identity */
	STORAGE_NAME_AGENT, /* ".agent": the agent's own state */
	STORAGE_NAME_STAGE, /* a staging or backup name of storage_write and storage_patch */
};

/* The cwd used when the context has none (or a relative one). */
#define STORAGE_DEFAULT_CWD "/lfs"

/**
 * Resolve @p path (@p len bytes) into an absolute path in @p out: relative paths start at
 * ctx->cwd; ".", "..", repeated and trailing slashes are folded ("/.." stays "/"). Refuses,
 * with a message in ctx->error: a NUL byte (-EINVAL), a result or a name longer than the
 * bounds (-ENAMETOOLONG); any path with a reserved name on the way: at or below a .ssh or a
 * .agent directory (-EACCES), or a staging or backup name (-EINVAL), whatever its spelling,
 * checked on the folded names and on the names the filesystem reports for those that exist
 * (a FAT short or case-folded alias); and the files of the settings store, which hold the
 * API key (-EACCES, agent_settings_is_store_path(): on the simulator also its flash image
 * reached through the SD folder).
 *
 * @return 0 or a negative errno (from tool_fail)
 */
int storage_path_resolve(struct tool_ctx *ctx, const char *path, size_t len,
			 char out[STORAGE_PATH_MAX + 1]);

/**
 * What the name @p name (@p len bytes) is: compared without regard to ASCII case and
 * without trailing dots and spaces, as FAT compares names (it drops those characters).
 */
enum storage_name_kind storage_name_kind(const char *name, size_t len);

/**
 * Whether storage_list leaves out the entry @p name of the directory @p dir (a resolved
 * path): the agent's own state, which every tool refuses: a .agent directory, a staging or
 * backup name, a file of the settings store (agent_settings_is_store_path()).
 */
bool storage_entry_is_hidden(const char *dir, const char *name);

/** The last name of the absolute @p path (after its last '/'). */
const char *storage_path_base(const char *path);

/**
 * The path of @p stage_name in the directory of the absolute @p path, into @p out
 * (STORAGE_STAGE_PATH_MAX + 1 bytes).
 */
void storage_stage_path(const char *path, const char *stage_name,
			char out[STORAGE_STAGE_PATH_MAX + 1]);

/** The backup path of the absolute @p path (STORAGE_STAGE_PATH_MAX + 1 bytes). */
void storage_backup_path(const char *path, char out[STORAGE_STAGE_PATH_MAX + 1]);

/** The error message of a refused .ssh path (tests compare against it). */
extern const char storage_ssh_refusal[];
/** The error message of a path of the settings store (agent_settings_is_store_path()). */
extern const char storage_settings_refusal[];
/** The error message of a path at or below a .agent directory (the agent's own state). */
extern const char storage_agent_refusal[];
/** The end of the error message of a staging or backup name: "the name NAME " and this. */
extern const char storage_stage_refusal[];

#endif /* AGENT_STORAGE_PATH_H */
