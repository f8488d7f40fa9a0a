/*
 * The storage tools (app/src/tools/storage_*.c) on a real LittleFS image: path resolution
 * and the .ssh rule for every tool, each bound at N-1, N and N+1, text checks, result
 * bounds, and the definitions' metadata. storage_patch has its own file
 * (test_storage_patch.c).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "agent_config.h"
#include "storage_fs.h"
#include "storage_test_util.h"
#include "tool_registry.h"
#include "tool_session.h"
#include "tools_bootstrap.h"

#define IMAGE_1M (1024u * 1024u)

static char big[200 * 1024];
static char back[200 * 1024];

static int setup(void **state)
{
	(void)state;
	return storage_fixture_setup("test_storage_tools", IMAGE_1M);
}

static int teardown(void **state)
{
	(void)state;
	return storage_fixture_teardown();
}

/* ---- Paths ------------------------------------------------------------------------------- */

static void assert_resolves(const char *cwd, const char *path, const char *want)
{
	char got[STORAGE_PATH_MAX + 1];

	test_cwd = cwd;
	assert_int_equal(run_path(&tool_storage_stat, path), 0);
	member_str("resolved", got, sizeof(got));
	assert_string_equal(got, want);
	test_cwd = "/lfs";
}

static void test_paths_fold(void **state)
{
	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/sub"), 0);
	put_text("/lfs/sub/f.txt", "hello");
	assert_resolves("/lfs", ".", "/lfs");
	assert_resolves("/lfs", "./", "/lfs");
	assert_resolves("/lfs", "sub", "/lfs/sub");
	assert_resolves("/lfs", "sub/", "/lfs/sub");
	assert_resolves("/lfs", "//lfs//sub//", "/lfs/sub");
	assert_resolves("/lfs", "/lfs/sub/../sub/./f.txt", "/lfs/sub/f.txt");
	assert_resolves("/lfs/sub", "f.txt", "/lfs/sub/f.txt");
	assert_resolves("/lfs/sub", "../sub/f.txt", "/lfs/sub/f.txt");
	assert_resolves("/lfs/sub", "..", "/lfs");
	assert_resolves("/lfs/sub/", "./././f.txt", "/lfs/sub/f.txt");
	assert_resolves("/lfs", "/..", "/");
	assert_resolves("/lfs", "../../..", "/");
	assert_resolves("/lfs", "/lfs/a/b/c/../../..", "/lfs");
	/* A context without a (usable) cwd starts at /lfs. */
	assert_resolves("", "sub", "/lfs/sub");
	assert_resolves("relative", "sub", "/lfs/sub");
}

static void test_paths_too_long(void **state)
{
	char path[400];
	size_t len;

	(void)state;
	/* "/lfs/" + name: 255 bytes resolved is accepted, 256 refused. */
	memset(path, 0, sizeof(path));
	strcpy(path, "/lfs/");
	memset(path + 5, 'n', 250);
	assert_int_equal(strlen(path), 255);
	assert_int_equal(run_path(&tool_storage_stat, path), 0);
	assert_false(member_bool("exists"));
	/* The argument itself is bounded by the parser (255 bytes). */
	path[255] = 'n';
	assert_int_equal(run_path(&tool_storage_stat, path), ARGS_REFUSED);
	assert_string_equal(last_error, "field path is longer than 255 bytes");

	/* A relative path that only becomes too long after the cwd: 256 bytes resolved. */
	memset(path, 0, sizeof(path));
	memset(path, 'r', 251);
	test_cwd = "/lfs";
	assert_int_equal(run_path(&tool_storage_stat, path), -ENAMETOOLONG);
	assert_string_equal(last_error, "the path is longer than 255 bytes once resolved, or has "
					"a name longer than 255 bytes");
	path[250] = '\0';
	assert_int_equal(run_path(&tool_storage_stat, path), 0);

	/* Growing past the bound on the way counts even when ".." brings it back. */
	test_cwd = "/lfs/sub"; /* 8 bytes, + "/" + 247 = 256 */
	len = 247;
	memset(path, 'q', len);
	strcpy(path + len, "/../x");
	assert_int_equal(run_path(&tool_storage_stat, path), -ENAMETOOLONG);
	path[len - 1] = '\0';
	strcat(path, "/../x");
	assert_int_equal(run_path(&tool_storage_stat, path), 0);
	assert_non_null(strstr(result, "\"resolved\":\"/lfs/sub/x\""));
	test_cwd = "/lfs";

	/* A NUL byte inside the path. */
	assert_int_equal(run_tool(&tool_storage_stat, "{\"path\":\"a\\u0000b\"}"), -EINVAL);
	assert_non_null(strstr(last_error, "NUL"));
}

/* Every spelling that reaches a .ssh directory, as (cwd, path). */
static const char *const ssh_spellings[][2] = {
	{"/lfs", ".ssh"},
	{"/lfs", "a/../.ssh"},
	{"/lfs", "./.ssh/"},
	{"/lfs", "//.ssh//x"},
	{"/lfs", ".SSH"},
	{"/lfs", ".Ssh/authorized_keys"},
	{"/lfs", "/lfs/.ssh/id_ed25519"},
	{"/lfs", "/lfs//.ssh/"},
	{"/lfs", "sub/../../lfs/.ssh/id_ed25519"},
	{"/lfs", ".ssh./id_ed25519"},
	{"/lfs", ".ssh /id_ed25519"},
	{"/lfs", "deep/.ssh/x"},
	{"/lfs/.ssh", "id_ed25519"},
	{"/lfs/.ssh", "."},
	{"/lfs/.SSH/sub", "../x"},
};

static int run_on(const struct tool_def *def, const char *path)
{
	static const char zero_hash[] =
		"0000000000000000000000000000000000000000000000000000000000000000";

	args_begin();
	args_str("path", path, strlen(path));
	if (def == &tool_storage_write) {
		args_str("content", "x", 1);
	} else if (def == &tool_storage_search) {
		args_str("query", "key", 3);
	} else if (def == &tool_storage_read_range) {
		args_int("offset", 0);
	} else if (def == &tool_storage_patch) {
		args_str("sha256", zero_hash, 64);
		jw_key(&args_w, "edits");
		jw_array_begin(&args_w);
		jw_object_begin(&args_w);
		args_int("offset", 0);
		args_str("insert", "x", 1);
		jw_object_end(&args_w);
		jw_array_end(&args_w);
	}
	return args_run(def);
}

static const struct tool_def *const all_tools[] = {
	&tool_storage_list,   &tool_storage_stat,	&tool_storage_read,  &tool_storage_write,
	&tool_storage_search, &tool_storage_read_range, &tool_storage_patch,
};

#define TOOL_COUNT (sizeof(all_tools) / sizeof(all_tools[0]))

/* Every storage tool on every (cwd, path) of @p spellings: -EACCES, @p refusal, no result. */
static void refused_by_every_tool(const char *const (*spellings)[2], size_t count,
				  const char *refusal)
{
	for (size_t t = 0; t < TOOL_COUNT; t++) {
		for (size_t i = 0; i < count; i++) {
			test_cwd = spellings[i][0];
			int rc = run_on(all_tools[t], spellings[i][1]);

			if (rc != -EACCES || strcmp(last_error, refusal) != 0) {
				fail_msg("%s cwd %s path %s: %d %s", all_tools[t]->name,
					 spellings[i][0], spellings[i][1], rc, last_error);
			}
			assert_int_equal(result[0], '\0');
		}
	}
	test_cwd = "/lfs";
}

static void test_ssh_refused_by_every_tool(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/.ssh"), 0);
	assert_int_equal(agent_fs_mkdir("/lfs/deep"), 0);
	assert_int_equal(agent_fs_mkdir("/lfs/deep/.ssh"), 0);
	put_text("/lfs/.ssh/id_ed25519", "secret key");
	refused_by_every_tool(ssh_spellings, sizeof(ssh_spellings) / sizeof(ssh_spellings[0]),
			      storage_ssh_refusal);
	/* Nothing was written, created or removed. */
	assert_int_equal(get_file("/lfs/.ssh/id_ed25519", buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "secret key", 10);
	assert_false(path_exists("/lfs/.ssh/x"));
	assert_false(path_exists("/lfs/.ssh/.agent_write.tmp"));

	/* Leaving .ssh again with ".." is an ordinary path; so are look-alike names. */
	assert_int_equal(run_path(&tool_storage_stat, ".ssh/../ok.txt"), 0);
	assert_false(member_bool("exists"));
	assert_int_equal(run_path(&tool_storage_stat, ".sshd"), 0);
	assert_int_equal(run_path(&tool_storage_stat, "ssh"), 0);
	assert_int_equal(run_path(&tool_storage_stat, "x.ssh"), 0);
	/* Listing the parent shows that .ssh exists, nothing inside it. */
	assert_int_equal(run_path(&tool_storage_list, "/lfs"), 0);
	assert_non_null(strstr(result, "\"name\":\".ssh\""));
	assert_null(strstr(result, "id_ed25519"));
}

/* The settings store holds the API key: no storage tool reads or replaces it. */
static void test_settings_store_refused_by_every_tool(void **state)
{
	static const char *const spellings[][2] = {
		{"/lfs", "/lfs/.settings"}, {"/lfs", ".settings"},	   {"/lfs", "./.settings"},
		{"/lfs", "a/../.settings"}, {"/lfs", "/lfs/.settings.tmp"}, {"/", "lfs//.settings"},
	};
	char buf[64];

	(void)state;
	assert_int_equal(agent_settings_set("agent/key", "sk-secret", 9), 0);
	for (size_t t = 0; t < TOOL_COUNT; t++) {
		for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
			test_cwd = spellings[i][0];
			int rc = run_on(all_tools[t], spellings[i][1]);

			if (rc != -EACCES || strcmp(last_error, storage_settings_refusal) != 0) {
				fail_msg("%s cwd %s path %s: %d %s", all_tools[t]->name,
					 spellings[i][0], spellings[i][1], rc, last_error);
			}
			assert_int_equal(result[0], '\0');
		}
	}
	test_cwd = "/lfs";
	assert_int_equal(agent_settings_get("agent/key", buf, sizeof(buf)), 9);
	assert_memory_equal(buf, "sk-secret", 9);
	/* Other dot files are ordinary. */
	assert_int_equal(run_path(&tool_storage_stat, ".setting"), 0);
	/* A search of the whole volume does not look into the store: one file seen. */
	put_text("/lfs/notes.txt", "nothing secret");
	args_begin();
	args_str("path", "/lfs", 4);
	args_str("query", "sk-secret", 9);
	assert_int_equal(args_run(&tool_storage_search), 0);
	assert_non_null(strstr(result, "\"matches\":[]"));
	assert_non_null(strstr(result, "\"files_scanned\":1,"));
	assert_non_null(strstr(result, "\"skipped_binary\":0,"));
}

/* storage_write of @p text to @p path; its result. */
static int write_n_text(const char *path, const char *text)
{
	args_begin();
	args_str("path", path, strlen(path));
	args_str("content", text, strlen(text));
	return args_run(&tool_storage_write);
}

/* Every spelling that reaches the agent's own .agent directory, as (cwd, path). */
static const char *const agent_spellings[][2] = {
	{"/lfs", ".agent"},
	{"/lfs", "/lfs/.agent/conversations/conv1.bin"},
	{"/lfs", ".agent/conversations/conv1.bin"},
	{"/lfs", ".AGENT/conversations/conv1.bin"},
	{"/lfs", ".Agent/Conversations/CONV1.BIN"},
	{"/lfs", ".agent./conversations/conv1.bin"},
	{"/lfs", ".agent /conversations/conv1.bin"},
	{"/lfs", ".agent. ./conversations"},
	{"/lfs", "//.agent//conversations//"},
	{"/lfs", "./.agent/./conversations/."},
	{"/lfs", "a/../.agent/conversations/conv1.bin"},
	{"/lfs", "sub/../../lfs/.agent/conversations/conv1.bin"},
	{"/", "lfs//.agent"},
	{"/lfs", "deep/.agent/x"},
	{"/lfs", "/SD:/.agent/conversations/conv1.bin"},
	{"/lfs/.agent", "conversations/conv1.bin"},
	{"/lfs/.agent/conversations", "."},
	{"/lfs/.AGENT/conversations", "conv1.bin"},
};

/* The agent's own state (/lfs/.agent: its conversations): no tool reads, lists or writes
 * it, in any spelling; one storage_write used to replace a conversation file. */
static void test_agent_state_refused_by_every_tool(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/.agent"), 0);
	assert_int_equal(agent_fs_mkdir("/lfs/.agent/conversations"), 0);
	put_text("/lfs/.agent/conversations/conv1.bin", "AGCV conversation");
	refused_by_every_tool(agent_spellings,
			      sizeof(agent_spellings) / sizeof(agent_spellings[0]),
			      storage_agent_refusal);
	assert_int_equal(get_file("/lfs/.agent/conversations/conv1.bin", buf, sizeof(buf)), 17);
	assert_memory_equal(buf, "AGCV conversation", 17);
	assert_false(path_exists("/lfs/.agent/conversations/" STORAGE_WRITE_STAGE_NAME));
	/* Leaving .agent with ".." is an ordinary path; so are look-alike names. */
	assert_int_equal(run_path(&tool_storage_stat, ".agent/../ok.txt"), 0);
	assert_int_equal(run_path(&tool_storage_stat, ".agents"), 0);
	assert_int_equal(run_path(&tool_storage_stat, ".agen"), 0);
	assert_int_equal(run_path(&tool_storage_stat, "agent"), 0);
	assert_int_equal(run_path(&tool_storage_stat, "x.agent"), 0);
	assert_int_equal(run_path(&tool_storage_stat, ". agent"), 0);
}

/* Staging and backup names, in every spelling FAT takes for the same file: a name in the
 * last place or on the way. (cwd, path, the name the refusal quotes.) */
static const char *const stage_spellings[][3] = {
	{"/lfs", STORAGE_WRITE_STAGE_NAME, ".agent_write.tmp"},
	{"/lfs", ".AGENT_WRITE.TMP", ".AGENT_WRITE.TMP"},
	{"/lfs", ".Agent_Write.Tmp", ".Agent_Write.Tmp"},
	{"/lfs", ".agent_write.tmp.", ".agent_write.tmp."},
	{"/lfs", ".agent_write.tmp ", ".agent_write.tmp "},
	{"/lfs", ".agent_write.tmp. .", ".agent_write.tmp. ."},
	{"/lfs", "wd/" STORAGE_PATCH_STAGE_NAME, ".agent_patch.tmp"},
	{"/lfs", "//wd//./.AGENT_PATCH.TMP", ".AGENT_PATCH.TMP"},
	{"/lfs", "wd/x/../.agent_patch.tmp", ".agent_patch.tmp"},
	{"/lfs/wd", ".agent_patch.tmp", ".agent_patch.tmp"},
	{"/lfs", ".agent_bak_0123abcd", ".agent_bak_0123abcd"},
	{"/lfs", ".AGENT_BAK_", ".AGENT_BAK_"},
	{"/lfs", "wd/.agent_bak_x/inner.txt", ".agent_bak_x"},
	{"/lfs", ".agent_write.tmp/x", ".agent_write.tmp"},
};

static void test_stage_names_refused_by_every_tool(void **state)
{
	char want[128];

	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/wd"), 0);
	put_text("/lfs/" STORAGE_WRITE_STAGE_NAME, "left by a power cut");
	for (size_t t = 0; t < TOOL_COUNT; t++) {
		for (size_t i = 0; i < sizeof(stage_spellings) / sizeof(stage_spellings[0]); i++) {
			test_cwd = stage_spellings[i][0];
			int rc = run_on(all_tools[t], stage_spellings[i][1]);

			snprintf(want, sizeof(want), "the name %s %s", stage_spellings[i][2],
				 storage_stage_refusal);
			if (rc != -EINVAL || strcmp(last_error, want) != 0) {
				fail_msg("%s cwd %s path %s: %d %s", all_tools[t]->name,
					 stage_spellings[i][0], stage_spellings[i][1], rc,
					 last_error);
			}
			assert_int_equal(result[0], '\0');
		}
	}
	test_cwd = "/lfs";
	assert_false(path_exists("/lfs/wd/" STORAGE_PATCH_STAGE_NAME));
	assert_false(path_exists("/lfs/.agent_bak_0123abcd"));
	/* One byte short of a reserved name, or one byte more, is an ordinary name. */
	assert_int_equal(run_path(&tool_storage_stat, ".agent_write.tm"), 0);
	assert_int_equal(run_path(&tool_storage_stat, ".agent_write.tmpx"), 0);
	assert_int_equal(run_path(&tool_storage_stat, ".agent_patch.tmp_"), 0);
	assert_int_equal(run_path(&tool_storage_stat, ".agent_bak"), 0);
	assert_int_equal(run_path(&tool_storage_stat, "x.agent_write.tmp"), 0);
	assert_int_equal(write_n_text("wd/.agent_write.tmpx", "ordinary"), 0);
}

/* storage_list leaves out the agent's own state and the settings store, and only entries it
 * shows count towards its bound; storage_search neither reads nor counts them. */
static void test_list_and_search_hide_agent_state(void **state)
{
	char path[64];

	(void)state;
	assert_int_equal(agent_settings_set("agent/key", "sk-secret", 9), 0); /* /lfs/.settings */
	assert_int_equal(agent_fs_mkdir("/lfs/.agent"), 0);
	put_text("/lfs/.agent/conv1.bin", "sk-secret in a conversation");
	put_text("/lfs/" STORAGE_WRITE_STAGE_NAME, "sk-secret staged");
	put_text("/lfs/.AGENT_PATCH.TMP", "sk-secret staged");
	put_text("/lfs/.agent_bak_12345678", "sk-secret backup");
	put_text("/lfs/notes.txt", "nothing secret");
	assert_int_equal(run_path(&tool_storage_list, "/lfs"), 0);
	assert_string_equal(result, "{\"path\":\"/lfs\",\"entries\":[{\"name\":\"notes.txt\","
				    "\"type\":\"file\",\"size\":14}],\"count\":1,"
				    "\"truncated\":false}");
	args_begin();
	args_str("path", "/lfs", 4);
	args_str("query", "sk-secret", 9);
	assert_int_equal(args_run(&tool_storage_search), 0);
	assert_non_null(strstr(result, "\"matches\":[]"));
	assert_non_null(strstr(result, "\"files_scanned\":1,"));
	/* The bound: LIST_MAX shown entries beside the hidden ones are not truncated (N), one more
	 * is (N + 1). */
	for (int i = 1; i < CONFIG_AGENT_STORAGE_LIST_MAX; i++) {
		snprintf(path, sizeof(path), "/lfs/f%02d.txt", i);
		put_text(path, "x");
	}
	assert_int_equal(run_path(&tool_storage_list, "/lfs"), 0);
	assert_int_equal(member_int("count"), CONFIG_AGENT_STORAGE_LIST_MAX);
	assert_false(member_bool("truncated"));
	assert_null(strstr(result, ".agent"));
	assert_null(strstr(result, ".settings"));
	put_text("/lfs/one-more.txt", "x");
	assert_int_equal(run_path(&tool_storage_list, "/lfs"), 0);
	assert_int_equal(member_int("count"), CONFIG_AGENT_STORAGE_LIST_MAX);
	assert_true(member_bool("truncated"));
}

/* The simulator's flash image seen through an SD folder that holds it (--sd at the image's
 * folder): every tool refuses it, by any name, case or link; list and search leave it out;
 * and the SD backend itself never opens, truncates, removes or renames it. */
static void test_flash_image_through_the_sd_folder(void **state)
{
	static const char *const spellings[] = {
		"/SD:/flash.bin", "/SD:/FLASH.BIN", "/SD:/./sub/../flash.bin", "/SD://Flash.Bin",
		"/SD:/link.bin",  "/SD:/hard.bin",  "/SD:/dirlink/flash.bin",
	};
	char host[160];
	struct agent_file *file = NULL;
	struct stat before;
	struct stat after;

	(void)state;
	assert_int_equal(agent_settings_set("agent/key", "sk-secret", 9), 0);
	assert_int_equal(stat(image_path, &before), 0);
	assert_int_equal(posix_sd_mount(scratch_dir), 0);
	/* Links relative to the folder: one to the image, one to the folder itself. */
	snprintf(host, sizeof(host), "%s/link.bin", scratch_dir);
	assert_int_equal(symlink("flash.bin", host), 0);
	snprintf(host, sizeof(host), "%s/hard.bin", scratch_dir);
	assert_int_equal(link(image_path, host), 0);
	snprintf(host, sizeof(host), "%s/dirlink", scratch_dir);
	assert_int_equal(symlink(".", host), 0);
	snprintf(host, sizeof(host), "%s/sub", scratch_dir);
	assert_int_equal(mkdir(host, 0755), 0);
	snprintf(host, sizeof(host), "%s/notes.txt", scratch_dir);
	put_text("/SD:/notes.txt", "sk-secret is not here");

	for (size_t t = 0; t < TOOL_COUNT; t++) {
		for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
			int rc = run_on(all_tools[t], spellings[i]);

			if (rc != -EACCES || strcmp(last_error, storage_settings_refusal) != 0) {
				fail_msg("%s path %s: %d %s", all_tools[t]->name, spellings[i], rc,
					 last_error);
			}
			assert_int_equal(result[0], '\0');
		}
	}
	/* The backend: no handle, no truncation, no removal, no new name. */
	assert_int_equal(agent_fs_open(&file, "/SD:/flash.bin", AGENT_FS_O_READ), -EACCES);
	assert_int_equal(agent_fs_open(&file, "/SD:/link.bin",
				       AGENT_FS_O_WRITE | AGENT_FS_O_CREATE | AGENT_FS_O_TRUNC),
			 -EACCES);
	assert_int_equal(agent_fs_unlink("/SD:/flash.bin"), -EACCES);
	assert_int_equal(agent_fs_unlink("/SD:/hard.bin"), -EACCES);
	assert_int_equal(agent_fs_rename("/SD:/flash.bin", "/SD:/moved.bin"), -EACCES);
	assert_int_equal(stat(image_path, &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_false(path_exists("/SD:/moved.bin"));
	/* list of the folder shows neither the image nor its links; search reads one file. */
	assert_int_equal(run_path(&tool_storage_list, "/SD:"), 0);
	assert_null(strstr(result, "flash.bin"));
	assert_null(strstr(result, "link.bin"));
	assert_null(strstr(result, "hard.bin"));
	assert_non_null(strstr(result, "\"name\":\"notes.txt\""));
	args_begin();
	args_str("path", "/SD:", 4);
	args_str("query", "sk-secret", 9);
	assert_int_equal(args_run(&tool_storage_search), 0);
	assert_non_null(strstr(result, "notes.txt"));
	assert_null(strstr(result, "flash.bin"));
	/* Other files of the folder are ordinary: the image's identity is what is refused. */
	assert_int_equal(write_n_text("/SD:/flash2.bin", "mine"), 0);
	assert_int_equal(agent_fs_unlink("/SD:/flash2.bin"), 0);

	assert_int_equal(posix_sd_unmount(), 0);
	for (size_t i = 0; i < 5; i++) {
		static const char *const made[] = {"link.bin", "hard.bin", "dirlink", "notes.txt",
						   "sub"};

		snprintf(host, sizeof(host), "%s/%s", scratch_dir, made[i]);
		assert_int_equal(i == 4 ? rmdir(host) : unlink(host), 0);
	}
}

/* ---- storage_list ------------------------------------------------------------------------ */

static void list_n(int n)
{
	char dir[32];
	char path[64];

	snprintf(dir, sizeof(dir), "/lfs/d%d", n);
	assert_int_equal(agent_fs_mkdir(dir), 0);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%02d.txt", dir, i);
		put_text(path, i == 0 ? "" : "abc");
	}
	assert_int_equal(run_path(&tool_storage_list, dir), 0);
	int want = n < CONFIG_AGENT_STORAGE_LIST_MAX ? n : CONFIG_AGENT_STORAGE_LIST_MAX;

	assert_int_equal(member_int("count"), want);
	assert_int_equal(count_in_result("\"type\":\"file\""), want);
	assert_int_equal(member_bool("truncated"), n > CONFIG_AGENT_STORAGE_LIST_MAX);
}

static void test_list_bounds(void **state)
{
	(void)state;
	assert_int_equal(CONFIG_AGENT_STORAGE_LIST_MAX, 16);
	list_n(15);
	list_n(16);
	list_n(17);
	list_n(0);
}

static void test_list_entries(void **state)
{
	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/a"), 0);
	assert_int_equal(agent_fs_mkdir("/lfs/a/inner"), 0);
	put_text("/lfs/a/one.txt", "12345");
	test_cwd = "/lfs/a";
	assert_int_equal(run_path(&tool_storage_list, "."), 0);
	assert_string_equal(result, "{\"path\":\"/lfs/a\",\"entries\":[{\"name\":\"inner\","
				    "\"type\":\"dir\"},{\"name\":\"one.txt\",\"type\":\"file\","
				    "\"size\":5}],\"count\":2,\"truncated\":false}");
	assert_int_equal(run_path(&tool_storage_list, "one.txt"), -ENOTDIR);
	assert_non_null(strstr(last_error, "is a file, not a directory"));
	assert_int_equal(run_path(&tool_storage_list, "missing"), -ENOENT);
	assert_string_equal(last_error,
			    "cannot list /lfs/a/missing: no such file or directory (-2)");
}

static void test_list_long_names_stay_in_bound(void **state)
{
	char path[300];

	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/l"), 0);
	for (int i = 0; i < 16; i++) {
		int n = snprintf(path, sizeof(path), "/lfs/l/%02d", i);

		memset(path + n, 'x', 240);
		path[n + 240] = '\0';
		put_text(path, "");
	}
	assert_int_equal(run_path(&tool_storage_list, "/lfs/l"), 0);
	assert_true(member_bool("truncated"));
	assert_true(member_int("count") >= 10 && member_int("count") < 16);
}

/* ---- storage_stat ------------------------------------------------------------------------ */

static void test_stat(void **state)
{
	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/s"), 0);
	put_text("/lfs/s/mandel.py", "print(1)\n");
	assert_int_equal(run_path(&tool_storage_stat, "s/mandel.py"), 0);
	assert_string_equal(result, "{\"path\":\"s/mandel.py\",\"resolved\":\"/lfs/s/mandel.py\","
				    "\"exists\":true,\"type\":\"file\",\"size\":9}");
	assert_int_equal(run_path(&tool_storage_stat, "/lfs/s"), 0);
	assert_string_equal(result, "{\"path\":\"/lfs/s\",\"resolved\":\"/lfs/s\",\"exists\":true,"
				    "\"type\":\"dir\"}");
	assert_int_equal(run_path(&tool_storage_stat, "nothing.lua"), 0);
	assert_string_equal(result, "{\"path\":\"nothing.lua\",\"resolved\":\"/lfs/nothing.lua\","
				    "\"exists\":false}");
	/* A file where a directory is expected: no such path. */
	assert_int_equal(run_path(&tool_storage_stat, "s/mandel.py/x"), 0);
	assert_false(member_bool("exists"));
	/* Outside the mount. */
	assert_int_equal(run_path(&tool_storage_stat, "/elsewhere/x"), 0);
	assert_false(member_bool("exists"));
}

/* ---- storage_read ------------------------------------------------------------------------ */

static void read_n(size_t n)
{
	make_text(big, n, (unsigned int)n);
	put_file("/lfs/r.txt", big, n);
	assert_int_equal(run_path(&tool_storage_read, "r.txt"), 0);
	size_t want = n < CONFIG_AGENT_STORAGE_IO_MAX_LEN ? n : CONFIG_AGENT_STORAGE_IO_MAX_LEN;

	assert_int_equal(member_int("size"), (long long)n);
	assert_int_equal(member_int("bytes"), (long long)want);
	assert_int_equal(member_bool("truncated"), n > CONFIG_AGENT_STORAGE_IO_MAX_LEN);
	assert_int_equal(member("next_offset") != NULL, n > CONFIG_AGENT_STORAGE_IO_MAX_LEN);
	/* The content is the file's start: letters and "\n" escapes only. */
	const char *content = member("content");
	size_t k = 1;

	assert_non_null(content);
	for (size_t i = 0; i < want; i++, k++) {
		if (big[i] == '\n') {
			assert_int_equal(content[k], '\\');
			k++;
			assert_int_equal(content[k], 'n');
		} else {
			assert_int_equal(content[k], big[i]);
		}
	}
	assert_int_equal(content[k], '"');
}

static void test_read_bounds(void **state)
{
	(void)state;
	assert_int_equal(CONFIG_AGENT_STORAGE_IO_MAX_LEN, 3072);
	read_n(3071);
	read_n(3072);
	read_n(3073);
	read_n(0);
	read_n(50000);
}

static void test_read_exact_escapes(void **state)
{
	(void)state;
	put_text("/lfs/e.txt", "say \"hi\"\\\t\xc3\xa9\xe2\x80\xa8\x01\n");
	assert_int_equal(run_path(&tool_storage_read, "e.txt"), 0);
	assert_string_equal(result,
			    "{\"path\":\"/lfs/e.txt\",\"size\":17,\"content\":"
			    "\"say \\\"hi\\\"\\\\\\t"
			    "\xc3\xa9\\u2028\\u0001\\n\",\"bytes\":17,\"truncated\":false}");
}

static void test_read_refuses_non_text(void **state)
{
	(void)state;
	put_file("/lfs/nul.bin", "ab\0cd", 5);
	assert_int_equal(run_path(&tool_storage_read, "nul.bin"), -EILSEQ);
	assert_string_equal(last_error, "/lfs/nul.bin is not a text file (a NUL byte at byte 2); "
					"storage_read reads UTF-8 text only");
	put_file("/lfs/bad.txt", "ok\xff", 3);
	assert_int_equal(run_path(&tool_storage_read, "bad.txt"), -EILSEQ);
	assert_non_null(strstr(last_error, "invalid UTF-8 at byte 2"));
	/* A sequence cut by the end of the file is not text either. */
	put_file("/lfs/cut.txt", "ok\xc3", 3);
	assert_int_equal(run_path(&tool_storage_read, "cut.txt"), -EILSEQ);
	/* But one cut by the 3072-byte bound is held back for the next range. */
	memset(big, 'a', 3071);
	memcpy(big + 3071, "\xe2\x82\xac tail", 8);
	put_file("/lfs/euro.txt", big, 3079);
	assert_int_equal(run_path(&tool_storage_read, "euro.txt"), 0);
	assert_int_equal(member_int("bytes"), 3071);
	assert_int_equal(member_int("next_offset"), 3071);
	assert_true(member_bool("truncated"));

	assert_int_equal(agent_fs_mkdir("/lfs/dir"), 0);
	assert_int_equal(run_path(&tool_storage_read, "dir"), -EISDIR);
	assert_non_null(strstr(last_error, "is a directory"));
	assert_int_equal(run_path(&tool_storage_read, "none.txt"), -ENOENT);
	assert_string_equal(last_error,
			    "cannot read /lfs/none.txt: no such file or directory (-2)");
}

static void test_read_escaping_stops_at_result_bound(void **state)
{
	(void)state;
	memset(big, '\n', 3072);
	put_file("/lfs/nl.txt", big, 3072);
	assert_int_equal(run_path(&tool_storage_read, "nl.txt"), 0);
	long long bytes = member_int("bytes");

	assert_true(bytes > 1500 && bytes < 2048);
	assert_true(member_bool("truncated"));
	assert_int_equal(member_int("next_offset"), bytes);
	assert_int_equal(count_in_result("\\n"), (int)bytes);

	memset(big, 0x01, 3072);
	put_file("/lfs/ctl.txt", big, 3072);
	assert_int_equal(run_path(&tool_storage_read, "ctl.txt"), 0);
	assert_true(member_int("bytes") > 500 && member_int("bytes") < 683);
	assert_true(member_bool("truncated"));
}

/* ---- storage_write ----------------------------------------------------------------------- */

static int write_n(const char *path, const char *data, size_t n)
{
	args_begin();
	args_str("path", path, strlen(path));
	args_str("content", data, n);
	return args_run(&tool_storage_write);
}

static void test_write_bounds(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	char got[SHA256_HEX_LEN + 1];

	(void)state;
	for (size_t n = 3071; n <= 3073; n++) {
		make_text(big, n, (unsigned int)n + 1u);
		int rc = write_n("w.txt", big, n);

		if (n > CONFIG_AGENT_STORAGE_IO_MAX_LEN) {
			assert_int_equal(rc, ARGS_REFUSED);
			assert_string_equal(last_error, "field content is longer than 3072 bytes");
			/* The previous content stays. */
			assert_int_equal(get_file("/lfs/w.txt", back, sizeof(back)), 3072);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(member_int("bytes"), (long long)n);
		assert_int_equal(member_bool("created"), n == 3071);
		hex_of(big, n, hex);
		assert_string_equal(member_str("sha256", got, sizeof(got)), hex);
		assert_int_equal(get_file("/lfs/w.txt", back, sizeof(back)), (int)n);
		assert_memory_equal(back, big, n);
	}
	/* An empty file, and no staging file left behind. */
	assert_int_equal(write_n("/lfs/w.txt", "", 0), 0);
	assert_int_equal(get_file("/lfs/w.txt", back, sizeof(back)), 0);
	assert_false(path_exists("/lfs/" STORAGE_WRITE_STAGE_NAME));
}

static void test_write_errors(void **state)
{
	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/wd"), 0);
	assert_int_equal(write_n("wd", "x", 1), -EISDIR);
	assert_int_equal(write_n("nodir/x.txt", "x", 1), -ENOENT);
	assert_string_equal(last_error, "cannot write /lfs/nodir/x.txt: its directory does not "
					"exist");
	assert_int_equal(write_n("nul.txt", "a\0b", 3), -EINVAL);
	assert_non_null(strstr(last_error, "NUL"));
	assert_false(path_exists("/lfs/nul.txt"));
	assert_int_equal(write_n(STORAGE_WRITE_STAGE_NAME, "x", 1), -EINVAL);
	assert_int_equal(write_n("wd/" STORAGE_PATCH_STAGE_NAME, "x", 1), -EINVAL);
	assert_non_null(strstr(last_error, "reserved"));
	/* Writing into a subdirectory and over a file. */
	assert_int_equal(write_n("wd/a.txt", "one", 3), 0);
	assert_true(member_bool("created"));
	assert_int_equal(write_n("/lfs/wd/a.txt", "two!", 4), 0);
	assert_false(member_bool("created"));
	assert_int_equal(get_file("/lfs/wd/a.txt", back, sizeof(back)), 4);
	assert_memory_equal(back, "two!", 4);
	assert_false(path_exists("/lfs/wd/" STORAGE_WRITE_STAGE_NAME));
}

/* ---- storage_read_range ------------------------------------------------------------------ */

static int range(const char *path, long long offset, long long length)
{
	args_begin();
	args_str("path", path, strlen(path));
	args_int("offset", offset);
	if (length >= 0) {
		args_int("length", length);
	}
	return args_run(&tool_storage_read_range);
}

static void test_range_bounds(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	char got[SHA256_HEX_LEN + 1];

	(void)state;
	assert_int_equal(CONFIG_AGENT_STORAGE_RANGE_MAX_LEN, 2048);
	memset(big, 'z', 5000);
	put_file("/lfs/g.txt", big, 5000);
	hex_of(big, 5000, hex);
	for (long long len = 2047; len <= 2049; len++) {
		int rc = range("g.txt", 100, len);

		if (len > CONFIG_AGENT_STORAGE_RANGE_MAX_LEN) {
			assert_int_equal(rc, ARGS_REFUSED);
			assert_string_equal(last_error, "field length must be at most 2048");
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(member_int("length"), len);
		assert_int_equal(member_int("next_offset"), 100 + len);
		assert_false(member_bool("eof"));
		assert_false(member_bool("truncated"));
		assert_string_equal(member_str("sha256", got, sizeof(got)), hex);
		assert_int_equal(member_int("size"), 5000);
	}
	/* The default length is the bound. */
	assert_int_equal(range("g.txt", 0, -1), 0);
	assert_int_equal(member_int("length"), 2048);
	/* The end: a short last range, an empty one at the size, none past it. */
	assert_int_equal(range("g.txt", 4000, -1), 0);
	assert_int_equal(member_int("length"), 1000);
	assert_int_equal(member_int("next_offset"), 5000);
	assert_true(member_bool("eof"));
	assert_false(member_bool("truncated"));
	assert_int_equal(range("g.txt", 5000, -1), 0);
	assert_int_equal(member_int("length"), 0);
	assert_true(member_bool("eof"));
	assert_int_equal(range("g.txt", 5001, -1), -EINVAL);
	assert_string_equal(last_error, "offset 5001 is past the end of /lfs/g.txt (5000 bytes)");
	assert_int_equal(range("g.txt", -1, -1), ARGS_REFUSED);
	assert_int_equal(range("g.txt", 0, 0), ARGS_REFUSED);
	/* An empty file. */
	put_file("/lfs/empty.txt", "", 0);
	assert_int_equal(range("empty.txt", 0, -1), 0);
	assert_string_equal(member_str("sha256", got, sizeof(got)),
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_true(member_bool("eof"));
}

static void test_range_exact_result(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	char want[512];

	(void)state;
	put_text("/lfs/x.txt", "line one\nline \"two\"\n");
	hex_of("line one\nline \"two\"\n", 20, hex);
	assert_int_equal(range("x.txt", 5, 9), 0);
	snprintf(want, sizeof(want),
		 "{\"path\":\"/lfs/x.txt\",\"size\":20,\"sha256\":\"%s\",\"offset\":5,\"content\":"
		 "\"one\\nline \",\"length\":9,\"next_offset\":14,\"eof\":false,"
		 "\"truncated\":false}",
		 hex);
	assert_string_equal(result, want);
}

static void test_range_utf8_and_binary(void **state)
{
	(void)state;
	/* "a€b": the euro sign is bytes 1..3. */
	put_text("/lfs/u.txt", "a\xe2\x82\xac" "b");
	assert_int_equal(range("u.txt", 2, -1), -EINVAL);
	assert_string_equal(last_error, "offset 2 is inside a UTF-8 character; it starts at 1");
	assert_int_equal(range("u.txt", 3, -1), -EINVAL);
	assert_int_equal(range("u.txt", 1, -1), 0);
	assert_int_equal(member_int("length"), 4);
	/* A range that cuts the character stops before it. */
	assert_int_equal(range("u.txt", 0, 2), 0);
	assert_int_equal(member_int("length"), 1);
	assert_int_equal(member_int("next_offset"), 1);
	assert_true(member_bool("truncated"));
	assert_non_null(strstr(result, "\"reason\":\"character_boundary\""));
	/* Text up to a NUL byte is returned; the NUL itself is refused. */
	put_file("/lfs/b.bin", "text\0more", 9);
	assert_int_equal(range("b.bin", 0, -1), 0);
	assert_int_equal(member_int("length"), 4);
	assert_non_null(strstr(result, "\"reason\":\"not_text\""));
	assert_int_equal(range("b.bin", 4, -1), -EILSEQ);
	assert_non_null(strstr(last_error, "not text at byte 4 (a NUL byte)"));
	assert_int_equal(agent_fs_mkdir("/lfs/rd"), 0);
	assert_int_equal(range("rd", 0, -1), -EISDIR);
	assert_int_equal(range("nope", 0, -1), -ENOENT);
}

static void test_range_escaping_stops_at_result_bound(void **state)
{
	size_t offset = 0;
	int calls = 0;

	(void)state;
	for (int i = 0; i < 6000; i++) {
		big[i] = (i % 3 == 0) ? '"' : '\n';
	}
	put_file("/lfs/q.txt", big, 6000);
	/* Reading on from next_offset covers the file with every range cut at the result. */
	while (offset < 6000) {
		assert_int_equal(range("q.txt", (long long)offset, -1), 0);
		long long len = member_int("length");

		assert_true(len > 0);
		if (offset + (size_t)len < 6000) {
			assert_true(member_bool("truncated"));
			assert_non_null(strstr(result, "\"reason\":\"result_full\""));
			assert_true(len < 2048);
		}
		assert_int_equal(member_int("next_offset"), (long long)offset + len);
		offset += (size_t)len;
		calls++;
	}
	assert_true(member_bool("eof"));
	assert_true(calls >= 3);
}

/* ---- storage_search ---------------------------------------------------------------------- */

static int search(const char *path, const char *query)
{
	args_begin();
	args_str("path", path, strlen(path));
	args_str("query", query, strlen(query));
	return args_run(&tool_storage_search);
}

static void test_search_matches(void **state)
{
	(void)state;
	assert_int_equal(agent_fs_mkdir("/lfs/src"), 0);
	assert_int_equal(agent_fs_mkdir("/lfs/src/lib"), 0);
	assert_int_equal(agent_fs_mkdir("/lfs/src/.ssh"), 0);
	put_text("/lfs/src/main.py", "import gfx\n\ngfx.WHITE = 1\nprint('no')\n");
	put_text("/lfs/src/lib/util.lua", "-- helper\nlocal x = GFX.black\r\n");
	put_text("/lfs/src/.ssh/id", "gfx secret\n");
	put_file("/lfs/src/blob.bin", "gfx\0gfx", 7);
	assert_int_equal(search("src", "gfx"), 0);
	assert_int_equal(member_int("match_count"), 3);
	assert_non_null(strstr(result, "{\"path\":\"/lfs/src/main.py\",\"line\":1,\"excerpt\":"
					"\"import gfx\"}"));
	assert_non_null(strstr(result, "{\"path\":\"/lfs/src/main.py\",\"line\":3,\"excerpt\":"
					"\"gfx.WHITE = 1\"}"));
	assert_non_null(strstr(result, "{\"path\":\"/lfs/src/lib/util.lua\",\"line\":2,"
					"\"excerpt\":\"local x = GFX.black\"}"));
	assert_null(strstr(result, "secret"));
	assert_int_equal(member_int("skipped_binary"), 1);
	assert_false(member_bool("truncated"));
	assert_null(member("limit"));
	/* One file; a miss; names are not searched. */
	assert_int_equal(search("/lfs/src/main.py", "PRINT("), 0);
	assert_int_equal(member_int("match_count"), 1);
	assert_int_equal(member_int("paths_visited"), 1);
	assert_int_equal(search("src", "util"), 0);
	assert_int_equal(member_int("match_count"), 0);
	/* Bad queries and paths. */
	assert_int_equal(search("src", "a\nb"), -EINVAL);
	assert_int_equal(search("src", ""), ARGS_REFUSED);
	assert_int_equal(search("nowhere", "x"), -ENOENT);
}

static void test_search_excerpt(void **state)
{
	char line[600];
	char want[200];

	(void)state;
	/* A long line: 40 bytes before the match, the match, 60 after. */
	memset(line, '.', 500);
	memcpy(line + 300, "NEEDLE", 6);
	line[500] = '\n';
	put_file("/lfs/long.txt", line, 501);
	assert_int_equal(search("long.txt", "needle"), 0);
	memset(want, '.', 106);
	memcpy(want + 40, "NEEDLE", 6);
	want[106] = '\0';
	assert_string_equal(member_str("excerpt", line, sizeof(line)), want);
	/* A match that straddles two read chunks (512 bytes) is found. */
	memset(big, 'x', 1000);
	memcpy(big + 509, "needle", 6);
	put_file("/lfs/straddle.txt", big, 1000);
	assert_int_equal(search("straddle.txt", "needle"), 0);
	assert_int_equal(member_int("match_count"), 1);
	/* Overlapping prefixes (KMP): "aab" in "aaab". */
	put_text("/lfs/kmp.txt", "xaaab\n");
	assert_int_equal(search("kmp.txt", "aab"), 0);
	assert_int_equal(member_int("match_count"), 1);
	/* An excerpt never cuts a UTF-8 character. */
	memset(line, 0, sizeof(line));
	for (int i = 0; i < 30; i++) {
		memcpy(line + 2 * i, "\xc3\xa9", 2);
	}
	strcat(line, "KEY");
	for (int i = 0; i < 40; i++) {
		strcat(line, "\xe2\x82\xac");
	}
	put_text("/lfs/utf.txt", line);
	assert_int_equal(search("utf.txt", "key"), 0);
	assert_null(strstr(result, "\xef\xbf\xbd")); /* no U+FFFD */
}

static void search_paths_n(int total)
{
	char dir[32];
	char path[64];

	/* The directory itself and total - 1 files below it. */
	snprintf(dir, sizeof(dir), "/lfs/p%d", total);
	assert_int_equal(agent_fs_mkdir(dir), 0);
	for (int i = 0; i < total - 1; i++) {
		snprintf(path, sizeof(path), "%s/%02d.txt", dir, i);
		put_text(path, "nothing here\n");
	}
	assert_int_equal(search(dir, "needle"), 0);
	int want = total < CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX
			   ? total
			   : CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX;

	assert_int_equal(member_int("paths_visited"), want);
	assert_int_equal(member_int("files_scanned"), want - 1);
	assert_int_equal(member_bool("truncated"), total > CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX);
	if (total > CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX) {
		assert_non_null(strstr(result, "\"limit\":\"paths\""));
	}
}

static void test_search_paths_bound(void **state)
{
	(void)state;
	assert_int_equal(CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX, 32);
	search_paths_n(31);
	search_paths_n(32);
	search_paths_n(33);
}

static void test_search_paths_count_directories(void **state)
{
	char path[128];

	(void)state;
	/* Nested directories are counted as they are found, breadth first. */
	assert_int_equal(agent_fs_mkdir("/lfs/t"), 0);
	strcpy(path, "/lfs/t");
	for (int depth = 0; depth < 40; depth++) {
		strcat(path, "/d");
		assert_int_equal(agent_fs_mkdir(path), 0);
	}
	assert_int_equal(search("/lfs/t", "x"), 0);
	assert_int_equal(member_int("paths_visited"), 32);
	assert_non_null(strstr(result, "\"limit\":\"paths\""));
}

static void search_scan_n(size_t n)
{
	/* The needle at the very end: found only when every byte is scanned. */
	memset(big, 'x', n);
	memcpy(big + n - 6, "needle", 6);
	put_file("/lfs/scan.txt", big, n);
	assert_int_equal(search("scan.txt", "needle"), 0);
	bool over = n > CONFIG_AGENT_STORAGE_SEARCH_SCAN_BYTES;

	assert_int_equal(member_int("bytes_scanned"),
			 over ? CONFIG_AGENT_STORAGE_SEARCH_SCAN_BYTES : (long long)n);
	assert_int_equal(member_int("match_count"), over ? 0 : 1);
	assert_int_equal(member_bool("truncated"), over);
	if (over) {
		assert_non_null(strstr(result, "\"limit\":\"scan_bytes\""));
	}
}

static void test_search_scan_bound(void **state)
{
	(void)state;
	assert_int_equal(CONFIG_AGENT_STORAGE_SEARCH_SCAN_BYTES, 65536);
	search_scan_n(65535);
	search_scan_n(65536);
	search_scan_n(65537);
}

static void test_search_scan_bound_across_files(void **state)
{
	(void)state;
	/* Two files of 40000 bytes: the second is cut at 25536. */
	assert_int_equal(agent_fs_mkdir("/lfs/two"), 0);
	memset(big, 'y', 40000);
	put_file("/lfs/two/a.txt", big, 40000);
	put_file("/lfs/two/b.txt", big, 40000);
	assert_int_equal(search("two", "needle"), 0);
	assert_int_equal(member_int("bytes_scanned"), 65536);
	assert_int_equal(member_int("files_scanned"), 2);
	assert_non_null(strstr(result, "\"limit\":\"scan_bytes\""));
}

static void search_matches_n(int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		len += (size_t)sprintf(big + len, "line %d has the word Needle twice: needle\n", i);
	}
	put_file("/lfs/m.txt", big, len);
	assert_int_equal(search("m.txt", "needle"), 0);
	int want = n < CONFIG_AGENT_STORAGE_SEARCH_MATCHES_MAX
			   ? n
			   : CONFIG_AGENT_STORAGE_SEARCH_MATCHES_MAX;

	/* One match per line. */
	assert_int_equal(member_int("match_count"), want);
	assert_int_equal(count_in_result("\"line\":"), want);
	assert_int_equal(member_bool("truncated"), n > CONFIG_AGENT_STORAGE_SEARCH_MATCHES_MAX);
	if (n > CONFIG_AGENT_STORAGE_SEARCH_MATCHES_MAX) {
		assert_non_null(strstr(result, "\"limit\":\"matches\""));
	}
}

static void test_search_matches_bound(void **state)
{
	(void)state;
	assert_int_equal(CONFIG_AGENT_STORAGE_SEARCH_MATCHES_MAX, 12);
	search_matches_n(11);
	search_matches_n(12);
	search_matches_n(13);
}

static void test_search_result_bound(void **state)
{
	char path[300];
	char line[300];

	(void)state;
	/* Long paths and excerpts full of escapes: the result stops before its bound. */
	int n = snprintf(path, sizeof(path), "/lfs/");

	memset(path + n, 'p', 200);
	path[n + 200] = '\0';
	assert_int_equal(agent_fs_mkdir(path), 0);
	strcat(path, "/f.txt");
	size_t len = 0;

	for (int i = 0; i < 12; i++) {
		memset(line, '\x02', 40);
		memcpy(line + 40, "needle", 6);
		memset(line + 46, '\x03', 60);
		line[106] = '\n';
		memcpy(big + len, line, 107);
		len += 107;
	}
	put_file(path, big, len);
	assert_int_equal(search("/lfs", "needle"), 0);
	assert_true(member_bool("truncated"));
	assert_non_null(strstr(result, "\"limit\":\"result\""));
	assert_true(member_int("match_count") >= 1);
	assert_true(strlen(result) <= CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
}

static void test_search_cancelled(void **state)
{
	(void)state;
	put_text("/lfs/c.txt", "needle\n");
	agent_cancel_raise(&test_cancel);
	assert_int_equal(search("c.txt", "needle"), -ECANCELED);
	assert_string_equal(last_error, "cancelled");
	assert_int_equal(range("c.txt", 0, -1), -ECANCELED);
	assert_int_equal(run_path(&tool_storage_read, "c.txt"), -ECANCELED);
	agent_cancel_reset(&test_cancel);
}

/* ---- Definitions --------------------------------------------------------------------------- */

static void test_definitions(void **state)
{
	static const struct {
		const char *name;
		enum tool_risk risk;
		uint16_t group;
	} want[] = {
		{"storage_list", TOOL_RISK_READ, TOOL_GROUP_FS_LIST},
		{"storage_stat", TOOL_RISK_READ, TOOL_GROUP_FS_STAT},
		{"storage_read", TOOL_RISK_SENSITIVE, TOOL_GROUP_FS_READ},
		{"storage_write", TOOL_RISK_MUTATING, TOOL_GROUP_FS_WRITE},
		{"storage_search", TOOL_RISK_SENSITIVE, TOOL_GROUP_FS_READ},
		{"storage_read_range", TOOL_RISK_SENSITIVE, TOOL_GROUP_FS_READ},
		{"storage_patch", TOOL_RISK_MUTATING, TOOL_GROUP_FS_UPDATE},
	};

	(void)state;
	for (size_t i = 0; i < TOOL_COUNT; i++) {
		const struct tool_def *def = all_tools[i];

		assert_string_equal(def->name, want[i].name);
		assert_int_equal(def->risk, want[i].risk);
		assert_int_equal(def->groups, want[i].group);
		assert_int_equal(def->domain, TOOL_DOMAIN_STORAGE);
		assert_non_null(def->exec);
		assert_non_null(def->description);
		assert_non_null(def->output);
		assert_non_null(def->keywords);
		assert_true(def->param_count >= 1 && def->param_count <= TOOL_PARAMS_MAX);
		assert_string_equal(def->params[0].name, "path");
		/* Registered, when the family is built in. */
		assert_ptr_equal(tool_registry_find(def->name), def);
	}
}

/* The five largest storage schemas with the bootstrap tools fit the descriptor buffer. */
static void test_schemas_fit_one_turn(void **state)
{
	static char descriptors[CONFIG_AGENT_TOOL_DESCRIPTOR_BUF_SIZE];
	const struct tool_def *largest[] = {
		&tool_storage_patch,  &tool_storage_read_range, &tool_storage_search,
		&tool_storage_write, &tool_storage_stat,
	};
	struct tool_session session;
	struct json_writer w;

	(void)state;
	assert_int_equal(sizeof(largest) / sizeof(largest[0]), CONFIG_AGENT_TOOL_DISCOVERED_MAX);
	tool_session_init(&session, AGENT_TOOLS_CONFIRM, "");
	tool_session_select(&session, largest, CONFIG_AGENT_TOOL_DISCOVERED_MAX);
	for (int protocol = 0; protocol < 2; protocol++) {
		jw_init(&w, descriptors, sizeof(descriptors));
		tool_session_write_tools(&session,
					 protocol ? AGENT_PROTOCOL_CHAT : AGENT_PROTOCOL_RESPONSES,
					 &w);
		int len = jw_finish(&w);

		print_message("8 tools with the 5 largest storage schemas: %d of %d bytes\n", len,
			      CONFIG_AGENT_TOOL_DESCRIPTOR_BUF_SIZE);
		assert_true(len > 0);
		assert_non_null(strstr(descriptors, "\"storage_patch\""));
		int tools = 0;

		for (const char *p = descriptors; (p = strstr(p, "\"type\":\"function\"")) != NULL;
		     p++) {
			tools++;
		}
		print_message("(%d tools advertised)\n", tools);
		assert_true(tools >= CONFIG_AGENT_TOOL_DISCOVERED_MAX + 2);
	}
}

static void test_discovery_picks_stat_for_existence(void **state)
{
	static const char *const queries[] = {
		"check whether a file exists",
		"does the config file exist",
		"is the script present or missing",
	};
	struct tool_session session;

	(void)state;
	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		tool_session_init(&session, AGENT_TOOLS_CONFIRM, "no path in this prompt");
		struct tool_ctx ctx = {.cwd = "/lfs", .session = &session};
		struct json_writer w;
		char why[TOOL_ERROR_MAX + 1];

		args_begin();
		args_str("query", queries[i], strlen(queries[i]));
		jw_object_end(&args_w);
		int n = jw_finish(&args_w);

		assert_int_equal(tool_args_parse(&tool_tool_search, args_json, (size_t)n,
						 &tool_args_buf, why, sizeof(why)),
				 0);
		jw_init(&w, result, sizeof(result));
		assert_int_equal(tool_tool_search.exec(&ctx, &tool_args_buf, &w), 0);
		assert_true(jw_finish(&w) > 0);
		if (strncmp(result, "{\"activated\":[{\"name\":\"storage_stat\"", 36) != 0) {
			fail_msg("query \"%s\": %s", queries[i], result);
		}
	}
}

/* Every errno the storage tools name, and what they say of the others. */
static void test_errno_texts(void **state)
{
	static const struct {
		int err;
		const char *text;
	} named[] = {
		{-ENOENT, "no such file or directory"},
		{-EEXIST, "already exists"},
		{-ENOTDIR, "a name on the way is not a directory"},
		{-EISDIR, "is a directory"},
		{-ENOTEMPTY, "directory not empty"},
		{-ENOSPC, "no space left on the volume"},
		{-EFBIG, "file too large for the filesystem"},
		{-ENAMETOOLONG, "name too long for the filesystem"},
		{-EIO, "input/output error"},
		{-EILSEQ, "the filesystem is corrupt"},
		{-EACCES, "permission denied"},
		{-EROFS, "read-only filesystem"},
		{-EBUSY, "busy"},
		{-ENFILE, "too many open files"},
		{-EMFILE, "too many open files"},
		{-ENOMEM, "out of memory"},
		{-EINVAL, "invalid argument"},
		{-ECANCELED, "cancelled"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		assert_string_equal(storage_errno_text(named[i].err), named[i].text);
	}
	assert_string_equal(storage_errno_text(0), "filesystem error");
	assert_string_equal(storage_errno_text(-EPERM), "filesystem error");
	assert_string_equal(storage_errno_text(ENOENT), "filesystem error"); /* not negated */
	assert_string_equal(storage_errno_text(-(256 + ENOENT)), "filesystem error");
	assert_string_equal(storage_errno_text(INT32_MIN), "filesystem error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_paths_fold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paths_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settings_store_refused_by_every_tool, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ssh_refused_by_every_tool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_state_refused_by_every_tool, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stage_names_refused_by_every_tool, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_list_and_search_hide_agent_state, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_flash_image_through_the_sd_folder, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_list_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_long_names_stay_in_bound, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_exact_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_refuses_non_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_escaping_stops_at_result_bound, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_exact_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_utf8_and_binary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_escaping_stops_at_result_bound, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_search_matches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_excerpt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_paths_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_paths_count_directories, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_search_scan_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_scan_bound_across_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_search_matches_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_result_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_cancelled, setup, teardown),
		cmocka_unit_test(test_definitions),
		cmocka_unit_test(test_errno_texts),
		/* With /lfs mounted: storage tools are offered only while a filesystem is. */
		cmocka_unit_test_setup_teardown(test_schemas_fit_one_turn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discovery_picks_stat_for_existence, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
