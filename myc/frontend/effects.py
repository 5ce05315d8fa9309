"""Lowering of effectful calls: random draws and ``print`` (``myc/prims/effects.py``).

A function whose body calls one (syntactically: ``print(...)``, a method named like a
NumPy draw, or a call statement ``show(x)`` whose callee may have effects --
``scope.assigned_names`` adds the hidden variable ``TOKEN`` to what it assigns) starts
with the token ``0``; each effect takes the current token and sets the next, and every
``return`` passes the final token through ``after``.  Because the token
is a variable, loops and branches carry it as they carry the user's variables: effects
run in program order, once per iteration, only on the side of a branch taken.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

import numpy as np

from myc.errors import MycSyntaxError, MycTypeError
from myc.ir.nodes import Constant, Node
from myc.prims import P
from myc.prims.effects import (  # noqa: F401
    GLOBAL,
    TOKEN,
    Captured,
    Made,
    global_state,
    is_generator,
)

# the draws of numpy.random.Generator / RandomState (and the np.random functions) that
# myc runs: name -> (parameters with defaults, the standard draw, how parameters enter)
_SIZE_ONLY = (("size", None), ("dtype", None))
RNG_METHODS: dict[str, tuple[tuple[tuple[str, Any], ...], str, str]] = {
    "standard_normal": (_SIZE_ONLY, "standard_normal", ""),
    "random": (_SIZE_ONLY, "random", ""),
    "random_sample": ((("size", None),), "random", ""),
    "normal": ((("loc", 0.0), ("scale", 1.0), ("size", None)), "standard_normal", "normal"),
    "uniform": ((("low", 0.0), ("high", 1.0), ("size", None)), "random", "uniform"),
    "randn": ((), "standard_normal", "dims"),
    "rand": ((), "random", "dims"),
    # with probabilities p: NumPy's own algorithm, a uniform draw looked up in p's
    # normalised cumulative sum (the same draws, so the same choices)
    "choice": ((("a", None), ("size", None), ("replace", True), ("p", None)), "random",
               "choice"),
    # the generator's own bounded-integer algorithm, called with the bounds (int64)
    "integers": ((("low", None), ("high", None), ("size", None), ("dtype", None),
                  ("endpoint", False)), "integers", "integers"),
    "randint": ((("low", None), ("high", None), ("size", None), ("dtype", None)), "randint",
                "integers"),
    # the generator's own shuffle of arange(n), called with n; of an array: its rows so
    "permutation": ((("x", None),), "permutation", "permutation"),
}


# NumPy draws myc does not run: named in the error, with what to do instead
OTHER_DRAWS = frozenset("""shuffle permuted exponential gamma
beta binomial poisson multivariate_normal standard_t laplace lognormal random_integers
bytes dirichlet multinomial geometric standard_exponential
standard_gamma standard_cauchy chisquare f logistic gumbel pareto power rayleigh
triangular vonmises wald weibull zipf hypergeometric logseries negative_binomial
noncentral_chisquare noncentral_f""".split())


def refuse_draw(low, method: str, e: ast.Call):
    supported = ", ".join(f".{m}()" for m in RNG_METHODS)
    return low.error(MycTypeError, f"the random draw '.{method}()' is not supported inside "
                     f"compiled code (supported: {supported})", e,
                     hint="draw it outside the compiled function and pass the array as an "
                          "argument")


def is_effect_call(call: ast.Call) -> bool:
    """Does this call (by its syntax) print or draw?  Then its function threads a token."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in ("print", "default_rng")
    return isinstance(f, ast.Attribute) and (f.attr in RNG_METHODS or f.attr in _MAKERS)


# what makes or seeds a generator inside a program (``np.random.default_rng(seed)``,
# ``np.random.RandomState(seed)``, ``np.random.seed(seed)``): run when the program runs
_MAKERS = ("default_rng", "RandomState", "seed")


def maker_kind(callee: Any) -> str | None:
    """"Generator"/"RandomState" for a generator's maker, "seed" for ``np.random.seed``."""
    rnd = sys.modules.get("numpy.random")
    if rnd is None:
        return None
    if callee is rnd.default_rng:
        return "Generator"
    if callee is rnd.RandomState:
        return "RandomState"
    if callee is rnd.seed or (getattr(callee, "__name__", "") == "seed" and
                              getattr(callee, "__self__", None) is global_state() is not None):
        return "seed"
    return None


def make_call(low, kind: str, e: ast.Call, block) -> Node:
    """``np.random.default_rng(seed)``: a generator made when the program runs (a host
    step, in order with the draws), the variable a static ``Made`` its draws resolve;
    ``np.random.seed(seed)``: NumPy's global state reseeded then."""
    name = "seed" if kind == "seed" else ("default_rng" if kind == "Generator"
                                          else "RandomState")
    b = _bind(low, e, block, (("seed", None),), name)
    if kind == "seed":
        t = low.apply(block, P.rng_seed, token(block), Constant(GLOBAL), b["seed"], node=e)
        set_token(block, t)
        return Constant(None, low.loc(e))
    site = f"{low.loc(e)}#{id(e)}"
    t = low.apply(block, P.rng_make, token(block), site, kind, b["seed"], node=e)
    set_token(block, t)
    return Constant(Made(site, kind), low.loc(e))


def is_dims_draw(call: ast.Call) -> bool:
    """``rs.randn(*shape)`` / ``rs.rand(d0, *rest)``: star-args are dimensions, bound by
    ``rng_call`` (no keywords)."""
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in ("randn", "rand") and \
        not call.keywords


def _dims(low, e: ast.Call, block) -> Node:
    """The size tuple of ``randn(d0, *ds, ...)``: plain dimensions and starred
    sequences concatenated (their lengths are known when the program specializes)."""
    size: Node = Constant((), low.loc(e))
    for a in e.args:
        if isinstance(a, ast.Starred):
            part = low.py_call("to_tuple", [low.expr(a.value, block)], a, block)
        else:
            part = low.apply(block, P.make_tuple, low.expr(a, block), node=a)
        size = low.apply(block, P.add, size, part, node=e)
    return size


def is_global_draw(callee: Any) -> bool:
    """``np.random.randn`` and friends: methods of NumPy's global ``RandomState``."""
    state = global_state()
    return state is not None and getattr(callee, "__self__", None) is state and \
        getattr(callee, "__name__", "") in RNG_METHODS


def captured(value: Any) -> Any:
    """A generator read from the enclosing Python scope, held by reference (or None)."""
    return Captured(value) if is_generator(value) else None


def token(block) -> Node:
    return block.env.vars.get(TOKEN, Constant(0))


def set_token(block, node: Node) -> None:
    if TOKEN in block.env.vars:
        block.env.vars[TOKEN] = node


def returned(low, block, value: Node, node: ast.AST | None) -> Node:
    """A function's result, after its effects."""
    if TOKEN not in block.env.vars:
        return value
    return low.apply(block, P.after, block.env.vars[TOKEN], value, node=node)


def _bind(low, e: ast.Call, block, params, what: str) -> dict[str, Node]:
    args, kwargs = low._args(e, block)
    if len(args) > len(params):
        raise low.error(MycTypeError, f"{what}() takes at most {len(params)} arguments but "
                        f"{len(args)} were given", e)
    bound = {p: a for (p, _), a in zip(params, args, strict=False)}
    names = [p for p, _ in params]
    for k, v in kwargs.items():
        if k not in names:
            raise low.error(MycTypeError, f"{what}() got an unsupported keyword argument "
                            f"'{k}'", e)
        bound[k] = v
    return {p: bound.get(p, Constant(d)) for p, d in params}


def rng_call(low, rng: Node, method: str, e: ast.Call, block) -> Node:
    """``rng.<method>(...)``: a standard draw (a host step calling the generator), then
    NumPy's own arithmetic with the parameters (``loc + scale * z``, ...)."""
    params, standard, form = RNG_METHODS[method]
    what = f".{method}"
    if form == "dims" and any(isinstance(a, ast.Starred) for a in e.args):
        size, dtype = _dims(low, e, block), Constant(None)
        if not e.args:
            size = Constant(None)
    elif form == "dims":  # randn(d0, d1, ...)
        args, kwargs = low._args(e, block)
        if kwargs:
            raise low.error(MycTypeError, f"{method}() takes no keyword arguments", e)
        size = low.apply(block, P.make_tuple, *args, node=e) if args else Constant(None)
        dtype: Node = Constant(None)
    else:
        b = _bind(low, e, block, params, what)
        size, dtype = b.get("size", Constant(None)), b.get("dtype", Constant(None))
        if form in ("normal", "uniform"):
            a, c = (b["loc"], b["scale"]) if form == "normal" else (b["low"], b["high"])
            size = low.apply(block, P.draw_size, size, low.apply(block, P.shape, a, node=e),
                             low.apply(block, P.shape, c, node=e), node=e)
    if form == "integers":
        return _integers_call(low, rng, method, b, e, block)
    if form == "permutation":
        n = low.py_call("permutation_length", [b["x"]], e, block)
        idx = low.apply(block, P.rng_permutation, token(block), rng, n, node=e)
        set_token(block, low.apply(block, P.token_of, idx, node=e))
        return low.py_call("choice_pick", [b["x"], idx], e, block)
    if form == "choice":
        if isinstance(b["a"], Constant) and b["a"].value is None:
            raise low.error(MycTypeError, "rng.choice() needs a (an int or a 1-d array)", e)
        if not (isinstance(b["replace"], Constant) and b["replace"].value is True):
            raise low.error(MycTypeError, "rng.choice(..., replace=False) is not supported "
                            "inside compiled code", e,
                            hint="draw it outside the compiled function and pass it in")
        if isinstance(b["p"], Constant) and b["p"].value is None:
            return _uniform_choice(low, rng, b, e, block)
    z = low.apply(block, P.rng_draw, token(block), rng, standard, size, dtype, node=e)
    set_token(block, low.apply(block, P.token_of, z, node=e))
    if form == "choice":
        return low.py_call("choice_from_uniform", [b["a"], z, b["p"]], e, block)
    if form == "normal":
        return low.apply(block, P.add, a, low.apply(block, P.mul, c, z, node=e), node=e)
    if form == "uniform":
        width = low.apply(block, P.sub, c, a, node=e)
        return low.apply(block, P.add, a, low.apply(block, P.mul, width, z, node=e), node=e)
    return z


def _uniform_choice(low, rng: Node, b: dict[str, Node], e: ast.Call, block) -> Node:
    """``rng.choice(a, size)`` without ``p=``: NumPy draws the index as its bounded
    integers in ``[0, len(a))`` (``integers``/``randint``: the same stream), then picks."""
    n = low.py_call("choice_population", [b["a"]], e, block)
    idx = low.apply(block, P.rng_integers, token(block), rng, "choice", Constant(0), n,
                    b["size"], Constant(False), node=e)
    set_token(block, low.apply(block, P.token_of, idx, node=e))
    return low.py_call("choice_pick", [b["a"], idx], e, block)


def _integers_call(low, rng: Node, method: str, b: dict[str, Node], e: ast.Call,
                   block) -> Node:
    """``rng.integers(low, high=None, size=None, endpoint=False)`` (``rs.randint``): a
    host step calling the generator with the bounds, int64 as NumPy's default."""
    dt = b["dtype"]
    if not (isinstance(dt, Constant) and (dt.value is None or np.dtype(
            _DTYPES.get(getattr(dt.value, "name", None), dt.value)) == np.int64)):
        raise low.error(MycTypeError, f"'.{method}()' inside compiled code draws int64 "
                        "only (dtype= another type is not supported)", e)
    endpoint = b.get("endpoint", Constant(False))
    z = low.apply(block, P.rng_integers, token(block), rng, method, b["low"], b["high"],
                  b["size"], endpoint, node=e)
    set_token(block, low.apply(block, P.token_of, z, node=e))
    return z


_DTYPES = {"to_int": np.int64, "to_float": np.float64, "to_bool": np.bool_}


def print_call(low, e: ast.Call, block) -> Node:
    """``print(a, b, sep=..., end=...)``: prints the values when the program runs."""
    values = [low.expr(a, block) for a in e.args]
    opts = {"sep": Constant(None), "end": Constant(None)}
    for k in e.keywords:
        if k.arg not in opts:
            raise low.error(MycTypeError, f"print() keyword '{k.arg}' is not supported "
                            "(sep= and end= are)", k)
        v = low.expr(k.value, block)
        if not (isinstance(v, Constant) and isinstance(v.value, (str, type(None)))):
            raise low.error(MycSyntaxError, f"print()'s {k.arg}= must be a constant string",
                            k.value)
        opts[k.arg] = v
    tup = low.apply(block, P.make_tuple, *values, node=e) if values else Constant(())
    t = low.apply(block, P.debug_print, token(block), tup, opts["sep"], opts["end"], node=e)
    set_token(block, t)
    return Constant(None, low.loc(e))
