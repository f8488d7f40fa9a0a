#!/usr/bin/env python3
"""Generate the host build's configuration header from app/Kconfig.

The host build (simulator and host tests) compiles the same sources as the firmware, so it
needs the same CONFIG_* values. This script loads app/Kconfig with kconfiglib, where the
trailing ``source "Kconfig.zephyr"`` resolves to a stand-in file (by default
app/sim/Kconfig.zephyr, found through $srctree), applies one or more Kconfig fragments, and
writes a header shaped like Zephyr's autoconf.h:

    #define CONFIG_<NAME> 1          bool symbols set to y
    #define CONFIG_<NAME> 123        int symbols
    #define CONFIG_<NAME> 0x1f       hex symbols
    #define CONFIG_<NAME> "text"     string symbols

Symbols that are n, or that have no value because their dependencies are off, are left out,
as Zephyr does.

Any kconfiglib warning (an assignment to an undefined symbol, a value outside its range, a
malformed fragment line, a symbol set twice in the first fragment) is an error; a later
fragment may override what an earlier one set. An assignment that did not take effect (for
example a symbol whose dependencies are off) is an error too: the script prints the reason and exits
non-zero without touching its outputs. The header and the .config are written only when
their content changes, so that an unchanged configuration does not trigger a rebuild.

Usage:
    python3 scripts/gen_config.py --kconfig app/Kconfig --conf app/sim/sim.conf \\
        [--conf more.conf] --out build/generated/agent_autoconf.h \\
        [--dotconfig build/generated/.config] [--srctree app/sim]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

try:
    import kconfiglib
except ImportError:
    sys.exit(
        f"gen_config.py: the kconfiglib package is required, and {sys.executable} has none "
        f"(install it into that Python, or run the build with the project's .venv: ./dev)"
    )

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SRCTREE = REPO_ROOT / "app" / "sim"
HEADER_GUARD = "AGENT_AUTOCONF_H"


class ConfigError(Exception):
    """The configuration cannot be generated; the message says why."""


def _c_string(value: str) -> str:
    """Return ``value`` as a C string literal."""
    out = []
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def load(kconfig: Path, confs: list[Path], srctree: Path) -> kconfiglib.Kconfig:
    """Parse ``kconfig``, apply ``confs`` in order and check the result.

    Args:
        kconfig: The top Kconfig file (app/Kconfig).
        confs: Kconfig fragments, applied in order (later ones win).
        srctree: Directory against which ``source`` paths such as "Kconfig.zephyr" resolve.

    Returns:
        The loaded configuration, with every symbol value evaluated.

    Raises:
        ConfigError: On a parse error, any kconfiglib warning, or an assignment that did not
            take effect.
    """
    if not kconfig.is_file():
        raise ConfigError(f"{kconfig}: no such Kconfig file")
    for conf in confs:
        if not conf.is_file():
            raise ConfigError(f"{conf}: no such configuration fragment")

    old_srctree = os.environ.get("srctree")
    os.environ["srctree"] = str(srctree)
    try:
        try:
            kconf = kconfiglib.Kconfig(str(kconfig.resolve()), warn_to_stderr=False)
        except kconfiglib.KconfigError as err:
            raise ConfigError(str(err)) from err
        kconf.warn_assign_undef = True
        kconf.warn_assign_override = True
        kconf.warn_assign_redun = True

        for index, conf in enumerate(confs):
            # A later fragment overrides an earlier one on purpose (as Zephyr's
            # EXTRA_CONF_FILE does); within the first one a second assignment is a mistake.
            kconf.warn_assign_override = index == 0
            kconf.warn_assign_redun = index == 0
            kconf.load_config(str(conf), replace=False)

        # Range and type warnings are raised lazily, when a value is computed.
        for sym in kconf.unique_defined_syms:
            _ = sym.str_value
        for choice in kconf.unique_choices:
            _ = choice.str_value
    finally:
        if old_srctree is None:
            os.environ.pop("srctree", None)
        else:
            os.environ["srctree"] = old_srctree

    problems = list(kconf.warnings)
    problems.extend(_unapplied_assignments(kconf))
    if problems:
        raise ConfigError("\n".join(problems))
    return kconf


def _unapplied_assignments(kconf: kconfiglib.Kconfig) -> list[str]:
    """Explain every fragment assignment whose value is not the symbol's final value."""
    problems = []
    for sym in kconf.unique_defined_syms:
        user = sym.user_value
        if user is None:
            continue
        if sym.orig_type in (kconfiglib.BOOL, kconfiglib.TRISTATE):
            wanted = kconfiglib.TRI_TO_STR[user]
        else:
            wanted = user
        if sym.str_value != wanted:
            problems.append(
                f"warning: CONFIG_{sym.name} was assigned '{wanted}' but is "
                f"'{sym.str_value}' (a value outside its range, or dependencies off: "
                f"{kconfiglib.expr_str(sym.direct_dep)})"
            )
    return problems


def header_text(kconf: kconfiglib.Kconfig) -> str:
    """Return the autoconf-style header for ``kconf``."""
    lines = [
        "/* Generated by scripts/gen_config.py from app/Kconfig; do not edit. */",
        f"#ifndef {HEADER_GUARD}",
        f"#define {HEADER_GUARD}",
        "",
    ]
    for sym in kconf.unique_defined_syms:
        # config_string is empty for a symbol that gets no value (dependencies off).
        if not sym.config_string:
            continue
        value = sym.str_value
        if sym.orig_type in (kconfiglib.BOOL, kconfiglib.TRISTATE):
            if value == "y":
                lines.append(f"#define CONFIG_{sym.name} 1")
            elif value == "m":
                lines.append(f"#define CONFIG_{sym.name}_MODULE 1")
        elif sym.orig_type == kconfiglib.STRING:
            lines.append(f"#define CONFIG_{sym.name} {_c_string(value)}")
        elif sym.orig_type == kconfiglib.INT:
            if value != "":
                lines.append(f"#define CONFIG_{sym.name} {int(value, 10)}")
        elif sym.orig_type == kconfiglib.HEX and value != "":
            lines.append(f"#define CONFIG_{sym.name} 0x{int(value, 16):x}")
    lines += ["", f"#endif /* {HEADER_GUARD} */", ""]
    return "\n".join(lines)


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` unless it already holds exactly that; return True if written."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True


def dotconfig_text(kconf: kconfiglib.Kconfig) -> str:
    """Return the .config contents kconfiglib would write, without writing it."""
    # _config_contents is what write_config() writes; using it lets us compare first.
    text: str = kconf._config_contents("# Generated by scripts/gen_config.py; do not edit.\n")
    return text


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--kconfig", type=Path, required=True, help="top Kconfig file")
    parser.add_argument(
        "--conf", type=Path, action="append", default=[], help="Kconfig fragment (repeatable)"
    )
    parser.add_argument("--out", type=Path, required=True, help="header to write")
    parser.add_argument("--dotconfig", type=Path, help="also write the merged .config here")
    parser.add_argument(
        "--srctree",
        type=Path,
        default=DEFAULT_SRCTREE,
        help="directory where 'source' paths resolve (default: app/sim)",
    )
    args = parser.parse_args(argv)

    try:
        kconf = load(args.kconfig, args.conf, args.srctree)
    except ConfigError as err:
        print(f"gen_config.py: {err}", file=sys.stderr)
        return 1

    written = write_if_changed(args.out, header_text(kconf))
    print(f"gen_config.py: {args.out} {'written' if written else 'unchanged'}")
    if args.dotconfig is not None:
        written = write_if_changed(args.dotconfig, dotconfig_text(kconf))
        print(f"gen_config.py: {args.dotconfig} {'written' if written else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
