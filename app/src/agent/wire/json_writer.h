/*
 * JSON writer into a caller's bounded buffer. Commas and colons are placed automatically;
 * strings are escaped (quote, backslash, control characters, U+2028/U+2029) and invalid
 * UTF-8 is replaced by U+FFFD. Once the buffer is full every call does nothing and
 * jw_finish() reports it: a request is never sent cut.
 */
#ifndef AGENT_JSON_WRITER_H
#define AGENT_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_WRITER_DEPTH_MAX 16

struct json_writer {
	char *buf;
	size_t cap;
	size_t len;
	bool overflow;
	bool error; /* unbalanced or misplaced call */
	/* Private state below: json_writer.c owns its layout. */
	uint8_t depth;
	bool after_key;
	bool in_string;
	bool root_done;	    /* the document's value is complete: nothing may follow */
	uint32_t has_items; /* bit per depth: a comma is due before the next item */
	uint32_t is_object; /* bit per depth */
	uint8_t utf8_pending[4]; /* start of a UTF-8 sequence cut between string parts */
	uint8_t utf8_len;
};

void jw_init(struct json_writer *w, char *buf, size_t cap);
void jw_object_begin(struct json_writer *w);
void jw_object_end(struct json_writer *w);
void jw_array_begin(struct json_writer *w);
void jw_array_end(struct json_writer *w);
/** A member name; the next call writes its value. */
void jw_key(struct json_writer *w, const char *key);
void jw_string(struct json_writer *w, const char *text);
void jw_string_n(struct json_writer *w, const char *text, size_t len);
/** A string written in parts (UTF-8 may be split between parts). */
void jw_string_begin(struct json_writer *w);
void jw_string_part(struct json_writer *w, const char *text, size_t len);
void jw_string_end(struct json_writer *w);
void jw_int(struct json_writer *w, int64_t value);
void jw_bool(struct json_writer *w, bool value);
void jw_null(struct json_writer *w);
/**
 * A value that is already valid JSON (for example a tool's arguments), copied as is: it is
 * not checked, the caller vouches for it. An empty one is misuse.
 */
void jw_raw(struct json_writer *w, const char *json, size_t len);

/**
 * Close the document: NUL-terminates and returns its length, -ENOSPC when it did not fit
 * (the buffer then holds no usable document), -EINVAL when containers are unbalanced or a
 * call came in the wrong place (a value without a key inside an object, ...). -EINVAL wins
 * over -ENOSPC; after either the buffer holds "" (when it has room for the NUL).
 */
int jw_finish(struct json_writer *w);

#endif /* AGENT_JSON_WRITER_H */
