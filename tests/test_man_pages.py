"""agent-host man install's checks of a page (host/agent_host/man_pages.py): what the device
would refuse is refused on the host first, with the bounds at N and N + 1."""

from __future__ import annotations

import re

import pytest
from agent_host.errors import UsageError
from agent_host.man_pages import CONTRACT_MAX, PAGE_MAX, card_path, page_text

PAGE = "# gpio - mine\n\nBody.\n\n## Contract\n\ngpio_read -> level\n"


def test_a_card_page_is_taken_as_it_is() -> None:
    assert page_text(PAGE.encode(), "p.md") == (None, PAGE.encode())


def test_a_repository_page_loses_its_front_matter() -> None:
    source = "---\ntopic: gpio\nsummary: s\nkeywords: [a]\nrequires: []\n---\n" + PAGE
    assert page_text(source.encode(), "p.md") == ("gpio", PAGE.encode())


@pytest.mark.parametrize(("source", "message"), [
    (b"\xff" + PAGE.encode(), "is not UTF-8"),
    (b"---\ntopic: gpio\n" + PAGE.encode(), "no closing '---'"),
    (PAGE.replace("Body.", "{{CONFIG_X}}").encode(), "placeholders"),
    (PAGE.replace("Body.", "tab\there").encode(), "control character U+0009"),
    (PAGE.replace("Body.", "\x1b[2J").encode(), "control character U+001B"),
    (PAGE.replace("Body.", "\u009b").encode(), "control character U+009B"),
    (PAGE.replace("\n", "\r\n").encode(), "control character U+000D"),
    (PAGE.replace("## Contract", "## contract").encode(), "no line '## Contract'"),
    (b"## Contract\nonly\n", "must both have text"),
])
def test_what_the_device_refuses_is_refused(source: bytes, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        page_text(source, "p.md")


def test_contract_bound() -> None:
    at = ("b\n## Contract\n" + "c" * CONTRACT_MAX).encode()
    assert page_text(at, "p.md")[1] == at
    with pytest.raises(UsageError, match=f"the contract is {CONTRACT_MAX + 1} bytes"):
        page_text(at + b"c", "p.md")


def test_size_bound() -> None:
    tail = "\n## Contract\nc\n"
    at = ("b" * (PAGE_MAX - len(tail)) + tail).encode()
    assert len(page_text(at, "p.md")[1]) == PAGE_MAX
    with pytest.raises(UsageError, match=f"is {PAGE_MAX + 1} bytes, more than {PAGE_MAX}"):
        page_text(b"b" + at, "p.md")


def test_card_path(tmp_path) -> None:
    assert card_path(tmp_path, "gpio") == tmp_path / "man" / "gpio.md"
