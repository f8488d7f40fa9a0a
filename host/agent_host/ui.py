"""Tables, key/value blocks and progress bars: rich on a terminal, plain text otherwise.

Plain output is stable for scripts: a table is a header line and one line per row, columns
separated by at least two spaces; a key/value block is `key: value` lines; no progress bar.

Everything printed here may come from the device (titles, model names, reasons, tool
descriptions), so it goes through safe_text.terminal_safe() first: no escape sequence or
control character reaches the terminal, and rich is given plain Text, never markup.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from .safe_text import terminal_safe


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _text(value: object) -> Text:
    """@value for rich: terminal-safe, and plain text (a "[bold]" in a title stays as typed)."""
    return Text(terminal_safe("" if value is None else str(value)))


class Output:
    """Where a command prints: stdout for results, stderr for progress and notes."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None,
                 rich: bool | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.rich = _isatty(self.out) if rich is None else rich
        self.progress_bars = _isatty(self.err) if rich is None else rich
        self._console = Console(file=self.out, highlight=False) if self.rich else None

    def line(self, text: str = "") -> None:
        print(terminal_safe(text), file=self.out)

    def note(self, text: str) -> None:
        print(terminal_safe(text), file=self.err)

    def flush(self) -> None:
        """Send what was printed now: a command that keeps running (a live view) must not
        leave its output in the buffer of a pipe."""
        self.out.flush()
        self.err.flush()

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[str]],
              title: str | None = None) -> None:
        if self._console is not None:
            table = Table(title=_text(title) if title else None, title_justify="left",
                          show_edge=False)
            for index, name in enumerate(columns):
                numeric = bool(rows) and all(str(row[index]).isdigit() for row in rows)
                table.add_column(_text(name), overflow="fold",
                                 justify="right" if numeric else "left")
            for row in rows:
                table.add_row(*(_text(cell) for cell in row))
            self._console.print(table)
            return
        if title:
            self.line(title)
        safe = [[terminal_safe(str(cell)) for cell in row] for row in (columns, *rows)]
        widths = [max(len(c) for c in col) for col in zip(*safe, strict=False)]
        for row in safe:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
            self.line("  ".join(cells).rstrip())

    def pairs(self, items: Sequence[tuple[str, str]], title: str | None = None) -> None:
        if self._console is not None:
            table = Table(title=_text(title) if title else None, title_justify="left",
                          show_header=False, show_edge=False, box=None)
            table.add_column(style="bold")
            table.add_column(overflow="fold")
            for key, value in items:
                table.add_row(_text(key), _text(value))
            self._console.print(table)
            return
        if title:
            self.line(title)
        for key, value in items:
            self.line(f"{key}: {value}")

    @contextmanager
    def transfer(self, description: str) -> Iterator[Callable[[int, int], None]]:
        """A byte progress bar on stderr when it is a terminal; yields update(done, total)."""
        if not self.progress_bars:
            yield lambda done, total: None
            return
        progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                            TransferSpeedColumn(), TimeRemainingColumn(),
                            console=Console(file=self.err), transient=True)
        task = progress.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        with progress:
            yield update
