"""The Cortex-M33 footprint and stack report (scripts/cm33_footprint.py, docs/footprint.md).

The core is cross-compiled and linked once per session (a few seconds on two cores); the other
runs report on that image again (--reuse) with budgets or the indirect-call table changed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "cm33_footprint.py"
CM33 = REPO / "tests" / "cm33"
BUDGETS = json.loads((CM33 / "budgets.json").read_text())["budgets"]


def run(build: Path, *args: str, reuse: bool = True) -> tuple[subprocess.CompletedProcess[str],
                                                            dict[str, Any]]:
    out = build / f"report-{uuid.uuid4().hex}.json"
    cmd = [sys.executable, str(SCRIPT), "--build-dir", str(build / "cm33"), "--json", str(out),
           *(["--reuse"] if reuse else []), *args]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300,
                          check=False)
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc, report


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str],
                                                              dict[str, Any]]:
    """One full build and report, with the repository's budgets and table."""
    build = tmp_path_factory.mktemp("cm33")
    proc, report = run(build, reuse=False)
    assert report, proc.stdout + proc.stderr
    return build, proc, report


def test_report_runs_and_every_budget_holds(built: tuple[Path, Any, dict[str, Any]]) -> None:
    _, proc, report = built
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["failures"] == []
    for name, spec in BUDGETS.items():
        assert 0 < report["figures"][name] <= spec["bytes"], name
    # Every part the report names was measured, and the budgeted flash is their sum.
    parts = ("core", "tools", "modules", "script", "reference pages", "packed texts",
             "port (pools)")
    assert all(report["flash"][p] > 0 for p in parts)
    assert report["figures"]["flash"] == sum(report["flash"][p] for p in parts)
    assert report["figures"]["flash_linked"] == sum(report["flash"].values())
    # Issue 16's "core + tools" (agent_init() alone, linked in all) is a narrower link.
    assert 0 < report["figures"]["flash_core_tools"] < report["figures"]["flash_linked"]
    assert "core + tools" in proc.stdout
    for heading in ("flash (text + rodata + data)", "static RAM", "top 15 flash symbols",
                    "top 15 internal RAM symbols", "top 15 PSRAM symbols",
                    "worst stack chain per thread entry"):
        assert heading in proc.stdout


def test_psram_buffers_and_pools_are_reported_apart(built: tuple[Path, Any, dict[str, Any]]
                                                    ) -> None:
    """AGENT_PSRAM_ATTR buffers land in .ext_ram.bss; the pools' buffers are counted apart."""
    _, _, report = built
    ram = report["ram"]
    assert ram["psram"] > 0 and ram["psram pools"] > 0
    # The provider's stream and request-body pools are PSRAM-preferred (provider.c).
    assert {"stream_buf", "body_buf"} <= set(report["pools"])
    assert ram["psram pools"] + ram["internal pools"] == sum(report["pools"].values())
    assert report["figures"]["ram_all_internal"] == sum(ram.values())


def test_every_thread_has_a_chain_from_its_entries(built: tuple[Path, Any, dict[str, Any]]
                                                   ) -> None:
    _, _, report = built
    threads = ("main", "shell", "sysworkq", "smp", "worker", "script")
    assert set(report["chains"]) == set(threads)
    for name in threads:
        chain = report["chains"][name]
        assert chain["bytes"] == sum(size for _, size in chain["path"]), name
    # The request worker reaches the provider's stream parser through the table's callbacks.
    worker = [fn for fn, _ in report["chains"]["worker"]["path"]]
    assert "provider_run" in worker and "json_stream_feed" in worker


@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_a_budget_below_the_measured_value_fails_naming_it(
        built: tuple[Path, Any, dict[str, Any]], name: str) -> None:
    build, _, report = built
    measured = report["figures"][name]
    at, _ = run(build, "--budget", f"{name}={measured}")
    assert at.returncode == 0, at.stdout + at.stderr
    below, _ = run(build, "--budget", f"{name}={measured - 1}")
    assert below.returncode == 1
    assert f"budget {name} exceeded: {measured:,} B measured, {measured - 1:,} B allowed" \
        in below.stderr
    assert below.stderr.count("exceeded") == 1


def test_an_unknown_budget_name_is_refused(built: tuple[Path, Any, dict[str, Any]]) -> None:
    build, _, _ = built
    proc, _ = run(build, "--budget", "flash_total=1")
    assert proc.returncode != 0 and "no budget named 'flash_total'" in proc.stderr


def test_the_indirect_call_table_covers_every_indirect_call(
        built: tuple[Path, Any, dict[str, Any]]) -> None:
    _, _, report = built
    assert report["unresolved"] == []
    assert report["stale"] == []
    assert report["cycles"] == []


def test_a_caller_missing_from_the_table_fails(built: tuple[Path, Any, dict[str, Any]],
                                               tmp_path: Path) -> None:
    build, _, _ = built
    table = (CM33 / "indirect_calls.txt").read_text().splitlines()
    cut = [line for line in table if not line.startswith("tool_execute:")]
    assert len(cut) == len(table) - 1
    (tmp_path / "table.txt").write_text("\n".join(cut) + "\n")
    proc, report = run(build, "--indirect", str(tmp_path / "table.txt"))
    assert proc.returncode == 1
    assert [u.split()[0] for u in report["unresolved"]] == ["tool_execute"]
    assert "missing from tests/cm33/indirect_calls.txt" in proc.stderr


def test_recursion_without_a_stated_depth_fails(built: tuple[Path, Any, dict[str, Any]],
                                                tmp_path: Path) -> None:
    build, _, _ = built
    table = (CM33 / "indirect_calls.txt").read_text()
    cut = table.replace("tool_session.c:write_object_schema=2", "")
    assert cut != table
    (tmp_path / "table.txt").write_text(cut)
    proc, cut_report = run(build, "--indirect", str(tmp_path / "table.txt"))
    assert proc.returncode == 1
    assert cut_report["cycles"] == [
        "tool_session.c:write_object_schema -> tool_session.c:write_object_schema"]
    assert "cycle(s) of the call graph without a stated depth" in proc.stderr


def test_a_narrower_root_table_reports_without_budgets(
        built: tuple[Path, Any, dict[str, Any]], tmp_path: Path) -> None:
    """--threads tests/cm33/roots-agent-init.txt: the scope of issue 16's outside figure."""
    _, _, full = built
    proc, narrow = run(tmp_path, "--threads", str(CM33 / "roots-agent-init.txt"), reuse=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "budgets not checked: the roots are those of" in proc.stdout
    assert list(narrow["chains"]) == ["main"]
    # agent_init() keeps every tool and the reference pages, but not the frontends, the
    # provider and the SMP group that only the other threads reach.
    assert narrow["flash"]["reference pages"] == pytest.approx(
        full["flash"]["reference pages"], abs=64)  # the same pages; alignment may differ
    assert 0 < narrow["flash"]["tools"] <= full["flash"]["tools"]
    assert narrow["figures"]["flash"] < full["figures"]["flash"] - 40_000
    # The budgeted "core + tools" figure of the full run is this link's total.
    assert full["figures"]["flash_core_tools"] == narrow["figures"]["flash_linked"]
    assert "flash_core_tools" not in narrow["figures"]


def test_budgets_are_not_written_from_another_root_table(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--build-dir", str(tmp_path / "cm33"), "--threads",
         str(CM33 / "roots-agent-init.txt"), "--write-budgets"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "not with --threads" in proc.stderr
    assert not (tmp_path / "cm33").exists()


def test_written_budgets_keep_a_goal_that_is_met(tmp_path: Path) -> None:
    """--write-budgets: measured plus the margin, rounded up to 64 B, but never above
    cap_bytes (flash_core_tools: issue 16's 96 KiB, met, stays the limit)."""
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("cm33_footprint", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["cm33_footprint"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    path = tmp_path / "budgets.json"
    path.write_text(json.dumps({"about": "test", "budgets": {
        "capped": {"bytes": 0, "margin_percent": 2, "cap_bytes": 98304, "goal": "g"},
        "near": {"bytes": 0, "margin_percent": 2, "cap_bytes": 98304, "goal": "g"},
        "free": {"bytes": 0, "margin_percent": 3, "goal": "g"}}}))
    module.write_budgets(path, {"capped": 97962, "near": 90000, "free": 1000})
    written = json.loads(path.read_text())["budgets"]
    assert written["capped"]["bytes"] == 98304  # 99,921 with the margin
    assert written["near"]["bytes"] == 91840  # 91,800 rounded up to 64 B
    assert written["free"]["bytes"] == 1088
    assert written["capped"]["measured"] == 97962
    assert BUDGETS["flash_core_tools"]["cap_bytes"] == 98304
    assert BUDGETS["flash_core_tools"]["bytes"] <= 98304
