"""What runs where in a host program on a GPU backend (``"cuda"``, ``"rocm"``: CuPy).

"CUDA array" below means a GPU array CuPy takes: on ROCm, CuPy's ROCm build's arrays
and ROCm ``__dlpack__`` arrays (a ROCm torch tensor); the rest is the same for both.

- A call's CUDA array arguments stay on the device: CuPy arrays as they are, any other
  ``__dlpack__`` CUDA array (a CUDA torch tensor) through ``cupy.from_dlpack``, without a
  copy (:func:`device_call`).  The specializer keys on their shape and dtype only
  (``myc.prims.abstract.DEVICE_ARRAY_TYPES``); a signature's first call copies them to
  the host once to trace, and a call that the reference evaluator must run (a graph
  break) copies them too -- counted in :func:`host_fallbacks`.
- NumPy arguments are copied to the GPU once on entry; the results come back as NumPy
  when no argument was a CUDA array, else as CuPy arrays (host results uploaded).
- Fused kernels run on the GPU and return CuPy arrays; a kernel's result that feeds
  another kernel stays on the device.  Array constants of the program are uploaded once
  (:class:`DeviceConst`), not on every call.
- Matrix products with an operand on the device run there (CuPy's ``matmul``/``dot``,
  cuBLAS; inside a CUDA graph capture, which CuPy's cuBLAS calls refuse, 2-D float
  products call cuBLAS themselves: ``gpu.capture_gemm``).  Every other step with a
  device operand (views, gathers, fills, selects, scalar arithmetic on device
  scalars) runs its NumPy reference on the CuPy operands (``__array_function__``,
  CuPy's operators); only when that raises do its operands come to the host --
  counted per step name in :func:`host_fallbacks`, never silently.
- Loops and typed calls take device values as they are: a loop's carried arrays stay on
  the device; what comes back each iteration is the loop condition (a scalar the body
  computed: one device-to-host read).  Scalar results of kernels (reductions to a
  scalar) are read back as NumPy scalars, as the program's types promise.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from myc.backends import device_host
from myc.backends.device_host import STRUCTURAL, DeviceHost, is_runner
from myc.backends.gpu import bounds, capture_gemm, fastcall
from myc.lower.post import Post, finish
from myc.prims.abstract import DEVICE_ARRAY_TYPES, AScalar
from myc.prims.containers import map_leaves, to_python

_ON_DEVICE = {"matmul", "dot"}
# views (no kernel of CuPy's own): on the device even where CuPy cannot compile kernels
_VIEWS = {"mT", "transpose", "reshape", "getitem", "dynamic_slice", "dynamic_slice_grad"}
_HOST_TYPES = (np.ndarray, tuple, float, int, bool, type(None))

_fallbacks: Counter[str] = Counter()
# the device memory of uploaded constants: a result there is copied before it is returned
_const_spans: list[tuple[int, int]] = []
_const_ids: set[int] = set()  # those arrays themselves (kept alive by their DeviceConst)
_fallback_lock = threading.Lock()


def host_fallbacks() -> dict[str, int]:
    """How many times each step name (or ``"evaluator"``: a call the reference evaluator
    ran) copied device operands to the host since the process started (or the last
    :func:`reset_host_fallbacks`)."""
    return dict(_fallbacks)


def reset_host_fallbacks() -> None:
    _fallbacks.clear()


def count_fallback(name: str) -> None:
    if bounds.capturing():  # (a capture the host step ends: refused, counted there)
        return
    with _fallback_lock:
        _fallbacks[name] += 1


def on_device(v: Any) -> bool:
    """Is ``v`` a device array of the program (a CuPy array)?"""
    return type(v) in DEVICE_ARRAY_TYPES


def to_host(v: Any) -> Any:
    if type(v) in DEVICE_ARRAY_TYPES:
        return v.get()
    if type(v) is DeviceConst:
        return v.host
    return v


# the runtime module of the GPU backend in use, and its name (one CuPy a process)
_runtime: list[Any] = [None, ""]


def use(backend: str) -> None:
    """Host steps run on ``backend`` 's device (``"cuda"`` or ``"rocm"``): CuPy is one
    module for both vendors, built for one of them, so a process uses one at a time
    (set by every GPU program's lowering and call)."""
    if _runtime[1] != backend:
        import importlib

        _runtime[:] = [importlib.import_module(f"myc.backends.{backend}.runtime"), backend]


def _rt() -> Any:
    if _runtime[0] is None:
        use("cuda")
    return _runtime[0]


def _cp() -> Any:
    runtime = _rt()
    dev = runtime._device  # (opened: no lock to take on every step)
    return (dev if dev is not None else runtime.device()).cp


def _elementwise() -> bool:
    """Can CuPy compile its elementwise kernels (``gpu.runtime._can_compile``)?"""
    runtime = _rt()
    dev = runtime._device
    return getattr(dev if dev is not None else runtime.device(), "elementwise", True)


def stack_on_device(column: list[Any], dtype: Any) -> Any:
    """A loop tape's column (one value per iteration) as one device array."""
    cp = _cp()
    if not _elementwise():  # (CuPy cannot stack here) the tape on the host, counted
        count_fallback("tape")
        return np.array([to_host(v) for v in column], dtype=dtype)
    arrays = [v if type(v) in DEVICE_ARRAY_TYPES else v.device() if type(v) is DeviceConst
              else cp.asarray(np.asarray(v)) for v in column]
    out = cp.stack(arrays)
    if out.dtype != dtype:
        out = out.view(cp.uint8) if out.dtype == np.bool_ else out.astype(dtype)
    return out


class DeviceConst(device_host.DeviceConst):
    """An array constant of a GPU host program: uploaded on first use, then reused by
    every call (the host copy is what the disk cache stores)."""

    def upload(self, host: np.ndarray) -> Any:
        dev = _cp().asarray(host)
        if type(dev) in DEVICE_ARRAY_TYPES and dev.size:
            _const_spans.append(_span(dev))
            _const_ids.add(id(dev))
            bounds.CONST_OF[id(dev)] = self  # (the bounds checks know a constant index)
        return dev


class GpuHost(DeviceHost):
    """The shared value hooks (``myc.backends.device_host``) on the CuPy device in
    use."""

    const = DeviceConst

    def on_device(self, v: Any) -> bool:
        return type(v) in DEVICE_ARRAY_TYPES

    def any_on_device(self, values: list[Any]) -> bool:
        for v in values:  # (the arguments themselves: ``device_call`` found nested ones)
            if type(v) in DEVICE_ARRAY_TYPES:
                return True
        return False

    def to_host(self, v: Any) -> Any:
        return to_host(v)

    def read_scalar(self, v: Any) -> Any:
        return v.get()

    def upload(self, host: np.ndarray) -> Any:
        return _cp().asarray(host)

    def count_fallback(self, name: str) -> None:
        count_fallback(name)


HOST = GpuHost()
any_on_device = HOST.any_on_device
to_host_values = HOST.to_host_values
to_device_values = HOST.to_device_values
device_constants = HOST.device_constants


def _device_operands(vals: tuple) -> tuple:
    """``vals`` with host arrays uploaded (constants once: :class:`DeviceConst`)."""
    out = []
    for v in vals:
        t = type(v)
        if t is DeviceConst:
            v = v.device()
        elif t is np.ndarray:
            v = _cp().asarray(v)
        out.append(v)
    return tuple(out)


class HostStep:
    """A non-kernel step: on the device when an operand is there (GEMM through cuBLAS,
    anything else as its NumPy reference on CuPy operands), else the NumPy reference;
    a step that cannot run on the device operands runs on host copies, counted."""

    def __init__(self, fn: Any, name: str):
        self.fn = fn
        self.name = name
        self.runner = is_runner(fn)
        self.condition = _is_condition(fn)
        self.select = _is_select(fn)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.runner = is_runner(self.fn)
        self.condition = _is_condition(self.fn)
        self.select = _is_select(self.fn)

    def __call__(self, *vals: Any) -> Any:
        if self.runner:  # a loop or typed call: device values go in as they are
            return self.fn(*(v.device() if type(v) is DeviceConst else v for v in vals))
        if self.select and len(vals) == 3 and type(vals[0]) not in DEVICE_ARRAY_TYPES \
                and type(vals[0]) is not DeviceConst:
            # an array select on a host condition (a loop body's): the chosen operand,
            # when it is on the device, is the answer (what the reference gives)
            chosen = vals[1] if bool(vals[0]) else vals[2]
            if type(chosen) in DEVICE_ARRAY_TYPES:
                return chosen
        for v in vals:
            t = type(v)
            if t is DeviceConst or t in DEVICE_ARRAY_TYPES:
                break
        else:  # host operands only (a loop body's counters and flags): the reference
            return self.fn(*vals)
        # on the device when an operand is there; an array constant counts as there
        # unless a host array is an operand too (then the host has the step)
        dev = const = host = False
        for v in vals:
            t = type(v)
            if t in DEVICE_ARRAY_TYPES:
                dev = True
            elif t is DeviceConst:
                const = True
            elif t is np.ndarray:
                host = True
        if not dev and (host or not const):
            return self.fn(*(v.host if type(v) is DeviceConst else v for v in vals))
        if self.condition and all(v.ndim == 0 for v in vals
                                  if type(v) in DEVICE_ARRAY_TYPES):
            # a truth value of device scalars (a loop's or a branch's condition): the
            # host needs it anyway -- read the scalars once here, not at every use
            return self.fn(*(to_host(v) for v in vals))
        if self.name in STRUCTURAL:
            if dev and self.name == "make_tuple":  # (an index: CuPy would upload a host
                return self.fn(*_device_operands(vals))  # array in it every call)
            return self.fn(*(v.host if type(v) is DeviceConst else v for v in vals))
        if self.name in _ON_DEVICE:
            cp = _cp()
            if bounds.capturing() and len(vals) == 2:  # (CuPy refuses cuBLAS there)
                return capture_gemm.matmul(cp, self.name, *_device_operands(vals))
            return getattr(cp, self.name)(*_device_operands(vals))
        if self.name == "getitem" and len(vals) == 2:  # CuPy would wrap: checked first
            bounds.check_index(*vals)
        if self.name in _VIEWS or _elementwise():
            try:  # (a reference that tests for NumPy arrays has a device version)
                return self.fn(*_device_operands(vals))
            except Exception:  # noqa: BLE001 - not covered on the device: the host runs it
                pass
        count_fallback(self.name)
        return self.fn(*(to_host(v) for v in vals))

    def __str__(self) -> str:
        return str(self.fn)


def _is_select(fn: Any) -> bool:
    """Is ``fn`` the ``select`` primitive itself (an array result, nothing to finish)?"""
    from myc.prims import P

    return fn is P.select


def _is_condition(fn: Any) -> bool:
    """Does ``fn`` compute a bool scalar (a condition the host will branch on)?"""
    a = getattr(fn, "abstract", None)
    return isinstance(a, AScalar) and a.dtype == np.bool_


def device_scalar(r: Any, a: Any) -> Any:
    """A step's device result whose type is the scalar ``a``: a NumPy-typed scalar stays
    on the device as a 0-d array (read only where the host needs its value: a branch,
    a loop condition, the program's result); a Python scalar is read now."""
    if not isinstance(a, AScalar):
        return r
    if a.weak or (r.dtype != a.dtype and not _elementwise()):
        v = r.get()[()]
        return {"f": float, "i": int, "b": bool}[a.dtype.kind](v) if a.weak \
            else a.dtype.type(v)
    r = r.reshape(())
    return r if r.dtype == a.dtype else r.astype(a.dtype)


def finish_on_device(value: Any, post: Post) -> Any:
    """``myc.lower.post.finish`` for a CuPy kernel result: an array, or a scalar of a
    NumPy type, stays on the device; a Python scalar is read back."""
    if type(value) not in DEVICE_ARRAY_TYPES:
        return finish(value, post)
    if post.divide_by is not None and not _elementwise():  # (CuPy cannot divide here)
        return finish(value.get(), post)
    if post.scalar is not None:
        if post.divide_by is not None:
            value = value / value.dtype.type(post.divide_by) \
                if value.dtype.kind == "f" else value / post.divide_by
        return device_scalar(value, post.scalar)
    if post.divide_by is not None:
        value = value / value.dtype.type(post.divide_by) if value.dtype.kind == "f" \
            else value / post.divide_by
    if post.reshape is not None:
        value = value.reshape(post.reshape)
    return value


class ViewMemo:
    """A view step (``getitem`` with a constant index, ``reshape``, ``mT``...) of a
    device array: while its operand is the same array object as last time, the view
    made then is the answer (the same memory, the same shape and strides) -- W6's 64
    ``coeffs[i]`` cost a CuPy view and a reshape each, every call, before.  A result
    that is not a view of the operand (a copy: a reshape of a non-contiguous array, a
    gather) is never kept; after a few misses in a row (an operand made anew each
    call) the step stops trying.  The memo holds the last view, and so its operand's
    memory, until the next call with another operand."""

    def __init__(self, step: HostStep):
        self.step = step
        self.memo: tuple[Any, Any] | None = None  # (operand, its view): one object,
        self.misses = 0  # so that threads see both or neither

    def __call__(self, x: Any, *rest: Any) -> Any:
        memo = self.memo
        if memo is not None and x is memo[0]:
            return memo[1]
        r = self.step(x, *rest)
        if self.misses < 3:
            self.misses += 1
            base = x.device() if type(x) is DeviceConst else x
            if type(base) in DEVICE_ARRAY_TYPES and type(r) in DEVICE_ARRAY_TYPES and \
                    r.size and _inside(_span(r), _span(base)):
                self.memo, self.misses = (x, r), 0
        return r


def _inside(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return b[0] <= a[0] and a[1] <= b[1]


def step_call(step: Any) -> tuple[Callable[..., Any], bool]:
    """How a GPU host program calls ``step`` (``Target.step_call``)."""
    from myc.lower.program import KernelUnit

    fn = step.fn
    if isinstance(fn, KernelUnit):
        return kernel_call(fn), True  # its operands as one tuple
    if type(fn) is HostStep and fn.name in _VIEWS and step.inputs and \
            not any(is_slot for is_slot, _ in step.inputs[1:]):
        return ViewMemo(fn), False
    return fn, False


def kernel_call(unit: Any) -> Callable[[tuple], list[Any]]:
    """A kernel step of a host program as one call on its operands (a tuple): the
    compiled kernel itself when no output needs finishing (a division, a reshape, a
    scalar), else the kernel and its outputs' finish."""
    compiled = unit.compiled
    post = unit.plan.post
    if all(p.divide_by is None and p.reshape is None and p.scalar is None for p in post):
        return compiled

    def run(vals: tuple) -> list[Any]:
        return [finish_on_device(o, p) for o, p in zip(compiled(vals), post, strict=True)]

    return run


def adapt(steps: list[Any]) -> None:
    """Wrap the non-kernel steps of a GPU host program (in place); array constants
    become :class:`DeviceConst` s, uploaded once."""
    from myc.lower.program import KernelUnit

    for st in steps:
        if not isinstance(st.fn, KernelUnit | HostStep):
            st.fn = HostStep(st.fn, st.name)
        st.inputs = device_constants(st.inputs)


# DLPack device types: CUDA, CUDA host (pinned), CUDA managed, ROCm, ROCm host
_DL_GPU = (2, 3, 13, 10, 11)


def _foreign(v: Any, found: list[Any]) -> Any:
    """A CUDA array of another library (a CUDA torch tensor...) as a CuPy array sharing
    its memory; anything else as it is.  CuPy arrays are noted in ``found``."""
    t = type(v)
    if t in _HOST_TYPES or isinstance(v, np.generic):
        return v
    if t in DEVICE_ARRAY_TYPES:
        found.append(v)
        return v
    if isinstance(v, tuple):
        return tuple(_foreign(x, found) for x in v)
    if t.__module__.split(".", 1)[0] == "cupy":  # the GPU not opened yet: open it
        _cp()
        if t in DEVICE_ARRAY_TYPES:
            found.append(v)
            return v
    try:
        kind = v.__dlpack_device__()[0] if hasattr(v, "__dlpack_device__") else None
    except Exception:  # noqa: BLE001 - not an array we can take
        kind = None
    cp = None
    if kind in _DL_GPU:
        cp = _cp()
        if getattr(v, "requires_grad", False):  # torch refuses to export those
            v = v.detach()
        arr = cp.from_dlpack(v)
    else:
        try:
            cuda = hasattr(v, "__cuda_array_interface__")
        except Exception:  # noqa: BLE001 - e.g. a torch tensor that requires grad
            cuda = False
        if not cuda:
            return v
        cp = _cp()
        arr = cp.asarray(v)
    found.append(arr)
    return arr


def _span(a: Any) -> tuple[int, int]:
    data = getattr(a, "data", None)
    ptr = data.ptr if hasattr(data, "ptr") else a.__cuda_array_interface__["data"][0]
    return ptr, ptr + max(int(a.nbytes), 1)


def device_call(run: Callable[..., Any], names: list[str], bound: list[Any],
                check_args: Callable[..., Any], own_outputs: Callable[[Any], Any],
                backend: str = "cuda") -> Any:
    """``run`` on a call's positional arguments: GPU arrays stay on the device (CuPy
    arrays as they are, other ``__dlpack__`` GPU arrays through ``cupy.from_dlpack``);
    the results are CuPy arrays when an argument was a GPU array, else NumPy.
    ``check_args`` and ``own_outputs``: the runtime's argument check and result copy.
    A repeat call whose arguments are all CuPy arrays of a signature seen before takes
    the fast path (``gpu.fastcall``)."""
    use(backend)
    fast = fastcall.lookup(run, bound)
    if fast is not None:
        out = fast.call(bound, _rt().device(), backend)
        if out is not fastcall.MISSED:
            return own_results(out, bound, own_outputs)
    found: list[Any] = []
    bound = [_foreign(v, found) for v in bound]
    if not found:
        return own_outputs(run(*check_args(names, tuple(bound))))
    dev = _rt().device()
    fastcall.check_devices(found, dev, backend)
    checked = check_args(names, tuple(bound))
    out = run(*checked)
    fastcall.note(run, bound, checked, backend)
    return own_results(out, found, own_outputs)


def _root(a: Any) -> Any:
    """The array owning ``a`` 's memory (the end of its chain of bases)."""
    while True:
        b = getattr(a, "base", None)
        if b is None:
            return a
        a = b


def own_results(out: Any, found: list[Any], own_outputs: Callable[[Any], Any]) -> Any:
    """A program's results as the caller of a call with device arguments (``found``)
    gets them: CuPy arrays it owns -- a view of an argument or of a constant copied,
    host arrays uploaded."""
    spans: list[tuple[int, int]] | None = None
    roots: set[int] | None = None

    def own(v: Any) -> Any:
        nonlocal spans, roots
        t = type(v)
        if t in DEVICE_ARRAY_TYPES:
            base = v.base
            if base is None:
                if id(v) not in _const_ids and not any(v is a for a in found):
                    return v  # owns its memory (a kernel's or GEMM's result): no view
            else:  # a view: of what memory (its base's base... CuPy keeps one step)?
                if roots is None:
                    roots = {id(_root(a)) for a in found}
                root = id(_root(base))
                if root not in roots and root not in _const_ids:
                    return v  # of memory this call allocated (a reshaped kernel result)
            if spans is None:
                spans = [_span(a) for a in found] + _const_spans
            lo, hi = _span(v)
            if any(lo < b and a < hi for a, b in spans):  # a view of an argument
                return v.copy() if _elementwise() else _cp().asarray(v.get())
            return v
        if t is np.ndarray:
            return _cp().asarray(v)
        if t is DeviceConst:  # a constant of the program: the caller's own copy
            return _cp().asarray(v.host)
        return own_outputs(v)

    return to_python(map_leaves(out, own))  # (the program's lists and dicts as Python's)
