"""Write the dialogue the image's stream server plays on its /tools/ routes (test-only).

Called by CMakeLists.txt here at configure time (AGENT_TEST_STREAM_SERVER=ON) with the folder
to write into. For each API, three turns as the test server would stream them
(agent_host.testserver.dialogue): a tool_search call, a storage_list call on the tool that
search selected, then the answer. The server answers the n-th request on a /tools/ path with
the n-th of them (stream_server.c), so one `agent ask` runs two device tools on the worker
between streamed requests (tests/e2e/test_firmware_stream_stacks.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent_host.testserver.dialogue import text_reply, tool_call_reply

#: (tool, arguments) of the two calls, then the answer; the test checks the output against these.
CALLS = (("tool_search", {"query": "list directory entries"}), ("storage_list", {"path": "."}))
ANSWER = "Nothing to list."


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for api in ("chat", "responses"):
        replies = [tool_call_reply(api, name, args, f"call_{n}", response_id=f"resp_{n}",
                                   usage=(100 + n, 7))
                   for n, (name, args) in enumerate(CALLS)]
        replies.append(text_reply(api, ANSWER, response_id="resp_answer", usage=(140, 11)))
        for n, reply in enumerate(replies):
            (out / f"{api}-{n}.sse").write_bytes(b"".join(reply.segments))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
