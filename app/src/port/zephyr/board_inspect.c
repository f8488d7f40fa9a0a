/*
 * Board inspection of the Zephyr port (agent_port.h, "Board inspection"): what the devicetree
 * and the device model say, read without side effects. Every macro and call here is listed
 * with the Zephyr file it was checked in under "Board inspection" in docs/zephyr-port.md;
 * what could not be checked answers "unknown" (or -ENOTSUP) rather than a guess.
 *
 * - Readiness is read from the device state (initialized, init_res) instead of
 *   device_is_ready(): in current Zephyr that is device_get(), which takes a usage reference
 *   and would initialise a deferred device, and an inspection must change nothing.
 * - GPIO slots are the pins the devicetree names: the children of gpio-leds and gpio-keys
 *   nodes. A level is read (gpio_pin_get_raw) only when the pin's configuration can be read
 *   back (CONFIG_GPIO_GET_CONFIG, else CONFIG_GPIO_GET_DIRECTION) and says it is an input.
 * - Buses are the static devices whose API is I2C, SPI, UART or 1-Wire (DEVICE_API_IS);
 *   their pins, speed and leases are not decoded (pinctrl is SoC-specific): unknown.
 * - Displays are the static devices with the display API.
 * - Network: the Wi-Fi station through NET_REQUEST_WIFI_IFACE_STATUS on the default
 *   interface, and that interface's preferred IPv4 address; netmask, gateway, access point
 *   and NAT are not read (unknown). A network interface is present when the IP stack has a
 *   default interface (net_if_get_default()); without CONFIG_NETWORKING there is none.
 * - Sensors: no battery or environmental service is part of this firmware yet, so both
 *   families are reported absent.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/kernel.h>

#if defined(CONFIG_GPIO)
#include <zephyr/drivers/gpio.h>
#endif
#if defined(CONFIG_I2C)
#include <zephyr/drivers/i2c.h>
#endif
#if defined(CONFIG_SPI)
#include <zephyr/drivers/spi.h>
#endif
#if defined(CONFIG_SERIAL)
#include <zephyr/drivers/uart.h>
#endif
#if defined(CONFIG_W1)
#include <zephyr/drivers/w1.h>
#endif
#if defined(CONFIG_DISPLAY)
#include <zephyr/drivers/display.h>
#endif
#if defined(CONFIG_NETWORKING)
#include <zephyr/net/net_if.h>
#endif
#if defined(CONFIG_WIFI)
#include <zephyr/net/net_ip.h>
#include <zephyr/net/net_mgmt.h>
#include <zephyr/net/wifi_mgmt.h>
#include <zephyr/version.h>
#endif

#include "agent_port.h"

static void copy_text(char *dst, size_t cap, const char *src)
{
	size_t len = 0;

	while (src != NULL && len + 1u < cap && src[len] != '\0') {
		dst[len] = src[len];
		len++;
	}
	dst[len] = '\0';
}

/* Initialised without error, read from the state the kernel keeps; takes no reference. */
static bool dev_ready(const struct device *dev)
{
	return dev != NULL && dev->state != NULL && dev->state->initialized &&
	       dev->state->init_res == 0u;
}

/* ---- board --------------------------------------------------------------------------------- */

int agent_board_info_get(struct agent_board_info *info)
{
	if (info == NULL) {
		return -EINVAL;
	}
	memset(info, 0, sizeof(*info));
	/* The board's model name is not a build-time string Zephyr gives; the target is
	 * agent_board_name(). */
	copy_text(info->soc, sizeof(info->soc), CONFIG_SOC);
#if defined(CONFIG_ESP_SPIRAM)
	info->psram_bytes = CONFIG_ESP_SPIRAM_SIZE;
	info->caps |= AGENT_BOARD_CAP_PSRAM;
#endif
#if DT_HAS_CHOSEN(zephyr_flash) && DT_NODE_HAS_PROP(DT_CHOSEN(zephyr_flash), reg)
	info->flash_bytes = DT_REG_SIZE(DT_CHOSEN(zephyr_flash));
#endif
#if DT_HAS_CHOSEN(zephyr_sram) && DT_NODE_HAS_PROP(DT_CHOSEN(zephyr_sram), reg)
	info->sram_bytes = DT_REG_SIZE(DT_CHOSEN(zephyr_sram));
#endif
#if DT_HAS_COMPAT_STATUS_OKAY(zephyr_sdmmc_disk)
	info->caps |= AGENT_BOARD_CAP_SD;
#endif
	if (agent_display_count() > 0) {
		info->caps |= AGENT_BOARD_CAP_DISPLAY;
	}
#if defined(CONFIG_WIFI)
	info->caps |= AGENT_BOARD_CAP_WIFI;
#endif
#if defined(CONFIG_BT)
	info->caps |= AGENT_BOARD_CAP_BLUETOOTH;
#endif
	return 0;
}

/* ---- GPIO ---------------------------------------------------------------------------------- */

#if defined(CONFIG_GPIO)

struct zephyr_gpio_slot {
	const char *name;
	struct gpio_dt_spec spec;
	const char *claimed_by;
};

#define GPIO_SLOT(child, owner)                                                                    \
	{                                                                                          \
		.name = DT_PROP_OR(child, label, DT_NODE_FULL_NAME(child)),                        \
		.spec = GPIO_DT_SPEC_GET(child, gpios),                                            \
		.claimed_by = owner,                                                               \
	},
#define GPIO_LEDS(node)	 DT_FOREACH_CHILD_STATUS_OKAY_VARGS(node, GPIO_SLOT, "gpio-leds")
#define GPIO_KEYS(node)	 DT_FOREACH_CHILD_STATUS_OKAY_VARGS(node, GPIO_SLOT, "gpio-keys")

/* The last entry only keeps the array from being empty on a board that names no pin. */
static const struct zephyr_gpio_slot gpio_slots[] = {
	DT_FOREACH_STATUS_OKAY(gpio_leds, GPIO_LEDS)
	DT_FOREACH_STATUS_OKAY(gpio_keys, GPIO_KEYS)
	{.name = NULL},
};

#define GPIO_SLOT_COUNT (sizeof(gpio_slots) / sizeof(gpio_slots[0]) - 1u)

int agent_gpio_count(void)
{
	return (int)GPIO_SLOT_COUNT;
}

/* The pin's mode as the controller reports it, without touching its configuration. */
static enum agent_gpio_mode gpio_mode(const struct gpio_dt_spec *spec)
{
#if defined(CONFIG_GPIO_GET_CONFIG)
	gpio_flags_t flags = 0;

	if (gpio_pin_get_config(spec->port, spec->pin, &flags) == 0) {
		bool in = (flags & GPIO_INPUT) != 0u;
		bool out = (flags & GPIO_OUTPUT) != 0u;

		return in && out ? AGENT_GPIO_MODE_INPUT_OUTPUT
		       : in	 ? AGENT_GPIO_MODE_INPUT
		       : out	 ? AGENT_GPIO_MODE_OUTPUT
				 : AGENT_GPIO_MODE_UNCONFIGURED;
	}
#endif
#if defined(CONFIG_GPIO_GET_DIRECTION)
	{
		int in = gpio_pin_is_input(spec->port, spec->pin);
		int out = gpio_pin_is_output(spec->port, spec->pin);

		if (in >= 0 && out >= 0) {
			return in && out ? AGENT_GPIO_MODE_INPUT_OUTPUT
			       : in	 ? AGENT_GPIO_MODE_INPUT
			       : out	 ? AGENT_GPIO_MODE_OUTPUT
					 : AGENT_GPIO_MODE_UNCONFIGURED;
		}
	}
#endif
	(void)spec;
	return AGENT_GPIO_MODE_UNKNOWN;
}

int agent_gpio_get(size_t index, struct agent_gpio_slot *slot)
{
	const struct zephyr_gpio_slot *z;
	int level;

	if (slot == NULL) {
		return -EINVAL;
	}
	if (index >= (size_t)agent_gpio_count()) {
		return -ENOENT;
	}
	z = &gpio_slots[index];
	memset(slot, 0, sizeof(*slot));
	copy_text(slot->name, sizeof(slot->name), z->name);
	copy_text(slot->controller, sizeof(slot->controller), z->spec.port->name);
	slot->pin = z->spec.pin;
	/* The devicetree has no notion of strapping or reserved pads. */
	slot->policy = AGENT_GPIO_POLICY_UNKNOWN;
	copy_text(slot->claimed_by, sizeof(slot->claimed_by), z->claimed_by);
	if (!dev_ready(z->spec.port)) {
		slot->mode = AGENT_GPIO_MODE_UNKNOWN;
		return 0;
	}
	slot->mode = gpio_mode(&z->spec);
	if (slot->mode != AGENT_GPIO_MODE_INPUT && slot->mode != AGENT_GPIO_MODE_INPUT_OUTPUT) {
		return 0;
	}
	slot->readable = true;
	level = gpio_pin_get_raw(z->spec.port, z->spec.pin);
	if (level < 0) {
		slot->read_error = level;
	} else {
		slot->level = (uint8_t)level;
	}
	return 0;
}

#else /* !CONFIG_GPIO */

int agent_gpio_count(void)
{
	return 0;
}

int agent_gpio_get(size_t index, struct agent_gpio_slot *slot)
{
	(void)index;
	return slot == NULL ? -EINVAL : -ENOENT;
}

#endif /* CONFIG_GPIO */

/* ---- devices by API class ------------------------------------------------------------------ */

/* Whether @p dev is a bus of a type this build has drivers for; its type in @p type. */
static bool bus_type_of(const struct device *dev, enum agent_bus_type *type)
{
#if defined(CONFIG_I2C)
	if (DEVICE_API_IS(i2c, dev)) {
		*type = AGENT_BUS_I2C;
		return true;
	}
#endif
#if defined(CONFIG_SPI)
	if (DEVICE_API_IS(spi, dev)) {
		*type = AGENT_BUS_SPI;
		return true;
	}
#endif
#if defined(CONFIG_SERIAL)
	if (DEVICE_API_IS(uart, dev)) {
		*type = AGENT_BUS_UART;
		return true;
	}
#endif
#if defined(CONFIG_W1)
	if (DEVICE_API_IS(w1, dev)) {
		*type = AGENT_BUS_ONEWIRE;
		return true;
	}
#endif
	(void)dev;
	(void)type;
	return false;
}

static bool is_display(const struct device *dev)
{
#if defined(CONFIG_DISPLAY)
	return DEVICE_API_IS(display, dev);
#else
	(void)dev;
	return false;
#endif
}

/* The @p index-th static device @p match accepts, or NULL; @p count gets how many there are. */
static const struct device *nth_device(bool (*match)(const struct device *dev), size_t index,
				       size_t *count)
{
	const struct device *devs;
	const struct device *found = NULL;
	size_t total = z_device_get_all_static(&devs);
	size_t n = 0;

	for (size_t i = 0; i < total; i++) {
		if (!match(&devs[i])) {
			continue;
		}
		if (n == index) {
			found = &devs[i];
		}
		n++;
	}
	if (count != NULL) {
		*count = n;
	}
	return found;
}

static bool is_bus(const struct device *dev)
{
	enum agent_bus_type type;

	return bus_type_of(dev, &type);
}

int agent_bus_count(void)
{
	size_t n;

	(void)nth_device(is_bus, SIZE_MAX, &n);
	return (int)n;
}

int agent_bus_get(size_t index, struct agent_bus *bus)
{
	const struct device *dev;

	if (bus == NULL) {
		return -EINVAL;
	}
	dev = nth_device(is_bus, index, NULL);
	if (dev == NULL) {
		return -ENOENT;
	}
	memset(bus, 0, sizeof(*bus));
	copy_text(bus->name, sizeof(bus->name), dev->name);
	(void)bus_type_of(dev, &bus->type);
	bus->pins_known = false;
	bus->ready = dev_ready(dev);
	bus->origin = AGENT_BUS_ORIGIN_BOARD; /* a static device: defined by the devicetree */
	/* Addressed (I2C, 1-Wire) and chip-selected (SPI) buses serve several devices. */
	bus->sharing = bus->type == AGENT_BUS_UART ? AGENT_BUS_EXCLUSIVE : AGENT_BUS_SHARED;
	bus->leases = -1;
	return 0;
}

int agent_display_count(void)
{
	size_t n;

	(void)nth_device(is_display, SIZE_MAX, &n);
	return (int)n;
}

int agent_display_get(size_t index, struct agent_display *display)
{
	const struct device *dev;

	if (display == NULL) {
		return -EINVAL;
	}
	dev = nth_device(is_display, index, NULL);
	if (dev == NULL) {
		return -ENOENT;
	}
	memset(display, 0, sizeof(*display));
	copy_text(display->name, sizeof(display->name), dev->name);
	display->ready = dev_ready(dev);
#if defined(CONFIG_DISPLAY)
#if DT_HAS_CHOSEN(zephyr_display)
	if (dev == DEVICE_DT_GET(DT_CHOSEN(zephyr_display))) {
		display->roles |= AGENT_DISPLAY_ROLE_PRIMARY;
	}
#endif
	if (display->ready) {
		struct display_capabilities caps;

		memset(&caps, 0, sizeof(caps));
		display_get_capabilities(dev, &caps);
		display->width = caps.x_resolution;
		display->height = caps.y_resolution;
		display->brightness = DEVICE_API_GET(display, dev)->set_brightness != NULL;
	}
#endif
	return 0;
}

/* ---- network ------------------------------------------------------------------------------- */

#if defined(CONFIG_WIFI)
static enum agent_wifi_state wifi_state_of(int state)
{
	switch (state) {
	case WIFI_STATE_INTERFACE_DISABLED:
		return AGENT_WIFI_OFF;
	case WIFI_STATE_DISCONNECTED:
	case WIFI_STATE_INACTIVE:
		return AGENT_WIFI_DISCONNECTED;
	case WIFI_STATE_SCANNING:
		return AGENT_WIFI_SCANNING;
	case WIFI_STATE_AUTHENTICATING:
	case WIFI_STATE_ASSOCIATING:
	case WIFI_STATE_ASSOCIATED:
	case WIFI_STATE_4WAY_HANDSHAKE:
	case WIFI_STATE_GROUP_HANDSHAKE:
		return AGENT_WIFI_CONNECTING;
	case WIFI_STATE_COMPLETED:
		return AGENT_WIFI_CONNECTED;
	default:
		return AGENT_WIFI_UNKNOWN;
	}
}

/* NET_AF_INET is the 4.4 name (include/zephyr/net/net_ip.h); 4.3 has only AF_INET. */
#if ZEPHYR_VERSION_CODE < ZEPHYR_VERSION(4, 4, 0) && !defined(NET_AF_INET)
#define NET_AF_INET AF_INET
#endif

/*
 * The interface's preferred global IPv4 address as text, "" when it has none (no DHCP lease
 * yet). Held as const void *: the address type is struct in_addr in 4.3 and struct
 * net_in_addr in 4.4, and net_addr_ntop() takes const void * in both.
 */
static void ipv4_read(struct net_if *iface, char *out, size_t cap)
{
#if defined(CONFIG_NET_IPV4)
	char text[NET_IPV4_ADDR_LEN];
	const void *addr = net_if_ipv4_get_global_addr(iface, NET_ADDR_PREFERRED);

	if (addr != NULL && net_addr_ntop(NET_AF_INET, addr, text, sizeof(text)) != NULL) {
		copy_text(out, cap, text);
	}
#else
	(void)iface;
	(void)out;
	(void)cap;
#endif
}

/* The station as the Wi-Fi management layer reports it; a status request scans nothing. */
static void wifi_read(struct agent_network_state *state)
{
	struct net_if *iface = net_if_get_default();
	struct wifi_iface_status status;
	size_t len;

	state->sta_state = AGENT_WIFI_UNKNOWN;
	if (iface == NULL) {
		return;
	}
	ipv4_read(iface, state->ip, sizeof(state->ip));
	memset(&status, 0, sizeof(status));
	if (net_mgmt(NET_REQUEST_WIFI_IFACE_STATUS, iface, &status, sizeof(status)) != 0) {
		return;
	}
	state->sta_state = wifi_state_of(status.state);
	if (state->sta_state != AGENT_WIFI_CONNECTED) {
		return;
	}
	len = status.ssid_len < AGENT_BOARD_SSID_MAX ? status.ssid_len : AGENT_BOARD_SSID_MAX;
	memcpy(state->sta_ssid, status.ssid, len);
	state->sta_ssid[len] = '\0';
	state->rssi_known = true;
	state->rssi_dbm = (int16_t)status.rssi;
	state->channel = (uint16_t)status.channel;
}
#endif /* CONFIG_WIFI */

int agent_network_get(struct agent_network_state *state)
{
	if (state == NULL) {
		return -EINVAL;
	}
	memset(state, 0, sizeof(*state));
#if defined(CONFIG_WIFI)
	/* Netmask, gateway, the access point and NAT are not read: left unknown. */
	wifi_read(state);
#else
	state->sta_state = AGENT_WIFI_ABSENT;
	/* No Wi-Fi: no access point and nothing to forward between. */
	state->ap_known = true;
	state->nat_known = true;
#endif
	return 0;
}

/* Any interface the IP stack has (Wi-Fi, Ethernet, an offloaded one such as native_sim's NSOS). */
bool agent_network_present(void)
{
#if defined(CONFIG_NETWORKING)
	return net_if_get_default() != NULL;
#else
	return false;
#endif
}

/* ---- sensors ------------------------------------------------------------------------------- */

bool agent_sensor_family_present(enum agent_sensor_family family)
{
	(void)family;
	return false;
}

int agent_sensor_count(void)
{
	return 0;
}

int agent_sensor_read(size_t index, struct agent_sensor_reading *reading)
{
	(void)index;
	return reading == NULL ? -EINVAL : -ENOENT;
}
