"""`Device`: the agent management group's commands over one connected smpclient transport.

Every method sends typed requests (messages.py) and returns the typed answer; a refusal is a
DeviceRefusedError with the group's rc name and the device's reason, a missing answer a
DeviceTimeoutError, a lost or broken connection a TransportError.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import cbor2
from pydantic import ValidationError
from smp import error as smperror
from smp import header as smphdr
from smp import message as smpmsg
from smp import packet as smppacket
from smp.exceptions import SMPException
from smpclient.exceptions import SMPClientException
from smpclient.requests.os_management import MCUMgrParametersRead
from smpclient.transport import SMPTransport, SMPTransportDisconnected
from smpclient.transport.serial import SMPSerialTransport

from .. import convfile, module_dir
from ..errors import (
    DeviceRefusedError,
    DeviceTimeoutError,
    ExportError,
    TransportError,
)
from . import messages as m
from .transport import Endpoint, connect, describe, make_transport

DEFAULT_TIMEOUT = 5.0
PARAMS_TIMEOUT = 1.0
"""How long to wait for MCUmgr's parameters (OS group) before assuming FALLBACK_MTU."""
FALLBACK_MTU = 256
"""Zephyr's CONFIG_MCUMGR_TRANSPORT_SHELL_MTU default, for a device that does not say."""

EXPORT_ATTEMPTS = 3
"""Passes of an export whose file keeps changing before it gives up."""

Progress = Callable[[int, int], None]
"""progress(done, total): bytes of an export or an import, or rows of the tool table so far."""

IMPORT_WINDOW = 2
"""Requests of an import (the head, the parts) on the way before the first of them is
answered (1: each waits for the previous answer). Two keep the line busy while the device
handles one."""

R = TypeVar("R", bound=smpmsg.Response)
T = TypeVar("T")


@dataclass(frozen=True)
class Export:
    """A conversation file read with `export`: its bytes, checked, and what they hold."""

    data: bytes
    conversation: convfile.ConvFile


@dataclass(frozen=True)
class Conversations:
    """The conversation store's directory, its slot count and the slots in use; besides the
    readable entries, those whose text was repaired ((slot, field names)) and those that
    could not be read (m.ConversationsResponse)."""

    dir: str
    slots: int
    entries: tuple[m.Conversation, ...]
    repaired: tuple[tuple[int, tuple[str, ...]], ...] = ()
    unreadable: tuple[m.BadEntry, ...] = ()


@dataclass(frozen=True)
class ToolTable:
    policy: str
    tools: tuple[m.Tool, ...]


@dataclass(frozen=True)
class StatusStream:
    """Bytes of the tool status stream (tools.jsonl) from `off`; `size` is the stream's
    length and `gen` its generation when they were read."""

    gen: int
    size: int
    off: int
    data: bytes


@dataclass(frozen=True)
class Imported:
    """An accepted import: the module, what became of it (installed, replaced, unchanged),
    whether the device journaled it, and where the transfer started (0, or the bytes an
    interrupted arrival of the same text already held)."""

    name: str
    kind: str
    size: int
    sha256: str
    state: str
    persisted: bool
    resumed_at: int
    parts: int


@dataclass(frozen=True)
class ModuleList:
    """The catalog: its entry count (CONFIG_AGENT_MODULE_SLOTS) and the entries in use."""

    slots: int
    entries: tuple[m.Module, ...]


SERIAL_LINE = 128
"""smpclient's serial line length (a 2-byte marker, base64, a newline: 127 bytes on the wire,
the device's MCUMGR_SERIAL_MAX_FRAME)."""
SERIAL_LINE_B64 = (SERIAL_LINE - smppacket.LINE_LENGTH_SUBTRACTOR) // 4 * 4


def _serial_wire(message: int) -> int:
    """Bytes on the wire of an SMP message of @message bytes in smpclient's serial framing
    (smp.packet.encode: length and CRC, base64, lines of markers, text and newline)."""
    chars = 4 * -(-(message + 4) // 3)
    lines = -(-chars // SERIAL_LINE_B64)
    return chars + lines * (smppacket.DELIMITER_SIZE + len(smppacket.END_DELIMITER))


def _bstr_head(size: int) -> int:
    """Bytes of the CBOR head of a byte string of @size bytes."""
    return 1 if size < 24 else 2 if size < 0x100 else 3 if size < 0x10000 else 5


def _rc_name(rc: int) -> str:
    try:
        return m.AgentRc(rc).name
    except ValueError:
        return f"rc {rc}"


def _mcumgr_name(rc: int) -> str:
    try:
        return smperror.MGMT_ERR(rc).name
    except ValueError:
        return f"rc {rc}"


class Device:
    """The agent group on a connected transport. Use `open_device()` to make one."""

    def __init__(self, transport: SMPTransport, name: str, timeout: float = DEFAULT_TIMEOUT):
        self.transport = transport
        self.name = name
        self.timeout = timeout
        # A random first sequence number: a late answer to an earlier session's request
        # (after a timeout) is then unlikely to look like an answer to this one's.
        self._sequence = random.randrange(256)

    def _next_sequence(self) -> int:
        self._sequence = (self._sequence + 1) % 256
        return self._sequence

    # -- one exchange ------------------------------------------------------------------------
    async def _send(self, request: smpmsg.Request, what: str) -> None:
        size = len(request.BYTES)
        limit = self.transport.max_unencoded_size
        if size > limit:
            raise TransportError(f"{what}: the request takes {size} bytes, more than the "
                                 f"{limit} bytes the transport carries (see --mtu)")
        await self.transport.send(request.BYTES)

    async def _receive(self, request: smpmsg.Request) -> bytes:
        want = request.header
        while True:
            frame = await self.transport.receive()
            if len(frame) < smphdr.Header.SIZE:
                continue
            try:
                got = smphdr.Header.loads(frame[: smphdr.Header.SIZE])
            except ValueError:
                continue
            if (got.sequence, got.group_id, got.command_id, got.op) == \
                    (want.sequence, want.group_id, want.command_id, want.op + 1):
                return frame
            # Anything else is a late answer to an earlier request: skip it.

    async def _guarded(self, step: Awaitable[T], what: str, wait: float) -> T:
        """Await @step (a send or a receive) within @wait seconds; transport failures and
        silence raise as in call()."""
        try:
            return await asyncio.wait_for(step, wait)
        except asyncio.TimeoutError:
            raise DeviceTimeoutError(f"{what}: no answer from {self.name} within "
                                     f"{wait:g} s") from None
        except (SMPTransportDisconnected, OSError) as err:
            raise TransportError(f"{what}: connection to {self.name} lost "
                                 f"({describe(err)})") from None
        except (SMPException, SMPClientException, ValueError) as err:
            raise TransportError(f"{what}: damaged answer from {self.name} "
                                 f"({describe(err)})") from None

    async def exchange(self, request: smpmsg.Request, what: str,
                       timeout: float | None = None) -> bytes:
        """Send @request and return the raw answer frame (header and CBOR body), unchecked;
        transport failures and silence raise as in call()."""
        wait = self.timeout if timeout is None else timeout

        async def both() -> bytes:
            await self._send(request, what)
            return await self._receive(request)

        return await self._guarded(both(), what, wait)

    async def call(self, request: Any, what: str, timeout: float | None = None) -> Any:
        """Send @request (a messages.py request) and return its typed response.

        @what names the command in error messages.
        """
        frame = await self.exchange(request, what, timeout)
        return self._typed(frame, request, what)

    def _typed(self, frame: bytes, request: Any, what: str) -> Any:
        """The typed response of @request in @frame; a refusal or an answer the group does
        not define raises."""
        response_type: type[smpmsg.Response] = request._Response
        for cls in (response_type, m.AgentErrorV2, m.AgentErrorV1):
            try:
                response = cls.loads(frame)
            except (ValidationError, cbor2.CBORError, ValueError, TypeError):
                continue
            if isinstance(response, m.AgentErrorV2):
                rc = int(response.err.rc)
                raise DeviceRefusedError(what, rc, _rc_name(rc), response.reason or "")
            if isinstance(response, m.AgentErrorV1):
                rc = int(response.rc)
                reason = response.rsn or ""
                if rc == smperror.MGMT_ERR.ENOTSUP and not reason:
                    reason = "the device has no agent management group (is it the agent firmware?)"
                raise DeviceRefusedError(what, rc, f"MCUmgr {_mcumgr_name(rc)}", reason)
            return response
        self._refusal_of_unknown_rc(frame, what)
        raise TransportError(f"{what}: the answer from {self.name} is not one the agent group "
                             "defines (docs/mgmt-group.md)")

    @staticmethod
    def _refusal_of_unknown_rc(frame: bytes, what: str) -> None:
        """A group error with an rc this host does not know is still a refusal."""
        try:
            body = cbor2.loads(frame[smphdr.Header.SIZE:])
        except Exception:  # noqa: BLE001 - any undecodable body is reported by the caller
            return
        if not isinstance(body, dict):
            return
        err = body.get("err")
        reason = body.get("reason")
        if isinstance(err, dict) and isinstance(err.get("rc"), int) and err.get("rc") != 0:
            rc = int(err["rc"])
            raise DeviceRefusedError(what, rc, _rc_name(rc),
                                     reason if isinstance(reason, str) else "")

    # -- transport setup ---------------------------------------------------------------------
    async def probe_mtu(self) -> int | None:
        """Ask MCUmgr's parameters for the device's buffer size and size requests by it; a
        device that does not answer (or has no OS group) gets FALLBACK_MTU. Returns the
        advertised size, or None."""
        request = MCUMgrParametersRead(sequence=self._next_sequence())
        advertised: int | None = None
        with suppress(DeviceTimeoutError, DeviceRefusedError, TransportError):
            frame = await self.exchange(request, "parameters", min(PARAMS_TIMEOUT, self.timeout))
            with suppress(ValidationError, cbor2.CBORError, ValueError, TypeError):
                advertised = request._Response.loads(frame).buf_size
        self.transport.initialize(advertised if advertised and advertised > 8 else FALLBACK_MTU)
        return advertised

    # -- the group's commands ----------------------------------------------------------------
    async def config(self) -> m.ConfigAllResponse:
        """Every setting; the key only as "set" or "not set"."""
        response: m.ConfigAllResponse = await self.call(
            m.ConfigReadAll(sequence=self._next_sequence()), "config")
        return response

    async def config_get(self, name: str) -> str:
        """One setting's value (the key's: "set" or "not set")."""
        response: m.ConfigValueResponse = await self.call(
            m.ConfigRead(name=name, sequence=self._next_sequence()), f"config {name}")
        return response.value

    async def config_set(self, name: str, value: str) -> str:
        """Set @name to @value; returns the stored canonical value ("set" for the key)."""
        response: m.ConfigWriteResponse = await self.call(
            m.ConfigWrite(name=name, value=value, sequence=self._next_sequence()),
            f"config {name}")
        return response.value

    async def clear_key(self) -> str:
        """Erase the API key; returns "not set"."""
        response: m.ConfigWriteResponse = await self.call(
            m.ConfigWrite(name="key", clear=True, sequence=self._next_sequence()),
            "config key clear")
        return response.value

    async def status(self) -> m.StatusResponse:
        response: m.StatusResponse = await self.call(
            m.StatusRead(sequence=self._next_sequence()), "status")
        return response

    async def forget(self) -> None:
        """Erase every setting below agent/, the key included."""
        await self.call(m.ForgetWrite(sequence=self._next_sequence()), "forget")

    async def conversations(self) -> Conversations:
        """Every stored conversation, page by page (slots `off + 1` .. `next` each)."""
        entries: list[m.Conversation] = []
        repaired: list[tuple[int, tuple[str, ...]]] = []
        unreadable: list[m.BadEntry] = []
        first: m.ConversationsResponse | None = None
        off = 0
        while first is None or off < first.slots:
            page: m.ConversationsResponse = await self.call(
                m.ConversationsRead(off=off or None, sequence=self._next_sequence()), "list")
            if first is None:
                first = page
            elif (page.dir, page.slots) != (first.dir, first.slots):
                raise TransportError("list: the conversation store changed during the listing")
            moved = off < page.next <= page.slots or off == page.next == page.slots
            if page.off != off or not moved:
                raise TransportError(f"list: the device answered slots {page.off}..{page.next} "
                                     f"of {page.slots} to a request from {off}")
            entries += page.entries
            repaired += page.repaired
            unreadable += page.unreadable
            off = page.next
        return Conversations(first.dir, first.slots, tuple(entries), tuple(repaired),
                             tuple(unreadable))

    async def export(self, slot: int, progress: Progress | None = None) -> Export:
        """Read slot @slot's conversation file page by page, check it as a whole (every CRC of
        the format, the trailer's file CRC included) and return it.

        When the file's length changes between pages (a turn was committed meanwhile), the
        export starts again from 0, up to EXPORT_ATTEMPTS times in all."""
        what = f"export {slot}"
        for _ in range(EXPORT_ATTEMPTS):
            data = await self._export_once(slot, what, progress)
            if data is not None:
                break
        else:
            raise ExportError(f"{what}: the conversation changed during the export "
                              f"{EXPORT_ATTEMPTS} times in a row; export it again")
        try:
            conversation = convfile.parse(data, slot)
        except convfile.ConvFormatError as err:
            raise ExportError(f"{what}: the file is damaged: {err}") from None
        return Export(data, conversation)

    async def _export_once(self, slot: int, what: str,
                           progress: Progress | None) -> bytes | None:
        """One pass from offset 0; None when the length changed on the way."""
        data = bytearray()
        total: int | None = None
        while total is None or len(data) < total:
            page: m.ExportResponse = await self.call(
                m.ExportRead(slot=slot, off=len(data), sequence=self._next_sequence()), what)
            if page.slot != slot or page.off != len(data):
                raise TransportError(f"{what}: the device answered slot {page.slot} offset "
                                     f"{page.off} to a request for slot {slot} offset {len(data)}")
            if total is None:
                total = page.length
            elif page.length != total:
                return None
            if len(data) + len(page.data) > total:
                raise TransportError(f"{what}: the device sent more than the file's "
                                     f"{total} bytes")
            if not page.data and len(data) < total:
                raise TransportError(f"{what}: the device sent no data at offset {len(data)} "
                                     f"of {total}")
            data += page.data
            if progress is not None:
                progress(len(data), total)
        return bytes(data)

    async def delete(self, slot: int) -> None:
        response: m.DeleteResponse = await self.call(
            m.DeleteWrite(slot=slot, sequence=self._next_sequence()), f"delete {slot}")
        if response.slot != slot:
            raise TransportError(f"delete {slot}: the device answered for slot {response.slot}")

    async def man_record(self, topic: str, sha256: str | None) -> str:
        """Record @sha256 (hex) as the digest of TOPIC's page on the card, or forget it (None);
        returns the digest the device read back ("" when forgotten)."""
        response: m.ManResponse = await self.call(
            m.ManWrite(topic=topic, sha256=sha256, sequence=self._next_sequence()),
            f"man {topic}")
        if response.topic != topic or response.sha256 != (sha256 or ""):
            raise TransportError(f"man {topic}: the device answered {response.topic!r} with "
                                 f"{response.sha256!r}")
        return response.sha256

    async def tools(self, progress: Progress | None = None) -> ToolTable:
        """The whole tool table, page by page."""
        rows: list[m.Tool] = []
        total: int | None = None
        policy = ""
        while total is None or len(rows) < total:
            off = len(rows)
            request = m.ToolsRead(off=off or None, sequence=self._next_sequence())
            page: m.ToolsResponse = await self.call(request, "tools")
            if page.off != off:
                raise TransportError(f"tools: the device answered offset {page.off} to a "
                                     f"request for {off}")
            if total is None:
                total, policy = page.total, page.policy
            elif page.total != total:
                raise TransportError(f"tools: the table changed from {total} to {page.total} "
                                     "tools during the listing")
            if not page.tools and off < total:
                raise TransportError(f"tools: the device sent no tools at offset {off} of "
                                     f"{total}")
            if off + len(page.tools) > total:
                raise TransportError(f"tools: the device sent more than {total} tools")
            rows += page.tools
            if progress is not None:
                progress(len(rows), total)
        return ToolTable(policy, tuple(rows))

    # -- tool status -------------------------------------------------------------------------
    async def tool_status(self, off: int = 0, agent: int | None = None,
                          refresh: bool = False) -> StatusStream:
        """The tool status stream from `off` to its end; with `refresh`, agent `agent`'s
        current state is appended first. Read again from 0 when the device compacted the
        stream (its generation changed) during the read."""
        for _ in range(EXPORT_ATTEMPTS):
            data = bytearray()
            pos, gen = off, None
            first = True
            while True:
                request = m.ToolStatusRead(off=pos or None,
                                           agent=agent if first and refresh else None,
                                           refresh=True if first and refresh else None,
                                           sequence=self._next_sequence())
                page: m.ToolStatusResponse = await self.call(request, "tool status")
                first = False
                if page.off != pos:
                    raise TransportError(f"tool status: the device answered offset {page.off} "
                                         f"to a request for {pos}")
                if gen is None:
                    gen = page.gen
                elif page.gen != gen:
                    break
                data += page.data
                pos += len(page.data)
                if pos >= page.size or not page.data:
                    return StatusStream(gen, page.size, off, bytes(data))
            off, refresh = 0, False
        raise TransportError("tool status: the stream kept being compacted during the read")

    async def tool_select(self, group: str, value: str, agent: int | None = None
                          ) -> m.ToolSelectResponse:
        """Set the instance default of `group` ("all" for every group; value on/off), or
        with `agent` that agent's choice (on/off/inherit); the next turn uses it."""
        request = m.ToolSelectWrite(group=group, value=value, agent=agent,
                                    sequence=self._next_sequence())
        response: m.ToolSelectResponse = await self.call(request, f"tool selection {group}")
        return response

    # -- modules -----------------------------------------------------------------------------
    def part_room(self, name: str, off: int) -> int:
        """The most data bytes a part of @name at @off carries: what the transport's buffer
        holds after the SMP header and the part's CBOR map (on serial the buffer also held
        the frame's length and CRC, which max_unencoded_size has taken off)."""
        limit = self.transport.max_unencoded_size
        envelope = len(m.PartWrite(name=name, off=off, data=b"", sequence=0).BYTES)
        room = limit - envelope
        while room > 0 and envelope + room + _bstr_head(room) - _bstr_head(0) > limit:
            room -= 1
        if room <= 0:
            raise TransportError(f"import {name}: a part does not fit the {limit} bytes the "
                                 "transport carries (see --mtu)")
        if not isinstance(self.transport, SMPSerialTransport):
            return room

        # On serial a part is base64 in lines: of the sizes that fill the last line, take
        # the one with the most data per byte on the wire (2 bytes less data can save a
        # line's 7).
        def ratio(size: int) -> float:
            return size / _serial_wire(envelope + size + _bstr_head(size) - _bstr_head(0))

        return max(range(max(1, room - 3 * SERIAL_LINE_B64 // 4), room + 1), key=ratio)

    def _head(self, text: module_dir.ModuleText) -> m.ImportWrite:
        return m.ImportWrite(name=text.name, kind=text.kind, manifest_len=len(text.manifest),
                             body_len=len(text.body), sha256=text.sha256,
                             sequence=self._next_sequence())

    def _check_head(self, answer: m.ImportResponse, text: module_dir.ModuleText,
                    what: str) -> int:
        if answer.name != text.name or answer.off >= len(text.text):
            raise TransportError(f"{what}: the device answered {answer.name!r} offset "
                                 f"{answer.off} to the head of {len(text.text)} bytes")
        return answer.off

    async def import_head(self, text: module_dir.ModuleText, what: str | None = None) -> int:
        """Announce @text (IMPORT head); returns the offset to send from: 0, or the bytes an
        incomplete arrival of the same head already holds."""
        what = what or f"import {text.name}"
        answer: m.ImportResponse = await self.call(self._head(text), what)
        return self._check_head(answer, text, what)

    async def import_part(self, name: str, off: int, data: bytes,
                          what: str | None = None) -> m.PartResponse:
        """Send one part: @data at offset @off of the arrival @name."""
        what = what or f"import {name}"
        request = m.PartWrite(name=name, off=off, data=data, sequence=self._next_sequence())
        answer: m.PartResponse = await self.call(request, what)
        self._check_part(answer, name, off + len(data), what)
        return answer

    def _check_part(self, answer: m.PartResponse, name: str, end: int, what: str) -> None:
        if answer.name != name or answer.off != end:
            raise TransportError(f"{what}: the device answered {answer.name!r} offset "
                                 f"{answer.off} to a part ending at {end}")

    async def import_module(self, directory: Path | str, progress: Progress | None = None,
                            window: int = IMPORT_WINDOW) -> Imported:
        """Import the module directory @directory (module_dir.read_module()): the head, then
        parts as large as the device's buffer allows from the offset it answers, @window
        requests on the way at once. The device validates the whole text with the last part
        and installs it, or refuses it (DeviceRefusedError with its reason)."""
        text = module_dir.read_module(Path(directory))
        return await self.import_text(text, progress, window, what=f"import {directory}")

    async def import_text(self, text: module_dir.ModuleText, progress: Progress | None = None,
                          window: int = IMPORT_WINDOW, what: str | None = None) -> Imported:
        """import_module() for a module already read.

        With @window 2 the first part follows the head before the head is answered, and
        each part goes out before the previous one is answered: the line never waits for an
        answer but after the last part. When the head's answer is a resume offset, parts
        already on the way rewrite bytes the device holds (the same text: the same digest)
        and their answers say where the device stands; the next part starts there."""
        what = what or f"import {text.name}"
        data = text.text
        head = self._head(text)
        await self._guarded(self._send(head, what), what, self.timeout)
        pending: deque[tuple[m.ImportWrite | m.PartWrite, int]] = deque([(head, 0)])
        start: int | None = None
        off = 0
        parts = 0
        while pending or off < len(data):
            while off < len(data) and len(pending) < max(1, window):
                room = self.part_room(text.name, off)
                request = m.PartWrite(name=text.name, off=off, data=data[off:off + room],
                                      sequence=self._next_sequence())
                await self._guarded(self._send(request, what), what, self.timeout)
                off += len(request.data)
                pending.append((request, off))
            sent, end = pending.popleft()
            frame = await self._guarded(self._receive(sent), what, self.timeout)
            if isinstance(sent, m.ImportWrite):
                start = self._check_head(self._typed(frame, sent, what), text, what)
                off = max(off, start)
                if progress is not None:
                    progress(start, len(data))
                continue
            assert start is not None
            answer: m.PartResponse = self._typed(frame, sent, what)
            end = max(end, start)
            self._check_part(answer, text.name, end, what)
            parts += 1
            if progress is not None:
                progress(end, len(data))
            if answer.state != "incomplete":
                if end != len(data) or pending:
                    raise TransportError(f"{what}: the device installed the module at offset "
                                         f"{end} of {len(data)}")
                return Imported(text.name, text.kind, len(data), text.sha256, answer.state,
                                bool(answer.persisted), start, parts)
        raise TransportError(f"{what}: the device took all {len(data)} bytes but did not "
                             "install the module")

    async def modules(self) -> ModuleList:
        """Every catalog entry, installed or incomplete, page by page (from `next`)."""
        entries: list[m.Module] = []
        slots: int | None = None
        off = 0
        while slots is None or off < slots:
            page: m.ModulesResponse = await self.call(
                m.ModulesRead(off=off or None, sequence=self._next_sequence()), "modules")
            if slots is None:
                slots = page.slots
            elif page.slots != slots:
                raise TransportError(f"modules: the catalog changed from {slots} to "
                                     f"{page.slots} entries during the listing")
            if page.off != off or not off < page.next <= page.slots:
                raise TransportError(f"modules: the device answered entries {page.off}.."
                                     f"{page.next} of {page.slots} to a request from {off}")
            entries += page.entries
            off = page.next
        return ModuleList(slots, tuple(entries))

    async def remove(self, name: str) -> None:
        """Remove the installed module @name (the device journals a REMOVE)."""
        answer: m.RemoveResponse = await self.call(
            m.RemoveWrite(name=name, sequence=self._next_sequence()), f"remove {name}")
        if answer.name != name:
            raise TransportError(f"remove {name}: the device answered for {answer.name!r}")


@asynccontextmanager
async def open_device(endpoint: Endpoint, timeout: float = DEFAULT_TIMEOUT) -> AsyncIterator[Device]:
    """Connect to @endpoint, size requests (--mtu or the device's parameters), yield a Device
    and disconnect."""
    transport = make_transport(endpoint)
    await connect(transport, endpoint, timeout)
    try:
        device = Device(transport, str(endpoint), timeout)
        if endpoint.mtu is None:
            await device.probe_mtu()
        elif endpoint.kind == "ble":
            transport.initialize(endpoint.mtu)
        yield device
    finally:
        with suppress(Exception):
            await transport.disconnect()
