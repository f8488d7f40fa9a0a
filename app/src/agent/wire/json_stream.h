/*
 * Incremental JSON tokenizer: input in chunks split anywhere, no recursion, bounded depth,
 * and no buffer for strings: string values are handed on in unescaped UTF-8 fragments as
 * they arrive, so a value of any length needs only this struct. Keys (up to JSON_KEY_MAX
 * bytes) and numbers (up to JSON_NUMBER_MAX bytes) are kept whole, and the path from the
 * root to the current value can be matched with json_stream_path_is().
 */
#ifndef AGENT_JSON_STREAM_H
#define AGENT_JSON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_STREAM_DEPTH_MAX 32 /* nesting of objects and arrays */
/*
 * Levels whose key and index are kept (the deepest path anything matches: 8, the Chat
 * adapter's choices.#.delta.content.#.thinking.#.text). Deeper levels are read and checked
 * but answer no path: json_stream_key() gives NULL and json_stream_index() -1 there.
 */
#define JSON_PATH_DEPTH 8
#define JSON_KEY_MAX	      47 /* longer keys are kept cut and never match a path */
#define JSON_NUMBER_MAX	      39 /* longer numbers are an error (-E2BIG) */

enum json_token {
	JSON_OBJECT_BEGIN,
	JSON_OBJECT_END,
	JSON_ARRAY_BEGIN,
	JSON_ARRAY_END,
	JSON_STRING, /* a string value, in one or more fragments */
	JSON_NUMBER, /* text of the number, whole */
	JSON_TRUE,
	JSON_FALSE,
	JSON_NULL,
};

struct json_value {
	enum json_token token;
	/*
	 * JSON_STRING: one fragment of the unescaped value; @first on the first fragment,
	 * @last on the final one (an empty string is one call with len 0, first and last).
	 * \uXXXX escapes are decoded to UTF-8 (surrogate pairs joined; a lone surrogate
	 * becomes U+FFFD); invalid UTF-8 in the input is replaced by U+FFFD (one per maximal
	 * invalid subpart, as Python's errors="replace"), so fragments joined are always valid
	 * UTF-8. JSON_NUMBER: the number's text, NUL-terminated. Other tokens: NULL and 0.
	 * @text points into the chunk being fed or into the struct json_stream: it is valid
	 * only during the callback.
	 */
	const char *text;
	size_t len;
	bool first;
	bool last;
};

struct json_stream;

/**
 * Called for every token; the path of the value is queried from @p js. Non-zero stops.
 * It must not feed, finish or reset the same tokenizer.
 */
typedef int (*json_value_fn)(void *user_data, const struct json_stream *js,
			     const struct json_value *value);

struct json_level {
	char key[JSON_KEY_MAX + 1]; /* key of the member being read, objects only */
	uint8_t key_len;
	bool key_truncated;
	bool is_array;
	int32_t index; /* index of the element being read, arrays only */
};

/* Decoded escapes (and short raw runs after them) gathered into one fragment. */
#define JSON_STREAM_OUT_MAX 64

struct json_stream {
	json_value_fn fn;
	void *user_data;
	/* Private state below: json_stream.c owns its layout; only the inline accessors of this
	 * header (json_stream_depth(), json_stream_key(), json_stream_key_n()) read depth and
	 * level[]. */
	struct json_level level[JSON_PATH_DEPTH + 1]; /* [1..depth]; [0] is unused */
	struct json_level deep; /* shared by the levels below JSON_PATH_DEPTH */
	uint32_t deep_array;	/* bit n: level JSON_PATH_DEPTH + 1 + n is an array */
	int status;	       /* sticky result once feeding stopped (error or callback) */
	uint32_t ucs;	       /* \uXXXX code unit being read */
	uint16_t pending_high; /* high surrogate waiting for its low half */
	uint8_t depth;	       /* containers open */
	uint8_t state;	       /* where in the grammar, between tokens */
	uint8_t lex;	       /* inside which token */
	uint8_t sub;	       /* number grammar state, or position in a literal */
	uint8_t lit;	       /* which literal: true, false, null */
	uint8_t hex_count;
	uint8_t num_len;
	uint8_t out_len;
	uint8_t u8_need;     /* continuation bytes still due for the held UTF-8 sequence */
	uint8_t u8_lo;	     /* range of the next continuation byte */
	uint8_t u8_hi;
	uint8_t u8_hold_len; /* bytes of a sequence cut by the end of a chunk */
	uint8_t u8_hold[4];
	bool in_key;
	bool str_first; /* no fragment of the current string handed on yet */
	char num[JSON_NUMBER_MAX + 1];
	char out[JSON_STREAM_OUT_MAX];
};

void json_stream_init(struct json_stream *js, json_value_fn fn, void *user_data);

/** Forget everything read: the next byte starts a new document. */
void json_stream_reset(struct json_stream *js);

/**
 * Tokenize @p len bytes. Returns 0, the non-zero value the callback returned, -EBADMSG for
 * malformed JSON (or anything but white space after the document), -E2BIG for nesting
 * deeper than JSON_STREAM_DEPTH_MAX or a number longer than JSON_NUMBER_MAX. Once it
 * returned non-zero, it returns that again, reading nothing, until json_stream_reset().
 */
int json_stream_feed(struct json_stream *js, const char *data, size_t len);

/**
 * End of input: 0 when exactly one complete document was read, else -EBADMSG. A number
 * that is the whole document is reported here (only its end tells it is complete), so this
 * may also return the callback's non-zero value. After feed returned non-zero, -EBADMSG.
 */
int json_stream_finish(struct json_stream *js);

/**
 * Depth of the value being reported: 0 for the document itself, 1 for a member or element
 * of it, and so on. For JSON_OBJECT_END/JSON_ARRAY_END it is the depth of the container.
 */
static inline int json_stream_depth(const struct json_stream *js)
{
	return js->depth;
}

/**
 * The path of the value being reported, matched in full from the root: names separated by
 * '.', "#" for any array element, "*" for any key; "" is the document itself. Examples:
 * "type", "response.usage.input_tokens", "choices.#.delta.tool_calls.#.function.arguments".
 * A truncated key matches only "*".
 */
bool json_stream_path_is(const struct json_stream *js, const char *path);

/** The key of the value at @p level (1..depth) when that level is an object member, or NULL. */
static inline const char *json_stream_key(const struct json_stream *js, int level)
{
	if (level < 1 || level > js->depth || level > JSON_PATH_DEPTH || js->level[level].is_array) {
		return NULL;
	}
	return js->level[level].key;
}

/**
 * The same with its length in @p len: a key may hold NUL bytes ("\u0000"), which the string
 * alone hides. A truncated key is returned as kept, with @p truncated set (a key longer than
 * JSON_KEY_MAX equals no name of that length or shorter).
 */
static inline const char *json_stream_key_n(const struct json_stream *js, int level,
					    size_t *len, bool *truncated)
{
	const char *key = json_stream_key(js, level);

	*len = key != NULL ? js->level[level].key_len : 0;
	*truncated = key != NULL && js->level[level].key_truncated;
	return key;
}

/** The index of the element at @p level (1..depth) when that level is an array, or -1. */
int json_stream_index(const struct json_stream *js, int level);

#endif /* AGENT_JSON_STREAM_H */
