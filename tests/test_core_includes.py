"""The portable core reaches the OS only through the port header (DESIGN.md section 4)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE_DIRS = [REPO / "app" / "src" / "agent", REPO / "app" / "src" / "tools"]

# C11 freestanding and hosted library headers; nothing from POSIX or Zephyr.
C_STANDARD_HEADERS = {
    "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h",
    "iso646.h", "limits.h", "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h",
    "stdarg.h", "stdatomic.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
    "stdnoreturn.h", "string.h", "tgmath.h", "threads.h", "time.h", "uchar.h", "wchar.h",
    "wctype.h",
}
# zcbor, the CBOR library of the SMP management group (mgmt_*.c): a portable C library the
# core depends on like the C library, fetched for the simulator (scripts/fetch_zcbor.py) and
# the ZCBOR module on Zephyr. Zephyr's MCUmgr includes it by these names, with <>.
ZCBOR_HEADERS = {"zcbor_common.h", "zcbor_decode.h", "zcbor_encode.h"}
# Of those, these would reach OS services behind the port's back.
FORBIDDEN_EVEN_IF_STANDARD = {"threads.h", "signal.h", "time.h", "locale.h", "setjmp.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)


def core_files() -> list[Path]:
    return sorted(p for d in CORE_DIRS if d.exists() for p in d.rglob("*.[ch]"))


def offending_includes(path: Path) -> list[str]:
    bad = []
    local = {p.name for d in CORE_DIRS if d.exists() for p in d.rglob("*.h")} | {"agent_port.h"}
    for kind, name in INCLUDE.findall(path.read_text()):
        if kind == "<" and name in ZCBOR_HEADERS:
            continue
        if kind == "<" and (name not in C_STANDARD_HEADERS or name in FORBIDDEN_EVEN_IF_STANDARD):
            bad.append(f"<{name}>")
        elif kind == '"' and Path(name).name not in local:
            bad.append(f'"{name}"')
    return bad


def test_core_has_files() -> None:
    assert len(core_files()) >= 5


def test_core_includes_no_os_header() -> None:
    report = {str(p.relative_to(REPO)): offending_includes(p) for p in core_files()}
    assert {k: v for k, v in report.items() if v} == {}


def test_checker_catches_os_headers(tmp_path: Path) -> None:
    sample = tmp_path / "x.c"
    sample.write_text('#include <zephyr/kernel.h>\n#include <unistd.h>\n#include "../port/posix/x.h"\n'
                      "#include <string.h>\n")
    assert offending_includes(sample) == ["<zephyr/kernel.h>", "<unistd.h>", '"../port/posix/x.h"']


MALLOC_CALL = re.compile(r"\b(malloc|calloc|realloc|free)\s*\(")
# String and character literals and comments, which may say "free (" harmlessly.
NOT_CODE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.DOTALL)


def calls_malloc(text: str) -> bool:
    return MALLOC_CALL.search(NOT_CODE.sub(" ", text)) is not None


def test_core_calls_no_malloc() -> None:
    users = [str(p.relative_to(REPO)) for p in core_files() if calls_malloc(p.read_text())]
    assert users == []


def test_malloc_check_sees_code_not_text() -> None:
    assert calls_malloc("void f(void) { char *p = malloc(4); }")
    assert calls_malloc("x = calloc (1, 2);")
    assert not calls_malloc('printf("%u free (lowest %u)", a, b); /* free(x) */ // free(y)')
    assert not calls_malloc("size_t blocks_free;")
