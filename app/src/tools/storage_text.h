/*
 * Text checks and bounded JSON strings for the storage tools: what counts as a text file
 * (UTF-8 without NUL bytes), and how much of a text fits a result once escaped.
 */
#ifndef AGENT_STORAGE_TEXT_H
#define AGENT_STORAGE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"

enum storage_text_stop {
	STORAGE_TEXT_END,     /* every byte is text */
	STORAGE_TEXT_CUT,     /* an incomplete UTF-8 sequence ends the buffer */
	STORAGE_TEXT_NUL,     /* a NUL byte */
	STORAGE_TEXT_INVALID, /* a byte that is not well-formed UTF-8 */
};

/**
 * Length of the longest prefix of @p buf made of whole, well-formed UTF-8 sequences without
 * NUL; *@p stop says what ended it.
 */
size_t storage_text_scan(const uint8_t *buf, size_t len, enum storage_text_stop *stop);

/**
 * How many leading bytes of @p text (whole UTF-8 sequences; @p len bytes) the JSON writer
 * turns into a string of at most @p budget bytes, quotes included. The cut never splits a
 * sequence.
 */
size_t storage_json_fit(const char *text, size_t len, size_t budget);

/** Bytes the JSON writer produces for the string @p text, quotes included. */
size_t storage_json_len(const char *text, size_t len);

#endif /* AGENT_STORAGE_TEXT_H */
