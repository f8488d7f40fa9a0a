#!/usr/bin/env python3
"""Flash and RAM of a Zephyr build by part: the agent's core, its tools, the port, the
reference pages, Zephyr's subsystems and the modules.

Reads the rom.json and ram.json that Zephyr's footprint targets write into the build folder
(`west build -d DIR -t rom_report`, `-t ram_report`; scripts/footprint/size_report in Zephyr)
and sums each symbol's size into the first group whose path pattern its path contains.
Symbols the report could not tie to a file ("(hidden)", "(no paths)") count as "unattributed".

    scripts/footprint_report.py build/zephyr/mps2_an385
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: (pattern in the symbol's path, group), first match wins.
GROUPS: tuple[tuple[str, str], ...] = (
    ("/app/src/agent/", "agent core"),
    ("/app/src/tools/", "agent tools"),
    ("/app/src/port/", "agent port"),
    ("/app/src/script/", "script runner"),
    ("/app/src/modules/", "agent modules"),
    ("/app/src/runtimes/lua/", "Lua adapter"),
    ("/app/src/runtimes/python/", "MicroPython adapter"),
    ("/third_party/lua/", "Lua 5.4"),
    ("/third_party/micropython/", "MicroPython"),
    ("agent_reference", "reference pages"),
    ("agent_ca_bundle", "CA bundle"),
    ("/modules/fs/littlefs", "littlefs"),
    ("/modules/lib/zcbor", "zcbor"),
    ("/modules/crypto/mbedtls", "Mbed TLS"),
    ("picolibc", "picolibc"),
    ("/subsys/shell", "Zephyr shell"),
    ("/subsys/mgmt", "MCUmgr"),
    ("/subsys/net", "Zephyr networking"),
    ("/subsys/fs", "Zephyr file systems"),
    ("/subsys/settings", "Zephyr settings"),
    ("/kernel/", "Zephyr kernel"),
    ("/drivers/", "Zephyr drivers"),
    ("/arch/", "Zephyr arch"),
)


def group_sizes(report: dict[str, Any]) -> tuple[int, dict[str, int]]:
    """The report's total and its size per group."""
    sizes: dict[str, int] = {}

    def walk(node: dict[str, Any], path: str) -> None:
        children = node.get("children")
        here = f"{path}/{node.get('name', '')}"
        if children:
            for child in children:
                walk(child, here)
            return
        group = "unattributed" if "(hidden)" in here or "(no paths)" in here else "other"
        for pattern, name in GROUPS:
            if pattern in here:
                group = name
                break
        sizes[group] = sizes.get(group, 0) + int(node.get("size", 0))

    walk(report["symbols"], "")
    return int(report["symbols"]["size"]), sizes


def table(build_dir: Path) -> list[str]:
    lines: list[str] = []
    for kind, title in (("rom", "flash"), ("ram", "RAM")):
        path = build_dir / f"{kind}.json"
        if not path.exists():
            lines.append(f"{title}: no {path.name} (run the {kind}_report target)")
            continue
        total, sizes = group_sizes(json.loads(path.read_text()))
        lines.append(f"{title}: {total} B")
        for name, size in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {name:<22} {size:>8} B {100.0 * size / max(total, 1):5.1f} %")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", type=Path)
    args = parser.parse_args(argv)
    print("\n".join(table(args.build_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
