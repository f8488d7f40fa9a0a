/*
 * Joining a stored Wi-Fi network at boot (docs/zephyr-port.md, "Wi-Fi on the ESP32-S3").
 *
 * Networks are stored with the shell's `wifi cred add ...` (subsys/net/lib/wifi_credentials),
 * in the settings file on /lfs. Zephyr 4.3 connects to them only on request:
 * NET_REQUEST_WIFI_CONNECT_STORED (subsys/net/l2/wifi/wifi_mgmt.c, connect_stored_command()),
 * which is what `wifi cred auto_connect` sends. This file sends the same request once at
 * boot, on the Wi-Fi station interface (net_if_get_wifi_sta(), as the shell command does).
 *
 * It runs as an APPLICATION-level init function: after every POST_KERNEL one, so after the
 * Wi-Fi driver, the network interfaces and wifi_credentials' init() (which reads the stored
 * SSIDs; the board's .conf mounts /lfs before that), and in the main thread, on
 * CONFIG_MAIN_STACK_SIZE, just before main(). The request returns once a connection has been
 * asked for; association and DHCP go on in the background, and `agent status` shows the
 * outcome. With no stored network it does nothing. If the attempt fails (the access point is
 * out of reach, a wrong passphrase), `wifi cred auto_connect` tries again.
 */
#if defined(CONFIG_WIFI_CREDENTIALS_CONNECT_STORED)

#include <zephyr/init.h>
#include <zephyr/net/net_if.h>
#include <zephyr/net/net_mgmt.h>
#include <zephyr/net/wifi_mgmt.h>
#include <zephyr/sys/printk.h>

static int zephyr_wifi_connect_stored(void)
{
	struct net_if *iface = net_if_get_wifi_sta();
	int err;

	if (iface == NULL) {
		printk("agent: no Wi-Fi station interface; stored networks not joined\n");
		return 0;
	}
	err = net_mgmt(NET_REQUEST_WIFI_CONNECT_STORED, iface, NULL, 0);
	if (err != 0) {
		printk("agent: joining a stored Wi-Fi network failed (error %d); "
		       "`wifi cred auto_connect` retries\n",
		       err);
	}
	/* Boot goes on either way: the shell is how the network gets fixed. */
	return 0;
}

SYS_INIT(zephyr_wifi_connect_stored, APPLICATION, 99);

#endif /* CONFIG_WIFI_CREDENTIALS_CONNECT_STORED */
