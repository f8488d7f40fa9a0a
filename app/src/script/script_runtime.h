/*
 * What a script runtime (an interpreter adapter: app/src/runtimes/lua, app/src/runtimes/python)
 * implements for the runner, and what the runner gives it: the run's source and arguments, its
 * bounded heap, output capture, the stop check (deadline, cancellation), the status setters,
 * and the device API as one table both languages bind the same way (docs/scripting.md).
 */
#ifndef AGENT_SCRIPT_RUNTIME_H
#define AGENT_SCRIPT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"
#include "script_runner.h"

/* How often a runtime's hook should call script_exec_check(): every so many VM instructions
 * (Lua's count hook) or backward branches / calls (MicroPython's VM hook). */
#define SCRIPT_HOOK_INSTRUCTIONS 1000

/*
 * The C stack a script's nesting may take beyond where its run began
 * (script_exec_c_stack_max()): half the stack of the thread it runs on, 8 KiB of the 16 KiB
 * worker, leaving the rest for the runner below and for the deepest C path a runtime takes
 * without a check (its parser, a pattern match, an error message). A runtime refuses to nest
 * deeper with an error the script sees (Lua: the call hook; MicroPython: its stack check).
 * On a thread whose stack the port does not know, half the worker's stack.
 */
#define SCRIPT_C_STACK_MAX (CONFIG_AGENT_WORKER_STACK_SIZE / 2)

struct script_exec; /* one run, owned by the runner */

struct script_runtime {
	enum script_lang lang;
	const char *name; /* "python", "lua" */
	/* The guard and job name: "script_python", "script_lua" (docs/jobs.md). */
	const char *job;
	/**
	 * Run the source of @p ex (script_exec_source()) with its arguments. Every outcome is
	 * set through script_exec_*; returning without one means completed. On return the
	 * runtime has given back every block of script_exec_heap(); the runner checks.
	 */
	void (*run)(struct script_exec *ex);
};

/* Each runtime built in provides its adapter (CONFIG_AGENT_SCRIPT_LUA / _PYTHON). */
const struct script_runtime *script_runtime_lua(void);
const struct script_runtime *script_runtime_python(void);

/* ---- The run, for the adapter ------------------------------------------------------------- */

struct agent_region *script_exec_heap(struct script_exec *ex);
const char *script_exec_source(struct script_exec *ex, size_t *len);
/** The source is compiled: a file's copy in the heap can go (optional; the runner frees it). */
void script_exec_release_source(struct script_exec *ex);
/* What tracebacks name the chunk: the file's path, or "<stdin>" for a source string. */
const char *script_exec_chunk_name(struct script_exec *ex);
/* Arguments: 0 is the chunk name (sys.argv[0] / arg[0]), then the request's. */
uint8_t script_exec_argc(struct script_exec *ex);
const char *script_exec_arg(struct script_exec *ex, uint8_t index);

/** How much C stack the script's nesting may take beyond where the run began (above). */
size_t script_exec_c_stack_max(struct script_exec *ex);

/** Capture output; what passes the request's bound is counted and dropped (truncated). */
void script_exec_write(struct script_exec *ex, const char *data, size_t len);

/**
 * Whether the run must stop now: SCRIPT_COMPLETED while it may go on, else SCRIPT_CANCELLED
 * or SCRIPT_DEADLINE (and from then on always that). Cheap: a flag and the uptime.
 */
enum script_outcome script_exec_check(struct script_exec *ex);

/** Sleep up to @p ms in slices, returning early with script_exec_check()'s reason. */
enum script_outcome script_exec_sleep(struct script_exec *ex, uint32_t ms);

/** The script raised @p type with @p message at @p line (0: unknown); texts are cut. */
void script_exec_exception(struct script_exec *ex, const char *type, const char *message,
			   int32_t line);
/** The runtime's heap could not hold the script. */
void script_exec_out_of_memory(struct script_exec *ex);
/** The run was stopped for @p why (SCRIPT_CANCELLED or SCRIPT_DEADLINE). */
void script_exec_stopped(struct script_exec *ex, enum script_outcome why);

/* ---- The device API ----------------------------------------------------------------------- */

/*
 * Each function of the `device` module (Python: import device; Lua: the global device)
 * writes its result into a sink the adapter provides, which builds the language's values:
 * None/nil, booleans, integers, strings, lists and maps (string keys), nested up to
 * SCRIPT_SINK_DEPTH. A sink call may not return (an out-of-memory error of the runtime):
 * a function holds nothing across sink calls but what script_exec_hold() keeps.
 */
#define SCRIPT_SINK_DEPTH 3

struct script_sink_ops {
	void (*none)(void *ctx);
	void (*boolean)(void *ctx, bool value);
	void (*integer)(void *ctx, int64_t value);
	void (*string)(void *ctx, const char *text, size_t len);
	void (*list_begin)(void *ctx); /* values until list_end are its items */
	void (*list_end)(void *ctx);
	void (*map_begin)(void *ctx); /* key, value pairs until map_end */
	void (*key)(void *ctx, const char *key);
	void (*map_end)(void *ctx);
};

struct script_sink {
	const struct script_sink_ops *ops;
	void *ctx;
};

enum script_arg_type {
	SCRIPT_ARG_STR,
	SCRIPT_ARG_INT,
};

struct script_arg {
	bool present;
	const char *str; /* SCRIPT_ARG_STR: the bytes (not necessarily NUL-terminated) */
	size_t len;
	int64_t integer; /* SCRIPT_ARG_INT */
};

/*
 * What a device API call may take from the run's heap for a moment (a file's bytes, a
 * directory's names): a runtime that carves its own heap out of the region (MicroPython's
 * garbage-collected heap) leaves at least this much of the region free.
 */
#define SCRIPT_API_SCRATCH_BYTES (CONFIG_AGENT_STORAGE_IO_MAX_LEN + 64)

#define SCRIPT_FN_ARGS_MAX 3
#define SCRIPT_ERROR_MAX   159 /* as TOOL_ERROR_MAX: a storage path refusal fits whole */

struct script_fn {
	const char *name;      /* "read" */
	const char *signature; /* "read(path, offset=0, length=4095) -> str" */
	const char *summary;   /* one line for docs and the reference */
	uint8_t args_min;
	uint8_t args_max;
	enum script_arg_type types[SCRIPT_FN_ARGS_MAX];
	/**
	 * Write the result into @p out and return 0, or return a negative errno with a one-line
	 * message in @p error (the adapter raises it: Python OSError / ValueError, Lua error()).
	 */
	int (*call)(struct script_exec *ex, const struct script_arg *args, struct script_sink *out,
		    char error[SCRIPT_ERROR_MAX + 1]);
};

/** The device API, in documentation order. */
const struct script_fn *script_api_get(size_t index);
size_t script_api_count(void);

/**
 * Call @p fn after checking @p argc against its bounds (the adapter converts the language's
 * values by fn->types first). Releases what the previous call held.
 */
int script_api_call(struct script_exec *ex, const struct script_fn *fn,
		    const struct script_arg *args, uint8_t argc, struct script_sink *out,
		    char error[SCRIPT_ERROR_MAX + 1]);

#endif /* AGENT_SCRIPT_RUNTIME_H */
