"""The primitive table: each primitive declared once, every other table derived from it.

A declaration (:func:`register`) states what the rest of the compiler needs to know:

- ``name``, positional ``params`` (with ``defaults``) and ``impl``, the NumPy reference
  implementation that *is* the semantics (the interpreter runs it; shape/dtype rules
  apply it to one-element proxies);
- ``names``: the Python objects that are this primitive in a program, as dotted paths
  (``"np.exp"``, ``"math.exp"``, ``"builtins.abs"``, ``"scipy.special.erf"``):
  ``myc.frontend.builtins`` resolves them;
- ``elementwise``: the shape rule is broadcasting and the dtype NumPy's (``impl`` on
  proxies); other primitives have their own rule in ``myc.infer.rules``;
- ``scalar``: the kernel-IR scalar op (``myc.prims.scalar``) it computes, which makes it
  fusible into kernels and gives every backend's renderer for it; ``fusible`` marks the
  few others ``myc.lower.groups`` lowers by hand (casts, ``where``, ``clip``);
- ``step_kind``: what a host-program step running it outside a kernel computes, one of
  ``myc.lower.step_ops.OP_KINDS`` (``"gemm"``, ``"index"``, ``"fill"``...): a backend's
  host-program generator keys on it.  The default is ``"scalar"`` for a fusible
  primitive (a step on numbers) and ``"host"`` (a NumPy-only step) for the others;
  ``fill_value`` is what a ``"fill"`` primitive writes;
- ``bprop`` / ``jvp``: its reverse and forward rules, Python functions in the myc subset
  that ``myc.ad`` parses into graphs (:func:`reverse_rule` / :func:`forward_rule`
  attach them after the fact, for rules that need ``P``).

docs/adding-a-primitive.md walks through a declaration; ``myc.tools.gen_supported``
writes docs/supported.md from this table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from myc.prims.scalar import SCALAR_OPS, ScalarOp

_NO_DEFAULT = object()


class Primitive:
    """A primitive operation of the IR."""

    __slots__ = ("name", "params", "defaults", "impl", "bprop", "jvp", "doc",
                 "variadic", "pure", "differentiable", "names", "elementwise", "scalar",
                 "fusible", "structural_jvp", "infer", "step_kind", "fill_value",
                 "may_fail")

    def __init__(self, name: str, params: tuple[str, ...], impl: Callable[..., Any],
                 defaults: dict[str, Any] | None = None, variadic: bool = False,
                 differentiable: bool = True, doc: str = "", names: tuple[str, ...] = (),
                 elementwise: bool = False, scalar: str | None = None,
                 fusible: bool | None = None, bprop: Any = None, jvp: Any = None,
                 step_kind: str | None = None, fill_value: int | None = None,
                 may_fail: bool = False):
        self.name = name
        self.params = params
        self.defaults = dict(defaults or {})
        self.impl = impl
        self.variadic = variadic
        self.differentiable = differentiable
        self.doc = doc
        self.pure = True
        self.bprop: Any = bprop
        self.jvp: Any = jvp
        self.structural_jvp = False
        # a shape/dtype rule kept with the primitive (``myc/prims/linalg.py``): called by
        # ``myc.infer.rules`` on the abstract arguments; None: the rule lives there
        self.infer: Any = None
        self.names = tuple(names)
        self.elementwise = elementwise
        self.scalar: ScalarOp | None = None
        if scalar is not None:
            self.scalar = SCALAR_OPS[scalar]
            assert self.scalar.arity == len(params), f"{name}: scalar op {scalar} takes " \
                f"{self.scalar.arity} operands"
        self.fusible = self.scalar is not None if fusible is None else fusible
        # (the kinds are the host program's words, ``myc.lower.step_ops`` checks them)
        self.step_kind = step_kind or ("scalar" if self.fusible else "host")
        assert (fill_value is not None) == (self.step_kind == "fill"), \
            f"{name}: a fill_value goes with step_kind='fill'"
        self.fill_value = fill_value
        # can raise at run time on some values (a singular matrix, an int of nan): in a
        # side of an if-converted branch or a loop body it runs only where its path holds
        self.may_fail = may_fail

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


def register(name: str, params: tuple[str, ...] | str, impl: Callable[..., Any],
             **kw: Any) -> Primitive:
    """Declare primitive ``name`` (keywords: see :class:`Primitive` and the module doc)."""
    if isinstance(params, str):
        params = tuple(params.split()) if params else ()
    assert name not in REGISTRY, f"primitive {name} registered twice"
    p = Primitive(name, params, impl, **kw)
    REGISTRY[name] = p
    return p


def get(name: str) -> Primitive:
    return REGISTRY[name]


def reverse_rule(prim: Primitive) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: the function is ``prim``'s reverse rule,
    ``rule(*inputs, out, dout) -> (one sensitivity per input,)``."""
    def attach(fn: Callable[..., Any]) -> Callable[..., Any]:
        assert prim.bprop is None, f"{prim.name} has two reverse rules"
        prim.bprop = fn
        return fn
    return attach


def forward_rule(prim: Primitive, structural: bool = False
                 ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: the function is ``prim``'s forward rule,
    ``rule(*inputs, *tangents, out) -> tangent``.  A *structural* rule (tuples,
    environments, switch...) gets the raw tangents, the symbolic ``ZERO`` included;
    the others get zeros in its place and run only when some tangent is nonzero."""
    def attach(fn: Callable[..., Any]) -> Callable[..., Any]:
        assert prim.jvp is None, f"{prim.name} has two forward rules"
        prim.jvp = fn
        prim.structural_jvp = structural
        return fn
    return attach
