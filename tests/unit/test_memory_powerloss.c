/*
 * Power loss during a memory write (memory_store.c; docs/memory.md "Power loss"), on
 * littlefs's emulated block device mounted at /lfs through the POSIX port with the
 * firmware's geometry, as test_conv_powerloss.c does for the conversation store.
 *
 * For a write into a store with room and a write into a full store (which drops the oldest
 * note): one run counts the program and erase operations; then, for every n from 1 to that
 * count, the write runs again from the same starting state and emubd's power-loss callback
 * copies the device after the n-th program or erase. The copy is mounted as the next start
 * would find it: the store file must be byte for byte the old or the new one, the notes read
 * back must be the old or the new set, and the store must take another write, after which
 * no temporary file is left.
 *
 * Both of emubd's power-loss behaviours are run: NOOP (what was programmed stays) and OOO
 * (the first block written since the last sync reverts, as out-of-order writes may).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include <lfs.h>
#include <lfs_emubd.h>

#include "powerloss_device.h"

#include "memory_store.h"

#define N_NOTES	   CONFIG_AGENT_MEMORY_NOTES
#define FILE_BYTES (MEMORY_HEADER_BYTES + N_NOTES * MEMORY_RECORD_BYTES(32) + 64)

static uint8_t old_bytes[FILE_BYTES];
static uint8_t new_bytes[FILE_BYTES];
static uint8_t now_bytes[FILE_BYTES];
static long old_len;
static long new_len;
static struct memory_hit hits[N_NOTES];

/* The store file's bytes (-1 when absent). */
static long store_bytes(uint8_t *buf)
{
	return file_bytes(MEMORY_STORE_PATH, buf, FILE_BYTES);
}

static void vec_for(size_t i, struct memory_vec *v)
{
	float x[MEMORY_DIM] = {0};

	x[i % MEMORY_DIM] = 1;
	x[(i * 7 + 3) % MEMORY_DIM] = -0.5f;
	assert_int_equal(memory_quantise(x, MEMORY_DIM, v), 0);
}

static void add(size_t i)
{
	struct memory_add_result r;
	struct memory_vec v;
	char text[32];

	snprintf(text, sizeof(text), "note number %zu", i);
	vec_for(i, &v);
	assert_int_equal(memory_store_add(&v, text, strlen(text), &r), 0);
}

/* The notes as read back: a CRC of their ids and texts in the nearest-first order. */
static uint32_t notes_fingerprint(uint16_t *notes)
{
	struct memory_vec q;
	size_t found;
	uint32_t crc = 0;

	vec_for(1, &q);
	assert_int_equal(memory_store_nearest(&q, hits, N_NOTES, &found, notes), 0);
	assert_int_equal(found, *notes);
	for (size_t i = 0; i < found; i++) {
		crc = memory_crc32(crc, &hits[i].id, sizeof(hits[i].id));
		crc = memory_crc32(crc, hits[i].text, hits[i].len);
	}
	return crc;
}

/* The starting state on base_dev: @p notes notes. */
static void build_base(size_t notes)
{
	lfs_t lfs;

	assert_int_equal(lfs_emubd_create(&base_dev.cfg, &bd_cfg), 0);
	assert_int_equal(lfs_format(&lfs, &base_dev.cfg), 0);
	assert_int_equal(posix_flash_mount_bd(&base_dev.cfg), 0);
	for (size_t i = 0; i < notes; i++) {
		add(i);
	}
	assert_int_equal(posix_flash_unmount(), 0);
}

static void power_cut_every_op(const char *name, lfs_emubd_powerloss_behavior_t behavior)
{
	uint32_t old_fp;
	uint32_t new_fp;
	uint16_t old_notes;
	uint16_t new_notes;
	long ops;
	long new_seen = 0;

	live_mount();
	old_len = store_bytes(old_bytes);
	old_fp = notes_fingerprint(&old_notes);
	count_begin();
	add(1000);
	ops = count_end();
	new_len = store_bytes(new_bytes);
	new_fp = notes_fingerprint(&new_notes);
	assert_int_not_equal(old_fp, new_fp);
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(lfs_emubd_destroy(&live_dev.cfg), 0);
	assert_true(ops > 0);

	for (long n = 1; n <= ops; n++) {
		struct agent_dirent e;
		uint16_t notes;
		uint32_t fp;
		long len;
		bool is_old;
		bool is_new;

		live_mount();
		cut_arm(n);
		add(1000);
		cut_restart();
		len = store_bytes(now_bytes);
		fp = notes_fingerprint(&notes);
		is_old = len == old_len && (len < 0 || memcmp(now_bytes, old_bytes, len) == 0) &&
			 fp == old_fp && notes == old_notes;
		is_new = len == new_len && memcmp(now_bytes, new_bytes, len) == 0 && fp == new_fp &&
			 notes == new_notes;
		if (!is_old && !is_new) {
			fail_msg("%s (%s): power cut after program/erase %ld of %ld: the store is "
				 "neither old nor new (%ld bytes, %u notes)",
				 name, behavior_name(behavior), n,
				 ops, len, (unsigned int)notes);
		}
		new_seen += is_new;
		/* The store goes on, and the write clears what the cut left. */
		add(2000);
		assert_int_equal(agent_fs_stat(MEMORY_STORE_TEMP, &e), -ENOENT);
		cut_end();
	}
	/* The last cut comes after the write's last program: the new store is whole. */
	assert_true(new_seen > 0);
	print_message("%s (%s): %ld power cuts, one after each program and erase; new store "
		      "found after %ld of them\n",
		      name, behavior_name(behavior), ops, new_seen);
}

static void run_all(lfs_emubd_powerloss_behavior_t behavior)
{
	bd_setup(behavior);
	build_base(3);
	power_cut_every_op("write", behavior);
	assert_int_equal(lfs_emubd_destroy(&base_dev.cfg), 0);
	build_base(N_NOTES);
	power_cut_every_op("write into a full store", behavior);
	assert_int_equal(lfs_emubd_destroy(&base_dev.cfg), 0);
	build_base(0);
	power_cut_every_op("first write", behavior);
	assert_int_equal(lfs_emubd_destroy(&base_dev.cfg), 0);
}

int main(void)
{
	return powerloss_main(run_all);
}
