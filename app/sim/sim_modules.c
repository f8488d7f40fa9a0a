/*
 * The simulator's --modules DIR (docs/modules.md "The import", "At start-up"): each
 * immediate child directory of DIR, in name order, read from the host's filesystem and
 * given to the same import operation as every other route. No deeper search; nothing is
 * executed.
 */
#include "sim_modules.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h> /* qsort */
#include <string.h>
#include <sys/stat.h>

#include "agent_print.h"
#include "module_import.h"
#include "module_manifest.h"

#define CHILDREN_MAX 64
#define PATH_BYTES   1024

static char manifest[CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN + 1];
static char body[CONFIG_AGENT_CATALOG_BYTES + 1];

/* Read all of @p path into @p buf (at most @p cap bytes): the length, -ENOENT, -E2BIG, -EIO. */
static long read_all(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		return errno == ENOENT ? -ENOENT : -EIO;
	}
	n = fread(buf, 1, cap, f);
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	if (n == cap && fgetc(f) != EOF) {
		fclose(f);
		return -E2BIG;
	}
	fclose(f);
	return (long)n;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static void import_one(struct agent_console *console, const char *dir)
{
	char path[PATH_BYTES];
	char why[MODULE_REASON_MAX + 1] = "";
	struct module_import_result res;
	struct module_manifest m;
	long manifest_len;
	long body_len;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, MODULE_MANIFEST_FILE);
	manifest_len = read_all(path, manifest, CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
	if (manifest_len >= 0) {
		struct module_text file;

		err = module_manifest_parse(manifest, (size_t)manifest_len, &m, why, sizeof(why));
		if (err != 0) {
			agent_printf(console, "modules: %s refused: %s\n", dir, why);
			return;
		}
		file = module_manifest_body_file(&m);
		snprintf(path, sizeof(path), "%s/%.*s", dir, (int)file.len, file.ptr);
	} else if (manifest_len == -ENOENT) {
		manifest_len = 0; /* a skill as SKILL.md alone */
		snprintf(path, sizeof(path), "%s/%s", dir, MODULE_SKILL_FILE);
	} else {
		agent_printf(console, "modules: %s refused: %s\n", dir,
			     manifest_len == -E2BIG ? "manifest: too large" : "manifest: cannot read");
		return;
	}
	body_len = read_all(path, body, sizeof(body) - 1u);
	if (body_len < 0) {
		agent_printf(console, "modules: %s refused: %s: %s\n", dir, path,
			     body_len == -ENOENT ? "missing"
			     : body_len == -E2BIG ? "larger than the catalog"
						  : "cannot read");
		return;
	}
	err = module_import_text(manifest, (size_t)manifest_len, body, (size_t)body_len, &res, why,
				 sizeof(why));
	if (err != 0) {
		agent_printf(console, "modules: %s refused: %s\n", dir, why);
		return;
	}
	agent_printf(console, "modules: %s %s accepted (%s)\n", module_kind_name(res.kind),
		     res.name,
		     res.outcome == MODULE_IMPORT_UNCHANGED  ? "unchanged"
		     : res.outcome == MODULE_IMPORT_REPLACED ? "replaced"
							     : "installed");
}

int sim_modules_import(struct agent_console *console, const char *dir)
{
	static char children[CHILDREN_MAX][PATH_BYTES];
	size_t count = 0;
	struct dirent *ent;
	DIR *d = opendir(dir);

	if (d == NULL) {
		agent_printf(console, "modules: %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	while ((ent = readdir(d)) != NULL) {
		char path[PATH_BYTES];
		struct stat st;

		if (ent->d_name[0] == '.') {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
		if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
			continue; /* only immediate child directories */
		}
		if (count == CHILDREN_MAX) {
			agent_printf(console, "modules: %s: more than %d directories; the rest are "
					      "left out\n",
				     dir, CHILDREN_MAX);
			break;
		}
		memcpy(children[count++], path, sizeof(path));
	}
	closedir(d);
	qsort(children, count, sizeof(children[0]), compare_names);
	for (size_t i = 0; i < count; i++) {
		import_one(console, children[i]);
	}
	return 0;
}
