"""Text from the device (a model's answers, tool lines, titles) made safe to print on a
terminal, as the device's console filter does for its own screen (docs/host-cli.md, "Text
from the model").

Kept: printable characters of every script, newline and tab. Dropped: every other C0 control,
DEL, every C1 control (U+0080..U+009F), and whole escape sequences with their payload: CSI
(ESC [ or U+009B, up to its final byte), the string sequences OSC, DCS, SOS, PM and APC (ESC ],
ESC P, ESC X, ESC ^, ESC _ or their C1 forms, up to their terminator: ST, that is ESC \\ or
U+009C, or BEL, or CAN or SUB, which cancel it; without one, up to the end of the text) and
the other ESC sequences (ESC, intermediates, one final byte: ESC c, ESC ( B, ESC 7, ...). The
bidi embedding, override and isolate controls (U+202A..U+202E, U+2066..U+2069), which reorder
the text around them, are shown as `<U+202E>`; the marks U+200E, U+200F and U+061C, which
right-to-left text uses and which reorder nothing, are kept.
"""

from __future__ import annotations

ESC = "\x1b"
CSI_C1 = "\x9b"
ST_C1 = "\x9c"
_STRING_C1 = "\x90\x98\x9d\x9e\x9f"  # DCS, SOS, OSC, PM, APC
_STRING_ESC = "PX]^_"  # after ESC: DCS, SOS, OSC, PM, APC
_STRING_ENDS = "\x07\x18\x1a" + ST_C1  # BEL, CAN, SUB, ST


def _csi_end(text: str, at: int) -> int:
    """The end of a CSI whose parameters start at @at: after its final byte, or at the first
    character that cannot be part of it (a terminal then aborts it and acts on that one)."""
    end = len(text)
    while at < end and "\x30" <= text[at] <= "\x3f":
        at += 1
    while at < end and "\x20" <= text[at] <= "\x2f":
        at += 1
    if at < end and "\x40" <= text[at] <= "\x7e":
        return at + 1
    return at


def _string_end(text: str, at: int) -> int:
    """The end of a string sequence whose payload starts at @at: after its terminator, at an
    ESC that starts something else, or at the end of the text."""
    end = len(text)
    while at < end:
        c = text[at]
        if c in _STRING_ENDS:
            return at + 1
        if c == ESC:
            return at + 2 if text.startswith("\\", at + 1) else at
        at += 1
    return end


def _sequence_end(text: str, at: int) -> int:
    """The end of the escape sequence that starts at @at (ESC or a C1 introducer)."""
    c = text[at]
    if c == CSI_C1:
        return _csi_end(text, at + 1)
    if c in _STRING_C1:
        return _string_end(text, at + 1)
    nxt = text[at + 1] if at + 1 < len(text) else ""
    if nxt == "[":
        return _csi_end(text, at + 2)
    if nxt != "" and nxt in _STRING_ESC:
        return _string_end(text, at + 2)
    at += 1
    while at < len(text) and "\x20" <= text[at] <= "\x2f":
        at += 1
    if at < len(text) and "\x30" <= text[at] <= "\x7e":
        return at + 1
    return at


def _shown(c: str) -> str:
    code = ord(c)
    if c in "\n\t":
        return c
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return ""
    if 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
        return f"<U+{code:04X}>"
    return c


def terminal_safe(text: str) -> str:
    """@text with nothing that a terminal would act on (see the module's description)."""
    out: list[str] = []
    at = 0
    while at < len(text):
        c = text[at]
        if c == ESC or c == CSI_C1 or c in _STRING_C1:
            at = _sequence_end(text, at)
            continue
        out.append(_shown(c))
        at += 1
    return "".join(out)
