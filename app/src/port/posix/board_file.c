/*
 * Board files of the POSIX port (docs/simulated-board.md): the simulated board read from a
 * text file. One line per item: a keyword, then key=value pairs. Everything is checked while
 * reading; the first problem ends the load with the line number, so a typo in a board file
 * never turns into a silently different board.
 *
 * The board is parsed into a scratch copy and published under a lock, so a failed load
 * leaves the previous board and readers never see half a file. board_sim.c answers the
 * inspection calls of agent_port.h from the published board.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "posix_board.h"
#include "posix_board_internal.h"

#define KV_MAX 16

struct kv {
	const char *key;
	const char *value;
	bool used;
};

/* One line being parsed: its pairs and the place to put the first error. */
struct line_ctx {
	const char *keyword;
	struct kv kv[KV_MAX];
	size_t kv_count;
	char *why;
	size_t why_len;
	bool failed;
};

static struct sim_board scratch; /* the file being read; copied to the board on success */

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
static const char *const wifi_names[] = {"absent",   "off",	   "disconnected",
					 "scanning", "connecting", "connected"};
static const char *const family_names[AGENT_SENSOR_FAMILY_COUNT] = {"battery", "environment"};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors -------------------------------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) static bool fail(struct line_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ctx->failed) {
		return false;
	}
	ctx->failed = true;
	n = snprintf(ctx->why, ctx->why_len, "%s%s", ctx->keyword,
		     ctx->keyword[0] != '\0' ? ": " : "");
	if (n < 0 || (size_t)n >= ctx->why_len) {
		return false;
	}
	va_start(ap, fmt);
	vsnprintf(ctx->why + n, ctx->why_len - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

static void join_names(char *buf, size_t len, const char *const *names, size_t count)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < count && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i > 0 ? ", " : "", names[i]);

		if (n < 0) {
			return;
		}
		used += (size_t)n;
	}
}

/* ---- tokens -------------------------------------------------------------------------------- */

/* Splits "keyword k=v k="v w" ..." in place. Returns false (with the error set) on bad syntax. */
static bool split_line(struct line_ctx *ctx, char *p)
{
	while (*p == ' ' || *p == '\t') {
		p++;
	}
	ctx->keyword = p;
	while (*p != '\0' && *p != ' ' && *p != '\t') {
		p++;
	}
	if (*p != '\0') {
		*p++ = '\0';
	}
	for (;;) {
		char *key;
		char *value;

		while (*p == ' ' || *p == '\t') {
			p++;
		}
		if (*p == '\0') {
			return true;
		}
		key = p;
		while (*p == '_' || islower((unsigned char)*p)) {
			p++;
		}
		if (p == key || *p != '=') {
			return fail(ctx, "expected key=value at '%.20s'", key);
		}
		*p++ = '\0';
		if (*p == '"') {
			char *out = ++p;

			value = out;
			while (*p != '"') {
				if (*p == '\0') {
					return fail(ctx, "%s: unterminated quoted value", key);
				}
				if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) {
					p++;
				}
				*out++ = *p++;
			}
			p++;
			if (*p != '\0' && *p != ' ' && *p != '\t') {
				return fail(ctx, "%s: text after the closing quote", key);
			}
			if (*p != '\0') {
				p++;
			}
			*out = '\0';
		} else {
			value = p;
			while (*p != '\0' && *p != ' ' && *p != '\t') {
				if (*p == '"') {
					return fail(ctx, "%s: a quote inside an unquoted value", key);
				}
				p++;
			}
			if (*p != '\0') {
				*p++ = '\0';
			}
		}
		for (size_t i = 0; i < ctx->kv_count; i++) {
			if (strcmp(ctx->kv[i].key, key) == 0) {
				return fail(ctx, "%s given twice", key);
			}
		}
		if (ctx->kv_count == KV_MAX) {
			return fail(ctx, "more than %d keys", KV_MAX);
		}
		ctx->kv[ctx->kv_count++] = (struct kv){.key = key, .value = value};
	}
}

static const char *take(struct line_ctx *ctx, const char *key)
{
	for (size_t i = 0; i < ctx->kv_count; i++) {
		if (strcmp(ctx->kv[i].key, key) == 0) {
			ctx->kv[i].used = true;
			return ctx->kv[i].value;
		}
	}
	return NULL;
}

static const char *take_required(struct line_ctx *ctx, const char *key)
{
	const char *value = take(ctx, key);

	if (value == NULL) {
		fail(ctx, "%s= is required", key);
	}
	return value;
}

static bool no_unknown_keys(struct line_ctx *ctx)
{
	for (size_t i = 0; i < ctx->kv_count; i++) {
		if (!ctx->kv[i].used) {
			return fail(ctx, "unknown key '%s'", ctx->kv[i].key);
		}
	}
	return true;
}

/* ---- values -------------------------------------------------------------------------------- */

static bool copy_text(struct line_ctx *ctx, const char *key, const char *value, char *dst,
		      size_t cap, bool allow_empty)
{
	size_t len;

	if (value == NULL) {
		dst[0] = '\0';
		return true;
	}
	len = strlen(value);
	if (len == 0 && !allow_empty) {
		return fail(ctx, "%s is empty", key);
	}
	if (len >= cap) {
		return fail(ctx, "%s is longer than %zu bytes", key, cap - 1);
	}
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f) {
			return fail(ctx, "%s holds a control character", key);
		}
	}
	memcpy(dst, value, len + 1);
	return true;
}

static bool parse_long(struct line_ctx *ctx, const char *key, const char *value, long min,
		       long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (value[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
		return fail(ctx, "%s must be an integer from %ld to %ld, not '%s'", key, min, max,
			    value);
	}
	*out = v;
	return true;
}

static bool parse_u32(struct line_ctx *ctx, const char *key, const char *value, uint32_t max,
		      uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (value[0] < '0' || value[0] > '9') {
		return fail(ctx, "%s must be a whole number from 0 to %u, not '%s'", key,
			    (unsigned int)max, value);
	}
	v = strtoull(value, &end, 10);
	if (*end != '\0' || errno != 0 || v > max) {
		return fail(ctx, "%s must be a whole number from 0 to %u, not '%s'", key,
			    (unsigned int)max, value);
	}
	*out = (uint32_t)v;
	return true;
}

static bool parse_bool(struct line_ctx *ctx, const char *key, const char *value, bool *out)
{
	if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0) {
		*out = true;
		return true;
	}
	if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0) {
		*out = false;
		return true;
	}
	return fail(ctx, "%s must be yes or no, not '%s'", key, value);
}

static bool parse_enum(struct line_ctx *ctx, const char *key, const char *value,
		       const char *const *names, size_t count, int *out)
{
	char list[160];

	for (size_t i = 0; i < count; i++) {
		if (strcmp(value, names[i]) == 0) {
			*out = (int)i;
			return true;
		}
	}
	join_names(list, sizeof(list), names, count);
	return fail(ctx, "unknown %s '%s' (one of: %s)", key, value, list);
}

/* "a,b,c" of names from @p names into a bit set; "" is the empty set. */
static bool parse_set(struct line_ctx *ctx, const char *key, const char *value,
		      const char *const *names, size_t count, uint32_t *out)
{
	const char *p = value;

	*out = 0;
	while (*p != '\0') {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		char item[32];
		int bit = 0;

		if (len == 0 || len >= sizeof(item)) {
			return fail(ctx, "%s: empty or overlong item in '%s'", key, value);
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (!parse_enum(ctx, key, item, names, count, &bit)) {
			return false;
		}
		if ((*out & (1u << bit)) != 0u) {
			return fail(ctx, "%s: '%s' given twice", key, item);
		}
		*out |= 1u << bit;
		p += len;
		if (*p == ',') {
			p++;
			if (*p == '\0') {
				return fail(ctx, "%s ends with a comma", key);
			}
		}
	}
	return true;
}

/* A decimal such as "-12.5" or "3.912" (at most six decimals) times 1 000 000. */
static bool parse_micro(struct line_ctx *ctx, const char *key, const char *value, int64_t *out)
{
	const char *p = value;
	bool negative = false;
	int64_t whole = 0;
	int64_t frac = 0;
	int frac_digits = 0;
	bool digits = false;

	if (*p == '-') {
		negative = true;
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (INT64_MAX / 1000000 - 9) / 10) {
			return fail(ctx, "%s is too large: '%s'", key, value);
		}
		whole = whole * 10 + (*p - '0');
		digits = true;
	}
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (frac_digits == 6) {
				return fail(ctx, "%s has more than six decimals: '%s'", key, value);
			}
			frac = frac * 10 + (*p - '0');
			frac_digits++;
			digits = true;
		}
	}
	if (!digits || *p != '\0') {
		return fail(ctx, "%s must be a decimal number, not '%s'", key, value);
	}
	while (frac_digits++ < 6) {
		frac *= 10;
	}
	*out = (whole * 1000000 + frac) * (negative ? -1 : 1);
	return true;
}

static bool valid_address(const char *text)
{
	for (const char *p = text; *p != '\0'; p++) {
		if (!isxdigit((unsigned char)*p) && *p != '.' && *p != ':') {
			return false;
		}
	}
	return true;
}

static bool copy_address(struct line_ctx *ctx, const char *key, const char *value, char *dst)
{
	if (value != NULL && !valid_address(value)) {
		return fail(ctx, "%s is not an IP address: '%s'", key, value);
	}
	return copy_text(ctx, key, value, dst, AGENT_BOARD_ADDR_MAX + 1, false);
}

/* ---- keywords ------------------------------------------------------------------------------ */

static bool line_board(struct line_ctx *ctx, struct sim_board *b)
{
	struct agent_board_info *info = &b->info;
	const char *v;

	if (b->have_board_line) {
		return fail(ctx, "only one board line is allowed");
	}
	b->have_board_line = true;
	if (!copy_text(ctx, "model", take(ctx, "model"), info->model, sizeof(info->model), false) ||
	    !copy_text(ctx, "soc", take(ctx, "soc"), info->soc, sizeof(info->soc), false)) {
		return false;
	}
	if ((v = take(ctx, "psram")) != NULL && !parse_u32(ctx, "psram", v, UINT32_MAX,
							   &info->psram_bytes)) {
		return false;
	}
	if ((v = take(ctx, "flash")) != NULL &&
	    !parse_u32(ctx, "flash", v, UINT32_MAX, &info->flash_bytes)) {
		return false;
	}
	if ((v = take(ctx, "sram")) != NULL &&
	    !parse_u32(ctx, "sram", v, UINT32_MAX, &info->sram_bytes)) {
		return false;
	}
	if ((v = take(ctx, "caps")) != NULL &&
	    !parse_set(ctx, "caps", v, cap_names, COUNT_OF(cap_names), &info->caps)) {
		return false;
	}
	if ((info->psram_bytes != 0u) != ((info->caps & AGENT_BOARD_CAP_PSRAM) != 0u)) {
		return fail(ctx, "psram= and caps=psram must agree (both or neither)");
	}
	return no_unknown_keys(ctx);
}

static bool line_gpio(struct line_ctx *ctx, struct sim_board *b)
{
	struct agent_gpio_slot *slot;
	const char *name = take_required(ctx, "name");
	const char *controller = take_required(ctx, "controller");
	const char *pin = take_required(ctx, "pin");
	const char *policy = take_required(ctx, "policy");
	const char *mode = take_required(ctx, "mode");
	const char *level = take(ctx, "level");
	const char *read_error = take(ctx, "read_error");
	uint32_t value = 0;
	int e = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->gpio_count == POSIX_BOARD_GPIO_MAX) {
		return fail(ctx, "more than %d gpio lines", POSIX_BOARD_GPIO_MAX);
	}
	slot = &b->gpio[b->gpio_count];
	memset(slot, 0, sizeof(*slot));
	if (!copy_text(ctx, "name", name, slot->name, sizeof(slot->name), false) ||
	    !copy_text(ctx, "controller", controller, slot->controller, sizeof(slot->controller),
		       false) ||
	    !copy_text(ctx, "claimed_by", take(ctx, "claimed_by"), slot->claimed_by,
		       sizeof(slot->claimed_by), true) ||
	    !parse_u32(ctx, "pin", pin, UINT16_MAX, &value)) {
		return false;
	}
	slot->pin = (uint16_t)value;
	if (!parse_enum(ctx, "policy", policy, policy_names, COUNT_OF(policy_names), &e)) {
		return false;
	}
	slot->policy = (enum agent_gpio_policy)e;
	if (!parse_enum(ctx, "mode", mode, mode_names, COUNT_OF(mode_names), &e)) {
		return false;
	}
	slot->mode = (enum agent_gpio_mode)e;
	slot->readable = slot->mode == AGENT_GPIO_MODE_INPUT ||
			 slot->mode == AGENT_GPIO_MODE_INPUT_OUTPUT;
	if (!slot->readable && (level != NULL || read_error != NULL)) {
		return fail(ctx, "%s: level= and read_error= are only for a pin configured as an "
				 "input (mode=input or input_output)",
			    slot->name);
	}
	if (slot->readable) {
		if ((level == NULL) == (read_error == NULL)) {
			return fail(ctx, "%s: an input needs exactly one of level=0|1 and "
					 "read_error=-ERRNO",
				    slot->name);
		}
		if (level != NULL) {
			if (!parse_u32(ctx, "level", level, 1, &value)) {
				return false;
			}
			slot->level = (uint8_t)value;
		} else {
			long err = 0;

			if (!parse_long(ctx, "read_error", read_error, -4095, -1, &err)) {
				return false;
			}
			slot->read_error = (int)err;
		}
	}
	for (size_t i = 0; i < b->gpio_count; i++) {
		if (strcmp(b->gpio[i].name, slot->name) == 0) {
			return fail(ctx, "%s is declared twice", slot->name);
		}
		if (strcmp(b->gpio[i].controller, slot->controller) == 0 &&
		    b->gpio[i].pin == slot->pin) {
			return fail(ctx, "%s: %s pin %u is already %s", slot->name,
				    slot->controller, (unsigned int)slot->pin, b->gpio[i].name);
		}
	}
	if (!no_unknown_keys(ctx)) {
		return false;
	}
	b->gpio_count++;
	return true;
}

/* "sda:8,scl:9" */
static bool parse_pins(struct line_ctx *ctx, const char *value, struct agent_bus *bus)
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
			return fail(ctx, "pins: more than %d", AGENT_BUS_PINS_MAX);
		}
		pin = &bus->pins[bus->pin_count];
		comma = strchr(p, ',');
		if (colon == NULL || (comma != NULL && colon > comma)) {
			return fail(ctx, "pins must be role:pin,... such as sda:8,scl:9, not '%s'",
				    value);
		}
		len = (size_t)(colon - p);
		if (len == 0 || len > AGENT_BUS_ROLE_MAX) {
			return fail(ctx, "pins: a role is 1 to %d characters", AGENT_BUS_ROLE_MAX);
		}
		memcpy(pin->role, p, len);
		pin->role[len] = '\0';
		p = colon + 1;
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= sizeof(number)) {
			return fail(ctx, "pins: %s needs a pin number", pin->role);
		}
		memcpy(number, p, len);
		number[len] = '\0';
		if (!parse_u32(ctx, "pins", number, INT16_MAX, &n)) {
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

static bool line_bus(struct line_ctx *ctx, struct sim_board *b)
{
	struct agent_bus *bus;
	const char *name = take_required(ctx, "name");
	const char *type = take_required(ctx, "type");
	const char *ready = take_required(ctx, "ready");
	const char *v;
	uint32_t value = 0;
	int e = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->bus_count == POSIX_BOARD_BUS_MAX) {
		return fail(ctx, "more than %d bus lines", POSIX_BOARD_BUS_MAX);
	}
	bus = &b->bus[b->bus_count];
	memset(bus, 0, sizeof(*bus));
	if (!copy_text(ctx, "name", name, bus->name, sizeof(bus->name), false) ||
	    !parse_enum(ctx, "type", type, bus_type_names, COUNT_OF(bus_type_names), &e)) {
		return false;
	}
	bus->type = (enum agent_bus_type)e;
	if (!parse_bool(ctx, "ready", ready, &bus->ready)) {
		return false;
	}
	if ((v = take(ctx, "pins")) != NULL && !parse_pins(ctx, v, bus)) {
		return false;
	}
	if ((v = take(ctx, "speed")) != NULL && !parse_u32(ctx, "speed", v, UINT32_MAX,
							   &bus->speed_hz)) {
		return false;
	}
	bus->origin = AGENT_BUS_ORIGIN_BOARD;
	if ((v = take(ctx, "origin")) != NULL) {
		if (!parse_enum(ctx, "origin", v, origin_names, COUNT_OF(origin_names), &e)) {
			return false;
		}
		bus->origin = (enum agent_bus_origin)e;
	}
	bus->sharing = bus->type == AGENT_BUS_UART ? AGENT_BUS_EXCLUSIVE : AGENT_BUS_SHARED;
	if ((v = take(ctx, "sharing")) != NULL) {
		if (!parse_enum(ctx, "sharing", v, sharing_names, COUNT_OF(sharing_names), &e)) {
			return false;
		}
		bus->sharing = (enum agent_bus_sharing)e;
	}
	value = 0;
	if ((v = take(ctx, "leases")) != NULL && !parse_u32(ctx, "leases", v, INT16_MAX, &value)) {
		return false;
	}
	bus->leases = (int16_t)value;
	if (bus->sharing == AGENT_BUS_EXCLUSIVE && bus->leases > 1) {
		return fail(ctx, "%s: an exclusive bus has at most one lease", bus->name);
	}
	for (size_t i = 0; i < b->bus_count; i++) {
		if (strcmp(b->bus[i].name, bus->name) == 0) {
			return fail(ctx, "%s is declared twice", bus->name);
		}
	}
	if (!no_unknown_keys(ctx)) {
		return false;
	}
	b->bus_count++;
	return true;
}

static bool line_display(struct line_ctx *ctx, struct sim_board *b)
{
	struct agent_display *d;
	const char *name = take_required(ctx, "name");
	const char *driver = take_required(ctx, "driver");
	const char *width = take_required(ctx, "width");
	const char *height = take_required(ctx, "height");
	const char *ready = take_required(ctx, "ready");
	const char *brightness = take_required(ctx, "brightness");
	const char *v;
	uint32_t value = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->display_count == POSIX_BOARD_DISPLAY_MAX) {
		return fail(ctx, "more than %d display lines", POSIX_BOARD_DISPLAY_MAX);
	}
	d = &b->display[b->display_count];
	memset(d, 0, sizeof(*d));
	if (!copy_text(ctx, "name", name, d->name, sizeof(d->name), false) ||
	    !copy_text(ctx, "driver", driver, d->driver, sizeof(d->driver), false) ||
	    !copy_text(ctx, "owner", take(ctx, "owner"), d->owner, sizeof(d->owner), true) ||
	    !parse_u32(ctx, "width", width, UINT16_MAX, &value)) {
		return false;
	}
	d->width = (uint16_t)value;
	if (!parse_u32(ctx, "height", height, UINT16_MAX, &value)) {
		return false;
	}
	d->height = (uint16_t)value;
	if (!parse_bool(ctx, "ready", ready, &d->ready) ||
	    !parse_bool(ctx, "brightness", brightness, &d->brightness)) {
		return false;
	}
	if ((v = take(ctx, "roles")) != NULL &&
	    !parse_set(ctx, "roles", v, role_names, COUNT_OF(role_names), &d->roles)) {
		return false;
	}
	for (size_t i = 0; i < b->display_count; i++) {
		if (strcmp(b->display[i].name, d->name) == 0) {
			return fail(ctx, "%s is declared twice", d->name);
		}
	}
	if (!no_unknown_keys(ctx)) {
		return false;
	}
	b->display_count++;
	return true;
}

static bool line_wifi(struct line_ctx *ctx, struct sim_board *b)
{
	struct agent_network_state *net = &b->net;
	const char *state = take_required(ctx, "state");
	const char *v;
	long number = 0;
	int e = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->have_wifi_line) {
		return fail(ctx, "only one wifi line is allowed");
	}
	b->have_wifi_line = true;
	if (!parse_enum(ctx, "state", state, wifi_names, COUNT_OF(wifi_names), &e)) {
		return false;
	}
	net->sta_state = (enum agent_wifi_state)e;
	if (!copy_text(ctx, "ssid", take(ctx, "ssid"), net->sta_ssid, sizeof(net->sta_ssid),
		       false) ||
	    !copy_address(ctx, "ip", take(ctx, "ip"), net->ip) ||
	    !copy_address(ctx, "netmask", take(ctx, "netmask"), net->netmask) ||
	    !copy_address(ctx, "gateway", take(ctx, "gateway"), net->gateway)) {
		return false;
	}
	if ((v = take(ctx, "rssi")) != NULL) {
		if (!parse_long(ctx, "rssi", v, -127, 0, &number)) {
			return false;
		}
		net->rssi_known = true;
		net->rssi_dbm = (int16_t)number;
	}
	if ((v = take(ctx, "channel")) != NULL) {
		if (!parse_long(ctx, "channel", v, 1, 233, &number)) {
			return false;
		}
		net->channel = (uint16_t)number;
	}
	if (net->sta_state == AGENT_WIFI_CONNECTED && (net->sta_ssid[0] == '\0' || net->ip[0] == '\0')) {
		return fail(ctx, "state=connected needs ssid= and ip=");
	}
	if (net->sta_state != AGENT_WIFI_CONNECTED &&
	    (net->ip[0] != '\0' || net->rssi_known || net->channel != 0u)) {
		return fail(ctx, "ip=, rssi= and channel= are only for state=connected");
	}
	return no_unknown_keys(ctx);
}

static bool line_ap(struct line_ctx *ctx, struct sim_board *b)
{
	struct agent_network_state *net = &b->net;
	const char *active = take_required(ctx, "active");
	const char *v;
	long number = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->have_ap_line) {
		return fail(ctx, "only one ap line is allowed");
	}
	b->have_ap_line = true;
	if (!parse_bool(ctx, "active", active, &net->ap_active) ||
	    !copy_text(ctx, "ssid", take(ctx, "ssid"), net->ap_ssid, sizeof(net->ap_ssid), false) ||
	    !copy_address(ctx, "ip", take(ctx, "ip"), net->ap_ip)) {
		return false;
	}
	if ((v = take(ctx, "channel")) != NULL) {
		if (!parse_long(ctx, "channel", v, 1, 233, &number)) {
			return false;
		}
		net->ap_channel = (uint16_t)number;
	}
	if ((v = take(ctx, "clients")) != NULL) {
		if (!parse_long(ctx, "clients", v, 0, 255, &number)) {
			return false;
		}
		net->ap_clients = (uint8_t)number;
	}
	if (net->ap_active && net->ap_ssid[0] == '\0') {
		return fail(ctx, "active=yes needs ssid=");
	}
	if (!net->ap_active && (net->ap_ssid[0] != '\0' || net->ap_ip[0] != '\0' ||
				net->ap_channel != 0u || net->ap_clients != 0u)) {
		return fail(ctx, "an inactive access point has no ssid=, ip=, channel= or clients=");
	}
	return no_unknown_keys(ctx);
}

static bool line_nat(struct line_ctx *ctx, struct sim_board *b)
{
	const char *enabled = take_required(ctx, "enabled");

	if (ctx->failed) {
		return false;
	}
	if (b->have_nat_line) {
		return fail(ctx, "only one nat line is allowed");
	}
	b->have_nat_line = true;
	if (!parse_bool(ctx, "enabled", enabled, &b->net.nat_enabled)) {
		return false;
	}
	return no_unknown_keys(ctx);
}

static bool line_family(struct line_ctx *ctx, struct sim_board *b)
{
	const char *name = take_required(ctx, "name");
	const char *present = take_required(ctx, "present");
	int family;

	if (ctx->failed) {
		return false;
	}
	if (!parse_enum(ctx, "name", name, family_names, COUNT_OF(family_names), &family)) {
		return false;
	}
	if (b->have_family_line[family]) {
		return fail(ctx, "%s is declared twice", name);
	}
	b->have_family_line[family] = true;
	if (!parse_bool(ctx, "present", present, &b->family_present[family])) {
		return false;
	}
	return no_unknown_keys(ctx);
}

static bool line_sensor(struct line_ctx *ctx, struct sim_board *b)
{
	struct agent_sensor_reading *r;
	const char *family = take_required(ctx, "family");
	const char *name = take_required(ctx, "name");
	const char *quantity = take_required(ctx, "quantity");
	const char *unit = take_required(ctx, "unit");
	const char *value = take(ctx, "value");
	const char *error = take(ctx, "error");
	int e;

	if (ctx->failed) {
		return false;
	}
	if (b->sensor_count == POSIX_BOARD_SENSOR_MAX) {
		return fail(ctx, "more than %d sensor lines", POSIX_BOARD_SENSOR_MAX);
	}
	r = &b->sensor[b->sensor_count];
	memset(r, 0, sizeof(*r));
	if (!parse_enum(ctx, "family", family, family_names, COUNT_OF(family_names), &e)) {
		return false;
	}
	r->family = (enum agent_sensor_family)e;
	if (!b->family_present[e]) {
		return fail(ctx, "family %s is not present: declare it first with "
				 "'family name=%s present=yes'",
			    family, family);
	}
	if (!copy_text(ctx, "name", name, r->sensor, sizeof(r->sensor), false) ||
	    !copy_text(ctx, "quantity", quantity, r->quantity, sizeof(r->quantity), false) ||
	    !copy_text(ctx, "unit", unit, r->unit, sizeof(r->unit), false)) {
		return false;
	}
	if ((value == NULL) == (error == NULL)) {
		return fail(ctx, "exactly one of value= and error= is needed");
	}
	if (value != NULL && !parse_micro(ctx, "value", value, &r->value_micro)) {
		return false;
	}
	if (error != NULL) {
		long err = 0;

		if (!parse_long(ctx, "error", error, -4095, -1, &err)) {
			return false;
		}
		r->error = (int)err;
	}
	if (!no_unknown_keys(ctx)) {
		return false;
	}
	b->sensor_count++;
	return true;
}

static const struct {
	const char *keyword;
	bool (*parse)(struct line_ctx *ctx, struct sim_board *b);
} keywords[] = {
	{"board", line_board},	 {"gpio", line_gpio}, {"bus", line_bus},
	{"display", line_display}, {"wifi", line_wifi}, {"ap", line_ap},
	{"nat", line_nat},	 {"family", line_family}, {"sensor", line_sensor},
};

static bool parse_line(struct line_ctx *ctx, char *line, struct sim_board *b)
{
	if (!split_line(ctx, line)) {
		return false;
	}
	for (size_t i = 0; i < COUNT_OF(keywords); i++) {
		if (strcmp(ctx->keyword, keywords[i].keyword) == 0) {
			return keywords[i].parse(ctx, b);
		}
	}
	ctx->keyword = "";
	return fail(ctx, "unknown keyword '%.32s' (board, gpio, bus, display, wifi, ap, nat, "
			 "family, sensor)",
		    line);
}

static void board_defaults(struct sim_board *b)
{
	memset(b, 0, sizeof(*b));
	b->net.sta_state = AGENT_WIFI_ABSENT;
	/* The file is the whole truth: no ap or nat line means none. */
	b->net.ap_known = true;
	b->net.nat_known = true;
}

/* Consistency between lines, checked once the whole file is read. */
static bool board_check(struct line_ctx *ctx, struct sim_board *b)
{
	bool wifi = (b->info.caps & AGENT_BOARD_CAP_WIFI) != 0u;

	ctx->keyword = "";
	if (!b->have_board_line) {
		return fail(ctx, "no board line");
	}
	if (!wifi && (b->net.sta_state != AGENT_WIFI_ABSENT || b->net.ap_active ||
		      b->net.nat_enabled)) {
		return fail(ctx, "wifi, ap and nat lines need caps=...,wifi on the board line");
	}
	if (wifi && b->net.sta_state == AGENT_WIFI_ABSENT) {
		if (b->have_wifi_line) {
			return fail(ctx, "a board with caps=wifi cannot have wifi state=absent");
		}
		b->net.sta_state = AGENT_WIFI_OFF;
	}
	if ((b->display_count > 0u) != ((b->info.caps & AGENT_BOARD_CAP_DISPLAY) != 0u)) {
		return fail(ctx, "display lines and caps=display must agree (both or neither)");
	}
	return true;
}

int posix_board_load(const char *path, char *why, size_t why_len)
{
	char line[POSIX_BOARD_LINE_MAX + 2];
	unsigned int number = 0;
	struct line_ctx ctx;
	FILE *f;
	int err = 0;

	if (path == NULL || why == NULL || why_len == 0) {
		return -EINVAL;
	}
	why[0] = '\0';
	f = fopen(path, "r");
	if (f == NULL) {
		err = -errno;
		snprintf(why, why_len, "cannot open it: %s", strerror(errno));
		return err;
	}
	pthread_mutex_lock(&posix_board_lock);
	board_defaults(&scratch);
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strlen(line);
		char message[200];

		number++;
		if (len > 0 && line[len - 1] == '\n') {
			line[--len] = '\0';
		} else if (!feof(f)) {
			snprintf(why, why_len, "line %u: longer than %d characters", number,
				 POSIX_BOARD_LINE_MAX);
			err = -EINVAL;
			break;
		}
		if (len > 0 && line[len - 1] == '\r') {
			line[--len] = '\0';
		}
		if (line[strspn(line, " \t")] == '#' || line[strspn(line, " \t")] == '\0') {
			continue;
		}
		memset(&ctx, 0, sizeof(ctx));
		ctx.why = message;
		ctx.why_len = sizeof(message);
		ctx.keyword = "";
		if (!parse_line(&ctx, line, &scratch)) {
			snprintf(why, why_len, "line %u: %s", number, message);
			err = -EINVAL;
			break;
		}
	}
	if (err == 0 && ferror(f)) {
		err = -EIO;
		snprintf(why, why_len, "cannot read it");
	}
	if (err == 0) {
		char message[200];

		memset(&ctx, 0, sizeof(ctx));
		ctx.why = message;
		ctx.why_len = sizeof(message);
		if (!board_check(&ctx, &scratch)) {
			snprintf(why, why_len, "%s", message);
			err = -EINVAL;
		}
	}
	if (err == 0) {
		posix_board_current = scratch;
	}
	pthread_mutex_unlock(&posix_board_lock);
	fclose(f);
	return err;
}

void posix_board_reset(void)
{
	pthread_mutex_lock(&posix_board_lock);
	board_defaults(&posix_board_current);
	pthread_mutex_unlock(&posix_board_lock);
}
