"""scripts/fetch_littlefs.py, fetch_zcbor.py, fetch_lua.py and fetch_micropython.py over
scripts/pypi_sources.py.

No network: each script's configuration runs against a tiny archive made here with the
member layout of the real one (the littlefs-python sdist, the zcbor wheel), its SHA-256
injected in place of the pin, and pip replaced by a copy where the download is tested.
Checked: what is extracted and what is not, the stamp, the checkouts the environment
names, the errors and their exit code, and the directory printed as the last stdout line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import io
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO_DIR = Path(__file__).resolve().parents[1]
SCRIPTS_DIR = REPO_DIR / "scripts"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


LITTLEFS = _load("fetch_littlefs", SCRIPTS_DIR / "fetch_littlefs.py")
ZCBOR = _load("fetch_zcbor", SCRIPTS_DIR / "fetch_zcbor.py")
LUA = _load("fetch_lua", SCRIPTS_DIR / "fetch_lua.py")
MICROPYTHON = _load("fetch_micropython", SCRIPTS_DIR / "fetch_micropython.py")
PYPI = LITTLEFS.pypi_sources  # the module both scripts import

# Members of the fake littlefs-python sdist: what is taken, below the destination.
LITTLEFS_TAKEN = {
    "littlefs_python-0.19.0/littlefs/lfs.c": "lfs.c",
    "littlefs_python-0.19.0/littlefs/lfs.h": "lfs.h",
    "littlefs_python-0.19.0/littlefs/lfs_util.c": "lfs_util.c",
    "littlefs_python-0.19.0/littlefs/lfs_util.h": "lfs_util.h",
    "littlefs_python-0.19.0/littlefs/LICENSE.md": "LICENSE.md",
    "littlefs_python-0.19.0/littlefs/bd/lfs_emubd.c": "bd/lfs_emubd.c",
    "littlefs_python-0.19.0/littlefs/bd/lfs_emubd.h": "bd/lfs_emubd.h",
}
LITTLEFS_SKIPPED = (
    "littlefs_python-0.19.0/setup.py",
    "littlefs_python-0.19.0/littlefs/Makefile",
    "littlefs_python-0.19.0/littlefs/tests/test_dirs.toml",
    "littlefs_python-0.19.0/littlefs/scripts/lfs_tool.c",
    "littlefs_python-0.19.0/littlefs/../lfs_escape.c",
    "littlefs_python-0.19.0/src/littlefs/lfs.pyx",
)

# Members of the fake zcbor wheel: what is taken, below the destination.
ZCBOR_TAKEN = {
    "zcbor/src/zcbor_common.c": "src/zcbor_common.c",
    "zcbor/src/zcbor_decode.c": "src/zcbor_decode.c",
    "zcbor/src/zcbor_encode.c": "src/zcbor_encode.c",
    "zcbor/include/zcbor_common.h": "include/zcbor_common.h",
    "zcbor/include/zcbor_decode.h": "include/zcbor_decode.h",
    "zcbor-0.9.1.dist-info/LICENSE": "LICENSE",
}
ZCBOR_SKIPPED = (
    "zcbor/zcbor.py",
    "zcbor/src/README.md",
    "zcbor/include/../escape.h",
    "zcbor-0.9.1.dist-info/METADATA",
    "zcbor/prelude.cddl",
)

# Members of the fake lupa sdist: the Lua core and libraries are taken, flat.
LUA_TAKEN = {f"lupa-2.8/third-party/lua54/{name}": name for name in (
    "lapi.c", "lua.h", "luaconf.h", "lvm.c", "lstrlib.c", "linit.c", "llimits.h", "lualib.h")}
LUA_SKIPPED = (
    "lupa-2.8/third-party/lua54/lua.c",  # the stand-alone interpreter
    "lupa-2.8/third-party/lua54/onelua.c",
    "lupa-2.8/third-party/lua54/ltests.c",
    "lupa-2.8/third-party/lua54/ltests.h",
    "lupa-2.8/third-party/lua54/makefile",
    "lupa-2.8/third-party/lua54/README.md",
    "lupa-2.8/third-party/lua54/testes/all.lua",
    "lupa-2.8/third-party/lua54/testes/libs/lib1.c",
    "lupa-2.8/third-party/lua52/lapi.c",
    "lupa-2.8/third-party/luajit21/src/lj_api.c",
    "lupa-2.8/lupa/_lupa.pyx",
    "lupa-2.8/third-party/lua54/../lescape.c",
)

# Members of the fake mpy-cross-v6-3 sdist: py/, three shared/ folders and one extmod header,
# with their paths below micropython/.
MPY = "mpy_cross_v6_3-1.1.1/micropython"
MICROPYTHON_TAKEN = {f"{MPY}/{name}": name for name in (
    "py/vm.c", "py/mpconfig.h", "py/makeqstrdefs.py", "py/makeqstrdata.py",
    "py/makeversionhdr.py", "py/py.mk", "shared/runtime/pyexec.c",
    "shared/readline/readline.c", "shared/timeutils/timeutils.h", "extmod/modplatform.h")}
MICROPYTHON_SKIPPED = (
    f"{MPY}/mpy-cross/main.c",
    f"{MPY}/mpy-cross/mpy_cross/__init__.py",
    f"{MPY}/shared/tinyusb/mp_usbd.c",
    f"{MPY}/shared/netutils/dhcpserver.c",
    f"{MPY}/shared/runtime/sub/deeper.c",
    f"{MPY}/extmod/modplatform.c",
    f"{MPY}/tools/mpremote/LICENSE",
    f"{MPY}/docs/conf.py",
    f"{MPY}/py/../escape.c",
    "mpy_cross_v6_3-1.1.1/PKG-INFO",
)


def _content(name: str) -> bytes:
    return f"/* {name} */\n".encode()


def make_sdist(path: Path, members: dict[str, str], skipped: tuple[str, ...]) -> Path:
    """A tar.gz with these files, a directory entry and a link that must not be followed."""
    with tarfile.open(path, "w:gz") as archive:
        directory = tarfile.TarInfo("littlefs_python-0.19.0/littlefs/bd")
        directory.type = tarfile.DIRTYPE
        archive.addfile(directory)
        for name in (*members, *skipped):
            data = _content(name)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("littlefs_python-0.19.0/littlefs/lfs_link.c")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        archive.addfile(link)
    return path


def make_wheel(path: Path, members: dict[str, str], skipped: tuple[str, ...]) -> Path:
    """A zip with these files and a directory entry."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("zcbor/src/", b"")
        for name in (*members, *skipped):
            archive.writestr(name, _content(name))
    return path


@dataclasses.dataclass(frozen=True)
class Case:
    """One script and the fake archive of its layout."""

    script: ModuleType
    option: str
    make: Callable[[Path, dict[str, str], tuple[str, ...]], Path]
    archive_name: str
    taken: dict[str, str]
    skipped: tuple[str, ...]
    env_var: str
    west_module: str
    pip_flag: str
    requirement: str
    essential: str  # a member whose absence makes the archive incomplete

    @property
    def tool(self) -> str:
        return str(self.script.SOURCE.tool)

    def archive(self, tmp_path: Path, drop: str | None = None) -> Path:
        members = {k: v for k, v in self.taken.items() if k != drop}
        return self.make(tmp_path / self.archive_name, members, self.skipped)


CASES = [
    Case(LITTLEFS, "--sdist", make_sdist, "littlefs_python-0.19.0.tar.gz",
         LITTLEFS_TAKEN, LITTLEFS_SKIPPED, "LITTLEFS_DIR", "fs/littlefs",
         "--no-binary", "littlefs-python==0.19.0",
         "littlefs_python-0.19.0/littlefs/bd/lfs_emubd.c"),
    Case(ZCBOR, "--wheel", make_wheel, "zcbor-0.9.1-py3-none-any.whl",
         ZCBOR_TAKEN, ZCBOR_SKIPPED, "ZCBOR_DIR", "lib/zcbor",
         "--only-binary", "zcbor==0.9.1",
         "zcbor/src/zcbor_encode.c"),
    Case(LUA, "--sdist", make_sdist, "lupa-2.8.tar.gz",
         LUA_TAKEN, LUA_SKIPPED, "LUA_DIR", "lib/lua",
         "--no-binary", "lupa==2.8",
         "lupa-2.8/third-party/lua54/lvm.c"),
    Case(MICROPYTHON, "--sdist", make_sdist, "mpy_cross_v6_3-1.1.1.tar.gz",
         MICROPYTHON_TAKEN, MICROPYTHON_SKIPPED, "MICROPYTHON_DIR", "lib/micropython",
         "--no-binary", "mpy-cross-v6-3==1.1.1",
         f"{MPY}/py/makeqstrdata.py"),
]


@pytest.fixture(params=CASES, ids=["littlefs", "zcbor", "lua", "micropython"])
def case(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Case:
    for name in ("LITTLEFS_DIR", "ZCBOR_DIR", "LUA_DIR", "MICROPYTHON_DIR", "ZEPHYR_BASE"):
        monkeypatch.delenv(name, raising=False)
    result: Case = request.param
    return result


def pin(monkeypatch: pytest.MonkeyPatch, case: Case, archive: Path) -> None:
    """Pin the script to the SHA-256 of the archive made here."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    monkeypatch.setattr(case.script, "SOURCE",
                        dataclasses.replace(case.script.SOURCE, sha256=digest))


def run(case: Case, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = case.script.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def files_below(directory: Path) -> set[str]:
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}


def test_extracts_the_wanted_members_and_stamps(
        case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    archive = case.archive(tmp_path)
    pin(monkeypatch, case, archive)
    dest = tmp_path / "dest"
    rc, out, err = run(case, capsys, "--dest", str(dest), case.option, str(archive))
    assert rc == 0, err
    assert out.splitlines()[-1] == str(dest.resolve())
    stamp = case.script.SOURCE.stamp_name
    assert files_below(dest) == {*case.taken.values(), stamp}
    for member, rel in case.taken.items():
        assert (dest / rel).read_bytes() == _content(member)
    assert (dest / stamp).read_text(encoding="utf-8") == case.script.SOURCE.version + "\n"
    assert err == f"{case.tool}: extracted {len(case.taken)} files into {dest.resolve()}\n"
    assert not (tmp_path / "lfs_escape.c").exists() and not (dest / "escape.h").exists()

    # A second run keeps the stamped extraction and never looks at the archive.
    rc, out, err = run(case, capsys, "--dest", str(dest), case.option, str(tmp_path / "none"))
    assert (rc, out, err) == (0, f"{dest.resolve()}\n", "")

    # A stamp of another version makes it extract again.
    (dest / stamp).write_text("0.0.1\n", encoding="utf-8")
    rc, out, err = run(case, capsys, "--dest", str(dest), case.option, str(archive))
    assert rc == 0 and "extracted" in err
    assert (dest / stamp).read_text(encoding="utf-8") == case.script.SOURCE.version + "\n"


def test_downloads_through_pip(
        case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    archive = case.archive(tmp_path)
    pin(monkeypatch, case, archive)
    commands: list[list[str]] = []

    def fake_run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        commands.append(command)
        assert kwargs == {"stdout": sys.stderr, "check": False}
        shutil.copy(archive, command[command.index("-d") + 1])
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(PYPI.subprocess, "run", fake_run)
    dest = tmp_path / "dest"
    rc, out, err = run(case, capsys, "--dest", str(dest))
    assert rc == 0, err
    assert out == f"{dest.resolve()}\n"
    [command] = commands
    assert command[:5] == [sys.executable, "-m", "pip", "download", "--no-deps"]
    # The binary rule names the pinned project only, so build requirements come as wheels.
    assert command[5:8] == [case.pip_flag, case.requirement.split("==")[0], case.requirement]
    assert command[8] == "-d" and Path(command[9]).name.startswith(case.tool + "_")
    assert not Path(command[9]).exists()  # the download directory is removed
    assert err.startswith(f"{case.tool}: downloading {case.archive_name}\n")
    assert files_below(dest) >= set(case.taken.values())


@pytest.mark.parametrize(("returncode", "produce", "message"), [
    (1, False, f"pip download under {sys.executable} failed with exit code 1"),
    (0, False, "pip did not produce "),
])
def test_pip_failures(
        case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], returncode: int, produce: bool,
        message: str) -> None:
    def fake_run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        return subprocess.CompletedProcess(command, returncode)

    monkeypatch.setattr(PYPI.subprocess, "run", fake_run)
    rc, out, err = run(case, capsys, "--dest", str(tmp_path / "dest"))
    assert (rc, out) == (1, "")
    assert f"{case.tool}: error: {message}" in err


def test_refuses_an_archive_of_another_digest(
        case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = case.archive(tmp_path)  # not the pinned archive: the real pin refuses it
    actual = hashlib.sha256(archive.read_bytes()).hexdigest()
    dest = tmp_path / "dest"
    rc, out, err = run(case, capsys, "--dest", str(dest), case.option, str(archive))
    assert (rc, out) == (1, "")
    assert err == (f"{case.tool}: error: {archive}: sha256 {actual}, "
                   f"expected {case.script.SOURCE.sha256}\n")
    assert not dest.exists()


def test_refuses_an_incomplete_archive(
        case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    archive = case.archive(tmp_path, drop=case.essential)
    pin(monkeypatch, case, archive)
    dest = tmp_path / "dest"
    rc, out, err = run(case, capsys, "--dest", str(dest), case.option, str(archive))
    assert (rc, out) == (1, "")
    label = case.script.SOURCE.label
    assert err == (f"{case.tool}: error: {case.archive_name} does not contain the expected "
                   f"{label} sources\n")
    assert not (dest / case.script.SOURCE.stamp_name).exists()


def test_refuses_a_corrupt_archive(
        case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / case.archive_name
    archive.write_bytes(b"not an archive")
    pin(monkeypatch, case, archive)
    rc, out, err = run(case, capsys, "--dest", str(tmp_path / "dest"), case.option, str(archive))
    assert (rc, out) == (1, "")
    assert err.startswith(f"{case.tool}: error: ")


def test_uses_the_checkouts_the_environment_names(
        case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    archive = case.archive(tmp_path)
    pin(monkeypatch, case, archive)
    checkout = tmp_path / "checkout"
    assert run(case, capsys, "--dest", str(checkout), case.option, str(archive))[0] == 0
    label = case.script.SOURCE.label
    unused = tmp_path / "unused"

    # A west workspace's module.
    workspace = tmp_path / "ws"
    shutil.copytree(checkout, workspace / "modules" / case.west_module)
    (workspace / "zephyr").mkdir()
    monkeypatch.setenv("ZEPHYR_BASE", str(workspace / "zephyr"))
    module = (workspace / "modules" / case.west_module).resolve()
    rc, out, err = run(case, capsys, "--dest", str(unused))
    assert (rc, out, err) == (0, f"{module}\n", f"{case.tool}: using existing {label} at {module}\n")

    # The environment variable comes first.
    monkeypatch.setenv(case.env_var, str(checkout))
    rc, out, err = run(case, capsys, "--dest", str(unused))
    assert (rc, out) == (0, f"{checkout.resolve()}\n")
    assert not unused.exists()

    # The variable naming a directory without the sources is an error, not a download.
    monkeypatch.setenv(case.env_var, str(tmp_path))
    rc, out, err = run(case, capsys, "--dest", str(unused))
    assert (rc, out) == (1, "")
    assert err.startswith(f"{case.tool}: error: {case.env_var}={tmp_path} has no ")

    # A workspace without the module is passed over.
    monkeypatch.delenv(case.env_var)
    monkeypatch.setenv("ZEPHYR_BASE", str(tmp_path / "nowhere" / "zephyr"))
    rc, out, err = run(case, capsys, "--dest", str(checkout))
    assert (rc, out, err) == (0, f"{checkout.resolve()}\n", "")


def test_runs_as_a_script(case: Case, tmp_path: Path) -> None:
    """Run directly, as CMake does, from another directory: the shared module is found."""
    script = SCRIPTS_DIR / f"{case.tool}.py"
    env = {"PATH": "/usr/bin:/bin"}
    help_run = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, check=False)
    assert help_run.returncode == 0, help_run.stderr
    assert f"[--dest DEST] [{case.option} {case.option[2:].upper()}]" in help_run.stdout
    archive = case.archive(tmp_path)
    refused = subprocess.run(
        [sys.executable, str(script), "--dest", str(tmp_path / "dest"), case.option,
         str(archive)], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.startswith(f"{case.tool}: error: {archive}: sha256 ")
