/* SMP frames on the simulator's console (docs/simulator.md, docs/mgmt-group.md). */
#ifndef SIM_SMP_H
#define SIM_SMP_H

#include <stddef.h>
#include <stdint.h>

#include "agent_port.h"

/**
 * Take the SMP frames out of @p len console bytes, in order: the other bytes are copied
 * to @p shell (room for 2 * @p len) and handed to @p deliver each time a request is complete,
 * before the request is answered, so the shell sees what came before a frame first. The
 * response is written on @p console between shell output. Returns the shell bytes left
 * in @p shell for the caller to deliver.
 */
typedef void (*sim_smp_deliver_fn)(const uint8_t *data, size_t len, void *user_data);
size_t sim_smp_filter(struct agent_console *console, const uint8_t *data, size_t len,
		      uint8_t *shell, sim_smp_deliver_fn deliver, void *user_data);

#endif /* SIM_SMP_H */
