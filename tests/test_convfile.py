"""The host's reader of the conversation file format against docs/conversation-format.md."""

from __future__ import annotations

import struct

import pytest
from agent_host import convfile
from agent_host.safe_text import terminal_safe
from conv_bytes import EXAMPLE, EXAMPLE_V1, assemble, build, record
from hypothesis import given, settings
from hypothesis import strategies as st


def test_the_documented_example_parses() -> None:
    conv = convfile.parse(EXAMPLE, slot=1)
    assert (conv.version, conv.slot, conv.protocol, conv.conversation_id, conv.sequence) == (
        2, 1, 2, 1, 1)
    assert (conv.turns, conv.size, len(conv.records)) == (1, 174, 8)
    assert (conv.provider, conv.model, conv.title) == ("openai", "gpt-test", "Hi")
    assert [r.type for r in conv.records] == [1, 2, 3, 16, 18, 21, 17, 19]
    assert conv.records[4].payload == b"system_status {}"
    assert conv.records[5].payload == b"\x01\x00"
    assert conv.records[7].payload == b"resp_1"


def test_the_version_1_example_still_parses() -> None:
    conv = convfile.parse(EXAMPLE_V1, slot=1)
    assert (conv.version, conv.turns, conv.size) == (1, 1, 140)
    assert [r.type for r in conv.records] == [1, 2, 3, 16, 17, 19]
    assert "tool" not in convfile.transcript(conv)


def test_the_builder_writes_the_documented_bytes() -> None:
    assert build(1, 2, "openai", "gpt-test", "Hi", [("hello", [("system_status {}", 1)], "world")],
                 response_id="resp_1") == EXAMPLE
    assert build(1, 2, "openai", "gpt-test", "Hi", [("hello", [], "world")],
                 response_id="resp_1", version=1) == EXAMPLE_V1


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
    with pytest.raises(convfile.ConvFormatError, match="the header says 174 bytes"):
        convfile.parse(EXAMPLE + b"\0", slot=1)


def test_wrong_slot_is_refused() -> None:
    with pytest.raises(convfile.ConvFormatError, match="slot is 1, expected 2"):
        convfile.parse(EXAMPLE, slot=2)


def test_a_bad_file_crc_names_both_values() -> None:
    bad = EXAMPLE[:-4] + struct.pack("<I", 0x12345678)
    with pytest.raises(convfile.ConvFormatError, match="file CRC mismatch .trailer 0x12345678, "
                                                       "computed 0xf38bdbee"):
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


def test_transcript_shows_the_tool_ids() -> None:
    """A built-in tool's id after its line; an imported tool's 0, its name in the line; a
    tool record without an id (version 1, or a writer without ids) as before."""
    data = build(1, 2, "openai", "gpt", "t", [
        ("q", [("storage_read {\"path\":\"/lfs/a\"}", 6), ("weather {\"city\":\"Oslo\"}", 0),
               "storage_list {}"], "a"),
    ])
    text = convfile.transcript(convfile.parse(data, slot=1))
    assert text.splitlines()[-4:] == [
        'tool: storage_read {"path":"/lfs/a"} (tool id 6)',
        'tool: weather {"city":"Oslo"} (tool id 0)',
        "tool: storage_list {}",
        "assistant: a",
    ]
    assert "tool id" in convfile.transcript(convfile.parse(EXAMPLE, slot=1))


def one_turn(records: list[bytes], version: int = 2) -> bytes:
    meta = [record(1, b"openai"), record(2, b"gpt"), record(3, b"t")]
    return assemble(1, 2, [*meta, record(16, b"q"), *records, record(17, b"a")], 1,
                    version=version)


TOOL = record(18, b"storage_read {}")


@pytest.mark.parametrize("size", [0, 1, 3, 4])
def test_a_tool_id_of_another_size_is_refused(size: int) -> None:
    convfile.parse(one_turn([TOOL, record(21, b"\x06\x00")]), slot=1)
    with pytest.raises(convfile.ConvFormatError, match=f"a tool id of {size} bytes, expected 2"):
        convfile.parse(one_turn([TOOL, record(21, bytes(size))]), slot=1)


def test_a_tool_id_after_no_tool_record_is_refused() -> None:
    with pytest.raises(convfile.ConvFormatError, match="record 4: a tool id not after a tool"):
        convfile.parse(one_turn([record(21, b"\x06\x00"), TOOL]), slot=1)
    with pytest.raises(convfile.ConvFormatError, match="record 6: a tool id not after a tool"):
        convfile.parse(one_turn([TOOL, record(21, b"\x06\x00"), record(21, b"\x06\x00")]),
                       slot=1)


def test_version_1_knew_no_tool_id_and_versions_0_and_3_are_refused() -> None:
    # In a version-1 file type 21 is an unknown type: kept, not checked, not shown.
    conv = convfile.parse(one_turn([record(21, b"\x06\x00\x00")], version=1), slot=1)
    assert conv.records[4].type == 21
    assert "tool" not in convfile.transcript(conv)
    for version in (0, 3):
        with pytest.raises(convfile.ConvFormatError,
                           match=f"format version {version} .this reader knows 1, 2."):
            convfile.parse(one_turn([], version=version), slot=1)


def test_response_ids_are_left_out_of_the_transcript() -> None:
    conv = convfile.parse(EXAMPLE, slot=1)
    assert "resp_1" not in convfile.transcript(conv)
    assert "created:  unknown" in convfile.transcript(conv)


# -- the transcript on a terminal (docs/host-cli.md, "Text from the model") --------------------

#: Every kind of sequence a terminal acts on, each with "PWN" in its payload where it has one.
HOSTILE = {
    "osc52-clipboard-bel": "\x1b]52;c;UFdOIGNsaXBib2FyZA==PWN\x07",
    "osc52-clipboard-st": "\x1b]52;c;PWN\x1b\\",
    "osc0-title": "\x1b]0;PWN title\x07",
    "osc2-title-st": "\x1b]2;PWN title\x1b\\",
    "osc8-hyperlink": "\x1b]8;;http://PWN.example/\x1b\\",
    "osc-c1": "\x9d0;PWN title\x9c",
    "osc-cancelled-by-can": "\x1b]0;PWN\x18",
    "osc-cancelled-by-sub": "\x1b]0;PWN\x1a",
    "csi-clear-screen": "\x1b[2J",
    "csi-home": "\x1b[H",
    "csi-colour": "\x1b[31;1m",
    "csi-private-alt-screen": "\x1b[?1049h",
    "csi-status-report": "\x1b[6n",
    "csi-report-title": "\x1b[21t",
    "csi-device-attributes": "\x1b[>c",
    "csi-with-intermediate": "\x1b[1 q",
    "csi-c1": "\x9b2J",
    "dcs-decrqss": "\x1bP$qmPWN\x1b\\",
    "dcs-xtgettcap": "\x1bP+q544ePWN\x1b\\",
    "dcs-c1": "\x90$qPWN\x9c",
    "apc": "\x1b_Gf=100;PWN\x1b\\",
    "apc-c1": "\x9fPWN\x9c",
    "pm": "\x1b^PWN\x1b\\",
    "sos": "\x1bXPWN\x1b\\",
    "esc-reset": "\x1bc",
    "esc-save-cursor": "\x1b7",
    "esc-charset": "\x1b(0",
    "esc-align-test": "\x1b#8",
    "esc-keypad": "\x1b=",
    "c0-cr": "\r",
    "c0-backspace": "\b",
    "c0-bell": "\x07",
    "c0-form-feed": "\x0c",
    "c0-vertical-tab": "\x0b",
    "c0-nul": "\x00",
    "del": "\x7f",
    "c1-nel": "\x85",
    "c1-ind": "\x84",
    "c1-ri": "\x8d",
    "c1-st-alone": "\x9c",
}


def hostile_conversation(seq: str) -> bytes:
    return build(1, 2, f"openai{seq}", f"gpt{seq}", f"title{seq}end", [
        (f"ask{seq}me", [f"storage_read{seq}: done"], f"before{seq}after"),
    ])


def check_terminal_safe(text: str) -> None:
    for c in text:
        code = ord(c)
        assert c in "\n\t" or not (code < 0x20 or 0x7F <= code <= 0x9F), (c, text)
        assert not (0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069), (c, text)


@pytest.mark.parametrize("seq", HOSTILE.values(), ids=HOSTILE.keys())
def test_transcript_drops_every_sequence_whole(seq: str) -> None:
    text = convfile.transcript(convfile.parse(hostile_conversation(seq), slot=1))
    check_terminal_safe(text)
    assert "PWN" not in text
    for line in ["title:    titleend", "provider: openai", "model:    gpt", "user: askme",
                 "tool: storage_read: done", "assistant: beforeafter"]:
        assert line in text.splitlines(), text


def test_an_unterminated_string_sequence_is_dropped_to_the_end_of_its_text() -> None:
    assert terminal_safe("keep\x1b]0;PWN title") == "keep"
    assert terminal_safe("keep\x1bP$qPWN") == "keep"
    assert terminal_safe("keep\x9dPWN\nmore") == "keep"
    # Each record is a text of its own: the next one is shown.
    data = build(1, 2, "openai", "gpt", "t", [("q", [], "answer\x1b]52;c;PWN")])
    text = convfile.transcript(convfile.parse(data, slot=1))
    assert text.endswith("user: q\nassistant: answer\n") and "PWN" not in text


def test_a_sequence_cut_by_another_character_leaves_that_character() -> None:
    # A CSI that meets a character outside its grammar ends there (a terminal aborts it).
    assert terminal_safe("a\x1b[12\nb") == "a\nb"
    assert terminal_safe("a\x1b[2\u00e9b") == "a\u00e9b"
    # An ESC inside a string sequence ends it and starts another one, dropped too.
    assert terminal_safe("a\x1b]0;PWN\x1b[2Jb") == "ab"
    # ESC at the very end, ESC before a non-ASCII character.
    assert terminal_safe("a\x1b") == "a"
    assert terminal_safe("a\x1b\u00e9") == "a\u00e9"


def test_ordinary_text_survives() -> None:
    text = "caf\u00e9 \u2615 \U0001F469\u200d\U0001F4BB \u65e5\u672c\u8a9e \u05e2\u05d1\u05e8\u05d9\u05ea\tcol\nline \\ [x] ~ ]"
    assert terminal_safe(text) == text
    data = build(1, 2, "openai", "gpt", "caf\u00e9 \U0001F600", [("caf\u00e9?", [], text)])
    out = convfile.transcript(convfile.parse(data, slot=1))
    assert "title:    caf\u00e9 \U0001F600\n" in out
    assert "assistant: " + text.replace("\n", "\n  ") + "\n" in out


def test_bidi_controls() -> None:
    # Embeddings, overrides and isolates are shown; the marks of right-to-left text are kept.
    assert terminal_safe("a\u202etxt.exe\u202c b\u2066c\u2069") == (
        "a<U+202E>txt.exe<U+202C> b<U+2066>c<U+2069>")
    for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]:
        assert terminal_safe(chr(code)) == f"<U+{code:04X}>"
    assert terminal_safe("\u05d0\u200e1\u200f\u061c") == "\u05d0\u200e1\u200f\u061c"


ESCAPE_PIECES = st.sampled_from(["\x1b", "[", "]", "P", "X", "^", "_", "\\", "\x07", "\x18",
                                 "\x9b", "\x9c", "\x9d", "\x90", "0;", "52;c;", "2J", "?1049h",
                                 "m", "x", "\u00e9", "\n", "\t", "\u202e", "\r"])


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=8), ESCAPE_PIECES), max_size=40).map("".join))
def test_no_escape_or_c1_control_ever_gets_through(text: str) -> None:
    out = terminal_safe(text)
    assert "\x1b" not in out
    check_terminal_safe(out)
    # Filtering again changes nothing: what is left holds no sequence.
    assert terminal_safe(out) == out


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"),
                                      blacklist_characters="\u202a\u202b\u202c\u202d\u202e"
                                                           "\u2066\u2067\u2068\u2069")
               | st.sampled_from("\n\t")))
def test_text_without_controls_is_unchanged(text: str) -> None:
    assert terminal_safe(text) == text
