/*
 * Power loss during the module journal's writes (module_journal.h; docs/modules.md "The
 * journal"), on littlefs's emulated block device (lfs_emubd) mounted at /lfs through the
 * POSIX port with the firmware's geometry and the ESP32-S3 partition's size (48 blocks of
 * 4 KiB), as test_conv_powerloss does for the conversation store.
 *
 * For an append of an IMPORT, an append of a REMOVE, a compaction followed by the append
 * that needed it, and the replay that cuts a damaged tail: one run counts the program and
 * erase operations; then, for every n from 1 to that count, the operation runs again from
 * the same starting state and emubd's power-loss callback copies the device after the n-th
 * program or erase. The copy is mounted as the next start would find it and replayed into
 * the model catalog (module_journal_model.h): it must hold exactly the old or the new state,
 * the journal must be byte for byte the old or the new one, nothing incomplete may show
 * except the damaged tail the last case starts with (reported with its name), no temporary
 * file may stay, a second replay must find the same, and the journal must take an append.
 *
 * Both of emubd's power-loss behaviours are run: NOOP (what was programmed stays) and OOO
 * (the first block written since the last sync reverts, as out-of-order writes may).
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

#include <lfs.h>
#include <lfs_emubd.h>

#include "powerloss_device.h"

#include "module_journal.h"
#include "posix/posix_port.h"

#include "module_journal_model.h"

#define TMP_PATH   MODULE_JOURNAL_PATH ".tmp"
#define CUT_BYTES  7 /* the damaged tail: the last record without its last bytes */
/* The record of the import "verifier" (90 + 1800 bytes of text): head, name, text, CRC. */
#define REC_VERIFIER (44 + 8 + 90 + 1800 + 4)
#define FILE_BYTES (CONFIG_AGENT_MODULE_JOURNAL_BYTES + 64)

static struct model old_model;
static struct model new_model;
static struct model got;
static struct model expect;

/* The journal's bytes: as the operation starts, after it, after a compaction alone. */
static uint8_t old_bytes[FILE_BYTES];
static uint8_t new_bytes[FILE_BYTES];
static uint8_t mid_bytes[FILE_BYTES];
static uint8_t now_bytes[FILE_BYTES];
static long old_len;
static long new_len;
static long mid_len;

/* The journal's bytes (-1 when absent). */
static long journal_bytes(uint8_t *buf)
{
	return file_bytes(MODULE_JOURNAL_PATH, buf, FILE_BYTES);
}

static bool bytes_are(const uint8_t *a, long a_len, const uint8_t *b, long b_len)
{
	return a_len == b_len && (a_len <= 0 || memcmp(a, b, (size_t)a_len) == 0);
}

static bool tmp_exists(void)
{
	struct agent_dirent ent;

	return agent_fs_stat(TMP_PATH, &ent) == 0;
}

enum journal_op {
	OP_IMPORT,  /* an IMPORT appended */
	OP_REMOVE,  /* a REMOVE appended */
	OP_COMPACT, /* a compaction, then the IMPORT that needed it */
	OP_REPLAY,  /* the replay that cuts a damaged tail */
	OP_STALE    /* the replay that removes a compaction's stale temporary file */
};

static const char *const op_names[] = {"append of an import", "append of a remove",
				       "compaction and append", "replay of a damaged tail",
				       "replay removing a stale .tmp"};

static struct module_journal_report op_report; /* OP_REPLAY's */

static int op_run(enum journal_op op)
{
	int err;

	switch (op) {
	case OP_IMPORT:
		return model_append_import(NULL, "verifier", MODULE_KIND_ROLE, 90, 1800, 7);
	case OP_REMOVE:
		return model_append_remove(NULL, "calc");
	case OP_COMPACT:
		err = module_journal_compact(model_live, &old_model);
		if (err == 0) {
			err = model_append_import(NULL, "verifier", MODULE_KIND_ROLE, 90, 1800, 7);
		}
		return err;
	default:
		return model_replay(&got, &op_report);
	}
}

/*
 * The starting state, on base_dev: a journal of about 6 KiB (two blocks) with imports, a
 * replacement and a removal; for OP_REPLAY one more import whose last bytes are cut off;
 * for OP_STALE a whole temporary file of a compaction cut before its rename.
 */
static void build_base(enum journal_op op)
{
	struct module_journal_report report;
	struct agent_file *f;
	lfs_t lfs;
	long len;

	assert_int_equal(lfs_emubd_create(&base_dev.cfg, &bd_cfg), 0);
	assert_int_equal(lfs_format(&lfs, &base_dev.cfg), 0);
	assert_int_equal(posix_flash_mount_bd(&base_dev.cfg), 0);
	assert_int_equal(model_replay(&got, &report), 0);
	assert_int_equal(model_append_import(NULL, "conductor", MODULE_KIND_ROLE, 100, 1200, 1), 0);
	assert_int_equal(model_append_import(NULL, "arithmetic", MODULE_KIND_SKILL, 0, 500, 2), 0);
	assert_int_equal(model_append_import(NULL, "calc", MODULE_KIND_TOOL, 150, 2500, 3), 0);
	assert_int_equal(model_append_remove(NULL, "arithmetic"), 0);
	assert_int_equal(model_append_import(NULL, "conductor", MODULE_KIND_ROLE, 80, 900, 4), 0);
	if (op == OP_REPLAY) {
		assert_int_equal(model_append_import(NULL, "verifier", MODULE_KIND_ROLE, 90, 1800,
						     7),
				 0);
		len = journal_bytes(now_bytes);
		assert_int_equal(agent_fs_open(&f, MODULE_JOURNAL_PATH, AGENT_FS_O_RDWR), 0);
		assert_int_equal(agent_fs_truncate(f, (uint32_t)(len - CUT_BYTES)), 0);
		assert_int_equal(agent_fs_close(f), 0);
	}
	if (op == OP_STALE) {
		len = journal_bytes(now_bytes);
		assert_int_equal(
			agent_fs_open(&f, TMP_PATH, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE), 0);
		assert_int_equal(agent_fs_write(f, now_bytes, (size_t)len), (int)len);
		assert_int_equal(agent_fs_close(f), 0);
	}
	assert_int_equal(posix_flash_unmount(), 0);
}

static void power_cut_every_op(enum journal_op op, lfs_emubd_powerloss_behavior_t behavior,
			       long *cut_total)
{
	const char *mode = behavior_name(behavior);
	const bool replay_op = op == OP_REPLAY || op == OP_STALE;
	struct module_journal_report report;
	long ops;
	long new_seen = 0;
	long mid_seen = 0;

	/* A run without a cut: old, new, and the number of programs and erases. */
	live_mount();
	old_len = journal_bytes(old_bytes);
	if (!replay_op) {
		assert_int_equal(model_replay(&old_model, &report), 0);
		assert_false(report.incomplete);
	}
	mid_len = -2;
	if (op == OP_COMPACT) {
		/* The compacted journal alone, then back to the start. */
		assert_int_equal(module_journal_compact(model_live, &old_model), 0);
		mid_len = journal_bytes(mid_bytes);
		assert_true(mid_len < old_len);
		assert_int_equal(posix_flash_unmount(), 0);
		assert_int_equal(lfs_emubd_destroy(&live_dev.cfg), 0);
		live_mount();
	}
	count_begin();
	assert_int_equal(op_run(op), 0);
	ops = count_end();
	if (replay_op) {
		/* The replay applied the good records (and cut the tail): both states. */
		assert_int_equal(op_report.incomplete, op == OP_REPLAY);
		assert_string_equal(op_report.incomplete_name, op == OP_REPLAY ? "verifier" : "");
		assert_int_equal(got.count, 2);
		model_copy(&old_model, &got);
	}
	assert_int_equal(model_replay(&new_model, &report), 0);
	assert_false(report.incomplete);
	new_len = journal_bytes(new_bytes);
	if (replay_op) {
		assert_true(model_equal(&new_model, &old_model));
		assert_int_equal(new_len, op == OP_REPLAY ? old_len - (long)REC_VERIFIER + CUT_BYTES
							  : old_len);
	} else {
		assert_false(model_equal(&new_model, &old_model));
	}
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(lfs_emubd_destroy(&live_dev.cfg), 0);
	assert_true(ops > 0);

	for (long n = 1; n <= ops; n++) {
		long raw_len;
		bool is_new;
		bool stale;

		live_mount();
		cut_arm(n);
		(void)op_run(op);
		cut_restart();
		raw_len = journal_bytes(now_bytes);
		stale = tmp_exists();
		assert_int_equal(model_replay(&got, &report), 0);
		is_new = model_equal(&got, &new_model);
		if (!is_new && !model_equal(&got, &old_model)) {
			fail_msg("%s (%s): power cut after program/erase %ld of %ld: the catalog "
				 "is neither the old nor the new state (%d entries)",
				 op_names[op], mode, n, ops, got.count);
		}
		if (op == OP_REPLAY) {
			/* Reported while the tail is there; once cut, nothing is reported. */
			assert_int_equal(report.incomplete, raw_len == old_len);
			assert_true(raw_len == old_len || raw_len == new_len);
			if (report.incomplete) {
				assert_string_equal(report.incomplete_name, "verifier");
			}
			is_new = raw_len == new_len;
		} else if (op == OP_STALE) {
			assert_false(report.incomplete);
			assert_true(raw_len == old_len);
			is_new = !stale;
		} else if (report.incomplete) {
			fail_msg("%s (%s): power cut after program/erase %ld of %ld: a partial "
				 "record ('%s') was found",
				 op_names[op], mode, n, ops, report.incomplete_name);
		}
		/* After the replay: the new journal, or the old one (or the compacted one). */
		raw_len = journal_bytes(now_bytes);
		if ((is_new || replay_op)
			    ? !bytes_are(now_bytes, raw_len, new_bytes, new_len)
			    : (!bytes_are(now_bytes, raw_len, old_bytes, old_len) &&
			       !bytes_are(now_bytes, raw_len, mid_bytes, mid_len))) {
			fail_msg("%s (%s): power cut after program/erase %ld of %ld: the journal "
				 "(%ld bytes) is neither the old nor the new one",
				 op_names[op], mode, n, ops, raw_len);
		}
		assert_false(tmp_exists());
		/* A second start finds the same. */
		model_copy(&expect, &got);
		assert_int_equal(model_replay(&got, &report), 0);
		assert_false(report.incomplete);
		assert_true(model_equal(&got, &expect));
		/* The journal takes the next import. */
		assert_int_equal(model_append_import(&expect, "after", MODULE_KIND_SKILL, 0, 64, 9),
				 0);
		assert_int_equal(model_replay(&got, &report), 0);
		assert_false(report.incomplete);
		assert_true(model_equal(&got, &expect));
		if (is_new) {
			new_seen++;
		}
		if (bytes_are(now_bytes, raw_len, mid_bytes, mid_len)) {
			mid_seen++; /* the compaction's rename done, its append not */
		}
		cut_end();
	}
	/* The last cut comes after the operation's last write: the new state is whole. */
	assert_true(new_seen > 0);
	assert_true(op != OP_COMPACT || mid_seen > 0);
	print_message("%s (%s): %ld power cuts, one after each program and erase; new state "
		      "found after %ld of them, the compacted journal alone after %ld\n",
		      op_names[op], mode, ops, new_seen, mid_seen);
	*cut_total += ops;
}

static void run_all(lfs_emubd_powerloss_behavior_t behavior)
{
	static const enum journal_op ops[] = {OP_IMPORT, OP_REMOVE, OP_COMPACT, OP_REPLAY,
					      OP_STALE};
	long total = 0;

	bd_setup(behavior);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		build_base(ops[i]);
		power_cut_every_op(ops[i], behavior, &total);
		assert_int_equal(lfs_emubd_destroy(&base_dev.cfg), 0);
	}
	print_message("%s: %ld power cuts in all\n",
		      behavior_name(behavior), total);
}

int main(void)
{
	return powerloss_main(run_all);
}
