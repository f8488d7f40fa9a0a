"""Shared checks of the tool selection tests (docs/tools.md "Tool selection"): the console's
`tool` and `agent ID tools` views, walks over every group's bits that also check where they
are stored, and a tool result as the next request carries it."""

from __future__ import annotations

import json
from collections.abc import Callable

from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import RecordedRequest
from agent_host.testserver.dialogue import function_call_output
from agent_host.tool_status import GROUPS

API_PATH = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}
#: Called after each change with the value the settings record must hold (None: no record).
RecordCheck = Callable[[int | None], None]


def defaults(dut: SimDevice, command: str = "tool") -> tuple[int, dict[str, str]]:
    """`tool` (or a `tool ...` change) as (tools.mask, {group: on/off})."""
    lines = dut.exec_command(command)
    assert lines[0].startswith("tools.mask "), lines
    rows = dict(line.split() for line in lines[1:])
    assert list(rows) == list(GROUPS), lines
    return int(lines[0].split()[1]), rows


def agent_table(dut: SimDevice, agent: int, command: str | None = None
                ) -> tuple[list[str], dict[str, tuple[str, str, str]]]:
    """`agent ID tools` as (the lines before the table, {group: (default, override,
    effective word)})."""
    lines = dut.exec_command(command or f"agent {agent} tools")
    head = lines.index("  group          default override effective")
    rows = {}
    for line in lines[head + 1:]:
        group, default, override, effective = line.split(None, 3)
        rows[group] = (default, override, effective.split(":")[0])
    assert list(rows) == list(GROUPS), lines
    return lines[:head], rows


def walk_default_bits(dut: SimDevice, stored: RecordCheck) -> None:
    """Every group's default off and on again through `tool NAME off|on`, then all off."""
    assert defaults(dut) == (1023, {g: "on" for g in GROUPS})
    stored(None)
    for bit, group in enumerate(GROUPS):
        mask, rows = defaults(dut, f"tool {group} off")
        assert mask == 1023 - (1 << bit), group
        assert [g for g, v in rows.items() if v == "off"] == [group]
        stored(1023 - (1 << bit))
        assert defaults(dut, f"tool {group} on")[0] == 1023
    assert defaults(dut, "tool all off") == (0, {g: "off" for g in GROUPS})
    stored(0)


def walk_agent_bits(dut: SimDevice, agent: int, stored: RecordCheck) -> None:
    """Every group's two bits through `agent ID tools NAME off|on|inherit`, then all off."""
    for bit, group in enumerate(GROUPS):
        for word, value in (("off", 1), ("on", 2)):
            _, rows = agent_table(dut, agent, f"agent {agent} tools {group} {word}")
            assert rows[group][1] == word
            assert [g for g, r in rows.items() if r[1] != "inherit"] == [group]
            stored(value << (2 * bit))
        agent_table(dut, agent, f"agent {agent} tools {group} inherit")
        stored(None)  # every group inherits: no record
    _, rows = agent_table(dut, agent, f"agent {agent} tools all off")
    assert {r[1:] for r in rows.values()} == {("off", "off")}
    stored(sum(1 << (2 * b) for b in range(len(GROUPS))))


def tool_output(api: str, req: RecordedRequest) -> object:
    """The tool result a request carries back to the model."""
    if api == "responses":
        return function_call_output(req.json)[1]
    return json.loads(req.json["messages"][-1]["content"])
