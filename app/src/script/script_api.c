/*
 * The device API scripts see (script_runtime.h; docs/scripting.md, "The device API"): the
 * same functions, arguments and results in Python (`import device`) and Lua (`device`).
 * Files go through the storage tools' path rules (storage_path_resolve: .ssh, the agent's
 * own .agent state, staging names and the settings store are refused), with their bounds;
 * the board is read through the port's read-only inspection calls.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"
#include "agent_version.h"
#include "script_internal.h"
#include "script_runtime.h"
#include "storage_fs.h"
#include "storage_params.h"
#include "storage_path.h"
#include "tools_hw_names.h"

#define API_READ_MAX  CONFIG_AGENT_STORAGE_IO_MAX_LEN
#define API_WRITE_MAX CONFIG_AGENT_STORAGE_IO_MAX_LEN
#define API_LIST_MAX  CONFIG_AGENT_STORAGE_LIST_MAX

_Static_assert(API_READ_MAX + 1 <= SCRIPT_API_SCRATCH_BYTES, "a read fits the scratch");

typedef char api_error[SCRIPT_ERROR_MAX + 1];

static int api_fail(api_error error, int err, const char *fmt, const char *arg)
{
	(void)snprintf(error, SCRIPT_ERROR_MAX + 1, fmt, arg);
	return err;
}

/* ---- Sink shorthands ------------------------------------------------------------------------ */

static void put_str(struct script_sink *out, const char *text)
{
	out->ops->string(out->ctx, text, strlen(text));
}

static void put_kv_str(struct script_sink *out, const char *key, const char *text)
{
	out->ops->key(out->ctx, key);
	put_str(out, text);
}

static void put_kv_int(struct script_sink *out, const char *key, int64_t value)
{
	out->ops->key(out->ctx, key);
	out->ops->integer(out->ctx, value);
}

static void put_kv_bool(struct script_sink *out, const char *key, bool value)
{
	out->ops->key(out->ctx, key);
	out->ops->boolean(out->ctx, value);
}

/* ---- Paths ---------------------------------------------------------------------------------- */

/* Resolve a script's path like the storage tools do, relative to /lfs. */
static int api_path(const struct script_arg *arg, char path[STORAGE_PATH_MAX + 1],
		    api_error error)
{
	struct tool_ctx ctx = {.cwd = STORAGE_DEFAULT_CWD};
	int err = storage_path_resolve(&ctx, arg->str, arg->len, path);

	if (err != 0) {
		return api_fail(error, err, "%s", ctx.error);
	}
	return 0;
}

static const char *type_name(enum agent_fs_type type)
{
	return type == AGENT_FS_DIR ? "dir" : "file";
}

static int fs_error(api_error error, int err, const char *what, const char *path)
{
	(void)snprintf(error, SCRIPT_ERROR_MAX + 1, "%s %.96s: %s", what, path,
		       storage_errno_text(err));
	return err;
}

/* ---- Files ---------------------------------------------------------------------------------- */

static int fn_read(struct script_exec *ex, const struct script_arg *args,
		   struct script_sink *out, api_error error)
{
	char path[STORAGE_PATH_MAX + 1];
	int64_t offset = args[1].present ? args[1].integer : 0;
	int64_t length = args[2].present ? args[2].integer : API_READ_MAX;
	size_t got = 0;
	char *buf;
	int err;

	if (offset < 0 || offset > INT32_MAX) {
		return api_fail(error, -EINVAL, "offset out of range%s", "");
	}
	if (length < 0 || length > API_READ_MAX) {
		return api_fail(error, -EINVAL, "length must be 0 to " STORAGE_STR(API_READ_MAX) "%s",
				"");
	}
	err = api_path(&args[0], path, error);
	if (err != 0) {
		return err;
	}
	storage_recover(path);
	buf = agent_region_alloc(ex->heap, (size_t)length + 1u);
	if (buf == NULL) {
		return api_fail(error, -ENOMEM, "the script's heap cannot hold the read%s", "");
	}
	ex->api_scratch = buf;
	err = agent_fs_open(&ex->api_file, path, AGENT_FS_O_READ);
	if (err != 0) {
		ex->api_file = NULL;
		return fs_error(error, err, "read", path);
	}
	if (offset > 0) {
		err = agent_fs_seek(ex->api_file, (int32_t)offset, AGENT_FS_SEEK_SET);
	}
	while (err == 0 && got < (size_t)length) {
		int n = agent_fs_read(ex->api_file, buf + got, (size_t)length - got);

		if (n < 0) {
			err = n;
		} else if (n == 0) {
			break;
		} else {
			got += (size_t)n;
		}
	}
	(void)agent_fs_close(ex->api_file);
	ex->api_file = NULL;
	if (err != 0) {
		return fs_error(error, err, "read", path);
	}
	out->ops->string(out->ctx, buf, got);
	return 0;
}

static int write_common(const struct script_arg *args, struct script_sink *out,
			api_error error, bool append)
{
	char path[STORAGE_PATH_MAX + 1];
	char stage[STORAGE_STAGE_PATH_MAX + 1];
	struct agent_file *file;
	const char *target;
	int err;

	if (args[1].len > API_WRITE_MAX) {
		return api_fail(error, -EINVAL,
				"text longer than " STORAGE_STR(API_WRITE_MAX) " bytes%s", "");
	}
	err = api_path(&args[0], path, error);
	if (err != 0) {
		return err;
	}
	storage_recover(path);
	/* A whole new content is staged and renamed over the file (a power cut leaves the old
	 * file or the new one); an append goes to the file itself. */
	storage_stage_path(path, STORAGE_WRITE_STAGE_NAME, stage);
	target = append ? path : stage;
	err = agent_fs_open(&file, target,
			    AGENT_FS_O_WRITE | AGENT_FS_O_CREATE |
				    (append ? AGENT_FS_O_APPEND : AGENT_FS_O_TRUNC));
	if (err != 0) {
		return fs_error(error, err, "write", path);
	}
	if (args[1].len > 0u) {
		int n = agent_fs_write(file, args[1].str, args[1].len);

		err = n < 0 ? n : (size_t)n != args[1].len ? -ENOSPC : 0;
	}
	if (err == 0) {
		err = agent_fs_sync(file);
	}
	err = storage_close(file, err);
	if (err == 0 && !append) {
		err = storage_replace(stage, path);
	}
	if (err != 0) {
		if (!append) {
			(void)agent_fs_unlink(stage);
		}
		return fs_error(error, err, "write", path);
	}
	out->ops->integer(out->ctx, (int64_t)args[1].len);
	return 0;
}

static int fn_write(struct script_exec *ex, const struct script_arg *args,
		    struct script_sink *out, api_error error)
{
	(void)ex;
	return write_common(args, out, error, false);
}

static int fn_append(struct script_exec *ex, const struct script_arg *args,
		     struct script_sink *out, api_error error)
{
	(void)ex;
	return write_common(args, out, error, true);
}

static int fn_remove(struct script_exec *ex, const struct script_arg *args,
		     struct script_sink *out, api_error error)
{
	char path[STORAGE_PATH_MAX + 1];
	int err;

	(void)ex;
	err = api_path(&args[0], path, error);
	if (err == 0) {
		err = agent_fs_unlink(path);
		if (err != 0) {
			return fs_error(error, err, "remove", path);
		}
		out->ops->none(out->ctx);
	}
	return err;
}

static int fn_stat(struct script_exec *ex, const struct script_arg *args,
		   struct script_sink *out, api_error error)
{
	char path[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;
	int err;

	(void)ex;
	err = api_path(&args[0], path, error);
	if (err != 0) {
		return err;
	}
	storage_recover(path);
	err = agent_fs_stat(path, &entry);
	if (err == -ENOENT) {
		out->ops->none(out->ctx);
		return 0;
	}
	if (err != 0) {
		return fs_error(error, err, "stat", path);
	}
	out->ops->map_begin(out->ctx);
	put_kv_str(out, "type", type_name(entry.type));
	put_kv_int(out, "size", (int64_t)entry.size);
	out->ops->map_end(out->ctx);
	return 0;
}

/* One listed entry in the scratch: type, size, name and its NUL. */
struct listed {
	uint32_t size;
	uint8_t is_dir;
	char name[];
};

static int fn_list(struct script_exec *ex, const struct script_arg *args,
		   struct script_sink *out, api_error error)
{
	char path[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;
	size_t used = 0;
	size_t count = 0;
	bool more = false;
	uint8_t *buf;
	int err;

	err = api_path(&args[0], path, error);
	if (err != 0) {
		return err;
	}
	buf = agent_region_alloc(ex->heap, SCRIPT_API_SCRATCH_BYTES);
	if (buf == NULL) {
		return api_fail(error, -ENOMEM, "the script's heap cannot hold the list%s", "");
	}
	ex->api_scratch = buf;
	err = agent_fs_opendir(&ex->api_dir, path);
	if (err != 0) {
		ex->api_dir = NULL;
		return fs_error(error, err, "list", path);
	}
	/* The names are gathered and the directory closed before any value is built. */
	while ((err = agent_fs_readdir(ex->api_dir, &entry)) == 0 && entry.name[0] != '\0') {
		size_t name_len = strlen(entry.name);
		size_t need = (sizeof(struct listed) + name_len + 1u + 3u) & ~(size_t)3u;
		struct listed *item;

		if (storage_entry_is_hidden(path, entry.name)) {
			continue;
		}
		if (count == API_LIST_MAX || used + need > SCRIPT_API_SCRATCH_BYTES) {
			more = true;
			break;
		}
		item = (struct listed *)(buf + used);
		item->size = (uint32_t)entry.size;
		item->is_dir = entry.type == AGENT_FS_DIR;
		memcpy(item->name, entry.name, name_len + 1u);
		used += need;
		count++;
	}
	(void)agent_fs_closedir(ex->api_dir);
	ex->api_dir = NULL;
	if (err != 0) {
		return fs_error(error, err, "list", path);
	}
	out->ops->map_begin(out->ctx);
	out->ops->key(out->ctx, "entries");
	out->ops->list_begin(out->ctx);
	for (size_t at = 0; at < used;) {
		const struct listed *item = (const struct listed *)(buf + at);
		size_t name_len = strlen(item->name);

		out->ops->map_begin(out->ctx);
		put_kv_str(out, "name", item->name);
		put_kv_str(out, "type", item->is_dir ? "dir" : "file");
		put_kv_int(out, "size", item->size);
		out->ops->map_end(out->ctx);
		at += (sizeof(struct listed) + name_len + 1u + 3u) & ~(size_t)3u;
	}
	out->ops->list_end(out->ctx);
	put_kv_bool(out, "truncated", more);
	out->ops->map_end(out->ctx);
	return 0;
}

/* ---- The board ------------------------------------------------------------------------------ */

static int fn_board(struct script_exec *ex, const struct script_arg *args,
		    struct script_sink *out, api_error error)
{
	struct agent_board_info info = {0};

	(void)ex;
	(void)args;
	(void)error;
	(void)agent_board_info_get(&info);
	out->ops->map_begin(out->ctx);
	put_kv_str(out, "board", agent_board_name());
	put_kv_str(out, "model", info.model);
	put_kv_str(out, "soc", info.soc);
	put_kv_str(out, "firmware", AGENT_VERSION_STRING);
	put_kv_int(out, "uptime_ms", agent_uptime_ms());
	out->ops->map_end(out->ctx);
	return 0;
}

static int fn_uptime_ms(struct script_exec *ex, const struct script_arg *args,
			struct script_sink *out, api_error error)
{
	(void)ex;
	(void)args;
	(void)error;
	out->ops->integer(out->ctx, agent_uptime_ms());
	return 0;
}

static int fn_sleep_ms(struct script_exec *ex, const struct script_arg *args,
		       struct script_sink *out, api_error error)
{
	if (args[0].integer < 0 || args[0].integer > 60000) {
		return api_fail(error, -EINVAL, "ms must be 0 to 60000%s", "");
	}
	/* Returns early when the run is cancelled or reaches its deadline; the runtime's hook
	 * then stops the script. */
	(void)script_exec_sleep(ex, (uint32_t)args[0].integer);
	out->ops->none(out->ctx);
	return 0;
}

static int fn_gpio(struct script_exec *ex, const struct script_arg *args,
		   struct script_sink *out, api_error error)
{
	int count = agent_gpio_count();

	(void)ex;
	(void)args;
	if (count < 0) {
		return api_fail(error, count, "GPIO cannot be read on this board%s", "");
	}
	out->ops->list_begin(out->ctx);
	for (int i = 0; i < count; i++) {
		struct agent_gpio_slot slot;

		if (agent_gpio_get((size_t)i, &slot) != 0) {
			continue;
		}
		out->ops->map_begin(out->ctx);
		put_kv_str(out, "name", slot.name);
		put_kv_str(out, "controller", slot.controller);
		put_kv_int(out, "pin", slot.pin);
		put_kv_str(out, "policy", TOOLS_HW_NAME(tools_hw_gpio_policy_names, slot.policy));
		put_kv_str(out, "mode", TOOLS_HW_NAME(tools_hw_gpio_mode_names, slot.mode));
		put_kv_str(out, "claimed_by", slot.claimed_by);
		out->ops->key(out->ctx, "level");
		if (slot.readable && slot.read_error == 0) {
			out->ops->integer(out->ctx, slot.level);
		} else {
			out->ops->none(out->ctx);
		}
		out->ops->map_end(out->ctx);
	}
	out->ops->list_end(out->ctx);
	return 0;
}

static int fn_sensors(struct script_exec *ex, const struct script_arg *args,
		      struct script_sink *out, api_error error)
{
	int count = agent_sensor_count();

	(void)ex;
	(void)args;
	if (count < 0) {
		return api_fail(error, count, "sensors cannot be read on this board%s", "");
	}
	out->ops->list_begin(out->ctx);
	for (int i = 0; i < count; i++) {
		struct agent_sensor_reading reading;

		if (agent_sensor_read((size_t)i, &reading) != 0) {
			continue;
		}
		out->ops->map_begin(out->ctx);
		put_kv_str(out, "family",
			   TOOLS_HW_NAME(tools_hw_sensor_family_names, reading.family));
		put_kv_str(out, "sensor", reading.sensor);
		put_kv_str(out, "quantity", reading.quantity);
		put_kv_str(out, "unit", reading.unit);
		out->ops->key(out->ctx, "value_micro");
		if (reading.error == 0) {
			out->ops->integer(out->ctx, reading.value_micro);
		} else {
			out->ops->none(out->ctx);
		}
		out->ops->map_end(out->ctx);
	}
	out->ops->list_end(out->ctx);
	return 0;
}

static int fn_buses(struct script_exec *ex, const struct script_arg *args,
		    struct script_sink *out, api_error error)
{
	int count = agent_bus_count();

	(void)ex;
	(void)args;
	if (count < 0) {
		return api_fail(error, count, "buses cannot be read on this board%s", "");
	}
	out->ops->list_begin(out->ctx);
	for (int i = 0; i < count; i++) {
		struct agent_bus bus;

		if (agent_bus_get((size_t)i, &bus) != 0) {
			continue;
		}
		out->ops->map_begin(out->ctx);
		put_kv_str(out, "name", bus.name);
		put_kv_str(out, "type", TOOLS_HW_NAME(tools_hw_bus_type_names, bus.type));
		put_kv_int(out, "speed_hz", bus.speed_hz);
		put_kv_bool(out, "ready", bus.ready);
		put_kv_str(out, "origin", TOOLS_HW_NAME(tools_hw_bus_origin_names, bus.origin));
		put_kv_str(out, "sharing", TOOLS_HW_NAME(tools_hw_bus_sharing_names, bus.sharing));
		out->ops->map_end(out->ctx);
	}
	out->ops->list_end(out->ctx);
	return 0;
}

static int fn_displays(struct script_exec *ex, const struct script_arg *args,
		       struct script_sink *out, api_error error)
{
	int count = agent_display_count();

	(void)ex;
	(void)args;
	if (count < 0) {
		return api_fail(error, count, "displays cannot be read on this board%s", "");
	}
	out->ops->list_begin(out->ctx);
	for (int i = 0; i < count; i++) {
		struct agent_display display;

		if (agent_display_get((size_t)i, &display) != 0) {
			continue;
		}
		out->ops->map_begin(out->ctx);
		put_kv_str(out, "name", display.name);
		put_kv_str(out, "driver", display.driver);
		put_kv_int(out, "width", display.width);
		put_kv_int(out, "height", display.height);
		put_kv_bool(out, "ready", display.ready);
		put_kv_str(out, "owner", display.owner);
		out->ops->map_end(out->ctx);
	}
	out->ops->list_end(out->ctx);
	return 0;
}

static int fn_network(struct script_exec *ex, const struct script_arg *args,
		      struct script_sink *out, api_error error)
{
	struct agent_network_state net;
	int err = agent_network_get(&net);

	(void)ex;
	(void)args;
	if (err != 0) {
		return api_fail(error, err, "the network state cannot be read on this board%s", "");
	}
	out->ops->map_begin(out->ctx);
	put_kv_str(out, "wifi", TOOLS_HW_NAME(tools_hw_wifi_names, net.sta_state));
	put_kv_str(out, "ssid", net.sta_ssid);
	put_kv_str(out, "ip", net.ip);
	put_kv_str(out, "gateway", net.gateway);
	out->ops->key(out->ctx, "rssi_dbm");
	if (net.rssi_known) {
		out->ops->integer(out->ctx, net.rssi_dbm);
	} else {
		out->ops->none(out->ctx);
	}
	put_kv_int(out, "channel", net.channel);
	out->ops->map_end(out->ctx);
	return 0;
}

static int fn_heap(struct script_exec *ex, const struct script_arg *args,
		   struct script_sink *out, api_error error)
{
	struct agent_region_stats stats;

	(void)args;
	if (agent_region_stats(ex->heap, &stats) != 0) {
		return api_fail(error, -EIO, "no heap figures%s", "");
	}
	out->ops->map_begin(out->ctx);
	put_kv_int(out, "size", (int64_t)stats.total_bytes);
	put_kv_int(out, "used", (int64_t)stats.used_bytes);
	put_kv_int(out, "peak", (int64_t)stats.peak_used_bytes);
	put_kv_int(out, "largest_free", (int64_t)stats.largest_free_bytes);
	out->ops->map_end(out->ctx);
	return 0;
}

/* ---- The table ------------------------------------------------------------------------------ */

#define S SCRIPT_ARG_STR
#define I SCRIPT_ARG_INT

static const struct script_fn api[] = {
	{"read", "read(path, offset=0, length=" STORAGE_STR(API_READ_MAX) ") -> str",
	 "Bytes of a file from offset (at most " STORAGE_STR(API_READ_MAX) "); \"\" at the end.",
	 1, 3, {S, I, I}, fn_read},
	{"write", "write(path, text) -> int",
	 "Replace a file with text (at most " STORAGE_STR(API_WRITE_MAX) " bytes), atomically.",
	 2, 2, {S, S}, fn_write},
	{"append", "append(path, text) -> int",
	 "Add text (at most " STORAGE_STR(API_WRITE_MAX) " bytes) to the end of a file.", 2, 2,
	 {S, S}, fn_append},
	{"remove", "remove(path) -> None", "Delete a file or an empty directory.", 1, 1, {S},
	 fn_remove},
	{"stat", "stat(path) -> {type, size} or None", "Whether a path exists, and what it is.",
	 1, 1, {S}, fn_stat},
	{"list", "list(path) -> {entries: [{name, type, size}], truncated}",
	 "Up to " STORAGE_STR(API_LIST_MAX) " entries of a directory.", 1, 1, {S}, fn_list},
	{"board", "board() -> {board, model, soc, firmware, uptime_ms}",
	 "What the device is and runs.", 0, 0, {S}, fn_board},
	{"uptime_ms", "uptime_ms() -> int", "Milliseconds since start-up.", 0, 0, {S},
	 fn_uptime_ms},
	{"sleep_ms", "sleep_ms(ms) -> None",
	 "Wait up to 60000 ms; Esc and the deadline still stop the script.", 1, 1, {I},
	 fn_sleep_ms},
	{"gpio", "gpio() -> [{name, controller, pin, policy, mode, claimed_by, level}]",
	 "The board's GPIO slots, read only (level: None unless the pin is a configured input).",
	 0, 0, {S}, fn_gpio},
	{"sensors", "sensors() -> [{family, sensor, quantity, unit, value_micro}]",
	 "Read every sensor now (value times 1000000; None when the reading failed).", 0, 0, {S},
	 fn_sensors},
	{"buses", "buses() -> [{name, type, speed_hz, ready, origin, sharing}]",
	 "The board's I2C, SPI, UART and 1-Wire buses, read only.", 0, 0, {S}, fn_buses},
	{"displays", "displays() -> [{name, driver, width, height, ready, owner}]",
	 "The board's displays, read only.", 0, 0, {S}, fn_displays},
	{"network", "network() -> {wifi, ssid, ip, gateway, rssi_dbm, channel}",
	 "The network state, read only (rssi_dbm: None when unknown).", 0, 0, {S}, fn_network},
	{"heap", "heap() -> {size, used, peak, largest_free}", "The script's own heap.", 0, 0,
	 {S}, fn_heap},
};

#undef S
#undef I

const struct script_fn *script_api_get(size_t index)
{
	return index < sizeof(api) / sizeof(api[0]) ? &api[index] : NULL;
}

size_t script_api_count(void)
{
	return sizeof(api) / sizeof(api[0]);
}

void script_api_release(struct script_exec *ex)
{
	if (ex->api_file != NULL) {
		(void)agent_fs_close(ex->api_file);
		ex->api_file = NULL;
	}
	if (ex->api_dir != NULL) {
		(void)agent_fs_closedir(ex->api_dir);
		ex->api_dir = NULL;
	}
	if (ex->api_scratch != NULL) {
		agent_region_free(ex->heap, ex->api_scratch);
		ex->api_scratch = NULL;
	}
}

int script_api_call(struct script_exec *ex, const struct script_fn *fn,
		    const struct script_arg *args, uint8_t argc, struct script_sink *out,
		    char error[SCRIPT_ERROR_MAX + 1])
{
	struct script_arg all[SCRIPT_FN_ARGS_MAX] = {0};
	int err;

	error[0] = '\0';
	script_api_release(ex);
	if (argc < fn->args_min || argc > fn->args_max) {
		(void)snprintf(error, SCRIPT_ERROR_MAX + 1, "%s takes %u to %u arguments",
			       fn->signature, fn->args_min, fn->args_max);
		return -EINVAL;
	}
	for (uint8_t i = 0; i < argc; i++) {
		all[i] = args[i];
		all[i].present = true;
	}
	err = fn->call(ex, all, out, error);
	script_api_release(ex);
	return err;
}
