"""Stored conversations over the pty, against the test server: `agent list` (empty, then rows)
and the file it describes (read back by docs/conversation-format.md); `agent resume SLOT` on
both protocols, in the same run and after a restart, with the replayed transcript and the
exact continuation request (Responses: the saved response id and only the new message; Chat:
the system message, the stored user and assistant messages in order within the 8 KiB bound,
then the new message); `agent delete SLOT` and every bad slot; the eviction order of the three
flash slots; and a 48 KiB conversation on the SD card restored with the store's one 512-byte
block, as for a small one."""

from __future__ import annotations

import errno
import struct
from pathlib import Path

import pytest
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import HOST, RecordedRequest, Script, TestServer
from agent_host.testserver.dialogue import text_reply, tool_call_reply
from agent_host.testserver.plans import Api
from chat_term import (
    API_PATH,
    APIS,
    CANCELLED,
    MODEL,
    REC_ASSISTANT,
    REC_MODEL,
    REC_PROVIDER,
    REC_RESPONSE_ID,
    REC_TITLE,
    REC_TOOL,
    REC_TOOL_ID,
    REC_USAGE,
    REC_USER,
    RESUMED_BANNER,
    USER,
    ChatTerm,
    configure,
    parse_conversation,
    stall_before_end,
    wrapped,
)
from flash_image import read_file

pytestmark = pytest.mark.sim_only(
    "sets the pty's window size; restarts the simulator, reads its flash image and SD folder")

FLASH_DIR = "/lfs/.agent/conversations"
SD_DIR = "/SD:/.agent/conversations"
BAD_SLOT = "agent: slot must be a number from 1 to 3"
PROTOCOL = {"chat": 1, "responses": 2}


def heading(directory: str = FLASH_DIR, slots: int = 3) -> list[str]:
    return [f"conversations in {directory} ({slots} slots)",
            "slot turns bytes  role         model                title"]


def row(slot: int, turns: int, size: int, title: str) -> str:
    # Every conversation has the console agent's role: the supplied conductor.
    return f"{slot:<4} {turns:<5} {size:<6} {'conductor':<12} {MODEL:<20} {title}"


def listed(dut: SimDevice, directory: str = FLASH_DIR, slots: int = 3
           ) -> list[tuple[int, int, str]]:
    """`agent list` as (slot, turns, title), the heading checked."""
    out = dut.exec_command("agent list")
    assert out[:2] == heading(directory, slots), out
    rows = []
    for line in out[2:]:
        parts = line.split(maxsplit=5)
        assert len(parts) == 6 and parts[3] == "conductor" and parts[4] == MODEL, line
        rows.append((int(parts[0]), int(parts[1]), parts[5]))
    return rows


def system_message(req: RecordedRequest) -> dict[str, object]:
    body = req.json
    assert isinstance(body, dict)
    first = body["messages"][0]
    assert first["role"] == "system" and first["content"].startswith("You are the assistant")
    return dict(first)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def converse(term: ChatTerm, prompts: list[str], command: str = "agent",
             banner: str | None = None) -> None:
    """Open the chat with @command, send each prompt, return to the shell."""
    if banner is None:
        term.open(command)
    else:
        term.open(command, banner)
    for prompt in prompts:
        term.send(prompt)
    term.leave()


# -- list, and the file behind it -------------------------------------------------------------

FIRST = "First answer, with \"quotes\", a backslash \\ and grüße ✓."


@pytest.mark.parametrize("api", APIS)
def test_list_empty_then_rows_and_the_stored_file(sims, api: Api) -> None:
    script = Script([
        tool_call_reply(api, "system_status", {}, response_id="resp_1", usage=(7, 1)),
        text_reply(api, FIRST, response_id="resp_2", usage=(20, 3)),
        text_reply(api, "Second answer.", response_id="resp_3", usage=(40, 5)),
    ])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        assert dut.exec_command("agent list") == heading()
        converse(ChatTerm(dut, 80, 24), ["hello agent", "and again"])
        srv.check()
    out = dut.exec_command("agent list")
    assert out[:2] == heading() and len(out) == 3, out
    size = int(out[2].split()[2])
    assert out[2] == row(1, 2, size, "hello agent")
    assert dut.stop() == 0
    conv = parse_conversation(read_file(sims.flash, ".agent/conversations/conv1.bin"))
    assert (conv.slot, conv.protocol, conv.turns, conv.size) == (1, PROTOCOL[api], 2, size)
    usage = struct.pack("<4I", 27, 4, 31, 0), struct.pack("<4I", 40, 5, 45, 0)
    # Only Responses has a continuation id to keep.
    ids = [[(REC_RESPONSE_ID, b"resp_2")], [(REC_RESPONSE_ID, b"resp_3")]]
    if api == "chat":
        ids = [[], []]
    assert conv.records == [
        (REC_PROVIDER, HOST.encode()), (REC_MODEL, MODEL.encode()), (REC_TITLE, b"hello agent"),
        (REC_USER, b"hello agent"), (REC_TOOL, b"system_status {}"), (REC_TOOL_ID, b"\x01\x00"),
        (REC_ASSISTANT, FIRST.encode()), *ids[0], (REC_USAGE, usage[0]),
        (REC_USER, b"and again"), (REC_ASSISTANT, b"Second answer."), *ids[1],
        (REC_USAGE, usage[1]),
    ]


@pytest.mark.parametrize("api", APIS)
def test_agent_ask_is_not_persisted(sims, api: Api) -> None:
    """The spec: the one-request frontend "is not persisted". After `agent ask`, with a tool
    call and an answer, `agent list` stays empty, also after a restart; the chat's first turn
    right after it is stored (so the list does show what is saved)."""
    script = Script([
        tool_call_reply(api, "system_status", {}, response_id="resp_1"),
        text_reply(api, "Asked and answered.", response_id="resp_2"),
        text_reply(api, FIRST, response_id="resp_3"),
    ])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        mark = len(dut.transcript)
        dut.write(b"agent ask what is up\r")
        dut.read_until(b"Asked and answered.", 15, start=mark)
        dut.write(b"\x1b")
        dut.read_until(b"\r\n" + PROMPT, 5, start=mark)
        assert dut.exec_command("agent list") == heading()
        dut = sims.restart(dut)
        assert dut.exec_command("agent list") == heading()
        converse(ChatTerm(dut, 80, 24), ["hello agent"])
        srv.check()
    assert [r[1:] for r in listed(dut)] == [(1, "hello agent")]


# -- resume ---------------------------------------------------------------------------------


@pytest.mark.parametrize("restart", [False, True], ids=["same-run", "after-restart"])
@pytest.mark.parametrize("api", APIS)
def test_resume_continues_the_conversation(sims, api: Api, restart: bool) -> None:
    script = Script([
        tool_call_reply(api, "system_status", {}, response_id="resp_1"),
        text_reply(api, FIRST, response_id="resp_2"),
        text_reply(api, "Second answer.", response_id="resp_3"),
        text_reply(api, "Third answer.", response_id="resp_4"),
        text_reply(api, "Fourth answer.", response_id="resp_5"),
    ])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        converse(ChatTerm(dut, 80, 24), ["hello agent", "and again"])
        # Another conversation in between: resuming is by slot, not "the last one".
        converse(ChatTerm(dut, 80, 24), ["unrelated"])
        if restart:
            dut = sims.restart(dut)
        assert listed(dut) == [(1, 2, "hello agent"), (2, 1, "unrelated")]
        term = ChatTerm(dut, 80, 24)
        term.open("agent resume 1", RESUMED_BANNER)
        term.settle(0.1)
        assert term.shown_lines()[-6:] == [
            f"{USER}: hello agent", "[tool] system_status {}", f"agent: {FIRST}",
            f"{USER}: and again", "agent: Second answer.", RESUMED_BANNER], term.dump()
        for y, line in enumerate(term.transcript):
            labelled = line.startswith("agent: ")
            assert all(term.cell(y, x).bold == (labelled and x < 6) for x in range(20)), line
        term.send("third")
        assert term.shown_lines()[-2:] == [f"{USER}: third", "agent: Fourth answer."]
        term.leave()
        reqs = srv.wait_for_requests(5)
        srv.check()
    body = reqs[4].json
    assert isinstance(body, dict)
    if api == "responses":
        assert body["previous_response_id"] == "resp_3"
        assert body["input"] == [user("third")]
    else:
        assert "previous_response_id" not in body
        assert body["messages"] == [system_message(reqs[0]), user("hello agent"),
                                    assistant(FIRST), user("and again"),
                                    assistant("Second answer."), user("third")]
    # The continuation went into the same slot.
    assert listed(dut) == [(1, 3, "hello agent"), (2, 1, "unrelated")]


def test_chat_history_is_bounded_and_starts_with_a_user_message(sims) -> None:
    """Chat rebuilds its request from at most 8 KiB of stored text, the newest messages, as a
    run starting with a user message; a turn past the 10 KiB flash file is not stored."""
    u1 = "q" * 1000  # with a1, 2000 bytes: the run to a1 fits 8192, to u1 does not
    answers = ["a" * 1000, "b" * 3400, "c" * 3400, "d" * 2000]
    script = Script([text_reply("chat", text, response_id=f"c{i}", pieces=4)
                     for i, text in enumerate(answers, 1)])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH["chat"]))
        converse(ChatTerm(dut, 80, 24), [u1, "u2", "u3"])
        assert listed(dut) == [(1, 3, u1[:63])]
        term = ChatTerm(dut, 80, 24)
        term.open("agent resume 1", RESUMED_BANNER)
        term.send("u4")
        term.settle(0.1)
        full = ("agent: this turn was not saved: conversation full: start a new one (limit"
                " 10240 bytes)")
        assert term.shown_lines()[-2:] == wrapped([full], 80), term.dump()
        term.leave()
        reqs = srv.wait_for_requests(4)
        srv.check()
    system = system_message(reqs[0])
    a1, a2, a3 = (assistant(x) for x in answers[:3])
    assert [r.json["messages"] for r in reqs] == [  # type: ignore[index]
        [system, user(u1)],
        [system, user(u1), a1, user("u2")],
        [system, user(u1), a1, user("u2"), a2, user("u3")],
        [system, user("u2"), a2, user("u3"), a3, user("u4")],
    ]
    assert listed(dut) == [(1, 3, u1[:63])]


def test_an_unsaved_first_turn_never_borrows_another_conversation(sims) -> None:
    """A new conversation whose first turn cannot be stored (over the 10 KiB flash bound)
    reserved a slot that still holds another conversation: the next message must not carry
    that conversation's messages as its history."""
    script = Script([text_reply("chat", text, response_id=f"c{i}", pieces=4)
                     for i, text in enumerate(
                         ["answer one", "answer two", "answer three", "x" * 11000, "fine"], 1)])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH["chat"]))
        for secret in ("SECRET-ONE", "SECRET-TWO", "SECRET-THREE"):
            converse(ChatTerm(dut, 80, 24), [secret])
        term = ChatTerm(dut, 80, 24)
        term.open()
        term.send("big one")
        term.settle(0.1)
        assert any("this turn was not saved" in line for line in term.shown_lines()), \
            term.dump()
        term.send("next")
        term.leave()
        reqs = srv.wait_for_requests(5)
        srv.check()
    system = system_message(reqs[0])
    assert reqs[4].json["messages"] == [system, user("next")]  # type: ignore[index]
    assert all("SECRET" not in r.body.decode() for r in reqs[3:])


def test_resume_refuses_another_protocol(sims) -> None:
    """A Chat Completions conversation cannot continue at a Responses endpoint: its context
    would be lost silently. One line, and the shell stays."""
    script = Script([text_reply("chat", "stored", response_id="c1")])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH["chat"]))
        converse(ChatTerm(dut, 80, 24), ["keep"])
        dut.exec_command(f"agent config endpoint {srv.url(API_PATH['responses'])}")
        refusal = ("agent: slot 1 is a chat-completions conversation but the endpoint speaks"
                   " responses: configure a chat-completions endpoint or start a new"
                   " conversation")
        assert dut.exec_command("agent resume 1") == [refusal]


# -- delete and bad slots -----------------------------------------------------------------------


def test_delete_and_bad_slots(sims) -> None:
    with TestServer(Script([text_reply("responses", "Kept.")])) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH["responses"]))
        converse(ChatTerm(dut, 80, 24), ["keep me"])
    before = dut.exec_command("agent list")
    assert before[2:] == [row(1, 1, int(before[2].split()[2]), "keep me")]
    cases = {
        "agent resume 0": BAD_SLOT, "agent resume 4": BAD_SLOT, "agent resume x": BAD_SLOT,
        "agent resume ''": BAD_SLOT, "agent resume 1x": BAD_SLOT,
        "agent delete 0": BAD_SLOT, "agent delete 4": BAD_SLOT, "agent delete x": BAD_SLOT,
        "agent resume 2": "agent: slot 2 holds no conversation",
        "agent delete 3": "agent: slot 3 holds no conversation",
        "agent resume": "agent: usage: agent resume SLOT",
        "agent delete": "agent: usage: agent delete SLOT",
    }
    for command, error in cases.items():
        assert dut.exec_command(command) == [error], command
        assert dut.exec_command("agent list") == before, command
    assert dut.exec_command("agent delete 1") == ["slot 1 deleted"]
    assert dut.exec_command("agent list") == heading()
    assert dut.exec_command("agent resume 1") == ["agent: slot 1 holds no conversation"]
    assert dut.exec_command("agent delete 1") == ["agent: slot 1 holds no conversation"]
    dut = sims.restart(dut)
    assert dut.exec_command("agent list") == heading()


# -- eviction ---------------------------------------------------------------------------------


def test_a_new_conversation_replaces_the_least_recently_written(sims) -> None:
    api: Api = "responses"
    titles = ["first", "second", "third", "first again", "cancelled", "fourth", "fifth",
              "sixth", "seventh"]
    replies = [text_reply(api, f"Answer to {t}.", response_id=f"r{i}")
               for i, t in enumerate(titles)]
    replies[4] = stall_before_end(replies[4], api)
    with TestServer(Script(replies)) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        for title in titles[:3]:
            converse(ChatTerm(dut, 80, 24), [title])
        assert listed(dut) == [(1, 1, "first"), (2, 1, "second"), (3, 1, "third")]
        # Continuing slot 1 makes it the most recently written.
        converse(ChatTerm(dut, 80, 24), ["first again"], "agent resume 1", RESUMED_BANNER)
        full = [(1, 2, "first"), (2, 1, "second"), (3, 1, "third")]
        assert listed(dut) == full
        # A new conversation whose first turn never completes evicts nothing.
        term = ChatTerm(dut, 80, 24)
        term.open()
        term.type(b"cancelled\r")
        term.wait(lambda: "agent: Answer to cancelled." in term.transcript, "the partial answer")
        mark = len(dut.transcript)
        term.type(b"\x1b")  # cancels and returns to the shell
        dut.read_until(PROMPT, 5, start=mark)
        assert CANCELLED.encode() in dut.transcript[mark:]
        assert listed(dut) == full
        converse(ChatTerm(dut, 80, 24), ["fourth"])
        assert listed(dut) == [(1, 2, "first"), (2, 1, "fourth"), (3, 1, "third")]
        converse(ChatTerm(dut, 80, 24), ["fifth"])
        assert listed(dut) == [(1, 2, "first"), (2, 1, "fourth"), (3, 1, "fifth")]
        converse(ChatTerm(dut, 80, 24), ["sixth"])
        assert listed(dut) == [(1, 1, "sixth"), (2, 1, "fourth"), (3, 1, "fifth")]
        # The order survives a restart: "fourth" is now the oldest.
        dut = sims.restart(dut)
        converse(ChatTerm(dut, 80, 24), ["seventh"])
        assert listed(dut) == [(1, 1, "sixth"), (2, 1, "seventh"), (3, 1, "fifth")]
        # The replaced slot holds only the new conversation.
        term = ChatTerm(dut, 80, 24)
        term.open("agent resume 2", RESUMED_BANNER)
        term.settle(0.1)
        assert term.shown_lines()[-3:] == [f"{USER}: seventh", "agent: Answer to seventh.",
                                           RESUMED_BANNER], term.dump()
        term.leave()
        srv.check()


# -- a 48 KiB conversation on the SD card ----------------------------------------------------------

SD_FILE_MAX = 49152
BIG_TURNS = 4


def big_answer(turn: int, size: int) -> str:
    words = f"turn {turn} line of text, "
    return (words * (size // len(words) + 1))[:size - 1] + "."


def pool_lines(dut: SimDevice) -> dict[str, str]:
    pools = {}
    for line in dut.exec_command("agent status"):
        if line.startswith("pool:"):
            pools[line.split()[1]] = line
    # The conversation store's pool and the provider's; the man page pool is made at boot too.
    assert set(pools) == {"conv", "stream", "pretype", "request", "man"}, pools
    return pools


def test_48k_conversation_on_sd_restores_with_one_io_block(sims, tmp_path: Path) -> None:
    api: Api = "responses"
    sd = tmp_path / "sd"
    header_records = 8 + len(HOST) + 8 + len(MODEL) + 8 + len("part 1")
    per_turn = (8 + len("part 1")) + 8 + (8 + len("resp_1")) + (8 + 16)
    answer_size = (SD_FILE_MAX - 48 - 12 - header_records) // BIG_TURNS - per_turn
    answers = [big_answer(i, answer_size) for i in range(1, BIG_TURNS + 1)]
    replies = [text_reply(api, text, response_id=f"resp_{i}", pieces=8)
               for i, text in enumerate(answers, 1)]
    replies += [text_reply(api, "One too many.", response_id="resp_5"),
                text_reply(api, "Small answer.", response_id="resp_s"),
                text_reply(api, "Still full.", response_id="resp_6")]
    full = ("agent: this turn was not saved: conversation full: start a new one (limit"
            f" {SD_FILE_MAX} bytes)")
    with TestServer(Script(replies)) as srv:
        dut = sims.start([f"--sd={sd}"])
        configure(dut, srv.url(API_PATH[api]))
        assert dut.exec_command("agent list") == heading(SD_DIR, 8)
        term = ChatTerm(dut, 80, 24)
        term.open()
        for i in range(1, BIG_TURNS + 2):
            term.send(f"part {i}", timeout=60.0)
        term.settle(0.1)
        assert term.shown_lines()[-2:] == wrapped([full], 80), term.dump()
        term.leave()
        converse(ChatTerm(dut, 80, 24), ["small"])
        big = (sd / ".agent" / "conversations" / "conv1.bin").read_bytes()
        conv = parse_conversation(big)  # every CRC as the format page defines it
        size = 60 + header_records + BIG_TURNS * (per_turn + answer_size)
        assert conv.size == len(big) == size and SD_FILE_MAX - BIG_TURNS < size <= SD_FILE_MAX
        assert conv.texts(REC_ASSISTANT) == answers and conv.turns == BIG_TURNS
        small_size = (sd / ".agent" / "conversations" / "conv2.bin").stat().st_size
        assert listed(dut, SD_DIR, 8) == [(1, BIG_TURNS, "part 1"), (2, 1, "small")]

        dut = sims.restart(dut)
        pools = [pool_lines(dut)]
        for slot, last in [(2, "agent: Small answer."), (1, f"agent: {answers[-1]}")]:
            term = ChatTerm(dut, 80, 24)
            term.open(f"agent resume {slot}", RESUMED_BANNER)
            term.settle(0.1)
            shown = term.shown_lines()
            assert shown[-1] == RESUMED_BANNER, term.dump()
            assert shown[-1 - len(wrapped([last], 80)):-1] == wrapped([last], 80), term.dump()
            assert not any("damaged" in line for line in shown)
            term.leave()
            pools.append(pool_lines(dut))
        # Continuing it: from the saved response id; the file is still full.
        term = ChatTerm(dut, 80, 24)
        term.open("agent resume 1", RESUMED_BANNER)
        term.send("part 6")
        term.settle(0.1)
        assert term.shown_lines()[-2:] == wrapped([full], 80), term.dump()
        term.leave()
        reqs = srv.wait_for_requests(len(replies))
        srv.check()
    body = reqs[-1].json
    assert isinstance(body, dict)
    assert body["previous_response_id"] == f"resp_{BIG_TURNS}"
    assert body["input"] == [user("part 6")]
    assert len(big) > 40 * small_size
    # The restore of either size took the store's one 512-byte block and gave it back; the
    # stream and request pools were not touched.
    conv_pool = "pool:      conv     1/1 free (lowest 0), 512 B blocks, internal; peak 512 B held"
    for seen in pools:
        assert seen["conv"].startswith(conv_pool), seen
        assert seen["stream"] == pools[0]["stream"] and seen["request"] == pools[0]["request"]
        assert seen["pretype"] == pools[0]["pretype"]


# -- what the replay shows ----------------------------------------------------------------------


def test_replay_drops_control_characters_across_pieces(sims) -> None:
    """The store keeps the answer as the model sent it; the replay, read in pieces of at most
    512 bytes, shows it as the live chat did: C1 controls dropped even when a piece ends
    between the two bytes of one (the first piece ends after the 0xc2 of the 171st)."""
    api: Api = "responses"
    answer = "x" + "\u009b2" * 600 + "\u001b[2J end"
    assert answer.encode()[511:513] == b"\xc2\x9b"
    shown = "x" + "2" * 600 + "[2J end"
    with TestServer(Script([text_reply(api, answer, response_id="resp_c")])) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH[api]))
        term = ChatTerm(dut, 80, 24)
        term.open()
        term.send("controls")
        term.settle(0.1)
        live = term.shown_lines()
        assert live[-len(wrapped([f"agent: {shown}"], 80)):] == wrapped([f"agent: {shown}"], 80)
        term.leave()
        term = ChatTerm(dut, 80, 24)
        term.open("agent resume 1", RESUMED_BANNER)
        term.settle(0.1)
        assert term.shown_lines() == wrapped([f"{USER}: controls", f"agent: {shown}",
                                              RESUMED_BANNER], 80), term.dump()
        term.leave()
    assert dut.stop() == 0
    conv = parse_conversation(read_file(sims.flash, ".agent/conversations/conv1.bin"))
    assert conv.texts(REC_ASSISTANT) == [answer]


def test_damaged_conversation_shows_its_good_part_and_the_backup_returns(sims,
                                                                         tmp_path: Path) -> None:
    """A byte flipped in the last answer of a conversation on the SD card: resume shows the
    records before it and says the rest is damaged; a turn on it is not stored; the next
    start restores the previous version from its backup."""
    api: Api = "responses"
    sd = tmp_path / "sd"
    script = Script([text_reply(api, "First answer.", response_id="resp_1"),
                     text_reply(api, "Second answer.", response_id="resp_2"),
                     text_reply(api, "Third answer.", response_id="resp_3"),
                     text_reply(api, "Fourth answer.", response_id="resp_4")])
    with TestServer(script) as srv:
        dut = sims.start([f"--sd={sd}"])
        configure(dut, srv.url(API_PATH[api]))
        converse(ChatTerm(dut, 80, 24), ["one", "two"])
        folder = sd / ".agent" / "conversations"
        assert sorted(p.name for p in folder.iterdir()) == ["conv1.bak", "conv1.bin"]
        data = bytearray((folder / "conv1.bin").read_bytes())
        at = data.index(b"Second answer.")
        data[at] ^= 0x20
        (folder / "conv1.bin").write_bytes(bytes(data))
        term = ChatTerm(dut, 80, 24)
        term.open("agent resume 1", RESUMED_BANNER)
        term.settle(0.1)
        assert term.shown_lines() == [
            f"{USER}: one", "agent: First answer.", f"{USER}: two",
            "agent: the rest of this conversation is damaged and was not shown",
            RESUMED_BANNER], term.dump()
        term.send("three")
        term.settle(0.1)
        assert term.shown_lines()[-3:] == [
            f"{USER}: three", "agent: Third answer.",
            "agent: this turn was not saved: the conversation file is damaged"], term.dump()
        term.leave()
        assert (folder / "conv1.bin").read_bytes() == bytes(data)  # never extended
        dut = sims.restart(dut)
        assert listed(dut, SD_DIR, 8) == [(1, 1, "one")]
        assert sorted(p.name for p in folder.iterdir()) == ["conv1.bin"]
        term = ChatTerm(dut, 80, 24)
        term.open("agent resume 1", RESUMED_BANNER)
        term.settle(0.1)
        assert term.shown_lines() == [f"{USER}: one", "agent: First answer.",
                                      RESUMED_BANNER], term.dump()
        term.send("again")
        term.leave()
        reqs = srv.wait_for_requests(4)
        srv.check()
    body = reqs[3].json
    assert isinstance(body, dict)
    assert body["previous_response_id"] == "resp_1"  # the restored version's last turn
    assert listed(dut, SD_DIR, 8) == [(1, 2, "one")]


def test_damaged_header_is_listed_refused_and_recovered(sims, tmp_path: Path) -> None:
    """A flipped header byte: agent list shows the slot as damaged, agent resume refuses it
    with its one-line error, and the next start restores the backup."""
    api: Api = "responses"
    sd = tmp_path / "sd"
    script = Script([text_reply(api, "First answer.", response_id="resp_1"),
                     text_reply(api, "Second answer.", response_id="resp_2")])
    with TestServer(script) as srv:
        dut = sims.start([f"--sd={sd}"])
        configure(dut, srv.url(API_PATH[api]))
        converse(ChatTerm(dut, 80, 24), ["one", "two"])
        srv.check()
    main = sd / ".agent" / "conversations" / "conv1.bin"
    data = bytearray(main.read_bytes())
    data[12] ^= 0x01  # the sequence number, under the header CRC
    main.write_bytes(bytes(data))
    assert dut.exec_command("agent list") == heading(SD_DIR, 8) + [
        f"1    (damaged, {len(data)} bytes)"]
    assert dut.exec_command("agent resume 1") == [
        f"agent: slot 1 cannot be read (error -{errno.EBADMSG})"]
    dut = sims.restart(dut)
    assert listed(dut, SD_DIR, 8) == [(1, 1, "one")]
