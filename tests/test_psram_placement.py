"""Large static buffers of the core that no DMA engine or interrupt touches are placed with
AGENT_PSRAM_ATTR (app/src/port/agent_port.h): on a board with PSRAM (the ESP32-S3's
.ext_ram.bss) they leave internal RAM (issue 16, docs/footprint.md). Each file is compiled
with the simulator's configuration and AGENT_PORT_PSRAM_SECTION set, and the buffer must be
in that section: a buffer moved back to internal RAM fails here."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "app" / "src"
SECTION = ".ext_ram.bss"

#: file -> the buffers it must place in PSRAM (a function's static shows as NAME.N).
PLACED: dict[str, tuple[str, ...]] = {
    "modules/module_tool.c": ("tools", "output"),
    "modules/module_dir.c": ("manifest_buf",),
    "modules/module_catalog.c": ("entries", "arena"),
    "tools/storage_fs.c": ("hash_chunk",),
    "tools/storage_rw.c": ("read_buf",),
    "tools/storage_range.c": ("range_buf",),
    "tools/storage_search.c": ("search_state", "search_chunk"),
    "tools/storage_patch.c": ("patch_chunk", "plan"),
    "tools/tools_jobs.c": ("snap", "item_buf"),
    "tools/tools_hardware.c": ("tools_hw_item_buf",),
    "tools/tool_exec.c": ("js",),
    "tools/tool_args.c": ("js",),
    "agent/mgmt/mgmt_tools.c": ("status_chunk",),
    "agent/shell/agent_screen.c": ("scr", "sb"),
    "agent/shell/agent_chat.c": ("chat_text", "answer"),
    "agent/shell/agent_ask.c": ("ask_text",),
    "agent/shell/agent_script_cmd.c": ("run_text", "script_out"),
    "tools/storage_path.c": ("found",),
    "modules/module_restore.c": ("report",),
    "agent/store/conv_history.c": ("hc",),
    "agent/store/conv_slots.c": ("open_summary",),
    "agent/shell/agent_chat_slots.c": ("h",),
    "agent/provider/provider.c": ("turn", "stream_buf", "pretype_buf", "body_buf"),
}
CORE_DIRS = ("agent/state", "agent/wire", "tools", "script", "modules", "agent/store",
             "agent/provider", "agent/request", "agent/shell", "agent/mgmt")


def _gen_config() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_config", REPO / "scripts" / "gen_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_config"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def autoconf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = _gen_config()
    kconf = gen.load(REPO / "app" / "Kconfig", [REPO / "app" / "sim" / "sim.conf"],
                     REPO / "app" / "sim")
    out = tmp_path_factory.mktemp("conf") / "agent_autoconf.h"
    out.write_text(gen.header_text(kconf))
    return out


def sections_of(obj: Path) -> dict[str, str]:
    """Symbol name -> section, from the object's symbol table."""
    table = subprocess.run(["objdump", "-t", str(obj)], capture_output=True, text=True,
                           check=True).stdout
    out: dict[str, str] = {}
    for line in table.splitlines():
        fields = line.split()
        # ADDRESS FLAGS... SECTION SIZE NAME
        if len(fields) >= 4 and re.fullmatch(r"[0-9a-f]{8,16}", fields[0]):
            out[fields[-1]] = fields[-3]
    return out


@pytest.mark.parametrize("source", sorted(PLACED))
def test_large_buffers_are_placed_in_psram(source: str, autoconf: Path, tmp_path: Path) -> None:
    obj = tmp_path / "out.o"
    zcbor = REPO / "build" / "third_party" / "zcbor" / "include"
    subprocess.run(["cc", "-std=c11", "-c", "-imacros", str(autoconf),
                    f'-DAGENT_PORT_PSRAM_SECTION="{SECTION}"', f"-I{SRC / 'port'}",
                    # Placement only: a tool text is its literal (app/src/tools/packed_text.h).
                    "-DAGENT_PLAIN_TOOL_TEXTS",
                    *(f"-I{SRC / d}" for d in CORE_DIRS), f"-I{zcbor}",
                    str(SRC / source), "-o", str(obj)], check=True)
    sections = sections_of(obj)
    for name in PLACED[source]:
        found = {sym: sec for sym, sec in sections.items()
                 if re.fullmatch(rf"{re.escape(name)}(\.\d+)?", sym)}
        assert found, f"{source}: no static '{name}' (renamed? update PLACED)"
        assert set(found.values()) == {SECTION}, f"{source}: {name} is in {found}"
