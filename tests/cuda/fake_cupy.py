"""A stand-in for CuPy on a machine without a GPU, for testing the CUDA backend's glue.

Its arrays are NumPy arrays of a subclass that, like CuPy's, refuse to be mixed with
host arrays in ufuncs and array functions, carry ``__cuda_array_interface__`` and come
back with ``.get()``.  Its ``cuda.function.Module`` loads the PTX that
``runtime.kernel_ptx`` made and launches the emulator's build of the same kernel
(``install(monkeypatch)`` wires this up), checking grid and block sizes on the way.
"""

from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace

import numpy as np

from myc.backends.cuda import runtime
from myc.backends.cuda.emulate import EmulatedKernel


class FakeArray(np.ndarray):
    """A "device" array."""

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self.ctypes.data, False), "version": 3}

    @property
    def _c_contiguous(self) -> bool:  # (CuPy's field, read by the runtime)
        return self.flags.c_contiguous

    @property
    def device(self):
        return SimpleNamespace(id=0)

    def __getitem__(self, index):  # like CuPy: an element is a 0-d view
        for i in index if type(index) is tuple else (index,):
            if type(i) is np.ndarray:  # CuPy copies it to the device first
                host_indexes.append(i)
        r = super().__getitem__(index)
        if isinstance(r, np.ndarray):
            return r
        return super().__getitem__((*index, Ellipsis) if type(index) is tuple else
                                   (index, Ellipsis))

    def get(self) -> np.ndarray:
        return np.array(self.view(np.ndarray), copy=True)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse_host(inputs)
        plain = [x.view(np.ndarray) if isinstance(x, FakeArray) else x for x in inputs]
        return _wrap(getattr(ufunc, method)(*plain, **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host(args)
        plain = [x.view(np.ndarray) if isinstance(x, FakeArray) else x for x in args]
        return _wrap(func(*plain, **kwargs))


def _refuse_host(values) -> None:
    for x in values:
        if isinstance(x, np.ndarray) and not isinstance(x, FakeArray):
            raise TypeError("fake cupy: a host array mixed with device arrays")


def _wrap(v):
    if isinstance(v, np.ndarray) and not isinstance(v, FakeArray):
        return v.view(FakeArray)
    if isinstance(v, tuple):
        return tuple(_wrap(x) for x in v)
    return v


def _from_dlpack(v):
    """A "CUDA" array of another library (``v.array``) as a device array sharing its
    memory; like torch, it refuses to export a tensor that requires grad."""
    assert v.__dlpack_device__()[0] == 2, "not a CUDA array"
    assert not getattr(v, "requires_grad", False), "export of a tensor requiring grad"
    return v.array.view(FakeArray)


_PROGRAMS: dict[str, EmulatedKernel] = {}
host_indexes: list[np.ndarray] = []  # host arrays a device array was indexed with
launches: list[tuple[str, tuple, tuple]] = []


class FakeFunction:
    def __init__(self, ek: EmulatedKernel, name: str):
        self.ek = ek
        self.p = next(p for p in ek.plan.passes if p.name == name)

    def __call__(self, grid: tuple, block: tuple, args: tuple) -> None:
        assert grid == (self.p.grid,) and block == (self.p.block,), (grid, block, self.p)
        assert all(isinstance(a, FakeArray) and a.flags.c_contiguous for a in args), \
            "a kernel argument is not a contiguous device array"
        launches.append((self.p.name, grid, block))
        argv = (ctypes.c_void_p * max(1, len(args)))(*[a.ctypes.data for a in args])
        self.ek.fns[self.p.name](ctypes.addressof(argv))


class FakeModule:
    def load(self, image: bytes) -> None:
        assert image.endswith(b"\0")
        self.ek = _PROGRAMS[image[:-1].decode()]

    def get_function(self, name: str) -> FakeFunction:
        return FakeFunction(self.ek, name)


def _owned(shape, dtype) -> FakeArray:
    """A new "device" array owning its memory (``base`` None, as CuPy's allocations)."""
    return FakeArray(shape, dtype)


def asarray(v):
    if isinstance(v, FakeArray):
        return v
    a = np.asarray(v)
    out = _owned(a.shape, a.dtype)  # a host-to-device copy
    np.copyto(out.view(np.ndarray), a)
    return out


cupy = SimpleNamespace(
    __name__="cupy", ndarray=FakeArray, uint8=np.uint8, bool_=np.bool_, asarray=asarray,
    ascontiguousarray=lambda a: np.ascontiguousarray(a.view(np.ndarray)).view(FakeArray),
    empty=_owned,
    from_dlpack=lambda v: _from_dlpack(v),
    stack=lambda arrays: np.stack([a.view(np.ndarray) for a in arrays]).view(FakeArray),
    matmul=lambda a, b: np.matmul(a.view(np.ndarray), b.view(np.ndarray)).view(FakeArray),
    dot=lambda a, b: np.asarray(np.dot(a.view(np.ndarray), b.view(np.ndarray))).view(FakeArray),
    cuda=SimpleNamespace(
        is_available=lambda: True, Device=lambda: SimpleNamespace(id=0),
        runtime=SimpleNamespace(getDeviceProperties=lambda i: {"name": b"fake GPU"}),
        function=SimpleNamespace(Module=FakeModule),
        get_current_stream=lambda: SimpleNamespace(synchronize=lambda: None)))


def install(monkeypatch, tmp_path) -> SimpleNamespace:
    """Make ``backend="cuda"`` run on the fake CuPy (for one test)."""
    real = runtime.kernel_ptx

    def kernel_ptx(kernel, arch=runtime.DEFAULT_ARCH):
        ptx, plan = real(kernel, arch)
        _PROGRAMS[ptx] = EmulatedKernel(kernel)
        return ptx, plan

    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(runtime, "_device", None)
    monkeypatch.setattr(runtime, "_cache", {})
    monkeypatch.setattr(runtime, "kernel_ptx", kernel_ptx)
    monkeypatch.setenv("MYC_CACHE_DIR", str(tmp_path / "cache"))
    launches.clear()
    host_indexes.clear()
    return cupy
