/*
 * The conversation store (conv_store.h, docs/conversation-format.md): its state, lock and
 * I/O block, the small helpers its files share, and init with the recovery of every slot at
 * boot. The other parts are listed in conv_store_internal.h.
 */
#include "conv_store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent_port.h"

#define CONV_SUBDIR	"/.agent"
#define CONV_DIR	"/.agent/conversations"
#define CONV_FLASH_ROOT "/lfs"
#define CONV_SD_ROOT	"/SD:"

_Static_assert(CONV_SLOTS_MAX <= CONV_SLOT_MAX, "more slots than the header's slot field holds");
_Static_assert(CONV_MODEL_MAX <= CONV_PAYLOAD_MAX, "a model name must fit one record");
_Static_assert(CONFIG_AGENT_CONV_FLASH_FILE_MAX >= CONV_FILE_MIN_BYTES &&
	       CONFIG_AGENT_CONV_SD_FILE_MAX >= CONV_FILE_MIN_BYTES,
	       "a conversation file bound below the smallest file");

struct conv_store_state conv_state;
static struct agent_mutex *store_lock;
static struct agent_pool *io_pool;
static uint8_t io_buf[CONV_IO_BYTES] __attribute__((aligned(8)));

/* ---- small helpers ------------------------------------------------------------------------ */

void conv_slot_path(char *out, uint8_t slot, const char *ext)
{
	snprintf(out, CONV_PATH_BYTES, "%s/conv%u.%s", conv_state.dir, (unsigned int)slot, ext);
}

int conv_enter(void)
{
	if (store_lock == NULL) {
		return -ENODEV;
	}
	agent_mutex_lock(store_lock);
	if (!conv_state.ready) {
		agent_mutex_unlock(store_lock);
		return -ENODEV;
	}
	return 0;
}

void conv_leave(void)
{
	agent_mutex_unlock(store_lock);
}

uint8_t *conv_io_take(void)
{
	return agent_pool_alloc(io_pool);
}

void conv_io_give(uint8_t *buf)
{
	if (buf != NULL) {
		(void)agent_pool_free(io_pool, buf);
	}
}

int conv_read_exact(struct agent_file *file, void *buf, size_t len)
{
	int n = agent_fs_read_exact(file, buf, len);

	return n < 0 ? n : ((size_t)n < len ? -EBADMSG : 0);
}

int64_t conv_wall_now(void)
{
	int64_t now = 0;

	return agent_wall_time_s(&now) == 0 ? now : 0;
}

/* ---- init and recovery -------------------------------------------------------------------- */

static void seq_seen(const struct conv_header *hdr)
{
	if (hdr->sequence >= conv_state.next_seq) {
		conv_state.next_seq = hdr->sequence == UINT32_MAX ? UINT32_MAX : hdr->sequence + 1u;
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

	conv_slot_path(main_path, slot, "bin");
	conv_slot_path(bak_path, slot, "bak");
	conv_slot_path(tmp_path, slot, "tmp");

	err = conv_ignore_enoent(agent_fs_unlink(tmp_path));
	if (err != 0) {
		return err;
	}
	main_st = conv_check_file(main_path, slot, buf, &hdr);
	if (main_st == 0) {
		seq_seen(&hdr);
		main_id = hdr.conv_id;
	}
	bak_st = conv_check_file(bak_path, slot, buf, &hdr);
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
		if (main_st == -EBADMSG && conv_state.medium == CONV_MEDIUM_SD) {
			err = agent_fs_unlink(main_path);
			if (err != 0) {
				return err;
			}
		}
		err = agent_fs_rename(bak_path, main_path);
		if (err == 0) {
			conv_state.recovered++;
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
		conv_state.damaged_mask |= 1u << (slot - 1u);
	}
	return 0;
}

static int make_dirs(void)
{
	char path[CONV_PATH_BYTES];
	int err;

	snprintf(path, sizeof(path), "%s%s", conv_state.root, CONV_SUBDIR);
	err = agent_fs_mkdir(path);
	if (err != 0 && err != -EEXIST) {
		return err;
	}
	err = agent_fs_mkdir(conv_state.dir);
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
	memset(&conv_state, 0, sizeof(conv_state));
	if (agent_fs_statvfs(CONV_SD_ROOT, &st) == 0) {
		conv_state.medium = CONV_MEDIUM_SD;
		conv_state.root = CONV_SD_ROOT;
		conv_state.slots = CONFIG_AGENT_CONV_SD_SLOTS;
		conv_state.file_max = CONFIG_AGENT_CONV_SD_FILE_MAX;
	} else {
		conv_state.medium = CONV_MEDIUM_FLASH;
		conv_state.root = CONV_FLASH_ROOT;
		conv_state.slots = CONFIG_AGENT_CONV_FLASH_SLOTS;
		conv_state.file_max = CONFIG_AGENT_CONV_FLASH_FILE_MAX;
	}
	snprintf(conv_state.dir, sizeof(conv_state.dir), "%s%s", conv_state.root, CONV_DIR);
	conv_state.next_seq = 1;
	err = make_dirs();
	if (err != 0) {
		agent_mutex_unlock(store_lock);
		return err;
	}
	buf = conv_io_take();
	if (buf == NULL) {
		agent_mutex_unlock(store_lock);
		return -ENOMEM;
	}
	conv_state.ready = true;
	for (uint8_t slot = 1; slot <= conv_state.slots; slot++) {
		err = recover_slot(slot, buf);
		if (err != 0 && first_err == 0) {
			first_err = err;
		}
	}
	conv_io_give(buf);
	agent_mutex_unlock(store_lock);
	return first_err;
}

int conv_store_info_get(struct conv_store_info *info)
{
	int err = conv_enter();

	if (err != 0) {
		return err;
	}
	memset(info, 0, sizeof(*info));
	info->medium = conv_state.medium;
	info->dir = conv_state.dir;
	info->slots = conv_state.slots;
	info->file_max_bytes = conv_state.file_max;
	info->recovered = conv_state.recovered;
	for (uint8_t slot = 1; slot <= conv_state.slots; slot++) {
		if ((conv_state.damaged_mask & (1u << (slot - 1u))) != 0u) {
			info->damaged++;
		}
	}
	conv_leave();
	return 0;
}
