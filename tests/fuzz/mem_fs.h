/*
 * The port's file API (agent_fs_*, app/src/port/agent_port.h) in memory, for the fuzz targets
 * that replace the port: a table of files by path and a few handles. Included by one source
 * of a target, which defines before it:
 *
 *   FILE_MAX                  the bytes a file holds (a write past them fails the check)
 *   MEM_FS_FILES              the files at most
 *   MEM_FS_HANDLES            the files open at once at most
 *   MEM_FS_CAN_CREATE         the condition under which a file may be created (its directory)
 *   MEM_FS_STRICT             1: the code under test only uses the files the target made (an
 *                             unknown path to open, a missing file to rename fail the check),
 *                             seeks only to the end (SEEK_END 0) and never reads past the end;
 *                             0: files are made on demand, any seek within FILE_MAX goes
 *   CHECK(cond)               the target's check (aborts)
 *
 * The target keeps its own agent_fs_mkdir (its directories) and whatever else of the port it
 * needs, and resets files[] and handles[] before each input.
 */
#ifndef AGENT_FUZZ_MEM_FS_H
#define AGENT_FUZZ_MEM_FS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent_port.h"

#define MEM_FS_PATH_MAX 64

struct mem_file {
	char path[MEM_FS_PATH_MAX];
	bool exists;
	uint8_t data[FILE_MAX];
	uint32_t size;
};

struct agent_file {
	struct mem_file *f;
	uint32_t pos;
	bool open;
};

static struct mem_file files[MEM_FS_FILES];
static struct agent_file handles[MEM_FS_HANDLES];

/* The file of @p path; a free entry takes the path when @p create. */
static struct mem_file *find(const char *path, bool create)
{
	struct mem_file *free_slot = NULL;

	for (size_t i = 0; i < MEM_FS_FILES; i++) {
		if (files[i].path[0] != '\0' && strcmp(files[i].path, path) == 0) {
			return &files[i];
		}
		if (free_slot == NULL && files[i].path[0] == '\0') {
			free_slot = &files[i];
		}
	}
	if (!create) {
		return NULL;
	}
	CHECK(free_slot != NULL && strlen(path) < MEM_FS_PATH_MAX);
	strcpy(free_slot->path, path);
	return free_slot;
}

int agent_fs_open(struct agent_file **out, const char *path, unsigned int flags)
{
	bool create = (flags & AGENT_FS_O_CREATE) != 0u;
	struct mem_file *f = find(path, create && !MEM_FS_STRICT);

	CHECK(f != NULL || !MEM_FS_STRICT);
	if (f == NULL || (!f->exists && !create)) {
		return -ENOENT;
	}
	if (!f->exists) {
		CHECK(MEM_FS_CAN_CREATE);
		f->exists = true;
		f->size = 0;
	}
	if ((flags & AGENT_FS_O_TRUNC) != 0u) {
		f->size = 0;
	}
	for (size_t i = 0; i < MEM_FS_HANDLES; i++) {
		if (!handles[i].open) {
			handles[i] = (struct agent_file){f, 0, true};
			*out = &handles[i];
			return 0;
		}
	}
	CHECK(false); /* never more than MEM_FS_HANDLES files open */
	return -ENFILE;
}

int agent_fs_read(struct agent_file *file, void *buf, size_t len)
{
	CHECK(file->open && (!MEM_FS_STRICT || file->pos <= file->f->size));
	if (file->pos >= file->f->size) {
		return 0;
	}
	if (len > file->f->size - file->pos) {
		len = file->f->size - file->pos;
	}
	memcpy(buf, file->f->data + file->pos, len);
	file->pos += (uint32_t)len;
	return (int)len;
}

int agent_fs_write(struct agent_file *file, const void *buf, size_t len)
{
	CHECK(file->open);
	CHECK(file->pos + len <= sizeof(file->f->data)); /* the code keeps to its bound */
	memcpy(file->f->data + file->pos, buf, len);
	file->pos += (uint32_t)len;
	if (file->pos > file->f->size) {
		file->f->size = file->pos;
	}
	return (int)len;
}

int agent_fs_seek(struct agent_file *file, int32_t offset, int whence)
{
	int64_t base = whence == AGENT_FS_SEEK_SET ? 0
		       : whence == AGENT_FS_SEEK_END ? (int64_t)file->f->size
						     : (int64_t)file->pos;

	CHECK(!MEM_FS_STRICT || (whence == AGENT_FS_SEEK_END && offset == 0));
	CHECK(file->open && base + offset >= 0 && base + offset <= FILE_MAX);
	file->pos = (uint32_t)(base + offset);
	return 0;
}

int32_t agent_fs_tell(struct agent_file *file)
{
	return (int32_t)file->pos;
}

int agent_fs_truncate(struct agent_file *file, uint32_t length)
{
	CHECK(file->open && length <= file->f->size);
	file->f->size = length;
	return 0;
}

int agent_fs_sync(struct agent_file *file)
{
	CHECK(file->open);
	return 0;
}

int agent_fs_close(struct agent_file *file)
{
	CHECK(file->open);
	file->open = false;
	return 0;
}

int agent_fs_unlink(const char *path)
{
	struct mem_file *f = find(path, false);

	if (f == NULL || !f->exists) {
		return -ENOENT;
	}
	f->exists = false;
	return 0;
}

int agent_fs_rename(const char *from, const char *to)
{
	struct mem_file *a = find(from, false);
	struct mem_file *b;

	CHECK(!MEM_FS_STRICT || (a != NULL && a->exists));
	if (a == NULL || !a->exists) {
		return -ENOENT;
	}
	b = find(to, !MEM_FS_STRICT);
	CHECK(b != NULL);
	memcpy(b->data, a->data, a->size);
	b->size = a->size;
	b->exists = true;
	a->exists = false;
	return 0;
}

int agent_fs_stat(const char *path, struct agent_dirent *entry)
{
	struct mem_file *f = find(path, false);

	if (f == NULL || !f->exists) {
		return -ENOENT;
	}
	memset(entry, 0, sizeof(*entry));
	entry->size = f->size;
	return 0;
}

#endif /* AGENT_FUZZ_MEM_FS_H */
