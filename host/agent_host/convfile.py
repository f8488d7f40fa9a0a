"""Reader of the conversation file format (docs/conversation-format.md).

`parse()` checks a whole file as the device's store does (header, every record's CRC-32,
the counts, the trailer and the file's CRC-32) and returns its fields and records;
`transcript()` renders a checked file as text, safe to print on a terminal.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone

from .safe_text import terminal_safe

HEADER_MAGIC = b"AGCV"
TRAILER_MAGIC = b"AGCE"
VERSION = 2  # written by the device; VERSIONS are read
VERSIONS = (1, 2)
HEADER_SIZE = 48
TRAILER_SIZE = 12
RECORD_OVERHEAD = 8
MIN_FILE_SIZE = HEADER_SIZE + 3 * RECORD_OVERHEAD + TRAILER_SIZE

_HEADER = struct.Struct("<4sBBBBIIqqIII")  # the first 44 bytes; the header CRC follows
_RECORD_HEAD = struct.Struct("<BBH")
_TRAILER = struct.Struct("<4sII")

REC_PROVIDER = 1
REC_MODEL = 2
REC_TITLE = 3
REC_USER = 16
REC_ASSISTANT = 17
REC_TOOL = 18
REC_RESPONSE_ID = 19
REC_USAGE = 20
REC_TOOL_ID = 21  # version 2: u16, the numeric tool id of the tool record before it
TOOL_ID_SIZE = 2

PROTOCOLS = {0: "none", 1: "Chat Completions", 2: "Responses"}


class ConvFormatError(ValueError):
    """The bytes are not a valid conversation file; the message says which check failed."""


@dataclass(frozen=True)
class Record:
    type: int
    flags: int
    payload: bytes


@dataclass(frozen=True)
class ConvFile:
    version: int
    slot: int
    protocol: int
    conversation_id: int
    sequence: int
    created: int
    updated: int
    turns: int
    size: int
    records: tuple[Record, ...]

    def _text_of(self, index: int) -> str:
        return self.records[index].payload.decode("utf-8", errors="replace")

    @property
    def provider(self) -> str:
        return self._text_of(0)

    @property
    def model(self) -> str:
        return self._text_of(1)

    @property
    def title(self) -> str:
        return self._text_of(2)


def crc32(data: bytes) -> int:
    """CRC-32/ISO-HDLC, the format's checksum."""
    return zlib.crc32(data) & 0xFFFFFFFF


def parse(data: bytes, slot: int | None = None) -> ConvFile:
    """Check @data as a complete conversation file (of @slot when given) and return it.

    Raises ConvFormatError naming the first check that failed.
    """
    size = len(data)
    if size < MIN_FILE_SIZE:
        raise ConvFormatError(f"{size} bytes is shorter than the smallest file ({MIN_FILE_SIZE})")
    magic, version, header_size, file_slot, protocol, conv_id, seq, created, updated, turns, \
        count, header_file_size = _HEADER.unpack_from(data, 0)
    if magic != HEADER_MAGIC:
        raise ConvFormatError(f"bad header magic {magic!r}")
    if version not in VERSIONS:
        raise ConvFormatError(f"format version {version} (this reader knows "
                              f"{', '.join(map(str, VERSIONS))})")
    if header_size != HEADER_SIZE:
        raise ConvFormatError(f"header size {header_size}, expected {HEADER_SIZE}")
    (header_crc,) = struct.unpack_from("<I", data, 44)
    if crc32(data[:44]) != header_crc:
        raise ConvFormatError("header CRC mismatch")
    if slot is not None and file_slot != slot:
        raise ConvFormatError(f"the header's slot is {file_slot}, expected {slot}")
    if header_file_size != size:
        raise ConvFormatError(f"the header says {header_file_size} bytes, the file has {size}")
    trailer_at = size - TRAILER_SIZE
    trailer_magic, trailer_size, file_crc = _TRAILER.unpack_from(data, trailer_at)
    if trailer_magic != TRAILER_MAGIC:
        raise ConvFormatError(f"bad trailer magic {trailer_magic!r}")
    if trailer_size != size:
        raise ConvFormatError(f"the trailer says {trailer_size} bytes, the file has {size}")
    computed = crc32(data[: size - 4])
    if computed != file_crc:
        raise ConvFormatError(f"file CRC mismatch (trailer 0x{file_crc:08x}, "
                              f"computed 0x{computed:08x})")
    records: list[Record] = []
    at = HEADER_SIZE
    while at < trailer_at:
        if at + RECORD_OVERHEAD > trailer_at:
            raise ConvFormatError(f"record {len(records)} at byte {at} runs into the trailer")
        rtype, flags, length = _RECORD_HEAD.unpack_from(data, at)
        end = at + 4 + length
        if end + 4 > trailer_at:
            raise ConvFormatError(f"record {len(records)} at byte {at} runs into the trailer")
        (rcrc,) = struct.unpack_from("<I", data, end)
        if crc32(data[at:end]) != rcrc:
            raise ConvFormatError(f"record {len(records)} at byte {at}: CRC mismatch")
        records.append(Record(rtype, flags, bytes(data[at + 4:end])))
        at = end + 4
    if len(records) != count:
        raise ConvFormatError(f"the header says {count} records, the file has {len(records)}")
    if [r.type for r in records[:3]] != [REC_PROVIDER, REC_MODEL, REC_TITLE]:
        raise ConvFormatError("records 0..2 are not provider, model and title")
    if version >= 2:
        for index, r in enumerate(records):
            if r.type != REC_TOOL_ID:
                continue
            if len(r.payload) != TOOL_ID_SIZE:
                raise ConvFormatError(f"record {index}: a tool id of {len(r.payload)} bytes, "
                                      f"expected {TOOL_ID_SIZE}")
            if records[index - 1].type != REC_TOOL:
                raise ConvFormatError(f"record {index}: a tool id not after a tool record")
    users = sum(1 for r in records if r.type == REC_USER)
    if users != turns:
        raise ConvFormatError(f"the header says {turns} turns, the file has {users}")
    return ConvFile(version=version, slot=file_slot, protocol=protocol, conversation_id=conv_id, sequence=seq,
                    created=created, updated=updated, turns=turns, size=size,
                    records=tuple(records))


def _when(seconds: int) -> str:
    if seconds == 0:
        return "unknown"
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"{seconds} s"


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")


def transcript(conv: ConvFile) -> str:
    """The conversation as text: a short header, then each turn's user message, tool lines
    (each with its numeric tool id when the file has one: "(tool id N)", 0 for an imported
    tool, whose name is the line's first word), answer and token usage. Response ids and
    records of unknown types are left out. Every text from the file goes through
    terminal_safe(): nothing in it can steer a terminal."""
    lines = [
        f"title:    {terminal_safe(conv.title)}",
        f"provider: {terminal_safe(conv.provider)}",
        f"model:    {terminal_safe(conv.model)}",
        f"protocol: {PROTOCOLS.get(conv.protocol, str(conv.protocol))}",
        f"turns:    {conv.turns}",
        f"created:  {_when(conv.created)}",
        f"updated:  {_when(conv.updated)}",
    ]
    turn = 0
    for record in conv.records[3:]:
        text = terminal_safe(record.payload.decode("utf-8", errors="replace"))
        if record.type == REC_USER:
            turn += 1
            lines += ["", f"--- turn {turn} ---", f"user: {_indent(text)}"]
        elif record.type == REC_TOOL:
            lines.append(f"tool: {text}")
        elif record.type == REC_TOOL_ID and conv.version >= 2:
            (tool_id,) = struct.unpack("<H", record.payload)
            lines[-1] += f" (tool id {tool_id})"
        elif record.type == REC_ASSISTANT:
            lines.append(f"assistant: {_indent(text)}")
        elif record.type == REC_USAGE and len(record.payload) == 16:
            tin, tout, total, reasoning = struct.unpack("<IIII", record.payload)
            lines.append(f"tokens: input {tin}, output {tout}, total {total}, "
                         f"reasoning {reasoning}")
    return "\n".join(lines) + "\n"
