/*
 * The emulated flash of the power-loss tests (test_conv_powerloss.c,
 * test_module_journal_powerloss.c): littlefs's emubd with the fstab's geometry on the
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

#include "posix/posix_port.h"

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

#endif /* POWERLOSS_DEVICE_H */
