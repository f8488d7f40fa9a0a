/*
 * MicroPython's configuration for the agent's script runner (docs/scripting-python.md).
 *
 * The interpreter runs one script at a time on the caller's 16 KiB worker stack, with its
 * garbage-collected heap taken from the runtime's region for the length of the run. It has
 * the compiler (scripts arrive as source), no REPL, no stdin, no filesystem and no import of
 * anything but the built-in modules: a script reaches files and the board through the
 * `device` module the adapter builds from the runner's device API table (python_device.c).
 *
 * This header is read by MicroPython's own sources and by the qstr scan at build time, so it
 * includes nothing of the agent and no Kconfig symbol: the run-time limits (stack, heap) are
 * set by the adapter (python_runtime.c).
 */
#ifndef AGENT_MPCONFIGPORT_H
#define AGENT_MPCONFIGPORT_H

#include <stdint.h>

/* Start from the "basic features" level, then add and remove below. */
#define MICROPY_CONFIG_ROM_LEVEL (MICROPY_CONFIG_ROM_LEVEL_BASIC_FEATURES)

/* Compiler and VM. No native or inline-assembler emitters (no executable RAM). */
#define MICROPY_ENABLE_COMPILER	    (1)
#define MICROPY_PERSISTENT_CODE_LOAD (0)
#define MICROPY_HELPER_REPL	    (0)
#define MICROPY_ENABLE_SOURCE_LINE  (1) /* the line of an exception (status "line") */
#define MICROPY_ERROR_REPORTING	    (MICROPY_ERROR_REPORTING_DETAILED)
#define MICROPY_WARNINGS	    (0)

/* Non-local return with setjmp/longjmp: portable to every target of the firmware. */
#define MICROPY_NLR_SETJMP (1)

/* Memory: the GC heap is one block of the run's region, given to gc_init() per run. */
#define MICROPY_ENABLE_GC	    (1)
#define MICROPY_ENABLE_FINALISER    (0)
#define MICROPY_GC_ALLOC_THRESHOLD  (0)
#define MICROPY_ALLOC_PATH_MAX	    (64)
/* An exception raised with the heap full (the stack check after a deep recursion filled it
 * with frames) keeps its message and some traceback in a static buffer. */
#define MICROPY_ENABLE_EMERGENCY_EXCEPTION_BUF (1)
#define MICROPY_EMERGENCY_EXCEPTION_BUF_SIZE	(256)

/*
 * Python frames live on a "Python stack" of their own, a part of the run's heap block
 * (python_runtime.c): allocated and freed in order, scanned by the collector, never garbage.
 * A Python function calling a Python function does not nest C frames either: the VM goes on
 * in the same C loop with the callee's frame on that stack. Recursion ends with
 * "RuntimeError: pystack exhausted" when the Python stack is full.
 */
#define MICROPY_ENABLE_PYSTACK	 (1)
#define MICROPY_STACKLESS	 (1)
#define MICROPY_STACKLESS_STRICT (1)

/* The C stack: checked against the limit python_runtime.c sets for each run. */
#define MICROPY_STACK_CHECK (1)
/*
 * Some C paths recurse without a stack check of MicroPython's own: comparing and hashing
 * nested containers (==, <, in, hash() of nested tuples). They all ask mp_obj_get_type() at
 * each level, so its definition is renamed here and python_runtime.c defines
 * mp_obj_get_type() as the stack check followed by the renamed function.
 */
#define MICROPY_WRAP_MP_OBJ_GET_TYPE(f) agent_python_unchecked_##f

/*
 * Stopping a run (deadline, Esc / Ctrl-X): the VM calls the hook on every backward branch and
 * every return; every SCRIPT_HOOK_INSTRUCTIONS calls it asks the runner, and when the run
 * must stop it schedules a VM abort, which unwinds straight to the adapter's top level (no
 * exception a script could catch).
 */
#define MICROPY_ENABLE_VM_ABORT (1)
#define MICROPY_ENABLE_SCHEDULER (0)
#define MICROPY_KBD_EXCEPTION	 (0)
void agent_python_vm_hook(void);
#define MICROPY_VM_HOOK_LOOP   agent_python_vm_hook();
#define MICROPY_VM_HOOK_RETURN agent_python_vm_hook();

/*
 * Numbers: double-precision floats (as Lua's) and Python's arbitrary-precision integers
 * (MicroPython's 64-bit "long long" integers wrap around silently on overflow). A big
 * integer is bounded by the heap, so one operation on it is bounded in time too.
 */
#define MICROPY_FLOAT_IMPL	   (MICROPY_FLOAT_IMPL_DOUBLE)
#define MICROPY_LONGINT_IMPL	   (MICROPY_LONGINT_IMPL_MPZ)
#define MICROPY_PY_BUILTINS_COMPLEX (0)
#define MICROPY_PY_CMATH	   (0)

/* Language features scripts written by a model use. */
#define MICROPY_PY_FSTRINGS		  (1)
#define MICROPY_PY_BUILTINS_STR_UNICODE	  (1)
#define MICROPY_PY_BUILTINS_STR_PARTITION (1)
#define MICROPY_PY_BUILTINS_STR_SPLITLINES (1)
#define MICROPY_PY_BUILTINS_ROUND_INT	  (1)
#define MICROPY_PY_BUILTINS_INPUT	  (0) /* no stdin */
#define MICROPY_PY_BUILTINS_HELP	  (0)
#define MICROPY_PY_BUILTINS_EXECFILE	  (0)
/* No compiler at run time: the adapter bounds the depth of what it compiles (python_runtime.c,
 * PYTHON_PARSE_DEPTH_MAX), and eval(), exec() and compile() would pass by that check. */
#define MICROPY_PY_BUILTINS_EVAL_EXEC	  (0)
#define MICROPY_PY_BUILTINS_COMPILE	  (0)
#define MICROPY_PY_MICROPYTHON_MEM_INFO	  (0)

/* Modules: sys (argv, exit), math, gc, struct, collections, array, micropython; the adapter
 * adds device and time. Nothing reads files or the console. */
#define MICROPY_ENABLE_EXTERNAL_IMPORT	  (0)
#define MICROPY_PY_SYS			  (1)
#define MICROPY_PY_SYS_ARGV		  (1)
#define MICROPY_PY_SYS_EXIT		  (1)
#define MICROPY_PY_SYS_PATH		  (0)
#define MICROPY_PY_SYS_MAXSIZE		  (1)
#define MICROPY_PY_SYS_STDFILES		  (0)
#define MICROPY_PY_SYS_STDIO_BUFFER	  (0)
#define MICROPY_PY_SYS_PLATFORM		  "agent"
#define MICROPY_PY_IO			  (0)
#define MICROPY_PY_TIME			  (0) /* python_device.c has its own, on the runner */
#define MICROPY_PY_ERRNO		  (0)
#define MICROPY_PY_THREAD		  (0)
#define MICROPY_MODULE_FROZEN_MPY	  (0)
#define MICROPY_MODULE_FROZEN_STR	  (0)
#define MICROPY_USE_INTERNAL_PRINTF	  (0)
#define MICROPY_HW_BOARD_NAME		  "agent"
#define MICROPY_HW_MCU_NAME		  "script runner"

/* Types. */
typedef intptr_t mp_int_t;
typedef uintptr_t mp_uint_t;
typedef long mp_off_t;
#define MP_SSIZE_MAX INTPTR_MAX /* SSIZE_MAX is POSIX, not ISO C */

/* alloca(), which some of MicroPython's sources use for small temporaries. */
#ifndef alloca
#define alloca(size) __builtin_alloca(size)
#endif

#define MP_STATE_PORT MP_STATE_VM

#endif /* AGENT_MPCONFIGPORT_H */
