#include "agent_keys.h"

size_t agent_key_csi_length(const uint8_t *rest, size_t len)
{
	if (len == 0 || rest[0] != '[') {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if (rest[i] >= 0x40 && rest[i] <= 0x7e) {
			return i + 1;
		}
	}
	return len;
}
