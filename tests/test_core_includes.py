"""The portable core reaches the OS only through the port header (DESIGN.md section 4), and
its folders include each other only downwards (docs/architecture.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "app" / "src"
PORT = "port"  # app/src/port/agent_port.h, the one header every layer may include

# The core's folders, bottom layer first, each with the folders it may include besides itself
# and the port header. A folder may include any layer below it that it is given here, never
# one above; a header named *_internal.h is included only by files in its own folder.
LAYERS: dict[str, frozenset[str]] = {
    "agent/state": frozenset(),
    "agent/wire": frozenset({"agent/state"}),
    "tools": frozenset({"agent/state", "agent/wire"}),
    "script": frozenset({"agent/state", "agent/wire", "tools"}),
    "modules": frozenset({"agent/state", "agent/wire", "tools", "script"}),
    "agent/store": frozenset({"agent/state", "agent/wire"}),
    "agent/provider": frozenset({"agent/state", "agent/wire"}),
    "agent/request": frozenset({"agent/state", "agent/wire", "tools", "modules",
                                "agent/provider"}),
    "agent/shell": frozenset({"agent/state", "agent/wire", "tools", "script", "modules",
                              "agent/store", "agent/provider", "agent/request"}),
    "agent/mgmt": frozenset({"agent/state", "agent/wire", "tools", "script", "modules",
                             "agent/store", "agent/provider", "agent/request", "agent/shell"}),
}
CORE_DIRS = [SRC / name for name in LAYERS]

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
# Headers the build generates for the core from its own sources (no OS in them): the tool
# texts' declarations (scripts/gen_reference.py --texts-h, app/src/tools/packed_text.h).
GENERATED_HEADERS = {"packed_texts.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)


def core_files() -> list[Path]:
    return sorted(p for d in CORE_DIRS if d.exists() for p in d.rglob("*.[ch]"))


def offending_includes(path: Path) -> list[str]:
    bad = []
    local = ({p.name for d in CORE_DIRS if d.exists() for p in d.rglob("*.h")}
             | {"agent_port.h"} | GENERATED_HEADERS)
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


def header_folders(src: Path = SRC) -> dict[str, str]:
    """Map each core header's name to its folder (headers are included by name)."""
    where = {"agent_port.h": PORT}
    for name in LAYERS:
        for header in sorted((src / name).glob("*.h")):
            assert header.name not in where, f"{header.name} is in two folders"
            where[header.name] = name
    return where


def direction_violations(src: Path = SRC) -> list[str]:
    """Every quoted include of a core file that goes up, sideways, or into another folder's
    internal header, as "folder/file.c includes name.h (folder)"."""
    where = header_folders(src)
    bad = []
    for folder, allowed in LAYERS.items():
        for path in sorted((src / folder).glob("*.[ch]")):
            for kind, name in INCLUDE.findall(path.read_text()):
                target = where.get(Path(name).name)
                if kind != '"' or target is None or target in (folder, PORT):
                    continue
                internal = Path(name).name.endswith("_internal.h")
                if target not in allowed or internal:
                    why = "internal header of" if internal and target in allowed else "from"
                    bad.append(f"{folder}/{path.name} includes {name} ({why} {target})")
    return bad


def test_core_folders_are_the_layers() -> None:
    """Nothing sits loose in app/src/agent, and no core folder is outside the table."""
    agent = SRC / "agent"
    assert sorted(p.name for p in agent.iterdir() if p.is_file() and p.suffix in (".c", ".h")) == []
    assert {f"agent/{p.name}" for p in agent.iterdir() if p.is_dir()} == {
        name for name in LAYERS if name.startswith("agent/")}


def test_core_folders_say_what_they_hold() -> None:
    missing = [name for name in LAYERS if not (SRC / name / "README.md").is_file()]
    assert missing == []


def test_core_includes_go_down_only() -> None:
    assert direction_violations() == []


def make_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "src"
    for name in LAYERS:
        (src / name).mkdir(parents=True)
    for rel, text in files.items():
        (src / rel).write_text(text)
    return src


@pytest.mark.parametrize(("files", "expected"), [
    # A tool reaching up into the shell.
    ({"agent/shell/agent_print.h": "", "tools/tool_x.c": '#include "agent_print.h"\n'},
     ["tools/tool_x.c includes agent_print.h (from agent/shell)"]),
    # Sideways: the store and the provider are peers.
    ({"agent/provider/provider.h": "", "agent/store/conv.c": '#include "provider.h"\n'},
     ["agent/store/conv.c includes provider.h (from agent/provider)"]),
    # Down, but into another folder's internal header.
    ({"agent/store/conv_store_internal.h": "",
      "agent/shell/chat.c": '#include "conv_store_internal.h"\n'},
     ["agent/shell/chat.c includes conv_store_internal.h (internal header of agent/store)"]),
    # Allowed: down, the own folder, the port header, the C library.
    ({"agent/wire/utf8.h": "", "agent/shell/agent_cmd_internal.h": "",
      "agent/shell/cmd.c": '#include <string.h>\n#include "agent_port.h"\n#include "utf8.h"\n'
                           '#include "agent_cmd_internal.h"\n'},
     []),
])
def test_direction_check_catches_upward_includes(tmp_path: Path, files: dict[str, str],
                                                 expected: list[str]) -> None:
    assert direction_violations(make_tree(tmp_path, files)) == expected


def test_both_builds_compile_the_folders_of_the_table() -> None:
    """app/src/core.cmake, which both builds include, lists the table's folders in order."""
    text = (SRC / "core.cmake").read_text()
    listed = re.findall(r"\$\{CMAKE_CURRENT_LIST_DIR\}/([a-z/]+)", text)
    assert listed == list(LAYERS)


# The script runtimes' adapters (app/src/runtimes/NAME): what they may include of the agent
# is the runner's contract and the port header; the rest is their interpreter and C.
RUNTIMES = SRC / "runtimes"
RUNTIME_CONTRACT = {"script_runtime.h", "script_runner.h", "agent_port.h"}
INTERPRETER_HEADERS = {"lua": re.compile(r"^(lua|lauxlib|lualib)\.h$"),
                       "python": re.compile(r"^(py|genhdr)/[\w/]+\.h$")}


def runtime_include_violations(runtimes: Path = RUNTIMES) -> list[str]:
    """Every include of an adapter file that is neither its own folder's, the runner's
    contract, its interpreter's nor a C standard header, as "NAME/file includes X"."""
    bad = []
    for folder in sorted(p for p in runtimes.iterdir() if p.is_dir()):
        own = {p.name for p in folder.glob("*.h")}
        interp = INTERPRETER_HEADERS.get(folder.name)
        for path in sorted(folder.glob("*.[ch]")):
            for kind, name in INCLUDE.findall(path.read_text()):
                if kind == "<":
                    ok = name in C_STANDARD_HEADERS
                else:
                    ok = (name in own or name in RUNTIME_CONTRACT
                          or (interp is not None and interp.match(name) is not None))
                if not ok:
                    bad.append(f"{folder.name}/{path.name} includes {name}")
    return bad


def test_runtimes_reach_the_agent_only_through_the_runner_contract() -> None:
    assert sorted(p.name for p in RUNTIMES.iterdir() if p.is_dir()) == ["lua", "python"]
    assert runtime_include_violations() == []


def test_runtime_check_catches_a_reach_into_the_core(tmp_path: Path) -> None:
    lua = tmp_path / "lua"
    lua.mkdir()
    (lua / "lua_runtime.c").write_text('#include "lua.h"\n#include "script_runtime.h"\n'
                                       '#include "script_internal.h"\n#include <zephyr/kernel.h>\n')
    assert runtime_include_violations(tmp_path) == [
        "lua/lua_runtime.c includes script_internal.h", "lua/lua_runtime.c includes zephyr/kernel.h"]
