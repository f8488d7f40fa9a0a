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

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Error numbers the core uses beyond those every C library of the ports has. Zephyr's
 * minimal libc (CONFIG_MINIMAL_LIBC, lib/libc/minimal/include/errno.h) has no ESTALE ("the
 * file changed under a tool": conv_commit.c, storage_patch.c); 133 is its value in newlib
 * and picolibc and is unused by the minimal libc's table.
 */
#ifndef ESTALE
#define ESTALE 133
#endif

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

/* ---- Secrets ------------------------------------------------------------------------------ */

/**
 * Overwrite @p len bytes at @p buf with zeros in a way the compiler cannot leave out (the
 * writes go through a volatile pointer, so they happen even to a buffer about to die). For
 * every buffer that held the API key (docs/configuration.md, "What happens to the key in
 * RAM").
 */
static inline void agent_wipe(void *buf, size_t len)
{
	volatile unsigned char *p = (volatile unsigned char *)buf;

	while (len-- > 0u) {
		*p++ = 0;
	}
}

/* ---- Time and sleep ----------------------------------------------------------------------- */

/** Milliseconds since boot, monotonic. */
int64_t agent_uptime_ms(void);

/** Sleep the calling thread for at least @p ms milliseconds. */
void agent_sleep_ms(uint32_t ms);

/**
 * Wall-clock time: seconds since 1970-01-01 UTC into @p out. -ENOTSUP when the device has
 * no clock that was set (no RTC, no network time); callers then record 0 as "unknown".
 */
int agent_wall_time_s(int64_t *out);

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

/**
 * The most stack any of the port's threads has used since start-up (high-water mark, measured
 * when each thread is joined) and the size of one stack. -ENOTSUP where the port cannot
 * measure it (the simulator; Zephyr without CONFIG_INIT_STACKS, or on native_sim, whose
 * threads run on host stacks).
 */
int agent_thread_stack_peak(size_t *used, size_t *size);

/**
 * The size of the calling thread's stack as the port made it (on the simulator under
 * AddressSanitizer, the larger stack it gives every thread); 0 for a thread the port did not
 * start (the host's main thread).
 */
size_t agent_thread_stack_size(void);

/**
 * A long computation's periodic pause (a script runtime's hook): lets threads of the same
 * priority run, and on a simulated CPU whose time passes only when it waits (Zephyr's
 * native_sim) lets that time pass, so that timers, the console's input and deadlines keep
 * working while a script loops. Cheap; a no-op where threads are the host's.
 */
void agent_thread_relax(void);

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
	/*
	 * Held against written (docs/zephyr-port.md, "Pools"): blocks lent at once, in bytes, and
	 * what was really written into them, measured by painting when a block is returned.
	 */
	size_t held_peak_bytes;	 /* (blocks_total - blocks_free_min) * block_bytes */
	size_t written_block_max_bytes; /* most bytes written into one block before its return */
	size_t written_peak_bytes; /* most bytes written into the blocks of one busy period */
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

/* ---- Heaps -------------------------------------------------------------------------------- */

/*
 * The run-time heap of a memory class: where the operating system and its services (network
 * stack, name resolution) allocate while the device runs. The agent allocates nothing there
 * (its buffers are pools); it reads these figures for `agent status`, system_status and
 * jobs_list. Zephyr: the system heap (k_malloc) for internal RAM; the simulator: its
 * simulated heaps (docs/zephyr-port.md, "Heaps"; docs/simulator.md).
 */
struct agent_heap_stats {
	size_t total_bytes;	    /* what the heap manages, its bookkeeping included */
	size_t free_bytes;	    /* free now */
	size_t largest_free_bytes;  /* the largest single block an allocation could get now */
	size_t allocated_bytes;	    /* allocated now */
	size_t max_allocated_bytes; /* the most allocated at once since start-up */
};

/** 0; -ENODEV when the device has no heap of @p mem_class; -EINVAL. */
int agent_heap_stats(enum agent_mem_class mem_class, struct agent_heap_stats *out);

/**
 * Free bytes of the heap of @p mem_class only, cheap enough to call for every received
 * chunk of a stream. 0; -ENODEV; -EINVAL.
 */
int agent_heap_free(enum agent_mem_class mem_class, size_t *free_bytes);

/* ---- Region heaps ------------------------------------------------------------------------- */

/*
 * A bounded heap over memory the caller provides: a script runtime's heap (docs/scripting.md,
 * "Memory"). Nothing in it comes from or goes to malloc; an allocation that does not fit
 * fails (NULL) and is counted. Zephyr: sys_heap over the region; POSIX: a first-fit heap of
 * the port's own with boundary tags and coalescing (under AddressSanitizer the free parts are
 * poisoned). Blocks are 8-byte aligned. One region is used by one thread at a time (its
 * runtime's single-owner guard); only agent_region_stats() may be called from another.
 */
#define AGENT_REGIONS_MAX 4 /* region heaps the port keeps records for */

struct agent_region;

struct agent_region_stats {
	const char *name;
	size_t total_bytes;	   /* the region's size */
	size_t used_bytes;	   /* allocated now, as asked for (without bookkeeping) */
	size_t peak_used_bytes;	   /* the most allocated at once since init or the last reset */
	size_t largest_free_bytes; /* the largest block an allocation could get now */
	uint32_t blocks;	   /* blocks allocated now */
	uint32_t alloc_failures;   /* allocations refused since init */
};

/**
 * Make a region heap over @p mem (@p bytes, 8-byte aligned, at least 256 bytes). @p name is
 * kept, not copied. -EINVAL on bad geometry, -ENOMEM when AGENT_REGIONS_MAX are in use.
 */
int agent_region_init(struct agent_region **out, const char *name, void *mem, size_t bytes);

/** Give the record back (the memory stays the caller's). -EBUSY while blocks are allocated. */
int agent_region_deinit(struct agent_region *region);

/** A block of @p bytes (> 0), or NULL when none fits. */
void *agent_region_alloc(struct agent_region *region, size_t bytes);

/**
 * Resize @p ptr to @p bytes like realloc(): NULL @p ptr allocates; 0 @p bytes frees and
 * returns NULL; on failure NULL and @p ptr is untouched.
 */
void *agent_region_realloc(struct agent_region *region, void *ptr, size_t bytes);

/** Free a block; NULL is ignored. */
void agent_region_free(struct agent_region *region, void *ptr);

int agent_region_stats(struct agent_region *region, struct agent_region_stats *out);

/** Start a new high-water mark: peak_used_bytes becomes used_bytes. */
void agent_region_reset_peak(struct agent_region *region);

/**
 * Internal RAM a thread of the port occupies besides its stack (its control block and the
 * port's record of it, in a static slot): the task overhead jobs_list reports (docs/jobs.md).
 */
size_t agent_thread_overhead_bytes(void);

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

/**
 * Whether a filesystem is mounted at @p mount_point ("/lfs", "/SD:") now. Cheap (no I/O):
 * tool availability asks it whenever tools are listed or offered.
 */
bool agent_fs_mounted(const char *mount_point);

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

/**
 * Whether the absolute @p path names a file of the settings store: its file, or a name that
 * starts with the file's name in the same folder (what the store writes while replacing
 * it, such as "/lfs/.settings.tmp"). Tools that read or write files refuse these paths: the
 * store holds the API key. False on a store that keeps no file (NVS, ZMS). On the simulator
 * also the flash image file that holds the store, when a path on its SD folder reaches it.
 */
bool agent_settings_is_store_path(const char *path);

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
 * Call the bypass callback once with no input (@p len 0) when @p ms milliseconds have passed
 * without any: how a frontend learns that an ESC stayed alone, the Esc key (agent_keys.h).
 * Input that comes first is delivered as usual and the request lapses (the callback asks
 * again when it still waits). A newer request replaces an older one; clearing the bypass
 * drops it. Calls with and without input never run at the same time, but a call without
 * input may come from another thread than the console's.
 */
void agent_console_wake_after(struct agent_console *console, uint32_t ms);
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

/* ---- Board inspection --------------------------------------------------------------------- */

/*
 * What the board has and what state it is in, for the read-only hardware tools. Every call
 * here only reads: none configures, claims, powers or connects anything (reading a GPIO never
 * configures the pin). Lists are index-based (count, then get(i) into the caller's struct),
 * so nothing is allocated; a count is a snapshot, and a get past the end is -ENOENT. A port
 * that cannot tell something returns -ENOTSUP (for a whole call) or the field's "unknown"
 * value (empty string, 0, -1, *_UNKNOWN) as documented per field. Strings are NUL-terminated
 * and cut to their buffers. The simulator reads the board from a file (docs/simulated-board.md);
 * the firmware from the devicetree and the device APIs (docs/zephyr-port.md).
 */
#define AGENT_BOARD_NAME_MAX 31 /* names: slots, controllers, buses, drivers, owners */
#define AGENT_BOARD_TEXT_MAX 95 /* longer text: the board model */
#define AGENT_BOARD_ADDR_MAX 45 /* an IPv4 or IPv6 address as text */
#define AGENT_BOARD_SSID_MAX 32 /* 802.11 SSID bytes */

/* Capabilities of the board as built (struct agent_board_info.caps). */
#define AGENT_BOARD_CAP_PSRAM	  (1u << 0)
#define AGENT_BOARD_CAP_SD	  (1u << 1)
#define AGENT_BOARD_CAP_DISPLAY	  (1u << 2)
#define AGENT_BOARD_CAP_WIFI	  (1u << 3)
#define AGENT_BOARD_CAP_BLUETOOTH (1u << 4)
#define AGENT_BOARD_CAP_ETHERNET  (1u << 5)
#define AGENT_BOARD_CAP_USB	  (1u << 6)
#define AGENT_BOARD_CAP_BATTERY	  (1u << 7)
#define AGENT_BOARD_CAP_COUNT	  8

struct agent_board_info {
	char model[AGENT_BOARD_TEXT_MAX + 1]; /* human description; "" when unknown */
	char soc[AGENT_BOARD_NAME_MAX + 1];   /* "" when unknown */
	uint32_t caps;			      /* AGENT_BOARD_CAP_* */
	uint32_t psram_bytes;		      /* installed external RAM; 0: none */
	uint32_t flash_bytes;		      /* 0: unknown */
	uint32_t sram_bytes;		      /* on-chip RAM; 0: unknown */
};

int agent_board_info_get(struct agent_board_info *info);

enum agent_gpio_policy {
	AGENT_GPIO_POLICY_FREE,	      /* the application may use it */
	AGENT_GPIO_POLICY_INPUT_ONLY, /* the pad can only be read */
	AGENT_GPIO_POLICY_STRAPPING,  /* sampled at reset: driving it may change the boot mode */
	AGENT_GPIO_POLICY_RESERVED,   /* wired to flash, PSRAM, USB, the console: never touch */
	AGENT_GPIO_POLICY_UNKNOWN,
};

enum agent_gpio_mode {
	AGENT_GPIO_MODE_UNCONFIGURED, /* neither input nor output (disconnected) */
	AGENT_GPIO_MODE_INPUT,
	AGENT_GPIO_MODE_OUTPUT,
	AGENT_GPIO_MODE_INPUT_OUTPUT,
	AGENT_GPIO_MODE_UNKNOWN, /* the port cannot read the configuration back */
};

struct agent_gpio_slot {
	char name[AGENT_BOARD_NAME_MAX + 1];	   /* "LED", "BOOT", "GPIO4" */
	char controller[AGENT_BOARD_NAME_MAX + 1]; /* "gpio0" */
	uint16_t pin;				   /* pin number on the controller */
	enum agent_gpio_policy policy;
	char claimed_by[AGENT_BOARD_NAME_MAX + 1]; /* the driver or job using it; "" when free */
	enum agent_gpio_mode mode;
	/* true when the pin is already configured with its input enabled: level then holds
	 * what was read (0 or 1), unless read_error says the read failed. */
	bool readable;
	uint8_t level;
	int read_error; /* 0, or the negative errno of a failed read of a readable pin */
};

int agent_gpio_count(void);
/** Slot @p index; reads the level only when the pin is already a configured input. */
int agent_gpio_get(size_t index, struct agent_gpio_slot *slot);

enum agent_bus_type {
	AGENT_BUS_I2C,
	AGENT_BUS_SPI,
	AGENT_BUS_UART,
	AGENT_BUS_ONEWIRE,
	AGENT_BUS_TYPE_COUNT
};

enum agent_bus_origin {
	AGENT_BUS_ORIGIN_BOARD,	  /* part of the board definition (devicetree) */
	AGENT_BUS_ORIGIN_RUNTIME, /* set up while running (a script's bit-banged bus) */
	AGENT_BUS_ORIGIN_UNKNOWN,
};

enum agent_bus_sharing {
	AGENT_BUS_SHARED,    /* several users at once (addressed devices, chip selects) */
	AGENT_BUS_EXCLUSIVE, /* one user at a time */
	AGENT_BUS_SHARING_UNKNOWN,
};

#define AGENT_BUS_PINS_MAX 4
#define AGENT_BUS_ROLE_MAX 7

struct agent_bus_pin {
	char role[AGENT_BUS_ROLE_MAX + 1]; /* "sda", "scl", "sck", "mosi", "tx", "data", ... */
	int16_t pin;			   /* GPIO number; -1 when unknown */
};

struct agent_bus {
	char name[AGENT_BOARD_NAME_MAX + 1]; /* "i2c0" */
	enum agent_bus_type type;
	struct agent_bus_pin pins[AGENT_BUS_PINS_MAX];
	uint8_t pin_count; /* 0 with pins_known false: the port cannot tell */
	bool pins_known;
	uint32_t speed_hz; /* clock or baud rate; 0: unknown */
	bool ready;
	enum agent_bus_origin origin;
	enum agent_bus_sharing sharing;
	int16_t leases; /* current users; -1: unknown */
};

int agent_bus_count(void);
int agent_bus_get(size_t index, struct agent_bus *bus);

/* Roles of a display (struct agent_display.roles). */
#define AGENT_DISPLAY_ROLE_PRIMARY  (1u << 0) /* the board's main display */
#define AGENT_DISPLAY_ROLE_CONSOLE  (1u << 1) /* shows the shell */
#define AGENT_DISPLAY_ROLE_GRAPHICS (1u << 2) /* scripts may draw on it */
#define AGENT_DISPLAY_ROLE_STATUS   (1u << 3) /* a status line or indicator panel */
#define AGENT_DISPLAY_ROLE_COUNT    4

struct agent_display {
	char name[AGENT_BOARD_NAME_MAX + 1];
	char driver[AGENT_BOARD_NAME_MAX + 1]; /* "" when unknown */
	uint16_t width;			       /* pixels; 0 when unknown */
	uint16_t height;
	bool ready;
	uint32_t roles; /* AGENT_DISPLAY_ROLE_* */
	bool brightness;
	char owner[AGENT_BOARD_NAME_MAX + 1]; /* who draws on it now; "" when nobody */
};

int agent_display_count(void);
int agent_display_get(size_t index, struct agent_display *display);

enum agent_wifi_state {
	AGENT_WIFI_ABSENT, /* no Wi-Fi in this build */
	AGENT_WIFI_OFF,
	AGENT_WIFI_DISCONNECTED,
	AGENT_WIFI_SCANNING,
	AGENT_WIFI_CONNECTING,
	AGENT_WIFI_CONNECTED,
	AGENT_WIFI_UNKNOWN,
};

struct agent_network_state {
	enum agent_wifi_state sta_state;
	char sta_ssid[AGENT_BOARD_SSID_MAX + 1];   /* "" when not associated */
	char ip[AGENT_BOARD_ADDR_MAX + 1];	   /* station address; "" when none */
	char netmask[AGENT_BOARD_ADDR_MAX + 1];
	char gateway[AGENT_BOARD_ADDR_MAX + 1];
	bool rssi_known;
	int16_t rssi_dbm;
	uint16_t channel; /* 0: unknown or not associated */
	bool ap_known; /* false: the port cannot read the access point; ap_* mean nothing */
	bool ap_active;
	char ap_ssid[AGENT_BOARD_SSID_MAX + 1];
	char ap_ip[AGENT_BOARD_ADDR_MAX + 1];
	uint16_t ap_channel;
	uint8_t ap_clients;
	bool nat_known;
	bool nat_enabled; /* forwarding between the access point and the station */
};

/** Reads the state only: never scans, connects or touches the provider's connection. */
int agent_network_get(struct agent_network_state *state);

/** Whether the device has a network interface (Wi-Fi, Ethernet, ...) now; reads only. */
bool agent_network_present(void);

enum agent_sensor_family {
	AGENT_SENSOR_BATTERY,
	AGENT_SENSOR_ENVIRONMENT,
	AGENT_SENSOR_FAMILY_COUNT
};

#define AGENT_SENSOR_QUANTITY_MAX 15
#define AGENT_SENSOR_UNIT_MAX	  7

struct agent_sensor_reading {
	enum agent_sensor_family family;
	char sensor[AGENT_BOARD_NAME_MAX + 1];		/* "battery", "bme280" */
	char quantity[AGENT_SENSOR_QUANTITY_MAX + 1];	/* "voltage", "temperature", ... */
	char unit[AGENT_SENSOR_UNIT_MAX + 1];		/* "V", "C", "%RH", "hPa", ... */
	int64_t value_micro; /* the value times 1 000 000 */
	int error;	     /* 0, or the negative errno of a failed reading (no value) */
};

/** Whether the build has the service of @p family (a family absent is "unavailable"). */
bool agent_sensor_family_present(enum agent_sensor_family family);
int agent_sensor_count(void);
/** Takes reading @p index now; a failed measurement is 0 with reading->error set. */
int agent_sensor_read(size_t index, struct agent_sensor_reading *reading);

#ifdef __cplusplus
}
#endif

#endif /* AGENT_PORT_H */
