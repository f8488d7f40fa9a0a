/*
 * The body of the script runtimes' libFuzzer targets (fuzz_script_lua.c, fuzz_script_python.c):
 * the input is a source of FUZZ_SCRIPT_LANG run by script_run() inside the runtime's bounded
 * heap, with a short deadline and a cancel flag that is never raised. Whatever the source
 * does (syntax errors, exceptions, loops, recursion, heap exhaustion, the device API), the run
 * must end with an outcome a source run can have, its output within the bound, and the heap
 * back to empty. No file system is mounted: the device API's file functions fail as they
 * would on a device without storage.
 *
 * The fuzzer's main thread has a large C stack, so these targets find memory errors, not
 * overflows of the 16 KiB worker (test_script_runner runs on the worker's stack).
 */
#ifndef FUZZ_SCRIPT_H
#define FUZZ_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_port.h"
#include "script_runner.h"

#define DEADLINE_MS 100u
#define OUT_MAX	    383u

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_script_%s: %s\n", script_lang_name(FUZZ_SCRIPT_LANG), what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	static struct agent_cancel never;
	char out[OUT_MAX + 1];
	struct agent_region_stats heap;
	struct script_status st;
	struct script_request req = {
		.lang = FUZZ_SCRIPT_LANG,
		.source = (const char *)data,
		.source_len = size,
		.out = out,
		.out_cap = sizeof(out),
		.deadline_ms = DEADLINE_MS,
		.cancel = &never,
		.owner = "fuzz",
	};
	int rc;

	if (!ready) {
		check(script_runner_init() == 0, "script_runner_init failed");
		check(script_lang_available(FUZZ_SCRIPT_LANG), "the runtime is not built in");
		ready = true;
	}
	rc = script_run(&req, &st);
	check(rc == 0, "script_run refused a source run");
	check(st.outcome == SCRIPT_COMPLETED || st.outcome == SCRIPT_EXCEPTION ||
		      st.outcome == SCRIPT_DEADLINE || st.outcome == SCRIPT_OUT_OF_MEMORY,
	      "an outcome a source run cannot have");
	check(st.out_len <= OUT_MAX && strlen(out) <= st.out_len, "output past its bound");
	check(st.truncated == (st.out_total > st.out_len), "truncated disagrees with the counts");
	check(st.heap_left_bytes == 0, "the heap is not empty after the run");
	check(script_heap_stats(FUZZ_SCRIPT_LANG, &heap) == 0 && heap.used_bytes == 0,
	      "the heap's figures are not empty after the run");
	check(st.elapsed_ms < 5000u, "the run went far past its deadline");
	return 0;
}

#endif /* FUZZ_SCRIPT_H */
