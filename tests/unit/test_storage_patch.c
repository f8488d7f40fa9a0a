/*
 * storage_patch (app/src/tools/storage_patch.c, storage_patch_mem.c) and the crash safety of
 * storage_write, on a real LittleFS image: the edit rules and bounds, the structured
 * conflict, the in-place fallback on a nearly full volume, and fault injection at every
 * filesystem call (posix_fs_fail_after() / posix_fs_fail_range()) with a power cut
 * (posix_flash_power_cut()) after it: the public file is always exactly the old or exactly
 * the new content.
 *
 * The sweeps inject some 2,300 faults, each in a run of the tool under the sanitizers; each
 * sweep prints a line as it starts and every PROGRESS_EVERY fault points (stdout is line
 * buffered, so ctest -V and the test log show them as they come).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "storage_test_util.h"

#define IMAGE_1M     (1024u * 1024u)
#define IMAGE_SMALL  (128u * 1024u)
#define PATCH_FILE   "/lfs/p.txt"
#define PATCH_STAGE  "/lfs/" STORAGE_PATCH_STAGE_NAME
#define WRITE_STAGE  "/lfs/" STORAGE_WRITE_STAGE_NAME
#define FILE_MAX     CONFIG_AGENT_STORAGE_PATCH_FILE_MAX

#define PROGRESS_EVERY 100 /* fault points between two progress lines of a sweep */

struct edit {
	long long offset;
	long long del; /* < 0: not given */
	const char *ins; /* NULL: not given */
	size_t ins_len;
};

static char orig[FILE_MAX + 64];
static char want[FILE_MAX + 64 + 8 * CONFIG_AGENT_STORAGE_PATCH_INSERT_MAX];
static char got[FILE_MAX + 64 + 8 * CONFIG_AGENT_STORAGE_PATCH_INSERT_MAX];
static char ins_text[CONFIG_AGENT_STORAGE_PATCH_INSERT_MAX + 8];
static uint32_t image_bytes;
static long fault_points;

/* ---- Images --------------------------------------------------------------------------------- */

static int setup_1m(void **state)
{
	(void)state;
	image_bytes = IMAGE_1M;
	return storage_fixture_setup("test_storage_patch", IMAGE_1M);
}

static int setup_small(void **state)
{
	(void)state;
	image_bytes = IMAGE_SMALL;
	return storage_fixture_setup("test_storage_patch", IMAGE_SMALL);
}

static int teardown(void **state)
{
	(void)state;
	return storage_fixture_teardown();
}

/* A blank image of the same size, so that every run of a sweep starts from the same state. */
static void fresh_image(void)
{
	posix_fs_fail_after(-1);
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(unlink(image_path), 0);
	assert_int_equal(posix_flash_mount(image_path, image_bytes, false), 0);
}

/*
 * The image a sweep starts every run from: taken once after the sweep's preparation
 * (unmounted, so that it is complete), written back before each run. Restoring the bytes
 * gives each run the same start as formatting and preparing again would, without redoing
 * that work some 700 times per sweep.
 */
static uint8_t snapshot[IMAGE_1M];

static void image_io(bool write)
{
	int fd = open(image_path, write ? O_WRONLY : O_RDONLY);

	assert_true(fd >= 0);
	for (size_t done = 0; done < image_bytes;) {
		ssize_t n = write ? pwrite(fd, snapshot + done, image_bytes - done, (off_t)done)
				  : pread(fd, snapshot + done, image_bytes - done, (off_t)done);

		assert_true(n > 0);
		done += (size_t)n;
	}
	assert_int_equal(close(fd), 0);
}

static void snapshot_take(void)
{
	posix_fs_fail_after(-1);
	assert_true(image_bytes <= sizeof(snapshot));
	assert_int_equal(posix_flash_unmount(), 0);
	image_io(false);
	assert_int_equal(posix_flash_mount(image_path, 0, false), 0);
}

/* Fails (-EBUSY) when a tool left a handle open, as remount() does. */
static void snapshot_restore(void)
{
	posix_fs_fail_after(-1);
	assert_int_equal(posix_flash_unmount(), 0);
	image_io(true);
	assert_int_equal(posix_flash_mount(image_path, 0, false), 0);
}

/* Remount as after a power cut: open handles are lost, unsynced data with them. */
static void power_cycle(void)
{
	posix_fs_fail_after(-1);
	assert_int_equal(posix_flash_power_cut(), 0);
	assert_int_equal(posix_flash_mount(image_path, 0, false), 0);
}

/* An orderly remount; fails (-EBUSY) when a tool left a handle open. */
static void remount(void)
{
	posix_fs_fail_after(-1);
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(posix_flash_mount(image_path, 0, false), 0);
}

/* ---- Running patches ------------------------------------------------------------------------ */

static int run_path_stat(const char *path)
{
	return run_path(&tool_storage_stat, path);
}

static int patch(const char *path, const char *sha, const struct edit *edits, size_t n)
{
	args_begin();
	args_str("path", path, strlen(path));
	args_str("sha256", sha, strlen(sha));
	jw_key(&args_w, "edits");
	jw_array_begin(&args_w);
	for (size_t i = 0; i < n; i++) {
		jw_object_begin(&args_w);
		args_int("offset", edits[i].offset);
		if (edits[i].del >= 0) {
			args_int("delete", edits[i].del);
		}
		if (edits[i].ins != NULL) {
			args_str("insert", edits[i].ins, edits[i].ins_len);
		}
		jw_object_end(&args_w);
	}
	jw_array_end(&args_w);
	return args_run(&tool_storage_patch);
}

/* The patched content of orig[0..len) into want[]; its length. */
static size_t apply(const struct edit *edits, size_t n, size_t len)
{
	size_t pos = 0;
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		size_t off = (size_t)edits[i].offset;

		memcpy(want + out, orig + pos, off - pos);
		out += off - pos;
		if (edits[i].ins != NULL) {
			memcpy(want + out, edits[i].ins, edits[i].ins_len);
			out += edits[i].ins_len;
		}
		pos = off + (size_t)(edits[i].del > 0 ? edits[i].del : 0);
	}
	memcpy(want + out, orig + pos, len - pos);
	return out + len - pos;
}

static void assert_file(const char *path, const char *data, size_t len)
{
	int n = get_file(path, got, sizeof(got));

	assert_int_equal(n, (int)len);
	assert_memory_equal(got, data, len);
}

/* Write orig[0..len) to @p path and its hash into @p hex. */
static void put_orig(const char *path, size_t len, unsigned int seed, char hex[SHA256_HEX_LEN + 1])
{
	make_text(orig, len, seed);
	put_file(path, orig, len);
	hex_of(orig, len, hex);
}

/* Patch, then check the result's members and the file against apply(). */
static void patch_ok(const struct edit *edits, size_t n, size_t len, const char *method)
{
	char hex[SHA256_HEX_LEN + 1];
	char old_hex[SHA256_HEX_LEN + 1];
	char member_hex[SHA256_HEX_LEN + 1];
	char method_got[16];
	size_t new_len = apply(edits, n, len);

	hex_of(orig, len, old_hex);
	hex_of(want, new_len, hex);
	int rc = patch(PATCH_FILE, old_hex, edits, n);

	if (rc != 0) {
		fail_msg("patch failed: %d %s", rc, last_error);
	}
	assert_int_equal(member_int("size"), (long long)new_len);
	assert_string_equal(member_str("sha256", member_hex, sizeof(member_hex)), hex);
	assert_string_equal(member_str("previous_sha256", member_hex, sizeof(member_hex)), old_hex);
	assert_int_equal(member_int("previous_size"), (long long)len);
	assert_int_equal(member_int("edits"), (long long)n);
	assert_string_equal(member_str("method", method_got, sizeof(method_got)), method);
	assert_file(PATCH_FILE, want, new_len);
	assert_false(path_exists(PATCH_STAGE));
}

/* ---- Edits ---------------------------------------------------------------------------------- */

static void test_patch_edits(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	const struct edit edits[] = {
		{0, -1, ">>", 2},	/* insert at the start */
		{10, 5, NULL, 0},	/* delete */
		{20, 3, "XYZW", 4},	/* replace */
		{30, 0, "a", 1},	/* two inserts at one offset keep their order */
		{30, -1, "b", 1},
		{100, 28, "", 0},	/* delete up to the end */
	};

	(void)state;
	put_orig(PATCH_FILE, 128, 1, hex);
	patch_ok(edits, sizeof(edits) / sizeof(edits[0]), 128, "staged");
	/* Relative path, CRLF text, an insert holding quotes and non-ASCII text. */
	put_text(PATCH_FILE, "a\r\nb\r\n");
	memcpy(orig, "a\r\nb\r\n", 6);
	const struct edit crlf[] = {{3, 1, "\"\xc3\xa9\"", 4}};

	patch_ok(crlf, 1, 6, "staged");
	/* An empty file grows. */
	put_file(PATCH_FILE, "", 0);
	const struct edit grow[] = {{0, -1, "hello", 5}};

	patch_ok(grow, 1, 0, "staged");
}

static void test_patch_conflict_changes_nothing(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	char stale[SHA256_HEX_LEN + 1];
	char member_hex[SHA256_HEX_LEN + 1];
	const struct edit edits[] = {{4, 2, "new", 3}};

	(void)state;
	put_orig(PATCH_FILE, 5000, 2, stale);
	orig[0] ^= 1; /* someone else changed the file since it was read */
	put_file(PATCH_FILE, orig, 5000);
	hex_of(orig, 5000, hex);
	assert_int_equal(patch(PATCH_FILE, stale, edits, 1), 0);
	assert_true(member_bool("conflict"));
	assert_false(member_bool("changed"));
	assert_string_equal(member_str("sha256", member_hex, sizeof(member_hex)), hex);
	assert_string_equal(member_str("expected", member_hex, sizeof(member_hex)), stale);
	assert_int_equal(member_int("size"), 5000);
	assert_non_null(member("message"));
	assert_file(PATCH_FILE, orig, 5000);
	assert_false(path_exists(PATCH_STAGE));
	/* Upper-case hex is the same hash. */
	for (char *c = hex; *c != '\0'; c++) {
		if (*c >= 'a' && *c <= 'f') {
			*c = (char)(*c - 'a' + 'A');
		}
	}
	assert_int_equal(patch(PATCH_FILE, hex, edits, 1), 0);
	assert_null(member("conflict"));
}

static void test_patch_refusals(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	char bad[SHA256_HEX_LEN + 1];

	(void)state;
	put_orig(PATCH_FILE, 300, 3, hex);
	const struct edit overlap[] = {{10, 10, "a", 1}, {15, 1, "b", 1}};
	const struct edit unordered[] = {{50, 1, "a", 1}, {20, 1, "b", 1}};
	const struct edit past_end[] = {{290, 11, "", 0}};
	const struct edit at_end[] = {{300, 0, "tail", 4}};
	const struct edit nul[] = {{0, 0, "a\0b", 3}};

	assert_int_equal(patch(PATCH_FILE, hex, overlap, 2), -EINVAL);
	assert_string_equal(last_error, "edit 1 starts at 15, before the end (20) of the edit "
					"before it: edits must be ascending and must not overlap");
	assert_int_equal(patch(PATCH_FILE, hex, unordered, 2), -EINVAL);
	assert_non_null(strstr(last_error, "ascending"));
	assert_int_equal(patch(PATCH_FILE, hex, past_end, 1), -EINVAL);
	assert_string_equal(last_error,
			    "edit 0 reaches byte 301, past the end of the file (300 bytes)");
	assert_int_equal(patch(PATCH_FILE, hex, nul, 1), -EINVAL);
	assert_non_null(strstr(last_error, "NUL"));
	/* Nothing changed by any of them. */
	assert_file(PATCH_FILE, orig, 300);
	assert_false(path_exists(PATCH_STAGE));

	/* The hash: 64 hex digits. */
	memcpy(bad, hex, sizeof(bad));
	bad[10] = 'g';
	assert_int_equal(patch(PATCH_FILE, bad, at_end, 1), -EINVAL);
	assert_non_null(strstr(last_error, "64 hex digits"));
	bad[63] = '\0';
	assert_int_equal(patch(PATCH_FILE, bad, at_end, 1), ARGS_REFUSED);
	/* No edits, a directory, a missing file, the staging name. */
	/* (The executor refuses no edits itself, should the parser let an empty array pass.) */
	int rc = patch(PATCH_FILE, hex, at_end, 0);

	assert_true(rc == ARGS_REFUSED || rc == -EINVAL);
	if (rc == -EINVAL) {
		assert_string_equal(last_error, "give 1 to 8 edits");
	}
	assert_int_equal(agent_fs_mkdir("/lfs/dir"), 0);
	assert_int_equal(patch("/lfs/dir", hex, at_end, 1), -EISDIR);
	assert_int_equal(patch("/lfs/none", hex, at_end, 1), -ENOENT);
	assert_int_equal(patch(PATCH_STAGE, hex, at_end, 1), -EINVAL);
	assert_non_null(strstr(last_error, "reserved"));
	/* A cancelled request changes nothing. */
	agent_cancel_raise(&test_cancel);
	assert_int_equal(patch(PATCH_FILE, hex, at_end, 1), -ECANCELED);
	assert_string_equal(last_error, "cancelled");
	args_begin();
	args_str("path", PATCH_FILE, strlen(PATCH_FILE));
	args_str("content", "x", 1);
	assert_int_equal(args_run(&tool_storage_write), -ECANCELED);
	agent_cancel_reset(&test_cancel);
	assert_file(PATCH_FILE, orig, 300);
	assert_false(path_exists(PATCH_STAGE));
	assert_false(path_exists(WRITE_STAGE));
	/* Appending at the very end is an edit inside the file. */
	assert_int_equal(patch(PATCH_FILE, hex, at_end, 1), 0);
}

/* ---- Bounds ---------------------------------------------------------------------------------- */

static void test_patch_file_bound(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	const struct edit edits[] = {{1000, 10, "edited", 6}};

	(void)state;
	assert_int_equal(FILE_MAX, 131072);
	for (size_t len = FILE_MAX - 1; len <= FILE_MAX + 1; len++) {
		put_orig(PATCH_FILE, len, (unsigned int)len, hex);
		if (len > FILE_MAX) {
			assert_int_equal(patch(PATCH_FILE, hex, edits, 1), -EFBIG);
			assert_string_equal(last_error, "/lfs/p.txt is 131073 bytes; storage_patch "
							"edits files of at most 131072 bytes");
			assert_file(PATCH_FILE, orig, len);
			continue;
		}
		patch_ok(edits, 1, len, "staged");
	}
	/* A patch may not grow a file past the bound either. */
	put_orig(PATCH_FILE, FILE_MAX - 3, 9, hex);
	const struct edit grow[] = {{0, 0, "four", 4}};

	assert_int_equal(patch(PATCH_FILE, hex, grow, 1), -EFBIG);
	assert_string_equal(last_error,
			    "the patched file would be 131073 bytes, above the 131072-byte bound");
	const struct edit fits[] = {{0, 0, "abc", 3}};

	patch_ok(fits, 1, FILE_MAX - 3, "staged");
}

static void test_patch_edits_bound(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	struct edit edits[9];

	(void)state;
	assert_int_equal(CONFIG_AGENT_STORAGE_PATCH_EDITS_MAX, 8);
	for (size_t n = 7; n <= 9; n++) {
		put_orig(PATCH_FILE, 2000, (unsigned int)n, hex);
		for (size_t i = 0; i < n; i++) {
			edits[i] = (struct edit){(long long)(i * 200), 3, "edit", 4};
		}
		if (n > CONFIG_AGENT_STORAGE_PATCH_EDITS_MAX) {
			assert_int_equal(patch(PATCH_FILE, hex, edits, n), ARGS_REFUSED);
			assert_string_equal(last_error, "field edits has more than 8 elements");
			assert_file(PATCH_FILE, orig, 2000);
			continue;
		}
		patch_ok(edits, n, 2000, "staged");
	}
}

static void test_patch_insert_bound(void **state)
{
	char hex[SHA256_HEX_LEN + 1];

	(void)state;
	assert_int_equal(CONFIG_AGENT_STORAGE_PATCH_INSERT_MAX, 2048);
	for (size_t n = 2047; n <= 2049; n++) {
		put_orig(PATCH_FILE, 3000, (unsigned int)n, hex);
		make_text(ins_text, n, 77);
		const struct edit edits[] = {{1500, 1, ins_text, n}};

		if (n > CONFIG_AGENT_STORAGE_PATCH_INSERT_MAX) {
			assert_int_equal(patch(PATCH_FILE, hex, edits, 1), ARGS_REFUSED);
			assert_string_equal(last_error, "field insert is longer than 2048 bytes");
			assert_file(PATCH_FILE, orig, 3000);
			continue;
		}
		patch_ok(edits, 1, 3000, "staged");
	}
}

/* ---- The in-place fallback ------------------------------------------------------------------- */

#define SMALL_FILE_LEN (40u * 1024u)

/* On the small image: the file, then a filler that leaves @p spare blocks free. */
static void nearly_full(unsigned int spare, char hex[SHA256_HEX_LEN + 1])
{
	struct agent_statvfs vfs;
	static char zeros[4096];

	put_orig(PATCH_FILE, SMALL_FILE_LEN, 11, hex);
	assert_int_equal(agent_fs_statvfs("/lfs", &vfs), 0);
	assert_true(vfs.blocks_free > spare + 2);
	size_t fill = (size_t)(vfs.blocks_free - spare - 1) * vfs.block_bytes;
	struct agent_file *file = NULL;

	memset(zeros, 'f', sizeof(zeros));
	assert_int_equal(agent_fs_open(&file, "/lfs/filler",
				       AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC),
			 0);
	for (size_t done = 0; done < fill; done += sizeof(zeros)) {
		assert_int_equal(agent_fs_write(file, zeros, sizeof(zeros)), (int)sizeof(zeros));
	}
	assert_int_equal(agent_fs_close(file), 0);
}

/* Edits near the end of the file: an in-place rewrite only copies its last block. */
static const struct edit tail_edits[] = {
	{SMALL_FILE_LEN - 300, 5, "tail edit", 9},
	{SMALL_FILE_LEN - 10, 10, "end", 3},
};

static void test_patch_falls_back_in_place(void **state)
{
	char hex[SHA256_HEX_LEN + 1];

	(void)state;
	nearly_full(4, hex);
	patch_ok(tail_edits, 2, SMALL_FILE_LEN, "in_place");
	/* Twice: the pool block was given back. */
	memcpy(orig, want, SMALL_FILE_LEN - 3);
	const struct edit again[] = {{SMALL_FILE_LEN - 100, 1, "X", 1}};

	patch_ok(again, 1, SMALL_FILE_LEN - 3, "in_place");
}

static void test_patch_no_room_at_all(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	const struct edit head[] = {{0, 1, "rewrite from the start", 22}};

	(void)state;
	/* An edit at the start needs the whole file rewritten: no room even in place. */
	nearly_full(2, hex);
	int rc = patch(PATCH_FILE, hex, head, 1);

	assert_int_equal(rc, -ENOSPC);
	assert_string_equal(last_error, "cannot patch in place /lfs/p.txt: no space left on the "
					"volume (-28); the file is unchanged");
	assert_file(PATCH_FILE, orig, SMALL_FILE_LEN);
	remount(); /* no handle left open */
}

/* ---- Fault injection ------------------------------------------------------------------------ */

struct sweep {
	const char *name;
	void (*prepare)(void); /* the state before the run, on a fresh image */
	int (*run)(void);
	const char *path;
	const char *old_data;
	size_t old_len;
	const char *new_data;
	size_t new_len;
	const char *stage;
	/* Whether a failed run may still have committed the new content (in place: the
	 * rewrite was synced, a later step failed). */
	bool failure_may_commit;
	const char *method; /* storage_patch's method without faults, or NULL */
	/* Rename refuses an existing target (FAT): replacement goes through a backup name. */
	bool no_replace;
	/*
	 * Only the single faults: the power cuts inject -EIO whatever the sweep's error
	 * (posix_fs_fail_after()), so for a sweep that differs from another only in that error
	 * they would repeat the other's power cuts call for call.
	 */
	bool single_faults_only;
};

static void backup_of(const char *path, char out[STORAGE_STAGE_PATH_MAX + 1])
{
	storage_backup_path(path, out);
}

/* What a tool does first with a path: put a backup left by a power cut back in place. */
static void recover(const char *path)
{
	char backup[STORAGE_STAGE_PATH_MAX + 1];

	backup_of(path, backup);
	if (!path_exists(path)) {
		assert_true(path_exists(backup));
	}
	assert_int_equal(run_path_stat(path), 0);
	assert_true(member_bool("exists"));
}

static char sweep_old[64 * 1024];
static char sweep_new[64 * 1024];
static size_t sweep_old_len;
static size_t sweep_new_len;
static char sweep_hex[SHA256_HEX_LEN + 1];

static const struct edit sweep_edits[] = {
	{100, 20, "first edit", 10},
	{5000, 0, "an insert across the first block boundary of the file ........", 62},
	{9000, 400, "", 0},
	{SMALL_FILE_LEN - 50, 50, "new tail\n", 9},
};

#define SWEEP_EDIT_COUNT (sizeof(sweep_edits) / sizeof(sweep_edits[0]))

static void prepare_staged(void)
{
	put_file(PATCH_FILE, sweep_old, sweep_old_len);
}

static void prepare_in_place(void)
{
	char hex[SHA256_HEX_LEN + 1];

	nearly_full(4, hex);
	assert_memory_equal(orig, sweep_old, sweep_old_len);
}

static int run_patch(void)
{
	return patch(PATCH_FILE, sweep_hex, sweep_edits, SWEEP_EDIT_COUNT);
}

static int run_patch_tail(void)
{
	return patch(PATCH_FILE, sweep_hex, tail_edits, 2);
}

static void prepare_write(void)
{
	put_file(PATCH_FILE, sweep_old, sweep_old_len);
}

static int run_write(void)
{
	args_begin();
	args_str("path", PATCH_FILE, strlen(PATCH_FILE));
	args_str("content", sweep_new, sweep_new_len);
	return args_run(&tool_storage_write);
}

/* The public file is the old or the new content: which one, as 0 or 1. */
static int public_state(const struct sweep *s, long n, int rc)
{
	int len = get_file(s->path, got, sizeof(got));

	if (len == (int)s->new_len && memcmp(got, s->new_data, s->new_len) == 0) {
		return 1;
	}
	if (len == (int)s->old_len && memcmp(got, s->old_data, s->old_len) == 0) {
		return 0;
	}
	fail_msg("%s: fault at call %ld (rc %d, %s): %s holds neither the old nor the new "
		 "content (%d bytes)",
		 s->name, n, rc, last_error, s->path, len);
	return -1;
}

static void progress(const struct sweep *s, const char *phase, long n, long count)
{
	if (n % PROGRESS_EVERY == 0) {
		print_message("%s: %s at call %ld of %ld\n", s->name, phase, n, count);
	}
}

/*
 * Run @p s once to count its filesystem calls, then for every n from 0 to that count: fail
 * call n and all later ones, cut the power, mount again and check the public file (unless
 * s->single_faults_only); then fail only call n (with @p transient_err) and check the
 * file, the cleanup and the handles. Every run starts from the image s->prepare() left.
 * Returns the number of fault points run.
 */
static long sweep(const struct sweep *s, int transient_err)
{
	long count;
	long points = 0;
	long fell_back = 0;

	char backup[STORAGE_STAGE_PATH_MAX + 1];

	backup_of(s->path, backup);
	fresh_image();
	posix_fs_rename_replaces(!s->no_replace);
	s->prepare();
	snapshot_take();
	posix_fs_fail_after(-1);
	if (s->run() != 0) {
		fail_msg("%s: the run without faults failed: %s", s->name, last_error);
	}
	count = posix_fs_calls();
	if (s->method != NULL) {
		char method[16];

		assert_string_equal(member_str("method", method, sizeof(method)), s->method);
	}
	assert_int_equal(public_state(s, -1, 0), 1);
	assert_true(count > 5);
	print_message("%s: %ld calls; %s\n", s->name, count,
		      s->single_faults_only ? "a single fault at each"
					    : "a power cut, then a single fault, at each");

	for (long n = 0; n <= count && !s->single_faults_only; n++, points++) {
		progress(s, "power cut", n, count);
		snapshot_restore();
		posix_fs_fail_after((int)n);
		int rc = s->run();

		power_cycle();
		if (s->no_replace) {
			recover(s->path);
		}
		int state = public_state(s, n, rc);

		if (rc == 0) {
			assert_int_equal(state, 1);
		} else if (!s->failure_may_commit) {
			assert_int_equal(state, 0);
		}
		if (n == count) {
			assert_int_equal(rc, 0);
		}
		/* A staging file or backup a power cut left behind goes with the next run. */
		if (state == 0) {
			assert_int_equal(s->run(), 0);
			assert_int_equal(public_state(s, n, 0), 1);
			assert_false(path_exists(s->stage));
			assert_false(path_exists(backup));
		}
	}
	for (long n = 0; n < count; n++, points++) {
		progress(s, "single fault", n, count);
		snapshot_restore();
		posix_fs_fail_range((int)n, 1, transient_err);
		int rc = s->run();

		posix_fs_fail_after(-1);
		/* A failed restore of the backup is repaired by the next call on the path. */
		if (s->no_replace && !path_exists(s->path)) {
			recover(s->path);
		}
		int state = public_state(s, n, rc);

		if (state != (rc == 0)) {
			fail_msg("%s: one %d at call %ld: rc %d (%s) but the file is the %s "
				 "content",
				 s->name, transient_err, n, rc, last_error, state ? "new" : "old");
		}
		assert_false(path_exists(s->stage));
		/* Only a failed removal of the backup, after the replacement, leaves it. */
		assert_true(!path_exists(backup) || rc == 0);
		if (rc == 0 && s->method != NULL && strstr(result, "\"in_place\"") != NULL) {
			fell_back++;
		}
		remount(); /* -EBUSY here would be a handle left open */
	}
	posix_fs_rename_replaces(true);
	print_message("%s: %ld calls, %ld fault points (%ld single faults ended in the in-place "
		      "fallback)\n",
		      s->name, count, points, fell_back);
	return points;
}

static void sweep_patch_data(void)
{
	make_text(orig, SMALL_FILE_LEN, 11);
	memcpy(sweep_old, orig, SMALL_FILE_LEN);
	sweep_old_len = SMALL_FILE_LEN;
	hex_of(sweep_old, sweep_old_len, sweep_hex);
}

static void test_faults_patch_staged(void **state)
{
	(void)state;
	sweep_patch_data();
	sweep_new_len = apply(sweep_edits, SWEEP_EDIT_COUNT, SMALL_FILE_LEN);
	memcpy(sweep_new, want, sweep_new_len);
	const struct sweep s = {
		.name = "storage_patch staged",
		.prepare = prepare_staged,
		.run = run_patch,
		.path = PATCH_FILE,
		.old_data = sweep_old,
		.old_len = sweep_old_len,
		.new_data = sweep_new,
		.new_len = sweep_new_len,
		.stage = PATCH_STAGE,
		.method = "staged",
	};

	fault_points += sweep(&s, -EIO);
}

/*
 * A single -ENOSPC anywhere: staging gives way to the in-place rewrite, or the call fails.
 * The power cuts of this run are test_faults_patch_staged's.
 */
static void test_faults_patch_staged_enospc(void **state)
{
	(void)state;
	sweep_patch_data();
	sweep_new_len = apply(sweep_edits, SWEEP_EDIT_COUNT, SMALL_FILE_LEN);
	memcpy(sweep_new, want, sweep_new_len);
	const struct sweep s = {
		.name = "storage_patch staged, -ENOSPC",
		.prepare = prepare_staged,
		.run = run_patch,
		.path = PATCH_FILE,
		.old_data = sweep_old,
		.old_len = sweep_old_len,
		.new_data = sweep_new,
		.new_len = sweep_new_len,
		.stage = PATCH_STAGE,
		.method = "staged",
		.single_faults_only = true,
	};

	fault_points += sweep(&s, -ENOSPC);
}

static void test_faults_patch_in_place(void **state)
{
	(void)state;
	sweep_patch_data();
	sweep_new_len = apply(tail_edits, 2, SMALL_FILE_LEN);
	memcpy(sweep_new, want, sweep_new_len);
	const struct sweep s = {
		.name = "storage_patch in place",
		.prepare = prepare_in_place,
		.run = run_patch_tail,
		.path = PATCH_FILE,
		.old_data = sweep_old,
		.old_len = sweep_old_len,
		.new_data = sweep_new,
		.new_len = sweep_new_len,
		.stage = PATCH_STAGE,
		.failure_may_commit = true,
		.method = "in_place",
	};

	fault_points += sweep(&s, -EIO);
}

static void test_faults_write(void **state)
{
	(void)state;
	make_text(sweep_old, 2500, 21);
	sweep_old_len = 2500;
	make_text(sweep_new, 3072, 22);
	sweep_new_len = 3072;
	const struct sweep s = {
		.name = "storage_write",
		.prepare = prepare_write,
		.run = run_write,
		.path = PATCH_FILE,
		.old_data = sweep_old,
		.old_len = sweep_old_len,
		.new_data = sweep_new,
		.new_len = sweep_new_len,
		.stage = WRITE_STAGE,
	};

	fault_points += sweep(&s, -EIO);
}

static void test_faults_patch_no_replace(void **state)
{
	(void)state;
	sweep_patch_data();
	sweep_new_len = apply(sweep_edits, SWEEP_EDIT_COUNT, SMALL_FILE_LEN);
	memcpy(sweep_new, want, sweep_new_len);
	const struct sweep s = {
		.name = "storage_patch staged, rename without replace",
		.prepare = prepare_staged,
		.run = run_patch,
		.path = PATCH_FILE,
		.old_data = sweep_old,
		.old_len = sweep_old_len,
		.new_data = sweep_new,
		.new_len = sweep_new_len,
		.stage = PATCH_STAGE,
		.method = "staged",
		.no_replace = true,
	};

	fault_points += sweep(&s, -EIO);
}

static void test_faults_write_no_replace(void **state)
{
	(void)state;
	make_text(sweep_old, 2500, 21);
	sweep_old_len = 2500;
	make_text(sweep_new, 3072, 22);
	sweep_new_len = 3072;
	const struct sweep s = {
		.name = "storage_write, rename without replace",
		.prepare = prepare_write,
		.run = run_write,
		.path = PATCH_FILE,
		.old_data = sweep_old,
		.old_len = sweep_old_len,
		.new_data = sweep_new,
		.new_len = sweep_new_len,
		.stage = WRITE_STAGE,
		.no_replace = true,
	};

	fault_points += sweep(&s, -EIO);
}

static void test_faults_write_new_file(void **state)
{
	(void)state;
	/* Creating a file: before, there is none ("old" is the absence, read as -ENOENT). */
	make_text(sweep_new, 1000, 23);
	sweep_new_len = 1000;
	sweep_old_len = 0;
	for (long n = 0;; n++) {
		fresh_image();
		posix_fs_fail_after((int)n);
		int rc = run_write();

		power_cycle();
		int len = get_file(PATCH_FILE, got, sizeof(got));

		if (rc == 0) {
			assert_int_equal(len, 1000);
			assert_memory_equal(got, sweep_new, 1000);
			fault_points += n + 1;
			print_message("storage_write (new file): %ld fault points\n", n + 1);
			break;
		}
		assert_int_equal(len, -ENOENT);
	}
}

/* A rename that refuses an existing target (FAT): the backup sequence and its repair. */
static void test_replace_through_backup(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	char backup[STORAGE_STAGE_PATH_MAX + 1];
	const struct edit edits[] = {{10, 5, "patched", 7}};

	(void)state;
	backup_of(PATCH_FILE, backup);
	posix_fs_rename_replaces(false);
	put_orig(PATCH_FILE, 3000, 5, hex);
	patch_ok(edits, 1, 3000, "staged");
	assert_false(path_exists(backup));
	/* The hook itself: renaming over an existing file is refused. */
	put_text("/lfs/a", "a");
	put_text("/lfs/b", "b");
	assert_int_equal(agent_fs_rename("/lfs/a", "/lfs/b"), -EEXIST);

	args_begin();
	args_str("path", PATCH_FILE, strlen(PATCH_FILE));
	args_str("content", "replaced", 8);
	assert_int_equal(args_run(&tool_storage_write), 0);
	assert_false(member_bool("created"));
	assert_file(PATCH_FILE, "replaced", 8);
	assert_false(path_exists(backup));
	assert_false(path_exists(WRITE_STAGE));

	/* A power cut between the two renames: the original under the backup name only. */
	assert_int_equal(agent_fs_rename(PATCH_FILE, backup), 0);
	put_text(WRITE_STAGE, "half-done");
	assert_int_equal(run_path_stat(PATCH_FILE), 0);
	assert_true(member_bool("exists"));
	assert_file(PATCH_FILE, "replaced", 8);
	assert_false(path_exists(backup));
	/* Each tool that takes a file repairs it first. */
	assert_int_equal(agent_fs_rename(PATCH_FILE, backup), 0);
	assert_int_equal(run_path(&tool_storage_read, PATCH_FILE), 0);
	assert_non_null(strstr(result, "\"content\":\"replaced\""));
	/* The backup and staging names are reserved. */
	args_begin();
	args_str("path", backup, strlen(backup));
	args_str("content", "x", 1);
	assert_int_equal(args_run(&tool_storage_write), -EINVAL);
	assert_non_null(strstr(last_error, "reserved"));
	posix_fs_rename_replaces(true);
}

static void test_report_fault_points(void **state)
{
	(void)state;
	print_message("fault points tested in all: %ld\n", fault_points);
	assert_true(fault_points > 0);
}

static void test_power_cut_hook(void **state)
{
	struct agent_file *file = NULL;

	(void)state;
	/* Written and synced survives; written after the sync does not. */
	assert_int_equal(agent_fs_open(&file, "/lfs/h.txt", AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 0);
	assert_int_equal(agent_fs_write(file, "synced", 6), 6);
	assert_int_equal(agent_fs_sync(file), 0);
	assert_int_equal(agent_fs_write(file, " lost", 5), 5);
	power_cycle();
	assert_file("/lfs/h.txt", "synced", 6);
	/* Injected failures: counted calls, the chosen range, and a close that commits nothing. */
	posix_fs_fail_range(1, 2, -EROFS);
	assert_int_equal(agent_fs_open(&file, "/lfs/h.txt", AGENT_FS_O_RDWR), 0);
	assert_int_equal(agent_fs_write(file, "x", 1), -EROFS);
	assert_int_equal(agent_fs_seek(file, 0, AGENT_FS_SEEK_END), -EROFS);
	assert_int_equal(agent_fs_write(file, "!", 1), 1);
	assert_int_equal(posix_fs_calls(), 4);
	posix_fs_fail_after(0);
	assert_int_equal(agent_fs_close(file), -EIO);
	posix_fs_fail_after(-1);
	assert_file("/lfs/h.txt", "synced", 6);
	remount(); /* the failed close released its handle */
}

int main(void)
{
	/* ctest reads stdout through a pipe: a line as soon as it is printed, not at exit. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_power_cut_hook, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_patch_edits, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_patch_conflict_changes_nothing, setup_1m,
						teardown),
		cmocka_unit_test_setup_teardown(test_patch_refusals, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_patch_file_bound, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_patch_edits_bound, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_patch_insert_bound, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_patch_falls_back_in_place, setup_small,
						teardown),
		cmocka_unit_test_setup_teardown(test_patch_no_room_at_all, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_faults_patch_staged, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_faults_patch_staged_enospc, setup_1m,
						teardown),
		cmocka_unit_test_setup_teardown(test_faults_patch_in_place, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_faults_write, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_faults_write_new_file, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_replace_through_backup, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_faults_patch_no_replace, setup_1m, teardown),
		cmocka_unit_test_setup_teardown(test_faults_write_no_replace, setup_1m, teardown),
		cmocka_unit_test(test_report_fault_points),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
