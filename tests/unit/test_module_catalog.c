/*
 * The module catalog (app/src/modules/module_catalog.c; docs/modules.md "The catalog"):
 * every entry taken and one more, the arena filled exactly and one byte more, the bytes a
 * refusal says it needs, freed neighbours coalescing, an incomplete arrival cleared by a new
 * begin of its name, an installed entry replaced at commit, the bounds of a write and the
 * order of its parts, texts that never move. Sizes follow the build's Kconfig values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_catalog.h"

#define SLOTS CONFIG_AGENT_MODULE_SLOTS
#define BYTES ((uint32_t)CONFIG_AGENT_CATALOG_BYTES)

_Static_assert(SLOTS >= 8, "the tests below take up to 8 entries at once");
_Static_assert(CONFIG_AGENT_CATALOG_BYTES >= 1024, "the tests below place runs up to 1000");

static uint8_t pattern_buf[BYTES + 16u];

/* @p len bytes of a pattern that differs by @p seed. */
static const uint8_t *pattern(uint8_t seed, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++) {
		pattern_buf[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 8));
	}
	return pattern_buf;
}

static bool text_is(int index, uint8_t seed, uint32_t len)
{
	static uint8_t want[BYTES];

	memcpy(want, pattern(seed, len), len);
	return memcmp(module_catalog_text(index), want, len) == 0;
}

static int begin(const char *name, uint32_t size)
{
	return module_catalog_begin(name, MODULE_KIND_SKILL, size / 3u, size - size / 3u, NULL,
				    NULL, NULL);
}

/* An installed entry of @p size bytes of pattern @p seed; its index. */
static int install(const char *name, uint32_t size, uint8_t seed)
{
	int index = begin(name, size);

	assert_true(index >= 0);
	assert_int_equal(module_catalog_write(index, 0, pattern(seed, size), size), 0);
	assert_int_equal(module_catalog_commit(index), 0);
	return index;
}

static struct module_catalog_stats stats(void)
{
	struct module_catalog_stats s;

	module_catalog_stats(&s);
	return s;
}

static int setup(void **state)
{
	(void)state;
	module_catalog_reset();
	return 0;
}

static void test_every_entry_then_one_more(void **state)
{
	char name[16];

	(void)state;
	for (int i = 0; i < SLOTS; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		assert_int_equal(begin(name, 1), i);
	}
	assert_int_equal(stats().entries, SLOTS);
	assert_int_equal(stats().free_bytes, BYTES - SLOTS);
	assert_int_equal(begin("one-more", 1), -ENOSPC);
	/* A free entry again: the begin takes it. */
	module_catalog_free(3);
	assert_int_equal(begin("one-more", 1), 3);
	assert_int_equal(begin("two-more", 1), -ENOSPC);
}

static void test_the_arena_exactly_then_one_byte_more(void **state)
{
	uint32_t need = 0, largest = 99;

	(void)state;
	/* One entry of the whole arena; then not a byte more. */
	assert_int_equal(module_catalog_begin("all", MODULE_KIND_ROLE, 100, BYTES - 100u, NULL,
					      &need, &largest),
			 0);
	assert_int_equal(module_catalog_entry(0)->off, 0);
	assert_int_equal(stats().free_bytes, 0);
	assert_int_equal(stats().largest_free, 0);
	assert_int_equal(
		module_catalog_begin("one", MODULE_KIND_ROLE, 0, 1, NULL, &need, &largest),
		-ENOMEM);
	assert_int_equal(need, 1);
	assert_int_equal(largest, 0);

	/* Two entries filling it exactly; one byte more is refused with its need. */
	module_catalog_reset();
	assert_int_equal(begin("a", BYTES - 10u), 0);
	assert_int_equal(begin("b", 10), 1);
	assert_int_equal(module_catalog_entry(1)->off, BYTES - 10u);
	assert_int_equal(
		module_catalog_begin("c", MODULE_KIND_TOOL, 1, 0, NULL, &need, &largest),
		-ENOMEM);
	assert_int_equal(need, 1);
	assert_int_equal(largest, 0);
	/* Ten bytes free: ten fit, eleven need eleven. */
	module_catalog_free(1);
	assert_int_equal(
		module_catalog_begin("c", MODULE_KIND_TOOL, 5, 6, NULL, &need, &largest),
		-ENOMEM);
	assert_int_equal(need, 11);
	assert_int_equal(largest, 10);
	assert_int_equal(begin("c", 10), 1);

	/* Over the arena is not a question of room: -EINVAL at any fill. */
	module_catalog_reset();
	assert_int_equal(begin("big", BYTES + 1u), -EINVAL);
	assert_int_equal(begin("big", BYTES), 0);
}

static void test_freed_neighbours_coalesce(void **state)
{
	const uint32_t q = BYTES / 4u;
	uint32_t need = 0, largest = 0;
	int a, b, c, d;

	(void)state;
	a = install("a", q, 1);
	b = install("b", q, 2);
	c = install("c", q, 3);
	d = install("d", BYTES - 3u * q, 4);
	assert_int_equal(stats().free_bytes, 0);

	/* The middle one alone: a gap of q; 2q does not fit. */
	module_catalog_free(b);
	assert_int_equal(stats().largest_free, q);
	assert_int_equal(module_catalog_begin("x", MODULE_KIND_SKILL, 0, 2u * q, NULL, &need,
					      &largest),
			 -ENOMEM);
	assert_int_equal(need, 2u * q);
	assert_int_equal(largest, q);
	/* Its left neighbour too: one run of 2q at 0. */
	module_catalog_free(a);
	assert_int_equal(stats().largest_free, 2u * q);
	assert_int_equal(stats().free_bytes, 2u * q);
	/* And its right neighbour: one run of 3q; a begin of that size takes it at 0. */
	module_catalog_free(c);
	assert_int_equal(stats().largest_free, 3u * q);
	assert_int_equal(stats().free_bytes, 3u * q);
	assert_int_equal(module_catalog_begin("x", MODULE_KIND_SKILL, 0, 3u * q + 1u, NULL, &need,
					      &largest),
			 -ENOMEM);
	assert_int_equal(need, 3u * q + 1u);
	assert_int_equal(largest, 3u * q);
	int x = begin("x", 3u * q);

	assert_true(x >= 0);
	assert_int_equal(module_catalog_entry(x)->off, 0);
	assert_true(text_is(d, 4, BYTES - 3u * q));
}

static void test_first_fit_and_the_needs_n_bytes_values(void **state)
{
	uint32_t need = 7, largest = 7;
	int hole1, hole2;

	(void)state;
	/* [a 100][hole 200][b 100][hole 300][c the rest] */
	(void)install("a", 100, 1);
	hole1 = install("h1", 200, 2);
	(void)install("b", 100, 3);
	hole2 = install("h2", 300, 4);
	(void)install("c", BYTES - 700u, 5);
	module_catalog_free(hole1);
	module_catalog_free(hole2);
	assert_int_equal(stats().free_bytes, 500);
	assert_int_equal(stats().largest_free, 300);

	/* One more than the largest run: refused with the bytes it needs and the largest run. */
	assert_int_equal(module_catalog_begin("big", MODULE_KIND_TOOL, 1, 300, NULL, &need,
					      &largest),
			 -ENOMEM);
	assert_int_equal(need, 301);
	assert_int_equal(largest, 300);
	/* NULL for either is accepted. */
	assert_int_equal(module_catalog_begin("big", MODULE_KIND_TOOL, 1, 300, NULL, NULL, NULL),
			 -ENOMEM);
	/* The largest run exactly: the second hole, the first being too small. */
	int big = begin("big", 300);

	assert_true(big >= 0);
	assert_int_equal(module_catalog_entry(big)->off, 400);
	/* A small one goes to the lowest gap that holds it, not the best one. */
	int small = begin("small", 150);

	assert_true(small >= 0);
	assert_int_equal(module_catalog_entry(small)->off, 100);
	/* A success leaves need and largest alone. */
	need = 7;
	largest = 7;
	assert_true(module_catalog_begin("tiny", MODULE_KIND_TOOL, 50, 0, NULL, &need, &largest) >=
		    0);
	assert_int_equal(need, 7);
	assert_int_equal(largest, 7);
	assert_int_equal(stats().free_bytes, 0);
}

static void test_begin_clears_an_incomplete_arrival_of_its_name(void **state)
{
	int first, second;

	(void)state;
	(void)install("other", 10, 9);
	first = begin("x", 10);
	assert_int_equal(module_catalog_write(first, 0, pattern(1, 5), 5), 0);
	assert_int_equal(stats().entries, 2);

	/* A refused begin (an invalid size) leaves the arrival alone. */
	assert_int_equal(begin("x", 0), -EINVAL);
	assert_int_equal(module_catalog_find("x", MODULE_INCOMPLETE), first);

	second = begin("x", 20);
	assert_true(second >= 0);
	assert_int_equal(module_catalog_find("x", MODULE_INCOMPLETE), second);
	assert_int_equal(stats().entries, 2);
	assert_int_equal(stats().used_bytes, 30);
	assert_int_equal(module_catalog_entry(second)->received, 0);
	if (second != first) {
		assert_int_equal(module_catalog_entry(first)->state, MODULE_FREE);
	}

	/* A begin refused for room has still cleared it (its room counts for the begin). */
	uint32_t need = 0, largest = 0;

	assert_int_equal(module_catalog_begin("x", MODULE_KIND_SKILL, 0, BYTES - 9u, NULL, &need,
					      &largest),
			 -ENOMEM);
	assert_int_equal(need, BYTES - 9u);
	assert_int_equal(largest, BYTES - 10u);
	assert_int_equal(module_catalog_find("x", MODULE_INCOMPLETE), -ENOENT);
	assert_int_equal(stats().entries, 1);
	assert_true(begin("x", BYTES - 10u) >= 0);
}

static void test_an_installed_entry_is_replaced_at_commit(void **state)
{
	const uint32_t half = BYTES / 2u;
	uint32_t need = 0, largest = 0;
	int old, arrival;

	(void)state;
	old = install("x", 40, 1);
	assert_int_equal(module_catalog_entry(old)->seq, 1);
	arrival = begin("x", 50);
	assert_true(arrival >= 0 && arrival != old);
	/* Both are there until the commit; the installed one still answers. */
	assert_int_equal(stats().entries, 2);
	assert_int_equal(module_catalog_find("x", MODULE_INSTALLED), old);
	assert_true(text_is(old, 1, 40));
	assert_int_equal(module_catalog_write(arrival, 0, pattern(2, 50), 50), 0);
	assert_int_equal(module_catalog_commit(arrival), 0);
	assert_int_equal(module_catalog_find("x", MODULE_INSTALLED), arrival);
	assert_int_equal(module_catalog_entry(old)->state, MODULE_FREE);
	assert_int_equal(module_catalog_entry(arrival)->seq, 2);
	assert_true(text_is(arrival, 2, 50));
	assert_int_equal(stats().entries, 1);
	assert_int_equal(stats().used_bytes, 50);

	/* Re-importing needs room for the old and the new text together. */
	module_catalog_reset();
	old = install("y", half + 1u, 3);
	assert_int_equal(module_catalog_begin("y", MODULE_KIND_SKILL, 0, half + 1u, NULL, &need,
					      &largest),
			 -ENOMEM);
	assert_int_equal(need, half + 1u);
	assert_int_equal(largest, BYTES - half - 1u);
	assert_int_equal(module_catalog_find("y", MODULE_INSTALLED), old);
	arrival = begin("y", BYTES - half - 1u);
	assert_true(arrival >= 0);
	assert_int_equal(stats().free_bytes, 0);
}

static void test_commit_needs_every_byte(void **state)
{
	int index, other;

	(void)state;
	index = begin("x", 10);
	assert_int_equal(module_catalog_commit(index), -EINVAL);
	assert_int_equal(module_catalog_write(index, 0, pattern(1, 10), 9), 0);
	assert_int_equal(module_catalog_entry(index)->received, 9);
	assert_int_equal(module_catalog_commit(index), -EINVAL);
	assert_int_equal(module_catalog_entry(index)->state, MODULE_INCOMPLETE);
	assert_int_equal(module_catalog_write(index, 9, pattern_buf + 9, 1), 0);
	assert_int_equal(module_catalog_commit(index), 0);
	assert_int_equal(module_catalog_entry(index)->state, MODULE_INSTALLED);
	assert_true(text_is(index, 1, 10));
	/* Not an arrival: installed, free, out of range. */
	assert_int_equal(module_catalog_commit(index), -EINVAL);
	other = index + 1;
	assert_int_equal(module_catalog_entry(other)->state, MODULE_FREE);
	assert_int_equal(module_catalog_commit(other), -EINVAL);
	assert_int_equal(module_catalog_commit(-1), -EINVAL);
	assert_int_equal(module_catalog_commit(SLOTS), -EINVAL);
	assert_int_equal(module_catalog_entry(index)->seq, 1);
}

static void test_write_bounds(void **state)
{
	int index, after;

	(void)state;
	index = begin("x", 10);
	after = install("after", 16, 5); /* right behind it in the arena */
	assert_int_equal(module_catalog_entry(after)->off, 10);

	/* Past the size, at N and N+1. */
	assert_int_equal(module_catalog_write(index, 0, pattern(1, 11), 11), -EINVAL);
	assert_int_equal(module_catalog_entry(index)->received, 0);
	assert_int_equal(module_catalog_write(index, 0, pattern(1, 10), 10), 0);
	assert_int_equal(module_catalog_write(index, 5, pattern_buf + 5, 6), -EINVAL);
	assert_int_equal(module_catalog_write(index, 10, pattern_buf, 1), -EINVAL);
	assert_int_equal(module_catalog_write(index, 10, pattern_buf, 0), 0);
	assert_int_equal(module_catalog_write(index, 11, pattern_buf, 0), -EINVAL);
	/* off + len wrapping 32 bits, and a length near SIZE_MAX. */
	assert_int_equal(module_catalog_write(index, UINT32_MAX, pattern_buf, 2), -EINVAL);
	assert_int_equal(module_catalog_write(index, UINT32_MAX - 5u, pattern_buf, 8), -EINVAL);
	assert_int_equal(module_catalog_write(index, 1, pattern_buf, SIZE_MAX), -EINVAL);
	assert_int_equal(module_catalog_write(index, 0, pattern_buf, SIZE_MAX - 5u), -EINVAL);
	/* Nothing refused wrote a byte: the entry and its neighbour are as written. */
	assert_true(text_is(index, 1, 10));
	assert_true(text_is(after, 5, 16));
	assert_int_equal(module_catalog_entry(index)->received, 10);

	/* Not an arrival. */
	assert_int_equal(module_catalog_write(after, 0, pattern_buf, 1), -EINVAL);
	assert_int_equal(module_catalog_write(SLOTS - 1, 0, pattern_buf, 1), -EINVAL);
	assert_int_equal(module_catalog_write(-1, 0, pattern_buf, 1), -EINVAL);
	assert_int_equal(module_catalog_write(SLOTS, 0, pattern_buf, 1), -EINVAL);
}

static void test_parts_in_order_or_resent(void **state)
{
	int index;

	(void)state;
	index = begin("x", 20);
	/* A gap: a part past the next byte expected. */
	assert_int_equal(module_catalog_write(index, 1, pattern(3, 20) + 1, 4), -EINVAL);
	assert_int_equal(module_catalog_entry(index)->received, 0);
	assert_int_equal(module_catalog_write(index, 0, pattern_buf, 4), 0);
	assert_int_equal(module_catalog_write(index, 5, pattern_buf + 5, 4), -EINVAL);
	assert_int_equal(module_catalog_entry(index)->received, 4);
	/* At the next byte, then a resend that overlaps and runs on past it. */
	assert_int_equal(module_catalog_write(index, 4, pattern_buf + 4, 3), 0);
	assert_int_equal(module_catalog_entry(index)->received, 7);
	assert_int_equal(module_catalog_write(index, 2, pattern_buf + 2, 10), 0);
	assert_int_equal(module_catalog_entry(index)->received, 12);
	/* A resend inside what is there leaves received alone. */
	assert_int_equal(module_catalog_write(index, 0, pattern_buf, 3), 0);
	assert_int_equal(module_catalog_entry(index)->received, 12);
	assert_int_equal(module_catalog_write(index, 12, pattern_buf + 12, 8), 0);
	assert_int_equal(module_catalog_entry(index)->received, 20);
	assert_true(text_is(index, 3, 20));
	assert_int_equal(module_catalog_commit(index), 0);
	assert_int_equal(module_catalog_entry(index)->received, 20);
}

static void test_an_arrival_filled_in_one_piece(void **state)
{
	int index, installed;
	char *buf;

	(void)state;
	installed = install("y", 4, 1);
	assert_null(module_catalog_arrival_buffer(installed));
	assert_null(module_catalog_arrival_buffer(installed + 1));
	assert_null(module_catalog_arrival_buffer(-1));
	assert_null(module_catalog_arrival_buffer(SLOTS));
	index = begin("x", 12);
	assert_int_equal(module_catalog_entry(index)->received, 0);
	buf = module_catalog_arrival_buffer(index);
	assert_ptr_equal(buf, module_catalog_text(index));
	assert_int_equal(module_catalog_entry(index)->received, 12);
	memcpy(buf, pattern(6, 12), 12);
	assert_int_equal(module_catalog_commit(index), 0);
	assert_true(text_is(index, 6, 12));
	assert_true(text_is(installed, 1, 4));
}

static void test_texts_stay_where_they_are(void **state)
{
	int a, b, c;
	const char *text;

	(void)state;
	a = install("a", 100, 1);
	b = install("b", 333, 2);
	c = install("c", 77, 3);
	text = module_catalog_text(b);
	module_catalog_free(a);
	module_catalog_free(c);
	assert_ptr_equal(module_catalog_text(b), text);
	assert_true(text_is(b, 2, 333));
	/* New texts in the freed room, written over in full, do not touch it. */
	(void)install("d", 100, 4);
	(void)install("e", 500, 5);
	assert_ptr_equal(module_catalog_text(b), text);
	assert_true(text_is(b, 2, 333));
}

static void test_entries_names_and_the_installed_order(void **state)
{
	uint8_t digest[MODULE_DIGEST_LEN];
	int a, b, c, i;

	(void)state;
	memset(digest, 0xab, sizeof(digest));
	/* Names at 31 bytes and 32, other invalid names and kinds. */
	assert_int_equal(module_catalog_begin("abcdefghijklmnopqrstuvwxyz012345", MODULE_KIND_ROLE,
					      1, 0, NULL, NULL, NULL),
			 -EINVAL);
	a = module_catalog_begin("abcdefghijklmnopqrstuvwxyz01234", MODULE_KIND_ROLE, 1, 2,
				 digest, NULL, NULL);
	assert_int_equal(a, 0);
	assert_string_equal(module_catalog_entry(a)->name, "abcdefghijklmnopqrstuvwxyz01234");
	assert_int_equal(module_catalog_entry(a)->kind, MODULE_KIND_ROLE);
	assert_int_equal(module_catalog_entry(a)->manifest_len, 1);
	assert_int_equal(module_catalog_entry(a)->body_len, 2);
	assert_memory_equal(module_catalog_entry(a)->digest, digest, sizeof(digest));
	assert_int_equal(module_catalog_begin("", MODULE_KIND_ROLE, 1, 0, NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(module_catalog_begin(NULL, MODULE_KIND_ROLE, 1, 0, NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(module_catalog_begin("Up", MODULE_KIND_ROLE, 1, 0, NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(module_catalog_begin("k", MODULE_KIND_COUNT, 1, 0, NULL, NULL, NULL),
			 -EINVAL);
	/* Sizes whose 32-bit sum would wrap to 0 and to 1. */
	assert_int_equal(
		module_catalog_begin("k", MODULE_KIND_ROLE, UINT32_MAX, 1, NULL, NULL, NULL),
		-EINVAL);
	assert_int_equal(
		module_catalog_begin("k", MODULE_KIND_ROLE, UINT32_MAX, 2, NULL, NULL, NULL),
		-EINVAL);
	assert_int_equal(stats().entries, 1);
	module_catalog_free(a);

	/* Accessors out of range and on free entries. */
	assert_null(module_catalog_entry(-1));
	assert_null(module_catalog_entry(SLOTS));
	assert_non_null(module_catalog_entry(SLOTS - 1));
	assert_null(module_catalog_text(0));
	assert_null(module_catalog_text(-1));
	assert_null(module_catalog_text(SLOTS));
	assert_int_equal(module_catalog_find("", MODULE_FREE), -ENOENT);
	assert_int_equal(module_catalog_find(NULL, MODULE_INSTALLED), -ENOENT);
	module_catalog_free(-1);
	module_catalog_free(SLOTS);

	/* Installed order: by commit, whatever the indexes; a replacement goes last. */
	a = begin("a", 5);
	b = install("b", 5, 2);
	c = install("c", 5, 3);
	assert_int_equal(module_catalog_write(a, 0, pattern(1, 5), 5), 0);
	assert_int_equal(module_catalog_commit(a), 0);
	(void)install("b", 6, 4); /* replaces b */
	assert_int_equal(module_catalog_entry(b)->state, MODULE_FREE);
	i = module_catalog_next_installed(0);
	assert_int_equal(i, c);
	i = module_catalog_next_installed(module_catalog_entry(i)->seq);
	assert_int_equal(i, a);
	i = module_catalog_next_installed(module_catalog_entry(i)->seq);
	assert_int_equal(i, module_catalog_find("b", MODULE_INSTALLED));
	assert_int_equal(module_catalog_entry(i)->seq, 4);
	assert_int_equal(module_catalog_next_installed(4), -ENOENT);
	/* A reset forgets everything and counts seq from 1 again. */
	module_catalog_reset();
	assert_int_equal(stats().entries, 0);
	assert_int_equal(stats().free_bytes, BYTES);
	assert_int_equal(stats().largest_free, BYTES);
	assert_int_equal(module_catalog_next_installed(0), -ENOENT);
	assert_int_equal(module_catalog_entry(install("z", 1, 1))->seq, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_every_entry_then_one_more, setup),
		cmocka_unit_test_setup(test_the_arena_exactly_then_one_byte_more, setup),
		cmocka_unit_test_setup(test_freed_neighbours_coalesce, setup),
		cmocka_unit_test_setup(test_first_fit_and_the_needs_n_bytes_values, setup),
		cmocka_unit_test_setup(test_begin_clears_an_incomplete_arrival_of_its_name, setup),
		cmocka_unit_test_setup(test_an_installed_entry_is_replaced_at_commit, setup),
		cmocka_unit_test_setup(test_commit_needs_every_byte, setup),
		cmocka_unit_test_setup(test_write_bounds, setup),
		cmocka_unit_test_setup(test_parts_in_order_or_resent, setup),
		cmocka_unit_test_setup(test_an_arrival_filled_in_one_piece, setup),
		cmocka_unit_test_setup(test_texts_stay_where_they_are, setup),
		cmocka_unit_test_setup(test_entries_names_and_the_installed_order, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
