/*
 * Tool arguments: the JSON object a model wrote, parsed with the streaming tokenizer and
 * checked against the tool's params in one pass. Strings are unescaped into the tool_args
 * text area; nothing else is kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_stream.h"
#include "tool.h"
#include "utf8.h"

/* An unknown key in a message: at most 60 bytes as shown, "..." and the NUL. */
#define KEY_SHOWN_LEN (60u + 4u)

struct parse {
	const struct tool_def *def;
	struct tool_args *args;
	char *why;
	size_t why_len;
	int param;	   /* index of the top-level field being read, -1 between fields */
	struct tool_value *cur; /* the string being filled */
	size_t cur_max;
	const char *cur_name;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, p->why_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * The parameter whose name is the key of @p level, in all its bytes: "path\u0000x" or a
 * key cut at JSON_KEY_MAX is no parameter's name. -1 when none; @p shown (KEY_SHOWN_LEN
 * bytes) then gets the key for the message as utf8_shown() shows it, "..." after it when it
 * was cut (at JSON_KEY_MAX, or to fit).
 */
static int find(const struct tool_param *params, int count, const struct json_stream *js,
		int level, char *shown, size_t shown_len)
{
	size_t len;
	bool truncated;
	const char *key = json_stream_key_n(js, level, &len, &truncated);

	for (int i = 0; key != NULL && !truncated && i < count; i++) {
		if (strlen(params[i].name) == len && memcmp(params[i].name, key, len) == 0) {
			return i;
		}
	}
	if (key == NULL) {
		snprintf(shown, shown_len, "?");
	} else if (utf8_shown(shown, shown_len - 3u, key, len, len) < len || truncated) {
		memcpy(shown + strlen(shown), "...", 4); /* cut here or at JSON_KEY_MAX */
	}
	return -1;
}

static const char *type_name(enum tool_param_type type)
{
	switch (type) {
	case TOOL_PARAM_STRING:
		return "a string";
	case TOOL_PARAM_INTEGER:
		return "an integer";
	case TOOL_PARAM_BOOLEAN:
		return "true or false";
	case TOOL_PARAM_STRINGS:
		return "an array of strings";
	case TOOL_PARAM_OBJECTS:
		return "an array of objects";
	}
	return "?";
}

static int wrong_type(struct parse *p, const struct tool_param *param)
{
	snprintf(p->why, p->why_len, "field %s must be %s", param->name, type_name(param->type));
	return -EINVAL;
}

/* A whole JSON integer within [min, max]; anything else (fraction, exponent) is refused. */
static int integer(struct parse *p, const struct tool_param *param, const char *text,
		   struct tool_value *out)
{
	const char *s = text;
	bool neg = *s == '-';
	int64_t value = 0;

	s += neg;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9') {
			return fail(p, "field %s must be an integer", param->name);
		}
		/* value * 10 + digit > INT64_MAX, with constant divisions only (a 64-bit
		 * division is a library call on a 32-bit core). */
		if (value > INT64_MAX / 10 || (value == INT64_MAX / 10 && *s - '0' > INT64_MAX % 10)) {
			return fail(p, "field %s is out of range", param->name);
		}
		value = value * 10 + (*s - '0');
	}
	if (neg) {
		value = -value;
	}
	if (value < param->min) {
		return fail(p, "field %s must be at least %lld", param->name,
			    (long long)param->min);
	}
	if (value > param->max) {
		return fail(p, "field %s must be at most %lld", param->name,
			    (long long)param->max);
	}
	out->present = true;
	out->integer = value;
	return 0;
}

static int string_part(struct parse *p, const struct json_value *v)
{
	struct tool_args *a = p->args;
	struct tool_value *cur = p->cur;

	if (v->first) {
		cur->present = true;
		cur->str = a->text + a->text_len;
		cur->len = 0;
	}
	if (cur->len + v->len > p->cur_max) {
		return fail(p, "field %s is longer than %lld bytes", p->cur_name,
			    (long long)p->cur_max);
	}
	/* The input is at most ARGS_MAX_LEN bytes and unescaping never grows text. */
	if (a->text_len + v->len + 1 > sizeof(a->text)) {
		return fail(p, "the arguments are too large");
	}
	memcpy(a->text + a->text_len, v->text, v->len);
	a->text_len += v->len;
	cur->len += v->len;
	if (v->last) {
		a->text[a->text_len++] = '\0';
	}
	return 0;
}

/* A scalar value of @param into @out (string fragments included). */
static int scalar(struct parse *p, const struct tool_param *param, const struct json_value *v,
		  struct tool_value *out, const char *name, size_t str_max)
{
	if (v->token == JSON_NULL && !param->required) {
		return 0; /* an optional field given as null: absent */
	}
	switch (param->type) {
	case TOOL_PARAM_STRING:
	case TOOL_PARAM_STRINGS:
		if (v->token != JSON_STRING) {
			return wrong_type(p, param);
		}
	{
		p->cur = out;
		p->cur_max = str_max;
		p->cur_name = name;
		int err = string_part(p, v);

		if (err == 0 && v->last && param->type == TOOL_PARAM_STRING &&
		    (int64_t)out->len < param->min) {
			return fail(p, "field %s must be at least %lld bytes long", name,
				    (long long)param->min);
		}
		return err;
	}
	case TOOL_PARAM_INTEGER:
		if (v->token != JSON_NUMBER) {
			return wrong_type(p, param);
		}
		return integer(p, param, v->text, out);
	case TOOL_PARAM_BOOLEAN:
		if (v->token != JSON_TRUE && v->token != JSON_FALSE) {
			return wrong_type(p, param);
		}
		out->present = true;
		out->boolean = v->token == JSON_TRUE;
		return 0;
	default:
		return wrong_type(p, param);
	}
}

static int missing_fields(struct parse *p, const struct tool_param *params, int count,
			  const struct tool_value *values, const char *where)
{
	for (int i = 0; i < count; i++) {
		if (params[i].required && !values[i].present) {
			snprintf(p->why, p->why_len, "field %s%s is required", where,
				 params[i].name);
			return -EINVAL;
		}
	}
	return 0;
}

/* Depth 2 and 3: the elements of an array argument. */
static int element(struct parse *p, const struct json_stream *js, const struct json_value *v,
		   int depth)
{
	const struct tool_param *param = &p->def->params[p->param];
	struct tool_value *arr = &p->args->v[p->param];
	int index = json_stream_index(js, 2);

	if (depth == 2 && (v->first || v->token != JSON_STRING) && v->token != JSON_OBJECT_END) {
		if (index >= param->max || index >= TOOL_ITEMS_MAX) {
			return fail(p, "field %s has more than %lld elements", param->name,
				    (long long)param->max);
		}
		arr->count = (uint8_t)(index + 1);
	}
	if (param->type == TOOL_PARAM_STRINGS) {
		if (depth != 2) {
			return wrong_type(p, param);
		}
		struct tool_param item = *param;

		item.required = true; /* no null elements */
		return scalar(p, &item, v, &p->args->item[index][0], param->name,
			      param->item_max_len);
	}
	/* TOOL_PARAM_OBJECTS */
	if (depth == 2) {
		if (v->token == JSON_OBJECT_BEGIN) {
			return 0;
		}
		if (v->token == JSON_OBJECT_END) {
			char where[48];

			snprintf(where, sizeof(where), "%.30s[%d].", param->name, index);
			return missing_fields(p, param->fields, param->field_count,
					      p->args->item[index], where);
		}
		return wrong_type(p, param);
	}
	if (depth > 3 || v->token == JSON_OBJECT_BEGIN || v->token == JSON_ARRAY_BEGIN) {
		return fail(p, "field %s: elements hold only strings, numbers and booleans",
			    param->name);
	}
	char shown[KEY_SHOWN_LEN];
	int f = find(param->fields, param->field_count, js, 3, shown, sizeof(shown));

	if (f < 0) {
		return fail(p, "field %s: unknown field %s in an element", param->name, shown);
	}
	struct tool_value *out = &p->args->item[index][f];

	if (v->token != JSON_STRING || v->first) {
		if (out->present) {
			return fail(p, "field %s: an element repeats a field", param->name);
		}
	}
	const struct tool_param *fp = &param->fields[f];

	return scalar(p, fp, v, out, fp->name,
		      (size_t)(fp->type == TOOL_PARAM_STRING ? fp->max : 0));
}

static int on_value(void *user_data, const struct json_stream *js, const struct json_value *v)
{
	struct parse *p = user_data;
	int depth = json_stream_depth(js);

	if (depth == 0) {
		if (v->token != JSON_OBJECT_BEGIN && v->token != JSON_OBJECT_END) {
			return fail(p, "the arguments must be a JSON object");
		}
		return 0;
	}
	if (depth == 1) {
		if (v->token == JSON_ARRAY_END) {
			const struct tool_param *param = &p->def->params[p->param];

			if ((int64_t)p->args->v[p->param].count < param->min) {
				return fail(p, "field %s needs at least %lld elements", param->name,
					    (long long)param->min);
			}
			p->param = -1;
			return 0;
		}
		if (v->token != JSON_STRING || v->first) {
			char shown[KEY_SHOWN_LEN];

			p->param = find(p->def->params, p->def->param_count, js, 1, shown,
					sizeof(shown));
			if (p->param < 0) {
				snprintf(p->why, p->why_len, "unknown field %s", shown);
				return -EINVAL;
			}
			if (p->args->v[p->param].present) {
				return fail(p, "field %s is given twice", p->def->params[p->param].name);
			}
		}
		const struct tool_param *param = &p->def->params[p->param];

		if (param->type == TOOL_PARAM_STRINGS || param->type == TOOL_PARAM_OBJECTS) {
			if (v->token == JSON_NULL && !param->required) {
				return 0;
			}
			if (v->token != JSON_ARRAY_BEGIN) {
				return wrong_type(p, param);
			}
			p->args->v[p->param].present = true;
			return 0;
		}
		return scalar(p, param, v, &p->args->v[p->param], param->name,
			      (size_t)(param->type == TOOL_PARAM_STRING ? param->max : 0));
	}
	if (p->param < 0) {
		return -EINVAL;
	}
	const struct tool_param *param = &p->def->params[p->param];

	if (param->type != TOOL_PARAM_STRINGS && param->type != TOOL_PARAM_OBJECTS) {
		return wrong_type(p, param);
	}
	return element(p, js, v, depth);
}

int tool_args_parse(const struct tool_def *def, const char *json, size_t len,
		    struct tool_args *args, char *why, size_t why_len)
{
	static struct json_stream js AGENT_PSRAM_ATTR; /* ~700 B, off the stack; one at a time */
	struct parse p = {
		.def = def, .args = args, .why = why, .why_len = why_len, .param = -1,
	};
	int err;

	memset(args, 0, sizeof(*args));
	if (why_len > 0) {
		why[0] = '\0';
	}
	if (len > CONFIG_AGENT_TOOL_ARGS_MAX_LEN) {
		snprintf(why, why_len, "the arguments are longer than %d bytes",
			 CONFIG_AGENT_TOOL_ARGS_MAX_LEN);
		return -EINVAL;
	}
	json_stream_init(&js, on_value, &p);
	err = json_stream_feed(&js, json, len);
	if (err == 0) {
		err = json_stream_finish(&js);
	}
	if (err != 0) {
		if (why_len > 0 && why[0] == '\0') {
			snprintf(why, why_len, "the arguments are not valid JSON");
		}
		return -EINVAL;
	}
	return missing_fields(&p, def->params, def->param_count, args->v, "");
}
