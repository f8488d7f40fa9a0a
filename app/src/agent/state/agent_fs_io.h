/*
 * Whole reads and writes over the port's file API (agent_port.h): agent_fs_read() and
 * agent_fs_write() may move fewer bytes than asked; these loop until all are moved, the file
 * ends or an error. One copy for the conversation store, the module journal and the memory
 * store.
 */
#ifndef AGENT_FS_IO_H
#define AGENT_FS_IO_H

#include <stddef.h>

#include "agent_port.h"

/**
 * Read @p len bytes of @p file into @p buf: the number read, fewer than @p len only when the
 * file ended, or a negative errno (bytes read before the error are in @p buf).
 */
int agent_fs_read_exact(struct agent_file *file, void *buf, size_t len);

/** Write all @p len bytes of @p buf: 0, -ENOSPC when a write moves nothing, or the errno. */
int agent_fs_write_all(struct agent_file *file, const void *buf, size_t len);

#endif /* AGENT_FS_IO_H */
