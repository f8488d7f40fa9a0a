/*
 * A commit of the conversation store (conv_store.h; docs/conversation-format.md "Replacing a
 * file"): the turn is checked and sized, the temporary file is written with the old records
 * copied through the I/O block, read back and checked, then swapped in through the backup
 * name.
 */
#include "conv_store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"

/* ---- commit ------------------------------------------------------------------------------- */

/* A record of the commit: its type and payload. */
struct new_record {
	uint8_t type;
	const void *data;
	size_t len;
};

static int write_record(struct conv_sink *out, const struct new_record *rec)
{
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	uint8_t crc_raw[CONV_RECORD_CRC_BYTES];
	int err;

	conv_record_head_encode(rec->type, (uint16_t)rec->len, head);
	conv_put_le32(crc_raw, conv_crc32(conv_crc32(0, head, sizeof(head)), rec->data, rec->len));
	err = conv_sink_put(out, head, sizeof(head));
	if (err == 0 && rec->len > 0u) {
		err = conv_sink_put(out, rec->data, rec->len);
	}
	if (err == 0) {
		err = conv_sink_put(out, crc_raw, sizeof(crc_raw));
	}
	return err;
}

struct commit_plan {
	const struct conv_handle *h;
	const struct conv_turn *turn;
	uint8_t usage_raw[CONV_USAGE_BYTES];
	uint32_t records; /* records this commit appends */
	uint32_t bytes;	  /* their size */
};

/* Validate the turn and size its records. */
static int plan_turn(struct commit_plan *plan, const char **why)
{
	const struct conv_turn *t = plan->turn;
	size_t id_len = t->response_id != NULL ? strlen(t->response_id) : 0u;
	uint64_t bytes = 0;

	if (t->user == NULL || t->user_len == 0u || (t->assistant == NULL && t->assistant_len > 0u) ||
	    (t->tools == NULL && t->tool_count > 0u)) {
		*why = "a turn needs a user message";
		return -EINVAL;
	}
	if (t->user_len > CONV_PAYLOAD_MAX || t->assistant_len > CONV_PAYLOAD_MAX) {
		*why = "a message is longer than a record holds (65535 bytes)";
		return -EFBIG;
	}
	if (id_len > CONV_RESPONSE_ID_MAX) {
		*why = "response id too long";
		return -EINVAL;
	}
	bytes += CONV_RECORD_OVERHEAD * 2u + t->user_len + t->assistant_len;
	plan->records = 2;
	for (size_t i = 0; i < t->tool_count; i++) {
		size_t len = t->tools[i] != NULL ? strlen(t->tools[i]) : 0u;

		if (t->tools[i] == NULL || len > CONV_TOOL_LINE_MAX) {
			*why = "tool summary missing or longer than 255 bytes";
			return -EINVAL;
		}
		bytes += CONV_RECORD_OVERHEAD + len;
		plan->records++;
		if (t->tool_ids != NULL) {
			bytes += CONV_RECORD_OVERHEAD + CONV_TOOL_ID_BYTES;
			plan->records++;
		}
	}
	if (id_len > 0u) {
		bytes += CONV_RECORD_OVERHEAD + id_len;
		plan->records++;
	}
	if (t->usage != NULL) {
		conv_put_le32(plan->usage_raw, t->usage->input_tokens);
		conv_put_le32(plan->usage_raw + 4, t->usage->output_tokens);
		conv_put_le32(plan->usage_raw + 8, t->usage->total_tokens);
		conv_put_le32(plan->usage_raw + 12, t->usage->reasoning_tokens);
		bytes += CONV_RECORD_OVERHEAD + CONV_USAGE_BYTES;
		plan->records++;
	}
	if (plan->h->pending) {
		bytes += CONV_HEADER_BYTES + CONV_TRAILER_BYTES + CONV_META_RECORDS * CONV_RECORD_OVERHEAD +
			 strlen(plan->h->provider) + strlen(plan->h->model) + strlen(plan->h->title);
		plan->records += CONV_META_RECORDS;
	}
	plan->bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
	return 0;
}

static int write_turn(struct conv_sink *out, const struct commit_plan *plan)
{
	const struct conv_turn *t = plan->turn;
	struct new_record rec;
	int err;

	rec = (struct new_record){CONV_REC_USER, t->user, t->user_len};
	err = write_record(out, &rec);
	for (size_t i = 0; err == 0 && i < t->tool_count; i++) {
		uint8_t id_raw[CONV_TOOL_ID_BYTES];

		rec = (struct new_record){CONV_REC_TOOL, t->tools[i], strlen(t->tools[i])};
		err = write_record(out, &rec);
		if (err == 0 && t->tool_ids != NULL) {
			id_raw[0] = (uint8_t)t->tool_ids[i];
			id_raw[1] = (uint8_t)(t->tool_ids[i] >> 8);
			rec = (struct new_record){CONV_REC_TOOL_ID, id_raw, sizeof(id_raw)};
			err = write_record(out, &rec);
		}
	}
	if (err == 0) {
		rec = (struct new_record){CONV_REC_ASSISTANT, t->assistant, t->assistant_len};
		err = write_record(out, &rec);
	}
	if (err == 0 && t->response_id != NULL && t->response_id[0] != '\0') {
		rec = (struct new_record){CONV_REC_RESPONSE_ID, t->response_id,
					  strlen(t->response_id)};
		err = write_record(out, &rec);
	}
	if (err == 0 && t->usage != NULL) {
		rec = (struct new_record){CONV_REC_USAGE, plan->usage_raw, CONV_USAGE_BYTES};
		err = write_record(out, &rec);
	}
	return err;
}

static int write_meta(struct conv_sink *out, const struct conv_handle *h)
{
	const struct new_record recs[CONV_META_RECORDS] = {
		{CONV_REC_PROVIDER, h->provider, strlen(h->provider)},
		{CONV_REC_MODEL, h->model, strlen(h->model)},
		{CONV_REC_TITLE, h->title, strlen(h->title)},
	};
	int err = 0;

	for (size_t i = 0; err == 0 && i < CONV_META_RECORDS; i++) {
		err = write_record(out, &recs[i]);
	}
	return err;
}

/* Copy every record of the old file into @p out and check the old file's trailer. */
static int copy_old(struct conv_scan *old, struct conv_sink *out)
{
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	uint8_t type;
	uint16_t len;
	int err = 0;

	while (err == 0 && old->index < old->hdr.records) {
		err = conv_scan_head(old, head, &type, &len);
		if (err == 0) {
			err = conv_scan_payload(old, head, len, out);
		}
		if (err == 0) {
			conv_scan_done(old, type, len);
		}
	}
	return err == 0 ? conv_scan_finish(old) : err;
}

/* Write the temporary file: header, old records or meta records, the turn, trailer. */
static int write_temp(const char *tmp_path, const struct conv_header *hdr, struct conv_scan *old,
		      const struct commit_plan *plan)
{
	uint8_t raw[CONV_HEADER_BYTES];
	uint8_t trailer[CONV_TRAILER_BYTES];
	struct conv_sink out = {0};
	int err;

	err = agent_fs_open(&out.file, tmp_path,
			    AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC);
	if (err != 0) {
		return err;
	}
	conv_header_encode(hdr, raw);
	err = conv_sink_put(&out, raw, sizeof(raw));
	if (err == 0) {
		err = old != NULL ? copy_old(old, &out) : write_meta(&out, plan->h);
	}
	if (err == 0) {
		err = write_turn(&out, plan);
	}
	if (err == 0) {
		conv_trailer_encode(hdr->file_bytes, 0, trailer);
		conv_put_le32(trailer + 8, conv_crc32(out.crc, trailer, 8));
		err = agent_fs_write_all(out.file, trailer, sizeof(trailer));
	}
	if (err == 0) {
		err = agent_fs_sync(out.file);
	}
	/* A failed close may have lost what the sync had not: the check below would see it. */
	int close_err = agent_fs_close(out.file);

	return err != 0 ? err : close_err;
}

/*
 * Swap the checked temporary file in (docs/conversation-format.md "Replacing a file").
 * @p had_main: the slot held a file before.
 */
static int replace_files(const char *main_path, const char *bak_path, const char *tmp_path,
			 bool had_main)
{
	int err;

	if (conv_state.medium == CONV_MEDIUM_SD) {
		err = conv_ignore_enoent(agent_fs_unlink(bak_path));
		if (err != 0) {
			return err;
		}
	}
	if (had_main) {
		err = agent_fs_rename(main_path, bak_path);
		if (err != 0) {
			return err;
		}
	}
	err = agent_fs_rename(tmp_path, main_path);
	if (err != 0 && had_main) {
		/* Put the old version back; if this fails too, recovery at boot does it. */
		(void)agent_fs_rename(bak_path, main_path);
	}
	return err;
}

/* The commit proper; lock held, @p buf the I/O block. */
static int commit_locked(struct conv_handle *h, const struct commit_plan *plan, uint8_t *buf,
			 const char **why, struct conv_header *out_hdr)
{
	static char limit_why[80];
	char main_path[CONV_PATH_BYTES];
	char bak_path[CONV_PATH_BYTES];
	char tmp_path[CONV_PATH_BYTES];
	struct agent_dirent ent;
	struct conv_header hdr;
	struct conv_scan old;
	bool had_main;
	uint64_t size;
	int err;

	conv_slot_path(main_path, h->slot, "bin");
	conv_slot_path(bak_path, h->slot, "bak");
	conv_slot_path(tmp_path, h->slot, "tmp");
	memset(&old, 0, sizeof(old));

	if (h->pending) {
		err = agent_fs_stat(main_path, &ent);
		if (err != 0 && err != -ENOENT) {
			return err;
		}
		had_main = err == 0;
		memset(&hdr, 0, sizeof(hdr));
		hdr.protocol = h->protocol;
		hdr.created_s = h->created_s;
		size = plan->bytes;
	} else {
		if (conv_slot_damaged(h->slot)) {
			*why = "the conversation file is damaged";
			return -EBADMSG;
		}
		err = conv_scan_open(&old, main_path, h->slot, buf);
		if (err == -ENOENT) {
			*why = "the conversation was deleted";
			return err;
		}
		if (err != 0) {
			return err;
		}
		if (old.hdr.conv_id != h->conv_id) {
			conv_scan_close(&old);
			*why = "the slot now holds another conversation";
			return -ESTALE;
		}
		had_main = true;
		hdr = old.hdr;
		size = (uint64_t)old.hdr.file_bytes + plan->bytes;
	}
	if (size > conv_state.file_max) {
		conv_scan_close(&old);
		snprintf(limit_why, sizeof(limit_why),
			 "conversation full: start a new one (limit %u bytes)",
			 (unsigned int)conv_state.file_max);
		*why = limit_why;
		return -EFBIG;
	}
	if (conv_state.next_seq == UINT32_MAX) {
		conv_scan_close(&old);
		*why = "conversation sequence numbers exhausted";
		return -EOVERFLOW;
	}
	hdr.version = CONV_VERSION; /* a version-1 file becomes version 2 with this commit */
	hdr.slot = h->slot;
	hdr.sequence = conv_state.next_seq++;
	if (h->pending) {
		hdr.conv_id = hdr.sequence;
	}
	hdr.updated_s = conv_wall_now();
	hdr.turns++;
	hdr.records += plan->records;
	hdr.file_bytes = (uint32_t)size;

	err = conv_ignore_enoent(agent_fs_unlink(tmp_path));
	if (err == 0) {
		err = write_temp(tmp_path, &hdr, h->pending ? NULL : &old, plan);
	}
	conv_scan_close(&old);
	if (err == 0) {
		err = conv_check_file(tmp_path, h->slot, buf, NULL);
	}
	if (err == 0) {
		err = replace_files(main_path, bak_path, tmp_path, had_main);
	}
	if (err != 0) {
		(void)agent_fs_unlink(tmp_path);
		if (err == -EBADMSG) {
			*why = "the conversation file is damaged";
		}
		return err;
	}
	if (h->pending && had_main) {
		/* The backup holds the evicted conversation: nothing of it is to survive. */
		(void)agent_fs_unlink(bak_path);
	}
	conv_state.damaged_mask &= ~(1u << (h->slot - 1u));
	*out_hdr = hdr;
	return 0;
}

int conv_store_commit(struct conv_handle *h, const struct conv_turn *turn, const char **why)
{
	struct commit_plan plan;
	struct conv_header hdr;
	const char *reason = NULL;
	uint8_t *buf;
	int err;

	if (why == NULL) {
		why = &reason;
	}
	*why = "";
	if (h == NULL || turn == NULL) {
		return -EINVAL;
	}
	memset(&plan, 0, sizeof(plan));
	plan.h = h;
	plan.turn = turn;
	err = conv_enter();
	if (err != 0) {
		return err;
	}
	if (!conv_slot_valid(h->slot)) {
		conv_leave();
		*why = "no conversation open";
		return -EINVAL;
	}
	err = plan_turn(&plan, why);
	if (err == 0) {
		buf = conv_io_take();
		err = buf == NULL ? -ENOMEM : commit_locked(h, &plan, buf, why, &hdr);
		conv_io_give(buf);
	}
	if (err == 0) {
		h->pending = false;
		h->conv_id = hdr.conv_id;
		h->turns = hdr.turns;
		h->bytes = hdr.file_bytes;
	}
	conv_leave();
	return err;
}
