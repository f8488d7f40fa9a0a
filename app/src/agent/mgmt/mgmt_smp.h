/*
 * SMP packets for the simulator: the 8-byte header, dispatch to the agent group
 * (mgmt_group.h) and MCUmgr's error answers, as Zephyr's smp.c forms them. The firmware
 * does not use this file: there MCUmgr itself dispatches to the group.
 */
#ifndef AGENT_MGMT_SMP_H
#define AGENT_MGMT_SMP_H

#include <stddef.h>
#include <stdint.h>

/* SMP header (MGMT_HDR_SIZE) and ops (MGMT_OP_*). */
#define AGENT_SMP_HDR_SIZE     8u
#define AGENT_SMP_OP_READ      0u
#define AGENT_SMP_OP_READ_RSP  1u
#define AGENT_SMP_OP_WRITE     2u
#define AGENT_SMP_OP_WRITE_RSP 3u
#define AGENT_SMP_VERSION_2    1u

/*
 * One request or response packet at most, header included; as
 * CONFIG_MCUMGR_TRANSPORT_NETBUF_SIZE in app/prj.conf, which bounds both on the firmware.
 * The serial frame around a packet (length and CRC, 4 bytes) shares the buffer.
 */
#define AGENT_MGMT_BUF_SIZE  2048u
#define AGENT_MGMT_BUF_COUNT 4u /* as CONFIG_MCUMGR_TRANSPORT_NETBUF_COUNT; reported only */

/* The OS group's MCUmgr parameters command, which the simulator answers as Zephyr does with
 * CONFIG_MCUMGR_GRP_OS_MCUMGR_PARAMS, so that clients learn the buffer size. */
#define AGENT_SMP_GROUP_OS	     0u
#define AGENT_SMP_OS_MCUMGR_PARAMS 6u

/**
 * Handle one SMP request packet of @p len bytes and write the response packet (header
 * and CBOR body) into @p rsp of @p cap bytes. Returns the response's length, or a negative
 * errno when there is nothing to answer (a packet shorter than its header or its stated
 * length, a response op), as Zephyr's smp_process_request_packet() then sends nothing.
 * Only the first request of a packet is handled.
 */
int agent_mgmt_handle(const uint8_t *req, size_t len, uint8_t *rsp, size_t cap);

#endif /* AGENT_MGMT_SMP_H */
