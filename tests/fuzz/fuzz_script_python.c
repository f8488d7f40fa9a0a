/*
 * libFuzzer target: arbitrary Python source through the script runner (app/src/runtimes/python;
 * fuzz_script.h has the checks).
 */
#define FUZZ_SCRIPT_LANG SCRIPT_LANG_PYTHON
#include "fuzz_script.h"
