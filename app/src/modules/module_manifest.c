/*
 * The module directory format (module_manifest.h; docs/modules.md "The module directory",
 * "The manifest keys"): the line grammar, the keys of each kind and their values, the
 * SKILL.md front matter. Nothing is copied: the fields point into the input.
 */
#include "module_manifest.h"

#include <errno.h>
#include <string.h>

#include "module_text.h"
#include "sha256.h"

#define LIST_ITEM_MAX 31 /* bytes of a tools item */

enum key_id {
	KEY_NAME,
	KEY_KIND,
	KEY_DESCRIPTION,
	KEY_VERSION,
	KEY_OVERLAY,
	KEY_TOOLS,
	KEY_SKILLS,
	KEY_BODY,
	KEY_RUNTIME,
	KEY_ENTRY,
	KEY_DIGEST,
	KEY_ARGS,
	KEY_RISK,
	KEY_OUTPUT,
	KEY_COUNT
};

#define ROLE  (1u << MODULE_KIND_ROLE)
#define SKILL (1u << MODULE_KIND_SKILL)
#define TOOL  (1u << MODULE_KIND_TOOL)
#define EVERY (ROLE | SKILL | TOOL)

/* A key, the kinds accepting it and the kinds requiring it (bits of enum module_kind). */
struct key_def {
	const char *name;
	uint8_t kinds;
	uint8_t required;
};

static const struct key_def key_defs[KEY_COUNT] = {
	[KEY_NAME] = {"name", EVERY, EVERY},
	[KEY_KIND] = {"kind", EVERY, EVERY},
	[KEY_DESCRIPTION] = {"description", EVERY, EVERY},
	[KEY_VERSION] = {"version", EVERY, 0},
	[KEY_OVERLAY] = {"overlay", ROLE, 0},
	[KEY_TOOLS] = {"tools", ROLE, 0},
	[KEY_SKILLS] = {"skills", ROLE, 0},
	[KEY_BODY] = {"body", SKILL, 0},
	[KEY_RUNTIME] = {"runtime", TOOL, TOOL},
	[KEY_ENTRY] = {"entry", TOOL, TOOL},
	[KEY_DIGEST] = {"digest", TOOL, 0},
	[KEY_ARGS] = {"args", TOOL, 0},
	[KEY_RISK] = {"risk", TOOL, 0},
	[KEY_OUTPUT] = {"output", TOOL, 0},
};

/* The keys of a SKILL.md front matter: these two, both required. */
#define FRONT_MATTER_KEYS ((1u << KEY_NAME) | (1u << KEY_DESCRIPTION))

static const char *const runtime_names[] = {"lua", "python", "host"};
static const char *const arg_type_names[] = {"string", "integer", "boolean"};
static const char *const risk_names[] = {"read", "sensitive", "mutating", "disruptive"};

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool text_is(struct module_text t, const char *word)
{
	return t.len == strlen(word) && memcmp(t.ptr, word, t.len) == 0;
}

static struct module_text trim(const char *p, size_t len)
{
	while (len > 0u && is_blank(p[0])) {
		p++;
		len--;
	}
	while (len > 0u && is_blank(p[len - 1u])) {
		len--;
	}
	return (struct module_text){p, len};
}

/* [a-z][a-z0-9_]*: a key, a tool or group name, an argument name (without a bound). */
static bool is_identifier(struct module_text t)
{
	if (t.len == 0u || !is_lower(t.ptr[0])) {
		return false;
	}
	for (size_t i = 1; i < t.len; i++) {
		if (!is_lower(t.ptr[i]) && !is_digit(t.ptr[i]) && t.ptr[i] != '_') {
			return false;
		}
	}
	return true;
}

/* The index of @p t among @p names (@p count of them), or -1. */
static int word_index(struct module_text t, const char *const *names, int count)
{
	for (int i = 0; i < count; i++) {
		if (text_is(t, names[i])) {
			return i;
		}
	}
	return -1;
}

/* ---- lines ---- */

struct lines {
	const char *text;
	size_t len;
	size_t pos;
	unsigned int no; /* of the line last returned, from 1 */
};

/* The next line without its LF or CRLF (a CR not before an LF stays in the line). */
static bool line_next(struct lines *it, struct module_text *line)
{
	const char *nl;
	size_t end;

	if (it->pos >= it->len) {
		return false;
	}
	nl = memchr(it->text + it->pos, '\n', it->len - it->pos);
	end = nl != NULL ? (size_t)(nl - it->text) : it->len;
	line->ptr = it->text + it->pos;
	line->len = end - it->pos;
	if (nl != NULL && line->len > 0u && line->ptr[line->len - 1u] == '\r') {
		line->len--;
	}
	it->pos = nl != NULL ? end + 1u : it->len;
	it->no++;
	return true;
}

/*
 * A line as "key: value" (1, @p key and @p value set), a blank or comment line (0), or
 * neither (-EINVAL). The key starts the line and is followed by ':' at once; the value is
 * the rest of the line with blanks around it trimmed.
 */
static int line_split(struct module_text line, struct module_text *key, struct module_text *value)
{
	size_t i = 0;

	if (trim(line.ptr, line.len).len == 0u || line.ptr[0] == '#') {
		return 0;
	}
	while (i < line.len && line.ptr[i] != ':') {
		i++;
	}
	key->ptr = line.ptr;
	key->len = i;
	if (i == line.len || !is_identifier(*key)) {
		return -EINVAL;
	}
	*value = trim(line.ptr + i + 1u, line.len - i - 1u);
	return 1;
}

static int key_lookup(struct module_text key)
{
	for (int i = 0; i < KEY_COUNT; i++) {
		if (text_is(key, key_defs[i].name)) {
			return i;
		}
	}
	return -1;
}

/* ---- values ---- */

static int too_long(char *why, size_t why_len, const char *key, size_t len, size_t max)
{
	return module_refuse(why, why_len, -E2BIG, "%s: %zu bytes, at most %zu", key, len, max);
}

/* A file name: one path component of [A-Za-z0-9._-], not "." or "..". */
static int file_name_check(const char *key, struct module_text v, char *why, size_t why_len)
{
	struct module_shown s;
	bool ok = !text_is(v, ".") && !text_is(v, "..");

	if (v.len > MODULE_FILE_MAX) {
		return too_long(why, why_len, key, v.len, MODULE_FILE_MAX);
	}
	for (size_t i = 0; i < v.len && ok; i++) {
		char c = v.ptr[i];

		ok = is_lower(c) || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '.' ||
		     c == '_' || c == '-';
	}
	if (!ok) {
		return module_refuse(why, why_len, -EINVAL, "%s: \"%s\" is not a file name", key,
				     module_show(&s, v.ptr, v.len));
	}
	return 0;
}

static int description_check(struct module_text v, char *why, size_t why_len)
{
	if (v.len > MODULE_DESCRIPTION_MAX) {
		return too_long(why, why_len, "description", v.len, MODULE_DESCRIPTION_MAX);
	}
	for (size_t i = 0; i < v.len; i++) {
		uint8_t c = (uint8_t)v.ptr[i];
		bool c1 = c == 0xC2 && i + 1u < v.len && (uint8_t)v.ptr[i + 1u] <= 0x9F;

		if (c < 0x20 || c == 0x7F || c1) {
			return module_refuse(why, why_len, -EINVAL,
					     "description: a control character at byte %zu", i);
		}
	}
	return 0;
}

static int version_check(struct module_text v, char *why, size_t why_len)
{
	struct module_shown s;

	if (v.len > MODULE_VERSION_MAX) {
		return too_long(why, why_len, "version", v.len, MODULE_VERSION_MAX);
	}
	for (size_t i = 0; i < v.len; i++) {
		char c = v.ptr[i];

		if (!is_lower(c) && !(c >= 'A' && c <= 'Z') && !is_digit(c) && c != '.' &&
		    c != '+' && c != '-') {
			return module_refuse(why, why_len, -EINVAL,
					     "version: \"%s\" is not 0-9 A-Z a-z . + -",
					     module_show(&s, v.ptr, v.len));
		}
	}
	return 0;
}

static size_t list_count(struct module_text list)
{
	size_t n = 1;

	for (size_t i = 0; i < list.len; i++) {
		n += list.ptr[i] == ',' ? 1u : 0u;
	}
	return n;
}

/* A role's tools (tool or group names, or "*") or skills (module names). */
static int list_check(const char *key, struct module_text v, bool skills, char *why,
		      size_t why_len)
{
	struct module_text item;
	struct module_shown s;
	size_t pos = 0;
	size_t n = list_count(v);

	if (n > MODULE_LIST_MAX) {
		return module_refuse(why, why_len, -E2BIG, "%s: %zu items, at most %d", key, n,
				     MODULE_LIST_MAX);
	}
	while (module_list_next(v, &pos, &item)) {
		size_t max = skills ? MODULE_NAME_MAX : LIST_ITEM_MAX;
		bool ok = skills ? module_name_valid(item.ptr, item.len)
				 : text_is(item, "*") || is_identifier(item);

		if (item.len == 0u) {
			return module_refuse(why, why_len, -EINVAL, "%s: an empty item", key);
		}
		if (item.len > max) {
			return module_refuse(why, why_len, -E2BIG, "%s: \"%s\" is %zu bytes, at most %zu",
					     key, module_show(&s, item.ptr, item.len), item.len, max);
		}
		if (!ok) {
			return module_refuse(why, why_len, -EINVAL, "%s: \"%s\" is not a %s", key,
					     module_show(&s, item.ptr, item.len),
					     skills ? "module name" : "tool or group name");
		}
	}
	return 0;
}

static int args_check(struct module_text v, struct module_manifest *out, char *why,
		      size_t why_len)
{
	struct module_text item;
	struct module_shown s;
	size_t pos = 0;
	size_t n = list_count(v);

	if (n > MODULE_TOOL_ARGS_MAX) {
		return module_refuse(why, why_len, -E2BIG, "args: %zu items, at most %d", n,
				     MODULE_TOOL_ARGS_MAX);
	}
	while (module_list_next(v, &pos, &item)) {
		const char *colon = memchr(item.ptr, ':', item.len);
		struct module_text name;
		struct module_text type;
		int t;

		if (item.len == 0u) {
			return module_refuse(why, why_len, -EINVAL, "args: an empty item");
		}
		if (colon == NULL) {
			return module_refuse(why, why_len, -EINVAL, "args: \"%s\" is not NAME:TYPE",
					     module_show(&s, item.ptr, item.len));
		}
		name = trim(item.ptr, (size_t)(colon - item.ptr));
		type = trim(colon + 1, item.len - (size_t)(colon - item.ptr) - 1u);
		if (name.len > MODULE_ARG_NAME_MAX) {
			return module_refuse(why, why_len, -E2BIG,
					     "args: \"%s\" is %zu bytes, at most %d",
					     module_show(&s, name.ptr, name.len), name.len,
					     MODULE_ARG_NAME_MAX);
		}
		if (!is_identifier(name)) {
			return module_refuse(why, why_len, -EINVAL,
					     "args: \"%s\" is not an argument name",
					     module_show(&s, name.ptr, name.len));
		}
		t = word_index(type, arg_type_names, 3);
		if (t < 0) {
			return module_refuse(why, why_len, -EINVAL,
					     "args: \"%s\" is not string, integer or boolean",
					     module_show(&s, type.ptr, type.len));
		}
		for (uint8_t i = 0; i < out->arg_count; i++) {
			if (out->args[i].name.len == name.len &&
			    memcmp(out->args[i].name.ptr, name.ptr, name.len) == 0) {
				return module_refuse(why, why_len, -EINVAL,
						     "args: duplicate argument \"%s\"",
						     module_show(&s, name.ptr, name.len));
			}
		}
		out->args[out->arg_count].name = name;
		out->args[out->arg_count].type = (enum module_arg_type)t;
		out->arg_count++;
	}
	return 0;
}

static int output_check(struct module_text v, struct module_manifest *out, char *why,
			size_t why_len)
{
	struct module_shown s;
	uint32_t n = 0;
	bool digits = v.ptr[0] != '0';

	for (size_t i = 0; i < v.len && digits; i++) {
		digits = is_digit(v.ptr[i]);
	}
	if (!digits) {
		return module_refuse(why, why_len, -EINVAL,
				     "output: \"%s\" is not a number from 1 to %d",
				     module_show(&s, v.ptr, v.len), CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	}
	/* More than 9 digits are over any bound (and would not fit n). */
	for (size_t i = 0; i < v.len && i < 9u; i++) {
		n = n * 10u + (uint32_t)(v.ptr[i] - '0');
	}
	if (v.len > 9u || n > CONFIG_AGENT_TOOL_RESULT_MAX_LEN) {
		return module_refuse(why, why_len, -E2BIG, "output: %s, at most %d",
				     module_show(&s, v.ptr, v.len), CONFIG_AGENT_TOOL_RESULT_MAX_LEN);
	}
	out->output_max = n;
	return 0;
}

/* Check @p v for key @p id and put it into @p out. */
static int key_value(enum key_id id, struct module_text v, struct module_manifest *out,
		     char *why, size_t why_len)
{
	struct module_shown s;
	const char *key = key_defs[id].name;
	int i;

	if (v.len == 0u) {
		return module_refuse(why, why_len, -EINVAL, "%s: empty value", key);
	}
	switch (id) {
	case KEY_NAME:
		if (v.len > MODULE_NAME_MAX) {
			return too_long(why, why_len, key, v.len, MODULE_NAME_MAX);
		}
		if (!module_name_valid(v.ptr, v.len)) {
			return module_refuse(why, why_len, -EINVAL, "name: \"%s\" is not a module name",
					     module_show(&s, v.ptr, v.len));
		}
		out->name = v;
		return 0;
	case KEY_KIND:
		return 0; /* read before the other keys */
	case KEY_DESCRIPTION:
		out->description = v;
		return description_check(v, why, why_len);
	case KEY_VERSION:
		out->version = v;
		return version_check(v, why, why_len);
	case KEY_OVERLAY:
		out->overlay = v;
		return file_name_check(key, v, why, why_len);
	case KEY_BODY:
		out->body = v;
		return file_name_check(key, v, why, why_len);
	case KEY_ENTRY:
		out->entry = v;
		return file_name_check(key, v, why, why_len);
	case KEY_TOOLS:
		out->tools = v;
		return list_check(key, v, false, why, why_len);
	case KEY_SKILLS:
		out->skills = v;
		return list_check(key, v, true, why, why_len);
	case KEY_RUNTIME:
		i = word_index(v, runtime_names, 3);
		if (i < 0) {
			return module_refuse(why, why_len, -EINVAL,
					     "runtime: \"%s\" is not lua, python or host",
					     module_show(&s, v.ptr, v.len));
		}
		out->runtime = (enum module_runtime)i;
		return 0;
	case KEY_DIGEST:
		if (sha256_from_hex(v.ptr, v.len, out->digest) != 0) {
			return module_refuse(why, why_len, -EINVAL,
					     "digest: not 64 lower-case hex digits");
		}
		out->has_digest = true;
		return 0;
	case KEY_ARGS:
		return args_check(v, out, why, why_len);
	case KEY_RISK:
		i = word_index(v, risk_names, 4);
		if (i < 0) {
			return module_refuse(why, why_len, -EINVAL,
					     "risk: \"%s\" is not read, sensitive, mutating or disruptive",
					     module_show(&s, v.ptr, v.len));
		}
		out->risk = (enum tool_risk)i;
		return 0;
	case KEY_OUTPUT:
		return output_check(v, out, why, why_len);
	default:
		return -EINVAL;
	}
}

/* ---- the whole text ---- */

/* The bound, NUL and UTF-8 checks of a manifest or front matter (@p what names it). */
static int text_check(const char *what, const char *text, size_t len, char *why,
		      size_t why_len)
{
	const char *nul = len > 0u ? memchr(text, '\0', len) : NULL;
	size_t bad;

	if (len > CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN) {
		return module_refuse(why, why_len, -E2BIG, "%s: %zu bytes, at most %d", what, len,
				     CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
	}
	if (nul != NULL) {
		return module_refuse(why, why_len, -EINVAL, "%s: a NUL byte at offset %zu", what,
				     (size_t)(nul - text));
	}
	bad = module_utf8_bad(text, len);
	if (bad < len) {
		return module_refuse(why, why_len, -EINVAL, "%s: not UTF-8 at offset %zu", what,
				     bad);
	}
	return 0;
}

/*
 * The "key: value" lines of @p it: every key among @p allowed (bits of enum key_id), at
 * most once, every key of @p required present. @p context ends an unknown key's reason.
 */
static int keys_read(struct lines *it, uint32_t allowed, uint32_t required, const char *context,
		     struct module_manifest *out, char *why, size_t why_len)
{
	struct module_text line;
	struct module_text key;
	struct module_text value;
	struct module_shown s;
	uint32_t seen = 0;
	int rc;

	while (line_next(it, &line)) {
		int id;

		rc = line_split(line, &key, &value);
		if (rc < 0) {
			return module_refuse(why, why_len, -EINVAL, "line %u: no \"key: value\"",
					     it->no);
		}
		if (rc == 0) {
			continue;
		}
		id = key_lookup(key);
		if (id < 0 || (allowed & (1u << id)) == 0u) {
			return module_refuse(why, why_len, -EINVAL, "unknown key \"%s\" %s",
					     module_show(&s, key.ptr, key.len), context);
		}
		if ((seen & (1u << id)) != 0u) {
			return module_refuse(why, why_len, -EINVAL, "duplicate key \"%s\"",
					     key_defs[id].name);
		}
		seen |= 1u << id;
		rc = key_value((enum key_id)id, value, out, why, why_len);
		if (rc != 0) {
			return rc;
		}
	}
	for (int id = 0; id < KEY_COUNT; id++) {
		if ((required & ~seen & (1u << id)) != 0u) {
			return module_refuse(why, why_len, -EINVAL, "missing key \"%s\"",
					     key_defs[id].name);
		}
	}
	return 0;
}

/* The kind a manifest gives (its only "kind" line); every line is checked for its form. */
static int kind_read(const char *text, size_t len, enum module_kind *kind, char *why,
		     size_t why_len)
{
	struct lines it = {text, len, 0, 0};
	struct module_text line;
	struct module_text key;
	struct module_text value;
	struct module_shown s;
	bool seen = false;

	while (line_next(&it, &line)) {
		int rc = line_split(line, &key, &value);

		if (rc < 0) {
			return module_refuse(why, why_len, -EINVAL, "line %u: no \"key: value\"",
					     it.no);
		}
		if (rc == 0 || !text_is(key, "kind")) {
			continue;
		}
		if (seen) {
			return module_refuse(why, why_len, -EINVAL, "duplicate key \"kind\"");
		}
		seen = true;
		if (value.len == 0u) {
			return module_refuse(why, why_len, -EINVAL, "kind: empty value");
		}
		if (module_kind_parse(value.ptr, value.len, kind) != 0) {
			return module_refuse(why, why_len, -EINVAL,
					     "kind: \"%s\" is not role, skill or tool",
					     module_show(&s, value.ptr, value.len));
		}
	}
	if (!seen) {
		return module_refuse(why, why_len, -EINVAL, "missing key \"kind\"");
	}
	return 0;
}

static void defaults(struct module_manifest *out)
{
	memset(out, 0, sizeof(*out));
	out->risk = TOOL_RISK_DISRUPTIVE;
	out->output_max = CONFIG_AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN;
}

static void absent_texts(struct module_manifest *out)
{
	static const char overlay[] = "overlay.txt";
	static const char body[] = MODULE_SKILL_FILE;

	if (out->kind == MODULE_KIND_ROLE && out->overlay.ptr == NULL) {
		out->overlay = (struct module_text){overlay, sizeof(overlay) - 1u};
	} else if (out->kind == MODULE_KIND_SKILL && out->body.ptr == NULL) {
		out->body = (struct module_text){body, sizeof(body) - 1u};
	}
}

int module_manifest_parse(const char *text, size_t len, struct module_manifest *out,
			  char *why, size_t why_len)
{
	static const char *const context[MODULE_KIND_COUNT] = {"for a role", "for a skill",
							      "for a tool"};
	struct lines it = {text, len, 0, 0};
	uint32_t allowed = 0;
	uint32_t required = 0;
	enum module_kind kind;
	int rc;

	defaults(out);
	rc = text_check("manifest", text, len, why, why_len);
	if (rc == 0) {
		rc = kind_read(text, len, &kind, why, why_len);
	}
	if (rc != 0) {
		return rc;
	}
	out->kind = kind;
	for (int id = 0; id < KEY_COUNT; id++) {
		allowed |= (key_defs[id].kinds & (1u << kind)) != 0u ? 1u << id : 0u;
		required |= (key_defs[id].required & (1u << kind)) != 0u ? 1u << id : 0u;
	}
	rc = keys_read(&it, allowed, required, context[kind], out, why, why_len);
	if (rc == 0) {
		absent_texts(out);
	}
	return rc;
}

/* ---- SKILL.md ---- */

/* The length of a line "---" ending in LF or CRLF (or at the end when @p at_end may) at @p p. */
static size_t dashes_line(const char *p, size_t avail, bool at_end)
{
	if (avail < 3u || memcmp(p, "---", 3) != 0) {
		return 0;
	}
	if (avail == 3u) {
		return at_end ? 3u : 0u;
	}
	if (p[3] == '\n') {
		return 4;
	}
	return avail >= 5u && p[3] == '\r' && p[4] == '\n' ? 5u : 0u;
}

/* Where the front matter's lines start and end (the closing line's start); 0 without one. */
static size_t front_matter(const char *text, size_t len, size_t *inner, size_t *inner_end)
{
	size_t open = text != NULL ? dashes_line(text, len, false) : 0u;
	size_t pos = open;

	if (open == 0u) {
		return 0;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t close = dashes_line(text + pos, len - pos, true);

		if (close != 0u) {
			*inner = open;
			*inner_end = pos;
			return pos + close;
		}
		if (nl == NULL) {
			break;
		}
		pos = (size_t)(nl - text) + 1u;
	}
	return 0;
}

size_t module_front_matter_end(const char *text, size_t len)
{
	size_t inner;
	size_t inner_end;

	return front_matter(text, len, &inner, &inner_end);
}

int module_skill_md_parse(const char *text, size_t len, struct module_manifest *out,
			  size_t *body_off, char *why, size_t why_len)
{
	size_t inner = 0;
	size_t inner_end = 0;
	size_t end = front_matter(text, len, &inner, &inner_end);
	struct lines it;
	int rc;

	defaults(out);
	out->kind = MODULE_KIND_SKILL;
	if (text == NULL || dashes_line(text, len, false) == 0u) {
		return module_refuse(why, why_len, -EINVAL, "SKILL.md: no \"---\" line at the start");
	}
	if (end == 0u) {
		return module_refuse(why, why_len, -EINVAL, "SKILL.md: no closing \"---\" line");
	}
	rc = text_check("SKILL.md header", text, end, why, why_len);
	if (rc != 0) {
		return rc;
	}
	it = (struct lines){text, inner_end, inner, 1};
	rc = keys_read(&it, FRONT_MATTER_KEYS, FRONT_MATTER_KEYS, "in the SKILL.md header", out,
		       why, why_len);
	if (rc != 0) {
		return rc;
	}
	if (end == len) {
		return module_refuse(why, why_len, -EINVAL, "SKILL.md: empty body");
	}
	absent_texts(out);
	*body_off = end;
	return 0;
}

/* ---- lists, body files ---- */

bool module_list_next(struct module_text list, size_t *pos, struct module_text *item)
{
	const char *comma;
	size_t end;

	if (list.len == 0u || *pos > list.len) {
		return false;
	}
	comma = memchr(list.ptr + *pos, ',', list.len - *pos);
	end = comma != NULL ? (size_t)(comma - list.ptr) : list.len;
	*item = trim(list.ptr + *pos, end - *pos);
	*pos = end + 1u;
	return true;
}

struct module_text module_manifest_body_file(const struct module_manifest *m)
{
	switch (m->kind) {
	case MODULE_KIND_ROLE:
		return m->overlay;
	case MODULE_KIND_SKILL:
		return m->body;
	case MODULE_KIND_TOOL:
		return m->entry;
	default:
		return (struct module_text){NULL, 0};
	}
}
