/*
 * A fresh LittleFS image for each test, in its own scratch folder under the test's build
 * directory, mounted at /lfs through the POSIX port. Included by one test file each.
 */
#ifndef FLASH_FIXTURE_H
#define FLASH_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h> /* mkdtemp: the including file defines _POSIX_C_SOURCE 200809L */
#include <string.h>
#include <unistd.h>

#include "posix/posix_port.h"

#define IMAGE_BYTES (256u * 1024u)

static char scratch_dir[64];
static char image_path[96];

/* Make "<prefix>_XXXXXX/flash.bin" of @p bytes and mount it; 0 or a negative value. */
static inline int flash_fixture_setup_bytes(const char *prefix, uint32_t bytes)
{
	snprintf(scratch_dir, sizeof(scratch_dir), "%s_XXXXXX", prefix);
	if (mkdtemp(scratch_dir) == NULL) {
		return -1;
	}
	snprintf(image_path, sizeof(image_path), "%s/flash.bin", scratch_dir);
	return posix_flash_mount(image_path, bytes, false);
}

/* The same with the default size, IMAGE_BYTES. */
static inline int flash_fixture_setup(const char *prefix)
{
	return flash_fixture_setup_bytes(prefix, IMAGE_BYTES);
}

static inline int flash_fixture_teardown(void)
{
	/* A test that failed half-way may leave the image unmounted already. */
	(void)posix_flash_unmount();
	unlink(image_path);
	return rmdir(scratch_dir);
}

#endif /* FLASH_FIXTURE_H */
