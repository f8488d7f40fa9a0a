/* The tools of the module layer: skill_use (module_skill_tool.c). */
#ifndef AGENT_MODULE_TOOLS_H
#define AGENT_MODULE_TOOLS_H

/** Register skill_use in the tool registry (module_boot()). 0 or tool_registry_add()'s error. */
int module_tools_register(void);

#endif /* AGENT_MODULE_TOOLS_H */
