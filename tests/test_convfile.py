"""The host's reader of the conversation file format against docs/conversation-format.md."""

from __future__ import annotations

import struct

import pytest
from agent_host import convfile
from conv_bytes import EXAMPLE, build


def test_the_documented_example_parses() -> None:
    conv = convfile.parse(EXAMPLE, slot=1)
    assert (conv.slot, conv.protocol, conv.conversation_id, conv.sequence) == (1, 2, 1, 1)
    assert (conv.turns, conv.size, len(conv.records)) == (1, 140, 6)
    assert (conv.provider, conv.model, conv.title) == ("openai", "gpt-test", "Hi")
    assert [r.type for r in conv.records] == [1, 2, 3, 16, 17, 19]
    assert conv.records[5].payload == b"resp_1"


def test_the_builder_writes_the_documented_bytes() -> None:
    assert build(1, 2, "openai", "gpt-test", "Hi", [("hello", [], "world")],
                 response_id="resp_1") == EXAMPLE


def test_every_byte_flip_is_detected() -> None:
    for at in range(len(EXAMPLE)):
        damaged = bytearray(EXAMPLE)
        damaged[at] ^= 0x01
        with pytest.raises(convfile.ConvFormatError):
            convfile.parse(bytes(damaged), slot=1)


def test_every_truncation_and_extension_is_detected() -> None:
    for size in range(len(EXAMPLE)):
        with pytest.raises(convfile.ConvFormatError):
            convfile.parse(EXAMPLE[:size], slot=1)
    with pytest.raises(convfile.ConvFormatError, match="the header says 140 bytes"):
        convfile.parse(EXAMPLE + b"\0", slot=1)


def test_wrong_slot_is_refused() -> None:
    with pytest.raises(convfile.ConvFormatError, match="slot is 1, expected 2"):
        convfile.parse(EXAMPLE, slot=2)


def test_a_bad_file_crc_names_both_values() -> None:
    bad = EXAMPLE[:-4] + struct.pack("<I", 0x12345678)
    with pytest.raises(convfile.ConvFormatError, match="file CRC mismatch .trailer 0x12345678, "
                                                       "computed 0x26535aa1"):
        convfile.parse(bad, slot=1)


def test_transcript_shows_turns_tools_and_usage() -> None:
    data = build(2, 1, "openai", "gpt-4o", "Weather", [
        ("What's up?", ["storage_read: executed"], "Sunny.\nWarm."),
        ("And tomorrow?", [], "Rain."),
    ], created=1_700_000_000, updated=1_700_000_100, usage=(10, 5, 15, 0))
    text = convfile.transcript(convfile.parse(data, slot=2))
    assert text == (
        "title:    Weather\n"
        "provider: openai\n"
        "model:    gpt-4o\n"
        "protocol: Chat Completions\n"
        "turns:    2\n"
        "created:  2023-11-14 22:13:20 UTC\n"
        "updated:  2023-11-14 22:15:00 UTC\n"
        "\n--- turn 1 ---\n"
        "user: What's up?\n"
        "tool: storage_read: executed\n"
        "assistant: Sunny.\n  Warm.\n"
        "tokens: input 10, output 5, total 15, reasoning 0\n"
        "\n--- turn 2 ---\n"
        "user: And tomorrow?\n"
        "assistant: Rain.\n"
        "tokens: input 10, output 5, total 15, reasoning 0\n"
    )


def test_response_ids_are_left_out_of_the_transcript() -> None:
    conv = convfile.parse(EXAMPLE, slot=1)
    assert "resp_1" not in convfile.transcript(conv)
    assert "created:  unknown" in convfile.transcript(conv)
