/* The names of the board inspection's values (tools_hw_names.h). */
#include "tools_hw_names.h"

const char *const tools_hw_gpio_policy_names[AGENT_GPIO_POLICY_UNKNOWN + 1] = {
	"free", "input_only", "strapping", "reserved", "unknown"};
const char *const tools_hw_gpio_mode_names[AGENT_GPIO_MODE_UNKNOWN + 1] = {
	"unconfigured", "input", "output", "input_output", "unknown"};
const char *const tools_hw_bus_type_names[AGENT_BUS_TYPE_COUNT] = {"i2c", "spi", "uart",
								   "onewire"};
const char *const tools_hw_bus_origin_names[AGENT_BUS_ORIGIN_UNKNOWN + 1] = {"board", "runtime",
									    "unknown"};
const char *const tools_hw_bus_sharing_names[AGENT_BUS_SHARING_UNKNOWN + 1] = {
	"shared", "exclusive", "unknown"};
const char *const tools_hw_display_role_names[AGENT_DISPLAY_ROLE_COUNT] = {"primary", "console",
									   "graphics", "status"};
const char *const tools_hw_wifi_names[AGENT_WIFI_UNKNOWN + 1] = {
	"absent", "off", "disconnected", "scanning", "connecting", "connected", "unknown"};
const char *const tools_hw_sensor_family_names[AGENT_SENSOR_FAMILY_COUNT] = {"battery",
									     "environment"};
