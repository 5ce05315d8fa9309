"""Adapters that run a workload on one framework: myc, PyTorch eager, and the optional
peers (``torch.compile``, JAX ``jit``, NumPy forward, Numba).

Each adapter turns a workload and its NumPy inputs into a zero-argument callable that runs
the computation once *to completion* (device synchronized, lazy results forced) and returns
its raw outputs; :func:`to_numpy_list` flattens any framework's outputs for the correctness
check.  ``build`` always makes a fresh function object (a fresh ``myc.jit`` wrapper, a fresh
``jax.jit``, a fresh Numba dispatcher, a reset ``torch._dynamo``), so timing a build plus
its first call measures first-call latency, compilation included.
"""

from __future__ import annotations

import importlib
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.workload import Workload

GPU_BACKENDS = ("cuda", "rocm")
PEERS = ("torch.compile", "jax", "numpy", "numba", "myc-cpu")


def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception:  # an optional column is skipped on any import failure
        return None


def to_numpy_list(obj: Any) -> list[np.ndarray]:
    """Flatten nested tuples/lists of framework arrays/scalars into NumPy arrays."""
    if isinstance(obj, (tuple, list)):
        out: list[np.ndarray] = []
        for item in obj:
            out.extend(to_numpy_list(item))
        return out
    if type(obj).__module__.startswith("torch"):
        return [obj.detach().cpu().numpy()]
    if type(obj).__module__.startswith("cupy") and hasattr(obj, "get"):
        return [obj.get()]
    return [np.asarray(obj)]


def ms_since(t0: int) -> float:
    return (time.perf_counter_ns() - t0) / 1e6


class Adapter:
    """One framework.  ``prepare`` converts inputs once; ``build`` returns a callable."""

    name = "?"

    def prepare(self, w: Workload, inputs: tuple) -> Any:
        return tuple(np.array(a, copy=True) for a in inputs)

    def build(self, w: Workload, state: Any) -> Callable[[], Any]:
        raise NotImplementedError

    def first_call(self, w: Workload, state: Any) -> tuple[float, Any, Callable[[], Any]]:
        """Build afresh and call once: ``(ms, outputs, callable)``."""
        t0 = time.perf_counter_ns()
        call = self.build(w, state)
        out = call()
        return ms_since(t0), out, call


class MycAdapter(Adapter):
    """``myc.jit`` (and ``myc.value_and_grad``) from the public API on ``backend``."""

    name = "myc"

    def __init__(self, backend: str):
        self.backend = backend
        self.myc = importlib.import_module("myc")
        self.cupy = _import("cupy") if backend in GPU_BACKENDS else None

    def prepare(self, w: Workload, inputs: tuple) -> Any:
        arrays = super().prepare(w, inputs)
        if self.cupy is not None:  # device-resident inputs, as PyTorch gets them
            arrays = tuple(self.cupy.asarray(a) for a in arrays)
        return arrays

    def build(self, w: Workload, state: Any) -> Callable[[], Any]:
        myc = self.myc
        if not hasattr(myc, "jit"):
            raise RuntimeError("myc.jit is not available yet (myc.api is not implemented)")
        fn = w.myc_fn
        if w.kind == "value_and_grad":
            if not hasattr(myc, "value_and_grad"):
                raise RuntimeError("myc.value_and_grad is not available yet")
            fn = myc.value_and_grad(fn, argnums=w.argnums)
        jitted = myc.jit(fn, backend=self.backend)
        cupy = self.cupy
        if cupy is None:
            return lambda: jitted(*state)

        def call():
            out = jitted(*state)
            cupy.cuda.get_current_stream().synchronize()
            return out

        return call

    def first_calls(
        self, w: Workload, state: Any, repeats: int, cache_root: str
    ) -> tuple[dict, Any, Callable[[], Any]]:
        """Cold first calls (fresh wrapper, empty ``MYC_CACHE_DIR``) and first calls served
        from the disk cache (fresh wrapper, the directory a cold call filled)."""
        saved = os.environ.get("MYC_CACHE_DIR")
        cold, disk = [], []
        out = call = None
        try:
            for _ in range(max(1, repeats)):
                cache = tempfile.mkdtemp(prefix="cold-", dir=cache_root)
                os.environ["MYC_CACHE_DIR"] = cache
                ms, o, c = self.first_call(w, state)
                cold.append(ms)
                if out is None:
                    out, call = o, c
                del o
                ms, o, c = self.first_call(w, state)
                disk.append(ms)
                call = c
                del o
        finally:
            if saved is None:
                os.environ.pop("MYC_CACHE_DIR", None)
            else:
                os.environ["MYC_CACHE_DIR"] = saved
        return {"cold_ms": cold, "disk_cache_ms": disk}, out, call


class MycCpuAdapter(MycAdapter):
    """myc on its ``cpu`` backend, as a column beside another backend (``opencl``...):
    the ratio ``myc/myc-cpu`` is that backend's cost against the CPU's, in one run."""

    name = "myc-cpu"

    def __init__(self):
        super().__init__("cpu")


class TorchAdapter(Adapter):
    """PyTorch eager with autograd, or ``torch.compile`` of the same function."""

    def __init__(self, device: str, compiled: bool = False):
        self.torch = importlib.import_module("torch")
        self.device = device
        self.compiled = compiled
        self.name = "torch.compile" if compiled else "torch"

    def prepare(self, w: Workload, inputs: tuple) -> Any:
        torch = self.torch
        tensors = [torch.from_numpy(np.array(a, copy=True)).to(self.device) for a in inputs]
        for i in w.grad_argnums:
            tensors[i].requires_grad_(True)
        return tuple(tensors)

    def _sync(self) -> None:
        if self.device != "cpu":
            self.torch.cuda.synchronize()

    def build(self, w: Workload, state: Any) -> Callable[[], Any]:
        torch = self.torch
        f = w.make_torch(torch)
        if self.compiled:
            torch._dynamo.reset()
            f = torch.compile(f)
        sync = self._sync
        if w.kind == "forward":

            def call():
                out = f(*state)
                sync()
                return out

            return call
        wrt = [state[i] for i in w.grad_argnums]

        def call_vg():
            out = f(*state)
            grads = torch.autograd.grad(out, wrt)
            sync()
            return out.detach(), grads

        return call_vg


class JaxAdapter(Adapter):
    """``jax.jit`` of the forward, or of ``jax.value_and_grad`` of the loss."""

    name = "jax"

    def __init__(self):
        self.jax = importlib.import_module("jax")
        self.jnp = importlib.import_module("jax.numpy")

    def prepare(self, w: Workload, inputs: tuple) -> Any:
        return tuple(self.jax.device_put(a) for a in inputs)

    def build(self, w: Workload, state: Any) -> Callable[[], Any]:
        jax = self.jax
        assert w.make_jax is not None
        f = w.make_jax(jax, self.jnp)
        if w.kind == "value_and_grad":
            f = jax.value_and_grad(f, argnums=w.argnums)
        jf = jax.jit(f)
        return lambda: jax.block_until_ready(jf(*state))


class NumpyAdapter(Adapter):
    """The myc function itself, undecorated: what plain NumPy does (forward only)."""

    name = "numpy"

    def build(self, w: Workload, state: Any) -> Callable[[], Any]:
        fn = w.myc_fn
        return lambda: fn(*state)


class NumbaAdapter(Adapter):
    """Numba ``njit`` code written by hand, gradients included."""

    name = "numba"

    def __init__(self, threads: int):
        self.numba = importlib.import_module("numba")
        try:
            self.numba.set_num_threads(min(threads, self.numba.config.NUMBA_NUM_THREADS))
        except Exception:  # thread control is best effort
            pass

    def build(self, w: Workload, state: Any) -> Callable[[], Any]:
        assert w.make_numba is not None
        f = w.make_numba(self.numba)
        return lambda: f(*state)


def peer_applies(peer: str, w: Workload, on_cpu: bool) -> bool:
    """Whether an optional column has an implementation of ``w`` on this device."""
    if peer == "torch.compile":
        return True
    if peer == "jax":
        return w.make_jax is not None
    if peer == "numpy":
        return on_cpu and w.kind == "forward"
    if peer == "numba":
        return on_cpu and w.make_numba is not None
    if peer == "myc-cpu":
        return True
    raise ValueError(peer)


def available_peers(
    requested: set[str] | None, with_compile: bool, threads: int, torch_device: str,
    backend: str = "cpu",
) -> dict[str, Adapter]:
    """Adapters for the optional columns that are importable (silently skip the rest).

    ``requested`` None means every peer that is installed; torch.compile only with
    ``with_compile`` (it compiles for seconds to minutes); ``myc-cpu`` only when myc's
    own column runs on another ``backend``.
    """
    wanted = set(PEERS) if requested is None else set(requested)
    if not with_compile:
        wanted.discard("torch.compile")
    peers: dict[str, Adapter] = {}
    if "torch.compile" in wanted:
        peers["torch.compile"] = TorchAdapter(torch_device, compiled=True)
    if "jax" in wanted and _import("jax") is not None:
        try:
            peers["jax"] = JaxAdapter()
        except Exception:  # broken install: skip the column
            pass
    if "numpy" in wanted:
        peers["numpy"] = NumpyAdapter()
    if "myc-cpu" in wanted and backend != "cpu":
        peers["myc-cpu"] = MycCpuAdapter()
    if "numba" in wanted and _import("numba") is not None:
        try:
            peers["numba"] = NumbaAdapter(threads)
        except Exception:  # broken install: skip the column
            pass
    return peers
