/*
 * The memory tools' store (app/src/tools/memory_store.c; docs/memory.md): quantisation and
 * cosine similarity, the nearest notes in order, the bounds at N and N+1 (notes kept, note
 * length, dimension), the format on flash (a remount reads the same notes; a damaged tail is
 * cut; a store of another dimension reads as empty), on a LittleFS image at /lfs.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent_port.h"
#include "flash_fixture.h"
#include "memory_store.h"
#include "xorshift64.h"

#define N_NOTES CONFIG_AGENT_MEMORY_NOTES

static int setup(void **state)
{
	(void)state;
	return flash_fixture_setup("memory_store");
}

static int teardown(void **state)
{
	(void)state;
	return flash_fixture_teardown();
}

/* A direction for note @p i: mostly axis i % DIM, a little of axis (i + 1) % DIM. */
static void direction(size_t i, struct memory_vec *out)
{
	float v[MEMORY_DIM] = {0};

	v[i % MEMORY_DIM] = 1.0f;
	v[(i + 1) % MEMORY_DIM] = 0.25f;
	assert_int_equal(memory_quantise(v, MEMORY_DIM, out), 0);
}

static void add_note(size_t i, const char *text, struct memory_add_result *r)
{
	struct memory_vec v;

	direction(i, &v);
	assert_int_equal(memory_store_add(&v, text, strlen(text), r), 0);
}

static void quantise_and_cosine(void **state)
{
	float a[MEMORY_DIM] = {0};
	float b[MEMORY_DIM] = {0};
	struct memory_vec qa;
	struct memory_vec qb;

	(void)state;
	a[0] = 0.5f;
	a[1] = -0.25f;
	assert_int_equal(memory_quantise(a, MEMORY_DIM, &qa), 0);
	assert_int_equal(qa.q[0], 127);
	assert_int_equal(qa.q[1], -64); /* -63.5 rounds away from zero */
	assert_true(qa.scale > 0.5f / 127.0f - 1e-7f && qa.scale < 0.5f / 127.0f + 1e-7f);
	assert_int_equal(memory_cosine_e4(qa.q, qa.q, MEMORY_DIM), 10000);
	for (size_t i = 0; i < MEMORY_DIM; i++) {
		b[i] = -a[i] * 3;
	}
	assert_int_equal(memory_quantise(b, MEMORY_DIM, &qb), 0);
	assert_int_equal(memory_cosine_e4(qa.q, qb.q, MEMORY_DIM), -10000);
	memset(b, 0, sizeof(b));
	b[2] = 7;
	assert_int_equal(memory_quantise(b, MEMORY_DIM, &qb), 0);
	assert_int_equal(memory_cosine_e4(qa.q, qb.q, MEMORY_DIM), 0);
	/* 45 degrees: cos = 0.7071. */
	memset(a, 0, sizeof(a));
	a[0] = 1;
	b[0] = 1;
	b[2] = 1;
	assert_int_equal(memory_quantise(a, MEMORY_DIM, &qa), 0);
	assert_int_equal(memory_quantise(b, MEMORY_DIM, &qb), 0);
	assert_int_equal(memory_cosine_e4(qa.q, qb.q, MEMORY_DIM), 7071);
}

static void quantise_refuses(void **state)
{
	float v[MEMORY_DIM + 1] = {0};
	struct memory_vec q;

	(void)state;
	assert_int_equal(memory_quantise(v, MEMORY_DIM, &q), -EINVAL); /* all zeros */
	v[3] = 1;
	assert_int_equal(memory_quantise(v, MEMORY_DIM, &q), 0);
	/* The dimension: DIM is the one accepted, DIM + 1 and DIM - 1 are not. */
	assert_int_equal(memory_quantise(v, MEMORY_DIM + 1, &q), -EINVAL);
	assert_int_equal(memory_quantise(v, MEMORY_DIM - 1, &q), -EINVAL);
	v[4] = __builtin_nanf("");
	assert_int_equal(memory_quantise(v, MEMORY_DIM, &q), -EINVAL);
	v[4] = __builtin_inff();
	assert_int_equal(memory_quantise(v, MEMORY_DIM, &q), -EINVAL);
	/* So small that the scale would be subnormal or 0 (a bad server's 1e-44): refused,
	 * never divided by; the smallest normal scale is accepted. */
	memset(v, 0, sizeof(v));
	v[0] = 1e-44f;
	assert_int_equal(memory_quantise(v, MEMORY_DIM, &q), -EINVAL);
	v[0] = 127.0f * 1.17549435e-38f;
	assert_int_equal(memory_quantise(v, MEMORY_DIM, &q), 0);
	assert_int_equal(q.q[0], 127);
	v[0] = -1e-40f;
	assert_int_equal(memory_quantise(v, MEMORY_DIM, &q), -EINVAL);
}

static void empty_store(void **state)
{
	struct memory_hit hits[2];
	struct memory_vec q;
	size_t found = 99;
	uint16_t notes = 99;

	(void)state;
	direction(0, &q);
	assert_int_equal(memory_store_count(&notes), 0);
	assert_int_equal(notes, 0);
	assert_int_equal(memory_store_nearest(&q, hits, 2, &found, &notes), 0);
	assert_int_equal(found, 0);
	assert_int_equal(notes, 0);
}

static void nearest_in_order(void **state)
{
	struct memory_add_result r;
	struct memory_hit hits[3];
	struct memory_vec q;
	size_t found;
	uint16_t notes;

	(void)state;
	add_note(0, "the cat sleeps on the mat", &r);
	assert_int_equal(r.id, 1);
	assert_int_equal(r.notes, 1);
	assert_int_equal(r.evicted, 0);
	add_note(5, "the office wifi password is on the fridge", &r);
	add_note(9, "the plant needs water on mondays", &r);
	assert_int_equal(r.id, 3);
	assert_int_equal(r.notes, 3);

	direction(5, &q);
	assert_int_equal(memory_store_nearest(&q, hits, 3, &found, &notes), 0);
	assert_int_equal(found, 3);
	assert_int_equal(notes, 3);
	assert_int_equal(hits[0].id, 2);
	assert_int_equal(hits[0].score_e4, 10000);
	assert_string_equal(hits[0].text, "the office wifi password is on the fridge");
	assert_int_equal(hits[0].len, strlen(hits[0].text));
	assert_true(hits[1].score_e4 <= hits[0].score_e4);
	assert_true(hits[2].score_e4 <= hits[1].score_e4);
	/* Axis 6 is shared with note 2 (0.25): it comes before the orthogonal ones. */
	direction(6, &q);
	assert_int_equal(memory_store_nearest(&q, hits, 1, &found, &notes), 0);
	assert_int_equal(found, 1);
	assert_int_equal(hits[0].id, 2);
	assert_true(hits[0].score_e4 > 0 && hits[0].score_e4 < 10000);
	/* Equal scores: the newer note first. */
	add_note(5, "a second note on axis five", &r);
	direction(5, &q);
	assert_int_equal(memory_store_nearest(&q, hits, 2, &found, &notes), 0);
	assert_int_equal(hits[0].id, 4);
	assert_int_equal(hits[1].id, 2);

	/* What a remount (the next start) reads is the same. */
	assert_int_equal(posix_flash_unmount(), 0);
	assert_int_equal(posix_flash_mount(image_path, IMAGE_BYTES, false), 0);
	assert_int_equal(memory_store_nearest(&q, hits, 3, &found, &notes), 0);
	assert_int_equal(notes, 4);
	assert_int_equal(hits[0].id, 4);
	assert_string_equal(hits[0].text, "a second note on axis five");
	add_note(1, "after the restart", &r);
	assert_int_equal(r.id, 5);
}

static void note_length_bounds(void **state)
{
	static char text[MEMORY_NOTE_MAX + 2];
	struct memory_add_result r;
	struct memory_hit hit;
	struct memory_vec v;
	size_t found;
	uint16_t notes;

	(void)state;
	memset(text, 'x', sizeof(text));
	direction(3, &v);
	assert_int_equal(memory_store_add(&v, text, 0, &r), -EINVAL);
	assert_int_equal(memory_store_add(&v, text, MEMORY_NOTE_MAX + 1, &r), -EINVAL);
	assert_int_equal(memory_store_count(&notes), 0);
	assert_int_equal(memory_store_add(&v, text, MEMORY_NOTE_MAX, &r), 0);
	assert_int_equal(memory_store_add(&v, "y", 1, &r), 0);
	assert_int_equal(memory_store_nearest(&v, &hit, 1, &found, &notes), 0);
	assert_int_equal(notes, 2);
	assert_int_equal(hit.id, 2);
	direction(4, &v);
	direction(3, &v);
	assert_int_equal(memory_store_nearest(&v, &hit, 1, &found, &notes), 0);
	/* Both equal: the newest ("y") first; the long one is whole when asked with 2. */
	struct memory_hit two[2];

	assert_int_equal(memory_store_nearest(&v, two, 2, &found, &notes), 0);
	assert_int_equal(two[1].len, MEMORY_NOTE_MAX);
	assert_memory_equal(two[1].text, text, MEMORY_NOTE_MAX);
	assert_int_equal(two[1].text[MEMORY_NOTE_MAX], '\0');
}

static void note_count_bounds(void **state)
{
	static struct memory_hit hits[4];
	struct memory_add_result r;
	struct memory_vec q;
	char text[32];
	size_t found;
	uint16_t notes;

	(void)state;
	for (size_t i = 0; i < N_NOTES; i++) {
		snprintf(text, sizeof(text), "note %zu", i + 1);
		add_note(i, text, &r);
		assert_int_equal(r.id, i + 1);
		assert_int_equal(r.notes, i + 1);
		assert_int_equal(r.evicted, 0); /* N notes fit */
	}
	direction(0, &q);
	assert_int_equal(memory_store_nearest(&q, hits, 1, &found, &notes), 0);
	assert_int_equal(notes, N_NOTES);
	assert_int_equal(hits[0].id, 1);
	/* Note N + 1 drops the oldest. */
	add_note(N_NOTES + 7, "one more", &r);
	assert_int_equal(r.id, N_NOTES + 1);
	assert_int_equal(r.notes, N_NOTES);
	assert_int_equal(r.evicted, 1);
	assert_int_equal(memory_store_nearest(&q, hits, 4, &found, &notes), 0);
	assert_int_equal(notes, N_NOTES);
	for (size_t i = 0; i < found; i++) {
		assert_int_not_equal(hits[i].id, 1);
	}
	add_note(3, "and another", &r);
	assert_int_equal(r.evicted, 2);
	assert_int_equal(r.notes, N_NOTES);
}

/* The file's size for notes of these text lengths. */
static int32_t file_size(void)
{
	struct agent_dirent e;

	assert_int_equal(agent_fs_stat(MEMORY_STORE_PATH, &e), 0);
	return (int32_t)e.size;
}

static void format_on_flash(void **state)
{
	struct memory_add_result r;
	struct agent_file *f;
	uint8_t head[MEMORY_HEADER_BYTES];
	uint8_t byte;
	uint16_t notes;

	(void)state;
	add_note(0, "abc", &r);
	add_note(1, "defgh", &r);
	/* Header, then one record per note: 16 bytes, the vector and the text. */
	assert_int_equal(file_size(), MEMORY_HEADER_BYTES + MEMORY_RECORD_BYTES(3) +
					      MEMORY_RECORD_BYTES(5));
	assert_int_equal(agent_fs_open(&f, MEMORY_STORE_PATH, AGENT_FS_O_READ), 0);
	assert_int_equal(agent_fs_read(f, head, sizeof(head)), sizeof(head));
	assert_int_equal(agent_fs_close(f), 0);
	assert_memory_equal(head, "AMEM", 4);
	assert_int_equal(head[4], MEMORY_VERSION);
	assert_int_equal(head[6] | (head[7] << 8), MEMORY_DIM);
	assert_int_equal(head[8], 3); /* the next id */

	/* A damaged last record is cut; the first stays. */
	assert_int_equal(agent_fs_open(&f, MEMORY_STORE_PATH, AGENT_FS_O_RDWR), 0);
	assert_int_equal(agent_fs_seek(f, -6, AGENT_FS_SEEK_END), 0);
	assert_int_equal(agent_fs_read(f, &byte, 1), 1);
	byte ^= 0x20;
	assert_int_equal(agent_fs_seek(f, -6, AGENT_FS_SEEK_END), 0);
	assert_int_equal(agent_fs_write(f, &byte, 1), 1);
	assert_int_equal(agent_fs_close(f), 0);
	assert_int_equal(memory_store_count(&notes), 0);
	assert_int_equal(notes, 1);
	/* So is a tail cut short. */
	add_note(2, "ijk", &r);
	assert_int_equal(r.notes, 2);
	assert_int_equal(r.id, 3);
	assert_int_equal(agent_fs_open(&f, MEMORY_STORE_PATH, AGENT_FS_O_RDWR), 0);
	assert_int_equal(agent_fs_truncate(f, (uint32_t)(file_size() - 1)), 0);
	assert_int_equal(agent_fs_close(f), 0);
	assert_int_equal(memory_store_count(&notes), 0);
	assert_int_equal(notes, 1);

	/* A store of another dimension reads as empty, and the next write replaces it. */
	assert_int_equal(agent_fs_open(&f, MEMORY_STORE_PATH, AGENT_FS_O_RDWR), 0);
	head[6] = (uint8_t)(MEMORY_DIM + 1);
	head[7] = (uint8_t)((MEMORY_DIM + 1) >> 8);
	{
		uint32_t crc = memory_crc32(0, head, 12);

		head[12] = (uint8_t)crc;
		head[13] = (uint8_t)(crc >> 8);
		head[14] = (uint8_t)(crc >> 16);
		head[15] = (uint8_t)(crc >> 24);
	}
	assert_int_equal(agent_fs_write(f, head, sizeof(head)), sizeof(head));
	assert_int_equal(agent_fs_close(f), 0);
	assert_int_equal(memory_store_count(&notes), 0);
	assert_int_equal(notes, 0);
	add_note(4, "fresh", &r);
	assert_int_equal(r.notes, 1);
	assert_int_equal(file_size(), MEMORY_HEADER_BYTES + MEMORY_RECORD_BYTES(5));
	/* A stray temporary file (a cut write) is removed by the next write. */
	assert_int_equal(agent_fs_open(&f, MEMORY_STORE_TEMP, AGENT_FS_O_WRITE | AGENT_FS_O_CREATE),
			 0);
	assert_int_equal(agent_fs_close(f), 0);
	add_note(5, "again", &r);
	assert_int_equal(r.notes, 2);
	struct agent_dirent e;

	assert_int_equal(agent_fs_stat(MEMORY_STORE_TEMP, &e), -ENOENT);
}

static uint64_t rng_state = 0x2545F4914F6CDD1Du;

static uint64_t rng(void)
{
	return xorshift64(&rng_state);
}

/* A single of any sign and exponent from 2^-140 to 2^120, or a subnormal, or 0. */
static float any_single(void)
{
	uint64_t r = rng();
	uint32_t bits = (uint32_t)r & 0x807FFFFFu;
	uint32_t kind = (uint32_t)(r >> 40) % 16u;

	if (kind == 0) {
		bits &= 0x80000000u;
	} else if (kind != 1) {
		bits |= (uint32_t)(1u + (r >> 48) % 247u) << 23;
	}
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/*
 * The integer quantiser against floating point on the host: the scale is exactly the single
 * max / 127.0f, and q[i] exactly round(127 * v[i] / max) half away from zero computed in
 * double (exact here: 127 * v has 31 bits); over 3,000 vectors whose values span many
 * powers of two. The cosine is the double formula rounded, or one unit off when that is
 * within 1e-6 of a half.
 */
static void quantise_and_cosine_as_floating_point(void **state)
{
	static float v[MEMORY_DIM];
	struct memory_vec qa;
	struct memory_vec qb;

	(void)state;
	for (int round = 0; round < 3000; round++) {
		float max = 0;
		int spread = 1 + round % 40; /* powers of two between the values */

		for (size_t i = 0; i < MEMORY_DIM; i++) {
			float f = any_single();
			uint32_t bits;

			/* Keep the exponents within @spread of each other (else most q are 0). */
			memcpy(&bits, &f, sizeof(bits));
			if ((bits & 0x7F800000u) != 0) {
				bits = (bits & 0x807FFFFFu) |
				       ((uint32_t)(100 + (int)(rng() % (uint64_t)spread)) << 23);
			}
			memcpy(&f, &bits, sizeof(f));
			v[i] = f;
			max = (f < 0 ? -f : f) > max ? (f < 0 ? -f : f) : max;
		}
		if (max == 0) {
			continue;
		}
		assert_int_equal(memory_quantise(v, MEMORY_DIM, &qa), 0);
		assert_true(qa.scale == max / 127.0f);
		for (size_t i = 0; i < MEMORY_DIM; i++) {
			double x = 127.0 * (double)v[i] / (double)max;
			int want = (int)(x < 0 ? x - 0.5 : x + 0.5);

			if (qa.q[i] != want) {
				fail_msg("v %a max %a: q %d, want %d", (double)v[i], (double)max,
					 qa.q[i], want);
			}
		}
		if (round % 2 == 1) {
			double dot = 0;
			double na = 0;
			double nb = 0;
			double cos_e4;
			double frac;
			int32_t want;
			int32_t got;

			for (size_t i = 0; i < MEMORY_DIM; i++) {
				dot += (double)qa.q[i] * qb.q[i];
				na += (double)qa.q[i] * qa.q[i];
				nb += (double)qb.q[i] * qb.q[i];
			}
			got = memory_cosine_e4(qa.q, qb.q, MEMORY_DIM);
			if (na == 0 || nb == 0) {
				assert_int_equal(got, 0);
				continue;
			}
			cos_e4 = 10000.0 * dot / sqrt(na * nb);
			want = (int32_t)(cos_e4 < 0 ? cos_e4 - 0.5 : cos_e4 + 0.5);
			frac = (cos_e4 < 0 ? -cos_e4 : cos_e4) - (double)(int32_t)(cos_e4 < 0 ? -cos_e4 : cos_e4);
			if (got != want && !(frac > 0.5 - 1e-6 && frac < 0.5 + 1e-6 &&
					     (got - want == 1 || want - got == 1))) {
				fail_msg("cosine %d, want %d (%.6f)", got, want, cos_e4);
			}
		}
		qb = qa;
	}
	/* The extremes: +-127 and -128 everywhere, one dimension apart. */
	memset(qa.q, 127, sizeof(qa.q));
	memset(qb.q, 0x80, sizeof(qb.q));
	assert_int_equal(memory_cosine_e4(qa.q, qb.q, MEMORY_DIM), -10000);
	assert_int_equal(memory_cosine_e4(qb.q, qb.q, MEMORY_DIM), 10000);
}

static void crc_is_zlibs(void **state)
{
	(void)state;
	assert_int_equal(memory_crc32(0, "123456789", 9), 0xCBF43926u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantise_and_cosine),
		cmocka_unit_test(quantise_refuses),
		cmocka_unit_test(quantise_and_cosine_as_floating_point),
		cmocka_unit_test(crc_is_zlibs),
		cmocka_unit_test_setup_teardown(empty_store, setup, teardown),
		cmocka_unit_test_setup_teardown(nearest_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(note_length_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(note_count_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(format_on_flash, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
