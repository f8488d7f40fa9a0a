/*
 * The whole check of an arrival before it may be installed (module_manifest.h
 * module_validate(); docs/modules.md "Validation").
 */
#include "module_manifest.h"

#include <errno.h>
#include <string.h>

#include "module_text.h"
#include "sha256.h"

/* The key naming each kind's body file. */
static const char *const body_keys[MODULE_KIND_COUNT] = {"overlay", "body", "entry"};

static size_t body_max(enum module_kind kind)
{
	switch (kind) {
	case MODULE_KIND_ROLE:
		return CONFIG_AGENT_MODULE_OVERLAY_MAX_LEN;
	case MODULE_KIND_SKILL:
		return CONFIG_AGENT_MODULE_SKILL_MAX_LEN;
	default:
		return CONFIG_AGENT_SCRIPT_FILE_MAX_LEN;
	}
}

/* The import head's name and kind (when it gives them) against what @p source says. */
static int identity_check(const struct module_manifest *m, const char *source,
			  const char *expect_name, enum module_kind expect_kind, char *why,
			  size_t why_len)
{
	struct module_shown s;

	if (expect_name != NULL &&
	    (strlen(expect_name) != m->name.len || memcmp(expect_name, m->name.ptr, m->name.len) != 0)) {
		return module_refuse(why, why_len, -EINVAL, "name: the import says \"%s\", %s \"%.*s\"",
				     module_show(&s, expect_name, strlen(expect_name)), source,
				     (int)m->name.len, m->name.ptr);
	}
	if (expect_kind != MODULE_KIND_COUNT && expect_kind != m->kind) {
		const char *said = module_kind_name(expect_kind);

		return module_refuse(why, why_len, -EINVAL, "kind: the import says \"%s\", %s \"%s\"",
				     said != NULL ? said : "?", source, module_kind_name(m->kind));
	}
	return 0;
}

/*
 * The body file (@p len bytes; its text starts at @p off, after a skill's front matter):
 * within the kind's bound and not empty; a role's or skill's is UTF-8 without NUL; a tool's
 * matches the digest its manifest declares.
 */
static int body_check(const struct module_manifest *m, const char *body, size_t len, size_t off,
		      char *why, size_t why_len)
{
	struct module_text file = module_manifest_body_file(m);
	const char *key = body_keys[m->kind];
	size_t max = body_max(m->kind);

	if (off > CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN) {
		return module_refuse(why, why_len, -E2BIG,
				     "%s \"%.*s\": a header of %zu bytes, at most %d", key,
				     (int)file.len, file.ptr, off, CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN);
	}
	if (len - off > max) {
		return module_refuse(why, why_len, -E2BIG, "%s \"%.*s\": %zu bytes, at most %zu",
				     key, (int)file.len, file.ptr, len - off, max);
	}
	if (len == off) {
		return module_refuse(why, why_len, -EINVAL, "%s \"%.*s\": empty", key,
				     (int)file.len, file.ptr);
	}
	if (m->kind != MODULE_KIND_TOOL) {
		const char *nul = memchr(body, '\0', len);
		size_t bad = module_utf8_bad(body, len);

		if (nul != NULL) {
			return module_refuse(why, why_len, -EINVAL,
					     "%s \"%.*s\": a NUL byte at offset %zu", key,
					     (int)file.len, file.ptr, (size_t)(nul - body));
		}
		if (bad < len) {
			return module_refuse(why, why_len, -EINVAL,
					     "%s \"%.*s\": not UTF-8 at offset %zu", key,
					     (int)file.len, file.ptr, bad);
		}
	} else if (m->has_digest) {
		uint8_t digest[SHA256_DIGEST_BYTES];

		sha256_digest(body, len, digest);
		if (memcmp(digest, m->digest, sizeof(digest)) != 0) {
			return module_refuse(why, why_len, -EINVAL,
					     "digest: does not match the entry's SHA-256");
		}
	}
	return 0;
}

int module_validate(const char *manifest, size_t manifest_len, const char *body,
		    size_t body_len, const char *expect_name, enum module_kind expect_kind,
		    struct module_manifest *out, char *why, size_t why_len)
{
	const char *source = manifest_len == 0u ? "the SKILL.md" : "the manifest";
	size_t off = 0;
	int rc;

	if (manifest_len == 0u) {
		rc = module_skill_md_parse(body, body_len, out, &off, why, why_len);
	} else {
		rc = module_manifest_parse(manifest, manifest_len, out, why, why_len);
		if (rc == 0 && out->kind == MODULE_KIND_SKILL) {
			off = module_front_matter_end(body, body_len);
		}
	}
	if (rc == 0) {
		rc = identity_check(out, source, expect_name, expect_kind, why, why_len);
	}
	if (rc == 0) {
		rc = body_check(out, body, body_len, off, why, why_len);
	}
	return rc;
}
