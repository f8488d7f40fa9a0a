/*
 * SMP over a console, as Zephyr's shell transport and smp_shell.c / serial_util.c frame it:
 * a packet travels as [length, 2 bytes big-endian][packet][CRC16-CCITT (XMODEM), 2 bytes
 * big-endian], base64-encoded and cut into lines of at most 127 bytes; the first line starts
 * with 0x06 0x09, the others with 0x04 0x14, each ends with '\n'. The receiver here picks
 * those lines out of the console's byte stream (everything else is the shell's) and
 * reassembles the packet. Pure functions over caller-owned state: the simulator's console
 * drives them, the unit tests check them.
 */
#ifndef AGENT_MGMT_SERIAL_H
#define AGENT_MGMT_SERIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mgmt_smp.h"

#define MGMT_SERIAL_PKT_1  0x06u
#define MGMT_SERIAL_PKT_2  0x09u
#define MGMT_SERIAL_FRAG_1 0x04u
#define MGMT_SERIAL_FRAG_2 0x14u
/* MCUMGR_SERIAL_MAX_FRAME: one line, markers and '\n' included. */
#define MGMT_SERIAL_LINE_MAX 127u
/*
 * A line that has not ended this many milliseconds after its two marker bytes is dropped,
 * and the console's bytes are the shell's again: typing Ctrl-F Tab or Ctrl-D Ctrl-T does not
 * hold the console until a Ctrl-J. The firmware has the same bound from Zephyr's shell
 * transport (CONFIG_MCUMGR_TRANSPORT_SHELL_INPUT_TIMEOUT_TIME in app/prj.conf).
 */
#define MGMT_SERIAL_INPUT_TIMEOUT_MS 1000

/* Bytes mgmt_serial_encode() needs for a packet of @p len bytes at most: the base64 of
 * len + 4 bytes, plus markers and '\n' for each line of 124 characters. */
#define MGMT_SERIAL_B64_LEN(len)     ((((len) + 4u + 2u) / 3u) * 4u)
#define MGMT_SERIAL_ENCODED_MAX(len) (MGMT_SERIAL_B64_LEN(len) + 3u * (MGMT_SERIAL_B64_LEN(len) / 124u + 1u))

uint16_t mgmt_serial_crc16(const uint8_t *data, size_t len);

/**
 * Frame @p len bytes of packet into @p out (@p cap bytes). Returns the encoded length, or
 * -ENOBUFS. Lines carry 124 base64 characters, so each decodes on its own.
 */
int mgmt_serial_encode(const uint8_t *pkt, size_t len, uint8_t *out, size_t cap);

enum mgmt_rx_state {
	MGMT_RX_IDLE,	  /* shell bytes */
	MGMT_RX_MARKER,	  /* the first byte of a marker was seen */
	MGMT_RX_LINE,	  /* inside a frame line, until '\n' */
};

struct mgmt_serial_rx {
	enum mgmt_rx_state state;
	uint8_t marker; /* the first marker byte held back */
	uint8_t line[MGMT_SERIAL_LINE_MAX];
	size_t line_len;
	bool line_overflow;
	int64_t line_start_ms; /* when the line's second marker byte came */
	/* The packet being reassembled: length field, packet and CRC, decoded. */
	uint8_t pkt[AGENT_MGMT_BUF_SIZE];
	size_t pkt_len;
	size_t pkt_expect; /* packet + CRC bytes the first line announced; 0: none started */
	bool ready;	   /* pkt holds a complete, checked packet (without length and CRC) */
	uint32_t dropped;  /* frames dropped: bad base64, CRC, too long, out of order */
};

void mgmt_serial_rx_init(struct mgmt_serial_rx *rx);

/**
 * Feed one console byte, arrived at @p now_ms (a monotonic clock). Returns how many bytes the
 * shell gets from this call (written to @p shell: 0, 1, or 2 when a held-back first marker
 * byte turns out not to start a frame). A frame line older than MGMT_SERIAL_INPUT_TIMEOUT_MS
 * is dropped with its packet before the byte is looked at.
 * When a packet is complete, rx->ready is set and the packet is mgmt_serial_rx_packet();
 * call mgmt_serial_rx_done() after handling it.
 */
size_t mgmt_serial_rx_byte(struct mgmt_serial_rx *rx, uint8_t byte, int64_t now_ms,
			   uint8_t shell[2]);

/** The complete packet (rx->ready), without its length and CRC. */
const uint8_t *mgmt_serial_rx_packet(const struct mgmt_serial_rx *rx, size_t *len);

/** Forget the packet handled and wipe the buffers (a request may have carried the key). */
void mgmt_serial_rx_done(struct mgmt_serial_rx *rx);

#endif /* AGENT_MGMT_SERIAL_H */
