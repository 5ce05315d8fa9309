"""The primitive registry: one entry per primitive.

An entry holds the primitive's name, its positional parameters (with defaults for the
optional ones) and its NumPy reference implementation.  Its other rules live with the
stages that use them, found by the primitive's name: the shape/dtype rule in
``myc/infer/rules.py``, the reverse rule ``bprop_<name>`` in ``prims/bprops.py`` (read
by ``myc.ad.reverse``), the forward rule ``jvp_<name>`` in ``prims/jvps.py`` (read by
``myc.ad.forward``); the ``infer``/``bprop``/``jvp`` slots below are not filled yet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_NO_DEFAULT = object()


class Primitive:
    """A primitive operation of the IR."""

    __slots__ = ("name", "params", "defaults", "impl", "infer", "bprop", "jvp", "doc",
                 "variadic", "pure", "differentiable")

    def __init__(self, name: str, params: tuple[str, ...], impl: Callable[..., Any],
                 defaults: dict[str, Any] | None = None, variadic: bool = False,
                 differentiable: bool = True, doc: str = ""):
        self.name = name
        self.params = params
        self.defaults = dict(defaults or {})
        self.impl = impl
        self.variadic = variadic
        self.differentiable = differentiable
        self.doc = doc
        self.pure = True
        self.infer: Callable[..., Any] | None = None
        self.bprop: Any = None
        self.jvp: Any = None

    @property
    def min_args(self) -> int:
        return sum(1 for p in self.params if p not in self.defaults)

    def fill_args(self, args: list[Any]) -> list[Any] | None:
        """Positional args completed with defaults; ``None`` if the arity is wrong."""
        if self.variadic:
            return args
        n = len(self.params)
        if len(args) > n or len(args) < self.min_args:
            return None
        return list(args) + [self.defaults[p] for p in self.params[len(args):]]

    def __call__(self, *args: Any) -> Any:
        """The NumPy reference implementation (host programs call primitives directly)."""
        return self.impl(*args)

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):  # primitives are singletons, pickled by name
        return (get, (self.name,))


REGISTRY: dict[str, Primitive] = {}


def register(name: str, params: tuple[str, ...] | str, impl: Callable[..., Any], **kw) -> Primitive:
    if isinstance(params, str):
        params = tuple(params.split()) if params else ()
    assert name not in REGISTRY, f"primitive {name} registered twice"
    p = Primitive(name, params, impl, **kw)
    REGISTRY[name] = p
    return p


def get(name: str) -> Primitive:
    return REGISTRY[name]
