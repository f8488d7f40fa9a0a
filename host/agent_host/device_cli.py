"""The device commands of `agent-host` / `west agent`: config, status, forget, list, export,
delete, tools, man, import, modules, remove (over the agent SMP group) and shell (the device
console).

docs/host-cli.md lists every option, message and exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from . import convfile, feeder, man_pages, module_dir, terminal, tool_status
from .errors import DeviceRefusedError, DeviceTimeoutError, TransportError, UsageError
from .mgmt import messages
from .mgmt.device import DEFAULT_TIMEOUT, Device, open_device
from .mgmt.transport import DEFAULT_BAUDRATE, MAX_MTU, MIN_MTU, Endpoint, parse_udp
from .ui import Output

KEY_ENV = "AGENT_KEY"
PORT_ENV = "AGENT_PORT"

DeviceCommand = Callable[[Device, argparse.Namespace, Output], Awaitable[int]]


# -- argument types ----------------------------------------------------------------------------
def _slot(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"slot must be a number from 1 up, not {text!r}")
    return int(text)


def _mtu(text: str) -> int:
    if not text.isdigit() or not MIN_MTU <= int(text) <= MAX_MTU:
        raise argparse.ArgumentTypeError(f"must be a number from {MIN_MTU} to {MAX_MTU}, "
                                         f"not {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be seconds above 0 (at most 3600), not {text!r}")
    return value


def _baud(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text!r}")
    return int(text)


def _agent_id(text: str) -> int:
    if not text.isdigit() or len(text) > 3:
        raise argparse.ArgumentTypeError(f"{text!r} is not an agent id (0, 1, 2, ...)")
    return int(text)


def _selection(text: str) -> tuple[str, str]:
    group, sep, value = text.partition("=")
    if not sep or group not in (*tool_status.GROUPS, "all") or \
            value not in ("on", "off", "inherit"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected GROUP=on|off|inherit with GROUP one of "
            f"{', '.join(tool_status.GROUPS)} or all")
    return group, value


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """The options every device command shares."""
    group = parser.add_argument_group("device connection (one of; default: --port $AGENT_PORT)")
    where = group.add_mutually_exclusive_group()
    where.add_argument("--port", metavar="DEVICE",
                       help="serial port: a board's UART (/dev/ttyACM0) or the simulator's pty")
    where.add_argument("--udp", metavar="HOST[:PORT]",
                       help="SMP over UDP (port 1337 when not given; IPv6 as [ADDR]:PORT)")
    where.add_argument("--ble", metavar="ADDRESS",
                       help="SMP over Bluetooth LE: the device's address or name (needs the "
                            "ble extra: pip install 'zephyr-agent-host[ble]')")
    group.add_argument("--baud", type=_baud, default=DEFAULT_BAUDRATE, metavar="RATE",
                       help=f"serial baud rate (default {DEFAULT_BAUDRATE})")
    group.add_argument("--mtu", type=_mtu, metavar="BYTES",
                       help="largest SMP message the device takes (default: asked from the "
                            "device, else 256; UDP: the link MTU, default 1500)")
    group.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                       help=f"wait for each answer (and the connection) at most this long "
                            f"(default {DEFAULT_TIMEOUT:g})")


def endpoint_of(args: argparse.Namespace) -> Endpoint:
    if args.udp:
        host, port = parse_udp(args.udp)
        return Endpoint("udp", host, port=port, mtu=args.mtu)
    if args.ble:
        return Endpoint("ble", args.ble, mtu=args.mtu)
    device: str = args.port or os.environ.get(PORT_ENV, "")
    if not device:
        raise UsageError("no device: give --port DEVICE, --udp HOST[:PORT] or --ble ADDRESS "
                         f"(or set {PORT_ENV})")
    return Endpoint("serial", device, baudrate=args.baud, mtu=args.mtu)


def _run(args: argparse.Namespace, command: DeviceCommand) -> int:
    endpoint = endpoint_of(args)
    out = Output()

    async def session() -> int:
        async with open_device(endpoint, args.timeout) as device:
            return await command(device, args, out)

    return asyncio.run(session())


# -- config ------------------------------------------------------------------------------------
def read_key(args: argparse.Namespace) -> str:
    """The key from stdin (--key-stdin), AGENT_KEY, or a hidden prompt; never from argv."""
    if args.key_stdin:
        key = sys.stdin.readline().rstrip("\r\n")
    elif os.environ.get(KEY_ENV):
        key = os.environ[KEY_ENV]
    elif sys.stdin.isatty():
        try:
            key = getpass.getpass("API key (hidden): ")
        except EOFError:
            key = ""
    else:
        raise UsageError("config key: no key: type it at the hidden prompt (on a terminal), "
                         f"pipe it with --key-stdin, or set {KEY_ENV}")
    if not key:
        raise UsageError("config key: the key is empty; nothing changed")
    return key


def _check_config_args(args: argparse.Namespace) -> None:
    if args.name == "key" and args.value is not None and args.value != "clear":
        # Refused before anything is sent: it would already be in the shell's history and
        # visible to every user in the process list.
        raise UsageError("config key: the key is never taken from the command line (shell "
                         "history, process list); use the hidden prompt, --key-stdin or "
                         f"{KEY_ENV}")
    if args.key_stdin and (args.name != "key" or args.value is not None):
        raise UsageError("--key-stdin goes only with `config key`")


async def _config(device: Device, args: argparse.Namespace, out: Output) -> int:
    name, value = args.name, args.value
    if name is None:
        config = await device.config()
        out.pairs([("endpoint", config.endpoint or "(not set)"),
                   ("protocol", config.protocol),
                   ("model", config.model or "(not set)"),
                   ("key", config.key),
                   ("reasoning", config.reasoning),
                   ("tools", config.tools),
                   ("max-tools", str(config.max_tools)),
                   ("user", config.user or "(not set)"),
                   ("embeddings", config.embeddings or "(not set)"),
                   ("embeddings-model", config.embeddings_model or "(not set)")])
    elif name == "key" and value == "clear":
        await device.clear_key()
        out.line("key cleared")
    elif name == "key" and value is None:
        stored = await device.config_set("key", args.key)
        out.line(f"key {stored}")
    elif value is None:
        shown = await device.config_get(name)
        out.line(f"{name}: {shown or '(not set)'}")
    else:
        stored = await device.config_set(name, value)
        out.line(f"{name} set to {stored}" if stored else f"{name} cleared")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    _check_config_args(args)
    args.key = read_key(args) if args.name == "key" and args.value is None else None
    return _run(args, _config)


# -- status ------------------------------------------------------------------------------------
async def _status(device: Device, args: argparse.Namespace, out: Output) -> int:
    st = await device.status()
    calls = st.tool_calls
    out.pairs([("version", st.agent_version), ("board", st.board), ("protocol", st.protocol),
               ("endpoint", st.endpoint or "(not set)"), ("model", st.model or "(not set)"),
               ("key", st.key), ("reasoning", st.reasoning), ("tools", st.tools),
               ("max-tools", str(st.max_tools)), ("user", st.user or "(not set)"),
               ("tool calls", (f"{calls.executed} executed, {calls.denied} denied, "
                               f"{calls.failed} failed; last request {calls.last_used} of "
                               f"{calls.last_budget}"))])
    out.line()
    out.table(["POOL", "CLASS", "BLOCK", "TOTAL", "FREE", "LOWEST", "PEAK HELD", "PEAK WRITTEN"],
              [[p.name, p.pool_class, str(p.block), str(p.total), str(p.free), str(p.lowest),
                str(p.held_peak), str(p.written_peak)] for p in st.pools], title="memory pools")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    return _run(args, _status)


# -- forget ------------------------------------------------------------------------------------
def confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise UsageError("forget asks for confirmation on a terminal; give --yes to skip it")
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


async def _forget(device: Device, args: argparse.Namespace, out: Output) -> int:
    await device.forget()
    out.line("every agent setting erased, the key included")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    if not args.yes and not confirm("Erase every agent setting on the device, the key "
                                    "included?"):
        Output().note("cancelled; nothing erased")
        return 0
    return _run(args, _forget)


# -- list, export, delete ----------------------------------------------------------------------
async def _list(device: Device, args: argparse.Namespace, out: Output) -> int:
    convs = await device.conversations()
    for slot, fields in convs.repaired:
        out.note(f"list: warning: slot {slot}: {' and '.join(fields)} not valid UTF-8; "
                 "shown with U+FFFD")
    for bad in convs.unreadable:
        where = f"slot {bad.slot}" if bad.slot is not None else "an entry without a slot"
        out.note(f"list: warning: {where}: unreadable entry ({bad.problem})")
    rows = [(c.slot, [str(c.slot), str(c.turns), str(c.bytes), c.model, c.title,
                      "damaged" if c.damaged else "ok"]) for c in convs.entries]
    rows += [(b.slot, [str(b.slot), "", "", "", "", "unreadable"])
             for b in convs.unreadable if b.slot is not None]
    title = f"{convs.dir}: {len(rows)} of {convs.slots} slots used"
    if not rows:
        out.line(title)
        return 0
    out.table(["SLOT", "TURNS", "BYTES", "MODEL", "TITLE", "STATE"],
              [row for _, row in sorted(rows, key=lambda r: r[0] or 0)], title=title)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    return _run(args, _list)


def write_atomically(path: Path, data: bytes) -> None:
    """Write @data to @path through a temporary file beside it: no partial file on failure.

    The file gets the mode of the file it replaces, else the one the umask gives a new file.
    """
    directory = path.parent if str(path.parent) else Path(".")
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0o022)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


async def _export(device: Device, args: argparse.Namespace, out: Output) -> int:
    with out.transfer(f"slot {args.slot}") as progress:
        export = await device.export(args.slot, progress)
    conv = export.conversation
    if args.output == "-":
        sys.stdout.buffer.write(export.data)
        sys.stdout.buffer.flush()
    elif args.output is not None or not args.text:
        path = Path(args.output or f"conv{args.slot}.bin")
        try:
            write_atomically(path, export.data)
        except OSError as err:
            raise UsageError(f"export {args.slot}: cannot write {path}: "
                             f"{err.strerror or err}") from None
        out.note(f"slot {args.slot}: {len(export.data)} bytes, {conv.turns} turns, "
                 f"checked; written to {path}")
    if args.text:
        out.line(convfile.transcript(conv).rstrip("\n"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    if args.output == "-" and args.text:
        raise UsageError("export: -o - (the raw file on stdout) and --text exclude each other")
    return _run(args, _export)


async def _delete(device: Device, args: argparse.Namespace, out: Output) -> int:
    await device.delete(args.slot)
    out.line(f"slot {args.slot} deleted")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    return _run(args, _delete)


# -- tools -------------------------------------------------------------------------------------
async def _tools(device: Device, args: argparse.Namespace, out: Output) -> int:
    table = await device.tools()
    out.table(["NAME", "DOMAIN", "RISK", "AVAILABLE", "POLICY", "NEEDS", "REASON"],
              [[t.name, t.domain, t.risk, t.available, t.policy, t.needs or "-", t.reason]
               for t in table.tools],
              title=f"tool policy: {table.policy}; {len(table.tools)} tools")
    return 0


def _show_system_tools(out: Output, status: tool_status.AgentStatus) -> None:
    out.table(tool_status.COLUMNS, tool_status.rows(status),
              title=f"System tools: agent {status.agent}, role {status.role or 'none'}, "
                    f"tools.mask {status.mask}"
                    + ("; its stored choices are invalid and ignored"
                       if status.record_invalid else ""))


async def _read_agent(device: Device, agent: int) -> tool_status.AgentStatus:
    """A refresh of `agent`, then the whole stream: the agent's newest record."""
    stream = await device.tool_status(agent=agent, refresh=True)
    status = tool_status.latest(tool_status.parse(stream.data), agent)
    if status is None:
        raise TransportError(f"tool status: the device's stream has no record of agent {agent}")
    return status


async def _system_tools(device: Device, args: argparse.Namespace, out: Output) -> int:
    for group, value in args.set or []:
        await device.tool_select(group, value, args.select_agent)
    status = await _read_agent(device, args.agent)
    _show_system_tools(out, status)
    return 0


LIVE_ERRORS = (TransportError, DeviceTimeoutError, OSError, asyncio.TimeoutError,
               tool_status.StreamError)
"""What a stopped connection raises (and a stream read across a restart, cut or mixed);
live mode shows one status line and waits for the device instead."""


async def _live_session(device: Device, args: argparse.Namespace, out: Output,
                        shown: list[tool_status.AgentStatus]) -> None:
    """Show the table, then follow the stream and show it again when the agent's state
    changes; returns only by raising (the connection stopped)."""
    stream = await device.tool_status(agent=args.agent, refresh=True)
    data = stream.data
    while True:
        status = tool_status.latest(tool_status.parse(data), args.agent)
        if status is None:
            raise TransportError(f"tool status: the device's stream has no record of agent "
                                 f"{args.agent}")
        if not shown or _changed(shown[-1], status):
            _show_system_tools(out, status)
            out.flush()
            shown.append(status)
        await asyncio.sleep(args.interval)
        try:
            more = await device.tool_status(off=len(data))
        except DeviceRefusedError as err:
            if err.rc_name != "ERANGE":
                raise
            more = None  # the stream started again and is shorter than what was read
        if more is None or more.gen != stream.gen:
            stream = await device.tool_status(agent=args.agent, refresh=True)
            data = stream.data
        else:
            data += more.data


def _changed(old: tool_status.AgentStatus, new: tool_status.AgentStatus) -> bool:
    """Whether the table would show something else (the sequence number aside)."""
    return (old.role, old.mask, old.record, old.record_invalid, old.groups) != \
        (new.role, new.mask, new.record, new.record_invalid, new.groups)


def _live(args: argparse.Namespace) -> int:
    endpoint = endpoint_of(args)
    out = Output()
    shown: list[tool_status.AgentStatus] = []

    async def follow() -> int:
        lost = False
        while True:
            try:
                async with open_device(endpoint, args.timeout) as device:
                    if lost:
                        out.note(f"connection to {endpoint} is back")
                        out.flush()
                        lost = False
                        shown.clear()
                    await _live_session(device, args, out, shown)
            except LIVE_ERRORS as err:
                if not lost:
                    out.note(f"connection to {endpoint} stopped ({err}); waiting for it")
                    out.flush()
                    lost = True
                await asyncio.sleep(args.interval)

    try:
        return asyncio.run(follow())
    except KeyboardInterrupt:
        return 0


def cmd_tools(args: argparse.Namespace) -> int:
    if args.interval is not None and not args.live:
        raise UsageError("tools: --interval goes with --live")
    args.interval = 1.0 if args.interval is None else args.interval
    if args.set and args.live:
        raise UsageError("tools: --set and --live exclude each other")
    if args.live and args.agent is None:
        raise UsageError("tools --live follows the System tools table of one agent: give "
                         "--agent ID")
    if args.live:
        return _live(args)
    for group, value in args.set or []:
        if value == "inherit" and args.agent is None:
            raise UsageError(f"tools --set {group}=inherit: only an agent's choice "
                             "inherits; give --agent ID")
    args.select_agent = args.agent  # None: --set changes the instance defaults
    if args.set and args.agent is None:
        args.agent = 0  # then agent 0's table is shown
    if args.agent is not None:
        return _run(args, _system_tools)
    return _run(args, _tools)


# -- import, modules, remove -------------------------------------------------------------------
OUTCOMES = {"installed": "installed", "replaced": "replaced the installed one",
            "unchanged": "unchanged: the same text was installed"}
"""How the console's `agent import` words each outcome."""


async def _import(device: Device, args: argparse.Namespace, out: Output) -> int:
    text: module_dir.ModuleText = args.module
    with out.transfer(f"{text.kind} {text.name}") as progress:
        done = await device.import_text(text, progress, what=f"import {args.directory}")
    if done.resumed_at:
        out.note(f"import {args.directory}: continued an interrupted transfer at byte "
                 f"{done.resumed_at} of {done.size}")
    out.line(f"{done.kind} {done.name} accepted ({OUTCOMES.get(done.state, done.state)})"
             + ("" if done.persisted else "; not journaled: no /lfs, lost at restart"))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    # Read (and refused) before anything is sent.
    args.module = module_dir.read_module(Path(args.directory))
    return _run(args, _import)


async def _modules(device: Device, args: argparse.Namespace, out: Output) -> int:
    catalog = await device.modules()
    rows = [[e.name, e.kind, str(e.size), e.sha256,
             e.state if e.state == "installed" else f"{e.state} ({e.received} of {e.size} bytes)"]
            for e in catalog.entries]
    title = f"catalog: {len(rows)} of {catalog.slots} entries"
    if not rows:
        out.line(title)
        return 0
    out.table(["NAME", "KIND", "SIZE", "SHA256", "STATE"], rows, title=title)
    return 0


def cmd_modules(args: argparse.Namespace) -> int:
    return _run(args, _modules)


async def _remove(device: Device, args: argparse.Namespace, out: Output) -> int:
    await device.remove(args.name)
    out.line(f"{args.name} removed")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    return _run(args, _remove)


# -- feed --------------------------------------------------------------------------------------
def cmd_feed(args: argparse.Namespace) -> int:
    dirs = [Path(d) for d in args.directories]
    for folder in dirs:
        if not folder.is_dir():
            raise UsageError(f"feed: {folder} is not a directory")
    return asyncio.run(feeder.serve(endpoint_of(args), dirs, args.timeout))


# -- man ---------------------------------------------------------------------------------------
def cmd_man_install(args: argparse.Namespace) -> int:
    return _run(args, man_pages.install)


def cmd_man_remove(args: argparse.Namespace) -> int:
    return _run(args, man_pages.remove)


# -- shell -------------------------------------------------------------------------------------
def cmd_shell(args: argparse.Namespace) -> int:
    if args.udp or args.ble:
        raise UsageError("shell needs the console's serial port (--port); UDP and BLE carry "
                         "SMP only")
    endpoint = endpoint_of(args)
    try:
        return terminal.run(endpoint.address, endpoint.baudrate, idle=args.idle)
    except OSError as err:
        raise TransportError(f"shell: {err.strerror or err}") from None


# -- parser ------------------------------------------------------------------------------------
def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the device commands to the `agent-host` parser's subcommands."""
    p = sub.add_parser(
        "config", help="show or change the agent's settings on the device",
        description="Without NAME: every setting. With NAME: its value. With NAME VALUE: set "
                    "it. The key is write-only: `config key` reads it from a hidden prompt, "
                    f"from stdin (--key-stdin) or from ${KEY_ENV}, never from the command "
                    "line; `config key clear` erases it.")
    p.add_argument("name", nargs="?", choices=messages.CONFIG_NAMES, metavar="NAME",
                   help=f"one of: {', '.join(messages.CONFIG_NAMES)}")
    p.add_argument("value", nargs="?", metavar="VALUE", help="the new value")
    p.add_argument("--key-stdin", action="store_true",
                   help="config key: read the key from the first line of stdin")
    add_connection_options(p)
    p.set_defaults(run=cmd_config)

    p = sub.add_parser("status", help="the device's agent status",
                       description="Version, board, settings (the key only as set or not "
                                   "set), tool call counters and memory pools.")
    add_connection_options(p)
    p.set_defaults(run=cmd_status)

    p = sub.add_parser("forget", 
                       help="erase every agent setting on the device, the key included",
                       description="Erases every setting below agent/, the key included; "
                                   "asks first unless --yes.")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_connection_options(p)
    p.set_defaults(run=cmd_forget)

    p = sub.add_parser("list", help="the stored conversations",
                       description="The conversation slots in use: turns, size, model, title.")
    add_connection_options(p)
    p.set_defaults(run=cmd_list)

    p = sub.add_parser(
        "export", help="copy a stored conversation file from the device",
        description="Reads slot SLOT's conversation file page by page, checks every CRC of "
                    "the format (docs/conversation-format.md) and writes the raw file "
                    "(default convSLOT.bin); --text prints the transcript.")
    p.add_argument("slot", type=_slot, metavar="SLOT", help="the slot number (see list)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="where to write the raw file ('-': stdout)")
    p.add_argument("--text", action="store_true",
                   help="print the transcript (with -o, also write the file)")
    add_connection_options(p)
    p.set_defaults(run=cmd_export)

    p = sub.add_parser("delete", help="delete a stored conversation",
                       description="Deletes slot SLOT's conversation.")
    p.add_argument("slot", type=_slot, metavar="SLOT", help="the slot number (see list)")
    add_connection_options(p)
    p.set_defaults(run=cmd_delete)

    p = sub.add_parser("tools", help="the device's tool table and policy",
                       description="Every registered tool: domain, risk, availability, what "
                                   "the policy does with it, and what it needs. With --agent "
                                   "ID: the System tools table of that agent instead, read "
                                   "from the device's tool status stream (tools.jsonl): per "
                                   "selection group the instance default, the agent's "
                                   "override and the effective next-turn state "
                                   "('Unavailable': enabled, but no granted, available tool).")
    p.add_argument("--agent", type=_agent_id, metavar="ID",
                   help="show the System tools table of agent ID (0: the console agent); "
                        "each run refreshes the agent's state first")
    p.add_argument("--live", action="store_true",
                   help="with --agent: keep following the stream and show the table again "
                        "when it changes; a stopped connection shows one status line until "
                        "it is back (Ctrl-C ends)")
    p.add_argument("--set", type=_selection, action="append", metavar="GROUP=VALUE",
                   help="change the selection first: with --agent, that agent's choice "
                        "(on, off or inherit); without, the instance default (on or off), "
                        "then agent 0's table is shown. GROUP is a group name or all; may "
                        "be repeated")
    p.add_argument("--interval", type=_seconds, default=None, metavar="SECONDS",
                   help="with --live: how often to read the stream (default 1)")
    add_connection_options(p)
    p.set_defaults(run=cmd_tools)

    p = sub.add_parser(
        "import", help="install a module directory (a role, a skill or a tool) on the device",
        description="Reads DIR's module.manifest and the body file it names (or a skill's "
                    "SKILL.md alone) and sends them over SMP: a head with the name, kind, "
                    "sizes and SHA-256, then parts as large as the device's buffer allows. "
                    "The device validates the whole text before it installs it (replacing a "
                    "module of that name) and refuses it with the reason its console's "
                    "`agent import` gives. A transfer that stopped midway continues where it "
                    "stopped when the same text is sent again. Nothing is executed.")
    p.add_argument("directory", metavar="DIR", help="the module's directory")
    add_connection_options(p)
    p.set_defaults(run=cmd_import)

    p = sub.add_parser("modules", help="the device's module catalog",
                       description="Every catalog entry: name, kind, size, SHA-256 and state "
                                   "(installed, or incomplete with the bytes received).")
    add_connection_options(p)
    p.set_defaults(run=cmd_modules)

    p = sub.add_parser("remove", help="remove an installed module from the device",
                       description="Removes the installed module NAME (journaled). The device "
                                   "refuses an unknown name, an incomplete arrival, a role in "
                                   "use, an active tool and a built-in tool.")
    p.add_argument("name", metavar="NAME", help="the module's name (see modules)")
    add_connection_options(p)
    p.set_defaults(run=cmd_remove)

    p = sub.add_parser(
        "feed", help="run the device's imported host tools on this computer",
        description="Stays connected to the device and answers its host tool calls (tool "
                    "modules with runtime host): finds the module directory named by the "
                    "call among DIR... (a module directory, or a folder holding it), checks "
                    "the entry file's SHA-256 against the digest recorded at import, runs it "
                    "directly (no shell) with the declared arguments as this account, in the "
                    "module directory, and sends back its exit status and its output (stdout "
                    "and stderr, at most the tool's output bound). Host tools are trusted "
                    "programs with this account's rights. Reconnects when the device "
                    "restarts; Ctrl-C stops it.")
    p.add_argument("directories", nargs="+", metavar="DIR",
                   help="a module directory, or a folder of module directories")
    add_connection_options(p)
    p.set_defaults(run=cmd_feed)

    p = sub.add_parser(
        "man", help="install a verified reference page on the device's SD card",
        description="A page on the SD card replaces the built-in page of its topic for `man "
                    "TOPIC` and firmware_reference only when its SHA-256 is the one recorded "
                    "on the device (docs/reference-format.md, 'SD overrides').")
    man_sub = p.add_subparsers(dest="man_command", metavar="{install,remove}", required=True)
    q = man_sub.add_parser(
        "install", help="write PAGE onto the card and record its SHA-256 on the device",
        description="Writes PAGE to CARD/man/TOPIC.md and records its SHA-256 on the "
                    "device's LittleFS over SMP. PAGE is a page of docs/reference/ (its front "
                    "matter is taken off) or a page as the card holds it: the body, a line "
                    "'## Contract', the contract.")
    q.add_argument("page", metavar="PAGE", help="the page file")
    q.add_argument("--card", required=True, metavar="DIR",
                   help="the SD card's folder on this host (a card reader's mount, or the "
                        "simulator's --sd folder)")
    q.add_argument("--topic", metavar="TOPIC",
                   help="the built-in page it replaces (default: the front matter's topic, "
                        "else PAGE's name without .md)")
    add_connection_options(q)
    q.set_defaults(run=cmd_man_install)
    q = man_sub.add_parser(
        "remove", help="forget TOPIC's digest on the device (and delete the card's page)",
        description="Forgets the SHA-256 recorded for TOPIC, so the device serves its built-in "
                    "page again; with --card also deletes CARD/man/TOPIC.md.")
    q.add_argument("topic", metavar="TOPIC", help="the page's topic")
    q.add_argument("--card", metavar="DIR", help="also delete the page from this card folder")
    add_connection_options(q)
    q.set_defaults(run=cmd_man_remove)

    p = sub.add_parser(
        "shell", help="an interactive terminal on the device console",
        description="Connects this terminal to the device console (raw mode; Ctrl-] leaves). "
                    "From a pipe, sends the input and prints the output until the device "
                    "has been silent for --idle seconds.")
    p.add_argument("--idle", type=_seconds, default=1.0, metavar="SECONDS",
                   help="from a pipe: leave after this much silence once the input has "
                        "ended (default 1)")
    add_connection_options(p)
    p.set_defaults(run=cmd_shell)
