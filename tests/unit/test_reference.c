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

#include <stdio.h>
#include <string.h>

#include "reference.h"

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
		assert_int_equal(strlen(p->body), p->body_len);
		assert_int_equal(strlen(p->contract), p->contract_len);
		assert_true(p->body_len > 0 && p->body_len <= 4000);
		assert_true(p->contract_len > 0 && p->contract_len <= 1024);
		/* Placeholders were filled in from the build's .config. */
		assert_null(strstr(p->body, "{{"));
		assert_null(strstr(p->contract, "{{"));
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
	assert_non_null(strstr(reference_lookup(idx, "man")->contract, "(at most 3)"));
	assert_non_null(strstr(reference_lookup(idx, "man")->contract, "up to 12 lines"));
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
