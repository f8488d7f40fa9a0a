"""`agent-host man install` and `man remove`: verified reference pages on the device's SD card.

A page installed here replaces the built-in page of its topic for `man TOPIC` and
firmware_reference only while it verifies: the page goes onto the card (a folder the host
can write: the card in a reader, or the simulator's --sd folder) and its SHA-256 onto the
device's own LittleFS over SMP (the agent group's `man` command). The card is untrusted; the
digest is not on it (docs/reference-format.md, "SD overrides").
"""

from __future__ import annotations

import argparse
import hashlib
import re
from pathlib import Path

from .errors import UsageError
from .mgmt.device import Device
from .ui import Output

PAGE_MAX = 8192
"""Bytes of an installed page at most (REFERENCE_OVERRIDE_MAX in reference_sd.h)."""
CONTRACT_MAX = 1024
"""Bytes of its contract at most (REFERENCE_CONTRACT_MAX)."""
MARKER = "## Contract"
TOPIC = re.compile(r"[a-z][a-z0-9-]{0,30}")
# C0 controls but the line feed, DEL and the C1 controls: refused, as the device refuses them.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def card_path(card: Path, topic: str) -> Path:
    """Where the device looks for TOPIC's page: /SD:/man/TOPIC.md."""
    return card / "man" / f"{topic}.md"


def page_text(source: bytes, name: str) -> tuple[str | None, bytes]:
    """The page to install from @source: a page of docs/reference/ (its front matter taken
    off; the topic named there is returned) or a page as the card holds it (body, the
    `## Contract` line, contract). Raises UsageError for what the device would refuse."""
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"man install: {name} is not UTF-8") from None
    topic = None
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end < 0:
            raise UsageError(f"man install: {name}: the front matter has no closing '---'")
        for line in text[4:end].splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "topic":
                topic = value.strip()
        text = text[end + 5:]
    if "{{" in text:
        raise UsageError(f"man install: {name} has {{{{CONFIG_...}}}} placeholders; the "
                         "device shows a page as it is, so write their values in")
    bad = _CONTROL.search(text)
    if bad is not None:
        raise UsageError(f"man install: {name} has the control character "
                         f"U+{ord(bad.group()):04X} (only line feeds are allowed)")
    lines = text.split("\n")
    if MARKER not in lines:
        raise UsageError(f"man install: {name} has no line '{MARKER}' between the body and "
                         "the contract")
    at = lines.index(MARKER)
    body = "\n".join(lines[:at]).strip("\n")
    contract = "\n".join(lines[at + 1:]).strip("\n")
    if not body or not contract:
        raise UsageError(f"man install: {name}: the body and the contract must both have text")
    if len(contract.encode()) > CONTRACT_MAX:
        raise UsageError(f"man install: {name}: the contract is {len(contract.encode())} "
                         f"bytes, more than {CONTRACT_MAX}")
    data = text.encode()
    if len(data) > PAGE_MAX:
        raise UsageError(f"man install: {name} is {len(data)} bytes, more than {PAGE_MAX}")
    return topic, data


def _topic(given: str | None, found: str | None, page: Path) -> str:
    topic = given or found or page.stem
    if not TOPIC.fullmatch(topic):
        raise UsageError(f"man: {topic!r} is not a topic (1 to 31 of a-z 0-9 '-', starting "
                         "with a letter)")
    return topic


def _write_page(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError as err:
        raise UsageError(f"man install: cannot write {path}: {err.strerror or err}") from None


async def install(device: Device, args: argparse.Namespace, out: Output) -> int:
    page = Path(args.page)
    try:
        source = page.read_bytes()
    except OSError as err:
        raise UsageError(f"man install: cannot read {page}: {err.strerror or err}") from None
    found, data = page_text(source, str(page))
    topic = _topic(args.topic, found, page)
    card = card_path(Path(args.card), topic)
    digest = hashlib.sha256(data).hexdigest()
    # The page first: if recording fails, the card holds a page without a digest, which the
    # device refuses; never a digest for a page that is not there yet.
    _write_page(card, data)
    await device.man_record(topic, digest)
    out.line(f"{topic}: {len(data)} bytes, sha256 {digest}; written to {card} and recorded "
             "on the device")
    return 0


async def remove(device: Device, args: argparse.Namespace, out: Output) -> int:
    topic = _topic(args.topic, None, Path(args.topic))
    await device.man_record(topic, None)
    if args.card:
        card_path(Path(args.card), topic).unlink(missing_ok=True)
    out.line(f"{topic}: digest forgotten; the device serves its built-in page")
    return 0
