/*
 * The port boundary: the only header through which the portable core reaches the
 * operating system. Two implementations exist, app/src/port/posix/ (host simulator
 * and host tests) and app/src/port/zephyr/ (firmware). The core includes this file,
 * C standard library headers and its own headers, never an OS header.
 *
 * Conventions: functions return 0 or a positive count on success and a negative
 * errno value on failure, keeping the platform's own code (so a full table may be
 * -ENOMEM on one port and -ENFILE on another: test for "negative", not for a value).
 * Handles are opaque and come from fixed tables owned by the port; nothing here calls
 * malloc. Mutexes, semaphores and pools are made once at start-up and live for the
 * rest of the run: there is no way to give their slots back.
 */
#ifndef AGENT_PORT_H
#define AGENT_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Placement of static buffers ---------------------------------------------------------- */

/*
 * AGENT_PSRAM_ATTR puts a zero-initialised static buffer in external RAM when the build
 * defines AGENT_PORT_PSRAM_SECTION (ESP32-S3: ".ext_ram.bss"); elsewhere it is empty and
 * the buffer stays in internal RAM.
 */
#ifdef AGENT_PORT_PSRAM_SECTION
#define AGENT_PSRAM_ATTR __attribute__((section(AGENT_PORT_PSRAM_SECTION), aligned(8)))
#else
#define AGENT_PSRAM_ATTR __attribute__((aligned(8)))
#endif

/* ---- Time and sleep ----------------------------------------------------------------------- */

/** Milliseconds since boot, monotonic. */
int64_t agent_uptime_ms(void);

/** Sleep the calling thread for at least @p ms milliseconds. */
void agent_sleep_ms(uint32_t ms);

/* ---- Threads, locks, semaphores, cancellation --------------------------------------------- */

typedef void (*agent_thread_fn)(void *user_data);

struct agent_thread;
struct agent_mutex;
struct agent_sem;

/**
 * Start a thread. @p stack_bytes is what the thread needs; the port refuses (-ENOMEM) a
 * request larger than the stacks it owns or when all its thread slots are taken.
 */
int agent_thread_start(struct agent_thread **out, const char *name, size_t stack_bytes,
		       agent_thread_fn fn, void *user_data);

/** Wait for a thread to return; -EAGAIN after @p timeout_ms. Frees the slot on success. */
int agent_thread_join(struct agent_thread *thread, uint32_t timeout_ms);

/** Mutexes are recursive, as Zephyr's k_mutex is. */
int agent_mutex_init(struct agent_mutex **out);
void agent_mutex_lock(struct agent_mutex *mutex);
void agent_mutex_unlock(struct agent_mutex *mutex);

int agent_sem_init(struct agent_sem **out, unsigned int initial, unsigned int limit);
/** 0 when taken, -EAGAIN after @p timeout_ms (0 polls). */
int agent_sem_take(struct agent_sem *sem, uint32_t timeout_ms);
void agent_sem_give(struct agent_sem *sem);

/**
 * A cancellation flag that one thread raises and another polls (Esc ends a request).
 * Use only the functions below on it; they access the flag atomically.
 */
struct agent_cancel {
	volatile int raised;
};

void agent_cancel_raise(struct agent_cancel *cancel);
void agent_cancel_reset(struct agent_cancel *cancel);
bool agent_cancel_is_raised(const struct agent_cancel *cancel);

/* ---- Memory pools ------------------------------------------------------------------------- */

enum agent_mem_class {
	AGENT_MEM_INTERNAL = 0, /* on-chip RAM */
	AGENT_MEM_PSRAM = 1,    /* external RAM; falls back to internal where there is none */
	AGENT_MEM_CLASS_COUNT
};

struct agent_pool;

struct agent_pool_stats {
	const char *name;
	enum agent_mem_class mem_class;
	size_t block_bytes;
	uint32_t blocks_total;
	uint32_t blocks_free;
	uint32_t blocks_free_min; /* low-water mark of free blocks since init */
	size_t free_bytes;
	size_t largest_free_bytes; /* block_bytes when one block is free, else 0 */
	uint32_t alloc_failures;   /* allocations refused because the pool was empty */
	uint32_t bad_frees;        /* double frees and foreign pointers caught */
};

/**
 * Make a fixed-block pool over @p buffer (block_bytes * blocks bytes, 8-byte aligned,
 * block_bytes a multiple of 8). -EINVAL on bad geometry, -ENOMEM when the port's pool
 * table is full. @p name is kept, not copied: pass a string that outlives the pool.
 */
int agent_pool_init(struct agent_pool **out, const char *name, void *buffer, size_t block_bytes,
		    uint32_t blocks, enum agent_mem_class mem_class);

/** One block, or NULL when the pool is empty. Never blocks. */
void *agent_pool_alloc(struct agent_pool *pool);

/** 0, or -EINVAL for a pointer that is not a block of @p pool, -EALREADY for a double free. */
int agent_pool_free(struct agent_pool *pool, void *block);

int agent_pool_stats_get(const struct agent_pool *pool, struct agent_pool_stats *stats);

/** Visit every pool; stops early when @p fn returns non-zero. */
typedef int (*agent_pool_visit_fn)(const struct agent_pool_stats *stats, void *user_data);
void agent_pool_foreach(agent_pool_visit_fn fn, void *user_data);

/* ---- Filesystem --------------------------------------------------------------------------- */

/*
 * Same values as Zephyr's FS_O_* and FS_SEEK_*. Zephyr trees without FS_O_TRUNC get it
 * from the Zephyr port as a truncate right after the open.
 */
#define AGENT_FS_O_READ   0x01
#define AGENT_FS_O_WRITE  0x02
#define AGENT_FS_O_RDWR   (AGENT_FS_O_READ | AGENT_FS_O_WRITE)
#define AGENT_FS_O_CREATE 0x10
#define AGENT_FS_O_APPEND 0x20
#define AGENT_FS_O_TRUNC  0x40

#define AGENT_FS_SEEK_SET 0
#define AGENT_FS_SEEK_CUR 1
#define AGENT_FS_SEEK_END 2

#define AGENT_FS_NAME_MAX 255

enum agent_fs_type {
	AGENT_FS_FILE = 0,
	AGENT_FS_DIR = 1,
};

struct agent_dirent {
	enum agent_fs_type type;
	char name[AGENT_FS_NAME_MAX + 1];
	uint32_t size;
};

struct agent_statvfs {
	uint32_t block_bytes;
	uint32_t blocks;
	uint32_t blocks_free;
};

struct agent_file;
struct agent_dir;

int agent_fs_open(struct agent_file **out, const char *path, unsigned int flags);
/** Bytes read (0 at end of file) or a negative errno. */
int agent_fs_read(struct agent_file *file, void *buf, size_t len);
/** Bytes written or a negative errno. */
int agent_fs_write(struct agent_file *file, const void *buf, size_t len);
/** 0 on success, as Zephyr's fs_seek. */
int agent_fs_seek(struct agent_file *file, int32_t offset, int whence);
int32_t agent_fs_tell(struct agent_file *file);
int agent_fs_truncate(struct agent_file *file, uint32_t length);
int agent_fs_sync(struct agent_file *file);
int agent_fs_close(struct agent_file *file);

int agent_fs_unlink(const char *path);
/** Replaces @p to when it exists; both paths on the same mount. */
int agent_fs_rename(const char *from, const char *to);
/** -EEXIST when the path exists. */
int agent_fs_mkdir(const char *path);
/** -ENOENT when absent. */
int agent_fs_stat(const char *path, struct agent_dirent *entry);
int agent_fs_statvfs(const char *path, struct agent_statvfs *stat);

int agent_fs_opendir(struct agent_dir **out, const char *path);
/** 0 with entry->name[0] == '\0' at the end; "." and ".." are skipped. */
int agent_fs_readdir(struct agent_dir *dir, struct agent_dirent *entry);
int agent_fs_closedir(struct agent_dir *dir);

/* ---- Settings key-value ------------------------------------------------------------------- */

/*
 * Keys are full names with '/' separators ("agent/model"), at most AGENT_SETTINGS_KEY_MAX
 * bytes; values at most AGENT_SETTINGS_VALUE_MAX bytes. A value written is durable when
 * the call returns 0.
 */
#define AGENT_SETTINGS_KEY_MAX   63
#define AGENT_SETTINGS_VALUE_MAX 256 /* Zephyr's SETTINGS_MAX_VAL_LEN */

/** Length of the stored value (copied up to @p len bytes), -ENOENT when absent. */
int agent_settings_get(const char *key, void *buf, size_t len);
/** A zero-length value deletes the key, as Zephyr's NVS and ZMS backends do. */
int agent_settings_set(const char *key, const void *value, size_t len);
/** 0 also when the key was absent. */
int agent_settings_delete(const char *key);

/**
 * @p key is the full name; return non-zero to stop. The callback may read settings but
 * must not set or delete any (collect the names, act after the walk).
 */
typedef int (*agent_settings_visit_fn)(const char *key, size_t value_len, void *user_data);
/**
 * Visit every key below @p subtree: "agent" visits "agent/x" but neither "agent" itself
 * nor "agents/x". Returns 0 (also when stopped early) or a negative errno.
 */
int agent_settings_foreach(const char *subtree, agent_settings_visit_fn fn, void *user_data);

/* ---- Console ------------------------------------------------------------------------------ */

/*
 * The console a shell command was invoked from (on Zephyr a shell instance). Output is
 * text (a NUL byte ends it on Zephyr); a full-screen frontend or a hidden prompt takes raw
 * input through a bypass callback, which on Zephyr is shell_set_bypass(). When the bypass
 * is cleared the shell takes input again.
 */
struct agent_console;

/*
 * Returns how many of the @p len bytes it took. A callback that ends the bypass (by
 * setting NULL) returns the bytes up to and including the one that ended it; the POSIX
 * port gives the rest back to the shell, while Zephyr's shell drops the rest of that
 * chunk (at most 16 bytes, and only when input arrives faster than typing).
 */
typedef size_t (*agent_console_bypass_fn)(struct agent_console *console, const uint8_t *data,
					  size_t len, void *user_data);

int agent_console_write(struct agent_console *console, const char *data, size_t len);
/** Route raw input to @p fn until it is called again with NULL. */
void agent_console_set_bypass(struct agent_console *console, agent_console_bypass_fn fn,
			      void *user_data);
/**
 * Terminal size in characters; -ENOTSUP when unknown. A port that cannot ask the terminal
 * may answer its configured default (Zephyr: SHELL_DEFAULT_TERMINAL_WIDTH/HEIGHT).
 */
int agent_console_size(struct agent_console *console, uint16_t *cols, uint16_t *rows);

/* ---- Network stream ------------------------------------------------------------------------ */

/*
 * One TCP connection, optionally TLS. TLS always verifies the peer: the chain against the
 * CA bundle compiled into the image (plus, on the simulator, a CA file given at start) and
 * the host name against the certificate. Every call that waits polls @p cancel often
 * enough that a raised flag ends it within about 100 ms.
 *
 * Errors: -EHOSTUNREACH (name not resolved), -ECONNREFUSED, -ETIMEDOUT (no progress within
 * the timeout), -ECANCELED (cancel raised), -EACCES (TLS: certificate or host name not
 * trusted), -ECONNABORTED (other TLS failure), -ECONNRESET (peer reset), -ENOMEM (no
 * connection slot), or the platform's own code.
 */
struct agent_net;

int agent_net_connect(struct agent_net **out, const char *host, uint16_t port, bool tls,
		      uint32_t timeout_ms, const struct agent_cancel *cancel);
/** Send all of @p len bytes, or fail. */
int agent_net_send(struct agent_net *net, const void *data, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel);
/** Bytes received (> 0), 0 when the peer closed the stream in order, or a negative errno. */
int agent_net_recv(struct agent_net *net, void *buf, size_t len, uint32_t timeout_ms,
		   const struct agent_cancel *cancel);
void agent_net_close(struct agent_net *net);

/* ---- Board -------------------------------------------------------------------------------- */

/** Board target name, such as "esp32s3_devkitc/esp32s3/procpu" or "host_sim". */
const char *agent_board_name(void);

#ifdef __cplusplus
}
#endif

#endif /* AGENT_PORT_H */
