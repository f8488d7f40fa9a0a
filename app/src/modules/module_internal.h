/* Shared between the files of app/src/modules; not for other layers. */
#ifndef AGENT_MODULE_INTERNAL_H
#define AGENT_MODULE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "module.h"
#include "module_import.h"

int module_lock_init(void);

/** The head of a module from its manifest, or from its SKILL.md when @p manifest_len is 0;
 *  @p name (MODULE_NAME_MAX + 1 bytes) gets the name the head points to. No digest. */
int module_head_from(const char *manifest, size_t manifest_len, const char *body, size_t body_len,
		     struct module_import_head *head, char *name, char *why, size_t why_len);

/** 0 when the installed entry @p index may be removed, else the refusal (role in use, an
 *  active tool) with its reason. */
int module_in_use(int index, char *why, size_t why_len);

/** Drop the incomplete arrival @p name, if any (a local import that failed midway). */
void module_import_abort(const char *name);

/** Whether the tool module @p name is active: offered by a running request. */
bool module_tool_active(const char *name);

#endif /* AGENT_MODULE_INTERNAL_H */
