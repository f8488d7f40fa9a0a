/*
 * The slots of the conversation store (conv_store.h): listing and summaries, create (which
 * only chooses a slot), open, and delete.
 */
#include "conv_store_internal.h"

#include <errno.h>
#include <string.h>

#include "agent_port.h"

/* ---- listing ------------------------------------------------------------------------------ */

/* Header and meta records of @p slot; lock held. */
static int summary_locked(uint8_t slot, struct conv_summary *out, uint8_t *buf)
{
	char path[CONV_PATH_BYTES];
	struct agent_dirent ent;
	struct conv_scan s;
	int err;

	memset(out, 0, sizeof(*out));
	out->slot = slot;
	conv_slot_path(path, slot, "bin");
	err = agent_fs_stat(path, &ent);
	if (err != 0) {
		return err;
	}
	out->bytes = ent.size;
	if (conv_slot_damaged(slot)) {
		out->damaged = true;
		return -EBADMSG;
	}
	err = conv_scan_open(&s, path, slot, buf);
	if (err == 0) {
		err = conv_scan_meta(&s, out->provider, CONV_PROVIDER_MAX);
	}
	if (err == 0) {
		err = conv_scan_meta(&s, out->model, CONV_MODEL_MAX);
	}
	if (err == 0) {
		err = conv_scan_meta(&s, out->title, CONV_TITLE_MAX);
	}
	if (err == 0) {
		out->protocol = s.hdr.protocol;
		out->conv_id = s.hdr.conv_id;
		out->sequence = s.hdr.sequence;
		out->turns = s.hdr.turns;
		out->bytes = s.hdr.file_bytes;
		out->created_s = s.hdr.created_s;
		out->updated_s = s.hdr.updated_s;
	}
	conv_scan_close(&s);
	if (err == -EBADMSG) {
		out->damaged = true;
	}
	return err;
}

int conv_store_summary(uint8_t slot, struct conv_summary *out)
{
	uint8_t *buf;
	int err = conv_enter();

	if (err != 0) {
		return err;
	}
	if (!conv_slot_valid(slot) || out == NULL) {
		conv_leave();
		return -EINVAL;
	}
	buf = conv_io_take();
	err = buf == NULL ? -ENOMEM : summary_locked(slot, out, buf);
	conv_io_give(buf);
	conv_leave();
	return err;
}

int conv_store_list(conv_list_fn fn, void *user_data)
{
	struct conv_summary summary;
	uint8_t *buf;
	int count = 0;
	int err = conv_enter();

	if (err != 0) {
		return err;
	}
	buf = conv_io_take();
	if (buf == NULL) {
		conv_leave();
		return -ENOMEM;
	}
	for (uint8_t slot = 1; slot <= conv_state.slots; slot++) {
		err = summary_locked(slot, &summary, buf);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		/* A damaged conversation is listed (as damaged); other errors end the walk. */
		if (err != 0 && err != -EBADMSG) {
			break;
		}
		err = 0;
		count++;
		if (fn != NULL && fn(&summary, user_data) != 0) {
			break;
		}
	}
	conv_io_give(buf);
	conv_leave();
	return err != 0 ? err : count;
}

/* ---- create and open ---------------------------------------------------------------------- */

static void copy_text(char *out, size_t cap, const char *text, size_t len)
{
	if (len > cap - 1u) {
		len = cap - 1u;
	}
	memcpy(out, text, len);
	out[len] = '\0';
}

/* The slot a new conversation takes: the lowest empty, else the oldest (damaged first). */
static int choose_slot(uint8_t *buf)
{
	char path[CONV_PATH_BYTES];
	uint32_t best_seq = UINT32_MAX;
	int best = 0;

	for (uint8_t slot = 1; slot <= conv_state.slots; slot++) {
		struct conv_scan s;
		uint32_t seq = 0;
		int err;

		conv_slot_path(path, slot, "bin");
		err = conv_slot_damaged(slot) ? -EBADMSG : conv_scan_open(&s, path, slot, buf);
		if (err == -ENOENT) {
			return slot;
		}
		if (err == 0) {
			seq = s.hdr.sequence;
			conv_scan_close(&s);
		} else if (err != -EBADMSG) {
			return err;
		}
		if (best == 0 || seq < best_seq) {
			best = slot;
			best_seq = seq;
		}
	}
	return best;
}

int conv_store_create(struct conv_handle *h, const struct conv_meta *meta)
{
	const char *provider;
	const char *model;
	const char *title;
	uint8_t *buf;
	int slot;
	int err;

	if (h == NULL || meta == NULL) {
		return -EINVAL;
	}
	provider = meta->provider != NULL ? meta->provider : "";
	model = meta->model != NULL ? meta->model : "";
	title = meta->title != NULL ? meta->title : "";
	/* The chat passes the endpoint's host (up to 253 bytes): it is cut, like the title. */
	if (strlen(model) > CONV_MODEL_MAX) {
		return -EINVAL;
	}
	err = conv_enter();
	if (err != 0) {
		return err;
	}
	buf = conv_io_take();
	slot = buf == NULL ? -ENOMEM : choose_slot(buf);
	conv_io_give(buf);
	conv_leave();
	if (slot < 0) {
		return slot;
	}
	memset(h, 0, sizeof(*h));
	h->slot = (uint8_t)slot;
	h->pending = true;
	h->protocol = meta->protocol;
	h->created_s = conv_wall_now();
	copy_text(h->provider, sizeof(h->provider), provider,
		  conv_utf8_prefix(provider, strlen(provider), CONV_PROVIDER_MAX));
	copy_text(h->model, sizeof(h->model), model, strlen(model));
	copy_text(h->title, sizeof(h->title), title,
		  conv_utf8_prefix(title, strlen(title), CONV_TITLE_MAX));
	return slot;
}

int conv_store_open(struct conv_handle *h, uint8_t slot)
{
	struct conv_summary *sum;
	static struct conv_summary open_summary AGENT_PSRAM_ATTR; /* under the lock; off the stack */
	uint8_t *buf;
	int err;

	if (h == NULL) {
		return -EINVAL;
	}
	err = conv_enter();
	if (err != 0) {
		return err;
	}
	if (!conv_slot_valid(slot)) {
		conv_leave();
		return -EINVAL;
	}
	sum = &open_summary;
	buf = conv_io_take();
	err = buf == NULL ? -ENOMEM : summary_locked(slot, sum, buf);
	conv_io_give(buf);
	if (err == 0) {
		memset(h, 0, sizeof(*h));
		h->slot = slot;
		h->protocol = sum->protocol;
		h->conv_id = sum->conv_id;
		h->turns = sum->turns;
		h->bytes = sum->bytes;
		h->created_s = sum->created_s;
		memcpy(h->provider, sum->provider, sizeof(h->provider));
		memcpy(h->model, sum->model, sizeof(h->model));
		memcpy(h->title, sum->title, sizeof(h->title));
	}
	conv_leave();
	return err;
}

/* ---- delete ------------------------------------------------------------------------------- */

int conv_store_delete(uint8_t slot)
{
	char path[CONV_PATH_BYTES];
	int err = conv_enter();

	if (err != 0) {
		return err;
	}
	if (!conv_slot_valid(slot)) {
		conv_leave();
		return -EINVAL;
	}
	/* Temporary, backup, main: an interruption leaves the whole conversation or nothing. */
	conv_slot_path(path, slot, "tmp");
	err = conv_ignore_enoent(agent_fs_unlink(path));
	if (err == 0) {
		conv_slot_path(path, slot, "bak");
		err = conv_ignore_enoent(agent_fs_unlink(path));
	}
	if (err == 0) {
		conv_slot_path(path, slot, "bin");
		err = agent_fs_unlink(path);
	}
	if (err == 0 || err == -ENOENT) {
		conv_state.damaged_mask &= ~(1u << (slot - 1u));
	}
	conv_leave();
	return err;
}
