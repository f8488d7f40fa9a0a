/*
 * The module journal (module_journal.h; docs/modules.md "The journal") over a real LittleFS
 * image at /lfs, replayed into a model catalog (module_journal_model.h): the documented
 * bytes; append and replay of IMPORT and REMOVE; a journal cut at every byte; every byte of
 * it damaged; values out of range (written with valid CRCs by the test's own encoder); the
 * size bound at N and N+1; compaction; a stale temporary file; no /lfs; and a fault injected
 * at every filesystem call of an append, a compaction and a replay.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "module_journal.h"
#include "sha256.h"

#include "flash_fixture.h"
#include "fs_bytes.h"
#include "module_journal_model.h"

#define JOURNAL_MAX	CONFIG_AGENT_MODULE_JOURNAL_BYTES
#define MANIFEST_MAX	CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN
#define CATALOG		CONFIG_AGENT_CATALOG_BYTES
#define TMP_PATH	MODULE_JOURNAL_PATH ".tmp"
#define HEADER		12u
#define HEAD		44u
#define REC(name, text) (HEAD + (name) + (text) + 4u) /* a record's size */

static struct model got;
static struct model want;
static struct model aux; /* a third state */
static uint8_t file_buf[JOURNAL_MAX + 64];
static uint8_t saved_buf[JOURNAL_MAX + 64];

static int setup(void **state)
{
	(void)state;
	posix_fs_fail_after(-1);
	model_clear(&got);
	model_clear(&want);
	return flash_fixture_setup("test_module_journal");
}

static int teardown(void **state)
{
	(void)state;
	posix_fs_fail_after(-1);
	(void)posix_flash_unmount();
	unlink(image_path);
	return rmdir(scratch_dir);
}

/* ---- files -------------------------------------------------------------------------------- */

static void write_file(const char *path, const uint8_t *buf, size_t len)
{
	struct agent_file *f;

	(void)agent_fs_mkdir(MODULE_JOURNAL_DIR);
	assert_int_equal(agent_fs_open(&f, path, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE |
							 AGENT_FS_O_TRUNC),
			 0);
	assert_int_equal(agent_fs_write(f, buf, len), (int)len);
	assert_int_equal(agent_fs_close(f), 0);
}

static bool file_exists(const char *path)
{
	struct agent_dirent ent;

	return agent_fs_stat(path, &ent) == 0;
}

/* ---- the test's own encoder (docs/modules.md "The journal") ------------------------------- */

static uint32_t crc_table[256];

/* CRC-32/ISO-HDLC by table, a second implementation beside the journal's. */
static uint32_t test_crc32(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xffffffffu;

	if (crc_table[1] == 0u) {
		for (uint32_t i = 0; i < 256u; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++) {
				c = (c & 1u) != 0u ? 0xedb88320u ^ (c >> 1) : c >> 1;
			}
			crc_table[i] = c;
		}
	}
	while (len-- > 0u) {
		crc = crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
	}
	return crc ^ 0xffffffffu;
}

static void le32(uint8_t *out, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		out[i] = (uint8_t)(v >> (8 * i));
	}
}

static size_t enc_header(uint8_t *out)
{
	memcpy(out, "AMJ1\x01\x0c\x00\x00", 8);
	le32(out + 8, test_crc32(out, 8));
	return HEADER;
}

/* Any record, valid or not, with a CRC that matches it. */
struct raw_rec {
	uint8_t type, kind, name_len, reserved;
	uint32_t manifest_len, body_len;
	uint8_t digest[32];
	const char *name;
	const uint8_t *text;
	size_t text_len; /* bytes of text actually written */
};

static size_t enc_record(uint8_t *out, const struct raw_rec *r)
{
	size_t n = 0;

	out[0] = r->type;
	out[1] = r->kind;
	out[2] = r->name_len;
	out[3] = r->reserved;
	le32(out + 4, r->manifest_len);
	le32(out + 8, r->body_len);
	memcpy(out + 12, r->digest, 32);
	n = HEAD;
	memcpy(out + n, r->name, r->name_len);
	n += r->name_len;
	if (r->text_len > 0u) {
		memcpy(out + n, r->text, r->text_len);
		n += r->text_len;
	}
	le32(out + n, test_crc32(out, n));
	return n + 4u;
}

/* A good IMPORT record of make_module(name, kind, m, b, seed); *@p rec and @p text set. */
static size_t enc_import(uint8_t *out, struct module_journal_record *rec, uint8_t *text,
			 const char *name, enum module_kind kind, uint32_t m, uint32_t b,
			 unsigned int seed)
{
	struct raw_rec r = {.type = 1, .kind = (uint8_t)kind, .name = name};

	make_module(rec, text, name, kind, m, b, seed);
	r.name_len = (uint8_t)strlen(name);
	r.manifest_len = m;
	r.body_len = b;
	memcpy(r.digest, rec->digest, 32);
	r.text = text;
	r.text_len = (size_t)m + b;
	return enc_record(out, &r);
}

/* ---- the documented example --------------------------------------------------------------- */

/* docs/modules.md "Example": an IMPORT of the skill "hi" (SKILL.md only), then its REMOVE. */
static const uint8_t doc_example[161] = {
	0x41, 0x4d, 0x4a, 0x31, 0x01, 0x0c, 0x00, 0x00, 0x9e, 0x2f, 0xed, 0x26, 0x01, 0x01, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x31, 0x00, 0x00, 0x00, 0x41, 0xfb, 0xfe, 0x38, 0x3b, 0xce,
	0xbe, 0x5b, 0x32, 0x90, 0x51, 0x76, 0x1e, 0xdf, 0xd8, 0x77, 0x32, 0xb3, 0xf1, 0x56, 0x9f,
	0xf3, 0x4b, 0x41, 0x8a, 0xcf, 0xa1, 0xed, 0xdf, 0x7b, 0xf3, 0x8d, 0x68, 0x69, 0x2d, 0x2d,
	0x2d, 0x0a, 0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0x68, 0x69, 0x0a, 0x64, 0x65, 0x73, 0x63,
	0x72, 0x69, 0x70, 0x74, 0x69, 0x6f, 0x6e, 0x3a, 0x20, 0x47, 0x72, 0x65, 0x65, 0x74, 0x73,
	0x2e, 0x0a, 0x2d, 0x2d, 0x2d, 0x0a, 0x53, 0x61, 0x79, 0x20, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
	0x2e, 0x0a, 0x2b, 0x0d, 0xcf, 0x26, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x68, 0x69, 0x5a, 0x77, 0xf6, 0x31,
};

static void documented_example(void **state)
{
	static const char body[] = "---\nname: hi\ndescription: Greets.\n---\nSay hello.\n";
	struct module_journal_record rec = {.kind = MODULE_KIND_SKILL, .name = "hi"};
	struct module_journal_report report;
	long len;

	(void)state;
	rec.body_len = (uint32_t)strlen(body);
	sha256_digest(body, rec.body_len, rec.digest);
	assert_int_equal(module_journal_append_import(&rec, NULL, body), 0);
	assert_int_equal(module_journal_size(), 12 + 99);
	assert_int_equal(model_replay(&got, &report), 0);
	assert_int_equal(got.count, 1);
	assert_int_equal(got.e[0].kind, MODULE_KIND_SKILL);
	assert_int_equal(got.e[0].manifest_len, 0);
	assert_memory_equal(got.e[0].text, body, rec.body_len);
	assert_int_equal(module_journal_append_remove("hi"), 0);
	len = file_bytes(MODULE_JOURNAL_PATH, file_buf, sizeof(file_buf));
	assert_int_equal(len, sizeof(doc_example));
	assert_memory_equal(file_buf, doc_example, sizeof(doc_example));
	/* The test's encoder writes the same bytes from the layout the page gives. */
	{
		struct raw_rec imp = {.type = 1, .kind = 1, .name_len = 2, .name = "hi",
				      .body_len = rec.body_len, .text = (const uint8_t *)body,
				      .text_len = rec.body_len};
		struct raw_rec rem = {.type = 2, .name_len = 2, .name = "hi"};
		size_t n;

		memcpy(imp.digest, rec.digest, 32);
		n = enc_header(saved_buf);
		n += enc_record(saved_buf + n, &imp);
		n += enc_record(saved_buf + n, &rem);
		assert_int_equal(n, sizeof(doc_example));
		assert_memory_equal(saved_buf, doc_example, n);
	}
	assert_int_equal(model_replay(&got, &report), 0);
	assert_int_equal(got.count, 0);
	assert_int_equal(report.records, 2);
	assert_int_equal(report.bytes, sizeof(doc_example));
	assert_false(report.incomplete);
}

/* ---- append and replay -------------------------------------------------------------------- */

static void round_trip(void **state)
{
	struct module_journal_report report;
	uint32_t size = HEADER;
	long len;

	(void)state;
	assert_false(file_exists(MODULE_JOURNAL_DIR)); /* the first append makes it */
	assert_int_equal(model_append_import(&want, "conductor", MODULE_KIND_ROLE, 120, 900, 1), 0);
	assert_int_equal(model_append_import(&want, "arithmetic", MODULE_KIND_SKILL, 0, 300, 2), 0);
	assert_int_equal(model_append_import(&want, "calc", MODULE_KIND_TOOL, 200, 1500, 3), 0);
	assert_int_equal(model_append_remove(&want, "arithmetic"), 0);
	assert_int_equal(model_append_import(&want, "conductor", MODULE_KIND_ROLE, 100, 700, 4), 0);
	/* A REMOVE of a name never imported is recorded; replaying it changes nothing. */
	assert_int_equal(model_append_remove(&want, "absent"), 0);
	size += REC(9, 1020) + REC(10, 300) + REC(4, 1700) + REC(10, 0) + REC(9, 800) + REC(6, 0);
	assert_int_equal(module_journal_size(), size);
	assert_int_equal(want.count, 2);
	assert_string_equal(want.e[0].name, "calc");
	assert_string_equal(want.e[1].name, "conductor");

	assert_int_equal(model_replay(&got, &report), 0);
	assert_true(model_equal(&got, &want));
	assert_int_equal(report.records, 6);
	assert_int_equal(report.bytes, size);
	assert_false(report.incomplete);
	assert_string_equal(report.incomplete_name, "");
	assert_int_equal(got.begins, 4);
	assert_int_equal(got.ends_ok, 4);
	assert_int_equal(got.ends_bad, 0);
	assert_int_equal(got.removes, 2);

	/* Replaying a good journal writes nothing. */
	len = file_bytes(MODULE_JOURNAL_PATH, saved_buf, sizeof(saved_buf));
	assert_int_equal(model_replay(&got, &report), 0);
	assert_true(model_equal(&got, &want));
	assert_int_equal(file_bytes(MODULE_JOURNAL_PATH, file_buf, sizeof(file_buf)), len);
	assert_memory_equal(file_buf, saved_buf, (size_t)len);
	/* A null report is allowed. */
	assert_int_equal(model_replay(&got, NULL), 0);
	assert_true(model_equal(&got, &want));
}

static void missing_or_empty_journal(void **state)
{
	struct module_journal_report report;

	(void)state;
	assert_int_equal(module_journal_size(), 0);
	assert_int_equal(model_replay(&got, &report), 0);
	assert_int_equal(report.records, 0);
	assert_int_equal(report.bytes, 0);
	assert_false(report.incomplete);
	assert_false(file_exists(MODULE_JOURNAL_PATH));

	/* An empty file (a cut after its creation, before the first sync) is an empty journal. */
	write_file(MODULE_JOURNAL_PATH, NULL, 0);
	assert_int_equal(model_replay(&got, &report), 0);
	assert_false(report.incomplete);
	assert_int_equal(report.bytes, 0);
	assert_int_equal(model_append_import(&want, "alpha", MODULE_KIND_SKILL, 0, 10, 1), 0);
	assert_int_equal(module_journal_size(), HEADER + REC(5, 10));
	assert_int_equal(model_replay(&got, &report), 0);
	assert_true(model_equal(&got, &want));
	assert_int_equal(report.records, 1);

	/* Bad callbacks. */
	assert_int_equal(module_journal_replay(NULL, &got, &report), -EINVAL);
	{
		struct module_journal_replay_ops ops = model_ops;

		ops.remove = NULL;
		assert_int_equal(module_journal_replay(&ops, &got, &report), -EINVAL);
	}
}

/* A replay that finds @p expect in a journal of @p bytes with nothing incomplete. */
static void check_stable(const struct model *expect, uint32_t bytes)
{
	struct module_journal_report report;

	assert_int_equal(model_replay(&got, &report), 0);
	assert_false(report.incomplete);
	assert_int_equal(report.bytes, bytes);
	assert_int_equal(module_journal_size(), bytes);
	assert_true(model_equal(&got, expect));
}

/* A journal cut at every length: the last good record stands, the cut one is cleared. */
static void cut_at_every_byte(void **state)
{
	static const char *const last_names[] = {"beta", "alpha"};
	struct module_journal_report report;

	(void)state;
	for (int last = 0; last < 2; last++) {
		const char *last_name = last_names[last];
		uint32_t size_a;
		long full;

		(void)agent_fs_unlink(MODULE_JOURNAL_PATH);
		model_clear(&want);
		assert_int_equal(
			model_append_import(&want, "alpha", MODULE_KIND_SKILL, 10, 40, 1), 0);
		size_a = (uint32_t)module_journal_size();
		if (last == 0) {
			assert_int_equal(
				model_append_import(NULL, "beta", MODULE_KIND_TOOL, 20, 60, 2), 0);
		} else {
			assert_int_equal(model_append_remove(NULL, "alpha"), 0);
		}
		full = file_bytes(MODULE_JOURNAL_PATH, saved_buf, sizeof(saved_buf));
		for (long len = 0; len < full; len++) {
			bool in_a = len < (long)size_a;
			uint32_t rec_start = in_a ? HEADER : size_a;
			const char *name = in_a ? "alpha" : last_name;

			write_file(MODULE_JOURNAL_PATH, saved_buf, (size_t)len);
			assert_int_equal(model_replay(&got, &report), 0);
			if (len < (long)HEADER) {
				assert_int_equal(report.incomplete, len > 0);
				assert_int_equal(report.bytes, 0);
				assert_int_equal(got.count, 0);
				assert_string_equal(report.incomplete_name, "");
			} else {
				assert_int_equal(report.incomplete, len != (long)rec_start);
				assert_int_equal(report.bytes, rec_start);
				assert_int_equal(got.count, in_a ? 0 : 1);
				if (!in_a) {
					assert_true(model_equal(&got, &want));
				}
				if (len >= (long)(rec_start + HEAD + strlen(name))) {
					assert_string_equal(report.incomplete_name, name);
				} else {
					assert_string_equal(report.incomplete_name, "");
				}
			}
			assert_int_equal(module_journal_size(), report.bytes);
			/* Cleared: the next replay finds nothing incomplete... */
			model_clear(&aux);
			if (!in_a) {
				model_copy(&aux, &want);
			}
			check_stable(&aux, report.bytes);
			/* ...and the next append follows the last good record. */
			assert_int_equal(
				model_append_import(&aux, "gamma", MODULE_KIND_ROLE, 5, 5, 9), 0);
			check_stable(&aux, (report.bytes > 0 ? report.bytes : HEADER) + REC(5, 10));
		}
	}
}

/* Every byte of a journal damaged in turn: the damaged record and those after it are cut. */
static void damage_every_byte(void **state)
{
	static struct model prefix[4];
	static const uint8_t masks[] = {0x01, 0x80, 0xff};
	static const char *const names[] = {"alpha", "zed", "beta"};
	struct module_journal_report report;
	uint32_t starts[4];
	long full;

	(void)state;
	model_clear(&prefix[0]);
	starts[0] = HEADER;
	assert_int_equal(model_append_import(&want, "alpha", MODULE_KIND_ROLE, 12, 30, 1), 0);
	model_copy(&prefix[1], &want);
	starts[1] = (uint32_t)module_journal_size();
	assert_int_equal(model_append_remove(&want, "zed"), 0);
	model_copy(&prefix[2], &want);
	starts[2] = (uint32_t)module_journal_size();
	assert_int_equal(model_append_import(&want, "beta", MODULE_KIND_SKILL, 0, 25, 2), 0);
	model_copy(&prefix[3], &want);
	starts[3] = (uint32_t)module_journal_size();
	full = file_bytes(MODULE_JOURNAL_PATH, saved_buf, sizeof(saved_buf));
	assert_int_equal(full, starts[3]);

	for (long p = 0; p < full; p++) {
		int k = -1; /* the damaged record; -1 for the header */

		for (int r = 0; r < 3; r++) {
			if (p >= (long)starts[r] && p < (long)starts[r + 1]) {
				k = r;
			}
		}
		for (size_t m = 0; m < sizeof(masks); m++) {
			memcpy(file_buf, saved_buf, (size_t)full);
			file_buf[p] ^= masks[m];
			write_file(MODULE_JOURNAL_PATH, file_buf, (size_t)full);
			assert_int_equal(model_replay(&got, &report), 0);
			assert_true(report.incomplete);
			if (k < 0) {
				assert_int_equal(report.bytes, 0);
				assert_int_equal(got.count, 0);
				check_stable(&prefix[0], 0);
				continue;
			}
			assert_int_equal(report.records, k);
			assert_int_equal(report.bytes, starts[k]);
			assert_true(model_equal(&got, &prefix[k]));
			if (p >= (long)(starts[k] + HEAD + strlen(names[k]))) {
				/* The head and name were intact: the name is reported. */
				assert_string_equal(report.incomplete_name, names[k]);
			}
			check_stable(&prefix[k], starts[k]);
		}
	}
}

/* Values out of range, each in a record whose CRC matches: refused as damaged. */
struct bad_case {
	const char *what;
	struct raw_rec r;
	bool begins;	  /* import_begin is called (the head was in range) */
	const char *name; /* reported */
};

static uint8_t big_text[CATALOG + 2];

static void write_with(const struct raw_rec *x, uint32_t *size_a)
{
	struct module_journal_record rec;
	static uint8_t text[64];
	size_t n = enc_header(file_buf);

	n += enc_import(file_buf + n, &rec, text, "alpha", MODULE_KIND_SKILL, 4, 20, 1);
	*size_a = (uint32_t)n;
	n += enc_record(file_buf + n, x);
	/* A good record after it is lost with it. */
	n += enc_import(file_buf + n, &rec, text, "omega", MODULE_KIND_SKILL, 4, 20, 3);
	assert_true(n <= sizeof(file_buf));
	write_file(MODULE_JOURNAL_PATH, file_buf, n);
	model_clear(&want);
	make_module(&rec, text, "alpha", MODULE_KIND_SKILL, 4, 20, 1);
	model_install(&want, &rec, text);
}

static struct raw_rec good_import(const char *name, uint32_t m, uint32_t b)
{
	struct module_journal_record rec;
	struct raw_rec r = {.type = 1, .kind = 1, .name = name};

	make_module(&rec, big_text, name, MODULE_KIND_SKILL, m, b, 7);
	r.name_len = (uint8_t)strlen(name);
	r.manifest_len = m;
	r.body_len = b;
	memcpy(r.digest, rec.digest, 32);
	r.text = big_text;
	r.text_len = (size_t)m + b;
	return r;
}

static void out_of_range_refused(void **state)
{
	static const char name32[] = "abcdefghijklmnopqrstuvwxyz012345";
	static const char name31[] = "abcdefghijklmnopqrstuvwxyz01234";
	struct module_journal_report report;
	struct bad_case cases[24];
	size_t n = 0;
	uint32_t size_a;

	(void)state;
	cases[n] = (struct bad_case){"type 0", good_import("x", 2, 2), false, ""};
	cases[n++].r.type = 0;
	cases[n] = (struct bad_case){"type 3", good_import("x", 2, 2), false, ""};
	cases[n++].r.type = 3;
	cases[n] = (struct bad_case){"reserved byte", good_import("x", 2, 2), false, ""};
	cases[n++].r.reserved = 1;
	cases[n] = (struct bad_case){"kind 3", good_import("x", 2, 2), false, ""};
	cases[n++].r.kind = MODULE_KIND_COUNT;
	cases[n] = (struct bad_case){"name length 0", good_import("x", 2, 2), false, ""};
	cases[n++].r.name_len = 0;
	cases[n++] = (struct bad_case){"name length 32", good_import(name32, 2, 2), false, ""};
	cases[n++] = (struct bad_case){"upper-case name", good_import("Bad", 2, 2), false, ""};
	cases[n++] = (struct bad_case){"digit first", good_import("9a", 2, 2), false, ""};
	cases[n++] = (struct bad_case){"manifest N+1", good_import("x", MANIFEST_MAX + 1, 0),
				       false, ""};
	cases[n++] = (struct bad_case){"body N+1", good_import("x", 0, CATALOG + 1), false, ""};
	cases[n++] = (struct bad_case){"text N+1", good_import("x", MANIFEST_MAX,
								CATALOG - MANIFEST_MAX + 1),
				       false, ""};
	cases[n++] = (struct bad_case){"no text", good_import("x", 0, 0), false, ""};
	cases[n] = (struct bad_case){"lengths 2^32-1", good_import("x", 0, 0), false, ""};
	cases[n].r.manifest_len = UINT32_MAX;
	cases[n++].r.body_len = UINT32_MAX;
	cases[n] = (struct bad_case){"wrong digest", good_import("x", 3, 3), true, "x"};
	cases[n++].r.digest[5] ^= 1u;
	cases[n] = (struct bad_case){"remove with manifest",
				     {.type = 2, .name_len = 1, .name = "x"}, false, ""};
	cases[n++].r.manifest_len = 1;
	cases[n] = (struct bad_case){"remove with body", {.type = 2, .name_len = 1, .name = "x"},
				     false, ""};
	cases[n++].r.body_len = 1;
	cases[n] = (struct bad_case){"remove with kind", {.type = 2, .name_len = 1, .name = "x"},
				     false, ""};
	cases[n++].r.kind = 1;
	cases[n] = (struct bad_case){"remove with digest", {.type = 2, .name_len = 1, .name = "x"},
				     false, ""};
	cases[n++].r.digest[31] = 1;
	assert_true(n <= sizeof(cases) / sizeof(cases[0]));

	for (size_t i = 0; i < n; i++) {
		write_with(&cases[i].r, &size_a);
		assert_int_equal(model_replay(&got, &report), 0);
		if (!report.incomplete || !model_equal(&got, &want) || report.bytes != size_a ||
		    got.begins != 1 + (cases[i].begins ? 1 : 0) ||
		    strcmp(report.incomplete_name, cases[i].name) != 0) {
			fail_msg("%s: not refused as damaged (incomplete %d, entries %d, %u bytes, "
				 "%d begins, name '%s')",
				 cases[i].what, report.incomplete, got.count, report.bytes,
				 got.begins, report.incomplete_name);
		}
		assert_int_equal(got.ends_bad, cases[i].begins ? 1 : 0);
		check_stable(&want, size_a);
	}

	/* The bounds themselves are accepted (N). */
	static const struct {
		const char *name;
		uint32_t m, b;
		uint8_t kind;
	} ok[] = {
		{"x", MANIFEST_MAX, CATALOG - MANIFEST_MAX, 1},
		{"x", 0, CATALOG, 1},
		{name31, 1, 0, 0},
		{"a-b_9", 0, 1, 2},
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct raw_rec r = good_import(ok[i].name, ok[i].m, ok[i].b);

		r.kind = ok[i].kind;
		write_with(&r, &size_a);
		assert_int_equal(model_replay(&got, &report), 0);
		assert_false(report.incomplete);
		assert_int_equal(report.records, 3);
		assert_int_equal(got.count, 3);
		assert_string_equal(got.e[1].name, ok[i].name);
		assert_int_equal(got.e[1].kind, ok[i].kind);
		assert_int_equal(got.e[1].manifest_len, ok[i].m);
		assert_int_equal(got.e[1].body_len, ok[i].b);
		assert_memory_equal(got.e[1].text, big_text, (size_t)ok[i].m + ok[i].b);
	}
}

/* What an append refuses (N+1) and accepts (N); only the accepted ones are in the journal. */
static void append_refuses_out_of_range(void **state)
{
	struct module_journal_record rec;
	struct module_journal_report report;
	uint8_t *t = big_text;

	(void)state;
	make_module(&rec, t, "ok", MODULE_KIND_SKILL, MANIFEST_MAX, CATALOG - MANIFEST_MAX, 1);
	assert_int_equal(module_journal_append_import(&rec, t, t + MANIFEST_MAX), 0);
	make_module(&rec, t, "ok", MODULE_KIND_SKILL, MANIFEST_MAX, CATALOG - MANIFEST_MAX + 1, 1);
	assert_int_equal(module_journal_append_import(&rec, t, t + MANIFEST_MAX), -EINVAL);
	make_module(&rec, t, "ok", MODULE_KIND_SKILL, MANIFEST_MAX + 1, 0, 1);
	assert_int_equal(module_journal_append_import(&rec, t, NULL), -EINVAL);
	make_module(&rec, t, "ok", MODULE_KIND_SKILL, 0, CATALOG + 1, 1);
	assert_int_equal(module_journal_append_import(&rec, NULL, t), -EINVAL);
	make_module(&rec, t, "ok", MODULE_KIND_SKILL, 0, 0, 1);
	assert_int_equal(module_journal_append_import(&rec, t, t), -EINVAL);
	make_module(&rec, t, "ok", MODULE_KIND_COUNT, 1, 1, 1);
	assert_int_equal(module_journal_append_import(&rec, t, t + 1), -EINVAL);
	make_module(&rec, t, "ok", MODULE_KIND_ROLE, 1, 1, 1);
	assert_int_equal(module_journal_append_import(&rec, NULL, t + 1), -EINVAL);
	assert_int_equal(module_journal_append_import(&rec, t, NULL), -EINVAL);
	assert_int_equal(module_journal_append_import(NULL, t, t + 1), -EINVAL);
	rec.digest[0] ^= 1u; /* the digest is not that of the text */
	assert_int_equal(module_journal_append_import(&rec, t, t + 1), -EINVAL);
	make_module(&rec, t, "Ok", MODULE_KIND_ROLE, 1, 1, 1);
	assert_int_equal(module_journal_append_import(&rec, t, t + 1), -EINVAL);
	make_module(&rec, t, "", MODULE_KIND_ROLE, 1, 1, 1);
	assert_int_equal(module_journal_append_import(&rec, t, t + 1), -EINVAL);
	make_module(&rec, t, "x", MODULE_KIND_ROLE, 1, 1, 1);
	memset(rec.name, 'a', sizeof(rec.name)); /* 32 letters, no terminator */
	assert_int_equal(module_journal_append_import(&rec, t, t + 1), -EINVAL);
	rec.name[MODULE_NAME_MAX] = '\0'; /* 31: the bound */
	assert_int_equal(module_journal_append_import(&rec, t, t + 1), 0);

	assert_int_equal(module_journal_append_remove(NULL), -EINVAL);
	assert_int_equal(module_journal_append_remove(""), -EINVAL);
	assert_int_equal(module_journal_append_remove("Ok"), -EINVAL);
	assert_int_equal(module_journal_append_remove("abcdefghijklmnopqrstuvwxyz012345"), -EINVAL);
	assert_int_equal(module_journal_append_remove("abcdefghijklmnopqrstuvwxyz01234"), 0);

	assert_int_equal(module_journal_size(),
			 HEADER + REC(2, CATALOG) + REC(31, 2) + REC(31, 0));
	assert_int_equal(model_replay(&got, &report), 0);
	assert_int_equal(report.records, 3);
	assert_false(report.incomplete);
	assert_int_equal(got.count, 2);
	assert_string_equal(got.e[0].name, "ok");
	assert_string_equal(got.e[1].name, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
}

/* An append that reaches CONFIG_AGENT_MODULE_JOURNAL_BYTES exactly is taken; a byte more is not. */
static void size_bound(void **state)
{
	struct module_journal_report report;
	int32_t size = 0;
	uint32_t rest;
	long before;

	(void)state;
	while (JOURNAL_MAX - (size > 0 ? size : 0) > (int32_t)REC(5, CATALOG)) {
		assert_int_equal(model_append_import(&want, "filler", MODULE_KIND_SKILL, 0,
						     CATALOG / 2, (unsigned int)size),
				 0);
		size = module_journal_size();
	}
	rest = (uint32_t)(JOURNAL_MAX - size) - REC(5, 0); /* the text that fills it exactly */
	assert_true(rest >= 1u && rest <= CATALOG);
	before = file_bytes(MODULE_JOURNAL_PATH, saved_buf, sizeof(saved_buf));
	/* N+1 */
	assert_int_equal(model_append_import(&want, "exact", MODULE_KIND_SKILL, 0, rest + 1, 1),
			 -ENOSPC);
	assert_int_equal(module_journal_size(), size);
	assert_int_equal(file_bytes(MODULE_JOURNAL_PATH, file_buf, sizeof(file_buf)), before);
	assert_memory_equal(file_buf, saved_buf, (size_t)before);
	/* N */
	assert_int_equal(model_append_import(&want, "exact", MODULE_KIND_SKILL, 0, rest, 1), 0);
	assert_int_equal(module_journal_size(), JOURNAL_MAX);
	/* Full: even the smallest record is refused. */
	assert_int_equal(model_append_remove(&want, "a"), -ENOSPC);
	assert_int_equal(module_journal_size(), JOURNAL_MAX);
	assert_int_equal(model_replay(&got, &report), 0);
	assert_true(model_equal(&got, &want));
	assert_int_equal(report.bytes, JOURNAL_MAX);
	assert_false(report.incomplete);

	/* Compaction makes room again. */
	assert_int_equal(module_journal_compact(model_live, &want), 0);
	assert_int_equal(module_journal_size(),
			 HEADER + REC(6, CATALOG / 2) + REC(5, rest));
	assert_int_equal(model_append_remove(&want, "filler"), 0);
	check_stable(&want, HEADER + REC(6, CATALOG / 2) + REC(5, rest) + REC(6, 0));
}

/* ---- compaction --------------------------------------------------------------------------- */

static void compaction_round_trip(void **state)
{
	struct module_journal_report report;

	(void)state;
	assert_int_equal(model_append_import(&want, "alpha", MODULE_KIND_ROLE, 50, 400, 1), 0);
	assert_int_equal(model_append_import(&want, "beta", MODULE_KIND_SKILL, 0, 300, 2), 0);
	assert_int_equal(model_append_import(&want, "gamma", MODULE_KIND_TOOL, 80, 900, 3), 0);
	assert_int_equal(model_append_remove(&want, "beta"), 0);
	assert_int_equal(model_append_import(&want, "alpha", MODULE_KIND_ROLE, 60, 500, 4), 0);
	assert_int_equal(module_journal_compact(model_live, &want), 0);
	assert_int_equal(module_journal_size(), HEADER + REC(5, 980) + REC(5, 560));
	assert_false(file_exists(TMP_PATH));
	assert_int_equal(model_replay(&got, &report), 0);
	assert_true(model_equal(&got, &want));
	assert_int_equal(report.records, 2);
	assert_string_equal(got.e[0].name, "gamma");
	assert_string_equal(got.e[1].name, "alpha");
	/* Appends follow the compacted records. */
	assert_int_equal(model_append_import(&want, "delta", MODULE_KIND_SKILL, 0, 20, 5), 0);
	check_stable(&want, HEADER + REC(5, 980) + REC(5, 560) + REC(5, 20));
	/* Nothing live: a header alone. */
	model_clear(&want);
	assert_int_equal(module_journal_compact(model_live, &want), 0);
	assert_int_equal(module_journal_size(), HEADER);
	check_stable(&want, HEADER);
	/* The directory is made when missing. */
	assert_int_equal(agent_fs_unlink(MODULE_JOURNAL_PATH), 0);
	assert_int_equal(agent_fs_unlink(MODULE_JOURNAL_DIR), 0);
	assert_int_equal(module_journal_compact(model_live, &want), 0);
	check_stable(&want, HEADER);
}

/* A live set over the bound (N+1) or with a bad entry leaves the old journal; N is taken. */
static void compaction_refusals(void **state)
{
	struct module_journal_record rec;
	uint32_t last;
	long before;

	(void)state;
	assert_int_equal(model_append_import(&want, "alpha", MODULE_KIND_ROLE, 50, 400, 1), 0);
	assert_int_equal(model_append_import(&want, "beta", MODULE_KIND_SKILL, 0, 300, 2), 0);
	before = file_bytes(MODULE_JOURNAL_PATH, saved_buf, sizeof(saved_buf));

	/* Three entries whose records add up to the bound plus one byte, then to the bound. */
	last = JOURNAL_MAX - HEADER - 2u * REC(1, CATALOG) - REC(1, 0);
	assert_true(last >= 1u && last <= CATALOG);
	for (int extra = 1; extra >= 0; extra--) {
		model_clear(&aux);
		make_module(&rec, big_text, "a", MODULE_KIND_SKILL, 0, CATALOG, 1);
		model_install(&aux, &rec, big_text);
		make_module(&rec, big_text, "b", MODULE_KIND_SKILL, 0, CATALOG, 2);
		model_install(&aux, &rec, big_text);
		make_module(&rec, big_text, "c", MODULE_KIND_SKILL, 0, last + (uint32_t)extra, 3);
		model_install(&aux, &rec, big_text);
		if (extra == 1) {
			assert_int_equal(module_journal_compact(model_live, &aux), -ENOSPC);
			assert_false(file_exists(TMP_PATH));
			assert_int_equal(file_bytes(MODULE_JOURNAL_PATH, file_buf, sizeof(file_buf)),
					 before);
			assert_memory_equal(file_buf, saved_buf, (size_t)before);
			check_stable(&want, (uint32_t)before);
		} else {
			assert_int_equal(module_journal_compact(model_live, &aux), 0);
			check_stable(&aux, JOURNAL_MAX);
		}
	}
	write_file(MODULE_JOURNAL_PATH, saved_buf, (size_t)before);

	/* An entry whose digest is not that of its text. */
	model_copy(&aux, &want);
	aux.e[1].digest[0] ^= 1u;
	assert_int_equal(module_journal_compact(model_live, &aux), -EINVAL);
	assert_false(file_exists(TMP_PATH));
	check_stable(&want, (uint32_t)before);
	assert_int_equal(module_journal_compact(NULL, &aux), -EINVAL);
	check_stable(&want, (uint32_t)before);
}

/* A temporary file left by a compaction cut before its rename is removed by the replay. */
static void stale_tmp_removed(void **state)
{
	struct module_journal_record rec;
	struct module_journal_report report;
	size_t n;

	(void)state;
	assert_int_equal(model_append_import(&want, "alpha", MODULE_KIND_ROLE, 50, 400, 1), 0);
	/* Half written. */
	memset(file_buf, 0x5a, 100);
	write_file(TMP_PATH, file_buf, 100);
	assert_int_equal(model_replay(&got, &report), 0);
	assert_false(file_exists(TMP_PATH));
	assert_false(report.incomplete);
	assert_true(model_equal(&got, &want));
	/* Whole but not renamed: the journal stands, not the temporary file. */
	n = enc_header(file_buf);
	n += enc_import(file_buf + n, &rec, big_text, "beta", MODULE_KIND_SKILL, 0, 30, 2);
	write_file(TMP_PATH, file_buf, n);
	assert_int_equal(model_replay(&got, &report), 0);
	assert_false(file_exists(TMP_PATH));
	assert_true(model_equal(&got, &want));
}

static void no_lfs(void **state)
{
	struct module_journal_record rec;
	struct module_journal_report report;
	uint8_t text[8];

	(void)state;
	make_module(&rec, text, "alpha", MODULE_KIND_ROLE, 4, 4, 1);
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(model_replay(&got, &report), -ENODEV);
	assert_int_equal(module_journal_append_import(&rec, text, text + 4), -ENODEV);
	assert_int_equal(module_journal_append_remove("alpha"), -ENODEV);
	assert_int_equal(module_journal_compact(model_live, &want), -ENODEV);
	assert_int_equal(module_journal_size(), -ENODEV);
}

/* An import the caller skips (no room) is still read and checked; the replay goes on. */
static void skipped_import_still_checked(void **state)
{
	struct module_journal_report report;
	long full;

	(void)state;
	assert_int_equal(model_append_import(NULL, "alpha", MODULE_KIND_ROLE, 50, 400, 1), 0);
	assert_int_equal(model_append_import(&want, "beta", MODULE_KIND_SKILL, 0, 300, 2), 0);
	model_clear(&got);
	got.skip_next = true;
	assert_int_equal(module_journal_replay(&model_ops, &got, &report), 0);
	assert_int_equal(got.skipped_ok, 1);
	assert_true(model_equal(&got, &want));
	assert_false(report.incomplete);
	assert_int_equal(report.records, 2);

	/* Damage the skipped import's body: it ends the replay, reported. */
	full = file_bytes(MODULE_JOURNAL_PATH, file_buf, sizeof(file_buf));
	file_buf[HEADER + HEAD + 5 + 300] ^= 0x10;
	write_file(MODULE_JOURNAL_PATH, file_buf, (size_t)full);
	model_clear(&got);
	got.skip_next = true;
	assert_int_equal(module_journal_replay(&model_ops, &got, &report), 0);
	assert_int_equal(got.skipped_ok, 0);
	assert_int_equal(got.ends_bad, 1);
	assert_int_equal(got.count, 0);
	assert_true(report.incomplete);
	assert_string_equal(report.incomplete_name, "alpha");
	assert_int_equal(report.bytes, HEADER);
}

/* ---- a fault at every filesystem call ----------------------------------------------------- */

enum fault_op { F_IMPORT, F_REMOVE, F_COMPACT, F_REPLAY, F_FIRST, F_OPS };

static const char *const fault_names[] = {"append import", "append remove", "compaction",
					  "replay of a cut tail", "first append"};
static long base_len;
static long new_len;
static uint8_t new_buf[JOURNAL_MAX + 64];
static struct model old_model;
static struct model new_model;

static void fault_restore(enum fault_op op)
{
	(void)agent_fs_unlink(TMP_PATH);
	if (op == F_FIRST) {
		(void)agent_fs_unlink(MODULE_JOURNAL_PATH);
		(void)agent_fs_unlink(MODULE_JOURNAL_DIR);
	} else {
		write_file(MODULE_JOURNAL_PATH, saved_buf, (size_t)base_len);
	}
}

static int fault_run(enum fault_op op)
{
	struct module_journal_report report;

	switch (op) {
	case F_IMPORT:
	case F_FIRST:
		return model_append_import(NULL, "delta", MODULE_KIND_TOOL, 40, 700, 9);
	case F_REMOVE:
		return model_append_remove(NULL, "alpha");
	case F_COMPACT:
		return module_journal_compact(model_live, &old_model);
	default:
		return model_replay(&got, &report);
	}
}

/* The journal's bytes now are @p buf's @p len (-1: absent or empty is accepted for 0). */
static bool journal_is(const uint8_t *buf, long len)
{
	long now = file_bytes(MODULE_JOURNAL_PATH, file_buf, sizeof(file_buf));

	if (len <= 0) {
		return now <= 0;
	}
	return now == len && memcmp(file_buf, buf, (size_t)len) == 0;
}

/*
 * The operation's result tells the truth: 0 and the journal is the new one, an error and it
 * is the old one, byte for byte (a replay may have cleared the cut tail or not). The next
 * append, made before any replay as a running device would, is never lost.
 */
static void fault_at_every_call(void **state)
{
	struct module_journal_report report;
	long total = 0;

	(void)state;
	for (int op = 0; op < F_OPS; op++) {
		long calls;

		(void)agent_fs_unlink(MODULE_JOURNAL_PATH);
		assert_int_equal(
			model_append_import(NULL, "alpha", MODULE_KIND_ROLE, 50, 400, 1), 0);
		assert_int_equal(
			model_append_import(NULL, "beta", MODULE_KIND_SKILL, 0, 300, 2), 0);
		assert_int_equal(model_append_remove(NULL, "beta"), 0);
		assert_int_equal(
			model_append_import(NULL, "beta", MODULE_KIND_SKILL, 0, 200, 3), 0);
		base_len = file_bytes(MODULE_JOURNAL_PATH, saved_buf, sizeof(saved_buf));
		if (op == F_REPLAY) {
			base_len -= 7; /* the last record cut short */
		}
		if (op == F_FIRST) {
			base_len = 0;
		}
		fault_restore((enum fault_op)op);
		assert_int_equal(model_replay(&old_model, &report), 0);
		fault_restore((enum fault_op)op);
		posix_fs_fail_after(-1);
		assert_int_equal(fault_run((enum fault_op)op), 0);
		calls = posix_fs_calls();
		assert_int_equal(model_replay(&new_model, &report), 0);
		new_len = file_bytes(MODULE_JOURNAL_PATH, new_buf, sizeof(new_buf));
		assert_true(calls > 0);

		for (long k = 0; k < calls; k++) {
			bool is_new;
			int rc;
			int rc2;

			fault_restore((enum fault_op)op);
			posix_fs_fail_range((int)k, 1, -EIO);
			rc = fault_run((enum fault_op)op);
			posix_fs_fail_after(-1);
			is_new = rc == 0;
			if (op == F_REPLAY) {
				is_new = journal_is(new_buf, new_len);
				assert_true(rc != 0 || is_new);
			}
			if (!journal_is(is_new ? new_buf : saved_buf,
					is_new ? new_len : base_len)) {
				fail_msg("%s: fault at call %ld of %ld (result %d): the journal is "
					 "not the %s one",
					 fault_names[op], k, calls, rc, is_new ? "new" : "old");
			}
			assert_false(file_exists(TMP_PATH));
			/* The next append, then the next start. */
			model_copy(&aux, is_new || op == F_REPLAY ? &new_model : &old_model);
			rc2 = model_append_import(&aux, "omega", MODULE_KIND_SKILL, 0, 9, 4);
			if (rc2 == -EIO && op == F_REPLAY && rc != 0) {
				/* Refused after the failed replay until one succeeds. */
				assert_int_equal(model_replay(&got, &report), 0);
				rc2 = model_append_import(&aux, "omega", MODULE_KIND_SKILL, 0,
							  9, 4);
			}
			assert_int_equal(rc2, 0);
			assert_int_equal(model_replay(&got, &report), 0);
			if (report.incomplete || !model_equal(&got, &aux)) {
				fail_msg("%s: fault at call %ld of %ld (result %d): the next "
					 "append was lost",
					 fault_names[op], k, calls, rc);
			}
		}
		total += calls;
	}
	print_message("faults injected at %ld filesystem calls\n", total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(documented_example, setup, teardown),
		cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_or_empty_journal, setup, teardown),
		cmocka_unit_test_setup_teardown(cut_at_every_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(damage_every_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(out_of_range_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(append_refuses_out_of_range, setup, teardown),
		cmocka_unit_test_setup_teardown(size_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(compaction_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(compaction_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(stale_tmp_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(no_lfs, setup, teardown),
		cmocka_unit_test_setup_teardown(skipped_import_still_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(fault_at_every_call, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
