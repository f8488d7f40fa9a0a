/*
 * The CBOR side of the SMP management group (docs/mgmt-group.md): a request map decoded
 * into a handler's field table (checked well-formed first, without recursion), the response
 * members the handlers write, and the mark a refusal rolls the response back to.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <zcbor_decode.h>
#include <zcbor_encode.h>

#include "mgmt_internal.h"
#include "utf8.h"

/* ---- helpers ------------------------------------------------------------------------------ */

int agent_mgmt_refuse(struct refusal *r, uint16_t rc, const char *fmt, ...)
{
	/* One byte more than the reason keeps: the byte after a cut tells whether it split a
	 * character. */
	char text[sizeof(r->reason) + 1u];
	va_list ap;
	int n;
	size_t len;

	r->rc = rc;
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	len = n < 0 ? 0u : (size_t)n < sizeof(r->reason) ? (size_t)n : sizeof(r->reason);
	len = utf8_prefix(text, len, sizeof(r->reason) - 1u);
	memcpy(r->reason, text, len);
	r->reason[len] = '\0';
	return -EINVAL;
}

/* A name from the request, safe to quote: cut, and anything but printable ASCII as '?'. */
const char *agent_mgmt_quoted(const struct zcbor_string *s, char *out, size_t len)
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

/*
 * Every text string of an answer goes through here: CBOR text is UTF-8 (RFC 8949 section
 * 3.1), and a stored title or a reason may hold other bytes (a title typed on a Latin-1
 * terminal). Ill-formed sequences become U+FFFD; as that can grow the text (one bad byte
 * becomes three), the repaired text is written straight into the answer after the header of
 * its final length, only when header and text fit before payload_end.
 */
bool agent_mgmt_put_text(zcbor_state_t *zse, const char *text, size_t len)
{
	size_t bad = 0;
	size_t fixed = utf8_repair(text, len, NULL, &bad);
	size_t room;
	uint8_t *dst;

	if (bad == 0) {
		return zcbor_tstr_encode_ptr(zse, text, len);
	}
	if (zse->payload_mut > zse->payload_end) {
		return false;
	}
	room = (size_t)(zse->payload_end - zse->payload_mut);
	if (zcbor_header_len(fixed) > room || fixed > room - zcbor_header_len(fixed)) {
		return false;
	}
	/* zcbor writes the header before dst and moves the text onto itself. */
	dst = zse->payload_mut + zcbor_header_len(fixed);
	(void)utf8_repair(text, len, dst, NULL);
	return zcbor_tstr_encode_ptr(zse, (const char *)dst, fixed);
}

bool agent_mgmt_put_str(zcbor_state_t *zse, const char *key, const char *value)
{
	return zcbor_tstr_put_term(zse, key, 32) && agent_mgmt_put_text(zse, value, strlen(value));
}

bool agent_mgmt_put_uint(zcbor_state_t *zse, const char *key, uint32_t value)
{
	return zcbor_tstr_put_term(zse, key, 32) && zcbor_uint32_put(zse, value);
}

void agent_mgmt_mark_take(const zcbor_state_t *zse, struct mark *m)
{
	m->payload = zse->payload_mut;
	m->elem_count = zse->elem_count;
	m->backup = zse->constant_state != NULL ? zse->constant_state->current_backup : 0;
}

/* Forget everything written since @p m, nested lists and maps included. */
void agent_mgmt_mark_restore(zcbor_state_t *zse, const struct mark *m)
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
	case FIELD_BSTR:
		return "a byte string";
	case FIELD_INT:
		return "an integer";
	case FIELD_DATA:
		return "a byte string or a text string";
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
int agent_mgmt_decode_request(zcbor_state_t *zsd, struct field *fields, size_t count,
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
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL,
						 "field names must be text strings");
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
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EUNKNOWN, "unknown field '%s'",
						 agent_mgmt_quoted(&key, name, sizeof(name)));
		}
		if (f->present) {
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL,
						 "field '%s' appears twice", f->name);
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
		case FIELD_BSTR:
			ok = major == ZCBOR_MAJOR_TYPE_BSTR;
			if (ok && !zcbor_bstr_decode(zsd, &f->text)) {
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
		case FIELD_INT:
			ok = major == ZCBOR_MAJOR_TYPE_PINT || major == ZCBOR_MAJOR_TYPE_NINT;
			if (ok) {
				int64_t v;

				if (!zcbor_int64_decode(zsd, &v)) {
					return -EBADMSG;
				}
				f->integer = v > INT32_MAX   ? INT32_MAX
					     : v < INT32_MIN ? INT32_MIN
							     : (int32_t)v;
			}
			break;
		case FIELD_DATA:
			ok = major == ZCBOR_MAJOR_TYPE_BSTR || major == ZCBOR_MAJOR_TYPE_TSTR;
			if (ok && !(major == ZCBOR_MAJOR_TYPE_BSTR ? zcbor_bstr_decode(zsd, &f->text)
								 : zcbor_tstr_decode(zsd, &f->text))) {
				return -EBADMSG;
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
			return agent_mgmt_refuse(r, AGENT_MGMT_RC_EINVAL, "%s must be %s", f->name,
						 type_words(f->type));
		}
		f->present = true;
	}
	if (!zcbor_map_end_decode(zsd)) {
		return -EBADMSG;
	}
	return 0;
}

int agent_mgmt_page_request(zcbor_state_t *zsd, struct refusal *r, uint32_t *off)
{
	struct field fields[] = {{.name = "off", .type = FIELD_UINT}};
	int err = agent_mgmt_decode_request(zsd, fields, 1, r);

	*off = fields[0].present ? fields[0].number : 0;
	return err;
}

int agent_mgmt_page_check(struct refusal *r, uint32_t off, uint32_t total, const char *unit)
{
	if (off > total) {
		return agent_mgmt_refuse(r, AGENT_MGMT_RC_ERANGE,
					 "offset %u is past the end (%u %s)", (unsigned int)off,
					 (unsigned int)total, unit);
	}
	return 0;
}
