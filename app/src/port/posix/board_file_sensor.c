/*
 * The sensor lines of a board file (posix_board_file.h, docs/simulated-board.md): family
 * (which sensor families the board has) and sensor (one reading of a present family).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdbool.h>
#include <string.h>

#include "agent_port.h"
#include "posix_board.h"
#include "posix_board_file.h"

/* ---- names --------------------------------------------------------------------------------- */

static const char *const family_names[AGENT_SENSOR_FAMILY_COUNT] = {"battery", "environment"};

/* ---- keywords ------------------------------------------------------------------------------ */

bool posix_board_line_family(struct posix_board_line *ctx, struct sim_board *b)
{
	const char *name = posix_board_take_required(ctx, "name");
	const char *present = posix_board_take_required(ctx, "present");
	int family;

	if (ctx->failed) {
		return false;
	}
	if (!posix_board_parse_enum(ctx, "name", name, family_names,
				    POSIX_BOARD_COUNT_OF(family_names), &family)) {
		return false;
	}
	if (b->have_family_line[family]) {
		return posix_board_fail(ctx, "%s is declared twice", name);
	}
	b->have_family_line[family] = true;
	if (!posix_board_parse_bool(ctx, "present", present, &b->family_present[family])) {
		return false;
	}
	return posix_board_no_unknown_keys(ctx);
}

bool posix_board_line_sensor(struct posix_board_line *ctx, struct sim_board *b)
{
	struct agent_sensor_reading *r;
	const char *family = posix_board_take_required(ctx, "family");
	const char *name = posix_board_take_required(ctx, "name");
	const char *quantity = posix_board_take_required(ctx, "quantity");
	const char *unit = posix_board_take_required(ctx, "unit");
	const char *value = posix_board_take(ctx, "value");
	const char *error = posix_board_take(ctx, "error");
	int e;

	if (ctx->failed) {
		return false;
	}
	if (b->sensor_count == POSIX_BOARD_SENSOR_MAX) {
		return posix_board_fail(ctx, "more than %d sensor lines", POSIX_BOARD_SENSOR_MAX);
	}
	r = &b->sensor[b->sensor_count];
	memset(r, 0, sizeof(*r));
	if (!posix_board_parse_enum(ctx, "family", family, family_names,
				    POSIX_BOARD_COUNT_OF(family_names), &e)) {
		return false;
	}
	r->family = (enum agent_sensor_family)e;
	if (!b->family_present[e]) {
		return posix_board_fail(ctx,
					"family %s is not present: declare it first with "
					"'family name=%s present=yes'",
					family, family);
	}
	if (!posix_board_copy_text(ctx, "name", name, r->sensor, sizeof(r->sensor), false) ||
	    !posix_board_copy_text(ctx, "quantity", quantity, r->quantity, sizeof(r->quantity),
				   false) ||
	    !posix_board_copy_text(ctx, "unit", unit, r->unit, sizeof(r->unit), false)) {
		return false;
	}
	if ((value == NULL) == (error == NULL)) {
		return posix_board_fail(ctx, "exactly one of value= and error= is needed");
	}
	if (value != NULL && !posix_board_parse_micro(ctx, "value", value, &r->value_micro)) {
		return false;
	}
	if (error != NULL) {
		long err = 0;

		if (!posix_board_parse_long(ctx, "error", error, -4095, -1, &err)) {
			return false;
		}
		r->error = (int)err;
	}
	if (!posix_board_no_unknown_keys(ctx)) {
		return false;
	}
	b->sensor_count++;
	return true;
}
