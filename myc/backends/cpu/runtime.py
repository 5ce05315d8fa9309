"""Calling compiled kernels: argument checks, output allocation, threads, the cache.

A kernel's parallel range (``Plan.extent``) is split into up to ``CHUNKS_PER_THREAD``
chunks per thread when the domain is large (more than :data:`PARALLEL_MIN` elements);
the calling thread and myc's worker threads claim them as they free up
(``threads.py``: the one pool every JIT call site uses).  The pool runs with the GIL
released, so the chunks run truly in parallel.  The thread count is ``MYC_NUM_THREADS``
(read at each call), default ``os.cpu_count()``.

Reductions whose output elements several chunks write (``OutPlan.shared``) get one
partial buffer per chunk; the partials are combined with NumPy at the end.
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import itertools
import os
import sys
import threading
from math import prod

import numpy as np

from myc.backends.cpu import fpmode, online, prefetch, threads
from myc.backends.cpu.codegen import codegen, entry_name
from myc.backends.cpu.jit import assembly as _assembly
from myc.backends.cpu.jit import host, optimized_ir
from myc.backends.cpu.plan import Plan, make_plan
from myc.backends.cpu.threads import (  # noqa: F401 - where callers have found them
    ALIGN,
    CHUNKS_PER_THREAD,
    PARALLEL_MIN,
    chunks,
    num_threads,
)
from myc.errors import MycShapeError, MycTypeError
from myc.lower.kernel import Kernel, Reduce, identity
from myc.support.lru import LRU
from myc.timings import stage, timed

CODEGEN_VERSION = "2"  # 2: entry symbols named by content (one shared JIT engine)

_KERNEL_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_COMBINE = {"sum": np.add, "max": np.maximum, "min": np.minimum}



def native_scalef() -> bool:
    """Do kernels compile for AVX-512 here (``vscalefps`` makes ``2^k`` one instruction
    in exp and its family)?  Follows the vector-width choice: narrowed to AVX2, no."""
    from myc.backends.cpu.tuning import has_avx512

    return has_avx512(host()[1])


# reuse big output buffers across calls (MYC_POOL=0 turns it off)
POOL = os.environ.get("MYC_POOL", "1") != "0"
_POOL_MIN_BYTES = 1 << 20
_POOL_DEPTH = 2
# references held when nobody else has the array: the pool list, the loop variable and
# getrefcount's own argument
_POOL_FREE_REFS = 3


def pooled(pool: list[np.ndarray], shape: tuple, dtype: np.dtype) -> np.ndarray:
    """An array of ``pool`` that nobody else holds, or a fresh one (kept in ``pool`` when
    it is big and there is room): kernels' outputs, native programs' results and tapes.
    (The caller serializes threads that share ``pool``.)"""
    if not POOL or prod(shape) * np.dtype(dtype).itemsize < _POOL_MIN_BYTES:
        return np.empty(shape, dtype)
    for arr in pool:
        if sys.getrefcount(arr) == _POOL_FREE_REFS:
            return arr
    arr = np.empty(shape, dtype)
    if len(pool) < _POOL_DEPTH:
        pool.append(arr)
    return arr


class CompiledKernel:
    """A kernel compiled for this CPU: ``ck(inputs) -> outputs`` (NumPy arrays)."""

    # a program stored in the disk cache keeps its kernels as such (``__reduce__``)
    reloads = True

    def __init__(self, kernel: Kernel, cached: tuple[str, bytes] | None = None,
                 key: str | None = None, plan: Plan | None = None):
        self.kernel = kernel
        self.key = key = key or cache_key(kernel)  # a loop's code calls it by this name
        if cached is None:
            # the entry symbol is named by content: every kernel shares one JIT engine
            named = dataclasses.replace(kernel, name=_content_name(key))
            module, self.plan = codegen(named, native_scalef())
            self.llvm_ir = str(module)
            self.symbol, self.object_code = _machine_code(
                self.llvm_ir, named.name, entry_name(named), prod(kernel.shape) < LIGHT_BELOW)
        else:  # machine code from the disk cache: no LLVM at all
            self.plan = plan if plan is not None else make_plan(kernel)
            self.llvm_ir = ""
            # the symbol may be another kernel's with the same code (``_machine_code``);
            # machine code without it is refused by the loader below
            self.symbol, self.object_code = cached
            if not (isinstance(self.symbol, str) and self.symbol.startswith("myc_kernel_k")):
                raise ValueError("a cache entry that is not a kernel's")
        self._address = _ENGINE.load(self.symbol, self.object_code)
        self._fn = _KERNEL_FN(self._address)
        # what every call needs, computed once
        outs = kernel.output_buffers()
        self._in_specs = [(np.dtype(b.dtype), b.shape, b.name) for b in kernel.inputs]
        self._out_specs = [(b.shape, np.dtype(b.dtype)) for b in outs]
        self._idents = [identity(op.op, b.dtype) if op.op else None
                        for op, b in zip(self.plan.outs, outs, strict=True)]
        self._inits = [i for i, op in enumerate(self.plan.outs) if op.init]
        self._ptrs = ctypes.c_void_p * (len(kernel.inputs) + len(outs))
        self._pool: list[list[np.ndarray]] | None = [[] for _ in outs] if POOL else None
        self._pool_lock = threading.Lock()
        size = prod(kernel.shape)
        self._empty = size == 0
        self._serial = size <= PARALLEL_MIN or self.plan.extent == 1
        self._reductions = [(o.out_index, identity(o.op, o.expr.dtype))
                            for o in kernel.outputs if isinstance(o, Reduce)]

    def __reduce__(self):
        # its key and plan kept: a program loaded from the disk cache does not format
        # and hash each kernel's IR again, nor plan it (W6's: 20 ms of a warm first call)
        return (_reloaded, (self.kernel, self.key, _key_settings(), self.plan))

    def _output(self, i: int, shape, dt) -> np.ndarray:
        """A fresh output, or a pooled one nobody references any more.

        Big arrays come from mmap, so a fresh one costs a page fault per 4 KiB on first
        write -- a millisecond or more for 16 MB.  An intermediate of a host program dies
        when the program returns; the next call of this kernel writes into it again.
        Arrays the caller still holds (results, views of them) are never reused.
        """
        if self._pool is None:
            return np.empty(shape, dt)
        with self._pool_lock:  # two threads must not take the same free array
            return pooled(self._pool[i], shape, dt)

    def __call__(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        args = self._check(inputs)
        outs = [self._output(i, shape, dt) for i, (shape, dt) in enumerate(self._out_specs)]
        if self._empty:
            for i, ident in self._reductions:
                outs[i].fill(ident)
            return outs
        nthreads = 1 if self._serial else num_threads()
        if nthreads == 1:
            for i in self._inits:
                outs[i].fill(self._idents[i])
            ptrs = self._ptrs(*[a.ctypes.data for a in args], *[o.ctypes.data for o in outs])
            self._fn(ptrs, 0, self.plan.extent)
            return outs
        return self._parallel(args, outs, nthreads)

    def _parallel(self, args, outs, nthreads: int) -> list[np.ndarray]:
        pieces = chunks(self.plan, nthreads, CHUNKS_PER_THREAD)
        n = len(pieces)
        targets: list[np.ndarray] = []  # what each chunk writes: outputs or partials
        for i, (out, op) in enumerate(zip(outs, self.plan.outs, strict=True)):
            t = np.empty((n, *out.shape), out.dtype) if op.shared and n > 1 else out
            if op.init:
                t.fill(self._idents[i])
            targets.append(t)
        in_ptrs = [a.ctypes.data for a in args]
        t_ptrs = [t.ctypes.data for t in targets]
        if n == 1:
            self._fn(self._ptrs(*in_ptrs, *t_ptrs), *pieces[0])
        else:
            rows = [self._ptrs(*in_ptrs, *[p + (c * t.strides[0] if t is not o else 0)
                                          for p, t, o in zip(t_ptrs, targets, outs,
                                                             strict=True)])
                    for c in range(n)]
            bufs = (ctypes.c_void_p * n)(*[ctypes.addressof(r) for r in rows])
            bounds = (ctypes.c_int64 * (2 * n))(*itertools.chain.from_iterable(pieces))
            threads.run(self._address, bufs, bounds, n, nthreads)
        for t, out, op in zip(targets, outs, self.plan.outs, strict=True):
            if t is not out:
                _COMBINE[op.op].reduce(t, axis=0, out=out)
        return outs

    def _check(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        if len(inputs) != len(self._in_specs):
            raise MycTypeError(f"kernel {self.kernel.name}: {len(inputs)} inputs given, "
                               f"{len(self._in_specs)} expected")
        args = []
        for a, (dt, shape, name) in zip(inputs, self._in_specs, strict=True):
            if type(a) is not np.ndarray:
                a = np.asarray(a)
            if a.dtype != dt:
                raise MycTypeError(f"kernel {self.kernel.name}: input {name} is {a.dtype}, "
                                   f"expected {dt}")
            if a.shape != shape:
                raise MycShapeError(f"kernel {self.kernel.name}: input {name} has shape "
                                    f"{a.shape}, expected {shape}")
            flags = a.flags
            if not (flags.c_contiguous and flags.aligned):
                a = np.ascontiguousarray(a)
                if not a.flags.aligned:
                    a = a.copy()
            args.append(a)
        return args


# A kernel over fewer elements than this (a native program's or a loop body's single
# ops on small arrays: an HMM's 8 states) is compiled at O1 without vectorizers: its run
# time is its call, and O3 spent 40-100 ms on each of dozens of such kernels.
LIGHT_BELOW = 256


# machine code by the text of its LLVM module (less the kernel's name), in this process:
# kernels that differ only where their code does not look -- an elementwise kernel's
# shape (its range is an argument), its buffers' names -- share one compilation
# (an LSTM gradient's weight-gradient sums over (40, 40) and (10, 40) weights: the same
# 120-input kernel, 0.3 s of LLVM each)
_BY_IR = LRU(maxbytes=64 * 2**20, weigh=lambda v: len(v[1]))


def _machine_code(text: str, name: str, symbol: str, light: bool) -> tuple[str, bytes]:
    """``(entry symbol, object code)`` for the module ``text`` of the kernel ``name``
    (its entry: ``symbol``): compiled, or an earlier compilation of the same code under
    that kernel's symbol."""
    key = hashlib.sha256(f"{light}\n{text.replace(name, '@')}".encode()).hexdigest()
    hit = _BY_IR.get(key)
    if hit is None:
        hit = (symbol, _compile_object(text, light))
        _BY_IR[key] = hit
    return hit


def _compile_object(module, light: bool = False) -> bytes:
    """The kernel's module optimized (O3, or O1 when ``light``) and compiled to an object
    file for this CPU."""
    from myc.backends.cpu.jit import _lock, optimize, parse, target_machine

    tm = target_machine(1 if light else 3)
    mod = optimize(parse(module, tm), tm, 1 if light else 3)
    with _lock, stage("llvm codegen"):
        return tm.emit_object(mod)


def _content_name(key: str) -> str:
    """The kernel's name in machine code: its cache key's, so two kernels share a name
    exactly when they share their code (``k`` keeps it apart from the native programs'
    ``myc_kernel_<hex>`` aliases, ``myc.backends.cpu.loopgen``)."""
    return f"k{key[:40]}"


class _SharedEngine:
    """One MCJIT engine holding every kernel's machine code in this process.

    An engine costs a target machine, an empty module and a finalization -- about as
    much as loading a small kernel's object into an existing engine, several times
    over; a program loaded from the disk cache brings half a dozen kernels.  Entry
    symbols are named by content (:func:`_content_name`), so a symbol already loaded
    is that very code: loading it again returns the address it has.  Machine code is
    never unloaded (``clear_cache`` forgets the Python side; compiling the kernel again
    finds its code here).
    """

    def __init__(self) -> None:
        self._engine = None
        self._tm = None
        self._addresses: dict[str, int] = {}

    @timed("loading")
    def load(self, symbol: str, object_code: bytes) -> int:
        import llvmlite.binding as llvm

        from myc.backends.cpu.jit import _lock, target_machine

        tm = None if self._engine is not None else target_machine()
        with _lock:
            addr = self._addresses.get(symbol)
            if addr:
                return addr
            if self._engine is None:
                empty = llvm.parse_assembly("")
                empty.triple = tm.triple
                empty.data_layout = str(tm.target_data)
                self._engine = llvm.create_mcjit_compiler(empty, tm)
                self._tm = tm
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
            self._engine.finalize_object()
            addr = self._engine.get_function_address(symbol)
            if not addr:
                raise ValueError(f"no function {symbol!r} in the kernel's machine code")
            self._addresses[symbol] = addr
            return addr


_ENGINE = _SharedEngine()
_cache: dict[str, CompiledKernel] = {}
_cache_lock = threading.Lock()


def _key_settings() -> tuple[str, ...]:
    """What a kernel's machine code depends on besides its IR."""
    return (CODEGEN_VERSION, *host(), f"subnormals={fpmode.mode()}",
            f"online={online.enabled()}", f"prefetch={prefetch.enabled()}")


def cache_key(kernel: Kernel) -> str:
    """Structural hash of the kernel IR (its canonical text, less the kernel's name, so
    the same group in two programs compiles once) and of what codegen depends on."""
    body = kernel.format().split("\n", 1)[1:]
    text = "\n".join([*_key_settings(), repr(kernel.shape), *body])
    return hashlib.sha256(text.encode()).hexdigest()


def _reloaded(kernel: Kernel, key: str, settings: tuple, plan: Plan) -> CompiledKernel:
    """A kernel of a program from the disk cache: with the key and plan it was stored
    with while the settings its key covers are the same (else keyed afresh)."""
    if settings != _key_settings():
        return compile_kernel(kernel)
    return compile_kernel(kernel, key, plan)


@timed("kernel codegen")
def compile_kernel(kernel: Kernel, key: str | None = None,
                   plan: Plan | None = None) -> CompiledKernel:
    """Compile ``kernel`` for this CPU, or return the cached build of an identical one
    (from memory, or machine code from the disk cache under ``MYC_CACHE_DIR``).
    ``key``, ``plan``: ``cache_key(kernel)`` and its plan, known (``_reloaded``)."""
    from myc.support import diskcache

    key = key or cache_key(kernel)
    with _cache_lock:
        ck = _cache.get(key)
        if ck is not None:
            return ck
        cached = diskcache.load("kernel", key)
        if isinstance(cached, tuple) and len(cached) == 2:
            try:
                ck = CompiledKernel(kernel, cached, key, plan)
            except Exception:  # noqa: BLE001 - a stale or damaged entry: rebuild it
                ck = None
        if ck is None:
            ck = CompiledKernel(kernel, key=key)
            diskcache.store("kernel", key, (ck.symbol, ck.object_code))
        _cache[key] = ck
        return ck


def clear_cache() -> None:
    """Drop every compiled kernel (and its machine code, once no caller holds it)."""
    with _cache_lock:
        _cache.clear()
        for key in list(_BY_IR):
            del _BY_IR[key]


def llvm_ir(kernel: Kernel, optimized: bool = True) -> str:
    """LLVM IR of ``kernel``: as generated, or after the host's O3 pipeline."""
    module, _ = codegen(kernel, native_scalef())
    return optimized_ir(module) if optimized else str(module)


def assembly(kernel: Kernel) -> str:
    """Host assembly of ``kernel`` (to see the vector instructions)."""
    return _assembly(codegen(kernel, native_scalef())[0])
