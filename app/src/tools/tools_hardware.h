/*
 * The hardware inspection tools (tools_hardware.c, tools_gpio.c, tools_buses.c,
 * tools_net_sensors.c): they read the port's board inspection (agent_port.h, "Board
 * inspection") and never configure, claim or connect anything.
 */
#ifndef AGENT_TOOLS_HARDWARE_H
#define AGENT_TOOLS_HARDWARE_H

#include "tool.h"

extern const struct tool_def tool_hardware_describe;
extern const struct tool_def tool_gpio_list;
extern const struct tool_def tool_gpio_read;
extern const struct tool_def tool_buses_list;
extern const struct tool_def tool_display_list;
extern const struct tool_def tool_network_status;
extern const struct tool_def tool_sensors_read;

#endif /* AGENT_TOOLS_HARDWARE_H */
