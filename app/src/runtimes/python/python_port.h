/*
 * What the two files of the MicroPython adapter share (docs/scripting-python.md):
 * python_runtime.c runs a script and owns the run's state; python_device.c builds the
 * `device` and `time` modules at the start of each run.
 */
#ifndef AGENT_PYTHON_PORT_H
#define AGENT_PYTHON_PORT_H

#include "script_runtime.h"

/** Put `device` and `time` into sys.modules for the run of @p ex (may raise MemoryError). */
void python_modules_init(struct script_exec *ex);

/**
 * End the run now for @p why (SCRIPT_CANCELLED or SCRIPT_DEADLINE): unwinds to the adapter's
 * top level through a VM abort, past any `try` of the script. Does not return.
 */
void python_stop(enum script_outcome why) __attribute__((noreturn));

#endif /* AGENT_PYTHON_PORT_H */
