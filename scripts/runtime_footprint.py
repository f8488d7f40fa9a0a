#!/usr/bin/env python3
"""Flash and RAM of each script runtime on a Cortex-M build, measured (docs/scripting.md,
"Footprint").

Builds the agent for mps2/an385 (Cortex-M3, -Os, picolibc) four times with the lane's
machinery (scripts/zephyr_lane.py): without a runtime, with Lua only, with MicroPython only
and with both, and prints the linker's FLASH and RAM of each with the difference to the build
without, then the parts of the build with both (scripts/footprint_report.py groups).
The RAM includes each runtime's heap (CONFIG_AGENT_SCRIPT_*_HEAP_SIZE, 64 KiB by default):
on a board with PSRAM that heap is placed there (AGENT_PSRAM_ATTR).

    scripts/runtime_footprint.py            # takes a few minutes; run it under the lane's lock
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import footprint_report
import zephyr_lane

#: (name, what, Kconfig settings on the command line)
VARIANTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("none", "no script runtime", ()),
    ("lua", "Lua 5.4", ("-DCONFIG_AGENT_SCRIPT_LUA=y",)),
    ("python", "MicroPython", ("-DCONFIG_AGENT_SCRIPT_PYTHON=y",)),
    ("both", "Lua 5.4 and MicroPython",
     ("-DCONFIG_AGENT_SCRIPT_LUA=y", "-DCONFIG_AGENT_SCRIPT_PYTHON=y")),
)

SIZE = re.compile(r"^\s*(FLASH|RAM):\s+(\d+) B", re.MULTILINE)


def sizes(log: Path) -> dict[str, int]:
    """FLASH and RAM used, from the linker's memory report in a build log."""
    return {name: int(value) for name, value in SIZE.findall(log.read_text(errors="replace"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="*", default=[v[0] for v in VARIANTS],
                        help="build only these (none, lua, python, both)")
    args = parser.parse_args(argv)
    tree = zephyr_lane.find_tree()
    if tree is None:
        print(zephyr_lane.GET_A_TREE)
        return 2
    if tree.made:
        zephyr_lane.make_workspace(tree)
    logs = zephyr_lane.OUT / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    measured: dict[str, dict[str, int]] = {}
    for name, what, settings in VARIANTS:
        if name not in args.variants:
            continue
        image = zephyr_lane.Image(f"footprint_{name}", "mps2/an385", "gnuarmemb", settings,
                                  f"mps2/an385, {what}", footprint=name == "both")
        log = logs / f"build-{image.name}.log"
        result = zephyr_lane.build_image(tree, image, log)
        if not result.ok:
            print(f"{image.name}: {result.detail}")
            print("\n".join(result.lines))
            return 1
        measured[name] = sizes(log)
    base = measured.get("none")
    print("mps2/an385 (Cortex-M3, -Os)       FLASH B     RAM B    +FLASH      +RAM")
    for name, what, _ in VARIANTS:
        if name not in measured:
            continue
        got = measured[name]
        delta = ("", "") if base is None else (
            f"{got['FLASH'] - base['FLASH']:+d}", f"{got['RAM'] - base['RAM']:+d}")
        print(f"{what:<32} {got['FLASH']:>8} {got['RAM']:>9} {delta[0]:>9} {delta[1]:>9}")
    if "both" in measured:
        print("\nparts of the build with both runtimes:")
        for line in footprint_report.table(zephyr_lane.OUT / "footprint_both"):
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
