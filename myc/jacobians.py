"""Whole Jacobians and Hessians: JAX's ``jacrev``/``jacfwd``/``hessian``, autograd's
``jacobian``/``elementwise_grad``.

Why one compiled program: a Jacobian is many vector products of the same function, and
calling a compiled ``vjp`` once per row from Python would pay a call's overhead per row
and could not share the forward computation between rows.  Each transform here is a
function written in myc's subset -- a ``for`` loop over the rows (reverse mode: a
``grad`` of one output element each) or the columns (forward mode: a ``jvp`` along one
basis vector each), the rows stacked -- and jitted like any program.  So the loop is
compiled like a user's loop: short ones are unrolled (their forward passes shared by
CSE), long ones become one ``loop`` node (``docs/loops.md``), and compile time does not
grow with the number of rows.  The costs are JAX's: ``jacrev`` one reverse pass per
output element, ``jacfwd`` one forward-mode pass per input element, ``hessian`` a
``jacfwd`` of the gradient (forward over reverse).

The program works on flat vectors (``myc.misc.flatten``'s order: dict keys sorted, as
JAX's pytrees).  Where the differentiated arguments are arrays or numbers, a one-hot
tangent is a compare against ``np.arange``; where they are pytrees, it is the gradient
of that element of the flattened inputs, which has the inputs' structure without
building it by hand (more to compile).  The program's source is generated per arity and
``argnums`` (``_program``) so that ``fn`` is called with a fixed argument list.  The
flat matrix is cut into JAX's nesting in Python after the call: the output's
structure outside, the differentiated inputs' inside, each block ``out.shape +
in.shape``.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

import numpy as np

from myc.api import _argnums, _backend_of, _fn_name, _has_aux, grad, jit, jvp
from myc.errors import LIBRARY_DIRS, MycError, MycTypeError
from myc.misc.flatten import flatten
from myc.misc.flatten import leaves as _leaves
from myc.misc.flatten import rebuild as _rebuild
from myc.prims import Primitive
from myc.runtime import bound

_MODES = ("jacrev", "jacfwd", "hessian", "elementwise_grad")


def _flat(v: Any) -> Any:
    """``v`` (an array, a number or a pytree) as one vector: ``np.ravel`` for a leaf (the
    common case, cheap to compile), ``myc.misc.flatten``'s concatenation for a tree."""
    if isinstance(v, (tuple, list, dict)):
        return flatten(v)[0]
    return np.ravel(v)


def _flat_leaves(vs: tuple) -> Any:
    """A tuple of arrays or numbers as one vector."""
    if len(vs) == 1:
        return np.ravel(vs[0])
    return np.concatenate([np.ravel(v) for v in vs])


def _one_hot_tree(xs: tuple, j: int) -> tuple:
    """The tangent of element ``j`` of the flattened ``xs``: zeros in ``xs``'s structure,
    a one there (the gradient of that element: no structure built by hand)."""
    return grad(lambda zs: flatten(zs)[0][j])(xs)


def _one_hot_leaves(xs: tuple, j: int) -> tuple:
    """``_one_hot_tree`` where every entry of ``xs`` is an array or a number: a compare
    per entry against its offset (far less to compile than a gradient of a flatten)."""
    ts = []
    offset = 0
    for x in xs:
        n = np.size(x)
        hot = np.reshape(np.arange(offset, offset + n) == j, np.shape(x))
        ts.append(hot * np.ones_like(x))
        offset = offset + n
    return tuple(ts)


# The programs, by mode, as Python source generated for the call's arity and
# ``argnums``: ``fn`` is called with a fixed argument list (a star-call, or arguments
# picked through function values, costs the frontend ten times the nodes to parse and
# infer); ``{x}`` are filled in by ``_program``.
_BODY = {
    "elementwise_grad": """
        return None, grad(lambda zs: np.sum(fn({call_zs})))(xs), None
""",
    "jacrev": """
        r = fn({call})
        out = r{pick}
        m = out_flat(out).shape[0]

        def row(i):
            return in_flat(grad(lambda zs: out_flat(f_of(zs))[i])(xs))

        rows = []
        for i in range(m):
            rows.append(row(i))
        return out, np.stack(rows), {extra}
""",
    "jacfwd": """
        r = fn({call})
        out = r{pick}
        n = in_flat(xs).shape[0]
        cols = []
        for j in range(n):
            cols.append(out_flat(jvp(f_of, (xs,), (one_hot(xs, j),))[1]))
        return out, np.stack(cols, axis=1), {extra}
""",
    "hessian": """
        def grad_of(zs):
            return grad(f_of)(zs)

        n = in_flat(xs).shape[0]
        cols = []
        for j in range(n):
            cols.append(in_flat(jvp(grad_of, (xs,), (one_hot(xs, j),))[1]))
        r = fn({call})
        return r{pick}, np.stack(cols, axis=1), {extra}
""",
}

_HEAD = """\
def make(fn):
    def {mode}_program({params}):
        xs = ({xs},)

        def f_of(zs):
            return fn({call_zs}){pick}
"""


def _program(fn: Callable, nums: tuple, nargs: int, mode: str, aux: bool,
             leaves: bool, inside: bool = False) -> Callable:
    """The compiled Jacobian's function: ``(out, jac, aux)`` with ``jac`` the flat matrix
    (rows the flattened output, columns the flattened differentiated arguments).
    ``leaves``: each differentiated argument is an array or a number, not a pytree.  Its
    source is registered with ``linecache`` under a name that says what it computes, so
    that the frontend (and the disk cache's source key) read it like a file's."""
    params = [f"a{k}" for k in range(nargs)]
    call_zs = [f"zs[{nums.index(k)}]" if k in nums else params[k] for k in range(nargs)]
    fill = dict(mode=mode, params=", ".join(params), xs=", ".join(params[k] for k in nums),
                call=", ".join(params), call_zs=", ".join(call_zs),
                pick="[0]" if aux else "", extra="r[1]" if aux else "None")
    text = _HEAD.format(**fill) + _BODY[mode].format(**fill) + \
        f"    return {mode}_program\n"
    name = f"<myc.{mode} of {nargs} arguments, argnums {nums}, has_aux={aux}, " \
           f"{'arrays' if leaves else 'pytrees'}>"
    if inside:  # a library function of the program calling it: errors at the user's call
        name = LIBRARY_DIRS[0] + name
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    scope = {"np": np, "grad": grad, "jvp": jvp,
             "in_flat": _flat_leaves if leaves else _flat, "out_flat": _flat,
             "one_hot": _one_hot_leaves if leaves else _one_hot_tree}
    exec(compile(text, name, "exec"), scope)  # noqa: S102 - our own template
    return scope["make"](fn)


def _nested(flat: np.ndarray, out: Any, xs: Any) -> Any:
    """The flat Jacobian cut into JAX's nesting: ``out``'s structure outside, ``xs``'s
    inside, each block of shape ``out_leaf.shape + x_leaf.shape``."""
    flat = np.asarray(flat)
    in_shapes = [np.shape(v) for v in _leaves(xs)]
    in_sizes = [int(np.prod(s)) for s in in_shapes]
    blocks, r0 = [], 0
    for oshape in (np.shape(v) for v in _leaves(out)):
        m, c0, row = int(np.prod(oshape)), 0, []
        for ishape, n in zip(in_shapes, in_sizes, strict=True):
            row.append(np.array(flat[r0:r0 + m, c0:c0 + n].reshape(oshape + ishape)))
            c0 += n
        blocks.append(_rebuild(xs, iter(row)))
        r0 += m
    return _rebuild(out, iter(blocks))


def _check_inputs(name: str, fn: Callable, nums: tuple, args: tuple) -> None:
    """grad's refusals, made before the call so that they name the user's call: an
    ``argnums`` out of range, an integer or bool input."""
    for k in nums:
        if k >= len(args) or k < -len(args):
            raise MycTypeError(f"myc.{name}: argnums {k} is out of range for "
                               f"{_fn_name(fn)}() called with {len(args)} arguments")
        for leaf in _leaves(args[k]):
            dtype = np.asarray(leaf).dtype
            if not np.issubdtype(dtype, np.floating):
                what = type(leaf).__name__ if not hasattr(leaf, "dtype") else \
                    f"array of dtype {dtype}"
                raise MycTypeError(
                    f"myc.{name}: cannot differentiate with respect to argument {k} of "
                    f"{_fn_name(fn)}(): it holds an integer, bool or non-float value "
                    f"(got {what})",
                    hint="pass floats (x.astype(float)), or exclude it with argnums=")


def _normal_argnums(name: str, argnums: Any) -> tuple[tuple[int, ...], bool]:
    """``argnums`` as a tuple of ints, and whether the caller gave a tuple (then the
    result is a tuple, one entry per argument, as JAX's)."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return (argnums,), False
    if isinstance(argnums, (tuple, list)) and argnums and all(
            isinstance(a, int) and not isinstance(a, bool) for a in argnums):
        return tuple(argnums), True
    raise MycTypeError(f"myc.{name}: argnums must be an int or a non-empty tuple of ints, "
                       f"got {argnums!r}")


class Jacobian:
    """A Jacobian (or Hessian) transform of ``fn``: callable like ``fn``, returning the
    Jacobian in JAX's nesting (with ``has_aux``, ``(jacobian, aux)``)."""

    def __init__(self, fn: Callable, mode: str, argnums: Any, has_aux: bool,
                 backend: str | None, argnum: Any = None):
        assert mode in _MODES
        try:
            self._nums, self._tuple = _normal_argnums(mode, _argnums(argnums, argnum))
            self._aux = _has_aux(has_aux)
            self.backend = _backend_of(fn, backend)
        except MycError as exc:
            raise exc.with_traceback(None) from None
        self._fn, self._mode = fn, mode
        self._given = (fn, mode, argnums, has_aux, backend, argnum)  # (for pickling)
        self.__name__ = f"{mode}({_fn_name(fn)})"
        self.__qualname__ = self.__name__
        self.__wrapped__ = fn
        self.__doc__ = getattr(fn, "__doc__", None)
        self._programs: dict[tuple[Callable, tuple[int, ...], int, bool], Callable] = {}
        self._graph: Any = None  # (its graph when called inside compiled code)
        self._of_arrays: Jacobian | None = None  # (a Hessian of an array-valued fn)
        # what the disk cache's source key describes (as ``grad``'s)
        self._myc_source = (mode, fn, (argnums, has_aux, argnum))

    def _compiled(self, fn: Callable, nums: tuple[int, ...], nargs: int,
                  leaves: bool) -> Callable:
        """The jitted program for these (resolved) ``argnums``, argument count and kind of
        inputs (it specializes on the arguments' signature like any ``myc.jit``
        function)."""
        key = (fn, nums, nargs, leaves)
        run = self._programs.get(key)
        if run is None:
            run = jit(_program(fn, nums, nargs, self._mode, self._aux, leaves),
                      backend=self.backend)
            self._programs[key] = run
        return run

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            if kwargs:
                k = next(iter(kwargs))
                raise MycTypeError(
                    f"myc.{self._mode} got keyword argument '{k}': it differentiates "
                    "positional arguments and passes no keywords to the function",
                    hint=f"bind it first: functools.partial(f, {k}=...)")
            _check_inputs(self._mode, self._fn, self._nums, args)
            nums = tuple(k % len(args) for k in self._nums)
            leaves = not any(isinstance(args[k], (tuple, list, dict)) for k in nums)
            fn, data = self._fn, ()
            if bound.is_bound(fn):  # a bound method or partial: its data passed first,
                s = bound.split(fn)  # held constant (as grad's and vjp's)
                fn, data = s.fn, tuple(s.data)
            run = self._compiled(fn, tuple(k + len(data) for k in nums),
                                 len(data) + len(args), leaves)
            out, flat, extra = run(*data, *args)
            if self._mode == "elementwise_grad":  # (a gradient: xs's structure)
                return flat if self._tuple else flat[0]
            xs = tuple(args[k] for k in nums) if self._tuple else args[nums[0]]
            # a Hessian is the Jacobian of the gradient, which has xs's structure
            jac = _nested(flat, xs if self._mode == "hessian" else out, xs)
            return (jac, extra) if self._aux else jac
        except MycError as exc:
            if self._mode == "hessian" and str(exc).startswith("<myc.hessian") and \
                    "float scalar" in str(exc):  # grad's refusal, at our template's line
                return self._of_array_valued(args)
            raise exc.with_traceback(None) from None

    def _of_array_valued(self, args: tuple) -> Any:
        """The Hessian of a function with array (or pytree) outputs: JAX's definition,
        ``jacfwd(jacrev(f))`` -- shape ``out.shape + x.shape + x.shape``."""
        if self._of_arrays is None:
            fn, _, argnums, has_aux, backend, argnum = self._given
            self._of_arrays = Jacobian(Jacobian(fn, "jacrev", argnums, has_aux, backend,
                                                argnum), "jacfwd", argnums, has_aux, backend,
                                       argnum)
        try:
            return self._of_arrays(*args)
        except MycError as exc:
            raise exc.with_traceback(None) from None

    def __myc_graph__(self) -> Any:
        """Its graph, called by a compiled function or by another transform
        (``myc.jacfwd(myc.jacrev(f))``, ``myc.jit(myc.hessian(f))``): the program of
        ``myc.<mode>`` inside a compiled function, for one argument."""
        if self._graph is None:
            from myc.frontend.lower import parse

            fn, mode, argnums, has_aux, backend, argnum = self._given
            self._graph = _in_program(mode)(parse(fn), argnums, has_aux, backend,
                                            argnum=argnum)
        return self._graph

    def stats(self):
        """How the compiled program's calls were served (per ``argnums`` resolved)."""
        return next(iter(self._programs.values())).stats() if self._programs else None

    def __reduce__(self) -> Any:
        """Pickled as the transform applied to the function: the copy compiles again."""
        return Jacobian, self._given

    def __repr__(self) -> str:
        return f"<myc {self.__name__}>"


# Inside a compiled function (``H = myc.hessian(f)(x)`` in a Newton step): the same
# program, called by the enclosing one, its flat matrix reshaped there to ``out.shape +
# x.shape`` (``x.shape + x.shape`` for a Hessian).  One argument differentiated, an array
# or a number; pytrees and tuples of ``argnums`` are for calls outside compiled code.
_WRAP = """\
def wrap(program, np):
    def {mode}_of({params}):
        x = {x}
        if isinstance(x, (tuple, list, dict)):
            raise TypeError("{message}")
        out, flat, extra = program({params})
        if isinstance(out, (tuple, list, dict)):
            raise TypeError("{message}")
        jac = {jac}
        return {result}
    return {mode}_of
"""

_JAC = {"jacrev": "np.reshape(flat, np.shape(out) + np.shape(x))",
        "jacfwd": "np.reshape(flat, np.shape(out) + np.shape(x))",
        "hessian": "np.reshape(flat, np.shape(x) + np.shape(x))",
        "elementwise_grad": "flat[0]"}


def _in_program(mode: str) -> Callable:
    """The ``__myc_transform__`` of ``myc.<mode>``: its graph for a function ``fn``
    (a graph) used inside a compiled function."""

    def transform(fn: Any, argnums: Any = 0, has_aux: bool = False,
                  backend: str | None = None, *, argnum: Any = None) -> Any:
        from myc.frontend.lower import parse

        if mode == "elementwise_grad":  # (autograd's spelling: argnum first)
            argnums, argnum = argnum if argnum is not None else argnums, None
        nums, as_tuple = _normal_argnums(mode, _argnums(argnums, argnum))
        _backend_of(fn, backend)
        sig = getattr(fn, "flags", {}).get("signature")
        nargs = 0
        if isinstance(fn, Primitive):  # np.tanh: its arguments without defaults
            nargs = fn.min_args
        elif sig is not None and sig.varargs is None and sig.varkw is None:
            nargs = sum(1 for n in sig.names[:sig.n_positional] if n not in sig.defaults)
        if as_tuple or nargs == 0:
            raise MycTypeError(f"myc.{mode} inside a compiled function takes a function "
                               "of positional parameters and one argnums int",
                               hint="call it outside the compiled function for tuples of "
                                    "argnums or *args")
        if not -nargs <= nums[0] < nargs:
            raise MycTypeError(f"myc.{mode}: argnums {nums[0]} is out of range for a "
                               f"function of {nargs} arguments")
        k = nums[0] % nargs
        aux = _has_aux(has_aux)
        program = _program(fn, (k,), nargs, mode, aux, True, inside=True)
        params = ", ".join(f"a{i}" for i in range(nargs))
        message = f"myc.{mode} inside a compiled function differentiates one array " \
            "argument with an array output: call it outside for pytrees"
        text = _WRAP.format(mode=mode, params=params, x=f"a{k}", jac=_JAC[mode],
                            message=message,
                            result="(jac, extra)" if aux else "jac")
        name = f"{LIBRARY_DIRS[0]}<myc.{mode} inside a program, {nargs} arguments, " \
               f"argnums {k}>"
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        scope: dict[str, Any] = {}
        exec(compile(text, name, "exec"), scope)  # noqa: S102 - our own template
        return parse(scope["wrap"](program, np))

    # (its program is a top-level graph: a lambda nested in the compiled function,
    # whose graph belongs to that one, cannot be called from it; refused clearly)
    transform.module_level_only = True  # type: ignore[attr-defined]
    return transform


def jacrev(fn: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False,
           backend: str | None = None, *, argnum: Any = None) -> Jacobian:
    """The Jacobian of ``fn`` w.r.t. ``argnums`` by reverse mode (JAX's ``jacrev``): one
    compiled program computing one vector-Jacobian product per output element.  Shape
    ``out.shape + in.shape``; pytrees nest as JAX's (output outside, input inside)."""
    return Jacobian(fn, "jacrev", argnums, has_aux, backend, argnum)


def jacfwd(fn: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False,
           backend: str | None = None, *, argnum: Any = None) -> Jacobian:
    """``jacrev``'s result by forward mode (JAX's ``jacfwd``): one Jacobian-vector
    product per input element; cheaper where the inputs are fewer than the outputs."""
    return Jacobian(fn, "jacfwd", argnums, has_aux, backend, argnum)


jacobian = jacrev  # autograd's name (and argument spelling: ``argnum=``)


def hessian(fn: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False,
            backend: str | None = None, *, argnum: Any = None) -> Jacobian:
    """The Hessian of scalar-valued ``fn`` (JAX's ``hessian``: ``jacfwd`` of the
    gradient, forward over reverse), in one compiled program; shape ``in.shape +
    in.shape``, pytrees nested as JAX's."""
    return Jacobian(fn, "hessian", argnums, has_aux, backend, argnum)


def elementwise_grad(fn: Callable, argnum: int | tuple[int, ...] = 0,
                     backend: str | None = None, *, argnums: Any = None) -> Jacobian:
    """autograd's ``elementwise_grad``: the gradient of ``sum(fn(...))``, i.e. the
    vector-Jacobian product with ones -- for an elementwise ``fn``, the diagonal of its
    Jacobian (``elementwise_grad(np.tanh)(x) == 1 - np.tanh(x)**2``)."""
    return Jacobian(fn, "elementwise_grad", argnum, False, backend,
                    None if argnums is None else argnums)


for _mode, _fn in (("jacrev", jacrev), ("jacfwd", jacfwd), ("hessian", hessian),
                   ("elementwise_grad", elementwise_grad)):
    _fn.__myc_transform__ = _in_program(_mode)  # type: ignore[attr-defined]
