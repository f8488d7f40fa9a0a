/*
 * Power loss during conversation writes, on littlefs's own emulated block device (lfs_emubd,
 * from the littlefs sources the simulator builds), mounted at /lfs through the POSIX port
 * with the firmware's geometry and the ESP32-S3 partition's size (48 blocks of 4 KiB).
 *
 * For a save (a turn appended), an eviction (a new conversation's first turn replacing the
 * oldest slot), a first save into an empty slot, and a delete: one run counts the program
 * and erase operations the operation makes; then, for every n from 1 to that count, the
 * operation runs again from the same starting state with emubd's power-cycles feature set to
 * n, and its power-loss callback copies the device at that instant (after the n-th program
 * or erase). The copy is mounted as the next start would find it, the store recovers, and
 * every slot must read as the complete old or the complete new version, the slots the
 * operation did not touch as they were, and the store must take a new turn.
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

#include "conv_store.h"

#include "conv_test_util.h"



enum conv_op {
	OP_SAVE,  /* a turn appended to slot 2 */
	OP_EVICT, /* a new conversation's first turn over the oldest slot (3) */
	OP_FIRST, /* a new conversation's first turn into the empty slot 3 */
	OP_DELETE /* slot 1 (which has a backup) removed */
};

static const char *const op_names[] = {"save", "eviction", "first save", "delete"};

static struct conv_handle op_handle;

static uint8_t op_prepare(enum conv_op op)
{
	struct conv_meta meta = {2, "openai", "gpt-test", "newcomer"};

	switch (op) {
	case OP_SAVE:
		assert_int_equal(conv_store_open(&op_handle, 2), 0);
		return 2;
	case OP_EVICT:
	case OP_FIRST:
		assert_int_equal(conv_store_create(&op_handle, &meta), 3);
		return 3;
	default:
		return 1;
	}
}

static int op_run(enum conv_op op)
{
	switch (op) {
	case OP_SAVE:
		return commit_sized(&op_handle, 500, 1500, 41, "resp_save");
	case OP_EVICT:
	case OP_FIRST:
		return commit_sized(&op_handle, 300, 2500, 42, "resp_new");
	default:
		return conv_store_delete(1);
	}
}

/*
 * The starting state, on base_dev: slot 1 with two versions (main and backup), slot 2 of
 * about 6 KiB (two blocks) also with a backup, slot 3 the least recently written (or empty
 * for OP_FIRST).
 */
static void build_base(bool slot3_empty)
{
	lfs_t lfs;
	struct conv_handle h;

	assert_int_equal(lfs_emubd_create(&base_dev.cfg, &bd_cfg), 0);
	assert_int_equal(lfs_format(&lfs, &base_dev.cfg), 0);
	assert_int_equal(posix_flash_mount_bd(&base_dev.cfg), 0);
	assert_int_equal(conv_store_init(), 0);
	assert_int_equal(new_conversation("first", 1, 300, 1), 1);
	assert_int_equal(new_conversation("second", 3, 600, 2), 2);
	assert_int_equal(new_conversation("third", 2, 250, 3), 3);
	assert_int_equal(conv_store_open(&h, 1), 0);
	assert_int_equal(commit_sized(&h, 100, 200, 5, "resp_1b"), 0);
	assert_int_equal(conv_store_open(&h, 2), 0);
	assert_int_equal(commit_sized(&h, 50, 50, 6, "resp_2b"), 0);
	if (slot3_empty) {
		assert_int_equal(conv_store_delete(3), 0);
	}
	assert_int_equal(posix_flash_unmount(), 0);
}

static void power_cut_every_op(enum conv_op op, lfs_emubd_powerloss_behavior_t behavior,
			       long *cut_total)
{
	struct conv_fp old_fp[CONFIG_AGENT_CONV_FLASH_SLOTS + 1];
	struct conv_fp new_fp[CONFIG_AGENT_CONV_FLASH_SLOTS + 1];
	const uint8_t slots = CONFIG_AGENT_CONV_FLASH_SLOTS;
	uint8_t target;
	long ops;
	long new_seen = 0;

	/* A run without a cut: old, new, and the number of programs and erases. */
	live_mount();
	assert_int_equal(conv_store_init(), 0);
	target = op_prepare(op);
	for (uint8_t s = 1; s <= slots; s++) {
		old_fp[s] = conv_fingerprint(s);
	}
	count_begin();
	assert_int_equal(op_run(op), 0);
	ops = count_end();
	for (uint8_t s = 1; s <= slots; s++) {
		new_fp[s] = conv_fingerprint(s);
	}
	assert_false(fp_equal(&old_fp[target], &new_fp[target]));
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(lfs_emubd_destroy(&live_dev.cfg), 0);
	assert_true(ops > 0);

	for (long n = 1; n <= ops; n++) {
		live_mount();
		assert_int_equal(conv_store_init(), 0);
		(void)op_prepare(op);
		cut_arm(n);
		(void)op_run(op);
		cut_restart();
		assert_int_equal(conv_store_init(), 0);
		for (uint8_t s = 1; s <= slots; s++) {
			struct conv_fp fp = conv_fingerprint(s);
			bool is_old = fp_equal(&fp, &old_fp[s]);
			bool is_new = fp_equal(&fp, &new_fp[s]);

			if (!(is_old || is_new) || (s != target && !is_old)) {
				fail_msg("%s (%s): power cut after program/erase %ld of %ld: slot "
					 "%u is neither old nor new (state %d)",
					 op_names[op],
					 behavior_name(behavior), n,
					 ops, (unsigned int)s, fp.state);
			}
			if (s == target && is_new) {
				new_seen++;
			}
		}
		assert_int_equal(stray_files(CONV_DIR_LFS), 0);
		/* The store goes on: a turn into slot 2 (present in every outcome). */
		struct conv_handle h;

		assert_int_equal(conv_store_open(&h, 2), 0);
		assert_int_equal(commit_sized(&h, 20, 20, 99, NULL), 0);
		cut_end();
	}
	/* The last cut comes after the operation's last write: the new version is whole. */
	assert_true(new_seen > 0);
	print_message("%s (%s): %ld power cuts, one after each program and erase; new version "
		      "found after %ld of them\n",
		      op_names[op], behavior_name(behavior), ops,
		      new_seen);
	*cut_total += ops;
}

static void run_all(lfs_emubd_powerloss_behavior_t behavior)
{
	static const enum conv_op ops[] = {OP_SAVE, OP_EVICT, OP_DELETE};
	long total = 0;

	bd_setup(behavior);
	build_base(false);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		power_cut_every_op(ops[i], behavior, &total);
	}
	assert_int_equal(lfs_emubd_destroy(&base_dev.cfg), 0);

	build_base(true);
	power_cut_every_op(OP_FIRST, behavior, &total);
	assert_int_equal(lfs_emubd_destroy(&base_dev.cfg), 0);
	print_message("%s: %ld power cuts in all\n",
		      behavior_name(behavior), total);
}

int main(void)
{
	return powerloss_main(run_all);
}
