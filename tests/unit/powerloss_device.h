/*
 * The emulated flash of the power-loss tests (test_conv_powerloss.c,
 * test_module_journal_powerloss.c, test_memory_powerloss.c) and the steps of their power-cut
 * loop: littlefs's emubd with the fstab's geometry on the
 * ESP32-S3 storage partition, three devices (the base image, the live one an operation
 * runs on, and the copy taken at the cut) and the callback emubd calls after the n-th
 * program or erase. Static state: include it in one test file only.
 */
#ifndef POWERLOSS_DEVICE_H
#define POWERLOSS_DEVICE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <lfs.h>
#include <lfs_emubd.h>

#include "agent_port.h"
#include "posix/posix_port.h"
#include "fs_bytes.h"

#define BLOCKS 48u /* the ESP32-S3 storage_partition: 192 KiB */

struct device {
	lfs_emubd_t bd;
	struct lfs_config cfg;
};

static struct lfs_emubd_config bd_cfg;
static struct device base_dev;
static struct device live_dev;
static struct device cut_dev;
static bool cut_taken;

/* emubd calls this after the n-th program or erase: keep the device as it is now. */
static void on_power_loss(void *data)
{
	(void)data;
	assert_false(cut_taken);
	assert_int_equal(lfs_emubd_copy(&live_dev.cfg, &cut_dev.bd), 0);
	cut_taken = true;
}

static void device_cfg(struct device *dev)
{
	static uint8_t read_buf[64] __attribute__((aligned(8)));
	static uint8_t prog_buf[64] __attribute__((aligned(8)));
	static uint8_t lookahead_buf[32] __attribute__((aligned(8)));

	memset(&dev->cfg, 0, sizeof(dev->cfg));
	dev->cfg.context = &dev->bd;
	dev->cfg.read = lfs_emubd_read;
	dev->cfg.prog = lfs_emubd_prog;
	dev->cfg.erase = lfs_emubd_erase;
	dev->cfg.sync = lfs_emubd_sync;
	/* The fstab's geometry (posix_flash_mount_bd() uses it whatever is set here). */
	dev->cfg.read_size = 16;
	dev->cfg.prog_size = 16;
	dev->cfg.block_size = POSIX_FLASH_BLOCK_BYTES;
	dev->cfg.block_count = BLOCKS;
	dev->cfg.block_cycles = 512;
	dev->cfg.cache_size = 64;
	dev->cfg.lookahead_size = 32;
	/* Only for the format below. */
	dev->cfg.read_buffer = read_buf;
	dev->cfg.prog_buffer = prog_buf;
	dev->cfg.lookahead_buffer = lookahead_buf;
}

static void bd_setup(lfs_emubd_powerloss_behavior_t behavior)
{
	memset(&bd_cfg, 0, sizeof(bd_cfg));
	bd_cfg.read_size = 16;
	bd_cfg.prog_size = 16;
	bd_cfg.erase_size = POSIX_FLASH_BLOCK_BYTES;
	bd_cfg.erase_count = BLOCKS;
	bd_cfg.erase_value = 0xff; /* erased NOR flash */
	bd_cfg.powerloss_behavior = behavior;
	bd_cfg.powerloss_cb = on_power_loss;
	device_cfg(&base_dev);
	device_cfg(&live_dev);
	device_cfg(&cut_dev);
}

/* A fresh copy of @p from in @p to (copy-on-write blocks). */
static void device_copy(struct device *from, struct device *to)
{
	assert_int_equal(lfs_emubd_copy(&from->cfg, &to->bd), 0);
}

/* ---- the power-cut loop's steps ----------------------------------------------------------
 *
 * Each test: a run without a cut (live_mount(), count_begin(), the operation, count_end():
 * the programs and erases it made), then for n = 1 .. that number: live_mount(), cut_arm(n),
 * the operation, cut_restart() (the device as the power left it, mounted), the test's own
 * checks, cut_end().
 */

#define POWER_BUDGET ((lfs_emubd_powercycles_t)1u << 30)

static const char *behavior_name(lfs_emubd_powerloss_behavior_t behavior)
{
	return behavior == LFS_EMUBD_POWERLOSS_NOOP ? "noop" : "ooo";
}

/* A fresh copy of the base image on the live device, mounted. */
static void live_mount(void)
{
	device_copy(&base_dev, &live_dev);
	assert_int_equal(posix_flash_mount_bd(&live_dev.cfg), 0);
}

/* Count the programs and erases from here (no cut). */
static void count_begin(void)
{
	assert_int_equal(lfs_emubd_setpowercycles(&live_dev.cfg, POWER_BUDGET), 0);
}

/* The programs and erases since count_begin(); counting stops. */
static long count_end(void)
{
	long ops = (long)(POWER_BUDGET -
			  (lfs_emubd_powercycles_t)lfs_emubd_powercycles(&live_dev.cfg));

	assert_int_equal(lfs_emubd_setpowercycles(&live_dev.cfg, 0), 0);
	return ops;
}

/* The power goes after the @p n-th program or erase from here. */
static void cut_arm(long n)
{
	cut_taken = false;
	assert_int_equal(lfs_emubd_setpowercycles(&live_dev.cfg, (lfs_emubd_powercycles_t)n), 0);
}

/* The cut came: the next start, on the device as the power left it. */
static void cut_restart(void)
{
	assert_true(cut_taken);
	assert_int_equal(posix_flash_power_cut(), 0);
	assert_int_equal(posix_flash_mount_bd(&cut_dev.cfg), 0);
}

static void cut_end(void)
{
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(lfs_emubd_destroy(&cut_dev.cfg), 0);
	assert_int_equal(lfs_emubd_destroy(&live_dev.cfg), 0);
}

/* ---- the tests: every cut under both of emubd's behaviours -------------------------------- */

static void (*powerloss_run_all)(lfs_emubd_powerloss_behavior_t behavior);

static void power_loss_noop(void **state)
{
	(void)state;
	powerloss_run_all(LFS_EMUBD_POWERLOSS_NOOP);
}

static void power_loss_out_of_order(void **state)
{
	(void)state;
	powerloss_run_all(LFS_EMUBD_POWERLOSS_OOO);
}

static int powerloss_main(void (*run_all)(lfs_emubd_powerloss_behavior_t behavior))
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(power_loss_noop),
		cmocka_unit_test(power_loss_out_of_order),
	};

	powerloss_run_all = run_all;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif /* POWERLOSS_DEVICE_H */
