"""Command line of the test server: `python -m agent_host.testserver` and `agent-host serve`."""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from ..errors import TestServerError
from .faults import Faults
from .fixtures import fixture_files, fixture_replies, fixtures_dir
from .plans import Script, Turn, turn_for
from .scriptfile import load_script
from .server import TestServer
from .synth import SYNTHESIZED, synth_reply
from .tls import TLS_MODES, CaFiles, write_ca

DESCRIPTION = (
    "Serve an OpenAI-compatible API on 127.0.0.1 from recorded fixtures, synthesized streams "
    "or a dialogue script, with optional faults."
)

FAULT_HELP = (
    "fault, repeatable: eol=lf|crlf|cr (or crlf, cr), keepalive=K, keepalive-before=K, "
    "keepalive-text=T, framing=chunked|content-length|close (or chunked, content-length, close), "
    "chunk-size=N, drip[=DELAY], drip-headers, disconnect=N, reset, stall[=N], "
    "stall-before-head, stall-seconds=S"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the server's options to a parser (shared by both entry points).

    Args:
        parser: The parser or sub-parser.
    """
    src = parser.add_argument_group("what to serve (fixtures and synths form a dialogue, in order)")
    src.add_argument("--fixture", action="append", default=[], metavar="PATH",
                     help="a recorded stream (a path, or a name in the corpus like chat/x.sse; see "
                          "--list); repeatable")
    src.add_argument("--synth", action="append", default=[], metavar="NAME",
                     help="a synthesized reply (see --list); repeatable")
    src.add_argument("--script", type=Path, metavar="FILE",
                     help="a JSON dialogue script (see docs/test-server.md)")
    src.add_argument("--no-repeat", action="store_true",
                     help="answer 500 once the dialogue is used up (default: repeat the last turn)")
    parser.add_argument("--tls", nargs="?", const="valid", choices=TLS_MODES,
                        help="serve HTTPS; MODE is valid (default), wrong-host or unknown-ca")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: a free one)")
    parser.add_argument("--fault", action="append", default=[], metavar="SPEC", help=FAULT_HELP)
    parser.add_argument("--ca-out", type=Path, metavar="PATH",
                        help="copy the CA certificate (PEM) to PATH")
    parser.add_argument("--ca-cert", type=Path, metavar="FILE",
                        help="with --tls: sign with this existing CA certificate (PEM) instead of "
                             "a new CA, e.g. one a firmware was built to trust (AGENT_EXTRA_CA); "
                             "needs --ca-key")
    parser.add_argument("--ca-key", type=Path, metavar="FILE",
                        help="the private key (PEM) of --ca-cert")
    parser.add_argument("--make-ca", type=Path, metavar="DIR",
                        help="write a new CA (ca.pem, ca-key.pem) to DIR for --ca-cert/--ca-key "
                             "and AGENT_EXTRA_CA, then exit")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="write every request as a JSON line to FILE on exit")
    parser.add_argument("--no-validate", action="store_true",
                        help="do not check request bodies against the openai SDK's types")
    parser.add_argument("--duration", type=float, metavar="SECONDS",
                        help="stop after SECONDS (default: run until interrupted)")
    parser.add_argument("--quiet", action="store_true", help="do not log requests to stderr")
    parser.add_argument("--list", action="store_true",
                        help="list the fixture files and synthesized replies, then exit")


def build_script(args: argparse.Namespace) -> Script:
    """The script the options describe.

    Args:
        args: Parsed options.

    Returns:
        The script.

    Raises:
        TestServerError: Nothing to serve, or both a script and fixtures/synths.
    """
    if args.script is not None:
        if args.fixture or args.synth:
            raise TestServerError("give either --script or --fixture/--synth, not both")
        script = load_script(args.script, args.fault)
        if args.no_repeat:
            script.repeat_last = False
        return script
    faults = Faults.parse(args.fault)
    turns: list[Turn] = []
    for name in args.fixture:
        turns += [turn_for(r) for r in fixture_replies(name, faults)]
    for name in args.synth:
        turns.append(turn_for(synth_reply(name, faults)))
    if not turns:
        raise TestServerError("nothing to serve: give --fixture, --synth or --script")
    return Script(turns, repeat_last=not args.no_repeat)


def ca_files(args: argparse.Namespace) -> CaFiles | None:
    """The existing CA of `--ca-cert` and `--ca-key`, or None.

    Args:
        args: Parsed options.

    Returns:
        The CA files, or None when neither option is given.

    Raises:
        TestServerError: Only one of the two, or either without `--tls`.
    """
    if args.ca_cert is None and args.ca_key is None:
        return None
    if args.ca_cert is None or args.ca_key is None:
        raise TestServerError("--ca-cert and --ca-key go together")
    if args.tls is None:
        raise TestServerError("--ca-cert and --ca-key need --tls")
    return CaFiles(args.ca_cert, args.ca_key)


def _list() -> int:
    root = fixtures_dir()
    print(f"fixtures ({root}):")
    for path in fixture_files():
        print(f"  {path.relative_to(root)}")
    print("synthesized:")
    for name, synth in SYNTHESIZED.items():
        print(f"  {name}: {synth.description}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted (or `--duration`); returns the exit status.

    Args:
        args: Parsed options.

    Returns:
        0.

    Raises:
        TestServerError: Bad options or the server cannot start.
    """
    if args.list:
        return _list()
    if args.make_ca is not None:
        files = write_ca(args.make_ca)
        print(f"CA certificate: {files.cert_pem}\nCA key: {files.key_pem}", flush=True)
        return 0
    given_ca = ca_files(args)
    script = build_script(args)

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    old = signal.signal(signal.SIGTERM, on_signal)
    server = TestServer(script, tls=args.tls, port=args.port, validate=not args.no_validate,
                        tls_ca=given_ca, log=None if args.quiet else log)
    try:
        server.start()
        print(f"serving {server.url('/v1')} ({len(script.turns)} turn(s))", flush=True)
        if server.tls is not None:
            ca = server.tls.ca_pem
            if args.ca_out is not None:
                shutil.copyfile(ca, args.ca_out)
                ca = args.ca_out
            print(f"CA certificate: {ca} (TLS mode {args.tls})", flush=True)
        try:
            stop.wait(args.duration)
        except KeyboardInterrupt:
            pass
    finally:
        server.close()
        signal.signal(signal.SIGTERM, old)
        if args.record is not None:
            with args.record.open("w", encoding="utf-8") as out:
                for req in server.requests:
                    out.write(json.dumps(req.to_dict()) + "\n")
        for line in server.failures:
            print(f"problem: {line}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m agent_host.testserver`.

    Args:
        argv: Arguments (default: sys.argv[1:]).

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m agent_host.testserver",
                                     description=DESCRIPTION)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except TestServerError as err:
        print(f"testserver: {err}", file=sys.stderr)
        return 1
