/*
 * Verified SD overrides of the reference pages (reference_sd.h). The page is read once into
 * a pool block, hashed there and served from there, so what was checked is what is shown:
 * the card cannot change it between the check and the use.
 */
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)

#include "reference_sd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"
#include "utf8.h"

#define MARKER	   "## Contract"
#define MARKER_LEN (sizeof(MARKER) - 1u)
/* "/lfs/.agent/man/" + a topic (31) + ".sha256" */
#define PATH_MAX_LEN 63

_Static_assert(REFERENCE_OVERRIDE_MAX == 8192u && REFERENCE_CONTRACT_MAX == 1024u,
	       "reference_override_why() names the bounds");

/*
 * One block: a page is consumed before the next is loaded (man, or one result at a time).
 * The pool is made at boot (reference_sd_init() from agent_init()), before the shell thread
 * (man) and the worker (firmware_reference) can both reach it: made on first use by either,
 * two at once could register two pools over the one buffer.
 */
static uint8_t page_buffer[REFERENCE_OVERRIDE_MAX] AGENT_PSRAM_ATTR;
static struct agent_pool *page_pool;

int reference_sd_init(void)
{
	if (page_pool != NULL) {
		return 0;
	}
	return agent_pool_init(&page_pool, "man", page_buffer, sizeof(page_buffer), 1,
			       AGENT_MEM_PSRAM);
}

static void *block_alloc(void)
{
	return page_pool != NULL ? agent_pool_alloc(page_pool) : NULL;
}

const char *reference_override_why(enum reference_override_status status)
{
	switch (status) {
	case REFERENCE_OVERRIDE_UNLISTED:
		return "no digest is recorded for it on the device";
	case REFERENCE_OVERRIDE_MISMATCH:
		return "its SHA-256 is not the one recorded when it was installed";
	case REFERENCE_OVERRIDE_TOO_LARGE:
		return "it is larger than 8192 bytes";
	case REFERENCE_OVERRIDE_MALFORMED:
		return "it is not a page (body, a '## Contract' line, a contract of at most 1024 "
		       "bytes; UTF-8 without control characters)";
	case REFERENCE_OVERRIDE_UNREADABLE:
		return "it could not be read";
	default:
		return "";
	}
}

/* ---- the page's text ------------------------------------------------------------------------ */

/* UTF-8 with no C0 control but the line feed, no DEL and no C1 control (U+0080..U+009F). */
static bool text_is_clean(const char *text, size_t len)
{
	size_t replaced = 0;

	for (size_t i = 0; i < len; i++) {
		uint8_t c = (uint8_t)text[i];

		if ((c < 0x20u && c != '\n') || c == 0x7Fu ||
		    (c == 0xC2u && i + 1 < len && (uint8_t)text[i + 1] < 0xA0u)) {
			return false;
		}
	}
	(void)utf8_repair(text, len, NULL, &replaced);
	return replaced == 0;
}

static void trim_newlines(const char **text, size_t *len)
{
	while (*len > 0 && (*text)[0] == '\n') {
		(*text)++;
		(*len)--;
	}
	while (*len > 0 && (*text)[*len - 1] == '\n') {
		(*len)--;
	}
}

int reference_override_check(const char *text, size_t len, const char **body, size_t *body_len,
			     const char **contract, size_t *contract_len)
{
	size_t at = 0;

	if (!text_is_clean(text, len)) {
		return -EINVAL;
	}
	/* The first line that is exactly the marker. */
	for (;;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t line_end = nl != NULL ? (size_t)(nl - text) : len;

		if (line_end - at == MARKER_LEN && memcmp(text + at, MARKER, MARKER_LEN) == 0) {
			break;
		}
		if (nl == NULL) {
			return -EINVAL;
		}
		at = line_end + 1;
	}
	*body = text;
	*body_len = at;
	*contract = text + at + MARKER_LEN;
	*contract_len = len - at - MARKER_LEN;
	trim_newlines(body, body_len);
	trim_newlines(contract, contract_len);
	if (*body_len == 0 || *contract_len == 0 || *contract_len > REFERENCE_CONTRACT_MAX) {
		return -EINVAL;
	}
	return 0;
}

/* ---- digests -------------------------------------------------------------------------------- */

static int digest_path(char *out, const char *topic, const char *ext)
{
	int n = snprintf(out, PATH_MAX_LEN + 1, REFERENCE_DIGEST_DIR "/%s%s", topic, ext);

	return n > 0 && n <= PATH_MAX_LEN && topic[0] != '\0' && strchr(topic, '/') == NULL
		       ? 0
		       : -EINVAL;
}

int reference_digest_get(const char *topic, uint8_t digest[SHA256_DIGEST_BYTES])
{
	char path[PATH_MAX_LEN + 1];
	char text[REFERENCE_DIGEST_FILE_LEN + 1];
	struct agent_file *file;
	int n;
	int err = digest_path(path, topic, ".sha256");

	if (err != 0) {
		return err;
	}
	err = agent_fs_open(&file, path, AGENT_FS_O_READ);
	if (err != 0) {
		return err;
	}
	n = agent_fs_read(file, text, sizeof(text));
	(void)agent_fs_close(file);
	if (n < 0) {
		return n;
	}
	if ((size_t)n != REFERENCE_DIGEST_FILE_LEN || text[SHA256_HEX_LEN] != '\n' ||
	    sha256_from_hex(text, SHA256_HEX_LEN, digest) != 0) {
		return -EBADMSG;
	}
	return 0;
}

static int mkdir_once(const char *path)
{
	int err = agent_fs_mkdir(path);

	return err == -EEXIST ? 0 : err;
}

int reference_digest_set(const char *topic, const uint8_t digest[SHA256_DIGEST_BYTES])
{
	char path[PATH_MAX_LEN + 1];
	char tmp[PATH_MAX_LEN + 1];
	char text[SHA256_HEX_LEN + 2];
	struct agent_file *file;
	int err = digest_path(path, topic, ".sha256");

	if (err == 0) {
		err = digest_path(tmp, topic, ".tmp");
	}
	if (err == 0) {
		err = mkdir_once("/lfs/.agent");
	}
	if (err == 0) {
		err = mkdir_once(REFERENCE_DIGEST_DIR);
	}
	if (err != 0) {
		return err;
	}
	sha256_hex(digest, text);
	text[SHA256_HEX_LEN] = '\n';
	err = agent_fs_open(&file, tmp, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC);
	if (err != 0) {
		return err;
	}
	err = agent_fs_write(file, text, REFERENCE_DIGEST_FILE_LEN);
	err = err == (int)REFERENCE_DIGEST_FILE_LEN ? agent_fs_sync(file) : (err < 0 ? err : -EIO);
	if (agent_fs_close(file) != 0 && err == 0) {
		err = -EIO;
	}
	if (err == 0) {
		err = agent_fs_rename(tmp, path); /* littlefs: the old digest or the new, never half */
	}
	if (err != 0) {
		(void)agent_fs_unlink(tmp);
	}
	return err;
}

int reference_digest_clear(const char *topic)
{
	char path[PATH_MAX_LEN + 1];
	int err = digest_path(path, topic, ".sha256");

	return err != 0 ? err : agent_fs_unlink(path);
}

/* ---- loading -------------------------------------------------------------------------------- */

/* Read the whole file into @p buf; its length, -EFBIG past REFERENCE_OVERRIDE_MAX, or an error. */
static int read_page(const char *path, uint8_t *buf)
{
	struct agent_file *file;
	size_t len = 0;
	int err = agent_fs_open(&file, path, AGENT_FS_O_READ);

	if (err != 0) {
		return err;
	}
	for (;;) {
		uint8_t extra;
		int n = len < REFERENCE_OVERRIDE_MAX
				? agent_fs_read(file, buf + len, REFERENCE_OVERRIDE_MAX - len)
				: agent_fs_read(file, &extra, 1); /* one byte more: the file grew */

		if (n < 0) {
			err = n;
			break;
		}
		if (n == 0) {
			break;
		}
		if (len == REFERENCE_OVERRIDE_MAX) {
			err = -EFBIG;
			break;
		}
		len += (size_t)n;
	}
	(void)agent_fs_close(file);
	return err != 0 ? err : (int)len;
}

enum reference_override_status reference_override_load(const struct reference_page *builtin,
						       struct reference_override *ov)
{
	char path[PATH_MAX_LEN + 1];
	uint8_t want[SHA256_DIGEST_BYTES];
	uint8_t got[SHA256_DIGEST_BYTES];
	struct agent_dirent entry;
	const char *body;
	const char *contract;
	size_t body_len;
	size_t contract_len;
	int len;
	int err;

	memset(ov, 0, sizeof(*ov));
	if (!agent_fs_mounted("/SD:")) {
		return REFERENCE_OVERRIDE_NONE;
	}
	if (snprintf(path, sizeof(path), REFERENCE_SD_DIR "/%s.md", builtin->topic) >=
	    (int)sizeof(path)) {
		return REFERENCE_OVERRIDE_NONE; /* no topic is that long */
	}
	err = agent_fs_stat(path, &entry);
	if (err == -ENOENT) {
		return REFERENCE_OVERRIDE_NONE;
	}
	if (err != 0) {
		return REFERENCE_OVERRIDE_UNREADABLE;
	}
	if (entry.type != AGENT_FS_FILE) {
		return REFERENCE_OVERRIDE_MALFORMED;
	}
	if (reference_digest_get(builtin->topic, want) != 0) {
		return REFERENCE_OVERRIDE_UNLISTED;
	}
	if (entry.size > REFERENCE_OVERRIDE_MAX) {
		return REFERENCE_OVERRIDE_TOO_LARGE;
	}
	ov->block = block_alloc();
	if (ov->block == NULL) {
		return REFERENCE_OVERRIDE_UNREADABLE;
	}
	len = read_page(path, ov->block);
	if (len < 0) {
		reference_override_release(ov);
		return len == -EFBIG ? REFERENCE_OVERRIDE_TOO_LARGE : REFERENCE_OVERRIDE_UNREADABLE;
	}
	sha256_digest(ov->block, (size_t)len, got);
	if (memcmp(got, want, sizeof(got)) != 0) {
		reference_override_release(ov);
		return REFERENCE_OVERRIDE_MISMATCH;
	}
	if (reference_override_check(ov->block, (size_t)len, &body, &body_len, &contract,
				     &contract_len) != 0) {
		reference_override_release(ov);
		return REFERENCE_OVERRIDE_MALFORMED;
	}
	ov->page = *builtin;
	ov->page.codec = NULL; /* the card's text as it is, not packed */
	ov->page.body = body;
	ov->page.body_len = (uint16_t)body_len;
	ov->page.contract = contract;
	ov->page.contract_len = (uint16_t)contract_len;
	return REFERENCE_OVERRIDE_VERIFIED;
}

void reference_override_release(struct reference_override *ov)
{
	if (ov->block != NULL) {
		(void)agent_pool_free(page_pool, ov->block);
		ov->block = NULL;
	}
	memset(&ov->page, 0, sizeof(ov->page));
}

#endif /* CONFIG_AGENT_TOOLS_REFERENCE */
