"""agent-host's device commands over the simulator's pty with the real smpclient (its serial
transport, SMP frames between the console's output): every command against what the device's
own shell says, each bad value refused with the shell's reason, the key never readable, SMP
between console output and beside a running chat, a disconnect and a hang during an export,
and an MTU sweep (docs/host-cli.md, docs/mgmt-group.md)."""

from __future__ import annotations

import asyncio
import fcntl
import math
import os
import re
import select
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path

import cbor2
import pytest
from agent_host import cli, convfile, device_cli
from agent_host.errors import DeviceTimeoutError, TransportError
from agent_host.mgmt import Device, Endpoint, open_device
from agent_host.mgmt import messages as m
from agent_host.testing.agent_tools import tool_table
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import text_reply
from chat_term import API_PATH, REC_TITLE, ChatTerm, configure, parse_conversation
from conv_bytes import build
from flash_image import read_file, write_files

pytestmark = pytest.mark.sim_only("the simulator's pty, flash image, SD folder and process")

AGENT_HOST = Path(sys.executable).with_name("agent-host")
KEYS = ["sk-e2e-STDIN-0123456789abcdef", "sk-e2e-ENV-fedcba9876543210",
        "sk-e2e-PROMPT-aaaabbbbccccdddd"]
MODEL = "test-model"
CONV_DIR = ".agent/conversations"
SETTINGS = ["endpoint", "model", "key", "reasoning", "tools", "max-tools", "user", "embeddings",
            "embeddings-model"]


# -- helpers ----------------------------------------------------------------------------------
def host(dut: SimDevice, *args: str, stdin: str = "", env: dict[str, str] | None = None,
         timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run the agent-host console script against @dut's pty."""
    environ = {k: v for k, v in os.environ.items() if k not in ("AGENT_KEY", "AGENT_PORT")}
    environ.update(env or {})
    argv = [str(AGENT_HOST), *args, "--port", dut.pty_path]
    raw = subprocess.run(argv, input=stdin.encode(), capture_output=True, timeout=timeout,
                         env=environ, check=False)
    # Decoded as they are: the console's CR LF line ends stay.
    return subprocess.CompletedProcess(argv, raw.returncode,
                                       raw.stdout.decode(errors="replace"),
                                       raw.stderr.decode())


def ok(result: subprocess.CompletedProcess[str], stderr: str = "") -> str:
    assert (result.returncode, result.stderr) == (0, stderr), result
    return result.stdout


def written(slot: int, data: bytes, target: Path) -> str:
    """export's note on stderr."""
    return (f"slot {slot}: {len(data)} bytes, {convfile.parse(data).turns} turns, checked; "
            f"written to {target}\n")


def pairs(text: str) -> dict[str, str]:
    """The `key: value` lines of plain output, up to the first empty line."""
    block = text.split("\n\n")[0]
    return dict(line.split(": ", 1) for line in block.splitlines())


def shell_value(dut: SimDevice, name: str) -> str:
    out = dut.exec_command(f"agent config {name}")
    assert len(out) == 1 and out[0].startswith(f"{name}: "), out
    value = out[0].split(": ", 1)[1]
    return "" if value == "(not set)" else value


def conversation(slot: int, turns: int, text_bytes: int = 40, title: str = "") -> bytes:
    """A valid conversation file of about @turns * 2 * @text_bytes bytes."""
    body = [(f"question {i} " + "q" * text_bytes, [f"tool_{i}: executed"],
             f"answer {i} " + "a" * text_bytes) for i in range(turns)]
    return build(slot, 2, "openai", MODEL, title or f"conversation {slot}", body, conv_id=slot,
                 seq=slot, created=1_700_000_000 + slot, updated=1_700_000_100 + slot,
                 response_id=f"resp_{slot}", usage=(10, 5, 15, 0))


def on_sd(sims, tmp_path: Path, files: dict[int, bytes]) -> SimDevice:
    """A simulator whose SD card (8 slots, 48 KiB each) holds @files by slot."""
    folder = tmp_path / "sd" / CONV_DIR
    folder.mkdir(parents=True)
    for slot, data in files.items():
        (folder / f"conv{slot}.bin").write_bytes(data)
    return sims.start([f"--sd={tmp_path / 'sd'}"])


# Just under the SD card's 49152-byte bound: 49 export pages of at most 1024 bytes.
BIG = conversation(5, 12, 1994, "big")


def test_the_big_file_is_near_the_sd_bound() -> None:
    assert 49152 - 32 < len(BIG) <= 49152


def session(dut: SimDevice, mtu: int | None = None,
            timeout: float = 5.0) -> AbstractAsyncContextManager[Device]:
    """open_device() on @dut's pty."""
    return open_device(Endpoint("serial", dut.pty_path, mtu=mtu), timeout)


# -- every command against the device's shell ------------------------------------------------
def test_status_config_and_tools_agree_with_the_shell(dut: SimDevice) -> None:
    status = pairs(ok(host(dut, "status")))
    shell = dut.exec_command("agent status")
    assert shell[0] == f"version:   {status['version']} on {status['board']}"
    assert status["board"] == "host_sim" and status["key"] == "not set"
    for line in shell[1:9]:
        name, value = (part.strip() for part in line.split(":", 1))
        assert status[name] == value, (name, status)
    assert status["tool calls"] == "0 executed, 0 denied, 0 failed; last request 0 of 0"
    # The pools: the same as the shell's pool lines, in order.
    table = ok(host(dut, "status")).split("memory pools\n")[1].splitlines()
    assert table[0].split() == ["POOL", "CLASS", "BLOCK", "TOTAL", "FREE", "LOWEST", "PEAK",
                                "HELD", "PEAK", "WRITTEN"]
    shell_pools = [line.split() for line in shell if line.startswith("pool:")]
    for row, words in zip(table[1:], shell_pools, strict=True):
        name, klass, block, total, free, lowest, held, written = row.split()
        assert words[1:] == [name, f"{free}/{total}", "free", "(lowest", f"{lowest}),", block,
                             "B", "blocks,", f"{klass};", "peak", held, "B", "held,", written,
                             "B", "written"]
        assert int(held) == (int(total) - int(lowest)) * int(block)
        assert int(written) <= int(held)
    config = pairs(ok(host(dut, "config")))
    assert list(config) == ["endpoint", "protocol", "model", "key", "reasoning", "tools",
                            "max-tools", "user", "embeddings", "embeddings-model"]
    for name in SETTINGS:
        if name != "key":
            assert config[name] in (shell_value(dut, name), "(not set)")
    # tools: the same rows as the shell's `agent tools`, read over several pages.
    policy, rows = tool_table(dut)
    out = ok(host(dut, "tools")).splitlines()
    assert out[0] == f"tool policy: {policy}; {len(rows)} tools"
    assert [line.split() for line in out[2:]] == [
        [r.name, r.domain, r.risk, r.available, r.policy, r.needs, *r.reason.split()]
        for r in rows]


def test_settings_written_over_smp_are_the_shells(sims) -> None:
    dut = sims.start()
    values = {"endpoint": "http://127.0.0.1:9/v1/responses", "model": MODEL,
              "reasoning": "high", "tools": "read-only", "max-tools": "4", "user": "ada",
              "embeddings": "http://127.0.0.1:9/v1/embeddings", "embeddings-model": "embed-test"}
    for name, value in values.items():
        assert ok(host(dut, "config", name, value)) == f"{name} set to {value}\n"
        assert shell_value(dut, name) == value
    assert ok(host(dut, "config", "model")) == f"model: {MODEL}\n"
    config = pairs(ok(host(dut, "config")))
    assert config == dict(values, key="not set", protocol="responses")
    dut = sims.restart(dut)
    for name, value in values.items():
        assert shell_value(dut, name) == value
    assert ok(host(dut, "config", "endpoint", "http://127.0.0.1:9/v1/chat/completions")) \
        == "endpoint set to http://127.0.0.1:9/v1/chat/completions\n"
    assert pairs(ok(host(dut, "status")))["protocol"] == "chat-completions"


BAD_VALUES = [("endpoint", "ftp://example.com"), ("endpoint", "http//x"),
              ("reasoning", "extreme"), ("tools", "always"), ("max-tools", "0"),
              ("max-tools", "33"), ("max-tools", "many"), ("model", "m" * 128),
              ("user", "u" * 32), ("embeddings", "http://x"),
              ("embeddings-model", "m" * 128)]


def test_bad_values_are_refused_with_the_shells_reason(dut: SimDevice) -> None:
    for name, value in BAD_VALUES:
        before = shell_value(dut, name)
        shell = dut.exec_command(f"agent config {name} {value}")
        assert len(shell) == 1 and shell[0].startswith("agent: "), shell
        result = host(dut, "config", name, value)
        assert (result.returncode, result.stdout) == (1, ""), result
        assert result.stderr == f"agent-host: config {name}: {shell[0][7:]} (EINVAL)\n"
        assert shell_value(dut, name) == before
    # A key over the bound, from stdin: the shell's hidden entry says the same.
    result = host(dut, "config", "key", "--key-stdin", stdin="k" * 256 + "\n")
    assert result.returncode == 1
    assert result.stderr == ("agent-host: config key: key is too long (at most 255 bytes); key "
                             "unchanged (EINVAL)\n")
    assert pairs(ok(host(dut, "status")))["key"] == "not set"


def test_bad_and_empty_slots(dut: SimDevice) -> None:
    for command in ("export", "delete"):
        shell = dut.exec_command("agent delete 4")
        result = host(dut, command, "4")
        assert (result.returncode, result.stderr) == (
            1, f"agent-host: {command} 4: {shell[0][7:]} (ERANGE)\n")
        shell = dut.exec_command("agent delete 2")
        result = host(dut, command, "2")
        assert (result.returncode, result.stderr) == (
            1, f"agent-host: {command} 2: {shell[0][7:]} (ENOENT)\n")
    assert shell == ["agent: slot 2 holds no conversation"]
    result = host(dut, "export", "0")
    assert result.returncode == 2 and "slot must be a number from 1 up" in result.stderr


def test_list_export_and_delete_on_flash(sims, tmp_path: Path) -> None:
    dut = sims.start()
    assert ok(host(dut, "list")) == "/lfs/.agent/conversations: 0 of 3 slots used\n"
    dut.stop()
    files = {1: conversation(1, 2, title="Hello there"), 3: conversation(3, 40)}
    assert len(files[3]) > 7 * 1024  # several pages
    write_files(sims.flash, {f"{CONV_DIR}/conv{s}.bin": d for s, d in files.items()})
    dut = sims.start()
    out = ok(host(dut, "list")).splitlines()
    assert out[0] == "/lfs/.agent/conversations: 2 of 3 slots used"
    assert [re.split(r"  +", line) for line in out[1:]] == [
        ["SLOT", "TURNS", "BYTES", "MODEL", "TITLE", "STATE"],
        ["1", "2", str(len(files[1])), MODEL, "Hello there", "ok"],
        ["3", "40", str(len(files[3])), MODEL, "conversation 3", "ok"]]
    shell = dut.exec_command("agent list")
    assert [line.split()[:3] for line in shell[2:]] == [
        ["1", "2", str(len(files[1]))], ["3", "40", str(len(files[3]))]]
    for slot, data in files.items():
        target = tmp_path / f"out{slot}.bin"
        ok(host(dut, "export", str(slot), "-o", str(target)), written(slot, data, target))
        assert target.read_bytes() == data
    text = ok(host(dut, "export", "1", "--text"))
    assert text == convfile.transcript(convfile.parse(files[1]))
    assert ok(host(dut, "delete", "1")) == "slot 1 deleted\n"
    assert [line.split()[0] for line in dut.exec_command("agent list")[2:]] == ["3"]
    assert ok(host(dut, "list")).splitlines()[0] == \
        "/lfs/.agent/conversations: 1 of 3 slots used"
    result = host(dut, "export", "1")
    assert (result.returncode, result.stderr) == (
        1, "agent-host: export 1: slot 1 holds no conversation (ENOENT)\n")


def test_a_48k_conversation_on_the_sd_card(sims, tmp_path: Path) -> None:
    dut = on_sd(sims, tmp_path, {5: BIG, 8: conversation(8, 1)})
    out = ok(host(dut, "list")).splitlines()
    assert out[0] == "/SD:/.agent/conversations: 2 of 8 slots used"
    target = tmp_path / "big.bin"
    ok(host(dut, "export", "5", "-o", str(target)), written(5, BIG, target))
    assert target.read_bytes() == BIG
    pages: list[tuple[int, int]] = []

    async def export() -> None:
        async with session(dut) as device:
            result = await device.export(5, lambda done, total: pages.append((done, total)))
            assert result.data == BIG

    asyncio.run(export())
    assert len(pages) == math.ceil(len(BIG) / 1024)
    assert pages[-1] == (len(BIG), len(BIG))


def test_list_with_a_title_typed_on_a_latin1_terminal(sims) -> None:
    """"café" typed on a Latin-1 terminal as the chat's first prompt: the device stores the
    title's bytes as they came (caf 0xE9) and answers them as UTF-8 with U+FFFD, so
    `agent-host list` shows every conversation (issue 12, item 4)."""
    script = Script([text_reply("responses", "Bonjour.", response_id="resp_1", usage=(5, 2)),
                     text_reply("responses", "Hi.", response_id="resp_2", usage=(5, 2))])
    with TestServer(script) as srv:
        dut = sims.start()
        configure(dut, srv.url(API_PATH["responses"]))
        for prompt in (b"caf\xe9", b"plain title"):
            term = ChatTerm(dut, 80, 24)
            term.open("agent")
            mark = len(dut.transcript)
            dut.write(prompt + b"\r")
            dut.read_until(b"working \x1b[0m", 30.0, start=mark)
            term.wait(term.idle, "the end of the request", 30.0)
            term.leave()
        srv.check()
    out = ok(host(dut, "list")).splitlines()
    assert out[0] == "/lfs/.agent/conversations: 2 of 3 slots used"
    assert [re.split(r"  +", line)[4] for line in out[2:]] == ["caf\ufffd", "plain title"]
    frames: list[bytes] = []

    async def raw() -> None:
        async with session(dut) as device:
            frames.append(await device.exchange(m.ConversationsRead(), "list"))

    asyncio.run(raw())
    body = cbor2.loads(frames[0][8:])  # strict: text strings must be UTF-8
    assert [e["title"] for e in body["list"]] == ["caf\ufffd", "plain title"]
    assert dut.stop() == 0
    stored = parse_conversation(read_file(sims.flash, f"{CONV_DIR}/conv1.bin"))
    assert stored.records[2] == (REC_TITLE, b"caf\xe9")


def test_forget(dut: SimDevice) -> None:
    defaults = pairs(ok(host(dut, "config")))
    for name, value in [("model", MODEL), ("user", "ada"), ("reasoning", "low")]:
        ok(host(dut, "config", name, value))
    assert ok(host(dut, "config", "key", env={"AGENT_KEY": KEYS[1]})) == "key set\n"
    result = host(dut, "forget")
    assert result.returncode == 2 and "give --yes" in result.stderr
    assert shell_value(dut, "model") == MODEL
    assert ok(host(dut, "forget", "--yes")) == \
        "every agent setting erased, the key included\n"
    assert pairs(ok(host(dut, "config"))) == defaults
    assert "key:       not set" in dut.exec_command("agent status")


# -- the key ----------------------------------------------------------------------------------
def run_on_a_terminal(argv: list[str], dialogue: list[tuple[bytes, bytes]],
                      timeout: float = 30.0) -> tuple[int, bytes]:
    """Run @argv with a pseudo terminal as its controlling terminal and stdio; for each
    (wait for, then type) of @dialogue, wait for the text and type the answer. Returns the
    exit status and everything the terminal showed."""
    master, slave = os.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("AGENT_KEY", "AGENT_PORT")}

    def take_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=environ,
                            start_new_session=True, preexec_fn=take_terminal)  # noqa: PLW1509
    os.close(slave)
    shown = bytearray()
    deadline = time.monotonic() + timeout

    def read_some(until: Callable[[], bool]) -> None:
        while not until() and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    return
                if not chunk:
                    return
                shown.extend(chunk)

    for wait_for, typed in dialogue:
        read_some(lambda w=wait_for: w in shown)  # type: ignore[misc]
        assert wait_for in shown, bytes(shown)
        os.write(master, typed)
    read_some(lambda: proc.poll() is not None and not select.select([master], [], [], 0.2)[0])
    code = proc.wait(timeout)
    os.close(master)
    return code, bytes(shown)


def test_the_key_is_never_readable(sims, tmp_path: Path) -> None:
    dut = on_sd(sims, tmp_path, {1: conversation(1, 3)})
    seen: list[str] = []

    def run(*args: str, **kw: object) -> str:
        result = host(dut, *args, **kw)  # type: ignore[arg-type]
        seen.extend([result.stdout, result.stderr])
        return ok(result)

    def read_everything(everything: bool = True) -> None:
        names = [n for n in SETTINGS if n != "key"]  # `config key` sets it
        reads = [["config"], ["status"]]
        if everything:
            reads += [*[["config", n] for n in names], ["tools"], ["list"],
                      ["export", "1", "--text"], ["export", "1", "-o", "-"]]
        for args in reads:
            run(*args)
        piped = host(dut, "shell", "--idle", "0.5",
                     stdin="agent status\ragent config endpoint\rhelp\r")
        seen.extend([piped.stdout, piped.stderr])
        assert "key:       set" in piped.stdout

    # 1. From stdin.
    assert run("config", "key", "--key-stdin", stdin=KEYS[0] + "\n") == "key set\n"
    read_everything(False)
    # 2. From the environment.
    assert run("config", "key", env={"AGENT_KEY": KEYS[1]}) == "key set\n"
    read_everything(False)
    # 3. At the hidden prompt of a terminal: nothing of it is echoed.
    code, shown = run_on_a_terminal([str(AGENT_HOST), "config", "key", "--port", dut.pty_path],
                                    [(b"API key (hidden): ", KEYS[2].encode() + b"\r")])
    assert code == 0 and shown.endswith(b"key set\r\n"), shown
    seen.append(shown.decode(errors="replace"))
    read_everything()
    # Raw answers of every command (and of a read of the key by name) hold no key either.
    frames: list[bytes] = []

    async def raw() -> None:
        async with session(dut) as device:
            # Among them a write without a value: its refusal carries no key either.
            for request in (m.ConfigReadAll(), m.ConfigRead(name="key"), m.StatusRead(),
                            m.ToolsRead(), m.ConversationsRead(), m.ExportRead(slot=1, off=0),
                            m.ConfigWrite(name="key"), m.ConfigRead(name="model")):
                frames.append(await device.exchange(request, "raw"))
            key_state = await device.config_get("key")
            assert key_state == "set"
            frames.append(await device.transport.read_serial())  # type: ignore[attr-defined]

    asyncio.run(raw())
    dut.drain()
    for key in KEYS:
        for text in seen:
            assert key not in text
        for frame in frames:
            assert key.encode() not in frame
        assert key.encode() not in dut.transcript
    # It is stored: the last one, in the settings file.
    dut.stop()
    assert KEYS[2].encode() in read_file(sims.flash, ".settings")


def test_key_clear(dut: SimDevice) -> None:
    ok(host(dut, "config", "key", "--key-stdin", stdin=KEYS[0]))
    assert pairs(ok(host(dut, "status")))["key"] == "set"
    assert ok(host(dut, "config", "key", "clear")) == "key cleared\n"
    assert pairs(ok(host(dut, "config")))["key"] == "not set"
    result = host(dut, "config", "key", KEYS[0])
    assert result.returncode == 2 and KEYS[0] not in result.stderr
    assert pairs(ok(host(dut, "config")))["key"] == "not set"


# -- shell ------------------------------------------------------------------------------------
def test_shell_piped(dut: SimDevice) -> None:
    out = ok(host(dut, "shell", "--idle", "0.5", stdin="agent config model\rhelp\r"))
    assert "agent config model\r\nmodel: (not set)\r\n" + PROMPT.decode() in out
    assert out.count(PROMPT.decode()) == 2


def test_shell_on_a_terminal(dut: SimDevice) -> None:
    code, shown = run_on_a_terminal(
        [str(AGENT_HOST), "shell", "--port", dut.pty_path],
        [(b"Ctrl-] leaves", b"agent config user\r"), (b"user: user\r\n" + PROMPT, b"\x1d")])
    assert code == 0, shown
    assert shown.startswith(b"connected to " + dut.pty_path.encode() + b"; Ctrl-] leaves")
    # The device's shell still answers.
    assert dut.exec_command("agent config user") == ["user: user"]


# -- SMP between console output ---------------------------------------------------------------
async def console_until(device: Device, marker: bytes, count: int = 1,
                        timeout: float = 20.0) -> bytes:
    """Console bytes (the transport's non-SMP stream) until @marker appeared @count times."""
    text = b""
    deadline = time.monotonic() + timeout
    while text.count(marker) < count:
        assert time.monotonic() < deadline, text[-500:]
        text += await device.transport.read_serial()  # type: ignore[attr-defined]
        await asyncio.sleep(0.01)
    return text


def test_smp_frames_between_console_output(dut: SimDevice) -> None:
    alone = dut.exec_command("man agent-tools")
    assert len("\r\n".join(alone)) > 2000

    async def interleave() -> None:
        async with session(dut) as device:
            # A frame in the middle of a typed line: the shell gets the whole line.
            dut.write(b"agent conf")
            assert await device.config_get("tools") == "confirm"
            dut.write(b"ig tools\r")
            text = await console_until(device, PROMPT)
            assert text == b"agent config tools\r\ntools: confirm\r\n" + PROMPT
            # Console output of 2.7 KB before each of 12 answers.
            expected = await device.tools()
            for _ in range(12):
                dut.write(b"man agent-tools\r")
                assert await device.tools() == expected
                assert (await device.status()).board == "host_sim"
            text = await console_until(device, PROMPT, 12)
            outputs = text.split(PROMPT)[:12]
            for out in outputs:
                lines = out.decode().split("\r\n")
                assert lines[0] == "man agent-tools"
                assert [x for x in lines[1:] if x] == alone

    asyncio.run(interleave())
    assert dut.exec_command("agent config tools") == ["tools: confirm"]


def test_smp_during_a_streaming_answer(dut: SimDevice) -> None:
    answer = "The quick brown fox jumps over the lazy dog, and then it does it again."
    reply = text_reply("responses", answer, pieces=8).with_faults(drip=True, drip_delay=0.001)
    with TestServer(Script([reply])) as srv:
        for command in (f"agent config endpoint {srv.url('/v1/responses')}",
                        f"agent config model {MODEL}", "agent config key sk-x"):
            dut.exec_command(command)

        async def manage() -> bytes:
            async with session(dut) as device:
                dut.write(b"agent ask hello\r")
                answers = 0
                text = b""
                while b"[Esc or Ctrl-X returns to the shell]" not in text:
                    assert (await device.status()).model == MODEL
                    answers += 1
                    text += await device.transport.read_serial()  # type: ignore[attr-defined]
                assert answers > 5  # the answers came while the reply streamed
                dut.write(b"\x1b")
                return text + await console_until(device, PROMPT)

        text = asyncio.run(manage())
        srv.check()
    assert answer.encode() in text


def test_management_while_the_chat_is_open(dut: SimDevice) -> None:
    for command in ("agent config user ada", f"agent config model {MODEL}",
                    "agent config endpoint http://127.0.0.1:9/v1/responses"):
        dut.exec_command(command)
    mark = len(dut.transcript)
    dut.write(b"agent\r")
    dut.read_until(b"ada> ", 10, start=mark)
    dut.drain(0.3)
    status = pairs(ok(host(dut, "status")))
    assert status["user"] == "ada"
    assert ok(host(dut, "config", "reasoning", "low")) == "reasoning set to low\n"
    # The chat is still there: Esc returns to the shell.
    mark = len(dut.transcript)
    dut.write(b"\x1b")
    dut.read_until(PROMPT, 10, start=mark)
    assert shell_value(dut, "reasoning") == "low"


# -- a disconnect or a hang in the middle of an export ---------------------------------------
@contextmanager
def after_pages(pages: int, action: Callable[[], None]) -> Iterator[None]:
    """The CLI's progress hook calls @action once the export has @pages pages."""
    original = device_cli.Output.transfer
    calls = 0

    @contextmanager
    def transfer(self: device_cli.Output, description: str) -> Iterator[Callable[[int, int],
                                                                                 None]]:
        def update(done: int, total: int) -> None:
            nonlocal calls
            calls += 1
            if calls == pages:
                action()
        yield update

    device_cli.Output.transfer = transfer  # type: ignore[method-assign]
    try:
        yield
    finally:
        device_cli.Output.transfer = original  # type: ignore[method-assign]


def test_the_simulator_killed_during_an_export(sims, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    dut = on_sd(sims, tmp_path, {5: BIG})
    target_dir = tmp_path / "out"
    target_dir.mkdir()
    target = target_dir / "big.bin"
    target.write_bytes(b"an older export")

    def kill() -> None:
        assert dut.proc is not None
        dut.proc.kill()
        dut.proc.wait()

    with after_pages(3, kill):
        code = cli.main(["export", "5", "-o", str(target), "--port", dut.pty_path])
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith(f"agent-host: export 5: connection to serial {dut.pty_path} lost ("), err
    assert len(err.splitlines()) == 1
    # The older file is kept, no temporary file is left.
    assert list(target_dir.iterdir()) == [target]
    assert target.read_bytes() == b"an older export"
    sims.devices.remove(dut)
    dut.stop()
    # The card is as it was: a new simulator exports the whole file.
    dut = sims.start([f"--sd={tmp_path / 'sd'}"])
    ok(host(dut, "export", "5", "-o", str(target)), written(5, BIG, target))
    assert target.read_bytes() == BIG


def test_the_simulator_hangs_during_an_export(sims, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    dut = on_sd(sims, tmp_path, {5: BIG})
    target = tmp_path / "big.bin"

    def hang() -> None:
        assert dut.proc is not None
        dut.proc.send_signal(signal.SIGSTOP)

    try:
        with after_pages(2, hang):
            code = cli.main(["export", "5", "-o", str(target), "--timeout", "1", "--port",
                             dut.pty_path])
    finally:
        assert dut.proc is not None
        dut.proc.send_signal(signal.SIGCONT)
    assert code == 4
    assert capsys.readouterr().err == (f"agent-host: export 5: no answer from serial "
                                       f"{dut.pty_path} within 1 s\n")
    assert not target.exists()
    # Once it runs again, a new export reads everything (the late answer is skipped).
    ok(host(dut, "export", "5", "-o", str(target)), written(5, BIG, target))
    assert target.read_bytes() == BIG


# -- MTU sweep --------------------------------------------------------------------------------
MTUS = [32, 40, 64, 100, 128, 200, 256, 512, 1024, 2048]


def test_mtu_sweep(sims, tmp_path: Path) -> None:
    small = conversation(2, 1)
    dut = on_sd(sims, tmp_path, {5: BIG, 2: small})
    long_endpoint = "https://example.com/" + "e" * 223 + "/responses"
    assert len(long_endpoint) == 253

    async def baseline() -> tuple[object, object, object]:
        async with session(dut) as device:
            return (await device.tools(), await device.conversations(),
                    (await device.status()).pools)

    tools, convs, pools = asyncio.run(baseline())

    async def sweep(mtu: int) -> list[str]:
        refused: list[str] = []
        async with session(dut, mtu=mtu) as device:
            assert device.transport.max_unencoded_size == mtu - 4
            assert await device.tools() == tools
            assert await device.conversations() == convs
            assert (await device.export(5)).data == BIG
            assert (await device.export(2)).data == small
            for name, value in [("user", f"u{mtu}"), ("user", "u" * 31),
                                ("model", "m" * 127), ("endpoint", long_endpoint)]:
                size = len(m.ConfigWrite(name=name, value=value).BYTES)
                try:
                    assert await device.config_set(name, value) == value
                except TransportError as err:
                    assert size > mtu - 4
                    assert str(err) == (f"config {name}: the request takes {size} bytes, "
                                        f"more than the {mtu - 4} bytes the transport carries "
                                        "(see --mtu)")
                    refused.append(name)
                    continue
                assert size <= mtu - 4
                assert await device.config_get(name) == value
            assert (await device.status()).pools == pools
        return refused

    refusals = {mtu: asyncio.run(sweep(mtu)) for mtu in MTUS}
    assert refusals[32] == ["user", "user", "model", "endpoint"]
    assert refusals[100] == ["model", "endpoint"]
    assert refusals[256] == ["endpoint"]
    assert refusals[512] == refusals[2048] == []
    # Through the console script at the smallest and the largest MTU.
    target = tmp_path / "b.bin"
    for mtu in ("32", "2048"):
        ok(host(dut, "export", "5", "-o", str(target), "--mtu", mtu), written(5, BIG, target))
        assert target.read_bytes() == BIG
        assert ok(host(dut, "tools", "--mtu", mtu)).startswith("tool policy: ")
    result = host(dut, "config", "model", "m" * 127, "--mtu", "100")
    assert result.returncode == 3 and "(see --mtu)" in result.stderr


def test_a_request_beyond_the_device_buffer(dut: SimDevice) -> None:
    async def beyond() -> None:
        # Claimed larger than the device's 2048 bytes: the device drops the frame unanswered.
        async with session(dut, mtu=4096, timeout=2.0) as device:
            with pytest.raises(DeviceTimeoutError, match="config user: no answer from serial"):
                await device.config_set("user", "u" * 2100)
            assert (await device.status()).user == "user"
        # Asked from the device: refused before it is sent.
        async with session(dut) as device:
            assert device.transport.max_unencoded_size == 2044
            with pytest.raises(TransportError, match="more than the 2044 bytes"):
                await device.config_set("user", "u" * 2100)

    asyncio.run(beyond())
