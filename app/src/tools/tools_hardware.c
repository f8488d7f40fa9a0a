/*
 * The hardware inspection tools: hardware_describe, gpio_list, gpio_read, buses_list,
 * display_list, network_status and sensors_read. Each reads the port's board inspection
 * (agent_port.h) and writes one bounded JSON object; none configures, claims, powers or
 * connects anything. A value the port does not know is null. Lists stop at a whole element
 * with "truncated": true. docs/tools-device.md describes every result.
 *
 * This file holds hardware_describe and what the hardware tools share
 * (tools_hardware_internal.h); the others are in tools_gpio.c (gpio_list, gpio_read),
 * tools_buses.c (buses_list, display_list) and tools_net_sensors.c (network_status,
 * sensors_read).
 */
#if defined(CONFIG_AGENT_TOOLS_HARDWARE)

#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "agent_version.h"
#include "tools_hardware.h"
#include "tools_hardware_internal.h"
#include "tools_listing.h"

char tools_hw_item_buf[TOOLS_ITEM_MAX] AGENT_PSRAM_ATTR; /* tools run one at a time */

/* ---- names ---------------------------------------------------------------------------------- */

static const char *const cap_names[AGENT_BOARD_CAP_COUNT] = {
	"psram", "sd", "display", "wifi", "bluetooth", "ethernet", "usb", "battery",
};

void tools_hw_key_int_or_null(struct json_writer *w, const char *key, int64_t value, bool known)
{
	jw_key(w, key);
	if (known) {
		jw_int(w, value);
	} else {
		jw_null(w);
	}
}

/* The port's "cannot tell" for a whole call, as one line for the model. */
int tools_hw_port_fail(struct tool_ctx *ctx, int err, const char *what)
{
	if (err == -ENOTSUP) {
		return tool_fail(ctx, err, "this firmware cannot read %s", what);
	}
	return tool_fail(ctx, err, "reading %s failed (error %d)", what, err);
}

bool tools_hw_same_name(const char *a, const char *b, size_t blen)
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
		return tools_hw_port_fail(ctx, err, "the board description");
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
	tools_hw_key_int_or_null(out, "flash_bytes", info.flash_bytes, info.flash_bytes != 0u);
	tools_hw_key_int_or_null(out, "sram_bytes", info.sram_bytes, info.sram_bytes != 0u);
	jw_key(out, "counts");
	jw_object_begin(out);
	for (size_t i = 0; i < 4; i++) {
		/* A list the port cannot read is null here; its own tool says why. */
		tools_hw_key_int_or_null(out, count_keys[i], counts[i], counts[i] >= 0);
	}
	jw_object_end(out);
	jw_object_end(out);
	return 0;
}

/* ---- definitions ---------------------------------------------------------------------------- */

const struct tool_def tool_hardware_describe = {
	.name = "hardware_describe",
	.description = TOOL_TEXT(tools_hardware_description_1,
		"The compiled board's identity (board target, model, SoC), its capabilities "
		"(psram, sd, display, wifi, bluetooth, ethernet, usb, battery), installed "
		"PSRAM, flash and RAM sizes, and how many GPIO slots, buses, displays and "
		"sensor readings it has. Call it first, before assuming any peripheral exists."),
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.output = TOOL_TEXT(tools_hardware_output_1,
		"{board, model, soc, firmware_version, capabilities: {psram, sd, display, wifi, "
		"bluetooth, ethernet, usb, battery}, psram_bytes, flash_bytes, sram_bytes, "
		"counts: {gpio_slots, buses, displays, sensor_readings}}"),
	.exec = describe_exec,
	.keywords = TOOL_TEXT(tools_hardware_keywords_1,
		"hardware board describe capabilities peripherals psram sd card chip soc device "
		"identity"),
};

#endif /* CONFIG_AGENT_TOOLS_HARDWARE */
