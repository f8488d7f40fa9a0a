"""The test server's `/v1/embeddings` (agent_host.testserver.embeddings, docs/test-server.md
"Embeddings"): deterministic vectors the openai SDK reads back, recall-friendly geometry,
requests validated against the SDK's `EmbeddingCreateParams` and the device contract, every
fault mode, and embeddings requests recorded without using a scripted turn."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request

import openai
import pytest
from agent_host.errors import TestServerError
from agent_host.testserver import Script, TestServer
from agent_host.testserver import embeddings as emb
from agent_host.testserver.dialogue import text_reply

DEVICE_BODY = {"model": "text-embedding-3-small", "input": "the spare key is under the pot",
               "encoding_format": "float", "dimensions": 16}


def post(srv: TestServer, body: object, path: str = "/v1/embeddings") -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(srv.url(path), data, {"Content-Type": "application/json",
                                                       "Authorization": "Bearer sk-t"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_the_sdk_reads_the_deterministic_vector() -> None:
    with TestServer() as srv:
        client = openai.OpenAI(base_url=srv.url("/v1"), api_key="sk-t", max_retries=0)
        got = client.embeddings.create(model="text-embedding-3-small", input="Hello, world!",
                                       dimensions=8, encoding_format="float")
        assert got.data[0].embedding == emb.embed("hello world", 8)
        assert got.data[0].index == 0 and got.model == "text-embedding-3-small"
        assert got.usage.prompt_tokens == 2
        assert srv.failures == []
        assert srv.requests[0].path == "/v1/embeddings"
        assert srv.requests[0].header("authorization") == "Bearer sk-t"


def test_vectors_are_unit_length_and_shared_words_are_near() -> None:
    a = emb.embed("the spare key is under the blue pot", 256)
    assert math.isclose(sum(x * x for x in a), 1.0)
    assert emb.embed("THE spare-key is under the blue pot!", 256) == a
    near = emb.cosine(emb.embed("where is the spare key", 256), a)
    far = emb.cosine(emb.embed("water the basil on monday", 256), a)
    assert near > 0.3 > far
    assert any(emb.embed("", 4))  # no words: still a direction


def test_embeddings_use_no_scripted_turn() -> None:
    script = Script([text_reply("chat", "hi")])
    with TestServer(script) as srv:
        assert post(srv, DEVICE_BODY)[0] == 200
        assert script.used == 0 and srv.failures == []


BAD_BODIES = [
    ({k: v for k, v in DEVICE_BODY.items() if k != "dimensions"},
     "body.dimensions: missing (required by the device contract)"),
    ({**DEVICE_BODY, "input": ["a", "b"]}, "body.input: the device sends one string"),
    ({**DEVICE_BODY, "encoding_format": "base64"},
     "body.encoding_format: the device reads floats only"),
    ({**DEVICE_BODY, "colour": "red"}, "body.colour: unknown key (not in EmbeddingCreateParams)"),
    ({**DEVICE_BODY, "dimensions": "16"}, "body.dimensions: expected an integer, got a string"),
    ({**DEVICE_BODY, "encoding_format": "hex"}, "body.encoding_format: 'hex' is not one of"),
]


@pytest.mark.parametrize(("body", "problem"), BAD_BODIES,
                         ids=["no-dimensions", "list-input", "base64", "unknown-key",
                              "string-dimensions", "bad-format"])
def test_invalid_requests_are_refused_and_recorded(body: dict[str, object], problem: str
                                                   ) -> None:
    assert emb.request_problems(DEVICE_BODY) == []
    problems = emb.request_problems(body)
    assert any(p.startswith(problem) for p in problems), problems
    with TestServer() as srv:
        status, answer = post(srv, body)
        assert status == 400
        assert problem in json.loads(answer)["error"]["message"]
        assert any(problem in f for f in srv.failures)
        with pytest.raises(TestServerError):
            srv.check()


def test_not_json_is_refused() -> None:
    with TestServer() as srv:
        assert post(srv, b"{nope")[0] == 400
        assert srv.failures == ["request 0 (POST /v1/embeddings): body is not JSON"]


FAULTS = {
    "http-500": lambda s, b: s == 500 and json.loads(b)["error"]["type"] == "server_error",
    "http-401": lambda s, b: s == 401 and json.loads(b)["error"]["code"] == "invalid_api_key",
    "truncated": lambda s, b: s == 200 and not _is_json(b) and len(b) > 10,
    "wrong-dimension": lambda s, b: len(json.loads(b)["data"][0]["embedding"]) == 17,
    "not-numbers": lambda s, b: all(isinstance(x, str)
                                    for x in json.loads(b)["data"][0]["embedding"]),
    "missing-data": lambda s, b: "data" not in json.loads(b) and "model" in json.loads(b),
    "two-embeddings": lambda s, b: [d["index"] for d in json.loads(b)["data"]] == [0, 1],
    "out-of-range": lambda s, b: json.loads(b)["data"][0]["embedding"][0] == 1e39,
}


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def test_every_fault_has_a_check() -> None:
    assert set(FAULTS) == set(emb.EMBEDDINGS_FAULTS)


@pytest.mark.parametrize("fault", emb.EMBEDDINGS_FAULTS)
def test_fault_modes(fault: str) -> None:
    with TestServer(embeddings_fault=fault) as srv:
        status, body = post(srv, DEVICE_BODY)
        assert FAULTS[fault](status, body), (status, body[:200])
        assert srv.failures == []  # the request was fine; the answer is wrong on purpose
        srv.embeddings_fault = None
        status, body = post(srv, DEVICE_BODY)
        assert status == 200
        assert json.loads(body)["data"][0]["embedding"] == emb.embed(
            str(DEVICE_BODY["input"]), 16)


def test_an_unknown_fault_is_refused() -> None:
    with pytest.raises(TestServerError, match="embeddings_fault must be one of"):
        TestServer(embeddings_fault="slow")
