"""`agent script` over the console, in both languages and both forms (docs/scripting.md): the
output and its 4095-byte bound, the status line, exceptions with their line, the argument
bound, Esc and Ctrl-X cancelling an endless loop within a second, the deadline, a script
that exhausts its heap, the device API's file access and its refusals."""

from __future__ import annotations

import re
import time

import pytest
from agent_host.testing.sim_device import PROMPT, SimDevice

LANGS = ["python", "lua"]
EXT = {"python": "py", "lua": "lua"}
OUTPUT_MAX = 4095
ARGS_MAX = 7
STATUS = re.compile(rb"\[script\] [^\r\n]*\r\n")

#: The same small programs in each language: one line, no double quote and no backslash (the
#: simulator's line editor and Zephyr's shell treat a backslash differently).
SRC = {
    "python": {
        "answer": "print(6 * 7)",
        "loop": "while True: pass",
        "print_n": "print('x' * {n})",
        "hog": "a = []; [a.append('x' * 1000) for i in range(10 ** 9)]",
        "write": "import device; device.write('{path}', chr(10).join([{lines}]))",
        "read_refused": "import device; device.read('/lfs/.agent/x')",
    },
    "lua": {
        "answer": "print(6 * 7)",
        "loop": "while true do end",
        "print_n": "print(string.rep('x', {n}))",
        "hog": "local t = {{}} while true do t[#t + 1] = string.rep('x', 1000) .. #t end",
        "write": "device.write('{path}', table.concat({{{lines}}}, string.char(10)))",
        "read_refused": "device.read('/lfs/.agent/x')",
    },
}

#: Files of several lines (no quote in them), written by a script first.
FILES = {
    "python": {
        "raise": ["x = 1", "y = 0", "print(x / y)", ""],
        "syntax": ["x = 1", "= = 2", ""],
        "args": ["import sys", "print(len(sys.argv) - 1, *sys.argv[1:])", ""],
        # network()'s last key in sorted order is wifi (no quote can be written here)
        "inspect": ["import device as d", "n = d.network()", "w = n[sorted(n)[-1]]",
                    ("print(len(d.buses()), len(d.displays()), w, len(d.gpio()), "
                     "len(d.sensors()))"), ""],
    },
    "lua": {
        "raise": ["local x = 1", "local y = nil", "print(x + y)", ""],
        "syntax": ["x = 1", "= = 2", ""],
        "args": ["print(#arg, ...)", ""],
        "inspect": ["local d = device",
                    "print(#d.buses(), #d.displays(), d.network().wifi, #d.gpio(), #d.sensors())",
                    ""],
    },
}


def quoted(code: str) -> str:
    """@code as one double-quoted word of the console's command line."""
    assert '"' not in code and "\\" not in code, code
    return f'"{code}"'


def script(dut: SimDevice, line: str, timeout: float = 20.0) -> tuple[str, str]:
    """Run one `agent script` command line; return (its output, its status line)."""
    mark = len(dut.transcript)
    dut.write(line.encode() + b"\r")
    dut.read_until(PROMPT, timeout, start=mark + len(line))
    out = bytes(dut.transcript[mark:])
    found = list(STATUS.finditer(out))
    assert found, out
    status = found[-1]
    body = out[:status.start()].decode(errors="replace")
    # The echo of the command is the first line.
    body = body.split("\r\n", 1)[1] if "\r\n" in body else ""
    return body.replace("\r\n", "\n"), status.group(0).decode().strip()


def run_source(dut: SimDevice, lang: str, code: str) -> tuple[str, str]:
    return script(dut, f"agent script {lang} -c {quoted(code)}")


def source(lang: str, name: str, **fmt: object) -> str:
    return SRC[lang][name].format(**fmt)


def put_file(dut: SimDevice, lang: str, name: str) -> str:
    """Write FILES[lang][name] with a script; return its path."""
    path = f"/lfs/{name}.{EXT[lang]}"
    lines = ", ".join(f"'{line}'" for line in FILES[lang][name])
    _, status = run_source(dut, lang, source(lang, "write", path=path, lines=lines))
    assert status.startswith("[script] completed"), status
    return path


@pytest.mark.parametrize("lang", LANGS)
def test_a_source_string_prints_and_completes(dut, lang: str) -> None:
    out, status = run_source(dut, lang, source(lang, "answer"))
    assert out == "42\n"
    assert status.startswith("[script] completed in "), status


@pytest.mark.parametrize("lang", LANGS)
def test_an_exception_reports_type_message_and_line(dut, lang: str) -> None:
    out, status = script(dut, f"agent script {lang} {put_file(dut, lang, 'raise')}")
    assert out == ""
    if lang == "python":
        assert status.startswith("[script] exception: ZeroDivisionError at line 3: "), status
    else:
        assert status.startswith("[script] exception: runtime error at line 3: "), status
        assert "arithmetic on a nil value" in status


@pytest.mark.parametrize("lang", LANGS)
def test_a_syntax_error_is_an_exception_with_its_line(dut, lang: str) -> None:
    _, status = script(dut, f"agent script {lang} {put_file(dut, lang, 'syntax')}")
    assert status.startswith("[script] exception: "), status
    assert " at line 2: " in status, status


@pytest.mark.parametrize("lang", LANGS)
def test_a_file_gets_its_arguments(dut, lang: str) -> None:
    path = put_file(dut, lang, "args")
    args = [f"a{i}" for i in range(ARGS_MAX)]
    out, status = script(dut, f"agent script {lang} {path} {' '.join(args)}")
    assert out == f"{ARGS_MAX} {' '.join(args)}\n"
    assert status.startswith("[script] completed"), status
    lines = dut.exec_command(f"agent script {lang} {path} {' '.join(args + ['one-more'])}")
    assert lines == [f"agent: at most {ARGS_MAX} arguments"]


@pytest.mark.parametrize("lang", LANGS)
def test_a_missing_file_is_a_load_failure(dut, lang: str) -> None:
    _, status = script(dut, f"agent script {lang} /lfs/none.{EXT[lang]}")
    assert status.startswith("[script] load_failed after "), status
    assert "no such file" in status


@pytest.mark.parametrize("lang", LANGS)
def test_reserved_paths_are_refused(dut, lang: str) -> None:
    lines = dut.exec_command(f"agent script {lang} /lfs/.agent/x.{EXT[lang]}")
    assert len(lines) == 1 and lines[0].startswith("agent: ") and ".agent" in lines[0], lines
    _, status = run_source(dut, lang, source(lang, "read_refused"))
    assert status.startswith("[script] exception: "), status
    assert ".agent" in status, status


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("n", [OUTPUT_MAX, OUTPUT_MAX + 1])
def test_output_is_bounded_to_4095_bytes(dut, lang: str, n: int) -> None:
    # n - 1 characters and print's line break: n bytes.
    out, status = run_source(dut, lang, source(lang, "print_n", n=n - 1))
    assert out.rstrip("\n") == "x" * (n - 1)
    if n <= OUTPUT_MAX:
        assert "truncated" not in status, status
    else:
        assert status.endswith(f"; output truncated: {OUTPUT_MAX} of {n} bytes shown"), status


@pytest.mark.needs_raw_console("types Esc or Ctrl-X while the script runs; a line-based device "
                                "sends only whole lines")
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("key", [b"\x1b", b"\x18"], ids=["esc", "ctrl-x"])
def test_esc_or_ctrl_x_cancels_an_endless_loop_within_a_second(dut, lang: str,
                                                                key: bytes) -> None:
    line = f"agent script {lang} -c {quoted(source(lang, 'loop'))}"
    mark = len(dut.transcript)
    dut.write(line.encode() + b"\r")
    dut.read_until(line.encode(), 10, start=mark)
    time.sleep(0.5)
    sent = time.monotonic()
    dut.write(key)
    dut.read_until(b"[script] cancelled after ", 5, start=mark)
    assert time.monotonic() - sent < 1.0
    dut.read_until(PROMPT, 5, start=mark + len(line))
    # The runtime is free again.
    out, status = run_source(dut, lang, source(lang, "answer"))
    assert (out, status.split(" in ")[0]) == ("42\n", "[script] completed")


@pytest.mark.sim_only("shortens the 30 s deadline with the simulator's --script-deadline-ms")
@pytest.mark.parametrize("lang", LANGS)
def test_the_deadline_stops_an_endless_loop(sims, lang: str) -> None:
    dut = sims.start(["--script-deadline-ms=1000"])
    started = time.monotonic()
    _, status = run_source(dut, lang, source(lang, "loop"))
    elapsed = time.monotonic() - started
    m = re.match(r"\[script\] deadline after (\d+) ms: ", status)
    assert m, status
    assert 1000 <= int(m.group(1)) < 1600
    assert elapsed < 3.0


@pytest.mark.parametrize("lang", LANGS)
def test_a_script_that_exhausts_its_heap_ends_out_of_memory(dut, lang: str) -> None:
    _, status = run_source(dut, lang, source(lang, "hog"))
    assert status.startswith("[script] out_of_memory after "), status
    # The heap is whole again: the next run has all of it.
    out, status = run_source(dut, lang, source(lang, "answer"))
    assert out == "42\n" and status.startswith("[script] completed"), status


#: Recursion inside the interpreter's C code with no script frame in between: comparing
#: deeply nested containers (Lua walks nested tables only through metamethod calls, which
#: test_deep_c_recursion_ends_as_an_exception covers).
NESTED = ["a = (); b = ()", "for i in range(300): a = (a,); b = (b,)", "print(a == b)"]


@pytest.mark.parametrize("lang", ["python"])
def test_nested_containers_end_as_an_exception(dut, lang: str) -> None:
    """Deep structures walked by C code: an error the script sees, never an overrun stack."""
    path = f"/lfs/nested.{EXT[lang]}"
    lines = ", ".join(f"'{x}'" for x in [*NESTED, ""])
    _, status = run_source(dut, lang, source(lang, "write", path=path, lines=lines))
    assert status.startswith("[script] completed"), status
    _, status = script(dut, f"agent script {lang} {path}")
    assert status.startswith("[script] exception: "), status
    out, status = run_source(dut, lang, source(lang, "answer"))
    assert out == "42\n" and status.startswith("[script] completed"), status


def test_usage_errors(dut) -> None:
    assert dut.exec_command("agent script") == [
        "agent: usage: agent script python|lua -c SOURCE | PATH [ARG...]"]
    assert dut.exec_command("agent script ruby -c x") == [
        "agent: usage: agent script python|lua -c SOURCE | PATH [ARG...]"]
    assert dut.exec_command("agent script lua -c") == [
        "agent: usage: agent script lua -c SOURCE (quote the source)"]
    assert dut.exec_command("agent script lua -c a b") == [
        "agent: usage: agent script lua -c SOURCE (quote the source)"]


#: Recursion through the interpreter's C code (a gsub callback): each level takes C stack.
LUA_C_RECURSION = "local function f(s) return (string.gsub(s, '.', f)) end f('ab')"


@pytest.mark.parametrize("lang", LANGS)
def test_deep_c_recursion_ends_as_an_exception(dut, lang: str) -> None:
    """The worker's stack is never overrun: the runtime stops the nesting with an error."""
    if lang == "python":
        path = "/lfs/rec.py"
        lines = ", ".join(f"'{x}'" for x in ["def f(): return f()", "f()", ""])
        _, status = run_source(dut, lang, source(lang, "write", path=path, lines=lines))
        assert status.startswith("[script] completed"), status
        _, status = script(dut, f"agent script {lang} {path}")
        assert status.startswith(("[script] exception: RuntimeError",
                                  "[script] exception: RecursionError")), status
    else:
        _, status = run_source(dut, lang, LUA_C_RECURSION)
        assert status.startswith("[script] exception: runtime error"), status
        assert "C stack overflow" in status, status
    out, status = run_source(dut, lang, source(lang, "answer"))
    assert out == "42\n" and status.startswith("[script] completed"), status


@pytest.mark.parametrize("lang", LANGS)
def test_the_board_as_the_hardware_tools_read_it(dut, lang: str) -> None:
    """The counts and the Wi-Fi state the device API reads (FILES "inspect": run from a file,
    so the command line stays short; Zephyr's shell wraps a long echo)."""
    out, status = script(dut, f"agent script {lang} {put_file(dut, lang, 'inspect')}")
    assert status.startswith("[script] completed"), status
    assert re.fullmatch(r"\d+ \d+ (absent|off|disconnected|scanning|connecting|connected|"
                        r"unknown) \d+ \d+\n", out), out
