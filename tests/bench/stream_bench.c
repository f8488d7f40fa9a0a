/*
 * Benchmark driver of the stream path (not a test): runs provider turns against an endpoint
 * (the test server on loopback, serving a recorded stream) and reports what the turn produced
 * and what the stream path's pools held and had written into them at most (provider_memory_get). scripts/bench_stream.py runs it under
 * callgrind to count instructions per KiB streamed.
 *
 * Usage: stream_bench URL REPETITIONS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_config.h"
#include "provider.h"

static char call_args[PROVIDER_CALL_ARGS_BYTES];

struct tally {
	size_t text_bytes;
	unsigned int calls;
	unsigned int errors;
	char last_error[PROVIDER_MESSAGE_MAX + 200];
};

static int on_event(void *user_data, const struct provider_event *ev)
{
	struct tally *t = user_data;

	if (ev->type == PROVIDER_TEXT) {
		t->text_bytes += ev->text.len;
	} else if (ev->type == PROVIDER_TOOL_CALL) {
		t->calls++;
	} else if (ev->type == PROVIDER_ERROR) {
		t->errors++;
		snprintf(t->last_error, sizeof(t->last_error), "%s", ev->error.message);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_config cfg;
	struct tally tally = {0};
	struct provider_memory mem;
	const char *why;
	int reps;

	if (argc != 3 || (reps = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: %s URL REPETITIONS\n", argv[0]);
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	if (agent_config_check_endpoint(argv[1], &why) != 0) {
		fprintf(stderr, "bad URL: %s\n", why);
		return 2;
	}
	snprintf(cfg.endpoint, sizeof(cfg.endpoint), "%s", argv[1]);
	snprintf(cfg.model, sizeof(cfg.model), "bench");
	cfg.reasoning = AGENT_REASONING_MEDIUM;
	if (provider_init() != 0) {
		return 1;
	}
	for (int i = 0; i < reps; i++) {
		struct provider_request req = {
			.config = &cfg,
			.instructions = "bench",
			.prompt = "bench",
			.emit = on_event,
			.user_data = &tally,
			.call_args = call_args, /* the tool loop's buffer, as agent_request.c gives */
		};

		provider_run(&req);
	}
	provider_memory_get(&mem);
	printf("text_bytes=%zu calls=%u errors=%u stream_held=%zu stream_written=%zu "
	       "body_held=%zu body_written=%zu parse_state=%zu\n",
	       tally.text_bytes, tally.calls, tally.errors, mem.stream_held_peak,
	       mem.stream_written_peak, mem.body_held_peak, mem.body_written_peak, mem.parse_state);
	if (tally.errors != 0) {
		printf("last_error=%s\n", tally.last_error);
	}
	return 0;
}
