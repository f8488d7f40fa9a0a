/*
 * The texts of the tool definitions, packed at build time (docs/reference-format.md,
 * "Packed text"): descriptions, parameter descriptions, result shapes and search keywords.
 * A definition names its text with TOOL_TEXT(id, "literal"): scripts/gen_reference.py finds
 * every TOOL_TEXT in the core's sources, fills in its {{CONFIG_*}} placeholders from the
 * build's configuration and packs it with the reference pages' dictionary into
 * packed_texts.c; the macro stands for that packed text (packed_text_<id>). The literal stays
 * in the source for its reader; the compiler never sees it.
 *
 * A build that does not generate packed_texts.h (a fuzz target, a compile-only test) defines
 * AGENT_PLAIN_TOOL_TEXTS: then TOOL_TEXT is the literal as it is, placeholders unfilled.
 */
#ifndef AGENT_PACKED_TEXT_H
#define AGENT_PACKED_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "reference.h"

/*
 * A text: @c codes codes of packed_text_codec at @c data, or, with @c codes 0, @c len bytes
 * at @c data as they are, followed by a NUL (an imported tool's description, a test's).
 */
struct packed_text {
	const void *data;
	uint16_t len;	/* bytes of text */
	uint16_t codes; /* 0: plain */
};

/** A plain text from a string literal (only a literal compiles), for tests and plain builds. */
#define PACKED_TEXT_PLAIN(literal)                                                         \
	(&(const struct packed_text){.data = "" literal "", .len = sizeof("" literal "") - 1})

/* The build's dictionary (generated packed_texts.c). */
extern const struct reference_codec packed_text_codec;

#if defined(AGENT_PLAIN_TOOL_TEXTS)
#define TOOL_TEXT(id, literal) PACKED_TEXT_PLAIN(literal)
#define PACKED_TEXT_LEN_MAX    0
#else
#include "packed_texts.h" /* generated: packed_text_<id> and PACKED_TEXT_LEN_MAX */
#define TOOL_TEXT(id, literal) (&packed_text_##id)
#endif

/** Start reading @p t (plain or packed) with reference_read(). */
void packed_text_open(struct reference_reader *r, const struct packed_text *t);

/**
 * @p t as a NUL-terminated string: a plain text itself, a packed one decoded into @p buf
 * (@p size bytes; cut at size - 1, so PACKED_TEXT_LEN_MAX + 1 holds every packed text).
 */
const char *packed_text_str(const struct packed_text *t, char *buf, size_t size);

#endif /* AGENT_PACKED_TEXT_H */
