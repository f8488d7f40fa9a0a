/*
 * The man command (7) of the SMP management group (docs/mgmt-group.md): the host tool
 * records the SHA-256 of a reference page it installed on the SD card (agent-host man
 * install), or forgets it. The digest is kept on the device's LittleFS, not on the card, so
 * a page changed on the card no longer verifies (reference_sd.h, docs/reference-format.md).
 */
#include <errno.h>
#include <string.h>

#include "mgmt_internal.h"

#if defined(CONFIG_AGENT_TOOLS_REFERENCE)
#include "reference.h"
#include "reference_sd.h"
#include "sha256.h"

#define TOPIC_MAX 31

int agent_mgmt_man_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "topic", .type = FIELD_TSTR},
				 {.name = "sha256", .type = FIELD_TSTR}};
	uint8_t digest[SHA256_DIGEST_BYTES];
	char topic[TOPIC_MAX + 1];
	char hex[SHA256_HEX_LEN + 1];
	char shown[NAME_SHOWN + 1];
	const struct reference_page *page = NULL;
	int err = agent_mgmt_decode_request(zsd, fields, 2, r);

	if (err != 0) {
		return err;
	}
	if (!fields[0].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "topic is required");
	}
	if (fields[0].text.len <= TOPIC_MAX) {
		memcpy(topic, fields[0].text.value, fields[0].text.len);
		topic[fields[0].text.len] = '\0';
		page = strlen(topic) == fields[0].text.len
			       ? reference_lookup(reference_builtin(), topic)
			       : NULL;
	}
	if (page == NULL) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENOENT, "no built-in page '%s'",
					 agent_mgmt_quoted(&fields[0].text, shown, sizeof(shown)));
	}
	if (!fields[1].present) {
		err = reference_digest_clear(page->topic);
		if (err == -ENOENT) {
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENOENT,
						 "no digest is recorded for '%s'", page->topic);
		}
	} else if (sha256_from_hex((const char *)fields[1].text.value, fields[1].text.len,
				   digest) != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL,
					 "sha256 must be 64 lower-case hex digits");
	} else {
		err = reference_digest_set(page->topic, digest);
	}
	if (err == 0 && fields[1].present) {
		/* Answer with the digest as read back from the file just written. */
		err = reference_digest_get(page->topic, digest);
		sha256_hex(digest, hex);
	}
	if (err != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EIO,
					 "the digest of '%s' could not be written (error %d)",
					 page->topic, err);
	}
	return agent_mgmt_put_str(zse, "topic", page->topic) &&
			       agent_mgmt_put_str(zse, "sha256", fields[1].present ? hex : "")
		       ? 0
		       : -ENOMEM;
}

#else /* !CONFIG_AGENT_TOOLS_REFERENCE */

int agent_mgmt_man_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "topic", .type = FIELD_TSTR},
				 {.name = "sha256", .type = FIELD_TSTR}};
	int err = agent_mgmt_decode_request(zsd, fields, 2, r);

	(void)zse;
	if (err != 0) {
		return err;
	}
	return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENODEV, "this firmware has no reference pages");
}

#endif /* CONFIG_AGENT_TOOLS_REFERENCE */
