"""The SMP group's two handler tables agree: the portable dispatch table
(app/src/agent/mgmt/mgmt_group.c) and the Zephyr registration with MCUmgr
(app/src/port/zephyr/mgmt.c), which must give MCUmgr a read and a write entry exactly where the
portable table has a handler; a command missing there answers ENOTSUP on the firmware only."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PORTABLE = REPO / "app" / "src" / "agent" / "mgmt" / "mgmt_group.c"
ZEPHYR = REPO / "app" / "src" / "port" / "zephyr" / "mgmt.c"


def portable_table(text: str) -> dict[str, tuple[bool, bool]]:
    """{command: (has read, has write)} from `[CMD] = {read_fn, write_fn},`."""
    rows = re.findall(r"^\s*\[(AGENT_MGMT_CMD_\w+)\]\s*=\s*\{\s*(\w+)\s*,\s*(\w+)\s*\}",
                      text, re.MULTILINE)
    return {cmd: (read != "NULL", write != "NULL") for cmd, read, write in rows}


def zephyr_table(text: str) -> dict[str, tuple[bool, bool]]:
    """{command: (has mh_read, has mh_write)} from the mgmt_handler array, each wrapper checked
    against the command and direction it was defined with (AGENT_HANDLER)."""
    wrappers = {name: (cmd, write == "true") for name, cmd, write in
                re.findall(r"AGENT_HANDLER\((\w+),\s*(AGENT_MGMT_CMD_\w+),\s*(true|false)\)", text)}
    table = {}
    for cmd, body in re.findall(r"^\s*\[(AGENT_MGMT_CMD_\w+)\]\s*=\s*\{([^}]*)\}", text,
                                re.MULTILINE):
        fields = dict(re.findall(r"\.(mh_read|mh_write)\s*=\s*(\w+)", body))
        for field, name in fields.items():
            assert wrappers[name] == (cmd, field == "mh_write"), (cmd, field, name)
        table[cmd] = ("mh_read" in fields, "mh_write" in fields)
    return table


def test_the_zephyr_registration_matches_the_portable_table() -> None:
    portable = portable_table(PORTABLE.read_text())
    assert len(portable) >= 13, portable
    assert zephyr_table(ZEPHYR.read_text()) == portable


def test_the_check_sees_a_missing_command() -> None:
    text = ZEPHYR.read_text()
    cut = re.sub(r"\s*\[AGENT_MGMT_CMD_TOOL_STATUS\][^\n]*", "", text)
    assert zephyr_table(cut) != portable_table(PORTABLE.read_text())
