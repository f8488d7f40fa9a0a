/*
 * The simulator's SD card: a host folder mounted at "/SD:" (the simulator's --sd=DIR) with
 * the semantics of Zephyr's FAT driver where they matter to crash safety, so that code that
 * is safe here is safe on a FAT card:
 *
 * - rename never replaces: an existing target is -EEXIST (FatFs's f_rename answers
 *   FR_EXIST; Zephyr's fatfs_rename() first unlinks the target, which is no better, since
 *   nothing makes the pair atomic);
 * - a file's size is what its directory entry says, and that entry is written by sync and
 *   close: a close that fails (injected, posix_port.h) leaves the size of the last
 *   successful sync, or of the opening;
 * - seeking past the end is -EINVAL (fatfs_seek());
 * - names are matched without regard to ASCII letter case, and the characters FAT refuses
 *   in names ("*:<>?\| and control characters) are -ENOENT (FR_INVALID_NAME);
 * - "." and ".." components are refused (-ENOENT): paths are absolute;
 * - the simulator's flash image file is never served (-EACCES), whatever name, link or case
 *   reaches it (compared by st_dev and st_ino): a --sd folder that holds it would otherwise
 *   hand the agent's state, the API key among it, to the storage tools.
 *
 * Reached only through the agent_fs_* entry points of fs_lfs.c, which route "/SD:" paths
 * and SD handles here after counting the call for fault injection. Errors are the host's
 * errno values, negated.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "posix_port.h"
#include "posix_sd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SD_MOUNT_LEN (sizeof(POSIX_SD_MOUNT_POINT) - 1u)

struct sd_file {
	bool used;
	int fd;
	unsigned int flags;
	off_t synced_bytes; /* size recorded by the last successful sync (or the opening) */
};

struct sd_dir {
	bool used;
	DIR *dir;
	char path[PATH_MAX];
};

static pthread_mutex_t sd_lock = PTHREAD_MUTEX_INITIALIZER;
static bool sd_mounted;
static char sd_root[PATH_MAX];
static struct sd_file sd_files[POSIX_FS_FILE_SLOTS];
static struct sd_dir sd_dirs[POSIX_FS_DIR_SLOTS];
static bool image_valid;
static uint64_t image_dev;
static uint64_t image_ino;

/* ---- the flash image ---------------------------------------------------------------------- */

void posix_sd_set_flash_image(bool valid, uint64_t dev, uint64_t ino)
{
	pthread_mutex_lock(&sd_lock);
	image_valid = valid;
	image_dev = dev;
	image_ino = ino;
	pthread_mutex_unlock(&sd_lock);
}

/* Whether @p st is the flash image file. Lock held. */
static bool sd_is_image(const struct stat *st)
{
	return image_valid && (uint64_t)st->st_dev == image_dev &&
	       (uint64_t)st->st_ino == image_ino;
}

/* Whether the host path @p host (links followed) is the flash image file. Lock held. */
static bool sd_host_is_image(const char *host)
{
	struct stat st;

	return stat(host, &st) == 0 && sd_is_image(&st);
}

/* ---- mounting ----------------------------------------------------------------------------- */

int posix_sd_mount(const char *dir)
{
	struct stat st;
	int err = 0;

	if (dir == NULL || dir[0] == '\0') {
		return -EINVAL;
	}
	pthread_mutex_lock(&sd_lock);
	if (sd_mounted) {
		pthread_mutex_unlock(&sd_lock);
		return -EBUSY;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		err = -errno;
	} else if (realpath(dir, sd_root) == NULL) {
		err = -errno;
	} else if (stat(sd_root, &st) != 0) {
		err = -errno;
	} else if (!S_ISDIR(st.st_mode)) {
		err = -ENOTDIR;
	}
	sd_mounted = err == 0;
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int posix_sd_unmount(void)
{
	pthread_mutex_lock(&sd_lock);
	if (!sd_mounted) {
		pthread_mutex_unlock(&sd_lock);
		return -EINVAL;
	}
	for (size_t i = 0; i < POSIX_FS_FILE_SLOTS; i++) {
		if (sd_files[i].used) {
			pthread_mutex_unlock(&sd_lock);
			return -EBUSY;
		}
	}
	for (size_t i = 0; i < POSIX_FS_DIR_SLOTS; i++) {
		if (sd_dirs[i].used) {
			pthread_mutex_unlock(&sd_lock);
			return -EBUSY;
		}
	}
	sd_mounted = false;
	pthread_mutex_unlock(&sd_lock);
	return 0;
}

int posix_sd_power_cut(void)
{
	pthread_mutex_lock(&sd_lock);
	if (!sd_mounted) {
		pthread_mutex_unlock(&sd_lock);
		return -EINVAL;
	}
	/* What a sync never recorded is lost, as in a directory entry never written. */
	for (size_t i = 0; i < POSIX_FS_FILE_SLOTS; i++) {
		if (sd_files[i].used) {
			(void)ftruncate(sd_files[i].fd, sd_files[i].synced_bytes);
			close(sd_files[i].fd);
			sd_files[i].used = false;
		}
	}
	for (size_t i = 0; i < POSIX_FS_DIR_SLOTS; i++) {
		if (sd_dirs[i].used) {
			closedir(sd_dirs[i].dir);
			sd_dirs[i].used = false;
		}
	}
	sd_mounted = false;
	pthread_mutex_unlock(&sd_lock);
	return 0;
}

/* ---- paths -------------------------------------------------------------------------------- */

bool posix_sd_owns_path(const char *path)
{
	bool mounted;

	if (path == NULL || strncmp(path, POSIX_SD_MOUNT_POINT, SD_MOUNT_LEN) != 0 ||
	    (path[SD_MOUNT_LEN] != '\0' && path[SD_MOUNT_LEN] != '/')) {
		return false;
	}
	pthread_mutex_lock(&sd_lock);
	mounted = sd_mounted;
	pthread_mutex_unlock(&sd_lock);
	return mounted;
}

static bool sd_name_is_valid(const char *name, size_t len)
{
	if ((len == 1u && name[0] == '.') || (len == 2u && name[0] == '.' && name[1] == '.')) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c < 0x20u || strchr("\"*:<>?\\|", c) != NULL) {
			return false;
		}
	}
	return len <= AGENT_FS_NAME_MAX;
}

/* The entry of @p dir whose name equals @p name but for ASCII case; false when none. */
static bool sd_find_case(const char *dir, const char *name, size_t len, char *found)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	bool ok = false;

	if (d == NULL) {
		return false;
	}
	while ((ent = readdir(d)) != NULL) {
		if (strlen(ent->d_name) == len && strncasecmp(ent->d_name, name, len) == 0) {
			memcpy(found, ent->d_name, len + 1u);
			ok = true;
			break;
		}
	}
	closedir(d);
	return ok;
}

/*
 * Map "/SD:/a/b" to the host path under the folder, each component matched without regard
 * to case (a component that does not exist keeps its spelling). Lock held.
 */
static int sd_host_path(const char *path, char *out)
{
	const char *p = path + SD_MOUNT_LEN;
	size_t n = strlen(sd_root);
	char found[AGENT_FS_NAME_MAX + 1];

	memcpy(out, sd_root, n + 1u);
	while (*p != '\0') {
		const char *comp;
		size_t len;
		struct stat st;

		while (*p == '/') {
			p++;
		}
		if (*p == '\0') {
			break;
		}
		comp = p;
		while (*p != '\0' && *p != '/') {
			p++;
		}
		len = (size_t)(p - comp);
		if (!sd_name_is_valid(comp, len)) {
			return -ENOENT;
		}
		if (n + 1u + len + 1u > PATH_MAX) {
			return -ENAMETOOLONG;
		}
		out[n] = '/';
		memcpy(out + n + 1u, comp, len);
		out[n + 1u + len] = '\0';
		if (lstat(out, &st) != 0) {
			out[n] = '\0';
			if (sd_find_case(out, comp, len, found)) {
				memcpy(out + n + 1u, found, len);
			}
			out[n] = '/';
		}
		n += 1u + len;
	}
	return 0;
}

bool posix_sd_is_flash_image(const char *path)
{
	char host[PATH_MAX];
	bool image;

	if (!posix_sd_owns_path(path)) {
		return false;
	}
	pthread_mutex_lock(&sd_lock);
	image = sd_host_path(path, host) == 0 && sd_host_is_image(host);
	pthread_mutex_unlock(&sd_lock);
	return image;
}

/* ---- handles ------------------------------------------------------------------------------ */

bool posix_sd_owns_file(const struct agent_file *file)
{
	uintptr_t addr = (uintptr_t)(const void *)file;

	return addr >= (uintptr_t)&sd_files[0] && addr < (uintptr_t)&sd_files[POSIX_FS_FILE_SLOTS];
}

bool posix_sd_owns_dir(const struct agent_dir *dir)
{
	uintptr_t addr = (uintptr_t)(const void *)dir;

	return addr >= (uintptr_t)&sd_dirs[0] && addr < (uintptr_t)&sd_dirs[POSIX_FS_DIR_SLOTS];
}

/* The table entry behind @p file when it is a handle in use, else NULL. Lock held. */
static struct sd_file *sd_file_of(struct agent_file *file, unsigned int need_flag)
{
	uintptr_t addr = (uintptr_t)(void *)file;
	uintptr_t first = (uintptr_t)&sd_files[0];
	struct sd_file *f;

	if (!posix_sd_owns_file(file) || (addr - first) % sizeof(sd_files[0]) != 0u) {
		return NULL;
	}
	f = &sd_files[(addr - first) / sizeof(sd_files[0])];
	return f->used && (f->flags & need_flag) == need_flag ? f : NULL;
}

static struct sd_dir *sd_dir_of(struct agent_dir *dir)
{
	uintptr_t addr = (uintptr_t)(void *)dir;
	uintptr_t first = (uintptr_t)&sd_dirs[0];
	struct sd_dir *d;

	if (!posix_sd_owns_dir(dir) || (addr - first) % sizeof(sd_dirs[0]) != 0u) {
		return NULL;
	}
	d = &sd_dirs[(addr - first) / sizeof(sd_dirs[0])];
	return d->used ? d : NULL;
}

/* ---- files -------------------------------------------------------------------------------- */

static int sd_open_flags(unsigned int flags)
{
	const unsigned int known = AGENT_FS_O_RDWR | AGENT_FS_O_CREATE | AGENT_FS_O_APPEND |
				   AGENT_FS_O_TRUNC;
	int oflags;

	if ((flags & ~known) != 0u || (flags & AGENT_FS_O_RDWR) == 0u) {
		return -EINVAL;
	}
	if ((flags & (AGENT_FS_O_APPEND | AGENT_FS_O_TRUNC)) != 0u &&
	    (flags & AGENT_FS_O_WRITE) == 0u) {
		return -EINVAL;
	}
	switch (flags & AGENT_FS_O_RDWR) {
	case AGENT_FS_O_READ:
		oflags = O_RDONLY;
		break;
	case AGENT_FS_O_WRITE:
		oflags = O_WRONLY;
		break;
	default:
		oflags = O_RDWR;
		break;
	}
	if ((flags & AGENT_FS_O_CREATE) != 0u) {
		oflags |= O_CREAT;
	}
	if ((flags & AGENT_FS_O_APPEND) != 0u) {
		oflags |= O_APPEND;
	}
	if ((flags & AGENT_FS_O_TRUNC) != 0u) {
		oflags |= O_TRUNC;
	}
	return oflags | O_CLOEXEC;
}

int posix_sd_open(struct agent_file **out, const char *path, unsigned int flags)
{
	char host[PATH_MAX];
	struct sd_file *f = NULL;
	struct stat st;
	int oflags = sd_open_flags(flags);
	int err;

	if (out == NULL) {
		return -EINVAL;
	}
	if (oflags < 0) {
		return oflags;
	}
	pthread_mutex_lock(&sd_lock);
	err = sd_host_path(path, host);
	for (size_t i = 0; err == 0 && i < POSIX_FS_FILE_SLOTS; i++) {
		if (!sd_files[i].used) {
			f = &sd_files[i];
			break;
		}
	}
	if (err == 0 && f == NULL) {
		err = -ENFILE;
	}
	if (err == 0) {
		/* Truncated only once it is known not to be the flash image. */
		int fd = open(host, oflags & ~O_TRUNC, 0644);

		if (fd < 0) {
			err = -errno;
		} else if (fstat(fd, &st) != 0) {
			err = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			err = -EISDIR;
		} else if (sd_is_image(&st)) {
			err = -EACCES;
		} else if ((oflags & O_TRUNC) != 0) {
			err = ftruncate(fd, 0) == 0 ? 0 : -errno;
			st.st_size = 0;
		}
		if (fd >= 0 && err != 0) {
			close(fd);
		} else if (err == 0) {
			*f = (struct sd_file){
				.used = true,
				.fd = fd,
				.flags = flags,
				.synced_bytes = st.st_size,
			};
			*out = (struct agent_file *)(void *)f;
		}
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int posix_sd_read(struct agent_file *file, void *buf, size_t len)
{
	struct sd_file *f;
	ssize_t n;

	pthread_mutex_lock(&sd_lock);
	f = sd_file_of(file, AGENT_FS_O_READ);
	if (f == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	n = read(f->fd, buf, len > INT32_MAX ? INT32_MAX : len);
	pthread_mutex_unlock(&sd_lock);
	return n < 0 ? -errno : (int)n;
}

int posix_sd_write(struct agent_file *file, const void *buf, size_t len)
{
	struct sd_file *f;
	ssize_t n;

	pthread_mutex_lock(&sd_lock);
	f = sd_file_of(file, AGENT_FS_O_WRITE);
	if (f == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	n = write(f->fd, buf, len > INT32_MAX ? INT32_MAX : len);
	pthread_mutex_unlock(&sd_lock);
	return n < 0 ? -errno : (int)n;
}

int posix_sd_seek(struct agent_file *file, int32_t offset, int whence)
{
	struct sd_file *f;
	struct stat st;
	off_t base = 0;
	int err = 0;

	pthread_mutex_lock(&sd_lock);
	f = sd_file_of(file, 0);
	if (f == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	if (fstat(f->fd, &st) != 0) {
		err = -errno;
	} else if (whence == AGENT_FS_SEEK_SET) {
		base = 0;
	} else if (whence == AGENT_FS_SEEK_CUR) {
		base = lseek(f->fd, 0, SEEK_CUR);
	} else if (whence == AGENT_FS_SEEK_END) {
		base = st.st_size;
	} else {
		err = -EINVAL;
	}
	/* fatfs_seek() refuses a position before the start or past the end. */
	if (err == 0 && (base + offset < 0 || base + offset > st.st_size)) {
		err = -EINVAL;
	}
	if (err == 0 && lseek(f->fd, base + offset, SEEK_SET) < 0) {
		err = -errno;
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int32_t posix_sd_tell(struct agent_file *file)
{
	struct sd_file *f;
	off_t pos;

	pthread_mutex_lock(&sd_lock);
	f = sd_file_of(file, 0);
	if (f == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	pos = lseek(f->fd, 0, SEEK_CUR);
	pthread_mutex_unlock(&sd_lock);
	return pos < 0 ? -errno : (int32_t)pos;
}

int posix_sd_truncate(struct agent_file *file, uint32_t length)
{
	struct sd_file *f;
	int err = 0;

	pthread_mutex_lock(&sd_lock);
	f = sd_file_of(file, AGENT_FS_O_WRITE);
	if (f == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	if (ftruncate(f->fd, (off_t)length) != 0) {
		err = -errno;
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

/* Record the current size as the directory entry's. Lock held. */
static int sd_sync_locked(struct sd_file *f)
{
	struct stat st;

	if (fsync(f->fd) != 0 || fstat(f->fd, &st) != 0) {
		return -errno;
	}
	f->synced_bytes = st.st_size;
	return 0;
}

int posix_sd_sync(struct agent_file *file)
{
	struct sd_file *f;
	int err;

	pthread_mutex_lock(&sd_lock);
	f = sd_file_of(file, 0);
	if (f == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	err = sd_sync_locked(f);
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int posix_sd_close(struct agent_file *file, int fault)
{
	struct sd_file *f;
	int err = 0;

	pthread_mutex_lock(&sd_lock);
	f = sd_file_of(file, 0);
	if (f == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	if (fault != 0) {
		/* The entry keeps its last recorded size: later writes are lost. */
		(void)ftruncate(f->fd, f->synced_bytes);
		err = fault;
	} else if ((f->flags & AGENT_FS_O_WRITE) != 0u) {
		err = sd_sync_locked(f);
	}
	if (close(f->fd) != 0 && err == 0) {
		err = -errno;
	}
	f->used = false;
	pthread_mutex_unlock(&sd_lock);
	return err;
}

/* ---- names -------------------------------------------------------------------------------- */

int posix_sd_unlink(const char *path)
{
	char host[PATH_MAX];
	struct stat st;
	int err;

	pthread_mutex_lock(&sd_lock);
	err = sd_host_path(path, host);
	if (err == 0 && strcmp(host, sd_root) == 0) {
		err = -EBUSY;
	}
	if (err == 0 && lstat(host, &st) != 0) {
		err = -errno;
	}
	if (err == 0 && sd_host_is_image(host)) {
		err = -EACCES;
	}
	if (err == 0 && (S_ISDIR(st.st_mode) ? rmdir(host) : unlink(host)) != 0) {
		err = -errno;
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int posix_sd_rename(const char *from, const char *to)
{
	char host_from[PATH_MAX];
	char host_to[PATH_MAX];
	struct stat st;
	int err;

	if (!posix_sd_owns_path(from) || !posix_sd_owns_path(to)) {
		return -EINVAL;
	}
	pthread_mutex_lock(&sd_lock);
	err = sd_host_path(from, host_from);
	if (err == 0) {
		err = sd_host_path(to, host_to);
	}
	if (err == 0 && lstat(host_from, &st) != 0) {
		err = -errno;
	}
	if (err == 0 && sd_host_is_image(host_from)) {
		err = -EACCES;
	}
	/* A target found without regard to case is the same name on FAT. */
	if (err == 0 && lstat(host_to, &st) == 0 && strcmp(host_from, host_to) != 0) {
		err = -EEXIST;
	}
	if (err == 0 && rename(host_from, host_to) != 0) {
		err = -errno;
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int posix_sd_mkdir(const char *path)
{
	char host[PATH_MAX];
	int err;

	pthread_mutex_lock(&sd_lock);
	err = sd_host_path(path, host);
	if (err == 0 && mkdir(host, 0755) != 0) {
		err = -errno;
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

static void sd_fill_dirent(const char *name, const struct stat *st, struct agent_dirent *entry)
{
	size_t len = strnlen(name, AGENT_FS_NAME_MAX);

	entry->type = S_ISDIR(st->st_mode) ? AGENT_FS_DIR : AGENT_FS_FILE;
	entry->size = S_ISDIR(st->st_mode) || st->st_size > UINT32_MAX ? 0u : (uint32_t)st->st_size;
	memcpy(entry->name, name, len);
	entry->name[len] = '\0';
}

int posix_sd_stat(const char *path, struct agent_dirent *entry)
{
	char host[PATH_MAX];
	struct stat st;
	int err;

	if (entry == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&sd_lock);
	err = sd_host_path(path, host);
	if (err == 0 && lstat(host, &st) != 0) {
		err = -errno;
	}
	if (err == 0) {
		const char *slash = strrchr(host, '/');

		sd_fill_dirent(strcmp(host, sd_root) == 0 ? "" : slash + 1, &st, entry);
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int posix_sd_statvfs(const char *path, struct agent_statvfs *stat)
{
	char host[PATH_MAX];
	struct statvfs vfs;
	int err;

	if (stat == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&sd_lock);
	err = sd_host_path(path, host);
	if (err == 0 && statvfs(host, &vfs) != 0) {
		err = -errno;
	}
	if (err == 0) {
		stat->block_bytes = vfs.f_frsize > UINT32_MAX ? UINT32_MAX : (uint32_t)vfs.f_frsize;
		stat->blocks = vfs.f_blocks > UINT32_MAX ? UINT32_MAX : (uint32_t)vfs.f_blocks;
		stat->blocks_free = vfs.f_bavail > UINT32_MAX ? UINT32_MAX : (uint32_t)vfs.f_bavail;
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

/* ---- directories -------------------------------------------------------------------------- */

int posix_sd_opendir(struct agent_dir **out, const char *path)
{
	struct sd_dir *d = NULL;
	int err;

	if (out == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&sd_lock);
	for (size_t i = 0; i < POSIX_FS_DIR_SLOTS; i++) {
		if (!sd_dirs[i].used) {
			d = &sd_dirs[i];
			break;
		}
	}
	err = d == NULL ? -ENFILE : sd_host_path(path, d->path);
	if (err == 0) {
		d->dir = opendir(d->path);
		if (d->dir == NULL) {
			err = -errno;
		} else {
			d->used = true;
			*out = (struct agent_dir *)(void *)d;
		}
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int posix_sd_readdir(struct agent_dir *dir, struct agent_dirent *entry)
{
	char host[PATH_MAX];
	struct sd_dir *d;
	struct dirent *ent;
	struct stat st;
	int err = 0;

	if (entry == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&sd_lock);
	d = sd_dir_of(dir);
	if (d == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	memset(entry, 0, sizeof(*entry));
	for (;;) {
		errno = 0;
		ent = readdir(d->dir);
		if (ent == NULL) {
			err = errno != 0 ? -errno : 0;
			break;
		}
		if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) {
			continue;
		}
		if (snprintf(host, sizeof(host), "%s/%s", d->path, ent->d_name) >=
			    (int)sizeof(host) ||
		    lstat(host, &st) != 0) {
			continue; /* vanished or unreachable: not an entry of this listing */
		}
		sd_fill_dirent(ent->d_name, &st, entry);
		break;
	}
	pthread_mutex_unlock(&sd_lock);
	return err;
}

int posix_sd_closedir(struct agent_dir *dir)
{
	struct sd_dir *d;
	int err = 0;

	pthread_mutex_lock(&sd_lock);
	d = sd_dir_of(dir);
	if (d == NULL) {
		pthread_mutex_unlock(&sd_lock);
		return -EBADF;
	}
	if (closedir(d->dir) != 0) {
		err = -errno;
	}
	d->used = false;
	pthread_mutex_unlock(&sd_lock);
	return err;
}
