"""The host tool feeder's runner and loop (agent_host.feeder; docs/modules.md "Host tools",
docs/host-cli.md "feed") without a device, and against a scripted SMP peer (fake_smp.py):
finding the module directory, the digest check, argv without a shell, the working directory,
output at output_max and output_max + 1, the kill at the deadline, exit statuses, the result
cut to the transport, a feed answer outside the contract, the status line;
tests/e2e/test_modules_feeder.py runs a real feeder against the simulator."""

from __future__ import annotations

import asyncio
import hashlib
import io
import sys
import time
from pathlib import Path

import pytest
from agent_host import cli, feeder
from agent_host.errors import TransportError
from agent_host.feeder import Call, Outcome
from agent_host.mgmt import messages as m
from agent_host.mgmt.device import Device
from fake_smp import FakeTransport, Request, params_or


def program(body: str) -> bytes:
    return f"#!{sys.executable}\n{body}".encode()


def module(root: Path, name: str, body: str, entry: str = "run.py") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "module.manifest").write_text(f"name: {name}\nkind: tool\ndescription: d\n"
                                            f"runtime: host\nentry: {entry}\n")
    (folder / entry).write_bytes(program(body))
    (folder / entry).chmod(0o755)
    return folder


def call(folder: Path, *args: str, output_max: int = 100, timeout_ms: int = 5000,
         entry: str = "run.py", sha256: str | None = None, tool: str | None = None) -> Call:
    digest = sha256 or hashlib.sha256((folder / entry).read_bytes()).hexdigest()
    return Call(7, tool or folder.name, entry, digest, args, output_max, timeout_ms)


def run(c: Call, dirs: list[Path], kill_after: float | None = None) -> Outcome:
    return asyncio.run(feeder.run_call(c, dirs, kill_after))


ECHO = ("import json, os, sys\n"
        "print(json.dumps([os.path.basename(os.getcwd()), *sys.argv[1:]]), end='')\n")


# -- finding the module -------------------------------------------------------------------------
def test_a_dir_is_the_module_or_holds_it(tmp_path: Path) -> None:
    folder = module(tmp_path / "mods", "echo", ECHO)
    assert feeder.find_module([tmp_path / "mods"], "echo") == folder
    assert feeder.find_module([folder], "echo") == folder
    assert feeder.find_module([tmp_path / "elsewhere", tmp_path / "mods"], "echo") == folder
    assert feeder.find_module([tmp_path / "mods"], "other") is None
    # A directory named like the tool whose manifest names another module is not it.
    (tmp_path / "mods" / "liar").mkdir()
    (tmp_path / "mods" / "liar" / "module.manifest").write_text("name: echo\nkind: tool\n")
    assert feeder.find_module([tmp_path / "mods"], "liar") is None


def test_no_module_directory_is_exit_127(tmp_path: Path) -> None:
    folder = module(tmp_path, "echo", ECHO)
    outcome = run(call(folder, tool="nothere"), [tmp_path])
    assert outcome == Outcome(127, f"agent-host feed: no module directory of tool nothere in "
                                   f"{tmp_path}\n".encode())


def test_no_entry_file_is_exit_127(tmp_path: Path) -> None:
    folder = module(tmp_path, "echo", ECHO)
    outcome = run(call(folder, sha256="0" * 64, entry="gone.py"), [tmp_path])
    assert outcome.exit == 127
    assert outcome.output.startswith(f"agent-host feed: cannot read {folder / 'gone.py'}: "
                                     .encode())


@pytest.mark.parametrize("entry", ["../x", "a/b", "..", "."])
def test_an_entry_that_is_no_file_name_is_refused(tmp_path: Path, entry: str) -> None:
    folder = module(tmp_path, "echo", ECHO)
    outcome = run(call(folder, sha256="0" * 64, entry=entry) if entry not in (".", "..")
                  else Call(1, "echo", entry, "0" * 64, (), 10, 1000), [tmp_path])
    assert outcome == Outcome(126, f"agent-host feed: entry {entry!r} is not a file name\n"
                                   .encode())


# -- the digest -----------------------------------------------------------------------------------
def test_a_changed_entry_is_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    folder = module(tmp_path, "echo", f"open({str(marker)!r}, 'w').close()\n")
    recorded = hashlib.sha256(b"the imported text").hexdigest()
    actual = hashlib.sha256((folder / "run.py").read_bytes()).hexdigest()
    outcome = run(call(folder, sha256=recorded), [tmp_path])
    assert outcome == Outcome(126, (f"agent-host feed: {folder / 'run.py'}: SHA-256 {actual} "
                                    f"is not the digest the device recorded at import "
                                    f"({recorded}); not run\n").encode())
    assert not marker.exists()
    assert run(call(folder), [tmp_path]).exit == 0  # the recorded digest: it runs
    assert marker.exists()


# -- running -------------------------------------------------------------------------------------
def test_argv_in_order_without_a_shell_in_the_module_directory(tmp_path: Path) -> None:
    folder = module(tmp_path, "echo", ECHO)
    outcome = run(call(folder, "two words", "$HOME", "; rm -rf /", "*"), [tmp_path])
    assert outcome == Outcome(0, b'["echo", "two words", "$HOME", "; rm -rf /", "*"]', False)


def test_stderr_is_part_of_the_output_and_the_status_is_kept(tmp_path: Path) -> None:
    folder = module(tmp_path, "fail", "import sys\nprint('out')\nsys.stdout.flush()\n"
                                      "print('err', file=sys.stderr)\nsys.exit(5)\n")
    assert run(call(folder), [tmp_path]) == Outcome(5, b"out\nerr\n", False)


@pytest.mark.parametrize(("count", "truncated"), [(0, False), (99, False), (100, False),
                                                  (101, True), (100_000, True)])
def test_output_at_and_over_output_max(tmp_path: Path, count: int, truncated: bool) -> None:
    folder = module(tmp_path, "many", "import sys\nsys.stdout.write('y' * int(sys.argv[1]))\n")
    outcome = run(call(folder, str(count), output_max=100), [tmp_path])
    assert outcome == Outcome(0, b"y" * min(count, 100), truncated)


def test_a_program_past_its_deadline_is_killed_with_its_children(tmp_path: Path) -> None:
    folder = module(tmp_path, "slow", "import subprocess, sys, time\n"
                                      "subprocess.Popen([sys.executable, '-c', "
                                      "'import time; time.sleep(30)'])\n"
                                      "print('started', flush=True)\ntime.sleep(30)\n")
    began = time.monotonic()
    outcome = run(call(folder), [tmp_path], kill_after=0.5)
    assert time.monotonic() - began < 5  # the grandchild holding stdout was killed too
    assert outcome == Outcome(-9, f"agent-host feed: {folder / 'run.py'} killed after 0.5 s\n"
                              .encode())


def test_the_default_deadline_is_the_devices_plus_a_grace(tmp_path: Path) -> None:
    folder = module(tmp_path, "slow", "import time\ntime.sleep(30)\n")
    began = time.monotonic()
    outcome = run(call(folder, timeout_ms=200), [tmp_path])
    assert 1.1 <= time.monotonic() - began < 5
    assert outcome.exit == -9
    assert outcome.output.endswith(b"killed after 1.2 s\n")


def test_a_file_that_cannot_run_is_exit_126(tmp_path: Path) -> None:
    folder = module(tmp_path, "plain", ECHO)
    (folder / "run.py").chmod(0o644)
    outcome = run(call(folder), [tmp_path])
    assert outcome == Outcome(126, f"agent-host feed: cannot run {folder / 'run.py'}: "
                                   f"Permission denied\n".encode())


def test_a_signal_is_a_negative_status(tmp_path: Path) -> None:
    folder = module(tmp_path, "sig", "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    assert run(call(folder), [tmp_path]).exit == -15


# -- the wire -------------------------------------------------------------------------------------
def test_a_feed_answer_is_empty_or_a_whole_call() -> None:
    assert feeder.call_of(m.FeedResponse()) is None
    whole = m.FeedResponse(id=3, tool="t", entry="e", sha256="a" * 64, args=["1", "x"],
                           output_max=9, timeout_ms=100)
    assert feeder.call_of(whole) == Call(3, "t", "e", "a" * 64, ("1", "x"), 9, 100)
    with pytest.raises(TransportError, match="a call with fields missing"):
        feeder.call_of(m.FeedResponse(id=3, tool="t"))


@pytest.mark.parametrize("limit", [256, 2044])
def test_the_output_is_cut_to_what_one_result_request_carries(limit: int) -> None:
    device = Device(FakeTransport(lambda r: {}, mtu_bytes=limit), "fake")
    for size in (10, limit, 5000):
        fitted = feeder.fit_output(device, 12345, Outcome(0, b"z" * size))
        request = m.ResultWrite(id=12345, exit=0, output=fitted.output, truncated=True,
                                sequence=1)
        assert len(request.BYTES) <= limit
        assert fitted.truncated == (len(fitted.output) < size)
        if fitted.truncated:  # one byte more would not fit
            assert len(m.ResultWrite(id=12345, exit=0, output=fitted.output + b"z",
                                     truncated=True, sequence=1).BYTES) > limit


def test_the_status_line_shows_each_change_once() -> None:
    stream = io.StringIO()
    status = feeder.StatusLine(stream)
    for text in ("a", "a", "b", "b", "a"):
        status.show(text)
    assert stream.getvalue() == "a\nb\na\n"


class Stop(Exception):
    """The scripted device ends the test."""


class Peer:
    """A device with one host tool call waiting: feed answers it once, then {}."""

    def __init__(self, folder: Path) -> None:
        self.call = call(folder, "hi")
        self.results: list[dict[str, object]] = []
        self.feeds = 0
        self.transport = FakeTransport(params_or(self.handle))

    def handle(self, req: Request) -> dict[str, object] | Stop:
        if req.command == m.Command.FEED:
            self.feeds += 1
            if self.feeds == 1:
                c = self.call
                return {"id": c.id, "tool": c.tool, "entry": c.entry, "sha256": c.sha256,
                        "args": list(c.args), "output_max": c.output_max,
                        "timeout_ms": c.timeout_ms}
            return Stop() if self.results else {}
        self.results.append(req.body)
        return {"id": req.body["id"]}


def test_the_loop_runs_the_call_and_sends_the_result(tmp_path: Path) -> None:
    folder = module(tmp_path, "echo", ECHO)
    peer = Peer(folder)
    stream = io.StringIO()
    out = io.StringIO()
    status = feeder.StatusLine(stream)
    status.log = lambda text, _out=None: out.write(text + "\n")  # type: ignore[method-assign]

    async def session() -> None:
        device = Device(peer.transport, "fake", timeout=2)
        await device.probe_mtu()
        await feeder.serve_device(device, [tmp_path], status, "fake")

    with pytest.raises(Stop):
        asyncio.run(session())
    assert peer.results == [{"id": 7, "exit": 0, "output": b'["echo", "hi"]',
                             "truncated": False}]
    assert stream.getvalue() == "feed: connected to fake; waiting for host tool calls\n"
    assert out.getvalue() == "call 7: echo hi: exit 0, 14 bytes\n"


def test_feed_refuses_a_dir_that_is_not_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    assert cli.main(["feed", str(tmp_path / "none"), "--port", "/dev/null"]) == 2
    assert capsys.readouterr().err == f"agent-host: feed: {tmp_path / 'none'} is not a directory\n"
