"""`west agent ...`: a thin WestCommand over the host package's command line (agent_host.cli).

Everything after `west agent` goes to the same parser as the `agent-host` console script, so
both spell and behave the same. When the package is not installed in west's Python, it is
imported from this repository's host/ folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from west.commands import WestCommand

HOST_DIR = Path(__file__).resolve().parents[2] / "host"


class Agent(WestCommand):
    def __init__(self) -> None:
        super().__init__(
            "agent",
            "build the simulator, provision and test the agent device",
            "Runs the agent-host command line; `west agent --help` lists its commands.",
            accepts_unknown_args=True,
        )

    def do_add_parser(self, parser_adder: Any) -> argparse.ArgumentParser:
        # add_help=False: --help belongs to agent-host's own parser, reached through do_run.
        parser: argparse.ArgumentParser = parser_adder.add_parser(
            self.name, help=self.help, description=self.description, add_help=False
        )
        return parser

    def do_run(self, args: argparse.Namespace, unknown: list[str]) -> None:
        try:
            from agent_host.cli import main
        except ImportError:
            sys.path.insert(0, str(HOST_DIR))
            from agent_host.cli import main
        code = main(unknown, prog="west agent")
        if code != 0:
            sys.exit(code)
