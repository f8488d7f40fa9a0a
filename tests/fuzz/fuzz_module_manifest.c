/*
 * libFuzzer target for the module directory format (app/src/modules/module_manifest.c,
 * module_validate.c; docs/modules.md "The module directory", "The manifest keys",
 * "Validation"). The input goes whole to module_manifest_parse(), module_skill_md_parse() and
 * module_front_matter_end(); then its first three bytes choose a split of the rest into a
 * manifest and a body (each copied to a buffer of its own size, so a read past either is
 * caught), the import head's kind and name, for module_validate().
 *
 * For any input: the answer is 0, -EINVAL or -E2BIG and the same twice over; a refusal's
 * reason is one line of strict UTF-8 without controls, never cut (shorter than
 * MODULE_REASON_MAX); an acceptance has every text field inside the input (or the documented
 * default file name), a module name, texts and lists within their bounds, the body after the
 * front matter and not empty; module_validate() accepts only what module_manifest_parse() (or
 * module_skill_md_parse()) accepts.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_manifest.h"
#include "strict_utf8.h"

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_module_manifest: %s\n", what);
		abort();
	}
}

static bool inside(struct module_text t, const char *base, size_t len)
{
	return t.ptr != NULL && t.ptr >= base && t.len <= len && (size_t)(t.ptr - base) <= len - t.len;
}

/* Unset, or inside the input. */
static bool unset_or_inside(struct module_text t, const char *base, size_t len)
{
	return (t.ptr == NULL && t.len == 0u) || inside(t, base, len);
}

static void check_reason(int rc, const char *why)
{
	const char *nul = memchr(why, '\0', MODULE_REASON_MAX + 1);
	size_t n = nul != NULL ? (size_t)(nul - why) : MODULE_REASON_MAX + 1u;

	check(rc == -EINVAL || rc == -E2BIG, "a refusal that is not -EINVAL or -E2BIG");
	check(n > 0u && n < MODULE_REASON_MAX, "a reason empty, cut or unterminated");
	for (size_t i = 0; i < n; i++) {
		check((uint8_t)why[i] >= 0x20 && why[i] != 0x7f, "a control in a reason");
	}
	check(strict_utf8((const uint8_t *)why, n), "a reason that is not UTF-8");
}

static void check_list(struct module_text list, const char *base, size_t len)
{
	struct module_text item;
	size_t pos = 0;
	size_t n = 0;

	check(unset_or_inside(list, base, len), "a list outside the input");
	while (module_list_next(list, &pos, &item)) {
		check(inside(item, base, len), "a list item outside the list");
		check(item.len > 0u && item.len <= MODULE_NAME_MAX, "a list item empty or long");
		n++;
	}
	check(n <= MODULE_LIST_MAX, "a list too long");
}

/* An accepted manifest (or SKILL.md header) of the text at @p base (@p len bytes). */
static void check_manifest(const struct module_manifest *m, const char *base, size_t len)
{
	struct module_text file = module_manifest_body_file(m);

	check(m->kind < MODULE_KIND_COUNT, "no kind");
	check(inside(m->name, base, len) && module_name_valid(m->name.ptr, m->name.len),
	      "the name is not a module name inside the input");
	check(inside(m->description, base, len) && m->description.len > 0u &&
		      m->description.len <= MODULE_DESCRIPTION_MAX,
	      "the description is outside the input or its bound");
	check(unset_or_inside(m->version, base, len) && m->version.len <= MODULE_VERSION_MAX,
	      "the version is outside the input or its bound");
	check(file.ptr != NULL && file.len > 0u && file.len <= MODULE_FILE_MAX &&
		      memchr(file.ptr, '/', file.len) == NULL,
	      "no body file, or not one path component");
	check(inside(file, base, len) || (m->kind == MODULE_KIND_ROLE && strcmp(file.ptr, "overlay.txt") == 0) ||
		      (m->kind == MODULE_KIND_SKILL && strcmp(file.ptr, MODULE_SKILL_FILE) == 0),
	      "the body file is neither in the input nor the default");
	check_list(m->tools, base, len);
	check_list(m->skills, base, len);
	check(m->arg_count <= MODULE_TOOL_ARGS_MAX, "too many arguments");
	for (uint8_t i = 0; i < m->arg_count; i++) {
		check(inside(m->args[i].name, base, len) && m->args[i].name.len > 0u &&
			      m->args[i].name.len <= MODULE_ARG_NAME_MAX,
		      "an argument name outside the input or its bound");
		check(m->args[i].type <= MODULE_ARG_BOOLEAN, "an argument without a type");
	}
	check(m->risk <= TOOL_RISK_DISRUPTIVE, "no risk class");
	check(m->output_max >= 1u && m->output_max <= CONFIG_AGENT_TOOL_RESULT_MAX_LEN,
	      "the output bound out of range");
	check(m->runtime <= MODULE_RUNTIME_HOST, "no runtime");
}

static void whole(const char *text, size_t len)
{
	struct module_manifest m;
	struct module_manifest again;
	char why[MODULE_REASON_MAX + 1];
	char why_again[MODULE_REASON_MAX + 1];
	size_t body_off = 0;
	size_t end = module_front_matter_end(text, len);
	int rc;

	check(end <= len, "the front matter ends past the text");
	memset(why, 0xAA, sizeof(why));
	rc = module_manifest_parse(text, len, &m, why, sizeof(why));
	if (rc == 0) {
		check(len <= CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN, "a manifest over its bound");
		check_manifest(&m, text, len);
	} else {
		check_reason(rc, why);
	}
	check(module_manifest_parse(text, len, &again, why_again, sizeof(why_again)) == rc &&
		      (rc == 0 || strcmp(why, why_again) == 0),
	      "the manifest parsed twice gave two answers");

	memset(why, 0xAA, sizeof(why));
	rc = module_skill_md_parse(text, len, &m, &body_off, why, sizeof(why));
	if (rc == 0) {
		check(m.kind == MODULE_KIND_SKILL, "a SKILL.md that is not a skill");
		check(body_off == end && end > 0u && end < len, "the body is not after the header");
		check(end <= CONFIG_AGENT_MODULE_MANIFEST_MAX_LEN, "a header over its bound");
		check(inside(m.name, text, end) && inside(m.description, text, end),
		      "a header field outside the header");
		check(m.version.ptr == NULL && m.body.len == strlen(MODULE_SKILL_FILE),
		      "a SKILL.md header with another key");
		check_manifest(&m, text, len);
	} else {
		check_reason(rc, why);
	}
}

static char *copy(const uint8_t *data, size_t len)
{
	char *p = malloc(len > 0u ? len : 1u);

	check(p != NULL, "out of memory");
	if (len > 0u) {
		memcpy(p, data, len);
	}
	return p;
}

static void split(const uint8_t *data, size_t size)
{
	size_t rest = size - 3u;
	size_t at = ((size_t)data[0] | (size_t)data[1] << 8) % (rest + 1u);
	enum module_kind kind = (enum module_kind)(data[2] % (MODULE_KIND_COUNT + 1));
	unsigned int name_mode = (data[2] >> 2) % 3u;
	char *manifest = copy(data + 3, at);
	char *body = copy(data + 3 + at, rest - at);
	char name[48] = "";
	const char *expect = NULL;
	struct module_manifest m;
	struct module_manifest alone;
	char why[MODULE_REASON_MAX + 1];
	size_t off = 0;
	int rc;

	if (name_mode == 1u && module_manifest_parse(manifest, at, &alone, NULL, 0) == 0) {
		snprintf(name, sizeof(name), "%.*s", (int)alone.name.len, alone.name.ptr);
		expect = name;
	} else if (name_mode == 2u) {
		size_t n = rest - at < sizeof(name) - 1u ? rest - at : sizeof(name) - 1u;

		memcpy(name, body, n);
		name[n] = '\0';
		expect = name;
	}
	memset(why, 0xAA, sizeof(why));
	rc = module_validate(manifest, at, body, rest - at, expect, kind, &m, why, sizeof(why));
	if (rc == 0) {
		if (at == 0u) {
			check(m.kind == MODULE_KIND_SKILL, "a SKILL.md alone that is not a skill");
			check(module_skill_md_parse(body, rest, &alone, &off, NULL, 0) == 0,
			      "accepted a SKILL.md its parser refuses");
			check_manifest(&m, body, rest);
		} else {
			check(module_manifest_parse(manifest, at, &alone, NULL, 0) == 0,
			      "accepted a manifest its parser refuses");
			check_manifest(&m, manifest, at);
		}
		check(kind == MODULE_KIND_COUNT || kind == m.kind, "accepted another kind");
		check(expect == NULL || (strlen(expect) == m.name.len &&
					 memcmp(expect, m.name.ptr, m.name.len) == 0),
		      "accepted another name");
		check(rest - at > module_front_matter_end(body, rest - at) ||
			      m.kind != MODULE_KIND_SKILL,
		      "accepted a skill without a body");
		check(rest > at, "accepted an empty body");
	} else {
		check_reason(rc, why);
	}
	free(manifest);
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = copy(data, size);

	whole(text, size);
	free(text);
	if (size >= 3u) {
		split(data, size);
	}
	return 0;
}
