/*
 * The reference registry: the pages of docs/reference/ that this build keeps, generated at
 * build time by scripts/gen_reference.py into const data (flash) when
 * CONFIG_AGENT_TOOLS_REFERENCE is set. The `man` command (app/src/agent/shell/man_cmd.c) and the
 * firmware_reference tool (reference_tool.c) read it. docs/reference-format.md describes
 * the pages.
 *
 * Searching needs no heap: the caller provides the hit array, and the query's words live on
 * the stack (at most REFERENCE_QUERY_WORDS_MAX words of REFERENCE_WORD_MAX bytes).
 */
#ifndef AGENT_REFERENCE_H
#define AGENT_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The dictionary of packed text (docs/reference-format.md, "Packed text"): a packed field
 * is a run of codes of @c code_bits bits each, least significant bit first. A code below
 * @c literal_count stands for the byte literals[code]; code literal_count + i stands for the
 * two codes 2i and 2i + 1 of @c pairs (packed the same way), each smaller than itself. The
 * generator keeps every code within REFERENCE_CODEC_DEPTH pairs of its bytes, so a reader
 * decodes with a stack of that many codes and no window.
 */
struct reference_codec {
	const uint8_t *literals;
	const uint8_t *pairs;
	uint16_t literal_count;
	uint16_t pair_count;
	uint8_t code_bits; /* REFERENCE_CODE_BITS_MIN to REFERENCE_CODE_BITS_MAX */
};

#define REFERENCE_CODEC_DEPTH	 16
#define REFERENCE_CODE_BITS_MIN 8
#define REFERENCE_CODE_BITS_MAX 12

struct reference_page {
	const char *topic;    /* a-z 0-9 '-', unique */
	const char *summary;  /* one line */
	const char *keywords; /* lower-case words separated by single spaces */
	const char *body;     /* Markdown, what `man TOPIC` prints before the contract */
	const char *contract; /* compact: commands, signatures, limits, errors */
	/* NULL: body and contract are the text; else their packed codes (read them with a
	 * reference_reader). */
	const struct reference_codec *codec;
	uint16_t body_len;     /* bytes of text */
	uint16_t contract_len; /* bytes of text */
	uint16_t body_size;    /* packed codes (with a codec) */
	uint16_t contract_size;
};

enum reference_field {
	REFERENCE_BODY,
	REFERENCE_CONTRACT,
};

/* Reads the text of one field of a page, packed or not, from its start. */
struct reference_reader {
	const struct reference_codec *codec;
	const uint8_t *src;
	size_t next;	 /* the next code of a packed field */
	size_t src_left; /* codes (or plain bytes) not read yet */
	size_t left;     /* bytes of text still to come */
	uint16_t stack[REFERENCE_CODEC_DEPTH];
	uint8_t depth;
	bool corrupt; /* a code outside the table, a pair not below its code, too deep, a
		       * code width out of bounds, or the codes ran out before the text's length */
};

/* A table of pages, sorted by topic (the generated one, or a test's own). */
struct reference_index {
	const struct reference_page *pages;
	size_t count;
};

struct reference_hit {
	const struct reference_page *page;
	uint32_t score;
};

/* Words of a query beyond these are ignored; longer words are cut. */
#define REFERENCE_QUERY_WORDS_MAX 16
#define REFERENCE_WORD_MAX	  31

/*
 * Points per query word, counted once per field: the words name the whole topic (every one
 * of its '-' separated parts), or one part of it; a keyword; a word of the summary, the
 * contract, the body.
 */
#define REFERENCE_SCORE_TOPIC	   15
#define REFERENCE_SCORE_TOPIC_PART 10
#define REFERENCE_SCORE_KEYWORD	   6
#define REFERENCE_SCORE_SUMMARY	   3
#define REFERENCE_SCORE_CONTRACT   2
#define REFERENCE_SCORE_BODY	   1

/* The pages of this build, defined by the generated reference_pages.c. */
extern const struct reference_index reference_builtin_index;

/** The pages compiled into this firmware. */
const struct reference_index *reference_builtin(void);

/**
 * Rank the pages of @p index against the words of @p query (@p len bytes, any bytes).
 * Words are runs of ASCII letters, digits and '_', compared without case; a trailing 's'
 * is ignored on words of four letters or more, and common English words ("the", "how",
 * ...) and one-letter words are skipped. A page matches when at least one word scores.
 *
 * Stores the best min(@p max, matches) hits in @p hits, best first; pages with equal
 * scores keep their table (topic) order. Returns the number stored; @p total, when not
 * NULL, receives the number of matching pages.
 */
size_t reference_search(const struct reference_index *index, const char *query, size_t len,
			struct reference_hit *hits, size_t max, size_t *total);

/** Start reading @p field of @p page. */
void reference_open(struct reference_reader *r, const struct reference_page *page,
		    enum reference_field field);

/**
 * The next at most @p size bytes of the text into @p buf; returns how many (0 at the end).
 * A corrupt packed field ends early (r->corrupt set): the reader never reads outside the
 * codes, the tables or its stack, and never gives more than the field's length.
 */
size_t reference_read(struct reference_reader *r, char *buf, size_t size);

/** The page named exactly @p topic (without regard to case), or NULL. */
const struct reference_page *reference_lookup(const struct reference_index *index,
					      const char *topic);

#endif /* AGENT_REFERENCE_H */
