/*
 * SMP request handling for the simulator (mgmt_smp.h): header checks and response header
 * as in Zephyr's smp.c (op + 1, same group, sequence and command, version at most 2,
 * flags 0), the response map opened around the group's handler, and MCUmgr's {"rc": N}
 * when the request cannot be served.
 */
#include "mgmt_smp.h"

#include <errno.h>
#include <string.h>

#include <zcbor_decode.h>
#include <zcbor_encode.h>

#include "mgmt_group.h"

/* The largest main map MCUmgr predicts (CONFIG_MCUMGR_SMP_CBOR_MAX_MAIN_MAP_ENTRIES). */
#define MAIN_MAP_MAX 15

struct smp_hdr {
	uint8_t op;
	uint8_t version;
	uint8_t flags;
	uint16_t len;
	uint16_t group;
	uint8_t seq;
	uint8_t id;
};

static void hdr_read(const uint8_t *p, struct smp_hdr *h)
{
	h->op = p[0] & 0x07u;
	h->version = (uint8_t)((p[0] >> 3) & 0x03u);
	h->flags = p[1];
	h->len = (uint16_t)((p[2] << 8) | p[3]);
	h->group = (uint16_t)((p[4] << 8) | p[5]);
	h->seq = p[6];
	h->id = p[7];
}

static void hdr_write(uint8_t *p, const struct smp_hdr *req, size_t body_len)
{
	uint8_t version = req->version > AGENT_SMP_VERSION_2 ? AGENT_SMP_VERSION_2 : req->version;

	p[0] = (uint8_t)((version << 3) | (req->op == AGENT_SMP_OP_READ ? AGENT_SMP_OP_READ_RSP
									: AGENT_SMP_OP_WRITE_RSP));
	p[1] = 0;
	p[2] = (uint8_t)(body_len >> 8);
	p[3] = (uint8_t)body_len;
	p[4] = (uint8_t)(req->group >> 8);
	p[5] = (uint8_t)req->group;
	p[6] = req->seq;
	p[7] = req->id;
}

/* {"rc": N}: MCUmgr's answer when a request cannot be served. */
static int error_response(const struct smp_hdr *req, int rc, uint8_t *rsp, size_t cap)
{
	ZCBOR_STATE_E(zse, 1, rsp + AGENT_SMP_HDR_SIZE, cap - AGENT_SMP_HDR_SIZE, 0);

	if (!zcbor_map_start_encode(zse, 2) || !zcbor_tstr_put_lit(zse, "rc") ||
	    !zcbor_int32_put(zse, rc) || !zcbor_map_end_encode(zse, 2)) {
		return -ENOMEM;
	}
	size_t body = (size_t)(zse->payload_mut - (rsp + AGENT_SMP_HDR_SIZE));

	hdr_write(rsp, req, body);
	return (int)(AGENT_SMP_HDR_SIZE + body);
}

/* OS group, MCUmgr parameters: {"buf_size", "buf_count"}. */
static bool os_params(zcbor_state_t *zse)
{
	return zcbor_tstr_put_lit(zse, "buf_size") && zcbor_uint32_put(zse, AGENT_MGMT_BUF_SIZE) &&
	       zcbor_tstr_put_lit(zse, "buf_count") && zcbor_uint32_put(zse, AGENT_MGMT_BUF_COUNT);
}

int agent_mgmt_handle(const uint8_t *req, size_t len, uint8_t *rsp, size_t cap)
{
	struct smp_hdr h;
	int rc;

	if (len < AGENT_SMP_HDR_SIZE || cap < AGENT_SMP_HDR_SIZE + 16) {
		return -EINVAL;
	}
	hdr_read(req, &h);
	if (len - AGENT_SMP_HDR_SIZE < h.len) {
		/* MGMT_ERR_ECORRUPT: the packet is shorter than its header says. */
		return error_response(&h, AGENT_MGMT_ERR_ECORRUPT, rsp, cap);
	}
	if (h.op != AGENT_SMP_OP_READ && h.op != AGENT_SMP_OP_WRITE) {
		/* A response, or an op nobody sends: Zephyr answers ENOTSUP. */
		if (h.op == AGENT_SMP_OP_READ_RSP || h.op == AGENT_SMP_OP_WRITE_RSP) {
			return -EPROTO;
		}
		return error_response(&h, AGENT_MGMT_ERR_ENOTSUP, rsp, cap);
	}
	if (h.version > AGENT_SMP_VERSION_2) {
		return error_response(&h, 13 /* MGMT_ERR_UNSUPPORTED_TOO_NEW */, rsp, cap);
	}

	/* Decoding needs one backup for the request map, as MCUmgr's reader; encoding two more
	 * for the lists and maps inside the response. */
	ZCBOR_STATE_D(zsd, 2, req + AGENT_SMP_HDR_SIZE, h.len, 1, 0);
	ZCBOR_STATE_E(zse, 3, rsp + AGENT_SMP_HDR_SIZE, cap - AGENT_SMP_HDR_SIZE, 0);

	if (!zcbor_map_start_encode(zse, MAIN_MAP_MAX)) {
		return -ENOMEM;
	}
	if (h.group == AGENT_MGMT_GROUP_ID) {
		rc = agent_mgmt_run(h.id, h.op == AGENT_SMP_OP_WRITE, zsd, zse);
	} else if (h.group == AGENT_SMP_GROUP_OS && h.id == AGENT_SMP_OS_MCUMGR_PARAMS &&
		   h.op == AGENT_SMP_OP_READ) {
		rc = os_params(zse) ? AGENT_MGMT_ERR_EOK : AGENT_MGMT_ERR_EMSGSIZE;
	} else {
		rc = AGENT_MGMT_ERR_ENOTSUP;
	}
	if (rc == AGENT_MGMT_ERR_EOK && !zcbor_map_end_encode(zse, MAIN_MAP_MAX)) {
		rc = AGENT_MGMT_ERR_EMSGSIZE;
	}
	if (rc != AGENT_MGMT_ERR_EOK) {
		return error_response(&h, rc, rsp, cap);
	}
	size_t body = (size_t)(zse->payload_mut - (rsp + AGENT_SMP_HDR_SIZE));

	hdr_write(rsp, &h, body);
	return (int)(AGENT_SMP_HDR_SIZE + body);
}
