"""Live progress: a rich display on a terminal, plain lines otherwise (CI, pipes, tests)."""

from __future__ import annotations

import sys
import time


class PlainProgress:
    """One line per event, flushed; nothing redrawn."""

    def __init__(self, total: int, stream=None, quiet: bool = False):
        self.total = total
        self.done = 0
        self.stream = stream or sys.stdout
        self.quiet = quiet
        self._last = 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def log(self, msg: str, style: str | None = None) -> None:
        if not self.quiet:
            print(msg, file=self.stream, flush=True)

    def start(self, name: str, what: str) -> None:
        self.log(f"[{self.done + 1}/{self.total}] {name}: {what}")

    def update(self, name: str, info: str, fraction: float | None = None) -> None:
        now = time.monotonic()
        if now - self._last >= 5.0:  # a heartbeat, not a flood
            self._last = now
            self.log(f"    {name}: {info}")

    def finish(self, name: str, summary: str, ok: bool = True) -> None:
        self.done += 1
        self.log(f"    {name}: {summary}" if ok else f"    {name}: !! {summary}")


class RichProgress(PlainProgress):
    """A progress bar over workloads plus a line for the one running."""

    def __init__(self, total: int, quiet: bool = False):
        super().__init__(total, quiet=quiet)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=False)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.overall = self.progress.add_task("workloads", total=total, info="")
        self.current = self.progress.add_task("", total=1.0, info="", visible=False)

    def __enter__(self):
        self.progress.start()
        return self

    def __exit__(self, *exc):
        self.progress.stop()
        return False

    def log(self, msg: str, style: str | None = None) -> None:
        if not self.quiet:
            self.progress.console.print(msg, style=style, markup=False, highlight=False)

    def start(self, name: str, what: str) -> None:
        self.progress.update(self.current, description=name, info=what, completed=0.0, visible=True)

    def update(self, name: str, info: str, fraction: float | None = None) -> None:
        kw = {} if fraction is None else {"completed": min(max(fraction, 0.0), 1.0)}
        self.progress.update(self.current, info=info, **kw)

    def finish(self, name: str, summary: str, ok: bool = True) -> None:
        self.done += 1
        self.progress.update(self.overall, advance=1)
        self.progress.update(self.current, visible=False)
        self.log(f"{name}: {summary}", style=None if ok else "bold red")


def make_progress(total: int, quiet: bool = False, plain: bool = False) -> PlainProgress:
    """Rich when stdout is a terminal and rich is installed; plain lines otherwise."""
    if not plain and not quiet and sys.stdout.isatty():
        try:
            return RichProgress(total)
        except ImportError:
            pass
    return PlainProgress(total, quiet=quiet)
