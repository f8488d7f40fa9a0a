"""Conversation files written from docs/conversation-format.md, for the host's tests."""

from __future__ import annotations

import struct
import zlib

# The example of docs/conversation-format.md: version 2, slot 1, Responses, openai / gpt-test /
# "Hi", one turn hello / world with one tool call `system_status {}` (tool id 1) and the
# response id resp_1, timestamps 0. 174 bytes.
EXAMPLE = bytes.fromhex(
    "41 47 43 56 02 30 01 02 01 00 00 00 01 00 00 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "01 00 00 00 08 00 00 00 ae 00 00 00 87 32 70 6c"
    "01 00 06 00 6f 70 65 6e 61 69 8e 35 6e cc 02 00"
    "08 00 67 70 74 2d 74 65 73 74 ff 64 a6 e2 03 00"
    "02 00 48 69 77 07 91 91 10 00 05 00 68 65 6c 6c"
    "6f e3 28 c3 e8 12 00 10 00 73 79 73 74 65 6d 5f"
    "73 74 61 74 75 73 20 7b 7d 17 ae df cc 15 00 02"
    "00 01 00 41 cb cb 51 11 00 05 00 77 6f 72 6c 64"
    "65 8b df f3 13 00 06 00 72 65 73 70 5f 31 6e 29"
    "c2 bf 41 47 43 45 ae 00 00 00 ee db 8b f3"
)

# The same conversation as version 1 wrote it, before tool ids: no tool call. 140 bytes.
EXAMPLE_V1 = bytes.fromhex(
    "41 47 43 56 01 30 01 02 01 00 00 00 01 00 00 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
    "01 00 00 00 06 00 00 00 8c 00 00 00 88 f7 7d 59"
    "01 00 06 00 6f 70 65 6e 61 69 8e 35 6e cc 02 00"
    "08 00 67 70 74 2d 74 65 73 74 ff 64 a6 e2 03 00"
    "02 00 48 69 77 07 91 91 10 00 05 00 68 65 6c 6c"
    "6f e3 28 c3 e8 11 00 05 00 77 6f 72 6c 64 65 8b"
    "df f3 13 00 06 00 72 65 73 70 5f 31 6e 29 c2 bf"
    "41 47 43 45 8c 00 00 00 a1 5a 53 26"
)

#: A tool call of a turn: its summary line alone (no tool id record, as version 1 and a writer
#: without ids store it), or (line, tool id) for a tool record followed by its tool id record.
ToolCall = str | tuple[str, int]


def record(rtype: int, payload: bytes) -> bytes:
    head = struct.pack("<BBH", rtype, 0, len(payload)) + payload
    return head + struct.pack("<I", zlib.crc32(head))


def tool_records(call: ToolCall) -> list[bytes]:
    if isinstance(call, str):
        return [record(18, call.encode())]
    line, tool_id = call
    return [record(18, line.encode()), record(21, struct.pack("<H", tool_id))]


def build(slot: int, protocol: int, provider: str, model: str, title: str,
          turns: list[tuple[str, list[ToolCall], str]], conv_id: int = 1, seq: int = 1,
          created: int = 0, updated: int = 0, response_id: str | None = None,
          usage: tuple[int, int, int, int] | None = None, version: int = 2) -> bytes:
    """A valid file: each turn is (user, tool calls, assistant)."""
    recs = [record(1, provider.encode()), record(2, model.encode()), record(3, title.encode())]
    for user, tools, answer in turns:
        recs.append(record(16, user.encode()))
        for call in tools:
            recs += tool_records(call)
        recs.append(record(17, answer.encode()))
        if response_id is not None:
            recs.append(record(19, response_id.encode()))
        if usage is not None:
            recs.append(record(20, struct.pack("<IIII", *usage)))
    return assemble(slot, protocol, recs, len(turns), conv_id=conv_id, seq=seq, created=created,
                    updated=updated, version=version)


def assemble(slot: int, protocol: int, recs: list[bytes], turns: int, conv_id: int = 1,
             seq: int = 1, created: int = 0, updated: int = 0, version: int = 2) -> bytes:
    """Header, the given encoded records as they are, trailer, with every count and CRC."""
    body = b"".join(recs)
    size = 48 + len(body) + 12
    head = struct.pack("<4sBBBBIIqqIII", b"AGCV", version, 48, slot, protocol, conv_id, seq,
                       created, updated, turns, len(recs), size)
    head += struct.pack("<I", zlib.crc32(head))
    data = head + body + struct.pack("<4sI", b"AGCE", size)
    return data + struct.pack("<I", zlib.crc32(data))
