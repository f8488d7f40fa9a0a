/*
 * The hardware inspection tools: hardware_describe, gpio_list, gpio_read, buses_list,
 * display_list, network_status and sensors_read. Each reads the port's board inspection
 * (agent_port.h) and writes one bounded JSON object; none configures, claims, powers or
 * connects anything. A value the port does not know is null. Lists stop at a whole element
 * with "truncated": true. docs/tools-device.md describes every result.
 */
#if defined(CONFIG_AGENT_TOOLS_HARDWARE)

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"
#include "agent_version.h"
#include "tools_hardware.h"
#include "tools_listing.h"

/* Room kept after a list for the members written behind it ("next_start"). */
#define LIST_TAIL_BYTES 24

static char item_buf[TOOLS_ITEM_MAX]; /* tools run one at a time */

/* ---- names ---------------------------------------------------------------------------------- */

static const char *const cap_names[AGENT_BOARD_CAP_COUNT] = {
	"psram", "sd", "display", "wifi", "bluetooth", "ethernet", "usb", "battery",
};
static const char *const policy_names[] = {"free", "input_only", "strapping", "reserved",
					   "unknown"};
static const char *const mode_names[] = {"unconfigured", "input", "output", "input_output",
					 "unknown"};
static const char *const bus_type_names[AGENT_BUS_TYPE_COUNT] = {"i2c", "spi", "uart",
								 "onewire"};
static const char *const origin_names[] = {"board", "runtime", "unknown"};
static const char *const sharing_names[] = {"shared", "exclusive", "unknown"};
static const char *const role_names[AGENT_DISPLAY_ROLE_COUNT] = {"primary", "console",
								 "graphics", "status"};
static const char *const wifi_names[] = {"absent",     "off",	    "disconnected", "scanning",
					 "connecting", "connected", "unknown"};
static const char *const family_names[AGENT_SENSOR_FAMILY_COUNT] = {"battery", "environment"};

#define NAME_OF(table, value)                                                                      \
	((unsigned int)(value) < sizeof(table) / sizeof((table)[0]) ? (table)[value] : "unknown")

static void key_int_or_null(struct json_writer *w, const char *key, int64_t value, bool known)
{
	jw_key(w, key);
	if (known) {
		jw_int(w, value);
	} else {
		jw_null(w);
	}
}

/* The port's "cannot tell" for a whole call, as one line for the model. */
static int port_fail(struct tool_ctx *ctx, int err, const char *what)
{
	if (err == -ENOTSUP) {
		return tool_fail(ctx, err, "this firmware cannot read %s", what);
	}
	return tool_fail(ctx, err, "reading %s failed (error %d)", what, err);
}

/* ---- hardware_describe ---------------------------------------------------------------------- */

static int describe_exec(struct tool_ctx *ctx, const struct tool_args *args,
			 struct json_writer *out)
{
	struct agent_board_info info;
	int counts[4];
	static const char *const count_keys[4] = {"gpio_slots", "buses", "displays",
						  "sensor_readings"};
	int err;

	(void)args;
	memset(&info, 0, sizeof(info));
	err = agent_board_info_get(&info);
	if (err != 0) {
		return port_fail(ctx, err, "the board description");
	}
	counts[0] = agent_gpio_count();
	counts[1] = agent_bus_count();
	counts[2] = agent_display_count();
	counts[3] = agent_sensor_count();
	jw_object_begin(out);
	jw_key(out, "board");
	jw_string(out, agent_board_name());
	tools_key_string_or_null(out, "model", info.model);
	tools_key_string_or_null(out, "soc", info.soc);
	jw_key(out, "firmware_version");
	jw_string(out, AGENT_VERSION_STRING);
	jw_key(out, "capabilities");
	jw_object_begin(out);
	for (size_t i = 0; i < AGENT_BOARD_CAP_COUNT; i++) {
		jw_key(out, cap_names[i]);
		jw_bool(out, (info.caps & (1u << i)) != 0u);
	}
	jw_object_end(out);
	jw_key(out, "psram_bytes");
	jw_int(out, info.psram_bytes);
	key_int_or_null(out, "flash_bytes", info.flash_bytes, info.flash_bytes != 0u);
	key_int_or_null(out, "sram_bytes", info.sram_bytes, info.sram_bytes != 0u);
	jw_key(out, "counts");
	jw_object_begin(out);
	for (size_t i = 0; i < 4; i++) {
		/* A list the port cannot read is null here; its own tool says why. */
		key_int_or_null(out, count_keys[i], counts[i], counts[i] >= 0);
	}
	jw_object_end(out);
	jw_object_end(out);
	return 0;
}

/* ---- GPIO ----------------------------------------------------------------------------------- */

static bool mode_configured(enum agent_gpio_mode mode)
{
	return mode == AGENT_GPIO_MODE_INPUT || mode == AGENT_GPIO_MODE_OUTPUT ||
	       mode == AGENT_GPIO_MODE_INPUT_OUTPUT;
}

/* Why there is no level, as a token; NULL when there is one. */
static const char *level_reason(const struct agent_gpio_slot *s)
{
	if (s->readable) {
		return s->read_error != 0 ? "read_failed" : NULL;
	}
	switch (s->mode) {
	case AGENT_GPIO_MODE_UNCONFIGURED:
		return "not_configured";
	case AGENT_GPIO_MODE_OUTPUT:
		return "output_only";
	default:
		return "configuration_unknown";
	}
}

static void write_gpio(struct json_writer *w, size_t slot, const struct agent_gpio_slot *s,
		       bool detailed)
{
	const char *why = level_reason(s);

	jw_object_begin(w);
	jw_key(w, "slot");
	jw_int(w, (int64_t)slot);
	jw_key(w, "name");
	jw_string(w, s->name);
	tools_key_string_or_null(w, "controller", s->controller);
	jw_key(w, "pin");
	jw_int(w, s->pin);
	jw_key(w, "policy");
	jw_string(w, NAME_OF(policy_names, s->policy));
	tools_key_string_or_null(w, "claimed_by", s->claimed_by);
	jw_key(w, "mode");
	jw_string(w, NAME_OF(mode_names, s->mode));
	if (detailed) {
		jw_key(w, "configured");
		if (s->mode == AGENT_GPIO_MODE_UNKNOWN) {
			jw_null(w);
		} else {
			jw_bool(w, mode_configured(s->mode));
		}
	}
	jw_key(w, "readable");
	jw_bool(w, s->readable);
	key_int_or_null(w, "level", s->level, why == NULL);
	if (detailed) {
		tools_key_string_or_null(w, "level_reason", why);
		if (s->readable && s->read_error != 0) {
			jw_key(w, "read_error");
			jw_int(w, s->read_error);
		}
	}
	jw_object_end(w);
}

static int gpio_list_exec(struct tool_ctx *ctx, const struct tool_args *args,
			  struct json_writer *out)
{
	int count = agent_gpio_count();
	size_t start = args->v[0].present ? (size_t)args->v[0].integer : 0;
	size_t i;
	bool truncated = false;

	if (count < 0) {
		return port_fail(ctx, count, "the GPIO slots");
	}
	if (start > 0 && start >= (size_t)count) {
		return tool_fail(ctx, -EINVAL, "start %zu is past the last slot (%d slots)", start,
				 count);
	}
	jw_object_begin(out);
	jw_key(out, "count");
	jw_int(out, count);
	jw_key(out, "start");
	jw_int(out, (int64_t)start);
	jw_key(out, "gpios");
	jw_array_begin(out);
	for (i = start; i < (size_t)count; i++) {
		struct agent_gpio_slot slot;
		struct json_writer item;

		if (agent_gpio_get(i, &slot) != 0) {
			break; /* the list shrank under us: report what was read */
		}
		jw_init(&item, item_buf, sizeof(item_buf));
		write_gpio(&item, i, &slot, false);
		if (!tools_item_append(out, &item, LIST_TAIL_BYTES)) {
			truncated = true;
			break;
		}
	}
	jw_array_end(out);
	jw_key(out, "truncated");
	jw_bool(out, truncated);
	if (truncated) {
		jw_key(out, "next_start");
		jw_int(out, (int64_t)i);
	}
	jw_object_end(out);
	return 0;
}

static bool same_name(const char *a, const char *b, size_t blen)
{
	if (strlen(a) != blen) {
		return false;
	}
	for (size_t i = 0; i < blen; i++) {
		char x = a[i] >= 'a' && a[i] <= 'z' ? (char)(a[i] - 'a' + 'A') : a[i];
		char y = b[i] >= 'a' && b[i] <= 'z' ? (char)(b[i] - 'a' + 'A') : b[i];

		if (x != y) {
			return false;
		}
	}
	return true;
}

static int gpio_read_exec(struct tool_ctx *ctx, const struct tool_args *args,
			  struct json_writer *out)
{
	const struct tool_value *slot_arg = &args->v[0];
	const struct tool_value *name_arg = &args->v[1];
	struct agent_gpio_slot slot;
	int count = agent_gpio_count();
	size_t index;

	if (slot_arg->present == name_arg->present) {
		return tool_fail(ctx, -EINVAL, "give exactly one of slot and name");
	}
	if (count < 0) {
		return port_fail(ctx, count, "the GPIO slots");
	}
	if (slot_arg->present) {
		index = (size_t)slot_arg->integer;
		if (index >= (size_t)count || agent_gpio_get(index, &slot) != 0) {
			return tool_fail(ctx, -ENOENT, "no GPIO slot %zu (%d slots; gpio_list "
						       "shows them)",
					 index, count);
		}
	} else {
		for (index = 0; index < (size_t)count; index++) {
			if (agent_gpio_get(index, &slot) == 0 &&
			    same_name(slot.name, name_arg->str, name_arg->len)) {
				break;
			}
		}
		if (index == (size_t)count) {
			return tool_fail(ctx, -ENOENT, "no GPIO slot named '%.*s'; gpio_list shows "
						       "the names",
					 (int)(name_arg->len > 32 ? 32 : name_arg->len),
					 name_arg->str);
		}
	}
	write_gpio(out, index, &slot, true);
	return 0;
}

/* ---- buses ---------------------------------------------------------------------------------- */

static void write_bus(struct json_writer *w, const struct agent_bus *b)
{
	jw_object_begin(w);
	jw_key(w, "name");
	jw_string(w, b->name);
	jw_key(w, "type");
	jw_string(w, NAME_OF(bus_type_names, b->type));
	jw_key(w, "pins");
	if (b->pins_known) {
		jw_object_begin(w);
		for (uint8_t i = 0; i < b->pin_count && i < AGENT_BUS_PINS_MAX; i++) {
			key_int_or_null(w, b->pins[i].role, b->pins[i].pin, b->pins[i].pin >= 0);
		}
		jw_object_end(w);
	} else {
		jw_null(w);
	}
	key_int_or_null(w, "speed_hz", b->speed_hz, b->speed_hz != 0u);
	jw_key(w, "ready");
	jw_bool(w, b->ready);
	jw_key(w, "origin");
	jw_string(w, NAME_OF(origin_names, b->origin));
	jw_key(w, "sharing");
	jw_string(w, NAME_OF(sharing_names, b->sharing));
	key_int_or_null(w, "leases", b->leases, b->leases >= 0);
	jw_object_end(w);
}

static int buses_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	const struct tool_value *type_arg = &args->v[0];
	int count = agent_bus_count();
	int type = -1;
	int64_t listed = 0;
	bool truncated = false;

	if (type_arg->present && type_arg->len > 0) {
		for (int t = 0; t < AGENT_BUS_TYPE_COUNT; t++) {
			if (same_name(bus_type_names[t], type_arg->str, type_arg->len)) {
				type = t;
			}
		}
		if (type < 0) {
			return tool_fail(ctx, -EINVAL,
					 "unknown bus type '%.*s' (i2c, spi, uart or onewire)",
					 (int)(type_arg->len > 16 ? 16 : type_arg->len),
					 type_arg->str);
		}
	}
	if (count < 0) {
		return port_fail(ctx, count, "the buses");
	}
	jw_object_begin(out);
	jw_key(out, "buses");
	jw_array_begin(out);
	for (size_t i = 0; i < (size_t)count; i++) {
		struct agent_bus bus;
		struct json_writer item;

		if (agent_bus_get(i, &bus) != 0) {
			break;
		}
		if (type >= 0 && bus.type != (enum agent_bus_type)type) {
			continue;
		}
		jw_init(&item, item_buf, sizeof(item_buf));
		write_bus(&item, &bus);
		if (!tools_item_append(out, &item, LIST_TAIL_BYTES)) {
			truncated = true;
			break;
		}
		listed++;
	}
	jw_array_end(out);
	jw_key(out, "count");
	jw_int(out, listed);
	jw_key(out, "truncated");
	jw_bool(out, truncated);
	jw_object_end(out);
	return 0;
}

/* ---- displays ------------------------------------------------------------------------------- */

static void write_display(struct json_writer *w, const struct agent_display *d)
{
	jw_object_begin(w);
	jw_key(w, "name");
	jw_string(w, d->name);
	tools_key_string_or_null(w, "driver", d->driver);
	key_int_or_null(w, "width", d->width, d->width != 0u);
	key_int_or_null(w, "height", d->height, d->height != 0u);
	jw_key(w, "ready");
	jw_bool(w, d->ready);
	jw_key(w, "roles");
	jw_array_begin(w);
	for (size_t i = 0; i < AGENT_DISPLAY_ROLE_COUNT; i++) {
		if ((d->roles & (1u << i)) != 0u) {
			jw_string(w, role_names[i]);
		}
	}
	jw_array_end(w);
	jw_key(w, "brightness");
	jw_bool(w, d->brightness);
	tools_key_string_or_null(w, "owner", d->owner);
	jw_object_end(w);
}

static int display_exec(struct tool_ctx *ctx, const struct tool_args *args,
			struct json_writer *out)
{
	int count = agent_display_count();
	int64_t listed = 0;
	bool truncated = false;

	(void)args;
	if (count < 0) {
		return port_fail(ctx, count, "the displays");
	}
	jw_object_begin(out);
	jw_key(out, "displays");
	jw_array_begin(out);
	for (size_t i = 0; i < (size_t)count; i++) {
		struct agent_display display;
		struct json_writer item;

		if (agent_display_get(i, &display) != 0) {
			break;
		}
		jw_init(&item, item_buf, sizeof(item_buf));
		write_display(&item, &display);
		if (!tools_item_append(out, &item, LIST_TAIL_BYTES)) {
			truncated = true;
			break;
		}
		listed++;
	}
	jw_array_end(out);
	jw_key(out, "count");
	jw_int(out, listed);
	jw_key(out, "truncated");
	jw_bool(out, truncated);
	jw_object_end(out);
	return 0;
}

/* ---- network -------------------------------------------------------------------------------- */

static int network_exec(struct tool_ctx *ctx, const struct tool_args *args,
			struct json_writer *out)
{
	struct agent_network_state net;
	bool connected;
	int err;

	(void)args;
	memset(&net, 0, sizeof(net));
	err = agent_network_get(&net);
	if (err != 0) {
		return port_fail(ctx, err, "the network state");
	}
	connected = net.sta_state == AGENT_WIFI_CONNECTED;
	jw_object_begin(out);
	jw_key(out, "wifi_present");
	jw_bool(out, net.sta_state != AGENT_WIFI_ABSENT);
	jw_key(out, "station");
	jw_object_begin(out);
	jw_key(out, "state");
	jw_string(out, NAME_OF(wifi_names, net.sta_state));
	tools_key_string_or_null(out, "ssid", net.sta_ssid);
	tools_key_string_or_null(out, "ip", net.ip);
	tools_key_string_or_null(out, "netmask", net.netmask);
	tools_key_string_or_null(out, "gateway", net.gateway);
	key_int_or_null(out, "rssi_dbm", net.rssi_dbm, connected && net.rssi_known);
	key_int_or_null(out, "channel", net.channel, connected && net.channel != 0u);
	jw_object_end(out);
	/* null: the firmware cannot read it (not: there is none). */
	jw_key(out, "access_point");
	if (net.ap_known) {
		jw_object_begin(out);
		jw_key(out, "active");
		jw_bool(out, net.ap_active);
		tools_key_string_or_null(out, "ssid", net.ap_ssid);
		tools_key_string_or_null(out, "ip", net.ap_ip);
		key_int_or_null(out, "channel", net.ap_channel,
				net.ap_active && net.ap_channel != 0u);
		jw_key(out, "clients");
		jw_int(out, net.ap_clients);
		jw_object_end(out);
	} else {
		jw_null(out);
	}
	jw_key(out, "nat");
	if (net.nat_known) {
		jw_object_begin(out);
		jw_key(out, "enabled");
		jw_bool(out, net.nat_enabled);
		jw_object_end(out);
	} else {
		jw_null(out);
	}
	jw_object_end(out);
	return 0;
}

/* ---- sensors -------------------------------------------------------------------------------- */

/* value_micro as a JSON number with no trailing zeros: 3912000 -> 3.912, 81000000 -> 81. */
static void write_micro(struct json_writer *w, int64_t micro)
{
	char text[32];
	uint64_t magnitude = micro < 0 ? (uint64_t)0 - (uint64_t)micro : (uint64_t)micro;
	uint64_t frac = magnitude % 1000000u;
	int n;

	if (frac == 0u) {
		n = snprintf(text, sizeof(text), "%s%llu", micro < 0 ? "-" : "",
			     (unsigned long long)(magnitude / 1000000u));
	} else {
		int digits = 6;

		while (frac % 10u == 0u) {
			frac /= 10u;
			digits--;
		}
		n = snprintf(text, sizeof(text), "%s%llu.%0*llu", micro < 0 ? "-" : "",
			     (unsigned long long)(magnitude / 1000000u), digits,
			     (unsigned long long)frac);
	}
	if (n > 0 && (size_t)n < sizeof(text)) {
		jw_raw(w, text, (size_t)n);
	} else {
		jw_null(w);
	}
}

static void write_reading(struct json_writer *w, const struct agent_sensor_reading *r)
{
	jw_object_begin(w);
	jw_key(w, "sensor");
	jw_string(w, r->sensor);
	jw_key(w, "quantity");
	jw_string(w, r->quantity);
	jw_key(w, "unit");
	jw_string(w, r->unit);
	jw_key(w, "value");
	if (r->error == 0) {
		write_micro(w, r->value_micro);
	} else {
		jw_null(w);
		jw_key(w, "error");
		jw_int(w, r->error);
	}
	jw_object_end(w);
}

static int sensors_exec(struct tool_ctx *ctx, const struct tool_args *args,
			struct json_writer *out)
{
	const struct tool_value *family_arg = &args->v[0];
	int count = agent_sensor_count();
	int only = -1;
	bool truncated = false;

	if (family_arg->present && family_arg->len > 0) {
		for (int f = 0; f < AGENT_SENSOR_FAMILY_COUNT; f++) {
			if (same_name(family_names[f], family_arg->str, family_arg->len)) {
				only = f;
			}
		}
		if (only < 0) {
			return tool_fail(ctx, -EINVAL,
					 "unknown sensor family '%.*s' (battery or environment)",
					 (int)(family_arg->len > 16 ? 16 : family_arg->len),
					 family_arg->str);
		}
	}
	if (count < 0) {
		return port_fail(ctx, count, "the sensors");
	}
	jw_object_begin(out);
	jw_key(out, "families");
	jw_array_begin(out);
	for (int f = 0; f < AGENT_SENSOR_FAMILY_COUNT && !truncated; f++) {
		bool present;

		if (only >= 0 && f != only) {
			continue;
		}
		present = agent_sensor_family_present((enum agent_sensor_family)f);
		jw_object_begin(out);
		jw_key(out, "family");
		jw_string(out, family_names[f]);
		jw_key(out, "available");
		jw_bool(out, present);
		if (!present) {
			jw_key(out, "reason");
			jw_string(out, "not_in_build");
			jw_object_end(out);
			continue;
		}
		jw_key(out, "readings");
		jw_array_begin(out);
		for (size_t i = 0; i < (size_t)count; i++) {
			struct agent_sensor_reading r;
			struct json_writer item;

			memset(&r, 0, sizeof(r));
			if (agent_sensor_read(i, &r) != 0) {
				break;
			}
			if (r.family != (enum agent_sensor_family)f) {
				continue;
			}
			jw_init(&item, item_buf, sizeof(item_buf));
			write_reading(&item, &r);
			/* The closing brackets of this family and of the list follow. */
			if (!tools_item_append(out, &item, LIST_TAIL_BYTES)) {
				truncated = true;
				break;
			}
		}
		jw_array_end(out);
		jw_object_end(out);
	}
	jw_array_end(out);
	jw_key(out, "truncated");
	jw_bool(out, truncated);
	jw_object_end(out);
	return 0;
}

/* ---- definitions ---------------------------------------------------------------------------- */

const struct tool_def tool_hardware_describe = {
	.name = "hardware_describe",
	.description = "The compiled board's identity (board target, model, SoC), its "
		       "capabilities (psram, sd, display, wifi, bluetooth, ethernet, usb, "
		       "battery), installed PSRAM, flash and RAM sizes, and how many GPIO "
		       "slots, buses, displays and sensor readings it has. Call it first, "
		       "before assuming any peripheral exists.",
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.output = "{board, model, soc, firmware_version, capabilities: {psram, sd, display, wifi, "
		  "bluetooth, ethernet, usb, battery}, psram_bytes, flash_bytes, sram_bytes, "
		  "counts: {gpio_slots, buses, displays, sensor_readings}}",
	.exec = describe_exec,
	.keywords = "hardware board describe capabilities peripherals psram sd card chip soc "
		    "device identity",
};

static const struct tool_param gpio_list_params[] = {
	{
		.name = "start",
		.type = TOOL_PARAM_INTEGER,
		.required = false,
		.description = "First slot to list (default 0); a truncated list gives "
			       "next_start.",
		.min = 0,
		.max = 1023,
	},
};

const struct tool_def tool_gpio_list = {
	.name = "gpio_list",
	.description = "The board's real GPIO slots: name, controller and pin, pin policy "
		       "(free, input_only, strapping, reserved), who claims it, its current "
		       "mode, and the level of pins already configured as inputs. Never "
		       "configures or claims a pin; other pins have level null.",
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.params = gpio_list_params,
	.param_count = 1,
	.output = "{count, start, gpios: [{slot, name, controller, pin, policy, claimed_by, mode, "
		  "readable, level}], truncated, next_start?}",
	.exec = gpio_list_exec,
	.keywords = "gpio pins pin list io digital inputs outputs levels claims",
};

static const struct tool_param gpio_read_params[] = {
	{
		.name = "slot",
		.type = TOOL_PARAM_INTEGER,
		.required = false,
		.description = "Slot number from gpio_list (give slot or name).",
		.min = 0,
		.max = 1023,
	},
	{
		.name = "name",
		.type = TOOL_PARAM_STRING,
		.required = false,
		.description = "Slot name from gpio_list, such as \"BOOT\" (give slot or name).",
		.min = 1,
		.max = AGENT_BOARD_NAME_MAX,
	},
};

const struct tool_def tool_gpio_read = {
	.name = "gpio_read",
	.description = "Inspect one GPIO slot (by slot number or name): policy, claim, mode, and "
		       "its level only when the pin is already configured as a readable input; "
		       "otherwise level is null with level_reason. It never configures or "
		       "claims the pin.",
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.params = gpio_read_params,
	.param_count = 2,
	.output = "{slot, name, controller, pin, policy, claimed_by, mode, configured, readable, "
		  "level, level_reason, read_error?}",
	.exec = gpio_read_exec,
	.keywords = "gpio pin read level input state button inspect",
};

static const struct tool_param buses_params[] = {
	{
		.name = "type",
		.type = TOOL_PARAM_STRING,
		.required = false,
		.description = "Only buses of this type: i2c, spi, uart or onewire (default: all).",
		.min = 0,
		.max = 16,
	},
};

const struct tool_def tool_buses_list = {
	.name = "buses_list",
	.description = "Registered I2C, SPI, UART and OneWire buses with their real names, pins, "
		       "speed, readiness, origin (board or runtime), sharing mode and current "
		       "lease count.",
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.params = buses_params,
	.param_count = 1,
	.output = "{buses: [{name, type, pins: {role: pin}, speed_hz, ready, origin, sharing, "
		  "leases}], count, truncated}",
	.exec = buses_exec,
	.keywords = "bus buses i2c spi uart serial onewire 1-wire pins leases peripherals",
};

const struct tool_def tool_display_list = {
	.name = "display_list",
	.description = "Registered display targets with their real names, drivers, width and "
		       "height, readiness, roles, brightness support and current owner. Call it "
		       "before writing code for an attached display and use only a returned "
		       "target that is ready.",
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.output = "{displays: [{name, driver, width, height, ready, roles: [primary|console|"
		  "graphics|status], brightness, owner}], count, truncated}",
	.exec = display_exec,
	.keywords = "display screen lcd oled tft graphics panel brightness draw",
};

const struct tool_def tool_network_status = {
	.name = "network_status",
	.description = "Current Wi-Fi station state, SSID, IP address, netmask, gateway, signal "
		       "(RSSI) and channel, access-point state and clients, and NAT. Only reads: "
		       "it does not scan, connect or touch the provider connection.",
	.domain = TOOL_DOMAIN_NETWORK,
	.risk = TOOL_RISK_READ,
	.output = "{wifi_present, station: {state, ssid, ip, netmask, gateway, rssi_dbm, channel}, "
		  "access_point: {active, ssid, ip, channel, clients} or null, nat: {enabled} or "
		  "null}",
	.exec = network_exec,
	.keywords = "network wifi wi-fi wlan ip address signal rssi channel access point ap nat "
		    "connection",
};

static const struct tool_param sensors_params[] = {
	{
		.name = "family",
		.type = TOOL_PARAM_STRING,
		.required = false,
		.description = "battery or environment (default: both).",
		.min = 0,
		.max = 16,
	},
};

const struct tool_def tool_sensors_read = {
	.name = "sensors_read",
	.description = "Battery and environmental readings (voltage, charge, temperature, "
		       "humidity, pressure, ...) from the sensor services in this firmware. A "
		       "family not in the build is returned with available false.",
	.domain = TOOL_DOMAIN_SENSORS,
	.risk = TOOL_RISK_READ,
	.params = sensors_params,
	.param_count = 1,
	.output = "{families: [{family, available, reason?, readings: [{sensor, quantity, unit, "
		  "value, error?}]}], truncated}",
	.exec = sensors_exec,
	.keywords = "sensors sensor battery voltage charge temperature humidity pressure "
		    "environment measure",
};

#endif /* CONFIG_AGENT_TOOLS_HARDWARE */
