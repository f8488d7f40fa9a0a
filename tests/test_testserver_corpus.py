"""The recorded stream corpus is the repository's own: package data with its provenance.

The corpus (host/agent_host/testserver/recorded/) is what the test server replays and what the
SSE and JSON tests read; `fixtures_dir()` finds it without anything outside the clone, and
$AGENT_OPENAI_FIXTURES names another folder instead.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agent_host.errors import TestServerError
from agent_host.testserver import fixture_files, fixtures_dir, packaged_fixtures_dir
from agent_host.testserver.fixtures import FIXTURES_ENV

REPO_DIR = Path(__file__).resolve().parents[1]
CORPUS = REPO_DIR / "host" / "agent_host" / "testserver" / "recorded"
LICENCES = {"Apache-2.0", "MIT"}
# A provenance row: | `chat/x.sse` | owner/repo | `source path` [#N] | `commit` | licence |
PROVENANCE_ROW = re.compile(
    r"^\| `((?:chat|responses)/[^`]+)` \| ([\w.-]+/[\w.-]+) \| `([^`]+)`(?: #\d+)? \| "
    r"`([0-9a-f]{40})` \| ([\w.-]+) \|$",
    flags=re.MULTILINE,
)


def corpus_files() -> list[str]:
    return sorted(
        p.relative_to(CORPUS).as_posix()
        for p in CORPUS.rglob("*")
        if p.is_file() and p.suffix in (".sse", ".jsonl", ".json")
    )


def test_the_corpus_is_in_the_repository() -> None:
    files = corpus_files()
    assert len(files) == 30
    assert sum(f.startswith("chat/") for f in files) == 17
    assert (CORPUS / "INDEX.md").is_file()


def test_every_file_has_its_provenance_in_the_index() -> None:
    """Source repository, source file, commit and licence, for each file and only real files."""
    index = (CORPUS / "INDEX.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.groups()[1:] for m in PROVENANCE_ROW.finditer(index)}
    assert sorted(rows) == corpus_files()
    for name, (repo, _source, _commit, licence) in rows.items():
        assert licence in LICENCES, name
        assert repo in index.split("## Repositories and licences", 1)[1], name
        # Every file is also described in the index's own tables.
        assert f"`{Path(name).name}`" in index.split("## chat/", 1)[1], name


def test_the_wheel_ships_every_file() -> None:
    """pyproject.toml's package data of agent_host.testserver matches the whole corpus."""
    text = (REPO_DIR / "pyproject.toml").read_text(encoding="utf-8")
    # tomllib is 3.11+ and the package supports 3.10: read the one array by pattern.
    table = text.split("[tool.setuptools.package-data]", 1)[1]
    array = re.search(r'^"agent_host\.testserver" = \[(.*?)\]', table,
                      flags=re.MULTILINE | re.DOTALL)
    assert array, "no package data for agent_host.testserver in pyproject.toml"
    globs = re.findall(r'"([^"]+)"', array.group(1))
    for name in [*corpus_files(), "INDEX.md"]:
        assert any(fnmatch.fnmatch(f"recorded/{name}", g) for g in globs), name


def test_the_packaged_corpus_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FIXTURES_ENV, raising=False)
    assert packaged_fixtures_dir() == CORPUS
    assert fixtures_dir() == CORPUS
    assert [p.relative_to(CORPUS).as_posix() for p in fixture_files()] == corpus_files()


def test_the_environment_names_another_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "chat").mkdir()
    (tmp_path / "responses").mkdir()
    (tmp_path / "chat" / "mine.sse").write_bytes(b"data: {}\n\n")
    monkeypatch.setenv(FIXTURES_ENV, str(tmp_path))
    assert fixtures_dir() == tmp_path
    assert fixture_files() == [tmp_path / "chat" / "mine.sse"]


def test_a_missing_environment_folder_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv(FIXTURES_ENV, str(missing))
    with pytest.raises(TestServerError) as info:
        fixtures_dir()
    message = str(info.value)
    assert f"{FIXTURES_ENV}={missing}: no such directory" in message
    assert str(CORPUS) in message  # what unsetting it would use


def test_serve_list_works_from_any_folder(tmp_path: Path) -> None:
    """`agent-host serve --list` outside the checkout, with the variable unset."""
    env = {k: v for k, v in os.environ.items() if k != FIXTURES_ENV}
    result = subprocess.run(
        [str(Path(sys.executable).with_name("agent-host")), "serve", "--list"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"fixtures ({CORPUS}):" in result.stdout
    assert "  chat/openai_gpt4o_text_usage.sse" in result.stdout
