"""A module directory read on the host for `import` (docs/modules.md, "The module directory",
"Over the management group").

The text sent is the manifest file's bytes followed by the body file's bytes; a skill that
is SKILL.md alone sends an empty manifest and SKILL.md as the body. The host reads only
what it needs to send: the module's name and kind for the head and the name of the body
file (role key `overlay`, default overlay.txt; skill key `body`, default SKILL.md; tool key
`entry`, required). Everything else is the device's to check: it validates the whole text
and refuses with the same reason as its console's `agent import`. Nothing is executed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

MANIFEST_FILE = "module.manifest"
SKILL_FILE = "SKILL.md"
KINDS = ("role", "skill", "tool")
BODY_KEYS: dict[str, tuple[str, str | None]] = {
    "role": ("overlay", "overlay.txt"),
    "skill": ("body", SKILL_FILE),
    "tool": ("entry", None),
}
"""The key naming each kind's body file, and its default (None: the key is required)."""

_FILE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


class ModuleDirError(UsageError):
    """The directory cannot be sent: no manifest and no SKILL.md, a body file missing or
    outside the directory, or no kind to find it by (exit 2, nothing sent)."""


@dataclass(frozen=True)
class ModuleText:
    """What `import` sends: the head's name and kind, and the text's two parts."""

    name: str
    kind: str
    manifest: bytes
    body: bytes
    body_file: str

    @property
    def text(self) -> bytes:
        return self.manifest + self.body

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text).hexdigest()


def _keys(text: bytes) -> dict[str, str]:
    """The first value of each `key: value` line (LF or CRLF; blank and # lines skipped)."""
    keys: dict[str, str] = {}
    for raw in text.split(b"\n"):
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line.strip(b" \t") or line.startswith(b"#") or b":" not in line:
            continue
        key, value = line.split(b":", 1)
        name = key.decode("utf-8", "replace")
        keys.setdefault(name, value.strip(b" \t").decode("utf-8", "replace"))
    return keys


def _front_matter(text: bytes) -> bytes:
    """The lines between SKILL.md's opening and closing `---` lines (b"" without them)."""
    lines = text.split(b"\n")
    if not lines or lines[0].rstrip(b"\r") != b"---":
        return b""
    for end in range(1, len(lines)):
        if lines[end].rstrip(b"\r") == b"---":
            return b"\n".join(lines[1:end])
    return b""


def _read(path: Path, shown: str) -> bytes:
    if not path.is_file():
        raise ModuleDirError(f"{shown}: not a regular file")
    try:
        return path.read_bytes()
    except OSError as err:
        raise ModuleDirError(f"{shown}: cannot read: {err.strerror or err}") from None


def read_module(directory: Path) -> ModuleText:
    """Read the module directory @directory: its module.manifest and the body file the
    manifest names, or its SKILL.md alone. Raises ModuleDirError when it cannot be sent."""
    shown = str(directory)
    if not directory.is_dir():
        raise ModuleDirError(f"{shown}: not a directory" if directory.exists()
                             else f"{shown}: no such directory")
    manifest_path = directory / MANIFEST_FILE
    if not manifest_path.exists() and not manifest_path.is_symlink():
        skill = directory / SKILL_FILE
        if not skill.exists():
            raise ModuleDirError(f"{shown}: no {MANIFEST_FILE} and no {SKILL_FILE}")
        body = _read(skill, f"{shown}/{SKILL_FILE}")
        # The header names the module; without a name the device says what is wrong.
        name = _keys(_front_matter(body)).get("name") or directory.resolve().name
        return ModuleText(name, "skill", b"", body, SKILL_FILE)
    manifest = _read(manifest_path, f"{shown}/{MANIFEST_FILE}")
    keys = _keys(manifest)
    where = f"{shown}/{MANIFEST_FILE}"
    kind = keys.get("kind")
    if kind is None:
        raise ModuleDirError(f'{where}: missing key "kind"')
    if kind not in KINDS:
        raise ModuleDirError(f'{where}: kind: "{kind}" is not role, skill or tool')
    key, default = BODY_KEYS[kind]
    body_file = keys.get(key) or default
    if body_file is None:
        raise ModuleDirError(f'{where}: missing key "{key}"')
    if body_file in (".", "..") or not set(body_file) <= _FILE_CHARS:
        # Only a file of the module's own directory is ever read.
        raise ModuleDirError(f'{where}: {key}: "{body_file}" is not a file name')
    body_path = directory / body_file
    if not body_path.exists():
        raise ModuleDirError(f"{shown}/{body_file}: missing (named by the manifest)")
    body = _read(body_path, f"{shown}/{body_file}")
    name = keys.get("name") or directory.resolve().name
    return ModuleText(name, kind, manifest, body, body_file)
