"""Conversation files written from docs/conversation-format.md, for the host's tests."""

from __future__ import annotations

import struct
import zlib

# The example of docs/conversation-format.md: slot 1, Responses, openai / gpt-test / "Hi",
# one turn hello / world with the response id resp_1, timestamps 0. 140 bytes.
EXAMPLE = bytes.fromhex(
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


def record(rtype: int, payload: bytes) -> bytes:
    head = struct.pack("<BBH", rtype, 0, len(payload)) + payload
    return head + struct.pack("<I", zlib.crc32(head))


def build(slot: int, protocol: int, provider: str, model: str, title: str,
          turns: list[tuple[str, list[str], str]], conv_id: int = 1, seq: int = 1,
          created: int = 0, updated: int = 0, response_id: str | None = None,
          usage: tuple[int, int, int, int] | None = None) -> bytes:
    """A valid file: each turn is (user, tool lines, assistant)."""
    recs = [record(1, provider.encode()), record(2, model.encode()), record(3, title.encode())]
    for user, tools, answer in turns:
        recs.append(record(16, user.encode()))
        recs += [record(18, t.encode()) for t in tools]
        recs.append(record(17, answer.encode()))
        if response_id is not None:
            recs.append(record(19, response_id.encode()))
        if usage is not None:
            recs.append(record(20, struct.pack("<IIII", *usage)))
    body = b"".join(recs)
    size = 48 + len(body) + 12
    head = struct.pack("<4sBBBBIIqqIII", b"AGCV", 1, 48, slot, protocol, conv_id, seq, created,
                       updated, len(turns), len(recs), size)
    head += struct.pack("<I", zlib.crc32(head))
    data = head + body + struct.pack("<4sI", b"AGCE", size)
    return data + struct.pack("<I", zlib.crc32(data))
