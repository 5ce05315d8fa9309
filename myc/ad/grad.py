"""``grad`` and ``value_and_grad`` as graphs, so they compose with every transform.

``grad(f)`` is the graph::

    r  = J(f)(make_tuple, *xs)
    y  = check_scalar_output(r[0])
    d  = r[1](seed_like(y))                   # (env, dx1, ..., dxn)
    return grad_cast(d[i + 1], xs[i])         # for i in argnums

which is an ordinary graph: J applies to it again (grad of grad), jit compiles it.
"""

from __future__ import annotations

import weakref

from myc.ad.reverse import J_LIFT, jprim, reverse_transform, tuple_k
from myc.errors import MycTypeError
from myc.ir.nodes import Constant, Graph, Node
from myc.prims import ZERO, P, Primitive

# weak in the function's graph: per graph, (argnums, has_value) -> grad graph
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def prim_graph(prim: Primitive) -> Graph:
    """A primitive wrapped in a graph (``grad(np.sin)``)."""
    g = Graph(prim.name)
    required = [p for p in prim.params if p not in prim.defaults]
    xs = [g.add_parameter(p) for p in (required if not prim.variadic else ("x",))]
    g.output = g.apply(prim, *xs, *[prim.defaults[p] for p in prim.params[len(required):]])
    return g


def normalize_argnums(argnums, nparams: int, name: str) -> tuple[int, ...]:
    if isinstance(argnums, int):
        nums: tuple = (argnums,)
    elif isinstance(argnums, (tuple, list)):
        nums = tuple(argnums)
    else:
        raise MycTypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    if not nums:
        raise MycTypeError("argnums must name at least one argument")
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise MycTypeError(f"argnums must be ints, got {a!r}")
        if not -nparams <= a < nparams:
            raise MycTypeError(f"argnums {a} is out of range for {name}() with {nparams} "
                               "arguments")
    return tuple(a % nparams for a in nums)


def lift_parameter(g: Graph, f: Graph, i: int, x: Node) -> Node:
    """Parameter ``i`` of ``f`` as ``J(f)`` takes it: where its default is a function
    (``act=np.tanh``), that function's J image when the call leaves it to the default
    (the binding passes the default's value), as ``J`` lifts a function constant."""
    sig = f.flags.get("signature")
    d = sig.defaults.get(f.parameters[i].name) if sig is not None else None
    image = None
    if isinstance(d, Constant) and isinstance(d.value, Primitive) and not d.value.variadic:
        image = jprim(d.value)
    elif isinstance(d, Constant) and isinstance(d.value, Graph) and d.value.parent is None:
        image = reverse_transform(d.value)
    if image is None:  # a function passed in (or data: left as it is)
        return g.apply(J_LIFT, x, Constant(None), Constant(None))
    return g.apply(J_LIFT, x, d, Constant(image))


def grad_graph(f: Graph | Primitive, argnums=0, has_value: bool = False,
               has_aux: bool = False) -> Graph:
    """``has_aux``: ``f`` returns ``(loss, aux)``; only ``loss`` is differentiated (``aux``
    gets a zero sensitivity) and ``aux`` comes back with the result, as JAX's
    ``has_aux``: ``(grads, aux)``, or ``((loss, aux), grads)`` with ``has_value``."""
    if isinstance(f, Primitive):
        f = prim_graph(f)
    nums = normalize_argnums(argnums, len(f.parameters), f.name)
    key = (argnums if isinstance(argnums, int) else nums, has_value, has_aux)
    per_graph = _CACHE.setdefault(f, {})
    cached = per_graph.get(key)
    if cached is not None:
        return cached
    jf = reverse_transform(f)
    label = "value_and_grad" if has_value else "grad"
    g = Graph(f"{label}({f.name})", f.parent, f.loc)
    xs = [g.add_parameter(p.name, p.loc) for p in f.parameters]
    for flag in ("signature", "defaults", "param_writes"):
        if flag in f.flags:
            g.flags[flag] = f.flags[flag]
    lifted = [lift_parameter(g, f, i, x) for i, x in enumerate(xs)]
    r = g.apply(Constant(jf), Constant(tuple_k(len(xs) + 1)), *lifted)
    out = g.apply(P.getitem, r, 0)
    back = g.apply(P.getitem, r, 1)
    if has_aux:
        pair = g.apply(P.check_aux_output, out)
        y = g.apply(P.check_scalar_output, g.apply(P.getitem, pair, 0))
        aux = g.apply(P.getitem, pair, 1)
        d = g.apply(back, g.apply(P.make_tuple, g.apply(P.seed_like, y), Constant(ZERO)))
    else:
        y = g.apply(P.check_scalar_output, out)
        d = g.apply(back, g.apply(P.seed_like, y))
    grads = [g.apply(P.grad_cast, g.apply(P.getitem, d, i + 1), xs[i]) for i in nums]
    res = grads[0] if isinstance(argnums, int) else g.apply(P.make_tuple, *grads)
    value = g.apply(P.make_tuple, y, aux) if has_aux else y
    if has_value:
        g.output = g.apply(P.make_tuple, value, res)
    else:
        g.output = g.apply(P.make_tuple, res, aux) if has_aux else res
    # what it differentiates: specialization can take the typed route through loops
    g.flags["grad_of"] = (f, nums, isinstance(argnums, int), has_value, has_aux)
    # (two threads that built it at once agree on the first one stored)
    return per_graph.setdefault(key, g)
