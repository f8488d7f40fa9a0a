/*
 * Simulator-only API of the POSIX port: what the host simulator's main() and the host tests
 * call beside agent_port.h. The portable core never includes this header.
 *
 * Limits of the POSIX port's fixed tables are listed here so that tests can reach them.
 */
#ifndef POSIX_PORT_H
#define POSIX_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Table sizes -------------------------------------------------------------------------- */

#define POSIX_THREAD_SLOTS 8
#define POSIX_MUTEX_SLOTS  16
#define POSIX_SEM_SLOTS    16
#define POSIX_POOL_SLOTS   16

/* Largest pool a fixed bitmap tracks; agent_pool_init() refuses more with -EINVAL. */
#define POSIX_POOL_MAX_BLOCKS 256

/*
 * The POSIX port owns no stack memory, so "larger than the stacks it owns" is this bound:
 * agent_thread_start() refuses a bigger request with -ENOMEM, as the firmware would.
 */
#define POSIX_THREAD_STACK_MAX_BYTES (1024u * 1024u)

/* Open files and directories at once; one more open fails with -ENFILE. */
#define POSIX_FS_FILE_SLOTS 8
#define POSIX_FS_DIR_SLOTS  4

/* Network connections open at once; one more agent_net_connect() fails with -ENOMEM. */
#define POSIX_NET_SLOTS 4

/*
 * The simulated internal heap (heap.c): its size and allocation unit. OpenSSL allocates from
 * it while the port works on a TLS connection (net.c), as a device's TLS stack allocates from
 * internal RAM; its library state, the SSL_CTX and the trust store are made from the host's
 * heap (on a device the CA bundle is in flash). A connection that finds the heap short fails
 * with -ENOMEM, as on a device.
 */
#define POSIX_HEAP_INTERNAL_BYTES (192u * 1024u)
#define POSIX_HEAP_UNIT_BYTES	  16u

/*
 * The largest region heap (region.c): a chunk's size in 8-byte units is kept in 27 bits.
 * agent_region_init() refuses more with -EINVAL (bytes beyond a multiple of 8 are unused).
 */
#define POSIX_REGION_MAX_BYTES (((1u << 27) - 1u) * 8u)

/* ---- Flash image ------------------------------------------------------------------------- */

#define POSIX_FLASH_MOUNT_POINT   "/lfs"
#define POSIX_FLASH_BLOCK_BYTES   4096u
/* Image size the simulator creates when none exists; also used when image_bytes is 0. */
#define POSIX_FLASH_DEFAULT_BYTES (1024u * 1024u)
/* littlefs needs two blocks for the superblock pair and one for the root directory. */
#define POSIX_FLASH_MIN_BYTES     (4u * POSIX_FLASH_BLOCK_BYTES)

/**
 * Mount the LittleFS image file @p image_path at "/lfs".
 *
 * When the file is absent it is created with @p image_bytes (0 selects
 * POSIX_FLASH_DEFAULT_BYTES) filled with 0xff, as erased flash reads. An existing image
 * keeps its own size and @p image_bytes is ignored. With @p erase_first the image is
 * filled with 0xff before mounting. When mounting fails the image is formatted and
 * mounted again, as Zephyr's automount does, and "lfs: formatting <path>" is printed on
 * stderr. The image is locked (flock) so that a second simulator cannot mount it.
 *
 * @return 0; -EINVAL when @p image_bytes (checked even for an existing image) or the size
 *         of an existing image is not a multiple of POSIX_FLASH_BLOCK_BYTES or is below
 *         POSIX_FLASH_MIN_BYTES (an existing image is then left untouched); -EBUSY when
 *         already mounted or the image is locked by another process; another negative
 *         errno from the host or littlefs.
 */
int posix_flash_mount(const char *image_path, uint32_t image_bytes, bool erase_first);

/**
 * Unmount "/lfs" and close the image.
 *
 * @return 0; -EINVAL when nothing is mounted; -EBUSY while a file or directory is open.
 */
int posix_flash_unmount(void);

/**
 * Tests: mount "/lfs" over a littlefs block device of the caller instead of an image file
 * (littlefs's emulated block device, lfs_emubd, in the power-loss tests). Only the device of
 * @p bd is taken: its context, read, prog, erase and sync callbacks and its block_count; the
 * rest of the geometry is the fstab's, as for an image, so the device must have
 * POSIX_FLASH_BLOCK_BYTES blocks. Unlike posix_flash_mount() a device that does not mount is
 * not formatted: its error is returned. Unmount with posix_flash_unmount() or
 * posix_flash_power_cut().
 */
struct lfs_config;
int posix_flash_mount_bd(const struct lfs_config *bd);

/* ---- SD card ------------------------------------------------------------------------------ */

/* Where the simulator's SD card is mounted, as Zephyr's FAT driver mounts a card. */
#define POSIX_SD_MOUNT_POINT "/SD:"

/**
 * Mount the host folder @p dir (created when absent) as the SD card at "/SD:" (the
 * simulator's --sd=DIR). It behaves like a FAT volume under Zephyr where crash safety
 * depends on it (app/src/port/posix/fs_sd.c): rename refuses an existing target with
 * -EEXIST, a file's size is the one its last sync or close recorded, names match without
 * regard to letter case. agent_fs_statvfs("/SD:") succeeds only while it is mounted.
 *
 * @return 0; -EBUSY when a card is mounted; -ENOTDIR when @p dir is not a folder; another
 *         negative errno from the host.
 */
int posix_sd_mount(const char *dir);

/** Unmount the card; -EINVAL when none is mounted, -EBUSY while a file or directory is open. */
int posix_sd_unmount(void);

/**
 * Pull the card: forget every open file and directory (each file keeps the size its last
 * sync recorded) and unmount. -EINVAL when none is mounted.
 */
int posix_sd_power_cut(void);

/* ---- TLS trust ---------------------------------------------------------------------------- */

/**
 * Trust the certificates of the PEM file @p pem_path for TLS, besides the CA bundle compiled
 * into the image (the simulator's --ca FILE). The host's own certificate store is never
 * trusted. Certificates already trusted are accepted again without effect.
 *
 * @return the number of certificates read (at least 1); a negative errno from opening the
 *         file (-ENOENT when it does not exist); -EINVAL when it holds no certificate or a
 *         malformed one (certificates before the malformed one stay trusted).
 */
int posix_net_add_ca_file(const char *pem_path);

/** Certificates in the TLS trust store (bundle and added files, each counted once). */
int posix_net_trusted_ca_count(void);

/* ---- Test support ------------------------------------------------------------------------ */

/** Forget every pool, so that each test starts with an empty pool table. */
void posix_pool_reset_all(void);

/**
 * A block of at least @p bytes from the simulated heap of @p mem_class (only
 * AGENT_MEM_INTERNAL exists), first fit; NULL when no run of free units is long enough.
 */
void *posix_heap_alloc(enum agent_mem_class mem_class, size_t bytes);
/** 0; -EINVAL for a pointer that is not an allocated block (a double free, a foreign one). */
int posix_heap_free(void *block);
/** Whether @p block points into the simulated heap's arena. */
bool posix_heap_owns(const void *block);
/** The bytes asked for when @p block was allocated; 0 when it is not an allocated block. */
size_t posix_heap_block_bytes(const void *block);
/**
 * Free every block and clear the high-water mark (tests). Only where nothing holds a block:
 * after a TLS connection OpenSSL keeps caches in the heap, which a reset would hand out again.
 */
void posix_heap_reset(void);

/*
 * Fault injection for crash-safety tests. Every agent_fs_* call is counted (those on "/SD:"
 * too), numbered from 0 at each arming below; a call chosen to fail returns the injected
 * error without reaching the filesystem, except agent_fs_close() and agent_fs_closedir(),
 * which still release their handle (a failed close commits nothing that was not synced
 * before, as littlefs does with a file whose flush failed; on "/SD:" the file keeps the size
 * of its last sync).
 */

/** The first @p ops calls from now succeed and every later one fails with -EIO; -1 disarms. */
void posix_fs_fail_after(int ops);

/** Calls @p first .. @p first + @p count - 1 from now fail with @p err (< 0); others succeed. */
void posix_fs_fail_range(int first, int count, int err);

/** agent_fs_* calls since the last arming (or since start). */
long posix_fs_calls(void);

/**
 * With false, agent_fs_rename() on "/lfs" refuses an existing target with -EEXIST, as FAT's
 * rename does, so that code written for both can be tested on littlefs; true (the default)
 * restores littlefs's atomic replacement.
 */
void posix_fs_rename_replaces(bool replaces);

/**
 * Cut the power: forget every open file and directory without closing it and drop the
 * mount, so that only what littlefs has already written to the image survives. Mount again
 * with posix_flash_mount(). -EINVAL when nothing is mounted.
 */
int posix_flash_power_cut(void);

#ifdef __cplusplus
}
#endif

#endif /* POSIX_PORT_H */
