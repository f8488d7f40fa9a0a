/*
 * Search, lookup and reading of the reference registry (reference.h). No heap, no state:
 * each call tokenizes the query onto the stack and scans the const page text once per
 * field, decoding packed text piece by piece as it goes (a stack of REFERENCE_CODEC_DEPTH
 * codes, no window).
 */
#if defined(CONFIG_AGENT_TOOLS_REFERENCE)

#include "reference.h"

#include <stdbool.h>
#include <string.h>

struct query_words {
	char word[REFERENCE_QUERY_WORDS_MAX][REFERENCE_WORD_MAX + 1];
	uint8_t len[REFERENCE_QUERY_WORDS_MAX];
	size_t count;
};

/* Matched words, one bit per query word, for each field of one page. */
struct field_hits {
	uint32_t topic;
	uint32_t topic_part;
	uint32_t keyword;
	uint32_t summary;
	uint32_t contract;
	uint32_t body;
};

/* English words too common to say anything about a page. */
static const char *const stop_words[] = {
	"a",	"an",  "and",  "are", "as",   "at",	"be",	"by",  "can",  "do",
	"does", "for", "from", "how", "i",    "in",	"is",	"it",  "me",   "my",
	"of",	"on",  "or",   "the", "this", "that", "to",	"use", "what", "when",
	"with", "you", "your",
};

const struct reference_index *reference_builtin(void)
{
	return &reference_builtin_index;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static bool is_stop_word(const char *word, size_t len)
{
	for (size_t i = 0; i < sizeof(stop_words) / sizeof(stop_words[0]); i++) {
		if (strlen(stop_words[i]) == len && memcmp(stop_words[i], word, len) == 0) {
			return true;
		}
	}
	return false;
}

/* Equal, or equal but for one trailing 's' on a word of at least four letters. */
static bool words_match(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen == blen) {
		return memcmp(a, b, alen) == 0;
	}
	if (alen == blen + 1 && alen >= 4 && a[blen] == 's') {
		return memcmp(a, b, blen) == 0;
	}
	if (blen == alen + 1 && blen >= 4 && b[alen] == 's') {
		return memcmp(a, b, alen) == 0;
	}
	return false;
}

/* Splits text, given in pieces, into words (lower-cased, cut to REFERENCE_WORD_MAX bytes). */
struct word_split {
	void (*fn)(const char *, size_t, void *);
	void *user_data;
	size_t n;
	char word[REFERENCE_WORD_MAX + 1];
};

static void split_end(struct word_split *s)
{
	if (s->n > 0) {
		s->word[s->n] = '\0';
		s->fn(s->word, s->n, s->user_data);
		s->n = 0;
	}
}

static void split_part(struct word_split *s, const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (!word_char(text[i])) {
			split_end(s);
		} else if (s->n < REFERENCE_WORD_MAX) {
			s->word[s->n++] = lower(text[i]);
		}
	}
}

/* Calls @p fn for each word of the NUL-terminated @p text, or of @p len bytes of it. */
static void each_word(const char *text, size_t len, void (*fn)(const char *, size_t, void *),
		      void *user_data)
{
	struct word_split s = {.fn = fn, .user_data = user_data, .n = 0};

	split_part(&s, text, len == SIZE_MAX ? strlen(text) : len);
	split_end(&s);
}

/* Calls @p fn for each word of @p field of @p page, decoding it piece by piece. */
static void each_field_word(const struct reference_page *page, enum reference_field field,
			    void (*fn)(const char *, size_t, void *), void *user_data)
{
	struct word_split s = {.fn = fn, .user_data = user_data, .n = 0};
	struct reference_reader r;
	char piece[64];
	size_t n;

	reference_open(&r, page, field);
	while ((n = reference_read(&r, piece, sizeof(piece))) > 0) {
		split_part(&s, piece, n);
	}
	split_end(&s);
}

static void add_query_word(const char *word, size_t len, void *user_data)
{
	struct query_words *q = user_data;

	if (len < 2 || is_stop_word(word, len) || q->count == REFERENCE_QUERY_WORDS_MAX) {
		return;
	}
	for (size_t i = 0; i < q->count; i++) {
		if (q->len[i] == len && memcmp(q->word[i], word, len) == 0) {
			return;
		}
	}
	memcpy(q->word[q->count], word, len + 1);
	q->len[q->count] = (uint8_t)len;
	q->count++;
}

struct field_scan {
	const struct query_words *q;
	uint32_t mask;
};

static void match_word(const char *word, size_t len, void *user_data)
{
	struct field_scan *scan = user_data;

	for (size_t i = 0; i < scan->q->count; i++) {
		if (words_match(word, len, scan->q->word[i], scan->q->len[i])) {
			scan->mask |= 1u << i;
		}
	}
}

static uint32_t scan_field(const struct query_words *q, const char *text)
{
	struct field_scan scan = {.q = q, .mask = 0};

	each_word(text, SIZE_MAX, match_word, &scan);
	return scan.mask;
}

static uint32_t scan_page_field(const struct query_words *q, const struct reference_page *page,
				enum reference_field field)
{
	struct field_scan scan = {.q = q, .mask = 0};

	each_field_word(page, field, match_word, &scan);
	return scan.mask;
}

/*
 * Topic parts are split at '-': "agent-config" has the parts "agent" and "config". Returns
 * the words naming a part; when every part is named, they name the whole topic and are
 * moved to @p whole instead.
 */
static uint32_t scan_topic(const struct query_words *q, const char *topic, uint32_t *whole)
{
	uint32_t words = 0;
	bool every_part = true;
	size_t topic_len = strlen(topic);
	size_t start = 0;

	for (size_t i = 0; i <= topic_len; i++) {
		uint32_t part = 0;

		if (i < topic_len && topic[i] != '-') {
			continue;
		}
		for (size_t w = 0; w < q->count; w++) {
			if (words_match(topic + start, i - start, q->word[w], q->len[w])) {
				part |= 1u << w;
			}
		}
		every_part = every_part && part != 0;
		words |= part;
		start = i + 1;
	}
	*whole = every_part ? words : 0;
	return every_part ? 0 : words;
}

static uint32_t count_bits(uint32_t v)
{
	uint32_t n = 0;

	for (; v != 0; v &= v - 1) {
		n++;
	}
	return n;
}

static uint32_t score_page(const struct query_words *q, const struct reference_page *page)
{
	struct field_hits h;

	h.topic_part = scan_topic(q, page->topic, &h.topic);
	h.keyword = scan_field(q, page->keywords);
	h.summary = scan_field(q, page->summary);
	h.contract = scan_page_field(q, page, REFERENCE_CONTRACT);
	h.body = scan_page_field(q, page, REFERENCE_BODY);
	return count_bits(h.topic) * REFERENCE_SCORE_TOPIC +
	       count_bits(h.topic_part) * REFERENCE_SCORE_TOPIC_PART +
	       count_bits(h.keyword) * REFERENCE_SCORE_KEYWORD +
	       count_bits(h.summary) * REFERENCE_SCORE_SUMMARY +
	       count_bits(h.contract) * REFERENCE_SCORE_CONTRACT +
	       count_bits(h.body) * REFERENCE_SCORE_BODY;
}

size_t reference_search(const struct reference_index *index, const char *query, size_t len,
			struct reference_hit *hits, size_t max, size_t *total)
{
	struct query_words q;
	size_t stored = 0;
	size_t matched = 0;

	q.count = 0;
	if (query != NULL) {
		each_word(query, len, add_query_word, &q);
	}
	for (size_t i = 0; q.count > 0 && i < index->count; i++) {
		uint32_t score = score_page(&q, &index->pages[i]);
		size_t pos;

		if (score == 0) {
			continue;
		}
		matched++;
		/* Insert after every hit scoring at least as much: ties keep table order. */
		pos = stored;
		while (pos > 0 && hits[pos - 1].score < score) {
			pos--;
		}
		if (pos >= max) {
			continue;
		}
		if (stored < max) {
			stored++;
		}
		memmove(&hits[pos + 1], &hits[pos], (stored - 1 - pos) * sizeof(hits[0]));
		hits[pos].page = &index->pages[i];
		hits[pos].score = score;
	}
	if (total != NULL) {
		*total = matched;
	}
	return stored;
}

const struct reference_page *reference_lookup(const struct reference_index *index,
					      const char *topic)
{
	for (size_t i = 0; i < index->count; i++) {
		const char *a = index->pages[i].topic;
		size_t j = 0;

		while (a[j] != '\0' && lower(topic[j]) == a[j]) {
			j++;
		}
		if (a[j] == '\0' && topic[j] == '\0') {
			return &index->pages[i];
		}
	}
	return NULL;
}

#endif /* CONFIG_AGENT_TOOLS_REFERENCE */
