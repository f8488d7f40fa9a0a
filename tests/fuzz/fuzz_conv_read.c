/*
 * libFuzzer target for the conversation store's reader (app/src/agent/store/;
 * docs/conversation-format.md): the input is the file of slot 1 on flash, as a damaged or
 * hostile medium may hold it. The port's file API, mutex and pool are replaced here by ones in
 * memory, so every input starts from an empty store.
 *
 * Checked: every delivered piece is within the I/O block and its record's length, in order;
 * a file the store reads whole is exactly header, the delivered records (type, length and
 * payload as in the input) and trailer; in a version-2 file every tool id record has 2 bytes
 * and follows a tool record; the history is within its bounds and starts with a user message;
 * a commit to a file read whole appends exactly the turn (user, tool, tool id 6, tool, tool
 * id 0, assistant) as version 2, and a refused commit leaves the file as it was.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "conv_store.h"

#define FILE_MAX  (CONFIG_AGENT_CONV_FLASH_FILE_MAX + 1024)
#define FILES_MAX 8

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_conv_read: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* ---- the port, in memory ------------------------------------------------------------------ */

#define MEM_FS_FILES      FILES_MAX
#define MEM_FS_HANDLES    4
#define MEM_FS_CAN_CREATE conv_dir
#define MEM_FS_STRICT     0

static bool lfs_agent_dir;
static bool conv_dir;

#include "mem_fs.h"

int agent_fs_mkdir(const char *path)
{
	bool *made = strcmp(path, "/lfs/.agent") == 0		      ? &lfs_agent_dir
		     : strcmp(path, "/lfs/.agent/conversations") == 0 ? &conv_dir
								      : NULL;

	CHECK(made != NULL);
	if (*made) {
		return -EEXIST;
	}
	*made = true;
	return 0;
}

int agent_fs_statvfs(const char *path, struct agent_statvfs *stat)
{
	(void)stat;
	CHECK(strcmp(path, "/SD:") == 0); /* no card: the store takes flash */
	return -ENOENT;
}

int agent_wall_time_s(int64_t *out)
{
	*out = 0;
	return -ENOTSUP;
}

struct agent_mutex {
	int depth;
};
static struct agent_mutex the_mutex;

int agent_mutex_init(struct agent_mutex **out)
{
	*out = &the_mutex;
	return 0;
}

void agent_mutex_lock(struct agent_mutex *mutex)
{
	CHECK(mutex->depth == 0);
	mutex->depth++;
}

void agent_mutex_unlock(struct agent_mutex *mutex)
{
	CHECK(mutex->depth == 1);
	mutex->depth--;
}

struct agent_pool {
	void *block;
	size_t block_bytes;
	bool taken;
};
static struct agent_pool the_pool;

int agent_pool_init(struct agent_pool **out, const char *name, void *buffer, size_t block_bytes,
		    uint32_t blocks, enum agent_mem_class mem_class)
{
	(void)name;
	(void)mem_class;
	CHECK(blocks == 1u);
	the_pool = (struct agent_pool){buffer, block_bytes, false};
	*out = &the_pool;
	return 0;
}

void *agent_pool_alloc(struct agent_pool *pool)
{
	if (pool->taken) {
		return NULL;
	}
	pool->taken = true;
	return pool->block;
}

int agent_pool_free(struct agent_pool *pool, void *block)
{
	CHECK(pool->taken && block == pool->block);
	pool->taken = false;
	return 0;
}

int agent_pool_stats_get(const struct agent_pool *pool, struct agent_pool_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	stats->block_bytes = pool->block_bytes;
	stats->blocks_total = 1;
	stats->blocks_free = pool->taken ? 0 : 1;
	return 0;
}

/* ---- the checks --------------------------------------------------------------------------- */

#define SLOT_PATH "/lfs/.agent/conversations/conv1.bin"
#define RECORDS_MAX 2048u

struct walk {
	const uint8_t *file; /* the file as it was before the read */
	size_t file_len;
	uint8_t version;
	uint32_t pos; /* where the next record starts in the file */
	uint32_t records;
	uint32_t offset; /* in the current record */
	uint8_t last_type;
	uint8_t types[RECORDS_MAX];
};

static int on_chunk(const struct conv_chunk *c, void *user_data)
{
	struct walk *w = user_data;

	CHECK(c->len <= CONV_IO_BYTES && c->record == w->records && c->offset == w->offset);
	CHECK(c->total_len <= CONV_PAYLOAD_MAX && c->offset + c->len <= c->total_len);
	CHECK(c->len > 0u || c->total_len == 0u);
	/* The payload as the file holds it, after a head of this type and length. */
	CHECK(w->pos + CONV_RECORD_OVERHEAD + c->total_len <= w->file_len);
	CHECK(w->file[w->pos] == c->type && w->file[w->pos + 1] == 0u);
	CHECK((uint32_t)(w->file[w->pos + 2] | (w->file[w->pos + 3] << 8)) == c->total_len);
	CHECK(memcmp(w->file + w->pos + CONV_RECORD_HEAD_BYTES + c->offset, c->data, c->len) == 0);
	if (c->type == CONV_REC_TOOL_ID && w->version >= 2u) {
		CHECK(c->total_len == CONV_TOOL_ID_BYTES && w->last_type == CONV_REC_TOOL);
	}
	w->offset += (uint32_t)c->len;
	if (c->last) {
		CHECK(w->offset == c->total_len);
		if (w->records < RECORDS_MAX) {
			w->types[w->records] = c->type;
		}
		w->pos += CONV_RECORD_OVERHEAD + c->total_len;
		w->records++;
		w->offset = 0;
		w->last_type = c->type;
	}
	return 0;
}

static int read_slot(const uint8_t *file, size_t len, struct walk *w)
{
	memset(w, 0, sizeof(*w));
	w->file = file;
	w->file_len = len;
	w->version = len > 4 ? file[4] : 0;
	w->pos = CONV_HEADER_BYTES;
	return conv_store_read(1, on_chunk, w);
}

static struct conv_history history;
static uint8_t before[FILE_MAX];
static uint8_t after[FILE_MAX];
static struct walk walk_before;
static struct walk walk_after;

static void check_history(void)
{
	int err = conv_store_history(1, &history);

	if (err != 0) {
		return;
	}
	CHECK(history.count <= CONV_HISTORY_MESSAGES_MAX);
	CHECK(history.raw_bytes <= CONFIG_AGENT_CHAT_HISTORY_RAW_MAX);
	CHECK(history.serialized_bytes <= CONFIG_AGENT_CHAT_HISTORY_FRAGMENT_SIZE);
	for (uint32_t i = 0; i < history.count; i++) {
		const struct conv_history_msg *m = &history.msgs[i];

		CHECK(m->role == (i == 0 ? CONV_REC_USER : m->role));
		CHECK(m->role == CONV_REC_USER || m->role == CONV_REC_ASSISTANT);
		CHECK((uint64_t)m->offset + m->len <= history.raw_bytes);
	}
}

static void check_commit(size_t len)
{
	static const char *const lines[] = {"storage_read {\"path\":\"/lfs/a\"}", "weather {}"};
	static const uint16_t ids[] = {6, 0};
	static const uint8_t added[] = {CONV_REC_USER,	  CONV_REC_TOOL,      CONV_REC_TOOL_ID,
					CONV_REC_TOOL,	  CONV_REC_TOOL_ID, CONV_REC_ASSISTANT};
	struct conv_turn turn = {
		.user = "q",
		.user_len = 1,
		.assistant = "a",
		.assistant_len = 1,
		.tools = lines,
		.tool_count = 2,
		.tool_ids = ids,
	};
	struct conv_handle h;
	struct mem_file *f;
	int err;

	if (conv_store_open(&h, 1) != 0) {
		return;
	}
	err = conv_store_commit(&h, &turn, NULL);
	f = find(SLOT_PATH, false);
	CHECK(f != NULL && f->exists);
	if (err != 0) {
		/* Refused or failed: the stored file is as it was. */
		CHECK(f->size == len && memcmp(f->data, before, len) == 0);
		return;
	}
	CHECK(f->size == h.bytes && f->data[4] == CONV_VERSION);
	memcpy(after, f->data, f->size);
	CHECK(read_slot(after, f->size, &walk_after) == 0);
	CHECK(walk_after.records == walk_before.records + sizeof(added));
	CHECK(memcmp(after + CONV_HEADER_BYTES, before + CONV_HEADER_BYTES,
		     walk_before.pos - CONV_HEADER_BYTES) == 0);
	if (walk_after.records <= RECORDS_MAX) {
		CHECK(memcmp(walk_after.types + walk_before.records, added, sizeof(added)) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conv_summary sum;
	struct mem_file *f;
	char id[CONV_RESPONSE_ID_MAX + 1];
	bool read_whole;
	int err;

	if (size > CONFIG_AGENT_CONV_FLASH_FILE_MAX) {
		return 0;
	}
	memset(files, 0, sizeof(files));
	memset(handles, 0, sizeof(handles));
	lfs_agent_dir = true;
	conv_dir = true;
	f = find(SLOT_PATH, true);
	memcpy(f->data, data, size);
	f->size = (uint32_t)size;
	f->exists = true;
	memcpy(before, data, size);

	CHECK(conv_store_init() == 0);
	err = conv_store_summary(1, &sum);
	CHECK(err == 0 || err == -EBADMSG);
	err = read_slot(before, size, &walk_before);
	CHECK(err == 0 || err == -EBADMSG);
	read_whole = err == 0;
	if (read_whole) {
		/* Read whole: header, exactly the delivered records, trailer. */
		CHECK(walk_before.pos + CONV_TRAILER_BYTES == size);
		CHECK(before[4] >= CONV_VERSION_MIN && before[4] <= CONV_VERSION);
		CHECK(sum.turns <= walk_before.records && !sum.damaged);
	}
	err = conv_store_last_response_id(1, id, sizeof(id));
	CHECK(err == -ENOENT || err == -EBADMSG || (err >= 0 && (size_t)err == strlen(id)));
	check_history();
	if (read_whole) {
		check_commit(size);
	}
	CHECK(the_mutex.depth == 0 && !the_pool.taken);
	return 0;
}
