/* Parameter definitions and limits shared by several storage tools. */
#ifndef AGENT_STORAGE_PARAMS_H
#define AGENT_STORAGE_PARAMS_H

#include "storage_path.h"
#include "tool.h"

/*
 * Bytes kept free after the last variable-length member of a result, for the members that
 * follow it, on top of what tool_result_room() already keeps.
 */
#define STORAGE_RESULT_TAIL 96

/* A Kconfig number inside a description string. */
#define STORAGE_STR_(x) #x
#define STORAGE_STR(x)	STORAGE_STR_(x)

#define STORAGE_PATH_PARAM(desc)                                                            \
	{                                                                                   \
		.name = "path", .type = TOOL_PARAM_STRING, .required = true,                \
		.description = desc, .min = 1, .max = STORAGE_PATH_MAX,                     \
	}

/* Room left for a variable member once the fixed members after it are set aside. */
static inline size_t storage_room(const struct json_writer *out)
{
	size_t room = tool_result_room(out);

	return room > STORAGE_RESULT_TAIL ? room - STORAGE_RESULT_TAIL : 0;
}

#endif /* AGENT_STORAGE_PARAMS_H */
