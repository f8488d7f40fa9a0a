"""Every twister_tests/**/testcase.yaml against Twister's scenario schema, and against what
this project's suites promise: pytest scenarios over the same tests/e2e files CI runs, on the
four targets of docs/zephyr-port.md.

The schema is Zephyr's scripts/schemas/twister/testsuite-schema.yaml as read at commit
c25a5761fa47323a610429bcfda79d5d61117af5 (zephyrproject-rtos/zephyr main; the version with
`pytest_root` as a list and `pytest_dut_scope`), which Twister loads with pykwalify. Its keys
and types are restated below, so the files are checked without a Zephyr tree too; where a
tree is at hand (the Zephyr lane's, see scripts/zephyr_lane.py) they are also validated
against that tree's own schema. Other rules come from Twister's code, cited where used.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_DIR = Path(__file__).resolve().parents[1]
TWISTER_DIR = REPO_DIR / "twister_tests"
SCENARIO_FILES = sorted(TWISTER_DIR.rglob("testcase.yaml"))

#: The board targets of the suites (twister identifiers in each board's <target>.yaml:
#: native_sim.yaml, native_sim_native_64.yaml, mps2_an385.yaml, esp32s3_devkitc_procpu.yaml).
PLATFORMS = {"native_sim", "native_sim/native/64", "mps2/an385", "esp32s3_devkitc/esp32s3/procpu"}


# -- the schema ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    """One pykwalify rule: a type, and for maps their keys, for sequences their item."""

    type: str  # "str", "int", "bool", "any", "seq", "map"
    enum: tuple[str, ...] = ()
    item: Rule | None = None
    keys: dict[str, Rule] = field(default_factory=dict)
    required: frozenset[str] = frozenset()


ANY = Rule("any")
STR = Rule("str")
INT = Rule("int")
BOOL = Rule("bool")
STRS = Rule("seq", item=STR)


def enum_seq(*values: str) -> Rule:
    return Rule("seq", item=Rule("str", enum=values))


HARNESS_CONFIG = Rule("map", keys={
    "power_measurements": ANY,
    "shell_commands_file": STR,
    "shell_commands": Rule("seq", item=Rule("map", keys={"command": STR, "expected": STR},
                                            required=frozenset({"command"}))),
    "display_capture_config": STR,
    "type": STR,
    "fixture": STR,
    "ordered": BOOL,
    "pytest_root": STRS,
    "pytest_args": STRS,
    "pytest_dut_scope": Rule("str", enum=("function", "class", "module", "package", "session")),
    "ctest_args": STRS,
    "regex": STRS,
    "robot_testsuite": ANY,
    "robot_option": ANY,
    "record": Rule("map", keys={"regex": STRS, "merge": BOOL, "as_json": STRS},
                   required=frozenset({"regex"})),
    "bsim_exe_name": STR,
    "ztest_suite_repeat": INT,
    "ztest_test_repeat": INT,
    "ztest_test_shuffle": BOOL,
})

SCENARIO = Rule("map", keys={
    "arch_exclude": ANY,
    "arch_allow": ANY,
    "vendor_exclude": STRS,
    "vendor_allow": STRS,
    "testcases": STRS,
    "build_only": BOOL,
    "build_on_all": BOOL,
    "depends_on": ANY,
    "extra_args": ANY,
    "extra_configs": STRS,
    "extra_conf_files": STRS,
    "extra_overlay_confs": STRS,
    "extra_dtc_overlay_files": STRS,
    "extra_sections": ANY,
    "expect_reboot": BOOL,
    "required_snippets": STRS,
    "filter": STR,
    "levels": enum_seq("smoke", "unit", "integration", "acceptance", "system", "regression"),
    "integration_platforms": STRS,
    "integration_toolchains": STRS,
    "ignore_faults": BOOL,
    "ignore_qemu_crash": BOOL,
    "harness": STR,
    "harness_config": HARNESS_CONFIG,
    "min_ram": INT,
    "min_flash": INT,
    "modules": STRS,
    "platform_exclude": ANY,
    "platform_allow": ANY,
    "platform_type": enum_seq("mcu", "qemu", "sim", "unit", "native"),
    "platform_key": STRS,
    "simulation_exclude": enum_seq("qemu", "simics", "xt-sim", "renode", "nsim", "mdb-nsim",
                                   "tsim", "armfvp", "native", "custom"),
    "tags": ANY,
    "timeout": INT,
    "toolchain_exclude": ANY,
    "toolchain_allow": ANY,
    "type": Rule("str", enum=("unit",)),
    "skip": BOOL,
    "slow": BOOL,
    "sysbuild": BOOL,
})

SAMPLE = Rule("map", keys={"name": STR, "description": STR}, required=frozenset({"name"}))

# The scenario names are the keys of `tests`, matched by the rule regex;(([a-zA-Z0-9_]+)).
SCENARIO_NAME = re.compile(r"[a-zA-Z0-9_]+")


def check(value: Any, rule: Rule, where: str) -> list[str]:
    """The schema errors of @value under @rule (empty when it conforms)."""
    kinds = {"str": str, "int": int, "bool": bool, "seq": list, "map": dict}
    if rule.type == "any":
        return []
    kind = kinds[rule.type]
    if not isinstance(value, kind) or (rule.type == "int" and isinstance(value, bool)):
        return [f"{where}: {value!r} is not of type {rule.type}"]
    if rule.enum and value not in rule.enum:
        return [f"{where}: {value!r} is not one of {list(rule.enum)}"]
    errors: list[str] = []
    if rule.type == "seq":
        assert rule.item is not None
        for i, item in enumerate(value):
            errors += check(item, rule.item, f"{where}[{i}]")
    elif rule.type == "map":
        for key in sorted(rule.required - value.keys()):
            errors.append(f"{where}: required key {key!r} is missing")
        for key, item in value.items():
            if key not in rule.keys:
                errors.append(f"{where}: key {key!r} is not in the schema")
            else:
                errors += check(item, rule.keys[key], f"{where}.{key}")
    return errors


def schema_errors(doc: Any) -> list[str]:
    """Errors of a whole scenario file: `tests` (required), `common`, `sample`."""
    if not isinstance(doc, dict):
        return ["the document is not a map"]
    errors = [f"top level: key {k!r} is not in the schema"
              for k in doc if k not in ("common", "sample", "tests")]
    if "tests" not in doc:
        errors.append("top level: required key 'tests' is missing")
    if "common" in doc:
        errors += check(doc["common"], SCENARIO, "common")
    if "sample" in doc:
        errors += check(doc["sample"], SAMPLE, "sample")
    tests = doc.get("tests")
    if "tests" in doc and not isinstance(tests, dict):
        errors.append("tests: not a map")
    elif isinstance(tests, dict):
        for name, scenario in tests.items():
            if not isinstance(name, str) or not SCENARIO_NAME.match(name):
                errors.append(f"tests: scenario name {name!r} does not match the schema")
            errors += check(scenario, SCENARIO, f"tests.{name}")
    return errors


def merged(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """A scenario with `common` applied as twisterlib/config_parser.py get_scenario() does:
    lists (and strings) are joined, other values of the scenario replace common's."""
    out = dict(doc.get("common", {}))
    for key, value in doc["tests"][name].items():
        if key in out and isinstance(out[key], list) and isinstance(value, list):
            out[key] = out[key] + value
        else:
            out[key] = value
    return out


def load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict), path
    return doc


def scenarios() -> list[tuple[Path, str]]:
    return [(path, name) for path in SCENARIO_FILES for name in load(path).get("tests", {})]


SCENARIOS = scenarios()
IDS = [f"{path.parent.name}/{name}" for path, name in SCENARIOS]


# -- the checker can fail --------------------------------------------------------------------
GOOD = {"common": {"harness": "pytest"},
        "tests": {"a.b": {"platform_allow": ["native_sim"], "timeout": 60,
                          "harness_config": {"pytest_root": ["x.py"]}}}}


@pytest.mark.parametrize(("change", "error"), [
    (lambda d: d.pop("tests"), "required key 'tests' is missing"),
    (lambda d: d.update(extra=1), "key 'extra' is not in the schema"),
    (lambda d: d["tests"]["a.b"].update(timout=5), "key 'timout' is not in the schema"),
    (lambda d: d["tests"]["a.b"].update(timeout="60"), "is not of type int"),
    (lambda d: d["tests"]["a.b"].update(timeout=True), "is not of type int"),
    (lambda d: d["tests"]["a.b"]["harness_config"].update(pytest_root="x.py"),
     "is not of type seq"),
    (lambda d: d["tests"]["a.b"]["harness_config"].update(pytest_dut_scope="test"),
     "is not one of"),
    (lambda d: d["tests"]["a.b"]["harness_config"].update(fixtures=["x"]),
     "key 'fixtures' is not in the schema"),
    (lambda d: d["common"].update(build_only="yes"), "is not of type bool"),
    (lambda d: d["tests"]["a.b"].update(platform_type=["board"]), "is not one of"),
    (lambda d: d["tests"]["a.b"].update(extra_configs="CONFIG_X=y"), "is not of type seq"),
    (lambda d: d.update(sample={"description": "x"}), "required key 'name' is missing"),
    (lambda d: d["tests"].update({".x": {}}), "does not match the schema"),
])
def test_the_checker_rejects(change, error: str) -> None:  # type: ignore[no-untyped-def]
    doc = yaml.safe_load(yaml.safe_dump(GOOD))
    assert schema_errors(doc) == []
    change(doc)
    errors = schema_errors(doc)
    assert any(error in e for e in errors), errors


# -- the suites ------------------------------------------------------------------------------
def test_there_are_suites() -> None:
    # One scenario per firmware image: native_sim, QEMU, the board (twister_tests/README.md).
    assert len(SCENARIO_FILES) >= 1 and len(SCENARIOS) >= 3


def zephyr_tree() -> Path | None:
    """The Zephyr tree the lane uses (scripts/zephyr_lane.py), if there is one here."""
    base = os.environ.get("ZEPHYR_BASE")
    for tree in ([Path(base)] if base else []) + [REPO_DIR.parent / "shared" / "zephyr-4.3" /
                                                  "zephyr"]:
        if (tree / "scripts" / "schemas" / "twister" / "testsuite-schema.yaml").is_file():
            return tree
    return None


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.parent.name for p in SCENARIO_FILES])
def test_file_conforms_to_the_real_schema(path: Path) -> None:
    """The same files against the schema of the Zephyr tree at hand, with pykwalify as Twister
    loads it (scripts/pylib/twister/scl.py). Without a tree: skipped here, a failure in CI."""
    tree = zephyr_tree()
    if tree is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI: no Zephyr tree (ZEPHYR_BASE or ../shared/zephyr-4.3)")
        pytest.skip("no Zephyr tree here: ZEPHYR_BASE or ../shared/zephyr-4.3")
    from pykwalify.core import Core

    schema = yaml.safe_load((tree / "scripts/schemas/twister/testsuite-schema.yaml").read_text())
    Core(source_data=load(path), schema_data=schema).validate(raise_exception=True)


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.parent.name for p in SCENARIO_FILES])
def test_file_conforms_to_the_schema(path: Path) -> None:
    assert schema_errors(load(path)) == []


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.parent.name for p in SCENARIO_FILES])
def test_suite_directory_builds_the_app(path: Path) -> None:
    """Twister builds the directory of the testcase.yaml: it must be the agent application."""
    cmake = (path.parent / "CMakeLists.txt").read_text(encoding="utf-8")
    assert "include(${CMAKE_CURRENT_LIST_DIR}/../agent_app.cmake)" in cmake
    glue = (TWISTER_DIR / "agent_app.cmake").read_text(encoding="utf-8")
    assert "set(APPLICATION_CONFIG_DIR ${AGENT_APP_DIR})" in glue
    assert "set(KCONFIG_ROOT ${AGENT_APP_DIR}/Kconfig)" in glue
    assert "include(${AGENT_APP_DIR}/CMakeLists.txt)" in glue
    # Included from elsewhere, app/CMakeLists.txt must name its files relative to itself.
    app = (REPO_DIR / "app" / "CMakeLists.txt").read_text(encoding="utf-8")
    assert "CMAKE_CURRENT_SOURCE_DIR" not in app


@pytest.mark.parametrize(("path", "name"), SCENARIOS, ids=IDS)
def test_scenario(path: Path, name: str) -> None:
    doc = load(path)
    assert re.fullmatch(r"agent(\.[a-z0-9_]+)+", name), name  # this project's names
    sc = merged(doc, name)
    assert sc.get("harness") == "pytest"
    assert isinstance(sc.get("timeout"), int) and sc["timeout"] > 0
    tags = sc.get("tags")
    assert isinstance(tags, list) and "agent" in tags and all(isinstance(t, str) for t in tags)

    # YAML lists of known targets (space-separated strings are deprecated by config_parser).
    platforms = sc.get("platform_allow")
    assert isinstance(platforms, list) and platforms, "platform_allow must be a list"
    assert set(platforms) <= PLATFORMS, set(platforms) - PLATFORMS
    assert set(sc.get("integration_platforms", [])) <= PLATFORMS

    # extra_configs: CONFIG_X=..., optionally arch:<arch>: or platform:<target>: in front
    # (twisterlib/testinstance.py create_overlay() splits on ':' and wants three parts).
    for line in sc.get("extra_configs", []):
        parts = line.split(":")
        assert len(parts) in (1, 3), line
        if len(parts) == 3:
            assert parts[0] in ("arch", "platform"), line
            assert parts[0] != "platform" or parts[1] in PLATFORMS, line
        assert re.fullmatch(r"CONFIG_[A-Z0-9_]+=\S+", parts[-1]), line
    if set(platforms) & {"native_sim", "native_sim/native/64"}:
        # The harness talks to native_sim over the process's stdin/stdout
        # (twister_harness/device/binary_adapter.py).
        assert "arch:posix:CONFIG_UART_NATIVE_PTY_0_ON_STDINOUT=y" in sc["extra_configs"]

    hc = sc.get("harness_config")
    assert isinstance(hc, dict)
    assert hc.get("pytest_dut_scope") == "function"  # each test gets a fresh device, as in CI
    roots = hc.get("pytest_root")
    assert isinstance(roots, list) and roots
    for root in roots:
        # twisterlib/harness.py Pytest.generate_command() joins each root with the directory
        # of the scenario file; a root may select tests in its file (FILE::TEST).
        target = (path.parent / root.split("::")[0]).resolve()
        assert target.is_file(), root
        # A file CI runs: under tests/ (pyproject's testpaths), collected as test_*.py.
        assert target.is_relative_to(REPO_DIR / "tests" / "e2e"), root
        assert re.fullmatch(r"test_\w+\.py", target.name), root

    fixture = hc.get("fixture")
    if fixture is not None:
        # A lab fixture gates the hardware and QEMU runs; the README says what it means.
        assert fixture in (TWISTER_DIR / "README.md").read_text(encoding="utf-8")
        assert not set(platforms) & {"native_sim", "native_sim/native/64"}


def test_every_target_is_covered() -> None:
    covered: set[str] = set()
    for path, name in SCENARIOS:
        covered |= set(merged(load(path), name)["platform_allow"])
    assert covered == PLATFORMS


def test_same_files_with_and_without_the_lab_fixture() -> None:
    """A `.lab` scenario runs the files of its namesake, only where the fixture is."""
    by_name = {name: merged(load(path), name) for path, name in SCENARIOS}
    labs = [n for n in by_name if n.endswith(".lab")]
    assert labs
    for lab in labs:
        base = by_name[lab.removesuffix(".lab")]
        assert by_name[lab]["harness_config"]["pytest_root"] == base["harness_config"][
            "pytest_root"]
        assert "fixture" in by_name[lab]["harness_config"]
