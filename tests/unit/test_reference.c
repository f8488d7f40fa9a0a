/*
 * The reference registry (app/src/tools/reference.c): the pages generated from
 * docs/reference/ for this build, lookup by topic, and the search's scoring, ordering and
 * bounds, on the built-in pages and on small tables made here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "reference.h"
#include "reference_text.h"

/* ---- The built-in pages ---------------------------------------------------------------- */

static void test_builtin_pages_are_well_formed(void **state)
{
	const struct reference_index *idx = reference_builtin();

	(void)state;
	/* docs/reference has a page per topic; every option the sim enables keeps them all. */
	assert_true(idx->count >= 12);
	for (size_t i = 0; i < idx->count; i++) {
		const struct reference_page *p = &idx->pages[i];

		assert_non_null(p->topic);
		assert_true(strlen(p->topic) > 0 && strlen(p->topic) <= 31);
		assert_true(strlen(p->summary) > 0 && strlen(p->summary) <= 96);
		assert_true(strlen(p->keywords) > 0);
		assert_int_equal(strlen(page_text(p, REFERENCE_BODY)), p->body_len);
		assert_int_equal(strlen(page_text(p, REFERENCE_CONTRACT)), p->contract_len);
		assert_true(p->body_len > 0 && p->body_len <= 4000);
		assert_true(p->contract_len > 0 && p->contract_len <= 1024);
		/* Placeholders were filled in from the build's .config. */
		assert_null(strstr(page_text(p, REFERENCE_BODY), "{{"));
		assert_null(strstr(page_text(p, REFERENCE_CONTRACT), "{{"));
		if (i > 0) {
			assert_true(strcmp(idx->pages[i - 1].topic, p->topic) < 0);
		}
	}
}

static void test_builtin_topics(void **state)
{
	static const char *const topics[] = {
		"agent", "agent-ask", "agent-config", "agent-tools", "gpio",	 "hardware", "jobs",
		"man",	 "littlefs",  "settings",	"tls",	       "shell", "storage-tools",
	};
	const struct reference_index *idx = reference_builtin();

	(void)state;
	for (size_t i = 0; i < sizeof(topics) / sizeof(topics[0]); i++) {
		const struct reference_page *p = reference_lookup(idx, topics[i]);

		assert_non_null(p);
		assert_string_equal(p->topic, topics[i]);
	}
	/* The build's values, not the placeholders: the spec's 3 matches and 12 results. */
	assert_non_null(
		strstr(page_text(reference_lookup(idx, "man"), REFERENCE_CONTRACT), "(at most 3)"));
	assert_non_null(strstr(page_text(reference_lookup(idx, "man"), REFERENCE_CONTRACT),
			       "up to 12 lines"));
}

static void test_lookup(void **state)
{
	const struct reference_index *idx = reference_builtin();

	(void)state;
	assert_non_null(reference_lookup(idx, "GPIO"));
	assert_null(reference_lookup(idx, "gpi"));
	assert_null(reference_lookup(idx, "gpios"));
	assert_null(reference_lookup(idx, ""));
	assert_null(reference_lookup(idx, "nosuch"));
}

static size_t rank_of(const struct reference_hit *hits, size_t n, const char *topic)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(hits[i].page->topic, topic) == 0) {
			return i;
		}
	}
	return SIZE_MAX;
}

static void test_builtin_search(void **state)
{
	const struct reference_index *idx = reference_builtin();
	struct reference_hit hits[CONFIG_AGENT_MAN_RESULTS_MAX];
	size_t total;
	size_t n;

	(void)state;
	n = reference_search(idx, "gpio", 4, hits, CONFIG_AGENT_MAN_RESULTS_MAX, &total);
	assert_true(n >= 1);
	assert_string_equal(hits[0].page->topic, "gpio");
	n = reference_search(idx, "agent config", 12, hits, CONFIG_AGENT_MAN_RESULTS_MAX, NULL);
	assert_string_equal(hits[0].page->topic, "agent-config");
	n = reference_search(idx, "agent", 5, hits, CONFIG_AGENT_MAN_RESULTS_MAX, NULL);
	assert_string_equal(hits[0].page->topic, "agent");
	n = reference_search(idx, "How do I write a file?", 22, hits, CONFIG_AGENT_MAN_RESULTS_MAX,
			     NULL);
	assert_string_equal(hits[0].page->topic, "storage-tools");
	n = reference_search(idx, "CA certificate bundle", 21, hits, 3, NULL);
	assert_string_equal(hits[0].page->topic, "tls");
	n = reference_search(idx, "confirmation policy", 19, hits, 3, NULL);
	assert_string_equal(hits[0].page->topic, "agent-tools");
	/* Every word common: "the" and friends alone match nothing. */
	n = reference_search(idx, "how to do the", 13, hits, 3, &total);
	assert_int_equal(n, 0);
	assert_int_equal(total, 0);
	n = reference_search(idx, "xyzzy plugh", 11, hits, 3, &total);
	assert_int_equal(n, 0);
	assert_int_equal(total, 0);
	/* A word found in every page still returns at most the asked number. */
	n = reference_search(idx, "agent tools storage limits", 26, hits, 3, &total);
	assert_int_equal(n, 3);
	assert_true(total > 3);
	for (size_t i = 1; i < n; i++) {
		assert_true(hits[i - 1].score >= hits[i].score);
	}
}

/* ---- Scoring on a table of our own ------------------------------------------------------- */

#define PAGE(t, s, k, b, c)                                                                  \
	{.topic = t,                                                                         \
	 .summary = s,                                                                       \
	 .keywords = k,                                                                      \
	 .body = b,                                                                          \
	 .contract = c,                                                                      \
	 .body_len = sizeof(b) - 1,                                                          \
	 .contract_len = sizeof(c) - 1}

static const struct reference_page pages[] = {
	PAGE("alpha", "first page", "one", "zebra zebra zebra", "nothing"),
	PAGE("beta", "zebra in the summary", "two", "body", "contract"),
	PAGE("delta-zebra", "fourth", "four", "body", "contract"),
	PAGE("epsilon", "fifth", "zebras", "body", "contract"),
	PAGE("gamma", "third", "three", "body", "zebra in the contract"),
	PAGE("zebra", "the topic itself", "five", "body", "contract"),
};

static const struct reference_index table = {.pages = pages,
					     .count = sizeof(pages) / sizeof(pages[0])};

static void test_scores_by_field(void **state)
{
	struct reference_hit hits[8];
	size_t total = 99;
	size_t n;

	(void)state;
	n = reference_search(&table, "Zebra", 5, hits, 8, &total);
	assert_int_equal(n, 6);
	assert_int_equal(total, 6);
	assert_string_equal(hits[0].page->topic, "zebra");
	assert_int_equal(hits[0].score, REFERENCE_SCORE_TOPIC);
	assert_string_equal(hits[1].page->topic, "delta-zebra");
	assert_int_equal(hits[1].score, REFERENCE_SCORE_TOPIC_PART);
	/* "zebras" is the keyword: plural folded */
	assert_string_equal(hits[2].page->topic, "epsilon");
	assert_int_equal(hits[2].score, REFERENCE_SCORE_KEYWORD);
	assert_string_equal(hits[3].page->topic, "beta");
	assert_int_equal(hits[3].score, REFERENCE_SCORE_SUMMARY);
	assert_string_equal(hits[4].page->topic, "gamma");
	assert_int_equal(hits[4].score, REFERENCE_SCORE_CONTRACT);
	/* a word counts once per field, however often it appears */
	assert_string_equal(hits[5].page->topic, "alpha");
	assert_int_equal(hits[5].score, REFERENCE_SCORE_BODY);
}

static void test_words_add_up_and_ties_keep_table_order(void **state)
{
	struct reference_hit hits[8];
	size_t n;

	(void)state;
	/* "body" is in the bodies of all but alpha, "contract" in their contracts: equal
	 * scores, in table order.
	 */
	n = reference_search(&table, "contract body", 13, hits, 8, NULL);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(hits[i].score, REFERENCE_SCORE_CONTRACT + REFERENCE_SCORE_BODY);
	}
	assert_string_equal(hits[0].page->topic, "beta");
	assert_string_equal(hits[1].page->topic, "delta-zebra");
	assert_string_equal(hits[2].page->topic, "epsilon");
	assert_string_equal(hits[3].page->topic, "gamma");
	assert_string_equal(hits[4].page->topic, "zebra");
	/* Words add up: "zebra" in gamma's contract too. */
	n = reference_search(&table, "contract body zebra", 19, hits, 8, NULL);
	assert_string_equal(hits[0].page->topic, "zebra");
	assert_int_equal(hits[0].score, REFERENCE_SCORE_TOPIC + REFERENCE_SCORE_CONTRACT +
						REFERENCE_SCORE_BODY);
	assert_int_equal(rank_of(hits, n, "gamma"), 4);
	assert_int_equal(hits[4].score, 2 * REFERENCE_SCORE_CONTRACT + REFERENCE_SCORE_BODY);
	/* A repeated word counts once. */
	n = reference_search(&table, "zebra zebra ZEBRA", 17, hits, 1, NULL);
	assert_int_equal(hits[0].score, REFERENCE_SCORE_TOPIC);
}

static void test_bounds_of_the_hit_array(void **state)
{
	struct reference_hit hits[4];
	size_t total;
	size_t n;

	(void)state;
	memset(hits, 0x5a, sizeof(hits));
	n = reference_search(&table, "zebra", 5, hits, 2, &total);
	assert_int_equal(n, 2);
	assert_int_equal(total, 6);
	assert_string_equal(hits[0].page->topic, "zebra");
	assert_string_equal(hits[1].page->topic, "delta-zebra");
	/* nothing written past max */
	assert_int_equal(hits[2].score, 0x5a5a5a5a);
	assert_int_equal(reference_search(&table, "zebra", 5, hits, 0, &total), 0);
	assert_int_equal(total, 6);
}

static void test_query_edges(void **state)
{
	struct reference_hit hits[8];
	char many[512];
	size_t len = 0;

	(void)state;
	assert_int_equal(reference_search(&table, "", 0, hits, 8, NULL), 0);
	assert_int_equal(reference_search(&table, NULL, 0, hits, 8, NULL), 0);
	assert_int_equal(reference_search(&table, "z", 1, hits, 8, NULL), 0);
	/* Bytes past len and NUL bytes inside are not words of the query. */
	assert_int_equal(reference_search(&table, "xx zebra", 2, hits, 8, NULL), 0);
	assert_int_equal(reference_search(&table, "xx\0zebra", 8, hits, 8, NULL), 6);
	/* Punctuation and non-ASCII bytes separate words. */
	assert_int_equal(reference_search(&table, "\xc3\xa9zebra!?", 9, hits, 8, NULL), 6);
	/* Only the first REFERENCE_QUERY_WORDS_MAX words count. */
	for (int i = 0; i < REFERENCE_QUERY_WORDS_MAX; i++) {
		len += (size_t)snprintf(many + len, sizeof(many) - len, "w%02d ", i);
	}
	len += (size_t)snprintf(many + len, sizeof(many) - len, "zebra");
	assert_int_equal(reference_search(&table, many, len, hits, 8, NULL), 0);
	/* A word longer than REFERENCE_WORD_MAX is cut and matches nothing here. */
	static const char long_word[] = "zebraaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

	assert_true(strlen(long_word) > REFERENCE_WORD_MAX);
	assert_int_equal(reference_search(&table, long_word, strlen(long_word), hits, 8, NULL), 0);
}

/* ---- Packed text (docs/reference-format.md "Packed text") ------------------------------- */

/* Reads @p field of @p p in pieces of @p piece bytes into @p out (at most @p size). */
static size_t read_in_pieces(const struct reference_page *p, enum reference_field field,
			     size_t piece, char *out, size_t size, bool *corrupt)
{
	struct reference_reader r;
	size_t len = 0;
	size_t n;

	reference_open(&r, p, field);
	while (len < size &&
	       (n = reference_read(&r, out + len, piece < size - len ? piece : size - len)) > 0) {
		len += n;
	}
	*corrupt = r.corrupt;
	return len;
}

static void test_builtin_pages_are_packed_and_read_in_any_piece(void **state)
{
	const struct reference_index *idx = reference_builtin();
	static char whole[PAGE_TEXT_MAX + 1];
	static char got[PAGE_TEXT_MAX + 1];
	size_t text = 0;
	size_t packed = 0;
	bool corrupt;

	(void)state;
	for (size_t i = 0; i < idx->count; i++) {
		const struct reference_page *p = &idx->pages[i];

		assert_non_null(p->codec);
		text += p->body_len + p->contract_len;
		packed += ((size_t)p->body_size * p->codec->code_bits + 7) / 8 +
			  ((size_t)p->contract_size * p->codec->code_bits + 7) / 8;
		for (int f = REFERENCE_BODY; f <= REFERENCE_CONTRACT; f++) {
			size_t len = f == REFERENCE_BODY ? p->body_len : p->contract_len;

			strcpy(whole, page_text(p, (enum reference_field)f));
			assert_int_equal(strlen(whole), len);
			for (size_t piece = 1; piece <= 67; piece++) {
				assert_int_equal(read_in_pieces(p, (enum reference_field)f, piece, got,
								sizeof(got), &corrupt),
						 len);
				assert_false(corrupt);
				assert_memory_equal(got, whole, len);
			}
		}
	}
	/* Packing pays: the codes are well under half the text. */
	assert_true(packed * 10 < text * 5);
}

/* Whether the word was met before (each distinct word is queried once). */
static bool seen_before(const char *word, size_t len)
{
	static char seen[4096][REFERENCE_WORD_MAX + 1];
	static size_t count;
	char w[REFERENCE_WORD_MAX + 1] = {0};

	for (size_t i = 0; i < len && i < REFERENCE_WORD_MAX; i++) {
		w[i] = (char)tolower((unsigned char)word[i]);
	}
	for (size_t i = 0; i < count; i++) {
		if (strcmp(seen[i], w) == 0) {
			return true;
		}
	}
	assert_true(count < 4096);
	strcpy(seen[count++], w);
	return false;
}

/* Search over the packed pages ranks exactly as over their plain text. */
static void test_packed_search_equals_plain_search(void **state)
{
	const struct reference_index *idx = reference_builtin();
	static struct reference_page plain[64];
	static char texts[64][2][PAGE_TEXT_MAX + 1];
	struct reference_index plain_idx = {.pages = plain, .count = idx->count};
	size_t queries = 0;

	(void)state;
	assert_true(idx->count <= 64);
	for (size_t i = 0; i < idx->count; i++) {
		plain[i] = idx->pages[i];
		plain[i].codec = NULL;
		strcpy(texts[i][0], page_text(&idx->pages[i], REFERENCE_BODY));
		strcpy(texts[i][1], page_text(&idx->pages[i], REFERENCE_CONTRACT));
		plain[i].body = texts[i][0];
		plain[i].contract = texts[i][1];
	}
	/* Every word of every page, alone and with the word after it. */
	for (size_t i = 0; i < idx->count; i++) {
		for (int f = 0; f < 2; f++) {
			const char *t = texts[i][f];
			size_t at = 0;

			while (t[at] != '\0') {
				struct reference_hit a[12];
				struct reference_hit b[12];
				size_t a_total;
				size_t b_total;
				size_t len = 0;
				size_t na;

				while (t[at] != '\0' && !isalnum((unsigned char)t[at])) {
					at++;
				}
				while (isalnum((unsigned char)t[at + len]) || t[at + len] == '_') {
					len++;
				}
				if (len == 0 || seen_before(&t[at], len)) {
					at += len;
					continue;
				}
				for (size_t q = len; q <= len + 16 && t[at + q] != '\0'; q += 16) {
					na = reference_search(idx, &t[at], q, a, 12, &a_total);
					assert_int_equal(reference_search(&plain_idx, &t[at], q, b, 12,
									  &b_total),
							 na);
					assert_int_equal(a_total, b_total);
					for (size_t h = 0; h < na; h++) {
						assert_int_equal(a[h].page - idx->pages,
								 b[h].page - plain);
						assert_int_equal(a[h].score, b[h].score);
					}
					queries++;
				}
				at += len;
			}
		}
	}
	assert_true(queries > 500);
}

/* 'x' and pairs (i, 0): code k stands for k + 1 x's and is k pairs deep. */
static const uint8_t x_literal[] = {'x'};
static const uint8_t chain_pairs[] = {0, 0, 1, 0, 2,  0, 3,  0, 4,  0, 5,  0, 6,  0, 7,  0, 8, 0,
				      9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15, 0, 16, 0};
static const struct reference_codec chain = {
	.literals = x_literal, .pairs = chain_pairs, .literal_count = 1, .pair_count = 17,
	.code_bits = 8};

static size_t read_codes(const struct reference_codec *codec, const uint8_t *codes,
			 size_t count, size_t len, char *out, size_t size, bool *corrupt)
{
	struct reference_page p = {.topic = "t", .summary = "s", .keywords = "k",
				   .body = (const char *)codes, .contract = "",
				   .codec = codec, .body_len = (uint16_t)len,
				   .body_size = (uint16_t)count};

	return read_in_pieces(&p, REFERENCE_BODY, 5, out, size, corrupt);
}

static void test_codec_depth_bound(void **state)
{
	char out[64];
	bool corrupt;
	uint8_t code = REFERENCE_CODEC_DEPTH;

	(void)state;
	/* REFERENCE_CODEC_DEPTH pairs deep: read whole. */
	memset(out, 0, sizeof(out));
	assert_int_equal(read_codes(&chain, &code, 1, REFERENCE_CODEC_DEPTH + 1, out, sizeof(out),
				    &corrupt),
			 REFERENCE_CODEC_DEPTH + 1);
	assert_false(corrupt);
	assert_int_equal(strspn(out, "x"), REFERENCE_CODEC_DEPTH + 1);
	/* One deeper does not fit the reader's stack: refused, nothing read. */
	code = REFERENCE_CODEC_DEPTH + 1;
	assert_int_equal(read_codes(&chain, &code, 1, REFERENCE_CODEC_DEPTH + 2, out, sizeof(out),
				    &corrupt),
			 0);
	assert_true(corrupt);
}

static void test_codec_corrupt_codes_end_the_text(void **state)
{
	static const uint8_t ab[] = {'a', 'b'};
	/* code 2 = "ab"; code 3 names itself; code 4 names a code above it */
	static const uint8_t pairs[] = {0, 1, 3, 0, 0, 5};
	static const struct reference_codec codec = {
		.literals = ab, .pairs = pairs, .literal_count = 2, .pair_count = 3, .code_bits = 8};
	char out[16];
	bool corrupt;

	(void)state;
	/* Valid: "ab" "ab" "a", the length reached: codes after it are not read. */
	static const uint8_t ok[] = {2, 2, 0, 7, 7};

	memset(out, 0, sizeof(out));
	assert_int_equal(read_codes(&codec, ok, sizeof(ok), 5, out, sizeof(out), &corrupt), 5);
	assert_false(corrupt);
	assert_string_equal(out, "ababa");
	/* The caller's size bounds what is written: N, and the byte after it untouched. */
	memset(out, '#', sizeof(out));
	assert_int_equal(read_codes(&codec, ok, sizeof(ok), 5, out, 3, &corrupt), 3);
	assert_memory_equal(out, "aba#", 4);
	/* A code past the table (5 = 2 literals + 3 pairs): the text ends before it. */
	static const uint8_t past[] = {0, 5, 1};

	assert_int_equal(read_codes(&codec, past, sizeof(past), 3, out, sizeof(out), &corrupt), 1);
	assert_true(corrupt);
	/* The last code of the table is one: */
	static const uint8_t last[] = {4};

	assert_int_equal(read_codes(&codec, last, sizeof(last), 2, out, sizeof(out), &corrupt), 0);
	assert_true(corrupt); /* 4 names 5, above itself */
	/* A pair naming itself would never end. */
	static const uint8_t self[] = {1, 3};

	assert_int_equal(read_codes(&codec, self, sizeof(self), 4, out, sizeof(out), &corrupt), 1);
	assert_true(corrupt);
	/* The codes run out before the length: what there was, then the end. */
	static const uint8_t short_codes[] = {2};

	assert_int_equal(
		read_codes(&codec, short_codes, sizeof(short_codes), 3, out, sizeof(out), &corrupt),
		2);
	assert_true(corrupt);
	/* No codes at all and a length of 0: an empty text, not corrupt. */
	assert_int_equal(read_codes(&codec, NULL, 0, 0, out, sizeof(out), &corrupt), 0);
	assert_false(corrupt);
}

/*
 * Codes wider than a byte (the generator's are 10 bits): 300 literals would not fit 8 bits,
 * so the table here has 2 literals and 298 pairs, code k + 2 = pair (k + 1, 0) for k >= 1
 * and code 2 = (0, 1): code 299 is "ab" followed by 297 a's, 298 pairs deep, too deep to
 * read; code 14 is "ab" and 12 a's. Widths out of 8..12 are corrupt.
 */
static void put_bits(uint8_t *out, size_t i, unsigned int bits, unsigned int code)
{
	for (unsigned int b = 0; b < bits; b++) {
		size_t at = i * bits + b;

		if ((code >> b) & 1u) {
			out[at / 8] |= (uint8_t)(1u << (at % 8));
		}
	}
}

static void test_codec_wide_codes(void **state)
{
	static const uint8_t ab[] = {'a', 'b'};
	static uint8_t pairs[(2 * 298 * (REFERENCE_CODE_BITS_MAX + 1) + 7) / 8];
	struct reference_codec codec = {
		.literals = ab, .pairs = pairs, .literal_count = 2, .pair_count = 298};
	uint8_t codes[8];
	char out[32];
	bool corrupt;

	(void)state;
	for (unsigned int bits = REFERENCE_CODE_BITS_MIN - 1; bits <= REFERENCE_CODE_BITS_MAX + 1;
	     bits++) {
		bool valid = bits >= REFERENCE_CODE_BITS_MIN && bits <= REFERENCE_CODE_BITS_MAX;

		memset(pairs, 0, sizeof(pairs));
		memset(codes, 0, sizeof(codes));
		put_bits(pairs, 0, bits, 0);
		put_bits(pairs, 1, bits, 1);
		for (unsigned int k = 1; k < 298; k++) {
			put_bits(pairs, 2 * k, bits, k + 1);
			put_bits(pairs, 2 * k + 1, bits, 0);
		}
		codec.code_bits = (uint8_t)bits;
		/* "b", then code 14 ("ab" + 12 a's), then "a": 16 bytes. */
		put_bits(codes, 0, bits, 1);
		put_bits(codes, 1, bits, 14);
		put_bits(codes, 2, bits, 0);
		memset(out, 0, sizeof(out));
		assert_int_equal(read_codes(&codec, codes, 3, 16, out, sizeof(out), &corrupt),
				 valid ? 16 : 0);
		assert_int_equal(corrupt, !valid);
		if (valid) {
			assert_string_equal(out, "babaaaaaaaaaaaaa");
		}
		if (bits < 9 || !valid) {
			continue; /* code 257 needs 9 bits */
		}
		/* A code above 255: 257 is "ab" + 255 a's, 256 pairs deep: refused, too deep. */
		memset(codes, 0, sizeof(codes));
		put_bits(codes, 0, bits, 257);
		assert_int_equal(read_codes(&codec, codes, 1, 257, out, sizeof(out), &corrupt), 0);
		assert_true(corrupt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_pages_are_well_formed),
		cmocka_unit_test(test_builtin_topics),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_builtin_search),
		cmocka_unit_test(test_scores_by_field),
		cmocka_unit_test(test_words_add_up_and_ties_keep_table_order),
		cmocka_unit_test(test_bounds_of_the_hit_array),
		cmocka_unit_test(test_query_edges),
		cmocka_unit_test(test_builtin_pages_are_packed_and_read_in_any_piece),
		cmocka_unit_test(test_packed_search_equals_plain_search),
		cmocka_unit_test(test_codec_depth_bound),
		cmocka_unit_test(test_codec_corrupt_codes_end_the_text),
		cmocka_unit_test(test_codec_wide_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
