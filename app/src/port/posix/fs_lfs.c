/*
 * Filesystem of the POSIX port: the real littlefs over an image file, mounted at "/lfs" with
 * the geometry of the firmware's fstab, so that what the simulator writes is what a device
 * would hold (and littlefs-python can read the image).
 *
 * littlefs is not thread-safe; one lock serialises every call into it. All buffers are
 * static (the library is built with LFS_NO_MALLOC).
 *
 * Errors: littlefs codes are negative errno values already and are returned unchanged.
 * A path outside "/lfs", or any path while nothing is mounted, is -ENOENT, as Zephyr's VFS
 * reports a path without a mount point. A full file or directory table is -ENFILE. Reading
 * from a file opened without AGENT_FS_O_READ, or writing or truncating one opened without
 * AGENT_FS_O_WRITE, is -EBADF (littlefs would assert instead).
 *
 * Tests can make chosen agent_fs_* calls fail and cut the power (posix_port.h, "Test
 * support"); disarmed, the hook only counts calls.
 *
 * Paths under "/SD:" and handles of the simulator's SD card go to fs_sd.c once the call has
 * been counted, so injected faults reach the card too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* flock */
#endif

#include "agent_port.h"
#include "posix_fs_internal.h"
#include "posix_lfs_log.h"
#include "posix_port.h"
#include "posix_sd.h"

#include <errno.h>
#include <fcntl.h>
#include <lfs.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Geometry of the firmware's fstab entry (read, prog, cache, lookahead, block cycles). */
#define FS_READ_BYTES      16u
#define FS_PROG_BYTES      16u
#define FS_CACHE_BYTES     64u
#define FS_LOOKAHEAD_BYTES 32u
#define FS_BLOCK_CYCLES    512

/* Longest path handed to littlefs, after "/lfs" is removed, terminator included. */
#define FS_PATH_BYTES 512u

#define FS_FILE_SLOTS (POSIX_FS_FILE_SLOTS + POSIX_FS_RESERVED_FILE_SLOTS)

_Static_assert(LFS_ERR_IO == -EIO && LFS_ERR_CORRUPT == -EILSEQ && LFS_ERR_NOENT == -ENOENT &&
		       LFS_ERR_EXIST == -EEXIST && LFS_ERR_NOTDIR == -ENOTDIR &&
		       LFS_ERR_ISDIR == -EISDIR && LFS_ERR_NOTEMPTY == -ENOTEMPTY &&
		       LFS_ERR_BADF == -EBADF && LFS_ERR_FBIG == -EFBIG &&
		       LFS_ERR_INVAL == -EINVAL && LFS_ERR_NOSPC == -ENOSPC &&
		       LFS_ERR_NOMEM == -ENOMEM && LFS_ERR_NAMETOOLONG == -ENAMETOOLONG,
	       "littlefs error codes are returned as errno values; this host's differ");
_Static_assert(AGENT_FS_NAME_MAX == LFS_NAME_MAX, "agent_dirent.name must hold a littlefs name");
_Static_assert(AGENT_FS_O_READ == LFS_O_RDONLY && AGENT_FS_O_WRITE == LFS_O_WRONLY,
	       "the access bits are passed to littlefs as they are");

struct agent_file {
	bool used;
	unsigned int flags;
	lfs_file_t file;
	struct lfs_file_config cfg;
	uint8_t cache[FS_CACHE_BYTES] __attribute__((aligned(8)));
};

struct agent_dir {
	bool used;
	lfs_dir_t dir;
};

static pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER;
static bool fs_mounted;
static bool fs_log_quiet;
static int fs_fd = -1;
static lfs_t fs_lfs;
static struct lfs_config fs_cfg;
static uint8_t fs_read_cache[FS_CACHE_BYTES] __attribute__((aligned(8)));
static uint8_t fs_prog_cache[FS_CACHE_BYTES] __attribute__((aligned(8)));
static uint8_t fs_lookahead[FS_LOOKAHEAD_BYTES] __attribute__((aligned(8)));
static uint8_t fs_erased[POSIX_FLASH_BLOCK_BYTES];
static struct agent_file fs_files[FS_FILE_SLOTS];
static struct agent_dir fs_dirs[POSIX_FS_DIR_SLOTS];

/*
 * Fault injection for the crash-safety tests (posix_port.h): calls to agent_fs_* numbered
 * from 0 since the last arming; those in [fs_fault_first, fs_fault_last] fail with
 * fs_fault_err without reaching littlefs. Guarded by fs_lock.
 */
static long fs_fault_calls;
static long fs_fault_first = -1; /* -1: disarmed */
static long fs_fault_last = -1;
static int fs_fault_err = -EIO;
static bool fs_rename_replaces = true; /* false: rename refuses an existing target (tests) */

void posix_lfs_log(const char *level, const char *file, int line, const char *fmt, ...)
{
	va_list args;

	/* Only called from inside littlefs, so fs_lock is held and fs_log_quiet is stable. */
	if (fs_log_quiet) {
		return;
	}
	fprintf(stderr, "lfs: %s:%d: %s: ", file, line, level);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
}

/* ---- Block device over the image file ----------------------------------------------------- */

static int fs_bd_read(const struct lfs_config *cfg, lfs_block_t block, lfs_off_t off,
		      void *buffer, lfs_size_t size)
{
	uint8_t *dst = buffer;
	off_t pos = (off_t)block * cfg->block_size + off;

	while (size > 0u) {
		ssize_t n = pread(fs_fd, dst, size, pos);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		/* 0 means the image is shorter than its geometry: as bad as a read error. */
		if (n <= 0) {
			return LFS_ERR_IO;
		}
		dst += n;
		pos += n;
		size -= (lfs_size_t)n;
	}
	return 0;
}

static int fs_write_all(int fd, const void *buffer, size_t size, off_t pos)
{
	const uint8_t *src = buffer;

	while (size > 0u) {
		ssize_t n = pwrite(fd, src, size, pos);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -errno;
		}
		src += n;
		pos += n;
		size -= (size_t)n;
	}
	return 0;
}

static int fs_bd_prog(const struct lfs_config *cfg, lfs_block_t block, lfs_off_t off,
		      const void *buffer, lfs_size_t size)
{
	off_t pos = (off_t)block * cfg->block_size + off;

	return fs_write_all(fs_fd, buffer, size, pos) == 0 ? 0 : LFS_ERR_IO;
}

/* Erased NOR flash reads 0xff; the image shows the same so that it looks like a dump. */
static int fs_bd_erase(const struct lfs_config *cfg, lfs_block_t block)
{
	off_t pos = (off_t)block * cfg->block_size;

	return fs_write_all(fs_fd, fs_erased, cfg->block_size, pos) == 0 ? 0 : LFS_ERR_IO;
}

/* littlefs syncs after each commit; passing it on is what makes a returned write durable. */
static int fs_bd_sync(const struct lfs_config *cfg)
{
	(void)cfg;
	return fdatasync(fs_fd) == 0 ? 0 : LFS_ERR_IO;
}

/* ---- Mounting ----------------------------------------------------------------------------- */

static int fs_fill_erased(int fd, uint32_t image_bytes)
{
	for (uint32_t pos = 0; pos < image_bytes; pos += POSIX_FLASH_BLOCK_BYTES) {
		int err = fs_write_all(fd, fs_erased, POSIX_FLASH_BLOCK_BYTES, (off_t)pos);

		if (err != 0) {
			return err;
		}
	}
	return fsync(fd) == 0 ? 0 : -errno;
}

static bool fs_size_is_valid(uint64_t bytes)
{
	return bytes >= POSIX_FLASH_MIN_BYTES && bytes <= UINT32_MAX &&
	       bytes % POSIX_FLASH_BLOCK_BYTES == 0u;
}

/* Opens or creates the image; on success *size_out is the size to mount. */
static int fs_image_open(const char *image_path, uint32_t image_bytes, bool erase_first,
			 uint32_t *size_out)
{
	struct stat st;
	bool created = true;
	int fd;
	int err;

	fd = open(image_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST) {
		created = false;
		fd = open(image_path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0) {
		return -errno;
	}
	/* Two simulators writing one image would corrupt it without either noticing. */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		goto fail;
	}
	if (created) {
		*size_out = image_bytes;
		err = fs_fill_erased(fd, image_bytes);
		if (err != 0) {
			goto fail;
		}
		return fd;
	}
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto fail;
	}
	if (!fs_size_is_valid((uint64_t)st.st_size)) {
		err = -EINVAL;
		goto fail;
	}
	*size_out = (uint32_t)st.st_size;
	if (erase_first) {
		err = fs_fill_erased(fd, *size_out);
		if (err != 0) {
			goto fail;
		}
	}
	return fd;

fail:
	close(fd);
	if (created) {
		unlink(image_path);
	}
	return err;
}

/* The fstab's geometry and the static buffers; the caller sets the device callbacks. */
static void fs_cfg_geometry(uint32_t block_count)
{
	memset(&fs_cfg, 0, sizeof(fs_cfg));
	fs_cfg.read_size = FS_READ_BYTES;
	fs_cfg.prog_size = FS_PROG_BYTES;
	fs_cfg.block_size = POSIX_FLASH_BLOCK_BYTES;
	fs_cfg.block_count = block_count;
	fs_cfg.block_cycles = FS_BLOCK_CYCLES;
	fs_cfg.cache_size = FS_CACHE_BYTES;
	fs_cfg.lookahead_size = FS_LOOKAHEAD_BYTES;
	fs_cfg.read_buffer = fs_read_cache;
	fs_cfg.prog_buffer = fs_prog_cache;
	fs_cfg.lookahead_buffer = fs_lookahead;
}

int posix_flash_mount(const char *image_path, uint32_t image_bytes, bool erase_first)
{
	uint32_t size = 0;
	int fd;
	int err;

	if (image_path == NULL) {
		return -EINVAL;
	}
	if (image_bytes == 0u) {
		image_bytes = POSIX_FLASH_DEFAULT_BYTES;
	}
	if (!fs_size_is_valid(image_bytes)) {
		return -EINVAL;
	}

	pthread_mutex_lock(&fs_lock);
	if (fs_mounted) {
		pthread_mutex_unlock(&fs_lock);
		return -EBUSY;
	}
	memset(fs_erased, 0xff, sizeof(fs_erased));
	fd = fs_image_open(image_path, image_bytes, erase_first, &size);
	if (fd < 0) {
		pthread_mutex_unlock(&fs_lock);
		return fd;
	}
	fs_fd = fd;

	fs_cfg_geometry(size / POSIX_FLASH_BLOCK_BYTES);
	fs_cfg.read = fs_bd_read;
	fs_cfg.prog = fs_bd_prog;
	fs_cfg.erase = fs_bd_erase;
	fs_cfg.sync = fs_bd_sync;

	/* A blank or foreign image fails this probe by design; its complaints are noise. */
	fs_log_quiet = true;
	err = lfs_mount(&fs_lfs, &fs_cfg);
	fs_log_quiet = false;
	if (err != 0) {
		fprintf(stderr, "lfs: formatting %s\n", image_path);
		err = lfs_format(&fs_lfs, &fs_cfg);
		if (err == 0) {
			err = lfs_mount(&fs_lfs, &fs_cfg);
		}
	}
	if (err != 0) {
		close(fs_fd);
		fs_fd = -1;
		pthread_mutex_unlock(&fs_lock);
		return err;
	}
	fs_mounted = true;
	pthread_mutex_unlock(&fs_lock);
	{
		struct stat st = {0};
		bool known = fstat(fd, &st) == 0;

		/* The SD folder never serves this file (fs_sd.c): it is the agent's state. */
		posix_sd_set_flash_image(known, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	}
	return 0;
}

int posix_flash_mount_bd(const struct lfs_config *bd)
{
	int err;

	if (bd == NULL || bd->read == NULL || bd->prog == NULL || bd->erase == NULL ||
	    bd->sync == NULL || bd->block_count < POSIX_FLASH_MIN_BYTES / POSIX_FLASH_BLOCK_BYTES) {
		return -EINVAL;
	}
	pthread_mutex_lock(&fs_lock);
	if (fs_mounted) {
		pthread_mutex_unlock(&fs_lock);
		return -EBUSY;
	}
	fs_cfg_geometry(bd->block_count);
	fs_cfg.context = bd->context;
	fs_cfg.read = bd->read;
	fs_cfg.prog = bd->prog;
	fs_cfg.erase = bd->erase;
	fs_cfg.sync = bd->sync;
	fs_fd = -1;
	err = lfs_mount(&fs_lfs, &fs_cfg);
	fs_mounted = err == 0;
	pthread_mutex_unlock(&fs_lock);
	return err;
}

int posix_flash_unmount(void)
{
	int err;

	pthread_mutex_lock(&fs_lock);
	if (!fs_mounted) {
		pthread_mutex_unlock(&fs_lock);
		return -EINVAL;
	}
	/* Closing files behind their owners' backs would turn a leak into a use after close. */
	for (size_t i = 0; i < FS_FILE_SLOTS; i++) {
		if (fs_files[i].used) {
			pthread_mutex_unlock(&fs_lock);
			return -EBUSY;
		}
	}
	for (size_t i = 0; i < POSIX_FS_DIR_SLOTS; i++) {
		if (fs_dirs[i].used) {
			pthread_mutex_unlock(&fs_lock);
			return -EBUSY;
		}
	}
	err = lfs_unmount(&fs_lfs);
	fs_mounted = false;
	/* Closing drops the flock, so another process may take the image from here on. */
	if (fs_fd >= 0) {
		close(fs_fd);
	}
	fs_fd = -1;
	pthread_mutex_unlock(&fs_lock);
	posix_sd_set_flash_image(false, 0, 0);
	return err;
}

bool posix_fs_is_mounted(void)
{
	bool mounted;

	pthread_mutex_lock(&fs_lock);
	mounted = fs_mounted;
	pthread_mutex_unlock(&fs_lock);
	return mounted;
}

/* Not a fault-injection point: it touches no file, so the tests' call counts stay as they were. */
bool agent_fs_mounted(const char *mount_point)
{
	if (mount_point == NULL) {
		return false;
	}
	if (strcmp(mount_point, POSIX_SD_MOUNT_POINT) == 0) {
		return posix_sd_owns_path(mount_point);
	}
	return strcmp(mount_point, "/lfs") == 0 && posix_fs_is_mounted();
}

void posix_fs_forget_cached(void)
{
	pthread_mutex_lock(&fs_lock);
	if (fs_mounted) {
		/* Dropped the way littlefs drops its own caches: LFS_BLOCK_NULL, in lfs.c. */
		fs_lfs.rcache.block = (lfs_block_t)-1;
		agent_wipe(fs_read_cache, sizeof(fs_read_cache));
		if (fs_lfs.pcache.block == (lfs_block_t)-1) {
			/* Nothing waits to be programmed; littlefs expects an idle cache erased. */
			agent_wipe(fs_prog_cache, sizeof(fs_prog_cache));
			memset(fs_prog_cache, 0xff, sizeof(fs_prog_cache));
		}
	}
	for (size_t i = 0; i < FS_FILE_SLOTS; i++) {
		if (!fs_files[i].used) {
			agent_wipe(fs_files[i].cache, sizeof(fs_files[i].cache));
		}
	}
	pthread_mutex_unlock(&fs_lock);
}

/* ---- Fault injection (tests) -------------------------------------------------------------- */

static void fs_fault_arm(long first, long last, int err)
{
	pthread_mutex_lock(&fs_lock);
	fs_fault_calls = 0;
	fs_fault_first = first;
	fs_fault_last = last;
	fs_fault_err = err;
	pthread_mutex_unlock(&fs_lock);
}

void posix_fs_fail_after(int ops)
{
	fs_fault_arm(ops < 0 ? -1 : ops, ops < 0 ? -1 : LONG_MAX, -EIO);
}

void posix_fs_fail_range(int first, int count, int err)
{
	bool armed = first >= 0 && count > 0 && err < 0;

	fs_fault_arm(armed ? first : -1, armed ? (long)first + count - 1 : -1, err);
}

void posix_fs_rename_replaces(bool replaces)
{
	pthread_mutex_lock(&fs_lock);
	fs_rename_replaces = replaces;
	pthread_mutex_unlock(&fs_lock);
}

long posix_fs_calls(void)
{
	long n;

	pthread_mutex_lock(&fs_lock);
	n = fs_fault_calls;
	pthread_mutex_unlock(&fs_lock);
	return n;
}

/* Count one agent_fs_* call; the injected error when it is to fail, else 0. */
static int fs_fault(void)
{
	int err = 0;

	pthread_mutex_lock(&fs_lock);
	long n = fs_fault_calls++;

	if (fs_fault_first >= 0 && n >= fs_fault_first && n <= fs_fault_last) {
		err = fs_fault_err;
	}
	pthread_mutex_unlock(&fs_lock);
	return err;
}

/* Used first in every agent_fs_* call but the closes, which must release their handle. */
#define FS_FAULT_RETURN()                                                                         \
	do {                                                                                      \
		int fault_ = fs_fault();                                                          \
                                                                                                  \
		if (fault_ != 0) {                                                                \
			return fault_;                                                            \
		}                                                                                 \
	} while (0)

int posix_flash_power_cut(void)
{
	pthread_mutex_lock(&fs_lock);
	if (!fs_mounted) {
		pthread_mutex_unlock(&fs_lock);
		return -EINVAL;
	}
	/* Handles are forgotten, not closed: nothing littlefs still caches reaches the image. */
	for (size_t i = 0; i < FS_FILE_SLOTS; i++) {
		fs_files[i].used = false;
	}
	for (size_t i = 0; i < POSIX_FS_DIR_SLOTS; i++) {
		fs_dirs[i].used = false;
	}
	memset(&fs_lfs, 0, sizeof(fs_lfs));
	fs_mounted = false;
	if (fs_fd >= 0) {
		close(fs_fd);
	}
	fs_fd = -1;
	pthread_mutex_unlock(&fs_lock);
	return 0;
}

/* ---- Paths and handles -------------------------------------------------------------------- */

/*
 * Turns "/lfs", "/lfs/" or "/lfs//a//b" into the littlefs path ("/", "/a/b"). Runs of
 * slashes are collapsed; "." and ".." are left to littlefs, which resolves them without
 * leaving its root.
 */
static int fs_path(const char *path, char *out)
{
	static const char mount_point[] = POSIX_FLASH_MOUNT_POINT;
	const size_t mount_len = sizeof(mount_point) - 1u;
	size_t n = 1;

	if (path == NULL) {
		return -EINVAL;
	}
	if (strncmp(path, mount_point, mount_len) != 0) {
		return -ENOENT;
	}
	path += mount_len;
	if (*path != '\0' && *path != '/') {
		return -ENOENT;
	}
	out[0] = '/';
	for (; *path != '\0'; path++) {
		if (*path == '/' && out[n - 1u] == '/') {
			continue;
		}
		if (n + 1u >= FS_PATH_BYTES) {
			return -ENAMETOOLONG;
		}
		out[n++] = *path;
	}
	out[n] = '\0';
	return 0;
}

/* A handle is only trusted when it points at a slot in use, so a stale one is -EBADF. */
static bool fs_file_is_valid(const struct agent_file *file)
{
	uintptr_t addr = (uintptr_t)file;
	uintptr_t first = (uintptr_t)&fs_files[0];

	return file != NULL && addr >= first && addr < (uintptr_t)&fs_files[FS_FILE_SLOTS] &&
	       (addr - first) % sizeof(fs_files[0]) == 0u && file->used;
}

static bool fs_dir_is_valid(const struct agent_dir *dir)
{
	uintptr_t addr = (uintptr_t)dir;
	uintptr_t first = (uintptr_t)&fs_dirs[0];

	return dir != NULL && addr >= first && addr < (uintptr_t)&fs_dirs[POSIX_FS_DIR_SLOTS] &&
	       (addr - first) % sizeof(fs_dirs[0]) == 0u && dir->used;
}

static int fs_lfs_flags(unsigned int flags)
{
	const unsigned int known = AGENT_FS_O_RDWR | AGENT_FS_O_CREATE | AGENT_FS_O_APPEND |
				   AGENT_FS_O_TRUNC;
	int lfs_flags;

	if ((flags & ~known) != 0u || (flags & AGENT_FS_O_RDWR) == 0u) {
		return -EINVAL;
	}
	/* littlefs would mark a read-only file dirty and write it back on close. */
	if ((flags & (AGENT_FS_O_APPEND | AGENT_FS_O_TRUNC)) != 0u &&
	    (flags & AGENT_FS_O_WRITE) == 0u) {
		return -EINVAL;
	}
	lfs_flags = (int)(flags & AGENT_FS_O_RDWR);
	if ((flags & AGENT_FS_O_CREATE) != 0u) {
		lfs_flags |= LFS_O_CREAT;
	}
	if ((flags & AGENT_FS_O_APPEND) != 0u) {
		lfs_flags |= LFS_O_APPEND;
	}
	if ((flags & AGENT_FS_O_TRUNC) != 0u) {
		lfs_flags |= LFS_O_TRUNC;
	}
	return lfs_flags;
}

static int fs_open_in(struct agent_file **out, const char *path, unsigned int flags,
		      size_t first_slot, size_t end_slot)
{
	char lpath[FS_PATH_BYTES];
	struct agent_file *file = NULL;
	int lfs_flags;
	int err;

	if (out == NULL) {
		return -EINVAL;
	}
	lfs_flags = fs_lfs_flags(flags);
	if (lfs_flags < 0) {
		return lfs_flags;
	}
	err = fs_path(path, lpath);
	if (err != 0) {
		return err;
	}

	pthread_mutex_lock(&fs_lock);
	if (!fs_mounted) {
		pthread_mutex_unlock(&fs_lock);
		return -ENOENT;
	}
	for (size_t i = first_slot; i < end_slot; i++) {
		if (!fs_files[i].used) {
			file = &fs_files[i];
			break;
		}
	}
	if (file == NULL) {
		pthread_mutex_unlock(&fs_lock);
		return -ENFILE;
	}
	memset(file, 0, sizeof(*file));
	file->cfg.buffer = file->cache;
	err = lfs_file_opencfg(&fs_lfs, &file->file, lpath, lfs_flags, &file->cfg);
	if (err == 0) {
		file->used = true;
		file->flags = flags;
		*out = file;
	}
	pthread_mutex_unlock(&fs_lock);
	return err;
}

int agent_fs_open(struct agent_file **out, const char *path, unsigned int flags)
{
	FS_FAULT_RETURN();
	if (posix_sd_owns_path(path)) {
		return posix_sd_open(out, path, flags);
	}
	return fs_open_in(out, path, flags, 0, POSIX_FS_FILE_SLOTS);
}

int posix_fs_open_reserved(struct agent_file **out, const char *path, unsigned int flags)
{
	return fs_open_in(out, path, flags, POSIX_FS_FILE_SLOTS, FS_FILE_SLOTS);
}

/* ---- Files -------------------------------------------------------------------------------- */

/* Locks and validates @p file; on failure the lock is released and -EBADF returned. */
static int fs_file_enter(struct agent_file *file, unsigned int need_flag)
{
	pthread_mutex_lock(&fs_lock);
	if (!fs_file_is_valid(file) || (file->flags & need_flag) != need_flag) {
		pthread_mutex_unlock(&fs_lock);
		return -EBADF;
	}
	return 0;
}

/* littlefs counts in 32-bit signed sizes; a longer request is served in part, as read(2). */
static lfs_size_t fs_clamp_len(size_t len)
{
	return len > (size_t)INT32_MAX ? (lfs_size_t)INT32_MAX : (lfs_size_t)len;
}

int agent_fs_read(struct agent_file *file, void *buf, size_t len)
{
	int ret;

	FS_FAULT_RETURN();
	if (buf == NULL && len > 0u) {
		return -EINVAL;
	}
	if (posix_sd_owns_file(file)) {
		return posix_sd_read(file, buf, len);
	}
	ret = fs_file_enter(file, AGENT_FS_O_READ);
	if (ret != 0) {
		return ret;
	}
	ret = (int)lfs_file_read(&fs_lfs, &file->file, buf, fs_clamp_len(len));
	pthread_mutex_unlock(&fs_lock);
	return ret;
}

int agent_fs_write(struct agent_file *file, const void *buf, size_t len)
{
	int ret;

	FS_FAULT_RETURN();
	if (buf == NULL && len > 0u) {
		return -EINVAL;
	}
	if (posix_sd_owns_file(file)) {
		return posix_sd_write(file, buf, len);
	}
	ret = fs_file_enter(file, AGENT_FS_O_WRITE);
	if (ret != 0) {
		return ret;
	}
	ret = (int)lfs_file_write(&fs_lfs, &file->file, buf, fs_clamp_len(len));
	pthread_mutex_unlock(&fs_lock);
	return ret;
}

int agent_fs_seek(struct agent_file *file, int32_t offset, int whence)
{
	lfs_soff_t pos;

	FS_FAULT_RETURN();
	if (whence != AGENT_FS_SEEK_SET && whence != AGENT_FS_SEEK_CUR &&
	    whence != AGENT_FS_SEEK_END) {
		return -EINVAL;
	}
	if (posix_sd_owns_file(file)) {
		return posix_sd_seek(file, offset, whence);
	}
	if (fs_file_enter(file, 0) != 0) {
		return -EBADF;
	}
	/* The AGENT_FS_SEEK_* values are littlefs's LFS_SEEK_* values. */
	pos = lfs_file_seek(&fs_lfs, &file->file, offset, whence);
	pthread_mutex_unlock(&fs_lock);
	return pos < 0 ? (int)pos : 0;
}

int32_t agent_fs_tell(struct agent_file *file)
{
	lfs_soff_t pos;

	FS_FAULT_RETURN();
	if (posix_sd_owns_file(file)) {
		return posix_sd_tell(file);
	}
	if (fs_file_enter(file, 0) != 0) {
		return -EBADF;
	}
	pos = lfs_file_tell(&fs_lfs, &file->file);
	pthread_mutex_unlock(&fs_lock);
	return pos;
}

int agent_fs_truncate(struct agent_file *file, uint32_t length)
{
	int err;

	FS_FAULT_RETURN();
	if (posix_sd_owns_file(file)) {
		return posix_sd_truncate(file, length);
	}
	err = fs_file_enter(file, AGENT_FS_O_WRITE);
	if (err != 0) {
		return err;
	}
	err = lfs_file_truncate(&fs_lfs, &file->file, length);
	pthread_mutex_unlock(&fs_lock);
	return err;
}

int agent_fs_sync(struct agent_file *file)
{
	int err;

	FS_FAULT_RETURN();
	if (posix_sd_owns_file(file)) {
		return posix_sd_sync(file);
	}
	err = fs_file_enter(file, 0);
	if (err != 0) {
		return err;
	}
	err = lfs_file_sync(&fs_lfs, &file->file);
	pthread_mutex_unlock(&fs_lock);
	return err;
}

int agent_fs_close(struct agent_file *file)
{
	int fault = fs_fault();
	int err;

	if (posix_sd_owns_file(file)) {
		return posix_sd_close(file, fault);
	}
	err = fs_file_enter(file, 0);
	if (err != 0) {
		return err;
	}
	/*
	 * An injected failure is a close whose final flush failed: littlefs skips the flush of
	 * a file marked as erred, so nothing unsynced is committed, and the handle is released.
	 */
	if (fault != 0) {
		file->file.flags |= LFS_F_ERRED;
	}
	/* littlefs releases the file even when the final flush fails, so the slot is free. */
	err = lfs_file_close(&fs_lfs, &file->file);
	file->used = false;
	pthread_mutex_unlock(&fs_lock);
	return fault != 0 ? fault : err;
}

/* ---- Names -------------------------------------------------------------------------------- */

/* Locks when mounted; returns -ENOENT (lock released) otherwise, as an unknown mount would. */
static int fs_enter_mounted(void)
{
	pthread_mutex_lock(&fs_lock);
	if (!fs_mounted) {
		pthread_mutex_unlock(&fs_lock);
		return -ENOENT;
	}
	return 0;
}

int agent_fs_unlink(const char *path)
{
	char lpath[FS_PATH_BYTES];
	int err;

	FS_FAULT_RETURN();
	if (posix_sd_owns_path(path)) {
		return posix_sd_unlink(path);
	}
	err = fs_path(path, lpath);
	if (err != 0) {
		return err;
	}
	/* Removing the root would be refused by littlefs too, but with a less clear code. */
	if (strcmp(lpath, "/") == 0) {
		return -EBUSY;
	}
	err = fs_enter_mounted();
	if (err != 0) {
		return err;
	}
	err = lfs_remove(&fs_lfs, lpath);
	pthread_mutex_unlock(&fs_lock);
	return err;
}

int agent_fs_rename(const char *from, const char *to)
{
	char lfrom[FS_PATH_BYTES];
	char lto[FS_PATH_BYTES];
	struct lfs_info info;
	int err;

	FS_FAULT_RETURN();
	if (posix_sd_owns_path(from) || posix_sd_owns_path(to)) {
		return posix_sd_rename(from, to);
	}
	err = fs_path(from, lfrom);
	if (err == 0) {
		err = fs_path(to, lto);
	}
	if (err != 0) {
		return err;
	}
	err = fs_enter_mounted();
	if (err != 0) {
		return err;
	}
	/* Test hook: a rename that refuses an existing target, as FAT's does. */
	if (!fs_rename_replaces && lfs_stat(&fs_lfs, lto, &info) == 0) {
		pthread_mutex_unlock(&fs_lock);
		return -EEXIST;
	}
	/* littlefs replaces an existing target atomically, which settings.c relies on. */
	err = lfs_rename(&fs_lfs, lfrom, lto);
	pthread_mutex_unlock(&fs_lock);
	return err;
}

int agent_fs_mkdir(const char *path)
{
	char lpath[FS_PATH_BYTES];
	int err;

	FS_FAULT_RETURN();
	if (posix_sd_owns_path(path)) {
		return posix_sd_mkdir(path);
	}
	err = fs_path(path, lpath);
	if (err != 0) {
		return err;
	}
	err = fs_enter_mounted();
	if (err != 0) {
		return err;
	}
	err = lfs_mkdir(&fs_lfs, lpath);
	pthread_mutex_unlock(&fs_lock);
	return err;
}

static void fs_fill_dirent(const struct lfs_info *info, struct agent_dirent *entry)
{
	entry->type = info->type == LFS_TYPE_DIR ? AGENT_FS_DIR : AGENT_FS_FILE;
	entry->size = info->type == LFS_TYPE_DIR ? 0u : info->size;
	size_t len = strnlen(info->name, sizeof(entry->name) - 1u);

	memcpy(entry->name, info->name, len);
	entry->name[len] = '\0';
}

int agent_fs_stat(const char *path, struct agent_dirent *entry)
{
	char lpath[FS_PATH_BYTES];
	struct lfs_info info;
	int err;

	FS_FAULT_RETURN();
	if (entry == NULL) {
		return -EINVAL;
	}
	if (posix_sd_owns_path(path)) {
		return posix_sd_stat(path, entry);
	}
	err = fs_path(path, lpath);
	if (err != 0) {
		return err;
	}
	err = fs_enter_mounted();
	if (err != 0) {
		return err;
	}
	err = lfs_stat(&fs_lfs, lpath, &info);
	pthread_mutex_unlock(&fs_lock);
	if (err == 0) {
		fs_fill_dirent(&info, entry);
	}
	return err;
}

int agent_fs_statvfs(const char *path, struct agent_statvfs *stat)
{
	char lpath[FS_PATH_BYTES];
	lfs_ssize_t used;
	int err;

	FS_FAULT_RETURN();
	if (stat == NULL) {
		return -EINVAL;
	}
	if (posix_sd_owns_path(path)) {
		return posix_sd_statvfs(path, stat);
	}
	err = fs_path(path, lpath);
	if (err != 0) {
		return err;
	}
	err = fs_enter_mounted();
	if (err != 0) {
		return err;
	}
	/* An estimate: littlefs counts blocks in use, shared copy-on-write blocks included. */
	used = lfs_fs_size(&fs_lfs);
	if (used >= 0) {
		stat->block_bytes = fs_cfg.block_size;
		stat->blocks = fs_cfg.block_count;
		uint32_t used_blocks = (uint32_t)used;

		stat->blocks_free =
			used_blocks < fs_cfg.block_count ? fs_cfg.block_count - used_blocks : 0u;
	}
	pthread_mutex_unlock(&fs_lock);
	return used < 0 ? (int)used : 0;
}

/* ---- Directories -------------------------------------------------------------------------- */

int agent_fs_opendir(struct agent_dir **out, const char *path)
{
	char lpath[FS_PATH_BYTES];
	struct agent_dir *dir = NULL;
	int err;

	FS_FAULT_RETURN();
	if (out == NULL) {
		return -EINVAL;
	}
	if (posix_sd_owns_path(path)) {
		return posix_sd_opendir(out, path);
	}
	err = fs_path(path, lpath);
	if (err != 0) {
		return err;
	}
	err = fs_enter_mounted();
	if (err != 0) {
		return err;
	}
	for (size_t i = 0; i < POSIX_FS_DIR_SLOTS; i++) {
		if (!fs_dirs[i].used) {
			dir = &fs_dirs[i];
			break;
		}
	}
	if (dir == NULL) {
		pthread_mutex_unlock(&fs_lock);
		return -ENFILE;
	}
	memset(dir, 0, sizeof(*dir));
	err = lfs_dir_open(&fs_lfs, &dir->dir, lpath);
	if (err == 0) {
		dir->used = true;
		*out = dir;
	}
	pthread_mutex_unlock(&fs_lock);
	return err;
}

int agent_fs_readdir(struct agent_dir *dir, struct agent_dirent *entry)
{
	struct lfs_info info;
	int ret;

	FS_FAULT_RETURN();
	if (entry == NULL) {
		return -EINVAL;
	}
	if (posix_sd_owns_dir(dir)) {
		return posix_sd_readdir(dir, entry);
	}
	pthread_mutex_lock(&fs_lock);
	if (!fs_dir_is_valid(dir)) {
		pthread_mutex_unlock(&fs_lock);
		return -EBADF;
	}
	do {
		ret = lfs_dir_read(&fs_lfs, &dir->dir, &info);
	} while (ret > 0 && (strcmp(info.name, ".") == 0 || strcmp(info.name, "..") == 0));
	pthread_mutex_unlock(&fs_lock);

	if (ret < 0) {
		return ret;
	}
	if (ret == 0) {
		memset(entry, 0, sizeof(*entry));
		return 0;
	}
	fs_fill_dirent(&info, entry);
	return 0;
}

int agent_fs_closedir(struct agent_dir *dir)
{
	int fault = fs_fault(); /* the handle is released all the same */
	int err;

	if (posix_sd_owns_dir(dir)) {
		err = posix_sd_closedir(dir);
		return fault != 0 ? fault : err;
	}
	pthread_mutex_lock(&fs_lock);
	if (!fs_dir_is_valid(dir)) {
		pthread_mutex_unlock(&fs_lock);
		return -EBADF;
	}
	err = lfs_dir_close(&fs_lfs, &dir->dir);
	dir->used = false;
	pthread_mutex_unlock(&fs_lock);
	return fault != 0 ? fault : err;
}
