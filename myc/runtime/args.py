"""Checking and converting the arguments of a myc function, and protecting its outputs.

Accepted: Python ``bool``/``int``/``float``, NumPy scalars and arrays of dtype float32,
float64, int64 or bool, and (nested) tuples of these; on ``backend="cuda"`` also CuPy
arrays of those dtypes (``myc.backends.gpu.host`` turns other CUDA arrays into CuPy
ones first), passed through untouched: their data stays on the device.  NumPy arrays
are handed to the program as read-only views so no stage can mutate a caller's array;
outputs that share memory with an input or a constant are copied so the caller owns
what it gets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from myc.errors import MycTypeError, MycValueError
from myc.ir.nodes import Closure
from myc.prims import Primitive
from myc.prims.abstract import DEVICE_ARRAY_TYPES
from myc.prims.containers import (
    DictValue,
    ListValue,
    ObjectValue,
    ObjMeta,
    Unsupported,
    container_meta,
    is_namedtuple,
    kind_of,
    like,
    to_python,
)
from myc.runtime import static_args


def is_generator(v: Any) -> bool:
    """A ``numpy.random.Generator``/``RandomState`` (used by reference by the draws of
    ``myc/prims/effects.py``); by type name, not importing ``numpy.random``."""
    t = type(v)
    return t.__name__ in ("Generator", "RandomState") and \
        t.__module__.startswith("numpy.random")

# what an ndarray subclass overrides when its arithmetic, indexing or NumPy functions
# mean something else than a plain array's (a mask, matrix products...)
_SEMANTIC_HOOKS = frozenset({
    "__array_ufunc__", "__array_function__", "__getitem__", "__add__", "__sub__",
    "__mul__", "__matmul__", "__truediv__", "__pow__", "__neg__", "__radd__", "__rmul__",
    "__rsub__", "__rtruediv__", "__rpow__", "__rmatmul__", "__iadd__", "__imul__",
    "__array_wrap__", "__array_prepare__",
})


def _plain_array(value: np.ndarray, path: str) -> np.ndarray:
    """An ndarray subclass as the plain array myc computes with, or a ``MycTypeError``
    when it has semantics a compiled program would silently drop.

    A masked array's mask and a ``np.matrix``'s matrix product (``*``) and 2-d indexing
    are not honoured by compiled code, so they are refused (the caller decides: e.g.
    ``x.filled(0.0)`` or ``np.asarray(x)``).  Likewise any subclass overriding arithmetic,
    indexing or NumPy's dispatch hooks.  A subclass that only adds attributes (and
    ``np.memmap``, a file-backed plain array) is read as a plain ndarray.
    """
    cls = type(value)
    if isinstance(value, np.ma.MaskedArray):
        raise MycTypeError(f"{_describe(path)} is a masked array; myc would ignore its mask",
                           hint="pass x.filled(fill_value) or x.compressed(), or "
                                "np.asarray(x) to drop the mask on purpose")
    if isinstance(value, np.matrix):
        raise MycTypeError(f"{_describe(path)} is a np.matrix, whose * is a matrix product; "
                           "myc computes with plain arrays",
                           hint="pass np.asarray(x) and use @ for matrix products")
    if not issubclass(cls, np.memmap):
        for base in cls.__mro__:
            if base is np.ndarray:
                break
            hooks = _SEMANTIC_HOOKS.intersection(vars(base))
            if hooks:
                raise MycTypeError(
                    f"{_describe(path)} is a {cls.__name__}, an ndarray subclass that "
                    f"overrides {', '.join(sorted(hooks))}; compiled code would not call "
                    "it", hint="pass np.asarray(x) to compute with the plain array")
    return value.view(np.ndarray)


ALLOWED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64),
                  np.dtype(np.bool_))


def _describe(path: str) -> str:
    return f"argument {path}"


MAX_NESTING = 64
"""How deeply tuples may nest in an argument (each level is a level of recursion in
every stage that walks arguments: deeper would exhaust Python's stack)."""


def check_arg(value: Any, path: str, depth: int = 0) -> Any:
    """The value as the program sees it, or a ``MycTypeError`` naming the argument."""
    if isinstance(value, (Closure, Primitive)):  # a function default (act=np.tanh)
        return value
    if value is None or type(value) is str:
        # static values, as a default (``mask=None``, ``mode="mean"``) or passed: part of
        # the signature by value, like an int deciding a branch (JAX's static argnums)
        return value
    if isinstance(value, (bool, int, float)):
        if isinstance(value, int) and not isinstance(value, bool) and not (
                -(2**63) <= value < 2**63):
            raise MycTypeError(f"{_describe(path)} is an int too large for int64")
        return value
    if isinstance(value, np.generic):
        if value.dtype not in ALLOWED_DTYPES:
            raise MycTypeError(f"{_describe(path)} has unsupported dtype {value.dtype}; myc "
                               "supports float32, float64, int64 and bool")
        return value
    if isinstance(value, np.ndarray) and type(value) not in DEVICE_ARRAY_TYPES:
        if type(value) is not np.ndarray:
            value = _plain_array(value, path)
        if value.dtype not in ALLOWED_DTYPES:
            raise MycTypeError(f"{_describe(path)} is an array of unsupported dtype "
                               f"{value.dtype}; myc supports float32, float64, int64 and bool",
                               hint="convert it first, e.g. x.astype(np.float64)")
        view = value.view()
        view.flags.writeable = False
        return view
    if isinstance(value, (tuple, list, dict)):
        if depth >= MAX_NESTING:
            where = path.split("[", 1)[0]
            raise MycTypeError(f"{_describe(where)} nests tuples more than {MAX_NESTING} "
                               "levels deep; myc's limit", hint="flatten the structure, "
                               "or pass its leaves as an array")
        if isinstance(value, dict):
            if type(value) is not dict:
                raise MycTypeError(f"{_describe(path)} is a {type(value).__name__}; myc "
                                   "accepts plain dicts", hint="pass dict(x)")
            for k in value:
                if not _static_key(k):
                    raise MycTypeError(f"{_describe(path)} is a dict with key {k!r}; dict "
                                       "keys must be str, int, float, bool or None (or "
                                       "tuples of these)")
            return DictValue(tuple(value), [check_arg(v, f"{path}[{k!r}]", depth + 1)
                                            for k, v in value.items()])
        if isinstance(value, list):
            if type(value) is not list:
                raise MycTypeError(f"{_describe(path)} is a {type(value).__name__}; myc "
                                   "accepts plain lists", hint="pass list(x)")
            return ListValue([check_arg(v, f"{path}[{i}]", depth + 1)
                              for i, v in enumerate(value)])
        items = [check_arg(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
        if is_namedtuple(value) or type(value) in (ListValue, DictValue):
            return like(value, items)
        return tuple(items)
    if type(value) in DEVICE_ARRAY_TYPES:  # a CuPy array (backend="cuda"): stays there
        if np.dtype(value.dtype) not in ALLOWED_DTYPES:
            raise MycTypeError(f"{_describe(path)} is a device array of unsupported dtype "
                               f"{value.dtype}; myc supports float32, float64, int64 and "
                               "bool", hint="convert it first, e.g. x.astype(cupy.float32)")
        return value
    if is_generator(value):
        return value  # used by reference by the draws (myc/prims/effects.py)
    if static_args.is_function(value):  # compiled in (myc/runtime/static_args.py)
        return static_args.function_value(value, _describe(path))
    from myc.runtime import bound_call

    called = bound_call.parts(value)
    if called is not None:  # a partial, a bound method: its function and its data
        fn, data = called
        methods, graphs = static_args.method_values(bound_call.BoundCall)
        return ObjectValue(ObjMeta(bound_call.BoundCall, ("fn", "data"), methods), [
            static_args.function_value(fn, _describe(path)),
            check_arg(tuple(data), f"{path}.data", depth + 1)] + graphs)
    host = _host_dlpack(value, path)
    if host is not None:  # a torch CPU tensor, a JAX CPU array: NumPy's view of it
        return check_arg(host, path, depth)
    from myc.frontend.objects import data_attributes, is_user_object

    if is_user_object(value):  # its data attributes, as a tree (myc/frontend/objects.py)
        if depth >= MAX_NESTING:  # (an object that refers back to itself gets here too)
            raise MycTypeError(f"{_describe(path.split('.', 1)[0])} nests objects more than "
                               f"{MAX_NESTING} levels deep (or refers back to itself); "
                               "myc reads an object as a tree of its attributes")
        fields, items = [], []
        for k, v in data_attributes(value).items():
            fields.append(k)
            try:
                items.append(check_arg(v, f"{path}.{k}", depth + 1))
            except MycTypeError as exc:  # an error only if the program reads it
                items.append(Unsupported(f"{exc.message} (an attribute of an object "
                                         "passed as an argument)"))
        methods, graphs = static_args.method_values(type(value))
        props, values = static_args.static_properties(value, fields, path)
        return ObjectValue(ObjMeta(type(value), tuple(fields), methods, props),
                           items + graphs + values)
    raise MycTypeError(f"{_describe(path)} has unsupported type {type(value).__name__}; myc "
                       "accepts numbers, NumPy arrays (and host arrays with __dlpack__, such as a "
                       "torch CPU tensor) and tuples, lists, dicts and namedtuples of these")


_DL_CPU = 1  # DLPack's device type of host memory (kDLCPU)


def _host_dlpack(value: Any, path: str) -> np.ndarray | None:
    """An array of another library in host memory (``__dlpack__``: a torch CPU tensor, a
    JAX CPU array) as a NumPy array sharing its memory, read only like every argument;
    None when ``value`` has no DLPack interface.  One on a GPU is a clear error here (a
    GPU backend takes those before this check)."""
    if not (hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")):
        return None
    try:
        kind = int(value.__dlpack_device__()[0])
    except Exception:  # noqa: BLE001 - not an array we can read
        return None
    if kind != _DL_CPU:
        raise MycTypeError(f"{_describe(path)} is an array on a device (DLPack device type "
                           f"{kind}), not in host memory",
                           hint="use backend='cuda' (or 'rocm') for GPU arrays, or copy it "
                                "to the host first (x.cpu() for a torch tensor)")
    if getattr(value, "requires_grad", False):  # torch refuses to export those
        value = value.detach()
    try:
        return np.from_dlpack(value)
    except Exception as exc:  # noqa: BLE001 - a dtype NumPy has no equivalent for (bf16)
        raise MycTypeError(f"{_describe(path)} ({type(value).__name__}) cannot be read as a "
                           f"NumPy array: {exc}", hint="convert it to float32/float64 first"
                           ) from None


def _static_key(k: Any) -> bool:
    if isinstance(k, tuple):
        return all(_static_key(x) for x in k)
    return k is None or isinstance(k, (str, int, float, bool))


def check_args(names: list[str], args: tuple[Any, ...]) -> list[Any]:
    out = []
    for i, a in enumerate(args):
        name = names[i] if i < len(names) else str(i)
        out.append(check_arg(a, f"{i + 1} ('{name}')"))
    return out


def own_outputs(value: Any) -> Any:
    """Arrays the caller may freely mutate: copies of anything not owned and writeable."""
    if isinstance(value, np.ndarray):
        if value.base is not None or not value.flags.writeable or not value.flags.owndata:
            return np.array(value, copy=True)
        return value
    if isinstance(value, tuple):
        return to_python(like(value, [own_outputs(v) for v in value]))
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        return value
    # a function value (closure, primitive) has no meaning outside the program
    name = getattr(getattr(value, "graph", value), "name", None)
    what = f"function '{name}'" if isinstance(name, str) else f"a {type(value).__name__}"
    raise MycTypeError(f"the compiled function returned {what}; myc functions return numbers, "
                       "NumPy arrays and (nested) tuples, lists and dicts of these")


FLOAT0 = np.dtype([("float0", np.void, 0)])
"""JAX's dtype of a tangent of an int or bool value (it carries nothing)."""


def _is_int_leaf(v: Any) -> bool:
    if isinstance(v, (bool, int)) and not isinstance(v, float):
        return True
    return isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "biu"


def int_tangents(tangent: Any, primal: Any, path: str) -> Any:
    """``tangent`` with the leaves of int and bool primals made zeros (JAX's rule).

    An int does not vary continuously, so its tangent carries nothing: it may be
    ``None``, a ``FLOAT0`` array or zero; a nonzero tangent for an int primal is a
    ``MycTypeError`` (``grad`` refuses int arguments for the same reason) instead of
    being dropped silently.
    """
    if isinstance(primal, tuple):
        if not isinstance(tangent, tuple) or len(tangent) != len(primal):
            return tangent  # check_like names the mismatch
        return like(tangent, [int_tangents(t, p, f"{path}[{i}]")
                              for i, (t, p) in enumerate(zip(tangent, primal, strict=True))])
    if is_generator(primal):
        return primal if tangent is None else tangent  # no tangent: draws are constants
    if not _is_int_leaf(primal):
        return tangent
    zero = np.zeros(np.shape(primal), np.int64) if isinstance(primal, np.ndarray) else 0
    if tangent is None:
        return zero
    if isinstance(tangent, (np.ndarray, np.generic)) and tangent.dtype == FLOAT0:
        if np.shape(tangent) != np.shape(primal):
            from myc.errors import MycShapeError

            raise MycShapeError(f"{path} has shape {np.shape(tangent)} but its primal has "
                                f"shape {np.shape(primal)}")
        return zero
    if isinstance(tangent, (bool, int, float, np.ndarray, np.generic)):
        try:
            nonzero = bool(np.any(np.asarray(tangent) != 0))
        except TypeError:
            nonzero = True
        if not nonzero:
            return zero if np.shape(tangent) == np.shape(primal) else tangent
        raise MycTypeError(f"{path} is nonzero but its primal is an int: an int does not "
                           "vary, so its tangent must be None, zero or a float0 array",
                           hint="pass the argument as a float to differentiate with "
                                "respect to it")
    return tangent


def check_like(value: Any, like: Any, path: str, what: str) -> None:
    """``value`` (a tangent, a cotangent) has the structure and shapes of ``like``."""
    from myc.errors import MycShapeError

    if isinstance(like, tuple):
        if not isinstance(value, tuple) or len(value) != len(like) or \
                container_meta(value) != container_meta(like):
            if container_meta(like) is tuple:
                raise MycTypeError(f"{path} must be a tuple of {len(like)} values like "
                                   f"{what}")
            raise MycTypeError(f"{path} must be a {kind_of(like)} like {what} "
                               f"({_shape_of_tree(like)}), got {_shape_of_tree(value)}")
        for i, (v, w) in enumerate(zip(value, like, strict=True)):
            check_like(v, w, f"{path}[{i}]", what)
        return
    if isinstance(value, tuple):
        raise MycTypeError(f"{path} is a tuple but {what} is not")
    if is_generator(like) and value is like:
        return  # a generator's "tangent": itself (myc/prims/effects.py)
    if isinstance(like, (Closure, Primitive)):  # a function passed in: static
        if value is not None and value is not like:
            raise MycTypeError(f"{path} is {type(value).__name__} but {what} is a function, "
                               "a static value: its tangent is None")
        return
    if like is None or isinstance(like, str):  # a static value: its tangent is None
        if value is not None:
            raise MycTypeError(f"{path} is {type(value).__name__} but {what} is "
                               f"{type(like).__name__}, a static value: its tangent is None")
        return
    if value is None or isinstance(value, (str, bytes)):
        raise MycTypeError(f"{path} is {type(value).__name__}; expected a number or an "
                           f"array like {what}")
    if np.shape(value) != np.shape(like):
        raise MycShapeError(f"{path} has shape {np.shape(value)} but {what} has shape "
                            f"{np.shape(like)}")
    num_kind = (lambda v: "f" if isinstance(v, float) else "i" if isinstance(v, (bool, int))
                and not isinstance(v, np.generic) else np.result_type(v).kind)
    if num_kind(like) == "f" and isinstance(value, (np.ndarray, np.generic)) and \
            num_kind(value) in "biu":
        raise MycTypeError(f"{path} is {np.result_type(value)} but {what} is a float: "
                           "a tangent or cotangent of a float is a float")


def _shape_of_tree(v: Any) -> str:
    """A value's structure as the user writes it: ``[(.,.), (.,.)]``, ``{'w': .}``."""
    if not isinstance(v, tuple):
        return "." if not isinstance(v, (list, dict)) else type(v).__name__
    kind = container_meta(v)
    inner = [_shape_of_tree(x) for x in v]
    if isinstance(v, DictValue):
        return "{" + ", ".join(f"{k!r}: {x}" for k, x in zip(v.keys_, inner, strict=True)) \
            + "}"
    if kind is ListValue:
        return "[" + ", ".join(inner) + "]"
    name = "" if kind is tuple else kind.cls.__name__ if isinstance(kind, ObjMeta) else \
        getattr(kind, "__name__", str(kind))
    return name + "(" + ", ".join(inner) + ("," if len(inner) == 1 and not name else "") + ")"


def _array_leaves(value: Any, path: str, depth: int = 0) -> list[tuple[str, np.ndarray]]:
    """The NumPy arrays an argument holds (in tuples, lists and dicts), with their paths."""
    if isinstance(value, np.ndarray):
        return [(path, value)]
    if depth > 16:
        return []
    if isinstance(value, (tuple, list)):
        return [leaf for i, v in enumerate(value)
                for leaf in _array_leaves(v, f"{path}[{i}]", depth + 1)]
    if isinstance(value, dict):
        return [leaf for k, v in value.items()
                for leaf in _array_leaves(v, f"{path}[{k!r}]", depth + 1)]
    return []


def check_shared_writes(binding: Any, bound: list[Any]) -> None:
    """Refuse a call whose function changes a parameter in place (``a += v``,
    ``ws[0] = v``) while the array it passes there shares memory with another array of
    the call (``f(W, W)``, ``f([W, W])``): CPython would show the change through the
    other one; myc never writes into its arguments, so its result would differ."""
    names = binding.names
    leaves = [_array_leaves(v, names[i] if i < len(names) else str(i))
              for i, v in enumerate(bound)]
    for i, line, text in binding.writes:
        if i >= len(leaves):
            continue
        for k, (path, a) in enumerate(leaves[i]):
            others = [leaf for j, ls in enumerate(leaves) for leaf in ls
                      if j != i] + leaves[i][k + 1:] + leaves[i][:k]
            for other, b in others:
                if a.size and b.size and np.may_share_memory(a, b):
                    raise MycValueError(
                        f"{binding.name}() changes its argument '{names[i]}' in place "
                        f"({text}, line {line}), and the array passed as {path} shares "
                        f"memory with {other}: CPython would show the change through "
                        f"{other}; myc never writes into its arguments",
                        binding.loc, hint=f"pass a copy ({other.split('[')[0]}.copy()) or "
                        "make the function compute a new array instead of changing one")
