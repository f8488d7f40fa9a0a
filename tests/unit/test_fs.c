/*
 * Filesystem of the POSIX port: the real littlefs over an image file, mounted at "/lfs".
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_port.h"
#include "posix/posix_port.h"

#include "flash_fixture.h"

static int setup(void **state)
{
	(void)state;
	return flash_fixture_setup("test_fs");
}

static int teardown(void **state)
{
	(void)state;
	return flash_fixture_teardown();
}

static void write_file(const char *path, const char *text)
{
	struct agent_file *file = NULL;

	assert_int_equal(agent_fs_open(&file, path,
				       AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC),
			 0);
	assert_int_equal(agent_fs_write(file, text, strlen(text)), (int)strlen(text));
	assert_int_equal(agent_fs_close(file), 0);
}

static void assert_file_is(const char *path, const char *text)
{
	struct agent_file *file = NULL;
	char buf[256] = {0};

	assert_int_equal(agent_fs_open(&file, path, AGENT_FS_O_READ), 0);
	assert_int_equal(agent_fs_read(file, buf, sizeof(buf) - 1u), (int)strlen(text));
	assert_string_equal(buf, text);
	assert_int_equal(agent_fs_close(file), 0);
}

static void test_write_read_seek_tell(void **state)
{
	struct agent_file *file = NULL;
	char buf[32];

	(void)state;
	assert_int_equal(agent_fs_open(&file, "/lfs/a.txt", AGENT_FS_O_READ), -ENOENT);
	assert_int_equal(agent_fs_open(&file, "/lfs/a.txt", AGENT_FS_O_RDWR | AGENT_FS_O_CREATE),
			 0);
	assert_int_equal(agent_fs_tell(file), 0);
	assert_int_equal(agent_fs_write(file, "hello world", 11), 11);
	assert_int_equal(agent_fs_tell(file), 11);

	/* At the end, a read returns 0. */
	assert_int_equal(agent_fs_read(file, buf, sizeof(buf)), 0);

	assert_int_equal(agent_fs_seek(file, 6, AGENT_FS_SEEK_SET), 0);
	assert_int_equal(agent_fs_tell(file), 6);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(agent_fs_read(file, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "world");

	assert_int_equal(agent_fs_seek(file, -5, AGENT_FS_SEEK_END), 0);
	assert_int_equal(agent_fs_tell(file), 6);
	assert_int_equal(agent_fs_seek(file, -6, AGENT_FS_SEEK_CUR), 0);
	assert_int_equal(agent_fs_tell(file), 0);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(agent_fs_read(file, buf, 5), 5);
	assert_string_equal(buf, "hello");

	/* Before the start is refused and leaves the position alone. */
	assert_int_equal(agent_fs_seek(file, -6, AGENT_FS_SEEK_CUR), -EINVAL);
	assert_int_equal(agent_fs_tell(file), 5);
	assert_int_equal(agent_fs_seek(file, 0, 3), -EINVAL);

	/* Overwrite in the middle. */
	assert_int_equal(agent_fs_seek(file, 0, AGENT_FS_SEEK_SET), 0);
	assert_int_equal(agent_fs_write(file, "HELLO", 5), 5);
	assert_int_equal(agent_fs_sync(file), 0);
	assert_int_equal(agent_fs_close(file), 0);
	assert_file_is("/lfs/a.txt", "HELLO world");

	/* A closed handle is refused, not used. */
	assert_int_equal(agent_fs_read(file, buf, 1), -EBADF);
	assert_int_equal(agent_fs_close(file), -EBADF);
}

static void test_open_flags(void **state)
{
	struct agent_file *file = NULL;
	char buf[16] = {0};

	(void)state;
	write_file("/lfs/f", "abc");

	/* Access mode is required; unknown bits are refused. */
	assert_int_equal(agent_fs_open(&file, "/lfs/f", 0), -EINVAL);
	assert_int_equal(agent_fs_open(&file, "/lfs/f", AGENT_FS_O_READ | 0x80), -EINVAL);
	assert_int_equal(agent_fs_open(&file, "/lfs/f", AGENT_FS_O_READ | AGENT_FS_O_TRUNC),
			 -EINVAL);

	/* Read-only handles refuse writes and truncation; write-only handles refuse reads. */
	assert_int_equal(agent_fs_open(&file, "/lfs/f", AGENT_FS_O_READ), 0);
	assert_int_equal(agent_fs_write(file, "x", 1), -EBADF);
	assert_int_equal(agent_fs_truncate(file, 0), -EBADF);
	assert_int_equal(agent_fs_close(file), 0);
	assert_int_equal(agent_fs_open(&file, "/lfs/f", AGENT_FS_O_WRITE), 0);
	assert_int_equal(agent_fs_read(file, buf, 1), -EBADF);
	assert_int_equal(agent_fs_close(file), 0);

	/* APPEND writes at the end whatever the position. */
	assert_int_equal(agent_fs_open(&file, "/lfs/f", AGENT_FS_O_RDWR | AGENT_FS_O_APPEND), 0);
	assert_int_equal(agent_fs_seek(file, 0, AGENT_FS_SEEK_SET), 0);
	assert_int_equal(agent_fs_write(file, "de", 2), 2);
	assert_int_equal(agent_fs_close(file), 0);
	assert_file_is("/lfs/f", "abcde");

	/* TRUNC empties an existing file. */
	assert_int_equal(agent_fs_open(&file, "/lfs/f", AGENT_FS_O_RDWR | AGENT_FS_O_TRUNC), 0);
	assert_int_equal(agent_fs_read(file, buf, sizeof(buf)), 0);
	assert_int_equal(agent_fs_close(file), 0);
	assert_file_is("/lfs/f", "");
}

static void test_truncate(void **state)
{
	struct agent_file *file = NULL;
	struct agent_dirent entry;
	uint8_t buf[16];

	(void)state;
	write_file("/lfs/t", "0123456789");
	assert_int_equal(agent_fs_open(&file, "/lfs/t", AGENT_FS_O_RDWR), 0);
	assert_int_equal(agent_fs_truncate(file, 4), 0);
	assert_int_equal(agent_fs_close(file), 0);
	assert_file_is("/lfs/t", "0123");

	/* Growing fills with zeros. */
	assert_int_equal(agent_fs_open(&file, "/lfs/t", AGENT_FS_O_RDWR), 0);
	assert_int_equal(agent_fs_truncate(file, 8), 0);
	assert_int_equal(agent_fs_read(file, buf, sizeof(buf)), 8);
	assert_memory_equal(buf, "0123\0\0\0\0", 8);
	assert_int_equal(agent_fs_close(file), 0);
	assert_int_equal(agent_fs_stat("/lfs/t", &entry), 0);
	assert_int_equal(entry.size, 8);
}

static void test_names(void **state)
{
	struct agent_dirent entry;

	(void)state;
	assert_int_equal(agent_fs_stat("/lfs/nothing", &entry), -ENOENT);

	assert_int_equal(agent_fs_mkdir("/lfs/d"), 0);
	assert_int_equal(agent_fs_mkdir("/lfs/d"), -EEXIST);
	write_file("/lfs/file", "x");
	assert_int_equal(agent_fs_mkdir("/lfs/file"), -EEXIST);

	assert_int_equal(agent_fs_stat("/lfs/d", &entry), 0);
	assert_int_equal(entry.type, AGENT_FS_DIR);
	assert_string_equal(entry.name, "d");
	assert_int_equal(agent_fs_stat("/lfs/file", &entry), 0);
	assert_int_equal(entry.type, AGENT_FS_FILE);
	assert_string_equal(entry.name, "file");
	assert_int_equal(entry.size, 1);
	assert_int_equal(agent_fs_stat("/lfs", &entry), 0);
	assert_int_equal(entry.type, AGENT_FS_DIR);

	/* Rename onto an existing file replaces it. */
	write_file("/lfs/old", "old contents");
	write_file("/lfs/new", "new");
	assert_int_equal(agent_fs_rename("/lfs/new", "/lfs/old"), 0);
	assert_int_equal(agent_fs_stat("/lfs/new", &entry), -ENOENT);
	assert_file_is("/lfs/old", "new");
	assert_int_equal(agent_fs_rename("/lfs/missing", "/lfs/x"), -ENOENT);
	assert_int_equal(agent_fs_rename("/lfs/old", "/tmp/old"), -ENOENT);
	assert_file_is("/lfs/old", "new");

	/* Into a directory, then out of it. */
	assert_int_equal(agent_fs_rename("/lfs/old", "/lfs/d/moved"), 0);
	assert_file_is("/lfs/d/moved", "new");

	/* A non-empty directory is not removed. */
	assert_int_equal(agent_fs_unlink("/lfs/d"), -ENOTEMPTY);
	assert_int_equal(agent_fs_unlink("/lfs/d/moved"), 0);
	assert_int_equal(agent_fs_unlink("/lfs/d/moved"), -ENOENT);
	assert_int_equal(agent_fs_unlink("/lfs/d"), 0);
	assert_int_equal(agent_fs_stat("/lfs/d", &entry), -ENOENT);
	assert_int_equal(agent_fs_unlink("/lfs"), -EBUSY);
}

static void test_paths(void **state)
{
	struct agent_file *file = NULL;
	struct agent_dirent entry;
	struct agent_statvfs vfs;
	struct agent_dir *dir = NULL;

	(void)state;
	/* Outside the mount point, including prefixes that only look like it. */
	assert_int_equal(agent_fs_open(&file, "/tmp/x", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 -ENOENT);
	assert_int_equal(agent_fs_open(&file, "/lfsx", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 -ENOENT);
	assert_int_equal(agent_fs_open(&file, "lfs/x", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 -ENOENT);
	assert_int_equal(agent_fs_open(&file, "/LFS/x", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 -ENOENT);
	assert_int_equal(agent_fs_open(&file, "", AGENT_FS_O_READ), -ENOENT);
	assert_int_equal(agent_fs_mkdir("/x"), -ENOENT);
	assert_int_equal(agent_fs_stat("/", &entry), -ENOENT);
	assert_int_equal(agent_fs_statvfs("/other", &vfs), -ENOENT);
	assert_int_equal(agent_fs_opendir(&dir, "/lfs2"), -ENOENT);
	assert_int_equal(agent_fs_unlink("/tmp"), -ENOENT);

	/* Duplicate slashes are one separator. */
	assert_int_equal(agent_fs_mkdir("/lfs//dir"), 0);
	write_file("/lfs///dir//f", "slashes");
	assert_file_is("/lfs/dir/f", "slashes");
	assert_int_equal(agent_fs_stat("/lfs/dir/", &entry), 0);
	assert_int_equal(entry.type, AGENT_FS_DIR);
	assert_int_equal(agent_fs_opendir(&dir, "/lfs/"), 0);
	assert_int_equal(agent_fs_closedir(dir), 0);
}

static void test_readdir(void **state)
{
	static const char *const names[] = {"beta", "alpha", "gamma"};
	bool seen[3] = {false, false, false};
	bool seen_sub = false;
	struct agent_dir *dir = NULL;
	struct agent_dirent entry;
	int entries = 0;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/lfs/%s", names[i]);
		write_file(path, names[i]);
	}
	assert_int_equal(agent_fs_mkdir("/lfs/sub"), 0);

	assert_int_equal(agent_fs_opendir(&dir, "/lfs"), 0);
	for (;;) {
		assert_int_equal(agent_fs_readdir(dir, &entry), 0);
		if (entry.name[0] == '\0') {
			break;
		}
		entries++;
		assert_string_not_equal(entry.name, ".");
		assert_string_not_equal(entry.name, "..");
		if (strcmp(entry.name, "sub") == 0) {
			assert_int_equal(entry.type, AGENT_FS_DIR);
			seen_sub = true;
			continue;
		}
		for (size_t i = 0; i < 3; i++) {
			if (strcmp(entry.name, names[i]) == 0) {
				assert_false(seen[i]);
				seen[i] = true;
				assert_int_equal(entry.type, AGENT_FS_FILE);
				assert_int_equal(entry.size, strlen(names[i]));
			}
		}
	}
	/* Reading past the end keeps signalling the end. */
	assert_int_equal(agent_fs_readdir(dir, &entry), 0);
	assert_int_equal(entry.name[0], '\0');
	assert_int_equal(agent_fs_closedir(dir), 0);
	assert_int_equal(entries, 4);
	assert_true(seen[0] && seen[1] && seen[2] && seen_sub);

	/* An empty directory lists nothing; a file is not a directory. */
	assert_int_equal(agent_fs_opendir(&dir, "/lfs/sub"), 0);
	assert_int_equal(agent_fs_readdir(dir, &entry), 0);
	assert_int_equal(entry.name[0], '\0');
	assert_int_equal(agent_fs_closedir(dir), 0);
	assert_int_equal(agent_fs_opendir(&dir, "/lfs/alpha"), -ENOTDIR);
	assert_int_equal(agent_fs_opendir(&dir, "/lfs/none"), -ENOENT);
	assert_int_equal(agent_fs_closedir(dir), -EBADF);
}

static void test_statvfs(void **state)
{
	struct agent_statvfs before;
	struct agent_statvfs after;
	struct agent_file *file = NULL;
	static uint8_t data[3u * POSIX_FLASH_BLOCK_BYTES];

	(void)state;
	assert_int_equal(agent_fs_statvfs("/lfs", &before), 0);
	assert_int_equal(before.block_bytes, POSIX_FLASH_BLOCK_BYTES);
	assert_int_equal(before.blocks, IMAGE_BYTES / POSIX_FLASH_BLOCK_BYTES);
	assert_true(before.blocks_free < before.blocks);
	assert_true(before.blocks_free >= before.blocks - 4u);

	memset(data, 0x5a, sizeof(data));
	assert_int_equal(agent_fs_open(&file, "/lfs/big", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 0);
	assert_int_equal(agent_fs_write(file, data, sizeof(data)), (int)sizeof(data));
	assert_int_equal(agent_fs_close(file), 0);
	assert_int_equal(agent_fs_statvfs("/lfs/big", &after), 0);
	assert_true(after.blocks_free + 3u <= before.blocks_free);

	assert_int_equal(agent_fs_unlink("/lfs/big"), 0);
	assert_int_equal(agent_fs_statvfs("/lfs", &after), 0);
	assert_int_equal(after.blocks_free, before.blocks_free);
}

static void test_file_table_full(void **state)
{
	struct agent_file *files[POSIX_FS_FILE_SLOTS];
	struct agent_file *extra = NULL;
	struct agent_dir *dirs[POSIX_FS_DIR_SLOTS];
	struct agent_dir *extra_dir = NULL;
	struct agent_dirent entry;
	char path[32];

	(void)state;
	for (size_t i = 0; i < POSIX_FS_FILE_SLOTS; i++) {
		snprintf(path, sizeof(path), "/lfs/f%zu", i);
		assert_int_equal(
			agent_fs_open(&files[i], path, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE), 0);
	}
	assert_int_equal(agent_fs_open(&extra, "/lfs/extra", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 -ENFILE);
	/* The failed open created nothing. */
	assert_int_equal(agent_fs_stat("/lfs/extra", &entry), -ENOENT);
	/* Settings keep their own slots, so they still work with the table full. */
	assert_int_equal(agent_settings_set("t/k", "v", 1), 0);

	/* The file table does not hold up a busy unmount. */
	assert_int_equal(posix_flash_unmount(), -EBUSY);

	/* Freeing one slot (N-1 open) lets one more open succeed. */
	assert_int_equal(agent_fs_close(files[3]), 0);
	assert_int_equal(
		agent_fs_open(&files[3], "/lfs/extra", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE), 0);
	for (size_t i = 0; i < POSIX_FS_FILE_SLOTS; i++) {
		assert_int_equal(agent_fs_close(files[i]), 0);
	}

	for (size_t i = 0; i < POSIX_FS_DIR_SLOTS; i++) {
		assert_int_equal(agent_fs_opendir(&dirs[i], "/lfs"), 0);
	}
	assert_int_equal(agent_fs_opendir(&extra_dir, "/lfs"), -ENFILE);
	assert_int_equal(posix_flash_unmount(), -EBUSY);
	for (size_t i = 0; i < POSIX_FS_DIR_SLOTS; i++) {
		assert_int_equal(agent_fs_closedir(dirs[i]), 0);
	}
}

/* Runs posix_flash_mount() with stderr sent to a file, and returns what it printed. */
static int mount_capturing_stderr(const char *path, bool erase_first, char *out, size_t cap)
{
	char capture[128];
	int saved;
	int fd;
	int err;
	ssize_t n;

	snprintf(capture, sizeof(capture), "%s/stderr.txt", scratch_dir);
	fd = open(capture, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	err = posix_flash_mount(path, IMAGE_BYTES, erase_first);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	n = pread(fd, out, cap - 1u, 0);
	assert_true(n >= 0);
	out[n] = '\0';
	close(fd);
	unlink(capture);
	return err;
}

static void test_format_message(void **state)
{
	char printed[512];
	char expected[160];

	(void)state;
	assert_int_equal(posix_flash_unmount(), 0);

	/* An image that mounts prints nothing. */
	assert_int_equal(mount_capturing_stderr(image_path, false, printed, sizeof(printed)), 0);
	assert_string_equal(printed, "");
	assert_int_equal(posix_flash_unmount(), 0);

	/* A blank image is formatted with exactly one line, and no littlefs complaints. */
	snprintf(expected, sizeof(expected), "lfs: formatting %s\n", image_path);
	assert_int_equal(mount_capturing_stderr(image_path, true, printed, sizeof(printed)), 0);
	assert_string_equal(printed, expected);
}

static void test_image_created_erased(void **state)
{
	struct stat st;
	uint8_t block[POSIX_FLASH_BLOCK_BYTES];
	size_t ff_blocks = 0;
	int fd;

	(void)state;
	assert_int_equal(stat(image_path, &st), 0);
	assert_int_equal(st.st_size, IMAGE_BYTES);

	/* Only the few blocks littlefs formatted differ from erased flash. */
	fd = open(image_path, O_RDONLY);
	assert_true(fd >= 0);
	for (size_t b = 0; b < IMAGE_BYTES / POSIX_FLASH_BLOCK_BYTES; b++) {
		size_t i;

		assert_int_equal(pread(fd, block, sizeof(block), (off_t)(b * sizeof(block))),
				 (ssize_t)sizeof(block));
		for (i = 0; i < sizeof(block) && block[i] == 0xff; i++) {
		}
		ff_blocks += i == sizeof(block);
	}
	close(fd);
	assert_true(ff_blocks >= IMAGE_BYTES / POSIX_FLASH_BLOCK_BYTES - 4u);
	assert_true(ff_blocks < IMAGE_BYTES / POSIX_FLASH_BLOCK_BYTES);
}

static void test_mount_arguments(void **state)
{
	char other[128];

	(void)state;
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), -EBUSY);
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(posix_flash_unmount(), -EINVAL);

	/* Image sizes: a block short of the minimum and a non-multiple are refused. */
	snprintf(other, sizeof(other), "%s/other.bin", scratch_dir);
	assert_int_equal(posix_flash_mount(other, POSIX_FLASH_MIN_BYTES - POSIX_FLASH_BLOCK_BYTES,
					   false),
			 -EINVAL);
	assert_int_equal(posix_flash_mount(other, POSIX_FLASH_MIN_BYTES + 1u, false), -EINVAL);
	assert_int_equal(access(other, F_OK), -1);
	assert_int_equal(posix_flash_mount(other, POSIX_FLASH_MIN_BYTES, false), 0);
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(unlink(other), 0);

	/* An existing image of a size that is not whole blocks is refused, not formatted. */
	{
		int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, POSIX_FLASH_MIN_BYTES + 100), 0);
		close(fd);
	}
	assert_int_equal(posix_flash_mount(other, 0, false), -EINVAL);
	assert_int_equal(unlink(other), 0);

	/* Nothing mounted: paths are unknown. */
	{
		struct agent_file *file = NULL;

		const unsigned int flags = AGENT_FS_O_WRITE | AGENT_FS_O_CREATE;

		assert_int_equal(agent_fs_open(&file, "/lfs/x", flags), -ENOENT);
		assert_int_equal(agent_fs_mkdir("/lfs/d"), -ENOENT);
	}
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
}

static void test_existing_image_reused(void **state)
{
	struct stat st;

	(void)state;
	write_file("/lfs/keep", "survives");
	assert_int_equal(agent_fs_mkdir("/lfs/dir"), 0);
	assert_int_equal(posix_flash_unmount(), 0);

	/* The image's own size wins over the argument; the data is still there. */
	assert_int_equal(posix_flash_mount(image_path, 2u * IMAGE_BYTES, false), 0);
	assert_int_equal(stat(image_path, &st), 0);
	assert_int_equal(st.st_size, IMAGE_BYTES);
	assert_file_is("/lfs/keep", "survives");
	assert_int_equal(agent_fs_mkdir("/lfs/dir"), -EEXIST);
	assert_int_equal(posix_flash_unmount(), 0);

	/* Erasing first leaves an empty, freshly formatted filesystem of the same size. */
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, true), 0);
	{
		struct agent_dirent entry;

		assert_int_equal(agent_fs_stat("/lfs/keep", &entry), -ENOENT);
	}
	assert_int_equal(stat(image_path, &st), 0);
	assert_int_equal(st.st_size, IMAGE_BYTES);
}

static void test_garbage_image_formatted(void **state)
{
	uint8_t junk[POSIX_FLASH_BLOCK_BYTES];
	struct agent_dirent entry;
	int fd;

	(void)state;
	write_file("/lfs/lost", "x");
	assert_int_equal(posix_flash_unmount(), 0);

	memset(junk, 0xa5, sizeof(junk));
	fd = open(image_path, O_WRONLY);
	assert_true(fd >= 0);
	for (size_t b = 0; b < IMAGE_BYTES / POSIX_FLASH_BLOCK_BYTES; b++) {
		assert_int_equal(pwrite(fd, junk, sizeof(junk), (off_t)(b * sizeof(junk))),
				 (ssize_t)sizeof(junk));
	}
	close(fd);

	/* Like Zephyr's automount: an unmountable image is formatted, not an error. */
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
	assert_int_equal(agent_fs_stat("/lfs/lost", &entry), -ENOENT);
	write_file("/lfs/new", "works");
	assert_file_is("/lfs/new", "works");
}

/* Runs @p fn in a child process and returns its exit status (0 on success). */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int status = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		_exit(fn());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int child_mount_is_refused(void)
{
	/*
	 * The child inherits the parent's mount; dropping its copy leaves the parent's lock in
	 * place (flock belongs to the open file description), so a fresh mount must be refused.
	 */
	if (posix_flash_unmount() != 0) {
		return 2;
	}
	return posix_flash_mount(image_path, IMAGE_BYTES, false) == -EBUSY ? 0 : 1;
}

static int child_mount_succeeds(void)
{
	if (posix_flash_mount(image_path, IMAGE_BYTES, false) != 0) {
		return 1;
	}
	return posix_flash_unmount() == 0 ? 0 : 2;
}

static void test_second_process_locked_out(void **state)
{
	(void)state;
	assert_int_equal(in_child(child_mount_is_refused), 0);
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(in_child(child_mount_succeeds), 0);
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_read_seek_tell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readdir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_statvfs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_table_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_created_erased, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mount_arguments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_image_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_image_formatted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_process_locked_out, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
