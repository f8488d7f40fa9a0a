/*
 * Helpers of the conversation store tests: turns, a fingerprint of what a slot holds (to
 * tell "the complete old version" from "the complete new version"), raw access to slot
 * files, and an SD card folder. Included by one test file each, after cmocka.h; the
 * including file defines _POSIX_C_SOURCE 200809L.
 */
#ifndef CONV_TEST_UTIL_H
#define CONV_TEST_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_port.h"
#include "conv_store.h"
#include "posix/posix_port.h"

#define CONV_DIR_LFS "/lfs/.agent/conversations"
#define CONV_DIR_SD  "/SD:/.agent/conversations"

/* Text of a given length: a pattern that differs with @p seed, so that turns differ. */
static inline void fill_text(char *buf, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++) {
		buf[i] = (char)('a' + (i * 7u + seed * 13u) % 26u);
	}
	buf[len] = '\0';
}

/* Commit one turn of the given sizes; returns the commit's result. */
static inline int commit_sized(struct conv_handle *h, size_t user_len, size_t assistant_len,
			       unsigned int seed, const char *response_id)
{
	static char user[70000];
	static char assistant[70000];
	static const char *const tools[] = {"storage_read: executed"};
	struct conv_usage usage = {10u + seed, 20u, 30u + seed, 0u};
	struct conv_turn turn = {
		.user = user,
		.user_len = user_len,
		.assistant = assistant,
		.assistant_len = assistant_len,
		.tools = tools,
		.tool_count = seed % 2u,
		.response_id = response_id,
		.usage = &usage,
	};

	fill_text(user, user_len, seed);
	fill_text(assistant, assistant_len, seed + 1u);
	return conv_store_commit(h, &turn, NULL);
}

/* A new conversation with @p turns turns; returns its slot or a negative errno. */
static inline int new_conversation(const char *title, unsigned int turns, size_t msg_len,
				   unsigned int seed)
{
	struct conv_handle h;
	struct conv_meta meta = {2, "openai", "gpt-test", title};
	int slot = conv_store_create(&h, &meta);

	for (unsigned int i = 0; slot > 0 && i < turns; i++) {
		char id[32];
		int err;

		snprintf(id, sizeof(id), "resp_%u_%u", seed, i);
		err = commit_sized(&h, msg_len, msg_len * 2u, seed + i, id);
		if (err != 0) {
			return err;
		}
	}
	return slot;
}

/* What a slot holds, independent of wall-clock timestamps. */
struct conv_fp {
	int state; /* 0 a valid conversation, -ENOENT empty, else the read error */
	uint32_t conv_id;
	uint32_t sequence;
	uint32_t turns;
	uint32_t records;
	uint32_t crc; /* over every record's type, length and payload */
};

static inline int fp_chunk(const struct conv_chunk *chunk, void *user_data)
{
	struct conv_fp *fp = user_data;

	if (chunk->offset == 0u) {
		uint8_t head[5] = {chunk->type, (uint8_t)chunk->total_len,
				   (uint8_t)(chunk->total_len >> 8), (uint8_t)(chunk->total_len >> 16),
				   (uint8_t)(chunk->total_len >> 24)};

		fp->crc = conv_crc32(fp->crc, head, sizeof(head));
		fp->records++;
	}
	fp->crc = conv_crc32(fp->crc, chunk->data, chunk->len);
	return 0;
}

static inline struct conv_fp conv_fingerprint(uint8_t slot)
{
	struct conv_summary sum;
	struct conv_fp fp = {0};

	fp.state = conv_store_summary(slot, &sum);
	if (fp.state != 0) {
		return fp;
	}
	fp.conv_id = sum.conv_id;
	fp.sequence = sum.sequence;
	fp.turns = sum.turns;
	fp.state = conv_store_read(slot, fp_chunk, &fp);
	return fp;
}

static inline bool fp_equal(const struct conv_fp *a, const struct conv_fp *b)
{
	return a->state == b->state && a->conv_id == b->conv_id && a->sequence == b->sequence &&
	       a->turns == b->turns && a->records == b->records && a->crc == b->crc;
}

/* Whole-file access to "<dir>/convN.<ext>" through the port. */
static inline int slot_file_path(char *out, size_t cap, const char *dir, unsigned int slot,
				 const char *ext)
{
	return snprintf(out, cap, "%s/conv%u.%s", dir, slot, ext) < (int)cap ? 0 : -ENAMETOOLONG;
}

static inline int file_get(const char *path, uint8_t *buf, size_t cap)
{
	struct agent_file *f;
	size_t len = 0;
	int n;
	int err = agent_fs_open(&f, path, AGENT_FS_O_READ);

	if (err != 0) {
		return err;
	}
	while ((n = agent_fs_read(f, buf + len, cap - len)) > 0) {
		len += (size_t)n;
	}
	agent_fs_close(f);
	return n < 0 ? n : (int)len;
}

static inline int file_put(const char *path, const uint8_t *buf, size_t len)
{
	struct agent_file *f;
	int err = agent_fs_open(&f, path, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC);

	if (err != 0) {
		return err;
	}
	err = len > 0u ? agent_fs_write(f, buf, len) : 0;
	if (err >= 0) {
		err = agent_fs_close(f);
	} else {
		agent_fs_close(f);
	}
	return err;
}

/* Names in the conversation folder other than convN.bin and convN.bak. */
static inline int stray_files(const char *dir)
{
	struct agent_dir *d;
	struct agent_dirent ent;
	int stray = 0;

	if (agent_fs_opendir(&d, dir) != 0) {
		return -1;
	}
	while (agent_fs_readdir(d, &ent) == 0 && ent.name[0] != '\0') {
		size_t len = strlen(ent.name);

		if (len < 5 || (strcmp(ent.name + len - 4, ".bin") != 0 &&
				strcmp(ent.name + len - 4, ".bak") != 0)) {
			stray++;
		}
	}
	agent_fs_closedir(d);
	return stray;
}

/* ---- host folders ------------------------------------------------------------------------- */

/* Remove a folder tree of the host (the test's own scratch folders only). */
static inline void host_rm_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *ent;
	char sub[512];

	if (d == NULL) {
		unlink(path);
		return;
	}
	while ((ent = readdir(d)) != NULL) {
		if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) {
			continue;
		}
		snprintf(sub, sizeof(sub), "%s/%s", path, ent->d_name);
		host_rm_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

/* Copy the files of host folder @p from into @p to (made empty first); flat folders only. */
static inline int host_copy_flat(const char *from, const char *to)
{
	static uint8_t data[1u << 17];
	DIR *d;
	struct dirent *ent;
	char src[512];
	char dst[512];

	host_rm_tree(to);
	if (mkdir(to, 0755) != 0) {
		return -errno;
	}
	d = opendir(from);
	if (d == NULL) {
		return -errno;
	}
	while ((ent = readdir(d)) != NULL) {
		FILE *in;
		FILE *out;
		size_t n;

		if (ent->d_name[0] == '.') {
			continue;
		}
		snprintf(src, sizeof(src), "%s/%s", from, ent->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", to, ent->d_name);
		in = fopen(src, "rb");
		out = fopen(dst, "wb");
		if (in == NULL || out == NULL) {
			closedir(d);
			return -EIO;
		}
		n = fread(data, 1, sizeof(data), in);
		fwrite(data, 1, n, out);
		fclose(in);
		fclose(out);
	}
	closedir(d);
	return 0;
}

#endif /* CONV_TEST_UTIL_H */
