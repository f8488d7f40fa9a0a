"""Tool selection on every image, the firmware under Twister included (docs/tools.md "Tool
selection"): the request bodies the test server records with a group off and with every group
off (no tools, no tool-use line), and the refused call to a disabled tool. The commands and
their records are in test_tool_selection_commands.py; settings files, restarts and SMP in
test_tool_selection.py (simulator only)."""

from __future__ import annotations

import pytest
from agent_host.testing.agent_tools import ask, configure
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import RecordedRequest, Script, TestServer
from agent_host.testserver.dialogue import advertised_names, text_reply, tool_call_reply
from selection_checks import API_PATH, agent_table, defaults, tool_output

#: The members of a request without tools.
BODY_KEYS = {"responses": {"model", "instructions", "input", "reasoning", "store", "stream"},
             "chat": {"model", "messages", "stream", "stream_options"}}
BOARD_END = "answer briefly in plain text."
TOOL_LINE = ("Tools: call the device's tools as functions, one call at a time; find one with "
             "tool_search before saying something cannot be done. Tools that write files or run "
             "code ask the person at the console first; if a call is denied, say what you would "
             "have done and offer another way.")


def instructions(api: str, req: RecordedRequest) -> str:
    body = req.json
    return str(body["instructions"] if api == "responses" else body["messages"][0]["content"])


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_every_group_off_sends_no_tools_and_refuses_a_call(dut: SimDevice, api: str) -> None:
    defaults(dut, "tool all on")
    agent_table(dut, 0, "agent 0 tools all inherit")
    assert defaults(dut, "tool all off")[0] == 0
    script = Script([
        tool_call_reply(api, "system_status", {}, "call_0", response_id="r0"),
        text_reply(api, "No tools.", response_id="r1"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        run = ask(dut, "what is your status?")
        reqs = srv.wait_for_requests(2)
        srv.check()
    for req in reqs:  # exactly these members (and the continuation): nothing about tools
        assert set(req.json) - {"previous_response_id"} == BODY_KEYS[api], req.json
    off = instructions(api, reqs[0])
    assert "tool" not in off.lower()
    assert tool_output(api, reqs[1]) == {
        "refused": "system_status is disabled by the tool selection (every group is off for "
                   "this agent)"}
    assert "No tools." in "\n".join(run.lines)
    # The agent's own choice does the same with the defaults on.
    assert defaults(dut, "tool all on")[0] == 1023
    agent_table(dut, 0, "agent 0 tools all off")
    with TestServer(Script([text_reply(api, "Fine.", response_id="r2")])) as srv:
        configure(dut, srv.url(API_PATH[api]))
        ask(dut, "hello")
        assert set(srv.wait_for_requests(1)[0].json) == BODY_KEYS[api]
    # With a group on again, the tool-use line is back right after the board line.
    agent_table(dut, 0, "agent 0 tools fs_stat on")
    with TestServer(Script([text_reply(api, "Fine.", response_id="r3")])) as srv:
        configure(dut, srv.url(API_PATH[api]))
        ask(dut, "hello")
        on = instructions(api, srv.wait_for_requests(1)[0])
    assert on == off.replace(BOARD_END, BOARD_END + " " + TOOL_LINE, 1), (on, off)
    # Under the policy off nothing is offered either: no tool-use line.
    with TestServer(Script([text_reply(api, "Fine.", response_id="r4")])) as srv:
        configure(dut, srv.url(API_PATH[api]), policy="off")
        ask(dut, "hello")
        req = srv.wait_for_requests(1)[0]
    assert set(req.json) == BODY_KEYS[api] and instructions(api, req) == off
    configure(dut, srv.url(API_PATH[api]), policy="confirm")  # the default again
    agent_table(dut, 0, "agent 0 tools all inherit")


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_a_disabled_group_is_not_offered_and_its_call_is_refused(dut: SimDevice, api: str) -> None:
    defaults(dut, "tool all on")
    agent_table(dut, 0, "agent 0 tools all inherit")
    defaults(dut, "tool fs_read off")
    script = Script([
        tool_call_reply(api, "tool_search", {"query": "read a file"}, "call_0",
                        response_id="r0"),
        tool_call_reply(api, "storage_read", {"path": "x.txt"}, "call_1", response_id="r1"),
        text_reply(api, "Done.", response_id="r2"),
    ])
    with TestServer(script) as srv:
        configure(dut, srv.url(API_PATH[api]))
        ask(dut, "read x.txt")
        reqs = srv.wait_for_requests(3)
        srv.check()
    offered = advertised_names(reqs[1].json, api) or []
    assert "storage_stat" in offered  # fs_stat is on: tool_search found it
    assert not {"storage_read", "storage_read_range", "storage_search"} & set(offered)
    assert "system_status" in offered and "tool_search" in offered  # no group: offered
    assert tool_output(api, reqs[2]) == {
        "refused": "storage_read is disabled by the tool selection (group fs_read is off for "
                   "this agent)"}
    status = dut.exec_command("agent status")
    assert any("denied" in line for line in status)


