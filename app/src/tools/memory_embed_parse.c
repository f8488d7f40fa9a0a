/*
 * Reading an /v1/embeddings answer (memory_embed.h): the first element of "data" must hold
 * "embedding", an array of exactly the required number of finite numbers, and "data" must
 * have that one element (one input was sent). An error answer's "error.message" is kept for
 * the reason. Numbers are converted here: the core does not rely on the C library's strtod.
 */
#if defined(CONFIG_AGENT_TOOLS_MEMORY)

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decimal.h"
#include "memory_embed.h"

/*
 * The bits of the IEEE 754 single nearest to m * 2^e2 (m != 0), without the sign: m is
 * normalised to its top bit, cut to 24 bits (fewer for a subnormal) and rounded half to even
 * on the bits cut. false when it rounds beyond the largest single.
 */
static bool single_bits(uint64_t m, int e2, uint32_t *bits)
{
	int biased;
	unsigned int cut;
	uint64_t rest;
	uint64_t half;
	uint32_t mant;

	while ((m >> 63) == 0) {
		m <<= 1;
		e2--;
	}
	biased = e2 + 63 + 127; /* m * 2^e2 = 1.f * 2^(e2 + 63) */
	cut = biased >= 1 ? 40u : 40u + (unsigned int)(1 - biased);
	if (cut >= 64) {
		/* Below the smallest subnormal, 2^-149: above half of it rounds up to it. */
		*bits = cut == 64 && m > (uint64_t)1 << 63 ? 1u : 0u;
		return true;
	}
	mant = (uint32_t)(m >> cut);
	rest = m & (((uint64_t)1 << cut) - 1u);
	half = (uint64_t)1 << (cut - 1);
	mant += rest > half || (rest == half && (mant & 1u) != 0);
	if (biased < 1) {
		*bits = mant; /* a subnormal; one that rounds up to 2^23 is the smallest normal */
		return true;
	}
	if (mant >> 24 != 0) {
		mant >>= 1;
		biased++;
	}
	if (biased >= 255) {
		return false;
	}
	*bits = ((uint32_t)biased << 23) | (mant & 0x7FFFFFu);
	return true;
}

/*
 * A JSON number as a single, in integer arithmetic only (no floating-point library on a core
 * without an FPU): up to 18 significant digits are kept as a 64-bit integer, then multiplied
 * or divided by ten once per unit of the decimal exponent, the binary mantissa kept at 59
 * bits or more at each step, then rounded to nearest. The steps truncate, so a number within
 * about 2^-55 of a halfway point may come out one unit low (docs/memory.md;
 * tests/unit/test_memory_embed.c compares it with strtof()).
 */
bool memory_parse_float(const char *text, float *out)
{
	const char *c = text;
	bool negative = *c == '-';
	uint64_t mantissa = 0;
	int digits = 0;
	int exp10 = 0;
	int exp = 0;
	bool exp_negative = false;
	bool point = false;
	uint32_t bits = 0;
	int e2 = 0;

	c += negative;
	/* The digits, a point among them: 18 significant ones kept, the rest only counted. */
	for (;; c++) {
		if (*c == '.' && !point) {
			point = true;
			continue;
		}
		if (*c < '0' || *c > '9') {
			break;
		}
		if (digits < 18) {
			mantissa = mantissa * 10 + (uint64_t)(*c - '0');
			digits += mantissa != 0;
			exp10 -= point;
		} else {
			exp10 += !point;
		}
	}
	if (*c == 'e' || *c == 'E') {
		c++;
		exp_negative = *c == '-';
		c += *c == '-' || *c == '+';
		for (; *c >= '0' && *c <= '9'; c++) {
			if (exp < 100000) {
				exp = exp * 10 + (*c - '0');
			}
		}
	}
	exp10 += exp_negative ? -exp : exp;
	if (mantissa != 0 && exp10 > 60) {
		return false; /* at most 18 digits: beyond 1e78, far beyond a single */
	}
	if (mantissa != 0 && exp10 >= -70) { /* else below 1e-52: 0 */
		while (exp10 != 0) {
			while ((mantissa >> 63) == 0) {
				mantissa <<= 1;
				e2--;
			}
			if (exp10 > 0) {
				mantissa = (mantissa >> 4) * 10u; /* below 2^60 * 10 */
				e2 += 4;
				exp10--;
			} else {
				mantissa = decimal_div10(mantissa); /* at least 2^59 */
				exp10++;
			}
		}
		if (!single_bits(mantissa, e2, &bits)) {
			return false;
		}
	}
	bits |= negative ? 0x80000000u : 0u;
	memcpy(out, &bits, sizeof(*out));
	return true;
}

static void keep_message(struct memory_embed_parse *p, const struct json_value *v)
{
	size_t room = MEMORY_EMBED_MESSAGE_MAX - p->message_len;
	size_t n = v->len < room ? v->len : room;

	if (v->first) {
		p->message_len = 0;
		n = v->len < MEMORY_EMBED_MESSAGE_MAX ? v->len : MEMORY_EMBED_MESSAGE_MAX;
	}
	/* Control characters would break the one-line reason. */
	for (size_t i = 0; i < n; i++) {
		char ch = v->text[i];

		p->message[p->message_len++] = (unsigned char)ch < 0x20 ? ' ' : ch;
	}
	p->message[p->message_len] = '\0';
}

static int on_value(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct memory_embed_parse *p = user_data;
	bool begin = v->token == JSON_OBJECT_BEGIN || v->token == JSON_ARRAY_BEGIN;
	bool end = v->token == JSON_OBJECT_END || v->token == JSON_ARRAY_END;
	bool first_part = v->token != JSON_STRING || v->first;

	if (end || !first_part) {
		if (v->token == JSON_STRING && json_stream_path_is(js, "error.message")) {
			keep_message(p, v);
		}
		return 0;
	}
	if (json_stream_depth(js) == 0) {
		p->not_object = v->token != JSON_OBJECT_BEGIN;
	} else if (json_stream_path_is(js, "error.message")) {
		if (v->token == JSON_STRING) {
			keep_message(p, v);
		}
	} else if (json_stream_path_is(js, "data")) {
		p->data_seen = v->token == JSON_ARRAY_BEGIN;
	} else if (json_stream_path_is(js, "data.#")) {
		p->data_count += p->data_count < 9999;
		p->not_object = p->not_object || v->token != JSON_OBJECT_BEGIN;
	} else if (json_stream_index(js, 2) != 0) {
		return 0; /* a second element: only counted */
	} else if (json_stream_path_is(js, "data.#.embedding")) {
		p->embedding_seen = true;
		p->not_number = p->not_number || v->token != JSON_ARRAY_BEGIN;
	} else if (json_stream_path_is(js, "data.#.embedding.#")) {
		float x;

		if (v->token != JSON_NUMBER || begin) {
			p->not_number = true;
		} else if (!memory_parse_float(v->text, &x)) {
			p->out_of_range = true;
		} else if (p->dim < p->dim_max) {
			p->out[p->dim] = x;
		}
		p->dim++;
	}
	return 0;
}

void memory_embed_parse_init(struct memory_embed_parse *p, float *out, size_t dim_max)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->dim_max = dim_max;
	json_stream_init(&p->js, on_value, p);
}

int memory_embed_parse_feed(struct memory_embed_parse *p, const char *data, size_t len)
{
	return json_stream_feed(&p->js, data, len);
}

static int refuse(struct memory_embed_parse *p, const char *why)
{
	snprintf(p->why, sizeof(p->why), "%s", why);
	return -EBADMSG;
}

int memory_embed_parse_finish(struct memory_embed_parse *p)
{
	if (json_stream_finish(&p->js) != 0) {
		return refuse(p, "the embeddings answer is not valid JSON");
	}
	if (p->not_object) {
		return refuse(p, "the embeddings answer is not an object with a data list");
	}
	if (!p->data_seen || p->data_count == 0) {
		return refuse(p, "the embeddings answer has no data");
	}
	if (p->data_count != 1) {
		snprintf(p->why, sizeof(p->why),
			 "the embeddings answer has %d embeddings for one input", p->data_count);
		return -EBADMSG;
	}
	if (!p->embedding_seen) {
		return refuse(p, "the embeddings answer has no embedding");
	}
	if (p->not_number) {
		return refuse(p, "the embedding is not a list of numbers");
	}
	if (p->out_of_range) {
		return refuse(p, "the embedding has a number out of range");
	}
	if (p->dim != p->dim_max) {
		snprintf(p->why, sizeof(p->why),
			 "the embedding has %u dimensions; the memory needs %u",
			 (unsigned int)(p->dim > 999999 ? 999999 : p->dim),
			 (unsigned int)p->dim_max);
		return -EBADMSG;
	}
	return 0;
}

#endif /* CONFIG_AGENT_TOOLS_MEMORY */
