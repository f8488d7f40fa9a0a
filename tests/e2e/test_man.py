"""`man TOPIC` and `man -k WORD...` on the simulator's console: the reference pages built
from docs/reference/ for this configuration, and every error line; and the verified SD
overrides that `agent-host man install` puts on the simulator's card (docs/reference-format.md,
"SD overrides"): served when they verify, refused with a notice (and the built-in page
served) when a byte changed, when no digest is recorded, when larger than 8192 bytes."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agent_host.mgmt import Endpoint, open_device
from agent_host.testing.agent_tools import ask, configure
from agent_host.testing.sim_device import PROMPT, SimDevice
from agent_host.testserver import Script, TestServer
from agent_host.testserver.dialogue import text_reply, tool_call_reply

REPO_DIR = Path(__file__).resolve().parents[2]
PAGES_DIR = REPO_DIR / "docs" / "reference"
USAGE = "man: usage: man TOPIC | man -k WORD..."
LISTING = re.compile(r"^([a-z][a-z0-9-]*) - (.+)$")
MAN_RESULTS_MAX = 12  # CONFIG_AGENT_MAN_RESULTS_MAX, the spec's bound


def front_matter(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    end = lines.index("---", 1)
    return dict(line.split(": ", 1) for line in lines[1:end])


def built_options() -> set[str]:
    """The bool options set in the simulator's .config (its script runtimes vary by build)."""
    dotconfig = Path(os.environ.get("AGENT_SIM_BUILD_DIR", REPO_DIR / "build" / "sim-asan"))
    lines = (dotconfig / "generated" / ".config").read_text().splitlines()
    return {line.split("=", 1)[0] for line in lines if line.endswith("=y")}


def topics(built_only: bool = False) -> dict[str, str]:
    """topic -> summary of every page; with @built_only, of those the simulator keeps (it
    enables every tool family; the script pages follow its runtimes)."""
    pages = {}
    options = built_options() if built_only else set()
    for path in sorted(PAGES_DIR.glob("*.md")):
        fields = front_matter(path)
        requires = set(filter(None, fields["requires"].strip("[]").replace(" ", "").split(",")))
        if not built_only or requires <= options:
            pages[fields["topic"]] = fields["summary"]
    return pages


def test_man_k_lists_matching_pages(dut: SimDevice) -> None:
    lines = dut.exec_command("man -k storage")
    assert lines[0] == f"storage-tools - {topics()['storage-tools']}"
    assert 1 <= len(lines) <= MAN_RESULTS_MAX
    for line in lines:
        match = LISTING.match(line)
        assert match is not None, line
        assert topics()[match.group(1)] == match.group(2)


def test_man_k_ranks_and_keeps_at_most_twelve(dut: SimDevice) -> None:
    assert dut.exec_command("man -k agent config")[0].startswith("agent-config - ")
    assert dut.exec_command("man -k CA certificate")[0].startswith("tls - ")
    # Words found on nearly every page: still at most twelve lines.
    lines = dut.exec_command("man -k agent tools storage limits settings shell gpio jobs tls")
    assert len(lines) == min(MAN_RESULTS_MAX, len(topics()))
    assert all(LISTING.match(line) for line in lines)


def test_man_topic_prints_the_page(dut: SimDevice) -> None:
    lines = dut.exec_command("man gpio")
    assert lines[0] == "# gpio - inspecting pins"
    assert "## Contract" in lines
    contract = lines[lines.index("## Contract") + 1:]
    assert any("Never configures or claims a pin" in line for line in contract)
    # Placeholders carry this build's values.
    text = "\n".join(dut.exec_command("man man"))
    assert "{{" not in text
    assert "up to 12 lines" in text and "(at most 3)" in text


@pytest.mark.sim_only("expects every page of docs/reference/ (the simulator enables every tool family)")
def test_every_page_is_reachable(dut: SimDevice) -> None:
    for topic in topics(built_only=True):
        lines = dut.exec_command(f"man {topic}", timeout=10.0)
        assert lines[0].startswith(f"# {topic} - "), lines[:2]
        assert "## Contract" in lines


@pytest.mark.sim_only("reads the simulator's .config for its script runtimes")
def test_language_and_task_pages(dut: SimDevice) -> None:
    """A language and a task finds that language's task page first; `man TOPIC` shows its
    skeleton; a runtime left out has no page."""
    built = topics(built_only=True)
    for query, topic in (("lua file read", "lua-files"), ("python gpio", "python-gpio"),
                         ("python sensors", "python-sensors"), ("lua gpio", "lua-gpio")):
        first = dut.exec_command(f"man -k {query}")[0]
        if topic in built:
            assert first == f"{topic} - {built[topic]}", query
            lines = dut.exec_command(f"man {topic}")
            assert "Skeleton:" in lines[lines.index("## Contract"):], topic
        else:
            assert not first.startswith(topic.split("-")[0] + "-"), first
            assert dut.exec_command(f"man {topic}") == [
                f"man: no page for '{topic}'; try man -k {topic}"]


def skeleton_of(topic: str) -> str:
    text = next(p for p in PAGES_DIR.glob("*.md") if front_matter(p)["topic"] == topic)
    return text.read_text(encoding="utf-8").split("\nSkeleton:\n", 1)[1]


def run_script(dut: SimDevice, lang: str, target: str) -> str:
    """`agent script LANG TARGET`: what it printed, up to its status line included."""
    start = len(dut.transcript)
    dut.write(f"agent script {lang} {target}\r".encode())
    dut.read_until(b"[script]", timeout=20.0, start=start)
    dut.read_until(PROMPT, timeout=20.0, start=start + len(target))
    return bytes(dut.transcript[start:]).decode(errors="replace")


def console_word(code: str) -> str:
    return '"' + code.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.mark.sim_only("reads the simulator's .config for its script runtimes")
def test_every_skeleton_runs(dut: SimDevice) -> None:
    """The skeletons of the script pages are copyable: each runs to completion on the
    simulated board without printing an error."""
    built = topics(built_only=True)
    script_pages = [t for t in built if t.startswith(("lua-", "python-"))]
    assert "lua-device" in script_pages  # sim.conf builds Lua in
    for lang in ("lua", "python"):
        if f"{lang}-device" in built:
            setup = "device.write('notes.txt', 'first line\\n')"
            setup = f"import device; {setup}" if lang == "python" else setup
            assert "[script] completed" in run_script(dut, lang, "-c " + console_word(setup))
    for topic in script_pages:
        lang = topic.split("-")[0]
        code = skeleton_of(topic)
        if lang == "lua":  # one line: the console's command line has no line breaks
            out = run_script(dut, lang, "-c " + console_word(" ".join(code.split("\n"))))
        else:  # Python needs its lines: saved by a script, then run as a file
            save = f"import device; device.write('skeleton.py', {code!r})"
            assert "[script] completed" in run_script(dut, lang, "-c " + console_word(save))
            out = run_script(dut, lang, "/lfs/skeleton.py")
        printed = out.split("\n", 1)[1].split("[script]")[0]  # after the echoed command
        assert "[script] completed" in out, (topic, out)
        assert printed.strip() and "error" not in printed, (topic, out)


def test_errors_are_one_line(dut: SimDevice) -> None:
    assert dut.exec_command("man") == [USAGE]
    assert dut.exec_command("man nosuch") == ["man: no page for 'nosuch'; try man -k nosuch"]
    assert dut.exec_command("man -k") == ["man: -k needs a word; " + USAGE[len("man: "):]]
    assert dut.exec_command("man -k xyzzy plugh") == [
        "man: nothing appropriate for 'xyzzy plugh'"]
    assert dut.exec_command("man -k the to") == ["man: nothing appropriate for 'the to'"]
    assert dut.exec_command("man gpio tls") == [
        "man: one topic at a time; " + USAGE[len("man: "):]]
    assert dut.exec_command("man -x") == ["man: unknown option '-x'; " + USAGE[len("man: "):]]
    long_words = " ".join(["word"] * 40)
    assert dut.exec_command(f"man -k {long_words}") == [
        "man: the words are too long (at most 159 bytes)"]


def test_usage_and_help(dut: SimDevice) -> None:
    lines = dut.exec_command("man -h")
    assert lines[0] == USAGE[len("man: "):]
    assert any("man -k WORD..." in line for line in lines)
    assert any(line.startswith("  man ") for line in dut.exec_command("help"))
    # The shell is still fine afterwards.
    assert dut.exec_command("agent status")[0].startswith("version:")


# -- verified SD overrides --------------------------------------------------------------------
AGENT_HOST = Path(sys.executable).with_name("agent-host")
CARD_BODY = "# gpio - from the card\n\nThis page came from the SD card."
CARD_CONTRACT = "card contract: gpio_read {slot} -> level"
CARD_PAGE = f"{CARD_BODY}\n\n## Contract\n\n{CARD_CONTRACT}\n"
BUILTIN_FIRST_LINE = "# gpio - inspecting pins"
PAGE_MAX = 8192
SD_ONLY = pytest.mark.sim_only("the simulator's --sd folder, and agent-host over its pty")


def host(dut: SimDevice, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AGENT_KEY", "AGENT_PORT")}
    return subprocess.run([str(AGENT_HOST), *args, "--port", dut.pty_path], capture_output=True,
                          text=True, timeout=60, env=env, check=False)


def record(dut: SimDevice, topic: str, data: bytes) -> None:
    """Record the SHA-256 of @data for @topic over SMP, as agent-host does, without its checks."""
    async def go() -> None:
        async with open_device(Endpoint("serial", dut.pty_path), 10.0) as device:
            await device.man_record(topic, hashlib.sha256(data).hexdigest())

    asyncio.run(go())


def refused(topic: str, why: str) -> str:
    return f"man: /SD:/man/{topic}.md refused: {why}; the built-in page follows"


def card_with_page(sims, tmp_path: Path) -> tuple[SimDevice, Path]:
    card = tmp_path / "card"
    dut = sims.start([f"--sd={card}"])
    page = tmp_path / "gpio.md"
    page.write_text(CARD_PAGE)
    result = host(dut, "man", "install", str(page), "--card", str(card))
    digest = hashlib.sha256(CARD_PAGE.encode()).hexdigest()
    assert (result.returncode, result.stderr) == (0, ""), result
    assert result.stdout == (f"gpio: {len(CARD_PAGE)} bytes, sha256 {digest}; written to "
                             f"{card / 'man' / 'gpio.md'} and recorded on the device\n")
    assert (card / "man" / "gpio.md").read_text() == CARD_PAGE
    return dut, card


@SD_ONLY
def test_a_verified_page_is_served_and_a_tampered_one_refused(sims, tmp_path: Path) -> None:
    dut, card = card_with_page(sims, tmp_path)
    lines = dut.exec_command("man gpio")
    assert lines == [CARD_BODY.split("\n")[0], CARD_BODY.split("\n")[2], "## Contract",
                     CARD_CONTRACT]
    # Held in its PSRAM pool block while printed, given back right after.
    pools = [x.split() for x in dut.exec_command("agent status") if x.startswith("pool:")]
    assert ["pool:", "man", "1/1", "free", "(lowest", "0),", "8192", "B", "blocks,",
            "psram;", "peak", "8192", "B", "held,"] in [p[:14] for p in pools]
    # One byte changed on the card: refused with a notice, the built-in page served.
    path = card / "man" / "gpio.md"
    data = bytearray(path.read_bytes())
    data[len(CARD_BODY) + 5] ^= 0x20
    path.write_bytes(bytes(data))
    lines = dut.exec_command("man gpio")
    assert lines[0] == refused(
        "gpio", "its SHA-256 is not the one recorded when it was installed")
    assert lines[1] == BUILTIN_FIRST_LINE
    assert not any("card" in line for line in lines[1:])
    # Put back: served again; removed: the built-in page without a notice.
    path.write_text(CARD_PAGE)
    assert dut.exec_command("man gpio")[0] == CARD_BODY.split("\n")[0]
    result = host(dut, "man", "remove", "gpio", "--card", str(card))
    assert (result.returncode, result.stdout) == (
        0, "gpio: digest forgotten; the device serves its built-in page\n"), result
    assert not path.exists()
    assert dut.exec_command("man gpio")[0] == BUILTIN_FIRST_LINE


@SD_ONLY
def test_an_unlisted_page_is_refused(sims, tmp_path: Path) -> None:
    card = tmp_path / "card"
    (card / "man").mkdir(parents=True)
    (card / "man" / "tls.md").write_text(CARD_PAGE)
    dut = sims.start([f"--sd={card}"])
    lines = dut.exec_command("man tls")
    assert lines[0] == refused("tls", "no digest is recorded for it on the device")
    assert lines[1].startswith("# tls - ")
    # Without the card the page is not looked for: the built-in page, no notice.
    assert dut.stop() == 0
    assert sims.start().exec_command("man tls")[0].startswith("# tls - ")


def sized_page(size: int) -> bytes:
    """A page of exactly @size bytes."""
    tail = b"\n## Contract\nc\n"
    body = bytearray(b"b" * (size - len(tail)))
    body[79::80] = b"\n" * len(body[79::80])
    return bytes(body) + tail


@SD_ONLY
def test_page_size_bound(sims, tmp_path: Path) -> None:
    card = tmp_path / "card"
    dut = sims.start([f"--sd={card}"])
    page = tmp_path / "gpio.md"
    # N bytes: installed and served.
    page.write_bytes(sized_page(PAGE_MAX))
    result = host(dut, "man", "install", str(page), "--card", str(card))
    assert result.returncode == 0, result
    assert dut.exec_command("man gpio", timeout=15.0)[0] == "b" * 79
    # N + 1 bytes: agent-host refuses it; put on the card with its digest recorded anyway,
    # the device refuses it too.
    big = sized_page(PAGE_MAX + 1)
    page.write_bytes(big)
    result = host(dut, "man", "install", str(page), "--card", str(card))
    assert result.returncode != 0
    assert f"is {PAGE_MAX + 1} bytes, more than {PAGE_MAX}" in result.stderr
    (card / "man" / "gpio.md").write_bytes(big)
    record(dut, "gpio", big)
    lines = dut.exec_command("man gpio")
    assert lines[:2] == [refused("gpio", "it is larger than 8192 bytes"), BUILTIN_FIRST_LINE]


@SD_ONLY
def test_firmware_reference_gives_the_verified_contract(sims, tmp_path: Path) -> None:
    dut, card = card_with_page(sims, tmp_path)

    def contract_of_gpio() -> str:
        replies = [tool_call_reply("responses", "firmware_reference", {"query": "gpio pins"},
                                   "call_ref", response_id="resp_ref"),
                   text_reply("responses", "ok", response_id="resp_end")]
        with TestServer(Script(replies)) as srv:
            configure(dut, srv.url("/v1/responses"))
            run = ask(dut, "how do I read a pin?")
            reqs = srv.wait_for_requests(2)
        assert run.errors == [], run.text
        items = reqs[1].json["input"]
        result = json.loads(items[0]["output"])
        entry = next(e for e in result["results"] if e["topic"] == "gpio")
        return str(entry["contract"])

    assert contract_of_gpio() == CARD_CONTRACT
    path = card / "man" / "gpio.md"
    path.write_bytes(path.read_bytes().replace(b"card contract", b"card Contract"))
    builtin = contract_of_gpio()
    assert "card" not in builtin and "Never configures or claims a pin" in builtin
