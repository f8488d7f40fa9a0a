/*
 * Modules (docs/modules.md): roles, skills and tools imported as named directories. The
 * words every part of the module machinery shares: kinds, states, the name rule, bounds.
 */
#ifndef AGENT_MODULE_H
#define AGENT_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

#define MODULE_NAME_MAX	   31  /* bytes of a module name: [a-z][a-z0-9_-]* */
#define MODULE_DIGEST_LEN  32  /* SHA-256 of the module text (manifest then body) */
#define MODULE_REASON_MAX  127 /* one refusal line */
#define MODULE_FILE_MAX	   63  /* a body file named by a manifest key: one path component */

enum module_kind {
	MODULE_KIND_ROLE,
	MODULE_KIND_SKILL,
	MODULE_KIND_TOOL,
	MODULE_KIND_COUNT
};

enum module_state {
	MODULE_FREE,	   /* the catalog entry is unused */
	MODULE_INCOMPLETE, /* an arrival whose bytes are not all there or not yet validated */
	MODULE_INSTALLED,  /* accepted: validated, journaled, in use */
};

/** "role", "skill", "tool"; NULL for a value out of range. */
const char *module_kind_name(enum module_kind kind);
/** The kind named @p name (exactly @p len bytes); -EINVAL when there is none. */
int module_kind_parse(const char *name, size_t len, enum module_kind *kind);
const char *module_state_name(enum module_state state);

/**
 * Whether @p name (@p len bytes) is a valid module name: 1..MODULE_NAME_MAX bytes, a
 * lower-case ASCII letter first, then lower-case letters, digits, '_' or '-'.
 */
bool module_name_valid(const char *name, size_t len);

/** A refusal: @p why gets one line (printf format); returns @p err (a negative errno). */
int module_refuse(char *why, size_t why_len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* AGENT_MODULE_H */
