"""What runs where in a host program on ``backend="opencl"``.

The ``opencl`` registry entry (``myc.backends.registry.OpenCL``) calls these for the
value hooks every device-resident backend provides (``myc.lower.target.Target``):

- A call's ``pyopencl.array.Array`` arguments stay on the device (created with myc's
  context: ``myc.backends.opencl.runtime.device().queue``); the results come back as
  ``pyopencl.array.Array`` s then, else as NumPy arrays.  NumPy arguments are copied to
  the device once on entry and results once on exit.
- Kernels, GEMM (``gemm.py``) and the other steps with a device operand run on the
  device (``DEVICE`` below, ``ops.py``): views and reshapes (a reshape of a contiguous
  array is a view; a transpose or a slice is one copy kernel), integer-array and basic
  indexing (a gather kernel), its gradient (a scatter-add kernel), fills and zeros,
  concatenation, selects with a scalar condition.  Array constants of the program are
  uploaded once (:class:`~myc.backends.opencl.device.DeviceConst`).
- A step with no device implementation runs its NumPy reference on host copies of its
  operands and its result goes back to the device: each such step is reported when
  the program is compiled (``f.stats()``, a ``MycFallbackWarning``) and counted per
  call in :func:`host_fallbacks`; :func:`transfers` counts every copy either way.
- Loops and typed calls take device values as they are: a loop's carried arrays stay
  on the device; what the host reads each iteration is the loop's condition (a scalar,
  counted as ``scalar_reads``, never an array copy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from myc.backends.device_host import STRUCTURAL, DeviceHost, is_runner, program_scalar
from myc.backends.opencl import gemm, ops
from myc.backends.opencl.device import (
    DeviceConst,
    NotOnDevice,
    count,
    host_fallbacks,
    on_device,
    read_scalar,
    reset_transfers,
    transfers,
)
from myc.backends.opencl.device import device as _dev
from myc.backends.opencl.ops import as_device, to_host
from myc.errors import MycValueError
from myc.lower.post import Post, finish, finish_outputs
from myc.prims.abstract import AArray, AScalar
from myc.prims.containers import leaves, map_leaves, to_python
from myc.support.stats import lowering_fallback, lowering_note

# step name -> its device implementation (operands as the step gets them); it returns
# a device array or raises ``NotOnDevice`` (then the host runs the step, counted)
DEVICE: dict[str, Callable[..., Any]] = {
    "matmul": gemm.matmul,
    "dot": gemm.dot,
    "mT": ops.m_t,
    "transpose": ops.transpose,
    "reshape": ops.reshape,
    "broadcast_to": ops.broadcast_to,
    "concatenate": ops.concatenate,
    "getitem": ops.getitem,
    "getitem_grad": ops.getitem_grad,
    "index_set": ops.index_set,
    "dynamic_slice": ops.dynamic_slice,
    "dynamic_slice_grad": ops.dynamic_slice_grad,
    "select": ops.select,
}


class OpenCLHost(DeviceHost):
    """The shared value hooks (``myc.backends.device_host``) on myc's OpenCL device."""

    const = DeviceConst

    def on_device(self, v: Any) -> bool:
        return on_device(v)

    def to_host(self, v: Any) -> Any:
        return to_host(v)

    def read_scalar(self, v: Any) -> Any:
        return read_scalar(v)

    def upload(self, host: np.ndarray) -> Any:
        return _dev().upload(host)

    def count_fallback(self, name: str) -> None:
        count(f"host:{name}")


HOST = OpenCLHost()
count_fallback = HOST.count_fallback
any_on_device = HOST.any_on_device
to_host_values = HOST.to_host_values
to_device_values = HOST.to_device_values
body_results = HOST.body_results
device_constants = HOST.device_constants
results = HOST.results


def stack_on_device(column: list[Any], dtype: Any) -> Any:
    """A loop tape's column (one value per iteration) as one device array."""
    dt = np.dtype(np.bool_ if dtype == np.uint8 else dtype)
    return ops.stack([as_device(v, dt) for v in column], dt)


def device_scalar(r: Any, a: Any) -> Any:
    """A step's device result whose type is the scalar ``a``: a NumPy-typed scalar stays
    on the device as a 0-d array (read only where the host needs its value); a Python
    scalar is read now."""
    if not isinstance(a, AScalar):
        return r
    if a.weak:
        return program_scalar(read_scalar(r), a)
    r = r.reshape(())
    return r if r.dtype == a.dtype else ops.astype(r, a.dtype)


def finish_on_device(value: Any, post: Post) -> Any:
    """``myc.lower.post.finish`` for a device kernel result: an array, or a scalar of a
    NumPy type, stays on the device; a Python scalar is read back."""
    if not on_device(value):
        return finish(value, post)
    if post.divide_by is not None:
        value = ops.divide(value, post.divide_by)
    if post.scalar is not None:
        return device_scalar(value, post.scalar)
    if post.reshape is not None:
        value = value.reshape(post.reshape)
    return value


def run_kernel(unit: Any, vals: tuple) -> list[Any]:
    """A kernel step on device operands: its results stay on the device."""
    compiled = unit.compiled
    launch = getattr(compiled, "launch", None)
    outs = launch(list(vals)) if launch is not None else compiled(list(vals))
    return finish_outputs(unit, outs, finish_on_device)


class HostStep:
    """A non-kernel step of an opencl program: on the device when an operand is there
    and the step has a device implementation (``DEVICE``), else the NumPy reference on
    host copies, counted (and its result back on the device)."""

    def __init__(self, fn: Any, name: str):
        self.fn = fn
        self.name = name
        self._init()

    def _init(self) -> None:
        self.runner = is_runner(self.fn)
        a = getattr(self.fn, "abstract", None)
        self.scalar = isinstance(a, AScalar)
        # the step's own primitive; a ``guarded`` step is named after the op it guards,
        # which it calls after its path flag and the op (``myc.prims.control``)
        prim = getattr(getattr(self.fn, "prim", self.fn), "name", None)
        own = prim == self.name
        self.guarded = prim == "guarded"
        self.device_fn = DEVICE.get(self.name) if own or self.guarded else None
        self.creates = own and self.name in ops.CREATORS

    def __getstate__(self) -> dict:
        return {"fn": self.fn, "name": self.name}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._init()

    def __call__(self, *vals: Any) -> Any:
        if self.runner:  # a loop or typed call: device values go in as they are
            return self.fn(*(v.device() if type(v) is DeviceConst else v for v in vals))
        dev = False
        for v in leaves(vals):
            if type(v) is DeviceConst or on_device(v):
                dev = True
                break
        if self.creates:  # zeros, ones, full...: made on the device
            return ops.create(self.name, self.fn, vals)
        if not dev:  # host operands only (a loop's counters and flags): the reference
            return self.fn(*vals)
        if self.name in STRUCTURAL:
            return self.fn(*(v.device() if type(v) is DeviceConst else v for v in vals))
        on = [v for v in leaves(vals) if on_device(v)]
        if all(v.ndim == 0 for v in on) and (on or self.device_fn is None):
            # arithmetic on device scalars (a condition, a step size): the host reads
            # them -- a scalar each, not an array.  (Only constants and host values: a
            # step with a device version runs there -- W5's gradient loop selected
            # between two constant arrays, and uploaded the one it took, every
            # iteration.)
            r = self.fn(*(map_leaves(v, lambda x: read_scalar(x) if on_device(x)
                               else to_host(x)) for v in vals))
            return _dev().upload(r) if type(r) is np.ndarray else r
        if self.guarded and self.device_fn is not None:
            path = vals[0]
            if on_device(path):
                path = read_scalar(path)[()]
            if not path:  # off the branch taken: a zero, the operands unread
                r = self.fn(False, *vals[1:])
                return _dev().upload(r) if type(r) is np.ndarray else r
        if self.device_fn is not None:
            try:  # (a guarded step's operands follow its path, prim and abstract)
                r = self.device_fn(*(vals[3:] if self.guarded else vals))
            except NotOnDevice:
                pass
            else:
                return device_scalar(r, self.fn.abstract) if self.scalar else r
        count_fallback(self.name)
        r = self.fn(*(map_leaves(v, to_host) for v in vals))
        return map_leaves(r, lambda x: _dev().upload(x) if type(x) is np.ndarray else x)

    @property
    def note(self) -> str:
        """Which GEMM a matrix product runs (``gemm.choice``), for ``myc.ir``."""
        if self.name not in _GEMM or self.device_fn is None:
            return ""
        return gemm.describe_choice(_dev().cpu)

    def __str__(self) -> str:
        return str(self.fn)


_GEMM = {"matmul", "dot"}


def adapt(steps: list[Any], outputs: list[tuple[bool, Any]], specs: list[Any] | None
          ) -> list[tuple[bool, Any]]:
    """Wrap the non-kernel steps of an opencl host program (in place); array constants
    become :class:`DeviceConst` s, uploaded once; the outputs likewise.  A step with
    array operands and no device implementation is reported (the lowering's fallback
    record: ``f.stats()``, a ``MycFallbackWarning``): it will run on the host."""
    from myc.backends.opencl.runtime import unsupported_dtype
    from myc.lower.program import KernelUnit

    if specs is not None:  # a dtype the device lacks: refused now, at its line
        for st in steps:
            outs = st.outputs if st.outputs is not None else [st.output]
            for o in outs:
                a = specs[o] if o < len(specs) else None
                err = unsupported_dtype(a.dtype) if isinstance(a, AArray) else None
                if err is not None:
                    raise err.with_loc(st.loc)
    for st in steps:
        if isinstance(st.fn, KernelUnit):  # constant operands uploaded once, scalars too
            dts = [np.dtype(b.dtype) for b in st.fn.plan.kernel.inputs]
            st.inputs = [(False, DeviceConst(np.asarray(x, dtype=dt)))
                         if not is_slot and not isinstance(x, DeviceConst) else (is_slot, x)
                         for (is_slot, x), dt in zip(st.inputs, dts, strict=True)]
            continue
        if not isinstance(st.fn, HostStep):
            st.fn = h = HostStep(st.fn, st.name)
            if specs is not None and not h.runner and h.device_fn is None and \
                    not h.creates and st.name not in STRUCTURAL and any(
                    is_slot and isinstance(specs[x], AArray) and specs[x].shape
                    for is_slot, x in st.inputs):
                lowering_fallback("opencl-host-step",
                       f"'{st.name}' has no OpenCL implementation: it runs on the host, "
                       "its operands copied there and back", st.loc)
            if h.note:
                lowering_note("gemm", h.note)
        st.inputs = device_constants(st.inputs)
    return device_constants(outputs)


def _opencl_arrays(bound: list[Any]) -> list[Any]:
    """The PyOpenCL arrays among a call's arguments (in tuples, lists and dicts; no
    deeper than the argument check allows, which names a structure nested deeper)."""
    found = []
    stack = [(v, 0) for v in bound]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, tuple | list):
            if depth < _MAX_DEPTH:
                stack.extend((x, depth + 1) for x in v)
        elif isinstance(v, dict):
            if depth < _MAX_DEPTH:
                stack.extend((x, depth + 1) for x in v.values())
        elif type(v).__module__.startswith("pyopencl"):
            found.append(v)
    return found


_MAX_DEPTH = 64


def device_call(run: Callable[..., Any], names: list[str], bound: list[Any],
                check_args: Callable[..., Any], own_outputs: Callable[[Any], Any]) -> Any:
    """``run`` on a call's positional arguments: ``pyopencl.array.Array`` s stay on the
    device, and then the results are device arrays too; else NumPy in, NumPy out.
    ``check_args`` and ``own_outputs``: the runtime's argument check and result copy."""
    found = _opencl_arrays(bound)
    if not found:
        return own_outputs(run(*check_args(names, tuple(bound))))
    dev = _dev()
    for a in found:
        if type(a) is not dev.Array:
            raise MycValueError(f"backend='opencl' takes pyopencl.array.Array arguments, "
                                f"not {type(a).__name__}")
        if a.context != dev.ctx:
            raise MycValueError(
                "backend='opencl': an argument lives in another OpenCL context; create "
                "it with myc's queue (myc.backends.opencl.runtime.device().queue)")
    out = run(*check_args(names, tuple(bound)))
    ids = {id(a) for a in found}

    def own(v: Any) -> Any:
        if type(v) is dev.Array:
            if id(v) in ids or v.base_data is not None and any(
                    v.base_data == a.base_data for a in found):
                return ops.copy(v)  # the caller's own array, not a view of an argument
            return v
        if type(v) is np.ndarray:
            return dev.upload(v)
        if type(v) is DeviceConst:  # a constant of the program: the caller's own copy
            return dev.upload(v.host)
        return own_outputs(v)

    return to_python(map_leaves(out, own))  # (the program's lists and dicts as Python's)


__all__ = ["DEVICE", "HostStep", "adapt", "any_on_device", "body_results",
           "count_fallback", "device_call", "device_constants", "device_scalar",
           "finish_on_device", "host_fallbacks", "reset_transfers", "results",
           "run_kernel", "stack_on_device", "to_device_values", "to_host_values",
           "transfers"]
