/*
 * storage_search: find a text in file contents (not names) under one file or a directory
 * tree, breadth first. Bounds per call (Kconfig): CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX
 * paths (the start and every file or directory found below it; a .ssh directory is neither
 * counted nor entered), CONFIG_AGENT_STORAGE_SEARCH_SCAN_BYTES bytes of content read and
 * CONFIG_AGENT_STORAGE_SEARCH_MATCHES_MAX matching lines. The first bound reached stops the
 * walk and is named in "limit"; a result that would overflow stops it as "result".
 *
 * Matching ignores ASCII case and is per line (a query cannot hold a newline). Each match
 * reports the path, the 1-based line number and an excerpt: up to EXCERPT_BEFORE bytes
 * before the match, the match, and up to EXCERPT_AFTER bytes after it, within the line. A
 * file whose first chunk holds a NUL byte is skipped as binary.
 *
 * State is static (the directory queue is ~8 KiB, placed in PSRAM where there is one): the
 * tools run one at a time on the agent worker.
 */
#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "storage_fs.h"
#include "storage_params.h"
#include "storage_path.h"
#include "storage_text.h"
#include "tools_storage.h"

#define QUERY_MAX      100
#define EXCERPT_BEFORE 40
#define EXCERPT_AFTER  60
#define EXCERPT_MAX    (EXCERPT_BEFORE + QUERY_MAX + EXCERPT_AFTER)
#define RING_BYTES     (EXCERPT_BEFORE + QUERY_MAX)
/* Members after the match list: counts, truncated and limit. */
#define SEARCH_TAIL    200
/* Bytes of one match besides its path and excerpt: {"path":,"line":4294967295,"excerpt":}, */
#define MATCH_FIXED    40

enum search_limit {
	LIMIT_NONE,
	LIMIT_PATHS,
	LIMIT_SCAN_BYTES,
	LIMIT_MATCHES,
	LIMIT_RESULT,
};

struct search {
	struct tool_ctx *ctx;
	struct json_writer *out;
	uint8_t query[QUERY_MAX]; /* lowercased */
	uint8_t fail[QUERY_MAX];  /* KMP failure function of query */
	size_t qlen;
	uint32_t admitted;
	uint32_t files;
	uint32_t binary;
	uint32_t unreadable;
	uint32_t scanned;
	uint32_t matches;
	enum search_limit limit;
	int err; /* cancellation */
	/* The file being scanned. */
	const char *path;
	uint32_t line;
	size_t state; /* query bytes matched so far */
	bool line_matched;
	uint8_t ring[RING_BYTES]; /* the last bytes of the current line */
	size_t ring_len;
	size_t ring_pos;
	bool pending; /* an excerpt is being completed */
	uint32_t pending_line;
	uint8_t excerpt[EXCERPT_MAX];
	size_t excerpt_len;
	size_t excerpt_after;
};

static struct search search_state AGENT_PSRAM_ATTR;
static uint8_t search_chunk[STORAGE_CHUNK_BYTES] AGENT_PSRAM_ATTR;
static char search_queue[CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX][STORAGE_PATH_MAX + 1]
	AGENT_PSRAM_ATTR;

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c - 'A' + 'a') : c;
}

static const char *limit_name(enum search_limit limit)
{
	switch (limit) {
	case LIMIT_PATHS:
		return "paths";
	case LIMIT_SCAN_BYTES:
		return "scan_bytes";
	case LIMIT_MATCHES:
		return "matches";
	case LIMIT_RESULT:
		return "result";
	default:
		return "none";
	}
}

static bool stopped(const struct search *s)
{
	return s->limit != LIMIT_NONE || s->err != 0;
}

static void prepare_query(struct search *s, const char *query, size_t len)
{
	size_t k = 0;

	s->qlen = len;
	for (size_t i = 0; i < len; i++) {
		s->query[i] = lower((uint8_t)query[i]);
	}
	s->fail[0] = 0;
	for (size_t i = 1; i < len; i++) {
		while (k > 0 && s->query[i] != s->query[k]) {
			k = s->fail[k - 1];
		}
		if (s->query[i] == s->query[k]) {
			k++;
		}
		s->fail[i] = (uint8_t)k;
	}
}

/* Write the excerpt being completed as one match, if the result has room for it. */
static void emit(struct search *s)
{
	const char *text = (const char *)s->excerpt;
	size_t len = s->excerpt_len;
	size_t start = 0;
	enum storage_text_stop stop;
	size_t path_len = strlen(s->path);
	size_t room = tool_result_room(s->out);

	s->pending = false;
	/* Whole characters only: drop a cut one at either end, and a CR before the newline. */
	while (start < len && start < 3 && (s->excerpt[start] & 0xC0) == 0x80) {
		start++;
	}
	if (len > start && s->excerpt[len - 1] == '\r') {
		len--;
	}
	size_t whole = storage_text_scan(s->excerpt + start, len - start, &stop);

	if (stop == STORAGE_TEXT_CUT) {
		len = start + whole;
	}
	if (storage_json_len(s->path, path_len) + storage_json_len(text + start, len - start) +
		    MATCH_FIXED + SEARCH_TAIL >
	    room) {
		s->limit = LIMIT_RESULT;
		return;
	}
	jw_object_begin(s->out);
	jw_key(s->out, "path");
	jw_string_n(s->out, s->path, path_len);
	jw_key(s->out, "line");
	jw_int(s->out, s->pending_line);
	jw_key(s->out, "excerpt");
	jw_string_n(s->out, text + start, len - start);
	jw_object_end(s->out);
}

/* A match ends at the byte just pushed to the ring: start its excerpt. */
static void match_found(struct search *s)
{
	size_t take = EXCERPT_BEFORE + s->qlen;

	s->line_matched = true;
	if (s->matches == CONFIG_AGENT_STORAGE_SEARCH_MATCHES_MAX) {
		s->limit = LIMIT_MATCHES;
		return;
	}
	s->matches++;
	if (take > s->ring_len) {
		take = s->ring_len;
	}
	/* The last @take bytes of the ring, oldest first. */
	for (size_t i = 0; i < take; i++) {
		size_t at = (s->ring_pos + RING_BYTES - take + i) % RING_BYTES;

		s->excerpt[i] = s->ring[at];
	}
	s->excerpt_len = take;
	s->excerpt_after = 0;
	s->pending = true;
	s->pending_line = s->line;
}

static void scan_byte(struct search *s, uint8_t c)
{
	if (c == '\n') {
		if (s->pending) {
			emit(s);
		}
		s->line++;
		s->state = 0;
		s->line_matched = false;
		s->ring_len = 0;
		return;
	}
	if (s->pending) {
		s->excerpt[s->excerpt_len++] = c;
		if (++s->excerpt_after == EXCERPT_AFTER) {
			emit(s);
		}
	}
	s->ring[s->ring_pos] = c;
	s->ring_pos = (s->ring_pos + 1) % RING_BYTES;
	if (s->ring_len < RING_BYTES) {
		s->ring_len++;
	}
	if (s->line_matched) {
		return;
	}
	c = lower(c);
	while (s->state > 0 && c != s->query[s->state]) {
		s->state = s->fail[s->state - 1];
	}
	if (c == s->query[s->state]) {
		s->state++;
	}
	if (s->state == s->qlen) {
		s->state = 0;
		match_found(s);
	}
}

/* Scan one file of @p size bytes (as listed) within the byte budget. */
static void scan_file(struct search *s, const char *path, uint32_t size)
{
	struct agent_file *file;
	uint32_t pos = 0;
	int err;

	err = agent_fs_open(&file, path, AGENT_FS_O_READ);
	if (err != 0) {
		s->unreadable++;
		return;
	}
	s->files++;
	s->path = path;
	s->line = 1;
	s->state = 0;
	s->line_matched = false;
	s->ring_len = 0;
	s->ring_pos = 0;
	s->pending = false;
	while (!stopped(s)) {
		uint32_t budget = CONFIG_AGENT_STORAGE_SEARCH_SCAN_BYTES - s->scanned;
		size_t want = sizeof(search_chunk) < budget ? sizeof(search_chunk) : budget;
		int n;

		if (storage_cancelled(s->ctx)) {
			s->err = -ECANCELED;
			break;
		}
		if (budget == 0) {
			if (pos < size) {
				s->limit = LIMIT_SCAN_BYTES;
			}
			break;
		}
		n = agent_fs_read(file, search_chunk, want);
		if (n < 0) {
			s->unreadable++;
			break;
		}
		if (n == 0) {
			break;
		}
		s->scanned += (uint32_t)n;
		if (pos == 0 && memchr(search_chunk, '\0', (size_t)n) != NULL) {
			s->binary++;
			break;
		}
		pos += (uint32_t)n;
		for (int i = 0; i < n && !stopped(s); i++) {
			scan_byte(s, search_chunk[i]);
		}
	}
	/* A line cut by the end of the file or of the budget still ends its excerpt. */
	if (s->pending && s->err == 0 && s->limit != LIMIT_RESULT) {
		emit(s);
	}
	(void)agent_fs_close(file);
}

/* Admit one more path, or stop the walk at the bound. */
static bool admit(struct search *s)
{
	if (s->admitted == CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX) {
		s->limit = LIMIT_PATHS;
		return false;
	}
	s->admitted++;
	return true;
}

static void walk(struct search *s, uint32_t queued)
{
	char child[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;

	for (uint32_t head = 0; head < queued && !stopped(s); head++) {
		const char *dir_path = search_queue[head];
		size_t dir_len = strlen(dir_path);
		struct agent_dir *dir;

		if (agent_fs_opendir(&dir, dir_path) != 0) {
			s->unreadable++;
			continue;
		}
		while (!stopped(s)) {
			size_t name_len;

			if (storage_cancelled(s->ctx)) {
				s->err = -ECANCELED;
				break;
			}
			if (agent_fs_readdir(dir, &entry) != 0) {
				s->unreadable++;
				break;
			}
			if (entry.name[0] == '\0') {
				break;
			}
			name_len = strlen(entry.name);
			if (storage_name_kind(entry.name, name_len) != STORAGE_NAME_ORDINARY) {
				continue; /* .ssh, the agent's own state, staging names */
			}
			if (!admit(s)) {
				break;
			}
			if (dir_len + 1u + name_len > STORAGE_PATH_MAX) {
				s->unreadable++; /* cannot be named within the bound */
				continue;
			}
			memcpy(child, dir_path, dir_len);
			child[dir_len] = '/';
			memcpy(child + dir_len + 1, entry.name, name_len + 1u);
			if (dir_len == 1) { /* the root "/" */
				memmove(child + 1, child + 2, name_len + 1u);
			}
			if (agent_settings_is_store_path(child)) {
				continue; /* holds the API key */
			}
			if (entry.type == AGENT_FS_DIR) {
				memcpy(search_queue[queued++], child, strlen(child) + 1u);
			} else {
				scan_file(s, child, entry.size);
			}
		}
		(void)agent_fs_closedir(dir);
	}
}

static int search_exec(struct tool_ctx *ctx, const struct tool_args *args, struct json_writer *out)
{
	struct search *s = &search_state;
	const struct tool_value *query = &args->v[1];
	char path[STORAGE_PATH_MAX + 1];
	struct agent_dirent entry;
	int err;

	err = storage_path_resolve(ctx, args->v[0].str, args->v[0].len, path);
	if (err != 0) {
		return err;
	}
	if (query->len == 0 || query->len > QUERY_MAX) {
		return tool_fail(ctx, -EINVAL, "query must be 1 to %d bytes", QUERY_MAX);
	}
	if (memchr(query->str, '\n', query->len) != NULL ||
	    memchr(query->str, '\0', query->len) != NULL) {
		return tool_fail(ctx, -EINVAL,
				 "query must be one line of text (no newline or NUL byte)");
	}
	err = agent_fs_stat(path, &entry);
	if (err != 0) {
		return storage_fs_fail(ctx, err, "cannot search", path);
	}
	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->out = out;
	prepare_query(s, query->str, query->len);

	jw_object_begin(out);
	jw_key(out, "path");
	jw_string(out, path);
	jw_key(out, "query");
	jw_string_n(out, query->str, query->len);
	jw_key(out, "matches");
	jw_array_begin(out);
	s->admitted = 1;
	if (entry.type == AGENT_FS_FILE) {
		scan_file(s, path, entry.size);
	} else {
		memcpy(search_queue[0], path, strlen(path) + 1u);
		walk(s, 1);
	}
	if (s->err != 0) {
		return storage_fs_fail(ctx, s->err, "cannot search", path);
	}
	jw_array_end(out);
	jw_key(out, "match_count");
	jw_int(out, s->matches);
	jw_key(out, "paths_visited");
	jw_int(out, s->admitted);
	jw_key(out, "files_scanned");
	jw_int(out, s->files);
	jw_key(out, "bytes_scanned");
	jw_int(out, s->scanned);
	jw_key(out, "skipped_binary");
	jw_int(out, s->binary);
	jw_key(out, "unreadable");
	jw_int(out, s->unreadable);
	jw_key(out, "truncated");
	jw_bool(out, s->limit != LIMIT_NONE);
	if (s->limit != LIMIT_NONE) {
		jw_key(out, "limit");
		jw_string(out, limit_name(s->limit));
	}
	jw_object_end(out);
	return 0;
}

static const struct tool_param search_params[] = {
	STORAGE_PATH_PARAM(TOOL_TEXT(storage_search_param_1,
		"File or directory to search under (absolute, or relative to the current "
		"directory).")),
	{
		.name = "query",
		.type = TOOL_PARAM_STRING,
		.required = true,
		.description = TOOL_TEXT(storage_search_description_1,
			"Text to find in file contents (one line; ASCII case ignored)."),
		.min = 1,
		.max = QUERY_MAX,
	},
};

const struct tool_def tool_storage_search = {
	.name = "storage_search",
	.description = TOOL_TEXT(storage_search_description_2,
		"Search file contents (not file names) under one file or directory tree for a "
		"text; returns path, line number and an excerpt per matching line. Scans at "
		"most {{CONFIG_AGENT_STORAGE_SEARCH_PATHS_MAX}} paths, "
		"{{CONFIG_AGENT_STORAGE_SEARCH_SCAN_BYTES}} bytes and "
		"{{CONFIG_AGENT_STORAGE_SEARCH_MATCHES_MAX}} matches."),
	.domain = TOOL_DOMAIN_STORAGE,
	.risk = TOOL_RISK_SENSITIVE,
	.params = search_params,
	.param_count = 2,
	.output = TOOL_TEXT(storage_search_output_1,
		"{path, query, matches: [{path, line, excerpt}], match_count, paths_visited, "
		"files_scanned, bytes_scanned, skipped_binary, unreadable, truncated, limit "
		"(when truncated: paths|scan_bytes|matches|result)}"),
	.exec = search_exec,
	.groups = TOOL_GROUP_FS_READ,
	.keywords = TOOL_TEXT(storage_search_keywords_1,
		"search grep find text contents string occurrence line where used code inside "
		"files"),
};
