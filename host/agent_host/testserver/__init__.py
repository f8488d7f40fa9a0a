"""OpenAI-compatible test server: replays recorded streams, scripted dialogues, fault modes.

The recorded streams are package data (`recorded/`, see INDEX.md there for their sources).

The serving side uses only the standard library (raw sockets, `ssl`, threads); `trustme` is
needed for HTTPS and the `openai` SDK for request validation (both in the `test` extra).

Typical use::

    from agent_host.testserver import TestServer, fixture_reply

    with TestServer(fixture_reply("chat/openai_gpt4o_text_usage.sse"), tls="valid") as srv:
        ...  # point the client at srv.url("/v1"), trusting srv.ca_pem
        srv.check()

See docs/test-server.md.
"""

from .dialogue import (
    ToolCall,
    advertised_names,
    advertised_tools,
    chat_exchange,
    function_call_output,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)
from .faults import Faults
from .fixtures import (
    expected_outcome,
    fixture_files,
    fixture_replies,
    fixture_reply,
    fixture_script,
    fixtures_dir,
    outcome_of_body,
    packaged_fixtures_dir,
    resolve_fixture,
    sdk_error_class,
)
from .plans import (
    RecordedRequest,
    Reply,
    Script,
    Turn,
    expect_header,
    expect_json,
    expect_no_key,
    expect_path,
    turn_for,
)
from .server import HOST, TestServer
from .synth import SYNTHESIZED, Synth, synth_reply
from .tls import TLS_MODES, TlsMode
from .validate import check_chat_request, check_request, check_responses_request, request_problems

__all__ = [
    "HOST",
    "SYNTHESIZED",
    "TLS_MODES",
    "Faults",
    "RecordedRequest",
    "Reply",
    "Script",
    "Synth",
    "TestServer",
    "TlsMode",
    "ToolCall",
    "Turn",
    "advertised_names",
    "advertised_tools",
    "chat_exchange",
    "check_chat_request",
    "check_request",
    "check_responses_request",
    "expect_header",
    "expect_json",
    "expect_no_key",
    "expect_path",
    "expected_outcome",
    "fixture_files",
    "fixture_replies",
    "fixture_reply",
    "fixture_script",
    "fixtures_dir",
    "function_call_output",
    "outcome_of_body",
    "packaged_fixtures_dir",
    "request_problems",
    "resolve_fixture",
    "sdk_error_class",
    "synth_reply",
    "text_reply",
    "tool_call_reply",
    "tool_calls_reply",
    "turn_for",
]
