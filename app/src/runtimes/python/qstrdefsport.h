// The names the adapter uses that MicroPython's own sources do not (python_device.c):
// the modules it builds at the start of each run and their functions. The device API's
// function names are made into qstrs at run time from the runner's table.
Q(device)
Q(time)
Q(sleep)
Q(sleep_ms)
Q(ticks_ms)
Q(ticks_diff)
