/*
 * The conversation commands of the SMP management group (docs/mgmt-group.md): conversations
 * (3) lists the slots a page at a time, export (4) reads one conversation file in chunks
 * through the group's only staging buffer, delete (5) removes one unless the chat has it
 * open. The slot is checked as the shell checks `agent delete SLOT`.
 */
#include <errno.h>
#include <string.h>

#include <zcbor_encode.h>

#include "agent_chat.h"
#include "agent_port.h"
#include "conv_store.h"
#include "mgmt_internal.h"
#include "module_agents.h"

static uint8_t export_chunk[AGENT_MGMT_EXPORT_CHUNK] AGENT_PSRAM_ATTR;

/* ---- slots -------------------------------------------------------------------------------- */

static int store_info(struct conv_store_info *info, struct refusal *r)
{
	if (conv_store_info_get(info) != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENODEV,
					 "conversations are not available (no storage)");
	}
	return 0;
}

/* The slot field of export and delete, checked as the shell checks `agent delete SLOT`. */
static int slot_field(const struct field *f, uint8_t *slot, struct refusal *r)
{
	struct conv_store_info info;
	int err;

	if (!f->present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "slot is missing");
	}
	err = store_info(&info, r);
	if (err != 0) {
		return err;
	}
	if (f->number < 1 || f->number > info.slots) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ERANGE,
					 "slot must be a number from 1 to %u",
					 (unsigned int)info.slots);
	}
	*slot = (uint8_t)f->number;
	return 0;
}

/* ---- conversations (3) -------------------------------------------------------------------- */

static bool put_summary(zcbor_state_t *zse, const struct conv_summary *s)
{
	return zcbor_map_start_encode(zse, 6) && agent_mgmt_put_uint(zse, "slot", s->slot) &&
	       agent_mgmt_put_uint(zse, "turns", s->damaged ? 0 : s->turns) &&
	       agent_mgmt_put_uint(zse, "bytes", s->bytes) &&
	       agent_mgmt_put_str(zse, "model", s->damaged ? "" : s->model) &&
	       agent_mgmt_put_str(zse, "title", s->damaged ? "" : s->title) &&
	       zcbor_tstr_put_lit(zse, "damaged") && zcbor_bool_put(zse, s->damaged) &&
	       zcbor_map_end_encode(zse, 6);
}

int agent_mgmt_conversations_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct conv_store_info info;
	const uint8_t *end = zse->payload_end;
	uint32_t off;
	uint32_t next;
	bool ok;
	int err = agent_mgmt_page_request(zsd, r, &off);

	if (err == 0) {
		err = store_info(&info, r);
	}
	if (err == 0) {
		err = agent_mgmt_page_check(r, off, info.slots, "slots");
	}
	if (err != 0) {
		return err;
	}
	ok = agent_mgmt_put_str(zse, "dir", info.dir) &&
	     agent_mgmt_put_uint(zse, "slots", info.slots) &&
	     agent_mgmt_put_uint(zse, "off", off) && zcbor_tstr_put_lit(zse, "list") &&
	     zcbor_list_start_encode(zse, CONV_SLOTS_MAX);
	if (!ok || end - zse->payload_mut < PAGE_RESERVE) {
		return -ENOMEM;
	}
	zse->payload_end = end - PAGE_RESERVE;
	for (next = off; next < info.slots; next++) {
		struct conv_summary s;
		struct mark m;

		err = conv_store_summary((uint8_t)(next + 1), &s);
		if (err == -ENOENT) {
			continue;
		}
		if (err != 0 && !(err == -EBADMSG && s.damaged)) {
			zse->payload_end = end;
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EIO,
						 "slot %u cannot be read (error %d)",
						 (unsigned int)(next + 1), err);
		}
		s.slot = (uint8_t)(next + 1);
		agent_mgmt_mark_take(zse, &m);
		if (!put_summary(zse, &s)) {
			agent_mgmt_mark_restore(zse, &m);
			if (next == off) {
				zse->payload_end = end;
				return -ENOMEM;
			}
			break;
		}
	}
	zse->payload_end = end;
	ok = zcbor_list_end_encode(zse, CONV_SLOTS_MAX) && agent_mgmt_put_uint(zse, "next", next);
	return ok ? 0 : -ENOMEM;
}

/* ---- export (4) --------------------------------------------------------------------------- */

/* The members of an export response besides the data: keys, numbers, the bstr header and
 * the end of the map. */
#define EXPORT_OVERHEAD 40

int agent_mgmt_export_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {
		{.name = "slot", .type = FIELD_UINT},
		{.name = "off", .type = FIELD_UINT},
	};
	uint32_t total = 0;
	uint8_t slot = 0;
	size_t room = (size_t)(zse->payload_end - zse->payload_mut);
	size_t want;
	int n;
	int err = agent_mgmt_decode_request(zsd, fields, 2, r);

	if (err != 0) {
		return err;
	}
	err = slot_field(&fields[0], &slot, r);
	if (err != 0) {
		return err;
	}
	if (!fields[1].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "off is missing");
	}
	if (room <= EXPORT_OVERHEAD) {
		return -ENOMEM;
	}
	want = room - EXPORT_OVERHEAD;
	if (want > sizeof(export_chunk)) {
		want = sizeof(export_chunk);
	}
	n = conv_store_export(slot, fields[1].number, export_chunk, want, &total);
	if (n == -ENOENT) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENOENT, "slot %u holds no conversation",
					 (unsigned int)slot);
	}
	if (n == -ERANGE) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ERANGE,
					 "offset %u is past the end (%u bytes)",
					 (unsigned int)fields[1].number, (unsigned int)total);
	}
	if (n == -ENODEV) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENODEV,
					 "conversations are not available (no storage)");
	}
	if (n < 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EIO, "slot %u cannot be read (error %d)",
					 (unsigned int)slot, n);
	}
	return agent_mgmt_put_uint(zse, "slot", slot) &&
			       agent_mgmt_put_uint(zse, "off", fields[1].number) &&
			       agent_mgmt_put_uint(zse, "len", total) &&
			       zcbor_tstr_put_lit(zse, "data") &&
			       zcbor_bstr_encode_ptr(zse, (const char *)export_chunk, (size_t)n)
		       ? 0
		       : -ENOMEM;
}

/* ---- delete (5) --------------------------------------------------------------------------- */

int agent_mgmt_delete_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "slot", .type = FIELD_UINT}};
	uint8_t slot = 0;
	int err = agent_mgmt_decode_request(zsd, fields, 1, r);

	if (err != 0) {
		return err;
	}
	err = slot_field(&fields[0], &slot, r);
	if (err != 0) {
		return err;
	}
	if (agent_chat_open_slot() == slot) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EBUSY, "slot %u is open in the chat",
					 (unsigned int)slot);
	}
	err = conv_store_delete(slot);
	if (err == -ENOENT) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENOENT, "slot %u holds no conversation",
					 (unsigned int)slot);
	}
	if (err != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EIO,
					 "slot %u could not be deleted (error %d)",
					 (unsigned int)slot, err);
	}
	module_agent_forget(slot); /* the agent of that slot goes with it */
	return agent_mgmt_put_uint(zse, "slot", slot) ? 0 : -ENOMEM;
}
