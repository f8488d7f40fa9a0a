/*
 * A whole file read through the port's file API, for the unit tests that compare files byte
 * for byte (powerloss_device.h, test_module_journal.c).
 */
#ifndef FS_BYTES_H
#define FS_BYTES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent_port.h"

/* The bytes of the file at @p path into @p buf (at most @p cap), their count; -1 when absent. */
static inline long file_bytes(const char *path, uint8_t *buf, size_t cap)
{
	struct agent_file *f;
	long len = 0;
	int n;

	if (agent_fs_open(&f, path, AGENT_FS_O_READ) != 0) {
		return -1;
	}
	while ((n = agent_fs_read(f, buf + len, cap - (size_t)len)) > 0) {
		len += n;
	}
	assert_int_equal(n, 0);
	assert_int_equal(agent_fs_close(f), 0);
	return len;
}

#endif /* FS_BYTES_H */
