/*
 * The embeddings answer parser of the memory tools (app/src/tools/memory_embed_parse.c;
 * docs/memory.md "The embedding pass"): an answer with exactly the dimension (and not one
 * number fewer or more), numbers only and in float's range, one element in data, the error
 * message of an error answer, the same result fed whole or byte by byte; and the number
 * conversion.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "memory_embed.h"
#include "memory_store.h"
#include "xorshift64.h"

static float out[MEMORY_DIM + 8];
static char doc[64 * 1024];

/* An answer as the OpenAI API writes it, with @p dim numbers (element i is i/1000 - 0.1). */
static const char *answer(size_t dim, const char *extra_element)
{
	size_t n = 0;

	n += (size_t)snprintf(doc + n, sizeof(doc) - n,
			      "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\","
			      "\"index\":0,\"embedding\":[");
	for (size_t i = 0; i < dim; i++) {
		n += (size_t)snprintf(doc + n, sizeof(doc) - n, "%s%.6f", i ? "," : "",
				      (double)i / 1000.0 - 0.1);
	}
	n += (size_t)snprintf(doc + n, sizeof(doc) - n, "]}%s],\"model\":\"m\",\"usage\":"
			      "{\"prompt_tokens\":3,\"total_tokens\":3}}",
			      extra_element != NULL ? extra_element : "");
	return doc;
}

/* Parse @p text whole and byte by byte: both must agree; returns the result. */
static int parse(const char *text, struct memory_embed_parse *p)
{
	static struct memory_embed_parse bytewise;
	static float out2[MEMORY_DIM + 8];
	size_t len = strlen(text);
	int whole;
	int split;

	memory_embed_parse_init(p, out, MEMORY_DIM);
	(void)memory_embed_parse_feed(p, text, len);
	whole = memory_embed_parse_finish(p);
	memory_embed_parse_init(&bytewise, out2, MEMORY_DIM);
	for (size_t i = 0; i < len; i++) {
		(void)memory_embed_parse_feed(&bytewise, text + i, 1);
	}
	split = memory_embed_parse_finish(&bytewise);
	assert_int_equal(whole, split);
	assert_string_equal(p->why, bytewise.why);
	assert_string_equal(p->message, bytewise.message);
	if (whole == 0) {
		assert_memory_equal(out, out2, sizeof(float) * MEMORY_DIM);
	}
	return whole;
}

static void exact_dimension(void **state)
{
	struct memory_embed_parse p;

	(void)state;
	assert_int_equal(parse(answer(MEMORY_DIM, NULL), &p), 0);
	assert_int_equal(p.dim, MEMORY_DIM);
	for (size_t i = 0; i < MEMORY_DIM; i++) {
		float want = (float)((double)i / 1000.0 - 0.1);

		assert_true(out[i] - want < 1e-6f && want - out[i] < 1e-6f);
	}
	assert_string_equal(p.why, "");
}

static void wrong_dimension(void **state)
{
	struct memory_embed_parse p;
	char want[96];

	(void)state;
	assert_int_equal(parse(answer(MEMORY_DIM + 1, NULL), &p), -EBADMSG);
	snprintf(want, sizeof(want), "the embedding has %d dimensions; the memory needs %d",
		 MEMORY_DIM + 1, MEMORY_DIM);
	assert_string_equal(p.why, want);
	assert_int_equal(parse(answer(MEMORY_DIM - 1, NULL), &p), -EBADMSG);
	snprintf(want, sizeof(want), "the embedding has %d dimensions; the memory needs %d",
		 MEMORY_DIM - 1, MEMORY_DIM);
	assert_string_equal(p.why, want);
	assert_int_equal(parse(answer(0, NULL), &p), -EBADMSG);
}

static void wrong_answers(void **state)
{
	static const struct {
		const char *body;
		const char *why;
	} cases[] = {
		{"{\"data\":[{\"embedding\":[1,2", "the embeddings answer is not valid JSON"},
		{"not json", "the embeddings answer is not valid JSON"},
		{"[1,2,3]", "the embeddings answer is not an object with a data list"},
		{"{\"data\":[7]}", "the embeddings answer is not an object with a data list"},
		{"{\"object\":\"list\"}", "the embeddings answer has no data"},
		{"{\"data\":[]}", "the embeddings answer has no data"},
		{"{\"data\":{\"embedding\":[1]}}", "the embeddings answer has no data"},
		{"{\"data\":[{\"index\":0}]}", "the embeddings answer has no embedding"},
		{"{\"data\":[{\"embedding\":\"AAAAAA==\"}]}", "the embedding is not a list of numbers"},
		{"{\"data\":[{\"embedding\":[1,\"2\",3]}]}", "the embedding is not a list of numbers"},
		{"{\"data\":[{\"embedding\":[1,null]}]}", "the embedding is not a list of numbers"},
		{"{\"data\":[{\"embedding\":[1,[2]]}]}", "the embedding is not a list of numbers"},
		{"{\"data\":[{\"embedding\":[1e39]}]}", "the embedding has a number out of range"},
		{"{\"data\":[{\"embedding\":[1]},{\"embedding\":[2]}]}",
		 "the embeddings answer has 2 embeddings for one input"},
	};
	struct memory_embed_parse p;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(cases[i].body, &p), -EBADMSG);
		if (strcmp(p.why, cases[i].why) != 0) {
			fail_msg("case %zu: %s: got '%s'", i, cases[i].body, p.why);
		}
	}
	/* A second element counts even when the first is right. */
	assert_int_equal(parse(answer(MEMORY_DIM, ",{\"embedding\":[]}"), &p), -EBADMSG);
	assert_string_equal(p.why, "the embeddings answer has 2 embeddings for one input");
}

static void error_message(void **state)
{
	struct memory_embed_parse p;

	(void)state;
	assert_int_equal(parse("{\"error\":{\"message\":\"Invalid model \\\"x\\\"\\nline\","
			       "\"type\":\"invalid_request_error\"}}",
			       &p),
			 -EBADMSG);
	assert_string_equal(p.message, "Invalid model \"x\" line");
	memset(doc, 'a', 300);
	memcpy(doc, "{\"error\":{\"message\":\"", 21);
	strcpy(doc + 300, "\"}}");
	assert_int_equal(parse(doc, &p), -EBADMSG);
	assert_int_equal(strlen(p.message), MEMORY_EMBED_MESSAGE_MAX);
}

static void numbers(void **state)
{
	static const struct {
		const char *text;
		double value;
	} ok[] = {
		{"0", 0},	     {"-0", 0},	       {"1", 1},	   {"-1.5", -1.5},
		{"0.015625", 0.015625}, {"1e3", 1000},     {"2.5E-3", 0.0025}, {"-7e+2", -700},
		{"1e-50", 0},	     {"0.0000001", 1e-7}, {"3.4e38", 3.4e38},
		{"123456789012345678901234", 1.2345678901234568e23},
		{"0.000000000000000000000000000000000000000000001e45", 1},
	};
	float f;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		double want = ok[i].value;
		double tol = (want < 0 ? -want : want) * 1e-6 + 1e-30;

		assert_true(memory_parse_float(ok[i].text, &f));
		if ((double)f - want > tol || want - (double)f > tol) {
			fail_msg("%s: got %g", ok[i].text, (double)f);
		}
	}
	assert_false(memory_parse_float("1e39", &f));
	assert_false(memory_parse_float("-3.5e38", &f));
	assert_false(memory_parse_float("1e99999999", &f));
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng(void)
{
	return xorshift64(&rng_state);
}

static uint32_t bits_of(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	return b;
}

/*
 * The integer conversion against the C library's strtof() (correctly rounded) on 200,000
 * numbers: 1 to 18 digits, a decimal point anywhere, exponents across the whole range of a
 * single and past it, subnormals included. Every result is the same single or its neighbour
 * (the conversion keeps 59 bits or more at each step and truncates, so a neighbour one unit
 * low is possible within about 2^-55 of a halfway point), and at least 99.99 % are the
 * same. Values strtof() finds out of range must be refused and the others accepted (one
 * unit of the last place aside).
 */
static void numbers_as_strtof(void **state)
{
	char text[64];
	float got_max;
	size_t same = 0;
	size_t total = 0;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint64_t r = rng();
		int digits = 1 + (int)(r % 18);
		int point = (int)((r >> 8) % (uint64_t)(digits + 1));
		int exp = (int)((r >> 16) % 110) - 70;
		size_t n = 0;
		float got;
		float want;

		if ((r >> 30) & 1) {
			text[n++] = '-';
		}
		for (int d = 0; d < digits; d++) {
			if (d == point && d > 0) {
				text[n++] = '.';
			}
			text[n++] = (char)('0' + (d == 0 ? 1 + rng() % 9 : rng() % 10));
		}
		n += (size_t)snprintf(text + n, sizeof(text) - n, "e%d", exp);
		want = strtof(text, NULL);
		if (want > 3.4028234e38f || want < -3.4028234e38f) {
			continue; /* out of range for strtof: refused below, near the edge either way */
		}
		assert_true(memory_parse_float(text, &got));
		total++;
		uint32_t a = bits_of(got);
		uint32_t b = bits_of(want);
		uint32_t diff = a > b ? a - b : b - a;

		if (diff > 1) {
			fail_msg("%s: got %a, strtof %a", text, (double)got, (double)want);
		}
		same += diff == 0;
	}
	assert_true(total > 150000);
	if (same * 10000 < total * 9999) {
		fail_msg("%zu of %zu the same as strtof", same, total);
	}
	/* The largest single is taken; beyond it, refused. */
	assert_true(memory_parse_float("3.4028234e38", &got_max));
	assert_int_equal(bits_of(got_max), 0x7F7FFFFFu);
	assert_false(memory_parse_float("3.41e38", &got_max));
	/* The smallest subnormal (2^-149); below half of it (2^-150 is 7.006e-46) 0, above it
	 * the subnormal. */
	assert_true(memory_parse_float("1.401298464324817e-45", &got_max));
	assert_int_equal(bits_of(got_max), 1u);
	assert_true(memory_parse_float("7e-46", &got_max));
	assert_int_equal(bits_of(got_max), 0u);
	assert_true(memory_parse_float("7.01e-46", &got_max));
	assert_int_equal(bits_of(got_max), 1u);
	assert_true(memory_parse_float("-0", &got_max));
	assert_int_equal(bits_of(got_max), 0x80000000u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_dimension),	  cmocka_unit_test(wrong_dimension),
		cmocka_unit_test(wrong_answers),	  cmocka_unit_test(error_message),
		cmocka_unit_test(numbers),	  cmocka_unit_test(numbers_as_strtof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
