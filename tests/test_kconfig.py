"""Checks of app/Kconfig against the agent-service spec, and of scripts/gen_config.py.

The Kconfig tree is loaded with kconfiglib exactly as the host build loads it: app/Kconfig
with "Kconfig.zephyr" resolved to the stand-in app/sim/Kconfig.zephyr and app/sim/sim.conf
applied.

The spec lives outside the repository (../shared/spec/ beside the checkout, or the directory
named by $AGENT_SPEC_DIR). Without it the phrase checks fail, unless AGENT_ALLOW_NO_SPEC=1
says that is expected, in which case they are reported as skipped, never as passed.
"""

from __future__ import annotations

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
STANDIN_DIR = REPO_DIR / "app" / "sim"
SIM_CONF = STANDIN_DIR / "sim.conf"
GEN_CONFIG = REPO_DIR / "scripts" / "gen_config.py"
KCONFIG_DOC = REPO_DIR / "docs" / "kconfig.md"
SPEC_NAME = "000_79e988861d8d1e9c.txt"

# Each bound: the spec's value and a phrase of the spec that states it. The phrases are
# compared with whitespace collapsed, because the spec wraps its bullets across lines.
BOUNDS: dict[str, tuple[int, str]] = {
    "AGENT_WORKER_STACK_SIZE": (16384, "Foreground worker stack: 16 KiB internal RAM."),
    "AGENT_STREAM_LINE_BUF_SIZE": (24576, "Stream-line buffer: 24 KiB, PSRAM preferred."),
    "AGENT_REQUEST_BODY_SIZE": (16384, "Request body: 16 KiB, PSRAM preferred."),
    "AGENT_PROMPT_MAX_LEN": (1023, "Prompt: 1023 bytes."),
    "AGENT_TOOL_QUERY_MAX_LEN": (159, "Tool discovery query: 159 bytes."),
    "AGENT_TOOL_DESCRIPTOR_BUF_SIZE": (6144, "Tool descriptor buffer: 6 KiB, allocated in PSRAM."),
    "AGENT_TOOL_BOOTSTRAP_COUNT": (
        3,
        (
            "At most three bootstrap plus five discovered tool schemas are serialized per "
            "provider turn."
        ),
    ),
    "AGENT_TOOL_DISCOVERED_MAX": (5, "find and activate up to five installed tools"),
    "AGENT_TOOL_ARGS_MAX_LEN": (4095, "Tool arguments: 4095 bytes, held in PSRAM for a request."),
    "AGENT_TOOL_RESULT_MAX_LEN": (4095, "Tool result: 4095 bytes, allocated in PSRAM."),
    "AGENT_REFERENCE_MATCHES_MAX": (
        3,
        "API-reference matches: at most three compact contracts per lookup.",
    ),
    "AGENT_MAN_RESULTS_MAX": (12, "Manual search: fixed stack storage for at most 12 results."),
    "AGENT_STORAGE_IO_MAX_LEN": (3072, "Storage read/write content: 3072 bytes."),
    "AGENT_STORAGE_RANGE_MAX_LEN": (2048, "Storage ranged read: 2048 requested bytes"),
    "AGENT_STORAGE_SEARCH_PATHS_MAX": (32, "Storage search: 32 queued paths"),
    "AGENT_STORAGE_SEARCH_SCAN_BYTES": (65536, "32 queued paths, 64 KiB scanned text"),
    "AGENT_STORAGE_SEARCH_MATCHES_MAX": (12, "64 KiB scanned text, and 12 matches."),
    "AGENT_STORAGE_PATCH_FILE_MAX": (131072, "Storage patch: 128 KiB file"),
    "AGENT_STORAGE_PATCH_EDITS_MAX": (8, "128 KiB file, eight edits"),
    "AGENT_STORAGE_PATCH_INSERT_MAX": (2048, "2048 inserted bytes per edit"),
    "AGENT_SCRIPT_SOURCE_MAX_LEN": (640, "Generated script source: 640 bytes."),
    "AGENT_SCRIPT_TOOL_OUTPUT_MAX_LEN": (383, "Generated script captured output: 383 bytes."),
    "AGENT_CONFIRM_TIMEOUT_S": (30, "Tool confirmation deadline: 30 seconds."),
    "AGENT_MANUAL_SCRIPT_OUTPUT_MAX_LEN": (4095, "Manual script output: 4095 bytes"),
    "AGENT_MANUAL_SCRIPT_DEADLINE_S": (30, "Manual script deadline: 30 seconds."),
    "AGENT_MODEL_OUTPUT_MAX": (16384, "Model output: 16 KiB per provider turn."),
    "AGENT_PROVIDER_REQUEST_BODY_SIZE": (32768, "Provider request body: 32 KiB in PSRAM"),
    "AGENT_CHAT_HISTORY_RAW_MAX": (8192, "at most 8 KiB of raw local history"),
    "AGENT_CHAT_HISTORY_FRAGMENT_SIZE": (16384, "serialized into a 16 KiB history fragment"),
    "AGENT_ASSISTANT_CAPTURE_SIZE": (
        16384,
        "Assistant capture for a completed turn: 16 KiB in PSRAM.",
    ),
    "AGENT_CONV_FLASH_FILE_MAX": (10240, "Conversation file: 10 KiB on internal flash"),
    "AGENT_CONV_FLASH_SLOTS": (3, "three flash conversations"),
    "AGENT_CONV_SD_FILE_MAX": (49152, "or 48 KiB on SD"),
    "AGENT_CONV_SD_SLOTS": (8, "eight SD conversations are retained."),
    "AGENT_REQUEST_DEADLINE_S": (90, "Request deadline: 90 seconds."),
    "AGENT_IO_TIMEOUT_S": (15, "Per-I/O timeout: 15 seconds."),
    # From the typed-tools text rather than the bounds list.
    "AGENT_STORAGE_LIST_MAX": (16, "up to 16 file or directory entries for one path"),
    "AGENT_SCRIPT_FILE_ARGS_MAX": (7, "with up to seven arguments"),
    "AGENT_MAX_TOOLS_DEFAULT": (16, "permits up to 16 sequential tool calls by default"),
    "AGENT_MAX_TOOLS_LIMIT": (32, "accepted values are 1 through 32"),
}

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


def _spec_path() -> Path:
    env = os.environ.get("AGENT_SPEC_DIR")
    if env:
        return Path(env) / SPEC_NAME
    # CI lays shared/ beside the clone; look beside each enclosing folder, nearest first.
    candidates = [d / "shared" / "spec" / SPEC_NAME for d in REPO_DIR.parents[:3]]
    return next((c for c in candidates if c.is_file()), candidates[0])


@pytest.fixture(scope="module")
def kconf() -> kconfiglib.Kconfig:
    return GEN.load(KCONFIG, [SIM_CONF], STANDIN_DIR)


@pytest.fixture(scope="module")
def spec_text() -> str:
    path = _spec_path()
    if not path.is_file():
        if os.environ.get("AGENT_ALLOW_NO_SPEC") == "1":
            pytest.skip(f"spec not found at {path} (AGENT_ALLOW_NO_SPEC=1)")
        pytest.fail(
            f"spec not found at {path}: set AGENT_SPEC_DIR, or AGENT_ALLOW_NO_SPEC=1 to "
            "report these checks as skipped"
        )
    return _normalise(path.read_text(encoding="utf-8"))


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
def test_bound_phrase_is_in_the_spec(spec_text: str, name: str) -> None:
    phrase = _normalise(BOUNDS[name][1])
    assert phrase in spec_text, f"{name}: {phrase!r} not found in the spec"


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


def test_every_resource_bound_bullet_is_covered(spec_text: str) -> None:
    """Each bullet of the spec's "Resource bounds" list is quoted by at least one bound."""
    start = spec_text.index("Resource bounds")
    end = spec_text.index("agent status records tool calls")
    bullets = [b.strip() for b in spec_text[start:end].split("•")[1:]]
    phrases = [_normalise(p) for _, p in BOUNDS.values()]
    assert len(bullets) == 25, bullets
    for bullet in bullets:
        assert any(p in bullet for p in phrases), f"no Kconfig bound quotes: {bullet!r}"


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
