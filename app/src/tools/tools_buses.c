/*
 * The bus and display inspection tools: buses_list (the registered I2C, SPI, UART and
 * OneWire buses, optionally of one type) and display_list (the registered displays). Both
 * only read what the port reports. docs/tools-device.md describes their results.
 */
#if defined(CONFIG_AGENT_TOOLS_HARDWARE)

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"
#include "tools_hardware.h"
#include "tools_hardware_internal.h"
#include "tools_listing.h"


/* ---- buses ---------------------------------------------------------------------------------- */

static void write_bus(struct json_writer *w, const struct agent_bus *b)
{
	jw_object_begin(w);
	jw_key(w, "name");
	jw_string(w, b->name);
	jw_key(w, "type");
	jw_string(w, NAME_OF(tools_hw_bus_type_names, b->type));
	jw_key(w, "pins");
	if (b->pins_known) {
		jw_object_begin(w);
		for (uint8_t i = 0; i < b->pin_count && i < AGENT_BUS_PINS_MAX; i++) {
			tools_hw_key_int_or_null(w, b->pins[i].role, b->pins[i].pin,
						 b->pins[i].pin >= 0);
		}
		jw_object_end(w);
	} else {
		jw_null(w);
	}
	tools_hw_key_int_or_null(w, "speed_hz", b->speed_hz, b->speed_hz != 0u);
	jw_key(w, "ready");
	jw_bool(w, b->ready);
	jw_key(w, "origin");
	jw_string(w, NAME_OF(tools_hw_bus_origin_names, b->origin));
	jw_key(w, "sharing");
	jw_string(w, NAME_OF(tools_hw_bus_sharing_names, b->sharing));
	tools_hw_key_int_or_null(w, "leases", b->leases, b->leases >= 0);
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
			if (tools_hw_same_name(tools_hw_bus_type_names[t], type_arg->str, type_arg->len)) {
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
		return tools_hw_port_fail(ctx, count, "the buses");
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
		jw_init(&item, tools_hw_item_buf, sizeof(tools_hw_item_buf));
		write_bus(&item, &bus);
		if (!tools_item_append(out, &item, LIST_TAIL_BYTES)) {
			truncated = true;
			break;
		}
		listed++;
	}
	return tools_list_end(out, "count", listed, truncated);
}

/* ---- displays ------------------------------------------------------------------------------- */

static void write_display(struct json_writer *w, const struct agent_display *d)
{
	jw_object_begin(w);
	jw_key(w, "name");
	jw_string(w, d->name);
	tools_key_string_or_null(w, "driver", d->driver);
	tools_hw_key_int_or_null(w, "width", d->width, d->width != 0u);
	tools_hw_key_int_or_null(w, "height", d->height, d->height != 0u);
	jw_key(w, "ready");
	jw_bool(w, d->ready);
	jw_key(w, "roles");
	jw_array_begin(w);
	for (size_t i = 0; i < AGENT_DISPLAY_ROLE_COUNT; i++) {
		if ((d->roles & (1u << i)) != 0u) {
			jw_string(w, tools_hw_display_role_names[i]);
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
		return tools_hw_port_fail(ctx, count, "the displays");
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
		jw_init(&item, tools_hw_item_buf, sizeof(tools_hw_item_buf));
		write_display(&item, &display);
		if (!tools_item_append(out, &item, LIST_TAIL_BYTES)) {
			truncated = true;
			break;
		}
		listed++;
	}
	return tools_list_end(out, "count", listed, truncated);
}

/* ---- definitions ---------------------------------------------------------------------------- */

static const struct tool_param buses_params[] = {
	{
		.name = "type",
		.type = TOOL_PARAM_STRING,
		.required = false,
		.description = TOOL_TEXT(tools_buses_description_1,
			"Only buses of this type: i2c, spi, uart or onewire (default: all)."),
		.min = 0,
		.max = 16,
	},
};

const struct tool_def tool_buses_list = {
	.name = "buses_list",
	.description = TOOL_TEXT(tools_buses_description_2,
		"Registered I2C, SPI, UART and OneWire buses with their real names, pins, "
		"speed, readiness, origin (board or runtime), sharing mode and current lease "
		"count."),
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.params = buses_params,
	.param_count = 1,
	.output = TOOL_TEXT(tools_buses_output_1,
		"{buses: [{name, type, pins: {role: pin}, speed_hz, ready, origin, sharing, "
		"leases}], count, truncated}"),
	.capability = TOOL_CAP_BUS,
	.exec = buses_exec,
	.keywords = TOOL_TEXT(tools_buses_keywords_1,
		"bus buses i2c spi uart serial onewire 1-wire pins leases peripherals"),
};

const struct tool_def tool_display_list = {
	.name = "display_list",
	.description = TOOL_TEXT(tools_buses_description_3,
		"Registered display targets with their real names, drivers, width and height, "
		"readiness, roles, brightness support and current owner. Call it before writing "
		"code for an attached display and use only a returned target that is ready."),
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.output = TOOL_TEXT(tools_buses_output_2,
		"{displays: [{name, driver, width, height, ready, roles: "
		"[primary|console|graphics|status], brightness, owner}], count, truncated}"),
	.capability = TOOL_CAP_DISPLAY,
	.exec = display_exec,
	.keywords = TOOL_TEXT(tools_buses_keywords_2,
		"display screen lcd oled tft graphics panel brightness draw"),
};

#endif /* CONFIG_AGENT_TOOLS_HARDWARE */
