/* Whole reads and writes over the port's file API (agent_fs_io.h). */
#include "agent_fs_io.h"

#include <errno.h>
#include <stdint.h>

int agent_fs_read_exact(struct agent_file *file, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		int n = agent_fs_read(file, (uint8_t *)buf + done, len - done);

		if (n < 0) {
			return n;
		}
		if (n == 0) {
			break;
		}
		done += (size_t)n;
	}
	return (int)done;
}

int agent_fs_write_all(struct agent_file *file, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		int n = agent_fs_write(file, (const uint8_t *)buf + done, len - done);

		if (n < 0) {
			return n;
		}
		if (n == 0) {
			return -ENOSPC;
		}
		done += (size_t)n;
	}
	return 0;
}
