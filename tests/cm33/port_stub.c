/*
 * A stub of the port (app/src/port/agent_port.h) for the Cortex-M33 footprint and stack report
 * (scripts/cm33_footprint.py, docs/footprint.md): every port function with a minimal body, so
 * that the portable core links on a bare Cortex-M33 and its own flash, RAM and stack can be
 * measured. Nothing here runs. The pools (pool_table.c, pool_book.c) and the cancellation flags
 * (cancel.c) are the real portable code, linked beside this file and reported apart.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"
#include "pool_book.h"

/* The image's entry (tests/cm33/cm33.ld): the real roots are given to the linker with
 * --undefined (tests/cm33/threads.txt), so nothing needs to be called from here. */
void cm33_stub_reset(void);
void cm33_stub_reset(void)
{
	for (;;) {
	}
}

int64_t agent_uptime_ms(void) { return 0; }
void agent_sleep_ms(uint32_t ms) { (void)ms; }
int agent_wall_time_s(int64_t *out) { (void)out; return -ENOTSUP; }

int agent_thread_start(struct agent_thread **out, const char *name, size_t stack_bytes,
		       agent_thread_fn fn, void *user_data)
{
	(void)out; (void)name; (void)stack_bytes; (void)fn; (void)user_data;
	return -ENOMEM;
}
int agent_thread_join(struct agent_thread *thread, uint32_t timeout_ms)
{
	(void)thread; (void)timeout_ms;
	return 0;
}
int agent_thread_stack_peak(size_t *used, size_t *size) { (void)used; (void)size; return -ENOTSUP; }
size_t agent_thread_stack_size(void) { return 0; }
void agent_thread_relax(void) {}
size_t agent_thread_overhead_bytes(void) { return 0; }

int agent_mutex_init(struct agent_mutex **out) { *out = NULL; return 0; }
void agent_mutex_lock(struct agent_mutex *mutex) { (void)mutex; }
void agent_mutex_unlock(struct agent_mutex *mutex) { (void)mutex; }
int agent_sem_init(struct agent_sem **out, unsigned int initial, unsigned int limit)
{
	(void)initial; (void)limit;
	*out = NULL;
	return 0;
}
int agent_sem_take(struct agent_sem *sem, uint32_t timeout_ms) { (void)sem; (void)timeout_ms; return 0; }
void agent_sem_give(struct agent_sem *sem) { (void)sem; }

/* The lock pool_table.c takes around its table (pool_book.h). */
void agent_port_pool_lock(void) {}
void agent_port_pool_unlock(void) {}

int agent_heap_stats(enum agent_mem_class mem_class, struct agent_heap_stats *out)
{
	(void)mem_class; (void)out;
	return -ENODEV;
}
int agent_heap_free(enum agent_mem_class mem_class, size_t *free_bytes)
{
	(void)mem_class; (void)free_bytes;
	return -ENODEV;
}

int agent_region_init(struct agent_region **out, const char *name, void *mem, size_t bytes)
{
	(void)out; (void)name; (void)mem; (void)bytes;
	return -ENOMEM;
}
int agent_region_deinit(struct agent_region *region) { (void)region; return 0; }
void *agent_region_alloc(struct agent_region *region, size_t bytes) { (void)region; (void)bytes; return NULL; }
void *agent_region_realloc(struct agent_region *region, void *ptr, size_t bytes)
{
	(void)region; (void)ptr; (void)bytes;
	return NULL;
}
void agent_region_free(struct agent_region *region, void *ptr) { (void)region; (void)ptr; }
int agent_region_stats(struct agent_region *region, struct agent_region_stats *out)
{
	(void)region; (void)out;
	return -ENOTSUP;
}
void agent_region_reset_peak(struct agent_region *region) { (void)region; }

int agent_fs_open(struct agent_file **out, const char *path, unsigned int flags)
{
	(void)out; (void)path; (void)flags;
	return -ENOENT;
}
int agent_fs_read(struct agent_file *file, void *buf, size_t len) { (void)file; (void)buf; (void)len; return 0; }
int agent_fs_write(struct agent_file *file, const void *buf, size_t len)
{
	(void)file; (void)buf;
	return (int)len;
}
int agent_fs_seek(struct agent_file *file, int32_t offset, int whence) { (void)file; (void)offset; (void)whence; return 0; }
int32_t agent_fs_tell(struct agent_file *file) { (void)file; return 0; }
int agent_fs_truncate(struct agent_file *file, uint32_t length) { (void)file; (void)length; return 0; }
int agent_fs_sync(struct agent_file *file) { (void)file; return 0; }
int agent_fs_close(struct agent_file *file) { (void)file; return 0; }
int agent_fs_unlink(const char *path) { (void)path; return 0; }
int agent_fs_rename(const char *from, const char *to) { (void)from; (void)to; return 0; }
int agent_fs_mkdir(const char *path) { (void)path; return 0; }
int agent_fs_stat(const char *path, struct agent_dirent *entry) { (void)path; (void)entry; return -ENOENT; }
int agent_fs_statvfs(const char *path, struct agent_statvfs *stat) { (void)path; (void)stat; return -ENOTSUP; }
bool agent_fs_mounted(const char *mount_point) { (void)mount_point; return false; }
int agent_fs_opendir(struct agent_dir **out, const char *path) { (void)out; (void)path; return -ENOENT; }
int agent_fs_readdir(struct agent_dir *dir, struct agent_dirent *entry) { (void)dir; (void)entry; return 0; }
int agent_fs_closedir(struct agent_dir *dir) { (void)dir; return 0; }

int agent_settings_get(const char *key, void *buf, size_t len) { (void)key; (void)buf; (void)len; return -ENOENT; }
int agent_settings_set(const char *key, const void *value, size_t len) { (void)key; (void)value; (void)len; return 0; }
int agent_settings_delete(const char *key) { (void)key; return 0; }
int agent_settings_foreach(const char *subtree, agent_settings_visit_fn fn, void *user_data)
{
	(void)subtree; (void)fn; (void)user_data;
	return 0;
}
bool agent_settings_is_store_path(const char *path) { (void)path; return false; }

int agent_console_write(struct agent_console *console, const char *data, size_t len)
{
	(void)console; (void)data;
	return (int)len;
}
void agent_console_set_bypass(struct agent_console *console, agent_console_bypass_fn fn,
			      void *user_data)
{
	(void)console; (void)fn; (void)user_data;
}
void agent_console_wake_after(struct agent_console *console, uint32_t ms) { (void)console; (void)ms; }
int agent_console_size(struct agent_console *console, uint16_t *cols, uint16_t *rows)
{
	(void)console; (void)cols; (void)rows;
	return -ENOTSUP;
}

int agent_net_connect(struct agent_net **out, const char *host, uint16_t port, bool tls,
		      uint32_t timeout_ms, const struct agent_cancel *cancel)
{
	(void)out; (void)host; (void)port; (void)tls; (void)timeout_ms; (void)cancel;
	return -EHOSTUNREACH;
}
int agent_net_send(struct agent_net *net, const void *data, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel)
{
	(void)net; (void)data; (void)len; (void)timeout_ms; (void)cancel;
	return 0;
}
int agent_net_recv(struct agent_net *net, void *buf, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel)
{
	(void)net; (void)buf; (void)len; (void)timeout_ms; (void)cancel;
	return 0;
}
void agent_net_close(struct agent_net *net) { (void)net; }

const char *agent_board_name(void) { return "cm33_stub"; }
int agent_board_info_get(struct agent_board_info *info) { (void)info; return -ENOTSUP; }
int agent_gpio_count(void) { return 0; }
int agent_gpio_get(size_t index, struct agent_gpio_slot *slot) { (void)index; (void)slot; return -ENOENT; }
int agent_bus_count(void) { return 0; }
int agent_bus_get(size_t index, struct agent_bus *bus) { (void)index; (void)bus; return -ENOENT; }
int agent_display_count(void) { return 0; }
int agent_display_get(size_t index, struct agent_display *display) { (void)index; (void)display; return -ENOENT; }
int agent_network_get(struct agent_network_state *state) { (void)state; return -ENOTSUP; }
bool agent_network_present(void) { return false; }
bool agent_sensor_family_present(enum agent_sensor_family family) { (void)family; return false; }
int agent_sensor_count(void) { return 0; }
int agent_sensor_read(size_t index, struct agent_sensor_reading *reading)
{
	(void)index; (void)reading;
	return -ENOENT;
}
