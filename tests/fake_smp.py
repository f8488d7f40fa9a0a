"""A scripted SMP peer for the host CLI's unit tests, where no real device can produce the
case (an EIO, a lost connection, a silent device, a malformed answer).

`FakeTransport` is an smpclient `SMPTransport` in the same process; `UdpPeer` answers the
same handler over real UDP, so smpclient's own UDP transport carries the frames.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cbor2
from smp import header as smphdr
from smpclient.transport import SMPTransport


@dataclass
class Request:
    group: int
    command: int
    write: bool
    body: dict[str, Any]
    raw: bytes


class NoAnswer:
    """Handler result: the device stays silent."""


class Disconnect(Exception):
    """Handler result (raised by receive): the link went away."""


Answer = dict[str, Any] | bytes | NoAnswer | BaseException
Handler = Callable[[Request], Answer]


def params_or(handler: Handler, buf_size: int = 2048) -> Handler:
    """@handler behind MCUmgr's parameters command (group 0, id 6), answered with @buf_size."""

    def wrapped(req: Request) -> Answer:
        if req.group == 0 and req.command == 6:
            return {"buf_size": buf_size, "buf_count": 4}
        return handler(req)

    return wrapped


def decode(raw: bytes) -> Request:
    hdr = smphdr.Header.loads(raw[:8])
    body = cbor2.loads(raw[8:]) if len(raw) > 8 else {}
    return Request(int(hdr.group_id), int(hdr.command_id), hdr.op == smphdr.OP.WRITE, body, raw)


def frame(raw_request: bytes, answer: dict[str, Any] | bytes) -> bytes:
    """The response frame to @raw_request: a CBOR map or, as bytes, an already encoded body."""
    req = smphdr.Header.loads(raw_request[:8])
    body = answer if isinstance(answer, bytes) else cbor2.dumps(answer)
    hdr = smphdr.Header(smphdr.OP(int(req.op) + 1), smphdr.Version.V2, smphdr.Flag(0), len(body),
                        req.group_id, req.sequence, req.command_id)
    return bytes(hdr) + body


def group_error(rc: int, reason: str | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {"err": {"group": 64, "rc": rc}}
    if reason is not None:
        answer["reason"] = reason
    return answer


@dataclass
class FakeTransport(SMPTransport):
    handler: Handler
    mtu_bytes: int = 2048
    requests: list[Request] = field(default_factory=list)
    connected: bool = False
    before: list[bytes] = field(default_factory=list)
    """Frames delivered ahead of each answer (stale answers to earlier requests)."""

    def __post_init__(self) -> None:
        self._pending: asyncio.Queue[bytes | BaseException | NoAnswer] | None = None

    def _queue(self) -> asyncio.Queue[bytes | BaseException | NoAnswer]:
        if self._pending is None:
            self._pending = asyncio.Queue()
        return self._pending

    async def connect(self, address: str, timeout_s: float) -> None:
        self.connected = True

    async def disconnect(self) -> None:
        self.connected = False

    async def send(self, data: bytes) -> None:
        req = decode(data)
        self.requests.append(req)
        answer = self.handler(req)
        for stale in self.before:
            self._queue().put_nowait(stale)
        if isinstance(answer, (dict, bytes)):
            self._queue().put_nowait(frame(data, answer))
        else:
            self._queue().put_nowait(answer)

    async def receive(self) -> bytes:
        item = await self._queue().get()
        if isinstance(item, NoAnswer):
            await asyncio.Event().wait()  # silent until the caller's timeout
        if isinstance(item, BaseException):
            raise item
        assert isinstance(item, bytes)
        return item

    async def send_and_receive(self, data: bytes) -> bytes:
        await self.send(data)
        return await self.receive()

    @property
    def mtu(self) -> int:
        return self.mtu_bytes

    @property
    def max_unencoded_size(self) -> int:
        # As smpclient's serial transport: the device's buffer less the frame's length and CRC.
        if self._smp_server_transport_buffer_size:
            return self._smp_server_transport_buffer_size - 4
        return self.mtu_bytes

    def agent_requests(self) -> list[Request]:
        return [r for r in self.requests if r.group == 64]


class UdpPeer:
    """@handler answering SMP over UDP on 127.0.0.1 (a thread; stop() ends it)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.requests: list[Request] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, addr = self.sock.recvfrom(65535)
            except TimeoutError:
                continue
            req = decode(data)
            self.requests.append(req)
            answer = self.handler(req)
            if isinstance(answer, (dict, bytes)):
                self.sock.sendto(frame(data, answer), addr)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()
