/*
 * The capability checks (tool_capability.h): each asks the port what the device has now, so
 * a card taken out, a board without the device or a build without a runtime makes the tools
 * that need it unavailable at once, without a restart.
 */
#include <errno.h>
#include <string.h>

#include "agent_port.h"
#include "tool_capability.h"

static const char *const names[TOOL_CAP_COUNT] = {
	[TOOL_CAP_NONE] = "-",
	[TOOL_CAP_FILESYSTEM] = "filesystem",
	[TOOL_CAP_LFS] = "lfs",
	[TOOL_CAP_SD] = "sd",
	[TOOL_CAP_GPIO] = "gpio",
	[TOOL_CAP_BUS] = "bus",
	[TOOL_CAP_DISPLAY] = "display",
	[TOOL_CAP_SENSORS] = "sensors",
	[TOOL_CAP_NETWORK] = "network",
	[TOOL_CAP_SCRIPT_RUNTIME] = "script-runtime",
};

/* Registered script runtimes; changed only at start-up, while no request runs. */
static const char *runtimes[TOOL_SCRIPT_RUNTIMES_MAX];
static size_t runtime_count;

const char *tool_capability_name(enum tool_capability cap)
{
	return (unsigned int)cap < TOOL_CAP_COUNT ? names[cap] : "?";
}

static bool any_sensor_family(void)
{
	for (int f = 0; f < AGENT_SENSOR_FAMILY_COUNT; f++) {
		if (agent_sensor_family_present((enum agent_sensor_family)f)) {
			return true;
		}
	}
	return false;
}

const char *tool_capability_missing(enum tool_capability cap)
{
	switch (cap) {
	case TOOL_CAP_NONE:
		return NULL;
	case TOOL_CAP_FILESYSTEM:
		return agent_fs_mounted("/lfs") || agent_fs_mounted("/SD:")
			       ? NULL
			       : "no filesystem is mounted (neither /lfs nor /SD:)";
	case TOOL_CAP_LFS:
		return agent_fs_mounted("/lfs") ? NULL : "the LittleFS volume is not mounted at /lfs";
	case TOOL_CAP_SD:
		return agent_fs_mounted("/SD:") ? NULL : "no SD card is mounted at /SD:";
	case TOOL_CAP_GPIO:
		/* A count the port cannot tell (< 0) leaves the tool to say so itself. */
		return agent_gpio_count() != 0 ? NULL : "the board has no GPIO slot";
	case TOOL_CAP_BUS:
		return agent_bus_count() != 0 ? NULL
					      : "the board has no I2C, SPI, UART or 1-Wire bus";
	case TOOL_CAP_DISPLAY:
		return agent_display_count() != 0 ? NULL : "the board has no display";
	case TOOL_CAP_SENSORS:
		return any_sensor_family() ? NULL : "no sensor service is in this build";
	case TOOL_CAP_NETWORK:
		return agent_network_present() ? NULL : "the device has no network interface";
	case TOOL_CAP_SCRIPT_RUNTIME:
		return runtime_count > 0 ? NULL : "no script runtime is built in";
	default:
		return "an unknown capability";
	}
}

enum tool_capability tool_capability_of(const struct tool_def *def)
{
	if (def->capability != TOOL_CAP_NONE) {
		return def->capability;
	}
	return def->domain == TOOL_DOMAIN_STORAGE ? TOOL_CAP_FILESYSTEM : TOOL_CAP_NONE;
}

int tool_script_runtime_register(const char *name)
{
	if (name == NULL || name[0] == '\0') {
		return -EINVAL;
	}
	for (size_t i = 0; i < runtime_count; i++) {
		if (strcmp(runtimes[i], name) == 0) {
			return -EEXIST;
		}
	}
	if (runtime_count == TOOL_SCRIPT_RUNTIMES_MAX) {
		return -ENOMEM;
	}
	runtimes[runtime_count++] = name;
	return 0;
}

int tool_script_runtime_unregister(const char *name)
{
	for (size_t i = 0; name != NULL && i < runtime_count; i++) {
		if (strcmp(runtimes[i], name) == 0) {
			memmove(&runtimes[i], &runtimes[i + 1],
				(runtime_count - i - 1) * sizeof(runtimes[0]));
			runtime_count--;
			return 0;
		}
	}
	return -ENOENT;
}

size_t tool_script_runtime_count(void)
{
	return runtime_count;
}
