"""The memory tools end to end (docs/memory.md): memory_write and memory_recall through the
test server's `/v1/embeddings` (deterministic hashed-bag-of-words vectors), on both wire
protocols. A write then a recall returns the nearest note with the score the vectors give; the
notes survive a restart; the embeddings requests the server recorded are exactly the device
contract and valid for the openai SDK's types, carry the agent's key in their Authorization
header and nowhere else. Without an embedding pass the tools are unavailable with the reason
`agent tools` shows and a call gets an error result; an unreachable endpoint, an HTTP error
and each malformed or wrong answer fail the call with its one-line reason, nothing is stored,
and the conversation goes on to its answer."""

from __future__ import annotations

import json
import socket

import pytest
from agent_host.testing.agent_tools import AskRun, ask, configure, tool_table
from agent_host.testing.sim_device import SimDevice
from agent_host.testserver import Reply, Script, TestServer
from agent_host.testserver import embeddings as emb
from agent_host.testserver.dialogue import ToolCall, text_reply, tool_call_reply
from agent_host.testserver.plans import Api, RecordedRequest
from tool_checks import API_PATH, APIS, activated_names, last_result

KEY = "sk-memory-test-0123456789"
MODEL = "text-embedding-3-small"
DIM = 256  # CONFIG_AGENT_MEMORY_DIMENSIONS
SEARCH = ToolCall("tool_search", {"query": "memory remember note recall"}, "call_s")
NOT_CONFIGURED = "no embeddings endpoint is configured (agent config embeddings URL)"
NO_MODEL = "no embeddings model is configured (agent config embeddings-model NAME)"

NOTES = ["the spare key is under the blue flower pot",
         "the wifi password is written on the fridge door",
         "water the basil plant every monday morning"]


def setup_embeddings(dut: SimDevice, url: str | None, model: str | None = MODEL) -> None:
    if url is not None:
        assert dut.exec_command(f"agent config embeddings {url}") == [f"embeddings set to {url}"]
    if model is not None:
        assert dut.exec_command(f"agent config embeddings-model {model}") == [
            f"embeddings-model set to {model}"]


def start(sims, srv: TestServer, api: Api, embeddings_url: str | None = "",
          model: str | None = MODEL) -> SimDevice:
    """A device pointed at @srv for chat, and at its /v1/embeddings unless told otherwise
    ("" is the server's; None leaves it unset)."""
    dut = sims.start()
    configure(dut, srv.url(API_PATH[api]), key=KEY)
    url = srv.url("/v1/embeddings") if embeddings_url == "" else embeddings_url
    setup_embeddings(dut, url, model)
    return dut


def quantised_score(a: list[float], b: list[float]) -> float:
    """The cosine the device computes: both vectors quantised to int8 (docs/memory.md)."""
    def q(v: list[float]) -> list[int]:
        scale = max(abs(x) for x in v) / 127
        return [int(x / scale + (0.5 if x >= 0 else -0.5)) for x in v]
    return emb.cosine([float(x) for x in q(a)], [float(x) for x in q(b)])


def dialogue(api: Api, calls: list[ToolCall], end: str = "done") -> list[Reply]:
    """tool_search first (it activates the memory tools), then @calls, then an answer."""
    replies = [tool_call_reply(api, SEARCH.name, SEARCH.arguments, SEARCH.call_id,
                               response_id="resp_s")]
    replies += [tool_call_reply(api, c.name, c.arguments, c.call_id, response_id=f"resp_{i}")
                for i, c in enumerate(calls)]
    return [*replies, text_reply(api, end, response_id="resp_end")]


def chat_requests(srv: TestServer) -> list[RecordedRequest]:
    return [r for r in srv.requests if not emb.is_embeddings_path(r.path)]


def embedding_requests(srv: TestServer) -> list[RecordedRequest]:
    return [r for r in srv.requests if emb.is_embeddings_path(r.path)]


def run(dut: SimDevice, srv: TestServer, api: Api, calls: list[ToolCall], confirms: int = 0
        ) -> tuple[AskRun, list[object]]:
    """One `agent ask` whose model makes @calls after a tool_search; returns the run and the
    result of each call (as the next provider turn carried it)."""
    replies = dialogue(api, calls)
    first = len(chat_requests(srv))
    srv.set_script(Script(replies))
    out = ask(dut, "use your memory", [b"y"] * confirms)
    assert out.errors == [], out.text
    srv.wait_for_requests(len(srv.requests))
    srv.check()
    reqs = chat_requests(srv)[first:]
    assert len(reqs) == len(replies), out.text
    assert {"memory_write", "memory_recall"} <= set(activated_names(reqs[1], api))
    results = [last_result(r, api) for r in reqs[2:]]
    assert out.answer == "done", out.text  # the conversation went on to its answer
    return out, results


def write(text: str, i: int) -> ToolCall:
    return ToolCall("memory_write", {"text": text}, f"call_w{i}")


def recall(query: str, count: int | None = None) -> ToolCall:
    args: dict[str, object] = {"query": query}
    if count is not None:
        args["count"] = count
    return ToolCall("memory_recall", args, "call_r")


def check_embedding_requests(srv: TestServer, texts: list[str]) -> None:
    """The device's embeddings requests: exactly the contract's body, valid for the SDK's
    types, the agent's key as bearer."""
    reqs = embedding_requests(srv)
    assert [r.json for r in reqs] == [
        {"model": MODEL, "input": t, "encoding_format": "float", "dimensions": DIM}
        for t in texts]
    for r in reqs:
        assert r.method == "POST" and r.path == "/v1/embeddings"
        assert emb.request_problems(r.json) == []
        assert r.header("authorization") == f"Bearer {KEY}"
        assert (r.header("content-type") or "").startswith("application/json")


@pytest.mark.parametrize("api", APIS)
@pytest.mark.needs_persistent_flash("the notes are read back after a restart")
def test_write_then_recall_returns_the_nearest_note(sims, api: Api) -> None:
    with TestServer() as srv:
        dut = start(sims, srv, api)
        mark = len(dut.transcript)  # after the key was typed in
        writes = [write(t, i) for i, t in enumerate(NOTES)]
        query = "where is the spare key"
        out, results = run(dut, srv, api, [*writes, recall(query, 2)], confirms=3)
        assert out.outcomes[-1] == "[tool] memory_recall: done", out.text
        assert results[:3] == [{"id": i + 1, "notes": i + 1, "evicted": None}
                               for i in range(3)]
        got = results[3]
        assert isinstance(got, dict) and set(got) == {"notes", "stored", "truncated"}
        assert got["stored"] == 3 and got["truncated"] is False
        qv = emb.embed(query, DIM)
        want = sorted(((quantised_score(qv, emb.embed(t, DIM)), -(i + 1), t)
                       for i, t in enumerate(NOTES)), reverse=True)[:2]
        assert [n["text"] for n in got["notes"]] == [w[2] for w in want]
        assert got["notes"][0]["text"] == NOTES[0]
        assert [n["id"] for n in got["notes"]] == [-w[1] for w in want]
        for note, w in zip(got["notes"], want, strict=True):
            assert abs(note["score"] - w[0]) <= 0.0002, (note, w)
        check_embedding_requests(srv, [*NOTES, query])
        # The key is the agent's: in no result, nowhere on the console.
        assert all(KEY not in json.dumps(r) for r in results)
        assert KEY.encode() not in bytes(dut.transcript[mark:])

        # The notes are on flash: a restarted device recalls them.
        assert dut.stop() == 0
        dut = sims.start()
        _, results = run(dut, srv, api, [recall("basil monday", 1)])
        assert results[0]["stored"] == 3
        assert [n["id"] for n in results[0]["notes"]] == [3]


def test_unavailable_without_an_embedding_pass(sims) -> None:
    api: Api = "chat"
    with TestServer() as srv:
        dut = start(sims, srv, api, embeddings_url=None, model=None)
        rows = {r.name: r for r in tool_table(dut)[1]}
        for name in ("memory_write", "memory_recall"):
            assert (rows[name].available, rows[name].reason) == ("no", NOT_CONFIGURED)
        assert (rows["memory_write"].risk, rows["memory_recall"].risk) == ("mutating", "read")
        srv.set_script(Script(dialogue(api, [recall("anything")])))
        out = ask(dut, "use your memory")
        why = f"memory_recall is not available: {NOT_CONFIGURED}"
        assert out.outcomes[-1] == f"[tool] memory_recall: failed: {why}", out.text
        assert out.answer == "done"
        reqs = srv.wait_for_requests(3)
        assert "memory_recall" not in activated_names(reqs[1], api)
        assert last_result(reqs[2], api) == {"error": why}
        # A URL without a model is not a ready pass either.
        setup_embeddings(dut, srv.url("/v1/embeddings"), None)
        rows = {r.name: r for r in tool_table(dut)[1]}
        assert (rows["memory_recall"].available, rows["memory_recall"].reason) == ("no", NO_MODEL)
        setup_embeddings(dut, None, MODEL)
        rows = {r.name: r for r in tool_table(dut)[1]}
        assert rows["memory_recall"].available == "yes"
        assert embedding_requests(srv) == []


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_endpoint(sims) -> None:
    api: Api = "responses"
    port = closed_port()
    with TestServer() as srv:
        dut = start(sims, srv, api, embeddings_url=f"http://127.0.0.1:{port}/v1/embeddings")
        out, results = run(dut, srv, api, [write("a note", 0), recall("a note")], confirms=1)
        why = ("the embeddings endpoint is unreachable: connection refused by "
               f"127.0.0.1:{port}")
        assert results == [{"error": why}, {"error": why}]
        assert out.outcomes[-1] == f"[tool] memory_recall: failed: {why}"


#: Each wrong answer and the reason the model gets.
FAULTS = {
    "http-500": "the embeddings endpoint answered HTTP 500: The server had an error while "
                "processing your request.",
    "http-401": "the embeddings endpoint answered HTTP 401: Incorrect API key provided.",
    "truncated": "the embeddings answer is not valid JSON",
    "wrong-dimension": f"the embedding has {DIM + 1} dimensions; the memory needs {DIM}",
    "not-numbers": "the embedding is not a list of numbers",
    "missing-data": "the embeddings answer has no data",
    "two-embeddings": "the embeddings answer has 2 embeddings for one input",
    "out-of-range": "the embedding has a number out of range",
}


def test_every_fault_mode_has_a_case() -> None:
    assert set(FAULTS) == set(emb.EMBEDDINGS_FAULTS)


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_wrong_answer_fails_the_call_and_stores_nothing(sims, fault: str) -> None:
    api: Api = "chat"
    with TestServer() as srv:
        dut = start(sims, srv, api)
        srv.embeddings_fault = fault
        out, results = run(dut, srv, api, [write("the spare key is in the shed", 0),
                                           recall("spare key")], confirms=1)
        assert results == [{"error": FAULTS[fault]}, {"error": FAULTS[fault]}]
        assert out.outcomes == ["[tool] tool_search: done",
                                f"[tool] memory_write: failed: {FAULTS[fault]}",
                                f"[tool] memory_recall: failed: {FAULTS[fault]}"]
        check_embedding_requests(srv, ["the spare key is in the shed", "spare key"])
        # Nothing was stored: with the fault gone the store is empty.
        srv.embeddings_fault = None
        _, results = run(dut, srv, api, [recall("spare key")])
        assert results == [{"notes": [], "stored": 0, "truncated": False}]


def test_note_and_count_bounds(sims) -> None:
    """A note of CONFIG_AGENT_MEMORY_NOTE_MAX_LEN bytes is stored, one byte more is refused
    before anything runs; count runs from 1 to CONFIG_AGENT_MEMORY_RECALL_MAX."""
    api: Api = "chat"
    note_max, recall_max = 512, 5
    with TestServer() as srv:
        dut = start(sims, srv, api)
        long_note = ("word " * note_max)[:note_max]
        _, results = run(dut, srv, api, [write(long_note, 0), recall("word", recall_max)],
                         confirms=1)
        assert results[0] == {"id": 1, "notes": 1, "evicted": None}
        assert [n["text"] for n in results[1]["notes"]] == [long_note]
        for call, reason in [
            (write(long_note + "x", 1), f"field text is longer than {note_max} bytes"),
            (recall("word", recall_max + 1), f"field count must be at most {recall_max}"),
            (recall("word", 0), "field count must be at least 1"),
        ]:
            srv.set_script(Script(dialogue(api, [call])[:2]))
            out = ask(dut, "use your memory")
            assert out.errors == [f"agent: invalid arguments for {call.name}: {reason}"]
        srv.wait_for_requests(len(srv.requests))
        assert len(embedding_requests(srv)) == 2
