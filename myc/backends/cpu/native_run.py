"""Running a native host program: the io array of data pointers filled per call, and the
call into machine code.

:class:`NativeRun` is the half of ``loopgen.NativeLoop`` that runs what the other half
generated: per thread, one io array with the constant, scratch and loop-state buffers
(carved from one allocation: ``_arena``) set once and reused; per call, the inputs'
pointers (scalars in 8-byte cells), result arrays (reused from a small pool when nobody
holds them any more), a taped loop's tape buffers (grown and the call rerun when the
code reports it full), and Ctrl-C armed around the call.  Status 1 (Python's semantics
decide) is a ``Bailout``.
"""

from __future__ import annotations

import ctypes
import weakref
from math import prod
from typing import Any

import numpy as np

from myc.backends.cpu import interrupt
from myc.backends.cpu.runtime import pooled
from myc.lower.target import Bailout
from myc.prims.abstract import AArray, ATape


class _TapeFull(Exception):  # noqa: N818 - a control signal
    """The taped loop ran past its tape's capacity (status 2): grow it and run again."""


def memdtype(dt: np.dtype) -> np.dtype:
    """The dtype a buffer holds a value of ``dt`` in (a bool as one byte)."""
    return np.dtype(np.uint8) if dt == np.bool_ else dt


class NativeRun:
    """Calls of a generated native program (mixed into ``loopgen.NativeLoop``)."""

    def __call__(self, inputs: list[Any]) -> tuple:
        while True:
            try:
                return self._run(inputs)
            except _TapeFull:
                self.cap *= 4
                if self.cap > 1 << 22:
                    raise Bailout(self.symbol) from None

    def _frame(self) -> tuple:
        """This thread's io array with its constant, scratch and state buffers filled in
        (reused across calls: only inputs and results change), and 8-byte cells."""
        frame = getattr(self._local, "frame", None)
        if frame is None:
            specs = self.body.specs
            io = (ctypes.c_void_p * self.n_io)()
            keep: list[Any] = []
            k = len(self.param_specs)
            bufs = list(self.consts)
            shapes = list(self.scratch)
            for j in range(self.nstate):
                a = specs[self.body.params[j]]
                if isinstance(a, AArray):
                    shapes += [(a.shape, a.dtype)] * 2
            bufs += _arena(shapes)
            for buf in bufs:
                io[k] = buf.ctypes.data
                k += 1
            keep += bufs
            extras, owners = _extras(self.extras)
            for i, buf in enumerate(extras):
                io[self.extras_at + i] = buf.ctypes.data
            keep += extras + owners
            cells = np.zeros(len(self.param_specs) + len(self.exit_outputs) + 2, np.int64)
            pools: list[list[np.ndarray]] = [[] for _ in self.exit_outputs]
            frame = (io, keep, cells, k, cells.ctypes.data, pools)
            self._local.frame = frame
        return frame

    def _run(self, inputs: list[Any]) -> tuple:
        from myc.lower.program import Tape

        io, _, cells, first_exit, cells_at, pools = self._frame()
        keep: list[Any] = []
        for i, (v, a) in enumerate(zip(inputs, self.param_specs, strict=True)):
            if isinstance(a, AArray):
                if not (type(v) is np.ndarray and v.dtype == a.dtype and
                        v.flags.c_contiguous):
                    v = np.ascontiguousarray(v, dtype=a.dtype)
                    keep.append(v)
                if v.shape != a.shape:
                    raise ValueError(f"loop input of shape {v.shape}, expected {a.shape}")
                io[i] = v.ctypes.data
            elif isinstance(a, ATape):
                tape = (ctypes.c_void_p * (1 + len(v.leaves)))(
                    v.count, *[0 if leaf is None else leaf.ctypes.data
                               for leaf in v.leaves])
                keep += [tape, v]
                io[i] = ctypes.addressof(tape)
            else:  # a scalar: this thread's 8-byte cell i
                dt = memdtype(a.dtype)
                try:
                    cells[i:i + 1].view(np.uint8)[:dt.itemsize].view(dt)[0] = v
                except OverflowError:  # a Python int beyond 64 bits: Python's semantics
                    raise Bailout(self.symbol) from None
                io[i] = cells_at + 8 * i
        specs = self.body.specs
        results: list[Any] = []
        k = first_exit
        base = len(self.param_specs)
        for e, (is_slot, x) in enumerate(self.exit_outputs):
            a = specs[x] if is_slot else None
            if isinstance(a, AArray):
                arr = _result_array(pools[e], a)
                io[k] = arr.ctypes.data
            else:
                arr = None
                io[k] = cells_at + 8 * (base + e)
            results.append(arr)
            k += 1
        tapes: list[Any] = []
        if self.tape is not None:
            pools = getattr(self._local, "tapes", None)
            if pools is None or pools[0] != self.cap:  # this thread's, at this capacity
                pools = self._local.tapes = (self.cap, [[] for _ in range(self.nstate)])
            for j in range(self.nstate):
                if j not in self.tape:  # not stored: its adjoint never reads it
                    tapes.append(None)
                    io[k] = None
                    k += 1
                    continue
                a = specs[self.body.params[j]]
                t = pooled(pools[1][j], (self.cap, *a.shape), memdtype(a.dtype))
                tapes.append(t)
                io[k] = t.ctypes.data
                k += 1
            cap = np.array(self.cap, np.int64)
            count = np.zeros((), np.int64)
            keep += [cap, count]
            io[k], io[k + 1] = cap.ctypes.data, count.ctypes.data
        armed = self.polls and interrupt.arm()
        try:
            status = self._fn(ctypes.addressof(io))
        finally:
            if armed:
                interrupt.disarm()
        if status == 2:
            raise _TapeFull()
        if status:
            if armed:
                interrupt.interrupted()  # a SIGINT: raises KeyboardInterrupt
            raise Bailout(self.symbol)
        out = []
        for e, ((is_slot, x), arr) in enumerate(zip(self.exit_outputs, results, strict=True)):
            if not is_slot:
                out.append(x)
                continue
            a = specs[x]
            if isinstance(a, AArray):
                out.append(arr)
                continue
            dt = memdtype(a.dtype)
            v = cells[base + e:base + e + 1].view(np.uint8)[:dt.itemsize].view(dt)[0]
            if a.dtype == np.bool_:
                v = bool(v)
            out.append({"f": float, "i": int, "b": bool}[a.dtype.kind](v) if a.weak
                       else a.dtype.type(v))
        if self.tape is not None:
            n = int(count)
            st = [specs[p] for p in self.body.params[:self.nstate]]
            out += [Tape(tapes, n, st), n]
        return tuple(out)


def _arena(shapes: list[tuple[tuple[int, ...], np.dtype]]) -> list[np.ndarray]:
    """Empty arrays of these shapes and dtypes, carved from one allocation (each
    64-byte aligned): a big one is backed by huge pages where the kernel allows
    (NumPy advises it), so first touching the buffers costs one page fault per 2 MiB,
    not per 4 KiB -- several milliseconds of a program's first run."""
    sizes = [prod(shape) * memdtype(np.dtype(dt)).itemsize for shape, dt in shapes]
    offsets, total = [], 0
    for n in sizes:
        offsets.append(total)
        total += -(-n // 64) * 64
    block = np.empty(total + 64, np.uint8)
    start = -block.ctypes.data % 64
    return [block[start + o:start + o + n].view(memdtype(np.dtype(dt))).reshape(shape)
            for o, n, (shape, dt) in zip(offsets, sizes, shapes, strict=True)]


def _extras(records: list[tuple]) -> tuple[list[np.ndarray], list[Any]]:
    """The buffers of nested loops (``loopgen.NativeLoop.extras``), in io order: constant
    arrays, scratch and state buffers (carved from one allocation), zeros (the results
    of a loop that did not run), and a taped nested loop's row pointers with their
    capacity (``("tape", n)``: grown by the code's ``realloc``, freed when its owner,
    the second list's, goes)."""
    out: list[Any] = [None] * len(records)
    owners: list[Any] = []
    shapes = [(i, r[1], r[2]) for i, r in enumerate(records) if r[0] in ("scratch", "state")]
    for (i, _, _), arr in zip(shapes, _arena([(s, d) for _, s, d in shapes]), strict=True):
        out[i] = arr
    for i, r in enumerate(records):
        if r[0] == "const":
            out[i] = r[1]
        elif r[0] == "zeros":
            out[i] = np.zeros(r[1], r[2])
        elif r[0] == "tape":
            out[i] = cells = np.zeros(1 + r[1], np.int64)
            owners.append(_Rows())
            weakref.finalize(owners[-1], _free, cells)
    return out, owners


class _Rows:
    """Owns a taped nested loop's rows: they are freed when it goes (with the frame)."""


def _free(cells: np.ndarray) -> None:
    """Free the rows a taped nested loop's code allocated (``cells[1:]``)."""
    for p in cells[1:]:
        if p:
            _LIBC.free(ctypes.c_void_p(int(p)))


_LIBC = ctypes.CDLL(None)
_LIBC.free.argtypes = [ctypes.c_void_p]


def _result_array(pool: list[np.ndarray], a: AArray) -> np.ndarray:
    """A result array: a fresh one, or a big one returned before that nobody holds any
    more (a fresh big array costs a page fault per 4 KiB on its first write)."""
    return pooled(pool, a.shape, a.dtype)

