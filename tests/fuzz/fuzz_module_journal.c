/*
 * libFuzzer target for the module journal's replay (app/src/modules/module_journal.c;
 * docs/modules.md "The journal"), the part that reads what flash holds and trusts none of
 * it. The input's first byte chooses which imports the callbacks skip (import_begin
 * returning NULL); the rest is the journal file. The port's file API is replaced here by one
 * in memory (the journal and its temporary file), so every input is replayed from scratch.
 *
 * Checked: the replay succeeds; every record it hands over is within the bounds; each
 * import_begin is followed by one import_end; an import reported good has the digest of the
 * text the journal wrote at import_begin's pointer; the file afterwards is the input cut at
 * the reported size (unchanged when nothing was incomplete); a second replay finds nothing
 * incomplete and applies the same operations; an append and a compaction follow and replay.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "module_journal.h"
#include "sha256.h"

#define FILE_MAX     (CONFIG_AGENT_MODULE_JOURNAL_BYTES + 256)
#define HEADER_BYTES 12u
#define REMOVE_Z     49u /* a REMOVE of "z": 44 + 1 + 4 bytes */

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_module_journal: %s:%d: %s\n", __FILE__, __LINE__,  \
				#cond);                                                          \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* ---- the port's file API, in memory ------------------------------------------------------- */

#define MEM_FS_FILES      2 /* the journal and its temporary file */
#define MEM_FS_HANDLES    2 /* the journal never holds more than two files open */
#define MEM_FS_CAN_CREATE dir_exists
#define MEM_FS_STRICT     1

static bool dir_exists;

#include "mem_fs.h"

bool agent_fs_mounted(const char *mount_point)
{
	return strcmp(mount_point, "/lfs") == 0;
}

int agent_fs_mkdir(const char *path)
{
	CHECK(strcmp(path, MODULE_JOURNAL_DIR) == 0);
	if (dir_exists) {
		return -EEXIST;
	}
	dir_exists = true;
	return 0;
}

/* ---- the replay's callbacks --------------------------------------------------------------- */

struct transcript {
	uint8_t skip_mask; /* import i (mod 8) is skipped when bit i is set */
	uint32_t imports;  /* import_begin calls */
	uint32_t applied;  /* good records, skipped imports included */
	bool open;
	struct module_journal_record began;
	struct sha256 ops; /* every operation applied, in order */
	uint8_t text[CONFIG_AGENT_CATALOG_BYTES];
};

static struct transcript first;
static struct transcript second;

static void record_valid(const struct module_journal_record *rec)
{
	size_t len = strlen(rec->name);

	CHECK(len >= 1u && len <= MODULE_NAME_MAX);
	if (rec->type == MODULE_JOURNAL_IMPORT) {
		CHECK((unsigned int)rec->kind < MODULE_KIND_COUNT);
		CHECK(rec->manifest_len <= CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
		CHECK((uint64_t)rec->manifest_len + rec->body_len >= 1u);
		CHECK((uint64_t)rec->manifest_len + rec->body_len <= CONFIG_AGENT_CATALOG_BYTES);
	} else {
		CHECK(rec->type == MODULE_JOURNAL_REMOVE);
	}
}

static void *on_begin(void *user, const struct module_journal_record *rec)
{
	struct transcript *t = user;
	bool skip = (t->skip_mask >> (t->imports % 8u)) & 1u;

	CHECK(!t->open);
	record_valid(rec);
	CHECK(rec->type == MODULE_JOURNAL_IMPORT);
	t->open = true;
	t->began = *rec;
	t->imports++;
	if (skip) {
		return NULL;
	}
	memset(t->text, 0xa5, rec->manifest_len + rec->body_len);
	return t->text;
}

static void on_end(void *user, const struct module_journal_record *rec, bool ok)
{
	struct transcript *t = user;
	bool skipped = (t->skip_mask >> ((t->imports - 1u) % 8u)) & 1u;
	uint8_t digest[MODULE_DIGEST_LEN];

	CHECK(t->open);
	CHECK(memcmp(rec, &t->began, sizeof(*rec)) == 0);
	t->open = false;
	if (!ok) {
		return;
	}
	sha256_update(&t->ops, rec, sizeof(*rec));
	t->applied++;
	if (!skipped) {
		sha256_digest(t->text, rec->manifest_len + rec->body_len, digest);
		CHECK(memcmp(digest, rec->digest, sizeof(digest)) == 0);
	}
}

static void on_remove(void *user, const struct module_journal_record *rec)
{
	struct transcript *t = user;

	CHECK(!t->open);
	record_valid(rec);
	sha256_update(&t->ops, rec, sizeof(*rec));
	t->applied++;
}

static const struct module_journal_replay_ops ops = {on_begin, on_end, on_remove};

static int replay(struct transcript *t, uint8_t skip_mask, struct module_journal_report *report,
		  uint8_t digest[MODULE_DIGEST_LEN])
{
	int err;

	t->skip_mask = skip_mask;
	t->imports = 0;
	t->applied = 0;
	t->open = false;
	sha256_init(&t->ops);
	err = module_journal_replay(&ops, t, report);
	CHECK(!t->open);
	sha256_final(&t->ops, digest);
	return err;
}

static bool no_live(void *user, size_t i, struct module_journal_record *rec, const void **manifest,
		    const void **body)
{
	(void)user;
	(void)i;
	(void)rec;
	(void)manifest;
	(void)body;
	return false;
}

static uint8_t input_copy[FILE_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct module_journal_report r1;
	struct module_journal_report r2;
	uint8_t d1[MODULE_DIGEST_LEN];
	uint8_t d2[MODULE_DIGEST_LEN];
	uint8_t skip;
	size_t len;

	if (size == 0u) {
		return 0;
	}
	skip = data[0];
	len = size - 1u;
	if (len > FILE_MAX) {
		len = FILE_MAX;
	}
	memcpy(input_copy, data + 1, len);
	memset(handles, 0, sizeof(handles));
	if (files[0].path[0] == '\0') { /* files[0] the journal, files[1] its temporary file */
		(void)find(MODULE_JOURNAL_PATH, true);
		(void)find(MODULE_JOURNAL_PATH ".tmp", true);
	}
	dir_exists = true;
	files[0].exists = true;
	files[0].size = (uint32_t)len;
	memcpy(files[0].data, input_copy, len);
	/* A stale temporary file on every other input. */
	files[1].exists = (skip & 1u) != 0u;
	files[1].size = 0;

	CHECK(replay(&first, skip, &r1, d1) == 0);
	CHECK(!files[1].exists);
	CHECK(files[0].exists && files[0].size == r1.bytes);
	CHECK(r1.bytes <= len);
	CHECK(memcmp(files[0].data, input_copy, r1.bytes) == 0);
	CHECK(r1.incomplete || r1.bytes == len);
	CHECK(r1.records == first.applied);
	CHECK(strlen(r1.incomplete_name) <= MODULE_NAME_MAX);
	CHECK(r1.incomplete || r1.incomplete_name[0] == '\0');

	/* Cleared: the same again, nothing incomplete, nothing written. */
	CHECK(replay(&second, skip, &r2, d2) == 0);
	CHECK(!r2.incomplete);
	CHECK(r2.records == r1.records && r2.bytes == r1.bytes);
	CHECK(memcmp(d1, d2, sizeof(d1)) == 0);
	CHECK(files[0].size == r1.bytes);

	/* Appends follow the last good record (a full journal refuses). */
	int err = module_journal_append_remove("z");

	CHECK(err == 0 || (err == -ENOSPC && (r1.bytes > 0u ? r1.bytes : HEADER_BYTES) + REMOVE_Z >
						     CONFIG_AGENT_MODULE_JOURNAL_BYTES));
	CHECK(replay(&second, skip, &r2, d2) == 0);
	CHECK(!r2.incomplete);
	CHECK(r2.records == r1.records + (err == 0 ? 1u : 0u));

	/* A compaction with nothing live leaves the header alone. */
	CHECK(module_journal_compact(no_live, NULL) == 0);
	CHECK(replay(&second, skip, &r2, d2) == 0);
	CHECK(!r2.incomplete && r2.records == 0u && r2.bytes == HEADER_BYTES);
	return 0;
}
