"""NumPy and SciPy functions myc does not implement, run by NumPy when a program compiles.

Real programs call NumPy on *static* values to build index arrays and constants
(``i, j = np.triu_indices(n, k=1)`` with ``n = x.shape[0]``, Gauss-Legendre nodes from
``scipy.special.roots_legendre(8)``).  Under JAX that is ordinary Python at trace time;
myc follows the same rule.  Where the frontend meets a NumPy/SciPy function it neither
implements nor can compile from source (``myc/frontend/static_calls.py``), the call
becomes ``numpy_static(call, args, kwargs)``.  While the program is specialized the
tracer evaluates a primitive whose arguments are all known (ints, shapes, tuples,
strings, dtypes, constant arrays) by its ``impl``: here, the NumPy function itself, once
per specialization, its result embedded as a constant.  Where an argument is computed
from array or float data the shape rule refuses, naming the function and saying that it
is supported only with static arguments (at the user's line: the tracer locates it).

The result is part of the specialization: the static arguments that produced it are
part of the signature (shapes, ints) or of the program (literals, global arrays), so a
call with another ``n`` specializes anew.  Arrays go in as copies (a function that
writes into its argument cannot change the program's constants) and come out as
read-only copies (a later mutation cannot change compiled code).  Only values myc
represents come back: numeric arrays and scalars, ``None``, strings, dtypes, and tuples,
lists and namedtuples of them (``np.finfo``/``np.iinfo``: namedtuples of their numbers);
anything else (a ``poly1d``, complex numbers) is a clear
``MycTypeError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from myc.errors import MycError, MycTypeError, MycValueError
from myc.prims.abstract import AArray, AScalar
from myc.prims.containers import DictValue, ListValue, is_namedtuple, to_python
from myc.prims.registry import get, register

MAX_ITEMS = 100_000  # an iterator's items kept as a list (np.ndindex): beyond, refused
_KWARGS_REFUSED = ("random_state", "rng", "seed", "out")


class FInfo(NamedTuple):
    """``np.finfo(dtype)``'s numbers, as a namedtuple (``np.finfo(x.dtype).eps``)."""

    bits: int
    dtype: Any
    eps: Any
    epsneg: Any
    max: Any
    min: Any
    precision: int
    resolution: Any
    smallest_normal: Any
    smallest_subnormal: Any
    tiny: Any


class IInfo(NamedTuple):
    """``np.iinfo(dtype)``'s numbers, as a namedtuple (``np.iinfo(np.int32).max``)."""

    bits: int
    dtype: Any
    kind: str
    max: int
    min: int


class StaticCall:
    """One call site of a NumPy/SciPy function myc runs at compile time: the function,
    the name the user wrote, the library, the keyword names, and the error myc gave
    before this rule existed (its class, message and hint: what a call that is not
    static, or passes a function, still reports)."""

    __slots__ = ("fn", "name", "library", "kwnames", "error", "message", "hint")

    def __init__(self, fn: Any, name: str, library: str, kwnames: tuple[str, ...] | None,
                 error: type[MycError], message: str, hint: str | None):
        self.fn = fn
        self.name = name
        self.library = library
        self.kwnames = kwnames
        self.error = error
        self.message = message
        self.hint = hint

    def __repr__(self) -> str:
        return f"<{self.library} {self.name}>"

    def traced(self, which: str) -> MycError:
        """The refusal of a call with an argument computed from data."""
        return self.error(
            f"{self.name} is not supported by myc on array or float data ({which} here): "
            f"{self.library} functions myc does not implement are supported only with "
            "static arguments (ints, shapes, tuples, strings, dtypes, constant arrays), "
            f"which {self.library} evaluates when the program is compiled",
            hint=self.hint or "compute it outside the compiled function and pass the "
            "result as an argument, or write it with the NumPy functions myc supports "
            "(docs/supported.md)")


def _static_leaf(v: Any) -> bool:
    return v is None or v is Ellipsis or isinstance(
        v, (bool, int, float, str, bytes, slice, np.generic, np.ndarray, np.dtype)) or (
        isinstance(v, type) and (issubclass(v, np.generic) or v in (bool, int, float)))


def _to_python(v: Any, call: StaticCall) -> Any:
    """A static argument as NumPy takes it: lists as lists, dicts as dicts, arrays copied."""
    return to_python(v, lambda leaf: _static_arg(leaf, call), objects=False)


def _static_arg(v: Any, call: StaticCall) -> Any:
    if isinstance(v, np.ndarray):
        return v.copy()
    if _static_leaf(v):
        return v
    # a function (solve_ivp's right-hand side), an object of the user's class...: what
    # myc compiles cannot be handed to NumPy; the refusal myc gave before stands
    raise call.error(call.message, hint=call.hint)


def _constant(v: Any, call: StaticCall, depth: int = 0) -> Any:
    """The function's result as a constant of the program, or a clear refusal."""
    if type(v) is np.ndarray:  # (a subclass -- np.matrix, a masked array -- means
        # something else to the operators: refused below as an object)
        if v.dtype.kind not in "biuf":
            raise MycTypeError(f"{call.name} returned an array of dtype {v.dtype}, which "
                               "myc cannot represent (numeric and boolean arrays only)")
        out = v.copy()
        out.flags.writeable = False
        return out
    if isinstance(v, np.generic):
        if v.dtype.kind not in "biuf":
            raise MycTypeError(f"{call.name} returned a {type(v).__name__}, which myc "
                               "cannot represent (numeric and boolean values only)")
        return v
    if v is None or isinstance(v, (bool, int, float, str, np.dtype)):
        return v
    if isinstance(v, type) and issubclass(v, np.generic):
        return v
    if isinstance(v, tuple) and (type(v) is tuple or is_namedtuple(v)):
        items = [_constant(x, call, depth + 1) for x in v]
        return tuple(items) if type(v) is tuple else type(v)._make(items)
    if isinstance(v, list):
        return ListValue(_constant(x, call, depth + 1) for x in v)
    if isinstance(v, (np.finfo, np.iinfo)):  # the machine limits a program reads
        info = FInfo if isinstance(v, np.finfo) else IInfo
        return info(*(getattr(v, f) for f in info._fields))
    if isinstance(v, Iterator) and depth == 0:  # np.ndindex(2, 3): its items, as a list
        items = []
        for x in v:
            items.append(_constant(x, call, depth + 1))
            if len(items) > MAX_ITEMS:
                raise MycValueError(f"{call.name} yields more than {MAX_ITEMS} items: too "
                                    "many to keep as a constant list")
        return ListValue(items)
    kind = type(v).__module__ + "." + type(v).__qualname__
    raise MycTypeError(f"{call.name} returned a {kind} object, which myc cannot "
                       "represent in a compiled program (it represents numeric arrays and "
                       "scalars, strings, dtypes, and tuples and lists of them)",
                       hint="call it outside the compiled function and pass what the "
                            "program needs (an array, a number) as an argument")


def _kwargs(call: StaticCall, kwargs: Any) -> dict[str, Any]:
    if isinstance(kwargs, DictValue):
        return {k: _to_python(v, call) for k, v in zip(kwargs.keys_, kwargs, strict=True)}
    return {k: _to_python(v, call) for k, v in zip(call.kwnames or (), kwargs, strict=True)}


def run_static(call: StaticCall, args: tuple, kwargs: Any) -> Any:
    """``call.fn(*args, **kwargs)`` by NumPy/SciPy on static values, as a constant."""
    pos = [_to_python(a, call) for a in args]
    kw = _kwargs(call, kwargs)
    for k in kw:
        if k in _KWARGS_REFUSED:
            raise MycTypeError(f"{call.name}: the keyword '{k}' is not supported when myc "
                               "runs a function at compile time (random state or an output "
                               "buffer would not be the program's)")
    try:
        out = call.fn(*pos, **kw)
    except MycError:
        raise
    except RecursionError:
        raise
    except Exception as exc:  # noqa: BLE001 - NumPy's own error, named
        cls = MycTypeError if isinstance(exc, TypeError) else MycValueError
        raise cls(f"{call.name}: {type(exc).__name__}: {exc}") from None
    return _constant(out, call)


def _which(call: StaticCall, args: tuple, kwargs: tuple) -> str:
    """The first argument computed from data, as the user knows it."""
    def data(v: Any) -> bool:
        if isinstance(v, (AArray, AScalar)):
            return True
        return isinstance(v, tuple) and any(data(x) for x in v)

    for k, a in enumerate(args):
        if data(a):
            return f"argument {k + 1}"
    names = call.kwnames or ()
    for k, a in enumerate(kwargs if isinstance(kwargs, tuple) else ()):
        if data(a):
            return f"argument '{names[k]}'" if k < len(names) else "a keyword argument"
    return "an argument"


def _infer(call: Any, args: Any, kwargs: Any) -> Any:
    """Reached only where an argument is data (else the tracer ran ``impl``)."""
    if not isinstance(call, StaticCall):
        raise MycTypeError("a NumPy function called at compile time is not known")
    for v in (args, kwargs):  # a function passed: the refusal myc gave before
        _to_python_shape(v, call)
    raise call.traced(_which(call, args if isinstance(args, tuple) else (args,),
                             kwargs if isinstance(kwargs, tuple) else ()))


def _to_python_shape(v: Any, call: StaticCall) -> None:
    """Refuse, as ``_to_python`` would, a leaf NumPy cannot be given (abstract leaves are
    data, refused afterwards as such)."""
    if isinstance(v, tuple):
        for x in v:
            _to_python_shape(x, call)
    elif not (isinstance(v, (AArray, AScalar)) or _static_leaf(v)):
        raise call.error(call.message, hint=call.hint)


register("numpy_static", "call args kwargs", run_static, differentiable=False,
         doc="A NumPy/SciPy function myc does not implement, run at compile time on "
             "static arguments; its result is a constant (``myc/prims/static_calls.py``).")
get("numpy_static").infer = _infer
