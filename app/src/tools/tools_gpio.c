/*
 * The GPIO inspection tools: gpio_list (every slot the board names, a page at a time) and
 * gpio_read (one slot by number or name). A level is shown only for a pin already
 * configured as a readable input; neither tool configures or claims a pin.
 * docs/tools-device.md describes their results.
 */
#if defined(CONFIG_AGENT_TOOLS_HARDWARE)

#include <errno.h>
#include <stddef.h>

#include "agent_port.h"
#include "tools_hardware.h"
#include "tools_hardware_internal.h"
#include "tools_listing.h"


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
	jw_string(w, NAME_OF(tools_hw_gpio_policy_names, s->policy));
	tools_key_string_or_null(w, "claimed_by", s->claimed_by);
	jw_key(w, "mode");
	jw_string(w, NAME_OF(tools_hw_gpio_mode_names, s->mode));
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
	tools_hw_key_int_or_null(w, "level", s->level, why == NULL);
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
		return tools_hw_port_fail(ctx, count, "the GPIO slots");
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
		jw_init(&item, tools_hw_item_buf, sizeof(tools_hw_item_buf));
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
		return tools_hw_port_fail(ctx, count, "the GPIO slots");
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
			    tools_hw_same_name(slot.name, name_arg->str, name_arg->len)) {
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

/* ---- definitions ---------------------------------------------------------------------------- */

static const struct tool_param gpio_list_params[] = {
	{
		.name = "start",
		.type = TOOL_PARAM_INTEGER,
		.required = false,
		.description = TOOL_TEXT(tools_gpio_description_1,
			"First slot to list (default 0); a truncated list gives next_start."),
		.min = 0,
		.max = 1023,
	},
};

const struct tool_def tool_gpio_list = {
	.name = "gpio_list",
	.description = TOOL_TEXT(tools_gpio_description_2,
		"The board's real GPIO slots: name, controller and pin, pin policy (free, "
		"input_only, strapping, reserved), who claims it, its current mode, and the "
		"level of pins already configured as inputs. Never configures or claims a pin; "
		"other pins have level null."),
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.params = gpio_list_params,
	.param_count = 1,
	.output = TOOL_TEXT(tools_gpio_output_1,
		"{count, start, gpios: [{slot, name, controller, pin, policy, claimed_by, mode, "
		"readable, level}], truncated, next_start?}"),
	.capability = TOOL_CAP_GPIO,
	.exec = gpio_list_exec,
	.keywords = TOOL_TEXT(tools_gpio_keywords_1,
		"gpio pins pin list io digital inputs outputs levels claims"),
};

static const struct tool_param gpio_read_params[] = {
	{
		.name = "slot",
		.type = TOOL_PARAM_INTEGER,
		.required = false,
		.description = TOOL_TEXT(tools_gpio_description_3,
			"Slot number from gpio_list (give slot or name)."),
		.min = 0,
		.max = 1023,
	},
	{
		.name = "name",
		.type = TOOL_PARAM_STRING,
		.required = false,
		.description = TOOL_TEXT(tools_gpio_description_4,
			"Slot name from gpio_list, such as \"BOOT\" (give slot or name)."),
		.min = 1,
		.max = AGENT_BOARD_NAME_MAX,
	},
};

const struct tool_def tool_gpio_read = {
	.name = "gpio_read",
	.description = TOOL_TEXT(tools_gpio_description_5,
		"Inspect one GPIO slot (by slot number or name): policy, claim, mode, and its "
		"level only when the pin is already configured as a readable input; otherwise "
		"level is null with level_reason. It never configures or claims the pin."),
	.domain = TOOL_DOMAIN_HARDWARE,
	.risk = TOOL_RISK_READ,
	.params = gpio_read_params,
	.param_count = 2,
	.output = TOOL_TEXT(tools_gpio_output_2,
		"{slot, name, controller, pin, policy, claimed_by, mode, configured, readable, "
		"level, level_reason, read_error?}"),
	.capability = TOOL_CAP_GPIO,
	.exec = gpio_read_exec,
	.keywords = TOOL_TEXT(tools_gpio_keywords_2,
		"gpio pin read level input state button inspect"),
};

#endif /* CONFIG_AGENT_TOOLS_HARDWARE */
