/*
 * The network and sensor inspection tools: network_status (the Wi-Fi station, access point
 * and NAT as the port reports them; it never scans or connects) and sensors_read (battery
 * and environmental readings by family). docs/tools-device.md describes their results.
 */
#if defined(CONFIG_AGENT_TOOLS_HARDWARE)

#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "decimal.h"
#include "tools_hardware.h"
#include "tools_hardware_internal.h"
#include "tools_listing.h"


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
		return tools_hw_port_fail(ctx, err, "the network state");
	}
	connected = net.sta_state == AGENT_WIFI_CONNECTED;
	jw_object_begin(out);
	jw_key(out, "wifi_present");
	jw_bool(out, net.sta_state != AGENT_WIFI_ABSENT);
	jw_key(out, "station");
	jw_object_begin(out);
	jw_key(out, "state");
	jw_string(out, NAME_OF(tools_hw_wifi_names, net.sta_state));
	tools_key_string_or_null(out, "ssid", net.sta_ssid);
	tools_key_string_or_null(out, "ip", net.ip);
	tools_key_string_or_null(out, "netmask", net.netmask);
	tools_key_string_or_null(out, "gateway", net.gateway);
	tools_hw_key_int_or_null(out, "rssi_dbm", net.rssi_dbm, connected && net.rssi_known);
	tools_hw_key_int_or_null(out, "channel", net.channel, connected && net.channel != 0u);
	jw_object_end(out);
	/* null: the firmware cannot read it (not: there is none). */
	jw_key(out, "access_point");
	if (net.ap_known) {
		jw_object_begin(out);
		jw_key(out, "active");
		jw_bool(out, net.ap_active);
		tools_key_string_or_null(out, "ssid", net.ap_ssid);
		tools_key_string_or_null(out, "ip", net.ap_ip);
		tools_hw_key_int_or_null(out, "channel", net.ap_channel,
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
	char text[1 + DECIMAL_U64_MAX + 1 + 6];
	char frac[6];
	size_t frac_len = 0; /* digits of the fraction up to its last non-zero one */
	size_t n = 0;
	uint64_t magnitude = micro < 0 ? (uint64_t)0 - (uint64_t)micro : (uint64_t)micro;

	for (size_t i = sizeof(frac); i-- > 0;) {
		uint64_t q = decimal_div10(magnitude);

		frac[i] = (char)('0' + (unsigned int)(magnitude - q * 10u));
		if (frac_len == 0 && frac[i] != '0') {
			frac_len = i + 1;
		}
		magnitude = q;
	}
	if (micro < 0) {
		text[n++] = '-';
	}
	n += decimal_u64(text + n, magnitude);
	if (frac_len > 0) {
		text[n++] = '.';
		memcpy(text + n, frac, frac_len);
		n += frac_len;
	}
	jw_raw(w, text, n);
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
			if (tools_hw_same_name(tools_hw_sensor_family_names[f], family_arg->str, family_arg->len)) {
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
		return tools_hw_port_fail(ctx, count, "the sensors");
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
		jw_string(out, tools_hw_sensor_family_names[f]);
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
			jw_init(&item, tools_hw_item_buf, sizeof(tools_hw_item_buf));
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
	return tools_list_end(out, NULL, 0, truncated);
}

/* ---- definitions ---------------------------------------------------------------------------- */

const struct tool_def tool_network_status = {
	.name = "network_status",
	.description = TOOL_TEXT(tools_net_sensors_description_1,
		"Current Wi-Fi station state, SSID, IP address, netmask, gateway, signal (RSSI) "
		"and channel, access-point state and clients, and NAT. Only reads: it does not "
		"scan, connect or touch the provider connection."),
	.domain = TOOL_DOMAIN_NETWORK,
	.risk = TOOL_RISK_READ,
	.output = TOOL_TEXT(tools_net_sensors_output_1,
		"{wifi_present, station: {state, ssid, ip, netmask, gateway, rssi_dbm, "
		"channel}, access_point: {active, ssid, ip, channel, clients} or null, nat: "
		"{enabled} or null}"),
	.capability = TOOL_CAP_NETWORK,
	.exec = network_exec,
	.keywords = TOOL_TEXT(tools_net_sensors_keywords_1,
		"network wifi wi-fi wlan ip address signal rssi channel access point ap nat "
		"connection"),
};

static const struct tool_param sensors_params[] = {
	{
		.name = "family",
		.type = TOOL_PARAM_STRING,
		.required = false,
		.description = TOOL_TEXT(tools_net_sensors_description_2,
			"battery or environment (default: both)."),
		.min = 0,
		.max = 16,
	},
};

const struct tool_def tool_sensors_read = {
	.name = "sensors_read",
	.description = TOOL_TEXT(tools_net_sensors_description_3,
		"Battery and environmental readings (voltage, charge, temperature, humidity, "
		"pressure, ...) from the sensor services in this firmware. A family not in the "
		"build is returned with available false."),
	.domain = TOOL_DOMAIN_SENSORS,
	.risk = TOOL_RISK_READ,
	.params = sensors_params,
	.param_count = 1,
	.output = TOOL_TEXT(tools_net_sensors_output_2,
		"{families: [{family, available, reason?, readings: [{sensor, quantity, unit, "
		"value, error?}]}], truncated}"),
	.capability = TOOL_CAP_SENSORS,
	.exec = sensors_exec,
	.keywords = TOOL_TEXT(tools_net_sensors_keywords_2,
		"sensors sensor battery voltage charge temperature humidity pressure "
		"environment measure"),
};

#endif /* CONFIG_AGENT_TOOLS_HARDWARE */
