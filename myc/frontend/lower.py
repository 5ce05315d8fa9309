"""Lowering a Python function's AST to graph IR.

The frontend is a whitelist: one method per supported AST node, everything else is
rejected by name with its location.  Control flow follows Myia's block-to-graph
scheme, itself the functional reading of SSA (Appel, "SSA is functional programming"):
every basic block becomes a graph, a jump becomes a tail call, and a phi node becomes a
parameter of the graph jumped to.  Concretely:

* ``if c: A else: B; rest`` -> ``switch(truth(c), A', B')()`` where ``A'``/``B'`` end by
  tail-calling the join graph ``rest'(v1, ..., vn)`` whose parameters are the variables
  the branches assign.  A branch that returns simply does not call the join.
* ``while c: body; rest`` -> a header graph ``h(vars)`` whose output is
  ``switch(truth(c), body', exit')()``; ``body'`` ends with ``h(vars')`` (``continue``
  too), ``break`` and ``exit'`` call ``rest'(vars)``.  ``for`` loops are ``while`` loops
  over a hidden counter.
* nested ``def``/``lambda`` become graphs whose ``parent`` is the graph of the block
  they appear in; the enclosing variables they read are free variables, captured by
  value when the closure is created.

Variables are tracked per block in an environment; because every block graph is
nested in the graphs that dominate it, a value defined earlier is simply a free
variable of the later block (no phi needed unless it is reassigned).
"""

from __future__ import annotations

import ast
import builtins as _builtins
import functools
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from myc.errors import (
    LIBRARY_DIRS,
    Location,
    MycError,
    MycNameError,
    MycSyntaxError,
    MycTypeError,
    MycValueError,
    in_library,
)
from myc.frontend import builtins as B
from myc.frontend import effects, globals_watch, linalg_library, objects, static_calls
from myc.frontend.libraries import (
    is_namespace,
    library_function,
    namespace_name,
    scipy_refusal,
    supported_methods,
)
from myc.frontend.scope import WRITES_SELF, assigned_names, attribute_roots, inplace_target
from myc.frontend.source import SourceInfo, read_function
from myc.frontend.transform_value import TRANSFORM_VALUE
from myc.ir.nodes import Apply, Constant, Graph, Node, Parameter
from myc.prims import UNDEF, ZERO, P, Primitive
from myc.prims.containers import DictValue, ListValue, const_set, is_namedtuple
from myc.timings import timed

_UNSUPPORTED_STMT = {
    "Try": "'try' statement", "TryStar": "'try' statement", "With": "'with' statement",
    "AsyncWith": "'async with' statement", "Global": "'global' declaration",
    "Nonlocal": "'nonlocal' declaration", "Delete": "'del' statement",
    "Import": "'import' statement", "ImportFrom": "'import' statement",
    "ClassDef": "class definition", "AsyncFunctionDef": "'async def'",
    "Match": "'match' statement",
    "AsyncFor": "'async for' loop",
}
_UNSUPPORTED_EXPR = {
    "SetComp": "set comprehension", "Set": "set literal",
    "Yield": "'yield'", "YieldFrom": "'yield from'", "Await": "'await'",
    "NamedExpr": "assignment expression (:=)", "Starred": "star-args (*x)",
}
_BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul",
    ast.BitAnd: "and_", ast.BitOr: "or_", ast.BitXor: "xor",
}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
           ast.GtE: "ge", ast.In: "contains", ast.NotIn: "contains", ast.Is: "is_",
           ast.IsNot: "is_"}
_UNARYOPS = {ast.USub: "neg", ast.UAdd: "pos", ast.Not: "not_", ast.Invert: "invert"}

# list methods that mutate: lowered as statements rebinding the variable
# (``out.append(h)`` -> ``out = append(out, h)``, myc/frontend/py_library.py)
_MUTATORS = {"append": 1, "extend": 1, "insert": 2}
# the methods of myc's values (arrays, dicts): on an object, its class's method instead
_VALUE_METHODS = frozenset(["sum", "mean", "max", "min", "argmax", "argmin", "astype",
                            "dot", "clip", "reshape", "transpose", "copy", "items",
                            "values", "keys", "get"])
# dict methods, as library functions of the receiver
_DICT_METHODS = {"items": ("dict_items", 0), "values": ("dict_values", 0),
                 "get": ("dict_get", (1, 2))}
_COMPREHENSIONS = {"ListComp": "list comprehension", "GeneratorExp": "generator expression",
                   "DictComp": "dict comprehension"}


# calls that make a new array (no other name holds it): np.zeros(...), x.copy()
_FRESH_ARRAYS = frozenset(("zeros", "ones", "empty", "full", "zeros_like", "ones_like",
                           "empty_like", "full_like", "copy", "array", "eye", "arange",
                           "linspace"))


def _attribute_target(t: ast.AST) -> bool:
    """``obj.attr = v``, ``self.a.b = v``: an attribute of an object held by a variable."""
    return isinstance(t, ast.Attribute) and (isinstance(t.value, ast.Name) or
                                             _attribute_target(t.value))


# ``Env.stale``'s "array" for names refused only if they are or hold a list or dict
_LIST_ONLY = Constant(None)


def _const_within(box: Node, item: Node) -> bool:
    """Are ``box`` and ``item`` constants, ``item`` a list or dict equal to one that
    ``box`` holds (``lst = []; d = {"k": lst}`` folds both: the link is by value)?"""
    if not (isinstance(box, Constant) and isinstance(item, Constant) and
            isinstance(item.value, (ListValue, DictValue))):
        return False
    want = item.value
    todo = [box.value]
    while todo:
        v = todo.pop()
        if type(v) is type(want) and v == want:
            return True
        if isinstance(v, tuple):  # (ListValue and DictValue are tuples too)
            todo.extend(v)
    return False


def _item_target(t: ast.AST) -> bool:
    """``name[index]`` as an assignment target (a list's, dict's or array's item)."""
    return isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)


def _as_value(v: Any) -> Any:
    """A Python constant with its lists and dicts as myc's static structures."""
    if isinstance(v, list):
        return ListValue([_as_value(x) for x in v])
    if isinstance(v, dict):
        return DictValue(tuple(v), [_as_value(x) for x in v.values()])
    if isinstance(v, tuple):
        items = [_as_value(x) for x in v]
        return type(v)._make(items) if is_namedtuple(v) else tuple(items)
    return v


def _static_key(k: Any) -> bool:
    if isinstance(k, tuple):
        return all(_static_key(x) for x in k)
    return k is None or isinstance(k, (str, int, float, bool))

_GRAPHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
globals_watch.CACHES.append(_GRAPHS)  # forgotten when a global they read is rebound

# A graph enters ``_GRAPHS`` before its body is lowered, so that a recursive call (direct
# or through other functions) finds it; only the thread lowering it may see it then.
# One reentrant lock around every parse keeps other threads out until the outermost
# parse of that thread has finished: a thread never reads a half-built graph, and
# recursion in the lowering thread reenters freely.  ``_PUBLISHED`` lists, in order, the
# functions entered since the outermost parse began, so a failed parse can forget every
# graph that may point at its unfinished graph (a callee that recursed back into it).
_PARSE_LOCK = globals_watch.LOCK  # (also held while rebound globals' graphs are forgotten)
_PUBLISHED: list[Any] = []


def _undefined(node: Node) -> bool:
    """Is ``node`` a name no scope defines (whose error waits until its line runs)?"""
    return isinstance(node, Apply) and isinstance(node.fn, Constant) and \
        node.fn.value is P.undefined_name


def _advanced_index(index: Node) -> bool:
    """Is ``x[index]`` NumPy advanced indexing (a copy, not a view of ``x``)?"""
    if isinstance(index, Constant):
        v = index.value
        return isinstance(v, (np.ndarray, list)) or (
            isinstance(v, tuple) and any(isinstance(e, (np.ndarray, list)) for e in v))
    if isinstance(index, Apply) and isinstance(index.inputs[0], Constant):
        name = getattr(index.inputs[0].value, "name", "")
        if name == "make_tuple":
            return any(_advanced_index(e) for e in index.inputs[1:])
        return name in ("array", "arange", "linspace", "lt", "le", "gt", "ge", "eq", "ne",
                        "and_", "or_", "invert", "astype", "zeros", "ones", "full")
    return False


def _reads_attribute(n: Node, attr: str) -> bool:
    """Is ``n`` a read of attribute ``attr`` of an object (``getitem`` at its
    ``field_index``): each ``self.buf`` read is a new node, so a view made from an
    earlier read is found by the attribute's name."""
    if _made_by(n) != "getitem" or len(n.inputs) < 3:
        return False
    pos = n.inputs[2]
    return _made_by(pos) == "field_index" and isinstance(pos.inputs[2], Constant) and \
        pos.inputs[2].value == attr


def _made_by(n: Node) -> str:
    """The name of the primitive that applied ``n`` ("" for anything else)."""
    if isinstance(n, Apply) and isinstance(n.inputs[0], Constant):
        return getattr(n.inputs[0].value, "name", "")
    return ""


# NumPy functions and array methods whose result is a view of their operand (reshape
# and ravel when it is contiguous, as a fresh array is)
_VIEW_MAKERS = frozenset({"reshape", "transpose", "squeeze", "expand_dims", "swapaxes",
                          "moveaxis", "ravel", "view", "broadcast_to", "as_operand",
                          "unchanged_by"})  # (the value itself, read after a call)


def _view_base(n: Node, views: dict | None = None) -> Node | None:
    """The array ``n`` is a NumPy view of (``x[1:]``, ``x[i]``, ``x.T``, ``x.reshape``,
    ``np.reshape(x, s)``, an argument a function of the user's returns), or None.
    ``views``: method calls known to make views (``x.reshape(2, 2)``, dispatched at run
    time: ``Env.views``)."""
    if views and n.id in views:
        return views[n.id]
    returned = _returned_arguments(n)
    if returned is not None:
        return returned[0] if returned else None
    made_by = _made_by(n)
    if made_by == "getitem":  # an item of what unpacking (``a, b = ...``) reads
        box, at = n.inputs[1], n.inputs[2]
        if _made_by(box) == "unpack":  # of a tuple made here: that item itself (``r0, r1
            box = box.inputs[1]  # = x[0], x[1]``: r0 is x[0]); else the item of ``box``
            if _made_by(box) == "make_tuple" and isinstance(at, Constant) and \
                    type(at.value) is int and -len(box.inputs) < at.value < len(box.inputs) - 1:
                return box.inputs[1:][at.value]
            return box
    if made_by in _VIEW_MAKERS or (
            made_by == "getitem" and not _advanced_index(n.inputs[2])):
        return n.inputs[1]
    return None


def _tuple_node(n: Node) -> bool:
    """Is ``n`` a tuple written out here or a constant one (``(r, c)``, ``GOAL = (2,
    3)``): compared item by item, as Python compares tuples?"""
    return _made_by(n) == "make_tuple" or (isinstance(n, Constant) and
                                             type(n.value) is tuple)


def _element_ints(n: Node, pid: int, links: dict[int, Node]) -> int | None:
    """``n`` read from the parameter ``pid`` by int indices only (``x[0, -2]``,
    ``x[1]``; followed from a loop's state to its start): how many, else None."""
    for _ in range(64):
        if n.id not in links:
            break
        n = links[n.id]
    if _made_by(n) != "getitem" or n.inputs[1].id != pid:
        return None
    at = n.inputs[2]
    parts = at.inputs[1:] if _made_by(at) == "make_tuple" else [at]
    if all(isinstance(p, Constant) and type(p.value) is int for p in parts):
        return len(parts)
    if isinstance(at, Constant) and type(at.value) is tuple and \
            all(type(v) is int for v in at.value):
        return len(at.value)
    return None


def _user_call(n: Node) -> Graph | None:
    """The user's function ``n`` calls by name (not myc's library's), or None."""
    if isinstance(n, Apply) and isinstance(n.inputs[0], Constant) and \
            isinstance(n.inputs[0].value, Graph):
        g = n.inputs[0].value
        if g.parent is None and not (g.loc is not None and in_library(g.loc.filename)):
            return g
    return None


def _returned_arguments(n: Node) -> list[Node] | None:
    """The arguments a call of the user's function may return (or a view or an item
    of), when ``n`` is such a call or an item of its result at a constant index (``A,
    cache = relu(Z)``: ``cache`` is ``Z``, ``A`` new); None when ``n`` is neither.
    ``def row(H, t): return H[t]`` makes ``row(H, t)`` a view of ``H``, as CPython
    shares it (the callee's ``returns_params``, per item ``returns_items``)."""
    item = None
    call = n
    if _made_by(n) == "getitem" and isinstance(n.inputs[2], Constant) and \
            type(n.inputs[2].value) is int:
        call = n.inputs[1].inputs[1] if _made_by(n.inputs[1]) == "unpack" else n.inputs[1]
        item = n.inputs[2].value
    g = _user_call(call)
    if g is None:
        return None
    at = g.flags.get("returns_params", ())
    items = g.flags.get("returns_items")
    if item is not None:
        if items is None or not -len(items) <= item < len(items):
            return [call] if at else []  # an item of the result, which may hold them
        at = items[item]
    return [call.inputs[i + 1] for i in at if i + 1 < len(call.inputs)]


def _view_family(n: Node, views: dict | None = None) -> list[Node]:
    """``n`` and the arrays it is a view of, nearest first."""
    out = [n]
    while (base := _view_base(out[-1], views)) is not None and len(out) < 64:
        out.append(base)
    for m in list(out):  # ``pick(a, b, c)`` returning ``a`` or ``b``: both, after
        for other in (_returned_arguments(m) or [])[1:]:
            out.extend(_view_family(other, views))
    return out


def _disjoint(a: Node, b: Node) -> bool:
    """Are ``a`` and ``b`` elements of one container at different constant int indices
    (``h, c = state``: a tuple's two items; ``x[0]`` and ``x[1]``: rows that do not
    overlap)?"""
    def picked(n: Node) -> Any:
        if _made_by(n) == "getitem" and isinstance(n.inputs[2], Constant):
            v = n.inputs[2].value
            if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                return int(v)
        return None

    i, j = picked(a), picked(b)
    if i is None or j is None or i == j:
        return False
    box_a, box_b = a.inputs[1], b.inputs[1]
    same = box_a is box_b or (_made_by(box_a) == _made_by(box_b) == "unpack" and
                              box_a.inputs[1] is box_b.inputs[1])
    tup = box_a.inputs[1] if _made_by(box_a) == "unpack" else box_a
    if same and _made_by(tup) == "make_tuple" and max(i, j) < len(tup.inputs) - 1 and \
            min(i, j) >= 0:  # a tuple made here: its items may be one array (h, c = x, x)
        mine = {n.id for n in _view_family(tup.inputs[1 + i])}
        return not any(n.id in mine for n in _view_family(tup.inputs[1 + j]))
    return same


def _merged_stale(stales: list[dict]) -> dict:
    """``Env.stale`` where paths meet: a name stale on any of them (first reason kept)."""
    out: dict = {}
    for st in stales:
        for k, v in st.items():
            out.setdefault(k, v)
    return out


def _read_first(name: str, stmts: list[ast.stmt]) -> ast.AST | None:
    """Where ``stmts`` may read ``name`` before assigning it (the place to name in an
    error), or ``None``: conservative inside compound statements."""
    def load(tree: ast.AST) -> ast.AST | None:
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                return n
        return None

    for st in stmts:
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            value = st.value
            hit = load(value) if value is not None else None
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            hit = hit or next((h for t in targets if (h := load(t))), None)
            if hit is not None:
                return hit
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return None  # assigned before any read
            continue
        hit = load(st)
        if hit is not None:
            return hit
    return None


def _fresh_first(name: str, stmts: list[ast.stmt]) -> bool:
    """Does ``stmts`` bind ``name`` to a new array (``h = h * 0.5``: arithmetic, or a
    call that is not a view) before anything else writes it?  Then its in-place updates
    later in the loop cannot reach what it held when the loop began."""
    for st in stmts:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0], ast.Name) and st.targets[0].id == name:
            v = st.value
            if isinstance(v, ast.Call):
                f = v.func
                called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                return called not in _VIEW_MAKERS and called not in ("asarray", "asanyarray")
            return isinstance(v, (ast.BinOp, ast.UnaryOp, ast.List, ast.ListComp))
        if any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
               for n in ast.walk(st)) or (not isinstance(st, (ast.Assign, ast.AnnAssign,
                                                                ast.Expr)) and
                                          any(isinstance(n, ast.Name) and n.id == name
                                              for n in ast.walk(st))):
            return False
        if any(isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store)
               or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in _MUTATORS for n in ast.walk(st)):
            return False  # (conservative: a write into some array first)
    return False


# primitives whose result is a new array, never (part of) an operand: elementwise ones
# are told by their flag; NumPy's reductions, products and copies
_FRESH = frozenset(("sum", "mean", "max", "min", "argmax", "argmin", "matmul", "dot",
                    "concatenate", "cumsum", "argsort", "pos", "astype", "zeros", "ones",
                    "full", "arange", "linspace", "zeros_like", "ones_like", "copy"))


def _may_hold(n: Node, ids: set[int]) -> bool:
    """Can the value of ``n`` be, contain or view one of the nodes ``ids``?  Followed
    through everything but what makes a new array (elementwise arithmetic, reductions,
    products, copies): items, views, containers, calls of functions; too far to follow,
    it may."""
    return _reaches(n, ids, None, _possible_inputs, at_limit=True)


def _possible_inputs(m: Node) -> list[Node]:
    if isinstance(m, Constant):  # a closure (a lazy branch: ``xs.values()``)
        g = m.value
        if isinstance(g, Graph) and g.parent is not None and g.output is not None:
            return [g.output]
        return []
    if not isinstance(m, Apply):
        return []
    fn = m.inputs[0].value if isinstance(m.inputs[0], Constant) else None
    if isinstance(fn, Primitive) and (getattr(fn, "elementwise", False) or fn.name in _FRESH):
        return []
    if isinstance(fn, Graph) and fn.name in _FRESH and fn.loc is not None and \
            in_library(fn.loc.filename):  # NumPy's ``np.copy`` (myc's library)
        return []
    if _copy_method_call(m):
        return []
    if isinstance(fn, Primitive) and fn.name in _GUARDS:
        return [m.inputs[_GUARDS[fn.name]]]  # (the value guarded: not what guards it)
    if fn is P.switch:
        return m.inputs[2:4]  # (either branch: not the condition)
    if isinstance(fn, Primitive) and fn.name in _NO_SHARED_MEMORY:
        return []
    return list(m.inputs)


# guards returning one of their operands, by its position: ``unchanged_by(value, fn,
# ...)`` (``fn`` the callee that may change it), ``checked(checks, value)``
_GUARDS = {"unchanged_by": 1, "alias_guard": 1, "list_guard": 1, "checked": 2, "after": 2}


def _copy_method_call(m: Node) -> bool:
    """Is ``m`` ``x.copy()`` of an object (the branch of a ``.copy()`` whose receiver
    turns out to be an object of the user's class when the program specializes)?  A
    ``copy`` method makes a new object, as NumPy's, the standard library's and the
    user's classes' do by convention; so ``A[i].copy()`` of an argument ``A`` (an array
    or a list of objects) is new."""
    if _made_by(m) != "call_bound":
        return False
    fn = m.inputs[1]
    return _made_by(fn) == "getitem" and _made_by(fn.inputs[2]) == "method_field" and \
        isinstance(fn.inputs[2].inputs[2], Constant) and fn.inputs[2].inputs[2].value == "copy"


def _reaches(n: Node, ids: set[int], links: dict[int, Node] | None,
             follow: Callable[[Node], list[Node]], limit: int = 256,
             at_limit: bool = False) -> bool:
    """Does a walk from ``n`` along ``follow`` (and from a loop's state parameters to
    the values they start from: ``links``) meet one of the nodes ``ids``?  Where the
    walk runs too long: ``at_limit``."""
    todo, seen = [n], set()
    while todo and len(seen) < limit:
        m = todo.pop()
        if m.id in seen:
            continue
        seen.add(m.id)
        if m.id in ids:
            return True
        if links and m.id in links:
            to = links[m.id]
            todo.extend(to) if isinstance(to, list) else todo.append(to)
            continue
        todo.extend(follow(m))
    return at_limit and len(seen) >= limit


def _held_inputs(m: Node) -> list[Node]:
    """What the value of ``m`` may hold or view: the operands of views, items,
    containers and myc's own library functions (``setitem``, ``append``), not of the
    user's functions, whose results are taken as new (their own writes into their
    parameters are theirs to report: ``param_writes``), nor of what makes a new array."""
    if not isinstance(m, Apply) or not isinstance(m.inputs[0], Constant):
        return []
    if _made_by(m) == "getitem" and _made_by(m.inputs[1]) == "unpack" and \
            _made_by(m.inputs[1].inputs[1]) == "make_tuple":
        return [_view_base(m)]  # ``a, b = x, y``: ``a`` holds what ``x`` holds only
    returned = _returned_arguments(m)  # a user's function: what it may return
    if returned is not None:
        return returned
    fn = m.inputs[0].value
    if isinstance(fn, Primitive):
        if getattr(fn, "elementwise", False) or fn.name in _FRESH:
            return []
    elif not (isinstance(fn, Graph) and fn.loc is not None and in_library(fn.loc.filename)) \
            or fn.name in _FRESH_ARRAYS:  # np.full_like(x, v) holds nothing of x
        return []
    return list(m.inputs[1:])


# myc's library functions whose result is a list or dict (never an array)
_CONTAINER_MAKERS = frozenset({"setitem", "append", "extend", "insert", "to_list",
                               "py_map", "py_zip", "dict_merge"})


# myc's library functions that return their first argument changed (a list or dict
# mutated, ``np.asarray`` of an array): the object itself, for ``_part_of``
_SAME_OBJECT = frozenset({"setitem", "append", "extend", "insert", "pop", "remove", "clear",
                          "sort", "reverse", "update", "setdefault", "popitem", "asarray",
                          "asanyarray"})
_SAME_OBJECT_PRIMS = frozenset({"aug_assign", "default_if_undef", "check_defined",
                                "alias_guard"})


# a ufunc's argument position -> a value inside its domain where the function and its
# derivative are finite: what ``where=`` computes on where its mask is off
_MASKED_SAFE: dict[str, dict[int, int]] = {
    **{n: {1: 1} for n in ("divide", "true_divide", "floor_divide", "remainder", "fmod",
                           "arctan2")},
    **{n: {0: 1} for n in ("log", "log2", "log10", "sqrt", "cbrt", "reciprocal", "power",
                           "float_power", "hypot")},
    **{n: {0: 0} for n in ("log1p", "arcsin", "arccos", "arctanh")},
    "arccosh": {0: 2},
}


def _same_object_inputs(m: Node) -> list[Node]:
    """The objects a write into ``m`` changes besides ``m``: what it is a view or an
    item of, the object an in-place update (``a += v``, ``xs.append(v)``, ``d[k] = v``)
    changed -- not what ``m`` merely holds (``parts = [x[0]]; parts.append(v)`` changes
    ``parts`` only)."""
    base = _view_base(m)
    if base is not None:
        return [base]
    if not isinstance(m, Apply) or not isinstance(m.inputs[0], Constant) or \
            len(m.inputs) < 2:
        return []
    fn = m.inputs[0].value
    if isinstance(fn, Primitive) and fn.name in _SAME_OBJECT_PRIMS:
        return list(m.inputs[1:3] if fn.name == "default_if_undef" else m.inputs[1:2])
    if isinstance(fn, Graph) and fn.name in _SAME_OBJECT and fn.loc is not None and \
            in_library(fn.loc.filename):
        return [m.inputs[1]]
    return []


# primitives whose result shares no memory with their operands that ``_FRESH`` and
# ``elementwise`` do not name: what describes a value (its shape, a test, an index
# plan) and what factorizes or draws a new one
_NO_SHARED_MEMORY = frozenset((
    "shape ndim size len dtype contains all_zero container_kind instance_of float_dtype "
    "finfo_max draw_size range_len fstring signature_of sorted_keys keys_with truth "
    "to_bool to_int not_ is_ is_float is_int is_none is_object is_tuple is_undef is_zero "
    "is_mask_of reduced_axes reduced_count reduced_size expand_dims_shape squeeze_shape "
    "tile_shapes pad_widths split_bounds move_perm swap_perm inverse_axes einsum_plan "
    "tensordot_plan axis_index flip_index repeat_index reverse_index roll_index "
    "computed_index field_index cholesky det det_sign inv logabsdet linsolve "
    "solve_triangular eigh_values eigh_vectors svd_s svd_u svd_vt pinv_rtol rng_draw "
    "rng_integers tri_mask binds_self self_returned").split())


def _returned_inputs(m: Node, fresh: set[int]) -> list[Node]:
    """What the value of ``m`` may hold or view, for :func:`_returned_params`: as
    :func:`_held_inputs`, but a call of a function (the user's or myc's library's)
    holds only the arguments it may return (every argument while it is being lowered:
    recursion), and ``fresh`` nodes (``np.array(x)``: a copy) hold nothing."""
    if m.id in fresh or not isinstance(m, Apply) or not isinstance(m.inputs[0], Constant):
        return []
    h = m.inputs[0].value
    if isinstance(h, Primitive) and h.name in _NO_SHARED_MEMORY:
        return []
    if isinstance(h, Primitive) and h.name in _GUARDS:
        return [m.inputs[_GUARDS[h.name]]]  # (the value, not what guards it)
    if isinstance(h, Graph) and h.parent is None:
        at = h.flags.get("returns_params")
        if at is None:
            return list(m.inputs[1:])
        return [m.inputs[i + 1] for i in at if i + 1 < len(m.inputs)]
    return _held_inputs(m)


def _returned_params(g: Graph, params: list[Node], links: dict[int, list[Node]],
                     fresh: set[int]) -> tuple[tuple[int, ...], tuple | None]:
    """The positions of the parameters ``g``'s result may be, hold or view (through its
    branches, loops and the calls of functions returning their arguments), and per
    item when it returns a tuple it makes (``return A, cache``): its callers treat the
    result as sharing those arguments' memory."""
    out = g.output
    while _made_by(out) in _GUARDS:
        out = out.inputs[_GUARDS[_made_by(out)]]  # (its index checks or effects token)
    ids = {p.id: k for k, p in enumerate(params)}
    if _made_by(out) == "make_tuple":
        items = tuple(_params_met(x, ids, links, fresh) for x in out.inputs[1:])
        return tuple(sorted(set().union(*items))), items
    return _params_met(out, ids, links, fresh), None


def _params_met(start: Node, ids: dict[int, int], links: dict[int, list[Node]],
                fresh: set[int]) -> tuple[int, ...]:
    """The positions ``ids`` of the parameters a walk of what ``start`` may be, hold or
    view meets; a walk too long for its limit meets them all."""
    met: set[int] = set()
    todo, seen = [start], set()
    while todo:
        m = todo.pop()
        if m is None or m.id in seen:
            continue
        if len(seen) >= 4096:
            return tuple(sorted(ids.values()))
        seen.add(m.id)
        if m.id in ids:
            met.add(ids[m.id])
            continue
        if m.id in links:
            todo.extend(links[m.id])
            continue
        if isinstance(m, Constant):
            h = m.value
            if isinstance(h, Graph) and h.parent is not None and \
                    h.kind in ("branch", "loop_header", "loop_body", "join"):
                todo.append(h.output)  # a branch, a loop, what follows them
            continue
        if isinstance(m, Apply):
            head = m.inputs[0]
            if isinstance(head, Apply):  # switch(c, g1, g2)(): either branch
                todo.append(head)
            elif isinstance(head, Constant) and head.value is P.switch:
                todo.extend(m.inputs[2:4])
                continue
            elif isinstance(head, Constant) and isinstance(head.value, Graph) and \
                    head.value.parent is not None:
                todo.append(head)  # a loop's header, a join
        todo.extend(_returned_inputs(m, fresh))
    return tuple(sorted(met))


def _holds(n: Node, ids: set[int], links: dict[int, Node] | None = None) -> bool:
    """Does the value of ``n`` hold, contain or view one of the nodes ``ids``?"""
    return _reaches(n, ids, links, _held_inputs)


def _part_of(n: Node, ids: set[int], links: dict[int, Node] | None = None) -> bool:
    """Is ``n`` one of the objects ``ids``, or a view or an item of one, followed back
    through in-place updates: the object a write into ``n`` changes?"""
    return _reaches(n, ids, links, _same_object_inputs)


def _stored_at(current: Node, key: Node, block: Block) -> tuple[bool, list[Node], list[Node]]:
    """What may be the item at ``key`` of container ``current``, followed back through
    the writes to it in this straight-line block (``setitem``s, then the display that
    made it: all its items, conservatively): (found, the writes, the values stored).
    Not found: an item stored before the block began (before a branch or a loop, or by
    the caller) may be held by names that cannot be followed."""
    setitem = _py_library_graph("setitem")
    chain: list[Node] = []
    stored: list[Node] = []
    n = current
    found = False
    while isinstance(n, Apply) and isinstance(n.inputs[0], Constant) and \
            n.inputs[0].value is setitem and len(chain) < 256:
        chain.append(n)
        stored.append(n.inputs[3])
        k = n.inputs[2]
        if k is key or (isinstance(k, Constant) and isinstance(key, Constant) and
                        type(k.value) is type(key.value) and k.value == key.value):
            found = True
            break
        n = n.inputs[1]
    if not found and _made_by(n) == "pack" and _made_by(n.inputs[2]) == "make_tuple":
        chain.append(n)  # a list or dict display of this function, [np.zeros(2), ...]
        items = n.inputs[2].inputs[1:]
        meta = n.inputs[1].value if isinstance(n.inputs[1], Constant) else None
        at = key.value if isinstance(key, Constant) else None
        if isinstance(meta, tuple) and _static_key(at) and at in meta:  # {"W": W, ...}
            items = [items[meta.index(at)]]
        elif meta is ListValue and type(at) is int and -len(items) <= at < len(items):
            items = [items[at]]
        stored.extend(items)  # (else any of them)
        found = True
    found = found and all(getattr(c, "graph", None) is block.graph for c in chain) and \
        all(not isinstance(v, Apply) or v.graph is block.graph for v in stored)
    return found, chain, stored


def _container_items(container: Node, depth: int = 0) -> tuple[dict, Any] | None:
    """What the list or dict ``container`` holds, followed back through its writes in
    this function (``setitem``, ``append``) to its display: (key -> the item stored
    there last, the display's key kind), or None when that is not known here.  An item
    read from the container itself (``acc.append(acc[0])``, ``d["b"] = d["a"]``) is
    the item it read."""
    setitem, append = _py_library_graph("setitem"), _py_library_graph("append")
    writes: list[tuple[bool, Any, Node]] = []  # (appended, key, item), latest first
    states = [container]
    n = container
    while isinstance(n, Apply) and isinstance(n.inputs[0], Constant) and \
            n.inputs[0].value in (setitem, append) and len(writes) < 256:
        if n.inputs[0].value is append:
            writes.append((True, None, n.inputs[2]))
        else:
            k = n.inputs[2].value if isinstance(n.inputs[2], Constant) else None
            if not _static_key(k):
                return None
            writes.append((False, k, n.inputs[3]))
        n = n.inputs[1]
        states.append(n)
    if not (_made_by(n) == "pack" and _made_by(n.inputs[2]) == "make_tuple"):
        return None
    shown = n.inputs[2].inputs[1:]
    meta = n.inputs[1].value if isinstance(n.inputs[1], Constant) else None
    keys = list(meta) if isinstance(meta, tuple) else list(range(len(shown)))
    if any(appended for appended, _, _ in writes) and meta is not ListValue:
        return None
    items: dict = dict(zip(keys, shown, strict=False))
    for appended, k, v in reversed(writes):  # earliest first
        if appended:
            items[len(items)] = v
        else:
            items[k + len(items) if type(k) is int and k < 0 and meta is ListValue
                  else k] = v
    ids = {m.id for m in states}
    for k, v in list(items.items()):  # an item read from an earlier state of this one
        if depth < 8 and _made_by(v) == "getitem" and v.inputs[1].id in ids and \
                isinstance(v.inputs[2], Constant) and _static_key(v.inputs[2].value):
            earlier = _container_items(v.inputs[1], depth + 1)
            at = v.inputs[2].value
            if earlier is not None:
                size = len(earlier[0])
                at = at + size if type(at) is int and at < 0 and meta is ListValue else at
                items[k] = earlier[0].get(at, v)
    return items, meta


def _held_elsewhere(container: Node, key: Node) -> Any:
    """A key, other than ``key``, at which the list or dict ``container`` holds the
    array it holds at ``key``, or a view of it or of what that views (``acc = [W, W];
    acc[0] += g``, ``acc.append(acc[0])``: CPython's ``acc[1]`` is that array too), or
    None when there is none or the items are not known here."""
    at = key.value if isinstance(key, Constant) else None
    if not _static_key(at):
        return None
    known = _container_items(container)
    if known is None:
        return None
    items, meta = known
    if type(at) is int and at < 0 and meta is ListValue:
        at += len(items)
    if at not in items:
        return None
    mine = {f.id for f in _view_family(items[at])}
    for k, v in items.items():
        if k != at and any(f.id in mine for f in _view_family(v)):
            return k
    return None


def _sharing(name: str, current: Node, env: Env) -> list[str]:
    """The other variables that CPython's in-place update of ``name`` (holding
    ``current``) could show the change through: views of the same memory -- the array
    ``current`` is a view of, views of it or of that array (siblings too, unless they
    are items at two different int indices of their common container: ``h, c =
    state`` or ``x[0]`` and ``x[1]`` do not overlap; other siblings' elements are not
    compared)."""
    family = _view_family(current, env.views)
    where = {n.id: k for k, n in enumerate(family)}
    out = []
    for other, node in env.vars.items():
        if other == name:
            continue
        theirs = _view_family(node, env.views)
        for k, n in enumerate(theirs):
            if n.id in where:
                mine = where[n.id]
                if not (mine > 0 and k > 0 and _disjoint(family[mine - 1], theirs[k - 1])):
                    out.append(other)
                break
    return out


@dataclass
class Signature:
    """Parameter names and default-value nodes of a graph built from a ``def``.

    The graph's parameters are ``names`` (the positional ones, ``npos`` of them, then
    the keyword-only ones), then ``*varargs`` (a tuple) and ``**varkw`` (a dict) when
    the ``def`` has them."""

    names: list[str]
    defaults: dict[str, Node] = field(default_factory=dict)
    npos: int | None = None  # None: every name is positional
    varargs: str | None = None
    varkw: str | None = None

    @property
    def n_positional(self) -> int:
        return len(self.names) if self.npos is None else self.npos

    @property
    def simple(self) -> bool:
        return self.npos is None and self.varargs is None and self.varkw is None


# ``Env.stale``'s variable for names a call changed in place (``_mark_changed_arguments``),
# and for a list or dict holding one array twice, changed through one item
CHANGED_BY_CALL = "(changed by a call)"
HELD_TWICE = "(an array held twice)"
# what their reads are refused with: what CPython shows, and the hint
_READ_REFUSED = {
    CHANGED_BY_CALL: ("the change here; a call in myc cannot change its caller's values",
                      "return the new value from the function and assign it ({name} = ...), "
                      "or pass a copy if the change is not wanted here"),
    HELD_TWICE: ("the change through the other item too; myc stores values",
                 "store a copy in one of the items (W.copy()), or assign a new value to "
                 "each item: {name}[k] = {name}[k] + ..."),
}


@dataclass
class Env:
    vars: dict[str, Node]
    maybe_undef: set[str] = field(default_factory=set)
    # names that shared an array with a variable updated in place since (``a += 1``
    # while ``b`` is ``a`` or a view of it): CPython would show them the new values
    # (the reason, the array updated or None for a list or dict mutated, the variable
    # updated: its value where that array is out of scope, after a join)
    stale: dict[str, tuple[str, Node | None, str]] = field(default_factory=dict)
    # array method calls that make views (``x.reshape(2, 2)``), by node id: their base
    views: dict[int, Node] = field(default_factory=dict)

    def copy(self) -> Env:
        return Env(dict(self.vars), set(self.maybe_undef), dict(self.stale),
                   dict(self.views))


@dataclass
class Block:
    """The insertion point: the graph being filled and the variables visible there."""

    graph: Graph
    env: Env


@dataclass
class Loop:
    header: Graph
    after: Graph
    names: list[str]
    # the stale names (Env.stale) where ``continue`` / ``break`` leave the body
    back_stale: list[dict] = field(default_factory=list)
    exit_stale: list[dict] = field(default_factory=list)


class _Module:
    """A Python module seen at parse time (``np``, ``math``): only its attributes are values."""

    def __init__(self, module: types.ModuleType):
        self.module = module


@timed("parse")
def parse(fn: Any) -> Graph:
    """The graph of Python function ``fn``, parsing it (and what it calls) once."""
    fn = _unwrap(fn)
    linalg_library.note_callee(fn, B.LIBRARY)
    lib = library_function(fn)  # np.logaddexp itself (myc.jit(np.logaddexp)): its code
    if lib is not None:
        fn = lib
    graph_of = getattr(fn, "__myc_graph__", None)
    if graph_of is not None:  # an object built by a transform (grad, jvp, ...)
        return graph_of()
    if not isinstance(fn, types.FunctionType):
        raise MycTypeError(f"myc can only compile Python functions, not {type(fn).__name__}")
    with _PARSE_LOCK:
        g = _GRAPHS.get(fn)
        if g is not None and globals_watch.parsed_is_stale(fn):
            g = None  # a global it read was rebound since: parsed again
        if g is None:
            g = _parse_new(fn)
        return g


_WRITE_BACKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
globals_watch.CACHES.append(_WRITE_BACKS)


def parse_writing_back(fn: types.FunctionType, names: tuple[str, ...]) -> Graph:
    """``fn`` lowered again to return ``(result, *final values of names)``: the
    parameters it changes in place, for a caller that reads its arguments again."""
    with _PARSE_LOCK:
        g = _WRITE_BACKS.get(fn)
        if g is None:
            info = read_function(fn)
            g = Graph(fn.__name__, None, info.loc(info.tree))
            FunctionLowerer(info, fn, None, write_back=names).lower_into(g)
            _WRITE_BACKS[fn] = g
        return g


objects.WRITING_BACK = parse_writing_back  # (a method assigning self's attributes)


def _parse_new(fn: types.FunctionType) -> Graph:
    """Lower ``fn`` into a new graph, entered in ``_GRAPHS`` first (for recursion); on
    failure, it and every graph entered since are forgotten.  Holds ``_PARSE_LOCK``."""
    B.resolve_optional()  # scipy.special.erf & co., once the program imported scipy
    globals_watch.note_parse(fn)
    info = read_function(fn)
    g = Graph(fn.__name__, None, info.loc(info.tree))
    mark = len(_PUBLISHED)
    _GRAPHS[fn] = g
    _PUBLISHED.append(fn)
    try:
        FunctionLowerer(info, fn, None).lower_into(g)
    except BaseException:
        for f in _PUBLISHED[mark:]:
            _GRAPHS.pop(f, None)
        del _PUBLISHED[mark:]
        raise
    if mark == 0:  # the outermost parse: every graph entered is complete now
        _PUBLISHED.clear()
    return g


_BUILTIN_DTYPE_PRIMS = {"to_float": np.float64, "to_int": np.int64, "to_bool": np.bool_}


def _dtype_constant(node: Node) -> Node:
    """``dtype=float`` names a dtype, not the ``float`` conversion primitive."""
    if isinstance(node, Constant) and isinstance(node.value, Primitive) and \
            node.value.name in _BUILTIN_DTYPE_PRIMS:
        return Constant(_BUILTIN_DTYPE_PRIMS[node.value.name], node.loc)
    return node


def _unwrap(fn: Any) -> Any:
    """The plain Python function behind a ``myc.jit`` wrapper."""
    while hasattr(fn, "__myc_function__"):
        fn = fn.__myc_function__
    return fn


_IN_PLACE_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort",
                               "reverse", "update", "setdefault", "popitem", "fill", "put",
                               "resize", "itemset"})


def _mutated_in_place(tree: ast.AST, name: str) -> ast.AST | None:
    """Where the function ``tree`` first changes the object parameter ``name`` holds (a
    method such as ``append``, an item assignment or deletion, an augmented assignment),
    unless the name was rebound before (``name = list(name)``): ``None`` if nowhere."""
    rebound = min((t.lineno for t in ast.walk(tree) if isinstance(t, ast.Name) and
                   t.id == name and isinstance(t.ctx, ast.Store)), default=None)
    found = None
    for sub in ast.walk(tree):
        hit = None
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                sub.func.attr in _IN_PLACE_METHODS and isinstance(sub.func.value, ast.Name) \
                and sub.func.value.id == name:
            hit = sub
        elif isinstance(sub, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = sub.targets if isinstance(sub, (ast.Assign, ast.Delete)) else \
                [sub.target]
            for t in targets:
                base = t.value if isinstance(t, ast.Subscript) else \
                    t if isinstance(sub, ast.AugAssign) else None
                if isinstance(base, ast.Name) and base.id == name:
                    hit = sub
        if hit is not None and (found is None or hit.lineno < found.lineno):
            found = hit
    if found is None or (rebound is not None and rebound < found.lineno):
        return None
    return found


def _loop_writes(s: ast.While | ast.For) -> list[tuple[str, ast.AST]]:
    """The variables loop ``s`` writes into in place (``R[i, j] = v``, ``R += v``,
    ``np.fill_diagonal(R, v)``), each with the statement, in source order."""
    out = []
    for n in ast.walk(ast.Module(body=s.body + s.orelse, type_ignores=[])):
        targets: list[ast.AST] = []
        if isinstance(n, ast.Assign):
            targets = [t for t in n.targets if isinstance(t, ast.Subscript)]
        elif isinstance(n, ast.AugAssign):
            targets = [n.target]
        elif (name := inplace_target(n)) is not None:  # np.fill_diagonal(R, v), R.fill(0)
            targets = [ast.Name(id=name, ctx=ast.Store())]
        for t in targets:
            while isinstance(t, ast.Subscript):
                t = t.value
            if isinstance(t, ast.Name):
                out.append((t.id, n))
    return sorted(out, key=lambda w: (w[1].lineno, w[1].col_offset))


def _param_swaps(tree: ast.AST, names: list[str]) -> set[int]:
    """The statements of a function's body (its top level, run in order) that only
    permute which parameter names hold which of the caller's objects (``x0, x = x,
    x0`` in Stam's ``dens_step``): the objects stay the caller's, followed by name
    (``FunctionLowerer.owner``) to write them back."""
    out = set()
    body = getattr(tree, "body", [])
    for st in body if isinstance(body, list) else []:  # (a lambda's is an expression)
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
            continue
        t, v = st.targets[0], st.value
        ts = t.elts if isinstance(t, ast.Tuple) else [t]
        vs = v.elts if isinstance(v, ast.Tuple) else [v]
        if len(ts) == len(vs) and all(isinstance(n, ast.Name) and n.id in names
                                      for n in (*ts, *vs)) and \
                sorted(n.id for n in ts) == sorted(n.id for n in vs) and \
                len({n.id for n in ts}) == len(ts):  # (``x = x0`` loses x's object)
            out.add(id(st))
    return out


def _calls_in(stmts: list[ast.stmt]) -> list[ast.Call]:
    """The calls ``stmts`` make themselves (not those of a nested ``def``, ``lambda``
    or class body, which run when those are called)."""
    out, todo = [], list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))
        if isinstance(n, ast.Call):
            out.append(n)
    return out


def _rebound_names(tree: ast.AST, swaps: set[int] = frozenset()) -> set[str]:
    """The names a function binds to another object somewhere (``a = ...``, a loop or
    ``with`` target, a nested ``def``), not counting ``a += v`` (an update in place)
    nor the parameter permutations ``swaps`` (``_param_swaps``)."""
    updates = {id(n.target) for n in ast.walk(tree) if isinstance(n, ast.AugAssign)}
    for st in ast.walk(tree):
        if id(st) in swaps:
            updates.update(id(n) for n in ast.walk(st.targets[0]))  # type: ignore[attr-defined]
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and \
                id(n) not in updates:
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            out.add(n.name)
    return out


def _given_args(sig: Signature, call: ast.Call) -> dict[str, ast.expr]:
    """The argument expressions ``call`` passes to each of ``sig``'s parameters by
    position or keyword (not through ``*args``/``**kw``)."""
    given: dict[str, ast.expr] = dict(zip(sig.names[:sig.n_positional], call.args,
                                          strict=False))
    given.update({k.arg: k.value for k in call.keywords if k.arg in sig.names})
    return given


def _bare(writes: list[ast.AST]) -> bool:
    """Are all of these in-place writes into a name ``name += v`` (which rebinds a
    number: only an array shows the change)?"""
    return all(isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
               for n in writes)


class FunctionLowerer:
    """Lowers one Python function (top-level, nested ``def`` or ``lambda``)."""

    def __init__(self, info: SourceInfo, py_fn: types.FunctionType,
                 outer: tuple[FunctionLowerer, Env] | None,
                 write_back: tuple[str, ...] = ()):
        self.info = info
        # the parameters whose final values this lowering returns after the result (a
        # function changing its arguments in place, called where the caller reads them
        # again: ``call_graph``, ``_written_back``)
        self.write_back = write_back
        self.py_fn = py_fn
        self.outer = outer
        tree = info.tree
        body = tree.body if isinstance(tree.body, list) else []
        targs = tree.args
        self.locals = assigned_names(body) | {a.arg for a in self._all_args(targs)} | {
            a.arg for a in (*targs.kwonlyargs, targs.vararg, targs.kwarg) if a is not None}
        self.loops: list[Loop] = []
        self.n_loops = 0
        # enclosing-function variables this function reads, with their node at creation
        self.captures: dict[str, Node | None] = {}
        # ``x[i]`` results (indices that can be out of range), per graph: the dead ones
        # are kept for their bounds check (``keep_index_checks``)
        self.index_loads: list[tuple[Graph, Node]] = []
        # this function's parameters (node id -> name), and those it changes in place
        # (a[0] = v, d[k] = v, a += v, xs.append(v)): name -> (line, the write, whether
        # only an array shows it: a bare ``a += v``, which rebinds a number).  A caller
        # that reads its argument again would see the change in CPython (``call_graph``)
        self.params: dict[int, str] = {}
        self.param_writes: dict[str, tuple[int, str, bool]] = {}
        # a parameter whose every in-place write is ``v op= ...`` on an element read by
        # int indices (``s = x[0, -2]; s *= 2``): how many -- a number when the
        # argument has no more dimensions, which CPython rebinds (no warning then)
        self.param_element_writes: dict[str, int | None] = {}
        self.stale_at_return: set[str] = set()  # (those cannot be written back)
        # which of the caller's objects (by parameter name) each parameter name holds,
        # changed only by the permutations ``swaps`` (``_param_swaps``)
        self.swaps: set[int] = set()
        self.owner: dict[str, str] = {}
        # parameters passed on to a function that is itself a parameter (``f(x)`` in
        # ``apply(f, x)``): whether they change is known where the caller passes ``f``
        # (``guard_call_through``): name -> (the function's name, ``where``, line)
        self.param_writes_via: dict[str, tuple[str, tuple, int]] = {}
        # a loop's state parameter (node id) -> the value it starts from: a write into
        # it in the body is a write into that value's object; the loop's result -> its
        # state parameter (what it is when the body never runs)
        self.loop_inits: dict[int, Node] = {}
        # nodes known to be new arrays that a primitive's kind does not tell
        # (``np.array(x)`` copies, ``np.asarray(x)`` does not): ``_returned_params``
        self.fresh: set[int] = set()
        # a join's or loop's parameter (node id) -> the values it may take (a loop's
        # state: its start and each iteration's end): what a container may hold is
        # followed through loops and branches (``_may_flow``)
        self.flows: dict[int, list[Node]] = outer[0].flows if outer is not None else {}
        # ``myc.grad(obj.m)`` nodes (``transform_value`` of an object's function known
        # when the program specializes) -> (obj, "m"): their calls pass ``obj``
        self.bound_transforms: dict[int, tuple[Node, str]] = {}

    # ------------------------------------------------------------------ helpers
    def loc(self, node: ast.AST | None) -> Location | None:
        return self.info.loc(node)

    def error(self, cls: type[MycError], msg: str, node: ast.AST | None, hint: str | None = None):
        return cls(msg, self.loc(node), hint)

    @staticmethod
    def _all_args(args: ast.arguments) -> list[ast.arg]:
        return list(args.posonlyargs) + list(args.args)

    def apply(self, block: Block, fn: Any, *args: Any, node: ast.AST | None = None) -> Apply:
        return block.graph.apply(fn, *args, loc=self.loc(node))

    def new_graph(self, name: str, parent: Graph, node: ast.AST | None, kind: str) -> Graph:
        g = Graph(name, parent, self.loc(node))
        g.kind = kind
        return g

    # ------------------------------------------------------------------ function level
    def lower_into(self, g: Graph, defaults_block: Block | None = None) -> None:
        tree = self.info.tree
        args = tree.args
        self._check_arguments(args)
        env = Env({})
        names = []
        for a in self._all_args(args) + list(args.kwonlyargs):
            env.vars[a.arg] = g.add_parameter(a.arg, self.loc(a))
            names.append(a.arg)
        sig = Signature(names)
        self.owner = {n: n for n in names}
        self.swaps = _param_swaps(tree, names)
        if args.kwonlyargs or args.vararg or args.kwarg:
            sig.npos = len(self._all_args(args))
        for star in (args.vararg, args.kwarg):
            if star is not None:
                env.vars[star.arg] = g.add_parameter(star.arg, self.loc(star))
        # myc's library writes only its own arrays, or a ufunc's ``out=`` array
        self.params = {p.id: p.name for p in g.parameters
                       if not in_library(self.info.filename) or p.name == "out"}
        sig.varargs = args.vararg.arg if args.vararg else None
        sig.varkw = args.kwarg.arg if args.kwarg else None
        pos = self._all_args(args)
        defaults = list(args.defaults)
        pairs = list(zip(pos[len(pos) - len(defaults):], defaults, strict=True)) + [
            (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            if d is not None]
        for a, d in pairs:
            if defaults_block is None:
                sig.defaults[a.arg] = self._top_default(a.arg, d, Block(g, env))
            else:
                sig.defaults[a.arg] = self.expr(d, defaults_block)
        g.flags["signature"] = sig
        if not sig.simple:
            # parameters bound by name at each call site (``call_graph``): a call through
            # a function value must pass them all
            g.flags["defaults"] = []
        elif all(isinstance(n, Constant) for n in sig.defaults.values()):
            g.flags["defaults"] = [sig.defaults[n].value for n in names if n in sig.defaults]
        else:
            # defaults computed when the def runs: a call through a function value that
            # omits them passes UNDEF, and the body falls back to the captured value
            g.flags["defaults"] = [UNDEF] * len(sig.defaults)
            for name, d in sig.defaults.items():
                if not isinstance(d, Constant):
                    env.vars[name] = g.apply(P.default_if_undef, env.vars[name], d,
                                             loc=d.loc)
        if effects.TOKEN in self.locals:  # it prints or draws: effects thread a token
            env.vars[effects.TOKEN] = Constant(0)
        block = Block(g, env)
        if isinstance(tree, ast.Lambda):
            g.output = self.expr(tree.body, block)
            return
        end = self.stmts(tree.body, block)
        if end is not None:
            end.graph.output = effects.returned(
                self, end, self.returning(Constant(None, self.loc(tree)), end, tree), tree)
        keep_index_checks(self.index_loads)
        if self.param_writes_via:
            g.flags["param_writes_via"] = {
                names.index(n): (names.index(f), where, line)
                for n, (f, where, line) in self.param_writes_via.items()
                if n in names and f in names}
        if not self.write_back:  # (the twin returns the parameters it wrote, too)
            whole, items = _returned_params(g, g.parameters, self.flows, self.fresh)
            g.flags["returns_params"] = whole
            if items is not None:
                g.flags["returns_items"] = items
        if self.param_writes:
            g.flags["param_writes"] = {names.index(n) if n in names else -1: w
                                       for n, w in self.param_writes.items()}
            elements = {names.index(n): k for n, k in self.param_element_writes.items()
                        if k is not None and n in names}
            if elements:
                g.flags["param_element_writes"] = elements
            rebound = _rebound_names(tree, self.swaps)
            back = tuple(n for n in names if n in self.param_writes and n not in rebound
                         and n not in self.stale_at_return)
            if back and self.outer is None and not self.write_back:
                g.flags["write_back"] = (self.py_fn, back)

    def _top_default(self, name: str, node: ast.AST, block: Block) -> Node:
        """The default of a top-level function's parameter: its value when the ``def``
        ran (a constant; a function default is that function's graph)."""
        kw = self.py_fn.__kwdefaults__ or {}
        if name in kw:
            value = kw[name]
        else:
            sig = self.py_fn.__defaults__ or ()
            pos = self.py_fn.__code__.co_varnames[: self.py_fn.__code__.co_argcount]
            value = sig[list(pos).index(name) - (len(pos) - len(sig))]
        if callable(value) and not isinstance(value, type):
            fn = self.python_value(value, name, node, block)
            if isinstance(fn, Constant) and isinstance(fn.value, (Graph, Primitive)):
                return fn
        self._check_constant_value(value, name, self.info.tree)
        if isinstance(value, (list, dict, np.ndarray)):
            where = _mutated_in_place(self.info.tree, name)
            if where is not None:
                raise self.error(
                    MycSyntaxError, f"'{name}' is changed in place, and its default is a "
                    f"{type(value).__name__} made once, when the def ran: CPython keeps the "
                    "change for the next call that uses the default, myc does not",
                    where, hint=f"default to None and make a new one in the body: "
                    f"'if {name} is None: {name} = ...' (or copy it first)")
        return Constant(_as_value(value), self.loc(node))

    def _check_constant_value(self, value: Any, name: str, node: ast.AST) -> None:
        if isinstance(value, (bool, int, float, str, np.generic, type(None))):
            return
        if isinstance(value, (tuple, list, dict)):
            if isinstance(value, dict) and not all(
                    _static_key(k) or objects.is_user_object(k) for k in value):
                raise self.error(MycTypeError, f"default value of '{name}' is a dict whose "
                                 "keys are not all str, int, float, bool or None", node)
            for v in (value.values() if isinstance(value, dict) else value):
                self._check_constant_value(v, name, node)
            return
        if isinstance(value, np.ndarray):
            return
        raise self.error(MycTypeError, f"default value of '{name}' has unsupported type "
                         f"{type(value).__name__}", node)

    def _check_arguments(self, args: ast.arguments) -> None:
        """Every form of parameter list is supported (``*args``, keyword-only, ``**kw``)."""

    # ------------------------------------------------------------------ statements
    def stmts(self, stmts: list[ast.stmt], block: Block | None) -> Block | None:
        """Lower a statement list; ``None`` once control cannot reach the end."""
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if block is None:
                # unreachable code is still checked against the subset
                self.check_subset(s)
                i += 1
                continue
            if isinstance(s, ast.FunctionDef):
                j = i
                while j < len(stmts) and isinstance(stmts[j], ast.FunctionDef):
                    j += 1
                self.stmt_defs(stmts[i:j], block)
                i = j
                continue
            block = self.stmt(s, block)
            i += 1
        return block

    def check_subset(self, node: ast.AST) -> None:
        # ``f(*xs)`` nested in an expression is a call's business (``star_call``), ``(*a,
        # b)`` in a tuple or list display a display's (``_starred_display``); a starred
        # assignment target (``a, *rest = xs``) is checked where it is unpacked
        call_stars = {id(a) for sub in ast.walk(node)
                      if isinstance(sub, (ast.Call, ast.Tuple, ast.List))
                      for a in (sub.args if isinstance(sub, ast.Call) else sub.elts)
                      if isinstance(a, ast.Starred)}
        for sub in ast.walk(node):
            name = type(sub).__name__
            if id(sub) in call_stars:
                continue
            if name in _UNSUPPORTED_STMT:
                raise self.error(MycSyntaxError, f"{_UNSUPPORTED_STMT[name]} is not supported",
                                 sub)
            if name in _UNSUPPORTED_EXPR:
                raise self.error(MycSyntaxError, f"{_UNSUPPORTED_EXPR[name]} is not supported",
                                 sub)
            # the rest of what lowering rejects by syntax alone, so dead code agrees with it
            if isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(sub.ctx, ast.Store) \
                    and not _item_target(sub) and not _attribute_target(sub) and not (
                        isinstance(sub, ast.Subscript) and (_item_target(sub.value) or
                                                            _attribute_target(sub.value))):
                self._reject_target(sub)
            if isinstance(sub, ast.arguments):
                self._check_arguments(sub)
            if isinstance(sub, ast.Compare):
                for op in sub.ops:
                    if type(op) not in _CMPOPS:
                        raise self.error(MycSyntaxError, f"comparison '{type(op).__name__}' "
                                         "is not supported", sub)

    def stmt(self, s: ast.stmt, block: Block) -> Block | None:
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            what = _UNSUPPORTED_STMT.get(type(s).__name__, f"'{type(s).__name__}' statement")
            raise self.error(MycSyntaxError, f"{what} is not supported", s)
        return method(s, block)

    # -- lists and dicts ---------------------------------------------------------------
    def _kinds(self, classes: ast.expr, block: Block) -> tuple[str, ...]:
        """The container kinds ``isinstance(x, classes)`` admits: ``classes`` must be
        ``list``, ``tuple``, ``dict`` or a tuple of them, known where the program is
        compiled (an array's or a number's type is not a question myc answers)."""
        elts = classes.elts if isinstance(classes, ast.Tuple) else [classes]
        items = []
        for elt in elts:
            items.append(self._static_callee(elt, block))
        kinds = {list: ("list",), tuple: ("tuple", "namedtuple"), dict: ("dict",)}
        if not items or not all(isinstance(c, type) and (c in kinds or objects.is_user_class(c))
                                for c in items):
            raise self.error(MycTypeError, "isinstance() is supported with list, tuple, "
                             "dict and your own classes (or a tuple of them) as the "
                             "classes", classes,
                             hint="the type of an array or a number is known when the "
                                  "program is written: test np.ndim(x) or the structure")
        return tuple(k for c in items for k in kinds.get(c, (c,)))

    def py_call(self, name: str, args: list[Node], node: ast.AST, block: Block) -> Node:
        """A call of Python library function ``name`` (myc/frontend/py_library.py)."""
        g = _py_library_graph(name)
        sig: Signature = g.flags["signature"]
        full = list(args) + [sig.defaults[n] for n in sig.names[len(args):]]
        return self.apply(block, Constant(g, self.loc(node)), *full, node=node)

    def mutate(self, name: str, build, node: ast.AST, block: Block,
               is_list: bool = False) -> None:
        """``name`` rebound to ``build(current value)``: how a list or dict is mutated.

        Python mutates the object, so every other name for it sees the change; myc's
        lists and dicts are values, so reading such another name afterwards is refused,
        and so is mutating a global or an enclosing function's variable (which the
        caller would see).  ``is_list``: ``name`` holds a list (``.append``): a container
        it was read from (``lst = d["k"]``) shows the change too, so reading that is
        refused as well (were it an array, only reading its arrays would be)."""
        if name not in block.env.vars:
            found_outer = self.outer is not None and any(
                name in lw.locals for lw, _ in self._outers())
            if found_outer or self.lookup_python(name)[0]:
                raise self.error(
                    MycSyntaxError,
                    f"'{name}' is a global or a variable of an enclosing function: myc "
                    "cannot mutate it (its lists and dicts are values)", node,
                    hint=f"copy it into a local first: {name}2 = list({name}) (or dict)")
        current = self.read_name(name, node, block)
        self.note_param_write(current, node, False)
        value = build(current)
        line = getattr(node, "lineno", 0) + self.info.line_offset
        for other in _sharing(name, current, block.env):
            if block.env.vars[other] is current or is_list:
                block.env.stale[other] = (f"'{name}' was mutated (line {line})", None,
                                          name)
            else:  # an array's view (x[i] = v writes through it): refused if an array
                block.env.stale[other] = (f"'{name}' was updated in place (line {line})",
                                          current, name)
        if is_list:
            # a container holding the list (``d = {"k": lst}; lst.append(x)``) shows the
            # change in CPython: refused if read as, or holding, a list or dict
            for other, node in block.env.vars.items():
                if other != name and (_reaches(node, {current.id}, self.flows,
                                               _possible_inputs) or
                                      _const_within(node, current)):
                    block.env.stale.setdefault(other, (
                        f"'{name}' was appended to (line {line})", _LIST_ONLY, name))
        block.env.vars[name] = value
        block.env.maybe_undef.discard(name)
        block.env.stale.pop(name, None)

    def note_param_write(self, current: Node, node: ast.AST, bare: bool,
                         held: bool = False) -> None:
        """Record that the statement ``node`` changes ``current`` in place, when that
        is (part of) one of this function's parameters: the caller's object.  ``held``:
        the change is to the arrays ``current`` holds (a loop variable over it updated
        in place, a call changing them), not to ``current`` itself (``xs.append(v)``
        changes the list, not the arrays in it)."""
        walk = _holds if held else _part_of
        for pid, pname in self.params.items():
            if bare and not held and walk(current, {pid}, self.loop_inits):
                ints = _element_ints(current, pid, self.loop_inits)
                was = self.param_element_writes.get(pname, ints)
                self.param_element_writes[pname] = ints if was == ints else None
            elif pname in self.param_element_writes and walk(current, {pid},
                                                              self.loop_inits):
                self.param_element_writes[pname] = None
            if pname not in self.param_writes and walk(current, {pid}, self.loop_inits):
                text = ast.unparse(node).split("\n")[0] + (
                    " = ..." if isinstance(node, ast.Subscript) else "")
                self.param_writes[pname] = (
                    getattr(node, "lineno", 0) + self.info.line_offset,
                    text if len(text) <= 60 else text[:57] + "...", bare)

    def _made_as_container(self, n: Node) -> bool:
        """Is ``n`` a list or dict made in this function (a display, ``list(...)``, a
        comprehension, appended to or stored into, through loops and branches), not
        an array?  Followed through what may be its value only (results of calls of
        this function's graphs, branches, loop state), never into operands."""
        todo, seen = [n], set()
        while todo and len(seen) < 256:
            m = todo.pop()
            if m.id in seen:
                continue
            seen.add(m.id)
            if m.id in self.flows:
                todo.extend(self.flows[m.id])
                continue
            if isinstance(m, Constant):
                g = m.value
                if isinstance(g, Graph) and g.parent is not None and g.output is not None:
                    todo.append(g.output)  # a branch, a loop's continuation
                continue
            if not isinstance(m, Apply):
                continue
            fn = m.inputs[0]
            if not isinstance(fn, Constant):
                todo.append(fn)  # a call of a chosen branch: what it returns
                continue
            f = fn.value
            if isinstance(f, Primitive):
                if f.name == "pack":
                    return True
                if f.name == "switch":
                    todo.extend(m.inputs[2:4])
            elif isinstance(f, Graph):
                if f.loc is not None and in_library(f.loc.filename):
                    if f.name in _CONTAINER_MAKERS:
                        return True
                elif f.output is not None:  # a graph of this function (a comprehension's)
                    todo.append(f.output)
        return False

    def _may_flow(self, n: Node, ids: set[int]) -> bool:
        """Can the value of ``n`` be, contain or view one of ``ids``, followed through
        this function's loops and branches too (``flows``)?  Too far: it may."""
        return _reaches(n, ids, self.flows, _possible_inputs, at_limit=True)

    def _outers(self):
        outer = self.outer
        while outer is not None:
            yield outer
            outer = outer[0].outer

    def stmt_mutation(self, e: ast.Call, block: Block) -> Block:
        """``out.append(h)`` / ``.extend`` / ``.insert`` as a statement."""
        attr = e.func.attr  # type: ignore[attr-defined]
        recv = e.func.value  # type: ignore[attr-defined]
        if _item_target(recv) or (isinstance(recv, ast.Subscript) and
                                  _item_target(recv.value)):
            return self._mutate_item(e, block)
        if not isinstance(recv, ast.Name):
            raise self.error(MycSyntaxError, f"'.{attr}()' is supported on a variable "
                             "holding a list (out.append(x)), not on an expression", e,
                             hint="assign the list to a variable first")
        for a in e.args:
            if isinstance(a, ast.Starred):
                raise self.error(MycSyntaxError, "star-args (*x) in calls are not supported",
                                 a)
        if e.keywords or len(e.args) != _MUTATORS[attr]:
            raise self.error(MycTypeError, f"list.{attr}() takes exactly "
                             f"{_MUTATORS[attr]} argument(s)", e)
        args = [self.expr(a, block) for a in e.args]
        for a, node in zip(args, e.args, strict=True):
            self._no_late_binding(a, node, "a list")
        self.mutate(recv.id, lambda cur: self.py_call(attr, [cur, *args], e, block), recv,
                    block, is_list=True)
        return block

    def _mutate_item(self, e: ast.Call, block: Block) -> Block:
        """``groups[k].append(x)`` / ``P[s][a].append(t)`` (Gym-style transition
        tables): the item's list rebuilt with the element and stored back, the
        container rebound (as ``d[k] = v``).  CPython appends to the list object
        itself, so every other name that may hold it sees the change: names reading
        the container (``row = P[s]``) are refused if read afterwards, and names whose
        value the container may hold are refused if they are, or hold, a list or dict
        (their numbers and arrays are not changed by an append)."""
        attr = e.func.attr  # type: ignore[attr-defined]
        recv = e.func.value  # type: ignore[attr-defined]
        if e.keywords or len(e.args) != _MUTATORS[attr] or any(
                isinstance(a, ast.Starred) for a in e.args):
            raise self.error(MycTypeError, f"list.{attr}() takes exactly "
                             f"{_MUTATORS[attr]} argument(s)", e)
        args = [self.expr(a, block) for a in e.args]
        for a, node in zip(args, e.args, strict=True):
            self._no_late_binding(a, node, "a list")
        keys = [recv.slice] if _item_target(recv) else [recv.value.slice, recv.slice]
        root = recv.value if _item_target(recv) else recv.value.value
        name = root.id
        before = self.read_name(name, root, block)
        line = e.lineno + self.info.line_offset
        held = [other for other, node in block.env.vars.items() if other != name and (
            self._may_flow(before, {f.id for f in _view_family(node, block.env.views)}) or
            _const_within(before, node))]

        def build(cur: Node) -> Node:
            idx = [self.subscript_index(k, block) for k in keys]
            items = [cur]
            for k in idx:
                items.append(self.apply(block, P.getitem, items[-1], k, node=recv))
            new = self.py_call(attr, [items[-1], *args], e, block)
            for box, k in zip(reversed(items[:-1]), reversed(idx), strict=True):
                new = self.py_call("setitem", [box, k, new], recv, block)
            return new

        self.mutate(name, build, recv, block, is_list=True)
        for other in held:  # (the container's own readers were refused by mutate)
            block.env.stale.setdefault(other, (
                f"'{ast.unparse(recv)}' was appended to (line {line})", _LIST_ONLY, name))
        return block

    def stmt_Pass(self, s: ast.Pass, block: Block) -> Block:
        return block

    def stmt_Expr(self, s: ast.Expr, block: Block) -> Block:
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return block  # docstring
        v = s.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and \
                v.func.attr in _MUTATORS and not isinstance(
                    self._static_callee(v.func.value, block),
                    (types.ModuleType, types.SimpleNamespace)):
            return self.stmt_mutation(v, block)
        if isinstance(v, ast.Call) and self._static_callee(v.func, block) is np.fill_diagonal:
            return self.stmt_fill_diagonal(v, block)
        if isinstance(v, ast.Call) and self._static_callee(v.func, block) is np.copyto:
            return self.stmt_copyto(v, block)
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and \
                v.func.attr in WRITES_SELF and isinstance(v.func.value, ast.Name) and \
                self._static_callee(v.func.value, block) is None:
            return self.stmt_method_in_place(v, block)
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and \
                v.func.attr == "at" and isinstance(
                    self._static_callee(v.func.value, block), np.ufunc):
            return self.stmt_ufunc_at(v, block)
        self.check_subset(s.value)
        value = self.expr(s.value, block)  # evaluated for its errors; results are pure
        if isinstance(s.value, ast.Call) and isinstance(s.value.func, (ast.Name,
                                                                     ast.Attribute)) and \
                effects.TOKEN in block.env.vars and not effects.is_effect_call(s.value):
            # a call made for its effects (``show(x)``), or a method call whose result is
            # unused (``xs.sort()``, ``ax.plot(x)``: refused when it runs): run it
            both = self.apply(block, P.make_tuple, effects.token(block), value, node=s)
            effects.set_token(block, self.apply(block, P.token_of, both, node=s))
        return block

    def stmt_fill_diagonal(self, v: ast.Call, block: Block) -> Block:
        """``np.fill_diagonal(a, val)`` writes into ``a``; myc's arrays are values, so
        ``a`` is rebound to the array with its diagonal set (as ``a[mask] = v`` is)."""
        self.check_subset(v)
        if not v.args or not isinstance(v.args[0], ast.Name) or any(
                isinstance(a, ast.Starred) for a in v.args):
            raise self.error(MycSyntaxError, "np.fill_diagonal is supported on a local "
                             "variable (np.fill_diagonal(a, v)): it writes into its first "
                             "argument", v, hint="compute the array into a local variable "
                             "first, or use np.where(np.eye(n, dtype=bool), v, a)")
        name = v.args[0].id
        args, kwargs = self._args(v, block)
        g = _library_graph("fill_diagonal_value")
        self._write_into(name, v, lambda cur: self.call_graph(
            g, Constant(g, self.loc(v)), [cur, *args[1:]], kwargs, v, block), block)
        return block

    def stmt_copyto(self, v: ast.Call, block: Block) -> Block:
        """``np.copyto(dst, src)`` writes into ``dst``: rebound to the new array."""
        self.check_subset(v)
        if not v.args or not isinstance(v.args[0], ast.Name) or any(
                isinstance(a, ast.Starred) for a in v.args):
            raise self.error(MycSyntaxError, "np.copyto is supported on a local variable "
                             "(np.copyto(dst, src)): it writes into its first argument", v,
                             hint="assign instead: dst = np.broadcast_to(src, dst.shape)")
        args, kwargs = self._args(v, block)
        g = _library_graph("copyto_value")
        self._write_into(v.args[0].id, v, lambda cur: self.call_graph(
            g, Constant(g, self.loc(v)), [cur, *args[1:]], kwargs, v, block), block)
        return block

    def stmt_method_in_place(self, v: ast.Call, block: Block) -> Block:
        """``a.fill(0)``, ``a.sort()``: NumPy's array methods writing into ``a``, which is
        rebound to the new array (an object of the user's class calls its own method)."""
        self.check_subset(v)
        attr = v.func.attr  # type: ignore[attr-defined]
        name = v.func.value.id  # type: ignore[attr-defined]
        args, kwargs = self._args(v, block)
        g = _library_graph(f"{attr}_value")

        def build(cur: Node) -> Node:
            def user(b: Block) -> Node:  # (its result unused, as the statement's)
                self.object_method(cur, v, b)
                return cur
            method = self._lazy(block, v, "method", user)
            value = self._lazy(block, v, "array_method", lambda b: self.call_graph(
                g, Constant(g, self.loc(v)), [cur, *args], kwargs, v, b))
            return self._select(block, self.apply(block, P.is_object, cur, node=v), method,
                                value, v)

        self._write_into(name, v, build, block, at=v.func.value)  # type: ignore[attr-defined]
        return block

    def _write_into(self, name: str, v: ast.Call, build, block: Block,
                    at: ast.AST | None = None) -> None:
        """A NumPy call writing into array ``name`` (its first argument, or ``at``): ``name``
        rebound to ``build(current value)``; the names sharing its memory (views: CPython
        would show them the write) are refused as arrays if read afterwards."""
        current = self.read_name(name, at or v.args[0], block)
        others = _sharing(name, current, block.env)
        self.mutate(name, build, v, block)
        line = v.lineno + self.info.line_offset
        for other in others:
            block.env.stale[other] = (f"'{name}' was updated in place (line {line})",
                                      current, name)

    def stmt_ufunc_at(self, v: ast.Call, block: Block) -> Block:
        """``np.add.at(a, idx, v)`` adds ``v`` into ``a`` at ``idx``, repeated indices
        accumulating (the scatter-add of embedding and histogram code); ``a`` is rebound
        to the new array, as ``a[idx] += v`` is (which does not accumulate)."""
        ufunc = self._static_callee(v.func.value, block)  # type: ignore[attr-defined]
        name = ufunc.__name__
        if name not in ("add", "subtract"):
            raise self.error(MycSyntaxError, f"np.{name}.at is not supported (np.add.at "
                             "and np.subtract.at are)", v,
                             hint="write the update as an expression on a new array")
        if len(v.args) != 3 or v.keywords or not isinstance(v.args[0], ast.Name) or any(
                isinstance(a, ast.Starred) for a in v.args):
            raise self.error(MycSyntaxError, f"np.{name}.at is supported as np.{name}.at(a, "
                             "index, values) on a local variable a: it writes into a", v)
        target = v.args[0].id
        index = self.expr(v.args[1], block)
        value = self.expr(v.args[2], block)
        if name == "subtract":
            value = self.apply(block, P.neg, value, node=v.args[2])
        self._write_into(target, v, lambda cur: self.apply(block, P.index_add, cur, index,
                                                           value, node=v), block)
        return block

    def stmt_Return(self, s: ast.Return, block: Block) -> None:
        value = (self.expr(s.value, block) if s.value is not None
                 else Constant(None, self.loc(s)))
        block.graph.output = effects.returned(self, block, self.returning(value, block, s),
                                              s)
        return None

    def returning(self, value: Node, block: Block, node: ast.AST) -> Node:
        """What a ``return`` gives: the value, and in a write-back lowering the final
        values of the parameters changed in place (``write_back``)."""
        self.stale_at_return.update(self.owner.get(n, n) for n in self.params.values()
                                    if n in block.env.stale)
        if not self.write_back:
            return value
        holder = {obj: name for name, obj in self.owner.items()}
        return self.apply(block, P.make_tuple, value, *[
            block.env.vars[holder.get(n, n)] for n in self.write_back], node=node)

    def stmt_Raise(self, s: ast.Raise, block: Block) -> None:
        """``raise Error(msg)``: the path ends in Python's exception, reported as a
        ``MycValueError`` naming it at this line when the path is taken -- a branch on
        static values (``if mode == "train": ... else: raise ValueError(...)``) is
        decided when the program is compiled, so the untaken raise costs nothing; one on
        data specializes on each call's outcome, as ``assert`` does.  The exception's
        class is read from the source (``Name(...)``), its first argument (the message)
        evaluated on this path only."""
        exc = s.exc
        if exc is None:
            raise self.error(MycSyntaxError, "a bare 'raise' (re-raising the exception "
                             "being handled) is not supported: myc has no 'try'", s)
        self.check_subset(exc)
        call = exc if isinstance(exc, ast.Call) else None
        fn = call.func if call is not None else exc
        name = fn.id if isinstance(fn, ast.Name) else (
            fn.attr if isinstance(fn, ast.Attribute) else "Exception")
        msg = (self.expr(call.args[0], block) if call is not None and call.args
               else Constant(None, self.loc(s)))
        out = self.apply(block, P.raised, Constant(name, self.loc(s)), msg, node=s)
        block.graph.output = effects.returned(self, block, out, s)
        return None

    def stmt_Assign(self, s: ast.Assign, block: Block) -> Block:
        if id(s) in self.swaps:  # x0, x = x, x0: the objects follow the names
            t, v = s.targets[0], s.value
            ts = t.elts if isinstance(t, ast.Tuple) else [t]
            vs = v.elts if isinstance(v, ast.Tuple) else [v]
            self.owner.update({a.id: self.owner.get(b.id, b.id)  # type: ignore[attr-defined]
                               for a, b in zip(ts, vs, strict=True)})
        value = self.expr(s.value, block)
        for target in s.targets:
            self.assign(target, value, block)
        return block

    def stmt_AnnAssign(self, s: ast.AnnAssign, block: Block) -> Block:
        if s.value is None:
            return block
        self.assign(s.target, self.expr(s.value, block), block)
        return block

    def stmt_AugAssign(self, s: ast.AugAssign, block: Block) -> Block:
        if _item_target(s.target):  # d[k] += v: d[k] = d[k] + v (a new value)
            op = _BINOPS.get(type(s.op))
            if op is None:
                raise self.error(MycSyntaxError,
                                 f"operator '{type(s.op).__name__}=' is not supported", s)
            t = s.target
            index = self.subscript_index(t.slice, block)

            olds: list[Node] = []

            def update(cur: Node) -> Node:
                old = self.apply(block, P.getitem, cur, index, node=t)
                olds.append(old)
                new = self.apply(block, getattr(P, op), old, self.expr(s.value, block),
                                 node=s)
                new = self.apply(block, P.aug_assign, old, new, node=s)
                return self.py_call("setitem", [cur, index, new], t, block)

            name = t.value.id
            before = block.env.vars.get(name)
            self.mutate(name, update, t, block)
            # CPython's ``d[k] -= g`` updates the array at d[k] in place: the names that
            # may hold it (``d = {"W": W}``) see the change, so reading them afterwards
            # is refused when it is an array (as for ``y = x; y += g``)
            if before is not None and olds:
                found, _, stored = _stored_at(before, index, block)
                held = {f.id for v in stored for f in _view_family(v, block.env.views)} \
                    if found else set()
                line = s.lineno + self.info.line_offset
                twice = _held_elsewhere(before, index)
                if twice is not None:
                    block.env.stale[name] = (
                        f"'{ast.unparse(t)}' was updated in place (line {line}), an array "
                        f"'{name}' also holds at [{twice!r}]", None, HELD_TWICE)
                unseen = not found and self._made_as_container(before)
                for other, node in list(block.env.vars.items()):
                    if other == name:
                        continue
                    fam = _view_family(node, block.env.views)  # (W, b = ...: W itself)
                    near = any(f.id in held for f in fam) or _may_hold(fam[-1], held) \
                        if found else unseen and self._may_flow(before, {f.id for f in fam})
                    if near:
                        # (an item stored where this block cannot follow: what the
                        # container may hold, through loops and branches)
                        block.env.stale[other] = (
                            f"'{ast.unparse(t)}' was updated in place (line {line})",
                            olds[-1], name)
            return block
        if _attribute_target(s.target):  # self.t += 1: self.t = self.t + 1
            return self._aug_assign_attribute(s, block)
        if not isinstance(s.target, ast.Name):
            self._reject_target(s.target)
        op = _BINOPS.get(type(s.op))
        if op is None:
            raise self.error(MycSyntaxError,
                             f"operator '{type(s.op).__name__}=' is not supported", s)
        name = s.target.id
        current = self.read_name(name, s.target, block)
        self.note_param_write(current, s, True)
        value = self.apply(block, getattr(P, op), current, self.expr(s.value, block), node=s)
        # an array keeps its dtype and shape through an in-place update (NumPy's casting)
        value = self.apply(block, P.aug_assign, current, value, node=s)
        # CPython updates an array in place: other names for it, or for the array it is
        # a view of, would see the change.  myc arrays are values, so reading those names
        # later is refused when they hold an array (scalars are rebound, as in CPython).
        for other in _sharing(name, current, block.env):
            line = s.lineno + self.info.line_offset
            block.env.stale[other] = (f"'{name}' was updated in place (line {line})",
                                      current, name)
        self.assign(s.target, value, block)
        return block

    def _aug_assign_attribute(self, s: ast.AugAssign, block: Block) -> Block:
        """``self.t += 1`` (an environment's ``step``): the attribute's new value, kept
        in its dtype and shape as NumPy's in-place update keeps an array's, assigned
        as ``self.t = ...`` is (``_assign_attribute``: a method doing it to ``self`` is
        called through its write-back twin).  Names that shared the array are refused
        if read as arrays afterwards, as for ``a += v``."""
        op = _BINOPS.get(type(s.op))
        if op is None:
            raise self.error(MycSyntaxError,
                             f"operator '{type(s.op).__name__}=' is not supported", s)
        t = s.target
        load = ast.copy_location(ast.Attribute(value=t.value, attr=t.attr,  # type: ignore
                                               ctx=ast.Load()), t)
        current = self.expr(load, block)
        value = self.apply(block, getattr(P, op), current, self.expr(s.value, block), node=s)
        value = self.apply(block, P.aug_assign, current, value, node=s)
        line = s.lineno + self.info.line_offset
        root = t.value
        while isinstance(root, ast.Attribute):
            root = root.value
        owner = root.id if isinstance(root, ast.Name) else ""  # (rebound by the assignment)
        for other in _sharing(owner, current, block.env):
            block.env.stale[other] = (f"'{ast.unparse(t)}' was updated in place (line "
                                      f"{line})", current, other)
        self.assign(t, value, block)
        return block

    def _item_of_item(self, target: ast.Subscript, value: Node, block: Block) -> None:
        """``xs[t][i] = v``: min-char-rnn's one-hot ``xs[t] = np.zeros((V, 1));
        xs[t][inputs[t]] = 1``.  CPython writes into the object ``xs[t]``; myc rebinds
        ``xs`` to a container whose item ``t`` is a new array.  That is CPython's meaning
        when no other name can hold that object, which is known where ``xs[t]`` was
        stored in this function (the same key, followed back through the writes to
        ``xs`` since): the names holding, or viewing, any value stored on the way are
        then refused if read afterwards, as for ``x[i] = v`` on an array's view.  An item
        of unknown origin (``xs`` an argument, a loop's state from an earlier
        iteration) could be anybody's: refused, with the rewrite that says what is meant."""
        outer = target.value
        name = outer.value.id  # type: ignore[attr-defined]
        key = self.expr(outer.slice, block)
        current = self.read_name(name, outer, block)
        found, chain, stored = _stored_at(current, key, block)
        if not found:
            inner = ast.unparse(outer)
            raise self.error(MycSyntaxError,
                             f"item assignment through an element ({ast.unparse(target)} "
                             f"= ...) is not supported here: it writes into the object "
                             f"{inner} in place, which was not stored in {name} earlier in "
                             "this function (other names may hold it)", target,
                             hint=f"assign into a local and store it back: v = {inner}; "
                                  f"v[{ast.unparse(target.slice)}] = ...; {inner} = v")
        shared = {c.id for c in chain}
        for v in stored:
            shared.update(f.id for f in _view_family(v))
        line = target.lineno + self.info.line_offset
        sharers = [other for other, node in block.env.vars.items()
                   if other != name and _may_hold(node, shared)]
        index = self.subscript_index(target.slice, block)
        item = self.apply(block, P.getitem, current, key, node=outer)
        new_item = self.py_call("setitem", [item, index, value], target, block)
        self.mutate(name, lambda cur: self.py_call("setitem", [cur, key, new_item], target,
                                                   block), target, block)
        for other in sharers:  # reading one afterwards is refused (an array's alias_guard)
            block.env.stale[other] = (f"'{ast.unparse(outer)}' was updated in place "
                                      f"(line {line})", item, name)

    def _views_written_first(self, target: ast.Tuple | ast.List, value: Node,
                             block: Block) -> Node:
        """``a[0], a[1] = a[1], a[0]``: CPython makes the right side's items first --
        views of ``a`` when they are arrays -- then assigns left to right, so ``a[0] =
        ...`` changes what the view ``a[1]`` (the second item) shows, and NumPy stores
        row 1 twice: not a swap.  myc's items are values, so such an item is refused
        when it is an array (an element of a 1-d ``a`` is a number, copied: a swap)."""
        if _made_by(value) != "make_tuple" or len(value.inputs) - 1 != len(target.elts):
            return value
        items = list(value.inputs[1:])
        changed = False
        for i, elt in enumerate(target.elts):
            if not (_item_target(elt) and elt.value.id in block.env.vars):  # type: ignore
                continue
            written = block.env.vars[elt.value.id]  # type: ignore[attr-defined]
            for j in range(i + 1, len(items)):
                if written.id not in {f.id for f in _view_family(items[j],
                                                                 block.env.views)}:
                    continue
                left = ", ".join(ast.unparse(t) for t in target.elts)
                lefts = [ast.unparse(t.slice) for t in target.elts]  # type: ignore
                msg = (f"'{left} = ...' does not store what the right side held: its "
                       f"item {j + 1} is a view of '{elt.value.id}', which the "  # type: ignore[attr-defined]
                       f"assignment to {ast.unparse(elt)} changes first, so NumPy stores "
                       f"the changed values into {ast.unparse(target.elts[j])} (not a "
                       "swap); myc's items are values. To swap, index with a list "
                       f"({elt.value.id}[[{', '.join(lefts)}]] = "  # type: ignore[attr-defined]
                       f"{elt.value.id}[[{', '.join(reversed(lefts))}]]) or copy the "  # type: ignore[attr-defined]
                       "right side's items (.copy())")
                items[j] = self.apply(block, P.alias_guard, items[j], items[j], msg,
                                      node=target)
                changed = True
        return self.apply(block, P.make_tuple, *items, node=target) if changed else value

    def _reject_target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript):
            # xs[t][i] = 1 writes into the object xs[t] in place, which other names may
            # hold (CPython shows them the write); myc's values cannot follow that
            inner = ast.unparse(target.value)
            raise self.error(MycSyntaxError,
                             f"item assignment through an element ({ast.unparse(target)} "
                             "= ...) is not supported: it writes into the object "
                             f"{inner} in place", target,
                             hint=f"assign into a local and store it back: v = {inner}; "
                                  f"v[{ast.unparse(target.slice)}] = ...; {inner} = v")
        if isinstance(target, ast.Subscript):
            raise self.error(MycSyntaxError,
                             "item assignment is supported on a name (x[i] = v, d[k] = v), "
                             f"not on {ast.unparse(target.value)}", target,
                             hint="assign into a local variable and store it back")
        if isinstance(target, ast.Attribute):
            raise self.error(
                MycSyntaxError, f"attribute assignment ({ast.unparse(target)} = ...) is not "
                "supported in compiled code: myc reads objects when the program is compiled, "
                "as values", target, hint="compute the new value into a local variable (or "
                "return it), and set the attribute outside the compiled function")
        if isinstance(target, ast.Starred):
            raise self.error(MycSyntaxError, "starred assignment (*x) is not supported", target)
        raise self.error(MycSyntaxError,
                         f"assignment to {type(target).__name__} is not supported", target)

    def assign(self, target: ast.AST, value: Node, block: Block) -> None:
        if isinstance(target, ast.Name):
            value_named = value
            if isinstance(value, Apply) and value.debug_name is None:
                value.debug_name = target.id
            block.env.vars[target.id] = value_named
            block.env.maybe_undef.discard(target.id)
            block.env.stale.pop(target.id, None)
        elif _item_target(target):  # d[k] = v, l[i] = v: the variable gets a new value
            box = target.value.id  # type: ignore[attr-defined]
            self._no_late_binding(value, target, "a dict" if box.startswith("$") else
                                  f"'{box}'")
            index = self.subscript_index(target.slice, block)
            self.mutate(target.value.id, lambda cur: self.py_call(
                "setitem", [cur, index, value], target, block), target, block)
        elif isinstance(target, ast.Subscript) and _item_target(target.value):
            self._item_of_item(target, value, block)
        elif _attribute_target(target):  # self.output = v: the object is a value
            self._assign_attribute(target, value, block)  # type: ignore[arg-type]
        elif isinstance(target, ast.Subscript) and _attribute_target(target.value):
            self._attribute_item(target, value, block)
        elif isinstance(target, (ast.Tuple, ast.List)):
            stars = [i for i, elt in enumerate(target.elts) if isinstance(elt, ast.Starred)]
            if len(stars) > 1:
                raise self.error(MycSyntaxError, "multiple starred expressions in assignment",
                                 target)
            n = len(target.elts)
            if stars:  # first, *rest, last = x: rest a list of what the others leave
                k = stars[0]
                checked = self.py_call("star_unpack", [value, Constant(k),
                                                       Constant(n - 1 - k)], target, block)
            else:
                value = self._views_written_first(target, value, block)
                checked = self.apply(block, P.unpack, value, n, node=target)
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    elt = elt.value
                self.assign(elt, self.apply(block, P.getitem, checked, i, node=elt), block)
        else:
            self._reject_target(target)

    def _attribute_item(self, target: ast.Subscript, value: Node, block: Block) -> None:
        """``self._mean[idx, :] = v`` (naive Bayes' ``fit``): the attribute's array
        rebuilt with the item (a new array, as ``x[i] = v``) and stored back into the
        object.  Only where this function made that array itself (every assignment of
        the attribute here is ``np.zeros(...)``, ``np.empty(...)``, ``x.copy()``...): an
        array it was given may be the caller's, which CPython changes in place; local
        names that may view it are refused if read afterwards (``mutate``)."""
        text = ast.unparse(target.value)
        made = [n.value for n in ast.walk(self.info.tree) if isinstance(n, ast.Assign)
                and any(ast.unparse(t) == text for t in n.targets)]
        if not made or not all(isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute)
                               and v.func.attr in _FRESH_ARRAYS for v in made):
            raise self.error(MycSyntaxError, f"item assignment through an attribute ({text}"
                             "[...] = ...) is supported where this function made the array "
                             f"({text} = np.zeros(...)): this one may be shared with the "
                             "caller, whose array CPython changes in place", target,
                             hint=f"assign into a local copy and store it back: v = "
                                  f"{text}.copy(); v[...] = ...; {text} = v")
        current = self.expr(target.value, block)
        self.note_param_write(current, target, False)
        index = self.subscript_index(target.slice, block)
        new = self.py_call("setitem", [current, index, value], target, block)
        line = target.lineno + self.info.line_offset
        root = target.value
        while isinstance(root, ast.Attribute):
            root = root.value
        others = set(_sharing(root.id, current, block.env))  # type: ignore[attr-defined]
        for other, node in block.env.vars.items():  # views of an earlier read of it
            if other != root.id and any(  # type: ignore[attr-defined]
                    _reads_attribute(f, target.value.attr)  # type: ignore[attr-defined]
                    for f in _view_family(node, block.env.views)[1:]):
                others.add(other)
        self._assign_attribute(target.value, new, block)  # type: ignore[arg-type]
        for other in sorted(others):  # (after the object's own rebinding marks them)
            block.env.stale[other] = (f"'{text}' was updated in place (line {line})",
                                      current, root.id)  # type: ignore[attr-defined]

    def _assign_attribute(self, target: ast.Attribute, value: Node, block: Block) -> None:
        """``obj.attr = v`` (``self.output = ...`` in a method): the variable holding the
        object rebound to a new object with the attribute set, as ``d[k] = v`` rebinds
        a dict (``mutate``: other names for the object refused if read afterwards); a
        method that does this to ``self`` is called through its write-back twin, which
        returns the final ``self`` to the caller (``objects.method_graph``,
        ``object_method``).  ``self.a.b = v`` rebuilds ``self.a``, then ``self``."""
        attr = Constant(target.attr, self.loc(target))
        if isinstance(target.value, ast.Name):
            self.mutate(target.value.id, lambda cur: self.py_call(
                "setattr_value", [cur, attr, value], target, block), target, block)
            return
        inner = self.expr(target.value, block)
        self._assign_attribute(target.value, self.py_call(  # type: ignore[arg-type]
            "setattr_value", [inner, attr, value], target, block), block)

    # -- if ----------------------------------------------------------------------
    def stmt_Assert(self, s: ast.Assert, block: Block) -> Block | None:
        """``assert test, msg``: a branch whose failing side raises Python's
        AssertionError (a ``MycValueError``) at this line, ``msg`` evaluated only there.
        A condition known when the program is compiled (shapes, static ints) is checked
        then; one on data makes the program specialize on each call's outcome (guarded),
        as any branch that can fail does (docs/python.md)."""
        self.check_subset(s.test)
        if s.msg is not None:
            self.check_subset(s.msg)
        cond = self.condition(s.test, block)
        g = block.graph
        tg = self.new_graph(f"{g.name}:assert", g, s, "branch")
        fg = self.new_graph(f"{g.name}:assert_failed", g, s, "branch")
        failed = Block(fg, block.env.copy())
        msg = self.expr(s.msg, failed) if s.msg is not None else Constant(None, self.loc(s))
        fg.output = self.apply(failed, P.assert_failed, msg, node=s)
        g.output = self.apply(block, self.apply(block, P.switch, cond, tg, fg, node=s), node=s)
        return self.join([Block(tg, block.env.copy())], [], block, s, "endassert")

    def stmt_If(self, s: ast.If, block: Block) -> Block | None:
        cond = self.condition(s.test, block)
        g = block.graph
        tg = self.new_graph(f"{g.name}:if", g, s, "branch")
        fg = self.new_graph(f"{g.name}:else", g, s, "branch")
        t_end = self.stmts(s.body, Block(tg, block.env.copy()))
        f_end = self.stmts(s.orelse, Block(fg, block.env.copy()))
        g.output = self.apply(block, self.apply(block, P.switch, cond, tg, fg, node=s), node=s)
        return self.join([t_end, f_end], s.body + s.orelse, block, s, "endif")

    def join(self, ends: list[Block | None], stmts: list[ast.stmt], block: Block,
             node: ast.AST, label: str) -> Block | None:
        """Make the graph where ``ends`` meet again, with a parameter per changed variable."""
        live = [e for e in ends if e is not None]
        if not live:
            return None
        # (and those a call rebound: written back, or read through a guard)
        rebound = {n for e in live for n, v in e.env.vars.items()
                   if block.env.vars.get(n) is not v}
        changed = sorted(n for n in (assigned_names(stmts) | rebound) & self.locals
                         if any(n in e.env.vars for e in live))
        g = block.graph
        jg = self.new_graph(f"{g.name}:{label}", g, node, "join")
        env = block.env.copy()
        # a name stale on any path in (its list mutated through another name) is stale
        # after the join: CPython would show the change on that path
        env.stale = _merged_stale([e.env.stale for e in live])
        for name in changed:
            env.vars[name] = jg.add_parameter(name, self.loc(node))
            undef = any(name not in e.env.vars or name in e.env.maybe_undef for e in live)
            if undef:
                env.maybe_undef.add(name)
            else:
                env.maybe_undef.discard(name)
        for e in live:
            vals = [e.env.vars.get(n, Constant(UNDEF)) for n in changed]
            e.graph.output = e.graph.apply(jg, *vals, loc=self.loc(node))
            for n, v in zip(changed, vals, strict=True):
                self.flows.setdefault(env.vars[n].id, []).append(v)
        return Block(jg, env)

    # -- loops -------------------------------------------------------------------
    def stmt_While(self, s: ast.While, block: Block) -> Block | None:
        return self._loop(s, block, s.test, None)

    def stmt_For(self, s: ast.For, block: Block) -> Block | None:
        named = self._over_named_arrays(s, block)
        if named is not None:
            return self._for_over_names(s, named, block)
        it = s.iter
        rng = self._static_callee(it.func, block) if isinstance(it, ast.Call) else None
        if rng is B.RANGE:
            if it.keywords or not 1 <= len(it.args) <= 3:
                raise self.error(MycTypeError, "range() takes 1 to 3 positional arguments", it)
            vals = [self.expr(a, block) for a in it.args]
            loc = self.loc(it)
            if len(vals) == 1:
                start, stop, step = Constant(0, loc), vals[0], Constant(1, loc)
            elif len(vals) == 2:
                start, stop, step = vals[0], vals[1], Constant(1, loc)
            else:
                start, stop, step = vals
            count = self.apply(block, P.range_len, start, stop, step, node=it)
            seq = None
        elif rng is zip and it.args and not it.keywords and \
                not any(isinstance(a, ast.Starred) for a in it.args):
            # ``for t0, t1 in zip(ts[:-1], ts[1:])``: each step reads item k of each
            # sequence, so a loop over arrays' rows can be a loop node (the list of
            # tuples zip makes could only be unrolled)
            seq = tuple(self.apply(block, P.iter_seq, self.expr(a, block), node=a)
                        for a in it.args)
            lens = [self.apply(block, P.len, q, node=it) for q in seq]
            count = lens[0] if len(lens) == 1 else self.py_call(
                "seq_min", [self.apply(block, P.make_tuple, *lens, node=it)], it, block)
            start = step = None
            self._mark_target_writes(s, self.apply(
                block, P.make_tuple, *[q.inputs[1] for q in seq], node=it), block)
            return self._loop(s, block, None, (count, seq, start, step))
        else:
            # a dict is iterated by key
            seq = self.apply(block, P.iter_seq, self.expr(it, block), node=it)
            count = self.apply(block, P.len, seq, node=it)
            start = step = None
        if seq is not None:
            self._mark_target_writes(s, seq.inputs[1], block)
        return self._loop(s, block, None, (count, seq, start, step))

    def _over_named_arrays(self, s: ast.For, block: Block) -> list[list[str]] | None:
        """``for p in [dW, db]: np.clip(p, -5, 5, out=p)`` or ``for p, m in zip([W, b],
        [mW, mb]): m += g * g; p -= ...`` (min-char-rnn): a loop over displays of
        distinct local variables whose body updates the loop variables in place and
        never rebinds them.  CPython's updates reach the variables listed; the loop is
        unrolled with each variable written back after its step (``_for_over_names``).
        Returns the listed names per loop variable, or None for any other loop."""
        it, target = s.iter, s.target
        if s.orelse:
            return None
        if isinstance(it, (ast.List, ast.Tuple)):
            displays, targets = [it], [target]
        elif isinstance(it, ast.Call) and not it.keywords and it.args and \
                self._static_callee(it.func, block) is zip and \
                isinstance(target, (ast.Tuple, ast.List)) and \
                len(target.elts) == len(it.args):
            displays, targets = list(it.args), list(target.elts)
        else:
            return None
        if not all(isinstance(d, (ast.List, ast.Tuple)) for d in displays) or \
                not all(isinstance(t, ast.Name) for t in targets):
            return None
        rows = [[e.id if isinstance(e, ast.Name) else None for e in d.elts]  # type: ignore
                for d in displays]
        names = [n for r in rows for n in r]
        tnames = {t.id for t in targets}  # type: ignore[attr-defined]
        if not names or len({len(r) for r in rows}) != 1 or None in names or \
                len(set(names)) != len(names) or tnames & set(names) or \
                len(tnames) != len(targets) or \
                not all(n in self.locals and n in block.env.vars for n in names):
            return None
        for n in names:  # (one array's views: a write through one shows in the others)
            if set(_sharing(n, block.env.vars[n], block.env)) & set(names):
                return None
        body = ast.Module(body=s.body, type_ignores=[])
        for n in ast.walk(body):
            if isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom,
                              ast.Global, ast.Nonlocal)):
                return None
        if _rebound_names(body) & tnames:
            return None
        if not ({w for w, _ in _loop_writes(s)} | set(self._passed_to_writers(s.body, block))
                ) & tnames:
            return None  # (nothing updated in place: the loop as any other)
        return rows

    def _passed_to_writers(self, stmts: list[ast.stmt], block: Block
                           ) -> dict[str, ast.Call]:
        """The names ``stmts`` pass as ``out=`` or to module-level functions that change
        that parameter in place (``set_bnd(0, x)``), each with such a call."""
        out: dict[str, ast.Call] = {}
        for c in sorted(_calls_in(stmts), key=lambda c: (c.lineno, c.col_offset),
                        reverse=True):  # (the first call of each name kept)
            out.update((k.value.id, c) for k in c.keywords
                       if k.arg == "out" and isinstance(k.value, ast.Name))
            g = self._user_callee(c, block)
            if g is None:
                continue
            sig, writes = g.flags.get("signature"), g.flags.get("param_writes", {})
            if sig is None or not writes:
                continue
            given = _given_args(sig, c)
            out.update((a.id, c) for i, name in enumerate(sig.names)
                       if i in writes and isinstance(a := given.get(name), ast.Name))
        return out

    def _for_over_names(self, s: ast.For, rows: list[list[str]], block: Block
                        ) -> Block | None:
        """Lower ``_over_named_arrays``' loop unrolled: step ``k`` binds each loop
        variable to its list's ``k``-th variable, runs the body, then gives that
        variable the loop variable's value (an array updated in place is the same
        object; a number ``p += v`` rebinds, as in CPython).  Whatever else may hold
        the arrays is marked by the writes themselves, as for any write."""
        targets = [t.id for t in ([s.target] if isinstance(s.target, ast.Name)
                                  else s.target.elts)]  # type: ignore[attr-defined]
        bare = {t: _bare([n for w, n in _loop_writes(s) if w == t]) for t in targets}
        for k in range(len(rows[0])):
            olds = {}
            for t, row in zip(targets, rows, strict=True):
                olds[t] = self.read_name(row[k], s.iter, block)
                self.assign(ast.copy_location(ast.Name(id=t, ctx=ast.Store()), s.target),
                            olds[t], block)
            nxt = self.stmts(s.body, block)
            if nxt is None:
                return None
            block = nxt
            for t, row in zip(targets, rows, strict=True):
                new = block.env.vars.get(t)
                if new is None or new is olds[t]:
                    continue
                if bare[t]:  # ``p += v`` only: a number is rebound, not changed
                    new = self.py_call("kept_if_number", [new, olds[t]], s, block)
                block.env.views[new.id] = olds[t]
                block.env.vars[row[k]] = new
                block.env.stale.pop(row[k], None)
        return block

    def _mark_target_writes(self, s: ast.For, source: Node, block: Block) -> None:
        """``for p, g in zip([W, b], grads): p -= lr * g``: CPython updates each array
        the loop variable takes in place, so ``W`` and ``b`` (and the lists holding them)
        change.  The loop variable is rebound in myc, so the names whose arrays the
        iterated sequence may hold are refused if read as arrays afterwards (all the
        names it may hold: zip's other sequences too, conservatively)."""
        targets = assigned_names([ast.Assign(targets=[s.target])])
        self._mark_target_appends(s, targets, source, block)
        writes_of = self._written_in_place(s)
        for n, call in self._passed_to_writers(s.body, block).items():
            if n in targets:  # ``for g in grads: np.clip(g, -1, 1, out=g)`` / ``h(g)``
                writes_of.setdefault(n, []).append(call)
        written = [(n, sorted(ws, key=lambda w: (w.lineno, w.col_offset)))
                   for n, ws in writes_of.items()
                   if n in targets and not _fresh_first(n, s.body)]
        if not written:
            return
        name, writes = written[0]
        line = writes[0].lineno + self.info.line_offset
        self.note_param_write(source, writes[0], False, held=True)
        for other, node in list(block.env.vars.items()):
            fam = _view_family(node, block.env.views)
            if other in targets or not (_may_hold(source, {f.id for f in fam})):
                continue
            block.env.stale.setdefault(other, (
                f"'{name}', a loop variable over a sequence holding it, is updated in place "
                f"in the loop (line {line})", node, other))

    def _mark_target_appends(self, s: ast.For, targets: set[str], source: Node,
                             block: Block) -> None:
        """``for row in rows: row.append(x)``: CPython appends to each list the
        sequence holds, so ``rows`` (and every name that may hold those lists) changes;
        the loop variable is rebound in myc, so reading those names afterwards is
        refused."""
        for n in ast.walk(ast.Module(body=s.body, type_ignores=[])):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                    n.func.attr in _MUTATORS and isinstance(n.func.value, ast.Name) and \
                    n.func.value.id in targets and not _fresh_first(n.func.value.id, s.body):
                line = n.lineno + self.info.line_offset
                name = n.func.value.id
                for other, node in list(block.env.vars.items()):
                    # the sequence, an item of it (a list the loop appends to), or a
                    # container that may hold the sequence (not the items' numbers)
                    near = {f.id for f in _view_family(node, block.env.views)[:2]}
                    if other not in targets and (source.id in near or
                                                 _may_hold(node, {source.id})):
                        block.env.stale.setdefault(other, (
                            f"'{name}', a loop variable over a sequence holding it, is "
                            f"mutated in the loop (line {line})", None, other))
                return

    @staticmethod
    def _written_in_place(s: ast.While | ast.For) -> dict[str, list[ast.AST]]:
        """The variables a loop writes into in place (``R[i, j] = v``, ``R += v``,
        ``np.fill_diagonal(R, v)``), each with its writes in source order."""
        written: dict[str, list[ast.AST]] = {}
        for name, n in _loop_writes(s):
            written.setdefault(name, []).append(n)
        return written

    def _mark_loop_writes(self, s: ast.While | ast.For, block: Block) -> None:
        """A loop that writes into an array (``R[i, j] = v``, ``R += v``,
        ``np.fill_diagonal(R, v)``) would show the writes, in CPython, through views of
        it made before the loop (``row = R[0]``); inside the loop the array is the loop's
        own variable, no longer the node those views were made from, so they are marked
        here, from the loop's start: reading one as an array is refused."""
        written = self._written_in_place(s)
        listed: dict[str, int] = {}  # lists mutated by a method (``hs.append(x)``)
        for n in ast.walk(ast.Module(body=s.body + s.orelse, type_ignores=[])):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                    n.func.attr in _MUTATORS and isinstance(n.func.value, ast.Name) and \
                    inplace_target(n) is None:
                listed.setdefault(n.func.value.id, n.lineno + self.info.line_offset)
        for name, writes in written.items():
            current = block.env.vars.get(name)
            if current is None or _fresh_first(name, s.body):
                continue
            line = writes[0].lineno + self.info.line_offset
            self.note_param_write(current, writes[0], _bare(writes))
            for other in _sharing(name, current, block.env):
                block.env.stale.setdefault(other, (
                    f"'{name}' is updated in place in the loop (line {line})", current,
                    name))
        for name, line in listed.items():
            current = block.env.vars.get(name)
            if current is None:
                continue
            # the same list, or a container it was read from (``lst = d["k"]``)
            for other in _sharing(name, current, block.env):
                block.env.stale.setdefault(other, (
                    f"'{name}' is mutated in the loop (line {line})", None, name))

    def _loop(self, s: ast.While | ast.For, block: Block, test: ast.expr | None,
              for_info: tuple | None) -> Block | None:
        g = block.graph
        self.n_loops += 1
        counter = f"$i{self.n_loops}"
        names = sorted((assigned_names(s.body) | self._changed_by_calls(s, block) |
                        attribute_roots(s.body)) & self.locals)
        if for_info is not None:
            names += sorted(assigned_names([ast.Assign(targets=[s.target])]) - set(names))
            names.append(counter)
        names += sorted(self._guard_loop_calls(s, block, set(names)))
        header = self.new_graph(f"{g.name}:loop", g, s, "loop_header")
        after = self.new_graph(f"{g.name}:endloop", g, s, "join")
        self._mark_loop_writes(s, block)
        henv = block.env.copy()
        init = []
        for name in names:
            if name == counter:
                init.append(Constant(0, self.loc(s)))
            elif name in block.env.vars:
                init.append(block.env.vars[name])
            else:
                init.append(Constant(UNDEF, self.loc(s)))
                henv.maybe_undef.add(name)
            henv.vars[name] = header.add_parameter(name, self.loc(s))
            self.loop_inits[henv.vars[name].id] = init[-1]
            self.flows[henv.vars[name].id] = [init[-1]]
        g.output = self.apply(block, header, *init, node=s)
        hblock = Block(header, henv)
        if for_info is None:
            cond = self.condition(test, hblock)
        else:
            count = for_info[0]
            cond = self.apply(hblock, P.lt, henv.vars[counter], count, node=s.iter)
        body = self.new_graph(f"{g.name}:body", header, s, "loop_body")
        exit_ = self.new_graph(f"{g.name}:exit", header, s, "branch")
        bblock = Block(body, henv.copy())
        if for_info is not None:
            _, seq, start, step = for_info
            k = henv.vars[counter]
            if seq is None:
                item = self.apply(bblock, P.add, start,
                                  self.apply(bblock, P.mul, k, step, node=s.iter), node=s.iter)
            elif isinstance(seq, tuple):  # zip's sequences
                item = self.apply(bblock, P.make_tuple, *[
                    self.apply(bblock, P.getitem, q, k, node=s.iter) for q in seq],
                    node=s.iter)
            else:
                item = self.apply(bblock, P.getitem, seq, k, node=s.iter)
            bblock.env.vars[counter] = self.apply(bblock, P.add, k, 1, node=s.iter)
            self.assign(s.target, item, bblock)
        header.output = self.apply(
            hblock, self.apply(hblock, P.switch, cond, body, exit_, node=s), node=s)
        loop = Loop(header, after, names)
        self.loops.append(loop)
        try:
            b_end = self.stmts(s.body, bblock)
        finally:
            self.loops.pop()
        if b_end is not None:
            b_end.graph.output = b_end.graph.apply(
                header, *[b_end.env.vars.get(n, Constant(UNDEF)) for n in names],
                loc=self.loc(s))
            for n, v in zip(names, b_end.graph.output.inputs[1:], strict=True):
                self.flows[henv.vars[n].id].append(v)
        back = ([b_end.env.stale] if b_end is not None else []) + loop.back_stale
        self._check_stale_next_iteration(s, test, henv, back)
        xenv = henv.copy()
        xenv.stale = _merged_stale([henv.stale, *back])  # the exit after some iterations
        x_end = self.stmts(s.orelse, Block(exit_, xenv))
        if x_end is not None:
            x_end.graph.output = x_end.graph.apply(
                after, *[x_end.env.vars.get(n, Constant(UNDEF)) for n in names],
                loc=self.loc(s))
        aenv = block.env.copy()
        aenv.stale = _merged_stale([xenv.stale, *loop.exit_stale] +
                                   ([x_end.env.stale] if x_end is not None else []))
        for name in names:
            aenv.vars[name] = after.add_parameter(name, self.loc(s))
            self.flows[aenv.vars[name].id] = [henv.vars[name]]
            self.loop_inits[aenv.vars[name].id] = henv.vars[name]  # after no iteration
            if name not in block.env.vars or name in block.env.maybe_undef:
                aenv.maybe_undef.add(name)
        if x_end is None and not self._has_break(s.body):
            after.output = Constant(None)
            return None
        return Block(after, aenv)

    def _check_stale_next_iteration(self, s: ast.While | ast.For, test: ast.expr | None,
                                    henv: Env, back: list[dict]) -> None:
        """A list or dict mutated in the body through another name (``s2 = state;
        s2["n"] = 1``) is stale when the next iteration starts; refused where that
        iteration may read it before assigning it (CPython would show the change)."""
        for st in back:
            for name, (why, watched, _) in st.items():
                if watched is not None or name in henv.stale:
                    continue
                hit = (_read_first(name, [ast.Expr(test)]) if test is not None else None) \
                    or _read_first(name, s.body)
                if hit is not None:
                    raise self.error(
                        MycSyntaxError,
                        f"'{name}' shares its list or dict with a variable mutated in the "
                        f"loop: {why}; CPython would show the change in the next "
                        "iteration, myc lists and dicts are values", hit,
                        hint=f"copy it where it is made ({name} = list(...) or dict(...)), "
                        "or read the mutated variable")

    @staticmethod
    def _has_break(stmts: list[ast.stmt]) -> bool:
        def visit(node: ast.AST) -> bool:
            if isinstance(node, ast.Break):
                return True
            if isinstance(node, (ast.While, ast.For, ast.FunctionDef, ast.Lambda)):
                return False
            return any(visit(c) for c in ast.iter_child_nodes(node))

        return any(visit(s) for s in stmts)

    def _jump(self, s: ast.stmt, block: Block, to_header: bool) -> None:
        if not self.loops:
            word = "continue" if to_header else "break"
            raise self.error(MycSyntaxError, f"'{word}' outside a loop", s)
        loop = self.loops[-1]
        target = loop.header if to_header else loop.after
        (loop.back_stale if to_header else loop.exit_stale).append(dict(block.env.stale))
        vals = [block.env.vars.get(n, Constant(UNDEF)) for n in loop.names]
        block.graph.output = block.graph.apply(target, *vals, loc=self.loc(s))

    def stmt_Break(self, s: ast.Break, block: Block) -> None:
        self._jump(s, block, False)

    def stmt_Continue(self, s: ast.Continue, block: Block) -> None:
        self._jump(s, block, True)

    # -- nested functions --------------------------------------------------------
    def stmt_defs(self, defs: list[ast.FunctionDef], block: Block) -> None:
        """Consecutive ``def``s are bound together, so they may call each other."""
        graphs = []
        for d in defs:
            if d.decorator_list:
                raise self.error(MycSyntaxError, "decorators on nested functions are not "
                                 "supported", d.decorator_list[0])
            g = self.new_graph(d.name, block.graph, d, "function")
            block.env.vars[d.name] = Constant(g, self.loc(d))
            block.env.maybe_undef.discard(d.name)
            graphs.append(g)
        for d, g in zip(defs, graphs, strict=True):
            self.lower_nested(d, g, block)

    def lower_nested(self, tree: ast.FunctionDef | ast.Lambda, g: Graph, block: Block) -> None:
        info = SourceInfo(tree, self.info.filename, self.info.line_offset,
                          self.info.col_offset, getattr(tree, "name", "<lambda>"))
        inner = FunctionLowerer(info, self.py_fn, (self, block.env.copy()))
        inner.lower_into(g, defaults_block=block)
        g.flags["captures"] = inner.captures
        carried = {n for loop in self.loops for n in loop.names}
        g.flags["loop_captures"] = sorted(set(inner.captures) & carried)

    def _check_captures(self, name: str, g: Graph, node: ast.AST, block: Block) -> None:
        """Refuse a closure whose captured variable was reassigned after its creation:
        Python would see the new value (late binding); myc captured the old one."""
        for var, captured in g.flags.get("captures", {}).items():
            if var == name or var not in self.locals or captured is None:
                continue
            current = block.env.vars.get(var)
            if current is not None and current is not captured and not (
                    isinstance(current, Constant) and isinstance(captured, Constant)
                    and current.value is captured.value):
                raise self.error(
                    MycSyntaxError,
                    f"'{name}' is a closure reading '{var}', which is reassigned after the "
                    "closure is created: Python would see the new value, myc captures values "
                    "when a closure is created", node,
                    hint=f"pass '{var}' as an argument, or create the closure after the "
                    "assignment")

    # ------------------------------------------------------------------ names
    def read_name(self, name: str, node: ast.AST, block: Block) -> Node:
        if name in self.locals:
            if name not in block.env.vars:
                raise self.error(MycNameError,
                                 f"local variable '{name}' is referenced before assignment",
                                 node)
            value = block.env.vars[name]
            if name in block.env.maybe_undef:
                value = self.apply(block, P.check_defined, value, name, node=node)
                block.env.vars[name] = value
                block.env.maybe_undef.discard(name)
            if isinstance(value, Constant) and isinstance(value.value, Graph):
                self._check_captures(name, value.value, node, block)
            if name in block.env.stale:
                why, watched, source = block.env.stale[name]
                if source in _READ_REFUSED:
                    shown, hint = _READ_REFUSED[source]
                    raise self.error(MycValueError, f"'{name}' is read after {why}: CPython "
                                     f"would show {shown}", node, hint=hint.format(name=name))
                if watched is None:  # a list or dict mutated through another name
                    raise self.error(
                        MycSyntaxError,
                        f"'{name}' shares its list or dict with a variable mutated since: "
                        f"{why}; CPython would show the change here, myc lists and dicts "
                        "are values", node, hint=f"copy it where it is made ({name} = "
                        "list(...) or dict(...)), or read the mutated variable")
                if watched is _LIST_ONLY:  # refused if it is, or holds, a list or dict
                    return self.apply(
                        block, P.list_guard, value,
                        f"'{name}' may hold a list that was appended to since: {why}; "
                        "CPython would show the change here, myc lists are values|hint|"
                        "read it through the container the list was appended in", node=node)
                if not (watched.graph is None or block.graph.is_within(watched.graph)):
                    # updated on a path that has joined this one: the updated variable's
                    # value here has the type the guard needs (an update keeps it)
                    watched = block.env.vars.get(source) if source in self.locals else None
                if watched is not None:
                    value = self.apply(
                        block, P.alias_guard, value, watched,
                        f"'{name}' shares its array with a variable updated in place: "
                        f"{why}; CPython would show the new values here, myc arrays are "
                        "values (write 'x = x + ...' to make a new array, or read the "
                        "updated variable)", node=node)
            return value
        outer = self.outer
        depth = 0
        while outer is not None:
            lowerer, env = outer
            depth += 1
            if name in lowerer.locals:
                if depth == 1:
                    self.captures.setdefault(name, env.vars.get(name))
                if name not in env.vars:
                    raise self.error(
                        MycNameError,
                        f"free variable '{name}' is referenced before it is assigned in the "
                        "enclosing function", node,
                        hint="myc closures capture values when they are created; assign "
                        f"'{name}' before this function is defined")
                value = env.vars[name]
                if name in env.maybe_undef:
                    value = self.apply(block, P.check_defined, value, name, node=node)
                return value
            outer = lowerer.outer
        found, value = self.lookup_python(name)
        if not found:
            # as in Python, an error only if the line runs: a branch that specialization
            # removes (``if ax: plot(ax)`` with ``ax=None``) may name what is not imported
            return self.apply(block, P.undefined_name, Constant(name, self.loc(node)),
                              node=node)
        return self.python_value(value, name, node, block)

    def lookup_python(self, name: str) -> tuple[bool, Any]:
        fn = self.py_fn
        code = fn.__code__
        if fn.__closure__ and name in code.co_freevars:
            cell = fn.__closure__[code.co_freevars.index(name)]
            try:
                return True, cell.cell_contents
            except ValueError:
                return False, None
        if name in fn.__globals__:
            return True, fn.__globals__[name]
        if hasattr(_builtins, name):
            return True, getattr(_builtins, name)
        return False, None

    def python_value(self, value: Any, name: str, node: ast.AST, block: Block) -> Node:
        """A Python object found at parse time (a global, a closure cell) as an IR node."""
        loc = self.loc(node)
        if isinstance(value, types.ModuleType):
            raise self.error(MycTypeError, f"module '{name}' cannot be used as a value", node)
        if isinstance(value, (bool, int, float, type(None), np.generic)):
            return Constant(value, loc)
        if isinstance(value, (Graph, Primitive)):  # a transform's own program's function
            return Constant(value, loc)  # (myc.hessian(f) inside a compiled function)
        if isinstance(value, slice) and all(
                isinstance(v, (int, np.integer, type(None))) and not isinstance(v, bool)
                for v in (value.start, value.stop, value.step)):
            # slice(a, b) kept in a structure (bounds from np.prod are NumPy ints)
            return Constant(slice(*(None if v is None else int(v) for v in (
                value.start, value.stop, value.step))), loc)
        if effects.captured(value) is not None:  # a generator: by reference
            return Constant(effects.captured(value), loc)
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biuf":
                raise self.error(MycTypeError, f"global array '{name}' has unsupported dtype "
                                 f"{value.dtype}", node)
            const = value.copy()
            const.flags.writeable = False
            return Constant(const, loc)
        if isinstance(value, (set, frozenset)) and all(_static_key(k) for k in value):
            # a set of constants (``HOLES = {5, 7}``): read when the program is parsed, for
            # ``s in HOLES``, ``len`` and iteration in CPython's order at that moment
            return Constant(const_set(value), loc)
        if isinstance(value, (list, dict)) or (isinstance(value, tuple) and
                                               type(value) is not tuple):
            # a list, dict or namedtuple: a static structure, read when the program is
            # parsed (like a global array)
            if type(value) not in (list, dict) and not is_namedtuple(value):
                raise self.error(MycNameError, f"'{name}' ({type(value).__name__}) is not "
                                 "supported by myc", node)
            items = list(value.values()) if isinstance(value, dict) else list(value)
            if isinstance(value, dict) and not all(
                    _static_key(k) or objects.is_user_object(k) for k in value):
                raise self.error(MycTypeError, f"'{name}' is a dict whose keys are not all "
                                 "str, int, float, bool or None", node)
            elems = [self.python_value(v, name, node, block) for v in items]
            meta = ListValue if isinstance(value, list) else tuple(value) if isinstance(
                value, dict) else type(value)
            if all(isinstance(e, Constant) and not isinstance(e.value, (Graph, Primitive))
                   for e in elems):
                return Constant(P.pack.impl(meta, tuple(e.value for e in elems)), loc)
            return self.apply(block, P.pack, Constant(meta),
                              self.apply(block, P.make_tuple, *elems, node=node), node=node)
        if isinstance(value, tuple):
            elems = [self.python_value(v, name, node, block) for v in value]
            if all(isinstance(e, Constant) and not isinstance(e.value, (Graph, Primitive))
                   for e in elems):
                return Constant(tuple(e.value for e in elems), loc)
            return self.apply(block, P.make_tuple, *elems, node=node)
        if id(value) in B.MATH_FUNCS:  # math.sin as a value: Python's semantics, as a call
            from myc.frontend import math_values

            wrapper = getattr(math_values, B.MATH_FUNCS[id(value)], None)
            if wrapper is not None:
                return Constant(parse(wrapper), loc)
        linalg_library.note_callee(value, B.LIBRARY)
        lib = library_function(value)
        if lib is not None:
            return Constant(self.library_graph(lib, name, node), loc)
        prim = B.PRIMITIVE_OF.get(id(value))
        if prim is not None:
            return Constant(prim, loc)
        if isinstance(value, Primitive) or value is ZERO:
            return Constant(value, loc)
        graph_of = getattr(value, "__myc_graph__", None)
        if graph_of is not None:
            return Constant(graph_of(), loc)
        if id(value) in B.DTYPES:
            return Constant(value, loc)
        if isinstance(value, type) and id(value) in B.BUILTIN_DTYPES:
            return Constant(value, loc)
        inner = _unwrap(value)
        if isinstance(inner, types.FunctionType):
            refusal = scipy_refusal(inner)
            if refusal is not None:  # SciPy's own Python source is not compiled
                raise self.error(MycNameError, refusal[0], node, hint=refusal[1])
            if in_library(inner.__code__.co_filename) and inner is value:
                return Constant(self.library_graph(inner, name, node), loc)
            return Constant(parse(inner), loc)
        if isinstance(value, types.MethodType) and is_namespace(value.__self__):
            ns = namespace_name(value.__self__)
            raise self.error(
                MycNameError, f"{ns}.{value.__name__} is not supported by myc", node,
                hint="supported: " + ", ".join(
                    f"{ns}.{m}" for m in supported_methods(value.__self__)))
        if is_namespace(value):
            ns = namespace_name(value)
            raise self.error(
                MycNameError, f"{ns} cannot be used as a value in myc (a frozen "
                f"distribution such as {ns}(loc, scale) is not supported)", node,
                hint=f"call its methods with the parameters, e.g. {ns}.logpdf(x, loc, "
                "scale)")
        if value is B.RANGE:
            raise self.error(MycSyntaxError, "range() is only supported as the iterable of a "
                             "'for' loop", node)
        kind = type(value).__name__
        mod = getattr(value, "__module__", None) or ""
        if isinstance(value, np.ufunc) or mod.split(".")[0] in ("numpy", "scipy"):
            numpy_own = mod.startswith("numpy") or (
                isinstance(value, np.ufunc) and getattr(np, value.__name__, None) is value)
            lib = "NumPy" if numpy_own else "SciPy"
            raise self.error(MycNameError, f"'{name}' ({lib}'s {kind} "
                             f"{getattr(value, '__name__', '?')}) is not supported by myc",
                             node, hint="the NumPy and SciPy functions myc supports are "
                             "listed in its docs/numpy.md and docs/scipy.md")
        if objects.is_user_object(value):  # a static structure, its methods compiled in
            return objects.object_node(self, value, name, node, block, parse)
        if isinstance(value, type) and mod not in ("builtins", ""):
            raise objects.refuse_construction(self, value, node)
        if mod not in ("builtins", "") and not isinstance(value, (types.BuiltinFunctionType,
                                                                 types.ModuleType)):
            raise self.error(
                MycNameError, f"'{name}' holds an object of class '{kind}': myc compiles "
                "numbers, arrays, tuples, lists, dicts and namedtuples, not objects of a "
                "user's class (their attributes and methods)", node,
                hint="keep the parameters in a list, dict or namedtuple and pass it as an "
                     "argument; call the object's methods outside the compiled function")
        raise self.error(MycNameError, f"'{name}' ({kind}) is not supported by myc", node)

    def library_graph(self, fn: types.FunctionType, name: str, node: ast.AST) -> Graph:
        """The graph of library function ``fn`` (myc's NumPy/SciPy functions, or NumPy's or
        SciPy's own Python source) called as ``name`` at ``node``: a construct in its source
        outside the subset is reported at the user's call, naming the function."""
        try:
            return parse(fn)
        except MycError as exc:
            if exc.loc is None or not in_library(exc.loc.filename) or \
                    in_library(self.info.filename):  # named at the user's call, once
                raise
            where = ""
            if not exc.loc.filename.startswith(LIBRARY_DIRS[0]):  # NumPy's/SciPy's source
                where = f" (in {fn.__module__}.{fn.__qualname__}, {exc.loc})"
            raise type(exc)(f"{name} is not supported by myc here: {exc.message}{where}",
                            self.loc(node), exc.hint) from None

    def _static_callee(self, node: ast.expr, block: Block) -> Any:
        """The Python object an expression names at parse time, or ``None``."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return None
            outer = self.outer
            while outer is not None:
                if node.id in outer[0].locals:
                    return None
                outer = outer[0].outer
            found, value = self.lookup_python(node.id)
            return value if found else None
        if isinstance(node, ast.Attribute):
            base = self._static_callee(node.value, block)
            if _is_namespace(base):
                if not hasattr(base, node.attr):
                    what = f"module '{base.__name__}'" if isinstance(
                        base, types.ModuleType) else f"class '{base.__name__}'" if \
                        isinstance(base, type) else \
                        f"'{namespace_name(base) or 'namespace'}'"
                    raise self.error(MycNameError,
                                     f"{what} has no attribute '{node.attr}'", node)
                return getattr(base, node.attr)
        return None

    # ------------------------------------------------------------------ expressions
    def expr(self, e: ast.expr, block: Block) -> Node:
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            what = _UNSUPPORTED_EXPR.get(type(e).__name__, f"'{type(e).__name__}' expression")
            raise self.error(MycSyntaxError, f"{what} is not supported", e)
        return method(e, block)

    def expr_Constant(self, e: ast.Constant, block: Block) -> Node:
        v = e.value
        if isinstance(v, (complex, bytes)):
            raise self.error(MycTypeError, f"{type(v).__name__} constants are not supported", e)
        return Constant(v, self.loc(e))

    def expr_Name(self, e: ast.Name, block: Block) -> Node:
        return self.read_name(e.id, e, block)

    def expr_Tuple(self, e: ast.Tuple | ast.List, block: Block) -> Node:
        if any(isinstance(elt, ast.Starred) for elt in e.elts):
            return self._starred_display(e, block)
        elems = [self.expr(x, block) for x in e.elts]
        for x, elt in zip(elems, e.elts, strict=True):
            self._no_late_binding(x, elt, "a tuple" if isinstance(e, ast.Tuple) else "a list")
        if all(isinstance(x, Constant) and not isinstance(x.value, (Graph, Primitive))
               for x in elems):
            return Constant(tuple(x.value for x in elems), self.loc(e))
        return self.apply(block, P.make_tuple, *elems, node=e)

    def _starred_display(self, e: ast.Tuple | ast.List, block: Block) -> Node:
        """``(*a, b, *c)``, ``[*xs, y]``: the items of each starred sequence (a tuple, a
        list, an array's rows: its length known when the program is specialized) joined
        with the others, as a tuple (``expr_List`` makes it a list)."""
        out: Node = Constant((), self.loc(e))
        for elt in e.elts:
            if isinstance(elt, ast.Starred):
                part = self.py_call("to_tuple", [self.expr(elt.value, block)], elt, block)
            else:
                x = self.expr(elt, block)
                self._no_late_binding(x, elt, "a tuple" if isinstance(e, ast.Tuple) else
                                      "a list")
                part = self.apply(block, P.make_tuple, x, node=elt)
            out = self.apply(block, P.add, out, part, node=e)
        return out

    def _no_late_binding(self, x: Node, e: ast.AST, where: str) -> None:
        """Refuse storing a closure made in a loop (a comprehension is one) that reads a
        variable the loop assigns: called later, Python's closure sees the variable's
        last value (``[lambda: i for i in range(3)]`` all give 2); myc's captures the
        value of its own iteration.  Called at once (``myc.grad(lambda w: f(w, xi))``)
        the two agree, so only stores into containers are refused."""
        if isinstance(x, Constant) and isinstance(x.value, Graph) and \
                x.value.flags.get("loop_captures"):
            var = x.value.flags["loop_captures"][0]
            raise self.error(
                MycSyntaxError,
                f"a closure created in a loop and reading the loop variable '{var}' is "
                f"stored in {where}: Python would see the variable's last value when it "
                "is called later, myc captures the value of each iteration", e,
                hint=f"pass '{var}' as an argument (e.g. a default: lambda t, {var}={var}:"
                " ...)")

    def expr_List(self, e: ast.List, block: Block) -> Node:
        """A list: a ``ListValue`` (a tuple of static length, myc.prims.containers)."""
        items = self.expr_Tuple(e, block)
        if isinstance(items, Constant):
            return Constant(ListValue(items.value), self.loc(e))
        return self.apply(block, P.pack, Constant(ListValue), items, node=e)

    def numpy_arg(self, a: ast.expr, block: Block) -> Node:
        """An argument NumPy reads as a sequence (a shape, axes, ``np.array([...])``):
        list displays in it are plain tuples."""
        if isinstance(a, (ast.List, ast.Tuple)) and not any(
                isinstance(x, ast.Starred) for x in a.elts):
            elems = [self.numpy_arg(x, block) for x in a.elts]
            if all(isinstance(x, Constant) and not isinstance(x.value, (Graph, Primitive))
                   for x in elems):
                return Constant(tuple(x.value for x in elems), self.loc(a))
            return self.apply(block, P.make_tuple, *elems, node=a)
        return self.expr(a, block)

    def expr_Dict(self, e: ast.Dict, block: Block) -> Node:
        """A dict: a ``DictValue``; its keys are part of its structure, so they must be
        known when the program is specialized (constants, or loop variables over static
        keys)."""
        if any(k is None for k in e.keys):  # {**a, "k": v, **b}: merged in order
            out: Node = Constant(DictValue((), ()), self.loc(e))
            for k, v in zip(e.keys, e.values, strict=True):
                value = self.expr(v, block)
                out = self.py_call("dict_merge", [out, value], v, block) if k is None else \
                    self.py_call("setitem", [out, self.expr(k, block), value], k, block)
            return out
        keys, values = [], []
        for k, v in zip(e.keys, e.values, strict=True):
            keys.append(self.expr(k, block))
            values.append(self.expr(v, block))
            self._no_late_binding(values[-1], v, "a dict")
        if all(isinstance(k, Constant) for k in keys):
            order: list[Any] = []
            value_of: dict[Any, Node] = {}
            for k, v, kn in zip(keys, values, e.keys, strict=True):
                if not _static_key(k.value):
                    raise self.error(MycTypeError, f"dict key {k.value!r} is not supported: "
                                     "keys are str, int, float, bool or None (or tuples "
                                     "of these)", kn)
                if k.value not in value_of:
                    order.append(k.value)
                value_of[k.value] = v
            vals = [value_of[k] for k in order]
            if all(isinstance(v, Constant) and not isinstance(v.value, (Graph, Primitive))
                   for v in vals):
                return Constant(DictValue(tuple(order), [v.value for v in vals]),
                                self.loc(e))
            return self.apply(block, P.pack, Constant(tuple(order)),
                              self.apply(block, P.make_tuple, *vals, node=e), node=e)
        acc: Node = Constant(DictValue((), ()), self.loc(e))
        for k, v, kn in zip(keys, values, e.keys, strict=True):
            acc = self.py_call("setitem", [acc, k, v], kn, block)
        return acc

    def _comprehension(self, e: ast.ListComp | ast.GeneratorExp | ast.DictComp,
                       block: Block) -> Node:
        """A comprehension as Python 3 scopes it: a nested function, called at once, whose
        body is the ``for``/``if`` statements appending to a fresh list (a generator
        expression is a list too: the values are computed at once)."""
        acc = "$acc"
        if isinstance(e, ast.DictComp):
            init: ast.expr = ast.Dict(keys=[], values=[])
            stmt: ast.stmt = ast.Assign(
                targets=[ast.Subscript(value=ast.Name(id=acc, ctx=ast.Load()), slice=e.key,
                                       ctx=ast.Store())], value=e.value)
        else:
            init = ast.List(elts=[], ctx=ast.Load())
            stmt = ast.Expr(value=ast.Call(
                func=ast.Attribute(value=ast.Name(id=acc, ctx=ast.Load()), attr="append",
                                   ctx=ast.Load()), args=[e.elt], keywords=[]))
        ast.copy_location(stmt, e)
        for gen in reversed(e.generators):
            if gen.is_async:
                raise self.error(MycSyntaxError, "'async for' is not supported", gen.target)
            for cond in reversed(gen.ifs):
                stmt = ast.copy_location(ast.If(test=cond, body=[stmt], orelse=[]), cond)
            stmt = ast.copy_location(ast.For(target=gen.target, iter=gen.iter, body=[stmt],
                                             orelse=[]), gen.iter)
        kind = _COMPREHENSIONS[type(e).__name__]
        tree = ast.FunctionDef(
            name=f"<{kind}>", args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                                                 kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                 defaults=[]),
            body=[ast.Assign(targets=[ast.Name(id=acc, ctx=ast.Store())], value=init), stmt,
                  ast.Return(value=ast.Name(id=acc, ctx=ast.Load()))],
            decorator_list=[], returns=None)
        for node in (tree, *tree.body):
            ast.copy_location(node, e)
        ast.fix_missing_locations(tree)
        g = self.new_graph(f"{block.graph.name}:{kind.split()[0]}comp", block.graph, e,
                           "function")
        self.lower_nested(tree, g, block)
        return self.apply(block, Constant(g, self.loc(e)), node=e)

    expr_ListComp = _comprehension
    expr_GeneratorExp = _comprehension
    expr_DictComp = _comprehension

    def _sequence_argument(self, e: ast.AST) -> bool:
        parents = self.__dict__.get("_parents")
        if parents is None:
            parents = self._parents = {id(c): p for p in ast.walk(self.info.tree)
                                       for c in ast.iter_child_nodes(p)}
        p = parents.get(id(e))
        if isinstance(p, (ast.Call, ast.keyword)) or (isinstance(p, ast.For) and p.iter is e):
            return True
        return isinstance(p, (ast.List, ast.Tuple)) and self._sequence_argument(p)

    def expr_BinOp(self, e: ast.BinOp, block: Block) -> Node:
        op = _BINOPS.get(type(e.op))
        if op is None:
            raise self.error(MycSyntaxError,
                             f"operator '{type(e.op).__name__}' is not supported", e)
        return self.apply(block, getattr(P, op), self.expr(e.left, block),
                          self.expr(e.right, block), node=e)

    def expr_UnaryOp(self, e: ast.UnaryOp, block: Block) -> Node:
        operand = self.expr(e.operand, block)
        if isinstance(e.op, (ast.USub, ast.UAdd)) and isinstance(operand, Constant) and \
                type(operand.value) in (int, float):
            # a signed literal is a literal (so ``def f(x, k=-0.5)`` has a constant default)
            value = -operand.value if isinstance(e.op, ast.USub) else operand.value
            return Constant(value, self.loc(e))
        return self.apply(block, getattr(P, _UNARYOPS[type(e.op)]), operand, node=e)

    def _lazy(self, block: Block, e: ast.AST, label: str, fn) -> Graph:
        """A parameterless branch graph whose output ``fn(block)`` computes."""
        g = self.new_graph(f"{block.graph.name}:{label}", block.graph, e, "branch")
        g.output = fn(Block(g, block.env.copy()))
        return g

    def _select(self, block: Block, cond: Node, t: Graph, f: Graph, e: ast.AST) -> Node:
        sw = self.apply(block, P.switch, self.apply(block, P.truth, cond, node=e), t, f, node=e)
        return self.apply(block, sw, node=e)

    def expr_IfExp(self, e: ast.IfExp, block: Block) -> Node:
        cond = self.condition(e.test, block)
        t = self._lazy(block, e.body, "then", lambda b: self.expr(e.body, b))
        f = self._lazy(block, e.orelse, "else", lambda b: self.expr(e.orelse, b))
        return self._select(block, cond, t, f, e)

    def condition(self, e: ast.expr, block: Block) -> Node:
        """The truth of a test (``if``, ``while``, ``assert``, a conditional expression).
        Only the truth of ``a and b`` is read there, so each operand is made a bool
        first: the short circuit's two sides then have one type where ``a`` depends on
        data (``while err > tol and it < n``: a NumPy bool and a Python bool would not
        merge, and the loop could not be a loop node)."""
        if isinstance(e, ast.BoolOp):
            return self.apply(block, P.truth, self._short_circuit(e, block, self.condition),
                              node=e)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return self.apply(block, P.not_, self.condition(e.operand, block), node=e)
        return self.apply(block, P.truth, self.expr(e, block), node=e)

    def expr_BoolOp(self, e: ast.BoolOp, block: Block) -> Node:
        return self._short_circuit(e, block, self.expr)

    def _short_circuit(self, e: ast.BoolOp, block: Block, operand: Callable) -> Node:
        """``a and b`` / ``a or b``, each operand lowered by ``operand`` (``expr``, or
        ``condition`` where only the truth is read): the right side runs only when the
        left one does not decide."""
        is_and = isinstance(e.op, ast.And)

        def chain(values: list[ast.expr], b: Block) -> Node:
            first = operand(values[0], b)
            if len(values) == 1:
                return first
            rest = self._lazy(b, values[1], "rhs", lambda bb: chain(values[1:], bb))
            keep = self._lazy(b, values[0], "short", lambda bb: first)
            return self._select(b, first, rest, keep, e) if is_and else \
                self._select(b, first, keep, rest, e)

        return chain(e.values, block)

    def expr_Compare(self, e: ast.Compare, block: Block) -> Node:
        for op in e.ops:
            if type(op) not in _CMPOPS:
                raise self.error(MycSyntaxError,
                                 f"comparison '{type(op).__name__}' is not supported", e)

        def chain(left: Node, i: int, b: Block) -> Node:
            right = self.expr(e.comparators[i], b)
            op = type(e.ops[i])
            if op in (ast.In, ast.NotIn):  # a dict's keys, a list's or tuple's items
                res = self.apply(b, P.contains, right, left, node=e)
                if op is ast.NotIn:
                    res = self.apply(b, P.not_, res, node=e)
            elif op in (ast.Is, ast.IsNot):  # with None/True/False: known when specialized
                res = self.apply(b, P.is_, left, right, node=e)
                if op is ast.IsNot:
                    res = self.apply(b, P.not_, res, node=e)
            elif op in (ast.Eq, ast.NotEq) and _tuple_node(left) and _tuple_node(right):
                res = self.py_call("seq_eq", [left, right], e, b)  # (r, c) == GOAL
                if op is ast.NotEq:
                    res = self.apply(b, P.not_, res, node=e)
            else:
                res = self.apply(b, getattr(P, _CMPOPS[op]), left, right, node=e)
            if i == len(e.ops) - 1:
                return res
            rest = self._lazy(b, e, "cmp", lambda bb: chain(right, i + 1, bb))
            keep = self._lazy(b, e, "short", lambda bb: res)
            return self._select(b, res, rest, keep, e)

        return chain(self.expr(e.left, block), 0, block)

    def _partial_lambda(self, e: ast.Call, block: Block) -> ast.Lambda:
        """``functools.partial(f, a, k=v)`` as ``lambda *r, **kw: f(a, *r, k=v, **kw)``:
        the same function, since arguments are values (a name is captured when the
        partial is made, as a closure captures it)."""
        if not e.args or any(isinstance(a, ast.Starred) for a in e.args) or any(
                k.arg is None for k in e.keywords):
            raise self.error(MycTypeError, "functools.partial() is supported as "
                             "partial(f, *args, **kwargs) with the function and arguments "
                             "written out", e)
        # the bound arguments are computed once, where the partial is made (a draw in
        # one draws once), into hidden locals the lambda captures
        bound = []
        for i, a in enumerate(e.args[1:]):
            if isinstance(a, (ast.Name, ast.Constant)):
                bound.append(a)
                continue
            hidden = f"__myc_partial_{id(e)}_{i}"
            self.locals.add(hidden)
            block.env.vars[hidden] = self.expr(a, block)
            bound.append(ast.copy_location(ast.Name(id=hidden, ctx=ast.Load()), a))
        keywords = []
        for i, k in enumerate(e.keywords):
            if isinstance(k.value, (ast.Name, ast.Constant)):
                keywords.append(k)
                continue
            hidden = f"__myc_partial_{id(e)}_k{i}"
            self.locals.add(hidden)
            block.env.vars[hidden] = self.expr(k.value, block)
            keywords.append(ast.keyword(arg=k.arg, value=ast.copy_location(
                ast.Name(id=hidden, ctx=ast.Load()), k.value)))
        e = ast.copy_location(ast.Call(func=e.func, args=[e.args[0], *bound],
                                       keywords=keywords), e)
        lam = self._partial_fixed(e, block) or self._partial_star(e)
        for node in ast.walk(lam):
            if not hasattr(node, "lineno") and "lineno" in node._attributes:
                ast.copy_location(node, e)
        return lam

    def _partial_fixed(self, e: ast.Call, block: Block) -> ast.Lambda | None:
        """The partial of a Python function whose signature is plain: a lambda taking
        the parameters left, so it can be called through a variable (``map``)."""
        import inspect

        f = self._static_callee(e.args[0], block)
        if not isinstance(f, types.FunctionType):
            return None
        params = list(inspect.signature(f).parameters.values())
        if any(q.kind not in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD) for q in params):
            return None
        named = {k.arg for k in e.keywords}
        left = [q for q in params[len(e.args) - 1:] if q.name not in named]
        if any(q.default is not q.empty and not isinstance(q.default, (
                int, float, str, bool, type(None))) for q in left):
            return None
        call = ast.Call(func=e.args[0], args=list(e.args[1:]), keywords=[
            *e.keywords, *(ast.keyword(arg=q.name, value=ast.Name(id=q.name, ctx=ast.Load()))
                           for q in left)])
        return ast.Lambda(args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=q.name) for q in left], vararg=None,
            kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[ast.Constant(q.default) for q in left if q.default is not q.empty]),
            body=call)

    @staticmethod
    def _partial_star(e: ast.Call) -> ast.Lambda:
        rest, kw = "__myc_partial_args", "__myc_partial_kwargs"
        call = ast.Call(func=e.args[0], args=[*e.args[1:], ast.Starred(
            value=ast.Name(id=rest, ctx=ast.Load()), ctx=ast.Load())],
            keywords=[*e.keywords, ast.keyword(arg=None, value=ast.Name(id=kw,
                                                                         ctx=ast.Load()))])
        return ast.Lambda(args=ast.arguments(
            posonlyargs=[], args=[], vararg=ast.arg(arg=rest), kwonlyargs=[], kw_defaults=[],
            kwarg=ast.arg(arg=kw), defaults=[]), body=call)

    def expr_JoinedStr(self, e: ast.JoinedStr, block: Block) -> Node:
        """An f-string of values known when the program is compiled (``params[f"W{i}"]``
        in a loop over layers): a string, formatted then.  Of data (a float computed from
        the arguments) it is refused when its line runs (plotting code under ``if ax:``
        may hold one), as myc has no strings to compute with at run time."""
        spec: list = []
        values: list[Node] = []
        for part in e.values:
            if isinstance(part, ast.Constant):
                spec.append(str(part.value))
                continue
            fmt = part.format_spec
            if fmt is not None and not all(isinstance(p, ast.Constant) for p in fmt.values):
                return self.apply(block, P.refused, Constant(None, self.loc(e)),
                                  "an f-string with a computed format spec is not "
                                  "supported", node=e)
            conv = chr(part.conversion) if part.conversion >= 0 else ""
            spec.append((len(values), conv, "".join(str(p.value) for p in fmt.values)
                         if fmt is not None else ""))
            values.append(self.expr(part.value, block))
        return self.apply(block, P.fstring, self.apply(block, P.make_tuple, *values, node=e),
                          Constant(tuple(spec), self.loc(e)), node=e)

    def expr_Lambda(self, e: ast.Lambda, block: Block) -> Node:
        g = self.new_graph(f"{block.graph.name}:lambda", block.graph, e, "function")
        self.lower_nested(e, g, block)
        return Constant(g, self.loc(e))

    def expr_Slice(self, e: ast.Slice, block: Block) -> Node:
        parts = [self.expr(p, block) if p is not None else Constant(None)
                 for p in (e.lower, e.upper, e.step)]
        if all(isinstance(p, Constant) for p in parts):
            return Constant(slice(*(p.value for p in parts)), self.loc(e))
        return self.apply(block, P.make_slice, *parts, node=e)

    def subscript_index(self, index: ast.expr, block: Block) -> Node:
        """The index of ``x[index]``, read or written: ``x[[0, 2]]`` is an integer-array
        index, as NumPy reads it (not the tuple ``x[0, 2]``: ``A[[0, 1]] = v`` writes
        rows 0 and 1)."""
        if isinstance(index, ast.List):
            return self.apply(block, P.array, self.numpy_arg(index, block), None,
                              node=index)
        return self.expr(index, block)

    def expr_Subscript(self, e: ast.Subscript, block: Block) -> Node:
        joiner = self._static_callee(e.value, block)
        if joiner is np.r_ or joiner is np.c_:  # np.c_[np.ones(n), X]: a concatenation
            elts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            if any(isinstance(x, ast.Slice) or (isinstance(x, ast.Constant) and isinstance(
                    x.value, str)) for x in elts):
                raise self.error(MycSyntaxError, f"{ast.unparse(e.value)}[...] with slices "
                                 "or string directives is not supported (arrays, lists and "
                                 "numbers are)", e, hint="use np.arange / np.concatenate")
            items = self.apply(block, P.make_tuple, *[self.numpy_arg(x, block) for x in elts],
                               node=e)
            lib = _library_graph("index_r" if joiner is np.r_ else "index_c")
            return self.apply(block, Constant(lib, self.loc(e)), items, node=e)
        value = self.expr(e.value, block)
        index = self.subscript_index(e.slice, block)
        node = self.apply(block, P.getitem, value, index, node=e)
        if not _slices_only(index):
            self.index_loads.append((block.graph, node))
        return node

    def expr_Attribute(self, e: ast.Attribute, block: Block) -> Node:
        static = self._static_callee(e.value, block)
        if _is_namespace(static):
            obj = self._static_callee(e, block)
            mod = getattr(static, "__name__", None) or namespace_name(static) or "P"
            return self.python_value(obj, f"{mod}.{e.attr}", e, block)
        value = self.expr(e.value, block)
        if _undefined(value):
            return value
        attr = e.attr
        if attr == "T":
            return self.apply(block, P.transpose, value, None, node=e)
        if attr in ("shape", "ndim", "size", "dtype"):
            return self.apply(block, getattr(P, attr), value, node=e)
        # a namedtuple's field (anything else is refused by field_index, at this line)
        pos = self.apply(block, P.field_index, value, attr, node=e)
        return self.apply(block, P.getitem, value, pos, node=e)

    # -- calls -------------------------------------------------------------------
    def expr_Call(self, e: ast.Call, block: Block) -> Node:
        if (any(isinstance(a, ast.Starred) for a in e.args) or any(
                k.arg is None for k in e.keywords)) and not effects.is_dims_draw(e):
            for a in (*e.args, *(k.value for k in e.keywords)):
                self.check_subset(a.value if isinstance(a, ast.Starred) else a)
            return self.star_call(e, block)
        # name an unsupported argument (``sum(x for x in t)``) before the callee
        for a in (*e.args, *(k.value for k in e.keywords)):
            self.check_subset(a.value if isinstance(a, ast.Starred) else a)
        if isinstance(e.func, ast.Attribute):
            static_base = self._static_callee(e.func.value, block)
            if isinstance(static_base, np.ufunc) and e.func.attr in ("accumulate", "reduce"):
                # np.logaddexp.accumulate(eta): NumPy's scan (myc/frontend/np_library.py)
                g = _library_graph(f"ufunc_{e.func.attr}")
                args, kwargs = self._args(e, block)
                return self.call_graph(g, Constant(g, self.loc(e)),
                                       [Constant(static_base.__name__), *args], kwargs, e,
                                       block)
            if not _is_namespace(static_base):
                return self.method_call(e, block)
        callee = self._static_callee(e.func, block)
        if callee is not None:
            return self.static_call(callee, e, block)
        fn = self.expr(e.func, block)
        if _undefined(fn):
            return fn
        return self.call_node(fn, e, block)

    def _args(self, e: ast.Call, block: Block, numpy: bool = False
              ) -> tuple[list[Node], dict[str, Node]]:
        """A call's argument nodes; ``numpy``: NumPy reads list displays as sequences."""
        arg = self.numpy_arg if numpy else self.expr
        args = [arg(a, block) for a in e.args]
        kwargs = {k.arg: arg(k.value, block) for k in e.keywords}
        return args, kwargs

    def call_node(self, fn: Node, e: ast.Call, block: Block) -> Node:
        args, kwargs = self._args(e, block)
        if fn.id in self.bound_transforms:  # myc.grad(obj.loss)(x): loss(obj, x)'s
            return self._bound_transform_call(fn, args, kwargs, e, block)
        if isinstance(fn, Constant) and isinstance(fn.value, Graph):
            return self.call_graph(fn.value, fn, args, kwargs, e, block)
        if isinstance(fn, Constant) and isinstance(fn.value, Primitive):
            return self.call_prim(fn.value, args, kwargs, e, block)
        # an object with ``__call__`` (known when the program specializes) or a function:
        # its signature, known then, binds keywords, defaults and ``*args`` (call_bound)
        kw = self.apply(block, P.pack, Constant(tuple(kwargs)), self.apply(
            block, P.make_tuple, *kwargs.values(), node=e), node=e)
        obj = self._lazy(block, e, "call_object", lambda b: self.py_call("call_bound", [
            self.apply(b, P.getitem, fn, self.apply(b, P.method_field, fn, "__call__",
                                                    node=e), node=e),
            self.apply(b, P.make_tuple, fn, *args, node=e), kw], e, b))
        # (myc's own library calls its function values directly: call_bound itself is one)
        direct = not kwargs and in_library(self.info.filename)
        plain = self._lazy(block, e, "call", lambda b: self.apply(b, fn, *args, node=e)
                           if direct else self.py_call("call_bound", [
                               fn, self.apply(b, P.make_tuple, *args, node=e), kw], e, b))
        out = self._select(block, self.apply(block, P.is_object, fn, node=e), obj, plain, e)
        self.guard_call_through(fn, None, [*enumerate(args), *kwargs.items()], e, block)
        return out

    def _bound_transform_call(self, fn: Node, args: list[Node], kwargs: dict[str, Node],
                              e: ast.Call, block: Block) -> Node:
        """A call of ``myc.grad(obj.m)`` made inside the program for an object known
        when it specializes: a method's transform takes ``self`` first
        (``transform_value``), so ``obj`` is passed -- unless ``m`` is an attribute
        holding a function (``binds_self``)."""
        obj, attr = self.bound_transforms[fn.id]
        kw = self.apply(block, P.pack, Constant(tuple(kwargs)), self.apply(
            block, P.make_tuple, *kwargs.values(), node=e), node=e)

        def call(b: Block, *first: Node) -> Node:
            return self.py_call("call_bound", [fn, self.apply(
                b, P.make_tuple, *first, *args, node=e), kw], e, b)

        method = self._lazy(block, e, "method", lambda b: call(b, obj))
        plain = self._lazy(block, e, "attribute", lambda b: call(b))
        return self._select(block, self.apply(block, P.binds_self, obj, attr, node=e),
                            method, plain, e)

    def guard_call_through(self, fn: Node, attr: str | None, passed: list[tuple[Any, Node]],
                           e: ast.AST, block: Block, why: str | None = None) -> None:
        """After ``f(a)`` (or ``obj.attr(a)``) through a function value, whose callee is
        known only when the program specializes: the caller's variables that may hold
        an argument are read through ``unchanged_by``, refused then if the callee
        changes that argument in place (CPython's caller sees the change; write-back
        needs the callee here).  ``passed``: (position or keyword, argument node).
        Where ``fn`` and the argument are this function's parameters, the caller of
        this function checks it in turn (``param_writes_via``)."""
        if in_library(self.info.filename):
            return
        line = e.lineno + self.info.line_offset  # type: ignore[attr-defined]
        fname = self.params.get(fn.id) if isinstance(fn, Parameter) else None
        for k, a in passed:
            if isinstance(a, Constant):
                continue
            if fname is not None:
                for pid, pname in self.params.items():
                    if pname not in self.param_writes_via and pname != fname and \
                            _part_of(a, {pid}, self.loop_inits):
                        self.param_writes_via[pname] = (fname, (attr, k), line)
            family = {f.id for f in _view_family(a, block.env.views)}
            for other, node in list(block.env.vars.items()):
                if other not in self.locals or other in block.env.stale or not (
                        any(f.id in family for f in _view_family(node, block.env.views))
                        or _holds(node, family)):
                    continue
                msg = why or f"'{other}' may be changed in place by the call at line {line}"
                block.env.vars[other] = self.apply(block, P.unchanged_by, node, fn, Constant(
                    (attr, k)), Constant(msg), node=e)

    def call_graph(self, g: Graph, fn: Node, args: list[Node], kwargs: dict[str, Node],
                   e: ast.Call, block: Block) -> Node:
        sig: Signature | None = g.flags.get("signature")
        if sig is None:  # still being parsed (recursion): positional only
            if kwargs:
                raise self.error(MycTypeError, "keyword arguments in a recursive call are not "
                                 "supported", e)
            return self.apply(block, fn, *args, node=e)
        npos = sig.n_positional
        if len(args) > npos and sig.varargs is None:
            raise self.error(MycTypeError, f"{g.name}() takes {npos} positional "
                             f"arguments but {len(args)} were given", e)
        bound: dict[str, Node] = dict(zip(sig.names[:npos], args, strict=False))
        extra_kw: dict[str, Node] = {}
        for k, v in kwargs.items():
            if k not in sig.names:
                if sig.varkw is not None:
                    extra_kw[k] = v
                    continue
                raise self.error(MycTypeError, f"{g.name}() got an unexpected keyword argument "
                                 f"'{k}'", e)
            if k in bound:
                raise self.error(MycTypeError, f"{g.name}() got multiple values for argument "
                                 f"'{k}'", e)
            bound[k] = v
        full = []
        for name in sig.names:
            if name in bound:
                full.append(bound[name])
            elif name in sig.defaults:
                d = sig.defaults[name]
                if d.graph is not None and not block.graph.is_within(d.graph):
                    raise self.error(MycTypeError, f"pass argument '{name}' of {g.name}() "
                                     "explicitly here (its default is not visible)", e)
                full.append(d)
            else:
                raise self.error(MycTypeError, f"{g.name}() missing required argument "
                                 f"'{name}'", e)
        if sig.varargs is not None:
            full.append(self.apply(block, P.make_tuple, *args[npos:], node=e))
        if sig.varkw is not None:
            full.append(self.apply(block, P.pack, Constant(tuple(extra_kw)), self.apply(
                block, P.make_tuple, *extra_kw.values(), node=e), node=e))
        back = self._written_back(g, e, block)
        self._refuse_outer_writes(g, e, block)
        for i, (fi, where, at) in g.flags.get("param_writes_via", {}).items():
            if i < len(full) and fi < len(full):
                self.guard_call_through(
                    full[fi], where[0], [(where[1], full[i])], e, block,
                    f"the call of {g.name}() (line {e.lineno + self.info.line_offset}) "
                    f"passes its argument '{sig.names[i]}' on to a function value called "
                    f"at line {at}")
        if not back:
            out = self.apply(block, fn, *full, node=e)
            self._mark_changed_arguments(g, full, e, block, set())
            return out
        py_fn, names = g.flags["write_back"]
        g2 = parse_writing_back(py_fn, names)
        g2.flags["returns_params"] = g.flags.get("returns_params", ())  # (item 0 only:
        # its written parameters' items are rebound to the caller's variables)
        both = self.apply(block, Constant(g2, self.loc(e)), *full, node=e)
        out = self.apply(block, P.getitem, both, 0, node=e)
        bare = g.flags["param_writes"]
        sig_names: list[str] = g.flags["signature"].names
        self._mark_changed_arguments(g, full, e, block, set(back.values()))
        for k, pname in enumerate(names):
            var = back.get(pname)
            if var is None:
                continue
            new = self.apply(block, P.getitem, both, k + 1, node=e)
            if bare[sig_names.index(pname)][2]:  # ``a += v`` only: numbers are rebound
                new = self.py_call("kept_if_number", [new, block.env.vars[var]], e, block)
            # the caller's object, changed: what may alias it is what aliased the
            # argument (not the other items of the call's result tuple)
            block.env.views[new.id] = full[sig_names.index(pname)]
            block.env.vars[var] = new
            block.env.stale.pop(var, None)
        return out

    def _changed_by_calls(self, s: ast.While | ast.For, block: Block) -> set[str]:
        """The variables loop ``s`` passes to functions that change them in place
        (``for k in range(n): set_bnd(b, x)``): the loop carries them, as it carries
        the ones it assigns (``_written_back`` rebinds them after each call)."""
        out: set[str] = set()
        for n in _calls_in([*s.body, *s.orelse]):
            out.update(k.value.id for k in n.keywords  # np.add(c, 1.0, out=c)
                       if k.arg == "out" and isinstance(k.value, ast.Name))
            recv = n.func.value if isinstance(n.func, ast.Attribute) else None
            while isinstance(recv, ast.Attribute):
                recv = recv.value
            if isinstance(recv, ast.Name) and recv.id in self.locals and not (
                    n.func.attr in _VALUE_METHODS or n.func.attr in B.METHOD_LIBRARY or  # type: ignore[attr-defined]
                    n.func.attr in _MUTATORS or n.func.attr in _DICT_METHODS):  # type: ignore[attr-defined]
                out.add(recv.id)  # layer.forward(x) may rebind layer (object_method)
            if not any(isinstance(a, ast.Name) for a in n.args):
                continue
            g = self._user_callee(n, block)
            if g is not None:
                out.update(self._written_back(g, n, block).values())
        return out

    def _user_callee(self, call: ast.Call, block: Block) -> Graph | None:
        """The graph of the user's module-level function ``call`` names (not myc's,
        NumPy's or SciPy's), or None: what may change its arguments in place."""
        try:
            callee = self._static_callee(call.func, block)
        except MycError:
            return None
        if not isinstance(callee, types.FunctionType) or \
                in_library(callee.__code__.co_filename):
            return None
        try:
            return parse(callee)
        except MycError:
            return None  # (refused where the call is lowered)

    def _guard_loop_calls(self, s: ast.While | ast.For, block: Block,
                          carried: set[str]) -> set[str]:
        """Loop ``s`` passes variables to calls through function values (``f(y)``,
        ``m.step(y)``): a guard after such a call in the body would not outlive the
        iteration, so the variables the loop does not carry are read through one from
        the loop on (``guard_call_through``, with the function as it is before the
        loop); those whose function the loop assigns are carried instead (returned)."""
        if in_library(self.info.filename):
            return set()
        assigned = assigned_names(s.body) | assigned_names(s.orelse)
        extra: set[str] = set()
        for n in _calls_in([*s.body, *s.orelse]):
            f = n.func
            base = f.value if isinstance(f, ast.Attribute) else f
            if not isinstance(base, ast.Name) or (
                    isinstance(f, ast.Attribute) and (f.attr in _VALUE_METHODS or
                                                      f.attr in B.METHOD_LIBRARY or
                                                      f.attr in _MUTATORS or
                                                      f.attr in _DICT_METHODS)):
                continue
            if any(isinstance(a, ast.Starred) for a in n.args) or \
                    any(k.arg is None for k in n.keywords):
                passed: list[tuple[Any, str]] = [
                    (None, v) for v in self._star_names(n, block)
                    if v in self.locals and v not in carried]
            else:
                passed = [(k, a.id) for k, a in [*enumerate(n.args), *(
                    (kw.arg, kw.value) for kw in n.keywords if kw.arg is not None)]
                    if isinstance(a, ast.Name) and a.id in self.locals and
                    a.id not in carried]
            if not passed:
                continue
            if base.id not in self.locals:
                # a global object's method (``model.step(y)``) or an enclosing function's
                # value: the loop cannot rebind it
                try:
                    static = self._static_callee(base, block)
                except MycError:
                    continue
                if static is not None and not objects.is_user_object(static):
                    continue  # a module, a class, a module-level function: static calls
                try:
                    fn = self.expr(base, block)
                except MycError:
                    continue  # (refused where the call is lowered)
                attr = f.attr if isinstance(f, ast.Attribute) else None
                self.guard_call_through(fn, attr, [
                    (k, block.env.vars[v]) for k, v in passed if v in block.env.vars], n,
                    block)
                continue
            if base.id in assigned or base.id not in block.env.vars:
                extra.update(v for _, v in passed)
                continue
            attr = f.attr if isinstance(f, ast.Attribute) else None
            self.guard_call_through(block.env.vars[base.id], attr, [
                (k, block.env.vars[v]) for k, v in passed if v in block.env.vars], n, block)
        return extra - carried

    def _written_back(self, g: Graph, e: ast.Call, block: Block) -> dict[str, str]:
        """For a call of a function that changes parameters in place, which of them
        can be written back to the caller's variable passed there (``set_bnd(x)``: ``x``
        gets the changed array, as CPython's ``x`` shows it): parameter -> variable.
        Arguments that are not a local variable (``h(u[0])``, ``h(a * 2)``), or a
        variable passed twice, are not: reading what may hold them is refused."""
        info = g.flags.get("write_back")
        if not info or g.flags.get("signature") is None or any(
                isinstance(a, ast.Starred) for a in e.args) or any(
                k.arg is None for k in e.keywords):
            return {}
        sig: Signature = g.flags["signature"]
        given = _given_args(sig, e)
        out = {}
        for pname in info[1]:
            a = given.get(pname)
            if isinstance(a, ast.Name) and a.id in self.locals and a.id in block.env.vars:
                out[pname] = a.id
        counts = [v for v in out.values()]
        return {p: v for p, v in out.items() if counts.count(v) == 1}

    def _refuse_outer_writes(self, g: Graph, e: ast.Call, block: Block) -> None:
        """``set_first(c)`` or ``np.add(c, 1, out=c)`` inside a nested function, with
        ``c`` a variable of an enclosing function (or a global): CPython changes the
        caller's array, which a call in myc cannot; refused at the call, as a write
        ``c[0] = v`` there is."""
        writes, sig = g.flags.get("param_writes"), g.flags.get("signature")
        if not writes or sig is None:
            return
        given = _given_args(sig, e)
        for i, name in enumerate(sig.names):
            a = given.get(name)
            if i not in writes or not isinstance(a, ast.Name) or a.id in self.locals or \
                    a.id.startswith("__myc_"):  # (a bound method's data: myc's wrapper)
                continue
            found_outer = self.outer is not None and any(
                a.id in lw.locals for lw, _ in self._outers())
            found, value = self.lookup_python(a.id)
            if found and writes[i][2] and isinstance(value, (int, float, np.generic)):
                continue  # ``a += v`` on a number: rebound in the callee, as in CPython
            if found_outer or found:
                raise self.error(
                    MycSyntaxError, f"'{a.id}' is a global or a variable of an enclosing "
                    f"function, and this call changes it in place: myc cannot change it "
                    "(its arrays are values)", e,
                    hint=f"return the new value and assign it where '{a.id}' is a local")

    def _mark_changed_arguments(self, g: Graph, args: list[Node], e: ast.Call,
                                block: Block, written_back: set[str]) -> None:
        """``h(a)`` where ``h`` changes its parameter in place (``a[0] = 0``,
        ``a += v``, ``ps.append(p)``): CPython's ``a`` shows the change after the call;
        myc's call cannot change the caller's values, so the variables that may hold
        the argument are refused if read afterwards (as arrays only, when ``h``'s only
        change is ``a += v``, which rebinds a number)."""
        writes = g.flags.get("param_writes")
        if not writes:
            return
        sig: Signature = g.flags["signature"]
        line = e.lineno + self.info.line_offset
        for i, (at, text, bare) in writes.items():
            if not 0 <= i < len(args) or isinstance(args[i], Constant):
                continue
            self.note_param_write(args[i], e, bare, held=True)  # (ours, changed)
            family = {f.id for f in _view_family(args[i], block.env.views)}
            why = (f"the call of {g.name}() (line {line}) changes its argument "
                   f"'{sig.names[i]}' in place ({text}, line {at})")
            if g.loc is not None and in_library(g.loc.filename):  # NumPy's out=
                why = (f"the call at line {line} writes its result into the array "
                       f"given as {sig.names[i]}=")
            for other, node in list(block.env.vars.items()):
                if other in written_back or other in block.env.stale or not (
                        any(f.id in family for f in _view_family(node, block.env.views))
                        or _holds(node, family)):
                    continue
                block.env.stale[other] = (why, node, other) if bare else \
                    (why, None, CHANGED_BY_CALL)

    def star_call(self, e: ast.Call, block: Block) -> Node:
        """A call with ``*seq`` or ``**mapping`` arguments: their lengths and keys are
        known only when the program is specialized, so the arguments are bound then
        (``bind_args`` in myc/frontend/py_library.py)."""
        parts: list[Node] = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                parts.append(self.py_call("to_tuple", [self.expr(a.value, block)], a, block))
            else:
                parts.append(self.apply(block, P.make_tuple, self.expr(a, block), node=a))
        pos: Node = Constant((), self.loc(e))
        for part in parts:
            pos = self.apply(block, P.add, pos, part, node=e)
        named = [k for k in e.keywords if k.arg is not None]
        kw: Node = self.apply(block, P.pack, Constant(tuple(k.arg for k in named)), self.apply(
            block, P.make_tuple, *[self.expr(k.value, block) for k in named], node=e), node=e)
        for k in e.keywords:
            if k.arg is None:
                kw = self.py_call("dict_merge", [kw, self.expr(k.value, block)], k, block)
        callee = self._static_callee(e.func, block) if not isinstance(
            e.func, ast.Attribute) or isinstance(self._static_callee(e.func.value, block), (
                types.ModuleType, types.SimpleNamespace)) else None
        if callee is None and isinstance(e.func, ast.Attribute) and \
                e.func.attr not in _VALUE_METHODS and e.func.attr not in B.METHOD_LIBRARY \
                and e.func.attr not in _MUTATORS and e.func.attr not in _DICT_METHODS \
                and e.func.attr not in effects.RNG_METHODS \
                and self._static_callee(e.func.value, block) is None:
            # ``self.step(y, *args, scale=s)``: a method of an object of a user's class
            return self.object_method(self.expr(e.func.value, block), e, block, (pos, kw))
        import builtins as py

        if callee is py.zip and len(e.args) == 1 and not e.keywords:
            return self.py_call("py_zip", [pos], e, block)
        try:
            fn = self.python_value(callee, ast.unparse(e.func), e.func, block) \
                if callee is not None else self.expr(e.func, block)
        except MycError as exc:
            if static_calls.library_of(callee) is None or in_library(self.info.filename):
                raise
            return static_calls.call_node(self, callee, exc, e, block, star=(pos, kw))
        if not isinstance(fn, Constant) and not any(k.arg is None for k in e.keywords) \
                and not named:
            # a function value (a parameter given a function: ``rk4(f, y0, *args)``
            # calling ``f(y, t, *args)``): bound positionally once it is known
            out = self.py_call("call_star", [fn, pos], e, block)
            self.guard_call_through(fn, None, self._star_passed(e, block), e, block)
            return out
        if not (isinstance(fn, Constant) and isinstance(fn.value, Graph) and
                fn.value.flags.get("signature") is not None):
            star = next(a for a in (*e.args, *e.keywords) if isinstance(a, ast.Starred) or (
                isinstance(a, ast.keyword) and a.arg is None))
            raise self.error(MycSyntaxError, f"star-args (*x, **x) in a call of "
                             f"'{ast.unparse(e.func)}' are not supported: only in calls of "
                             "Python functions known where they are called", star)
        g = fn.value
        sig: Signature = g.flags["signature"]
        defaults = []
        for name in sig.names:
            d = sig.defaults.get(name)
            if d is not None and d.graph is not None and not block.graph.is_within(d.graph):
                raise self.error(MycTypeError, f"pass argument '{name}' of {g.name}() "
                                 "explicitly here (its default is not visible)", e)
            defaults.append(d if d is not None else Constant(None))
        loc = self.loc(e)
        bound = self.py_call("bind_args", [
            Constant(g.name, loc), Constant(tuple(sig.names), loc),
            Constant(sig.n_positional, loc),
            Constant(tuple(n in sig.defaults for n in sig.names), loc),
            self.apply(block, P.make_tuple, *defaults, node=e),
            Constant(sig.varargs is not None, loc), Constant(sig.varkw is not None, loc),
            pos, kw], e, block)
        n = len(g.parameters)
        return self.apply(block, fn, *[self.apply(block, P.getitem, bound, i, node=e)
                                       for i in range(n)], node=e)

    def call_prim(self, prim: Primitive, args: list[Node], kwargs: dict[str, Node],
                  e: ast.AST, block: Block, aliases: dict[str, str] | None = None,
                  operands: set[int] | None = None) -> Node:
        """``operands``: the ids of the arguments of a NumPy function's call that may be
        lists or tuples (``np.mean([f(v) for v in xs])``): its array operands among them
        are read as arrays, as NumPy reads them."""
        if prim.variadic:
            if kwargs:
                raise self.error(MycTypeError, f"{prim.name}() takes no keyword arguments", e)
            return self.apply(block, prim, *args, node=e)
        params = prim.params
        if len(args) > len(params):
            raise self.error(MycTypeError, f"{prim.name}() takes at most {len(params)} "
                             f"arguments but {len(args)} were given", e)
        bound = dict(zip(params, args, strict=False))
        for k, v in kwargs.items():
            k2 = (aliases or {}).get(k, k)
            if k2 == "a" and params:
                k2 = params[0]
            if k2 not in params:
                raise self.error(MycTypeError, f"{prim.name}() got an unsupported keyword "
                                 f"argument '{k}'", e)
            bound[k2] = v
        if "dtype" in bound:
            bound["dtype"] = _dtype_constant(bound["dtype"])
        full = []
        for p in params:
            if p in bound:
                full.append(bound[p])
            elif p in prim.defaults:
                full.append(Constant(prim.defaults[p]))
            else:
                raise self.error(MycTypeError, f"{prim.name}() missing argument '{p}'", e)
        if operands:
            full = [self.apply(block, P.as_operand, a, node=e) if p in _OPERANDS and
                    a.id in operands else a for p, a in zip(params, full, strict=True)]
        return self.apply(block, prim, *full, node=e)

    def builtin_call(self, callee: Any, e: ast.Call, block: Block) -> Node | None:
        """Python's sequence builtins and namedtuple constructors, or ``None``."""
        import builtins as py

        if isinstance(callee, type) and is_namedtuple(callee):
            args, kwargs = self._args(e, block)
            fields = callee._fields
            if len(args) > len(fields):
                raise self.error(MycTypeError, f"{callee.__name__}() takes {len(fields)} "
                                 f"arguments but {len(args)} were given", e)
            bound = dict(zip(fields, args, strict=False))
            for k, v in kwargs.items():
                if k not in fields or k in bound:
                    raise self.error(MycTypeError, f"{callee.__name__}() got an unexpected "
                                     f"or repeated argument '{k}'", e)
                bound[k] = v
            defaults = getattr(callee, "_field_defaults", {})
            missing = [f for f in fields if f not in bound and f not in defaults]
            if missing:
                raise self.error(MycTypeError, f"{callee.__name__}() missing argument "
                                 f"'{missing[0]}'", e)
            vals = [bound[f] if f in bound else
                    self.python_value(defaults[f], f, e, block) for f in fields]
            return self.apply(block, P.pack, Constant(callee),
                              self.apply(block, P.make_tuple, *vals, node=e), node=e)
        table = {id(py.sum): ("py_sum", 1, 2), id(py.enumerate): ("py_enumerate", 1, 2),
                 id(py.list): ("to_list", 0, 1), id(py.tuple): ("to_tuple", 0, 1),
                 id(py.reversed): ("py_reversed", 1, 1), id(py.dict): ("to_dict", 0, 1),
                 id(py.zip): ("py_zip", 0, 99), id(py.range): ("py_range", 1, 3),
                 id(py.slice): ("make_slice", 1, 3), id(py.map): ("py_map", 2, 99),
                 id(py.isinstance): ("py_isinstance", 2, 2), id(py.sorted): None,
                 id(py.divmod): ("py_divmod", 2, 2)}
        if id(callee) not in table:
            if (callee is py.min or callee is py.max) and len(e.args) == 1 and \
                    not e.keywords:
                seq = self.expr(e.args[0], block)
                return self.py_call("seq_min" if callee is py.min else "seq_max", [seq], e,
                                    block)
            return None
        entry = table[id(callee)]
        if entry is None:
            return None
        name, lo, hi = entry
        if callee is py.isinstance:
            if len(e.args) != 2 or e.keywords:
                raise self.error(MycTypeError, "isinstance() takes 2 positional arguments",
                                 e)
            kinds = Constant(self._kinds(e.args[1], block), self.loc(e))
            return self.py_call(name, [self.expr(e.args[0], block), kinds], e, block)
        args, kwargs = self._args(e, block)
        if callee is py.dict and kwargs:  # dict(a=x, b=y)
            if args:
                raise self.error(MycTypeError, "dict() with both a positional argument and "
                                 "keywords is not supported", e)
            keys = tuple(kwargs)
            return self.apply(block, P.pack, Constant(keys), self.apply(
                block, P.make_tuple, *kwargs.values(), node=e), node=e)
        if callee in (py.sum, py.enumerate) and kwargs:
            if set(kwargs) != {"start"} or len(args) != 1:
                raise self.error(MycTypeError, f"{callee.__name__}() takes an iterable and "
                                 "start=", e)
            args = [*args, kwargs.pop("start")]
        if kwargs:
            raise self.error(MycTypeError, f"{callee.__name__}() takes no keyword "
                             "arguments", e)
        if not lo <= len(args) <= hi:
            raise self.error(MycTypeError, f"{callee.__name__}() takes {lo} to {hi} "
                             f"arguments, got {len(args)}", e)
        if callee is py.zip:
            if not args:
                return Constant(ListValue(()), self.loc(e))
            return self.py_call(name, [self.apply(block, P.make_tuple, *args, node=e)], e,
                                block)
        if callee is py.slice:  # slice(stop), slice(start, stop[, step])
            none = Constant(None, self.loc(e))
            args = [none, args[0], none] if len(args) == 1 else args + [none] * (3 - len(args))
            return self.apply(block, P.make_slice, *args, node=e)
        if callee is py.map:
            return self.py_call(name, [args[0], self.apply(block, P.make_tuple, *args[1:],
                                                           node=e)], e, block)
        if callee is py.range:
            one, zero = Constant(1, self.loc(e)), Constant(0, self.loc(e))
            args = [zero, args[0], one] if len(args) == 1 else args + [one] * (3 - len(args))
        if not args:
            empty = ListValue(()) if callee is py.list else DictValue((), ()) \
                if callee is py.dict else ()
            return Constant(empty, self.loc(e))
        return self.py_call(name, args, e, block)

    def static_call(self, callee: Any, e: ast.Call, block: Block) -> Node:
        special = self.builtin_call(callee, e, block)
        if special is not None:
            return special
        if callee is print:
            return effects.print_call(self, e, block)
        if objects.is_user_class(callee):  # Layer_Dense(2, 16): __init__ on a new object
            return objects.construct(self, callee, e, block, parse)
        if callee is functools.partial:
            return self.expr_Lambda(self._partial_lambda(e, block), block)
        made = effects.maker_kind(callee)
        if made is not None:  # np.random.default_rng(seed), np.random.seed(seed)
            return effects.make_call(self, made, e, block)
        if effects.is_global_draw(callee):  # np.random.randn(...): NumPy's global state
            return effects.rng_call(self, Constant(effects.GLOBAL, self.loc(e)),
                                    callee.__name__, e, block)
        if getattr(callee, "__self__", None) is effects.global_state() is not None:
            raise effects.refuse_draw(self, callee.__name__, e)
        transform = getattr(callee, "__myc_transform__", None)
        if transform is not None:
            return self.transform_call(transform, e, block)
        call_transform = getattr(callee, "__myc_call_transform__", None)
        if call_transform is not None:  # myc.jvp(f, primals, tangents) inside a program
            if not e.args or e.keywords:
                raise self.error(MycTypeError, "expected a function and positional arguments",
                                 e)
            fn = self.expr(e.args[0], block)
            if not (isinstance(fn, Constant) and isinstance(fn.value, (Graph, Primitive))):
                raise self.error(MycTypeError, "the function passed to a myc transform inside "
                                 "a program must be known where it is written", e.args[0])
            try:
                graph = call_transform(fn.value)
            except MycError as exc:
                raise exc.with_loc(self.loc(e)) from None
            rest = [self.expr(a, block) for a in e.args[1:]]
            return self.apply(block, graph, *rest, node=e)
        if id(callee) in B.DTYPES or (isinstance(callee, type) and id(callee) in (
                id(np.float32), id(np.float64))):
            args, kwargs = self._args(e, block)
            if len(args) != 1 or kwargs:
                raise self.error(MycTypeError, f"{callee.__name__}() takes one argument", e)
            cast = self.apply(block, P.astype, args[0], callee, node=e)
            # np.float32(x) of a 0-d array is a NumPy scalar; of a bigger array, the array
            return self.apply(block, P.getitem, cast, Constant((), self.loc(e)), node=e)
        if id(callee) in B.MATH_FUNCS:
            return self.math_call(B.MATH_FUNCS[id(callee)], e, block)
        if callee is min or callee is max:
            args, kwargs = self._args(e, block)
            if len(args) < 2 or kwargs:
                raise self.error(MycTypeError, f"{callee.__name__}() of a single sequence is "
                                 "not supported; pass two or more values", e)
            # Python's semantics exactly: the first extreme operand itself, kept as is
            better = P.lt if callee is min else P.gt
            acc = args[0]
            for a in args[1:]:
                cur = acc
                take = self._lazy(block, e, "take", lambda b, a=a: a)
                keep = self._lazy(block, e, "keep", lambda b, cur=cur: cur)
                acc = self._select(block, self.apply(block, better, a, cur, node=e), take,
                                   keep, e)
            return acc
        if callee is abs:
            args, kwargs = self._args(e, block)
            if len(args) != 1 or kwargs:
                raise self.error(MycTypeError, "abs() takes exactly one argument", e)
            out = self.apply(block, P.abs, args[0], node=e)
            return self.apply(block, P.to_weak, out, args[0], node=e)
        if callee is str and len(e.args) == 1 and not e.keywords:
            # str(l) of a value known when compiling ("W" + str(l)): an f-string's format
            values = self.apply(block, P.make_tuple, self.expr(e.args[0], block), node=e)
            return self.apply(block, P.fstring, values, Constant(((0, "s", ""),),
                                                                 self.loc(e)), node=e)
        if callee is np.array or callee is np.asarray:
            args, kwargs = self._args(e, block, numpy=True)
            copy = kwargs.pop("copy", None) if callee is np.array else None
            if copy is not None and not (isinstance(copy, Constant) and copy.value is True):
                raise self.error(MycTypeError, "np.array(..., copy=) is supported with "
                                 "copy=True (myc's arrays are values: a copy is one)", e)
            out = self.call_prim(P.array, args, kwargs, e, block, {"object": "obj"})
            if callee is np.array:
                self.fresh.add(out.id)  # a copy (np.asarray(x) is x)
            return out
        linalg_library.note_callee(callee, B.LIBRARY)  # scipy.linalg's names, when used
        lib = library_function(callee)
        if lib is not None:  # a NumPy/SciPy function written in the subset
            g = self.library_graph(lib, ast.unparse(e.func), e)
            n_ops = _LIBRARY_OPERANDS.get(lib.__name__, 1) if \
                lib.__module__ == "myc.frontend.np_library" else 0
            if n_ops and any(_may_be_sequence(a) for a in e.args[:n_ops]) and not any(
                    isinstance(a, ast.Starred) for a in e.args):
                # np.std([f(v) for v in xs]): its leading operands read as arrays
                args, kwargs = self._args(e, block, numpy=True)
                args = [self.apply(block, P.as_operand, a, node=e) if k < n_ops and
                        _may_be_sequence(e.args[k]) else a for k, a in enumerate(args)]
                return self.call_graph(g, Constant(g, self.loc(e)), args, kwargs, e, block)
            args, kwargs = self._args(e, block)
            if "dtype" in kwargs:  # np.eye(n, dtype=bool): the dtype, not bool's primitive
                kwargs["dtype"] = _dtype_constant(kwargs["dtype"])  # (which J would lift)
            return self.call_graph(g, Constant(g, self.loc(e)), args, kwargs, e, block)
        prim = B.PRIMITIVE_OF.get(id(callee))
        if prim is P.where and len(e.args) == 1 and not e.keywords:
            raise self.error(MycTypeError, "np.where(condition) with one argument (the "
                             "indices where it holds: their number depends on the data) "
                             "is not supported", e, hint="select with np.where(condition, "
                             "x, y), or reduce a masked selection: np.sum(x[condition])")
        if prim is not None and isinstance(callee, np.ufunc) and \
                any(k.arg == "out" for k in e.keywords):
            return self._ufunc_out(callee, e, block)
        if prim is not None:
            args, kwargs = self._args(e, block, numpy=True)
            if id(callee) in B.NP_OPERATORS and args and not kwargs:
                # np.add(1.0, 2.0) computes on NumPy scalars (np.float64, inf for 1/0)
                args = [self.apply(block, P.np_first, args[0], args[-1], node=e), *args[1:]]
            if prim in (P.reshape,) and len(args) > 2:
                args = [args[0], self.apply(block, P.make_tuple, *args[1:], node=e)]
            operands = None
            if _numpy_own(callee):
                asts = [*e.args, *(k.value for k in e.keywords)]
                operands = {n.id for n, a in zip([*args, *kwargs.values()], asts,
                                                 strict=True) if _may_be_sequence(a)}
            return self.call_prim(prim, args, kwargs, e, block,
                                  {"a": prim.params[0] if prim.params else "a",
                                   "a_min": "lo", "a_max": "hi", "newshape": "shape",
                                   "condition": "cond", "fill_value": "fill_value"},
                                  operands=operands)
        name = ast.unparse(e.func)  # as the user wrote it: np.fft.fft, not fft
        try:
            fn = self.python_value(callee, name, e.func, block)
        except MycError as exc:
            if static_calls.library_of(callee) is None or in_library(self.info.filename):
                raise
            # NumPy's/SciPy's own function called by the user's code: NumPy runs it if
            # its arguments are static (inside a library's source: refused as before)
            return static_calls.call_node(self, callee, exc, e, block)
        return self.call_node(fn, e, block)

    def _ufunc_out(self, ufunc: np.ufunc, e: ast.Call, block: Block) -> Node:
        """``np.add(a, b, out=a)``, ``np.exp(x, out=(x,))``: the result written into the
        array given (``ufunc_out`` of myc/frontend/np_library.py, whose write into its
        ``out`` parameter reaches the caller's variable like any function's write into
        its argument), which the call returns."""
        kw = next(k for k in e.keywords if k.arg == "out")
        value = kw.value
        if isinstance(value, ast.Tuple) and len(value.elts) == 1:
            value = value.elts[0]
        if isinstance(value, ast.Constant) and value.value is None:
            call = ast.copy_location(ast.Call(func=e.func, args=e.args, keywords=[
                k for k in e.keywords if k is not kw]), e)
            return self.static_call(ufunc, call, block)
        if isinstance(value, (ast.Tuple, ast.List)):
            raise self.error(MycTypeError, f"np.{ufunc.__name__}: out= takes one array "
                             "(a ufunc with one output)", kw.value)
        where = next((k for k in e.keywords if k.arg == "where"), None)
        args = e.args
        mask = None if where is None else self.expr(where.value, block)
        if mask is not None:  # np.divide(a, b, out=z, where=b != 0): z kept elsewhere
            args = self._masked_safe_args(ufunc, mask, e, block)
        call = ast.copy_location(ast.Call(func=e.func, args=args, keywords=[
            k for k in e.keywords if k is not kw and k is not where]), e)
        result = self.static_call(ufunc, call, block)
        out = self.expr(value, block)
        if mask is not None:
            result = self.call_prim(P.where, [mask, result, out], {}, e, block)
        g = _library_graph("ufunc_out")
        # (the call as ``ufunc_out(name, r, out=<the array>)``, so that the write-back
        # finds the caller's variable by its keyword)
        at = ast.copy_location(ast.Call(func=e.func, args=[], keywords=[
            ast.copy_location(ast.keyword(arg="out", value=value), kw)]), e)
        return self.call_graph(g, Constant(g, self.loc(e)), [
            Constant(ufunc.__name__, self.loc(e)), result],
            {"out": out}, at, block)

    def _masked_safe_args(self, ufunc: np.ufunc, mask: Node, e: ast.Call,
                          block: Block) -> list[ast.expr]:
        """The ufunc's arguments under ``where=``, each outside the domain's edge replaced
        where the mask is off by a value the function and its derivative are finite at
        (``np.divide(a, b, out=z, where=b != 0)`` divides by 1 there): the result there
        is dropped, but its derivative is not -- 0 times an infinite derivative would
        make the gradient nan (JAX's "double where").  Bound to names of their own so
        the call lowers as written."""
        safe = _MASKED_SAFE.get(ufunc.__name__, {})
        args = list(e.args)
        for i, v in safe.items():
            if i < len(args) and not isinstance(args[i], ast.Starred):
                name = f"$masked{i}"
                self.locals.add(name)
                block.env.vars[name] = self.call_prim(
                    P.where, [mask, self.expr(args[i], block), Constant(v, self.loc(e))],
                    {}, args[i], block)
                args[i] = ast.copy_location(ast.Name(id=name, ctx=ast.Load()), args[i])
        return args

    def transform_call(self, transform: Any, e: ast.Call, block: Block) -> Node:
        """``myc.grad(f, argnums=...)`` inside a program: ``f`` and the options must be
        known where it is written; the result is the transformed function's graph."""
        if getattr(transform, "refused_in_programs", False):  # myc.vjp: says why
            try:
                transform()
            except MycError as exc:
                raise exc.with_loc(self.loc(e)) from None
        values = []
        passed: Node | None = None  # a function value, known when the program specializes
        attr: str | None = None  # ``myc.grad(obj.loss)``, ``obj`` known at specialization
        for k, a in enumerate(e.args):
            lam = self._method_lambda(a, block) if k == 0 else None
            if k == 0 and lam is None and isinstance(a, ast.Attribute) and \
                    self._static_callee(a.value, block) is None:
                passed, attr = self.expr(a.value, block), a.attr
                values.append(None)
                continue
            fn = self.expr(a if lam is None else lam, block)
            if k == 0 and not (isinstance(fn, Constant) and
                               isinstance(fn.value, (Graph, Primitive))):
                if isinstance(fn, Constant):
                    raise self.error(MycTypeError, "the function passed to a myc transform "
                                     "inside a program must be a function", a)
                passed = fn
                values.append(None)
                continue
            if not isinstance(fn, Constant):
                raise self.error(MycTypeError, "the options of a myc transform inside a "
                                 "program must be constants", a)
            values.append(fn.value)
        kwargs = {}
        for k in e.keywords:
            v = self.expr(k.value, block)
            if not isinstance(v, Constant):
                raise self.error(MycTypeError, f"'{k.arg}' must be a constant here", k.value)
            kwargs[k.arg] = v.value
        if passed is not None:
            tv = self.apply(block, TRANSFORM_VALUE, passed, Constant(transform),
                            Constant(tuple(values[1:])),
                            Constant(tuple(sorted(kwargs.items()))), Constant(attr), node=e)
            if attr is not None:  # a method's transform takes self first: its calls
                self.bound_transforms[tv.id] = (passed, attr)  # pass it (call_node)
            return tv
        if values and isinstance(values[0], Graph) and _still_building(values[0]):
            raise self.error(MycSyntaxError, "a function that applies a myc transform to "
                             "itself (directly or through recursion) is not supported", e,
                             hint="differentiate a separate function, or write the "
                             "derivative's recursion without calling myc.grad inside it")
        if getattr(transform, "module_level_only", False) and values and \
                isinstance(values[0], Graph) and values[0].parent is not None:
            raise self.error(MycTypeError, "this myc transform of a function written inside "
                             "the compiled function is not supported there", e,
                             hint="define the function at module level (or use a NumPy "
                             "function), or apply the transform outside")
        try:
            return Constant(transform(*values, **kwargs), self.loc(e))
        except MycError as exc:
            raise exc.with_loc(self.loc(e)) from None

    def _method_lambda(self, a: ast.expr, block: Block) -> ast.Lambda | None:
        """``myc.grad(model.loss)`` inside a program, ``model`` an object read from a
        global or a closure: the bound method as ``lambda x, y: model.loss(x, y)`` (its
        parameters without ``self``, those with defaults left to them), so that
        ``argnums`` count the method's own parameters, as outside a program."""
        if not isinstance(a, ast.Attribute):
            return None
        base = self._static_object(a.value)
        method = getattr(base, a.attr, None) if base is not None else None
        if not (isinstance(method, types.MethodType) and
                isinstance(method.__func__, types.FunctionType)):
            return None
        code = method.__func__.__code__
        names = list(code.co_varnames[1:code.co_argcount])
        n_default = len(method.__func__.__defaults__ or ())
        names = names[:len(names) - n_default] if n_default else names
        args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names],
                             vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                             defaults=[])
        call = ast.Call(func=a, args=[ast.Name(id=n, ctx=ast.Load()) for n in names],
                        keywords=[])
        lam = ast.Lambda(args=args, body=call)
        for node in ast.walk(lam):
            if not hasattr(node, "lineno") and "lineno" in node._attributes:
                ast.copy_location(node, a)
        return lam

    def _static_object(self, node: ast.expr) -> Any:
        """The Python object a global or closure name (and attributes of it) holds at
        parse time, or ``None`` (a local, or not found)."""
        if isinstance(node, ast.Name):
            return self._static_callee(node, None)  # type: ignore[arg-type]
        if isinstance(node, ast.Attribute):
            base = self._static_object(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def math_call(self, name: str, e: ast.Call, block: Block) -> Node:
        args, kwargs = self._args(e, block)
        if kwargs:
            raise self.error(MycTypeError, f"math.{name}() takes no keyword arguments", e)
        floats = [self.apply(block, P.to_float, a, node=e) for a in args]
        if name == "hypot":
            acc = None
            for f in floats:
                sq = self.apply(block, P.mul, f, f, node=e)
                acc = sq if acc is None else self.apply(block, P.add, acc, sq, node=e)
            root = self.apply(block, P.sqrt, acc if acc is not None else 0.0, node=e)
            return self.apply(block, P.to_float, root, node=e)
        expected = 2 if name in ("pow", "atan2") else (1, 2) if name == "log" else 1
        ok = len(args) in expected if isinstance(expected, tuple) else len(args) == expected
        if not ok:
            raise self.error(MycTypeError, f"math.{name}() got {len(args)} arguments", e)
        def checked_log(v: Node) -> Node:
            return self.apply(block, P.check_math_domain,
                              self.apply(block, P.log, v, node=e), v, node=e)

        if name == "log" and len(floats) == 2:
            ratio = self.apply(block, P.truediv, checked_log(floats[0]),
                               checked_log(floats[1]), node=e)
            ratio = self.apply(block, P.check_math_domain, ratio,
                               self.apply(block, P.make_tuple, *floats, node=e), node=e)
            return self.apply(block, P.to_float, ratio, node=e)
        if name in ("log2", "log10"):  # compositions of primitives myc has
            base = 2.0 if name == "log2" else 10.0
            q = self.apply(block, P.truediv, checked_log(floats[0]), float(np.log(base)),
                           node=e)
            return self.apply(block, P.to_float, q, node=e)
        if name in ("degrees", "radians"):
            k = 180.0 / np.pi if name == "degrees" else np.pi / 180.0
            return self.apply(block, P.mul, floats[0], k, node=e)
        if name == "trunc":
            return self.apply(block, P.to_int, floats[0], node=e)
        if name in ("sinh", "cosh"):
            ex = self.apply(block, P.exp, floats[0], node=e)
            emx = self.apply(block, P.exp, self.apply(block, P.neg, floats[0], node=e), node=e)
            op = P.sub if name == "sinh" else P.add
            r = self.apply(block, P.mul, self.apply(block, op, ex, emx, node=e), 0.5, node=e)
            r = self.apply(block, P.check_math_domain, r, floats[0], node=e)
            return self.apply(block, P.to_float, r, node=e)
        prim = B.PRIMITIVE_OF[id(getattr(__import__("math"), name))]
        out = self.apply(block, prim, *floats, node=e)
        if name not in ("floor", "ceil", "fabs", "sin", "cos", "tanh", "atan", "atan2"):
            arg = floats[0] if len(floats) == 1 else self.apply(block, P.make_tuple, *floats,
                                                                   node=e)
            out = self.apply(block, P.check_math_domain, out, arg, node=e)
        # Python floats are "weak" in NumPy's promotion (float32 stays float32): keep them so
        convert = P.to_int if name in ("floor", "ceil") else P.to_float
        return self.apply(block, convert, out, node=e)

    _METHODS = {"sum": "sum", "mean": "mean", "max": "max", "min": "min", "argmax": "argmax",
                "argmin": "argmin", "astype": "astype", "dot": "dot", "clip": "clip"}

    def method_call(self, e: ast.Call, block: Block) -> Node:
        attr = e.func.attr  # type: ignore[attr-defined]
        obj = self.expr(e.func.value, block)  # type: ignore[attr-defined]
        if _undefined(obj):  # plt.cla() without matplotlib: an error if it runs
            return obj
        if attr in effects.RNG_METHODS or attr in effects.OTHER_DRAWS or attr in _MUTATORS:
            return self.value_method(obj, e, block)
        if attr not in _VALUE_METHODS and attr not in B.METHOD_LIBRARY:
            return self.object_method(obj, e, block)  # only an object has it
        if any(k.arg == "out" for k in e.keywords):
            # ``g.clip(-5, 5, out=g)``: NumPy's array method, lowered in this block so
            # that its write into ``out=`` reaches the variable (``_written_back``)
            return self.value_method(obj, e, block)
        user = self._lazy(block, e, "method", lambda b: self.object_method(obj, e, b))
        value = self._lazy(block, e, "value_method", lambda b: self.value_method(obj, e, b))
        out = self._select(block, self.apply(block, P.is_object, obj, node=e), user, value,
                           e)
        if attr in _VIEW_MAKERS:  # an array's view of itself: writes show through
            block.env.views[out.id] = obj
        return out

    def object_method(self, obj: Node, e: ast.Call, block: Block,
                      star: tuple[Node, Node] | None = None) -> Node:
        """``obj.m(...)`` on an object of a user's class: its method's graph, held in the
        object (``myc.frontend.objects``), called with ``obj`` as ``self``.  ``star``:
        the call's positional tuple and keyword dict, built by ``star_call``."""
        attr = e.func.attr  # type: ignore[attr-defined]
        if star is None:
            args, kwargs = self._args(e, block)
            pos = self.apply(block, P.make_tuple, *args, node=e)
            kw = self.apply(block, P.pack, Constant(tuple(kwargs)), self.apply(
                block, P.make_tuple, *kwargs.values(), node=e), node=e)
        else:
            pos, kw = star
        fn = self.apply(block, P.getitem, obj, self.apply(block, P.method_field, obj, attr,
                                                          node=e.func), node=e.func)

        # the method's signature is known when the program specializes: its keywords,
        # defaults and ``*args`` bound then (``call_bound``)
        def bound(b: Block, *first: Node) -> Node:
            full = self.apply(b, P.add, self.apply(b, P.make_tuple, *first, node=e), pos,
                              node=e) if first else pos
            return self.py_call("call_bound", [fn, full, kw], e, b)

        # a method takes the object as self; an attribute holding a function does not
        # (``self.act = np.tanh``; known when the program specializes)
        recv = e.func.value  # type: ignore[attr-defined]
        if isinstance(recv, ast.Call) and objects.is_user_class(
                self._static_callee(recv.func, block)):  # PCA(2).fit(X): a new object
            method = self._lazy(block, e, "method", lambda b: bound(b, obj))
            plain = self._lazy(block, e, "attribute", lambda b: bound(b))
            written = self._lazy(block, e, "self_written", lambda b: self.apply(
                b, P.getitem, self._select(b, self.apply(b, P.binds_self, obj, attr, node=e),
                                           method, plain, e), 0, node=e))
            kept = self._lazy(block, e, "self_kept", lambda b: self._select(
                b, self.apply(b, P.binds_self, obj, attr, node=e), method, plain, e))
            out = self._select(block, self.apply(block, P.self_returned, fn, node=e),
                               written, kept, e)
        elif not self._self_write_back(recv, block):
            method = self._lazy(block, e, "method", lambda b: bound(b, obj))
            plain = self._lazy(block, e, "attribute", lambda b: bound(b))
            out = self._select(block, self.apply(block, P.binds_self, obj, attr, node=e),
                               method, plain, e)
            # a method assigning attributes of self cannot show them here: refused then
            out = self.apply(block, P.unchanged_by, out, obj, Constant((attr, -1)), Constant(
                f"the call at line {e.lineno + self.info.line_offset} changes the object "
                f"'{ast.unparse(recv)}', and myc can rebind only a local variable (or an "
                "attribute of one) to the changed object, not a global, a loop variable or "
                "an item of a container"), node=e)
        else:
            # ``layer.forward(x)`` where ``forward`` sets ``self.output``: its write-back
            # twin returns (result, final self), and the variable is rebound to the
            # latter (``objects.method_graph``); one that does not returns the result
            def written(b: Block) -> Node:
                r = bound(b, obj)
                k = self.apply(b, P.self_returned, fn, node=e)
                yes = self._lazy(b, e, "self_written", lambda b2: self.apply(
                    b2, P.make_tuple, self.apply(b2, P.getitem, r, 0, node=e),
                    self.apply(b2, P.getitem, r, k, node=e), node=e))
                no = self._lazy(b, e, "self_kept", lambda b2: self.apply(
                    b2, P.make_tuple, r, obj, node=e))
                return self._select(b, k, yes, no, e)

            method = self._lazy(block, e, "method", written)
            plain = self._lazy(block, e, "attribute", lambda b: self.apply(
                b, P.make_tuple, bound(b), obj, node=e))
            both = self._select(block, self.apply(block, P.binds_self, obj, attr, node=e),
                                method, plain, e)
            out = self.apply(block, P.getitem, both, 0, node=e)
            self._rebind_receiver(recv, self.apply(block, P.getitem, both, 1, node=e),
                                  block)
            # other names for the object (an alias, a list holding it) would show
            # CPython's change: refused if read, when the method changes self
            root = recv
            while isinstance(root, ast.Attribute):
                root = root.value
            rebound = block.env.vars[root.id]  # type: ignore[attr-defined]
            self.guard_call_through(obj, attr, [(-1, obj)], e, block)
            block.env.vars[root.id] = rebound  # type: ignore[attr-defined]
        if star is None:
            self.guard_call_through(obj, attr, [*enumerate(args), *kwargs.items()], e,
                                    block)
        else:
            self.guard_call_through(obj, attr, self._star_passed(e, block), e, block)
        return out

    def _star_passed(self, e: ast.Call, block: Block) -> list[tuple[Any, Node]]:
        """``_star_names`` as ``guard_call_through``'s (key, node) pairs."""
        return [(None, block.env.vars[v]) for v in self._star_names(e, block)]

    def _star_names(self, e: ast.Call, block: Block) -> list[str]:
        """The local variables a call with ``*args``/``**kw`` passes (``f(*args)``,
        ``f(y, *rest)``, ``f(*[y])``, and what ``args`` holds): their parameters are
        known only when the program specializes, so each counts as passed to any
        parameter (key None in ``guard_call_through``)."""
        out: list[str] = []
        for a in [*e.args, *(k.value for k in e.keywords)]:
            v = a.value if isinstance(a, ast.Starred) else a
            for x in v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]:
                if not isinstance(x, ast.Name) or x.id not in block.env.vars:
                    continue
                out.append(x.id)
                if not isinstance(a, ast.Starred):
                    continue
                node = block.env.vars[x.id]  # ``f(*args)``: the items ``args`` holds
                out.extend(name for name, other in block.env.vars.items()
                           if name in self.locals and other is not node and _holds(
                               node, {f.id for f in _view_family(other, block.env.views)}))
        return list(dict.fromkeys(out))

    def _self_write_back(self, recv: ast.AST, block: Block) -> bool:
        """Can ``recv.m(...)`` rebind ``recv`` to the object the method changed: a local
        variable (or an attribute of one, ``self.activation``) that is no loop target
        (the sequence it came from would keep the old object)?"""
        root = recv
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in self.locals or \
                root.id not in block.env.vars or in_library(self.info.filename):
            return False
        targets = set()
        for n in ast.walk(self.info.tree):
            if isinstance(n, (ast.For, ast.comprehension)):
                targets |= {x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)}
        return root.id not in targets and (isinstance(recv, ast.Name) or
                                           _attribute_target(recv))

    def _rebind_receiver(self, recv: ast.AST, new: Node, block: Block) -> None:
        if isinstance(recv, ast.Name):
            block.env.vars[recv.id] = new
            block.env.stale.pop(recv.id, None)
            return
        attr = Constant(recv.attr, self.loc(recv))  # type: ignore[attr-defined]
        inner = self.expr(recv.value, block)  # type: ignore[attr-defined]
        self._rebind_receiver(recv.value, self.py_call(  # type: ignore[attr-defined]
            "setattr_value", [inner, attr, new], recv, block), block)

    def value_method(self, obj: Node, e: ast.Call, block: Block) -> Node:
        """A method of an array, list, dict or random generator."""
        attr = e.func.attr  # type: ignore[attr-defined]
        if attr in effects.RNG_METHODS:  # rng.standard_normal(...): a draw
            return effects.rng_call(self, obj, attr, e, block)
        if attr in effects.OTHER_DRAWS:
            raise effects.refuse_draw(self, attr, e)
        if attr in _MUTATORS:
            raise self.error(MycSyntaxError, f"'.{attr}()' returns None: use it as a "
                             f"statement (out.{attr}(...))", e)
        if attr in _DICT_METHODS or attr == "keys":
            args, kwargs = self._args(e, block)
            if kwargs:
                raise self.error(MycTypeError, f"dict.{attr}() takes no keyword arguments", e)
            if attr == "keys":
                if args:
                    raise self.error(MycTypeError, "dict.keys() takes no arguments", e)
                return self.apply(block, P.dict_keys, obj, node=e)
            name, arity = _DICT_METHODS[attr]
            ok = len(args) in arity if isinstance(arity, tuple) else len(args) == arity
            if not ok:
                raise self.error(MycTypeError, f"dict.{attr}() got {len(args)} arguments", e)
            return self.py_call(name, [obj, *args], e, block)
        obj = self.apply(block, P.receiver, obj, attr, node=e.func)  # not a Python number
        args, kwargs = self._args(e, block, numpy=True)
        if attr in ("reshape", "transpose"):
            prim = getattr(P, attr)
            if kwargs and attr == "reshape":
                kwargs = {("shape" if k == "newshape" else k): v for k, v in kwargs.items()}
            if len(args) > 1:
                args = [self.apply(block, P.make_tuple, *args, node=e)]
            return self.call_prim(prim, [obj, *args], kwargs, e, block)
        if attr == "copy" and not args and not kwargs:  # (of a list or dict: refused)
            return self.apply(block, P.pos, self.py_call("array_to_copy", [obj], e, block),
                              node=e)
        if attr in B.METHOD_LIBRARY:  # x.ravel(): the library function of x
            g = _library_graph(B.METHOD_LIBRARY[attr])
            return self.call_graph(g, Constant(g, self.loc(e)), [obj, *args], kwargs, e,
                                   block)
        if attr in self._METHODS:
            return self.call_prim(getattr(P, self._METHODS[attr]), [obj, *args], kwargs, e,
                                  block, {"a_min": "lo", "a_max": "hi", "min": "lo",
                                          "max": "hi"})
        # refused if the line runs (``ax.plot(x)`` under ``if ax:`` with ``ax=None`` does
        # not), as Python's AttributeError
        return self.apply(block, P.refused, obj, f"method '.{attr}()' is not supported"
                          "|hint|supported methods: .sum .mean .max .min .argmax .argmin "
                          ".reshape .astype .transpose .dot .clip .copy " +
                          " ".join("." + m for m in B.METHOD_LIBRARY) +
                          "; on lists .append .extend .insert (as statements); on dicts "
                          ".items .keys .values .get", node=e)


def _py_library_graph(name: str) -> Graph:
    """The graph of Python library function ``name`` (``myc/frontend/py_library.py``)."""
    from myc.frontend import py_library

    return parse(getattr(py_library, name))


# how many leading positional arguments of a function of myc/frontend/np_library.py are
# array operands (1 if not listed): 0 for those taking sequences of arrays or shapes
_LIBRARY_OPERANDS = {
    "stack": 0, "hstack": 0, "vstack": 0, "column_stack": 0, "dstack": 0, "meshgrid": 0,
    "einsum": 0, "eye": 0, "identity": 0, "tri": 0, "empty": 0, "logspace": 0,
    "atleast_1d": 0, "atleast_2d": 0, "fill_diagonal_value": 0,
    "logaddexp": 2, "outer": 2, "inner": 2, "vdot": 2, "kron": 2, "tensordot": 2, "dot": 2,
    "hypot": 2, "fmax": 2, "fmin": 2, "heaviside": 2, "logical_and": 2, "logical_or": 2,
    "logical_xor": 2, "convolve": 2, "correlate": 2, "cross": 2,
}
# the parameters of NumPy's primitives that are array operands (not axes or shapes)
_OPERANDS = frozenset(("x", "y", "cond", "lo", "hi"))
# expressions whose value is never a list or tuple (as a NumPy function's operand)
_NOT_SEQUENCES = (ast.Constant, ast.UnaryOp, ast.Compare, ast.JoinedStr)


def _numpy_own(callee: Any) -> bool:
    """Is ``callee`` one of NumPy's functions (not a builtin such as ``len``)?"""
    return isinstance(callee, np.ufunc) or \
        (getattr(callee, "__module__", None) or "").startswith("numpy")


def _may_be_sequence(a: ast.expr) -> bool:
    """May this operand of a NumPy call be a list or tuple?  Not a constant, arithmetic
    (other than ``+``/``*``, which join and repeat lists), a comparison, a NumPy call, an
    attribute (``x.T``) or a slice (``x[:, 0]``): those get no ``as_operand`` node."""
    if isinstance(a, _NOT_SEQUENCES) or isinstance(a, ast.Attribute):
        return False
    if isinstance(a, ast.BinOp):
        return isinstance(a.op, (ast.Add, ast.Mult))
    if isinstance(a, ast.Call):  # np.exp(x), x.sum(): an array
        f = a.func
        while isinstance(f, ast.Attribute):
            f = f.value
        return not (isinstance(f, ast.Name) and f.id in ("np", "numpy")) and not \
            isinstance(a.func, ast.Attribute)
    if isinstance(a, ast.Subscript):
        return not isinstance(a.slice, (ast.Slice, ast.Tuple))
    return True


def _may_be_sequences(e: ast.Call) -> bool:
    return any(_may_be_sequence(a) for a in (*e.args, *(k.value for k in e.keywords)))


def _is_namespace(obj: Any) -> bool:
    """Are ``obj``'s attributes read at parse time (a module, ``P``, SciPy's ``norm``, a
    class of the user's: ``Flow.squash(u, w)`` calls its static method)?"""
    return isinstance(obj, (types.ModuleType, types.SimpleNamespace)) or \
        is_namespace(obj) or objects.is_user_class(obj)


def _library_graph(name: str) -> Graph:
    """The graph of NumPy library function ``name`` (``myc/frontend/np_library.py``)."""
    from myc.frontend import np_library

    if "." in name:  # a function of another library module (myc/frontend/linalg_library.py)
        module, name = name.rsplit(".", 1)
        return parse(getattr(__import__(module, fromlist=[name]), name))
    return parse(getattr(np_library, name))


def _slices_only(index: Node) -> bool:
    """Can indexing with ``index`` never raise (``x[1:]``, ``x[:, None]``)?"""
    if not isinstance(index, Constant):
        return False
    parts = index.value if isinstance(index.value, tuple) else (index.value,)
    return all(p is None or p is Ellipsis or isinstance(p, slice) for p in parts)


def keep_index_checks(loads: list[tuple[Graph, Node]]) -> None:
    """Make each graph's output depend on its indexing results that nothing uses.

    Python evaluates ``y = x[i]`` and raises ``IndexError`` when ``i`` is out of range,
    whether or not ``y`` is read; a graph is evaluated from its output, so a dead
    ``x[i]`` was never computed on any backend.  The output becomes
    ``checked((x[i], ...), output)`` -- for a jump to a continuation or a branch, the
    callee is wrapped instead, so that the call stays in tail position."""
    by_graph: dict[int, tuple[Graph, list[Node]]] = {}
    for g, n in loads:
        by_graph.setdefault(id(g), (g, []))[1].append(n)
    for g, nodes in by_graph.values():
        if g.output is None:
            continue
        live = _reachable(g)
        dead = [n for n in nodes if id(n) not in live]
        if not dead:
            continue
        out = g.output
        checks = g.apply(P.make_tuple, *dead, loc=out.loc)
        if isinstance(out, Apply) and not (isinstance(out.inputs[0], Constant) and
                                           isinstance(out.inputs[0].value, Primitive)):
            callee = g.apply(P.checked, checks, out.inputs[0], loc=out.loc)
            g.output = g.apply(callee, *out.inputs[1:], loc=out.loc)
        else:
            g.output = g.apply(P.checked, checks, out, loc=out.loc)


def _reachable(g: Graph) -> set[int]:
    """Ids of the nodes ``g``'s output uses, also through the graphs nested in ``g``."""
    seen: set[int] = set()
    nodes = [g.output]
    while nodes:
        n = nodes.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, Constant):
            h = n.value
            if isinstance(h, Graph) and h is not g and any(a is g for a in h.ancestors()):
                nodes.append(h.output)
            continue
        nodes.extend(getattr(n, "inputs", ()))
    return seen


def _still_building(g: Graph) -> bool:
    """Is ``g``, or a graph it uses, still being lowered (no output yet)?"""
    seen: set[int] = set()
    graphs = [g]
    while graphs:
        h = graphs.pop()
        if id(h) in seen:
            continue
        seen.add(id(h))
        if h.output is None:
            return True
        nodes, visited = [h.output], set()
        while nodes:
            n = nodes.pop()
            if id(n) in visited:
                continue
            visited.add(id(n))
            if isinstance(n, Constant) and isinstance(n.value, Graph):
                graphs.append(n.value)
            nodes.extend(getattr(n, "inputs", ()))
    return False
