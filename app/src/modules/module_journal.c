/*
 * The module journal (module_journal.h; the format is docs/modules.md "The journal"): a
 * header, then IMPORT and REMOVE records, each checked by a CRC-32 over its bytes. Only the
 * port's file API is used; littlefs makes a synced append, a truncation and a rename
 * atomic, which is what the power-loss rules below rely on. Not thread-safe: the import
 * operation (module_import.c) serialises every caller.
 */
#include "module_journal.h"

#include <errno.h>
#include <string.h>

#include "agent_fs_io.h"
#include "agent_port.h"
#include "sha256.h"

#define JOURNAL_TMP_PATH MODULE_JOURNAL_PATH ".tmp"
#define JOURNAL_MOUNT	 "/lfs"

#define HEADER_BYTES   12u /* magic, version, header size, 2 reserved, CRC */
#define HEADER_VERSION 1u
#define HEAD_BYTES     44u /* a record's fixed part before its name */
#define CRC_BYTES      4u
#define SKIP_BYTES     64u /* the chunk an IMPORT's text is checked in when skipped */

/* A record's size: head, name, text, CRC. */
#define RECORD_BYTES(name_len, text_len) (HEAD_BYTES + (name_len) + (text_len) + CRC_BYTES)

/*
 * A compacted journal (every installed entry, whose texts share the arena) and the import
 * that needed the room must fit together, or an import could be refused for good.
 */
_Static_assert(CONFIG_AGENT_MODULE_JOURNAL_BYTES >=
		       HEADER_BYTES + CONFIG_AGENT_MODULE_SLOTS * RECORD_BYTES(MODULE_NAME_MAX, 0) +
			       CONFIG_AGENT_CATALOG_BYTES,
	       "CONFIG_AGENT_MODULE_JOURNAL_BYTES must hold a compacted catalog and one import");
_Static_assert(CONFIG_AGENT_MODULE_JOURNAL_BYTES <= INT32_MAX, "journal offsets are int32_t");

static const uint8_t header_magic[4] = {'A', 'M', 'J', '1'};

/*
 * The file may end in a record that was not checked (a replay failed before its end, or an
 * append failed and could not cut its bytes back): an append would follow it and be lost at
 * the next replay, so appends are refused until a replay or a compaction succeeds.
 */
static bool tail_unchecked;

/* ---- format ------------------------------------------------------------------------------- */

/* CRC-32/ISO-HDLC (zlib's crc32()): reflected 0xEDB88320, chained from 0. */
static uint32_t crc32_update(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	crc = ~crc;
	while (len-- > 0u) {
		crc ^= *p++;
		for (unsigned int k = 0; k < 8u; k++) {
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
		}
	}
	return ~crc;
}

static void put_le32(uint8_t *out, uint32_t v)
{
	out[0] = (uint8_t)v;
	out[1] = (uint8_t)(v >> 8);
	out[2] = (uint8_t)(v >> 16);
	out[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *in)
{
	return (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 |
	       (uint32_t)in[3] << 24;
}

static void header_encode(uint8_t out[HEADER_BYTES])
{
	memcpy(out, header_magic, sizeof(header_magic));
	out[4] = HEADER_VERSION;
	out[5] = HEADER_BYTES;
	out[6] = 0;
	out[7] = 0;
	put_le32(out + 8, crc32_update(0, out, 8));
}

static bool header_valid(const uint8_t in[HEADER_BYTES])
{
	uint8_t expect[HEADER_BYTES];

	header_encode(expect);
	return memcmp(in, expect, sizeof(expect)) == 0;
}

/* Bytes of @p name up to its NUL, at most MODULE_NAME_MAX + 1. */
static size_t name_length(const char *name)
{
	size_t len = 0;

	while (len <= MODULE_NAME_MAX && name[len] != '\0') {
		len++;
	}
	return len;
}

/* An IMPORT's lengths: within the manifest and arena bounds, 1 byte of text at least. */
static bool import_lengths_valid(uint32_t manifest_len, uint32_t body_len)
{
	uint64_t text = (uint64_t)manifest_len + body_len;

	return manifest_len <= CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN &&
	       body_len <= CONFIG_AGENT_CATALOG_BYTES && text >= 1u &&
	       text <= CONFIG_AGENT_CATALOG_BYTES;
}

/* The head of @p rec (type, kind, lengths, digest as given; a REMOVE's are zero). */
static void head_encode(const struct module_journal_record *rec, size_t name_len,
			uint8_t out[HEAD_BYTES])
{
	bool import = rec->type == MODULE_JOURNAL_IMPORT;

	memset(out, 0, HEAD_BYTES);
	out[0] = (uint8_t)rec->type;
	out[1] = import ? (uint8_t)rec->kind : 0u;
	out[2] = (uint8_t)name_len;
	if (import) {
		put_le32(out + 4, rec->manifest_len);
		put_le32(out + 8, rec->body_len);
		memcpy(out + 12, rec->digest, MODULE_DIGEST_LEN);
	}
}

/* Decode and range-check a head read from flash; -EBADMSG for any value out of range. */
static int head_decode(const uint8_t in[HEAD_BYTES], struct module_journal_record *rec,
		       size_t *name_len)
{
	static const uint8_t zero[MODULE_DIGEST_LEN];

	memset(rec, 0, sizeof(*rec));
	rec->manifest_len = get_le32(in + 4);
	rec->body_len = get_le32(in + 8);
	memcpy(rec->digest, in + 12, MODULE_DIGEST_LEN);
	*name_len = in[2];
	if (in[3] != 0u || *name_len == 0u || *name_len > MODULE_NAME_MAX) {
		return -EBADMSG;
	}
	if (in[0] == MODULE_JOURNAL_IMPORT) {
		rec->type = MODULE_JOURNAL_IMPORT;
		rec->kind = (enum module_kind)in[1];
		if (in[1] >= MODULE_KIND_COUNT ||
		    !import_lengths_valid(rec->manifest_len, rec->body_len)) {
			return -EBADMSG;
		}
		return 0;
	}
	if (in[0] == MODULE_JOURNAL_REMOVE) {
		rec->type = MODULE_JOURNAL_REMOVE;
		if (in[1] != 0u || rec->manifest_len != 0u || rec->body_len != 0u ||
		    memcmp(rec->digest, zero, sizeof(zero)) != 0) {
			return -EBADMSG;
		}
		return 0;
	}
	return -EBADMSG;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* A walk through the records of an open journal, from just after its header. */
struct walk {
	struct agent_file *file;
	const struct module_journal_replay_ops *ops; /* NULL: only check */
	void *user;
	struct module_journal_record rec; /* the record just read */
	bool name_read;			  /* rec.name holds the (valid) name read */
	uint32_t bytes;			  /* the record's size */
};

#define WALK_END 1 /* walk_one(): the file ends where a record would start */

/* The @p len bytes of an IMPORT's text into @p dst, or checked in chunks when NULL. */
static int read_text(struct walk *w, uint8_t *dst, uint32_t len, uint32_t *crc,
		     struct sha256 *sha)
{
	uint8_t chunk[SKIP_BYTES];
	uint32_t done = 0;

	while (done < len) {
		uint32_t want = len - done;
		uint8_t *to = dst != NULL ? dst + done : chunk;
		int n;

		if (dst == NULL && want > sizeof(chunk)) {
			want = sizeof(chunk);
		}
		n = agent_fs_read_exact(w->file, to, want);
		if (n < 0) {
			return n;
		}
		*crc = crc32_update(*crc, to, (size_t)n);
		sha256_update(sha, to, (size_t)n);
		done += (uint32_t)n;
		if ((uint32_t)n < want) {
			return -EBADMSG;
		}
	}
	return 0;
}

/* The record's CRC field: 0 when it matches @p crc, -EBADMSG when short or different. */
static int read_crc(struct walk *w, uint32_t crc)
{
	uint8_t raw[CRC_BYTES];
	int n = agent_fs_read_exact(w->file, raw, sizeof(raw));

	if (n < 0) {
		return n;
	}
	return (size_t)n == sizeof(raw) && get_le32(raw) == crc ? 0 : -EBADMSG;
}

/* An IMPORT's text and CRC, handed to the replay's callbacks (always begin, then end). */
static int walk_import(struct walk *w, uint32_t crc)
{
	uint32_t len = w->rec.manifest_len + w->rec.body_len;
	uint8_t digest[MODULE_DIGEST_LEN];
	struct sha256 sha;
	uint8_t *dst = NULL;
	int err;

	if (w->ops != NULL) {
		dst = w->ops->import_begin(w->user, &w->rec);
	}
	sha256_init(&sha);
	err = read_text(w, dst, len, &crc, &sha);
	if (err == 0) {
		err = read_crc(w, crc);
	}
	if (err == 0) {
		sha256_final(&sha, digest);
		if (memcmp(digest, w->rec.digest, sizeof(digest)) != 0) {
			err = -EBADMSG;
		}
	}
	if (w->ops != NULL) {
		w->ops->import_end(w->user, &w->rec, err == 0);
	}
	return err;
}

/*
 * Read the record at the file's position: 0 for a good one (applied through the callbacks),
 * WALK_END at the clean end of the file, -EBADMSG for a record cut short, out of range or
 * failing its CRC or digest, another negative errno when reading failed.
 */
static int walk_one(struct walk *w)
{
	uint8_t head[HEAD_BYTES];
	size_t name_len;
	uint32_t crc;
	int n;

	w->name_read = false;
	n = agent_fs_read_exact(w->file, head, sizeof(head));
	if (n <= 0) {
		return n == 0 ? WALK_END : n;
	}
	if ((size_t)n < sizeof(head) || head_decode(head, &w->rec, &name_len) != 0) {
		return -EBADMSG;
	}
	n = agent_fs_read_exact(w->file, w->rec.name, name_len);
	if (n < 0) {
		return n;
	}
	if ((size_t)n < name_len || !module_name_valid(w->rec.name, name_len)) {
		return -EBADMSG;
	}
	w->name_read = true;
	w->bytes = RECORD_BYTES((uint32_t)name_len, w->rec.manifest_len + w->rec.body_len);
	crc = crc32_update(crc32_update(0, head, sizeof(head)), w->rec.name, name_len);
	if (w->rec.type == MODULE_JOURNAL_IMPORT) {
		return walk_import(w, crc);
	}
	n = read_crc(w, crc);
	if (n == 0 && w->ops != NULL) {
		w->ops->remove(w->user, &w->rec);
	}
	return n;
}

/* What a walk of a whole file found. */
struct walk_result {
	uint32_t records;  /* good records */
	uint32_t good_end; /* the end of the last good record (0: no valid header) */
	bool damaged;	   /* the header, or the record at good_end, is damaged or cut short */
	bool name_read;
	char name[MODULE_NAME_MAX + 1]; /* the damaged record's name, when read */
};

/* Walk the open file @p file from its start: 0 (see @p out) or a read error. */
static int walk_file(struct agent_file *file, const struct module_journal_replay_ops *ops,
		     void *user, struct walk_result *out)
{
	uint8_t header[HEADER_BYTES];
	struct walk w = {.file = file, .ops = ops, .user = user};
	int n;

	memset(out, 0, sizeof(*out));
	n = agent_fs_read_exact(file, header, sizeof(header));
	if (n < 0) {
		return n;
	}
	if (n == 0) {
		return 0; /* an empty file: an empty journal */
	}
	if ((size_t)n < sizeof(header) || !header_valid(header)) {
		out->damaged = true;
		return 0;
	}
	out->good_end = HEADER_BYTES;
	for (;;) {
		n = walk_one(&w);
		if (n == WALK_END) {
			return 0;
		}
		if (n == -EBADMSG) {
			out->damaged = true;
			out->name_read = w.name_read;
			if (w.name_read) {
				memcpy(out->name, w.rec.name, sizeof(out->name));
			}
			return 0;
		}
		if (n != 0) {
			return n;
		}
		out->records++;
		out->good_end += w.bytes;
	}
}

static int ignore_enoent(int err)
{
	return err == -ENOENT ? 0 : err;
}

int module_journal_replay(const struct module_journal_replay_ops *ops, void *user,
			  struct module_journal_report *report)
{
	struct module_journal_report local;
	struct walk_result res;
	struct agent_file *file;
	int close_err;
	int err;

	if (report == NULL) {
		report = &local;
	}
	memset(report, 0, sizeof(*report));
	if (ops == NULL || ops->import_begin == NULL || ops->import_end == NULL ||
	    ops->remove == NULL) {
		return -EINVAL;
	}
	if (!agent_fs_mounted(JOURNAL_MOUNT)) {
		return -ENODEV;
	}
	/* A compaction cut before its rename: the journal itself is the old one, whole. */
	tail_unchecked = true;
	err = ignore_enoent(agent_fs_unlink(JOURNAL_TMP_PATH));
	if (err != 0) {
		return err;
	}
	err = agent_fs_open(&file, MODULE_JOURNAL_PATH, AGENT_FS_O_RDWR);
	if (err != 0) {
		if (err == -ENOENT) {
			tail_unchecked = false;
			return 0;
		}
		return err;
	}
	err = walk_file(file, ops, user, &res);
	report->records = res.records;
	report->bytes = res.good_end;
	if (err == 0 && res.damaged) {
		report->incomplete = true;
		memcpy(report->incomplete_name, res.name, sizeof(report->incomplete_name));
		/* The next append follows the last good record (or writes a new header). */
		err = agent_fs_truncate(file, res.good_end);
		if (err == 0) {
			err = agent_fs_sync(file);
		}
	}
	tail_unchecked = err != 0;
	close_err = agent_fs_close(file);
	return err != 0 ? err : close_err;
}

/* ---- writing ------------------------------------------------------------------------------ */


/* An IMPORT to be written: its fields checked, its digest against its text. */
static int import_check(const struct module_journal_record *rec, const void *manifest,
			const void *body, size_t *name_len)
{
	uint8_t digest[MODULE_DIGEST_LEN];
	struct sha256 sha;

	if (rec == NULL) {
		return -EINVAL;
	}
	*name_len = name_length(rec->name);
	if (!module_name_valid(rec->name, *name_len) ||
	    (unsigned int)rec->kind >= MODULE_KIND_COUNT ||
	    !import_lengths_valid(rec->manifest_len, rec->body_len) ||
	    (manifest == NULL && rec->manifest_len > 0u) || (body == NULL && rec->body_len > 0u)) {
		return -EINVAL;
	}
	sha256_init(&sha);
	sha256_update(&sha, manifest, rec->manifest_len);
	sha256_update(&sha, body, rec->body_len);
	sha256_final(&sha, digest);
	return memcmp(digest, rec->digest, sizeof(digest)) == 0 ? 0 : -EINVAL;
}

/* Write one record (@p rec's type decides what it holds). */
static int write_record(struct agent_file *file, const struct module_journal_record *rec,
			size_t name_len, const void *manifest, const void *body)
{
	uint8_t head[HEAD_BYTES];
	uint8_t crc_raw[CRC_BYTES];
	bool import = rec->type == MODULE_JOURNAL_IMPORT;
	uint32_t crc;
	int err;

	head_encode(rec, name_len, head);
	crc = crc32_update(crc32_update(0, head, sizeof(head)), rec->name, name_len);
	if (import) {
		crc = crc32_update(crc32_update(crc, manifest, rec->manifest_len), body,
				   rec->body_len);
	}
	put_le32(crc_raw, crc);
	err = agent_fs_write_all(file, head, sizeof(head));
	if (err == 0) {
		err = agent_fs_write_all(file, rec->name, name_len);
	}
	if (err == 0 && import) {
		err = agent_fs_write_all(file, manifest, rec->manifest_len);
		if (err == 0) {
			err = agent_fs_write_all(file, body, rec->body_len);
		}
	}
	return err == 0 ? agent_fs_write_all(file, crc_raw, sizeof(crc_raw)) : err;
}

static int make_dir(void)
{
	int err = agent_fs_mkdir(MODULE_JOURNAL_DIR);

	return err == -EEXIST ? 0 : err;
}

/* Append one checked record: bound, write, sync; on a failure the file is cut back. */
static int append(const struct module_journal_record *rec, size_t name_len, const void *manifest,
		  const void *body)
{
	uint8_t header[HEADER_BYTES];
	struct agent_file *file;
	uint32_t text = rec->manifest_len + rec->body_len;
	uint64_t need = RECORD_BYTES(name_len, text);
	int32_t size;
	int err;

	if (!agent_fs_mounted(JOURNAL_MOUNT)) {
		return -ENODEV;
	}
	if (tail_unchecked) {
		return -EIO;
	}
	err = make_dir();
	if (err != 0) {
		return err;
	}
	err = agent_fs_open(&file, MODULE_JOURNAL_PATH, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE);
	if (err != 0) {
		return err;
	}
	err = agent_fs_seek(file, 0, AGENT_FS_SEEK_END);
	size = err == 0 ? agent_fs_tell(file) : err;
	if (size < 0) {
		(void)agent_fs_close(file);
		return size;
	}
	if (size == 0) {
		need += HEADER_BYTES;
	}
	if ((uint64_t)size + need > CONFIG_AGENT_MODULE_JOURNAL_BYTES) {
		(void)agent_fs_close(file);
		return -ENOSPC;
	}
	if (size == 0) {
		header_encode(header);
		err = agent_fs_write_all(file, header, sizeof(header));
	}
	if (err == 0) {
		err = write_record(file, rec, name_len, manifest, body);
	}
	if (err == 0) {
		err = agent_fs_sync(file);
	}
	if (err != 0 && agent_fs_truncate(file, (uint32_t)size) != 0) {
		/* Part of the record may be committed by the close. */
		tail_unchecked = true;
	}
	/* After a good sync the record is on flash whatever the close says. */
	(void)agent_fs_close(file);
	return err;
}

int module_journal_append_import(const struct module_journal_record *rec, const void *manifest,
				 const void *body)
{
	struct module_journal_record r;
	size_t name_len;
	int err = import_check(rec, manifest, body, &name_len);

	if (err != 0) {
		return err;
	}
	r = *rec;
	r.type = MODULE_JOURNAL_IMPORT;
	return append(&r, name_len, manifest, body);
}

int module_journal_append_remove(const char *name)
{
	struct module_journal_record r;
	size_t name_len = name != NULL ? name_length(name) : 0u;

	if (!module_name_valid(name, name_len)) {
		return -EINVAL;
	}
	memset(&r, 0, sizeof(r));
	r.type = MODULE_JOURNAL_REMOVE;
	memcpy(r.name, name, name_len);
	return append(&r, name_len, NULL, NULL);
}

/* ---- compaction --------------------------------------------------------------------------- */

/* Write the temporary journal: the header and one IMPORT per live entry. */
static int write_compacted(module_journal_live_fn live, void *user, uint32_t *records,
			   uint32_t *bytes)
{
	uint8_t header[HEADER_BYTES];
	struct module_journal_record rec;
	struct agent_file *file;
	const void *manifest;
	const void *body;
	uint64_t size = HEADER_BYTES;
	size_t name_len;
	int err;

	err = agent_fs_open(&file, JOURNAL_TMP_PATH,
			    AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC);
	if (err != 0) {
		return err;
	}
	header_encode(header);
	err = agent_fs_write_all(file, header, sizeof(header));
	*records = 0;
	for (size_t i = 0; err == 0; i++) {
		manifest = NULL;
		body = NULL;
		if (!live(user, i, &rec, &manifest, &body)) {
			break;
		}
		err = import_check(&rec, manifest, body, &name_len);
		if (err != 0) {
			break;
		}
		size += RECORD_BYTES(name_len, rec.manifest_len + rec.body_len);
		if (size > CONFIG_AGENT_MODULE_JOURNAL_BYTES) {
			err = -ENOSPC;
			break;
		}
		rec.type = MODULE_JOURNAL_IMPORT;
		err = write_record(file, &rec, name_len, manifest, body);
		(*records)++;
	}
	if (err == 0) {
		err = agent_fs_sync(file);
	}
	int close_err = agent_fs_close(file);

	*bytes = (uint32_t)size;
	return err != 0 ? err : close_err;
}

/* Read the temporary journal back: every record good, as many and as long as written. */
static int check_compacted(uint32_t records, uint32_t bytes)
{
	struct walk_result res;
	struct agent_file *file;
	int err = agent_fs_open(&file, JOURNAL_TMP_PATH, AGENT_FS_O_READ);

	if (err != 0) {
		return err;
	}
	err = walk_file(file, NULL, NULL, &res);
	(void)agent_fs_close(file);
	if (err == 0 && (res.damaged || res.records != records || res.good_end != bytes)) {
		err = -EIO;
	}
	return err;
}

int module_journal_compact(module_journal_live_fn live, void *user)
{
	uint32_t records;
	uint32_t bytes;
	int err;

	if (live == NULL) {
		return -EINVAL;
	}
	if (!agent_fs_mounted(JOURNAL_MOUNT)) {
		return -ENODEV;
	}
	err = make_dir();
	if (err == 0) {
		err = ignore_enoent(agent_fs_unlink(JOURNAL_TMP_PATH));
	}
	if (err != 0) {
		return err;
	}
	err = write_compacted(live, user, &records, &bytes);
	if (err == 0) {
		err = check_compacted(records, bytes);
	}
	if (err == 0) {
		/* The commit point: littlefs replaces the old journal atomically. */
		err = agent_fs_rename(JOURNAL_TMP_PATH, MODULE_JOURNAL_PATH);
	}
	if (err != 0) {
		(void)agent_fs_unlink(JOURNAL_TMP_PATH);
	} else {
		tail_unchecked = false; /* the journal is the checked temporary file */
	}
	return err;
}

int32_t module_journal_size(void)
{
	struct agent_dirent ent;
	int err;

	if (!agent_fs_mounted(JOURNAL_MOUNT)) {
		return -ENODEV;
	}
	err = agent_fs_stat(MODULE_JOURNAL_PATH, &ent);
	if (err != 0) {
		return ignore_enoent(err);
	}
	return (int32_t)ent.size;
}
