"""Imported host tools through a real feeder (docs/modules.md "Host tools"): a tool module with
runtime `host` imported with `agent-host import`, then called by the model (the test server)
while an `agent-host feed DIR` process is attached to the simulator's SMP pty. The program
runs with the declared arguments in their declared order, in its module directory, and its
output reaches the next request body; output at the manifest's `output` bound and one byte
over; no feeder, the deadline, a non-zero exit and an entry changed on the host after the
import are error results the model sees; the feeder survives a restart of the device.

While the feeder runs it reads the pty: the test then watches the model's side (the test
server) only and reads the console again after the feeder has stopped."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agent_host.testing.agent_tools import configure
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from tool_checks import API_PATH, APIS, activated_names, last_result

pytestmark = pytest.mark.sim_only("the simulator's pty shared by the feeder and the console")

AGENT_HOST = Path(sys.executable).with_name("agent-host")
NAME = "greet"
PROMPT = "greet someone"
#: Prints its working directory's name and its arguments as JSON.
ARGV = ("import json, os, sys\n"
        "print(json.dumps([os.path.basename(os.getcwd()), *sys.argv[1:]]), end='')\n")
#: Prints the number of x's its first argument says.
PRINT_N = "import sys\nsys.stdout.write('x' * int(sys.argv[1]))\n"
SLEEP = "import time\ntime.sleep(30)\n"
FAIL = "import sys\nprint('boom: no such greeting', file=sys.stderr)\nsys.exit(3)\n"
FEED_TIMEOUT_MS = 1500


def entry(body: str) -> bytes:
    """A Python program the kernel runs directly (its #! line names this Python)."""
    return f"#!{sys.executable}\n{body}".encode()


def module(root: Path, body: str, args: str = "who: string, times: integer, loud: boolean",
           output: int | None = None) -> Path:
    folder = root / NAME
    folder.mkdir(parents=True, exist_ok=True)
    program = entry(body)
    lines = [f"name: {NAME}", "kind: tool", "description: Greets someone from the host.",
             "runtime: host", "entry: main.py", "risk: read", f"args: {args}",
             f"digest: {hashlib.sha256(program).hexdigest()}"]
    if output is not None:
        lines.append(f"output: {output}")
    (folder / "module.manifest").write_text("\n".join(lines) + "\n")
    (folder / "main.py").write_bytes(program)
    (folder / "main.py").chmod(0o755)
    return folder


def agent_host(dut: SimDevice, *args: str) -> str:
    result = subprocess.run([str(AGENT_HOST), *args, "--port", dut.pty_path],
                            capture_output=True, text=True, timeout=60, check=False)
    assert (result.returncode, result.stderr) == (0, ""), result
    return result.stdout


class Feeder:
    """`agent-host feed DIR` as a process on @port; its status lines in a file."""

    def __init__(self, port: str, folder: Path, log: Path) -> None:
        self.log = log
        self.out = log.with_suffix(".out")
        with open(log, "wb") as err, open(self.out, "wb") as out:
            self.proc = subprocess.Popen([str(AGENT_HOST), "feed", str(folder), "--port", port],
                                         stdout=out, stderr=err)

    def status(self) -> list[str]:
        return self.log.read_text().splitlines()

    def wait_for(self, line: str, timeout: float = 15.0, count: int = 1) -> None:
        deadline = time.monotonic() + timeout
        while self.status().count(line) < count:
            assert self.proc.poll() is None, (self.status(), self.out.read_text())
            assert time.monotonic() < deadline, self.status()
            time.sleep(0.05)

    def wait_for_call(self, timeout: float = 15.0) -> None:
        """Until the feeder has logged a call (it logs after the device answered the result)."""
        deadline = time.monotonic() + timeout
        while not self.out.read_text().endswith("\n"):
            assert self.proc.poll() is None, self.status()
            assert time.monotonic() < deadline, self.status()
            time.sleep(0.05)

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=15)
        return code, self.out.read_text()


def connected(port: str) -> str:
    return f"feed: connected to serial {port}; waiting for host tool calls"


def dialogue(api: Api, arguments: dict[str, object]) -> Script:
    """tool_search, then the host tool with @arguments, then an answer."""
    return Script([
        tool_call_reply(api, "tool_search", {"query": NAME}, "call_s", response_id="r0"),
        tool_call_reply(api, NAME, arguments, "call_t", response_id="r1"),
        text_reply(api, "Done.", response_id="r2")])


def asked(dut: SimDevice, srv: TestServer, api: Api) -> object:
    """Type the prompt and wait for the three requests, without reading the console (the
    feeder may be reading it); the host tool's result as the model got it."""
    dut.write(f"agent ask {PROMPT}\r".encode())
    reqs = srv.wait_for_requests(3, timeout=30)
    srv.check()
    assert NAME in activated_names(reqs[1], api)
    return last_result(reqs[2], api)


def started(sims, tmp_path: Path, body: str, **kw: object) -> tuple[SimDevice, Path]:
    dut = sims.start(["--modules=", f"--host-tool-timeout-ms={FEED_TIMEOUT_MS}"])
    folder = module(tmp_path / "modules", body, **kw)  # type: ignore[arg-type]
    assert agent_host(dut, "import", str(folder)) == f"tool {NAME} accepted (installed)\n"
    return dut, folder


def call_with_feeder(dut: SimDevice, folder: Path, tmp_path: Path, api: Api,
                     arguments: dict[str, object]) -> tuple[object, str]:
    """The host tool's result as the model got it, and the feeder's call lines."""
    with TestServer(dialogue(api, arguments)) as srv:
        configure(dut, srv.url(API_PATH[api]))
        feeder = Feeder(dut.pty_path, folder.parent, tmp_path / "feed.log")
        try:
            feeder.wait_for(connected(dut.pty_path))
            result = asked(dut, srv, api)
            feeder.wait_for_call()
        finally:
            code, out = feeder.stop()
    assert code == 130, (code, feeder.status())
    # Esc leaves `agent ask` (whose output the feeder read) for the shell.
    mark = len(dut.transcript)
    dut.write(b"\x1b")
    dut.read_until(dut.prompt, 10, start=mark)
    return result, out


# -- the call end to end ------------------------------------------------------------------------
@pytest.mark.parametrize("api", APIS)
def test_the_program_gets_the_declared_arguments_and_the_model_its_output(
        sims, tmp_path: Path, api: Api) -> None:
    dut, folder = started(sims, tmp_path, ARGV)
    # The model writes the arguments in another order; argv follows the declared one.
    result, out = call_with_feeder(dut, folder, tmp_path, api,
                                   {"loud": True, "times": -3, "who": "Ada Lovelace"})
    printed = '["greet", "Ada Lovelace", "-3", "true"]'
    assert result == {"exit": 0, "output": printed, "truncated": False}
    assert out == f"call 1: greet Ada Lovelace -3 true: exit 0, {len(printed)} bytes\n"
    # The console is the shell's again once the feeder has stopped.
    assert dut.exec_command("agent modules")[1].startswith(f"{NAME} ")


@pytest.mark.parametrize(("count", "truncated"), [(24, False), (25, True)])
def test_output_at_and_over_the_bound(sims, tmp_path: Path, count: int, truncated: bool) -> None:
    dut, folder = started(sims, tmp_path, PRINT_N, args="n: integer", output=24)
    result, _ = call_with_feeder(dut, folder, tmp_path, "responses", {"n": count})
    assert result == {"exit": 0, "output": "x" * 24, "truncated": truncated}


def test_no_feeder_is_an_error_result(sims, tmp_path: Path) -> None:
    dut, _ = started(sims, tmp_path, ARGV)
    with TestServer(dialogue("responses", {"who": "a", "times": 1, "loud": False})) as srv:
        configure(dut, srv.url(API_PATH["responses"]))
        result = asked(dut, srv, "responses")
    assert result == {
        "error": f"host tool {NAME}: no feeder attached (run `agent-host feed`)"}


def test_a_program_past_the_deadline_is_an_error_result(sims, tmp_path: Path) -> None:
    dut, folder = started(sims, tmp_path, SLEEP, args="n: integer")
    began = time.monotonic()
    result, out = call_with_feeder(dut, folder, tmp_path, "chat", {"n": 1})
    assert result == {"error": f"host tool {NAME}: no answer from the feeder within "
                               f"{FEED_TIMEOUT_MS} ms"}
    # The feeder killed it a second after the device's deadline; its late answer was dropped.
    assert out == (f"call 1: greet 1: signal 9, {len(killed(folder))} bytes; not taken: no host "
                   "tool call 1 waits for an answer (late or unknown); dropped\n")
    assert time.monotonic() - began < 25


def killed(folder: Path) -> str:
    wait = FEED_TIMEOUT_MS / 1000 + 1.0
    return f"agent-host feed: {folder / 'main.py'} killed after {wait:.1f} s\n"


def test_a_non_zero_exit_is_an_error_result_with_the_status(sims, tmp_path: Path) -> None:
    dut, folder = started(sims, tmp_path, FAIL, args="n: integer")
    result, _ = call_with_feeder(dut, folder, tmp_path, "responses", {"n": 1})
    assert result == {"error": f"host tool {NAME}: exit status 3: boom: no such greeting"}


def test_an_entry_changed_on_the_host_is_not_run(sims, tmp_path: Path) -> None:
    dut, folder = started(sims, tmp_path, ARGV)
    marker = tmp_path / "ran"
    changed = entry(f"open({str(marker)!r}, 'w').close()\n")
    (folder / "main.py").write_bytes(changed)
    result, _ = call_with_feeder(dut, folder, tmp_path, "responses",
                                 {"who": "a", "times": 1, "loud": False})
    line = (f"agent-host feed: {folder / 'main.py'}: SHA-256 "
            f"{hashlib.sha256(changed).hexdigest()} is not the digest the device recorded at "
            f"import ({hashlib.sha256(entry(ARGV)).hexdigest()}); not run")
    assert result == {"error": f"host tool {NAME}: exit status 126: {line[:96]}"}
    assert not marker.exists()


def test_the_feeder_reconnects_after_a_restart(sims, tmp_path: Path) -> None:
    dut, folder = started(sims, tmp_path, ARGV)
    link = tmp_path / "device"
    link.symlink_to(dut.pty_path)
    feeder = Feeder(str(link), folder.parent, tmp_path / "feed.log")
    try:
        with TestServer(dialogue("responses", {"who": "b", "times": 2, "loud": True})) as srv:
            feeder.wait_for(connected(str(link)))
            assert dut.stop() == 0
            dut = sims.start(["--modules="])
            configure(dut, srv.url(API_PATH["responses"]))
            link.unlink()
            link.symlink_to(dut.pty_path)
            feeder.wait_for(connected(str(link)), timeout=30, count=2)
            result = asked(dut, srv, "responses")
            feeder.wait_for_call()
    finally:
        code, out = feeder.stop()
    assert code == 130
    lost = [line for line in feeder.status() if line.endswith("; reconnecting")]
    assert 1 <= len(lost) <= 3, feeder.status()  # one line per reason, not one per try
    printed = '["greet", "b", "2", "true"]'
    assert result == {"exit": 0, "output": printed, "truncated": False}
    assert out == f"call 1: greet b 2 true: exit 0, {len(printed)} bytes\n"
