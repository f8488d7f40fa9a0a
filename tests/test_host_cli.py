"""The device commands of agent-host: every error class with its exit status and message.

The device is a scripted SMP peer (fake_smp.py) behind smpclient's transport interface, for
the cases a real device cannot be made to produce on demand; tests/e2e/test_host_mgmt.py
runs the same commands against the simulator.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cbor2
import pytest
from agent_host import cli
from agent_host.mgmt import device as device_mod
from agent_host.mgmt import messages
from agent_host.mgmt.transport import Endpoint
from conv_bytes import EXAMPLE_V1 as EXAMPLE  # version 1, 140 bytes: still read and exported
from conv_bytes import build
from fake_smp import (
    Answer,
    Disconnect,
    FakeTransport,
    NoAnswer,
    Request,
    UdpPeer,
    frame,
    group_error,
    params_or,
)
from smp.exceptions import SMPBadCRC

KEY = "sk-test-0123456789abcdef"

CONFIG = {"endpoint": "https://api.example.com/v1/responses", "model": "gpt-test",
          "key": "set", "reasoning": "none", "tools": "confirm", "max-tools": 8, "user": "ada",
          "embeddings": "https://api.example.com/v1/embeddings", "embeddings-model": "embed-test",
          "protocol": "responses"}
STATUS = {"version": "0.3.0", "board": "host_sim", "protocol": "responses",
          "endpoint": CONFIG["endpoint"], "model": "gpt-test", "key": "set", "reasoning": "none",
          "tools": "confirm", "max-tools": 8, "user": "ada",
          "tool_calls": {"executed": 3, "denied": 1, "failed": 0, "last_used": 2,
                         "last_budget": 8},
          "pools": [{"name": "stream", "class": "internal", "block": 512, "total": 4,
                     "free": 3, "lowest": 1, "held_peak": 1536, "written_peak": 700,
                     "written_block": 400}]}
LIST = [{"slot": 1, "turns": 1, "bytes": 140, "model": "gpt-test", "title": "Hi",
         "damaged": False},
        {"slot": 3, "turns": 0, "bytes": 99, "model": "", "title": "", "damaged": True}]
TOOLS = [{"name": f"tool_{i:02d}", "domain": "storage", "risk": "read",
          "available": "yes" if i % 2 else "no", "policy": "runs",
          "needs": "" if i % 2 else "sd", "reason": "" if i % 2 else "no SD card is mounted"}
         for i in range(7)]


class Peer:
    """Scripted answers by (command id, write); a callable answer gets the request."""

    def __init__(self) -> None:
        self.answers: dict[tuple[int, bool], Answer | Callable[[Request], Answer]] = {
            (0, False): lambda r: ({"name": r.body["name"], "value": "set"
                                    if r.body["name"] == "key" else str(CONFIG[r.body["name"]])}
                                   if "name" in r.body else CONFIG),
            (0, True): lambda r: {"name": r.body["name"],
                                  "value": "not set" if r.body.get("clear") else
                                  "set" if r.body["name"] == "key" else r.body["value"]},
            (1, False): STATUS,
            (2, True): {},
            (3, False): self.list_pages(LIST, 3, 2),
            (4, False): self.export_pages(EXAMPLE, 50),
            (5, True): lambda r: {"slot": r.body["slot"]},
            (6, False): self.tool_pages(TOOLS, 3),
        }
        self.transport = FakeTransport(params_or(self.handle))
        self.port = ""

    def handle(self, req: Request) -> Answer:
        answer = self.answers[(req.command, req.write)]
        return answer(req) if callable(answer) else answer

    @staticmethod
    def export_pages(data: bytes, page: int, slot: int = 1) -> Callable[[Request], Answer]:
        def answer(req: Request) -> Answer:
            if req.body["slot"] != slot:
                return group_error(4, f"slot {req.body['slot']} is empty")
            off = req.body["off"]
            return {"slot": slot, "off": off, "len": len(data), "data": data[off:off + page]}
        return answer

    @staticmethod
    def list_pages(entries: list[dict[str, Any]], slots: int,
                   per_page: int) -> Callable[[Request], Answer]:
        def answer(req: Request) -> Answer:
            off = req.body.get("off", 0)
            nxt = min(slots, off + per_page)
            return {"dir": "/lfs/.agent/conversations", "slots": slots, "off": off, "next": nxt,
                    "list": [e for e in entries if off < e["slot"] <= nxt]}
        return answer

    @staticmethod
    def tool_pages(tools: list[dict[str, Any]], page: int) -> Callable[[Request], Answer]:
        def answer(req: Request) -> Answer:
            off = req.body.get("off", 0)
            return {"policy": "confirm", "total": len(tools), "off": off,
                    "tools": tools[off:off + page]}
        return answer

    def agent(self) -> list[Request]:
        return self.transport.agent_requests()


@pytest.fixture
def peer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Peer:
    p = Peer()
    monkeypatch.setattr(device_mod, "make_transport", lambda endpoint: p.transport)
    port = tmp_path / "ttyFAKE"
    port.touch()
    p.port = str(port)
    monkeypatch.delenv("AGENT_KEY", raising=False)
    monkeypatch.delenv("AGENT_PORT", raising=False)
    return p


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], peer: Peer) -> Run:
    def run_cli(*args: str, port: bool = True) -> tuple[int, str, str]:
        argv = list(args) + (["--port", peer.port] if port else [])
        try:
            code = cli.main(argv)
        except SystemExit as stop:  # argparse's usage errors
            code = int(stop.code or 0)
        out, err = capsys.readouterr()
        return code, out, err
    return run_cli


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- successful commands ----------------------------------------------------------------------
def test_status_prints_settings_counters_and_pools(peer: Peer, run: Run) -> None:
    code, out, err = run("status")
    assert (code, err) == (0, "")
    assert "version: 0.3.0\nboard: host_sim\nprotocol: responses\n" in out
    assert "key: set\n" in out and "max-tools: 8\n" in out
    assert "tool calls: 3 executed, 1 denied, 0 failed; last request 2 of 8\n" in out
    assert ("POOL    CLASS     BLOCK  TOTAL  FREE  LOWEST  PEAK HELD  PEAK WRITTEN\n"
            "stream  internal  512    4      3     1       1536       700") in out
    assert [(r.command, r.write, r.body) for r in peer.agent()] == [(1, False, {})]


def test_config_shows_gets_and_sets(peer: Peer, run: Run) -> None:
    code, out, _ = run("config")
    assert code == 0
    assert out.splitlines() == [
        "endpoint: https://api.example.com/v1/responses", "protocol: responses",
        "model: gpt-test", "key: set", "reasoning: none", "tools: confirm", "max-tools: 8",
        "user: ada", "embeddings: https://api.example.com/v1/embeddings",
        "embeddings-model: embed-test"]
    assert run("config", "model") == (0, "model: gpt-test\n", "")
    assert run("config", "max-tools", "12") == (0, "max-tools set to 12\n", "")
    assert [r.body for r in peer.agent()] == [{}, {"name": "model"},
                                              {"name": "max-tools", "value": "12"}]


def test_key_from_stdin(peer: Peer, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(KEY + "\n"))
    code, out, err = run("config", "key", "--key-stdin")
    assert (code, out, err) == (0, "key set\n", "")
    assert peer.agent()[0].body == {"name": "key", "value": KEY}


def test_key_from_the_environment(peer: Peer, run: Run,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_KEY", KEY)
    assert run("config", "key") == (0, "key set\n", "")
    assert peer.agent()[0].body == {"name": "key", "value": KEY}


def test_key_from_the_hidden_prompt(peer: Peer, run: Run,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    prompts: list[str] = []
    monkeypatch.setattr("sys.stdin", _Stdin("", tty=True))
    monkeypatch.setattr("getpass.getpass", lambda prompt: prompts.append(prompt) or KEY)
    assert run("config", "key") == (0, "key set\n", "")
    assert prompts == ["API key (hidden): "]
    assert peer.agent()[0].body == {"name": "key", "value": KEY}


def test_key_clear(peer: Peer, run: Run) -> None:
    assert run("config", "key", "clear") == (0, "key cleared\n", "")
    assert peer.agent()[0].body == {"name": "key", "clear": True}


def test_forget_with_yes(peer: Peer, run: Run) -> None:
    assert run("forget", "--yes") == (0, "every agent setting erased, the key included\n", "")
    assert [(r.command, r.write) for r in peer.agent()] == [(2, True)]


@pytest.mark.parametrize(("answer", "sent"), [("y\n", True), ("n\n", False), ("\n", False)])
def test_forget_asks_on_a_terminal(peer: Peer, run: Run, monkeypatch: pytest.MonkeyPatch,
                                   answer: str, sent: bool) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(answer, tty=True))
    code, _out, err = run("forget")
    assert code == 0
    assert bool(peer.agent()) == sent
    if not sent:
        assert "cancelled; nothing erased" in err


def test_list_is_a_table(peer: Peer, run: Run) -> None:
    code, out, _ = run("list")
    assert code == 0
    assert out.splitlines() == [
        "/lfs/.agent/conversations: 2 of 3 slots used",
        "SLOT  TURNS  BYTES  MODEL     TITLE  STATE",
        "1     1      140    gpt-test  Hi     ok",
        "3     0      99                      damaged"]


def test_list_when_empty(peer: Peer, run: Run) -> None:
    peer.answers[(3, False)] = {"dir": "/SD:/.agent/conversations", "slots": 8, "off": 0,
                                "next": 8, "list": []}
    assert run("list") == (0, "/SD:/.agent/conversations: 0 of 8 slots used\n", "")


def test_list_is_read_page_by_page(peer: Peer, run: Run) -> None:
    assert run("list")[0] == 0
    assert [r.body for r in peer.agent()] == [{}, {"off": 2}]
    peer.answers[(3, False)] = Peer.list_pages(LIST, 8, 1)
    code, out, _ = run("list")
    assert code == 0 and "2 of 8 slots used" in out
    assert [r.body for r in peer.agent()[2:]] == [{}] + [{"off": n} for n in range(1, 8)]


def test_tools_are_read_page_by_page(peer: Peer, run: Run) -> None:
    code, out, _ = run("tools")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "tool policy: confirm; 7 tools"
    assert lines[1].split() == ["NAME", "DOMAIN", "RISK", "AVAILABLE", "POLICY", "NEEDS",
                                "REASON"]
    assert [line.split()[0] for line in lines[2:]] == [f"tool_{i:02d}" for i in range(7)]
    assert lines[2].split()[3:] == ["no", "runs", "sd", "no", "SD", "card", "is", "mounted"]
    assert lines[3].split()[3:] == ["yes", "runs", "-"]
    # The first page's request omits the offset; the next ones give it.
    assert [r.body for r in peer.agent()] == [{}, {"off": 3}, {"off": 6}]


def test_export_writes_the_checked_file(peer: Peer, run: Run, tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    code, out, err = run("export", "1", "-o", str(target))
    assert (code, out) == (0, "")
    assert err == f"slot 1: 140 bytes, 1 turns, checked; written to {target}\n"
    assert target.read_bytes() == EXAMPLE
    assert [r.body for r in peer.agent()] == [{"slot": 1, "off": o} for o in (0, 50, 100)]


def test_export_file_mode(peer: Peer, run: Run, tmp_path: Path) -> None:
    umask = os.umask(0o027)
    try:
        new = tmp_path / "new.bin"
        assert run("export", "1", "-o", str(new))[0] == 0
        assert new.stat().st_mode & 0o777 == 0o640
        old = tmp_path / "old.bin"
        old.write_bytes(b"older")
        old.chmod(0o604)
        assert run("export", "1", "-o", str(old))[0] == 0
        assert old.stat().st_mode & 0o777 == 0o604 and old.read_bytes() == EXAMPLE
    finally:
        os.umask(umask)


def test_export_default_name(peer: Peer, run: Run, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run("export", "1")[0] == 0
    assert (tmp_path / "conv1.bin").read_bytes() == EXAMPLE


def test_export_text(peer: Peer, run: Run, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("export", "1", "--text")
    assert (code, err) == (0, "")
    assert out.startswith("title:    Hi\nprovider: openai\nmodel:    gpt-test\n")
    assert out.endswith("user: hello\nassistant: world\n")
    assert list(tmp_path.iterdir()) == [Path(peer.port)]  # no file without -o


def test_export_text_keeps_the_model_off_the_terminal(peer: Peer, run: Run) -> None:
    """OSC 52 (clipboard), a window title, clear screen and a DCS query in what the model
    wrote reach the terminal as nothing; the text around them and UTF-8 stay."""
    answer = ("caf\u00e9 \U0001F600\x1b]52;c;UFdO\x07 \x1b]0;PWN\x1b\\\x1b[2J\x1b[H"
              "\x1bP$qPWN\x1b\\\x9b31m\x9dPWN\x9c\u202eend")
    data = build(1, 2, "openai", "gpt-test", "t\x1b]2;PWN\x07itle", [("hi", [], answer)])
    peer.answers[(4, False)] = Peer.export_pages(data, 50)
    code, out, err = run("export", "1", "--text")
    assert (code, err) == (0, "")
    assert "title:    title\n" in out
    assert out.endswith("assistant: caf\u00e9 \U0001F600 <U+202E>end\n")
    assert "\x1b" not in out and "PWN" not in out
    assert not any(0x80 <= ord(c) <= 0x9F for c in out)


def test_export_to_stdout(peer: Peer, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert cli.main(["export", "1", "-o", "-", "--port", peer.port]) == 0
    assert capsysbinary.readouterr().out == EXAMPLE


def test_export_progress_reaches_the_total(peer: Peer) -> None:
    seen: list[tuple[int, int]] = []

    async def export() -> None:
        async with device_mod.open_device(Endpoint("serial", peer.port)) as dev:
            result = await dev.export(1, lambda done, total: seen.append((done, total)))
            assert result.data == EXAMPLE and result.conversation.turns == 1

    asyncio.run(export())
    assert seen == [(50, 140), (100, 140), (140, 140)]


def test_delete(peer: Peer, run: Run) -> None:
    assert run("delete", "2") == (0, "slot 2 deleted\n", "")
    assert [(r.command, r.write, r.body) for r in peer.agent()] == [(5, True, {"slot": 2})]


def test_stale_answers_are_skipped(peer: Peer, run: Run,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Late answers to an earlier session's requests come first: another sequence number,
    # another command.
    monkeypatch.setattr(device_mod.random, "randrange", lambda n: 10)  # parameters 11, status 12
    peer.transport.before += [frame(messages.StatusRead(sequence=200).BYTES, {"stale": 1}),
                              frame(messages.ToolsRead(sequence=12).BYTES, {"stale": 2})]
    assert run("status")[0] == 0


# -- usage errors (2) -------------------------------------------------------------------------
@pytest.mark.parametrize(("argv", "message"), [
    ([], "the following arguments are required: command"),
    (["nonsense"], "invalid choice: 'nonsense'"),
    (["export"], "the following arguments are required: SLOT"),
    (["export", "0"], "slot must be a number from 1 up, not '0'"),
    (["delete", "two"], "slot must be a number from 1 up, not 'two'"),
    (["config", "colour"], "argument NAME: invalid choice: 'colour'"),
    (["status", "--mtu", "10"], "must be a number from 32 to 65535, not '10'"),
    (["status", "--timeout", "0"], "must be seconds above 0 (at most 3600), not '0'"),
    (["status", "--baud", "fast"], "must be a positive number, not 'fast'"),
    (["status", "--port", "/dev/x", "--udp", "h"], "not allowed with argument --port"),
    (["status", "--udp", "host:99999"], "--udp host:99999: the port must be a number from 1"),
    (["status", "--udp", "host:1:2"], "an IPv6 address with a port is written"),
    (["status"], "no device: give --port DEVICE, --udp HOST[:PORT] or --ble ADDRESS"),
    (["export", "1", "-o", "-", "--text", "--port", "/dev/x"], "exclude each other"),
    (["shell", "--udp", "127.0.0.1"], "shell needs the console's serial port"),
    (["config", "model", "--key-stdin", "--port", "/dev/x"], "--key-stdin goes only with"),
    (["forget", "--port", "/dev/x"], "forget asks for confirmation on a terminal; give --yes"),
])
def test_usage_errors(peer: Peer, run: Run, argv: list[str], message: str) -> None:
    code, out, err = run(*argv, port=False)
    assert code == 2
    assert out == ""
    assert message in one_line(err)
    assert peer.transport.requests == []


def test_agent_port_is_the_default_port(peer: Peer, run: Run,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_PORT", peer.port)
    assert run("status", port=False)[0] == 0


def test_key_on_the_command_line_is_refused_before_connecting(peer: Peer, run: Run) -> None:
    code, out, err = run("config", "key", KEY)
    assert (code, out) == (2, "")
    assert one_line(err) == ("agent-host: config key: the key is never taken from the command "
                             "line (shell history, process list); use the hidden prompt, "
                             "--key-stdin or AGENT_KEY")
    assert KEY not in err
    assert peer.transport.requests == [] and not peer.transport.connected


def test_key_without_a_source(peer: Peer, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(""))
    code, _, err = run("config", "key")
    assert code == 2
    assert one_line(err) == ("agent-host: config key: no key: type it at the hidden prompt (on "
                             "a terminal), pipe it with --key-stdin, or set AGENT_KEY")
    assert peer.transport.requests == []


def test_empty_key_is_refused(peer: Peer, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin("\n"))
    code, _, err = run("config", "key", "--key-stdin")
    assert code == 2
    assert one_line(err) == "agent-host: config key: the key is empty; nothing changed"
    assert peer.transport.requests == []


# -- device refusals (1) ----------------------------------------------------------------------
@pytest.mark.parametrize(("rc", "name", "argv", "reason"), [
    (1, "EUNKNOWN", ["config", "model"], "unknown setting 'model'"),
    (2, "EINVAL", ["config", "endpoint", "ftp://x"],
     "endpoint must start with http:// or https://"),
    (3, "EWRITEONLY", ["config", "model"], "the key is write-only"),
    (4, "ENOENT", ["export", "2"], "slot 2 is empty"),
    (5, "ERANGE", ["delete", "9"], "slot 9 is outside 1..3"),
    (6, "EBUSY", ["delete", "1"], "conversation 1 is open in the chat"),
    (7, "EIO", ["forget", "--yes"], "could not erase the settings (error -5)"),
    (8, "ENODEV", ["list"], "conversations are not available (no file system)"),
])
def test_device_refusals_carry_code_and_reason(peer: Peer, run: Run, rc: int, name: str,
                                               argv: list[str], reason: str) -> None:
    for key in peer.answers:
        peer.answers[key] = group_error(rc, reason)
    code, out, err = run(*argv)
    assert (code, out) == (1, "")
    what = " ".join(a for a in argv[:2] if not a.startswith("-"))
    assert one_line(err) == f"agent-host: {what}: {reason} ({name})"


def test_refusal_without_reason_and_unknown_rc(peer: Peer, run: Run) -> None:
    peer.answers[(1, False)] = group_error(6)
    assert run("status")[::2] == (1, "agent-host: status: EBUSY\n")
    peer.answers[(1, False)] = group_error(42, "a newer device's code")
    assert run("status")[::2] == (1, "agent-host: status: a newer device's code (rc 42)\n")


def test_mcumgr_errors(peer: Peer, run: Run) -> None:
    peer.answers[(1, False)] = {"rc": 8}
    assert run("status")[::2] == (
        1, ("agent-host: status: the device has no agent management group (is it the agent "
           "firmware?) (MCUmgr ENOTSUP)\n"))
    peer.answers[(1, False)] = {"rc": 7}
    assert run("status")[::2] == (1, "agent-host: status: MCUmgr EMSGSIZE\n")


def test_export_of_a_damaged_file(peer: Peer, run: Run, tmp_path: Path) -> None:
    damaged = bytearray(EXAMPLE)
    damaged[60] ^= 0xFF
    peer.answers[(4, False)] = Peer.export_pages(bytes(damaged), 64)
    target = tmp_path / "out.bin"
    code, _, err = run("export", "1", "-o", str(target))
    assert code == 1
    assert one_line(err) == ("agent-host: export 1: the file is damaged: file CRC mismatch "
                             "(trailer 0x26535aa1, computed 0x085888c0)")
    assert not target.exists()


def test_export_starts_again_when_the_conversation_grows(peer: Peer, run: Run,
                                                         tmp_path: Path) -> None:
    longer = build(1, 2, "openai", "gpt-test", "Hi", [("hello", [], "world")] * 2)
    versions = iter([EXAMPLE, longer, longer, longer])

    def answer(req: Request) -> Answer:
        data = next(versions)
        off = req.body["off"]
        return {"slot": 1, "off": off, "len": len(data), "data": data[off:off + 100]}

    peer.answers[(4, False)] = answer
    target = tmp_path / "c.bin"
    assert run("export", "1", "-o", str(target))[0] == 0
    assert target.read_bytes() == longer
    assert [r.body["off"] for r in peer.agent()] == [0, 100, 0, 100]


def test_export_of_a_conversation_that_keeps_changing(peer: Peer, run: Run) -> None:
    sizes = iter(range(1, 100))

    def answer(req: Request) -> Answer:
        data = build(1, 2, "openai", "gpt-test", "Hi", [("x" * next(sizes), [], "y")])
        off = req.body["off"]
        return {"slot": 1, "off": off, "len": len(data), "data": data[off:off + 50]}

    peer.answers[(4, False)] = answer
    assert run("export", "1")[::2] == (
        1, ("agent-host: export 1: the conversation changed during the export 3 times in a "
            "row; export it again\n"))
    assert [r.body["off"] for r in peer.agent()] == [0, 50] * 3


# -- transport errors (3) ---------------------------------------------------------------------
def test_missing_port(run: Run) -> None:
    code, _, err = run("status", "--port", "/dev/agent-none", port=False)
    assert code == 3
    assert one_line(err) == "agent-host: cannot open serial /dev/agent-none: no such device"


@pytest.mark.parametrize(("failure", "message"), [
    (Disconnect("gone"), "agent-host: status: connection to serial {port} lost (gone)"),
    (OSError(5, "Input/output error"),
     "agent-host: status: connection to serial {port} lost (Input/output error)"),
    (SMPBadCRC("Packet CRC 0x1 != calculated CRC 0x2"),
     ("agent-host: status: damaged answer from serial {port} (Packet CRC 0x1 != calculated "
     "CRC 0x2)")),
])
def test_a_lost_or_broken_link(peer: Peer, run: Run, failure: BaseException,
                               message: str) -> None:
    from smpclient.transport import SMPTransportDisconnected

    if isinstance(failure, Disconnect):
        failure = SMPTransportDisconnected("gone")
    peer.answers[(1, False)] = failure
    code, _, err = run("status")
    assert code == 3
    assert one_line(err) == message.format(port=peer.port)


@pytest.mark.parametrize("answer", [
    {"version": 3},                              # a field of the wrong type, the rest missing
    dict(STATUS, extra=1),                       # a field the contract does not name
    b"\xff\xff",                                 # not CBOR
])
def test_an_answer_outside_the_contract(peer: Peer, run: Run, answer: Answer) -> None:
    peer.answers[(1, False)] = answer
    code, _, err = run("status")
    assert code == 3
    assert one_line(err) == (f"agent-host: status: the answer from serial {peer.port} is not one "
                             "the agent group defines (docs/mgmt-group.md)")


def test_export_pages_that_go_wrong(peer: Peer, run: Run) -> None:
    peer.answers[(4, False)] = {"slot": 1, "off": 0, "len": 140, "data": b""}
    assert run("export", "1")[::2] == (
        3, "agent-host: export 1: the device sent no data at offset 0 of 140\n")
    peer.answers[(4, False)] = {"slot": 1, "off": 0, "len": 10, "data": b"x" * 11}
    assert run("export", "1")[::2] == (
        3, "agent-host: export 1: the device sent more than the file's 10 bytes\n")
    peer.answers[(4, False)] = {"slot": 2, "off": 0, "len": 10, "data": b"x"}
    assert run("export", "1")[::2] == (
        3, ("agent-host: export 1: the device answered slot 2 offset 0 to a request for slot 1 "
           "offset 0\n"))


def list_body(entries: list[Any], bad_title: bytes | None = None,
              dir_text: str = "/lfs/.agent/conversations") -> bytes:
    """A conversation list answer, by hand: with @bad_title, the text string "@@" of an
    entry's title is replaced by those bytes (CBOR text that is not UTF-8)."""
    body = cbor2.dumps({"dir": dir_text, "slots": 3, "off": 0, "next": 3, "list": entries})
    if bad_title is None:
        return body
    assert body.count(b"\x62@@") == 1
    return body.replace(b"\x62@@", bytes([0x60 + len(bad_title)]) + bad_title)


def test_list_shows_a_title_that_is_not_utf8_with_u_fffd(peer: Peer, run: Run) -> None:
    # What a device without the repair sends for "café" typed on a Latin-1 terminal.
    entries = [dict(LIST[0]), dict(LIST[0], slot=2, title="@@")]
    peer.answers[(3, False)] = list_body(entries, b"caf\xe9")
    code, out, err = run("list")
    assert code == 0, err
    assert out.splitlines() == [
        "/lfs/.agent/conversations: 2 of 3 slots used",
        "SLOT  TURNS  BYTES  MODEL     TITLE  STATE",
        "1     1      140    gpt-test  Hi     ok",
        "2     1      140    gpt-test  caf\ufffd   ok"]
    assert err == ("list: warning: slot 2: title not valid UTF-8; shown with U+FFFD\n")


def test_list_keeps_the_others_around_an_unreadable_entry(peer: Peer, run: Run) -> None:
    entries = [dict(LIST[0]), dict(LIST[0], slot=2, turns="many"), 7,
               dict(LIST[1], extra=True)]
    peer.answers[(3, False)] = list_body(entries)
    code, out, err = run("list")
    assert code == 0, err
    assert out.splitlines() == [
        "/lfs/.agent/conversations: 3 of 3 slots used",
        "SLOT  TURNS  BYTES  MODEL     TITLE  STATE",
        "1     1      140    gpt-test  Hi     ok",
        "2                                    unreadable",
        "3                                    unreadable"]
    assert err.splitlines() == [
        "list: warning: slot 2: unreadable entry (turns: Input should be a valid integer)",
        ("list: warning: an entry without a slot: unreadable entry (not a map of the "
         "contract's fields)"),
        "list: warning: slot 3: unreadable entry (extra: Extra inputs are not permitted)"]


HOSTILE_TITLE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;pwned\x07[bold red]Hi\u202e"


@pytest.mark.parametrize("rich", [False, True], ids=["plain", "rich"])
def test_list_keeps_device_text_off_the_terminal(peer: Peer, run: Run, rich: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A title the device stores as typed (it may hold anything) reaches the host terminal
    without its escape sequences, on plain output and in rich tables alike, and rich markup
    in it stays text."""
    from agent_host import ui
    monkeypatch.setattr(ui, "_isatty", lambda stream: rich)
    peer.answers[(3, False)] = list_body([dict(LIST[0], title=HOSTILE_TITLE)])
    code, out, err = run("list")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "[bold red]Hi<U+202E>" in out


def test_list_outside_the_entries_stays_strict(peer: Peer, run: Run) -> None:
    peer.answers[(3, False)] = list_body([dict(LIST[0])], b"caf\xe9", dir_text="@@")
    code, _, err = run("list")
    assert code == 3
    assert one_line(err) == (f"agent-host: list: the answer from serial {peer.port} is not one "
                             "the agent group defines (docs/mgmt-group.md)")


def test_list_pages_that_go_wrong(peer: Peer, run: Run) -> None:
    page = {"dir": "/lfs", "slots": 3, "off": 0, "next": 0, "list": []}
    peer.answers[(3, False)] = page
    assert run("list")[::2] == (
        3, "agent-host: list: the device answered slots 0..0 of 3 to a request from 0\n")
    peer.answers[(3, False)] = dict(page, next=4)
    assert run("list")[::2] == (
        3, "agent-host: list: the device answered slots 0..4 of 3 to a request from 0\n")
    pages = iter([dict(page, next=1), dict(page, off=1, next=3, slots=8)])
    peer.answers[(3, False)] = lambda r: next(pages)
    assert run("list")[::2] == (
        3, "agent-host: list: the conversation store changed during the listing\n")


def test_export_disconnect_leaves_no_file(peer: Peer, run: Run, tmp_path: Path) -> None:
    from smpclient.transport import SMPTransportDisconnected

    pages = Peer.export_pages(EXAMPLE, 50)

    def answer(req: Request) -> Answer:
        if req.body["off"] >= 100:
            return SMPTransportDisconnected("the simulator went away")
        return pages(req)

    peer.answers[(4, False)] = answer
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, _, err = run("export", "1", "-o", str(out_dir / "c.bin"))
    assert code == 3
    assert "export 1: connection to serial" in err and "lost (the simulator went away)" in err
    assert list(out_dir.iterdir()) == []


def test_request_larger_than_the_mtu(peer: Peer, run: Run) -> None:
    peer.transport.mtu_bytes = 124  # what smpclient's serial transport makes of --mtu 128
    code, _, err = run("config", "endpoint", "https://example.com/" + "a" * 200, "--mtu", "128")
    assert code == 3
    assert one_line(err).startswith("agent-host: config endpoint: the request takes ")
    assert err.endswith(" bytes, more than the 124 bytes the transport carries (see --mtu)\n")
    assert peer.agent() == []


def test_mtu_from_the_device_parameters(peer: Peer, run: Run) -> None:
    peer.transport.handler = params_or(peer.handle, buf_size=100)
    code, _, err = run("config", "user", "u" * 100)
    assert code == 3 and "more than the 96 bytes" in err
    # No parameters (MCUmgr's ENOTSUP for the OS group): 256 bytes, Zephyr's shell default.
    peer.transport.handler = lambda r: {"rc": 8} if r.group == 0 else peer.handle(r)
    code, _, err = run("config", "user", "u" * 300)
    assert code == 3 and "more than the 252 bytes" in err
    assert run("config", "user", "u" * 200)[0] == 0


def test_transport_sizes_from_mtu() -> None:
    from agent_host.mgmt.transport import make_transport

    assert make_transport(Endpoint("serial", "/dev/x", mtu=128)).max_unencoded_size == 124
    assert make_transport(Endpoint("udp", "127.0.0.1", mtu=576)).max_unencoded_size == 548
    assert make_transport(Endpoint("udp", "127.0.0.1")).max_unencoded_size == 1472


# -- timeouts (4) -----------------------------------------------------------------------------
def test_a_silent_device_times_out(peer: Peer, run: Run, monkeypatch: pytest.MonkeyPatch,
                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    peer.answers[(0, True)] = NoAnswer()
    monkeypatch.setenv("AGENT_KEY", KEY)
    code, out, err = run("config", "key", "--timeout", "0.3")
    assert (code, out) == (4, "")
    assert one_line(err) == f"agent-host: config key: no answer from serial {peer.port} within 0.3 s"
    assert KEY not in err and KEY not in caplog.text


def test_a_device_silent_to_the_parameters_still_works(peer: Peer, run: Run) -> None:
    peer.transport.handler = lambda r: NoAnswer() if r.group == 0 else peer.handle(r)
    assert run("status", "--timeout", "2")[0] == 0


# -- UDP and BLE through smpclient's own transports -------------------------------------------
@pytest.fixture
def udp_peer(peer: Peer) -> Iterator[UdpPeer]:
    server = UdpPeer(params_or(peer.handle))
    yield server
    server.stop()


def test_udp(udp_peer: UdpPeer, peer: Peer, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # smpclient's real UDP transport, not the fake
    code, out, err = run("tools", "--udp", f"127.0.0.1:{udp_peer.port}", port=False)
    assert (code, err) == (0, "")
    assert "tool policy: confirm; 7 tools" in out
    assert [r.body for r in udp_peer.requests if r.group == 64] == [{}, {"off": 3}, {"off": 6}]


def test_udp_silence_is_a_timeout(udp_peer: UdpPeer, peer: Peer, run: Run,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    peer.answers[(1, False)] = NoAnswer()
    code, _, err = run("status", "--udp", f"127.0.0.1:{udp_peer.port}", "--timeout", "0.5",
                       port=False)
    assert code == 4
    assert one_line(err) == (f"agent-host: status: no answer from udp 127.0.0.1:{udp_peer.port} "
                             "within 0.5 s")


def test_ble_without_a_reachable_device(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    code, _, err = run("status", "--ble", "AA:BB:CC:DD:EE:FF", "--timeout", "1", port=False)
    assert code == 3
    assert one_line(err).startswith("agent-host: cannot open ble AA:BB:CC:DD:EE:FF: ")


def test_ble_without_bleak(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    monkeypatch.setitem(__import__("sys").modules, "smpclient.transport.ble", None)
    code, _, err = run("status", "--ble", "AA:BB:CC:DD:EE:FF", port=False)
    assert code == 3
    assert one_line(err) == ("agent-host: BLE needs the bleak package: pip install "
                             "'zephyr-agent-host[ble]'")


# -- the key stays hidden ---------------------------------------------------------------------
def test_the_key_is_not_in_a_request_repr() -> None:
    request = messages.ConfigWrite(name="key", value=KEY)
    assert KEY not in repr(request) and KEY not in str(request)
    assert KEY.encode() in request.BYTES
    assert "gpt" in repr(messages.ConfigWrite(name="model", value="gpt"))


class _Stdin:
    """A stand-in for sys.stdin: its text, and whether it claims to be a terminal."""

    def __init__(self, text: str, tty: bool = False) -> None:
        self._lines = iter(text.splitlines(keepends=True))
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

    def readline(self) -> str:
        return next(self._lines, "")



def test_rich_tables_on_a_terminal() -> None:
    import io

    from agent_host.ui import Output

    out, err = io.StringIO(), io.StringIO()
    ui = Output(out, err, rich=True)
    ui.table(["SLOT", "TITLE"], [["1", "Hi"], ["12", "A longer title"]], title="conversations")
    ui.pairs([("key", "set")])
    with ui.transfer("slot 1") as update:
        update(50, 140)
        update(140, 140)
    lines = out.getvalue().splitlines()
    assert lines[0].rstrip() == "conversations"
    assert "┃" in lines[1] and "━" in lines[2]
    assert lines[3].startswith("    1 │ Hi") and lines[4].startswith("   12 │ A longer title")
    assert lines[5].split() == ["key", "set"]
