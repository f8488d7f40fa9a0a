/*
 * libFuzzer target: arbitrary Lua source through the script runner (app/src/runtimes/lua;
 * fuzz_script.h has the checks).
 */
#define FUZZ_SCRIPT_LANG SCRIPT_LANG_LUA
#include "fuzz_script.h"
