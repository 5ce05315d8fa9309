"""The public surface: ``jit``, ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``ir``."""

from __future__ import annotations

import functools
import inspect
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from myc import pipeline, timings
from myc.backends.registry import backend as backend_named
from myc.errors import MycError, MycTypeError, MycValueError
from myc.prims.containers import like
from myc.runtime import bound, fastcall
from myc.runtime.args import (
    check_arg,
    check_args,
    check_like,
    check_shared_writes,
    int_tangents,
    own_outputs,
)

if TYPE_CHECKING:
    from myc.runtime.specialize import Source


class Jitted:
    """A function compiled by myc on first call, specialized per argument signature."""

    def __init__(self, fn: Callable, backend: str = "cpu"):
        err = _backend_error(backend)
        if err is not None:
            raise err
        functools.update_wrapper(self, fn)  # (copies fn's attributes: set ours after)
        self.__myc_function__ = fn
        self.backend = backend
        self._executable: Callable | None = None
        self._writes_checked = False
        self._watch: Any = None
        self._label = f"jit({getattr(fn, '__name__', '?')})"  # (MYC_TIMINGS's report)
        # threads calling a fresh wrapper at once build one runner, not one each
        self._build_lock = threading.RLock()

    def _compile(self) -> Callable:
        run = self._executable
        if run is not None and not _rebound(self._watch):
            return run
        with self._build_lock:
            if self._executable is not None and _rebound(self._watch):
                self._executable = None  # a global it read was rebound: compiled again
            if self._executable is None:
                from myc.frontend.globals_watch import GlobalWatch
                from myc.runtime.specialize import Source

                fn = self.__myc_function__
                self._watch = GlobalWatch(fn)
                self._source = Source(lambda: pipeline.parsed(fn), self, self.backend)
                self._executable = _executable(self._source, self.backend)
            return self._executable

    @property
    def _graph(self):
        self._compile()
        return self._source.parse()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            with timings.call(self._label):
                run = self._compile()
                out = _call(self._source, run, args, kwargs)
                if not self._writes_checked:  # (once: the first call's arguments)
                    self._writes_checked = True
                    if self._source.graph is not None:  # (a disk-cache hit parses not)
                        from myc.runtime.argument_writes import warn_argument_writes

                        warn_argument_writes(self._source.graph, self.__myc_function__,
                                             args, kwargs)
                return out
        except MycError as exc:
            raise exc.with_traceback(None) from None

    def stats(self):
        """How this function's calls were served (``myc.support.stats.Stats``)."""
        return _stats_of(self._executable, self.__name__, self.backend)

    def __get__(self, obj, objtype=None):  # behave like a plain function in classes
        return self if obj is None else functools.partial(self, obj)

    def __reduce__(self) -> Any:
        """Pickled (for ``multiprocessing``, ``copy.deepcopy``) as the function and the
        backend, so the copy compiles again; compiled code and locks stay behind."""
        return _reduce(self, Jitted, (self.__myc_function__, self.backend))

    def __repr__(self) -> str:
        return f"<myc.jit {getattr(self.__myc_function__, '__qualname__', '?')} " \
               f"backend={self.backend}>"


def _backend_error(backend: str) -> MycValueError | None:
    """The error for an unknown backend name (raised by the caller, so that the user's
    traceback shows one myc frame), or None."""
    try:
        backend_named(backend)
    except MycValueError:
        return MycValueError(f"myc.jit: unknown backend '{backend}'; available: "
                             f"{', '.join(pipeline.backends())}")
    return None


def _rebound(watch: Any) -> bool:
    """Was a global or closure cell the program read rebound since it was compiled?
    (Then the parsed graphs are forgotten: ``myc.frontend.globals_watch``.)"""
    if watch is None or watch.changed() is None:
        return False
    watch.invalidate()
    return True


def _executable(source: Source, backend: str) -> Callable:
    """The specializing runner of a compiling backend (its graph parsed only when a
    signature is not found on disk by source key), else the evaluator, counted."""
    from myc.runtime.specialize import SpecializedFunction, make_executable

    if backend_named(backend).specializes:
        backend_named(backend).prepare()
        return SpecializedFunction(source.graph, source, backend)
    from myc.support.stats import Counted

    graph = source.parse()
    return Counted(make_executable(graph, backend), graph.name, backend)


def _stats_of(run: Any, name: str, backend: str):
    from myc.support.stats import Stats

    record = getattr(run, "stats", None)
    return record if isinstance(record, Stats) else Stats(name, backend)


def _call(source: Source, run: Callable, args: tuple, kwargs: dict) -> Any:
    assert source.binding is not None
    b = source.binding
    bound = b.bind(args, kwargs)
    if getattr(b, "writes", ()):
        check_shared_writes(b, bound)
    fast = fastcall.lookup(run, bound)
    if fast is not None:  # a host signature seen before (``myc.runtime.fastcall``)
        out = fast.call(bound)
        if out is not fastcall.MISSED:
            return own_outputs(out)
    backend = backend_named(source.backend)
    out = backend.call(run, b.names, bound, check_args, own_outputs)
    if backend.host_fast_calls:
        fastcall.note(run, bound)
    return out


def _bind_call(graph, args: tuple, kwargs: dict) -> list[Any]:
    """Positional arguments for ``graph`` from a Python call's args, kwargs and defaults;
    arrays sharing memory with one the function changes in place are refused, as
    ``jit``'s calls refuse them (``check_shared_writes``)."""
    from myc.runtime.specialize import Binding

    b = Binding.of(graph)
    full = b.bind(args, kwargs)
    if b.writes:
        check_shared_writes(b, full)
    return full


def jit(fn: Callable | None = None, *, backend: str = "cpu"):
    """Compile ``fn`` with myc; usable as ``@myc.jit`` or ``@myc.jit(backend=...)``."""
    err = _backend_error(backend)
    if err is not None:
        raise err
    if fn is None:
        return lambda f: jit(f, backend=backend)
    if bound.is_bound(fn):  # jit(model.loss), jit(partial(f, X=X)): JAX accepts them
        return Bound(fn, "jit", lambda s: bound.shared(
            ("jit", s.fn, backend), lambda: Jitted(s.fn, backend)), backend)
    return Jitted(fn, backend)


class Bound:
    """``jit``/``grad``/``value_and_grad`` of a bound method or ``functools.partial``:
    the generated function of ``myc.runtime.bound`` called with the bound data first
    (``argnums`` count the parameters the caller sees)."""

    def __init__(self, fn: Callable, kind: str, make: Callable[[bound.Split], Callable],
                 backend: str):
        try:
            self._split = bound.split(fn)
        except MycError as exc:
            raise exc.with_traceback(None) from None
        self._make = make
        self.__wrapped__ = fn
        self.__name__ = f"{kind}({_fn_name(bound.underlying(fn))})"
        self.__qualname__ = self.__name__
        self.__doc__ = getattr(fn, "__doc__", None)
        self.backend = backend
        self._kind = kind
        self._writes_checked = False

    def _target(self, kwargs: dict) -> tuple[bound.Split, Callable, dict]:
        s, kwargs = bound.resplit(self._split, kwargs)
        return s, self._make(s), kwargs

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            s, run, kwargs = self._target(kwargs)
        except MycError as exc:
            raise exc.with_traceback(None) from None
        out = run(*s.data, *args, **kwargs)
        if not self._writes_checked:  # jit(net.update): self changed in place?
            self._writes_checked = True
            method = self.__wrapped__
            source = getattr(run, "_source", None)
            if self._kind == "jit" and inspect.ismethod(method) and \
                    isinstance(method.__func__, types.FunctionType) and \
                    source is not None and source.graph is not None:  # (parsed now)
                from myc.runtime.argument_writes import warn_argument_writes

                warn_argument_writes(pipeline.parsed(method.__func__), method, args,
                                     kwargs)
        return out

    def stats(self):
        """How the calls of the compiled function behind it were served."""
        return self._make(self._split).stats()

    def __repr__(self) -> str:
        return f"<myc {self.__name__} of {self.__wrapped__!r}>"


def _shift(argnums: Any, k: int) -> Any:
    """``argnums`` of the visible parameters as the generated function's (its first
    ``k`` parameters are the bound data)."""
    if isinstance(argnums, (tuple, list)):
        return type(argnums)(a + k if isinstance(a, int) and a >= 0 else a for a in argnums)
    return argnums + k if isinstance(argnums, int) and argnums >= 0 else argnums


def _bound_transform(kind: str, fn: Callable, argnums: Any, backend: str | None,
                     aux: bool) -> Bound:
    make = value_and_grad if kind == "value_and_grad" else grad
    where = _backend_of(bound.underlying(fn), backend)

    def build(s: bound.Split) -> Callable:
        nums = _shift(argnums, len(s.data))
        return bound.shared((kind, s.fn, nums, where, aux),
                            lambda: make(s.fn, nums, where, has_aux=aux))

    return Bound(fn, kind, build, where)


class Transformed:
    """A function made by a transform (``grad``, ``value_and_grad``, ``jvp_fn``...).

    It is callable like the function it came from, and it is a graph: ``jit``, ``grad``
    and the frontend (when it is called inside another myc function) all see
    ``__myc_graph__``.
    """

    def __init__(self, build: Callable[[], Any], name: str, backend: str = "interp",
                 source: tuple[str, Any, Any] | None = None):
        self._build = build
        self._graph = None
        self._run: Callable | None = None
        self._source: Source | None = None
        self.__name__ = name
        self.__qualname__ = name
        self.backend = backend
        # (transform, function, argnums): what the disk cache's source key describes
        self._myc_source = source
        self._watch: Any = None
        self._build_lock = threading.RLock()  # one graph and runner, whatever the threads

    def __myc_graph__(self):
        with self._build_lock:
            if self._graph is not None and _rebound(self._watch):
                self._graph = self._run = None  # a global it read was rebound
            if self._graph is None:
                from myc.frontend.globals_watch import GlobalWatch

                self._watch = GlobalWatch(self._myc_source[1]) if self._myc_source else None
                self._graph = self._build()
            return self._graph

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            with timings.call(self.__name__):
                source, run = self._source, self._run
                if run is None or _rebound(self._watch):
                    source, run = self._runner()
                assert source is not None
                return _call(source, run, args, kwargs)
        except MycError as exc:
            raise exc.with_traceback(None) from None

    def _runner(self) -> tuple[Source, Callable]:
        """The source and runner, built (again, after a global was rebound) by one
        thread while the others wait."""
        with self._build_lock:
            if self._run is not None and _rebound(self._watch):
                self._graph = self._run = None  # a global it read was rebound
            if self._run is None:
                from myc.runtime.specialize import Source

                self._source = Source(self.__myc_graph__, self, self.backend)
                self._run = _executable(self._source, self.backend)
            assert self._source is not None
            return self._source, self._run

    def stats(self):
        """How this function's calls were served (``myc.support.stats.Stats``)."""
        return _stats_of(self._run, self.__name__, self.backend)

    def __reduce__(self) -> Any:
        """Pickled as the transform applied to the function (``grad`` and
        ``value_and_grad``), so the copy compiles again."""
        kind, fn, argnums = self._myc_source or (None, None, None)
        make = {"grad": grad, "value_and_grad": value_and_grad,
                "grad_aux": functools.partial(grad, has_aux=True),
                "value_and_grad_aux": functools.partial(value_and_grad, has_aux=True)
                }.get(kind)
        if make is None:
            raise MycTypeError(f"{self.__name__} cannot be pickled: only myc.jit, "
                               "myc.grad and myc.value_and_grad functions can")
        return _reduce(self, make, (fn, argnums, self.backend))

    def __repr__(self) -> str:
        return f"<myc {self.__name__}>"


def _reduce(obj: Any, make: Callable, args: tuple) -> Any:
    """``__reduce__``'s answer: by reference (the module attribute's name) where ``obj``
    is that attribute -- a ``@myc.jit`` decorated function, whose own function pickle
    cannot find under its name -- else ``make(*args)``."""
    import sys

    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    name = getattr(obj, "__qualname__", "")
    target: Any = module
    for part in name.split("."):
        target = getattr(target, part, None)
    if target is obj:
        return name
    return make, args


_graph_of = pipeline.graph_of


def _fn_name(fn: Any) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _argnums(argnums: Any, argnum: Any) -> Any:
    """autograd spells ``argnums`` ``argnum``: either is accepted, not both.  NumPy
    integers count as ints (``argnums=np.int64(1)``, as in JAX)."""
    if argnum is not None:
        if not (isinstance(argnums, int) and argnums == 0):
            raise MycTypeError("grad got both argnums= and argnum= (autograd's spelling): "
                               "pass one")
        argnums = argnum
    if isinstance(argnums, np.integer):
        return int(argnums)
    if isinstance(argnums, (tuple, list)):
        return type(argnums)(int(a) if isinstance(a, np.integer) else a for a in argnums)
    return argnums


def grad(fn: Callable, argnums: int | tuple[int, ...] = 0,
         backend: str | None = None, *, argnum: int | tuple[int, ...] | None = None,
         has_aux: bool = False) -> Transformed | Bound:
    """The gradient of ``fn`` (which returns a float scalar) w.r.t. ``argnums``.

    Arguments may be pytrees (tuples, lists, dicts, namedtuples): ``argnums`` picks whole
    arguments and each gradient has its argument's structure.  ``backend``: where the
    gradient runs (default: ``fn``'s backend if it is a ``myc.jit`` function, else cpu);
    ``grad(f, backend="opencl")`` is ``grad(jit(f, backend="opencl"))``.  ``argnum=``
    (autograd's name) is ``argnums=``.  ``has_aux`` (JAX's): ``fn`` returns ``(loss,
    aux)``, only ``loss`` is differentiated, and the call returns ``(grads, aux)``.
    """
    from myc.ad.grad import grad_graph

    argnums = _argnums(argnums, argnum)
    aux = _has_aux(has_aux)
    if bound.is_bound(fn):  # grad(model.loss), grad(partial(loss, X=X, y=y))
        return _bound_transform("grad", fn, argnums, backend, aux)
    return Transformed(
        lambda: _located(lambda: grad_graph(_graph_of(fn), argnums, False, aux)),
        f"grad({_fn_name(fn)})", _backend_of(fn, backend),
        ("grad_aux" if aux else "grad", fn, argnums))


def value_and_grad(fn: Callable, argnums: int | tuple[int, ...] = 0,
                   backend: str | None = None, *,
                   argnum: int | tuple[int, ...] | None = None,
                   has_aux: bool = False) -> Transformed | Bound:
    """``(fn(*args), grad(fn)(*args))`` computed together (``backend``, ``argnum`` as in
    ``grad``); with ``has_aux``, ``((loss, aux), grads)`` as JAX's."""
    from myc.ad.grad import grad_graph

    argnums = _argnums(argnums, argnum)
    aux = _has_aux(has_aux)
    if bound.is_bound(fn):
        return _bound_transform("value_and_grad", fn, argnums, backend, aux)
    return Transformed(
        lambda: _located(lambda: grad_graph(_graph_of(fn), argnums, True, aux)),
        f"value_and_grad({_fn_name(fn)})", _backend_of(fn, backend),
        ("value_and_grad_aux" if aux else "value_and_grad", fn, argnums))


def _has_aux(has_aux: Any) -> bool:
    if not isinstance(has_aux, (bool, np.bool_)):
        raise MycTypeError(f"has_aux must be True or False, not {has_aux!r}")
    return bool(has_aux)


def _backend_of(fn: Any, backend: str | None = None) -> str:
    """The backend a transform runs on: the one asked for, else ``fn``'s own."""
    if backend is None:
        return getattr(fn, "backend", "cpu")
    backend_named(backend)  # an unknown name: the error lists the registered ones
    return backend


def _located(build: Callable[[], Any]) -> Any:
    try:
        return build()
    except MycError as exc:
        raise exc.with_traceback(None) from None


def _grad_transform(fn, argnums=0, backend=None, *, argnum=None, has_aux=False):
    """``myc.grad`` inside a compiled function: the gradient's graph (it runs on the
    enclosing program's backend; ``backend`` is checked, then has no other effect)."""
    from myc.ad.grad import grad_graph

    argnums = _argnums(argnums, argnum)
    _backend_of(fn, backend)
    return grad_graph(fn, argnums, False, _has_aux(has_aux))


def _value_and_grad_transform(fn, argnums=0, backend=None, *, argnum=None, has_aux=False):
    from myc.ad.grad import grad_graph

    argnums = _argnums(argnums, argnum)
    _backend_of(fn, backend)
    return grad_graph(fn, argnums, True, _has_aux(has_aux))


def _jit_transform(fn, backend="cpu"):
    """``myc.jit(f)`` inside a compiled function: ``f`` itself (it is compiled already)."""
    err = _backend_error(backend)
    if err is not None:
        raise err
    return fn


def _vjp_transform(*args, **kwargs):
    raise MycTypeError("myc.vjp returns a Python pullback and cannot be used inside a "
                       "compiled function; use myc.grad or myc.value_and_grad there, or "
                       "call myc.vjp outside")


grad.__myc_transform__ = _grad_transform  # type: ignore[attr-defined]
value_and_grad.__myc_transform__ = _value_and_grad_transform  # type: ignore[attr-defined]
jit.__myc_transform__ = _jit_transform  # type: ignore[attr-defined]


def _no_keywords(name: str, kwargs: dict, call: str) -> None:
    """Keyword arguments to ``vjp``/``jvp`` other than their own options: JAX refuses
    them too (the primals are positional); the error says how to bind one."""
    if kwargs:
        k = next(iter(kwargs))
        raise MycTypeError(
            f"myc.{name} got keyword argument '{k}': {call} differentiates with respect "
            "to positional primals only (as JAX's), and takes no keyword arguments for "
            "the function",
            hint=f"bind it first: myc.{name}(functools.partial(f, {k}=...), ...) (the "
                 "bound value is held constant), or pass it as a primal")


def vjp(fn: Callable, *primals: Any, backend: str | None = None, has_aux: bool = False,
        **kwargs: Any) -> tuple[Any, ...]:
    """``(fn(*primals), pullback)``; ``pullback(cotangent)`` gives one cotangent per primal,
    each in its primal's structure (``backend`` as in ``grad``).  ``has_aux`` (JAX's):
    ``fn`` returns ``(out, aux)``; the call returns ``(out, pullback, aux)``.  Keyword
    arguments for ``fn`` are refused (bind them with ``functools.partial``).  ``fn`` may
    be a bound method or a partial: its bound data is held constant."""
    try:
        _no_keywords("vjp", kwargs, "myc.vjp(f, *primals)")
        aux = _has_aux(has_aux)
        fn = _static_defaults(fn, len(primals))
        if bound.is_bound(fn):
            s = bound.split(fn)
            where = _backend_of(bound.underlying(fn), backend)
            out = vjp(s.fn, *s.data, *primals, backend=where, has_aux=aux)
            return (out[0], _dropping(out[1], len(s.data)), *out[2:])
        if aux:
            (out, extra), pull = vjp(fn, *primals, backend=backend)
            return out, _aux_pullback(pull, bound.zeros_like_tree(extra)), extra
    except MycError as exc:
        raise exc.with_traceback(None) from None
    from myc.runtime.vjp import make_vjp

    try:
        graph = _graph_of(fn)
        names = [p.name for p in graph.parameters]
        full = _bind_call(graph, primals, {})  # arity checked, defaults filled in
        return make_vjp(graph, check_args(names, tuple(full)), list(primals),
                        _backend_of(fn, backend))
    except MycError as exc:
        raise exc.with_traceback(None) from None


def jvp(fn: Callable, primals: tuple, tangents: tuple,
        backend: str | None = None, has_aux: bool = False,
        **kwargs: Any) -> tuple[Any, ...]:
    """``(fn(*primals), J·tangents)`` by forward mode (``backend`` as in ``grad``).
    ``has_aux`` (JAX's): ``fn`` returns ``(out, aux)``; the call returns ``(out,
    tangent_out, aux)``.  Keyword arguments for ``fn`` are refused (bind them with
    ``functools.partial``).  ``fn`` may be a bound method or a partial: its bound data is
    held constant (zero tangents)."""
    try:
        _no_keywords("jvp", kwargs, "myc.jvp(f, primals, tangents)")
        aux = _has_aux(has_aux)
        if isinstance(primals, tuple):
            fn = _static_defaults(fn, len(primals))
        if bound.is_bound(fn) and isinstance(primals, tuple) and \
                isinstance(tangents, tuple):
            s = bound.split(fn)
            zeros = tuple(bound.zeros_like_tree(v) for v in s.data)
            return jvp(s.fn, s.data + primals, zeros + tangents,
                       _backend_of(bound.underlying(fn), backend), has_aux=aux)
        if aux:
            (out, extra), (tan, _) = jvp(fn, primals, tangents, backend)
            return out, tan, extra
    except MycError as exc:
        raise exc.with_traceback(None) from None
    from myc.runtime.vjp import run_jvp

    try:
        graph = _graph_of(fn)
        names = [p.name for p in graph.parameters]
        if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
            raise MycTypeError("jvp takes primals and tangents as tuples")
        if len(primals) != len(tangents):
            raise MycTypeError(f"jvp got {len(primals)} primals but {len(tangents)} tangents")
        full = _bind_call(graph, primals, {})  # arity checked, defaults filled in
        args = check_args(names, tuple(full))
        # lists and dicts (primals and tangents alike) as myc's static structures
        primals = tuple(check_arg(p, f"primal {i + 1}") for i, p in enumerate(primals))
        # int leaves' tangents (None, float0) made zeros before the check sees them, and
        # again after it (inside lists and dicts, which the check makes tuples)
        tangents = tuple(int_tangents(t, p, f"tangent {i + 1}")
                         for i, (p, t) in enumerate(zip(primals, tangents, strict=True)))
        tangents = tuple(check_arg(t, f"tangent {i + 1}") if t is not None else t
                         for i, t in enumerate(tangents))
        tangents = tuple(int_tangents(t, p, f"tangent {i + 1}")
                         for i, (p, t) in enumerate(zip(primals, tangents, strict=True)))
        for i, (p, t) in enumerate(zip(primals, tangents, strict=True)):
            check_like(t, p, f"tangent {i + 1}", "its primal")
        # a parameter left to its default does not vary: its tangent is zero
        tans = list(tangents) + [_zero_tangent(v) for v in full[len(primals):]]
        sig = graph.flags.get("signature")
        if sig is not None and not sig.simple:  # def f(x, *args): bound like the primals
            npos, named = sig.n_positional, len(sig.names)
            tans = [tangents[i] if i < min(len(tangents), npos) else _zero_tangent(full[i])
                    for i in range(named)]
            if sig.varargs is not None:
                tans.append(tuple(tangents[npos:]))
            if sig.varkw is not None:
                tans.append(full[-1])
        with timings.call(f"jvp({_fn_name(fn)})"):
            out = run_jvp(graph, args, check_args(names, tuple(tans)),
                          _backend_of(fn, backend))
        return own_outputs(out)
    except MycError as exc:
        raise exc.with_traceback(None) from None


def _dropping(pullback: Callable, k: int) -> Callable:
    """A pullback without the cotangents of the first ``k`` primals (bound data)."""
    def pull(*cotangents: Any, **kwargs: Any) -> tuple[Any, ...]:
        return pullback(*cotangents, **kwargs)[k:]

    return pull


def _aux_pullback(pullback: Callable, zero_aux: Any) -> Callable:
    """``has_aux``'s pullback: the cotangent of ``out`` only (``aux``'s is zero)."""
    def pull(*cotangents: Any, **kwargs: Any) -> tuple[Any, ...]:
        if len(cotangents) != 1 or kwargs:
            return pullback(*cotangents, **kwargs)  # (its own error)
        return pullback((cotangents[0], zero_aux))

    return pull


def _target_code(typed, template, name: str, backend: str) -> str:
    """Each kernel of the program lowered for ``backend``, in its target language."""
    b = backend_named(backend)
    if b.target_language is None:
        have = " and ".join(f"backend='{n}' ({backend_named(n).target_language})"
                            for n in pipeline.backends()
                            if backend_named(n).target_language is not None)
        raise MycValueError(f"myc.ir: stage='target' is available for {have}, not "
                            f"'{backend}'")
    kernels: list[Any] = []
    if b.native_host:  # lowered for real (it compiles here, no device needed): its
        prog = pipeline.lowered(typed, template, name, backend)  # kernels, loops' too
        kernels = pipeline.program_kernels(prog)
    else:
        def record(kernel):
            kernels.append(kernel)
            return lambda arrays: None  # never run

        prog = pipeline.lowered(typed, template, name, backend, compiler=record)
    parts = [prog.describe()]
    for k in kernels:
        parts += [f"\n{b.comment} ---- kernel {k.name} ({backend})", b.render(k)]
    return "\n".join(parts)


def _static_defaults(fn: Any, nargs: int) -> Any:
    """``fn`` with its function-valued defaults bound (``def f(x, act=np.tanh)``), for
    ``vjp``/``jvp``: a function is a static value, compiled in, never a primal, and a
    forward-mode call through a primal would call the function itself, not its
    derivative.  Bound by ``functools.partial``, it is compiled in as a bound function's
    static values are (``myc/runtime/bound.py``)."""
    py = getattr(fn, "__myc_function__", fn)  # (a jit object keeps its backend)
    if not isinstance(py, types.FunctionType):
        return fn
    try:
        params = list(inspect.signature(py).parameters.values())
    except (TypeError, ValueError):
        return fn
    static = {p.name: p.default for i, p in enumerate(params)
              if p.default is not inspect.Parameter.empty and callable(p.default)
              and not hasattr(p.default, "dtype")
              and (i >= nargs or p.kind is inspect.Parameter.KEYWORD_ONLY)
              and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                             inspect.Parameter.KEYWORD_ONLY)}
    return functools.partial(fn, **static) if static else fn


def _zero_tangent(v: Any) -> Any:
    if v is None or isinstance(v, str) or callable(v):  # a static value: no tangent
        return None  # (JAX's None leaf)
    if isinstance(v, tuple):
        return like(v, [_zero_tangent(x) for x in v])
    if isinstance(v, (bool, int)) and not isinstance(v, float):
        return v * 0
    return 0.0 if isinstance(v, float) else (v * 0 if hasattr(v, "dtype") else v)


def _jvp_transform(fn):
    from myc.ad.forward import jvp_graph
    from myc.ad.grad import prim_graph
    from myc.prims import Primitive

    return jvp_graph(prim_graph(fn) if isinstance(fn, Primitive) else fn)


jvp.__myc_call_transform__ = _jvp_transform  # type: ignore[attr-defined]
vjp.__myc_transform__ = _vjp_transform  # type: ignore[attr-defined]
_vjp_transform.refused_in_programs = True  # type: ignore[attr-defined]


def aot(fn: Callable, signature: Any, output: str, name: str | None = None):
    """Ahead-of-time compilation to a shared library plus a C header (``docs/aot.md``).

    ``signature``: e.g. ``"f32[64,4], f32[4]"``; returns ``(so_path, header_path)``.
    """
    from myc.aot import aot as _aot

    try:
        return _aot(fn, signature, output, name)
    except MycError as exc:
        raise exc.with_traceback(None) from None


def ir(fn: Callable, *example_args: Any, stage: str = "parsed", backend: str = "cpu") -> str:
    """The program as text after ``stage``: parsed, ad, typed, optimized, fused (the
    optimized program and its fusion groups), kernels (the host program) or target (the
    target code of every kernel ``backend`` compiles: optimized LLVM IR for ``cpu``, PTX
    for ``cuda``, AMDGCN assembly for ``rocm``, OpenCL C for ``opencl``; no device
    needed).  The stages are
    ``myc.pipeline`` 's, run in order.

    ``typed`` and later stages specialize on ``example_args`` (like a first call).
    """
    from myc.ir.printer import print_graph, print_program

    if stage not in pipeline.STAGES:
        raise MycTypeError(f"unknown stage '{stage}'; stages: {', '.join(pipeline.STAGES)}")
    try:
        if isinstance(fn, Bound):  # jit/grad of a bound method or partial: its program
            s = fn._split
            fn, example_args = fn._make(s), s.data + example_args
        elif bound.is_bound(fn):
            s = bound.split(fn)
            fn, example_args = s.fn, s.data + example_args
        graph = pipeline.parsed(pipeline.graph_of(fn))
        if stage == "parsed":
            return print_program(graph)
        if stage == "ad":
            from myc.ad.reverse import reverse_transform

            return print_program(reverse_transform(graph))
        from myc.infer.trace import GraphBreak

        names = [p.name for p in graph.parameters]
        args = check_args(names, tuple(_bind_call(graph, example_args, {})))
        header = ""
        try:
            typed, template, brk = pipeline.specialize(graph, args)
        except GraphBreak as brk2:
            return (f"# {graph.name}: not specialized ({brk2.reason}); this signature "
                    "runs on the reference evaluator\n" + print_program(graph))
        if brk is not None:
            where = f" at {brk.loc}" if brk.loc else ""
            n = len(typed.flags.get("guards", []))
            header = (f"# {graph.name}: {brk.reason}{where}; " + (
                "differentiated as a typed program (its loops kept as loops, its "
                "recursive calls as typed functions)\n"
                if typed.flags.get("route") == "adjoint" else
                f"specialized on these arguments' decisions, re-checked by {n} guard(s) "
                "on every call\n"))
        if stage == "typed":
            return header + print_graph(typed)
        pipeline.optimized(typed, backend)
        if stage == "optimized":
            return header + print_graph(typed)
        if stage == "fused":
            return header + pipeline.describe_fused(typed)
        if stage == "target":
            return header + _target_code(typed, template, graph.name, backend)
        from myc.backends.cpu.nativity import describe

        # the kernels a backend that needs no device to lower for shows as its own
        own = [n for n in (backend, getattr(fn, "backend", "cpu"))
               if backend_named(n).lowers_for_ir]
        prog = pipeline.lowered(typed, template, graph.name, own[0] if own else "cpu")
        from myc.runtime import tiering

        tiering.mark(prog, prog.backend)  # (so it says when it would tier up)
        tiers = tiering.describe() if getattr(prog, "tier_up", False) else ""
        return header + describe(prog, tiers) + prog.describe()
    except MycError as exc:
        raise exc.with_traceback(None) from None


def hessian_vector_product(fn: Callable, argnum: int = 0,
                           backend: str | None = None) -> Callable:
    """autograd's ``hessian_vector_product(f)(*args, vector)``: ``H(f) @ vector`` w.r.t.
    argument ``argnum``, as forward over reverse (``jvp`` of ``grad``), the Hessian
    never formed."""
    g = grad(fn, argnum, backend)

    def hvp(*args: Any) -> Any:
        # written in myc's subset and jitted, so that a program can call it too (Newton's
        # method inside a differentiated objective): the other arguments' tangents zero
        *primals, vector = args
        tangents = tuple(vector if i == argnum else np.zeros_like(p)
                         for i, p in enumerate(primals))
        return jvp(g, tuple(primals), tangents)[1]

    return jit(hvp, backend=_backend_of(fn, backend))
