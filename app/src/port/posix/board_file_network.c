/*
 * The network lines of a board file (posix_board_file.h, docs/simulated-board.md): wifi (the
 * station), ap (the access point) and nat.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdbool.h>
#include <stdint.h>

#include "agent_port.h"
#include "posix_board_file.h"

/* ---- names --------------------------------------------------------------------------------- */

static const char *const wifi_names[] = {"absent",   "off",	   "disconnected",
					 "scanning", "connecting", "connected"};

/* ---- keywords ------------------------------------------------------------------------------ */

bool posix_board_line_wifi(struct posix_board_line *ctx, struct sim_board *b)
{
	struct agent_network_state *net = &b->net;
	const char *state = posix_board_take_required(ctx, "state");
	const char *v;
	long number = 0;
	int e = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->have_wifi_line) {
		return posix_board_fail(ctx, "only one wifi line is allowed");
	}
	b->have_wifi_line = true;
	if (!posix_board_parse_enum(ctx, "state", state, wifi_names,
				    POSIX_BOARD_COUNT_OF(wifi_names), &e)) {
		return false;
	}
	net->sta_state = (enum agent_wifi_state)e;
	if (!posix_board_copy_text(ctx, "ssid", posix_board_take(ctx, "ssid"), net->sta_ssid,
				   sizeof(net->sta_ssid), false) ||
	    !posix_board_copy_address(ctx, "ip", posix_board_take(ctx, "ip"), net->ip) ||
	    !posix_board_copy_address(ctx, "netmask", posix_board_take(ctx, "netmask"),
				      net->netmask) ||
	    !posix_board_copy_address(ctx, "gateway", posix_board_take(ctx, "gateway"),
				      net->gateway)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "rssi")) != NULL) {
		if (!posix_board_parse_long(ctx, "rssi", v, -127, 0, &number)) {
			return false;
		}
		net->rssi_known = true;
		net->rssi_dbm = (int16_t)number;
	}
	if ((v = posix_board_take(ctx, "channel")) != NULL) {
		if (!posix_board_parse_long(ctx, "channel", v, 1, 233, &number)) {
			return false;
		}
		net->channel = (uint16_t)number;
	}
	if (net->sta_state == AGENT_WIFI_CONNECTED &&
	    (net->sta_ssid[0] == '\0' || net->ip[0] == '\0')) {
		return posix_board_fail(ctx, "state=connected needs ssid= and ip=");
	}
	if (net->sta_state != AGENT_WIFI_CONNECTED &&
	    (net->ip[0] != '\0' || net->rssi_known || net->channel != 0u)) {
		return posix_board_fail(ctx,
					"ip=, rssi= and channel= are only for state=connected");
	}
	return posix_board_no_unknown_keys(ctx);
}

bool posix_board_line_ap(struct posix_board_line *ctx, struct sim_board *b)
{
	struct agent_network_state *net = &b->net;
	const char *active = posix_board_take_required(ctx, "active");
	const char *v;
	long number = 0;

	if (ctx->failed) {
		return false;
	}
	if (b->have_ap_line) {
		return posix_board_fail(ctx, "only one ap line is allowed");
	}
	b->have_ap_line = true;
	if (!posix_board_parse_bool(ctx, "active", active, &net->ap_active) ||
	    !posix_board_copy_text(ctx, "ssid", posix_board_take(ctx, "ssid"), net->ap_ssid,
				   sizeof(net->ap_ssid), false) ||
	    !posix_board_copy_address(ctx, "ip", posix_board_take(ctx, "ip"), net->ap_ip)) {
		return false;
	}
	if ((v = posix_board_take(ctx, "channel")) != NULL) {
		if (!posix_board_parse_long(ctx, "channel", v, 1, 233, &number)) {
			return false;
		}
		net->ap_channel = (uint16_t)number;
	}
	if ((v = posix_board_take(ctx, "clients")) != NULL) {
		if (!posix_board_parse_long(ctx, "clients", v, 0, 255, &number)) {
			return false;
		}
		net->ap_clients = (uint8_t)number;
	}
	if (net->ap_active && net->ap_ssid[0] == '\0') {
		return posix_board_fail(ctx, "active=yes needs ssid=");
	}
	if (!net->ap_active && (net->ap_ssid[0] != '\0' || net->ap_ip[0] != '\0' ||
				net->ap_channel != 0u || net->ap_clients != 0u)) {
		return posix_board_fail(
			ctx, "an inactive access point has no ssid=, ip=, channel= or clients=");
	}
	return posix_board_no_unknown_keys(ctx);
}

bool posix_board_line_nat(struct posix_board_line *ctx, struct sim_board *b)
{
	const char *enabled = posix_board_take_required(ctx, "enabled");

	if (ctx->failed) {
		return false;
	}
	if (b->have_nat_line) {
		return posix_board_fail(ctx, "only one nat line is allowed");
	}
	b->have_nat_line = true;
	if (!posix_board_parse_bool(ctx, "enabled", enabled, &b->net.nat_enabled)) {
		return false;
	}
	return posix_board_no_unknown_keys(ctx);
}
