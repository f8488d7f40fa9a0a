/* jobs_list: read-only inspection of the job registry (tools_jobs.c, agent_jobs.h). */
#ifndef AGENT_TOOLS_JOBS_H
#define AGENT_TOOLS_JOBS_H

#include "tool.h"

extern const struct tool_def tool_jobs_list;

#endif /* AGENT_TOOLS_JOBS_H */
