"""Shared checks of the tool-loop tests: the exact request body of each provider turn, the
bootstrap set as `agent tools` reports it, and a simulator started on prepared files."""

from __future__ import annotations

import json

from agent_host.testing.agent_tools import tool_table
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import RecordedRequest
from agent_host.testserver.dialogue import (
    ToolCall,
    advertised_tools,
    chat_exchange,
    function_call_output,
)
from agent_host.testserver.plans import Api
from flash_image import write_files

APIS: list[Api] = ["chat", "responses"]
API_PATH = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}
BOOTSTRAP_ORDER = ["system_status", "firmware_reference", "tool_search"]
MAX_SCHEMAS = 8
MAX_DISCOVERED = 5
INSTRUCTIONS_START = "You are the assistant inside a Zephyr RTOS device"


def unknown_tool(name: str) -> str:
    return f"agent: the model called an unknown tool: {name}"


def not_offered(name: str) -> str:
    return f"agent: the model called {name}, which was not offered (tool_search activates tools)"


def invalid_arguments(name: str, reason: str) -> str:
    return f"agent: invalid arguments for {name}: {reason}"


def several_calls(count: int) -> str:
    return f"agent: the model asked for {count} tool calls at once; only one at a time is supported"


def no_tools_offered(name: str) -> str:
    return f"agent: the model called {name} although no tools were offered"


DENIED_BY_PERSON = {"denied": True, "reason": "the person at the device did not allow this call"}


def start_with_files(sims, files: dict[str, bytes], extra_args: list[str] | None = None
                     ) -> SimDevice:
    """A simulator whose /lfs holds @files (paths relative to /lfs)."""
    first = sims.start(extra_args)
    assert first.stop() == 0, first.stderr_text()
    write_files(sims.flash, files)
    return sims.start(extra_args)


def bootstrap(dut: SimDevice) -> list[str]:
    """The bootstrap tools the current policy offers, in registry order, from `agent tools`."""
    _, rows = tool_table(dut)
    names = [r.name for r in rows if r.available == "bootstrap" and r.policy != "denied"]
    assert names == [n for n in BOOTSTRAP_ORDER if n in names], names
    return names


def registered(dut: SimDevice) -> set[str]:
    return {r.name for r in tool_table(dut)[1]}


class DialogueCheck:
    """Checks the request bodies of one request's provider turns, in order.

    Call :meth:`turn` for each recorded request with the tools it must advertise, and
    :meth:`called` after a turn whose reply made a call, with that reply's response id.
    """

    def __init__(self, api: Api, prompt: str, model: str = "test-model",
                 effort: str = "medium") -> None:
        self.api = api
        self.prompt = prompt
        self.model = model
        self.effort = effort
        self.calls: list[ToolCall] = []
        self.results: list[str] = []  # the result text sent for each answered call
        self.response_ids: list[str] = []
        self.instructions: str | None = None
        self.schemas: dict[str, dict[str, object]] = {}

    def called(self, call: ToolCall, response_id: str) -> None:
        self.calls.append(call)
        self.response_ids.append(response_id)

    def turn(self, req: RecordedRequest, tools: list[str] | None) -> object:
        """Check one request; return the parsed result of the call it answers (or None)."""
        body = req.json
        assert isinstance(body, dict), body
        self._tools(body, tools)
        rest = {k: v for k, v in body.items() if k != "tools"}
        if self.api == "responses":
            return self._responses(rest, offered=tools is not None)
        return self._chat(rest, offered=tools is not None)

    def _tools(self, body: dict[str, object], tools: list[str] | None) -> None:
        defs = advertised_tools(body, self.api)
        if tools is None:
            assert defs is None, f"a turn without tools advertised {defs}"
            return
        assert defs is not None, "the turn has no tools member"
        assert [d["name"] for d in defs] == tools
        assert len(defs) <= MAX_SCHEMAS
        for d in defs:
            want_keys = {"name", "description", "parameters"}
            if self.api == "responses":
                want_keys.add("strict")
                assert d["strict"] is False
            assert set(d) == want_keys, d
            params = d["parameters"]
            assert isinstance(params, dict)
            assert params["type"] == "object" and params["additionalProperties"] is False
            # The same schema every turn it is offered.
            assert self.schemas.setdefault(str(d["name"]), d) == d

    def _responses(self, rest: dict[str, object], offered: bool) -> object:
        instructions = rest.get("instructions")
        assert isinstance(instructions, str) and instructions.startswith(INSTRUCTIONS_START)
        if self.instructions is None:
            self.instructions = instructions
        assert instructions == self.instructions  # sent again on every turn
        want: dict[str, object] = {
            "model": self.model, "instructions": instructions,
            "reasoning": {"effort": self.effort}, "store": True, "stream": True,
        }
        if offered:
            want["parallel_tool_calls"] = False  # one call per turn; nothing without tools
        output: object = None
        if self.calls:
            call_id, output = function_call_output(rest)
            assert call_id == self.calls[-1].call_id
            assert len(self.results) == len(self.calls) - 1
            items = rest["input"]
            assert isinstance(items, list)
            self.results.append(str(items[0]["output"]))
            want["input"] = items
            want["previous_response_id"] = self.response_ids[-1]
        else:
            want["input"] = [{"role": "user", "content": self.prompt}]
        assert rest == want
        return output

    def _chat(self, rest: dict[str, object], offered: bool) -> object:
        messages = rest.get("messages")
        assert isinstance(messages, list) and len(messages) >= 2
        system = messages[0]
        assert system["role"] == "system" and set(system) == {"role", "content"}
        assert str(system["content"]).startswith(INSTRUCTIONS_START)
        if self.instructions is None:
            self.instructions = str(system["content"])
        assert system["content"] == self.instructions
        want_messages: list[object] = [system, {"role": "user", "content": self.prompt}]
        assert len(messages) == 2 + 2 * len(self.calls), messages
        for i, call in enumerate(self.calls):
            content = messages[3 + 2 * i].get("content")
            if i < len(self.results):
                assert content == self.results[i]  # earlier results are sent unchanged
            else:
                self.results.append(str(content))
            want_messages += chat_exchange(call, str(content))
        want = {"model": self.model, "messages": want_messages, "stream": True,
                "stream_options": {"include_usage": True}}
        if offered:
            want["parallel_tool_calls"] = False  # one call per turn, as on Responses
        assert rest == want
        return json.loads(self.results[-1]) if self.calls else None


def activated(result: object) -> list[str]:
    """The names a tool_search result activated (checking the result's shape)."""
    assert isinstance(result, dict) and set(result) == {"activated", "note"}, result
    items = result["activated"]
    assert isinstance(items, list) and len(items) <= MAX_DISCOVERED
    names = []
    for item in items:
        assert set(item) == {"name", "risk"}, item
        assert item["risk"] in ("read", "sensitive", "mutating", "disruptive")
        names.append(item["name"])
    assert len(set(names)) == len(names)
    return names


def last_result(req: RecordedRequest, api: Api) -> object:
    """The parsed result of the call a continuation answers (the last one, for Chat)."""
    body = req.json
    assert isinstance(body, dict)
    if api == "responses":
        return function_call_output(body)[1]
    return json.loads(body["messages"][-1]["content"])


def activated_names(req: RecordedRequest, api: Api) -> list[str]:
    """The tools the tool_search answered in @req activated."""
    return activated(last_result(req, api))
