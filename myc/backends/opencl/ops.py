"""The non-kernel steps of a host program, on the OpenCL device.

Each takes the step's operands (device arrays, :class:`~myc.backends.opencl.device.
DeviceConst` s, host scalars and small host values such as shapes and indices) and
returns device arrays, or raises ``NotOnDevice`` for a case it does not cover (the step
then runs on the host, counted).  They are built from a few small OpenCL kernels,
generated per element type and rank and built once per process:

- ``strided``: copy between two strided views (transposes, slices, broadcasts,
  concatenation, contiguous copies of views);
- ``gather``: ``dst[i, r] = src[sum_j idx_j[i] * stride_j + r]`` (integer-array
  indexing; negative indices wrap; an out-of-range index sends the step to the host,
  which raises NumPy's ``IndexError``);
- ``scatter``: ``dst[map[i]] += d[i]`` -- in parallel where the map has no repeats
  (basic indexing), else in one work-item in NumPy's order (``np.add.at``);
- ``fill`` and ``cast``.

Here too: moving values between host and device (``as_device``, ``to_host``).  GEMM
is ``gemm.py``'s; the table of which step runs how is ``host.py``'s.
"""

from __future__ import annotations

import threading
from math import prod
from typing import Any

import numpy as np

from myc.backends.opencl.codegen import CTYPE, prelude
from myc.backends.opencl.device import (
    DeviceConst,
    NotOnDevice,
    count,
    lock,
    on_device,
    read_scalar,
)
from myc.backends.opencl.device import device as _dev

_build_lock = threading.Lock()
_programs: dict[tuple, Any] = {}


def _ct(dt: np.dtype) -> str:
    name = np.dtype(dt).name
    return "int" if name == "int32" else CTYPE[name]


def _kernel(key: tuple, source: str, name: str) -> Any:
    k = _programs.get(key)
    if k is None:
        dev = _dev()
        with _build_lock:
            prog = dev.cl.Program(dev.ctx, prelude(dev.fp64) + source).build(
                options=["-cl-fp32-correctly-rounded-divide-sqrt", "-w"])
            k = _programs[key] = getattr(prog, name)
    return k


def _launch(knl: Any, size: int, *args: Any) -> None:
    if size == 0:
        return
    dev = _dev()
    with lock:
        knl(dev.queue, (size,), None, *args)
        dev.flush()


# -- strided copies -------------------------------------------------------------------
def _strided_kernel(ct: str, nd: int) -> Any:
    params = ", ".join(f"long n{d}, long s{d}, long t{d}" for d in range(nd))
    lines = ["    long g = get_global_id(0), rest = g, si = soff, di = doff;"]
    for d in reversed(range(nd)):
        lines.append(f"    {{ long i = rest % n{d}; rest /= n{d}; si += i * s{d}; "
                     f"di += i * t{d}; }}")
    lines.append("    dst[di] = src[si];")
    src = (f"__kernel void strided(__global const {ct} *restrict src, long soff, "
           f"__global {ct} *restrict dst, long doff{', ' if nd else ''}{params}) {{\n"
           + "\n".join(lines) + "\n}\n")
    return _kernel(("strided", ct, nd), src, "strided")


def _estrides(a: Any) -> tuple[int, ...]:
    return tuple(s // a.dtype.itemsize for s in a.strides)


def copy_into(dst: Any, doff: int, dstrides: tuple, src: Any, soff: int,
              sstrides: tuple, shape: tuple) -> None:
    """``dst``'s view (element offset and strides) = ``src``'s view, element by element."""
    n = prod(shape)
    if n == 0:
        return
    args: list[Any] = []
    for size, s, t in zip(shape, sstrides, dstrides, strict=True):
        args += [np.int64(size), np.int64(s), np.int64(t)]
    knl = _strided_kernel(_ct(src.dtype), len(shape))
    _launch(knl, n, src.base_data, np.int64(soff), dst.base_data, np.int64(doff), *args)


def _c_strides(shape: tuple) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def contiguous_copy(v: Any) -> Any:
    """A C-contiguous copy of a device view (``v`` 's own offset and strides)."""
    dev = _dev()
    count("device_copies")
    out = dev.empty(v.shape, v.dtype)
    copy_into(out, 0, _c_strides(v.shape), v, v.offset // v.dtype.itemsize,
              _estrides(v), v.shape)
    return out


def copy(v: Any) -> Any:
    return contiguous_copy(v)


def _view(x: Any, index: Any) -> tuple[int, tuple, tuple]:
    """(element offset, shape, element strides) of ``x[index]`` for a basic index:
    NumPy indexes a probe with ``x`` 's strides and one-byte items."""
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=x.shape,
                                            strides=_c_strides(x.shape))
    v = probe[index]
    if not isinstance(v, np.ndarray):
        v = probe[index + (Ellipsis,) if isinstance(index, tuple) else (index, Ellipsis)]
    off = v.__array_interface__["data"][0] - probe.__array_interface__["data"][0]
    return off, v.shape, v.strides


# -- moving values -------------------------------------------------------------------
def as_device(v: Any, dtype: Any = None, contiguous: bool = True) -> Any:
    """``v`` as a device array (of ``dtype`` when given; C-contiguous at offset 0
    unless ``contiguous`` is false): host values are uploaded (counted), views copied on
    the device."""
    dev = _dev()
    t = type(v)
    if t is DeviceConst:
        v = v.device()
    elif t is not dev.Array:
        v = dev.upload(np.asarray(v, dtype=dtype))
    if dtype is not None and v.dtype != dtype:
        v = astype(v, np.dtype(dtype))
    if contiguous and (not v.flags.c_contiguous or v.offset):
        v = contiguous_copy(v)
    return v


def as_kernel_arg(a: Any, dt: np.dtype, dev: Any) -> Any:
    if type(a) is dev.Array and a.dtype == dt and a.offset == 0 and a.flags.c_contiguous:
        return a  # the common case: a device array as the kernel wants it
    return as_device(a, dt)


def to_host(v: Any) -> Any:
    """A device array's (or constant's) host copy (counted: ``to_host``); anything else
    as it is."""
    if on_device(v):
        count("to_host")
        if not v.flags.c_contiguous or v.offset:
            v = contiguous_copy(v)
        return v.get()
    if type(v) is DeviceConst:
        return v.host
    return v


# -- elementwise helpers --------------------------------------------------------------
def astype(v: Any, dt: np.dtype) -> Any:
    src, dst = _ct(v.dtype), _ct(dt)
    if v.dtype == dt:
        return v
    v = as_device(v)
    if dst == "uchar":
        expr = "(uchar)(x != 0)"
    elif dst == "long" and src in ("float", "double"):
        expr = f"myc_tolong_{'f' if src == 'float' else 'd'}(x)"
    else:
        expr = f"({dst})x"
    knl = _kernel(("cast", src, dst), f"__kernel void cast(__global const {src} *restrict a, "
                  f"__global {dst} *restrict b) {{ long g = get_global_id(0); {src} x = a[g];"
                  f" b[g] = {expr}; }}\n", "cast")
    out = _dev().empty(v.shape, dt)
    _launch(knl, v.size, v.base_data, out.base_data)
    return out


def divide(v: Any, n: Any) -> Any:
    if v.dtype.kind != "f":
        raise NotOnDevice("an integer mean")
    ct = _ct(v.dtype)
    v = as_device(v)
    knl = _kernel(("div", ct), f"__kernel void div(__global const {ct} *restrict a, {ct} n, "
                  f"__global {ct} *restrict b) {{ long g = get_global_id(0); "
                  "b[g] = a[g] / n; }\n", "div")
    out = _dev().empty(v.shape, v.dtype)
    _launch(knl, v.size, v.base_data, v.dtype.type(n), out.base_data)
    return out


def fill(out: Any, value: Any) -> Any:
    ct = _ct(out.dtype)
    knl = _kernel(("fill", ct), f"__kernel void fill(__global {ct} *restrict b, {ct} v) "
                  "{ b[get_global_id(0)] = v; }\n", "fill")
    scalar = np.uint8(bool(value)) if out.dtype == np.bool_ else out.dtype.type(value)
    _launch(knl, out.size, out.base_data, scalar)
    return out


CREATORS = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like"}


def create(name: str, fn: Any, vals: tuple) -> Any:
    """``zeros``, ``ones``, ``full`` and their ``_like`` s, made on the device: the
    reference on a shape-only stand-in gives the shape, dtype and fill value."""
    host = []
    for v in vals:
        if on_device(v):
            host.append(np.empty(v.shape, v.dtype))  # (never written: a stand-in)
        elif type(v) is DeviceConst:
            host.append(v.host)
        else:
            host.append(v)
    if name.endswith("_like"):
        like = host[0]
        probe = fn(np.empty((1,) * np.ndim(like), np.asarray(like).dtype), *host[1:])
        shape = np.shape(like)
    else:
        probe = fn(*host) if name != "full" else None
        if name == "full":
            probe = fn((1,), *host[1:])
            shape = host[0] if isinstance(host[0], tuple) else (host[0],)
        else:
            shape = probe.shape
            probe = probe.reshape(-1)[:1] if probe.size else probe
    probe = np.asarray(probe)
    out = _dev().empty(tuple(shape), probe.dtype)
    return fill(out, probe.reshape(-1)[0] if probe.size else 0)


# -- views and reshapes ----------------------------------------------------------------
def reshape(x: Any, shape: Any) -> Any:
    x = as_device(x)  # C-contiguous: the reshape is a view
    shape = list(shape) if isinstance(shape, tuple | list) else [shape]
    shape = [int(n) for n in shape]
    if -1 in shape:
        known = prod(n for n in shape if n != -1)
        shape[shape.index(-1)] = x.size // known if known else 0
    if prod(shape) != x.size or any(n < 0 for n in shape):
        raise NotOnDevice("a bad shape: the host raises NumPy's error")
    return x.reshape(tuple(shape))


def transpose(x: Any, axes: Any = None) -> Any:
    x = as_device(x)
    axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(
        a % x.ndim for a in axes)
    shape = tuple(x.shape[a] for a in axes)
    st = _c_strides(x.shape)
    count("device_copies")
    out = _dev().empty(shape, x.dtype)
    copy_into(out, 0, _c_strides(shape), x, 0, tuple(st[a] for a in axes), shape)
    return out


def m_t(x: Any) -> Any:
    """The transpose of the last two axes as a strided view (no copy: GEMM reads it
    with its transpose flag; a kernel that needs it contiguous copies it)."""
    x = as_device(x, contiguous=False)
    if len(x.shape) < 2:
        return x
    axes = list(range(len(x.shape)))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return x.transpose(axes)


def broadcast_to(x: Any, shape: Any) -> Any:
    x = as_device(x)
    shape = tuple(shape)
    lead = len(shape) - x.ndim
    st = _c_strides(x.shape)
    strides = (0,) * lead + tuple(0 if n == 1 else s for n, s in zip(x.shape, st,
                                                                      strict=True))
    out = _dev().empty(shape, x.dtype)
    copy_into(out, 0, _c_strides(shape), x, 0, strides, shape)
    return out


def concatenate(xs: Any, axis: Any = 0) -> Any:
    if not isinstance(xs, tuple) or not xs:
        raise NotOnDevice("not a tuple of arrays")
    arrays = [as_device(x) for x in xs]
    dt = np.result_type(*[a.dtype for a in arrays])
    arrays = [a if a.dtype == dt else astype(a, dt) for a in arrays]
    nd = arrays[0].ndim
    if nd == 0 or any(a.ndim != nd for a in arrays):
        raise NotOnDevice("ranks differ")
    if axis is None:
        arrays = [a.reshape(a.size) for a in arrays]
        nd, axis = 1, 0
    axis = axis % nd
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = _dev().empty(tuple(shape), dt)
    ost = _c_strides(tuple(shape))
    at = 0
    for a in arrays:
        copy_into(out, at * ost[axis], ost, a, 0, _c_strides(a.shape), a.shape)
        at += a.shape[axis]
    return out


def stack(arrays: list[Any], dt: np.dtype) -> Any:
    """Equal-shaped device arrays along a new first axis (a loop's tape)."""
    dev = _dev()
    shape = arrays[0].shape if arrays else ()
    out = dev.empty((len(arrays), *shape), dt)
    nbytes = prod(shape) * np.dtype(dt).itemsize
    if nbytes:
        for i, a in enumerate(arrays):
            dev.cl.enqueue_copy(dev.queue, out.base_data, a.base_data, byte_count=nbytes,
                                dst_offset=i * nbytes)
    return out


# -- indexing ------------------------------------------------------------------------
def _is_array(c: Any) -> bool:
    return on_device(c) or type(c) in (np.ndarray, DeviceConst)


def _split_index(index: Any) -> tuple[list[Any], bool]:
    comps = list(index) if type(index) is tuple else [index]
    # a list inside the index (A[[0, 2], 1]: a ListValue) is an integer array, as NumPy
    # reads it -- never a basic index (its items taken as offsets read out of bounds)
    comps = [np.asarray(tuple(c)) if isinstance(c, (tuple, list)) else c for c in comps]
    return comps, any(_is_array(c) for c in comps)


def _gather_kernel(ct: str, k: int) -> Any:
    idx = ", ".join(f"__global const long *restrict i{j}, long d{j}, long s{j}"
                    for j in range(k))
    terms = "\n".join(f"    {{ long v = i{j}[i]; if (v < 0) v += d{j}; "
                      f"if (v < 0 || v >= d{j}) bad[0] = 1; else off += v * s{j}; }}"
                      for j in range(k))
    src = (f"__kernel void gather(__global const {ct} *restrict src, "
           f"__global {ct} *restrict dst, __global int *restrict bad, long inner, {idx}) {{\n"
           "    long g = get_global_id(0), i = g / inner, r = g % inner, off = 0;\n"
           f"{terms}\n    dst[g] = src[off + r];\n}}\n")
    return _kernel(("gather", ct, k), src, "gather")


def _index_arrays(comps: list[Any], x: Any) -> tuple[list[Any], tuple]:
    """Integer index arrays for ``x`` 's leading axes, on the device, of one shape."""
    if len(comps) > x.ndim:
        raise NotOnDevice("too many indices")
    shapes = []
    for c in comps:
        if not _is_array(c) or np.dtype(c.dtype if not isinstance(c, DeviceConst)
                                        else c.host.dtype).kind != "i":
            raise NotOnDevice("a mix of basic and advanced indices, or a bool mask")
        shapes.append(tuple(c.host.shape if isinstance(c, DeviceConst) else c.shape))
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise NotOnDevice("index shapes do not broadcast") from None
    out = []
    for c, sh in zip(comps, shapes, strict=True):
        if sh != shape:
            if on_device(c):
                raise NotOnDevice("a device index to broadcast")
            host = c.host if isinstance(c, DeviceConst) else c
            c = np.ascontiguousarray(np.broadcast_to(host, shape))
        out.append(as_device(c, np.int64))
    return out, shape


def _advanced(x: Any, comps: list[Any]) -> tuple[Any, list[Any], tuple, int]:
    x = as_device(x)
    idx, shape = _index_arrays(comps, x)
    return x, idx, shape, prod(x.shape[len(idx):])


def getitem(x: Any, index: Any) -> Any:
    if not (on_device(x) or type(x) is DeviceConst):
        raise NotOnDevice("not an array")
    comps, advanced = _split_index(index)
    if not advanced:
        x = as_device(x)
        key = tuple(comps) if isinstance(index, tuple) else index
        off, shape, strides = _view(x, key)
        count("device_copies")
        out = _dev().empty(shape, x.dtype)
        copy_into(out, 0, _c_strides(shape), x, off, strides, shape)
        return out
    x, idx, shape, inner = _advanced(x, comps)
    dev = _dev()
    out = dev.empty(shape + tuple(x.shape[len(idx):]), x.dtype)
    bad = dev.empty((1,), np.int32)
    fill(bad, 0)
    st = _c_strides(x.shape)
    args: list[Any] = []
    for j, a in enumerate(idx):
        args += [a.base_data, np.int64(x.shape[j]), np.int64(st[j])]
    _launch(_gather_kernel(_ct(x.dtype), len(idx)), out.size, x.base_data, out.base_data,
            bad.base_data, np.int64(max(inner, 1)), *args)
    count("scalar_reads")
    if bad.get()[0]:
        raise NotOnDevice("an index out of range: the host raises NumPy's error")
    return out


def index_set(x: Any, index: Any, value: Any) -> Any:
    """``x`` with the view ``x[index]`` set (an item assignment ``R[i, j] = v``, a row
    ``R[t] = h``: a stacked list's append): a device copy of ``x`` and a copy of
    ``value`` into the view -- one element of ``value`` into each of its elements where
    ``value`` has one (a row of an adjoint zeroed)."""
    if not (on_device(x) or type(x) is DeviceConst):
        raise NotOnDevice("not an array")
    comps, advanced = _split_index(index)
    xd = as_device(x)
    off, shape, strides = _view(xd, tuple(comps) if isinstance(index, tuple) else index)
    v = as_device(value, dtype=xd.dtype)
    if advanced or (v.size != 1 and tuple(v.shape) != tuple(shape)):
        raise NotOnDevice("an item assignment of another shape")
    count("device_copies")
    out = _dev().empty(xd.shape, xd.dtype)
    st = _c_strides(xd.shape)
    copy_into(out, 0, st, xd, 0, st, tuple(xd.shape))
    vst = (0,) * len(shape) if v.size == 1 else _c_strides(tuple(shape))
    copy_into(out, off, tuple(strides), v, 0, vst, tuple(shape))
    return out


def _scatter_kernel(ct: str, serial: bool) -> Any:
    if serial:
        src = (f"__kernel void scatter(__global {ct} *restrict dst, __global const long "
               f"*restrict map, __global const {ct} *restrict d, long n) {{\n"
               "    for (long i = 0; i < n; i++) dst[map[i]] += d[i];\n}\n")
    else:
        src = (f"__kernel void scatter(__global {ct} *restrict dst, __global const long "
               f"*restrict map, __global const {ct} *restrict d, long n) {{\n"
               "    long i = get_global_id(0); dst[map[i]] += d[i];\n}\n")
    return _kernel(("scatter", ct, serial), src, "scatter")


def _map_kernel(k: int) -> Any:
    idx = ", ".join(f"__global const long *restrict i{j}, long d{j}, long s{j}"
                    for j in range(k))
    terms = "\n".join(f"    {{ long v = i{j}[i]; if (v < 0) v += d{j}; "
                      f"if (v < 0 || v >= d{j}) bad[0] = 1; else off += v * s{j}; }}"
                      for j in range(k))
    src = (f"__kernel void emap(__global long *restrict dst, __global int *restrict bad, "
           f"long inner, {idx}) {{\n"
           "    long g = get_global_id(0), i = g / inner, r = g % inner, off = 0;\n"
           f"{terms}\n    dst[g] = off + r;\n}}\n")
    return _kernel(("emap", k), src, "emap")


def getitem_grad(x: Any, index: Any, d: Any) -> Any:
    """The sensitivity of ``x`` from that of ``x[index]``: ``d`` scattered into zeros."""
    if isinstance(x, tuple) or not (on_device(x) or type(x) is DeviceConst):
        raise NotOnDevice("a tuple")
    xs = x.host if type(x) is DeviceConst else x
    if np.dtype(xs.dtype).kind != "f":
        raise NotOnDevice("not a float array")
    dev = _dev()
    comps, advanced = _split_index(index)
    if not advanced:
        key = tuple(comps) if isinstance(index, tuple) else index
        off, shape, strides = _view(xs, key)
        emap = _offsets(shape, off, strides)  # a basic index: each element once
        serial = False
    else:
        xd = as_device(x)
        idx, shape, inner = _advanced(xd, comps)[1:]
        shape = shape + tuple(xd.shape[len(idx):])
        emap = dev.empty(shape, np.int64)
        bad = dev.empty((1,), np.int32)
        fill(bad, 0)
        st = _c_strides(xd.shape)
        args: list[Any] = []
        for j, a in enumerate(idx):
            args += [a.base_data, np.int64(xd.shape[j]), np.int64(st[j])]
        _launch(_map_kernel(len(idx)), emap.size, emap.base_data, bad.base_data,
                np.int64(max(inner, 1)), *args)
        count("scalar_reads")
        if bad.get()[0]:
            raise NotOnDevice("an index out of range")
        serial = True
    dd = d if on_device(d) or type(d) is DeviceConst else np.asarray(d)
    dshape = tuple(dd.host.shape if type(dd) is DeviceConst else dd.shape)
    if dshape != tuple(emap.shape):
        if np.ndim(dd) == 0 and not on_device(dd):
            dd = fill(dev.empty(emap.shape, xs.dtype), dd)
        else:
            dd = broadcast_to(dd, emap.shape)
    dd = as_device(dd, xs.dtype)
    out = fill(dev.empty(tuple(xs.shape), xs.dtype), 0)
    n = emap.size
    knl = _scatter_kernel(_ct(xs.dtype), serial)
    if serial:
        if n:
            with lock:
                knl(dev.queue, (1,), None, out.base_data, emap.base_data, dd.base_data,
                    np.int64(n))
    else:
        _launch(knl, n, out.base_data, emap.base_data, dd.base_data, np.int64(n))
    return out


def _window_start(start: Any, dim: int, size: int) -> int:
    """A dynamic slice's start, clamped into the axis as ``myc.prims.dynslice`` does."""
    s = int(read_scalar(start)) if on_device(start) else int(start)
    return min(max(s, 0), max(dim - size, 0))


def dynamic_slice(x: Any, start: Any, axis: int, size: int) -> Any:
    """``x``'s window of ``size`` along ``axis`` at the run-time ``start``: a copy."""
    if not (on_device(x) or type(x) is DeviceConst):
        raise NotOnDevice("not an array")
    x = as_device(x)
    s = _window_start(start, x.shape[axis], size)
    shape = tuple(x.shape[:axis]) + (size,) + tuple(x.shape[axis + 1:])
    st = _c_strides(tuple(x.shape))
    out = _dev().empty(shape, x.dtype)
    count("device_copies")
    copy_into(out, 0, _c_strides(shape), x, s * st[axis], st, shape)
    return out


def dynamic_slice_grad(d: Any, start: Any, axis: int, dim: int) -> Any:
    """Zeros of ``dim`` along ``axis`` with ``d`` at the run-time ``start``."""
    if not (on_device(d) or type(d) is DeviceConst):
        raise NotOnDevice("not an array")
    d = as_device(d)
    s = _window_start(start, dim, d.shape[axis])
    shape = tuple(d.shape[:axis]) + (dim,) + tuple(d.shape[axis + 1:])
    st = _c_strides(shape)
    out = fill(_dev().empty(shape, d.dtype), 0)
    copy_into(out, s * st[axis], st, d, 0, _c_strides(tuple(d.shape)), tuple(d.shape))
    return out


def _offsets(shape: tuple, off: int, strides: tuple) -> Any:
    nd = len(shape)
    params = "".join(f", long n{d}, long s{d}" for d in range(nd))
    lines = ["    long g = get_global_id(0), rest = g, o = off;"]
    for d in reversed(range(nd)):
        lines.append(f"    {{ long i = rest % n{d}; rest /= n{d}; o += i * s{d}; }}")
    lines.append("    dst[g] = o;")
    knl = _kernel(("offsets", nd), f"__kernel void offsets(__global long *restrict dst, "
                  f"long off{params}) {{\n" + "\n".join(lines) + "\n}\n", "offsets")
    out = _dev().empty(shape, np.int64)
    args: list[Any] = []
    for n, s in zip(shape, strides, strict=True):
        args += [np.int64(n), np.int64(s)]
    _launch(knl, out.size, out.base_data, np.int64(off), *args)
    return out


def select(c: Any, x: Any, y: Any) -> Any:
    """``np.where`` with a scalar condition (an if-converted branch): the side taken, as
    it is; an array condition is fused into a kernel, or runs on the host."""
    if on_device(c):
        if c.ndim:
            raise NotOnDevice("an array condition")
        c = read_scalar(c)[()]
    elif np.ndim(c):
        raise NotOnDevice("an array condition")

    def sig(v: Any) -> tuple:
        h = v.host if type(v) is DeviceConst else v
        return (tuple(np.shape(h)), np.result_type(h) if not on_device(h) else h.dtype)

    if sig(x) != sig(y):
        raise NotOnDevice("sides of different shapes or types")
    v = x if c else y
    if type(v) is DeviceConst:
        return v.device()
    return v if on_device(v) else _dev().upload(np.asarray(v))
