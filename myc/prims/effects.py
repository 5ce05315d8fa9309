"""Effectful primitives: random draws from NumPy's generators and ``print``.

myc's IR is functional, so an effect is ordered and kept alive by data: the frontend
threads a hidden *token* variable through every function that calls one (loops and
branches carry it like any variable, ``myc/frontend/effects.py``).  Each effect takes the
current token and yields the next (``token_of`` its result); a function's return passes
its final token through ``after(token, value)``, which the tracer keeps as an output of
the program computed only for its effects.  The tracer also chains each effect it emits
after the previous one of the same program, so effects made in different functions keep
program order too.  So effects run in program order, once per execution (each loop
iteration), never folded at compile time, merged (CSE) or dropped.  The primitives are
impure (``Primitive.pure = False``): the tracer emits them even on constant inputs, CSE
skips them; where specialization would have to run one at compile time (decisions taken
on one call's values) or twice (a taped loop's adjoint recomputing its body), it breaks
and the evaluator runs the program.

Random draws (``rng_draw``) call the NumPy generator object itself when the program
runs, so the stream is NumPy's for the same seed and the generator's state advances as
NumPy's would.  A ``Generator``/``RandomState`` argument is used by reference: the
compiled program holds its place among the arguments (``RngArg``), bound to this call's
object when the program runs (``bind``); ``np.random.*`` functions draw from NumPy's
global state at that moment (``GLOBAL``); a generator captured from the enclosing Python
scope is held by reference (``Captured``, never written to the disk cache).  Draws are
constants to AD: ``normal``/``uniform`` are a standard draw times/plus their parameters,
so gradients reach ``loc``/``scale``/``low``/``high`` (the reparameterization NumPy's
own arithmetic is, bit for bit) and the draw itself has derivative zero.
"""

from __future__ import annotations

import pickle
import sys
import threading
from typing import Any

import numpy as np

from myc.prims.abstract import AArray, AScalar
from myc.prims.registry import register


def is_generator(v: Any) -> bool:
    """A ``numpy.random.Generator`` or ``RandomState`` -- told by its type's name, so
    that myc need not import ``numpy.random`` (it costs import time) unless used."""
    t = type(v)
    return t.__name__ in ("Generator", "RandomState") and \
        t.__module__.startswith("numpy.random")


def global_state() -> Any:
    """NumPy's global ``RandomState`` if ``numpy.random`` is loaded, else None."""
    mtrand = sys.modules.get("numpy.random.mtrand")
    return getattr(mtrand, "_rand", None)
TOKEN = "$io"  # the frontend's hidden variable holding the current effect token

_BOUND = threading.local()  # this thread's running program's generator arguments


class RngArg:
    """The ``k``-th generator among a compiled program's arguments."""

    __slots__ = ("k", "kind")

    def __init__(self, k: int, kind: str):
        self.k = k
        self.kind = kind  # "Generator" or "RandomState": the methods it has

    def __reduce__(self):
        return (RngArg, (self.k, self.kind))

    def __repr__(self) -> str:
        return f"<{self.kind} argument {self.k}>"


class _Global:
    """NumPy's global generator (``np.random.seed``/``np.random.randn``)."""

    kind = "RandomState"

    def __reduce__(self):
        return "GLOBAL"

    def __repr__(self) -> str:
        return "<np.random global state>"


GLOBAL = _Global()


class Captured:
    """A generator a program reads from its enclosing Python scope: by reference."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    @property
    def kind(self) -> str:
        return type(self.obj).__name__

    def __reduce__(self):  # a copy would draw another stream: never cached on disk
        raise pickle.PicklingError("a program holding a generator is not cached on disk")

    def __repr__(self) -> str:
        return f"<captured {self.kind}>"


class Made:
    """A generator the program makes itself (``rng = np.random.default_rng(seed)`` inside
    it): the one its call site's latest run made in this thread (``rng_make``), so each
    call draws the same numbers as NumPy from a fresh generator."""

    __slots__ = ("kind", "site")

    def __init__(self, site: str, kind: str):
        self.site = site
        self.kind = kind  # "Generator" (default_rng) or "RandomState"

    def __reduce__(self):
        return (Made, (self.site, self.kind))

    def __repr__(self) -> str:
        return f"<{self.kind} made at {self.site}>"


_MADE = threading.local()  # this thread's generators made by programs: site -> generator


def bind(leaves: list[Any]) -> Any:
    """Bind this call's generator arguments (in argument order); returns what to
    restore (``unbind``)."""
    saved = getattr(_BOUND, "rngs", None)
    _BOUND.rngs = [v for v in leaves if is_generator(v)]
    return saved


def unbind(saved: Any) -> None:
    _BOUND.rngs = saved


def resolve(rng: Any) -> Any:
    """The generator object a draw uses now."""
    if is_generator(rng):
        return rng
    if isinstance(rng, RngArg):
        bound = getattr(_BOUND, "rngs", None)
        if bound is None or rng.k >= len(bound):
            raise RuntimeError("a random draw ran outside the call that binds its generator")
        return bound[rng.k]
    if rng is GLOBAL:
        return np.random.mtrand._rand
    if isinstance(rng, Captured):
        return rng.obj
    if isinstance(rng, Made):
        made = getattr(_MADE, "gens", {})
        if rng.site not in made:
            raise RuntimeError("a random draw ran before the generator it uses was made")
        return made[rng.site]
    raise TypeError(f"random draws need a numpy.random.Generator or RandomState, not "
                    f"{type(rng).__name__}")


def is_rng(v: Any) -> bool:
    return is_generator(v) or isinstance(v, (RngArg, Captured, _Global, Made))


def _kind(rng: Any) -> str:
    return type(rng).__name__ if is_generator(rng) else rng.kind


# ---------------------------------------------------------------- draws
STANDARD = ("standard_normal", "random")  # what every supported method reduces to


def _size(size: Any) -> tuple[int, ...] | None:
    if size is None:
        return None
    dims = size if isinstance(size, tuple) else (size,)
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError("the size of a random draw must be an int or a tuple of ints "
                            f"known when the program is compiled, not {type(d).__name__}")
        if d < 0:
            raise ValueError("negative dimensions are not allowed")
    return tuple(int(d) for d in dims)


def _draw(token, rng, method, size, dtype):
    gen = resolve(rng)
    size = _size(size)
    if dtype is not None and np.dtype(dtype) != np.float64:
        return getattr(gen, method)(size, dtype=dtype)
    return getattr(gen, method)(size)


def _draw_infer(token, rng, method, size, dtype):
    from myc.errors import MycTypeError

    if isinstance(size, (AArray, AScalar)) or (isinstance(size, tuple) and any(
            isinstance(d, (AArray, AScalar)) for d in size)):
        raise MycTypeError("the size of a random draw must be known when the program is "
                           "compiled, not computed from array or float data")
    if not is_rng(rng):
        what = str(rng) if isinstance(rng, (AArray, AScalar)) else type(rng).__name__
        raise MycTypeError(f"'.{method}()' is called on a {what}, not a "
                           "numpy.random.Generator or RandomState")
    shape = _size(size)
    dt = np.dtype(np.float64) if dtype is None else np.dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"random draws of dtype {dt} are not supported")
    if dt != np.float64 and _kind(rng) != "Generator":
        raise TypeError("dtype= is only supported by numpy.random.Generator draws")
    if shape is None:
        return AScalar(dt, True) if dt == np.float64 else AScalar(dt, False)
    return AArray(dt, shape)


draw = register("rng_draw", "token rng method size dtype", _draw, differentiable=False,
                defaults={"dtype": None})
draw.infer = _draw_infer
draw.pure = False


def _draw_size(size, shape_a, shape_b):
    """The size of the standard draw behind ``normal``/``uniform``: ``size``, else the
    parameters' broadcast shape (``None``: a Python float, for scalar parameters)."""
    if size is not None:
        return size
    shape = np.broadcast_shapes(tuple(shape_a), tuple(shape_b))
    return shape if shape else None


def _draw_size_infer(*args):
    from myc.errors import MycTypeError

    raise MycTypeError("the size of a random draw must be known when the program is "
                       "compiled, not computed from array or float data")


register("draw_size", "size shape_a shape_b", _draw_size,
         differentiable=False).infer = _draw_size_infer


def _integers(token, rng, method, low, high, size, endpoint):
    """``rng.integers(low, high, size, endpoint=)`` / ``rs.randint(low, high, size)``:
    the generator's own bounded-integer algorithm (so NumPy's draws), int64."""
    gen = resolve(rng)
    if method == "randint" or (method == "choice" and isinstance(gen, np.random.RandomState)):
        return gen.randint(low, high, size=_size(size), dtype=np.int64)
    return gen.integers(low, high, size=_size(size), dtype=np.int64, endpoint=endpoint)


def _integers_infer(token, rng, method, low, high, size, endpoint):
    from myc.errors import MycTypeError

    for name, b in (("low", low), ("high", high)):
        if isinstance(b, AArray) or (isinstance(b, AScalar) and b.dtype.kind not in "iub") \
                or isinstance(b, (float, np.floating)):
            raise MycTypeError(f"'.{method}()': {name} must be an int inside compiled code "
                               "(array or float bounds are not supported)")
    if low is None:
        raise MycTypeError(f"'.{method}()' needs low")
    _draw_infer(token, rng, method, size, None)
    shape = _size(size)
    return AScalar(np.dtype(np.int64), False) if shape is None else \
        AArray(np.dtype(np.int64), shape)


integers = register("rng_integers", "token rng method low high size endpoint", _integers,
                    differentiable=False)
integers.infer = _integers_infer
integers.pure = False


def _permutation(token, rng, n):
    """``rng.permutation(n)``: the generator's own shuffle of ``arange(n)`` (NumPy's
    draws; ``permutation(x)`` is ``x[that]``, the same stream), int64."""
    return np.asarray(resolve(rng).permutation(n), dtype=np.int64)


def _permutation_infer(token, rng, n):
    from myc.errors import MycTypeError

    if isinstance(n, (float, np.floating, bool, np.bool_)) or (
            isinstance(n, AScalar) and n.dtype.kind not in "iu"):
        raise MycTypeError("'.permutation(x)': x must be an integer or at least "
                           "1-dimensional")
    if not isinstance(n, (int, np.integer)):
        raise MycTypeError("'.permutation()' needs its length known when the program is "
                           "compiled (an int, or an array: its length), not computed from "
                           "data")
    _draw_infer(token, rng, "permutation", None, None)
    return AArray(np.dtype(np.int64), (int(n),))


permutation = register("rng_permutation", "token rng n", _permutation, differentiable=False)
permutation.infer = _permutation_infer
permutation.pure = False


# ---------------------------------------------------------------- making and seeding
def _make(token, site, kind, seed):
    if not hasattr(_MADE, "gens"):
        _MADE.gens = {}
    _MADE.gens[site] = (np.random.default_rng(seed) if kind == "Generator"
                        else np.random.RandomState(seed))
    return 0


def _seed(token, rng, seed):
    resolve(rng).seed(seed)
    return 0


def _token_infer(*args):
    return AScalar(np.dtype(np.int64), True)


maker = register("rng_make", "token site kind seed", _make, differentiable=False,
                 doc="``np.random.default_rng(seed)`` (or ``RandomState(seed)``) inside a "
                     "program: a fresh generator for the draws of ``Made(site)``.")
maker.infer = _token_infer
maker.pure = False
seeder = register("rng_seed", "token rng seed", _seed, differentiable=False,
                  doc="``np.random.seed(seed)`` inside a program: NumPy's global state "
                      "reseeded when the program runs, in order with its draws.")
seeder.infer = _token_infer
seeder.pure = False


# ---------------------------------------------------------------- print
def _print(token, values, sep, end):
    print(*values, sep=" " if sep is None else sep, end="\n" if end is None else end,
          flush=True)
    return 0


def _print_infer(token, values, sep, end):
    return AScalar(np.dtype(np.int64), True)


printer = register("debug_print", "token values sep end", _print, differentiable=False)
printer.infer = _print_infer
printer.pure = False


# ---------------------------------------------------------------- ordering
def _after(token, value):
    return value


register("after", "token value", _after)


def _checked(checks, value):
    return value


# ``value``, once ``checks`` (indexing results nothing else uses) are computed: an
# out-of-range ``y = x[i]`` raises as in Python although ``y`` is dead
# (``myc.frontend.lower.keep_index_checks``; the tracer keeps them as outputs)
register("checked", "checks value", _checked)


def _token_of(value):
    return 0


register("token_of", "value", _token_of, differentiable=False).infer = \
    lambda value: AScalar(np.dtype(np.int64), True)
