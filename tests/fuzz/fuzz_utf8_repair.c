/*
 * libFuzzer target for utf8_repair() (app/src/agent/wire/utf8.c), the repair behind every
 * text string of an SMP answer (agent_mgmt_put_text(), docs/mgmt-group.md). For any bytes:
 * the result is strict UTF-8 (checked by a decoder written apart from utf8.c), at most three
 * times as long, the counting run (out NULL) agrees with the writing run, well-formed input
 * comes back unchanged with no replacement, and repairing the result changes nothing.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strict_utf8.h"
#include "utf8.h"

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_utf8_repair: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *out = malloc(3 * size + 1);
	uint8_t *again = malloc(3 * size + 1);
	size_t counted_bad = 0;
	size_t bad = 0;
	size_t again_bad = 0;
	size_t counted;
	size_t n;

	check(out != NULL && again != NULL, "out of memory");
	counted = utf8_repair((const char *)data, size, NULL, &counted_bad);
	n = utf8_repair((const char *)data, size, out, &bad);
	check(n == counted && bad == counted_bad, "counting and writing disagree");
	check(n <= 3 * size, "more than three times as long");
	check(strict_utf8(out, n), "the result is not strict UTF-8");
	if (strict_utf8(data, size)) {
		check(bad == 0 && n == size && memcmp(out, data, size) == 0,
		      "well-formed input was changed");
	} else {
		check(bad > 0, "ill-formed input without a replacement");
	}
	check(utf8_repair((const char *)out, n, again, &again_bad) == n && again_bad == 0 &&
		      memcmp(again, out, n) == 0,
	      "repairing the result changed it");
	free(out);
	free(again);
	return 0;
}
