/*
 * The MicroPython runtime of the script runner (docs/scripting-python.md): one run is
 * gc_init() over one block of the run's region, mp_init(), the device and time modules,
 * sys.argv, compile and execute, the outcome mapped onto the runner's status, mp_deinit()
 * and the block given back. Also the port functions MicroPython's core calls: the output
 * HAL, the garbage collector's root scan and the VM hook that stops a run.
 *
 * One run at a time: the runner's guard ("script_python") keeps two runs apart, so the
 * interpreter's global state and the run below are plain statics.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "py/compile.h"
#include "py/gc.h"
#include "py/lexer.h"
#include "py/mphal.h"
#include "py/nlr.h"
#include "py/parse.h"
#include "py/runtime.h"
#include "py/stackctrl.h"

#include "python_port.h"
#include "script_runtime.h"

/*
 * The region keeps this much free beside the GC heap: what a device API call takes from it
 * for a moment (script_runtime.h), with room for the region's own bookkeeping.
 */
#define PYTHON_REGION_RESERVE (SCRIPT_API_SCRATCH_BYTES + 64u)
/* A GC heap smaller than this cannot even start the interpreter. */
#define PYTHON_HEAP_MIN 4096u
/* The share of the heap block that is the Python stack (its frames, mpconfigport.h). */
#define PYTHON_PYSTACK_SHARE 8u

/*
 * The deepest parse tree the compiler is given. MicroPython's parser keeps its own stack in
 * the heap, but its compiler recurses over the tree without checking the C stack; a deeper
 * tree is refused as a SyntaxError before compiling. eval(), exec() and compile() are left
 * out of the build (mpconfigport.h), so nothing else reaches the compiler.
 */
#define PYTHON_PARSE_DEPTH_MAX 48u

static struct script_exec *run_ex;
static unsigned int hook_countdown;
static enum script_outcome stop_reason;
static bool stack_raising;

/* ---- Port functions MicroPython calls ----------------------------------------------------- */

mp_uint_t mp_hal_stdout_tx_strn(const char *str, size_t len)
{
	if (run_ex != NULL) {
		script_exec_write(run_ex, str, len);
	}
	return len;
}

void mp_hal_stdout_tx_strn_cooked(const char *str, size_t len)
{
	(void)mp_hal_stdout_tx_strn(str, len);
}

void mp_hal_stdout_tx_str(const char *str)
{
	(void)mp_hal_stdout_tx_strn(str, strlen(str));
}

void python_stop(enum script_outcome why)
{
	stop_reason = why;
	mp_sched_vm_abort();
	mp_handle_pending(true);
	/* Not reached: the abort buffer is set for the whole run. */
	abort();
}

/* Every SCRIPT_HOOK_INSTRUCTIONS calls: whether the run must stop (then remembered). */
static bool must_stop(void)
{
	enum script_outcome why;

	if (run_ex == NULL || --hook_countdown != 0u) {
		return false;
	}
	hook_countdown = SCRIPT_HOOK_INSTRUCTIONS;
	why = script_exec_check(run_ex);
	if (why == SCRIPT_COMPLETED) {
		return false;
	}
	stop_reason = why;
	return true;
}

void agent_python_vm_hook(void)
{
	if (must_stop()) {
		/* The VM aborts at its pending check right after the hook. */
		mp_sched_vm_abort();
	}
}

/*
 * The conservative scan of the C stack, from this function's frame up to the top the run
 * recorded. Every word is read as is, redzones included, so AddressSanitizer must not check
 * these reads; each word goes to the collector as a root of its own.
 */
__attribute__((noinline, no_sanitize_address)) static void scan_stack(void)
{
	const uintptr_t *word = __builtin_frame_address(0);
	const uintptr_t *top = (const uintptr_t *)MP_STATE_THREAD(stack_top);

	for (; word < top; word++) {
		void *candidate = (void *)*word;

		gc_collect_root(&candidate, 1);
	}
}

void gc_collect(void)
{
	jmp_buf regs;

	/* Callee-saved registers onto this frame (scanned) and into regs (scanned too). */
	__builtin_unwind_init();
	(void)setjmp(regs);
	gc_collect_start();
	gc_collect_root((void **)(void *)&regs, sizeof(regs) / (sizeof(void *)));
	scan_stack();
	gc_collect_end();
}

/* MicroPython's mp_obj_get_type(), renamed by MICROPY_WRAP_MP_OBJ_GET_TYPE (mpconfigport.h). */
const mp_obj_type_t *agent_python_unchecked_mp_obj_get_type(mp_const_obj_t o_in);

/*
 * The stack check of the C paths that have none (mpconfigport.h), and the stop check of long
 * loops in C (below). The RuntimeError is made
 * with the check off, since making it asks for types too; making it does not raise (without
 * memory MicroPython falls back on its static exception object).
 */
const mp_obj_type_t *mp_obj_get_type(mp_const_obj_t o_in)
{
	const char *here = __builtin_frame_address(0);

	if ((size_t)(MP_STATE_THREAD(stack_top) - here) >= MP_STATE_THREAD(stack_limit) &&
	    !stack_raising) {
		mp_obj_t exc;

		stack_raising = true;
		exc = mp_obj_new_exception_msg(&mp_type_RuntimeError,
					       MP_ERROR_TEXT("maximum recursion depth exceeded"));
		stack_raising = false;
		nlr_raise(exc);
	}
	/* A long loop inside one C function (sum(range(10 ** 12))) asks for types as it goes but
	 * never reaches the VM's hook: the stop is checked here too, where an abort can land. */
	if (must_stop() && nlr_get_abort() != NULL) {
		python_stop(stop_reason);
	}
	return agent_python_unchecked_mp_obj_get_type(o_in);
}

void nlr_jump_fail(void *val)
{
	(void)val;
	/* An exception with no handler: cannot happen, every entry point pushes one. */
	abort();
}

/* ---- The run ------------------------------------------------------------------------------ */

struct text_buf {
	char *text;
	size_t cap;
	size_t len;
};

static void text_buf_strn(void *env, const char *str, size_t len)
{
	struct text_buf *buf = env;
	size_t room = buf->cap - 1u - buf->len;

	if (len > room) {
		len = room;
	}
	memcpy(buf->text + buf->len, str, len);
	buf->len += len;
	buf->text[buf->len] = '\0';
}

/*
 * str(@p obj) into @p text (cut at @p cap - 1 bytes; "" when printing it raises). Printing
 * may run the script's own __str__: false when the run was stopped meanwhile.
 */
static bool object_text(mp_obj_t obj, char *text, size_t cap)
{
	struct text_buf buf = {text, cap, 0u};
	mp_print_t print = {&buf, text_buf_strn};
	nlr_buf_t nlr;

	text[0] = '\0';
	nlr_set_abort(&nlr);
	if (nlr_push(&nlr) != 0) {
		nlr_set_abort(NULL);
		return nlr.ret_val != NULL;
	}
	mp_obj_print_helper(&print, obj, PRINT_STR);
	nlr_pop();
	nlr_set_abort(NULL);
	return true;
}

static void report_exception(struct script_exec *ex, mp_obj_t exc)
{
	const mp_obj_type_t *type = mp_obj_get_type(exc);
	char message[SCRIPT_MESSAGE_MAX + 1];
	size_t count = 0u;
	size_t *entries = NULL;
	int32_t line = 0;

	if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(type), MP_OBJ_FROM_PTR(&mp_type_MemoryError))) {
		script_exec_out_of_memory(ex);
		return;
	}
	if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(type), MP_OBJ_FROM_PTR(&mp_type_SystemExit))) {
		mp_obj_t code = mp_obj_exception_get_value(exc);

		/* sys.exit() and sys.exit(0) end the script normally. */
		if (code == mp_const_none ||
		    (mp_obj_is_small_int(code) && MP_OBJ_SMALL_INT_VALUE(code) == 0)) {
			return;
		}
	}
	if (!object_text(exc, message, sizeof(message))) {
		script_exec_stopped(ex, stop_reason);
		return;
	}
	/* The innermost entry is the first: entries are added as the exception travels out. */
	mp_obj_exception_get_traceback(exc, &count, &entries);
	if (count >= 3u && entries[1] <= (size_t)INT32_MAX) {
		line = (int32_t)entries[1];
	}
	script_exec_exception(ex, qstr_str(type->name), message, line);
}

/*
 * The parser's rule numbers, as py/grammar.h lists them: the rules with a compile function,
 * then the node kind that carries a constant object (its "children" are not parse nodes).
 */
enum python_rule {
#define DEF_RULE(rule, comp, kind, ...) PYTHON_RULE_##rule,
#define DEF_RULE_NC(rule, kind, ...)
#include "py/grammar.h"
#undef DEF_RULE
#undef DEF_RULE_NC
	PYTHON_RULE_const_object,
};

/* Refuse a parse tree deeper than PYTHON_PARSE_DEPTH_MAX (see there); 0 when it fits. */
static uint32_t too_deep_line(mp_parse_node_t node, unsigned int depth)
{
	const mp_parse_node_struct_t *pns;
	size_t count;

	if (!MP_PARSE_NODE_IS_STRUCT(node)) {
		return 0u;
	}
	pns = (const mp_parse_node_struct_t *)node;
	if (depth >= PYTHON_PARSE_DEPTH_MAX) {
		return pns->source_line != 0u ? pns->source_line : 1u;
	}
	if (MP_PARSE_NODE_STRUCT_KIND(pns) == PYTHON_RULE_const_object) {
		return 0u;
	}
	count = MP_PARSE_NODE_STRUCT_NUM_NODES(pns);
	for (size_t i = 0; i < count; i++) {
		uint32_t line = too_deep_line(pns->nodes[i], depth + 1u);

		if (line != 0u) {
			return line;
		}
	}
	return 0u;
}

static void set_argv(struct script_exec *ex)
{
	uint8_t argc = script_exec_argc(ex);

	for (uint8_t i = 0; i < argc; i++) {
		const char *arg = script_exec_arg(ex, i);

		mp_obj_list_append(mp_sys_argv, mp_obj_new_str(arg, strlen(arg)));
	}
}

static void compile_and_run(struct script_exec *ex)
{
	size_t len = 0u;
	const char *source = script_exec_source(ex, &len);
	const char *chunk = script_exec_chunk_name(ex);
	qstr name = qstr_from_str(chunk);
	mp_lexer_t *lex = mp_lexer_new_from_str_len(name, source, len, 0u);
	mp_parse_tree_t tree = mp_parse(lex, MP_PARSE_FILE_INPUT);
	uint32_t deep = too_deep_line(tree.root, 0u);
	mp_obj_t module;

	if (deep != 0u) {
		mp_obj_t exc = mp_obj_new_exception_msg(&mp_type_SyntaxError,
							MP_ERROR_TEXT("too deeply nested"));

		mp_obj_exception_add_traceback(exc, name, deep, MP_QSTRnull);
		nlr_raise(exc);
	}
	module = mp_compile(&tree, name, false);
	/* The lexer read the source in place; the compiled code holds copies. */
	script_exec_release_source(ex);
	mp_call_function_0(module);
}

/*
 * The run inside the interpreter: run_ex is read after a non-local return rather than a
 * parameter, so no local of this frame lives across the setjmp of nlr_push().
 */
static void run_in_vm(void)
{
	nlr_buf_t nlr;

	nlr_set_abort(&nlr);
	if (nlr_push(&nlr) == 0) {
		python_modules_init(run_ex);
		set_argv(run_ex);
		compile_and_run(run_ex);
		nlr_pop();
		nlr_set_abort(NULL);
		return;
	}
	/* From here on a stop has nowhere to land but where report_exception() puts it. */
	nlr_set_abort(NULL);
	if (nlr.ret_val == NULL) {
		/* The VM abort of python_stop() or of the hook. */
		script_exec_stopped(run_ex, stop_reason);
	} else {
		report_exception(run_ex, MP_OBJ_FROM_PTR(nlr.ret_val));
	}
}

/*
 * The C stack the interpreter may take below the adapter's frame: the runner's share of the
 * thread's stack (script_exec_c_stack_max(), half of it), halved again on a 64-bit host,
 * whose frames are about twice a 32-bit device's and whose threads (the simulator's) keep
 * their C library's thread data inside the stack: at the full share, comparing nested tuples
 * overran the plain simulator's 16 KiB thread.
 */
static size_t stack_limit(struct script_exec *ex)
{
	size_t limit = script_exec_c_stack_max(ex);

#if UINTPTR_MAX > 0xffffffffu
	limit /= 2u;
#endif
	return limit;
}

static void python_run(struct script_exec *ex)
{
	struct agent_region *region = script_exec_heap(ex);
	struct agent_region_stats stats;
	size_t bytes = 0u;
	size_t pystack;
	char *heap;

	if (agent_region_stats(region, &stats) == 0 &&
	    stats.largest_free_bytes > PYTHON_REGION_RESERVE) {
		bytes = (stats.largest_free_bytes - PYTHON_REGION_RESERVE) & ~(size_t)7u;
	}
	heap = bytes >= PYTHON_HEAP_MIN + bytes / PYTHON_PYSTACK_SHARE
		       ? agent_region_alloc(region, bytes)
		       : NULL;
	if (heap == NULL) {
		script_exec_out_of_memory(ex);
		return;
	}

	run_ex = ex;
	hook_countdown = SCRIPT_HOOK_INSTRUCTIONS;
	stop_reason = SCRIPT_COMPLETED;
	stack_raising = false;
	/* The frame address, not a local's: under AddressSanitizer a local may live elsewhere. */
	mp_stack_set_top(__builtin_frame_address(0));
	mp_stack_set_limit(stack_limit(ex));
	pystack = (bytes / PYTHON_PYSTACK_SHARE) & ~(size_t)7u;
	mp_pystack_init(heap, heap + pystack);
	gc_init(heap + pystack, heap + bytes);
	mp_init();
	run_in_vm();
	MP_STATE_VM(vm_abort) = false;
	mp_deinit();
	agent_region_free(region, heap);
	run_ex = NULL;
}

static const struct script_runtime python_runtime = {
	.lang = SCRIPT_LANG_PYTHON,
	.name = "python",
	.job = "script_python",
	.run = python_run,
};

const struct script_runtime *script_runtime_python(void)
{
	return &python_runtime;
}
