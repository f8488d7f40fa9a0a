/*
 * The modules the MicroPython adapter adds to each run (docs/scripting-python.md):
 *
 * - `device`: one function per entry of the runner's device API table (script_api_get()),
 *   converting its arguments by the entry's types, calling script_api_call() and building the
 *   result through a sink; a failure raises ValueError (-EINVAL) or OSError(errno, text).
 * - `time`: sleep(), sleep_ms() on the runner's sleep (a stop ends the run), ticks_ms() and
 *   ticks_diff() on the uptime.
 *
 * Both are made in the run's GC heap after mp_init() and put into sys.modules, so `import
 * device` finds them without any import machinery.
 */
#include <errno.h>
#include <string.h>

#include "py/objstr.h"
#include "py/runtime.h"
#include "py/unicode.h"

#include "python_port.h"
#include "script_runtime.h"

static struct script_exec *modules_ex;

/* ---- The sink: device API results as Python values ---------------------------------------- */

struct py_sink {
	mp_obj_t result;
	unsigned int depth;
	mp_obj_t containers[SCRIPT_SINK_DEPTH];
	mp_obj_t keys[SCRIPT_SINK_DEPTH]; /* the pending key of each map, MP_OBJ_NULL if none */
};

static mp_obj_t text_value(const char *text, size_t len)
{
	/* Text that is not UTF-8 (a binary file's bytes) comes back as bytes. */
	if (utf8_check((const byte *)text, len)) {
		return mp_obj_new_str(text, len);
	}
	return mp_obj_new_bytes((const byte *)text, len);
}

static void sink_value(struct py_sink *sink, mp_obj_t value)
{
	mp_obj_t top;

	if (sink->depth == 0u) {
		sink->result = value;
		return;
	}
	top = sink->containers[sink->depth - 1u];
	if (mp_obj_is_type(top, &mp_type_list)) {
		mp_obj_list_append(top, value);
	} else if (sink->keys[sink->depth - 1u] != MP_OBJ_NULL) {
		mp_obj_dict_store(top, sink->keys[sink->depth - 1u], value);
		sink->keys[sink->depth - 1u] = MP_OBJ_NULL;
	}
}

static void sink_open(struct py_sink *sink, mp_obj_t container)
{
	if (sink->depth >= SCRIPT_SINK_DEPTH) {
		mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("device result nested too deeply"));
	}
	sink->containers[sink->depth] = container;
	sink->keys[sink->depth] = MP_OBJ_NULL;
	sink->depth++;
}

static void sink_close(struct py_sink *sink)
{
	mp_obj_t done;

	if (sink->depth == 0u) {
		return;
	}
	sink->depth--;
	done = sink->containers[sink->depth];
	sink->containers[sink->depth] = MP_OBJ_NULL;
	sink_value(sink, done);
}

static void py_none(void *ctx)
{
	sink_value(ctx, mp_const_none);
}

static void py_boolean(void *ctx, bool value)
{
	sink_value(ctx, mp_obj_new_bool(value));
}

static void py_integer(void *ctx, int64_t value)
{
	sink_value(ctx, mp_obj_new_int_from_ll((long long)value));
}

static void py_string(void *ctx, const char *text, size_t len)
{
	sink_value(ctx, text_value(text, len));
}

static void py_list_begin(void *ctx)
{
	sink_open(ctx, mp_obj_new_list(0, NULL));
}

static void py_map_begin(void *ctx)
{
	sink_open(ctx, mp_obj_new_dict(0));
}

static void py_end(void *ctx)
{
	sink_close(ctx);
}

static void py_key(void *ctx, const char *key)
{
	struct py_sink *sink = ctx;

	if (sink->depth > 0u) {
		sink->keys[sink->depth - 1u] = text_value(key, strlen(key));
	}
}

static const struct script_sink_ops py_sink_ops = {
	.none = py_none,
	.boolean = py_boolean,
	.integer = py_integer,
	.string = py_string,
	.list_begin = py_list_begin,
	.list_end = py_end,
	.map_begin = py_map_begin,
	.key = py_key,
	.map_end = py_end,
};

/* ---- device.NAME(...) --------------------------------------------------------------------- */

struct device_fn_obj {
	mp_obj_base_t base;
	const struct script_fn *fn;
};

static void raise_api_error(int err, const char *error)
{
	mp_obj_t args[2];

	/* The text is copied: a message given by pointer would outlive the caller's buffer. */
	if (err == -EINVAL) {
		nlr_raise(mp_obj_new_exception_arg1(&mp_type_ValueError,
						    text_value(error, strlen(error))));
	}
	args[0] = MP_OBJ_NEW_SMALL_INT(-err);
	args[1] = text_value(error, strlen(error));
	nlr_raise(mp_obj_new_exception_args(&mp_type_OSError, 2, args));
}

static mp_obj_t device_fn_call(mp_obj_t self_in, size_t n_args, size_t n_kw,
			       const mp_obj_t *args)
{
	const struct device_fn_obj *self = MP_OBJ_TO_PTR(self_in);
	const struct script_fn *fn = self->fn;
	struct script_arg converted[SCRIPT_FN_ARGS_MAX];
	struct py_sink sink;
	struct script_sink out = {&py_sink_ops, &sink};
	char error[SCRIPT_ERROR_MAX + 1];
	enum script_outcome why;
	int err;

	if (n_kw != 0u) {
		mp_raise_TypeError(MP_ERROR_TEXT("device functions take no keyword arguments"));
	}
	if (n_args < fn->args_min || n_args > fn->args_max || n_args > SCRIPT_FN_ARGS_MAX) {
		mp_raise_msg_varg(&mp_type_TypeError,
				  MP_ERROR_TEXT("%s() takes %d to %d arguments (%d given)"),
				  fn->name, (int)fn->args_min, (int)fn->args_max, (int)n_args);
	}
	memset(converted, 0, sizeof(converted));
	for (size_t i = 0; i < n_args; i++) {
		converted[i].present = true;
		if (fn->types[i] == SCRIPT_ARG_STR) {
			converted[i].str = mp_obj_str_get_data(args[i], &converted[i].len);
		} else {
			converted[i].integer = mp_obj_get_int(args[i]);
		}
	}
	memset(&sink, 0, sizeof(sink));
	sink.result = mp_const_none;
	error[0] = '\0';
	err = script_api_call(modules_ex, fn, converted, (uint8_t)n_args, &out, error);
	/* A call that waited (sleep_ms) returns early when the run must stop: stop it now. */
	why = script_exec_check(modules_ex);
	if (why != SCRIPT_COMPLETED) {
		python_stop(why);
	}
	if (err < 0) {
		error[SCRIPT_ERROR_MAX] = '\0';
		raise_api_error(err, error);
	}
	return sink.result;
}

static MP_DEFINE_CONST_OBJ_TYPE(device_fn_type, MP_QSTR_function, MP_TYPE_FLAG_NONE, call,
				device_fn_call);

/* ---- time --------------------------------------------------------------------------------- */

static void sleep_for(mp_int_t ms)
{
	enum script_outcome why;

	if (ms <= 0) {
		return;
	}
	why = script_exec_sleep(modules_ex, ms > (mp_int_t)UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
	if (why != SCRIPT_COMPLETED) {
		python_stop(why);
	}
}

static mp_obj_t time_sleep(mp_obj_t seconds)
{
	mp_float_t ms = mp_obj_get_float(seconds) * (mp_float_t)1000.0;

	if (ms > (mp_float_t)UINT32_MAX) {
		ms = (mp_float_t)UINT32_MAX;
	}
	sleep_for(ms > 0 ? (mp_int_t)ms : 0);
	return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(time_sleep_obj, time_sleep);

static mp_obj_t time_sleep_ms(mp_obj_t ms)
{
	sleep_for(mp_obj_get_int(ms));
	return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(time_sleep_ms_obj, time_sleep_ms);

static mp_obj_t time_ticks_ms(void)
{
	return mp_obj_new_int_from_ll((long long)agent_uptime_ms());
}
static MP_DEFINE_CONST_FUN_OBJ_0(time_ticks_ms_obj, time_ticks_ms);

static mp_obj_t time_ticks_diff(mp_obj_t end, mp_obj_t start)
{
	return mp_binary_op(MP_BINARY_OP_SUBTRACT, end, start);
}
static MP_DEFINE_CONST_FUN_OBJ_2(time_ticks_diff_obj, time_ticks_diff);

/* ---- The modules -------------------------------------------------------------------------- */

void python_modules_init(struct script_exec *ex)
{
	mp_obj_t device = mp_obj_new_module(MP_QSTR_device);
	mp_obj_t time = mp_obj_new_module(MP_QSTR_time);
	size_t count = script_api_count();

	modules_ex = ex;
	for (size_t i = 0; i < count; i++) {
		const struct script_fn *fn = script_api_get(i);
		struct device_fn_obj *obj = mp_obj_malloc(struct device_fn_obj, &device_fn_type);

		obj->fn = fn;
		mp_store_attr(device, qstr_from_str(fn->name), MP_OBJ_FROM_PTR(obj));
	}
	mp_store_attr(time, MP_QSTR_sleep, MP_OBJ_FROM_PTR(&time_sleep_obj));
	mp_store_attr(time, MP_QSTR_sleep_ms, MP_OBJ_FROM_PTR(&time_sleep_ms_obj));
	mp_store_attr(time, MP_QSTR_ticks_ms, MP_OBJ_FROM_PTR(&time_ticks_ms_obj));
	mp_store_attr(time, MP_QSTR_ticks_diff, MP_OBJ_FROM_PTR(&time_ticks_diff_obj));
}
