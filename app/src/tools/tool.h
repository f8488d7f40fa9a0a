/*
 * Typed tools: the definition every tool is made of, the parsed arguments an executor
 * receives, and the context it runs in. The one declarative registry (tool_registry.c)
 * lists every definition; the tool loop (app/src/agent/request/agent_request.c) advertises,
 * checks, confirms and runs them. See docs/tools.md.
 *
 * An executor writes exactly one JSON object into the result writer (at most
 * CONFIG_AGENT_TOOL_RESULT_MAX_LEN bytes). Lists and contents that may not fit stop early
 * and say so with "truncated": true; tool_result_room() tells how much is left. A result
 * that overflows anyway is replaced by the loop with {"error": ..., "truncated": true}.
 */
#ifndef AGENT_TOOL_H
#define AGENT_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_config.h"
#include "agent_port.h"
#include "json_writer.h"
#include "packed_text.h"

#define TOOL_PARAMS_MAX	     8	/* top-level argument fields of one tool */
#define TOOL_ITEMS_MAX	     8	/* elements of one array argument */
#define TOOL_ITEM_FIELDS_MAX 4	/* fields of one object element */
#define TOOL_ERROR_MAX	     159 /* a failed executor's message */
#define TOOL_CWD_MAX	     255 /* the invoking shell's current directory */

/* Risk classes; the policy decides per class (docs/configuration.md "Tool policy"). */
enum tool_risk {
	TOOL_RISK_READ,	      /* inspects state */
	TOOL_RISK_SENSITIVE,  /* reads content the person may not want sent away */
	TOOL_RISK_MUTATING,   /* changes state */
	TOOL_RISK_DISRUPTIVE, /* runs code */
};

enum tool_domain {
	TOOL_DOMAIN_SYSTEM,
	TOOL_DOMAIN_REFERENCE,
	TOOL_DOMAIN_DISCOVERY,
	TOOL_DOMAIN_STORAGE,
	TOOL_DOMAIN_JOBS,
	TOOL_DOMAIN_HARDWARE,
	TOOL_DOMAIN_NETWORK,
	TOOL_DOMAIN_SENSORS,
	TOOL_DOMAIN_SCRIPT,
};

/*
 * What a tool needs that a build or board may lack (struct tool_def.capability). Each is
 * checked at run time (tool_capability.c): a tool whose capability is missing now is
 * unavailable, with the reason tool_unavailable_reason() gives. docs/tools.md "Availability".
 */
enum tool_capability {
	TOOL_CAP_NONE = 0,	  /* nothing: always there (or the domain's default, below) */
	TOOL_CAP_FILESYSTEM,	  /* /lfs or /SD: mounted; the default of the storage domain */
	TOOL_CAP_LFS,		  /* the LittleFS volume mounted at /lfs */
	TOOL_CAP_SD,		  /* an SD card mounted at /SD: */
	TOOL_CAP_GPIO,		  /* at least one GPIO slot on the board */
	TOOL_CAP_BUS,		  /* at least one bus (I2C, SPI, UART, 1-Wire) */
	TOOL_CAP_DISPLAY,	  /* at least one display */
	TOOL_CAP_SENSORS,	  /* at least one sensor family in the build */
	TOOL_CAP_NETWORK,	  /* a network interface */
	TOOL_CAP_SCRIPT_RUNTIME,  /* a script runtime built in (tool_script_runtime_register) */
	TOOL_CAP_COUNT
};

/*
 * Selection groups of the modules spec (bits 0-9 of tools.mask, DESIGN.md section 1). A
 * tool belongs to at most one; status, reference, search and inspection tools to none.
 */
#define TOOL_GROUP_NONE	      0u
#define TOOL_GROUP_MEMORY_RECALL (1u << 0)
#define TOOL_GROUP_MEMORY_WRITE	 (1u << 1)
#define TOOL_GROUP_FS_READ	 (1u << 2)
#define TOOL_GROUP_FS_LIST	 (1u << 3)
#define TOOL_GROUP_FS_WRITE	 (1u << 4)
#define TOOL_GROUP_FS_UPDATE	 (1u << 5)
#define TOOL_GROUP_RUN		 (1u << 6)
#define TOOL_GROUP_SKILL_USE	 (1u << 7)
#define TOOL_GROUP_FS_STAT	 (1u << 8)
#define TOOL_GROUP_IMPORTED	 (1u << 9)
#define TOOL_GROUP_COUNT	 10u
#define TOOL_GROUPS_ALL		 ((1u << TOOL_GROUP_COUNT) - 1u) /* 1023, tools.mask's default */

/** The selection name of group bit @p bit (0 .. TOOL_GROUP_COUNT - 1): "memory_recall", ...;
 *  NULL past the end. */
const char *tool_group_name(unsigned int bit);
/** The bit of the group named @p name (exactly @p len bytes), or -ENOENT. */
int tool_group_parse(const char *name, size_t len);
struct tool_def;
/** The name of the group @p def belongs to, NULL for none. */
const char *tool_group_of(const struct tool_def *def);

/* ---- Argument schema ---------------------------------------------------------------------- */

enum tool_param_type {
	TOOL_PARAM_STRING,  /* min..max: length in bytes (UTF-8) */
	TOOL_PARAM_INTEGER, /* min..max: value */
	TOOL_PARAM_BOOLEAN,
	TOOL_PARAM_STRINGS, /* array of strings; min..max: number of elements; each at most
			     * item_max_len bytes */
	TOOL_PARAM_OBJECTS, /* array of objects with @fields; min..max: number of elements */
};

/* Bounds of one argument: 32-bit (every built-in bound and an imported tool's integer
 * range, MODULE_TOOL_INTEGER_MIN..MAX, fit), which keeps the entry at 28 bytes on a 32-bit
 * core instead of 48 with 64-bit bounds. */
struct tool_param {
	const char *name;
	const struct packed_text *description; /* TOOL_TEXT(...), or NULL */
	const struct tool_param *fields;  /* TOOL_PARAM_OBJECTS: scalar fields only */
	int32_t min;
	int32_t max;
	enum tool_param_type type;
	uint16_t item_max_len;		  /* TOOL_PARAM_STRINGS */
	bool required;
	uint8_t field_count;
};

/*
 * One parsed value. Strings are unescaped, valid UTF-8 and NUL-terminated in the
 * tool_args text area (a string may contain NUL as \u0000: use len).
 */
struct tool_value {
	bool present;
	bool boolean;
	int64_t integer;
	const char *str;
	size_t len;
	uint8_t count; /* elements, for arrays */
};

struct tool_args {
	struct tool_value v[TOOL_PARAMS_MAX];	/* in the order of the tool's params */
	/* Elements of the (at most one) array argument: strings in [i][0], objects' fields
	 * in [i][field index]. */
	struct tool_value item[TOOL_ITEMS_MAX][TOOL_ITEM_FIELDS_MAX];
	char text[CONFIG_AGENT_TOOL_ARGS_MAX_LEN + TOOL_PARAMS_MAX + TOOL_ITEMS_MAX *
		  TOOL_ITEM_FIELDS_MAX + 1];
	size_t text_len;
};

/* ---- Execution ---------------------------------------------------------------------------- */

struct tool_session; /* the loop's per-request state (tool_search changes its selection) */

struct tool_ctx {
	/* Absolute path of the invoking shell's current directory ("/lfs" by default). */
	const char *cwd;
	const struct agent_cancel *cancel;
	struct tool_session *session;
	/* The request's configuration and API key (NULL without one): for tools that call the
	 * endpoint's service themselves (memory tools: embeddings). Never logged or stored. */
	const struct agent_config *config;
	const char *key;
	/* Set by an executor that fails (returns < 0): one line for the model. */
	char error[TOOL_ERROR_MAX + 1];
};

struct tool_def;

/**
 * Run the tool. Write one JSON object into @p out and return 0, also for answers such as
 * "exists": false or a structured conflict; return a negative errno when the tool failed
 * (after putting a message in ctx->error): the loop then sends {"error": message} and
 * counts a failure. Must poll ctx->cancel in long loops.
 */
typedef int (*tool_exec_fn)(struct tool_ctx *ctx, const struct tool_args *args,
			    struct json_writer *out);

struct tool_def {
	const char *name;
	const struct packed_text *description; /* sent to the model (TOOL_TEXT) */
	const struct tool_param *params;
	const struct packed_text *output; /* the shape of the result, for docs (TOOL_TEXT) */
	/**
	 * A check of its own besides the capability, run before offering and again before
	 * running: NULL when the tool can run now, else why not (a static string). NULL
	 * pointer: no such check.
	 */
	const char *(*unavailable)(void);
	tool_exec_fn exec;
	/* space-separated words tool_search matches, besides the name (TOOL_TEXT) */
	const struct packed_text *keywords;
	enum tool_domain domain;
	enum tool_risk risk;
	enum tool_capability capability; /* what it needs (TOOL_CAP_NONE: nothing) */
	uint16_t groups;	 /* TOOL_GROUP_* */
	uint8_t param_count;
	bool workflow_dependency; /* may activate on demand (spec: script_run_file) */
};

/* ---- Helpers for executors and tests ------------------------------------------------------- */

/**
 * Parse and check @p json (the arguments the model wrote) against @p def's params: one
 * object, only known fields, each of its type and within its bounds, every required one
 * present. 0, or -EINVAL with a one-line reason in @p why (names the field).
 */
int tool_args_parse(const struct tool_def *def, const char *json, size_t len,
		    struct tool_args *args, char *why, size_t why_len);

/** Bytes still free in @p out before the result bound (keep room for closing brackets). */
size_t tool_result_room(const struct json_writer *out);

/** @p text (plain or packed) as a JSON string, read a piece at a time; NULL fails @p w. */
void tool_write_text(struct json_writer *w, const struct packed_text *text);

/** printf into ctx->error and return @p err (a negative errno), for `return tool_fail(...)`. */
int tool_fail(struct tool_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

const char *tool_risk_name(enum tool_risk risk);
const char *tool_domain_name(enum tool_domain domain);

#endif /* AGENT_TOOL_H */
