/*
 * The simulator's SMP transport: the console carries SMP frames between shell input and
 * output as Zephyr's shell transport does (mgmt_serial.h); each request goes to
 * agent_mgmt_handle() and its response is written in one piece.
 */
#include "sim_smp.h"

#include <string.h>

#include "mgmt_serial.h"
#include "mgmt_smp.h"
#include "posix_console.h"

static struct mgmt_serial_rx rx;
static uint8_t rsp[AGENT_MGMT_BUF_SIZE];
static uint8_t frames[MGMT_SERIAL_ENCODED_MAX(AGENT_MGMT_BUF_SIZE)];
static bool rx_ready;

static void answer(struct agent_console *console)
{
	size_t len;
	const uint8_t *req = mgmt_serial_rx_packet(&rx, &len);
	int n = agent_mgmt_handle(req, len, rsp, sizeof(rsp));

	mgmt_serial_rx_done(&rx);
	if (n > 0) {
		int out = mgmt_serial_encode(rsp, (size_t)n, frames, sizeof(frames));

		if (out > 0) {
			(void)posix_console_write_raw(console, frames, (size_t)out);
		}
	}
	memset(rsp, 0, sizeof(rsp));
}

size_t sim_smp_filter(struct agent_console *console, const uint8_t *data, size_t len,
		      uint8_t *shell, sim_smp_deliver_fn deliver, void *user_data)
{
	size_t out = 0;

	if (!rx_ready) {
		mgmt_serial_rx_init(&rx);
		rx_ready = true;
	}
	int64_t now_ms = agent_uptime_ms();

	for (size_t i = 0; i < len; i++) {
		out += mgmt_serial_rx_byte(&rx, data[i], now_ms, shell + out);
		if (rx.ready) {
			if (out > 0) {
				deliver(shell, out, user_data);
				out = 0;
			}
			answer(console);
		}
	}
	return out;
}
