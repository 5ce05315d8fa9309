"""``myc bench --contend``: the suite measured while another process keeps one core busy.

A shared machine is the ordinary case (CI runners, notebooks, a laptop with a browser
open): a framework whose thread pools assume every core is theirs stalls there, when a
worker waits on a spin barrier for a thread that the OS has descheduled.  The load is a
separate process spinning in pure Python, pinned to the last core the run may use, so
every framework, measured interleaved as always, faces the same load.
"""

from __future__ import annotations

import os
import subprocess
import sys

_SPIN = "while True:\n    pass\n"


class Contender:
    """A process that keeps one core busy until ``stop`` (or the harness's exit)."""

    def __init__(self) -> None:
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self.core = cores[-1] if cores else None
        self.proc: subprocess.Popen | None = None

    def start(self) -> dict:
        core = self.core

        def pin() -> None:  # in the child, before it spins
            if core is not None:
                os.sched_setaffinity(0, {core})

        self.proc = subprocess.Popen([sys.executable, "-c", _SPIN], preexec_fn=pin,
                                     stdin=subprocess.DEVNULL)
        return {"busy_core": core, "pid": self.proc.pid, "method": "a python busy loop"}

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def __enter__(self) -> Contender:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
