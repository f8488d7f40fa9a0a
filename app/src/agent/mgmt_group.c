/*
 * The agent's SMP management group (docs/mgmt-group.md). Each handler decodes its request
 * map into a small field table, checks it with the shell's own functions and writes its
 * answer; a refusal rolls the response back to the opened map and writes the group error
 * with the shell's message as the reason.
 */
#include "mgmt_group.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <zcbor_decode.h>
#include <zcbor_encode.h>

#include "agent_chat.h"
#include "agent_cmd_internal.h"
#include "agent_config.h"
#include "agent_port.h"
#include "agent_request.h"
#include "agent_version.h"
#include "conv_store.h"
#include "tool_registry.h"
#include "tool_session.h"

#define FIELDS_MAX 3
#define NAME_SHOWN 32 /* bytes of an unknown name quoted in a reason */

/* Bytes kept free while a page of list entries is written: the list's end, the members
 * written after it and the end of the response map. */
#define PAGE_RESERVE 24

/* The longest text value a request may carry into a validator: one byte past the longest
 * value the shell accepts, so that the validator itself refuses it as too long. */
#define MAX2(a, b)  ((a) > (b) ? (a) : (b))
#define VALUE_BYTES (MAX2(MAX2(CONFIG_AGENT_ENDPOINT_MAX_LEN, CONFIG_AGENT_KEY_MAX_LEN),        \
			  MAX2(CONFIG_AGENT_MODEL_MAX_LEN, CONFIG_AGENT_USER_MAX_LEN)) + 2)

enum field_type {
	FIELD_TSTR,
	FIELD_UINT,
	FIELD_BOOL,
};

struct field {
	const char *name;
	enum field_type type;
	bool present;
	struct zcbor_string text;
	uint32_t number; /* values above UINT32_MAX read as UINT32_MAX */
	bool flag;
};

/* What a handler found wrong with a request it understood. */
struct refusal {
	uint16_t rc;
	char reason[AGENT_MGMT_REASON_MAX];
};

/* Where the response stood after the map was opened, to roll a refusal back to. */
struct mark {
	uint8_t *payload;
	size_t elem_count;
	size_t backup;
};

static agent_mgmt_err_fn err_writer;
static char value_buf[VALUE_BYTES];
static uint8_t export_chunk[AGENT_MGMT_EXPORT_CHUNK] AGENT_PSRAM_ATTR;

void agent_mgmt_set_err_writer(agent_mgmt_err_fn fn)
{
	err_writer = fn;
}

/* ---- helpers ------------------------------------------------------------------------------ */

static int refuse(struct refusal *r, uint16_t rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(struct refusal *r, uint16_t rc, const char *fmt, ...)
{
	va_list ap;

	r->rc = rc;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A name from the request, safe to quote: cut, and anything but printable ASCII as '?'. */
static const char *quoted(const struct zcbor_string *s, char *out, size_t len)
{
	size_t n = s->len < len - 1 ? s->len : len - 1;

	for (size_t i = 0; i < n; i++) {
		uint8_t c = s->value[i];

		out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[n] = '\0';
	return out;
}

static bool str_is(const struct zcbor_string *s, const char *text)
{
	size_t len = strlen(text);

	return s->len == len && memcmp(s->value, text, len) == 0;
}

static bool put_str(zcbor_state_t *zse, const char *key, const char *value)
{
	return zcbor_tstr_put_term(zse, key, 32) &&
	       zcbor_tstr_encode_ptr(zse, value, strlen(value));
}

static bool put_uint(zcbor_state_t *zse, const char *key, uint32_t value)
{
	return zcbor_tstr_put_term(zse, key, 32) && zcbor_uint32_put(zse, value);
}

static void mark_take(const zcbor_state_t *zse, struct mark *m)
{
	m->payload = zse->payload_mut;
	m->elem_count = zse->elem_count;
	m->backup = zse->constant_state != NULL ? zse->constant_state->current_backup : 0;
}

/* Forget everything written since @p m, nested lists and maps included. */
static void mark_restore(zcbor_state_t *zse, const struct mark *m)
{
	zse->payload_mut = m->payload;
	zse->elem_count = m->elem_count;
	if (zse->constant_state != NULL) {
		zse->constant_state->current_backup = m->backup;
		zse->constant_state->error = ZCBOR_SUCCESS;
	}
}

/* ---- request decoding --------------------------------------------------------------------- */

static const char *type_words(enum field_type type)
{
	switch (type) {
	case FIELD_TSTR:
		return "a text string";
	case FIELD_UINT:
		return "an unsigned integer";
	default:
		return "true or false";
	}
}

/* Containers a request may nest; deeper requests are refused as malformed. */
#define WELL_FORMED_DEPTH 8

/*
 * Whether [p, end) starts with one well-formed CBOR item (RFC 8949 section 5.3.1), checked
 * without recursion so that a hostile nesting cannot exhaust the stack. Indefinite-length
 * strings and nestings deeper than WELL_FORMED_DEPTH are refused too.
 */
static bool well_formed(const uint8_t *p, const uint8_t *end)
{
	uint64_t left[WELL_FORMED_DEPTH + 1];
	bool indefinite[WELL_FORMED_DEPTH + 1];
	int depth = 0;

	left[0] = 1;
	indefinite[0] = false;
	for (;;) {
		if (!indefinite[depth] && left[depth] == 0) {
			if (depth == 0) {
				return true;
			}
			depth--;
			continue;
		}
		if (p >= end) {
			return false;
		}
		uint8_t ib = *p++;
		uint8_t major = ib >> 5;
		uint8_t ai = ib & 0x1fu;
		uint64_t val = ai;

		if (ib == 0xffu) {
			if (depth == 0 || !indefinite[depth]) {
				return false;
			}
			depth--;
			continue;
		}
		if (!indefinite[depth]) {
			left[depth]--;
		}
		if (ai >= 24 && ai <= 27) {
			size_t n = (size_t)1 << (ai - 24);

			if ((size_t)(end - p) < n) {
				return false;
			}
			val = 0;
			for (size_t i = 0; i < n; i++) {
				val = (val << 8) | *p++;
			}
		} else if (ai >= 28 && (ai != 31 || (major != 4 && major != 5))) {
			return false; /* reserved, or an indefinite length where none may be */
		}
		switch (major) {
		case ZCBOR_MAJOR_TYPE_BSTR:
		case ZCBOR_MAJOR_TYPE_TSTR:
			if (val > (uint64_t)(end - p)) {
				return false;
			}
			p += val;
			break;
		case ZCBOR_MAJOR_TYPE_LIST:
		case ZCBOR_MAJOR_TYPE_MAP:
			if (depth == WELL_FORMED_DEPTH) {
				return false;
			}
			depth++;
			indefinite[depth] = ai == 31;
			left[depth] = ai == 31 ? 0 : (major == ZCBOR_MAJOR_TYPE_MAP ? val * 2 : val);
			if (ai != 31 && val > (uint64_t)(end - p)) {
				return false; /* more items than bytes left */
			}
			break;
		case ZCBOR_MAJOR_TYPE_TAG:
			if (!indefinite[depth]) {
				left[depth]++; /* the tagged item follows */
			}
			break;
		default:
			break; /* integers, simple values, floats */
		}
	}
}

/*
 * Decode the request map into @p fields. Returns 0, -EINVAL with @p r set for a request the
 * group refuses (unknown or repeated field, wrong type), or -EBADMSG for one that is not a
 * CBOR map at all (MCUmgr's EINVAL).
 */
static int decode_request(zcbor_state_t *zsd, struct field *fields, size_t count,
			  struct refusal *r)
{
	char name[NAME_SHOWN + 1];

	for (size_t i = 0; i < count; i++) {
		fields[i].present = false;
	}
	if (zsd->payload >= zsd->payload_end) {
		return 0; /* an empty body reads as {} */
	}
	if (ZCBOR_MAJOR_TYPE(*zsd->payload) != ZCBOR_MAJOR_TYPE_MAP ||
	    !well_formed(zsd->payload, zsd->payload_end) || !zcbor_map_start_decode(zsd)) {
		return -EBADMSG;
	}
	while (!zcbor_array_at_end(zsd)) {
		struct zcbor_string key;
		struct field *f = NULL;
		uint8_t major;
		bool ok;

		if (zsd->payload >= zsd->payload_end) {
			return -EBADMSG;
		}
		if (ZCBOR_MAJOR_TYPE(*zsd->payload) != ZCBOR_MAJOR_TYPE_TSTR) {
			return refuse(r, AGENT_MGMT_RC_EINVAL, "field names must be text strings");
		}
		if (!zcbor_tstr_decode(zsd, &key)) {
			return -EBADMSG;
		}
		for (size_t i = 0; i < count; i++) {
			if (str_is(&key, fields[i].name)) {
				f = &fields[i];
			}
		}
		if (f == NULL) {
			return refuse(r, AGENT_MGMT_RC_EUNKNOWN, "unknown field '%s'",
				      quoted(&key, name, sizeof(name)));
		}
		if (f->present) {
			return refuse(r, AGENT_MGMT_RC_EINVAL, "field '%s' appears twice", f->name);
		}
		if (zsd->payload >= zsd->payload_end) {
			return -EBADMSG;
		}
		major = ZCBOR_MAJOR_TYPE(*zsd->payload);
		switch (f->type) {
		case FIELD_TSTR:
			ok = major == ZCBOR_MAJOR_TYPE_TSTR;
			if (ok && !zcbor_tstr_decode(zsd, &f->text)) {
				return -EBADMSG;
			}
			break;
		case FIELD_UINT:
			ok = major == ZCBOR_MAJOR_TYPE_PINT;
			if (ok) {
				uint64_t v;

				if (!zcbor_uint64_decode(zsd, &v)) {
					return -EBADMSG;
				}
				f->number = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			}
			break;
		default:
			ok = *zsd->payload == 0xf4 || *zsd->payload == 0xf5;
			if (ok && !zcbor_bool_decode(zsd, &f->flag)) {
				return -EBADMSG;
			}
			break;
		}
		if (!ok) {
			return refuse(r, AGENT_MGMT_RC_EINVAL, "%s must be %s", f->name,
				      type_words(f->type));
		}
		f->present = true;
	}
	if (!zcbor_map_end_decode(zsd)) {
		return -EBADMSG;
	}
	return 0;
}

/* A text field as a C string for the validators (value_buf); NULs are refused. */
static int field_cstr(const struct field *f, struct refusal *r, const char **out)
{
	size_t n = f->text.len < sizeof(value_buf) - 1 ? f->text.len : sizeof(value_buf) - 1;

	if (memchr(f->text.value, '\0', f->text.len) != NULL) {
		return refuse(r, AGENT_MGMT_RC_EINVAL, "%s contains a NUL byte", f->name);
	}
	memcpy(value_buf, f->text.value, n);
	value_buf[n] = '\0';
	*out = value_buf;
	return 0;
}

static void wipe_value(void)
{
	volatile char *p = value_buf;

	for (size_t i = 0; i < sizeof(value_buf); i++) {
		p[i] = 0;
	}
}

/* ---- config (0) --------------------------------------------------------------------------- */

static const char *key_state(const struct agent_config *cfg)
{
	return cfg->key_set ? "set" : "not set";
}

static bool put_config_members(zcbor_state_t *zse, const struct agent_config *cfg)
{
	return put_str(zse, "endpoint", cfg->endpoint) && put_str(zse, "model", cfg->model) &&
	       put_str(zse, "key", key_state(cfg)) &&
	       put_str(zse, "reasoning", agent_reasoning_name(cfg->reasoning)) &&
	       put_str(zse, "tools", agent_tools_policy_name(cfg->tools)) &&
	       put_uint(zse, "max-tools", cfg->max_tools) && put_str(zse, "user", cfg->user) &&
	       put_str(zse, "protocol",
		       agent_protocol_name(agent_config_protocol(cfg->endpoint)));
}

/* The value shown for @p name, "set"/"not set" for the key; NULL for an unknown name. */
static const char *shown_value(const struct agent_config *cfg, const char *name, char *buf,
			       size_t len)
{
	if (strcmp(name, "key") == 0) {
		return key_state(cfg);
	}
	return agent_config_show(cfg, name, buf, len);
}

static int config_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "name", .type = FIELD_TSTR}};
	const struct agent_config *cfg = agent_cmd_config();
	char name[NAME_SHOWN + 1];
	char number[4];
	const char *value;
	int err = decode_request(zsd, fields, 1, r);

	if (err != 0) {
		return err;
	}
	if (!fields[0].present) {
		return put_config_members(zse, cfg) ? 0 : -ENOMEM;
	}
	quoted(&fields[0].text, name, sizeof(name));
	value = fields[0].text.len <= NAME_SHOWN ? shown_value(cfg, name, number, sizeof(number))
						  : NULL;
	if (value == NULL || memchr(fields[0].text.value, '\0', fields[0].text.len) != NULL) {
		return refuse(r, AGENT_MGMT_RC_EUNKNOWN, "unknown setting '%s'", name);
	}
	return put_str(zse, "name", name) && put_str(zse, "value", value) ? 0 : -ENOMEM;
}

static int config_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {
		{.name = "name", .type = FIELD_TSTR},
		{.name = "value", .type = FIELD_TSTR},
		{.name = "clear", .type = FIELD_BOOL},
	};
	struct agent_config *cfg = agent_cmd_config();
	char name[NAME_SHOWN + 1];
	char number[4];
	const char *value;
	const char *why = "";
	bool is_key;
	int err = decode_request(zsd, fields, 3, r);

	if (err != 0) {
		return err;
	}
	if (!fields[0].present) {
		return refuse(r, AGENT_MGMT_RC_EINVAL, "name is missing");
	}
	quoted(&fields[0].text, name, sizeof(name));
	if (fields[0].text.len > NAME_SHOWN ||
	    memchr(fields[0].text.value, '\0', fields[0].text.len) != NULL ||
	    shown_value(cfg, name, number, sizeof(number)) == NULL) {
		return refuse(r, AGENT_MGMT_RC_EUNKNOWN, "unknown setting '%s'", name);
	}
	is_key = strcmp(name, "key") == 0;
	if (fields[1].present && fields[2].present) {
		return refuse(r, AGENT_MGMT_RC_EINVAL, "give value or clear, not both");
	}
	if (fields[2].present && (!is_key || !fields[2].flag)) {
		return refuse(r, AGENT_MGMT_RC_EINVAL,
			      is_key ? "clear must be true" : "clear is accepted only for key");
	}
	if (!fields[1].present && !fields[2].present) {
		return refuse(r, AGENT_MGMT_RC_EINVAL, "value is missing");
	}
	if (agent_request_active()) {
		return refuse(r, AGENT_MGMT_RC_EBUSY, "a request is running; nothing changed");
	}
	if (fields[2].present) {
		err = agent_config_key_clear(cfg);
		if (err != 0) {
			return refuse(r, AGENT_MGMT_RC_EIO, "could not clear the key (error %d)",
				      err);
		}
	} else {
		err = field_cstr(&fields[1], r, &value);
		if (err != 0) {
			return err;
		}
		err = is_key ? agent_config_key_set(cfg, value, &why)
			     : agent_config_set(cfg, name, value, &why);
		wipe_value();
		if (err == -ENOENT) {
			return refuse(r, AGENT_MGMT_RC_EUNKNOWN, "unknown setting '%s'", name);
		}
		if (err == -EINVAL) {
			return refuse(r, AGENT_MGMT_RC_EINVAL, "%s; %s", why,
				      is_key ? "key unchanged" : "nothing changed");
		}
		if (err != 0) {
			return refuse(r, AGENT_MGMT_RC_EIO, "%s (error %d); %s", why, err,
				      is_key ? "key unchanged" : "nothing changed");
		}
	}
	value = shown_value(cfg, name, number, sizeof(number));
	return put_str(zse, "name", name) && put_str(zse, "value", value) ? 0 : -ENOMEM;
}

/* ---- status (1) --------------------------------------------------------------------------- */

static int put_pool(const struct agent_pool_stats *s, void *user_data)
{
	static const char *const class_names[AGENT_MEM_CLASS_COUNT] = {"internal", "psram"};
	zcbor_state_t *zse = user_data;
	bool ok = zcbor_map_start_encode(zse, 6) && put_str(zse, "name", s->name) &&
		  put_str(zse, "class", class_names[s->mem_class]) &&
		  put_uint(zse, "block", (uint32_t)s->block_bytes) &&
		  put_uint(zse, "total", s->blocks_total) && put_uint(zse, "free", s->blocks_free) &&
		  put_uint(zse, "lowest", s->blocks_free_min) && zcbor_map_end_encode(zse, 6);

	return ok ? 0 : -ENOMEM;
}

struct pool_walk {
	zcbor_state_t *zse;
	bool failed;
};

static int pool_visit(const struct agent_pool_stats *s, void *user_data)
{
	struct pool_walk *w = user_data;

	if (put_pool(s, w->zse) != 0) {
		w->failed = true;
		return 1;
	}
	return 0;
}

static int status_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	const struct agent_config *cfg = agent_cmd_config();
	struct agent_tool_stats ts;
	struct pool_walk walk = {.zse = zse};
	int err = decode_request(zsd, NULL, 0, r);
	bool ok;

	if (err != 0) {
		return err;
	}
	agent_tool_stats_get(&ts);
	ok = put_str(zse, "version", AGENT_VERSION_STRING) &&
	     put_str(zse, "board", agent_board_name()) && put_config_members(zse, cfg) &&
	     zcbor_tstr_put_lit(zse, "tool_calls") && zcbor_map_start_encode(zse, 5) &&
	     put_uint(zse, "executed", ts.executed) && put_uint(zse, "denied", ts.denied) &&
	     put_uint(zse, "failed", ts.failed) && put_uint(zse, "last_used", ts.last_used) &&
	     put_uint(zse, "last_budget", ts.last_budget) && zcbor_map_end_encode(zse, 5) &&
	     zcbor_tstr_put_lit(zse, "pools") && zcbor_list_start_encode(zse, 16);
	if (ok) {
		agent_pool_foreach(pool_visit, &walk);
		ok = !walk.failed && zcbor_list_end_encode(zse, 16);
	}
	return ok ? 0 : -ENOMEM;
}

/* ---- forget (2) --------------------------------------------------------------------------- */

static int forget_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	int err = decode_request(zsd, NULL, 0, r);

	(void)zse;
	if (err != 0) {
		return err;
	}
	if (agent_request_active()) {
		return refuse(r, AGENT_MGMT_RC_EBUSY, "a request is running; nothing changed");
	}
	err = agent_config_forget(agent_cmd_config());
	if (err != 0) {
		return refuse(r, AGENT_MGMT_RC_EIO, "could not erase the configuration (error %d)",
			      err);
	}
	return 0;
}

/* ---- slots -------------------------------------------------------------------------------- */

static int store_info(struct conv_store_info *info, struct refusal *r)
{
	if (conv_store_info_get(info) != 0) {
		return refuse(r, AGENT_MGMT_RC_ENODEV,
			      "conversations are not available (no storage)");
	}
	return 0;
}

/* The slot field of export and delete, checked as the shell checks `agent delete SLOT`. */
static int slot_field(const struct field *f, uint8_t *slot, struct refusal *r)
{
	struct conv_store_info info;
	int err;

	if (!f->present) {
		return refuse(r, AGENT_MGMT_RC_EINVAL, "slot is missing");
	}
	err = store_info(&info, r);
	if (err != 0) {
		return err;
	}
	if (f->number < 1 || f->number > info.slots) {
		return refuse(r, AGENT_MGMT_RC_ERANGE, "slot must be a number from 1 to %u",
			      (unsigned int)info.slots);
	}
	*slot = (uint8_t)f->number;
	return 0;
}

/* ---- conversations (3) -------------------------------------------------------------------- */

static bool put_summary(zcbor_state_t *zse, const struct conv_summary *s)
{
	return zcbor_map_start_encode(zse, 6) && put_uint(zse, "slot", s->slot) &&
	       put_uint(zse, "turns", s->damaged ? 0 : s->turns) &&
	       put_uint(zse, "bytes", s->bytes) && put_str(zse, "model", s->damaged ? "" : s->model) &&
	       put_str(zse, "title", s->damaged ? "" : s->title) &&
	       zcbor_tstr_put_lit(zse, "damaged") && zcbor_bool_put(zse, s->damaged) &&
	       zcbor_map_end_encode(zse, 6);
}

static int conversations_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "off", .type = FIELD_UINT}};
	struct conv_store_info info;
	const uint8_t *end = zse->payload_end;
	uint32_t off;
	uint32_t next;
	bool ok;
	int err = decode_request(zsd, fields, 1, r);

	if (err != 0) {
		return err;
	}
	err = store_info(&info, r);
	if (err != 0) {
		return err;
	}
	off = fields[0].present ? fields[0].number : 0;
	if (off > info.slots) {
		return refuse(r, AGENT_MGMT_RC_ERANGE, "offset %u is past the end (%u slots)",
			      (unsigned int)off, (unsigned int)info.slots);
	}
	ok = put_str(zse, "dir", info.dir) && put_uint(zse, "slots", info.slots) &&
	     put_uint(zse, "off", off) && zcbor_tstr_put_lit(zse, "list") &&
	     zcbor_list_start_encode(zse, CONV_SLOTS_MAX);
	if (!ok || end - zse->payload_mut < PAGE_RESERVE) {
		return -ENOMEM;
	}
	zse->payload_end = end - PAGE_RESERVE;
	for (next = off; next < info.slots; next++) {
		struct conv_summary s;
		struct mark m;

		err = conv_store_summary((uint8_t)(next + 1), &s);
		if (err == -ENOENT) {
			continue;
		}
		if (err != 0 && !(err == -EBADMSG && s.damaged)) {
			zse->payload_end = end;
			return refuse(r, AGENT_MGMT_RC_EIO, "slot %u cannot be read (error %d)",
				      (unsigned int)(next + 1), err);
		}
		s.slot = (uint8_t)(next + 1);
		mark_take(zse, &m);
		if (!put_summary(zse, &s)) {
			mark_restore(zse, &m);
			if (next == off) {
				zse->payload_end = end;
				return -ENOMEM;
			}
			break;
		}
	}
	zse->payload_end = end;
	ok = zcbor_list_end_encode(zse, CONV_SLOTS_MAX) && put_uint(zse, "next", next);
	return ok ? 0 : -ENOMEM;
}

/* ---- export (4) --------------------------------------------------------------------------- */

/* The members of an export response besides the data: keys, numbers, the bstr header and
 * the end of the map. */
#define EXPORT_OVERHEAD 40

static int export_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {
		{.name = "slot", .type = FIELD_UINT},
		{.name = "off", .type = FIELD_UINT},
	};
	uint32_t total = 0;
	uint8_t slot = 0;
	size_t room = (size_t)(zse->payload_end - zse->payload_mut);
	size_t want;
	int n;
	int err = decode_request(zsd, fields, 2, r);

	if (err != 0) {
		return err;
	}
	err = slot_field(&fields[0], &slot, r);
	if (err != 0) {
		return err;
	}
	if (!fields[1].present) {
		return refuse(r, AGENT_MGMT_RC_EINVAL, "off is missing");
	}
	if (room <= EXPORT_OVERHEAD) {
		return -ENOMEM;
	}
	want = room - EXPORT_OVERHEAD;
	if (want > sizeof(export_chunk)) {
		want = sizeof(export_chunk);
	}
	n = conv_store_export(slot, fields[1].number, export_chunk, want, &total);
	if (n == -ENOENT) {
		return refuse(r, AGENT_MGMT_RC_ENOENT, "slot %u holds no conversation",
			      (unsigned int)slot);
	}
	if (n == -ERANGE) {
		return refuse(r, AGENT_MGMT_RC_ERANGE, "offset %u is past the end (%u bytes)",
			      (unsigned int)fields[1].number, (unsigned int)total);
	}
	if (n == -ENODEV) {
		return refuse(r, AGENT_MGMT_RC_ENODEV,
			      "conversations are not available (no storage)");
	}
	if (n < 0) {
		return refuse(r, AGENT_MGMT_RC_EIO, "slot %u cannot be read (error %d)",
			      (unsigned int)slot, n);
	}
	return put_uint(zse, "slot", slot) && put_uint(zse, "off", fields[1].number) &&
			       put_uint(zse, "len", total) && zcbor_tstr_put_lit(zse, "data") &&
			       zcbor_bstr_encode_ptr(zse, (const char *)export_chunk, (size_t)n)
		       ? 0
		       : -ENOMEM;
}

/* ---- delete (5) --------------------------------------------------------------------------- */

static int delete_write(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "slot", .type = FIELD_UINT}};
	uint8_t slot = 0;
	int err = decode_request(zsd, fields, 1, r);

	if (err != 0) {
		return err;
	}
	err = slot_field(&fields[0], &slot, r);
	if (err != 0) {
		return err;
	}
	if (agent_chat_open_slot() == slot) {
		return refuse(r, AGENT_MGMT_RC_EBUSY, "slot %u is open in the chat",
			      (unsigned int)slot);
	}
	err = conv_store_delete(slot);
	if (err == -ENOENT) {
		return refuse(r, AGENT_MGMT_RC_ENOENT, "slot %u holds no conversation",
			      (unsigned int)slot);
	}
	if (err != 0) {
		return refuse(r, AGENT_MGMT_RC_EIO, "slot %u could not be deleted (error %d)",
			      (unsigned int)slot, err);
	}
	return put_uint(zse, "slot", slot) ? 0 : -ENOMEM;
}

/* ---- tools (6) ---------------------------------------------------------------------------- */

static bool put_tool(zcbor_state_t *zse, const struct tool_def *def,
		     enum agent_tools_policy policy)
{
	bool available = tool_available(def);

	return zcbor_map_start_encode(zse, 6) && put_str(zse, "name", def->name) &&
	       put_str(zse, "domain", tool_domain_name(def->domain)) &&
	       put_str(zse, "risk", tool_risk_name(def->risk)) &&
	       put_str(zse, "available",
		       available ? (tool_is_bootstrap(def) ? "bootstrap" : "yes") : "no") &&
	       put_str(zse, "policy",
		       tool_disposition_name(tool_policy_disposition(policy, def->risk))) &&
	       put_str(zse, "needs", def->capability != NULL ? def->capability : "") &&
	       zcbor_map_end_encode(zse, 6);
}

static int tools_read(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r)
{
	struct field fields[] = {{.name = "off", .type = FIELD_UINT}};
	const struct agent_config *cfg = agent_cmd_config();
	const uint8_t *end = zse->payload_end;
	size_t total = tool_registry_count();
	uint32_t off;
	bool ok;
	int err = decode_request(zsd, fields, 1, r);

	if (err != 0) {
		return err;
	}
	off = fields[0].present ? fields[0].number : 0;
	if (off > total) {
		return refuse(r, AGENT_MGMT_RC_ERANGE, "offset %u is past the end (%u tools)",
			      (unsigned int)off, (unsigned int)total);
	}
	ok = put_str(zse, "policy", agent_tools_policy_name(cfg->tools)) &&
	     put_uint(zse, "total", (uint32_t)total) && put_uint(zse, "off", off) &&
	     zcbor_tstr_put_lit(zse, "tools") && zcbor_list_start_encode(zse, total);
	if (!ok || end - zse->payload_mut < PAGE_RESERVE) {
		return -ENOMEM;
	}
	zse->payload_end = end - PAGE_RESERVE;
	for (size_t i = off; i < total; i++) {
		const struct tool_def *def = tool_registry_get(i);
		struct mark m;

		if (def == NULL) {
			break; /* removed while we were listing */
		}
		mark_take(zse, &m);
		if (!put_tool(zse, def, cfg->tools)) {
			mark_restore(zse, &m);
			if (i == off) {
				zse->payload_end = end;
				return -ENOMEM;
			}
			break;
		}
	}
	zse->payload_end = end;
	return zcbor_list_end_encode(zse, total) ? 0 : -ENOMEM;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

typedef int (*handler_fn)(zcbor_state_t *zsd, zcbor_state_t *zse, struct refusal *r);

static const struct {
	handler_fn read;
	handler_fn write;
} handlers[AGENT_MGMT_CMD_COUNT] = {
	[AGENT_MGMT_CMD_CONFIG] = {config_read, config_write},
	[AGENT_MGMT_CMD_STATUS] = {status_read, NULL},
	[AGENT_MGMT_CMD_FORGET] = {NULL, forget_write},
	[AGENT_MGMT_CMD_CONVERSATIONS] = {conversations_read, NULL},
	[AGENT_MGMT_CMD_EXPORT] = {export_read, NULL},
	[AGENT_MGMT_CMD_DELETE] = {NULL, delete_write},
	[AGENT_MGMT_CMD_TOOLS] = {tools_read, NULL},
};

bool agent_mgmt_has_handler(uint16_t cmd, bool write)
{
	if (cmd >= AGENT_MGMT_CMD_COUNT) {
		return false;
	}
	return (write ? handlers[cmd].write : handlers[cmd].read) != NULL;
}

static bool put_err(zcbor_state_t *zse, uint16_t group, uint16_t rc)
{
	return zcbor_tstr_put_lit(zse, "err") && zcbor_map_start_encode(zse, 2) &&
	       put_uint(zse, "group", group) && put_uint(zse, "rc", rc) &&
	       zcbor_map_end_encode(zse, 2);
}

int agent_mgmt_run(uint16_t cmd, bool write, zcbor_state_t *zsd, zcbor_state_t *zse)
{
	static struct refusal refusal;
	handler_fn fn;
	struct mark m;
	int err;

	if (!agent_mgmt_has_handler(cmd, write)) {
		return AGENT_MGMT_ERR_ENOTSUP;
	}
	fn = write ? handlers[cmd].write : handlers[cmd].read;
	refusal.rc = AGENT_MGMT_RC_OK;
	refusal.reason[0] = '\0';
	mark_take(zse, &m);
	err = fn(zsd, zse, &refusal);
	if (err == 0) {
		return AGENT_MGMT_ERR_EOK;
	}
	if (err == -EBADMSG) {
		return AGENT_MGMT_ERR_EINVAL;
	}
	if (refusal.rc == AGENT_MGMT_RC_OK) {
		return AGENT_MGMT_ERR_EMSGSIZE; /* the answer does not fit the buffer */
	}
	mark_restore(zse, &m);
	if (!(err_writer != NULL ? err_writer : put_err)(zse, AGENT_MGMT_GROUP_ID, refusal.rc) ||
	    !put_str(zse, "reason", refusal.reason)) {
		return AGENT_MGMT_ERR_EMSGSIZE;
	}
	return AGENT_MGMT_ERR_EOK;
}

int agent_mgmt_translate_rc(uint16_t rc)
{
	switch (rc) {
	case AGENT_MGMT_RC_OK:
		return AGENT_MGMT_ERR_EOK;
	case AGENT_MGMT_RC_EINVAL:
	case AGENT_MGMT_RC_ERANGE:
		return AGENT_MGMT_ERR_EINVAL;
	case AGENT_MGMT_RC_ENOENT:
		return 5; /* MGMT_ERR_ENOENT */
	case AGENT_MGMT_RC_EBUSY:
		return 10; /* MGMT_ERR_EBUSY */
	case AGENT_MGMT_RC_EWRITEONLY:
		return 11; /* MGMT_ERR_EACCESSDENIED */
	case AGENT_MGMT_RC_ENODEV:
		return AGENT_MGMT_ERR_ENOTSUP;
	default:
		return AGENT_MGMT_ERR_EUNKNOWN;
	}
}
