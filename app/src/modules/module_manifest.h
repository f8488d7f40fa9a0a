/*
 * The module directory format (docs/modules.md "The module directory", "The manifest keys"):
 * module.manifest (one "key: value" per line, lower-case keys, values to the end of the line,
 * '#' comment lines) or, for a skill, SKILL.md alone whose front matter ("---" lines) gives
 * name and description. Parsing never allocates: every text field points into the input.
 */
#ifndef AGENT_MODULE_MANIFEST_H
#define AGENT_MODULE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "tool.h"

#define MODULE_MANIFEST_FILE "module.manifest"
#define MODULE_SKILL_FILE    "SKILL.md"
#define MODULE_DESCRIPTION_MAX 200 /* bytes of a description */
#define MODULE_VERSION_MAX     15
#define MODULE_LIST_MAX	       16  /* names in a role's tools or skills list */
#define MODULE_TOOL_ARGS_MAX   7   /* declared arguments of a tool */
#define MODULE_ARG_NAME_MAX    31

/* A piece of the input text (not NUL-terminated). */
struct module_text {
	const char *ptr;
	size_t len;
};

enum module_runtime {
	MODULE_RUNTIME_LUA,
	MODULE_RUNTIME_PYTHON,
	MODULE_RUNTIME_HOST,
};

enum module_arg_type {
	MODULE_ARG_STRING,
	MODULE_ARG_INTEGER,
	MODULE_ARG_BOOLEAN,
};

struct module_arg {
	struct module_text name;
	enum module_arg_type type;
};

/* What a manifest (or a SKILL.md front matter) says; unset texts have ptr NULL, len 0. */
struct module_manifest {
	enum module_kind kind;
	struct module_text name;
	struct module_text description;
	struct module_text version;
	/* role */
	struct module_text overlay; /* body file; "overlay.txt" when the key is absent */
	struct module_text tools;   /* comma-separated tool and group names, unset when absent */
	struct module_text skills;  /* comma-separated skill names, unset when absent */
	/* skill */
	struct module_text body;    /* body file; "SKILL.md" when the key is absent */
	/* tool */
	enum module_runtime runtime;
	struct module_text entry;   /* body file: the script or host program */
	bool has_digest;
	uint8_t digest[MODULE_DIGEST_LEN]; /* the entry's SHA-256 when the manifest gives it */
	struct module_arg args[MODULE_TOOL_ARGS_MAX];
	uint8_t arg_count;
	enum tool_risk risk;
	uint32_t output_max;
};

/**
 * Parse a module.manifest of @p len bytes (LF or CRLF lines). 0, or -EINVAL (-E2BIG for a
 * text over its bound) with one line in @p why naming the key or limit (an unknown key for
 * the kind, an invalid value, a duplicate key, a missing required key).
 */
int module_manifest_parse(const char *text, size_t len, struct module_manifest *out,
			  char *why, size_t why_len);

/**
 * Parse a SKILL.md of @p len bytes: its front matter gives name and description (and only
 * those), the rest is the body: *@p body_off is where it starts. 0 or -EINVAL (-E2BIG for a
 * text over its bound) with @p why; an empty body is refused.
 */
int module_skill_md_parse(const char *text, size_t len, struct module_manifest *out,
			  size_t *body_off, char *why, size_t why_len);

/**
 * Where the body starts in a body file @p text: after a front matter block when the file
 * begins with one ("---" line ... "---" line), else 0. A manifest takes precedence over
 * the embedded header, whose keys are then not read.
 */
size_t module_front_matter_end(const char *text, size_t len);

/**
 * The next comma-separated item of @p list (a tools or skills value), blanks around it
 * trimmed; false at the end. Start with *@p pos = 0.
 */
bool module_list_next(struct module_text list, size_t *pos, struct module_text *item);

/** The body file the manifest names for its kind (overlay, body or entry). */
struct module_text module_manifest_body_file(const struct module_manifest *m);

/**
 * The whole check of an arrival before it may be installed (docs/modules.md "Validation"):
 * the manifest (or, when @p manifest_len is 0, the body as a SKILL.md) parses, the kind's
 * body is within its bound, text bodies are UTF-8 without NUL, a tool's declared digest
 * matches its entry, and @p expect_name / @p expect_kind (the import head's; NULL /
 * MODULE_KIND_COUNT for none) agree with the manifest. 0 or -EINVAL / -E2BIG with @p why.
 */
int module_validate(const char *manifest, size_t manifest_len, const char *body,
		    size_t body_len, const char *expect_name, enum module_kind expect_kind,
		    struct module_manifest *out, char *why, size_t why_len);

#endif /* AGENT_MODULE_MANIFEST_H */
