/*
 * Private interface between fs_lfs.c and settings.c of the POSIX port.
 */
#ifndef POSIX_FS_INTERNAL_H
#define POSIX_FS_INTERNAL_H

#include <stdbool.h>

#include "agent_port.h"

/*
 * File slots kept apart for the settings store, which on the device lives in its own
 * partition and so never competes with the application's open files. Three cover the
 * deepest use: a foreach walk whose callback calls agent_settings_get() (two), and a
 * rewrite (source and temporary file).
 */
#define POSIX_FS_RESERVED_FILE_SLOTS 3

/** agent_fs_open() on the reserved slots; -ENFILE when they are all taken. */
int posix_fs_open_reserved(struct agent_file **out, const char *path, unsigned int flags);

/** Whether "/lfs" is mounted now. */
bool posix_fs_is_mounted(void);

/**
 * Wipe what littlefs keeps of file contents once a call is over: its read cache (dropped),
 * its program cache when nothing waits in it, and the caches of the file slots not in use.
 * The settings store calls it after every change, so a deleted key leaves no copy in RAM.
 */
void posix_fs_forget_cached(void);

#endif /* POSIX_FS_INTERNAL_H */
