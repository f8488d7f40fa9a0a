"""scripts/zephyr_lane.py without building anything: where it finds a tree, the west workspace
it makes over a tree that has none, what it says without a tree, and its summary of a Twister
run (from a made-up output folder shaped like Twister's)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

REPO_DIR = Path(__file__).resolve().parents[1]


def load_lane() -> ModuleType:
    spec = importlib.util.spec_from_file_location("zephyr_lane",
                                                  REPO_DIR / "scripts" / "zephyr_lane.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["zephyr_lane"] = module
    spec.loader.exec_module(module)
    return module


lane = load_lane()


def fake_tree(top: Path, modules: tuple[str, ...] = ("modules/lib/zcbor",)) -> Path:
    zephyr = top / "zephyr"
    zephyr.mkdir(parents=True)
    (zephyr / "VERSION").write_text("VERSION_MAJOR = 4\nVERSION_MINOR = 3\nPATCHLEVEL = 0\n")
    for path in modules:
        (top / path).mkdir(parents=True)
    return zephyr


def test_zephyr_base_wins(tmp_path: Path) -> None:
    zephyr = fake_tree(tmp_path / "t")
    tree = lane.find_tree({"ZEPHYR_BASE": str(zephyr)})
    assert tree is not None and tree.zephyr_base == zephyr.resolve() and tree.made
    assert "ZEPHYR_BASE" in tree.origin


def test_workspace_over_a_tree_without_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    zephyr = fake_tree(tmp_path / "t", ("modules/lib/zcbor", "modules/fs/littlefs"))
    ws = tmp_path / "ws"
    tree = lane.Tree(zephyr, ws, "test", made=True)
    lane.make_workspace(tree)
    lane.make_workspace(tree)  # again: the links are kept, not duplicated
    assert (ws / "zephyr").resolve() == zephyr
    assert (ws / "modules/lib/zcbor").resolve() == (tmp_path / "t/modules/lib/zcbor")
    assert not (ws / "modules/crypto/mbedtls").exists()  # not in the tree: not named
    manifest = yaml.safe_load((ws / "manifest" / "west.yml").read_text())["manifest"]
    names = [p["name"] for p in manifest["projects"]]
    assert names == ["zephyr", "zcbor", "littlefs"]
    assert manifest["projects"][0]["revision"] == "v4.3.0"
    assert manifest["projects"][0]["west-commands"] == "scripts/west-commands.yml"
    assert "base = zephyr" in (ws / ".west" / "config").read_text()


def test_no_tree_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(lane, "find_tree", lambda environ=None: None)
    assert lane.main([]) == 0
    assert "west init -l . && west update" in capsys.readouterr().out
    assert lane.main(["--require"]) == 2
    assert lane.main(["--find"]) == 2


def test_summary_per_scenario_and_pytest_file(tmp_path: Path) -> None:
    build = tmp_path / "native_sim_native_64" / "host" / "main" / "twister_tests" / "agent" / \
        "agent.e2e"
    build.mkdir(parents=True)
    (build / "build_info.yml").write_text("cmake: {}\n")
    (build / "report.xml").write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.e2e.test_ask" name="a"/>'
        '<testcase classname="tests.e2e.test_ask" name="b"><failure message="x"/></testcase>'
        '<testcase classname="tests.e2e.test_key" name="c"><skipped/></testcase>'
        "</testsuite></testsuites>")
    (build / "twister_harness.log").write_text(
        "=== 1 failed, 1 passed, 1 skipped, 9 deselected in 3.00s ===\n")
    (tmp_path / "twister.json").write_text(json.dumps({"testsuites": [
        {"name": "agent.e2e", "platform": "native_sim/native/64", "status": "failed",
         "execution_time": "3.0", "reason": "1/3 pytest scenario(s) failed"},
        {"name": "agent.e2e.qemu", "platform": "mps2/an385", "status": "error",
         "execution_time": "0", "reason": "Build failure"}]}))
    assert lane.twister_summary(tmp_path) == [
        "agent.e2e on native_sim/native/64: failed in 3 s (1/3 pytest scenario(s) failed)",
        "  test_ask: 1 failed, 1 passed",
        "  test_key: 1 skipped",
        "  pytest: 1 failed, 1 passed, 1 skipped, 9 deselected in 3.00s",
        "agent.e2e.qemu on mps2/an385: error in 0 s (Build failure)",
        "  (no build folder)",
    ]


def test_image_size_from_the_linker_report(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("Memory region         Used Size  Region Size  %age Used\n"
                   "           FLASH:      243380 B         4 MB      5.80%\n"
                   "             RAM:      896408 B         4 MB     21.37%\n")
    assert lane.image_size(tmp_path, log) == "FLASH 243380 B, RAM 896408 B"


def test_stack_and_tls_heap_summary(tmp_path: Path) -> None:
    (tmp_path / "stacks-mps2_an385-stream.json").write_text(
        '{"agent worker": {"size": 16384, "used": 4048}, "shell_uart": {"size": 8192, '
        '"used": 2648}}\n')
    (tmp_path / "stacks-native_sim_native_64-tls.json").write_text(
        '{"agent worker": {"size": 16384, "used": 9000}}\n')
    (tmp_path / "tls-heap-native_sim_native_64.json").write_text(
        '{"blocks": 210, "bound": 78400, "header": 64, "now": 0, "now_blocks": 0, '
        '"peak": 64960, "size": 98304}\n')
    assert lane.stack_summary(tmp_path) == [
        "stacks on mps2_an385-stream: agent worker 4048/16384, shell_uart 2648/8192",
        "stacks on native_sim_native_64-tls: agent worker 9000/16384",
        ("Mbed TLS heap on native_sim_native_64: peak 64960 B in 210 blocks, with their 64 B "
         "headers 78400 of 98304 B"),
    ]


def test_twister_command_runs_only_the_scenarios_asked(tmp_path: Path) -> None:
    tree = lane.Tree(tmp_path / "zephyr", tmp_path, "test")
    every = lane.twister_command(tree, tmp_path / "out")
    assert "-s" not in every
    only = lane.twister_command(tree, tmp_path / "out", ["agent.e2e.tls", "agent.e2e.qemu"])
    assert only[: len(every)] == every
    assert only[len(every):] == ["-s", "agent.e2e.tls", "-s", "agent.e2e.qemu"]
