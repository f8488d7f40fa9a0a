/*
 * The module commands of the SMP management group (docs/mgmt-group.md, docs/modules.md "The
 * import"): import (8) announces a module's head, part (9) carries its bytes at an offset
 * and, with the last one, installs it or answers the refusal; modules (10) lists the
 * catalog a page at a time; remove (11). The same operation as the console's.
 */
#include <errno.h>
#include <string.h>

#include <zcbor_encode.h>

#include "mgmt_internal.h"
#include "module_catalog.h"
#include "module_import.h"
#include "sha256.h"

static uint16_t rc_of(int err)
{
	switch (err) {
	case -ENOENT:
		return AGENT_MGMT_RC_ENOENT;
	case -EBUSY:
		return AGENT_MGMT_RC_EBUSY;
	case -ENOMEM:
	case -ENOSPC:
		return AGENT_MGMT_RC_ENOSPC;
	case -EPERM:
		return AGENT_MGMT_RC_EPERM;
	case -EIO:
		return AGENT_MGMT_RC_EIO;
	default:
		return AGENT_MGMT_RC_EINVAL;
	}
}

/* The name field (required) as a C string; false with @p r filled when it is not one. */
static bool name_of(const struct field *f, char name[MODULE_NAME_MAX + 1], struct refusal *r)
{
	char shown[NAME_SHOWN + 1];

	if (!f->present) {
		(void)agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "name is required");
		return false;
	}
	if (f->text.len == 0u || f->text.len > MODULE_NAME_MAX ||
	    memchr(f->text.value, '\0', f->text.len) != NULL) {
		(void)agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "name: '%s' is not a module name",
					agent_mgmt_quoted(&f->text, shown, sizeof(shown)));
		return false;
	}
	memcpy(name, f->text.value, f->text.len);
	name[f->text.len] = '\0';
	return true;
}

static const char *state_of(const struct module_import_result *res)
{
	switch (res->outcome) {
	case MODULE_IMPORT_INSTALLED:
		return "installed";
	case MODULE_IMPORT_REPLACED:
		return "replaced";
	case MODULE_IMPORT_UNCHANGED:
		return "unchanged";
	default:
		return "incomplete";
	}
}

static int put_result(zcbor_state_t *zse, const struct module_import_result *res)
{
	bool ok = agent_mgmt_put_str(zse, "name", res->name) &&
		  agent_mgmt_put_uint(zse, "off", res->next) &&
		  agent_mgmt_put_str(zse, "state", state_of(res));

	if (ok && res->outcome != MODULE_IMPORT_MORE) {
		ok = zcbor_tstr_put_lit(zse, "persisted") && zcbor_bool_put(zse, res->persisted);
	}
	return ok ? 0 : -ENOMEM;
}

int agent_mgmt_import_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "name", .type = FIELD_TSTR},
				 {.name = "kind", .type = FIELD_TSTR},
				 {.name = "manifest_len", .type = FIELD_UINT},
				 {.name = "body_len", .type = FIELD_UINT},
				 {.name = "sha256", .type = FIELD_TSTR}};
	struct module_import_result res;
	struct module_import_head head = {0};
	char name[MODULE_NAME_MAX + 1];
	char why[MODULE_REASON_MAX + 1];
	int err = agent_mgmt_decode_request(zsd, fields, 5, r);

	if (err != 0) {
		return err;
	}
	if (!name_of(&fields[0], name, r)) {
		return -EINVAL;
	}
	for (size_t i = 1; i < 5; i++) {
		if (!fields[i].present) {
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "%s is required",
						 fields[i].name);
		}
	}
	if (module_kind_parse((const char *)fields[1].text.value, fields[1].text.len,
			      &head.kind) != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL,
					 "kind: must be role, skill or tool");
	}
	if (sha256_from_hex((const char *)fields[4].text.value, fields[4].text.len,
			    head.digest) != 0) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL,
					 "sha256 must be 64 lower-case hex digits");
	}
	head.name = name;
	head.manifest_len = fields[2].number;
	head.body_len = fields[3].number;
	err = module_import_begin(&head, &res, why, sizeof(why));
	if (err != 0) {
		return agent_mgmt_refuse(r, rc_of(err), "%s", why);
	}
	return put_result(zse, &res);
}

int agent_mgmt_part_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "name", .type = FIELD_TSTR},
				 {.name = "off", .type = FIELD_UINT},
				 {.name = "data", .type = FIELD_BSTR}};
	struct module_import_result res;
	char name[MODULE_NAME_MAX + 1];
	char why[MODULE_REASON_MAX + 1];
	int err = agent_mgmt_decode_request(zsd, fields, 3, r);

	if (err != 0) {
		return err;
	}
	if (!name_of(&fields[0], name, r)) {
		return -EINVAL;
	}
	if (!fields[1].present || !fields[2].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "off and data are required");
	}
	err = module_import_part(name, fields[1].number, fields[2].text.value, fields[2].text.len,
				 &res, why, sizeof(why));
	if (err != 0) {
		return agent_mgmt_refuse(r, rc_of(err), "%s", why);
	}
	return put_result(zse, &res);
}

static bool put_entry(zcbor_state_t *zse, const struct module_entry *e)
{
	char hex[SHA256_HEX_LEN + 1];

	sha256_hex(e->digest, hex);
	return zcbor_map_start_encode(zse, 6) && agent_mgmt_put_str(zse, "name", e->name) &&
	       agent_mgmt_put_str(zse, "kind", module_kind_name(e->kind)) &&
	       agent_mgmt_put_uint(zse, "size", e->manifest_len + e->body_len) &&
	       agent_mgmt_put_uint(zse, "received", e->received) &&
	       agent_mgmt_put_str(zse, "sha256", hex) &&
	       agent_mgmt_put_str(zse, "state", module_state_name(e->state)) &&
	       zcbor_map_end_encode(zse, 6);
}

int agent_mgmt_modules_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	const uint8_t *end = zse->payload_end;
	const uint32_t total = CONFIG_AGENT_MODULE_SLOTS;
	uint32_t off;
	uint32_t next;
	bool ok;
	int err = agent_mgmt_page_request(zsd, r, &off);

	if (err == 0) {
		err = agent_mgmt_page_check(r, off, total, "entries");
	}
	if (err != 0) {
		return err;
	}
	module_lock();
	ok = agent_mgmt_put_uint(zse, "slots", total) && agent_mgmt_put_uint(zse, "off", off) &&
	     zcbor_tstr_put_lit(zse, "list") && zcbor_list_start_encode(zse, total);
	if (!ok || end - zse->payload_mut < PAGE_RESERVE) {
		module_unlock();
		return -ENOMEM;
	}
	zse->payload_end = end - PAGE_RESERVE;
	for (next = off; next < total; next++) {
		const struct module_entry *e = module_catalog_entry((int)next);
		struct mark m;

		if (e->state == MODULE_FREE) {
			continue;
		}
		agent_mgmt_mark_take(zse, &m);
		if (!put_entry(zse, e)) {
			agent_mgmt_mark_restore(zse, &m);
			if (next == off) {
				zse->payload_end = end;
				module_unlock();
				return -ENOMEM;
			}
			break;
		}
	}
	module_unlock();
	zse->payload_end = end;
	return zcbor_list_end_encode(zse, total) && agent_mgmt_put_uint(zse, "next", next)
		       ? 0
		       : -ENOMEM;
}

int agent_mgmt_remove_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "name", .type = FIELD_TSTR}};
	char name[MODULE_NAME_MAX + 1];
	char why[MODULE_REASON_MAX + 1];
	char shown[NAME_SHOWN + 1];
	int err = agent_mgmt_decode_request(zsd, fields, 1, r);

	if (err != 0) {
		return err;
	}
	if (!fields[0].present) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "name is required");
	}
	if (fields[0].text.len == 0u || fields[0].text.len > MODULE_NAME_MAX ||
	    memchr(fields[0].text.value, '\0', fields[0].text.len) != NULL) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ENOENT, "no module named '%s'",
					 agent_mgmt_quoted(&fields[0].text, shown, sizeof(shown)));
	}
	memcpy(name, fields[0].text.value, fields[0].text.len);
	name[fields[0].text.len] = '\0';
	err = module_remove(name, why, sizeof(why));
	if (err != 0) {
		return agent_mgmt_refuse(r, rc_of(err), "%s", why);
	}
	return agent_mgmt_put_str(zse, "name", name) ? 0 : -ENOMEM;
}
