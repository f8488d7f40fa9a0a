"""The tool id table (docs/tools.md "Tool ids"): app/src/tools/tool_ids.c, the documented table
and the tool definitions in the sources agree. Every built-in tool has an id; ids run 1..N in
the table's order with no gap and no name twice."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLE_C = REPO / "app" / "src" / "tools" / "tool_ids.c"
DOC = REPO / "docs" / "tools.md"


def table_in_c() -> list[str]:
    text = TABLE_C.read_text()
    body = text[text.index("tool_names[] = {"):text.index("};")]
    rows = re.findall(r'"([a-z0-9_]+)",\s*/\* (\d+) \*/', body)
    assert [int(n) for _, n in rows] == list(range(1, len(rows) + 1)), rows
    return [name for name, _ in rows]


def table_in_doc() -> dict[int, str]:
    text = DOC.read_text()
    section = text[text.index("## Tool ids"):]
    section = section[:section.index("\n## ", 1)]
    pairs = re.findall(r"\| (\d+) \| `([a-z0-9_]+)` \|", section)
    return {int(i): name for i, name in pairs}


def tool_definitions() -> set[str]:
    """Names of every struct tool_def in app/src (a definition's name is followed by its
    description; imported tools are defined at run time and have no such line)."""
    names = set()
    for path in (REPO / "app" / "src").rglob("*.c"):
        names.update(re.findall(r'\.name = "([a-z0-9_]+)",\s*\n\s*\.description\s*=',
                                path.read_text()))
    return names


def test_the_documented_table_is_the_code_table() -> None:
    names = table_in_c()
    assert len(set(names)) == len(names)
    assert table_in_doc() == {i: name for i, name in enumerate(names, start=1)}


def test_every_built_in_tool_has_an_id() -> None:
    defined = tool_definitions()
    assert {"system_status", "storage_read", "script_run_lua", "skill_use"} <= defined
    assert defined <= set(table_in_c()), sorted(defined - set(table_in_c()))
    # The two memory tools are in the table whether or not a build has them.
    assert {"memory_write", "memory_recall"} <= set(table_in_c())
