"""The baseline's side of ``--baseline DIR``: a worker process that runs another checkout's
myc and times it with this checkout's harness.

The harness (:mod:`benchmarks.baseline`) starts it with ``PYTHONPATH`` pointing at a
directory where ``myc`` is the baseline's and ``benchmarks`` is this checkout's, so the
workloads' definitions, the inputs, the first-call procedure (:class:`MycAdapter`) and the
timing of one sample (:func:`benchmarks.runner.timed_sample`) are the very code the main
process uses; only ``myc`` differs.  Requests come as pickled tuples over a pipe, one at a
time, and each gets one pickled reply ``("ok", result)`` or ``("error", detail)``:

* ``("hello", threads, import_torch)``: apply the thread settings, load what the main
  process loaded, import myc; reply where myc was imported from;
* ``("load", workload, size, seed, backend, repeats)``: make the inputs, run
  :meth:`MycAdapter.first_calls` (cold cache, then disk cache) and reply the first-call
  figures and the first call's outputs, for the correctness check;
* ``("call", n)``: ``n`` untimed calls (warm-up);
* ``("sample", settle)``: one timed sample, in milliseconds;
* ``("memory",)``: peak memory of one call (:func:`benchmarks.memory.peak_delta_mib`);
* ``("quit",)``.

The worker exits when its request pipe closes, so it never outlives the harness.
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
from typing import Any


class _Worker:
    def __init__(self) -> None:
        self.call = None

    def hello(self, threads: int, import_torch: bool) -> dict:
        from benchmarks import env as envmod

        envmod.apply_threads(threads)
        if import_torch:  # the same libraries (and thread pools) loaded as in the harness
            try:
                import torch

                torch.set_num_threads(threads)
            except ImportError:
                pass
        import myc

        return {
            "myc_file": os.path.realpath(myc.__file__),
            "myc_version": getattr(myc, "__version__", None),
            "pid": os.getpid(),
        }

    def load(self, name: str, size: str, seed: int, backend: str, repeats: int) -> dict:
        import numpy as np

        from benchmarks.frameworks import MycAdapter, to_numpy_list
        from benchmarks.workloads import all_workloads

        self.call = None
        gc.collect()
        w = {w.name: w for w in all_workloads()}[name]
        adapter = MycAdapter(backend)
        state = adapter.prepare(w, w.make_inputs(seed, size))
        cache_root = os.environ["MYC_CACHE_DIR"]  # this worker's own, set by the harness
        first, out, call = adapter.first_calls(w, state, repeats, cache_root)
        self.call = call
        first = {
            **first,
            "cold_median_ms": float(np.median(first["cold_ms"])),
            "disk_cache_median_ms": float(np.median(first["disk_cache_ms"])),
        }
        return {"first_call": first, "outputs": to_numpy_list(out)}

    def _loaded(self):
        if self.call is None:
            raise RuntimeError("no workload loaded in the baseline worker")
        return self.call

    def run_calls(self, n: int) -> None:
        call = self._loaded()
        for _ in range(n):
            out = call()
            del out

    def sample(self, settle: int) -> float:
        from benchmarks.runner import timed_sample

        return timed_sample(self._loaded(), settle)

    def memory(self) -> float:
        from benchmarks import memory

        return memory.peak_delta_mib(self._loaded())


def serve(requests, replies) -> int:
    """Answer requests until ``quit`` or the end of the request pipe."""
    from benchmarks.runner import describe_error

    worker = _Worker()
    handlers = {
        "hello": worker.hello,
        "load": worker.load,
        "call": worker.run_calls,
        "sample": worker.sample,
        "memory": worker.memory,
    }
    while True:
        try:
            op, *args = pickle.load(requests)
        except EOFError:
            return 0
        if op == "quit":
            pickle.dump(("ok", None), replies)
            replies.flush()
            return 0
        try:
            reply: tuple[str, Any] = ("ok", handlers[op](*args))
        except Exception as exc:
            reply = ("error", describe_error(exc))
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


def main(argv: list[str]) -> int:
    read_fd, write_fd = int(argv[0]), int(argv[1])
    with os.fdopen(read_fd, "rb") as requests, os.fdopen(write_fd, "wb") as replies:
        return serve(requests, replies)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
