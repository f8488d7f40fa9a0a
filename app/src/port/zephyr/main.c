/*
 * Boot of the agent firmware. By the time main() runs, the devicetree fstab has mounted the
 * LittleFS volume at "/lfs" (FILE_SYSTEM_LITTLEFS mounts automount entries during system
 * init), so the settings file backend can open its file there.
 */
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>
#include <zephyr/version.h>

#include "agent_cmd.h"
#include "agent_version.h"
#include "zephyr_port.h"

int main(void)
{
	int err;

	printk("agent %s on Zephyr %s, board %s\n", AGENT_VERSION_STRING, KERNEL_VERSION_STRING,
	       CONFIG_BOARD_TARGET);

	err = zephyr_settings_init();
	if (err != 0) {
		/* The shell still comes up; `agent status` then shows the defaults. */
		printk("agent: settings unavailable (error %d); configuration will not persist\n",
		       err);
	}

	err = agent_init();
	if (err != 0) {
		printk("agent: loading the configuration failed (error %d)\n", err);
	}
	return 0;
}
