"""Primitive definitions with their NumPy reference implementations.

The reference implementations *are* the semantics: plain Python operators on scalars and
tuples, NumPy on arrays, so NumPy's dtype promotion applies (float32 stays float32
against Python floats).  Shape/dtype rules and derivative rules live in their own
modules and attach to these entries.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from myc.errors import MycNameError, MycSyntaxError, MycTypeError, MycValueError
from myc.prims.containers import DictValue, ListValue, leaves
from myc.prims.registry import register
from myc.prims.values import UNDEF

# ---------------------------------------------------------------- arithmetic operators
# name, reference, the NumPy functions that are it, its kernel-IR scalar op
for _name, _fn, _np, _op in [
    ("add", operator.add, ("add",), "add"), ("sub", operator.sub, ("subtract",), "sub"),
    ("mul", operator.mul, ("multiply",), "mul"),
    ("truediv", operator.truediv, ("divide", "true_divide"), "div"),
    ("floordiv", operator.floordiv, ("floor_divide",), "floordiv"),
    ("mod", operator.mod, ("mod", "remainder"), "mod"),
    ("pow", operator.pow, ("power",), "pow"),
]:
    register(_name, "x y", _fn, elementwise=True, scalar=_op,
             names=(*(f"np.{n}" for n in _np), *(("math.pow",) if _name == "pow" else ())))
register("matmul", "x y", operator.matmul, names=("np.matmul",), step_kind="gemm")


def _matmul_acc(x, y, c, alpha=1.0):
    """``c + alpha * (x @ y)``: what GEMM with ``beta = 1`` computes into ``c`` 's buffer."""
    p = np.matmul(x, y)
    return np.add(c, p if alpha == 1.0 else np.multiply(p, alpha))


# made only by lowering (``myc.opt.products``), after differentiation: no derivative
register("matmul_acc", "x y c alpha", _matmul_acc, differentiable=False, step_kind="gemm_acc",
         doc="c + alpha * (x @ y): a matrix product accumulated into c (GEMM with beta = "
             "1); made by lowering for sums of products, never written by users.")

for _name, _fn, _op in [
    ("eq", operator.eq, "eq"), ("ne", operator.ne, "ne"), ("lt", operator.lt, "lt"),
    ("le", operator.le, "le"), ("gt", operator.gt, "gt"), ("ge", operator.ge, "ge"),
    ("and_", operator.and_, "and"), ("or_", operator.or_, "or"), ("xor", operator.xor, None),
]:
    register(_name, "x y", _fn, differentiable=False, elementwise=True, scalar=_op)

register("neg", "x", operator.neg, names=("np.negative",), elementwise=True, scalar="neg")
register("pos", "x", operator.pos, elementwise=True, fusible=True)
register("invert", "x", operator.invert, differentiable=False, elementwise=True)
register("not_", "x", operator.not_, differentiable=False, scalar="not")
register("truth", "x", lambda x: bool(x), differentiable=False,
         doc="Python truth value of a condition; arrays of size > 1 are ambiguous.")

# ---------------------------------------------------------------- elementwise math
# name -> (reference, other NumPy names, math module names); the kernel op is the name
_UNARY = {
    "exp": (np.exp, (), ("exp",)), "log": (np.log, (), ("log",)),
    "log1p": (np.log1p, (), ("log1p",)), "expm1": (np.expm1, (), ("expm1",)),
    "sqrt": (np.sqrt, (), ("sqrt",)), "square": (np.square, (), ()),
    "abs": (np.abs, ("absolute",), ("fabs",)), "sign": (np.sign, (), ()),
    "sin": (np.sin, (), ("sin",)), "cos": (np.cos, (), ("cos",)),
    "tan": (np.tan, (), ("tan",)), "tanh": (np.tanh, (), ("tanh",)),
    "arctan": (np.arctan, (), ("atan",)), "floor": (np.floor, (), ("floor",)),
    "ceil": (np.ceil, (), ("ceil",)),
}
for _name, (_fn, _np, _math) in _UNARY.items():
    register(_name, "x", _fn, elementwise=True, scalar=_name,
             names=(f"np.{_name}", *(f"np.{n}" for n in _np), *(f"math.{n}" for n in _math),
                    *(("builtins.abs",) if _name == "abs" else ())))

register("arctan2", "y x", np.arctan2, names=("np.arctan2", "math.atan2"), elementwise=True,
         scalar="arctan2")
register("maximum", "x y", np.maximum, names=("np.maximum",), elementwise=True,
         scalar="maximum")
# the builtins max/min of two values used as function values: Python's semantics, the
# first extreme operand itself (min/max called by name lower to a branch instead)
register("py_max", "x y", lambda x, y: y if y > x else x, names=("builtins.max",),
         step_kind="scalar")
register("py_min", "x y", lambda x, y: y if y < x else x, names=("builtins.min",),
         step_kind="scalar")
register("minimum", "x y", np.minimum, names=("np.minimum",), elementwise=True,
         scalar="minimum")
register("clip", "x lo hi", np.clip, names=("np.clip",), elementwise=True, fusible=True)
register("where", "cond x y", np.where, names=("np.where",), elementwise=True, fusible=True)

# ---------------------------------------------------------------- casts and scalars


_BUILTIN_CASTS = {"to_float": np.float64, "to_int": np.int64, "to_bool": np.bool_}


def _dt(dtype):
    """A NumPy dtype from what a program passes as ``dtype=`` (``float`` included)."""
    if dtype is None:
        return None
    name = getattr(dtype, "name", None)
    lifted = getattr(getattr(dtype, "graph", None), "flags", {}).get("lifted")
    if lifted is not None:  # bool passed on as a value under grad: its J image
        name = lifted.name
    if not isinstance(dtype, (type, str, np.dtype)) and name in _BUILTIN_CASTS:
        dtype = _BUILTIN_CASTS[name]  # the builtins float/int/bool, seen as primitives
    return np.dtype(dtype)


def _astype(x, dtype):
    dt = _dt(dtype)
    if isinstance(x, np.ndarray) or _device_array(x):
        return x.astype(dt)  # (a CuPy array stays one: NumPy cannot convert it)
    return dt.type(x)


def _device_array(x) -> bool:
    """An array of another library (CuPy's: a host step of a GPU program), which has
    ``astype`` and ``dtype`` but which NumPy's scalar types cannot convert."""
    return hasattr(x, "__cuda_array_interface__") or (
        hasattr(x, "astype") and hasattr(x, "dtype") and not isinstance(x, np.generic))


register("astype", "x dtype", _astype, fusible=True)
def _to_weak(y, x):
    """``y`` as a Python scalar when ``x`` was one: builtins keep Python's scalar types."""
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic) and np.ndim(y) == 0:
        return type(x)(y) if not isinstance(x, bool) else int(y)
    return y


register("to_weak", "y x", _to_weak, elementwise=True, fusible=True)


def _aug_assign(x, r):
    """What ``x op= y`` leaves in ``x`` given ``r = x op y``: for an array ``x``, NumPy's
    in-place ufunc writes ``r`` into ``x`` -- cast to ``x``'s dtype (``same_kind``) and
    with ``x``'s shape; myc arrays are values, so it is a new array with those.  A scalar
    ``x`` is simply rebound."""
    if not isinstance(x, np.ndarray):
        return r
    dt = np.result_type(r)
    if not np.can_cast(dt, x.dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc output from dtype('{dt}') to dtype('{x.dtype}') "
                        "with casting rule 'same_kind' (an in-place update keeps the array's "
                        "dtype)")
    shape = np.shape(r)
    if np.broadcast_shapes(x.shape, shape) != x.shape:
        raise ValueError(f"non-broadcastable output operand with shape {x.shape} doesn't "
                         f"match the broadcast shape {np.broadcast_shapes(x.shape, shape)} (an "
                         "in-place update keeps the array's shape)")
    return np.array(np.broadcast_to(r, x.shape), dtype=x.dtype)


register("aug_assign", "x r", _aug_assign)


def _py_scalar(v) -> bool:
    return isinstance(v, (bool, int, float)) and not isinstance(v, np.generic)


def _np_first(a, b):
    """``a`` as a NumPy scalar when ``a`` and ``b`` are both Python scalars: a NumPy ufunc
    (``np.add(1.0, 2.0)``, ``np.divide(1.0, 0.0)``) computes on NumPy scalars, unlike the
    operator it otherwise shares a primitive with."""
    if _py_scalar(a) and _py_scalar(b):
        return np.asarray(a)[()]
    return a


register("np_first", "a b", _np_first)


def _receiver(x, method):
    """``x`` as the receiver of ``x.method(...)``: Python numbers have no array methods."""
    if _py_scalar(x):
        raise AttributeError(f"'{type(x).__name__}' object has no attribute '{method}'")
    return x


register("receiver", "x method", _receiver)


def _check_math_domain(y, x):
    """Python's ``math`` raises where NumPy returns nan or inf for a finite argument."""
    xs = x if isinstance(x, tuple) else (x,)
    if any(not np.isfinite(v) for v in xs):
        return y
    if np.isnan(y):
        raise MycValueError("math domain error")
    if np.isinf(y):
        raise MycValueError("math range error (the result is infinite)")
    return y


register("check_math_domain", "y x", _check_math_domain, step_kind="scalar", may_fail=True)
# (not fusible: Python's conversions of numbers, steps on numbers of the host program)
register("to_float", "x", float, names=("builtins.float",), step_kind="scalar")
register("to_int", "x", int, differentiable=False, names=("builtins.int",), may_fail=True,
         step_kind="scalar")
register("to_bool", "x", bool, differentiable=False, names=("builtins.bool",),
         step_kind="scalar")

# ---------------------------------------------------------------- reductions
for _name, _fn, _np in [("sum", np.sum, ("sum",)), ("mean", np.mean, ("mean",)),
                        ("max", np.max, ("max", "amax")), ("min", np.min, ("min", "amin"))]:
    register(_name, "x axis keepdims", (lambda f: lambda x, axis, keepdims: f(
        x, axis=axis, keepdims=keepdims))(_fn), defaults={"axis": None, "keepdims": False},
        names=tuple(f"np.{n}" for n in _np))
register("argmax", "x axis", lambda x, axis: np.argmax(x, axis=axis),
         defaults={"axis": None}, differentiable=False, names=("np.argmax",),
         step_kind="arg_extreme")
register("argmin", "x axis", lambda x, axis: np.argmin(x, axis=axis),
         defaults={"axis": None}, differentiable=False, names=("np.argmin",),
         step_kind="arg_extreme")

# ---------------------------------------------------------------- linear algebra, shapes
# np.dot of 1-d/2-d operands is a matrix product
register("dot", "x y", np.dot, names=("np.dot",), step_kind="gemm")
register("transpose", "x axes", lambda x, axes: np.transpose(x, axes), defaults={"axes": None},
         names=("np.transpose",), step_kind="transpose")
# the same data under another shape
register("reshape", "x shape", lambda x, shape: np.reshape(x, shape), names=("np.reshape",),
         step_kind="alias")
register("broadcast_to", "x shape", lambda x, shape: np.broadcast_to(x, shape).copy(),
         names=("np.broadcast_to",), fusible=True)


def _sum_to(x, shape):
    """Sum ``x`` down to ``shape`` (the adjoint of broadcasting)."""
    shape = tuple(shape)
    xs = np.shape(x)
    if xs == shape:
        return x
    lead = len(xs) - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, d in enumerate(shape) if d == 1 and xs[i + lead] != 1)
    r = np.sum(x, axis=axes, keepdims=True)
    return np.reshape(r, shape)


register("sum_to", "x shape", _sum_to)
register("shape", "x", np.shape, differentiable=False, names=("np.shape",))
register("ndim", "x", np.ndim, differentiable=False, names=("np.ndim",))
register("size", "x", np.size, differentiable=False, names=("np.size",))
register("dtype", "x", lambda x: np.result_type(x), differentiable=False,
         doc="``x.dtype``: static, like the shape (a signature fixes it).")
register("len", "x", len, differentiable=False, names=("builtins.len",))

# ---------------------------------------------------------------- indexing


def _check_index(x, idx):
    if isinstance(x, DictValue):  # d[key]; myc's own code indexes it by position
        return x.lookup(idx)
    return x[idx]


# an element, a basic view or a gather
register("getitem", "x index", _check_index, step_kind="index")


def _index_add(base, index, value):
    """``base`` with ``value`` added at ``index`` (repeats accumulate): the adjoint of getitem."""
    out = np.array(base, copy=True)
    np.add.at(out, index, value)
    return out


register("index_add", "base index value", _index_add)


def _index_set(x, index, value):
    """``x`` with ``x[index] = value`` (NumPy's cast into ``x``'s dtype), a new array:
    an item assignment of one element (``R[i, j] = v``) as one step -- a copy and a
    store -- instead of a scatter and a select over the whole array."""
    out = np.array(x, copy=True)
    out[index] = value
    return out


register("index_set", "x index value", _index_set, step_kind="index_set",
         doc="x with the element at a basic index (ints, computed ints) set to value: an "
             "item assignment of one element")
register("make_slice", "start stop step", slice, differentiable=False)

# ---------------------------------------------------------------- array creation


register("zeros", "shape dtype", lambda shape, dtype: np.zeros(shape, _dt(dtype) or float),
         defaults={"dtype": None}, differentiable=False, names=("np.zeros",),
         step_kind="fill", fill_value=0)
register("ones", "shape dtype", lambda shape, dtype: np.ones(shape, _dt(dtype) or float),
         defaults={"dtype": None}, differentiable=False, names=("np.ones",),
         step_kind="fill", fill_value=1)
register("full", "shape fill_value dtype",
         lambda shape, v, dtype: np.full(shape, v, _dt(dtype)), defaults={"dtype": None},
         names=("np.full",))
register("zeros_like", "x dtype", lambda x, dtype: np.zeros_like(x, _dt(dtype)),
         defaults={"dtype": None}, differentiable=False, names=("np.zeros_like",),
         step_kind="fill", fill_value=0)
register("ones_like", "x dtype", lambda x, dtype: np.ones_like(x, _dt(dtype)),
         defaults={"dtype": None}, differentiable=False, names=("np.ones_like",),
         step_kind="fill", fill_value=1)
register("arange", "start stop step dtype",
         lambda a, b, s, dtype: np.arange(a, b, s, dtype=_dt(dtype)) if b is not None
         else np.arange(a, dtype=_dt(dtype)),
         defaults={"stop": None, "step": 1, "dtype": None}, differentiable=False,
         names=("np.arange",))
register("linspace", "start stop num endpoint dtype",
         lambda a, b, n, e, dtype: np.linspace(a, b, n, endpoint=e, dtype=_dt(dtype)),
         defaults={"num": 50, "endpoint": True, "dtype": None}, names=("np.linspace",))
# np.array of computed numbers or arrays
register("array", "obj dtype", lambda obj, dtype: np.array(obj, dtype=_dt(dtype)),
         defaults={"dtype": None}, names=("np.array", "np.asarray"), step_kind="pack")


DICT_OPERAND = ("a dict is not an array operand (keys {keys!r}): NumPy does not read one; "
                "pass its values, e.g. np.stack(list(d.values()))")


def _as_operand(x):
    from myc.prims.containers import DictValue

    if isinstance(x, DictValue):  # NumPy reads no dict as an array
        raise MycTypeError(DICT_OPERAND.format(keys=list(x.keys_)))
    if isinstance(x, tuple) and not hasattr(x, "_fields"):  # (a list is a tuple here)
        try:
            return np.array(x)
        except ValueError:  # ragged: NumPy's function says what is wrong with it
            return x
    return x


def _fstring(values, spec):
    # spec: per piece, a literal string, or (position in values, conversion, format spec)
    out = []
    for piece in spec:
        if isinstance(piece, str):
            out.append(piece)
            continue
        k, conversion, fmt = piece
        v = values[k]
        if isinstance(v, np.ndarray) or type(v).__module__ == "myc.prims.containers":
            raise MycTypeError("an f-string of an array or a container is not supported "
                               "in compiled code",
                               hint="format ints and strings known when the program is "
                                    "compiled (f'W{i}'); print arrays: print('x', x)")
        v = {"r": repr, "s": str, "a": ascii}[conversion](v) if conversion else v
        out.append(format(v, fmt))
    return "".join(out)


def _assert_failed(message):
    text = f": {message}" if message is not None and str(message) else ""
    raise MycValueError(f"AssertionError{text}",
                        hint="the assert statement's condition is False for these arguments")


register("assert_failed", "message", _assert_failed, differentiable=False,
         doc="The side of an ``assert`` whose condition is False: Python's AssertionError, "
             "at the assert's line.")


def _raised(exc_name, message):
    text = f": {message}" if message is not None and str(message) else ""
    raise MycValueError(f"{exc_name}{text}",
                        hint="the program's raise statement is reached for these arguments")


register("raised", "exc_name message", _raised, differentiable=False,
         doc="A ``raise Error(msg)`` statement reached: Python's exception, at its line.")
register("fstring", "values spec", _fstring, differentiable=False,
         doc="An f-string of static values (``f'W{i}'``: ints, strings, bools, floats "
             "known when the program is compiled), a string; refused on data.")
register("as_operand", "x", _as_operand,
         doc="An operand of a NumPy function that may be a list or tuple (np.mean([a, b]),"
             " np.sum([f(v) for v in xs])): the tracer makes one of traced values an array "
             "(``P.array``), as NumPy reads it, and emits nothing for anything else; on "
             "concrete values NumPy's own function converts it.")

# ---------------------------------------------------------------- structure and control


def _range_len(start, stop, step):
    if step == 0:
        raise MycValueError("range() arg 3 must not be zero")
    for v in (start, stop, step):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise MycTypeError(
                f"range() arguments must be integers, got {type(v).__name__}")
    return len(range(int(start), int(stop), int(step)))


register("range_len", "start stop step", _range_len, differentiable=False)
# (a step whose parts the steps using it read: an index, pieces)
register("make_tuple", "", lambda *xs: xs, variadic=True, step_kind="tuple")
register("switch", "cond x y", lambda c, x, y: x if c else y)


def _check_defined(value, name):
    if value is UNDEF:
        raise MycNameError(f"local variable '{name}' is referenced before assignment")
    return value


register("check_defined", "value name", _check_defined)


def ndarray_ndim(x: Any) -> int:
    """A concrete leaf's rank for :func:`aliased`: -1 when it is not an array."""
    return x.ndim if isinstance(x, np.ndarray) else -1


def aliased(value: Any, updated: Any, ndim: Callable[[Any], int]) -> bool:
    """The alias rule, one for the evaluator and the tracer (``ndim``: a leaf's rank, -1
    for what is not an array): reading ``value`` after ``updated`` (an array, or a list or
    dict whose arrays a loop variable updated: ``for g in grads: g -= 1``) changed in
    place would show the change in CPython when both hold arrays; scalars are rebound,
    so nothing is shared."""
    return any(ndim(u) > 0 for u in leaves(updated)) and \
        any(ndim(v) >= 0 for v in leaves(value))


def _alias_guard(value, updated, message):
    """Refuse reading ``value`` where :func:`aliased` says CPython would show a change."""
    if aliased(value, updated, ndarray_ndim):
        raise MycValueError(message)
    return value


register("alias_guard", "value updated message", _alias_guard)


def holds_list(value) -> bool:
    """Is ``value`` a list or dict, or a tuple holding one (what an append through
    another name changes in CPython)?"""
    if isinstance(value, (ListValue, DictValue)):
        return True
    return isinstance(value, tuple) and any(holds_list(v) for v in value)


def _list_guard(value, message):
    """Refuse reading ``value`` when it is or holds a list or dict: a list it may hold
    was appended to through another name (``P[s][a].append(t)``), which CPython shows
    here; numbers and arrays it holds are not changed by that."""
    if holds_list(value):
        text, _, hint = message.partition("|hint|")
        raise MycSyntaxError(text, hint=hint or None)
    return value


register("list_guard", "value message", _list_guard)


def called_change(fn, where):
    """What a call through the function value ``fn`` changes in place of the argument
    passed at ``where`` = ``(attr, k)`` (``fn.attr(...)`` when ``attr`` is a name, else
    ``fn(...)``; ``k`` a position or a keyword): ``(function, parameter, line, text,
    bare)`` from the callee's ``param_writes``, or None.  Known only once the callee is
    (when the program specializes): an object's method takes it as ``self``."""
    attr, k = where
    callee, offset = fn, 0
    meta = getattr(fn, "meta_", None)
    if meta is not None:  # an object of a user's class
        name = "__call__" if attr is None else attr
        if name not in meta.names:
            return None
        callee = fn.field(name)
        offset = 0 if name in meta.fields else 1  # a method takes the object as self
    elif attr is not None:
        return None
    graph = getattr(callee, "graph", callee)
    flags = getattr(graph, "flags", None)
    if not flags or not flags.get("param_writes"):
        return None
    sig = flags.get("primal_signature") or flags.get("signature")
    if sig is None:
        return None
    if k is None:  # passed through ``*args``/``**kw``: any parameter it changes
        i = min((j for j in flags["param_writes"] if j >= offset or j < 0),
                key=lambda j: (j < 0, j), default=None)
        if i is None:
            return None
    elif isinstance(k, int):
        i = k + offset
        i = i if i < sig.n_positional else -1  # into ``*args``
    else:
        i = sig.names.index(k) if k in sig.names else -1  # into ``**kwargs``
    hit = flags["param_writes"].get(i)
    if hit is None:
        return None
    line, text, bare = hit
    pname = sig.names[i] if i >= 0 else (sig.varkw if isinstance(k, str) else sig.varargs)
    return (getattr(graph, "name", "function").split(":")[-1], pname, line, text, bare)


def unchanged_message(change, message: str) -> str:
    fname, pname, line, text, _ = change
    return (f"{message}: {fname}() changes its argument '{pname}' in place ({text}, "
            f"line {line}): a call through a function value (a function passed in, a "
            "method) cannot show that change to its caller|hint|"
            "return the new value from the function and assign it (x = f(x)); a "
            "module-level function called by its name can change its arguments")


def unchanged_refused(change, value: Any, ndim: Callable[[Any], int]) -> bool:
    """Is reading ``value`` after a call whose ``change`` (:func:`called_change`) is
    known refused?  A number stays (``a += v`` rebinds it: ``change``'s last field)."""
    return change is not None and (not change[4] or isinstance(value, (list, tuple)) or
                                   ndim(value) >= 0)


def _unchanged_by(value, fn, where, message):
    """``value`` (what may hold an argument of a call through ``fn``) as read after the
    call, refused when the callee changes that argument in place: CPython shows the
    change, the compiled call cannot."""
    change = called_change(fn, where)
    if not unchanged_refused(change, value, ndarray_ndim):
        return value
    text, _, hint = unchanged_message(change, message).partition("|hint|")
    raise MycValueError(text, hint=hint)


register("unchanged_by", "value fn where message", _unchanged_by)
register("default_if_undef", "value default", lambda v, d: d if v is UNDEF else v)
register("is_undef", "value", lambda v: v is UNDEF, differentiable=False)


def _unpack(value, n):
    if isinstance(value, DictValue):
        raise MycTypeError("unpacking a dict is not supported",
                           hint="unpack d.keys(), d.values() or d.items()")
    if not isinstance(value, tuple):
        if isinstance(value, np.ndarray) and value.ndim > 0:
            if value.shape[0] != n:
                raise MycValueError(
                    f"cannot unpack an array of length {value.shape[0]} into {n} targets")
            return tuple(value)
        raise MycTypeError(f"cannot unpack a value of type {type(value).__name__}")
    if len(value) != n:
        raise MycValueError(f"cannot unpack a tuple of length {len(value)} into {n} targets")
    return value


register("unpack", "value n", _unpack)
