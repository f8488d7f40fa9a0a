/*
 * Private interface between fs_lfs.c (which owns the agent_fs_* entry points and the fault
 * injection) and fs_sd.c (the simulator's SD card: a host folder at "/SD:").
 *
 * SD handles are entries of fs_sd.c's own tables, passed around as struct agent_file * /
 * struct agent_dir * without ever being dereferenced as those types: fs_lfs.c asks
 * posix_sd_owns_file() / posix_sd_owns_dir() before it touches a handle.
 */
#ifndef POSIX_SD_H
#define POSIX_SD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

/** Whether @p path is "/SD:" or below it and a card is mounted. */
bool posix_sd_owns_path(const char *path);
bool posix_sd_owns_file(const struct agent_file *file);
bool posix_sd_owns_dir(const struct agent_dir *dir);

int posix_sd_open(struct agent_file **out, const char *path, unsigned int flags);
int posix_sd_read(struct agent_file *file, void *buf, size_t len);
int posix_sd_write(struct agent_file *file, const void *buf, size_t len);
int posix_sd_seek(struct agent_file *file, int32_t offset, int whence);
int32_t posix_sd_tell(struct agent_file *file);
int posix_sd_truncate(struct agent_file *file, uint32_t length);
int posix_sd_sync(struct agent_file *file);
/**
 * Close and release the handle. With @p fault (an injected error, < 0) the close failed
 * like a FAT close whose directory entry was never written: the file keeps the size of its
 * last successful sync (or of its opening), and @p fault is returned.
 */
int posix_sd_close(struct agent_file *file, int fault);

/**
 * The identity (st_dev, st_ino) of the flash image file mounted at "/lfs" (fs_lfs.c, at
 * mount; @p valid false at unmount). The SD folder never serves that file, whatever name,
 * link or case reaches it: open, unlink and rename of it are -EACCES. It holds the agent's
 * state: the settings (the API key among them) and the conversations.
 */
void posix_sd_set_flash_image(bool valid, uint64_t dev, uint64_t ino);
/** Whether @p path (on "/SD:", a card mounted) reaches the flash image file. */
bool posix_sd_is_flash_image(const char *path);

int posix_sd_unlink(const char *path);
/** -EEXIST when @p to exists (FatFs's f_rename); -EINVAL unless both paths are on "/SD:". */
int posix_sd_rename(const char *from, const char *to);
int posix_sd_mkdir(const char *path);
int posix_sd_stat(const char *path, struct agent_dirent *entry);
int posix_sd_statvfs(const char *path, struct agent_statvfs *stat);
int posix_sd_opendir(struct agent_dir **out, const char *path);
int posix_sd_readdir(struct agent_dir *dir, struct agent_dirent *entry);
int posix_sd_closedir(struct agent_dir *dir);

#endif /* POSIX_SD_H */
