"""The System tools table: the device's tool status stream (tools.jsonl, docs/tools.md "The
tool status stream") read over SMP and shown per agent. Only records the device wrote are
read, strictly: a line that is not one of its records makes the stream unreadable rather
than changing what the table shows."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

GROUPS = ("memory_recall", "memory_write", "fs_read", "fs_list", "fs_write", "fs_update", "run",
          "skill_use", "fs_stat", "imported")
"""The selection groups in tools.mask bit order."""

_ON_OFF = ("on", "off")
_OVERRIDES = ("inherit", "off", "on", "invalid")
_STATES = ("on", "off", "Unavailable")


class StreamError(ValueError):
    """The stream is not what the device writes."""


@dataclass(frozen=True)
class GroupStatus:
    group: str
    default: str
    override: str
    effective: str
    available: bool
    state: str
    reason: str


@dataclass(frozen=True)
class AgentStatus:
    seq: int
    agent: int
    role: str
    mask: int
    record: int
    record_invalid: bool
    effective: int
    groups: tuple[GroupStatus, ...]


def _expect(cond: bool, line_no: int, what: str) -> None:
    if not cond:
        raise StreamError(f"tools.jsonl line {line_no}: {what}")


def _uint(obj: dict[str, Any], key: str, line_no: int) -> int:
    value = obj.get(key)
    _expect(type(value) is int and value >= 0, line_no, f"{key} is not a number")
    return int(value)  # type: ignore[arg-type]


def _group(obj: Any, bit: int, line_no: int) -> GroupStatus:
    _expect(isinstance(obj, dict) and set(obj) == {"group", "default", "override", "effective",
                                                  "available", "state", "reason"},
            line_no, "a group entry has other members")
    _expect(obj["group"] == GROUPS[bit], line_no, f"group {bit} is not {GROUPS[bit]}")
    _expect(obj["default"] in _ON_OFF, line_no, "default is not on/off")
    _expect(obj["override"] in _OVERRIDES, line_no, "override is not inherit/off/on")
    _expect(obj["effective"] in _ON_OFF, line_no, "effective is not on/off")
    _expect(type(obj["available"]) is bool, line_no, "available is not a boolean")
    _expect(obj["state"] in _STATES, line_no, "state is not on/off/Unavailable")
    _expect(isinstance(obj["reason"], str), line_no, "reason is not text")
    return GroupStatus(obj["group"], obj["default"], obj["override"], obj["effective"],
                       obj["available"], obj["state"], obj["reason"])


def _record(obj: dict[str, Any], line_no: int) -> AgentStatus:
    _expect(set(obj) == {"seq", "agent", "role", "mask", "record", "record_invalid",
                         "effective", "groups"}, line_no, "an agent record has other members")
    groups = obj["groups"]
    _expect(isinstance(groups, list) and len(groups) == len(GROUPS), line_no,
            "groups is not a list of the ten groups")
    _expect(isinstance(obj["role"], str), line_no, "role is not text")
    _expect(type(obj["record_invalid"]) is bool, line_no, "record_invalid is not a boolean")
    return AgentStatus(_uint(obj, "seq", line_no), _uint(obj, "agent", line_no), obj["role"],
                       _uint(obj, "mask", line_no), _uint(obj, "record", line_no),
                       obj["record_invalid"], _uint(obj, "effective", line_no),
                       tuple(_group(g, i, line_no) for i, g in enumerate(groups)))


def parse(data: bytes) -> list[AgentStatus]:
    """Every agent record of the stream, in order. The first line is the stream's header."""
    text = data.decode("utf-8", errors="strict")
    lines = text.split("\n")
    _expect(lines[-1] == "", len(lines), "the stream does not end with a whole line")
    records: list[AgentStatus] = []
    for no, line in enumerate(lines[:-1], start=1):
        try:
            obj = json.loads(line)
        except ValueError as err:
            raise StreamError(f"tools.jsonl line {no}: not JSON ({err})") from None
        _expect(isinstance(obj, dict), no, "not an object")
        if no == 1:
            _expect(obj.get("stream") == "tools.jsonl" and obj.get("version") == 1
                    and obj.get("groups") == list(GROUPS), no, "not the stream's header")
            continue
        records.append(_record(obj, no))
    _expect(len(lines) > 1, 1, "no header")
    return records


def latest(records: list[AgentStatus], agent: int) -> AgentStatus | None:
    """The newest record of `agent`, None when the stream has none."""
    mine = [r for r in records if r.agent == agent]
    return mine[-1] if mine else None


def override_word(override: str) -> str:
    return "-" if override == "inherit" else override


def rows(status: AgentStatus) -> list[list[str]]:
    """The System tools table: group, instance default, conversation override, effective
    next-turn state ("Unavailable" when enabled without a granted, available tool) and why."""
    return [[g.group, g.default, override_word(g.override), g.state,
             g.reason if g.state == "Unavailable" else ""] for g in status.groups]


COLUMNS = ["GROUP", "DEFAULT", "OVERRIDE", "EFFECTIVE", "WHY"]
