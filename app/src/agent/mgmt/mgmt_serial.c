/*
 * SMP console framing (mgmt_serial.h). Lines are recognised as Zephyr's smp_shell.c does:
 * the two marker bytes start a line that runs to '\n'; a line longer than its buffer is
 * dropped, as the shell transport's 127-byte line buffer drops the bytes past its end, and
 * so is a line that does not end within MGMT_SERIAL_INPUT_TIMEOUT_MS, as the transport's
 * input timeout does (CONFIG_MCUMGR_TRANSPORT_SHELL_INPUT_TIMEOUT).
 * Each line is decoded as it ends, as serial_util.c does, and the packet is released only
 * when its length is reached exactly and its CRC checks.
 */
#include "mgmt_serial.h"

#include <errno.h>
#include <string.h>

static const char b64_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Base64 characters per line: the line less its markers and '\n', whole quads. */
#define LINE_B64 ((MGMT_SERIAL_LINE_MAX - 3u) & ~3u)

uint16_t mgmt_serial_crc16(const uint8_t *data, size_t len)
{
	uint16_t crc = 0;

	for (size_t i = 0; i < len; i++) {
		crc ^= (uint16_t)(data[i] << 8);
		for (int bit = 0; bit < 8; bit++) {
			crc = (crc & 0x8000u) != 0 ? (uint16_t)((crc << 1) ^ 0x1021u)
						   : (uint16_t)(crc << 1);
		}
	}
	return crc;
}

/* The framed byte @p i of a packet: length, packet, CRC. */
static uint8_t framed_byte(const uint8_t *pkt, size_t len, uint16_t crc, size_t i)
{
	if (i < 2) {
		return (uint8_t)(i == 0 ? (len + 2) >> 8 : (len + 2));
	}
	if (i < len + 2) {
		return pkt[i - 2];
	}
	return (uint8_t)(i == len + 2 ? crc >> 8 : crc);
}

int mgmt_serial_encode(const uint8_t *pkt, size_t len, uint8_t *out, size_t cap)
{
	uint16_t crc = mgmt_serial_crc16(pkt, len);
	size_t framed = len + 4;
	size_t o = 0;
	size_t in_line = LINE_B64; /* forces the first marker */
	bool first = true;

	if (len > 0xfffdu) {
		return -ENOBUFS;
	}
	for (size_t i = 0; i < framed; i += 3) {
		uint8_t b[3] = {0, 0, 0};
		size_t n = framed - i < 3 ? framed - i : 3;

		for (size_t k = 0; k < n; k++) {
			b[k] = framed_byte(pkt, len, crc, i + k);
		}
		if (in_line == LINE_B64) {
			if (!first) {
				if (o + 1 > cap) {
					return -ENOBUFS;
				}
				out[o++] = '\n';
			}
			if (o + 2 > cap) {
				return -ENOBUFS;
			}
			out[o++] = first ? MGMT_SERIAL_PKT_1 : MGMT_SERIAL_FRAG_1;
			out[o++] = first ? MGMT_SERIAL_PKT_2 : MGMT_SERIAL_FRAG_2;
			first = false;
			in_line = 0;
		}
		if (o + 4 > cap) {
			return -ENOBUFS;
		}
		out[o++] = (uint8_t)b64_chars[b[0] >> 2];
		out[o++] = (uint8_t)b64_chars[((b[0] & 0x03u) << 4) | (b[1] >> 4)];
		out[o++] = n > 1 ? (uint8_t)b64_chars[((b[1] & 0x0fu) << 2) | (b[2] >> 6)] : '=';
		out[o++] = n > 2 ? (uint8_t)b64_chars[b[2] & 0x3fu] : '=';
		in_line += 4;
	}
	if (o + 1 > cap) {
		return -ENOBUFS;
	}
	out[o++] = '\n';
	return (int)o;
}

void mgmt_serial_rx_init(struct mgmt_serial_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
}

static int b64_value(uint8_t c)
{
	const char *p = c != 0 ? strchr(b64_chars, c) : NULL;

	return p != NULL ? (int)(p - b64_chars) : -1;
}

static void packet_drop(struct mgmt_serial_rx *rx)
{
	memset(rx->pkt, 0, rx->pkt_len);
	rx->pkt_len = 0;
	rx->pkt_expect = 0;
	rx->dropped++;
}

/* Decode @p len base64 characters onto the packet; false when malformed or too long. */
static bool b64_append(struct mgmt_serial_rx *rx, const uint8_t *s, size_t len)
{
	if (len % 4 != 0) {
		return false;
	}
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		size_t n = 3;

		for (size_t k = 0; k < 4; k++) {
			v[k] = b64_value(s[i + k]);
		}
		if (v[0] < 0 || v[1] < 0) {
			return false;
		}
		if (s[i + 2] == '=' && s[i + 3] == '=' && i + 4 == len) {
			n = 1;
		} else if (v[2] >= 0 && s[i + 3] == '=' && i + 4 == len) {
			n = 2;
		} else if (v[2] < 0 || v[3] < 0) {
			return false;
		}
		if (rx->pkt_len + n > sizeof(rx->pkt)) {
			return false;
		}
		uint32_t q = ((uint32_t)v[0] << 18) | ((uint32_t)v[1] << 12) |
			     ((uint32_t)(n > 1 ? v[2] : 0) << 6) | (uint32_t)(n > 2 ? v[3] : 0);

		rx->pkt[rx->pkt_len++] = (uint8_t)(q >> 16);
		if (n > 1) {
			rx->pkt[rx->pkt_len++] = (uint8_t)(q >> 8);
		}
		if (n > 2) {
			rx->pkt[rx->pkt_len++] = (uint8_t)q;
		}
	}
	return true;
}

/* A whole line (markers and '\n' included) has arrived. */
static void line_end(struct mgmt_serial_rx *rx)
{
	bool first = rx->line[0] == MGMT_SERIAL_PKT_1;
	size_t len = rx->line_len - 3; /* markers and '\n' */

	if (len > 0 && rx->line[2 + len - 1] == '\r') {
		len--;
	}
	if (rx->line_overflow) {
		packet_drop(rx);
		return;
	}
	if (first) {
		memset(rx->pkt, 0, rx->pkt_len);
		rx->pkt_len = 0;
		rx->pkt_expect = 0;
	} else if (rx->pkt_expect == 0) {
		rx->dropped++; /* a continuation without a start */
		return;
	}
	if (!b64_append(rx, rx->line + 2, len)) {
		packet_drop(rx);
		return;
	}
	if (first) {
		if (rx->pkt_len < 2) {
			packet_drop(rx);
			return;
		}
		rx->pkt_expect = ((size_t)rx->pkt[0] << 8) | rx->pkt[1];
		if (rx->pkt_expect < 2 || rx->pkt_expect + 2 > sizeof(rx->pkt)) {
			packet_drop(rx);
			return;
		}
	}
	if (rx->pkt_len - 2 < rx->pkt_expect) {
		return; /* more lines to come */
	}
	if (rx->pkt_len - 2 > rx->pkt_expect ||
	    mgmt_serial_crc16(rx->pkt + 2, rx->pkt_expect) != 0) {
		packet_drop(rx);
		return;
	}
	rx->ready = true;
}

size_t mgmt_serial_rx_byte(struct mgmt_serial_rx *rx, uint8_t byte, int64_t now_ms,
			   uint8_t shell[2])
{
	if (rx->state == MGMT_RX_LINE && now_ms - rx->line_start_ms > MGMT_SERIAL_INPUT_TIMEOUT_MS) {
		/* Never ended (markers typed by hand, a client gone mid-frame): drop it. */
		memset(rx->line, 0, sizeof(rx->line));
		rx->line_len = 0;
		rx->state = MGMT_RX_IDLE;
		packet_drop(rx);
	}
	switch (rx->state) {
	case MGMT_RX_IDLE:
		if (byte == MGMT_SERIAL_PKT_1 || byte == MGMT_SERIAL_FRAG_1) {
			rx->marker = byte;
			rx->state = MGMT_RX_MARKER;
			return 0;
		}
		shell[0] = byte;
		return 1;
	case MGMT_RX_MARKER:
		if ((rx->marker == MGMT_SERIAL_PKT_1 && byte == MGMT_SERIAL_PKT_2) ||
		    (rx->marker == MGMT_SERIAL_FRAG_1 && byte == MGMT_SERIAL_FRAG_2)) {
			rx->line[0] = rx->marker;
			rx->line[1] = byte;
			rx->line_len = 2;
			rx->line_overflow = false;
			rx->line_start_ms = now_ms;
			rx->state = MGMT_RX_LINE;
			return 0;
		}
		/* Not a frame after all: both bytes are the shell's (a marker byte again
		 * starts over). */
		rx->state = MGMT_RX_IDLE;
		shell[0] = rx->marker;
		if (byte == MGMT_SERIAL_PKT_1 || byte == MGMT_SERIAL_FRAG_1) {
			rx->marker = byte;
			rx->state = MGMT_RX_MARKER;
			return 1;
		}
		shell[1] = byte;
		return 2;
	default:
		if (rx->line_len < sizeof(rx->line)) {
			rx->line[rx->line_len++] = byte;
		} else {
			rx->line_overflow = true;
		}
		if (byte == '\n') {
			if (rx->line_overflow) {
				/* Keep the '\n' last so that line_end() finds its end. */
				rx->line[sizeof(rx->line) - 1] = '\n';
				rx->line_len = sizeof(rx->line);
			}
			line_end(rx);
			memset(rx->line, 0, sizeof(rx->line));
			rx->line_len = 0;
			rx->state = MGMT_RX_IDLE;
		}
		return 0;
	}
}

const uint8_t *mgmt_serial_rx_packet(const struct mgmt_serial_rx *rx, size_t *len)
{
	*len = rx->ready ? rx->pkt_expect - 2 : 0;
	return rx->pkt + 2;
}

void mgmt_serial_rx_done(struct mgmt_serial_rx *rx)
{
	memset(rx->pkt, 0, sizeof(rx->pkt));
	rx->pkt_len = 0;
	rx->pkt_expect = 0;
	rx->ready = false;
}
