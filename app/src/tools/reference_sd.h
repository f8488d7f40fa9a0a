/*
 * Verified SD overrides of the reference pages (docs/reference-format.md, "SD overrides"): a
 * page on the card at /SD:/man/TOPIC.md replaces the built-in page TOPIC for `man TOPIC` and
 * firmware_reference only when its SHA-256 equals the digest the host tool recorded on the
 * device's own LittleFS (/lfs/.agent/man/TOPIC.sha256) when it installed the page. The card
 * is untrusted; the digest is not on it. A page is read into one PSRAM pool block, checked
 * there and served from there, and the block is given back as soon as it has been consumed.
 */
#ifndef AGENT_REFERENCE_SD_H
#define AGENT_REFERENCE_SD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reference.h"
#include "sha256.h"

#define REFERENCE_SD_DIR     "/SD:/man"	       /* TOPIC.md: the pages, on the card */
#define REFERENCE_DIGEST_DIR "/lfs/.agent/man" /* TOPIC.sha256: their digests, on the device */

/* Bytes of one override file at most (the generator's bound for a page file). */
#define REFERENCE_OVERRIDE_MAX	  8192u
/* Bytes of its contract at most (as for a built-in page: three fit one tool result). */
#define REFERENCE_CONTRACT_MAX	  1024u
/* A digest file: 64 lower-case hex digits and a line feed. */
#define REFERENCE_DIGEST_FILE_LEN (SHA256_HEX_LEN + 1u)

enum reference_override_status {
	REFERENCE_OVERRIDE_NONE,       /* no card, or no file for the topic: the built-in page */
	REFERENCE_OVERRIDE_VERIFIED,   /* served in place of the built-in page */
	REFERENCE_OVERRIDE_UNLISTED,   /* refused: no digest recorded for the topic */
	REFERENCE_OVERRIDE_MISMATCH,   /* refused: its SHA-256 is not the recorded one */
	REFERENCE_OVERRIDE_TOO_LARGE,  /* refused: more than REFERENCE_OVERRIDE_MAX bytes */
	REFERENCE_OVERRIDE_MALFORMED,  /* refused: not a page (see reference_override_check) */
	REFERENCE_OVERRIDE_UNREADABLE, /* refused: reading it failed, or no block was free */
};

struct reference_override {
	/* VERIFIED: the built-in page's topic, summary and keywords, with the body and the
	 * contract of the file; they point into the pool block until the release. */
	struct reference_page page;
	void *block;
};

/**
 * Make the pool of the one page block ("man", PSRAM). Called once at boot, before the shell
 * and the worker run (agent_init()); again, it does nothing. 0 or agent_pool_init()'s error;
 * without the pool every override is refused as unreadable and the built-in page served.
 */
int reference_sd_init(void);

/**
 * Look for an override of @p builtin and, when it verifies, hold it in @p ov until
 * reference_override_release(). Any other status holds nothing: the caller serves
 * @p builtin (and says why for a refusal: reference_override_why()).
 */
enum reference_override_status reference_override_load(const struct reference_page *builtin,
						       struct reference_override *ov);

/** Give the block back (nothing when none is held). */
void reference_override_release(struct reference_override *ov);

/** Why a refused override was refused, one short phrase ("no digest is recorded for it"). */
const char *reference_override_why(enum reference_override_status status);

/**
 * Split a page's text (@p len bytes) into @p body and @p contract, as in a page of
 * docs/reference/ after its front matter: the body, a line that is exactly "## Contract",
 * the contract; blank lines around each dropped, both non-empty, the contract at most
 * REFERENCE_CONTRACT_MAX bytes, UTF-8 with no control character but the line feed.
 * 0 or -EINVAL.
 */
int reference_override_check(const char *text, size_t len, const char **body, size_t *body_len,
			     const char **contract, size_t *contract_len);

/**
 * The digests (written by the host tool over SMP, docs/mgmt-group.md "man"). @p topic must
 * be a built-in topic. set: 0 or a negative errno; get: 0, -ENOENT when none is recorded,
 * -EBADMSG for a digest file that is not one; clear: 0 or -ENOENT.
 */
int reference_digest_set(const char *topic, const uint8_t digest[SHA256_DIGEST_BYTES]);
int reference_digest_get(const char *topic, uint8_t digest[SHA256_DIGEST_BYTES]);
int reference_digest_clear(const char *topic);

#endif /* AGENT_REFERENCE_SD_H */
