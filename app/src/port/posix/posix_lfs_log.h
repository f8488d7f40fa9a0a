/*
 * Logging hooks for littlefs, included by lfs_util.h through LFS_DEFINES when port.cmake
 * compiles the library. Upstream littlefs prints to stdout, which is the simulator's shell;
 * these send warnings and errors to stderr instead, and let fs_lfs.c silence the errors a
 * probing mount of a blank image is bound to report. Debug messages are dropped.
 */
#ifndef POSIX_LFS_LOG_H
#define POSIX_LFS_LOG_H

void posix_lfs_log(const char *level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define LFS_DEBUG(...)
#define LFS_WARN(...)  posix_lfs_log("warn", __FILE__, __LINE__, __VA_ARGS__)
#define LFS_ERROR(...) posix_lfs_log("error", __FILE__, __LINE__, __VA_ARGS__)

#endif /* POSIX_LFS_LOG_H */
