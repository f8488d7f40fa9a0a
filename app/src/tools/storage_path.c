/*
 * Path resolution and the .ssh rule of the storage tools (storage_path.h).
 *
 * Resolution is lexical: neither littlefs nor FAT has symbolic links, so "a/../b" names
 * the same file as "b" on both. The .ssh rule is applied to the folded path, so every
 * spelling that reaches a .ssh directory ("a/../.ssh", "./.ssh/", "//.ssh//x", ".SSH",
 * ".ssh.") is caught, and again to the names the filesystem reports for the directories on
 * the way, which catches what only the filesystem knows (a FAT short name or a name FAT
 * folds to ".ssh").
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

static char lower_ascii(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool storage_name_is_ssh(const char *name, size_t len)
{
	static const char ssh[] = ".ssh";

	while (len > 0 && (name[len - 1] == '.' || name[len - 1] == ' ')) {
		len--;
	}
	if (len != sizeof(ssh) - 1u) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (lower_ascii(name[i]) != ssh[i]) {
			return false;
		}
	}
	return true;
}

const char *storage_path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

bool storage_path_is_stage(const char *path)
{
	const char *base = storage_path_base(path);

	return strcmp(base, STORAGE_WRITE_STAGE_NAME) == 0 ||
	       strcmp(base, STORAGE_PATCH_STAGE_NAME) == 0 ||
	       strncmp(base, STORAGE_BACKUP_PREFIX, sizeof(STORAGE_BACKUP_PREFIX) - 1u) == 0;
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

static bool has_ssh_name(const char *path)
{
	const char *p = path;

	while (*p != '\0') {
		const char *start = ++p; /* after a '/' */

		while (*p != '\0' && *p != '/') {
			p++;
		}
		if (storage_name_is_ssh(start, (size_t)(p - start))) {
			return true;
		}
	}
	return false;
}

/*
 * Ask the filesystem for the name of each existing directory on the way (the mount point
 * itself skipped): a FAT volume reports the long name ".ssh" for any alias of it.
 */
static bool has_ssh_alias(const char *path)
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
		if (err == 0 && storage_name_is_ssh(entry.name, strlen(entry.name))) {
			return true;
		}
		p = next;
	}
	return false;
}

int storage_path_resolve(struct tool_ctx *ctx, const char *path, size_t len,
			 char out[STORAGE_PATH_MAX + 1])
{
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
	if (has_ssh_name(out) || has_ssh_alias(out)) {
		return tool_fail(ctx, -EACCES, "%s", storage_ssh_refusal);
	}
	if (agent_settings_is_store_path(out)) {
		return tool_fail(ctx, -EACCES, "%s", storage_settings_refusal);
	}
	return 0;
}
