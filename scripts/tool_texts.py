"""The texts of the tool definitions, as the C sources name them: TOOL_TEXT(id, "literal").

scripts/gen_reference.py packs them with the reference pages' dictionary into packed_texts.c
(docs/reference-format.md, "Tool texts"); this module finds them in the sources and fills in
their {{CONFIG_*}} placeholders. A text's literal is one or more C string literals, as the
compiler would join them, with the escapes \\\\ \\" \\' \\n \\t \\r and \\xHH (ASCII); no macro may
stand in it (a Kconfig number is a placeholder instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MACRO = "TOOL_TEXT"
USE_RE = re.compile(r"\bTOOL_TEXT\(")
DEFINE_RE = re.compile(r"#\s*define\s+TOOL_TEXT\($")
ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PLACEHOLDER_RE = re.compile(r"\{\{([^{}]*)\}\}")
TEXT_MAX = 65535  # struct packed_text's uint16_t len
REPO = Path(__file__).resolve().parent.parent
ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}


class TextError(Exception):
    """One or more problems, each a ``FILE:LINE: message`` line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class ToolText:
    ident: str
    text: str
    where: str  # FILE:LINE of the TOOL_TEXT


def blank_non_code(src: str) -> str:
    """``src`` with its comments and the insides of its string and character literals turned
    into spaces (newlines and the quotes kept), so that only code is searched; the same
    offsets index ``src``, where the literals are read."""
    out = list(src)
    i = 0
    n = len(src)
    while i < n:
        ch = src[i]
        if ch in "\"'":
            i += 1
            while i < n and src[i] != ch and src[i] != "\n":
                step = 2 if src[i] == "\\" else 1
                for k in range(i, min(i + step, n)):
                    if out[k] != "\n":
                        out[k] = " "
                i += step
            i += 1
        elif src.startswith("//", i):
            while i < n and src[i] != "\n":
                out[i] = " "
                i += 1
        elif src.startswith("/*", i):
            end = src.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for k in range(i, end):
                if out[k] != "\n":
                    out[k] = " "
            i = end
        else:
            i += 1
    return "".join(out)


def _skip_space(src: str, i: int) -> int:
    while i < len(src):
        if src[i] in " \t\r\n":
            i += 1
        elif src.startswith("\\\n", i):
            i += 2
        else:
            break
    return i


def _literal(src: str, i: int) -> tuple[str, int]:
    """The text of the C string literal starting at ``src[i] == '"'``, and the index after it."""
    out: list[str] = []
    i += 1
    while True:
        if i >= len(src) or src[i] == "\n":
            raise ValueError("a string literal does not end on its line")
        ch = src[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        esc = src[i + 1] if i + 1 < len(src) else ""
        if esc in ESCAPES:
            out.append(ESCAPES[esc])
            i += 2
        elif (esc == "x" and re.fullmatch(r"[0-7][0-9A-Fa-f]", src[i + 2:i + 4])
              and not re.match(r"[0-9A-Fa-f]", src[i + 4:i + 5])):
            out.append(chr(int(src[i + 2:i + 4], 16)))  # ASCII: one byte, as in C
            i += 4
        elif esc == "x":
            raise ValueError("a \\x escape here is two hex digits of an ASCII byte, not "
                             "followed by another hex digit (write other characters as "
                             "they are, in UTF-8)")
        else:
            raise ValueError(f"the escape \\{esc} is not one this reader knows")


def parse_source(path: Path, src: str) -> list[ToolText]:
    """Every TOOL_TEXT(id, "literal"...) of one source file (not the macro's definition)."""
    code = blank_non_code(src)
    texts: list[ToolText] = []
    problems: list[str] = []
    for m in USE_RE.finditer(code):
        line_start = code.rfind("\n", 0, m.start()) + 1
        if DEFINE_RE.search(code[line_start:m.end()]):
            continue
        where = f"{path}:{code.count(chr(10), 0, m.start()) + 1}"
        i = _skip_space(code, m.end())
        ident = ID_RE.match(code, i)
        try:
            if ident is None:
                raise ValueError(f"{MACRO} needs an identifier first")
            i = _skip_space(code, ident.end())
            if code[i:i + 1] != ",":
                raise ValueError(f"{MACRO}({ident.group(0)} needs a comma after the identifier")
            i = _skip_space(code, i + 1)
            parts: list[str] = []
            while code[i:i + 1] == '"':
                part, i = _literal(src, i)  # the original: a literal may hold "//" or "/*"
                parts.append(part)
                i = _skip_space(code, i)
            if not parts:
                raise ValueError(f"{MACRO}({ident.group(0)}, ...) needs string literals only")
            if code[i:i + 1] != ")":
                raise ValueError(f"{MACRO}({ident.group(0)}, ...): only string literals, "
                                 "then ')' (a number from Kconfig is a {{CONFIG_...}} placeholder)")
            texts.append(ToolText(ident.group(0), "".join(parts), where))
        except ValueError as err:
            problems.append(f"{where}: {err}")
    if problems:
        raise TextError(problems)
    return texts


def _shown(path: Path) -> Path:
    """``path`` relative to the repository when it is in it: the generated file names a
    text's source, and does not depend on where the checkout is."""
    try:
        return path.resolve().relative_to(REPO)
    except ValueError:
        return path


def find_texts(dirs: list[Path]) -> list[ToolText]:
    """The texts of every *.c and *.h file in ``dirs``, sorted by identifier; each
    identifier once."""
    found: dict[str, ToolText] = {}
    problems: list[str] = []
    for folder in dirs:
        for path in sorted([*folder.glob("*.c"), *folder.glob("*.h")]):
            try:
                texts = parse_source(_shown(path), path.read_text(encoding="utf-8"))
            except TextError as err:
                problems += err.problems
                continue
            for t in texts:
                if t.ident in found:
                    problems.append(f"{t.where}: {MACRO}({t.ident}, ...) is also at "
                                    f"{found[t.ident].where}")
                else:
                    found[t.ident] = t
    if problems:
        raise TextError(problems)
    return sorted(found.values(), key=lambda t: t.ident)


def fill(texts: list[ToolText], config: dict[str, str]) -> list[ToolText]:
    """The texts with each {{CONFIG_NAME}} replaced by its value in ``config``.

    A symbol this configuration does not set leaves its placeholder as it is: the tool that
    uses the text is not built then (tests/test_tool_texts.py fills every text under the
    configuration with every tool on). A text longer than TEXT_MAX bytes is refused.
    """
    out: list[ToolText] = []
    problems: list[str] = []
    for t in texts:
        def value_of(match: re.Match[str]) -> str:
            value = config.get(match.group(1), "n")
            return match.group(0) if value == "n" else value
        text = PLACEHOLDER_RE.sub(value_of, t.text)
        if len(text.encode()) > TEXT_MAX:
            problems.append(f"{t.where}: {MACRO}({t.ident}, ...) is longer than {TEXT_MAX} bytes")
        out.append(ToolText(t.ident, text, t.where))
    if problems:
        raise TextError(problems)
    return out
