/* Keys read raw from the console (bypass): what an escape byte starts. */
#ifndef AGENT_KEYS_H
#define AGENT_KEYS_H

#include <stddef.h>
#include <stdint.h>

#define AGENT_KEY_ESC	   0x1b
#define AGENT_KEY_APP_EXIT 0x18 /* Ctrl-X: leave a full-screen app */
#define AGENT_KEY_CTRL_C   0x03

/**
 * How many bytes after an ESC at @p rest[-1] belong to a cursor or function key
 * (ESC [ ... final byte) within this chunk; 0 for a lone Esc. Such keys are not Esc.
 */
size_t agent_key_csi_length(const uint8_t *rest, size_t len);

#endif /* AGENT_KEYS_H */
