"""Tool selection's console commands on every image, the firmware under Twister included
(docs/tools.md "Tool selection"): every bit of the instance defaults and every 2-bit choice of
an agent as `tool` and `agent ID tools` show them, an override beating the default in either
direction, `all`, and the refusals. Where the records are stored and what a restart keeps:
test_tool_selection.py (simulator)."""

from __future__ import annotations

from agent_host.testing.sim_device import SimDevice
from selection_checks import agent_table, defaults, walk_agent_bits, walk_default_bits


def test_every_default_bit(dut: SimDevice) -> None:
    walk_default_bits(dut, lambda value: None)
    assert defaults(dut, "tool all on")[0] == 1023


def test_every_agent_choice_and_overrides_in_either_direction(dut: SimDevice) -> None:
    walk_agent_bits(dut, 0, lambda value: None)
    _, rows = agent_table(dut, 0, "agent 0 tools all inherit")
    assert {r[1] for r in rows.values()} == {"inherit"}
    assert "off" not in {r[2] for r in rows.values()}  # on, or Unavailable
    assert defaults(dut, "tool fs_list off")[0] == 1023 - 8
    _, rows = agent_table(dut, 0, "agent 0 tools fs_list on")
    assert rows["fs_list"] == ("off", "on", "on")
    _, rows = agent_table(dut, 0, "agent 0 tools fs_stat off")
    assert rows["fs_stat"] == ("on", "off", "off")
    agent_table(dut, 0, "agent 0 tools all inherit")
    assert defaults(dut, "tool all on")[0] == 1023


def test_refusals_change_nothing(dut: SimDevice) -> None:
    assert dut.exec_command("tool fs_read maybe") == ["agent: usage: tool [all|NAME on|off]"]
    assert dut.exec_command("tool fs_reads off")[0].startswith('agent: no tool group "fs_reads"')
    assert dut.exec_command("tool fs_read off extra") == ["agent: usage: tool [all|NAME on|off]"]
    assert dut.exec_command("agent 0 tools fs_read maybe") == [
        "agent: usage: agent ID tools [NAME|all on|off|inherit]"]
    assert dut.exec_command("agent 0 tools nothing off")[0].startswith(
        'agent: no tool group "nothing"')
    assert dut.exec_command("agent 2 tools fs_read off") == [
        "agent: agent 2: slot 2 holds no conversation"]
    last = dut.exec_command("agent 99 tools")
    assert len(last) == 1 and last[0].startswith("agent: agent ids are 0.."), last
    assert defaults(dut)[0] == 1023
    assert {r[1] for r in agent_table(dut, 0)[1].values()} == {"inherit"}
