/*
 * Text helpers of the module parser (module_manifest.c): a piece of outside text as a refusal
 * reason shows it, and where a text stops being UTF-8.
 */
#ifndef AGENT_MODULE_TEXT_H
#define AGENT_MODULE_TEXT_H

#include <stddef.h>

#define MODULE_SHOWN_MAX 36 /* bytes of outside text a reason shows, "..." after a cut */

struct module_shown {
	char s[MODULE_SHOWN_MAX + 4];
};

/**
 * @p text (@p len bytes) for a reason: controls as \u00XX, ill-formed UTF-8 as U+FFFD,
 * cut between characters to at most MODULE_SHOWN_MAX bytes with "..." after a cut.
 * Returns @p buf's string.
 */
const char *module_show(struct module_shown *buf, const char *text, size_t len);

/** The offset of the first byte of @p text that is not well-formed UTF-8; @p len when none. */
size_t module_utf8_bad(const char *text, size_t len);

#endif /* AGENT_MODULE_TEXT_H */
