"""Gradient checking for myc, in the spirit of JAX's ``check_grads``.

``check_grads(f, args)`` checks, in float64:

* reverse mode: ``myc.vjp(f, *args)`` with a random cotangent ``c`` on the outputs,
  against central differences of ``<c, f(x)>`` along a random direction ``t`` of the
  differentiated arguments -- ``<t, VJP(c)> ~ d/de <c, f(x + e t)>``;
* forward mode (when ``myc.jvp`` has landed): ``myc.jvp(f, args, t)`` against central
  differences of ``f`` itself, and the inner-product identity
  ``<t, VJP(c)> = <JVP(t), c>``, which ties the two modes together exactly;
* structure: every returned cotangent mirrors its argument (tuple structure, shape,
  dtype) and the primal outputs of ``vjp``/``jvp`` agree with calling ``f``;
* ``order=2`` (and more): the same checks applied to ``myc.grad(f)`` -- so reverse over
  reverse (``vjp`` of ``grad``) and forward over reverse (``jvp`` of ``grad``, a
  Hessian-vector product).  A function with a non-scalar output (array, tuple) is first
  projected on the random cotangent.

When a check fails the report names the transform, the argument index, the path inside
a tuple argument and the element, found by perturbing elements one at a time.
``check_grad_elementwise`` compares every element of the gradient with finite
differences (for small arrays).

The finite differences call ``f`` as plain Python: CPython is the reference semantics
of the subset, independent of myc (``reference="myc"`` runs them on myc's evaluator, for
functions calling the AD-only primitives).  Non-scalar projections are generated as
source (registered with ``linecache``) because myc compiles from source.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import linecache
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import myc

DEFAULT_EPS = 1e-5
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-7
_MAX_DIAG_ELEMENTS = 256  # elements perturbed one by one when diagnosing a failure


class GradCheckError(AssertionError):
    """A gradient disagreed with finite differences (the message says where)."""


# ------------------------------------------------------------------ trees of values


def is_float_leaf(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, float):
        return True
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind == "f"
    return False


def _is_dataclass_obj(x: Any) -> bool:
    """An object of a dataclass or of another class of the user's (myc's ``grad`` takes
    and returns such objects as trees of their attributes)."""
    from myc.frontend.objects import is_user_object

    return (dataclasses.is_dataclass(x) and not isinstance(x, type)) or (
        is_user_object(x) and not isinstance(x, tuple) and hasattr(x, "__dict__"))


def _is_tree(x: Any) -> bool:
    """A node of a pytree: a tuple (namedtuples included), a list, a dict, or an object of
    a dataclass (its fields, as myc's ``grad`` returns an object of the class)."""
    return isinstance(x, (tuple, list, dict)) or _is_dataclass_obj(x)


def _items(x: Any) -> list[tuple[Any, Any]]:
    if _is_dataclass_obj(x):
        return list(vars(x).items())
    return list(x.items()) if isinstance(x, dict) else list(enumerate(x))


def _rebuild(x: Any, values: list[Any]) -> Any:
    """``values`` in the container kind of ``x`` (same class, same keys)."""
    if isinstance(x, dict):
        return dict(zip(x, values, strict=True))
    if _is_dataclass_obj(x):
        out = copy.copy(x)
        for k, v in zip(vars(x), values, strict=True):
            object.__setattr__(out, k, v)  # (a frozen dataclass too)
        return out
    if isinstance(x, list):
        return list(values)
    if hasattr(type(x), "_make"):
        return type(x)._make(values)
    return tuple(values)


def has_float_leaf(x: Any) -> bool:
    if _is_tree(x):
        return any(has_float_leaf(v) for _, v in _items(x))
    return is_float_leaf(x)


def leaves(x: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """``(path, leaf)`` pairs of a pytree (tuples, lists, dicts), depth first."""
    if _is_tree(x):
        out = []
        for i, v in _items(x):
            out += leaves(v, (*path, i))
        return out
    return [(path, x)]


def tree_map(fn: Callable[..., Any], x: Any, *rest: Any) -> Any:
    if _is_tree(x):
        rests = [[v for _, v in _items(r)] for r in rest]
        return _rebuild(x, [tree_map(fn, v, *vs) for (_, v), *vs in
                            zip(_items(x), *rests, strict=True)])
    return fn(x, *rest)


def get_path(x: Any, path: tuple[int, ...]) -> Any:
    for i in path:
        x = getattr(x, i) if _is_dataclass_obj(x) else x[i]
    return x


def set_path(x: Any, path: tuple[int, ...], value: Any) -> Any:
    if not path:
        return value
    if isinstance(x, dict):
        out = dict(x)
        out[path[0]] = set_path(x[path[0]], path[1:], value)
        return out
    if _is_dataclass_obj(x):
        out = copy.copy(x)
        object.__setattr__(out, path[0], set_path(getattr(x, path[0]), path[1:], value))
        return out
    items = list(x)
    items[path[0]] = set_path(items[path[0]], path[1:], value)
    return _rebuild(x, items)


def to_float64(x: Any) -> Any:
    """Float leaves promoted to float64 (Python floats stay Python floats)."""

    def conv(v):
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            return v.astype(np.float64)
        if isinstance(v, np.floating):
            return np.float64(v)
        return v

    return tree_map(conv, x)


def random_like(x: Any, rng: np.random.Generator) -> Any:
    """A random float64 value shaped like each float leaf of ``x``; zeros elsewhere."""

    def rnd(v):
        if not is_float_leaf(v):
            return np.zeros(np.shape(v)) if isinstance(v, np.ndarray) else 0.0
        r = rng.standard_normal(np.shape(v))
        if isinstance(v, np.ndarray):
            return r.astype(v.dtype)
        if isinstance(v, np.generic):
            return v.dtype.type(r)
        return float(r)

    return tree_map(rnd, x)


def zeros_like_tree(x: Any) -> Any:
    def z(v):
        if isinstance(v, np.ndarray):
            return np.zeros(v.shape, v.dtype if v.dtype.kind == "f" else np.float64)
        if isinstance(v, np.generic) and v.dtype.kind == "f":
            return v.dtype.type(0)
        return 0.0

    return tree_map(z, x)


def vdot(a: Any, b: Any) -> float:
    """``<a, b>`` summed over the float leaves of two trees of the same structure."""
    total = 0.0
    for (_, u), (_, v) in zip(leaves(a), leaves(b), strict=True):
        if u is None or v is None:
            continue
        total += float(np.sum(np.asarray(u, np.float64) * np.asarray(v, np.float64)))
    return total


def vdot_abs(a: Any, b: Any) -> float:
    """``<|a|, |b|>``: the natural magnitude of ``vdot(a, b)`` (no cancellation)."""
    return vdot(tree_map(lambda u: np.abs(np.asarray(u, np.float64)), a),
                tree_map(lambda v: np.abs(np.asarray(v, np.float64)), b))


def axpy(x: Any, a: float, t: Any) -> Any:
    """``x + a * t`` on the float leaves, keeping each leaf's type and dtype."""

    def step(v, d):
        if not is_float_leaf(v):
            return v
        if isinstance(v, np.ndarray):
            return (v + a * d).astype(v.dtype)
        if isinstance(v, np.generic):
            return v.dtype.type(v + a * d)
        return float(v + a * d)

    return tree_map(step, x, t)


def _fmt_path(argnum: int, path: tuple[int, ...]) -> str:
    return f"argument {argnum}" + "".join(f"[{i}]" for i in path)


def _fmt_out_path(path: tuple[int, ...]) -> str:
    return "output" + "".join(f"[{i}]" for i in path)


def _close(a: float, b: float, rtol: float, atol: float, scale: float = 0.0) -> bool:
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b), scale)


def _name(f: Any) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", repr(f))


# ------------------------------------------------------------------ structure checks


def assert_mirrors(ct: Any, arg: Any, what: str) -> None:
    """``ct`` (a cotangent/gradient) has the tuple structure, shapes and dtypes of ``arg``."""
    if _is_tree(arg):
        if type(ct) is not type(arg) or len(ct) != len(arg) or (
                isinstance(arg, dict) and list(ct) != list(arg)):
            raise GradCheckError(f"{what}: expected a {type(arg).__name__} of {len(arg)} "
                                 f"like the argument, got {type(ct).__name__} {ct!r}")
        for (i, c), (_, a) in zip(_items(ct), _items(arg), strict=True):
            assert_mirrors(c, a, f"{what}[{i!r}]")
        return
    if not is_float_leaf(arg):
        return  # no gradient is defined for int/bool leaves
    if isinstance(arg, np.ndarray):
        if not isinstance(ct, np.ndarray):
            raise GradCheckError(f"{what}: expected an array of shape {arg.shape}, got "
                                 f"{type(ct).__name__} {ct!r}")
        if ct.shape != arg.shape or ct.dtype != arg.dtype:
            raise GradCheckError(f"{what}: expected shape {arg.shape} dtype {arg.dtype}, got "
                                 f"shape {ct.shape} dtype {ct.dtype}")
        return
    if isinstance(arg, np.generic):
        if np.ndim(ct) != 0 or np.result_type(ct) != arg.dtype:
            raise GradCheckError(f"{what}: expected a {arg.dtype} scalar, got "
                                 f"{type(ct).__name__} {ct!r}")
        return
    if not isinstance(ct, (float, np.floating)) or isinstance(ct, bool) or np.ndim(ct) != 0:
        raise GradCheckError(f"{what}: expected a float scalar, got {type(ct).__name__} {ct!r}")


def assert_tree_close(got: Any, want: Any, rtol: float, atol: float, what: str) -> None:
    """Leafwise comparison with a report naming the first bad leaf and element."""
    gl, wl = leaves(got), leaves(want)
    if len(gl) != len(wl) or [p for p, _ in gl] != [p for p, _ in wl]:
        raise GradCheckError(f"{what}: structure {got!r} differs from {want!r}")
    for (path, g), (_, w) in zip(gl, wl, strict=True):
        g_arr, w_arr = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g_arr.shape != w_arr.shape:
            raise GradCheckError(f"{what}{''.join(f'[{i}]' for i in path)}: shape "
                                 f"{g_arr.shape} != {w_arr.shape}")
        scale = float(np.max(np.abs(w_arr))) if w_arr.size else 0.0
        bad = np.abs(g_arr - w_arr) > atol + rtol * np.maximum(np.abs(w_arr), scale * 1e-3)
        if np.any(bad):
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise GradCheckError(
                f"{what}{''.join(f'[{i}]' for i in path)} element {idx}: got "
                f"{g_arr[idx]!r}, expected {w_arr[idx]!r} ({int(np.sum(bad))} of "
                f"{bad.size} elements differ)")


# ------------------------------------------------------------------ the checker


class _Problem:
    """``f`` at ``args``, with the helpers that perturb the differentiated arguments."""

    def __init__(self, f: Callable, args: tuple, argnums: tuple[int, ...], eps: float,
                 reference: str = "python"):
        self.f = f
        self.args = args
        self.argnums = argnums
        self.eps = eps
        if reference == "python":
            self.ref = f
        elif reference == "myc":  # functions calling AD-only primitives (``P.gadd``)
            self.ref = myc.jit(f, backend="interp")
        else:
            raise ValueError(f"reference must be 'python' or 'myc', not {reference!r}")

    def call(self, args: tuple) -> Any:
        return self.ref(*args)

    def shifted(self, direction: dict[int, Any], a: float) -> tuple:
        return tuple(axpy(x, a, direction[i]) if i in direction else x
                     for i, x in enumerate(self.args))

    def fd_tree(self, direction: dict[int, Any]) -> Any:
        """Central difference of ``f``'s output along ``direction``."""
        hi = self.call(self.shifted(direction, self.eps))
        lo = self.call(self.shifted(direction, -self.eps))
        return tree_map(lambda u, v: (np.asarray(u, np.float64) - np.asarray(v, np.float64))
                        / (2 * self.eps), hi, lo)

    def fd_proj(self, direction: dict[int, Any], c: Any) -> float:
        """Central difference of ``<c, f(x)>`` along ``direction``."""
        hi = vdot(c, self.call(self.shifted(direction, self.eps)))
        lo = vdot(c, self.call(self.shifted(direction, -self.eps)))
        return (hi - lo) / (2 * self.eps)

    def element_fd(self, i: int, path: tuple[int, ...], idx: tuple[int, ...], c: Any) -> float:
        arg = self.args[i]
        leaf = get_path(arg, path)
        unit = np.zeros(np.shape(leaf))
        unit[idx] = 1.0
        direction_leaf = unit if isinstance(leaf, np.ndarray) else float(unit)
        zeros = tree_map(lambda v: np.zeros(np.shape(v)) if isinstance(v, np.ndarray) else 0.0,
                         arg)
        return self.fd_proj({i: set_path(zeros, path, direction_leaf)}, c)

    def elements(self, rng: np.random.Generator, limit: int | None):
        """Every (argnum, path, index) of a float leaf; a random sample past ``limit``."""
        out = []
        for i in self.argnums:
            for path, leaf in leaves(self.args[i]):
                if not is_float_leaf(leaf):
                    continue
                out += [(i, path, idx) for idx in itertools.product(
                    *[range(n) for n in np.shape(leaf)])]
        if limit is not None and len(out) > limit:
            pick = rng.choice(len(out), size=limit, replace=False)
            out = [out[k] for k in sorted(pick)]
        return out


def _elementwise_mismatches(prob: _Problem, cts: tuple, c: Any, rtol: float, atol: float,
                            rng: np.random.Generator, limit: int | None):
    bad = []
    checked = 0
    for i, path, idx in prob.elements(rng, limit):
        checked += 1
        fd = prob.element_fd(i, path, idx, c)
        got = float(np.asarray(get_path(cts[i], path), np.float64)[idx])
        if not _close(got, fd, rtol, atol):
            bad.append((i, path, idx, got, fd))
    return bad, checked


def _report(title: str, f: Any, lines: list[str], bad, checked: int, label: str) -> str:
    text = [f"check_grads({_name(f)}): {title}"] + [f"  {ln}" for ln in lines]
    if bad:
        text.append(f"  {len(bad)} of {checked} elements checked one by one disagree with "
                    "central differences:")
        for i, path, idx, got, fd in bad[:8]:
            text.append(f"    {_fmt_path(i, path)} element {idx}: {label} {got:.10g}, "
                        f"finite difference {fd:.10g}")
        if len(bad) > 8:
            text.append(f"    ... and {len(bad) - 8} more")
    elif checked:
        text.append(f"  (all {checked} elements checked one by one agree: the error is in a "
                    "combination, e.g. a cross term)")
    return "\n".join(text)


def _normalize_argnums(argnums, args: tuple) -> tuple[int, ...]:
    if argnums is None:
        nums = tuple(i for i, a in enumerate(args) if has_float_leaf(a))
    elif isinstance(argnums, int):
        nums = (argnums,)
    else:
        nums = tuple(argnums)
    nums = tuple(a % len(args) for a in nums)
    for a in nums:
        if not has_float_leaf(args[a]):
            raise ValueError(f"argument {a} has no float leaf to differentiate")
    return nums


def tangents_for(args: tuple, direction: dict[int, Any]) -> tuple:
    """Tangents for ``myc.jvp``: the direction on differentiated args, zeros elsewhere."""
    return tuple(direction[i] if i in direction else zeros_like_tree(a)
                 for i, a in enumerate(args))


def _vjp_cotangents(f: Callable, args: tuple, nums: tuple[int, ...], want: Any, c: Any):
    """Cotangents of the arguments ``nums`` (others ``None``) from ``myc.vjp``."""
    name = _name(f)
    out, pullback = myc.vjp(f, *args)
    assert_tree_close(out, want, 1e-9, 1e-12, f"check_grads({name}): vjp's primal output")
    got = pullback(c)
    if not isinstance(got, tuple) or len(got) != len(args):
        raise GradCheckError(f"check_grads({name}): the pullback returned {got!r}, not a "
                             f"tuple of {len(args)} cotangents")
    cts: list[Any] = [None] * len(args)
    for i in nums:
        assert_mirrors(got[i], args[i], f"check_grads({name}): cotangent of argument {i}")
        cts[i] = got[i]
    return tuple(cts)


def check_grads(f: Callable, args: Sequence[Any], argnums: int | Sequence[int] | None = None,
                order: int = 1, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                eps: float = DEFAULT_EPS, modes: Sequence[str] = ("rev", "fwd"),
                seed: int = 0, convert: bool = True, reference: str = "python",
                identity_rtol: float | None = None) -> None:
    """Check ``f``'s derivatives at ``args`` up to ``order`` (see the module docstring).

    ``argnums``: the differentiated arguments (default: all with a float leaf).
    ``modes``: ``"rev"`` (vjp) and/or ``"fwd"`` (jvp; skipped until forward mode lands).
    ``convert``: promote float leaves to float64 first (finite differences need it).
    ``reference``: ``"python"`` runs ``f`` under CPython for the finite differences;
    ``"myc"`` runs it on myc's evaluator (for functions calling AD-only primitives).
    ``identity_rtol``: tolerance of ``<t, VJP(c)> = <JVP(t), c>`` (default: rounding of
    float64, or of float32 when an output or cotangent is float32).
    """
    args = tuple(to_float64(a) for a in args) if convert else tuple(args)
    nums = _normalize_argnums(argnums, args)
    rng = np.random.default_rng(seed)
    prob = _Problem(f, args, nums, eps, reference)
    want = prob.call(args)
    c = random_like(want, rng)
    direction = {i: random_like(args[i], rng) for i in nums}
    rev = None
    cts = None

    if "rev" in modes:
        cts = _vjp_cotangents(f, args, nums, want, c)
        rev = sum(vdot(direction[i], cts[i]) for i in nums)
        scale = sum(vdot_abs(direction[i], cts[i]) for i in nums)
        fd = prob.fd_proj(direction, c)
        if not _close(rev, fd, rtol, atol, scale):
            bad, checked = _elementwise_mismatches(prob, cts, c, rtol, atol, rng,
                                                   _MAX_DIAG_ELEMENTS)
            raise GradCheckError(_report(
                f"reverse mode (vjp) disagrees with central differences (order {order})",
                f, [f"along a random direction: <t, VJP(c)> = {rev:.10g}, finite "
                    f"difference {fd:.10g} (eps={eps}, rtol={rtol}, atol={atol})"],
                bad, checked, "VJP"))

    if "fwd" in modes:
        out, tout = myc.jvp(f, args, tangents_for(args, direction))
        assert_tree_close(out, want, 1e-9, 1e-12, f"check_grads({_name(f)}): jvp's primal output")
        fd_tree = prob.fd_tree(direction)
        try:
            assert_tree_close(tout, fd_tree, rtol * 10, atol * 10,
                              f"check_grads({_name(f)}): forward mode (jvp) vs central "
                              "differences of the")
        except GradCheckError as exc:
            raise GradCheckError(f"{exc}\n  (tangent output along a random direction of "
                                 f"arguments {nums}; eps={eps})") from None
        if rev is not None:
            fwd = vdot(tout, c)
            scale = max(vdot_abs(tout, c), abs(rev))
            # exact up to rounding: of float64, or of float32 where a value is float32
            single = any(np.result_type(v) == np.float32
                         for tree in (want, tout, *(cts[i] for i in nums))
                         for _, v in leaves(tree) if is_float_leaf(v))
            tol = identity_rtol if identity_rtol is not None else 1e-5 if single else 1e-9
            if not _close(fwd, rev, tol, tol * 1e-3, scale):
                raise GradCheckError(
                    f"check_grads({_name(f)}): the inner-product identity fails: "
                    f"<t, VJP(c)> = {rev:.15g} but <JVP(t), c> = {fwd:.15g} (order {order})")

    if order > 1:
        g = myc.grad(_scalar_version(f, want, c), argnums=nums)
        check_grads(g, args, nums, order - 1, rtol * 10, atol * 10, eps, modes, seed + 1,
                    convert=False, reference="python", identity_rtol=identity_rtol)


def _scalar_version(f: Callable, out: Any, c: Any) -> Callable:
    """``f`` itself if it returns a float scalar, else ``<c, f(x)>`` (arrays, tuples)."""
    if isinstance(out, float) or (isinstance(out, np.generic) and out.dtype.kind == "f"):
        return f
    return project(f, c, len(_params_of(f)))


def _params_of(f: Callable) -> list[str]:
    return [p.name for p in myc.api._graph_of(f).parameters]


_GENERATED = 0


def _generated(name: str, src: str, namespace: dict[str, Any]) -> Callable:
    """A function defined by generated source that ``inspect`` (and so myc) can read."""
    global _GENERATED
    _GENERATED += 1
    fname = f"<gradcheck-{name}-{_GENERATED}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    exec(compile(src, fname, "exec"), namespace)
    return namespace[name]


def project(f: Callable, c: Any, nargs: int) -> Callable:
    """``x -> <c, f(x)>``: a scalar function whose gradient is ``f``'s VJP with ``c``."""
    params = ", ".join(f"a{i}" for i in range(nargs))
    terms = []
    namespace: dict[str, Any] = {"f": f, "np": np}
    for k, (path, leaf) in enumerate(leaves(c)):
        if not is_float_leaf(leaf) or not np.any(leaf):
            continue
        namespace[f"c{k}"] = leaf
        terms.append(f"np.sum(y{''.join(f'[{i}]' for i in path)} * c{k})")
    body = " + ".join(terms) if terms else "0.0"
    src = f"def projected({params}):\n    y = f({params})\n    return {body}\n"
    fn = _generated("projected", src, namespace)
    fn.__qualname__ = f"<c, {_name(f)}>"
    return fn


def check_grad_elementwise(f: Callable, args: Sequence[Any],
                           argnums: int | Sequence[int] | None = None,
                           rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                           eps: float = DEFAULT_EPS, seed: int = 0,
                           reference: str = "python") -> None:
    """Compare every element of the gradient (or of a VJP, for array outputs) with
    central differences; meant for small arrays.  A scalar-output ``f`` goes through
    ``myc.grad`` itself, so the public gradient (structure and dtype included) is checked.
    """
    args = tuple(to_float64(a) for a in args)
    nums = _normalize_argnums(argnums, args)
    rng = np.random.default_rng(seed)
    prob = _Problem(f, args, nums, eps, reference)
    want = prob.call(args)
    if isinstance(want, float) or (isinstance(want, np.generic) and want.dtype.kind == "f"):
        c = 1.0
        gs = myc.grad(f, argnums=nums)(*args)
        cts: list[Any] = [None] * len(args)
        for k, i in enumerate(nums):
            cts[i] = gs[k]
        label = "grad"
    else:
        c = random_like(want, rng)
        cts = list(_vjp_cotangents(f, args, nums, want, c))
        label = "VJP"
    for i in nums:
        assert_mirrors(cts[i], args[i], f"check_grad_elementwise({_name(f)}): {label} of "
                                        f"argument {i}")
    bad, checked = _elementwise_mismatches(prob, tuple(cts), c, rtol, atol, rng, None)
    if bad:
        raise GradCheckError(_report(f"{label} disagrees with central differences", f,
                                     [f"eps={eps}, rtol={rtol}, atol={atol}"], bad, checked,
                                     label))
