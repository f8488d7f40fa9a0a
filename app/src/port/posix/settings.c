/*
 * Settings store of the POSIX port. The firmware keeps settings in Zephyr's settings
 * subsystem; the simulator keeps the same keys in one file inside its LittleFS image,
 * "/lfs/.settings", in the format of docs/sim-settings-file.md.
 *
 * Memory stays bounded whatever the number of keys: a lookup scans the file record by
 * record, and a change streams every other record into "/lfs/.settings.tmp", appends the
 * new one and renames the copy over the original. littlefs renames atomically, so a crash
 * leaves the old file or the new one, never a mix. A leftover temporary file is never read
 * and is overwritten by the next change.
 *
 * Values pass through buffers on the caller's stack and through littlefs's caches; every one
 * is wiped before the call returns (agent_wipe(), posix_fs_forget_cached()), so a key that
 * was deleted leaves no copy in RAM (docs/configuration.md, "What happens to the key in RAM").
 *
 * Errors: -EINVAL for a bad key (empty, longer than AGENT_SETTINGS_KEY_MAX, or holding a
 * byte outside printable ASCII, a space or '='), -E2BIG for a value longer than
 * AGENT_SETTINGS_VALUE_MAX, -ENODEV while "/lfs" is not mounted, -EBUSY for a change
 * attempted from inside an agent_settings_foreach() callback, and filesystem errors as
 * they come. A zero-length value deletes the key, as Zephyr's NVS and ZMS backends do.
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* PTHREAD_MUTEX_RECURSIVE, strnlen */
#endif

#include "agent_port.h"
#include "posix_fs_internal.h"
#include "posix_sd.h"
#include "settings_names.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#define SETTINGS_PATH     "/lfs/.settings"
#define SETTINGS_TMP_PATH "/lfs/.settings.tmp"

#define SETTINGS_VERSION      1u
#define SETTINGS_HEADER_BYTES 8u
#define SETTINGS_HEAD_BYTES   3u /* key length (1), value length (2, little-endian) */
#define SETTINGS_CRC_BYTES    4u
#define SETTINGS_RECORD_MAX                                                                    \
	(SETTINGS_HEAD_BYTES + AGENT_SETTINGS_KEY_MAX + AGENT_SETTINGS_VALUE_MAX +             \
	 SETTINGS_CRC_BYTES)

_Static_assert(AGENT_SETTINGS_KEY_MAX <= UINT8_MAX, "key length is stored in one byte");
_Static_assert(AGENT_SETTINGS_VALUE_MAX <= UINT16_MAX, "value length is stored in two bytes");

static const uint8_t settings_header[SETTINGS_HEADER_BYTES] = {'A', 'G', 'S', 'T',
							       SETTINGS_VERSION, 0, 0, 0};

struct settings_record {
	size_t key_len;
	size_t value_len;
	char key[AGENT_SETTINGS_KEY_MAX + 1];
	uint8_t value[AGENT_SETTINGS_VALUE_MAX];
};

/* Recursive so that a foreach callback may call agent_settings_get() on its own thread. */
static pthread_mutex_t settings_lock;
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
/* Walks in progress; only the thread holding settings_lock can see it non-zero. */
static unsigned int settings_walk_depth;

static void settings_init_once(void)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&settings_lock, &attr);
	pthread_mutexattr_destroy(&attr);
}

static void settings_enter(void)
{
	pthread_once(&settings_once, settings_init_once);
	pthread_mutex_lock(&settings_lock);
}

static void settings_leave(void)
{
	pthread_mutex_unlock(&settings_lock);
}

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32()); records are small, so no table. */
static uint32_t settings_crc32(uint32_t crc, const uint8_t *data, size_t len)
{
	crc = ~crc;
	for (size_t i = 0; i < len; i++) {
		crc ^= data[i];
		for (int bit = 0; bit < 8; bit++) {
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
		}
	}
	return ~crc;
}

/* Bytes read: fewer than @p len only at the end of the file. */
static int settings_read_full(struct agent_file *file, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		int n = agent_fs_read(file, (uint8_t *)buf + done, len - done);

		if (n < 0) {
			return n;
		}
		if (n == 0) {
			break;
		}
		done += (size_t)n;
	}
	return (int)done;
}

/*
 * Reads the next record. 1 when one was read; 0 at the end of the valid data, be it the end
 * of the file, a truncated record or one whose CRC or fields are wrong (everything after a
 * bad record is treated as lost, since its length field cannot be trusted); a negative
 * errno when the filesystem failed.
 */
static int settings_read_record(struct agent_file *file, struct settings_record *rec)
{
	uint8_t head[SETTINGS_HEAD_BYTES];
	uint8_t crc_bytes[SETTINGS_CRC_BYTES];
	uint32_t crc;
	int n;

	n = settings_read_full(file, head, sizeof(head));
	if (n != (int)sizeof(head)) {
		return n < 0 ? n : 0;
	}
	rec->key_len = head[0];
	rec->value_len = (size_t)head[1] | ((size_t)head[2] << 8);
	if (rec->key_len == 0u || rec->key_len > AGENT_SETTINGS_KEY_MAX ||
	    rec->value_len > AGENT_SETTINGS_VALUE_MAX) {
		return 0;
	}
	n = settings_read_full(file, rec->key, rec->key_len);
	if (n != (int)rec->key_len) {
		return n < 0 ? n : 0;
	}
	n = settings_read_full(file, rec->value, rec->value_len);
	if (n != (int)rec->value_len) {
		return n < 0 ? n : 0;
	}
	n = settings_read_full(file, crc_bytes, sizeof(crc_bytes));
	if (n != (int)sizeof(crc_bytes)) {
		return n < 0 ? n : 0;
	}
	crc = settings_crc32(0, head, sizeof(head));
	crc = settings_crc32(crc, (const uint8_t *)rec->key, rec->key_len);
	crc = settings_crc32(crc, rec->value, rec->value_len);
	if (crc != ((uint32_t)crc_bytes[0] | ((uint32_t)crc_bytes[1] << 8) |
		    ((uint32_t)crc_bytes[2] << 16) | ((uint32_t)crc_bytes[3] << 24))) {
		return 0;
	}
	rec->key[rec->key_len] = '\0';
	/* A writer with another notion of keys is not this format: stop as for corruption. */
	if (agent_settings_key_len(rec->key) != (int)rec->key_len) {
		return 0;
	}
	return 1;
}

/*
 * Opens the settings file positioned at its first record. *out is NULL (and 0 returned)
 * when there is no file or its header is not ours: both mean "no settings".
 */
static int settings_open_source(struct agent_file **out)
{
	uint8_t header[SETTINGS_HEADER_BYTES];
	struct agent_file *file;
	int n;

	*out = NULL;
	n = posix_fs_open_reserved(&file, SETTINGS_PATH, AGENT_FS_O_READ);
	if (n == -ENOENT) {
		return 0;
	}
	if (n < 0) {
		return n;
	}
	n = settings_read_full(file, header, sizeof(header));
	if (n < 0) {
		agent_fs_close(file);
		return n;
	}
	if (n != (int)sizeof(header) || memcmp(header, settings_header, sizeof(header)) != 0) {
		agent_fs_close(file);
		return 0;
	}
	*out = file;
	return 0;
}

/* Last value stored for @p key, copied up to @p len bytes: its length, or -ENOENT. */
static int settings_lookup(const char *key, void *buf, size_t len)
{
	struct settings_record rec;
	struct agent_file *file;
	int found = -ENOENT;
	int ret;

	ret = settings_open_source(&file);
	if (ret != 0 || file == NULL) {
		return ret != 0 ? ret : -ENOENT;
	}
	while ((ret = settings_read_record(file, &rec)) > 0) {
		if (strcmp(rec.key, key) != 0) {
			continue;
		}
		/* Keep scanning: a later record for the same key supersedes this one. */
		if (len > 0u) {
			memcpy(buf, rec.value, rec.value_len < len ? rec.value_len : len);
		}
		found = (int)rec.value_len;
	}
	agent_fs_close(file);
	agent_wipe(&rec, sizeof(rec)); /* it may hold the key, see the file comment */
	return ret < 0 ? ret : found;
}

static int settings_write_record(struct agent_file *file, const char *key, size_t key_len,
				 const void *value, size_t value_len)
{
	uint8_t buf[SETTINGS_RECORD_MAX];
	size_t n = 0;
	uint32_t crc;
	int ret;

	buf[n++] = (uint8_t)key_len;
	buf[n++] = (uint8_t)(value_len & 0xffu);
	buf[n++] = (uint8_t)(value_len >> 8);
	memcpy(&buf[n], key, key_len);
	n += key_len;
	if (value_len > 0u) {
		memcpy(&buf[n], value, value_len);
		n += value_len;
	}
	crc = settings_crc32(0, buf, n);
	buf[n++] = (uint8_t)crc;
	buf[n++] = (uint8_t)(crc >> 8);
	buf[n++] = (uint8_t)(crc >> 16);
	buf[n++] = (uint8_t)(crc >> 24);

	ret = agent_fs_write(file, buf, n);
	agent_wipe(buf, n);
	if (ret < 0) {
		return ret;
	}
	return ret == (int)n ? 0 : -EIO;
}

/* Streams every valid record of @p src except @p key into @p dst. */
static int settings_copy_others(struct agent_file *src, struct agent_file *dst, const char *key)
{
	struct settings_record rec;
	int ret;

	while ((ret = settings_read_record(src, &rec)) > 0) {
		if (strcmp(rec.key, key) == 0) {
			continue;
		}
		ret = settings_write_record(dst, rec.key, rec.key_len, rec.value, rec.value_len);
		if (ret != 0) {
			break;
		}
	}
	agent_wipe(&rec, sizeof(rec));
	return ret;
}

/* Writes the file anew with @p key changed (or removed when @p value_len is 0). */
static int settings_rewrite(const char *key, size_t key_len, const void *value, size_t value_len)
{
	struct agent_file *src = NULL;
	struct agent_file *dst = NULL;
	int ret;

	ret = settings_open_source(&src);
	if (ret != 0) {
		return ret;
	}
	ret = posix_fs_open_reserved(&dst, SETTINGS_TMP_PATH,
				     AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC);
	if (ret != 0) {
		goto out;
	}
	ret = agent_fs_write(dst, settings_header, sizeof(settings_header));
	if (ret >= 0) {
		ret = ret == (int)sizeof(settings_header) ? 0 : -EIO;
	}
	if (ret == 0 && src != NULL) {
		ret = settings_copy_others(src, dst, key);
	}
	if (ret == 0 && value_len > 0u) {
		ret = settings_write_record(dst, key, key_len, value, value_len);
	}
	if (ret == 0) {
		ret = agent_fs_sync(dst);
	}
out:
	if (dst != NULL) {
		int err = agent_fs_close(dst);

		ret = ret != 0 ? ret : err;
	}
	if (src != NULL) {
		agent_fs_close(src);
	}
	if (ret == 0) {
		ret = agent_fs_rename(SETTINGS_TMP_PATH, SETTINGS_PATH);
	}
	if (ret != 0 && dst != NULL) {
		/* The original is untouched; the partial copy would only waste flash. */
		agent_fs_unlink(SETTINGS_TMP_PATH);
	}
	return ret;
}

static int settings_change(const char *key, const void *value, size_t len)
{
	uint8_t current[AGENT_SETTINGS_VALUE_MAX];
	int key_len;
	int ret;

	key_len = agent_settings_key_len(key);
	if (key_len < 0) {
		return key_len;
	}
	if (len > AGENT_SETTINGS_VALUE_MAX) {
		return -E2BIG;
	}
	if (value == NULL && len > 0u) {
		return -EINVAL;
	}

	settings_enter();
	if (settings_walk_depth > 0u) {
		/* The walk holds the file open and would visit a moving target. */
		ret = -EBUSY;
		goto out;
	}
	if (!posix_fs_is_mounted()) {
		ret = -ENODEV;
		goto out;
	}
	/* An unchanged value or an absent key needs no rewrite, which spares flash wear. */
	ret = settings_lookup(key, current, sizeof(current));
	if (ret == -ENOENT && len == 0u) {
		ret = 0;
		goto out;
	}
	if (ret >= 0 && (size_t)ret == len && (len == 0u || memcmp(current, value, len) == 0)) {
		ret = 0;
		goto out;
	}
	if (ret < 0 && ret != -ENOENT) {
		goto out;
	}
	ret = settings_rewrite(key, (size_t)key_len, value, len);
out:
	agent_wipe(current, sizeof(current));
	posix_fs_forget_cached();
	settings_leave();
	return ret;
}

int agent_settings_get(const char *key, void *buf, size_t len)
{
	int ret;

	ret = agent_settings_key_len(key);
	if (ret < 0) {
		return ret;
	}
	if (buf == NULL && len > 0u) {
		return -EINVAL;
	}
	settings_enter();
	ret = posix_fs_is_mounted() ? settings_lookup(key, buf, len) : -ENODEV;
	settings_leave();
	return ret;
}

int agent_settings_set(const char *key, const void *value, size_t len)
{
	return settings_change(key, value, len);
}

int agent_settings_delete(const char *key)
{
	return settings_change(key, NULL, 0);
}

int agent_settings_foreach(const char *subtree, agent_settings_visit_fn fn, void *user_data)
{
	struct settings_record rec;
	struct agent_file *file;
	size_t sub_len = 0;
	int ret;

	if (fn == NULL) {
		return -EINVAL;
	}
	ret = agent_settings_subtree_len(subtree);
	if (ret < 0) {
		return ret;
	}
	sub_len = (size_t)ret;

	settings_enter();
	if (!posix_fs_is_mounted()) {
		settings_leave();
		return -ENODEV;
	}
	ret = settings_open_source(&file);
	if (ret != 0 || file == NULL) {
		settings_leave();
		return ret;
	}
	settings_walk_depth++;
	while ((ret = settings_read_record(file, &rec)) > 0) {
		/* Whole path components only: "agent" takes "agent/x", not "agents/x". */
		if (sub_len > 0u &&
		    (strncmp(rec.key, subtree, sub_len) != 0 || rec.key[sub_len] != '/')) {
			continue;
		}
		if (fn(rec.key, rec.value_len, user_data) != 0) {
			ret = 0;
			break;
		}
	}
	settings_walk_depth--;
	agent_fs_close(file);
	agent_wipe(&rec, sizeof(rec));
	settings_leave();
	return ret;
}

bool agent_settings_is_store_path(const char *path)
{
	/* SETTINGS_TMP_PATH starts with SETTINGS_PATH, so both are covered; and the flash image
	 * file that holds them, when the SD folder reaches it (fs_sd.c never serves it). */
	return agent_settings_path_in_store(path, SETTINGS_PATH) || posix_sd_is_flash_image(path);
}
