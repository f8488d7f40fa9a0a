/*
 * MicroPython's HAL for the agent's script runner: the functions py/mphal.h declares that the
 * core calls are in python_runtime.c (output goes to the run's capture, never to a console).
 * There is no stdin, no interrupt character and no delay outside the time module.
 */
#ifndef AGENT_MPHALPORT_H
#define AGENT_MPHALPORT_H

/* No machine.Pin: scripts reach GPIO through the device module. Naming a pin type keeps
 * py/mphal.h from pulling in extmod's virtual pins, which are not fetched. */
#define mp_hal_pin_obj_t void *

#endif /* AGENT_MPHALPORT_H */
