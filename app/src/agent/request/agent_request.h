/*
 * One request with tools: provider turns in a loop, each tool call checked (offered? known?
 * valid arguments? one at a time?), confirmed when the policy asks, executed through the
 * canonical executor and answered in the next turn, up to the configured budget, then a
 * reserved final turn without tools. See docs/tools.md "The tool loop".
 *
 * The frontend (agent ask, the chat) supplies the hooks; they run on the request worker.
 */
#ifndef AGENT_REQUEST_H
#define AGENT_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_config.h"
#include "agent_port.h"
#include "provider.h"

enum agent_tool_outcome {
	AGENT_TOOL_EXECUTED, /* ran and answered */
	AGENT_TOOL_DENIED,   /* the policy or the person said no; the model got a denial */
	AGENT_TOOL_FAILED,   /* ran and failed; the model got the error */
	AGENT_TOOL_RETRY,    /* a workflow dependency activated on demand, not run */
};

struct agent_request_hooks {
	/** A piece of the answer. */
	void (*text)(void *user, const char *text, size_t len);
	/** The model called a tool (before any check). */
	void (*tool_call)(void *user, const char *name, const char *arguments, size_t len);
	/** What became of that call; @p detail is the error or denial, or "". */
	void (*tool_done)(void *user, const char *name, enum agent_tool_outcome outcome,
			  const char *detail);
	/**
	 * The policy asks: show the exact arguments and wait for the person. 1 allows this one
	 * call, 0 denies it, -ECANCELED cancels the whole request.
	 */
	int (*confirm)(void *user, const char *name, const char *arguments, size_t len);
	/** Token counts, summed over the request's turns, after each turn. */
	void (*usage)(void *user, const struct provider_usage *usage);
	/** The request failed; one line. */
	void (*error)(void *user, const char *message);
};

struct agent_request {
	const struct agent_config *config;
	const char *key; /* NULL without a key */
	const char *instructions;
	unsigned int agent_id; /* 0: the console agent; N: the conversation in slot N */
	const char *prompt;
	const char *cwd; /* the invoking shell's current directory, absolute */
	const char *previous_response_id; /* Responses: continue an earlier conversation */
	/* Chat Completions: the conversation's earlier messages (see provider_request). */
	void (*write_prior)(void *prior_user, struct json_writer *w);
	void *prior_user;
	size_t prior_bytes; /* what write_prior writes, serialized: the tool exchanges get less */
	struct agent_cancel *cancel;
	const struct agent_request_hooks *hooks;
	void *user;
	/* Out: the continuation id of the last completed turn ("" when none). */
	char response_id[PROVIDER_ID_MAX + 1];
};

/* Tool activity, for agent status. */
struct agent_tool_stats {
	uint32_t executed; /* since boot */
	uint32_t denied;
	uint32_t failed;
	uint32_t last_used;   /* tool calls of the last request */
	uint32_t last_budget; /* its budget (max-tools) */
};

/**
 * Run the request to its end: 0 when the final answer arrived, else a negative errno after
 * hooks->error (or -ECANCELED).
 */
int agent_request_run(struct agent_request *req);

void agent_tool_stats_get(struct agent_tool_stats *out);

/** Whether a request is running now (any frontend); the management group refuses changes then. */
bool agent_request_active(void);

#endif /* AGENT_REQUEST_H */
