/*
 * The script-runner contract (spec: "the reusable script-runner contract"): one C API that
 * `agent script` and the script tools both use to run a Python or Lua source string or a
 * saved file with arguments, with its output captured up to a bound, a deadline,
 * cancellation, a single-owner guard per runtime and a structured status.
 * docs/scripting.md describes the contract, the status and the device API scripts see.
 *
 * script_run() runs on its caller's thread (the request worker for a tool, the worker
 * `agent script` starts for the console), so the caller's stack is the script's C stack.
 */
#ifndef AGENT_SCRIPT_RUNNER_H
#define AGENT_SCRIPT_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

enum script_lang {
	SCRIPT_LANG_PYTHON,
	SCRIPT_LANG_LUA,
	SCRIPT_LANG_COUNT
};

/* How a run ended; script_outcome_name() gives the token of the JSON status. */
enum script_outcome {
	SCRIPT_COMPLETED,     /* "completed": ran to its end */
	SCRIPT_EXCEPTION,     /* "exception": an error was raised and not caught (type, message,
			       * line); a syntax error too */
	SCRIPT_CANCELLED,     /* "cancelled": Esc / Ctrl-X, or the request was cancelled */
	SCRIPT_DEADLINE,      /* "deadline": ran past its deadline and was stopped */
	SCRIPT_OUT_OF_MEMORY, /* "out_of_memory": its heap could not hold it */
	SCRIPT_BUSY,	      /* "busy": another run of that runtime holds the guard; not run */
	SCRIPT_UNAVAILABLE,   /* "unavailable": the runtime is not in this firmware; not run */
	SCRIPT_LOAD_FAILED,   /* "load_failed": the file could not be read (message says why) */
	SCRIPT_OUTCOME_COUNT
};

#define SCRIPT_EXC_TYPE_MAX 31	/* "ZeroDivisionError", "runtime error" */
#define SCRIPT_MESSAGE_MAX  159 /* the exception's message (cut at a character) */
#define SCRIPT_ARG_MAX_LEN  255 /* one argument of a file run */


struct script_request {
	enum script_lang lang;
	/* Exactly one of source (with source_len) and path is given. */
	const char *source;
	size_t source_len;
	const char *path; /* absolute, checked by the caller (storage refusals); read by the runner */
	/* The arguments a file run passes (sys.argv[1:] / arg[1..]); source runs may pass some too. */
	const char *const *argv;
	uint8_t argc;
	/* argv[0] (sys.argv[0] / arg[0]); NULL: the path, or "<stdin>" for a source. */
	const char *argv0;
	/* Where the output goes: at most out_cap - 1 bytes are kept, then NUL. */
	char *out;
	size_t out_cap;
	uint32_t deadline_ms;
	const struct agent_cancel *cancel; /* may be NULL */
	const char *owner;		   /* who asks: "shell", "tool" (jobs_list) */
};

struct script_status {
	enum script_outcome outcome;
	bool truncated;	      /* the script wrote more than was kept */
	size_t out_len;	      /* bytes kept in out */
	size_t out_total;     /* bytes the script wrote */
	char exc_type[SCRIPT_EXC_TYPE_MAX + 1];
	char message[SCRIPT_MESSAGE_MAX + 1];
	int32_t line;	      /* of the exception; 0 when unknown */
	uint32_t elapsed_ms;
	size_t heap_peak_bytes;	  /* the most the runtime's heap held during the run */
	size_t heap_left_bytes;	  /* held after the run: 0, or the runner's error */
};

/** Put the runtimes built into this firmware in place (agent_init()). 0 or a negative errno. */
int script_runner_init(void);

/** Whether @p lang is built in and initialised. */
bool script_lang_available(enum script_lang lang);

/** "python", "lua". */
const char *script_lang_name(enum script_lang lang);

/** @p name ("python", "lua") as a language; -EINVAL for another name. */
int script_lang_parse(const char *name, enum script_lang *out);

/** The token of @p outcome: "completed", "exception", ... */
const char *script_outcome_name(enum script_outcome outcome);

/**
 * Run one script and fill @p status (always, also when it is not run). Returns 0 when it ran
 * (whatever its outcome), -EBUSY (guard held), -ENOTSUP (runtime not built in), -ENOENT /
 * -EIO (the file), -EINVAL (bad request: no source or path, source too long).
 */
int script_run(const struct script_request *req, struct script_status *status);

/**
 * Write @p status as the members of a JSON object (no braces) into @p out: "outcome", then
 * the exception's "type", "message" and "line" when there is one, "truncated", "output".
 */
struct json_writer;
void script_status_json(const struct script_status *status, const char *output,
			struct json_writer *out);

/**
 * The deadline of a run, in ms: CONFIG_AGENT_MANUAL_SCRIPT_DEADLINE_S (the spec's 30 s for
 * `agent script` and script_run_file; the script tools use it too), unless a test shortened
 * it with script_set_deadline_ms() (CONFIG_AGENT_SCRIPT_TEST_HOOKS).
 */
uint32_t script_deadline_ms(void);

#ifdef CONFIG_AGENT_SCRIPT_TEST_HOOKS
/** Tests only: the deadline of every later run (0: back to the Kconfig value). */
void script_set_deadline_ms(uint32_t ms);
#endif

/** The heap figures of @p lang's runtime; -ENOTSUP when it is not built in. */
int script_heap_stats(enum script_lang lang, struct agent_region_stats *out);

#endif /* AGENT_SCRIPT_RUNNER_H */
