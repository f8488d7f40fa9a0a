/*
 * The console route of the import (module_import_dir(), docs/modules.md "The import"): a
 * module directory on the device's filesystem read through the port's file API, fed to the
 * same head and parts as every other route. Nothing is executed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_import.h"
#include "module_internal.h"
#include "module_manifest.h"
#include "sha256.h"
#include "storage_path.h"

#define PART_BYTES 256u
#define DIR_PATH_MAX 255u

/* The manifest (or the head of SKILL.md), read once and kept for the head and the parts. */
static char manifest_buf[CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN + 1] AGENT_PSRAM_ATTR;

static int join(char *out, size_t len, const char *dir, const char *name, size_t name_len)
{
	int n = snprintf(out, len, "%s/%.*s", dir, (int)name_len, name);

	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* The size of @p path, -ENOENT when it is not a file. */
static int file_size(const char *path, uint32_t *size)
{
	struct agent_dirent st;
	int err = agent_fs_stat(path, &st);

	if (err != 0) {
		return err;
	}
	if (st.type != AGENT_FS_FILE) {
		return -ENOENT;
	}
	*size = (uint32_t)st.size;
	return 0;
}

/* Read up to @p len bytes of @p path from its start; the count or a negative errno. */
static int read_head(const char *path, char *buf, size_t len)
{
	struct agent_file *f;
	size_t got = 0;
	int err = agent_fs_open(&f, path, AGENT_FS_O_READ);

	if (err != 0) {
		return err;
	}
	while (got < len) {
		int n = agent_fs_read(f, buf + got, len - got);

		if (n < 0) {
			(void)agent_fs_close(f);
			return n;
		}
		if (n == 0) {
			break;
		}
		got += (size_t)n;
	}
	(void)agent_fs_close(f);
	return (int)got;
}

/*
 * Stream the body file @p path (@p size bytes) into the digest (@p sha) or, with @p name,
 * into the arrival's parts from offset @p at. A file whose length changed is refused.
 */
static int stream_body(const char *path, uint32_t size, struct sha256 *sha, const char *name,
		       uint32_t at, struct module_import_result *res, char *why, size_t why_len)
{
	char buf[PART_BYTES];
	struct agent_file *f;
	uint32_t done = 0;
	int err = agent_fs_open(&f, path, AGENT_FS_O_READ);

	if (err != 0) {
		return module_refuse(why, why_len, err, "%s: cannot read (error %d)",
				     storage_path_base(path), err);
	}
	while (err == 0) {
		int n = agent_fs_read(f, buf, sizeof(buf));

		if (n < 0) {
			err = module_refuse(why, why_len, n, "%s: cannot read (error %d)",
					    storage_path_base(path), n);
			break;
		}
		if (n == 0) {
			break;
		}
		if (done + (uint32_t)n > size) {
			err = module_refuse(why, why_len, -EIO, "%s: changed while it was read",
					    storage_path_base(path));
			break;
		}
		if (name == NULL) {
			sha256_update(sha, buf, (size_t)n);
		} else {
			err = module_import_part(name, at + done, buf, (size_t)n, res, why, why_len);
		}
		done += (uint32_t)n;
	}
	(void)agent_fs_close(f);
	if (err == 0 && done != size) {
		err = module_refuse(why, why_len, -EIO, "%s: changed while it was read",
				    storage_path_base(path));
	}
	return err;
}

int module_import_dir(const char *path, struct module_import_result *res, char *why,
		      size_t why_len)
{
	char manifest_path[DIR_PATH_MAX + 1];
	char body_path[DIR_PATH_MAX + 1];
	char name[MODULE_NAME_MAX + 1];
	struct module_import_head head;
	struct module_manifest m;
	struct sha256 sha;
	uint32_t manifest_len = 0;
	uint32_t body_len = 0;
	struct module_text file;
	int err;
	int n;

	memset(res, 0, sizeof(*res));
	if (join(manifest_path, sizeof(manifest_path), path, MODULE_MANIFEST_FILE,
		 strlen(MODULE_MANIFEST_FILE)) != 0) {
		return module_refuse(why, why_len, -ENAMETOOLONG, "%s: path too long", path);
	}
	err = file_size(manifest_path, &manifest_len);
	if (err == 0) {
		if (manifest_len > CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN) {
			return module_refuse(why, why_len, -E2BIG,
					     "manifest: %u bytes, at most %u",
					     (unsigned int)manifest_len,
					     (unsigned int)CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
		}
		n = read_head(manifest_path, manifest_buf, manifest_len);
		if (n < 0 || (uint32_t)n != manifest_len) {
			return module_refuse(why, why_len, -EIO, "%s: cannot read (error %d)",
					     MODULE_MANIFEST_FILE, n < 0 ? n : -EIO);
		}
		err = module_manifest_parse(manifest_buf, manifest_len, &m, why, why_len);
		if (err != 0) {
			return err;
		}
		file = module_manifest_body_file(&m);
	} else if (err == -ENOENT) {
		manifest_len = 0; /* a skill as SKILL.md alone */
		file.ptr = MODULE_SKILL_FILE;
		file.len = strlen(MODULE_SKILL_FILE);
	} else {
		return module_refuse(why, why_len, err, "%s: cannot read (error %d)", path, err);
	}
	if (join(body_path, sizeof(body_path), path, file.ptr, file.len) != 0) {
		return module_refuse(why, why_len, -ENAMETOOLONG, "%s: path too long", path);
	}
	err = file_size(body_path, &body_len);
	if (err != 0) {
		if (manifest_len == 0u) {
			return module_refuse(why, why_len, -ENOENT,
					     "%s: no %s and no %s", path, MODULE_MANIFEST_FILE,
					     MODULE_SKILL_FILE);
		}
		return module_refuse(why, why_len, -ENOENT, "%.*s: missing (named by the manifest)",
				     (int)file.len, file.ptr);
	}
	if (manifest_len == 0u) {
		/* The header of SKILL.md names the module: read its start, a header of the
		 * largest size and the body's first byte. */
		n = read_head(body_path, manifest_buf, sizeof(manifest_buf));
		if (n < 0) {
			return module_refuse(why, why_len, n, "%s: cannot read (error %d)",
					     MODULE_SKILL_FILE, n);
		}
		err = module_head_from(NULL, 0, manifest_buf, (size_t)n, &head, name, why,
				       why_len);
	} else {
		err = module_head_from(manifest_buf, manifest_len, NULL, 0, &head, name, why,
				       why_len);
	}
	if (err != 0) {
		return err;
	}
	head.manifest_len = manifest_len;
	head.body_len = body_len;
	sha256_init(&sha);
	sha256_update(&sha, manifest_buf, manifest_len);
	err = stream_body(body_path, body_len, &sha, NULL, 0, res, why, why_len);
	if (err != 0) {
		return err;
	}
	sha256_final(&sha, head.digest);
	err = module_import_begin(&head, res, why, why_len);
	if (err != 0) {
		return err;
	}
	if (manifest_len > 0u) {
		err = module_import_part(name, 0, manifest_buf, manifest_len, res, why, why_len);
	}
	if (err == 0) {
		err = stream_body(body_path, body_len, NULL, name, manifest_len, res, why, why_len);
	}
	if (err == 0 && res->outcome == MODULE_IMPORT_MORE) {
		err = module_refuse(why, why_len, -EIO, "%s: changed while it was read",
				    storage_path_base(body_path));
	}
	if (err != 0) {
		module_import_abort(name); /* nothing of a failed local import stays */
	}
	return err;
}
