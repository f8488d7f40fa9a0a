"""The host side of the module import (agent_host.module_dir, Device.import_module, modules,
remove, and their commands) against a scripted SMP peer (fake_smp.py): what is read from a
module directory, the part size at the transport's bound, the head, the parts on the way,
a resume, the device's refusal, answers outside the contract; tests/e2e/test_modules_host.py
runs the same against the simulator."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from pathlib import Path
from typing import Any

import pytest
from agent_host import cli, module_dir
from agent_host.errors import DeviceRefusedError, TransportError
from agent_host.mgmt import device as device_mod
from agent_host.mgmt import messages as m
from agent_host.mgmt.device import Device, _serial_wire
from fake_smp import Answer, FakeTransport, Request, group_error, params_or
from smp import packet
from smpclient.transport.serial import SMPSerialTransport

ARITHMETIC = (b"---\nname: arithmetic\ndescription: Gives rules for arithmetic tasks.\n---\n"
              b"Check each operation and state the unit of each result.\n")


def make(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root


# -- the module directory ---------------------------------------------------------------------
def test_each_kind_sends_its_manifest_and_the_body_file_it_names(tmp_path: Path) -> None:
    role = make(tmp_path / "r", {"module.manifest": b"name: r1\nkind: role\ndescription: d\n",
                                 "overlay.txt": b"Be brief.\n", "other.txt": b"not sent\n"})
    text = module_dir.read_module(role)
    assert (text.name, text.kind, text.body_file, text.body) == (
        "r1", "role", "overlay.txt", b"Be brief.\n")
    assert text.sha256 == hashlib.sha256(text.manifest + text.body).hexdigest()
    named = make(tmp_path / "r2", {"module.manifest": b"# c\r\n\r\nname: r2\r\nkind:\trole\t\r\n"
                                                      b"overlay: other.txt\r\n",
                                   "other.txt": b"Other.\n"})
    assert module_dir.read_module(named).body == b"Other.\n"
    tool = make(tmp_path / "t", {"module.manifest": b"name: t1\nkind: tool\nentry: run.lua\n",
                                 "run.lua": b"return 1\n"})
    assert module_dir.read_module(tool).body_file == "run.lua"
    # A skill: SKILL.md alone (the name from its header), or a manifest that takes
    # precedence over the header (and names the body file).
    skill = make(tmp_path / "arith", {"SKILL.md": ARITHMETIC.replace(b"\n", b"\r\n")})
    text = module_dir.read_module(skill)
    assert (text.name, text.kind, text.manifest) == ("arithmetic", "skill", b"")
    assert text.body == ARITHMETIC.replace(b"\n", b"\r\n")
    both = make(tmp_path / "both", {"module.manifest": b"name: s2\nkind: skill\ndescription: d\n"
                                                       b"body: rules.md\n",
                                    "SKILL.md": ARITHMETIC, "rules.md": b"Rules.\n"})
    text = module_dir.read_module(both)
    assert (text.name, text.body) == ("s2", b"Rules.\n")
    # Without a name the directory's is sent: the device refuses with its own reason.
    anonymous = make(tmp_path / "anon", {"SKILL.md": b"---\ndescription: d\n---\nBody.\n"})
    assert module_dir.read_module(anonymous).name == "anon"


def test_the_first_value_of_a_key_is_the_one_read(tmp_path: Path) -> None:
    folder = make(tmp_path / "dup", {"module.manifest": b"name: a\nkind: role\nkind: tool\n"
                                                        b"overlay: one.txt\noverlay: two.txt\n",
                                     "one.txt": b"1\n"})
    text = module_dir.read_module(folder)
    assert (text.kind, text.body) == ("role", b"1\n")  # the device refuses the duplicate


# -- part sizes -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["a", "arithmetic", "x" * 31])
def test_a_part_fills_the_transport_and_one_byte_more_does_not_fit(name: str) -> None:
    for limit in range(80, 600):
        device = Device(FakeTransport(lambda r: {}, mtu_bytes=limit), "fake")
        for off in (0, 23, 24, 255, 256, 65535, 65536):
            room = device.part_room(name, off)
            at = len(m.PartWrite(name=name, off=off, data=b"x" * room, sequence=1).BYTES)
            over = len(m.PartWrite(name=name, off=off, data=b"x" * (room + 1), sequence=1).BYTES)
            assert at <= limit < over, (limit, off, room)


def test_no_room_for_a_part() -> None:
    device = Device(FakeTransport(lambda r: {}, mtu_bytes=30), "fake")
    with pytest.raises(TransportError, match="a part does not fit the 30 bytes"):
        device.part_room("arithmetic", 0)


def test_serial_wire_is_smpclients_framing() -> None:
    for size in range(2100):
        data = os.urandom(size)
        assert _serial_wire(size) == sum(len(x) for x in packet.encode(data, line_length=128))


def test_a_serial_part_ends_at_a_full_line() -> None:
    transport = SMPSerialTransport()
    transport.initialize(2048)
    device = Device(transport, "serial")
    room = device.part_room("bench", 2010)
    message = len(m.PartWrite(name="bench", off=2010, data=b"x" * room, sequence=1).BYTES)
    # 2044 bytes would fit; 2042 fill 22 lines of 93 bytes (length, packet, CRC) exactly.
    assert (message, (message + 4) % 93) == (2042, 0)
    assert room / _serial_wire(message) > (room + 2) / _serial_wire(message + 2)


# -- the import against a scripted device -----------------------------------------------------
class Importer:
    """A device side of import and part: the arrival's bytes, and what was sent and read."""

    def __init__(self, resume: int = 0, refuse: str | None = None) -> None:
        self.text = b""
        self.resume = resume
        self.refuse = refuse
        self.events: list[str] = []
        self.transport = FakeTransport(params_or(self.handle))
        receive = self.transport.receive

        async def logged() -> bytes:
            self.events.append("answer")
            return await receive()

        self.transport.receive = logged  # type: ignore[method-assign]

    def handle(self, req: Request) -> Answer:
        if req.command == m.Command.IMPORT:
            self.events.append("head")
            self.size = req.body["manifest_len"] + req.body["body_len"]
            self.text = bytes(self.resume)
            return {"name": req.body["name"], "off": self.resume, "state": "incomplete"}
        self.events.append(f"part {req.body['off']}")
        off, data = req.body["off"], req.body["data"]
        assert off <= len(self.text)  # no gap; bytes sent again overwrite (as the device)
        self.text = self.text[:off] + data + self.text[off + len(data):]
        if len(self.text) < self.size:
            return {"name": req.body["name"], "off": len(self.text), "state": "incomplete"}
        if self.refuse:
            return group_error(2, self.refuse)
        return {"name": req.body["name"], "off": len(self.text), "state": "installed",
                "persisted": True}


def first_part(importer: Importer) -> int:
    """Bytes of the first part sent."""
    return len(next(r for r in importer.transport.requests
                    if r.command == m.Command.PART).body["data"])


def import_with(importer: Importer, text: module_dir.ModuleText, window: int,
                mtu: int = 256) -> tuple[Any, list[tuple[int, int]]]:
    progress: list[tuple[int, int]] = []

    async def session() -> Any:
        device = Device(importer.transport, "fake")
        importer.transport.initialize(mtu)
        return await device.import_text(text, lambda a, b: progress.append((a, b)),
                                        window=window)

    return asyncio.run(session()), progress


TEXT = module_dir.ModuleText("big", "tool", b"name: big\nkind: tool\nentry: big.lua\n",
                             bytes(range(256)) * 4, "big.lua")


def test_two_requests_are_on_the_way_before_the_first_answer() -> None:
    importer = Importer()
    done, progress = import_with(importer, TEXT, window=2)
    assert importer.text == TEXT.text
    assert (done.state, done.persisted, done.resumed_at, done.size) == (
        "installed", True, 0, len(TEXT.text))
    assert done.parts == len(progress) - 1 > 4
    parts = [e for e in importer.events if e.startswith("part")]
    # The first part follows the head; each next request goes out before the previous
    # answer is read.
    assert importer.events == (
        ["head", parts[0]] + [x for part in parts[1:] for x in ("answer", part)]
        + ["answer", "answer"])
    assert progress[0] == (0, len(TEXT.text)) and progress[-1] == (len(TEXT.text),) * 2


def test_stop_and_wait_with_a_window_of_one() -> None:
    importer = Importer()
    import_with(importer, TEXT, window=1)
    events = importer.events[importer.events.index("head"):]
    assert events[2::2] == [e for e in events if e.startswith("part")]
    assert set(events[1::2]) == {"answer"}


def test_a_resend_continues_at_the_answered_offset() -> None:
    importer = Importer(resume=300)
    done, progress = import_with(importer, TEXT, window=2)
    assert done.resumed_at == 300 and progress[0] == (300, len(TEXT.text))
    # The first part was on the way with the head: it rewrites bytes the device holds; the
    # next one starts where the device stands.
    room = first_part(importer)
    assert [e for e in importer.events if e.startswith("part")][:2] == ["part 0", "part 300"]
    assert room < 300
    assert importer.text[:room] == TEXT.text[:room] and importer.text[300:] == TEXT.text[300:]


def test_a_resume_inside_the_first_part() -> None:
    importer = Importer(resume=40)
    done, _ = import_with(importer, TEXT, window=2)
    assert done.resumed_at == 40 and importer.text == TEXT.text
    room = first_part(importer)
    assert [e for e in importer.events if e.startswith("part")][:2] == ["part 0", f"part {room}"]


def test_a_refused_head_is_the_refusal_reported() -> None:
    importer = Importer()

    def refuse_head(req: Request) -> Answer:
        if req.command == m.Command.IMPORT:
            return group_error(9, "catalog: needs 1060 contiguous bytes, the largest free run "
                                  "is 200")
        return group_error(4, 'no import of "big" is under way')

    importer.transport.handler = params_or(refuse_head)
    with pytest.raises(DeviceRefusedError) as err:
        import_with(importer, TEXT, window=2)
    assert str(err.value) == ("import big: catalog: needs 1060 contiguous bytes, the largest "
                              "free run is 200 (ENOSPC)")


def test_the_last_part_carries_the_refusal() -> None:
    importer = Importer(refuse='unknown key "when" for a tool')
    with pytest.raises(DeviceRefusedError) as err:
        import_with(importer, TEXT, window=2)
    assert str(err.value) == 'import big: unknown key "when" for a tool (EINVAL)'


@pytest.mark.parametrize(("answer", "message"), [
    ({"name": "big", "off": 7, "state": "incomplete"},
     "import big: the device answered 'big' offset 7 to a part ending at"),
    ({"name": "other", "off": 0, "state": "incomplete"}, "import big: the device answered 'other'"),
    ({"name": "big", "off": -1, "state": "incomplete"}, "not one the agent group defines"),
    ({"name": "big", "off": 0, "state": "done"}, "not one the agent group defines"),
])
def test_part_answers_outside_the_contract(answer: dict[str, Any], message: str) -> None:
    importer = Importer()

    def wrong(req: Request) -> Answer:
        if req.command == m.Command.PART:
            return {**answer, "off": answer["off"] if answer["off"] != 0 else
                    req.body["off"] + len(req.body["data"])}
        return importer.handle(req)

    importer.transport.handler = params_or(wrong)
    with pytest.raises(TransportError, match=message):
        import_with(importer, TEXT, window=2)


def test_installed_before_the_last_byte_is_an_error() -> None:
    importer = Importer()
    importer.size = 1

    def early(req: Request) -> Answer:
        answer = importer.handle(req)
        if req.command == m.Command.PART and isinstance(answer, dict):
            return {**answer, "state": "installed", "persisted": True}
        return answer

    importer.transport.handler = params_or(early)
    with pytest.raises(TransportError, match="installed the module at offset"):
        import_with(importer, TEXT, window=2)


def test_a_head_answer_past_the_text_is_an_error() -> None:
    importer = Importer(resume=len(TEXT.text))
    with pytest.raises(TransportError, match=f"offset {len(TEXT.text)} to the head of "
                                             f"{len(TEXT.text)} bytes"):
        import_with(importer, TEXT, window=2)


# -- modules and remove through the command line ----------------------------------------------
ENTRY = {"name": "arithmetic", "kind": "skill", "size": 128, "received": 128,
         "sha256": "ab" * 32, "state": "installed"}
PARTIAL = {"name": "partial", "kind": "role", "size": 900, "received": 120,
           "sha256": "cd" * 32, "state": "incomplete"}


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    state: dict[str, Any] = {"answers": {}, "port": str(tmp_path / "ttyFAKE")}
    (tmp_path / "ttyFAKE").touch()

    def handle(req: Request) -> Answer:
        answer = state["answers"][(req.command, req.write)]
        return answer(req) if callable(answer) else answer

    transport = FakeTransport(params_or(handle))
    state["transport"] = transport
    monkeypatch.setattr(device_mod, "make_transport", lambda endpoint: transport)
    return state


def cli_run(device: dict[str, Any], capsys: pytest.CaptureFixture[str],
            *args: str) -> tuple[int, str, str]:
    code = cli.main([*args, "--port", device["port"]])
    out, err = capsys.readouterr()
    return code, out, err


def test_modules_is_a_table_read_page_by_page(device: dict[str, Any],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pages = {0: (5, [ENTRY]), 5: (16, [PARTIAL])}
    device["answers"][(m.Command.MODULES, False)] = lambda r: {
        "slots": 16, "off": r.body.get("off", 0), "next": pages[r.body.get("off", 0)][0],
        "list": pages[r.body.get("off", 0)][1]}
    code, out, err = cli_run(device, capsys, "modules")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "catalog: 2 of 16 entries",
        "NAME        KIND   SIZE  SHA256" + " " * 60 + "STATE",
        "arithmetic  skill  128   " + "ab" * 32 + "  installed",
        "partial     role   900   " + "cd" * 32 + "  incomplete (120 of 900 bytes)"]
    assert [r.body for r in device["transport"].agent_requests()] == [{}, {"off": 5}]


def test_an_empty_catalog(device: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    device["answers"][(m.Command.MODULES, False)] = {"slots": 16, "off": 0, "next": 16,
                                                     "list": []}
    assert cli_run(device, capsys, "modules") == (0, "catalog: 0 of 16 entries\n", "")


@pytest.mark.parametrize(("page", "message"), [
    ({"slots": 16, "off": 0, "next": 0, "list": []},
     "modules: the device answered entries 0..0 of 16 to a request from 0"),
    ({"slots": 16, "off": 0, "next": 17, "list": []},
     "modules: the device answered entries 0..17 of 16 to a request from 0"),
    ({"slots": 16, "off": 3, "next": 16, "list": []},
     "modules: the device answered entries 3..16 of 16 to a request from 0"),
    ({"slots": 16, "off": 0, "next": 16, "list": [{**ENTRY, "state": "gone"}]},
     (r"modules: the answer from serial \S+ is not one the agent group defines "
     r"\(docs/mgmt-group.md\)")),
])
def test_modules_pages_that_go_wrong(device: dict[str, Any], capsys: pytest.CaptureFixture[str],
                                     page: dict[str, Any], message: str) -> None:
    device["answers"][(m.Command.MODULES, False)] = page
    code, out, err = cli_run(device, capsys, "modules")
    assert (code, out) == (3, "")
    assert re.fullmatch(f"agent-host: {message}\n", err), err


def test_a_catalog_that_changes_size_between_pages(device: dict[str, Any],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    device["answers"][(m.Command.MODULES, False)] = lambda r: (
        {"slots": 16, "off": 0, "next": 8, "list": []} if not r.body else
        {"slots": 32, "off": 8, "next": 32, "list": []})
    assert cli_run(device, capsys, "modules")[2] == (
        "agent-host: modules: the catalog changed from 16 to 32 entries during the listing\n")


def test_remove_and_its_refusals(device: dict[str, Any],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    device["answers"][(m.Command.REMOVE, True)] = lambda r: (
        {"name": r.body["name"]} if r.body["name"] == "worker" else
        group_error(10, "storage_read is a built-in tool; built-in tools cannot be removed")
        if r.body["name"] == "storage_read" else group_error(9))
    assert cli_run(device, capsys, "remove", "worker") == (0, "worker removed\n", "")
    assert cli_run(device, capsys, "remove", "storage_read") == (1, "", (
        "agent-host: remove storage_read: storage_read is a built-in tool; built-in tools "
        "cannot be removed (EPERM)\n"))
    assert cli_run(device, capsys, "remove", "x") == (1, "", "agent-host: remove x: ENOSPC\n")
    device["answers"][(m.Command.REMOVE, True)] = {"name": "other"}
    assert cli_run(device, capsys, "remove", "x") == (
        3, "", "agent-host: remove x: the device answered for 'other'\n")


def test_import_prints_the_outcome(device: dict[str, Any], capsys: pytest.CaptureFixture[str],
                                   tmp_path: Path) -> None:
    folder = make(tmp_path / "arithmetic", {"SKILL.md": ARITHMETIC})
    importer = Importer(resume=40)
    device["answers"][(m.Command.IMPORT, True)] = importer.handle
    device["answers"][(m.Command.PART, True)] = importer.handle
    assert cli_run(device, capsys, "import", str(folder)) == (
        0, "skill arithmetic accepted (installed)\n",
        f"import {folder}: continued an interrupted transfer at byte 40 of 128\n")
    assert importer.text[40:] == ARITHMETIC[40:]
    # Not journaled (no /lfs): said so.
    importer = Importer()
    device["answers"][(m.Command.IMPORT, True)] = importer.handle
    device["answers"][(m.Command.PART, True)] = lambda r: {
        **importer.handle(r), "state": "replaced", "persisted": False}  # type: ignore[dict-item]
    assert cli_run(device, capsys, "import", str(folder)) == (0, (
        "skill arithmetic accepted (replaced the installed one); not journaled: no /lfs, lost "
        "at restart\n"), "")


def test_nothing_is_sent_for_a_directory_that_cannot_be_sent(
        device: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = make(tmp_path / "empty", {"notes.txt": b"x\n"})
    assert cli_run(device, capsys, "import", str(folder)) == (
        2, "", f"agent-host: {folder}: no module.manifest and no SKILL.md\n")
    assert device["transport"].requests == []
