"""Driving the agent's tool loop over a device console (the simulator's pty or a board).

:func:`ask` runs `agent ask`, answering each `Allow once? [y/N]` from a list (a key, or None
to let the deadline pass), and returns what was printed; :func:`tool_table` and
:func:`tool_counters` read `agent tools` and the tool lines of `agent status`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..errors import DeviceError
from .sim_device import PROMPT, SimDevice

#: What `agent ask` prints when the answer is complete and the frontend waits for Esc.
END = b"[Esc or Ctrl-X returns to the shell]"
#: The confirmation question (followed by the person's key and a line break).
CONFIRM = b"Allow once? [y/N] "
ESC = b"\x1b"

_SHELL = b"\r\n" + PROMPT


@dataclass
class AskRun:
    """What one `agent ask` printed.

    Attributes:
        lines: The output lines after the echo of the command, up to the closing line (or up
            to the shell prompt when the request went straight back to the shell).
        confirmations: How many times the device asked `Allow once? [y/N]`.
        back_at_shell: True when the request ended straight at the shell prompt (Esc while
            it ran) instead of at the `[Esc or Ctrl-X ...]` line.
    """

    lines: list[str]
    confirmations: int = 0
    back_at_shell: bool = False
    text: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.text = "\n".join(self.lines)

    @property
    def errors(self) -> list[str]:
        """The `agent: ...` error lines."""
        return [x for x in self.lines if x.startswith("agent: ")]

    @property
    def calls(self) -> list[str]:
        """The `[tool call] NAME ARGS` lines."""
        return [x for x in self.lines if x.startswith("[tool call] ")]

    @property
    def outcomes(self) -> list[str]:
        """The `[tool] NAME: ...` lines."""
        return [x for x in self.lines if x.startswith("[tool] ")]

    @property
    def tokens(self) -> str | None:
        """The `tokens: ...` line, or None."""
        return next((x for x in self.lines if x.startswith("tokens: ")), None)

    @property
    def answer(self) -> str:
        """The streamed answer: every line that is not a tool, confirm, error or usage line
        (a confirmation is its `[confirm] NAME` line and the argument lines under it)."""
        marks = ("[tool call] ", "[tool] ", "[confirm] ", "Allow once? [y/N]", "(no answer",
                 "agent: ", "tokens: ")
        kept = []
        confirming = False
        for x in self.lines:
            confirming = x.startswith("[confirm] ") or (confirming and x.startswith("  "))
            if x and not confirming and not x.startswith(marks):
                kept.append(x)
        return "\n".join(kept)


def ask(dut: SimDevice, prompt: str, answers: Sequence[bytes | None] = (),
        timeout: float = 30.0) -> AskRun:
    """Run `agent ask PROMPT`, answer its confirmations, and leave the frontend.

    Args:
        dut: The device.
        prompt: The prompt as typed (the shell's quoting applies).
        answers: One entry per confirmation, in order: the bytes to type (b"y", b"n", b"\\r",
            Esc) or None to type nothing and let the deadline deny.
        timeout: Seconds to wait for each step.

    Returns:
        What was printed.

    Raises:
        DeviceError: The device asked more often than there are answers, or fewer times, or
            a step timed out.
    """
    mark = len(dut.transcript)
    dut.write(f"agent ask {prompt}\r".encode())
    pending = list(answers)
    pos = mark
    asked = 0
    while True:
        which, part = dut.read_until_any([END, CONFIRM, _SHELL], timeout, start=pos)
        pos += len(part)
        if which == CONFIRM:
            asked += 1
            if not pending:
                raise DeviceError(f"confirmation {asked} was not expected: "
                                  f"{bytes(dut.transcript[mark:pos])[-300:]!r}")
            key = pending.pop(0)
            if key is not None:
                dut.write(key)
            continue
        break
    back_at_shell = which == _SHELL
    end = pos - len(which)
    if not back_at_shell:
        dut.write(ESC)
        dut.read_until(PROMPT, timeout, start=pos)
    if pending:
        raise DeviceError(f"{len(pending)} answer(s) left: the device asked {asked} time(s)")
    text = bytes(dut.transcript[mark:end]).decode(errors="replace")
    lines = text.split("\r\n")[1:]  # the first line is the echo
    while lines and lines[-1] == "":
        lines.pop()
    return AskRun(lines, asked, back_at_shell)


def configure(dut: SimDevice, url: str, *, policy: str | None = None,
              max_tools: int | None = None, model: str = "test-model",
              key: str = "sk-test") -> None:
    """Point the device at a test server and set the tool policy and budget.

    Args:
        dut: The device.
        url: The endpoint URL (its path selects the protocol).
        policy: "off", "read-only" or "confirm", or None to keep the current one.
        max_tools: The per-request budget, or None to keep it.
        model: The model name.
        key: The API key.

    Raises:
        DeviceError: A setting was not accepted.
    """
    steps = [(f"agent config endpoint {url}", "endpoint set"),
             (f"agent config model {model}", f"model set to {model}"),
             (f"agent config key {key}", "key set")]
    if policy is not None:
        steps.append((f"agent config tools {policy}", ""))
    if max_tools is not None:
        steps.append((f"agent config max-tools {max_tools}", ""))
    for command, want in steps:
        out = dut.exec_command(command)
        if not out or not out[0].startswith(want) or any(x.startswith("agent: ") for x in out):
            raise DeviceError(f"{command!r} answered {out!r}")


@dataclass(frozen=True)
class ToolRow:
    """One line of `agent tools`.

    Attributes:
        name: The tool's name.
        domain: Its domain.
        risk: Its risk class (read, sensitive, mutating, disruptive).
        available: "bootstrap", "yes" or "no".
        policy: What the current policy does with it: "runs", "asks" or "denied".
        needs: The capability it needs, or "-".
        reason: Why it is not available ("" when it is): the `  unavailable: ` line under
            its row.
    """

    name: str
    domain: str
    risk: str
    available: str
    policy: str
    needs: str
    reason: str = ""


_FOOTER = re.compile(r"^(\d+) tools; at most (\d+) offered per provider turn$")
_REASON = "  unavailable: "


def tool_table(dut: SimDevice) -> tuple[str, list[ToolRow]]:
    """Read `agent tools`.

    Args:
        dut: The device.

    Returns:
        (the policy it names, one row per registered tool in registry order).

    Raises:
        DeviceError: The output does not have the documented shape.
    """
    out = dut.exec_command("agent tools")
    if len(out) < 3 or not out[0].startswith("policy: ") or out[1].split()[:2] != ["tool",
                                                                                    "domain"]:
        raise DeviceError(f"agent tools printed {out!r}")
    footer = _FOOTER.match(out[-1])
    rows: list[ToolRow] = []
    for line in out[2:-1]:
        if line.startswith(_REASON):
            if not rows or rows[-1].available != "no" or rows[-1].reason:
                raise DeviceError(f"agent tools: {line!r} does not follow an unavailable row")
            rows[-1] = replace(rows[-1], reason=line.removeprefix(_REASON))
            continue
        parts = line.split()
        if len(parts) != 6:
            raise DeviceError(f"agent tools row {line!r}")
        rows.append(ToolRow(*parts))
    missing = [r.name for r in rows if (r.available == "no") != bool(r.reason)]
    if missing:
        raise DeviceError(f"agent tools: a reason missing or extra for {missing}")
    if footer is None or int(footer.group(1)) != len(rows):
        raise DeviceError(f"agent tools footer {out[-1]!r} for {len(rows)} rows")
    return out[0].removeprefix("policy: "), rows


@dataclass(frozen=True)
class ToolCounters:
    """The tool lines of `agent status`.

    Attributes:
        executed: Calls executed since boot.
        denied: Calls denied since boot.
        failed: Calls that failed since boot.
        last_used: Tool calls of the last request (None before the first).
        last_budget: Its budget (None before the first).
    """

    executed: int
    denied: int
    failed: int
    last_used: int | None
    last_budget: int | None


_CALLS = re.compile(r"^tool calls: (\d+) executed, (\d+) denied, (\d+) failed$")
_LAST = re.compile(r"^last request: (?:(\d+) of (\d+) tool calls used|none yet)$")


def tool_counters(dut: SimDevice) -> ToolCounters:
    """Read the tool counters of `agent status`.

    Args:
        dut: The device.

    Returns:
        The counters.

    Raises:
        DeviceError: The lines are missing or malformed.
    """
    out = dut.exec_command("agent status")
    calls = [m for m in map(_CALLS.match, out) if m]
    last = [m for m in map(_LAST.match, out) if m]
    if len(calls) != 1 or len(last) != 1:
        raise DeviceError(f"agent status has no tool counters: {out!r}")
    used, budget = last[0].group(1), last[0].group(2)
    return ToolCounters(int(calls[0].group(1)), int(calls[0].group(2)), int(calls[0].group(3)),
                        None if used is None else int(used),
                        None if budget is None else int(budget))
