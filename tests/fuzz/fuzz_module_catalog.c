/*
 * libFuzzer target for the module catalog (app/src/modules/module_catalog.c; docs/modules.md
 * "The catalog"). The input is a sequence of operations: its first byte chooses the mix
 * (large texts that fill the arena, or small ones that use up the entries), then each choice
 * of tests/unit/module_catalog_model.h's model_step() (begin, write, commit, free, reset, with
 * their names, sizes, offsets and lengths) takes the next one, two or four bytes. After every
 * operation the catalog is checked against the reference model: every entry's fields, no two
 * runs overlapping, every run inside the arena, every written byte as written, a begin
 * succeeding exactly when the model's byte map has a first-fit gap (at the same offset), the
 * "needs N bytes" values of a refusal, find, the installed order and the statistics.
 *
 * Built with a small catalog (tests/fuzz/CMakeLists.txt: 8 entries, 2048 bytes, within the
 * Kconfig ranges) so a short input reaches a full arena and a full table.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MODEL_FAIL(...)                                                                          \
	do {                                                                                     \
		fprintf(stderr, "fuzz_module_catalog: ");                                        \
		fprintf(stderr, __VA_ARGS__);                                                    \
		fprintf(stderr, "\n");                                                           \
		abort();                                                                         \
	} while (0)

#include "module_catalog_model.h"

#define MAX_OPS 4096u

struct input {
	const uint8_t *data;
	size_t size;
	size_t pos;
};

/* A value below @p n from the next one, two or four input bytes (0 once they run out). */
static uint32_t input_bits(void *ctx, uint32_t n)
{
	struct input *in = ctx;
	unsigned int bytes = n <= 0x100u ? 1u : n <= 0x10000u ? 2u : 4u;
	uint32_t v = 0;

	for (unsigned int i = 0; i < bytes; i++) {
		v = (v << 8) | (in->pos < in->size ? in->data[in->pos++] : 0u);
	}
	return v % n;
}

static struct model model;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, size, 0};
	struct model_source src = {input_bits, &in};

	if (size == 0u) {
		return 0;
	}
	memset(&model, 0, sizeof(model));
	model_reset(&model);
	model.crowd = (data[0] & 1u) != 0u;
	in.pos = 1;
	for (unsigned int op = 0; op < MAX_OPS && in.pos < in.size; op++) {
		model_step(&model, &src);
	}
	return 0;
}
