/*
 * Shared by the files of the hardware inspection tools (tools_hardware.c, tools_gpio.c,
 * tools_buses.c, tools_net_sensors.c): the scratch buffer of a list element, the room kept
 * behind a list and the small writers all of them use. tools_hardware.h is their API.
 */
#ifndef AGENT_TOOLS_HARDWARE_INTERNAL_H
#define AGENT_TOOLS_HARDWARE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"
#include "tool.h"
#include "tools_hw_names.h"
#include "tools_listing.h"

/* Room kept after a list for the members written behind it ("next_start"). */
#define LIST_TAIL_BYTES 24


#define NAME_OF(table, value) TOOLS_HW_NAME(table, value)


/* The scratch writer buffer of one list element (tools run one at a time). */
extern char tools_hw_item_buf[TOOLS_ITEM_MAX];

/* "key": value, or "key": null when the port does not know it. */
void tools_hw_key_int_or_null(struct json_writer *w, const char *key, int64_t value, bool known);

/* The port's "cannot tell" for a whole call, as one line for the model. */
int tools_hw_port_fail(struct tool_ctx *ctx, int err, const char *what);

/* Whether @p a equals the @p blen bytes of @p b, ASCII case ignored. */
bool tools_hw_same_name(const char *a, const char *b, size_t blen);

#endif /* AGENT_TOOLS_HARDWARE_INTERNAL_H */
