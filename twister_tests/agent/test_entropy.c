/*
 * Test-only entropy driver of the scenario agent.e2e.qemu.stream.tls (CMakeLists.txt here,
 * AGENT_TEST_STREAM_TLS): mps2/an385 under QEMU has no entropy device, and Mbed TLS takes its
 * random data from Zephyr's CSPRNG (sys_csrand_get(), random_entropy_device.c), which needs
 * one. This one hands out a xorshift sequence (test_xorshift.h): a TLS handshake
 * between the agent and the stream server of the same image works, and nothing about it is
 * secret or secure. Nothing here is part of the product.
 */
#define DT_DRV_COMPAT agent_test_entropy

#include <stdint.h>

#include <zephyr/device.h>
#include <zephyr/drivers/entropy.h>
#include <zephyr/kernel.h>

#include "test_xorshift.h"

static uint32_t state;

static int test_entropy_get(const struct device *dev, uint8_t *buffer, uint16_t length)
{
	unsigned int key = irq_lock();

	(void)dev;
	test_xorshift_fill(&state, buffer, length);
	irq_unlock(key);
	return 0;
}

static int test_entropy_get_isr(const struct device *dev, uint8_t *buffer, uint16_t length,
				uint32_t flags)
{
	(void)flags;
	(void)test_entropy_get(dev, buffer, length);
	return length;
}

static DEVICE_API(entropy, test_entropy_api) = {
	.get_entropy = test_entropy_get,
	.get_entropy_isr = test_entropy_get_isr,
};

DEVICE_DT_INST_DEFINE(0, NULL, NULL, NULL, NULL, PRE_KERNEL_1, CONFIG_ENTROPY_INIT_PRIORITY,
		      &test_entropy_api);
