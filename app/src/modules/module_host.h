/*
 * Imported host tools (docs/modules.md "Host tools"): a tool module whose runtime is `host`
 * runs on the PC through the feeder (`agent-host feed` / `west agent feed`), which stays
 * connected over SMP, fetches each call (long-poll), runs the module's entry program with
 * the declared arguments as the user's account and sends back its bounded output.
 *
 * Contract between the tool-module executor (module_tool.c) and the feeder queue
 * (module_host.c): one call at a time (one request runs at a time).
 */
#ifndef AGENT_MODULE_HOST_H
#define AGENT_MODULE_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "tool.h"

struct module_host_call {
	const char *tool;		/* the module's (and tool's) name */
	const char *entry;		/* the entry file's name in the module directory */
	const uint8_t *digest;		/* the entry's SHA-256 recorded at import (32 bytes) */
	const char *const *argv;	/* the declared arguments in declared order, as text */
	uint8_t argc;
	uint32_t output_max;		/* the manifest's output bound, bytes */
};

/**
 * Hand @p call to the attached feeder and wait for its answer (up to the host-tool timeout,
 * polling ctx->cancel). Writes the tool result (one JSON object) into @p out and returns 0,
 * or returns a negative errno after tool_fail() put the reason in ctx->error: no feeder
 * attached, the timeout, a non-zero exit, cancellation. Every failure is an error result the
 * model sees; the conversation goes on.
 */
int module_host_run(struct tool_ctx *ctx, const struct module_host_call *call,
		    struct json_writer *out);

/* ---- the feeder's side (the management group's feed (13) and result (14)) ------------------ */

/* A feeder counts as attached while a feed request waits, or for this long after its last feed
 * or result request (its next long-poll is on the way). */
#define MODULE_HOST_ATTACHED_MS 3000u
/* The most bytes of argument text one call carries (their sum), so that the feed answer
 * fits the management group's 2048-byte buffer. */
#define MODULE_HOST_ARGS_BYTES 1024u

/** Create the queue's lock and signals (module_boot(); again is harmless). */
int module_host_init(void);

/**
 * A feeder's long-poll: wait up to @p wait_ms for a call that no feeder has fetched yet.
 * Returns 0 with the call in *@p id / *@p call and the queue locked (the call stays valid
 * until module_host_feed_done()), or -EAGAIN when none came (nothing locked).
 */
int module_host_feed(uint32_t wait_ms, uint32_t *id, const struct module_host_call **call,
		     uint32_t *timeout_ms);
/** After module_host_feed() returned 0: @p sent false (the answer did not fit) fails the call. */
void module_host_feed_done(bool sent);

/**
 * The feeder's answer to call @p id: the program's exit status and its output (@p len bytes,
 * cut at the call's output_max here too). 0 when the waiting call took it; -ENOENT when no
 * call @p id waits for an answer (never fetched, answered already, timed out, cancelled: a
 * late answer is dropped), with the reason in @p why.
 */
int module_host_answer(uint32_t id, int32_t exit_status, const uint8_t *output, size_t len,
		       bool truncated, char *why, size_t why_len);

#if defined(CONFIG_AGENT_TOOL_TEST_HOOKS)
/** Tests: the call deadline in milliseconds (default CONFIG_AGENT_HOST_TOOL_TIMEOUT_S). */
void module_host_set_timeout_ms(uint32_t ms);
#endif

#endif /* AGENT_MODULE_HOST_H */
