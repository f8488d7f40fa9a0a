/*
 * The conversation store (conv_store.h, docs/conversation-format.md).
 *
 * Files are never held in RAM: a commit copies the old records into the temporary file
 * through one I/O block, checking each record's CRC and the old file's checksum as it
 * goes, and a read delivers records in pieces of that block. The only other buffers are
 * a few header-sized arrays on the stack.
 */
#include "conv_store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_config.h"
#include "agent_port.h"

#define CONV_SUBDIR	  "/.agent"
#define CONV_DIR	  "/.agent/conversations"
#define CONV_PATH_BYTES	  64u
#define CONV_FLASH_ROOT	  "/lfs"
#define CONV_SD_ROOT	  "/SD:"

_Static_assert(CONV_SLOTS_MAX <= CONV_SLOT_MAX, "more slots than the header's slot field holds");
_Static_assert(CONV_MODEL_MAX <= CONV_PAYLOAD_MAX, "a model name must fit one record");
_Static_assert(CONFIG_AGENT_CONV_FLASH_FILE_MAX >= CONV_FILE_MIN_BYTES &&
		       CONFIG_AGENT_CONV_SD_FILE_MAX >= CONV_FILE_MIN_BYTES,
	       "a conversation file bound below the smallest file");

struct store_state {
	bool ready;
	enum conv_medium medium;
	const char *root;
	uint8_t slots;
	uint32_t file_max;
	uint32_t next_seq;
	uint32_t damaged_mask; /* bit (slot - 1): damaged without a valid backup */
	uint8_t recovered;
	char dir[32];
};

static struct store_state store;
static struct agent_mutex *store_lock;
static struct agent_pool *io_pool;
static uint8_t io_buf[CONV_IO_BYTES] __attribute__((aligned(8)));

/* A file being walked record by record, with the running CRC of everything read. */
struct scan {
	struct agent_file *file;
	struct conv_header hdr;
	uint32_t crc;
	uint32_t pos;	/* bytes consumed from the start of the file */
	uint32_t index; /* records consumed */
	uint32_t users;
	uint32_t rec_crc; /* CRC of the last record read */
	uint8_t *buf;	  /* the I/O block */
};

/* ---- small helpers ------------------------------------------------------------------------ */

static void slot_path(char *out, uint8_t slot, const char *ext)
{
	snprintf(out, CONV_PATH_BYTES, "%s/conv%u.%s", store.dir, (unsigned int)slot, ext);
}

static bool slot_valid(uint8_t slot)
{
	return store.ready && slot >= 1u && slot <= store.slots;
}

static int enter(void)
{
	if (store_lock == NULL) {
		return -ENODEV;
	}
	agent_mutex_lock(store_lock);
	if (!store.ready) {
		agent_mutex_unlock(store_lock);
		return -ENODEV;
	}
	return 0;
}

static void leave(void)
{
	agent_mutex_unlock(store_lock);
}

static uint8_t *io_take(void)
{
	return agent_pool_alloc(io_pool);
}

static void io_give(uint8_t *buf)
{
	if (buf != NULL) {
		(void)agent_pool_free(io_pool, buf);
	}
}

static int ignore_enoent(int err)
{
	return err == -ENOENT ? 0 : err;
}

/* Read exactly @p len bytes; the end of the file before them means a damaged file. */
static int read_exact(struct agent_file *file, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0u) {
		int n = agent_fs_read(file, p, len);

		if (n < 0) {
			return n;
		}
		if (n == 0) {
			return -EBADMSG;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_all(struct agent_file *file, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0u) {
		int n = agent_fs_write(file, p, len);

		if (n < 0) {
			return n;
		}
		if (n == 0) {
			return -ENOSPC;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int64_t wall_now(void)
{
	int64_t now = 0;

	return agent_wall_time_s(&now) == 0 ? now : 0;
}

/* ---- scanning ----------------------------------------------------------------------------- */

/* Open @p path and check its header against @p slot. */
static int scan_open(struct scan *s, const char *path, uint8_t slot, uint8_t *buf)
{
	uint8_t raw[CONV_HEADER_BYTES];
	int err;

	memset(s, 0, sizeof(*s));
	s->buf = buf;
	err = agent_fs_open(&s->file, path, AGENT_FS_O_READ);
	if (err != 0) {
		s->file = NULL;
		return err;
	}
	err = read_exact(s->file, raw, sizeof(raw));
	if (err == 0) {
		err = conv_header_decode(raw, &s->hdr);
	}
	if (err == 0 && s->hdr.slot != slot) {
		err = -EBADMSG;
	}
	if (err != 0) {
		(void)agent_fs_close(s->file);
		s->file = NULL;
		return err;
	}
	s->crc = conv_crc32(0, raw, sizeof(raw));
	s->pos = CONV_HEADER_BYTES;
	return 0;
}

static void scan_close(struct scan *s)
{
	if (s->file != NULL) {
		(void)agent_fs_close(s->file);
		s->file = NULL;
	}
}

/* Where the records end and the trailer starts. */
static uint32_t scan_records_end(const struct scan *s)
{
	return s->hdr.file_bytes - CONV_TRAILER_BYTES;
}

/*
 * Read the next record's head; checks that the record fits before the trailer and that the
 * meta records come first. On success *type and *len describe it and the payload is next.
 */
static int scan_head(struct scan *s, uint8_t head[CONV_RECORD_HEAD_BYTES], uint8_t *type,
		     uint16_t *len)
{
	int err;

	if (s->index >= s->hdr.records) {
		return -EBADMSG;
	}
	err = read_exact(s->file, head, CONV_RECORD_HEAD_BYTES);
	if (err == 0) {
		err = conv_record_head_decode(head, type, len);
	}
	if (err != 0) {
		return err;
	}
	if ((uint64_t)s->pos + CONV_RECORD_OVERHEAD + *len > scan_records_end(s)) {
		return -EBADMSG;
	}
	/* Records 0..2 are provider, model and title; none of those types appear later. */
	if (s->index < CONV_META_RECORDS) {
		if (*type != CONV_REC_PROVIDER + s->index) {
			return -EBADMSG;
		}
	} else if (*type == CONV_REC_PROVIDER || *type == CONV_REC_MODEL ||
		   *type == CONV_REC_TITLE) {
		return -EBADMSG;
	}
	return 0;
}

/* Account for a record whose head, payload and CRC were read and checked. */
static void scan_done(struct scan *s, uint8_t type, uint16_t len)
{
	s->pos += CONV_RECORD_OVERHEAD + len;
	s->index++;
	if (type == CONV_REC_USER) {
		s->users++;
	}
}

/* The commit's copy: where the bytes of the old records go, and the new file's CRC. */
struct copy_sink {
	struct agent_file *file;
	uint32_t crc;
};

static int sink_put(struct copy_sink *sink, const void *data, size_t len)
{
	if (sink == NULL) {
		return 0;
	}
	sink->crc = conv_crc32(sink->crc, data, len);
	return write_all(sink->file, data, len);
}

/*
 * Read the payload and CRC of the current record through the I/O block, checking the CRC;
 * each piece is also written to @p sink when not NULL.
 */
static int scan_payload(struct scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
			uint16_t len, struct copy_sink *sink)
{
	uint32_t rec_crc = conv_crc32(0, head, CONV_RECORD_HEAD_BYTES);
	uint8_t crc_raw[CONV_RECORD_CRC_BYTES];
	size_t left = len;
	int err;

	s->crc = conv_crc32(s->crc, head, CONV_RECORD_HEAD_BYTES);
	err = sink_put(sink, head, CONV_RECORD_HEAD_BYTES);
	while (err == 0 && left > 0u) {
		size_t n = left < CONV_IO_BYTES ? left : CONV_IO_BYTES;

		err = read_exact(s->file, s->buf, n);
		if (err != 0) {
			return err;
		}
		rec_crc = conv_crc32(rec_crc, s->buf, n);
		s->crc = conv_crc32(s->crc, s->buf, n);
		err = sink_put(sink, s->buf, n);
		left -= n;
	}
	if (err == 0) {
		err = read_exact(s->file, crc_raw, sizeof(crc_raw));
	}
	if (err != 0) {
		return err;
	}
	if (conv_get_le32(crc_raw) != rec_crc) {
		return -EBADMSG;
	}
	s->rec_crc = rec_crc;
	s->crc = conv_crc32(s->crc, crc_raw, sizeof(crc_raw));
	return sink_put(sink, crc_raw, sizeof(crc_raw));
}

/* After the last record: counts, trailer, and nothing after it. */
static int scan_finish(struct scan *s)
{
	uint8_t trailer[CONV_TRAILER_BYTES];
	uint8_t extra;
	int err;

	if (s->index != s->hdr.records || s->users != s->hdr.turns ||
	    s->pos != scan_records_end(s)) {
		return -EBADMSG;
	}
	err = read_exact(s->file, trailer, sizeof(trailer));
	if (err != 0) {
		return err;
	}
	err = conv_trailer_check(trailer, s->hdr.file_bytes, conv_crc32(s->crc, trailer, 8));
	if (err != 0) {
		return err;
	}
	err = agent_fs_read(s->file, &extra, 1);
	if (err < 0) {
		return err;
	}
	return err == 0 ? 0 : -EBADMSG;
}

/* Check a whole file: 0 valid, -EBADMSG damaged, -ENOENT missing, another fs error. */
static int check_file(const char *path, uint8_t slot, uint8_t *buf, struct conv_header *hdr)
{
	struct scan s;
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	uint8_t type;
	uint16_t len;
	int err;

	err = scan_open(&s, path, slot, buf);
	if (err != 0) {
		return err;
	}
	while (err == 0 && s.index < s.hdr.records) {
		err = scan_head(&s, head, &type, &len);
		if (err == 0) {
			err = scan_payload(&s, head, len, NULL);
		}
		if (err == 0) {
			scan_done(&s, type, len);
		}
	}
	if (err == 0) {
		err = scan_finish(&s);
	}
	if (err == 0 && hdr != NULL) {
		*hdr = s.hdr;
	}
	scan_close(&s);
	return err;
}

/* Read a meta record (the next one) into a string of at most @p max bytes. */
static int scan_meta(struct scan *s, char *out, size_t max)
{
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	uint8_t type;
	uint16_t len;
	int err;

	err = scan_head(s, head, &type, &len);
	if (err != 0) {
		return err;
	}
	if (len > max || len > CONV_IO_BYTES) {
		return -EBADMSG;
	}
	err = scan_payload(s, head, len, NULL);
	if (err != 0) {
		return err;
	}
	memcpy(out, s->buf, len);
	out[len] = '\0';
	scan_done(s, type, len);
	return 0;
}

/* ---- init and recovery -------------------------------------------------------------------- */

static void seq_seen(const struct conv_header *hdr)
{
	if (hdr->sequence >= store.next_seq) {
		store.next_seq = hdr->sequence == UINT32_MAX ? UINT32_MAX : hdr->sequence + 1u;
	}
}

/* Recovery of one slot (docs/conversation-format.md "Recovery at boot"). */
static int recover_slot(uint8_t slot, uint8_t *buf)
{
	char main_path[CONV_PATH_BYTES];
	char bak_path[CONV_PATH_BYTES];
	char tmp_path[CONV_PATH_BYTES];
	struct conv_header hdr;
	uint32_t main_id = 0;
	int main_st;
	int bak_st;
	int err;

	slot_path(main_path, slot, "bin");
	slot_path(bak_path, slot, "bak");
	slot_path(tmp_path, slot, "tmp");

	err = ignore_enoent(agent_fs_unlink(tmp_path));
	if (err != 0) {
		return err;
	}
	main_st = check_file(main_path, slot, buf, &hdr);
	if (main_st == 0) {
		seq_seen(&hdr);
		main_id = hdr.conv_id;
	}
	bak_st = check_file(bak_path, slot, buf, &hdr);
	if (bak_st == 0) {
		seq_seen(&hdr);
	}
	/* An I/O error is not a verdict on the files: touch nothing. */
	if ((main_st != 0 && main_st != -ENOENT && main_st != -EBADMSG) ||
	    (bak_st != 0 && bak_st != -ENOENT && bak_st != -EBADMSG)) {
		return main_st != 0 && main_st != -ENOENT && main_st != -EBADMSG ? main_st
										   : bak_st;
	}
	if (main_st == 0) {
		/* A damaged backup, or one of an evicted conversation, is of no use. */
		if (bak_st == -EBADMSG || (bak_st == 0 && hdr.conv_id != main_id)) {
			return agent_fs_unlink(bak_path);
		}
		return 0;
	}
	if (bak_st == 0) {
		if (main_st == -EBADMSG && store.medium == CONV_MEDIUM_SD) {
			err = agent_fs_unlink(main_path);
			if (err != 0) {
				return err;
			}
		}
		err = agent_fs_rename(bak_path, main_path);
		if (err == 0) {
			store.recovered++;
		}
		return err;
	}
	if (bak_st == -EBADMSG) {
		err = agent_fs_unlink(bak_path);
		if (err != 0) {
			return err;
		}
	}
	if (main_st == -EBADMSG) {
		store.damaged_mask |= 1u << (slot - 1u);
	}
	return 0;
}

static int make_dirs(void)
{
	char path[CONV_PATH_BYTES];
	int err;

	snprintf(path, sizeof(path), "%s%s", store.root, CONV_SUBDIR);
	err = agent_fs_mkdir(path);
	if (err != 0 && err != -EEXIST) {
		return err;
	}
	err = agent_fs_mkdir(store.dir);
	return err == -EEXIST ? 0 : err;
}

int conv_store_init(void)
{
	struct agent_statvfs st;
	uint8_t *buf;
	int first_err = 0;
	int err;

	if (store_lock == NULL) {
		err = agent_mutex_init(&store_lock);
		if (err != 0) {
			return err;
		}
	}
	if (io_pool == NULL) {
		err = agent_pool_init(&io_pool, "conv", io_buf, CONV_IO_BYTES, 1,
				      AGENT_MEM_INTERNAL);
		if (err != 0) {
			return err;
		}
	}
	agent_mutex_lock(store_lock);
	memset(&store, 0, sizeof(store));
	if (agent_fs_statvfs(CONV_SD_ROOT, &st) == 0) {
		store.medium = CONV_MEDIUM_SD;
		store.root = CONV_SD_ROOT;
		store.slots = CONFIG_AGENT_CONV_SD_SLOTS;
		store.file_max = CONFIG_AGENT_CONV_SD_FILE_MAX;
	} else {
		store.medium = CONV_MEDIUM_FLASH;
		store.root = CONV_FLASH_ROOT;
		store.slots = CONFIG_AGENT_CONV_FLASH_SLOTS;
		store.file_max = CONFIG_AGENT_CONV_FLASH_FILE_MAX;
	}
	snprintf(store.dir, sizeof(store.dir), "%s%s", store.root, CONV_DIR);
	store.next_seq = 1;
	err = make_dirs();
	if (err != 0) {
		agent_mutex_unlock(store_lock);
		return err;
	}
	buf = io_take();
	if (buf == NULL) {
		agent_mutex_unlock(store_lock);
		return -ENOMEM;
	}
	store.ready = true;
	for (uint8_t slot = 1; slot <= store.slots; slot++) {
		err = recover_slot(slot, buf);
		if (err != 0 && first_err == 0) {
			first_err = err;
		}
	}
	io_give(buf);
	agent_mutex_unlock(store_lock);
	return first_err;
}

int conv_store_info_get(struct conv_store_info *info)
{
	int err = enter();

	if (err != 0) {
		return err;
	}
	memset(info, 0, sizeof(*info));
	info->medium = store.medium;
	info->dir = store.dir;
	info->slots = store.slots;
	info->file_max_bytes = store.file_max;
	info->recovered = store.recovered;
	for (uint8_t slot = 1; slot <= store.slots; slot++) {
		if ((store.damaged_mask & (1u << (slot - 1u))) != 0u) {
			info->damaged++;
		}
	}
	leave();
	return 0;
}

/* ---- listing ------------------------------------------------------------------------------ */

static bool slot_damaged(uint8_t slot)
{
	return (store.damaged_mask & (1u << (slot - 1u))) != 0u;
}

/* Header and meta records of @p slot; lock held. */
static int summary_locked(uint8_t slot, struct conv_summary *out, uint8_t *buf)
{
	char path[CONV_PATH_BYTES];
	struct agent_dirent ent;
	struct scan s;
	int err;

	memset(out, 0, sizeof(*out));
	out->slot = slot;
	slot_path(path, slot, "bin");
	err = agent_fs_stat(path, &ent);
	if (err != 0) {
		return err;
	}
	out->bytes = ent.size;
	if (slot_damaged(slot)) {
		out->damaged = true;
		return -EBADMSG;
	}
	err = scan_open(&s, path, slot, buf);
	if (err == 0) {
		err = scan_meta(&s, out->provider, CONV_PROVIDER_MAX);
	}
	if (err == 0) {
		err = scan_meta(&s, out->model, CONV_MODEL_MAX);
	}
	if (err == 0) {
		err = scan_meta(&s, out->title, CONV_TITLE_MAX);
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
	scan_close(&s);
	if (err == -EBADMSG) {
		out->damaged = true;
	}
	return err;
}

int conv_store_summary(uint8_t slot, struct conv_summary *out)
{
	uint8_t *buf;
	int err = enter();

	if (err != 0) {
		return err;
	}
	if (!slot_valid(slot) || out == NULL) {
		leave();
		return -EINVAL;
	}
	buf = io_take();
	err = buf == NULL ? -ENOMEM : summary_locked(slot, out, buf);
	io_give(buf);
	leave();
	return err;
}

int conv_store_list(conv_list_fn fn, void *user_data)
{
	struct conv_summary summary;
	uint8_t *buf;
	int count = 0;
	int err = enter();

	if (err != 0) {
		return err;
	}
	buf = io_take();
	if (buf == NULL) {
		leave();
		return -ENOMEM;
	}
	for (uint8_t slot = 1; slot <= store.slots; slot++) {
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
	io_give(buf);
	leave();
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

	for (uint8_t slot = 1; slot <= store.slots; slot++) {
		struct scan s;
		uint32_t seq = 0;
		int err;

		slot_path(path, slot, "bin");
		err = slot_damaged(slot) ? -EBADMSG : scan_open(&s, path, slot, buf);
		if (err == -ENOENT) {
			return slot;
		}
		if (err == 0) {
			seq = s.hdr.sequence;
			scan_close(&s);
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
	err = enter();
	if (err != 0) {
		return err;
	}
	buf = io_take();
	slot = buf == NULL ? -ENOMEM : choose_slot(buf);
	io_give(buf);
	leave();
	if (slot < 0) {
		return slot;
	}
	memset(h, 0, sizeof(*h));
	h->slot = (uint8_t)slot;
	h->pending = true;
	h->protocol = meta->protocol;
	h->created_s = wall_now();
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
	static struct conv_summary open_summary; /* under the lock; keeps the stack small */
	uint8_t *buf;
	int err;

	if (h == NULL) {
		return -EINVAL;
	}
	err = enter();
	if (err != 0) {
		return err;
	}
	if (!slot_valid(slot)) {
		leave();
		return -EINVAL;
	}
	sum = &open_summary;
	buf = io_take();
	err = buf == NULL ? -ENOMEM : summary_locked(slot, sum, buf);
	io_give(buf);
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
	leave();
	return err;
}

/* ---- commit ------------------------------------------------------------------------------- */

/* A record of the commit: its type and payload. */
struct new_record {
	uint8_t type;
	const void *data;
	size_t len;
};

static int write_record(struct copy_sink *out, const struct new_record *rec)
{
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	uint8_t crc_raw[CONV_RECORD_CRC_BYTES];
	int err;

	conv_record_head_encode(rec->type, (uint16_t)rec->len, head);
	conv_put_le32(crc_raw, conv_crc32(conv_crc32(0, head, sizeof(head)), rec->data, rec->len));
	err = sink_put(out, head, sizeof(head));
	if (err == 0 && rec->len > 0u) {
		err = sink_put(out, rec->data, rec->len);
	}
	if (err == 0) {
		err = sink_put(out, crc_raw, sizeof(crc_raw));
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

static int write_turn(struct copy_sink *out, const struct commit_plan *plan)
{
	const struct conv_turn *t = plan->turn;
	struct new_record rec;
	int err;

	rec = (struct new_record){CONV_REC_USER, t->user, t->user_len};
	err = write_record(out, &rec);
	for (size_t i = 0; err == 0 && i < t->tool_count; i++) {
		rec = (struct new_record){CONV_REC_TOOL, t->tools[i], strlen(t->tools[i])};
		err = write_record(out, &rec);
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

static int write_meta(struct copy_sink *out, const struct conv_handle *h)
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
static int copy_old(struct scan *old, struct copy_sink *out)
{
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	uint8_t type;
	uint16_t len;
	int err = 0;

	while (err == 0 && old->index < old->hdr.records) {
		err = scan_head(old, head, &type, &len);
		if (err == 0) {
			err = scan_payload(old, head, len, out);
		}
		if (err == 0) {
			scan_done(old, type, len);
		}
	}
	return err == 0 ? scan_finish(old) : err;
}

/* Write the temporary file: header, old records or meta records, the turn, trailer. */
static int write_temp(const char *tmp_path, const struct conv_header *hdr, struct scan *old,
		      const struct commit_plan *plan)
{
	uint8_t raw[CONV_HEADER_BYTES];
	uint8_t trailer[CONV_TRAILER_BYTES];
	struct copy_sink out = {0};
	int err;

	err = agent_fs_open(&out.file, tmp_path,
			    AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC);
	if (err != 0) {
		return err;
	}
	conv_header_encode(hdr, raw);
	err = sink_put(&out, raw, sizeof(raw));
	if (err == 0) {
		err = old != NULL ? copy_old(old, &out) : write_meta(&out, plan->h);
	}
	if (err == 0) {
		err = write_turn(&out, plan);
	}
	if (err == 0) {
		conv_trailer_encode(hdr->file_bytes, 0, trailer);
		conv_put_le32(trailer + 8, conv_crc32(out.crc, trailer, 8));
		err = write_all(out.file, trailer, sizeof(trailer));
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

	if (store.medium == CONV_MEDIUM_SD) {
		err = ignore_enoent(agent_fs_unlink(bak_path));
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
	struct scan old;
	bool had_main;
	uint64_t size;
	int err;

	slot_path(main_path, h->slot, "bin");
	slot_path(bak_path, h->slot, "bak");
	slot_path(tmp_path, h->slot, "tmp");
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
		if (slot_damaged(h->slot)) {
			*why = "the conversation file is damaged";
			return -EBADMSG;
		}
		err = scan_open(&old, main_path, h->slot, buf);
		if (err == -ENOENT) {
			*why = "the conversation was deleted";
			return err;
		}
		if (err != 0) {
			return err;
		}
		if (old.hdr.conv_id != h->conv_id) {
			scan_close(&old);
			*why = "the slot now holds another conversation";
			return -ESTALE;
		}
		had_main = true;
		hdr = old.hdr;
		size = (uint64_t)old.hdr.file_bytes + plan->bytes;
	}
	if (size > store.file_max) {
		scan_close(&old);
		snprintf(limit_why, sizeof(limit_why),
			 "conversation full: start a new one (limit %u bytes)",
			 (unsigned int)store.file_max);
		*why = limit_why;
		return -EFBIG;
	}
	if (store.next_seq == UINT32_MAX) {
		scan_close(&old);
		*why = "conversation sequence numbers exhausted";
		return -EOVERFLOW;
	}
	hdr.slot = h->slot;
	hdr.sequence = store.next_seq++;
	if (h->pending) {
		hdr.conv_id = hdr.sequence;
	}
	hdr.updated_s = wall_now();
	hdr.turns++;
	hdr.records += plan->records;
	hdr.file_bytes = (uint32_t)size;

	err = ignore_enoent(agent_fs_unlink(tmp_path));
	if (err == 0) {
		err = write_temp(tmp_path, &hdr, h->pending ? NULL : &old, plan);
	}
	scan_close(&old);
	if (err == 0) {
		err = check_file(tmp_path, h->slot, buf, NULL);
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
	store.damaged_mask &= ~(1u << (h->slot - 1u));
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
	err = enter();
	if (err != 0) {
		return err;
	}
	if (!slot_valid(h->slot)) {
		leave();
		*why = "no conversation open";
		return -EINVAL;
	}
	err = plan_turn(&plan, why);
	if (err == 0) {
		buf = io_take();
		err = buf == NULL ? -ENOMEM : commit_locked(h, &plan, buf, why, &hdr);
		io_give(buf);
	}
	if (err == 0) {
		h->pending = false;
		h->conv_id = hdr.conv_id;
		h->turns = hdr.turns;
		h->bytes = hdr.file_bytes;
	}
	leave();
	return err;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Deliver the current record's payload in pieces once its CRC is known to be good. */
static int deliver_record(struct scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
			  uint8_t type, uint16_t len, conv_read_fn fn, void *user_data)
{
	struct conv_chunk chunk = {
		.type = type,
		.record = s->index,
		.total_len = len,
		.data = s->buf,
	};
	uint32_t payload_pos = s->pos + CONV_RECORD_HEAD_BYTES;
	uint32_t crc_again;
	int err;

	err = scan_payload(s, head, len, NULL);
	if (err != 0) {
		return err;
	}
	if (len <= CONV_IO_BYTES) {
		/* The payload is still in the block: one read was enough. */
		chunk.len = len;
		chunk.last = true;
		return fn(&chunk, user_data);
	}
	/*
	 * Larger: read it again and hand it out piece by piece. A medium that returns other
	 * bytes the second time is caught before the last piece (-EIO).
	 */
	err = agent_fs_seek(s->file, (int32_t)payload_pos, AGENT_FS_SEEK_SET);
	if (err != 0) {
		return err;
	}
	crc_again = conv_crc32(0, head, CONV_RECORD_HEAD_BYTES);
	for (uint32_t off = 0; off < len; off += (uint32_t)chunk.len) {
		chunk.len = len - off < CONV_IO_BYTES ? len - off : CONV_IO_BYTES;
		err = read_exact(s->file, s->buf, chunk.len);
		if (err != 0) {
			return err;
		}
		crc_again = conv_crc32(crc_again, s->buf, chunk.len);
		chunk.offset = off;
		chunk.last = off + chunk.len == len;
		if (chunk.last && crc_again != s->rec_crc) {
			return -EIO;
		}
		err = fn(&chunk, user_data);
		if (err != 0) {
			return err;
		}
	}
	/* Back to where the scan stands: after the record's CRC. */
	return agent_fs_seek(s->file, (int32_t)(payload_pos + len + CONV_RECORD_CRC_BYTES),
			     AGENT_FS_SEEK_SET);
}

/* Walk every record of @p slot, handing each to @p visit; lock held. */
typedef int (*record_visit_fn)(struct scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
			       uint8_t type, uint16_t len, void *ctx);

static int walk_slot(uint8_t slot, uint8_t *buf, record_visit_fn visit, void *ctx)
{
	char path[CONV_PATH_BYTES];
	uint8_t head[CONV_RECORD_HEAD_BYTES];
	struct scan s;
	uint8_t type;
	uint16_t len;
	int err;

	slot_path(path, slot, "bin");
	err = scan_open(&s, path, slot, buf);
	while (err == 0 && s.index < s.hdr.records) {
		err = scan_head(&s, head, &type, &len);
		if (err == 0) {
			err = visit(&s, head, type, len, ctx);
		}
		if (err == 0) {
			scan_done(&s, type, len);
		}
	}
	if (err == 0) {
		err = scan_finish(&s);
	}
	scan_close(&s);
	return err;
}

struct read_ctx {
	conv_read_fn fn;
	void *user_data;
};

static int read_visit(struct scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES], uint8_t type,
		      uint16_t len, void *ctx)
{
	struct read_ctx *rc = ctx;

	return deliver_record(s, head, type, len, rc->fn, rc->user_data);
}

/* Common frame of the reading calls: lock, slot check, I/O block. */
static int with_slot(uint8_t slot, record_visit_fn visit, void *ctx)
{
	uint8_t *buf;
	int err = enter();

	if (err != 0) {
		return err;
	}
	if (!slot_valid(slot)) {
		leave();
		return -EINVAL;
	}
	buf = io_take();
	err = buf == NULL ? -ENOMEM : walk_slot(slot, buf, visit, ctx);
	io_give(buf);
	leave();
	return err;
}

int conv_store_read(uint8_t slot, conv_read_fn fn, void *user_data)
{
	struct read_ctx ctx = {fn, user_data};

	if (fn == NULL) {
		return -EINVAL;
	}
	return with_slot(slot, read_visit, &ctx);
}

struct response_id_ctx {
	char *buf;
	size_t cap;
	int len; /* -ENOENT until one is found */
};

static int response_id_visit(struct scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES],
			     uint8_t type, uint16_t len, void *ctx)
{
	struct response_id_ctx *rc = ctx;
	int err = scan_payload(s, head, len, NULL);

	if (err != 0 || type != CONV_REC_RESPONSE_ID) {
		return err;
	}
	/* The writer never stores a longer id; a reader cannot use a cut one. */
	if (len > CONV_RESPONSE_ID_MAX) {
		return -EBADMSG;
	}
	if ((size_t)len + 1u > rc->cap) {
		return -ENOSPC;
	}
	memcpy(rc->buf, s->buf, len);
	rc->buf[len] = '\0';
	rc->len = len;
	return 0;
}

int conv_store_last_response_id(uint8_t slot, char *buf, size_t len)
{
	struct response_id_ctx ctx = {buf, len, -ENOENT};
	int err;

	if (buf == NULL || len == 0u) {
		return -EINVAL;
	}
	buf[0] = '\0';
	err = with_slot(slot, response_id_visit, &ctx);
	if (err != 0) {
		buf[0] = '\0';
		return err;
	}
	return ctx.len;
}

/* ---- Chat Completions history ------------------------------------------------------------- */

/* {"role":"","content":""} around each message, a comma between messages. */
#define HISTORY_OBJECT_BYTES 24u

struct history_ctx {
	struct conv_history *out;
	uint32_t head; /* ring start in out->msgs */
	uint32_t count;
	uint32_t raw;
	uint32_t ser;
	uint32_t ser_len[CONV_HISTORY_MESSAGES_MAX];
	bool dropped;
};

static uint32_t history_ser_bytes(uint8_t role, uint32_t escaped)
{
	return HISTORY_OBJECT_BYTES + (role == CONV_REC_USER ? 4u : 9u) + escaped;
}

/* The serialized size of the window: its objects and the commas between them. */
static uint32_t history_total_ser(const struct history_ctx *hc)
{
	return hc->count == 0u ? 0u : hc->ser + hc->count - 1u;
}

static void history_pop(struct history_ctx *hc)
{
	struct conv_history_msg *m = &hc->out->msgs[hc->head];

	hc->raw -= m->len;
	hc->ser -= hc->ser_len[hc->head];
	hc->head = (hc->head + 1u) % CONV_HISTORY_MESSAGES_MAX;
	hc->count--;
	hc->dropped = true;
}

static int history_visit(struct scan *s, const uint8_t head[CONV_RECORD_HEAD_BYTES], uint8_t type,
			 uint16_t len, void *ctx)
{
	struct history_ctx *hc = ctx;
	uint32_t record_pos = s->pos;
	uint32_t escaped = 0;
	uint32_t slot_i;
	size_t left = len;
	int err;

	if (type != CONV_REC_USER && type != CONV_REC_ASSISTANT) {
		return scan_payload(s, head, len, NULL);
	}
	err = scan_payload(s, head, len, NULL);
	if (err != 0) {
		return err;
	}
	if (len <= CONV_IO_BYTES) {
		escaped = (uint32_t)conv_json_escaped_len((const char *)s->buf, len);
	} else {
		/* Checked; now size its escapes piece by piece. */
		err = agent_fs_seek(s->file, (int32_t)(record_pos + CONV_RECORD_HEAD_BYTES),
				    AGENT_FS_SEEK_SET);
		while (err == 0 && left > 0u) {
			size_t n = left < CONV_IO_BYTES ? left : CONV_IO_BYTES;
			size_t used;

			err = read_exact(s->file, s->buf, n);
			if (err != 0) {
				break;
			}
			escaped += (uint32_t)conv_json_escaped_part((const char *)s->buf, n,
								    n == left, &used);
			left -= used;
			/* A cut sequence (at most 3 bytes) is read again with the next part. */
			if (used < n) {
				err = agent_fs_seek(s->file, -(int32_t)(n - used),
						    AGENT_FS_SEEK_CUR);
			}
		}
		if (err == 0) {
			err = agent_fs_seek(s->file,
					    (int32_t)(record_pos + CONV_RECORD_OVERHEAD + len),
					    AGENT_FS_SEEK_SET);
		}
		if (err != 0) {
			return err;
		}
	}
	slot_i = (hc->head + hc->count) % CONV_HISTORY_MESSAGES_MAX;
	if (hc->count == CONV_HISTORY_MESSAGES_MAX) {
		history_pop(hc);
		slot_i = (hc->head + hc->count) % CONV_HISTORY_MESSAGES_MAX;
	}
	hc->out->msgs[slot_i] = (struct conv_history_msg){
		.role = type,
		.len = len,
		.file_pos = record_pos,
	};
	hc->ser_len[slot_i] = history_ser_bytes(type, escaped);
	hc->count++;
	hc->raw += len;
	hc->ser += hc->ser_len[slot_i];
	while (hc->count > 0u && (hc->raw > CONFIG_AGENT_CHAT_HISTORY_RAW_MAX ||
				  history_total_ser(hc) > CONFIG_AGENT_CHAT_HISTORY_FRAGMENT_SIZE)) {
		history_pop(hc);
	}
	return 0;
}

/* Reverse the ring entries [from, to) of @p hc, with their serialized sizes. */
static void history_reverse(struct history_ctx *hc, uint32_t from, uint32_t to)
{
	struct conv_history_msg *msgs = hc->out->msgs;

	while (from + 1u < to) {
		struct conv_history_msg m = msgs[from];
		uint32_t ser = hc->ser_len[from];

		to--;
		msgs[from] = msgs[to];
		hc->ser_len[from] = hc->ser_len[to];
		msgs[to] = m;
		hc->ser_len[to] = ser;
		from++;
	}
}

/*
 * Rotate the ring in place so that the window starts at msgs[0] and runs in order (three
 * reversals): the fill below then reads and writes each entry at the same index.
 */
static void history_linearize(struct history_ctx *hc)
{
	if (hc->head == 0u) {
		return;
	}
	history_reverse(hc, 0, hc->head);
	history_reverse(hc, hc->head, CONV_HISTORY_MESSAGES_MAX);
	history_reverse(hc, 0, CONV_HISTORY_MESSAGES_MAX);
	hc->head = 0;
}

/*
 * Second pass, over the linearized window: copy its texts into out->raw, checking each
 * record again. The first pass kept the window within the raw bound; a text that would not
 * fit the buffer all the same (the medium changed under the reader) is an error, never an
 * overflow.
 */
static int history_fill(struct scan *s, struct history_ctx *hc)
{
	struct conv_history *out = hc->out;
	uint32_t raw_off = 0;

	for (uint32_t i = 0; i < hc->count; i++) {
		struct conv_history_msg *m = &out->msgs[i];
		uint8_t head[CONV_RECORD_HEAD_BYTES];
		uint8_t crc_raw[CONV_RECORD_CRC_BYTES];
		uint32_t crc;
		uint8_t type;
		uint16_t len;
		int err;

		err = agent_fs_seek(s->file, (int32_t)m->file_pos, AGENT_FS_SEEK_SET);
		if (err == 0) {
			err = read_exact(s->file, head, sizeof(head));
		}
		if (err == 0) {
			err = conv_record_head_decode(head, &type, &len);
		}
		if (err == 0 && (type != m->role || len != m->len)) {
			err = -EIO; /* the medium changed under the reader */
		}
		if (err == 0 && (size_t)len > sizeof(out->raw) - raw_off) {
			err = -EIO;
		}
		if (err == 0) {
			err = read_exact(s->file, out->raw + raw_off, len);
		}
		if (err == 0) {
			err = read_exact(s->file, crc_raw, sizeof(crc_raw));
		}
		if (err != 0) {
			return err;
		}
		crc = conv_crc32(conv_crc32(0, head, sizeof(head)), out->raw + raw_off, len);
		if (crc != conv_get_le32(crc_raw)) {
			return -EIO;
		}
		m->offset = raw_off;
		raw_off += len;
	}
	return 0;
}

int conv_store_history(uint8_t slot, struct conv_history *out)
{
	static struct history_ctx hc; /* under the lock; keeps the stack small */
	char path[CONV_PATH_BYTES];
	struct scan s;
	uint8_t *buf;
	int err;

	if (out == NULL) {
		return -EINVAL;
	}
	out->count = 0;
	out->raw_bytes = 0;
	out->serialized_bytes = 0;
	out->truncated = false;
	err = enter();
	if (err != 0) {
		return err;
	}
	if (!slot_valid(slot)) {
		leave();
		return -EINVAL;
	}
	memset(&hc, 0, sizeof(hc));
	hc.out = out;
	buf = io_take();
	err = buf == NULL ? -ENOMEM : walk_slot(slot, buf, history_visit, &hc);
	/* The window starts with a user message. */
	while (err == 0 && hc.count > 0u && out->msgs[hc.head].role != CONV_REC_USER) {
		history_pop(&hc);
	}
	if (err == 0 && hc.count > 0u) {
		history_linearize(&hc);
		slot_path(path, slot, "bin");
		err = scan_open(&s, path, slot, buf);
		if (err == 0) {
			err = history_fill(&s, &hc);
			scan_close(&s);
		}
	}
	io_give(buf);
	leave();
	if (err != 0) {
		out->count = 0;
		return err;
	}
	out->count = hc.count;
	out->raw_bytes = hc.raw;
	out->serialized_bytes = history_total_ser(&hc);
	out->truncated = hc.dropped;
	return 0;
}

/* ---- export ------------------------------------------------------------------------------- */

int conv_store_export(uint8_t slot, uint32_t off, void *buf, size_t len, uint32_t *total)
{
	char path[CONV_PATH_BYTES];
	struct agent_dirent entry;
	struct agent_file *file;
	size_t done = 0;
	int err = enter();

	if (err != 0) {
		return err;
	}
	if (!slot_valid(slot)) {
		leave();
		return -EINVAL;
	}
	slot_path(path, slot, "bin");
	err = agent_fs_stat(path, &entry);
	if (err != 0) {
		leave();
		return err;
	}
	*total = entry.size;
	if (off > entry.size) {
		leave();
		return -ERANGE;
	}
	if (len > entry.size - off) {
		len = entry.size - off;
	}
	err = agent_fs_open(&file, path, AGENT_FS_O_READ);
	if (err == 0 && off > 0) {
		err = agent_fs_seek(file, (int32_t)off, AGENT_FS_SEEK_SET);
		if (err != 0) {
			(void)agent_fs_close(file);
		}
	}
	while (err == 0 && done < len) {
		int n = agent_fs_read(file, (uint8_t *)buf + done, len - done);

		if (n <= 0) {
			err = n < 0 ? n : -EIO; /* shorter than its size: changed under us */
			(void)agent_fs_close(file);
			break;
		}
		done += (size_t)n;
	}
	if (err == 0) {
		err = agent_fs_close(file);
	}
	leave();
	return err != 0 ? err : (int)done;
}

/* ---- delete ------------------------------------------------------------------------------- */

int conv_store_delete(uint8_t slot)
{
	char path[CONV_PATH_BYTES];
	int err = enter();

	if (err != 0) {
		return err;
	}
	if (!slot_valid(slot)) {
		leave();
		return -EINVAL;
	}
	/* Temporary, backup, main: an interruption leaves the whole conversation or nothing. */
	slot_path(path, slot, "tmp");
	err = ignore_enoent(agent_fs_unlink(path));
	if (err == 0) {
		slot_path(path, slot, "bak");
		err = ignore_enoent(agent_fs_unlink(path));
	}
	if (err == 0) {
		slot_path(path, slot, "bin");
		err = agent_fs_unlink(path);
	}
	if (err == 0 || err == -ENOENT) {
		store.damaged_mask &= ~(1u << (slot - 1u));
	}
	leave();
	return err;
}

size_t conv_store_peak_bytes(void)
{
	struct agent_pool_stats st;

	if (io_pool == NULL || agent_pool_stats_get(io_pool, &st) != 0) {
		return 0;
	}
	return (size_t)(st.blocks_total - st.blocks_free_min) * st.block_bytes;
}
