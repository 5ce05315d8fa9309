"""CUDA graphs for repeat calls on the same device arrays (``backend="cuda"``).

At the quick sizes a call's GPU work is tens of microseconds and its host work -- a
Python call per step, a CuPy call per launch and allocation -- is several times that
(W3: 8 launches, 9 allocations, two gathers through CuPy's fancy indexing).  A CUDA
graph replays all of a call's GPU work with one ``cudaGraphLaunch``.

What a graph needs, and how this module provides it:

- **fixed buffers.**  A graph replays the very pointers it was captured with.  So:
  the arguments are the same array *objects* as at the capture (the graph holds them:
  their memory cannot be freed and reused under it; an argument changed in place is
  read anew by every replay); every buffer the captured run allocates (outputs, kernel
  temporaries, CuPy's own temporaries) comes from a memory pool of the graph's own,
  kept as long as the graph, so that nothing else is ever given that memory; and the
  results of each replay are **copied out** (a device array) or read back (a scalar):
  the caller never holds the graph's buffers, which the next replay overwrites.
- **the same stream.**  A replay goes on the stream current at the capture (CuPy's
  current stream then), in order with the caller's other work there; a call on
  another stream runs the steps as before.  Replays of one graph are serialized by a
  lock (the copy-outs are queued before the next replay can be).
- **GEMMs through cuBLAS itself.**  CuPy 14 refuses to call cuBLAS while its stream
  captures; plain 2-D float32/float64 products are captured through cuBLAS directly
  (``gpu.capture_gemm``), other products refuse the capture as below.
- **no host work that depends on device values.**  A step that reads a device value
  (a loop's condition, a branch, a host fallback) or uploads host data cannot be
  captured: CUDA refuses the read inside a capture, the capture is abandoned, the call
  runs the steps as before, and the signature is not captured again
  (:func:`graph_stats`: ``refused``, with the reason).  An error raised while
  capturing (a ``MycError`` of the user's) abandons the capture the same way, and the
  plain run that follows raises it, located as always.

When: a fast-path signature (``gpu.fastcall``) whose call gets the same argument
objects as the call before it is captured (a benchmark or a training step over fixed
buffers); arguments that are new arrays every call (``w = w - lr * g``) are never
captured, and after :data:`MAX_CAPTURES` captures for one signature it stops trying
(``unstable``).  A call whose array results exceed :data:`MAX_COPY_BYTES` is not
replayed (``not used``): copying them out would cost the GPU more than the host saves.
``MYC_NO_GRAPHS=1`` turns graphs off.  CuPy's ROCm build cannot
capture (HIP): ``backend="rocm"`` runs the steps.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from typing import Any

from myc.backends.gpu import bounds, capture_gemm
from myc.prims.abstract import DEVICE_ARRAY_TYPES

MAX_CAPTURES = 4  # per signature: arguments that keep changing stop the captures
# array results larger than this in all are not worth a graph: copying them out of the
# graph's buffers costs the GPU more time (~20 us per 32 MiB on an H100) than the
# replay saves the host
MAX_COPY_BYTES = 32 << 20

_stats: Counter[str] = Counter()
_stats_lock = threading.Lock()


def graph_stats() -> dict[str, int]:
    """How many graphs were captured and replayed, and why captures were refused
    (``refused: <reason>``), since the process started (or :func:`reset_graph_stats`)."""
    return dict(_stats)


def reset_graph_stats() -> None:
    _stats.clear()


def _count(what: str) -> None:
    with _stats_lock:
        _stats[what] += 1


# the GPU backends whose runtime can capture and replay graphs (``cuda`` adds itself
# when its runtime loads; ROCm's does not: HIP graphs through CuPy are untried)
BACKENDS: set[str] = set()


def enabled(backend: str) -> bool:
    return backend in BACKENDS and not os.environ.get("MYC_NO_GRAPHS")


class GraphPolicy:
    """One fast-path signature's graph: when to capture it, and the graph itself."""

    def __init__(self) -> None:
        self.graph: CapturedCall | None = None
        self.last_ids: tuple[int, ...] | None = None  # the previous call's arguments
        self.captures = 0
        self.off = False  # refused once (or unstable): the steps run, as before

    def values(self, bound: list[Any], cp: Any, run: Any, nslots: int, params: list[int],
               outputs: list[tuple[bool, Any]], scalars: dict[int, Any],
               unused: int) -> list[Any] | None:
        """This call's output values through the graph (replayed, or captured now), or
        None: the caller runs the steps.  ``outputs``' last ``unused`` are computed only
        for their errors (None here)."""
        g = self.graph
        if g is not None and g.serves(bound, cp):
            values = g.replay(cp)  # (None: an index out of range -- the steps say it)
        else:
            if g is not None:  # other arrays (or another stream): released, with its
                self.graph = None  # memory, once its last replay is done
                cp.cuda.get_current_stream().synchronize()
                _count("released")
            if not self.wants_capture(bound):
                return None
            values = capture(self, run, bound, nslots, params,
                             outputs[:len(outputs) - unused], scalars, cp)
        if values is not None and unused:
            values += [None] * unused
        return values

    def wants_capture(self, bound: list[Any]) -> bool:
        """Should this call capture (its arguments the previous call's objects)?"""
        if self.off:
            return False
        ids = tuple(map(id, bound))
        if ids != self.last_ids:
            self.last_ids = ids
            return False
        if self.captures >= MAX_CAPTURES:
            self.off = True
            _count("unstable")  # arguments replaced again and again: not worth it
            return False
        return True


class CapturedCall:
    """A captured run of a host program's flat steps: its graph, its memory, the
    argument objects it reads and the slots holding its results."""

    def __init__(self, graph: Any, pool: Any, args: tuple, slots: list[Any],
                 outputs: list[tuple[bool, Any]], scalars: dict[int, Any], stream_ptr: int,
                 checks: list[tuple[Any, int]]):
        self.graph = graph
        self.checks = checks  # the gathers' bounds (``gpu.bounds``): read per replay
        self.pool = pool  # every buffer the graph writes (kept: nothing else gets it)
        self.args = args
        self.slots = slots
        self.stream_ptr = stream_ptr
        self.lock = threading.Lock()
        self.keep: list[Any] = []  # (set by ``capture``: its GEMMs' cuBLAS workspace)
        # per result: (how, value) -- "copy" a device array, "read" a device scalar
        # (with its conversion), or "as is" (a host value)
        self.results: list[tuple[str, Any, Any]] = []
        for i, (is_slot, x) in enumerate(outputs):
            v = slots[x] if is_slot else x
            if type(v) in DEVICE_ARRAY_TYPES:
                self.results.append(("read", v, scalars[i]) if i in scalars else
                                    ("copy", v, None))
            else:
                self.results.append(("as is", v, None))

    def serves(self, bound: list[Any], cp: Any) -> bool:
        args = self.args
        if len(bound) != len(args):
            return False
        for a, b in zip(bound, args, strict=True):
            if a is not b:
                return False
        return cp.cuda.get_current_stream().ptr == self.stream_ptr

    def replay(self, cp: Any) -> list[Any] | None:
        """This replay's values, or None when an index was out of range (the steps then
        run without the graph, and raise)."""
        with self.lock:
            self.graph.launch()
            if self.checks and bounds.out_of_range(self.checks):
                _count("index out of range")
                return None
            out = []
            for how, v, conv in self.results:  # (before the next replay can start)
                if how == "copy":
                    out.append(v.copy())  # the caller's own array
                elif how == "read":
                    out.append(conv(v.get()[()]))  # a scalar, as the program's type says
                else:
                    out.append(v)
            _count("replayed")
        return out


def capture(policy: GraphPolicy, run: Any, bound: list[Any], nslots: int,
            params: list[int], outputs: list[tuple[bool, Any]], scalars: dict[int, Any],
            cp: Any) -> list[Any] | None:
    """Capture ``run(slots)`` (the flat steps) on ``bound`` and replay it once: this
    call's values; None when the capture was refused (counted; the caller runs the
    steps, which raise any error of the call as usual)."""
    policy.captures += 1
    cuda = cp.cuda
    current = cuda.get_current_stream()
    try:
        stream = cuda.Stream(non_blocking=True)
        pool = cuda.MemoryPool()
    except Exception as exc:  # noqa: BLE001 - no graphs here: the steps run
        return _refuse(policy, exc)
    slots: list[Any] = [None] * nslots
    for slot, v in zip(params, bound, strict=True):
        slots[slot] = v
    graph = None
    failed: BaseException | None = None
    checks: list[tuple[Any, int]] = []
    keep = capture_gemm.begin(cuda.Device().id)  # (its cuBLAS handle made before)
    with cuda.using_allocator(pool.malloc), stream:
        try:
            stream.begin_capture()
        except Exception as exc:  # noqa: BLE001 - e.g. HIP: the steps run
            capture_gemm.end()
            return _refuse(policy, exc)
        bounds.defer_to(checks, capture=True)
        try:
            run(slots)
        except BaseException as exc:  # noqa: BLE001 - ended below, then said
            failed = exc
        finally:
            bounds.defer_to(None)
            capture_gemm.end()
        try:
            graph = stream.end_capture()
        except Exception as exc:  # noqa: BLE001 - an invalidated capture says so here
            failed = failed or exc
    if failed is not None:
        if isinstance(failed, KeyboardInterrupt):
            raise failed
        return _refuse(policy, failed)
    g = CapturedCall(graph, pool, tuple(bound), slots, outputs, scalars, current.ptr,
                     checks)
    g.keep = keep  # (the GEMMs' cuBLAS workspace: the graph's memory)
    copied = sum(int(v.nbytes) for how, v, _ in g.results if how == "copy")
    if copied > MAX_COPY_BYTES:
        policy.off = True
        _count(f"not used: {copied / 2**20:.1f} MiB of results to copy per call")
        return None
    policy.graph = g
    _count("captured")
    return g.replay(cp)


def _refuse(policy: GraphPolicy, exc: BaseException) -> None:
    policy.off = True
    lines = str(exc).strip().splitlines() or [""]
    _count(f"refused: {type(exc).__name__}: {lines[-1][:120]}")  # (a MycError's own
    # message is its last line, after the location)
    return None
