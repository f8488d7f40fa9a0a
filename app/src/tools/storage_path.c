/*
 * Path resolution and the reserved names of the storage tools (storage_path.h).
 *
 * Resolution is lexical: neither littlefs nor FAT has symbolic links, so "a/../b" names
 * the same file as "b" on both. The reserved names (.ssh, the agent's own .agent directory,
 * the staging and backup names) are checked on every name of the folded path, as FAT
 * compares names (ASCII case folded, trailing dots and spaces dropped), so every spelling
 * ("a/../.ssh", "./.ssh/", "//.ssh//x", ".SSH", ".ssh.", ".AGENT_WRITE.TMP") is caught; and
 * again on the names the filesystem reports for the existing names on the way, which
 * catches what only the filesystem knows (a FAT short name such as AGENT~1).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "agent_port.h"
#include "storage_path.h"

const char storage_settings_refusal[] =
	"the settings store is refused (it holds the API key)";
const char storage_ssh_refusal[] =
	"paths at or below a .ssh directory are refused (the device's SSH identity)";
const char storage_agent_refusal[] =
	"paths at or below a .agent directory are refused (the agent's own state: its "
	"conversations)";
const char storage_stage_refusal[] = "is reserved for staging";

static char lower_ascii(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/*
 * Whether @p name (@p len bytes) is @p word as FAT compares names: ASCII letters without
 * regard to case, trailing dots and spaces dropped. With @p prefix, whether it starts so.
 */
static bool fat_name_is(const char *name, size_t len, const char *word, bool prefix)
{
	size_t word_len = strlen(word);

	while (len > 0 && (name[len - 1] == '.' || name[len - 1] == ' ')) {
		len--;
	}
	if (prefix ? len < word_len : len != word_len) {
		return false;
	}
	for (size_t i = 0; i < word_len; i++) {
		if (lower_ascii(name[i]) != word[i]) {
			return false;
		}
	}
	return true;
}

enum storage_name_kind storage_name_kind(const char *name, size_t len)
{
	if (fat_name_is(name, len, ".ssh", false)) {
		return STORAGE_NAME_SSH;
	}
	if (fat_name_is(name, len, STORAGE_AGENT_DIR_NAME, false)) {
		return STORAGE_NAME_AGENT;
	}
	if (fat_name_is(name, len, STORAGE_WRITE_STAGE_NAME, false) ||
	    fat_name_is(name, len, STORAGE_PATCH_STAGE_NAME, false) ||
	    fat_name_is(name, len, STORAGE_BACKUP_PREFIX, true)) {
		return STORAGE_NAME_STAGE;
	}
	return STORAGE_NAME_ORDINARY;
}

const char *storage_path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

bool storage_entry_is_hidden(const char *dir, const char *name)
{
	char child[STORAGE_PATH_MAX + 1];
	size_t dir_len = strlen(dir);
	size_t name_len = strlen(name);
	enum storage_name_kind kind = storage_name_kind(name, name_len);

	if (kind == STORAGE_NAME_AGENT || kind == STORAGE_NAME_STAGE) {
		return true;
	}
	if (dir_len == 1u) {
		dir_len = 0; /* the root "/" */
	}
	if (dir_len + 1u + name_len > STORAGE_PATH_MAX) {
		return false; /* no path within the bound names it: no tool reaches it */
	}
	memcpy(child, dir, dir_len);
	child[dir_len] = '/';
	memcpy(child + dir_len + 1u, name, name_len + 1u);
	return agent_settings_is_store_path(child);
}

void storage_backup_path(const char *path, char out[STORAGE_STAGE_PATH_MAX + 1])
{
	static const char digits[] = "0123456789abcdef";
	char name[sizeof(STORAGE_BACKUP_PREFIX) + 8];
	uint32_t hash = 2166136261u; /* FNV-1a of the name, ASCII case folded as FAT folds it */

	for (const char *p = storage_path_base(path); *p != '\0'; p++) {
		hash = (hash ^ (uint8_t)lower_ascii(*p)) * 16777619u;
	}
	memcpy(name, STORAGE_BACKUP_PREFIX, sizeof(STORAGE_BACKUP_PREFIX) - 1u);
	for (int i = 0; i < 8; i++) {
		name[sizeof(STORAGE_BACKUP_PREFIX) - 1u + i] = digits[(hash >> (28 - 4 * i)) & 0xf];
	}
	name[sizeof(name) - 1u] = '\0';
	storage_stage_path(path, name, out);
}

void storage_stage_path(const char *path, const char *stage_name,
			char out[STORAGE_STAGE_PATH_MAX + 1])
{
	const char *base = storage_path_base(path);
	size_t dir_len = (size_t)(base - path); /* with the '/' */
	size_t name_len = strlen(stage_name);

	if (dir_len > STORAGE_PATH_MAX + 1u) {
		dir_len = STORAGE_PATH_MAX + 1u;
	}
	if (name_len > STORAGE_STAGE_NAME_MAX) {
		name_len = STORAGE_STAGE_NAME_MAX;
	}
	memcpy(out, path, dir_len);
	memcpy(out + dir_len, stage_name, name_len);
	out[dir_len + name_len] = '\0';
}

/*
 * Append the names of @p s (@p len bytes) to the folded path in @p out (@p *n bytes, "" for
 * the root). 0, or -ENAMETOOLONG.
 */
static int fold(char *out, size_t *n, const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t start;
		size_t name_len;

		while (i < len && s[i] == '/') {
			i++;
		}
		start = i;
		while (i < len && s[i] != '/') {
			i++;
		}
		name_len = i - start;
		if (name_len == 0 || (name_len == 1 && s[start] == '.')) {
			continue;
		}
		if (name_len == 2 && s[start] == '.' && s[start + 1] == '.') {
			while (*n > 0 && out[*n - 1] != '/') {
				(*n)--;
			}
			if (*n > 0) {
				(*n)--; /* the '/' before the dropped name */
			}
			continue;
		}
		if (name_len > AGENT_FS_NAME_MAX || *n + 1u + name_len > STORAGE_PATH_MAX) {
			return -ENAMETOOLONG;
		}
		out[(*n)++] = '/';
		memcpy(out + *n, s + start, name_len);
		*n += name_len;
	}
	return 0;
}

/* A reserved name found on a path: what it is, and how it is spelled. */
struct reserved {
	enum storage_name_kind kind;
	char name[AGENT_FS_NAME_MAX + 1];
};

static bool reserved_is(struct reserved *r, const char *name, size_t len)
{
	r->kind = storage_name_kind(name, len);
	memcpy(r->name, name, len);
	r->name[len] = '\0';
	return r->kind != STORAGE_NAME_ORDINARY;
}

/* Whether a name of the folded @p path is reserved: the first one in @p r. */
static bool reserved_name(const char *path, struct reserved *r)
{
	const char *p = path;

	while (*p != '\0') {
		const char *start = ++p; /* after a '/' */

		while (*p != '\0' && *p != '/') {
			p++;
		}
		if (reserved_is(r, start, (size_t)(p - start))) {
			return true;
		}
	}
	return false;
}

/*
 * Ask the filesystem for the name of each existing name on the way (the mount point itself
 * skipped), the last one included: a FAT volume reports the long name (".ssh", ".agent",
 * ".agent_write.tmp") for any alias of it, such as its short name.
 */
static bool reserved_alias(const char *path, struct reserved *r)
{
	char prefix[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;
	const char *p = strchr(path + 1, '/'); /* end of the mount point's name */

	while (p != NULL) {
		const char *next = strchr(p + 1, '/');
		size_t len = next != NULL ? (size_t)(next - path) : strlen(path);
		int err;

		memcpy(prefix, path, len);
		prefix[len] = '\0';
		err = agent_fs_stat(prefix, &entry);
		if (err == -ENOENT) {
			return false; /* nothing deeper exists either */
		}
		if (err == 0 && reserved_is(r, entry.name, strlen(entry.name))) {
			return true;
		}
		p = next;
	}
	return false;
}

static int refuse_reserved(struct tool_ctx *ctx, const struct reserved *r)
{
	switch (r->kind) {
	case STORAGE_NAME_SSH:
		return tool_fail(ctx, -EACCES, "%s", storage_ssh_refusal);
	case STORAGE_NAME_AGENT:
		return tool_fail(ctx, -EACCES, "%s", storage_agent_refusal);
	default:
		return tool_fail(ctx, -EINVAL, "the name %.64s %s", r->name, storage_stage_refusal);
	}
}

int storage_path_resolve(struct tool_ctx *ctx, const char *path, size_t len,
			 char out[STORAGE_PATH_MAX + 1])
{
	static struct reserved found AGENT_PSRAM_ATTR; /* tools run one at a time, on the worker */
	const char *cwd = ctx->cwd;
	size_t n = 0;

	if (memchr(path, '\0', len) != NULL) {
		return tool_fail(ctx, -EINVAL, "the path contains a NUL byte");
	}
	if (len == 0 || path[0] != '/') {
		if (cwd == NULL || cwd[0] != '/') {
			cwd = STORAGE_DEFAULT_CWD;
		}
		if (fold(out, &n, cwd, strlen(cwd)) != 0) {
			return tool_fail(ctx, -ENAMETOOLONG,
					 "the current directory is longer than %d bytes",
					 STORAGE_PATH_MAX);
		}
	}
	if (fold(out, &n, path, len) != 0) {
		return tool_fail(ctx, -ENAMETOOLONG,
				 "the path is longer than %d bytes once resolved, or has a name "
				 "longer than %d bytes",
				 STORAGE_PATH_MAX, AGENT_FS_NAME_MAX);
	}
	if (n == 0) {
		out[n++] = '/';
	}
	out[n] = '\0';
	if (reserved_name(out, &found) || reserved_alias(out, &found)) {
		return refuse_reserved(ctx, &found);
	}
	if (agent_settings_is_store_path(out)) {
		return tool_fail(ctx, -EACCES, "%s", storage_settings_refusal);
	}
	return 0;
}
