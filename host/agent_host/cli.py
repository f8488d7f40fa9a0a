"""The host command line: `agent-host sim` builds and starts the simulator; config, status,
forget, list, export, delete, tools, man, import, modules, remove, feed and shell manage a device
over SMP (docs/host-cli.md)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import NoReturn

from . import __version__, device_cli, sim
from .errors import AgentHostError


class Parser(argparse.ArgumentParser):
    """argparse with a one-line usage error: `PROG: MESSAGE (see PROG --help)`, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _cmd_sim(args: argparse.Namespace) -> int:
    exe = sim.build(Path(args.build_dir), sanitize=args.sanitize, quiet=True)
    argv = sim.command(exe, Path(args.flash), pty=args.pty, extra=args.sim_args)
    print(f"starting {' '.join(argv)} (Ctrl-C stops it)", file=sys.stderr)
    sys.stderr.flush()
    os.execv(argv[0], argv)
    return 0  # not reached


def _cmd_serve(args: argparse.Namespace) -> int:
    from .testserver import command

    return command.run(args)


def build_parser(prog: str = "agent-host") -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_sim = sub.add_parser("sim", help="build and start the simulator with the agent shell")
    p_sim.add_argument("--flash", default="flash.bin",
                       help="LittleFS image mounted at /lfs (default: flash.bin)")
    p_sim.add_argument("--pty", action="store_true",
                       help="console on a new pseudo terminal instead of this terminal")
    p_sim.add_argument("--build-dir", default=str(sim.DEFAULT_BUILD_DIR),
                       help="CMake build directory")
    p_sim.add_argument("--sanitize", action="store_true", help="build with ASan and UBSan")
    p_sim.add_argument("sim_args", nargs="*", help="further simulator options (after --)")
    p_sim.set_defaults(run=_cmd_sim)
    from .testserver import command as serve_command

    p_serve = sub.add_parser("serve", help="run the OpenAI-compatible test server on 127.0.0.1",
                             description=serve_command.DESCRIPTION)
    serve_command.add_arguments(p_serve)
    p_serve.set_defaults(run=_cmd_serve)
    device_cli.add_commands(sub)
    return parser


def main(argv: list[str] | None = None, prog: str = "agent-host") -> int:
    """Run the command line; returns the exit status (argparse exits 2 on usage errors).

    0 done, 1 the device refused (or a build failed), 2 usage, 3 transport, 4 timeout.
    """
    args = build_parser(prog).parse_args(argv)
    # smp and smpclient log requests (a key among them) at debug level and timeouts as errors;
    # this command line reports every failure itself, in one line.
    for name in ("smp", "smpclient"):
        logging.getLogger(name).addHandler(logging.NullHandler())
        logging.getLogger(name).propagate = False
    try:
        return int(args.run(args))
    except AgentHostError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
