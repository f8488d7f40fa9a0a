/*
 * Filesystem of the Zephyr port: Zephyr's fs_* API, nearly one to one. Files and directories
 * come from fixed tables of struct fs_file_t / struct fs_dir_t. The LittleFS volume is
 * mounted at "/lfs" by the devicetree fstab before main() runs (dts/agent-fstab.dtsi).
 *
 * Errors are Zephyr's, unchanged, with the same additions as the POSIX port so that the
 * simulator and the device fail alike: a full table is -ENFILE; reading from a file opened
 * without AGENT_FS_O_READ, or writing or truncating one opened without AGENT_FS_O_WRITE, is
 * -EBADF; a stale or foreign handle is -EBADF.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include <zephyr/fs/fs.h>
#include <zephyr/kernel.h>

#include "agent_port.h"
#include "zephyr_port.h"

/* agent_port.h promises Zephyr's values, so flags and whence are passed through. */
_Static_assert(AGENT_FS_O_READ == FS_O_READ && AGENT_FS_O_WRITE == FS_O_WRITE &&
		       AGENT_FS_O_RDWR == FS_O_RDWR && AGENT_FS_O_CREATE == FS_O_CREATE &&
		       AGENT_FS_O_APPEND == FS_O_APPEND,
	       "agent_port.h open flags differ from Zephyr's");
#ifdef FS_O_TRUNC
_Static_assert(AGENT_FS_O_TRUNC == FS_O_TRUNC, "agent_port.h FS_O_TRUNC differs from Zephyr's");
#endif
_Static_assert(AGENT_FS_SEEK_SET == FS_SEEK_SET && AGENT_FS_SEEK_CUR == FS_SEEK_CUR &&
		       AGENT_FS_SEEK_END == FS_SEEK_END,
	       "agent_port.h seek origins differ from Zephyr's");

#define AGENT_FS_O_ALL                                                                         \
	(AGENT_FS_O_RDWR | AGENT_FS_O_CREATE | AGENT_FS_O_APPEND | AGENT_FS_O_TRUNC)

struct agent_file {
	bool used;
	unsigned int flags;
	struct fs_file_t file;
};

struct agent_dir {
	bool used;
	struct fs_dir_t dir;
};

static struct agent_file file_table[ZEPHYR_PORT_FILE_SLOTS];
static struct agent_dir dir_table[ZEPHYR_PORT_DIR_SLOTS];
/* Guards the used flags; Zephyr's LittleFS driver serialises the operations (a lock per mount). */
K_MUTEX_DEFINE(agent_port_fs_lock);

static bool file_is_valid(const struct agent_file *file)
{
	uintptr_t addr = (uintptr_t)file;
	uintptr_t first = (uintptr_t)&file_table[0];

	if (file == NULL || addr < first || addr >= (uintptr_t)&file_table[ZEPHYR_PORT_FILE_SLOTS]) {
		return false;
	}
	return (addr - first) % sizeof(file_table[0]) == 0u && file->used;
}

static bool dir_is_valid(const struct agent_dir *dir)
{
	uintptr_t addr = (uintptr_t)dir;
	uintptr_t first = (uintptr_t)&dir_table[0];

	if (dir == NULL || addr < first || addr >= (uintptr_t)&dir_table[ZEPHYR_PORT_DIR_SLOTS]) {
		return false;
	}
	return (addr - first) % sizeof(dir_table[0]) == 0u && dir->used;
}

static int file_check(const struct agent_file *file, unsigned int need_flag)
{
	if (!file_is_valid(file) || (file->flags & need_flag) != need_flag) {
		return -EBADF;
	}
	return 0;
}

/* fs_read()/fs_write() return ssize_t; the port returns int, so longer requests are served in part. */
static size_t clamp_len(size_t len)
{
	return len > (size_t)INT_MAX ? (size_t)INT_MAX : len;
}

/* strnlen() is POSIX, not C11; this keeps the port to the C library the core may use. */
static size_t bounded_len(const char *s, size_t max)
{
	size_t len = 0;

	while (len < max && s[len] != '\0') {
		len++;
	}
	return len;
}

static void fill_dirent(const struct fs_dirent *in, struct agent_dirent *out)
{
	size_t len = bounded_len(in->name, sizeof(out->name) - 1u);

	out->type = in->type == FS_DIR_ENTRY_DIR ? AGENT_FS_DIR : AGENT_FS_FILE;
	out->size = in->size > UINT32_MAX ? UINT32_MAX : (uint32_t)in->size;
	memcpy(out->name, in->name, len);
	out->name[len] = '\0';
}

int agent_fs_open(struct agent_file **out, const char *path, unsigned int flags)
{
	struct agent_file *file = NULL;
	fs_mode_t mode = (fs_mode_t)(flags & ~(unsigned int)AGENT_FS_O_TRUNC);
	int err;

	if (out == NULL || path == NULL || (flags & ~(unsigned int)AGENT_FS_O_ALL) != 0u) {
		return -EINVAL;
	}
#ifdef FS_O_TRUNC
	mode = (fs_mode_t)flags;
#endif

	(void)k_mutex_lock(&agent_port_fs_lock, K_FOREVER);
	for (size_t i = 0; i < ZEPHYR_PORT_FILE_SLOTS; i++) {
		if (!file_table[i].used) {
			file = &file_table[i];
			file->used = true;
			break;
		}
	}
	(void)k_mutex_unlock(&agent_port_fs_lock);
	if (file == NULL) {
		return -ENFILE;
	}

	fs_file_t_init(&file->file);
	file->flags = flags;
	err = fs_open(&file->file, path, mode);
#ifndef FS_O_TRUNC
	/* Trees without FS_O_TRUNC: truncate right after opening, before anything is written. */
	if (err == 0 && (flags & AGENT_FS_O_TRUNC) != 0u) {
		err = fs_truncate(&file->file, 0);
		if (err != 0) {
			(void)fs_close(&file->file);
		}
	}
#endif
	if (err != 0) {
		(void)k_mutex_lock(&agent_port_fs_lock, K_FOREVER);
		file->used = false;
		(void)k_mutex_unlock(&agent_port_fs_lock);
		return err;
	}
	*out = file;
	return 0;
}

int agent_fs_read(struct agent_file *file, void *buf, size_t len)
{
	int err = file_check(file, AGENT_FS_O_READ);

	if (err != 0) {
		return err;
	}
	if (buf == NULL && len > 0u) {
		return -EINVAL;
	}
	return (int)fs_read(&file->file, buf, clamp_len(len));
}

int agent_fs_write(struct agent_file *file, const void *buf, size_t len)
{
	int err = file_check(file, AGENT_FS_O_WRITE);

	if (err != 0) {
		return err;
	}
	if (buf == NULL && len > 0u) {
		return -EINVAL;
	}
	return (int)fs_write(&file->file, buf, clamp_len(len));
}

int agent_fs_seek(struct agent_file *file, int32_t offset, int whence)
{
	int err = file_check(file, 0);

	if (err != 0) {
		return err;
	}
	if (whence != AGENT_FS_SEEK_SET && whence != AGENT_FS_SEEK_CUR &&
	    whence != AGENT_FS_SEEK_END) {
		return -EINVAL;
	}
	return fs_seek(&file->file, (off_t)offset, whence);
}

int32_t agent_fs_tell(struct agent_file *file)
{
	int err = file_check(file, 0);
	off_t pos;

	if (err != 0) {
		return err;
	}
	pos = fs_tell(&file->file);
	if (pos > (off_t)INT32_MAX) {
		return -EOVERFLOW;
	}
	return (int32_t)pos;
}

int agent_fs_truncate(struct agent_file *file, uint32_t length)
{
	int err = file_check(file, AGENT_FS_O_WRITE);

	if (err != 0) {
		return err;
	}
	if ((uint64_t)length > (uint64_t)INT32_MAX) {
		/* off_t is 32 bits on the device; larger files are far beyond any partition. */
		return -EFBIG;
	}
	return fs_truncate(&file->file, (off_t)length);
}

int agent_fs_sync(struct agent_file *file)
{
	int err = file_check(file, 0);

	if (err != 0) {
		return err;
	}
	return fs_sync(&file->file);
}

int agent_fs_close(struct agent_file *file)
{
	int err = file_check(file, 0);

	if (err != 0) {
		return err;
	}
	/* LittleFS releases the file even when the final flush fails, so the slot is freed too. */
	err = fs_close(&file->file);
	(void)k_mutex_lock(&agent_port_fs_lock, K_FOREVER);
	file->used = false;
	(void)k_mutex_unlock(&agent_port_fs_lock);
	return err;
}

int agent_fs_unlink(const char *path)
{
	if (path == NULL) {
		return -EINVAL;
	}
	return fs_unlink(path);
}

int agent_fs_rename(const char *from, const char *to)
{
	if (from == NULL || to == NULL) {
		return -EINVAL;
	}
	return fs_rename(from, to);
}

int agent_fs_mkdir(const char *path)
{
	if (path == NULL) {
		return -EINVAL;
	}
	return fs_mkdir(path);
}

int agent_fs_stat(const char *path, struct agent_dirent *entry)
{
	struct fs_dirent dirent;
	int err;

	if (path == NULL || entry == NULL) {
		return -EINVAL;
	}
	err = fs_stat(path, &dirent);
	if (err == 0) {
		fill_dirent(&dirent, entry);
	}
	return err;
}

int agent_fs_statvfs(const char *path, struct agent_statvfs *stat)
{
	struct fs_statvfs vfs;
	int err;

	if (path == NULL || stat == NULL) {
		return -EINVAL;
	}
	err = fs_statvfs(path, &vfs);
	if (err == 0) {
		/* f_blocks and f_bfree count f_frsize units (include/zephyr/fs/fs.h). */
		stat->block_bytes = (uint32_t)vfs.f_frsize;
		stat->blocks = (uint32_t)vfs.f_blocks;
		stat->blocks_free = (uint32_t)vfs.f_bfree;
	}
	return err;
}

/* Zephyr's list of mounts (fs_readmount walks it under the VFS lock); no driver is called. */
bool agent_fs_mounted(const char *mount_point)
{
	const char *name = NULL;
	int index = 0;

	if (mount_point == NULL) {
		return false;
	}
	while (fs_readmount(&index, &name) == 0) {
		if (name != NULL && strcmp(name, mount_point) == 0) {
			return true;
		}
	}
	return false;
}

int agent_fs_opendir(struct agent_dir **out, const char *path)
{
	struct agent_dir *dir = NULL;
	int err;

	if (out == NULL || path == NULL) {
		return -EINVAL;
	}
	(void)k_mutex_lock(&agent_port_fs_lock, K_FOREVER);
	for (size_t i = 0; i < ZEPHYR_PORT_DIR_SLOTS; i++) {
		if (!dir_table[i].used) {
			dir = &dir_table[i];
			dir->used = true;
			break;
		}
	}
	(void)k_mutex_unlock(&agent_port_fs_lock);
	if (dir == NULL) {
		return -ENFILE;
	}

	fs_dir_t_init(&dir->dir);
	err = fs_opendir(&dir->dir, path);
	if (err != 0) {
		(void)k_mutex_lock(&agent_port_fs_lock, K_FOREVER);
		dir->used = false;
		(void)k_mutex_unlock(&agent_port_fs_lock);
		return err;
	}
	*out = dir;
	return 0;
}

int agent_fs_readdir(struct agent_dir *dir, struct agent_dirent *entry)
{
	struct fs_dirent dirent;
	int err;

	if (!dir_is_valid(dir)) {
		return -EBADF;
	}
	if (entry == NULL) {
		return -EINVAL;
	}
	/* Zephyr already skips "." and ".." and marks the end with an empty name. */
	err = fs_readdir(&dir->dir, &dirent);
	if (err != 0) {
		return err;
	}
	if (dirent.name[0] == '\0') {
		memset(entry, 0, sizeof(*entry));
		return 0;
	}
	fill_dirent(&dirent, entry);
	return 0;
}

int agent_fs_closedir(struct agent_dir *dir)
{
	int err;

	if (!dir_is_valid(dir)) {
		return -EBADF;
	}
	err = fs_closedir(&dir->dir);
	(void)k_mutex_lock(&agent_port_fs_lock, K_FOREVER);
	dir->used = false;
	(void)k_mutex_unlock(&agent_port_fs_lock);
	return err;
}
