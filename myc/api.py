"""The public surface: ``jit``, ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``ir``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from myc import pipeline
from myc.errors import MycError, MycTypeError
from myc.runtime.args import check_args, own_outputs


class Jitted:
    """A function compiled by myc on first call, specialized per argument signature."""

    def __init__(self, fn: Callable, backend: str = "cpu"):
        self.__myc_function__ = fn
        self.backend = backend
        self._executable: Callable | None = None
        functools.update_wrapper(self, fn)

    def _compile(self) -> Callable:
        if self._executable is None:
            graph = pipeline.parsed(self.__myc_function__)
            self._graph = graph
            self._executable = pipeline.make_executable(graph, self.backend)
        return self._executable

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            run = self._compile()
            full = _bind_call(self._graph, args, kwargs)
            names = [p.name for p in self._graph.parameters]
            return own_outputs(run(*check_args(names, tuple(full))))
        except MycError as exc:
            raise exc.with_traceback(None) from None

    def __get__(self, obj, objtype=None):  # behave like a plain function in classes
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"<myc.jit {getattr(self.__myc_function__, '__qualname__', '?')} " \
               f"backend={self.backend}>"


def _bind_call(graph, args: tuple, kwargs: dict) -> list[Any]:
    """Positional arguments for ``graph`` from a Python call's args, kwargs and defaults."""
    sig = graph.flags.get("signature")
    names = [p.name for p in graph.parameters]
    if len(args) > len(names):
        raise MycTypeError(f"{graph.name}() takes {len(names)} arguments but {len(args)} "
                           "were given", graph.loc)
    bound = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k not in names:
            raise MycTypeError(f"{graph.name}() got an unexpected keyword argument '{k}'",
                               graph.loc)
        if k in bound:
            raise MycTypeError(f"{graph.name}() got multiple values for argument '{k}'",
                               graph.loc)
        bound[k] = v
    out = []
    for n in names:
        if n in bound:
            out.append(bound[n])
        elif sig is not None and n in sig.defaults:
            out.append(sig.defaults[n].value)
        else:
            raise MycTypeError(f"{graph.name}() missing required argument '{n}'", graph.loc)
    return out


def jit(fn: Callable | None = None, *, backend: str = "cpu"):
    """Compile ``fn`` with myc; usable as ``@myc.jit`` or ``@myc.jit(backend=...)``."""
    if fn is None:
        return lambda f: Jitted(f, backend)
    return Jitted(fn, backend)


def _not_yet(name: str):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"myc.{name} lands with the AD issue")
    stub.__name__ = name
    return stub


grad = _not_yet("grad")
value_and_grad = _not_yet("value_and_grad")
vjp = _not_yet("vjp")
jvp = _not_yet("jvp")
aot = _not_yet("aot")


def ir(fn: Callable, *example_args: Any, stage: str = "parsed") -> str:
    """The program as text after ``stage`` (see DESIGN.md's stage list)."""
    from myc.ir.printer import print_program

    if stage not in pipeline.STAGES:
        raise MycTypeError(f"unknown stage '{stage}'; stages: {', '.join(pipeline.STAGES)}")
    try:
        return print_program(pipeline.parsed(fn))
    except MycError as exc:
        raise exc.with_traceback(None) from None
