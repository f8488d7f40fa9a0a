/*
 * The hardware lines of a board file (posix_board_file.h, docs/simulated-board.md): board,
 * gpio, bus and display.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "agent_port.h"
#include "posix_board.h"
#include "posix_board_file.h"

/* ---- names --------------------------------------------------------------------------------- */

static const char *const cap_names[AGENT_BOARD_CAP_COUNT] = {
	"psram", "sd", "display", "wifi", "bluetooth", "ethernet", "usb", "battery",
};
static const char *const policy_names[] = {"free", "input_only", "strapping", "reserved"};
static const char *const mode_names[] = {"unconfigured", "input", "output", "input_output"};
static const char *const bus_type_names[AGENT_BUS_TYPE_COUNT] = {"i2c", "spi", "uart",
								 "onewire"};
static const char *const origin_names[] = {"board", "runtime"};
static const char *const sharing_names[] = {"shared", "exclusive"};
static const char *const role_names[AGENT_DISPLAY_ROLE_COUNT] = {"primary", "console",
								 "graphics", "status"};

/* ---- keywords ------------------------------------------------------------------------------ */

bool posix_board_line_board(struct posix_board_line *ctx, struct sim_board *b)
{
	struct agent_board_info *info = &b->info;
	const char *v;

	if (b->have_board_line) {
		return posix_board_fail(ctx, "only one board line is allowed");
	}
	b->have_board_line = true;
	if (!posix_board_copy_text(ctx, "model", posix_board_take(ctx, "model"), info->model,
				   sizeof(info->model), false) ||
	    !posix_board_copy_text(ctx, "soc", posix_board_take(ctx, "soc"), info->soc,
				   sizeof(info->soc), false)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "psram")) != NULL &&
	    !posix_board_parse_u32(ctx, "psram", v, UINT32_MAX, &info->psram_bytes)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "flash")) != NULL &&
	    !posix_board_parse_u32(ctx, "flash", v, UINT32_MAX, &info->flash_bytes)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "sram")) != NULL &&
	    !posix_board_parse_u32(ctx, "sram", v, UINT32_MAX, &info->sram_bytes)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "caps")) != NULL &&
	    !posix_board_parse_set(ctx, "caps", v, cap_names, POSIX_BOARD_COUNT_OF(cap_names),
				   &info->caps)) {
		return false;
	}
	if ((info->psram_bytes != 0u) != ((info->caps & AGENT_BOARD_CAP_PSRAM) != 0u)) {
		return posix_board_fail(ctx, "psram= and caps=psram must agree (both or neither)");
	}
	return posix_board_no_unknown_keys(ctx);
}

bool posix_board_line_gpio(struct posix_board_line *ctx, struct sim_board *b)
{
	struct agent_gpio_slot *slot;
	const char *name = posix_board_take_required(ctx, "name");
	const char *controller = posix_board_take_required(ctx, "controller");
	const char *pin = posix_board_take_required(ctx, "pin");
	const char *policy = posix_board_take_required(ctx, "policy");
	const char *mode = posix_board_take_required(ctx, "mode");
	const char *level = posix_board_take(ctx, "level");
	const char *read_error = posix_board_take(ctx, "read_error");
	uint32_t value = 0;
	int e = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->gpio_count == POSIX_BOARD_GPIO_MAX) {
		return posix_board_fail(ctx, "more than %d gpio lines", POSIX_BOARD_GPIO_MAX);
	}
	slot = &b->gpio[b->gpio_count];
	memset(slot, 0, sizeof(*slot));
	if (!posix_board_copy_text(ctx, "name", name, slot->name, sizeof(slot->name), false) ||
	    !posix_board_copy_text(ctx, "controller", controller, slot->controller,
				   sizeof(slot->controller), false) ||
	    !posix_board_copy_text(ctx, "claimed_by", posix_board_take(ctx, "claimed_by"),
				   slot->claimed_by, sizeof(slot->claimed_by), true) ||
	    !posix_board_parse_u32(ctx, "pin", pin, UINT16_MAX, &value)) {
		return false;
	}
	slot->pin = (uint16_t)value;
	if (!posix_board_parse_enum(ctx, "policy", policy, policy_names,
				    POSIX_BOARD_COUNT_OF(policy_names), &e)) {
		return false;
	}
	slot->policy = (enum agent_gpio_policy)e;
	if (!posix_board_parse_enum(ctx, "mode", mode, mode_names, POSIX_BOARD_COUNT_OF(mode_names),
				    &e)) {
		return false;
	}
	slot->mode = (enum agent_gpio_mode)e;
	slot->readable = slot->mode == AGENT_GPIO_MODE_INPUT ||
			 slot->mode == AGENT_GPIO_MODE_INPUT_OUTPUT;
	if (!slot->readable && (level != NULL || read_error != NULL)) {
		return posix_board_fail(ctx,
					"%s: level= and read_error= are only for a pin configured "
					"as an input (mode=input or input_output)",
					slot->name);
	}
	if (slot->readable) {
		if ((level == NULL) == (read_error == NULL)) {
			return posix_board_fail(ctx,
						"%s: an input needs exactly one of level=0|1 and "
						"read_error=-ERRNO",
						slot->name);
		}
		if (level != NULL) {
			if (!posix_board_parse_u32(ctx, "level", level, 1, &value)) {
				return false;
			}
			slot->level = (uint8_t)value;
		} else {
			long err = 0;

			if (!posix_board_parse_long(ctx, "read_error", read_error, -4095, -1,
						    &err)) {
				return false;
			}
			slot->read_error = (int)err;
		}
	}
	for (size_t i = 0; i < b->gpio_count; i++) {
		if (strcmp(b->gpio[i].name, slot->name) == 0) {
			return posix_board_fail(ctx, "%s is declared twice", slot->name);
		}
		if (strcmp(b->gpio[i].controller, slot->controller) == 0 &&
		    b->gpio[i].pin == slot->pin) {
			return posix_board_fail(ctx, "%s: %s pin %u is already %s", slot->name,
						slot->controller, (unsigned int)slot->pin,
						b->gpio[i].name);
		}
	}
	if (!posix_board_no_unknown_keys(ctx)) {
		return false;
	}
	b->gpio_count++;
	return true;
}

/* "sda:8,scl:9" */
static bool parse_pins(struct posix_board_line *ctx, const char *value, struct agent_bus *bus)
{
	const char *p = value;

	while (*p != '\0') {
		const char *colon = strchr(p, ':');
		const char *comma;
		struct agent_bus_pin *pin;
		char number[8];
		size_t len;
		uint32_t n = 0;

		if (bus->pin_count == AGENT_BUS_PINS_MAX) {
			return posix_board_fail(ctx, "pins: more than %d", AGENT_BUS_PINS_MAX);
		}
		pin = &bus->pins[bus->pin_count];
		comma = strchr(p, ',');
		if (colon == NULL || (comma != NULL && colon > comma)) {
			return posix_board_fail(
				ctx, "pins must be role:pin,... such as sda:8,scl:9, not '%s'",
				value);
		}
		len = (size_t)(colon - p);
		if (len == 0 || len > AGENT_BUS_ROLE_MAX) {
			return posix_board_fail(ctx, "pins: a role is 1 to %d characters",
						AGENT_BUS_ROLE_MAX);
		}
		memcpy(pin->role, p, len);
		pin->role[len] = '\0';
		p = colon + 1;
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= sizeof(number)) {
			return posix_board_fail(ctx, "pins: %s needs a pin number", pin->role);
		}
		memcpy(number, p, len);
		number[len] = '\0';
		if (!posix_board_parse_u32(ctx, "pins", number, INT16_MAX, &n)) {
			return false;
		}
		pin->pin = (int16_t)n;
		bus->pin_count++;
		p += len;
		if (*p == ',') {
			p++;
		}
	}
	bus->pins_known = true;
	return true;
}

bool posix_board_line_bus(struct posix_board_line *ctx, struct sim_board *b)
{
	struct agent_bus *bus;
	const char *name = posix_board_take_required(ctx, "name");
	const char *type = posix_board_take_required(ctx, "type");
	const char *ready = posix_board_take_required(ctx, "ready");
	const char *v;
	uint32_t value = 0;
	int e = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->bus_count == POSIX_BOARD_BUS_MAX) {
		return posix_board_fail(ctx, "more than %d bus lines", POSIX_BOARD_BUS_MAX);
	}
	bus = &b->bus[b->bus_count];
	memset(bus, 0, sizeof(*bus));
	if (!posix_board_copy_text(ctx, "name", name, bus->name, sizeof(bus->name), false) ||
	    !posix_board_parse_enum(ctx, "type", type, bus_type_names,
				    POSIX_BOARD_COUNT_OF(bus_type_names), &e)) {
		return false;
	}
	bus->type = (enum agent_bus_type)e;
	if (!posix_board_parse_bool(ctx, "ready", ready, &bus->ready)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "pins")) != NULL && !parse_pins(ctx, v, bus)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "speed")) != NULL &&
	    !posix_board_parse_u32(ctx, "speed", v, UINT32_MAX, &bus->speed_hz)) {
		return false;
	}
	bus->origin = AGENT_BUS_ORIGIN_BOARD;
	if ((v = posix_board_take(ctx, "origin")) != NULL) {
		if (!posix_board_parse_enum(ctx, "origin", v, origin_names,
					    POSIX_BOARD_COUNT_OF(origin_names), &e)) {
			return false;
		}
		bus->origin = (enum agent_bus_origin)e;
	}
	bus->sharing = bus->type == AGENT_BUS_UART ? AGENT_BUS_EXCLUSIVE : AGENT_BUS_SHARED;
	if ((v = posix_board_take(ctx, "sharing")) != NULL) {
		if (!posix_board_parse_enum(ctx, "sharing", v, sharing_names,
					    POSIX_BOARD_COUNT_OF(sharing_names), &e)) {
			return false;
		}
		bus->sharing = (enum agent_bus_sharing)e;
	}
	value = 0;
	if ((v = posix_board_take(ctx, "leases")) != NULL &&
	    !posix_board_parse_u32(ctx, "leases", v, INT16_MAX, &value)) {
		return false;
	}
	bus->leases = (int16_t)value;
	if (bus->sharing == AGENT_BUS_EXCLUSIVE && bus->leases > 1) {
		return posix_board_fail(ctx, "%s: an exclusive bus has at most one lease",
					bus->name);
	}
	for (size_t i = 0; i < b->bus_count; i++) {
		if (strcmp(b->bus[i].name, bus->name) == 0) {
			return posix_board_fail(ctx, "%s is declared twice", bus->name);
		}
	}
	if (!posix_board_no_unknown_keys(ctx)) {
		return false;
	}
	b->bus_count++;
	return true;
}

bool posix_board_line_display(struct posix_board_line *ctx, struct sim_board *b)
{
	struct agent_display *d;
	const char *name = posix_board_take_required(ctx, "name");
	const char *driver = posix_board_take_required(ctx, "driver");
	const char *width = posix_board_take_required(ctx, "width");
	const char *height = posix_board_take_required(ctx, "height");
	const char *ready = posix_board_take_required(ctx, "ready");
	const char *brightness = posix_board_take_required(ctx, "brightness");
	const char *v;
	uint32_t value = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->display_count == POSIX_BOARD_DISPLAY_MAX) {
		return posix_board_fail(ctx, "more than %d display lines", POSIX_BOARD_DISPLAY_MAX);
	}
	d = &b->display[b->display_count];
	memset(d, 0, sizeof(*d));
	if (!posix_board_copy_text(ctx, "name", name, d->name, sizeof(d->name), false) ||
	    !posix_board_copy_text(ctx, "driver", driver, d->driver, sizeof(d->driver), false) ||
	    !posix_board_copy_text(ctx, "owner", posix_board_take(ctx, "owner"), d->owner,
				   sizeof(d->owner), true) ||
	    !posix_board_parse_u32(ctx, "width", width, UINT16_MAX, &value)) {
		return false;
	}
	d->width = (uint16_t)value;
	if (!posix_board_parse_u32(ctx, "height", height, UINT16_MAX, &value)) {
		return false;
	}
	d->height = (uint16_t)value;
	if (!posix_board_parse_bool(ctx, "ready", ready, &d->ready) ||
	    !posix_board_parse_bool(ctx, "brightness", brightness, &d->brightness)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "roles")) != NULL &&
	    !posix_board_parse_set(ctx, "roles", v, role_names, POSIX_BOARD_COUNT_OF(role_names),
				   &d->roles)) {
		return false;
	}
	for (size_t i = 0; i < b->display_count; i++) {
		if (strcmp(b->display[i].name, d->name) == 0) {
			return posix_board_fail(ctx, "%s is declared twice", d->name);
		}
	}
	if (!posix_board_no_unknown_keys(ctx)) {
		return false;
	}
	b->display_count++;
	return true;
}
