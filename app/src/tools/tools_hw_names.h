/*
 * The names the board inspection's values go by, in the hardware tools' results and in the
 * scripts' device API alike (one table each). TOOLS_HW_NAME() gives "unknown" for a value
 * past its table.
 */
#ifndef AGENT_TOOLS_HW_NAMES_H
#define AGENT_TOOLS_HW_NAMES_H

#include "agent_port.h"

#define TOOLS_HW_NAME(table, value)                                                                \
	((unsigned int)(value) < sizeof(table) / sizeof((table)[0]) ? (table)[value] : "unknown")

extern const char *const tools_hw_gpio_policy_names[AGENT_GPIO_POLICY_UNKNOWN + 1];
extern const char *const tools_hw_gpio_mode_names[AGENT_GPIO_MODE_UNKNOWN + 1];
extern const char *const tools_hw_bus_type_names[AGENT_BUS_TYPE_COUNT];
extern const char *const tools_hw_bus_origin_names[AGENT_BUS_ORIGIN_UNKNOWN + 1];
extern const char *const tools_hw_bus_sharing_names[AGENT_BUS_SHARING_UNKNOWN + 1];
extern const char *const tools_hw_display_role_names[AGENT_DISPLAY_ROLE_COUNT];
extern const char *const tools_hw_wifi_names[AGENT_WIFI_UNKNOWN + 1];
extern const char *const tools_hw_sensor_family_names[AGENT_SENSOR_FAMILY_COUNT];

#endif /* AGENT_TOOLS_HW_NAMES_H */
