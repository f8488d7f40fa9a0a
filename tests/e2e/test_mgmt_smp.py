"""The agent's SMP management group (docs/mgmt-group.md) on the simulator's pty, driven by the
real smpclient library: every command, errors, frames interleaved with typed shell commands
and with shell output, the chat open, a request running, MTU settings, oversized frames.

The client is minimal on purpose (the host's own client is host/agent_host/mgmt): one request
class per command and op, responses kept as their CBOR maps.
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Callable, Iterator
from enum import IntEnum
from typing import Any, ClassVar

import cbor2
import pytest
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import Faults, Script, TestServer, fixture_reply
from pydantic import ConfigDict, model_validator
from smp import error as smperr
from smp import header as smphdr
from smp import message as smpmsg
from smp import packet as smppacket
from smpclient import SMPClient
from smpclient.transport.serial import (
    Auto,
    BufferParams,
    BufferSize,
    FragmentationStrategy,
    SMPSerialTransport,
)

GROUP = 64
KEY = "sk-mgmt-secret-0123456789abcdef"
CONFIG, STATUS, FORGET, CONVERSATIONS, EXPORT, DELETE, TOOLS = range(7)


class AgentRc(IntEnum):
    OK = 0
    EUNKNOWN = 1
    EINVAL = 2
    EWRITEONLY = 3
    ENOENT = 4
    ERANGE = 5
    EBUSY = 6
    EIO = 7
    ENODEV = 8


class AgentResponse(smpmsg.ReadResponse):
    """Any success: the members stay as the device sent them (model_extra)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    _GROUP_ID = GROUP
    _COMMAND_ID = 0

    @classmethod
    def loads(cls, data: bytes) -> Any:
        """As smp's, but the status's `version` (the agent's) becomes `agent_version`: the
        message base class has a `version` field of its own (the SMP version)."""
        body = cbor2.loads(data[smphdr.Header.SIZE:])
        if isinstance(body, dict) and "version" in body:
            body["agent_version"] = body.pop("version")
        return cls(header=smphdr.Header.loads(data[: smphdr.Header.SIZE]), smp_data=data,
                   **body)

    @model_validator(mode="after")
    def _not_an_error(self) -> AgentResponse:
        extra = self.model_extra or {}
        if "err" in extra or "rc" in extra:
            raise ValueError("an error response")
        return self


class AgentErrorV1(smperr.ErrorV1):
    _GROUP_ID = GROUP
    _COMMAND_ID = 0


class AgentErrorV2(smperr.ErrorV2[AgentRc]):
    _GROUP_ID = GROUP
    _COMMAND_ID = 0
    reason: str


class _Read(smpmsg.ReadRequest):
    model_config = ConfigDict(extra="allow", frozen=True)
    _GROUP_ID = GROUP
    _COMMAND_ID = 0
    _Response: ClassVar[type] = AgentResponse
    _ErrorV1: ClassVar[type] = AgentErrorV1
    _ErrorV2: ClassVar[type] = AgentErrorV2


class _Write(smpmsg.WriteRequest):
    model_config = ConfigDict(extra="allow", frozen=True)
    _GROUP_ID = GROUP
    _COMMAND_ID = 0
    _Response: ClassVar[type] = AgentResponse
    _ErrorV1: ClassVar[type] = AgentErrorV1
    _ErrorV2: ClassVar[type] = AgentErrorV2


_CLASSES: dict[tuple[int, bool], type] = {}


def request(cmd: int, write: bool, **fields: Any) -> Any:
    """A request of command `cmd` (read or write) with `fields` as its map."""
    key = (cmd, write)
    if key not in _CLASSES:
        base = _Write if write else _Read
        _CLASSES[key] = type(f"Agent{cmd}{'W' if write else 'R'}", (base,), {"_COMMAND_ID": cmd})
    return _CLASSES[key](**fields)


class Session:
    """An SMPClient on the simulator's pty, run on its own event loop."""

    def __init__(self, dut: SimDevice, strategy: FragmentationStrategy | None = None,
                 timeout_s: float = 5.0) -> None:
        self.dut = dut
        self.loop = asyncio.new_event_loop()
        self.transport = SMPSerialTransport(strategy if strategy is not None else Auto())
        self.client = SMPClient(self.transport, dut.pty_path, timeout_s=timeout_s)
        self.seen = bytearray()  # every response frame and all shell text read, for key checks
        self.pending = bytearray()  # shell text read but not yet asked for
        self.run(self.client.connect())

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def call(self, cmd: int, write: bool = False, **fields: Any) -> dict[str, Any]:
        """The response map; a group error as {"err": rc, "reason": ...}; v1 as {"rc": N}."""
        rsp = self.run(self.client.request(request(cmd, write, **fields)))
        self.seen += rsp.smp_data
        if isinstance(rsp, AgentErrorV2):
            return {"err": int(rsp.err.rc), "group": int(rsp.err.group), "reason": rsp.reason}
        if isinstance(rsp, AgentErrorV1):
            return {"rc": int(rsp.rc)}
        return dict(rsp.model_extra or {})

    def type_text(self, text: bytes) -> None:
        self.transport._conn.write(text)

    def shell_until(self, marker: bytes, timeout: float = 10.0) -> bytes:
        """Shell text (SMP frames already taken out by smpclient) up to and with `marker`;
        what follows it is kept for the next call."""
        deadline = time.monotonic() + timeout
        while marker not in self.pending:
            assert time.monotonic() < deadline, f"no {marker!r} in {bytes(self.pending)!r}"
            got = self.run(self.transport.read_serial())
            self.seen += got
            self.pending += got
            time.sleep(0.01)
        end = self.pending.index(marker) + len(marker)
        out = bytes(self.pending[:end])
        del self.pending[:end]
        return out

    def close(self) -> None:
        self.run(self.client.disconnect())
        self.loop.close()


def tool_pages(call: Callable[..., dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    """The first TOOLS response and every tool, page by page: a response holds what fits
    (the compiled-in tools fit one; the script tools, when built in, start a second)."""
    first = call(TOOLS)
    listed = list(first["tools"])
    while len(listed) < first["total"]:
        page = call(TOOLS, off=len(listed))
        assert page["off"] == len(listed) and page["tools"], page
        listed += page["tools"]
    assert len(listed) == first["total"]
    return first, listed


@pytest.fixture
def smp(dut: SimDevice) -> Iterator[Session]:
    s = Session(dut)
    yield s
    s.close()
    assert KEY.encode() not in s.seen


def test_every_command(smp: Session) -> None:
    cfg = smp.call(CONFIG)
    assert cfg["key"] == "not set" and cfg["protocol"] == "none" and cfg["max-tools"] == 16
    assert smp.call(CONFIG, True, name="model", value="gpt-test") == {
        "name": "model", "value": "gpt-test"}
    assert smp.call(CONFIG, name="model") == {"name": "model", "value": "gpt-test"}
    assert smp.call(CONFIG, True, name="key", value=KEY) == {"name": "key", "value": "set"}
    assert smp.call(CONFIG, name="key") == {"name": "key", "value": "set"}
    status = smp.call(STATUS)
    assert status["key"] == "set" and status["model"] == "gpt-test"
    assert status["agent_version"] == "0.1.0" and status["board"] == "host_sim"
    assert status["tool_calls"]["executed"] == 0 and status["pools"]
    convs = smp.call(CONVERSATIONS)
    assert convs["list"] == [] and convs["next"] == convs["slots"] == 3
    tools, _ = tool_pages(smp.call)
    assert tools["policy"] == "confirm"
    assert smp.call(EXPORT, slot=1, off=0)["err"] == AgentRc.ENOENT
    assert smp.call(DELETE, True, slot=1) == {
        "err": AgentRc.ENOENT, "group": GROUP, "reason": "slot 1 holds no conversation"}
    assert smp.call(FORGET, True) == {}
    assert smp.call(CONFIG)["key"] == "not set"
    # The shell sees the same state.
    smp.type_text(b"agent status\r")
    out = smp.shell_until(PROMPT)
    assert b"key:       not set" in out


def test_errors_carry_the_shells_reasons(smp: Session) -> None:
    r = smp.call(CONFIG, True, name="endpoint", value="ftp://x.example/v1")
    assert r["err"] == AgentRc.EINVAL
    assert r["reason"] == "endpoint must be a complete http:// or https:// URL; nothing changed"
    assert smp.call(CONFIG, True, name="colour", value="x")["err"] == AgentRc.EUNKNOWN
    assert smp.call(CONFIG, True, name="model", value="x", bogus=1)["err"] == AgentRc.EUNKNOWN
    assert smp.call(CONFIG, True, name="model")["reason"] == "value is missing"
    assert smp.call(EXPORT, slot=4, off=0)["err"] == AgentRc.ERANGE
    assert smp.call(TOOLS, off=1000)["err"] == AgentRc.ERANGE
    assert smp.call(STATUS, True) == {"rc": 8}  # no write handler: MCUmgr's ENOTSUP
    # The shell refuses the same value with the same words.
    smp.type_text(b"agent config endpoint ftp://x.example/v1\r")
    assert b"endpoint must be a complete http:// or https:// URL; nothing changed" in (
        smp.shell_until(PROMPT))


def test_key_refused_without_echo(smp: Session) -> None:
    r = smp.call(CONFIG, True, name="key", value=KEY + " x")
    assert r["err"] == AgentRc.EINVAL and "key unchanged" in r["reason"]
    assert smp.call(CONFIG, name="key")["value"] == "not set"


def test_frames_interleaved_with_typing(smp: Session) -> None:
    """A frame in the middle of a typed line: the shell gets the whole line, SMP its answer."""
    smp.type_text(b"agent config mo")
    assert smp.call(CONFIG, True, name="user", value="ada") == {"name": "user", "value": "ada"}
    smp.type_text(b"del typed-model\r")
    out = smp.shell_until(b"model set to typed-model")
    assert b"agent config model typed-model" in out  # the echo, unbroken
    smp.shell_until(PROMPT)
    assert smp.call(CONFIG)["model"] == "typed-model"
    # Several frames and command lines in one write, in order.
    data = bytearray(b"agent config user bob\r")
    for line in smppacket.encode(request(CONFIG, False, name="user").BYTES):
        data += line
    data += b"agent config user\r"
    smp.type_text(bytes(data))
    rsp = smp.run(smp.transport.receive())
    assert b"bob" in rsp  # the command before the frame ran first
    out = smp.shell_until(b"user: bob")
    assert b"user set to bob" in out


def test_frames_while_the_shell_prints(smp: Session) -> None:
    """The shell prints a long table while requests come and go: neither is cut."""
    for _ in range(5):
        smp.type_text(b"agent tools\r")
        tool_pages(smp.call)
        assert smp.call(CONFIG, name="model")["name"] == "model"
        out = smp.shell_until(b"offered per provider turn")
        assert b"storage_read" in out and b"\x06\x09" not in out
        smp.shell_until(PROMPT)


def test_chat_open_answers_and_is_busy(sims: Any) -> None:
    """While the chat screen has the console, SMP still works; the slot of its conversation
    cannot be deleted; the stored turn exports byte for byte in pages."""
    reply = fixture_reply("chat/openai_gpt4o_json_object_long.sse")
    with TestServer(Script.repeat(reply)) as srv:
        dut = sims.start()
        s = Session(dut)
        try:
            s.call(CONFIG, True, name="endpoint", value=srv.url("/v1/chat/completions"))
            s.call(CONFIG, True, name="model", value="m")
            s.type_text(b"agent new\r")
            s.shell_until(b"Esc returns to the shell")
            s.type_text(b"hello there\r")
            deadline = time.monotonic() + 20
            while not s.call(CONVERSATIONS)["list"]:
                assert time.monotonic() < deadline, "the turn was never stored"
                time.sleep(0.2)
            assert s.call(CONFIG, name="model")["value"] == "m"
            listed = s.call(CONVERSATIONS)["list"]
            assert listed[0]["slot"] == 1 and listed[0]["turns"] == 1
            assert listed[0]["title"].startswith("hello there")
            r = s.call(DELETE, True, slot=1)
            assert r == {"err": AgentRc.EBUSY, "group": GROUP,
                         "reason": "slot 1 is open in the chat"}
            data = bytearray()
            total = -1
            pages = 0
            while total < 0 or len(data) < total:
                page = s.call(EXPORT, slot=1, off=len(data))
                assert page["off"] == len(data) and page["data"]
                total = page["len"]
                data += page["data"]
                pages += 1
            assert len(data) == total == listed[0]["bytes"]
            assert pages == -(-total // 1024)
            assert s.call(EXPORT, slot=1, off=total + 1)["err"] == AgentRc.ERANGE
            s.type_text(b"\x1b")
            s.shell_until(PROMPT)
            assert s.call(DELETE, True, slot=1) == {"slot": 1}
            assert s.call(CONVERSATIONS)["list"] == []
        finally:
            s.close()
        assert KEY.encode() not in s.seen


def test_request_running_is_busy(sims: Any) -> None:
    reply = fixture_reply("chat/openai_gpt4o_json_object_long.sse",
                          Faults(stall_after=600, stall_seconds=20))
    with TestServer(Script.repeat(reply)) as srv:
        dut = sims.start()
        s = Session(dut)
        try:
            s.call(CONFIG, True, name="endpoint", value=srv.url("/v1/chat/completions"))
            s.call(CONFIG, True, name="model", value="m")
            s.type_text(b"agent ask hello\r")
            deadline = time.monotonic() + 10
            while not srv.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert srv.requests
            r = s.call(CONFIG, True, name="model", value="other")
            assert r["err"] == AgentRc.EBUSY and r["reason"] == (
                "a request is running; nothing changed")
            assert s.call(FORGET, True)["err"] == AgentRc.EBUSY
            assert s.call(STATUS)["model"] == "m"  # reads still work
            s.type_text(b"\x1b")
            s.shell_until(b"agent: cancelled")
            s.shell_until(PROMPT)
            deadline = time.monotonic() + 5
            while s.call(CONFIG, True, name="model", value="other").get("err"):
                assert time.monotonic() < deadline
                time.sleep(0.1)
        finally:
            s.close()


STRATEGIES = [
    pytest.param(Auto(), id="auto"),
    pytest.param(BufferSize(buf_size=2048), id="buf2048"),
    pytest.param(BufferSize(buf_size=512, line_length=64), id="buf512-line64"),
    pytest.param(BufferSize(buf_size=256, line_length=32), id="buf256-line32"),
    pytest.param(BufferParams(line_length=128, line_buffers=4), id="params128x4"),
    pytest.param(BufferParams(line_length=32, line_buffers=8), id="params32x8"),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_mtu_sweep(dut: SimDevice, strategy: FragmentationStrategy) -> None:
    s = Session(dut, strategy)
    try:
        room = s.transport.max_unencoded_size
        # The longest model name the request size allows (header and map around the value).
        length = min(127, room - 30)
        assert length > 20
        model = "".join(chr(ord("a") + i % 26) for i in range(length))
        assert s.call(CONFIG, True, name="model", value=model) == {
            "name": "model", "value": model}
        assert s.call(CONFIG)["model"] == model
        with pytest.raises(ValueError):  # smpclient itself refuses what the device cannot take
            s.call(CONFIG, True, name="model", value="x" * room)
        tool_pages(s.call)
        assert s.call(STATUS)["model"] == model
    finally:
        s.close()


def test_oversized_request_is_dropped_and_the_next_works(dut: SimDevice) -> None:
    """A request past the 2048-byte buffer gets no answer, as on Zephyr; the next one does."""
    s = Session(dut, BufferSize(buf_size=4096), timeout_s=1.5)
    try:
        with pytest.raises(TimeoutError):
            s.call(CONFIG, True, name="model", value="m" * 2500)
        s.client._timeout_s = 5.0
        assert s.call(CONFIG, True, name="model", value="small") == {
            "name": "model", "value": "small"}
        # A request the buffer holds but the shell's rules refuse.
        r = s.call(CONFIG, True, name="model", value="m" * 1900)
        assert r["err"] == AgentRc.EINVAL and "too long" in r["reason"]
    finally:
        s.close()


def test_version_1_and_malformed_bodies(smp: Session) -> None:
    """Raw packets through the same transport: MCUmgr's {"rc": N} for a body that is no map."""
    def raw(op: int, version: int, cmd: int, body: bytes) -> dict[str, Any]:
        hdr = struct.pack("!BBHHBB", (version << 3) | op, 0, len(body), GROUP, 200, cmd)
        for line in smppacket.encode(hdr + body):
            smp.type_text(line)
        frame = smp.run(smp.transport.receive())
        smp.seen += frame
        assert frame[6] == 200 and frame[0] == (version << 3) | (op + 1)
        assert smphdr.Header.loads(frame[:8]).group_id == GROUP
        result: dict[str, Any] = cbor2.loads(frame[8:])
        return result

    assert raw(0, 1, CONFIG, b"\x83\x01\x02\x03") == {"rc": 3}
    assert raw(0, 1, CONFIG, b"\xa1\x64na") == {"rc": 3}
    assert raw(0, 0, CONFIG, cbor2.dumps({"name": "user"})) == {"name": "user", "value": "user"}
