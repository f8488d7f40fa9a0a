/*
 * The checks between the lines of a board file (posix_board_file.h): what no single line can
 * check, run once the whole file is read.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdbool.h>

#include "agent_port.h"
#include "posix_board_file.h"

/* Consistency between lines, checked once the whole file is read. */
bool posix_board_check(struct posix_board_line *ctx, struct sim_board *b)
{
	bool wifi = (b->info.caps & AGENT_BOARD_CAP_WIFI) != 0u;

	ctx->keyword = "";
	if (!b->have_board_line) {
		return posix_board_fail(ctx, "no board line");
	}
	if (!wifi && (b->net.sta_state != AGENT_WIFI_ABSENT || b->net.ap_active ||
		      b->net.nat_enabled)) {
		return posix_board_fail(
			ctx, "wifi, ap and nat lines need caps=...,wifi on the board line");
	}
	if (wifi && b->net.sta_state == AGENT_WIFI_ABSENT) {
		if (b->have_wifi_line) {
			return posix_board_fail(
				ctx, "a board with caps=wifi cannot have wifi state=absent");
		}
		b->net.sta_state = AGENT_WIFI_OFF;
	}
	if ((b->display_count > 0u) != ((b->info.caps & AGENT_BOARD_CAP_DISPLAY) != 0u)) {
		return posix_board_fail(
			ctx, "display lines and caps=display must agree (both or neither)");
	}
	return true;
}
