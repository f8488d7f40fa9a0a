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
#include "module_assets.h"
#include "module_import.h"
#include "zephyr_port.h"

/* The supplied roles built into the image, through the one import operation; a module that
 * is installed already with the same text is left as it is (nothing is journaled). */
static void import_packaged_modules(void)
{
	for (size_t i = 0; i < agent_module_asset_count; i++) {
		const struct agent_module_asset *a = &agent_module_assets[i];
		struct module_import_result res;
		char why[MODULE_REASON_MAX + 1] = "";
		int err = module_import_text(a->manifest, a->manifest_len, a->body, a->body_len,
					     &res, why, sizeof(why));

		if (err != 0) {
			printk("modules: packaged module %u refused: %s\n", (unsigned int)i, why);
		} else {
			printk("modules: %s %s accepted (%s)\n", module_kind_name(res.kind),
			       res.name,
			       res.outcome == MODULE_IMPORT_UNCHANGED  ? "unchanged"
			       : res.outcome == MODULE_IMPORT_REPLACED ? "replaced"
								       : "installed");
		}
	}
}

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
	{
		char line[160];

		(void)agent_modules_boot_line(line, sizeof(line));
		printk("%s\n", line);
	}
	import_packaged_modules();
	return 0;
}
