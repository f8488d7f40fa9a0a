"""Checks of app/Kconfig against the agent-service spec, and of scripts/gen_config.py.

The Kconfig tree is loaded with kconfiglib exactly as the host build loads it: app/Kconfig
with "Kconfig.zephyr" resolved to the stand-in app/sim/Kconfig.zephyr and app/sim/sim.conf
applied.

The spec's bounds come from tests/data/spec_bounds.csv, the repository's record of them
(symbol, value, unit, the spec section and the spec's own words; its header says where it was
transcribed from). The spec text itself is not part of the repository.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import kconfiglib
import pytest

REPO_DIR = Path(__file__).resolve().parents[1]
KCONFIG = REPO_DIR / "app" / "Kconfig"
APP_DIR = REPO_DIR / "app"
STANDIN_DIR = REPO_DIR / "app" / "sim"
SIM_CONF = STANDIN_DIR / "sim.conf"
GEN_CONFIG = REPO_DIR / "scripts" / "gen_config.py"
KCONFIG_DOC = REPO_DIR / "docs" / "kconfig.md"

SPEC_BOUNDS = REPO_DIR / "tests" / "data" / "spec_bounds.csv"
#: Bytes (or seconds, or items) per unit of the table's value column.
UNITS = {"KiB": 1024, "bytes": 1, "seconds": 1, "count": 1}
#: The spec's "Resource bounds" list has this many bullets; the table covers each.
RESOURCE_BULLETS = 25
#: How the spec writes the small numbers it spells out.
NUMBER_WORDS = {3: "three", 5: "five", 7: "seven", 8: "eight"}


def _read_spec_bounds() -> list[dict[str, str]]:
    """The rows of tests/data/spec_bounds.csv (its `#` header lines skipped)."""
    text = SPEC_BOUNDS.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines))


SPEC_ROWS = _read_spec_bounds()

# Each bound: its default in app/Kconfig (the spec's value times its unit) and the spec's words
# that state it, which the symbol's help quotes.
BOUNDS: dict[str, tuple[int, str]] = {
    row["symbol"]: (int(row["value"]) * UNITS.get(row["unit"], 0), row["spec_text"])
    for row in SPEC_ROWS
    if row["symbol"] != "-"
}
#: The spec's bounds this design holds no buffer for (symbol "-" in the table).
UNBUFFERED = [row["spec_text"] for row in SPEC_ROWS if row["symbol"] == "-"]
#: Symbols the code does not use yet, with the reason; every other one is used.
NOT_USED_YET: set[str] = set()

# Configuration limits and defaults that are not spec bounds (chosen in app/Kconfig).
CONFIG_VALUES: dict[str, int | str] = {
    "AGENT_ENDPOINT_MAX_LEN": 255,
    "AGENT_MODEL_MAX_LEN": 127,
    "AGENT_KEY_MAX_LEN": 255,
    "AGENT_USER_MAX_LEN": 31,
    "AGENT_REASONING_DEFAULT": "medium",
    "AGENT_TOOLS_POLICY_DEFAULT": "confirm",
    "AGENT_USER_DEFAULT": "user",
    "AGENT_THREAD_SLOTS": 2,
}


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _load_gen_config() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_config", GEN_CONFIG)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_gen_config()


def _node_path(node: kconfiglib.MenuNode) -> Path:
    """Absolute path of the file that defines ``node`` ($srctree-relative names included)."""
    path = Path(node.filename)
    return path if path.is_absolute() else STANDIN_DIR / path


@pytest.fixture(scope="module")
def kconf() -> kconfiglib.Kconfig:
    return GEN.load(KCONFIG, [SIM_CONF], STANDIN_DIR)


def _app_symbols(kconf: kconfiglib.Kconfig) -> list[kconfiglib.Symbol]:
    """Symbols defined in app/Kconfig itself (not in the Zephyr stand-in)."""
    app = KCONFIG.resolve()
    return [
        sym
        for sym in kconf.unique_defined_syms
        if any(_node_path(node).resolve() == app for node in sym.nodes)
    ]


def _parse_header(text: str) -> dict[str, str]:
    return dict(re.findall(r"^#define CONFIG_(\w+) (.+)$", text, flags=re.MULTILINE))


def _run_gen(tmp_path: Path, *confs: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, str(GEN_CONFIG), "--kconfig", str(KCONFIG)]
    for conf in confs:
        args += ["--conf", str(conf)]
    args += ["--out", str(tmp_path / "out" / "agent_autoconf.h")]
    return subprocess.run(args, capture_output=True, text=True, check=False)


def _conf(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "extra.conf"
    path.write_text(text, encoding="utf-8")
    return path


# (a) ------------------------------------------------------------------------------------------


def test_kconfig_loads_without_warnings() -> None:
    old = os.environ.get("srctree")
    os.environ["srctree"] = str(STANDIN_DIR)
    try:
        kconf = kconfiglib.Kconfig(str(KCONFIG), warn_to_stderr=False)
        kconf.warn_assign_undef = True
        kconf.load_config(str(SIM_CONF), replace=False)
        for sym in kconf.unique_defined_syms:
            _ = sym.str_value
    finally:
        if old is None:
            os.environ.pop("srctree", None)
        else:
            os.environ["srctree"] = old
    assert kconf.warnings == []
    assert kconf.syms["AGENT"].str_value == "y"


def test_a_kconfig_warning_is_reported(tmp_path: Path) -> None:
    """The loader must not swallow warnings: a broken tree has to fail."""
    broken = tmp_path / "Kconfig"
    broken.write_text(
        'config AGENT_X\n\tint "x"\n\tdefault 40\n\trange 1 32\n\thelp\n\t  x\n'
        'source "Kconfig.zephyr"\n',
        encoding="utf-8",
    )
    with pytest.raises(GEN.ConfigError, match="AGENT_X"):
        GEN.load(broken, [], STANDIN_DIR)


# (b) ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_bound_default_is_the_spec_value(kconf: kconfiglib.Kconfig, name: str) -> None:
    sym = kconf.syms.get(name)
    assert sym is not None and sym.nodes, f"{name} is not defined in app/Kconfig"
    assert sym.orig_type == kconfiglib.INT, f"{name} must be an int symbol"
    assert int(sym.str_value) == BOUNDS[name][0]


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_bound_help_quotes_the_spec(kconf: kconfiglib.Kconfig, name: str) -> None:
    helptext = _normalise(" ".join(node.help or "" for node in kconf.syms[name].nodes))
    assert _normalise(BOUNDS[name][1]) in helptext


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_bound_spec_value_is_inside_its_range(kconf: kconfiglib.Kconfig, name: str) -> None:
    sym = kconf.syms[name]
    ranges = [
        (int(lo.str_value), int(hi.str_value))
        for lo, hi, cond in sym.ranges
        if kconfiglib.expr_value(cond)
    ]
    assert ranges, f"{name} has no range"
    for low, high in ranges:
        assert low <= BOUNDS[name][0] <= high


def test_spec_bounds_table_is_well_formed() -> None:
    """One row per symbol, a known unit, and a positive value that its spec text states."""
    names = [row["symbol"] for row in SPEC_ROWS if row["symbol"] != "-"]
    assert len(names) == len(set(names)), "a symbol has two rows"
    assert len(SPEC_ROWS) >= RESOURCE_BULLETS
    for row in SPEC_ROWS:
        assert re.fullmatch(r"AGENT_[A-Z0-9_]+|-", row["symbol"]), row
        assert row["unit"] in UNITS, row
        assert int(row["value"]) > 0, row
        assert row["spec_text"] == _normalise(row["spec_text"]), row
        value = int(row["value"])
        if row["unit"] == "KiB":
            written = [f"{value} KiB"]
        else:
            written = [str(value)] + ([NUMBER_WORDS[value]] if value in NUMBER_WORDS else [])
        pattern = rf"\b({'|'.join(written)})\b"
        assert re.search(pattern, row["spec_text"], flags=re.IGNORECASE), row
        assert re.fullmatch(r"Resource bounds, bullet \d+|Typed tools, [\w ]+", row["source"]), row


def test_every_resource_bound_bullet_is_covered() -> None:
    """Each bullet of the spec's "Resource bounds" list has at least one row in the table."""
    bullets = {
        int(row["source"].rpartition(" ")[2])
        for row in SPEC_ROWS
        if row["source"].startswith("Resource bounds, bullet ")
    }
    assert bullets == set(range(1, RESOURCE_BULLETS + 1))


def test_bounds_without_a_buffer_are_explained() -> None:
    """docs/kconfig.md says why each bound without a symbol needs no buffer."""
    doc = KCONFIG_DOC.read_text(encoding="utf-8")
    section = doc.partition("## Spec bounds without a buffer")[2].partition("\n## ")[0]
    assert len(UNBUFFERED) == 2
    for text in UNBUFFERED:
        assert f'"{text}"' in _normalise(section), text


def _uses(name: str) -> bool:
    """Whether CONFIG_<name> is read by the firmware's or the simulator's code (C sources and
    headers, CMake files) or <name> guards other Kconfig entries (`if`, `depends on`). A
    value set in a .conf file is not a use: something must read it."""
    suffixes = {".c", ".h", ".cmake", ".txt"}
    sources = [p for p in APP_DIR.rglob("*") if p.suffix in suffixes and p.is_file()]
    pattern = re.compile(rf"\bCONFIG_{name}\b")
    if any(pattern.search(p.read_text(encoding="utf-8", errors="replace")) for p in sources):
        return True
    kconfig = KCONFIG.read_text(encoding="utf-8")
    return re.search(rf"^\s*(if|depends on)\b.*\b{name}\b", kconfig, re.MULTILINE) is not None


def test_every_app_symbol_is_used(kconf: kconfiglib.Kconfig) -> None:
    """An option nothing reads is a promise the build does not keep: each is used, or named
    in NOT_USED_YET with the work that will use it."""
    unused = {sym.name for sym in _app_symbols(kconf) if not _uses(sym.name)}
    assert unused == NOT_USED_YET


@pytest.mark.parametrize("name", sorted(CONFIG_VALUES))
def test_configuration_value_defaults(kconf: kconfiglib.Kconfig, name: str) -> None:
    expected = CONFIG_VALUES[name]
    sym = kconf.syms[name]
    if isinstance(expected, str):
        assert sym.orig_type == kconfiglib.STRING
        assert sym.str_value == expected
    else:
        assert sym.orig_type == kconfiglib.INT
        assert int(sym.str_value) == expected


def test_max_tools_default_range_follows_the_limit(kconf: kconfiglib.Kconfig) -> None:
    sym = kconf.syms["AGENT_MAX_TOOLS_DEFAULT"]
    ((low, high, _cond),) = sym.ranges
    assert low.str_value == "1"
    assert high is kconf.syms["AGENT_MAX_TOOLS_LIMIT"]


# (c) ------------------------------------------------------------------------------------------


def test_every_app_symbol_has_help(kconf: kconfiglib.Kconfig) -> None:
    symbols = _app_symbols(kconf)
    assert len(symbols) >= len(BOUNDS) + len(CONFIG_VALUES)
    missing = [sym.name for sym in symbols if not any(node.help for node in sym.nodes)]
    assert missing == []


def test_standin_symbols_have_help(kconf: kconfiglib.Kconfig) -> None:
    standin = (STANDIN_DIR / "Kconfig.zephyr").resolve()
    symbols = [
        s
        for s in kconf.unique_defined_syms
        if any(_node_path(n).resolve() == standin for n in s.nodes)
    ]
    assert {s.name for s in symbols} >= {"SHELL", "SETTINGS", "FILE_SYSTEM", "ESP_SPIRAM"}
    assert [s.name for s in symbols if not any(n.help for n in s.nodes)] == []


# (d) ------------------------------------------------------------------------------------------


def _referenced_symbols() -> dict[str, list[str]]:
    refs: dict[str, list[str]] = {}
    for root in (REPO_DIR / "app" / "src", REPO_DIR / "app" / "sim"):
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".c", ".h") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for name in re.findall(r"\bCONFIG_(AGENT_[A-Z0-9_]+)\b", text):
                refs.setdefault(name, []).append(str(path.relative_to(REPO_DIR)))
    return refs


def test_every_referenced_agent_symbol_is_defined(kconf: kconfiglib.Kconfig) -> None:
    undefined = {
        name: sorted(set(paths))
        for name, paths in _referenced_symbols().items()
        if name not in kconf.syms or not kconf.syms[name].nodes
    }
    assert undefined == {}, f"CONFIG_ symbols used in C but not defined in app/Kconfig: {undefined}"


def test_reference_scan_finds_known_uses() -> None:
    """The scan itself must work, or the check above would pass vacuously."""
    refs = _referenced_symbols()
    assert "AGENT_WORKER_STACK_SIZE" in refs  # app/src/port/zephyr/thread.c
    assert "AGENT_PROMPT_MAX_LEN" in refs


# (e) ------------------------------------------------------------------------------------------


def test_generated_header_has_the_defaults(tmp_path: Path, kconf: kconfiglib.Kconfig) -> None:
    result = _run_gen(tmp_path, SIM_CONF)
    assert result.returncode == 0, result.stderr
    header = (tmp_path / "out" / "agent_autoconf.h").read_text(encoding="utf-8")
    values = _parse_header(header)
    for name, (value, _) in BOUNDS.items():
        assert values.get(name) == str(value), name
    for name, expected in CONFIG_VALUES.items():
        if isinstance(expected, str):
            assert values.get(name) == f'"{expected}"', name
        else:
            assert values.get(name) == str(expected), name
    assert values["AGENT"] == "1"
    assert "ESP_SPIRAM" not in values  # bools that are n are left out, as in autoconf.h


def test_header_is_only_rewritten_when_it_changes(tmp_path: Path) -> None:
    assert _run_gen(tmp_path, SIM_CONF).returncode == 0
    out = tmp_path / "out" / "agent_autoconf.h"
    os.utime(out, ns=(1_000_000_000, 1_000_000_000))
    assert _run_gen(tmp_path, SIM_CONF).returncode == 0
    assert out.stat().st_mtime_ns == 1_000_000_000
    conf = _conf(tmp_path, "CONFIG_AGENT_MAX_TOOLS_DEFAULT=8\n")
    assert _run_gen(tmp_path, SIM_CONF, conf).returncode == 0
    assert out.stat().st_mtime_ns != 1_000_000_000
    assert _parse_header(out.read_text(encoding="utf-8"))["AGENT_MAX_TOOLS_DEFAULT"] == "8"


@pytest.mark.parametrize(("value", "accepted"), [(0, False), (1, True), (32, True), (33, False)])
def test_max_tools_default_bounds(tmp_path: Path, value: int, accepted: bool) -> None:
    conf = _conf(tmp_path, f"CONFIG_AGENT_MAX_TOOLS_DEFAULT={value}\n")
    result = _run_gen(tmp_path, SIM_CONF, conf)
    out = tmp_path / "out" / "agent_autoconf.h"
    if accepted:
        assert result.returncode == 0, result.stderr
        assert _parse_header(out.read_text(encoding="utf-8"))["AGENT_MAX_TOOLS_DEFAULT"] == str(
            value
        )
    else:
        assert result.returncode != 0
        assert "AGENT_MAX_TOOLS_DEFAULT" in result.stderr
        assert "outside the active range" in result.stderr
        assert not out.exists()


def test_undefined_symbol_is_rejected(tmp_path: Path) -> None:
    result = _run_gen(tmp_path, SIM_CONF, _conf(tmp_path, "CONFIG_AGENT_NO_SUCH_BOUND=3\n"))
    assert result.returncode != 0
    assert "undefined symbol AGENT_NO_SUCH_BOUND" in result.stderr


def test_assignment_without_effect_is_rejected(tmp_path: Path) -> None:
    conf = _conf(tmp_path, "CONFIG_SHELL=n\nCONFIG_AGENT_PROMPT_MAX_LEN=511\n")
    result = _run_gen(tmp_path, conf)
    assert result.returncode != 0
    assert "CONFIG_AGENT_PROMPT_MAX_LEN was assigned '511'" in result.stderr


def test_strings_are_escaped(tmp_path: Path) -> None:
    conf = _conf(tmp_path, 'CONFIG_AGENT_USER_DEFAULT="a\\"b\\\\c"\n')
    result = _run_gen(tmp_path, SIM_CONF, conf)
    assert result.returncode == 0, result.stderr
    values = _parse_header((tmp_path / "out" / "agent_autoconf.h").read_text(encoding="utf-8"))
    assert values["AGENT_USER_DEFAULT"] == '"a\\"b\\\\c"'


def test_header_compiles_into_the_expected_values(tmp_path: Path) -> None:
    """The header is valid C whose macros have the documented types and values."""
    cc = os.environ.get("CC", "cc")
    assert _run_gen(tmp_path, SIM_CONF).returncode == 0
    src = tmp_path / "check.c"
    src.write_text(
        '#include "agent_autoconf.h"\n'
        '_Static_assert(CONFIG_AGENT_PROMPT_MAX_LEN == 1023, "prompt");\n'
        '_Static_assert(CONFIG_AGENT_MAX_TOOLS_LIMIT == 32, "limit");\n'
        '_Static_assert(sizeof(CONFIG_AGENT_REASONING_DEFAULT) == sizeof("medium"), "s");\n'
        "int main(void) { return 0; }\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [cc, "-std=c11", "-fsyntax-only", "-I", str(tmp_path / "out"), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


# docs -----------------------------------------------------------------------------------------


def test_kconfig_doc_lists_every_symbol() -> None:
    """Every symbol is documented with its Kconfig default (no .conf fragment applied)."""
    kconf = GEN.load(KCONFIG, [], STANDIN_DIR)
    doc = KCONFIG_DOC.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(AGENT\w*)` \| ([^|]+?) \|", doc, flags=re.MULTILINE))
    for sym in _app_symbols(kconf):
        assert sym.name in rows, f"docs/kconfig.md lacks {sym.name}"
        default = rows[sym.name].strip().strip("`")
        if sym.orig_type == kconfiglib.STRING:
            assert default == f'"{sym.str_value}"', sym.name
        else:
            assert default == sym.str_value, sym.name


def test_header_formats_every_symbol_type(tmp_path: Path) -> None:
    """bool y -> 1, bool n -> absent, int -> decimal, hex -> 0x..., string -> C literal."""
    tree = tmp_path / "Kconfig"
    tree.write_text(
        'config T_YES\n\tbool "y"\n\tdefault y\n'
        'config T_NO\n\tbool "n"\n'
        'config T_INT\n\tint "i"\n\tdefault -7\n'
        'config T_HEX\n\thex "h"\n\tdefault 0x1F\n'
        'config T_STR\n\tstring "s"\n\tdefault "a b"\n'
        'config T_OFF\n\tint "off"\n\tdepends on T_NO\n\tdefault 3\n',
        encoding="utf-8",
    )
    values = _parse_header(GEN.header_text(GEN.load(tree, [], STANDIN_DIR)))
    assert values == {"T_YES": "1", "T_INT": "-7", "T_HEX": "0x1f", "T_STR": '"a b"'}
