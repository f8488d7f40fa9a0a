/*
 * Imported device tools (docs/modules.md "Device tools"): every installed tool module is a
 * model-callable tool. Its definition lives in a static slot per catalog entry (no
 * malloc): name = the module's name, description and risk from the manifest, one required
 * parameter per `args` item in declared order, group `imported`, domain script. A call
 * checks the entry's SHA-256 against the digest recorded at import, then runs the entry
 * (runtime lua / python: the script runner; host: the feeder, module_host.h) with the
 * declared arguments in declared order as argv, its output bounded by the manifest's
 * `output`.
 *
 * The registry changes only while no request runs: module_tool_admit() refuses a change to
 * a tool module while one runs, under the module lock, which a request takes (for its role)
 * after it counts as running and before it reads the registry.
 */
#ifndef AGENT_MODULE_TOOL_H
#define AGENT_MODULE_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"
#include "module_manifest.h"
#include "tool.h"

/* The bounds of a declared argument (docs/modules.md "Device tools"). */
#define MODULE_TOOL_STRING_MAX	255	     /* bytes of a string argument (SCRIPT_ARG_MAX_LEN) */
#define MODULE_TOOL_INTEGER_MIN (-2147483647 - 1)
#define MODULE_TOOL_INTEGER_MAX 2147483647
#define MODULE_TOOL_ARG_TEXT	12	     /* an integer's decimal text and its NUL */

/** Whether this build is the data-only profile (CONFIG_AGENT_MODULES_DATA_ONLY). */
bool module_tool_data_only(void);

/**
 * The parameters of a tool module's definition from its parsed manifest @p m: one per
 * `args` item, in declared order, all required; string 0..MODULE_TOOL_STRING_MAX bytes,
 * integer MODULE_TOOL_INTEGER_MIN..MAX, boolean. Names are copied into @p names. Returns
 * the count (0..MODULE_TOOL_ARGS_MAX).
 */
uint8_t module_tool_params(const struct module_manifest *m,
			   struct tool_param params[MODULE_TOOL_ARGS_MAX],
			   char names[MODULE_TOOL_ARGS_MAX][MODULE_ARG_NAME_MAX + 1]);

/**
 * The argv of a call: for each of the @p count params (checked by tool_args_parse()), its
 * value as text: a string as is, an integer in decimal (written into @p text), a boolean
 * `true` or `false`. 0, or -EINVAL with the reason in @p why for a string holding a NUL.
 */
int module_tool_argv(const struct tool_param *params, uint8_t count, const struct tool_args *args,
		     char text[MODULE_TOOL_ARGS_MAX][MODULE_TOOL_ARG_TEXT],
		     const char *argv[MODULE_TOOL_ARGS_MAX], char *why, size_t why_len);

/**
 * Check the entry text (@p entry, @p len bytes) of tool @p name against the SHA-256
 * @p recorded at import. 0, or -EACCES with the reason (the tool, both digests' first 16 hex
 * digits) in @p why.
 */
int module_tool_digest_check(const char *name, const void *entry, size_t len,
			     const uint8_t recorded[MODULE_DIGEST_LEN], char *why, size_t why_len);

/**
 * Before an import journals arrival @p arrival (the module lock held): may it change the
 * tools? @p installed is the installed entry it replaces, or < 0. Refuses a tool module in
 * the data-only profile (-EPERM), any change to a tool module while a request runs
 * (-EBUSY), a tool module named like a tool that is not a module (-EINVAL) and one that
 * finds the registry full (-ENOSPC). 0 when it may.
 */
int module_tool_admit(int arrival, int installed, char *why, size_t why_len);

/**
 * Make the registry match the catalog for @p name (the module lock held; no request
 * running): the tool registered for that name, if any, is removed; the installed tool
 * module of that name, if any, is registered. 0 or the registration's error with the
 * reason in @p why.
 */
int module_tool_sync(const char *name, char *why, size_t why_len);

/** Unregister every imported tool (module_boot(), before the catalog is restored). */
void module_tool_reset(void);

#endif /* AGENT_MODULE_TOOL_H */
