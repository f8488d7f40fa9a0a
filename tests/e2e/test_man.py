"""`man TOPIC` and `man -k WORD...` on the simulator's console: the reference pages built
from docs/reference/ for this configuration, and every error line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from agent_host.testing.sim_device import SimDevice

REPO_DIR = Path(__file__).resolve().parents[2]
PAGES_DIR = REPO_DIR / "docs" / "reference"
USAGE = "man: usage: man TOPIC | man -k WORD..."
LISTING = re.compile(r"^([a-z][a-z0-9-]*) - (.+)$")
MAN_RESULTS_MAX = 12  # CONFIG_AGENT_MAN_RESULTS_MAX, the spec's bound


def front_matter(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    end = lines.index("---", 1)
    return dict(line.split(": ", 1) for line in lines[1:end])


def topics() -> dict[str, str]:
    """topic -> summary of every page (the simulator enables every tool family)."""
    pages = {}
    for path in sorted(PAGES_DIR.glob("*.md")):
        fields = front_matter(path)
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
    for topic in topics():
        lines = dut.exec_command(f"man {topic}", timeout=10.0)
        assert lines[0].startswith(f"# {topic} - "), lines[:2]
        assert "## Contract" in lines


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
