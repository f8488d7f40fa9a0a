"""The test server's `/v1/embeddings`: deterministic vectors that make recall testable.

A text's vector is a hashed bag of words: every word (lower-cased runs of letters and digits)
adds +1 or -1 to one coordinate chosen by its SHA-256, and the sum is normalised to length 1.
Texts that share words point the same way, so the nearest note by cosine similarity is the one
with the most words in common with the query, and a test can compute the same vector
(:func:`embed`) to know the exact scores.

Requests are checked against the openai SDK's `EmbeddingCreateParams` (the same walk and strict
pydantic check as the other endpoints, :mod:`agent_host.testserver.validate`) plus the device's
contract: `model`, `input` (one string), `encoding_format` "float" and `dimensions` present.
The answer is built by the SDK's own `CreateEmbeddingResponse` model, so it is a valid one.

Faults (:data:`EMBEDDINGS_FAULTS`) answer wrongly on purpose: an HTTP error with OpenAI's error
body, a body cut short, one dimension too many, strings instead of numbers, no `data`, two
embeddings for one input, a number beyond float's range.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any, Literal, get_args

from .plans import RecordedRequest, Reply

#: The path suffix the server answers with embeddings (any prefix, e.g. /v1).
EMBEDDINGS_PATH = "/embeddings"
#: The dimension used when a request does not ask for one (text-embedding-3-small's default
#: is 1536; a device always asks).
DEFAULT_DIMENSIONS = 1536

EmbeddingsFault = Literal["http-500", "http-401", "truncated", "wrong-dimension",
                          "not-numbers", "missing-data", "two-embeddings", "out-of-range"]
EMBEDDINGS_FAULTS: tuple[str, ...] = get_args(EmbeddingsFault)
#: The device contract on top of the SDK's types: keys a device always sends.
REQUIRED = ("model", "input", "encoding_format", "dimensions")

_WORD = re.compile(r"[a-z0-9]+")


def is_embeddings_path(path: str) -> bool:
    """Whether a request path is an embeddings endpoint.

    Args:
        path: Request path (query allowed).

    Returns:
        True for a path ending in /embeddings.
    """
    return path.partition("?")[0].rstrip("/").endswith(EMBEDDINGS_PATH)


def words(text: str) -> list[str]:
    """The words a vector is made of.

    Args:
        text: Any text.

    Returns:
        Lower-cased runs of ASCII letters and digits, in order.
    """
    return _WORD.findall(text.lower())


def embed(text: str, dimensions: int) -> list[float]:
    """The deterministic vector of a text (a normalised hashed bag of words).

    Args:
        text: The input.
        dimensions: Its length.

    Returns:
        A unit vector; a text without words hashes as the single word "" does.
    """
    vec = [0.0] * dimensions
    for word in words(text) or [""]:
        digest = hashlib.sha256(word.encode()).digest()
        index = int.from_bytes(digest[:4], "little") % dimensions
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine similarity of two vectors of the same length."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    return dot / (na * nb) if na and nb else 0.0


def request_problems(body: object) -> list[str]:
    """Everything wrong with an embeddings request body, judged by the SDK's types.

    Args:
        body: The parsed JSON body.

    Returns:
        One line per problem; empty when valid.
    """
    from . import validate

    if not isinstance(body, dict):
        return [f"body: expected a JSON object, got {validate._kind(body)}"]
    try:
        from openai.types import embedding_create_params
    except ImportError:  # pragma: no cover - depends on the environment
        return ["request validation needs the openai package"]
    td = embedding_create_params.EmbeddingCreateParams
    problems = [f"body.{key}: missing (required by the device contract)"
                for key in REQUIRED if key not in body]
    if "input" in body and not isinstance(body["input"], str):
        problems.append("body.input: the device sends one string")
    if body.get("encoding_format", "float") != "float":
        problems.append("body.encoding_format: the device reads floats only")
    walked = validate._walk(body, td, "body")
    strict = validate._pydantic_problems(td, body)
    problems += walked
    if strict and not walked:
        problems += [f"{p} (pydantic strict)" for p in strict]
    return problems


def _sdk_answer(vector: list[float], model: str, tokens: int) -> dict[str, Any]:
    """The answer as the SDK's own response model dumps it."""
    from openai.types import CreateEmbeddingResponse

    answer = CreateEmbeddingResponse.model_validate({
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": vector}],
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    })
    return answer.model_dump(mode="json", exclude_unset=True)


def answer(rec: RecordedRequest, fault: str | None = None) -> Reply:
    """The reply to one embeddings request (its body already checked).

    Args:
        rec: The request.
        fault: One of :data:`EMBEDDINGS_FAULTS`, or None for a correct answer.

    Returns:
        The reply.
    """
    body = rec.json_or_none
    body = body if isinstance(body, dict) else {}
    text = body.get("input") if isinstance(body.get("input"), str) else ""
    dims = body.get("dimensions")
    dims = dims if isinstance(dims, int) and not isinstance(dims, bool) and dims > 0 else (
        DEFAULT_DIMENSIONS)
    model = str(body.get("model", ""))
    label = f"embeddings {fault or 'ok'}"
    if fault == "http-500":
        return Reply.json(500, {"error": {"message": "The server had an error while "
                                          "processing your request.", "type": "server_error",
                                          "param": None, "code": None}}, label=label)
    if fault == "http-401":
        return Reply.json(401, {"error": {"message": "Incorrect API key provided.",
                                          "type": "invalid_request_error", "param": None,
                                          "code": "invalid_api_key"}}, label=label)
    vector = embed(str(text), dims + 1 if fault == "wrong-dimension" else dims)
    doc: dict[str, Any] = _sdk_answer(vector, model, len(words(str(text))) or 1)
    if fault == "not-numbers":
        doc["data"][0]["embedding"] = [str(x) for x in vector]
    elif fault == "missing-data":
        del doc["data"]
    elif fault == "two-embeddings":
        doc["data"].append({**doc["data"][0], "index": 1})
    elif fault == "out-of-range":
        doc["data"][0]["embedding"][0] = 1e39
    raw = json.dumps(doc, separators=(",", ":")).encode()
    if fault == "truncated":
        raw = raw[: len(raw) // 2]
    return Reply(200, (raw,), "application/json", label=label)
