"""Objects of the user's own classes as values: static structures, like namedtuples.

Model code keeps parameters and shapes in objects (a layer holding its slice of a weight
vector, a model with a ``__call__``) and calls their methods inside the loss.  An object
a program reads from a global or a closure is read when the program is parsed, as a
global list is: its data attributes (``vars(obj)``) become the values of an
``ObjectValue`` (``myc.prims.containers``), arrays as constants, nested objects, lists
and dicts as nested structures.  Its methods are held in the value too, as the graphs of
their Python source, so ``obj.method(x)`` is a call of a function value with ``obj`` as
``self`` -- which every transform (``grad``, ``jvp``) already handles, since the graphs
are constants of the program.  Properties are computed when the object is read.

An object passed as an *argument* is a tree of its data attributes (its arrays are
leaves, and the gradient with respect to it is an object of the same class holding the
gradients): its class is known only when the program is called, after the program was
parsed and differentiated, so its methods cannot be compiled in.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Callable
from typing import Any

from myc.errors import MycError, MycNameError, MycTypeError
from myc.ir.nodes import Constant, Graph, Node
from myc.prims import P
from myc.prims.containers import ObjMeta, Unsupported

# (the lowerer and its blocks are passed in: ``myc.frontend.lower`` imports this module)
FunctionLowerer = Any
Block = Any

_READING: set[int] = set()  # objects being read now (a reference cycle is refused)
# ``myc.frontend.lower.parse_writing_back``, registered by that module (which imports
# this one): a function lowered again to return the final values of its parameters
WRITING_BACK: Callable[[Any, tuple[str, ...]], Graph] | None = None


def is_user_object(value: Any) -> bool:
    """An instance of a class the user wrote (not a module, class, function, NumPy's)."""
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType,
                          types.BuiltinFunctionType)):
        return False
    if hasattr(value, "__dlpack__") or hasattr(value, "__array__") or \
            hasattr(value, "__array_interface__"):
        return False  # an array of another library (a torch tensor): not a structure
    mod = (getattr(type(value), "__module__", None) or "").split(".")[0]
    if mod in ("builtins", "numpy", "scipy", "myc", "functools", "collections", ""):
        return False
    return hasattr(value, "__dict__") or hasattr(type(value), "__slots__")


def is_user_class(value: Any) -> bool:
    """A class the user wrote: its attributes (static methods, functions, constants) are
    read when the program is parsed, as a module's are."""
    if not isinstance(value, type):
        return False
    mod = (getattr(value, "__module__", None) or "").split(".")[0]
    return mod not in ("builtins", "numpy", "scipy", "myc", "functools", "collections",
                       "typing", "abc", "")


def data_attributes(value: Any) -> dict[str, Any]:
    """An object's data attributes in definition order (``__dict__``, then slots)."""
    out = dict(getattr(value, "__dict__", {}))
    for klass in type(value).__mro__:
        for s in getattr(klass, "__slots__", ()):
            if s not in out and s not in ("__dict__", "__weakref__") and hasattr(value, s):
                out[s] = getattr(value, s)
    return out


def class_members(cls: type) -> tuple[dict[str, Any], dict[str, property]]:
    """The methods and properties of ``cls`` (its own and inherited, the nearest
    definition winning, as Python's lookup): dunders other than ``__call__`` are not
    methods a program calls by name."""
    methods: dict[str, Any] = {}
    props: dict[str, property] = {}
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, v in vars(klass).items():
            if name in methods or name in props:
                continue
            if name.startswith("__") and name != "__call__":
                continue
            if isinstance(v, property):
                props[name] = v
            elif isinstance(v, (types.FunctionType, staticmethod, classmethod)):
                methods[name] = v
    return methods, props


def _refusing_graph(fn: Any, name: str, message: str, extra: int = 0) -> Graph:
    """A stand-in for a method myc cannot compile: calling it raises ``message`` (a
    method the program never calls is no obstacle, as in Python).  ``extra``: parameters
    before ``fn``'s own (the ``self`` a static method is called with)."""
    code = getattr(fn, "__code__", None)
    g = Graph(name, None, None)
    n = (code.co_argcount if code is not None else 1) + extra
    for i in range(n):
        g.add_parameter(f"a{i}")
    g.flags["defaults"] = [None] * len(getattr(fn, "__defaults__", None) or ())
    g.output = g.apply(P.refused, Constant(None), Constant(message))
    return g


def method_graph(cls: type, name: str, fn: Any, parse: Callable[[Any], Graph]) -> Graph:
    qual = f"{cls.__name__}.{name}"
    if isinstance(fn, staticmethod):
        return _static_method_graph(qual, fn.__func__, parse)
    if isinstance(fn, classmethod):
        return _refusing_graph(fn.__func__, qual, f"{qual} is a classmethod: myc calls the "
                               "plain and static methods of objects")
    try:
        return writing_self(fn, parse(fn), qual)
    except MycError as exc:
        where = f" ({exc.loc})" if exc.loc is not None else ""
        return _refusing_graph(fn, qual, f"{qual} cannot be compiled: {exc.message}{where}")


def writing_self(fn: Any, g: Graph, qual: str) -> Graph:
    """The graph an object holds for method ``fn`` parsed as ``g``: ``g`` itself, or,
    for a method that assigns attributes of ``self`` (``self.output = ...``, as "from
    scratch" layer classes do in ``forward``), its write-back twin returning ``(result,
    *final values of the parameters it changes)``, flagged ``returns_self`` with where
    ``self`` is in that tuple: the caller rebinds its variable to the changed object
    (``FunctionLowerer.object_method``), as CPython's caller sees it changed."""
    code = getattr(fn, "__code__", None)
    writes = g.flags.get("param_writes") or {}
    if code is None or code.co_argcount == 0 or 0 not in writes:
        return g
    me = code.co_varnames[0]
    info = g.flags.get("write_back")
    if not info or me not in info[1]:
        line, text, _ = writes[0]
        raise MycTypeError(f"{qual} changes '{me}' in place ({text}, line {line}) in a way "
                           "myc cannot return to its caller (it also rebinds it, or the "
                           "change is made where it cannot be followed)")
    assert WRITING_BACK is not None  # (set by myc.frontend.lower, which imports us)
    twin = WRITING_BACK(info[0], info[1])
    twin.flags["returns_self"] = 1 + info[1].index(me)
    return twin


def _static_method_graph(qual: str, fn: Any, parse: Callable[[Any], Graph]) -> Graph:
    """``obj.m(...)`` passes ``obj`` first (``FunctionLowerer.object_method``); a static
    method takes no ``self``: its graph called from one that drops it."""
    try:
        inner = parse(fn)
    except MycError as exc:
        where = f" ({exc.loc})" if exc.loc is not None else ""
        return _refusing_graph(fn, qual, f"{qual} cannot be compiled: {exc.message}{where}",
                               extra=1)
    g = Graph(qual, None, inner.loc)
    g.add_parameter("self")
    params = [g.add_parameter(p.name) for p in inner.parameters]
    g.flags["defaults"] = list(inner.flags.get("defaults", []))
    g.output = g.apply(Constant(inner, inner.loc), *params, loc=inner.loc)
    return g


def object_node(low: FunctionLowerer, value: Any, name: str, node: ast.AST,
                block: Block, parse: Callable[[Any], Graph]) -> Node:
    """An object read from a global or closure, as the ``ObjectValue`` it is in the
    program: its attributes, its methods' graphs, then its properties' values."""
    cls = type(value)
    if id(value) in _READING:
        raise low.error(MycTypeError, f"'{name}' refers back to an object that contains "
                        f"it (an object of class '{cls.__name__}'): myc reads objects as "
                        "trees of values, which have no cycles", node)
    _READING.add(id(value))
    try:
        fields, elems = [], []
        for k, v in data_attributes(value).items():
            fields.append(k)
            elems.append(_attribute(low, v, f"{name}.{k}", cls, node, block))
        methods, props = class_members(cls)
        for m, fn in methods.items():
            elems.append(Constant(method_graph(cls, m, fn, parse), low.loc(node)))
        meta = ObjMeta(cls, tuple(fields), tuple(methods), (), origin=value)
        obj = low.apply(block, P.pack, Constant(meta), low.apply(
            block, P.make_tuple, *elems, node=node), node=node)
        done: list[str] = []
        for p, prop in props.items():  # in definition order, each seeing those before
            if prop.fget is None:
                continue
            getter = Constant(method_graph(cls, p, prop.fget, parse), low.loc(node))
            elems.append(low.apply(block, getter, obj, node=node))
            done.append(p)
            meta = ObjMeta(cls, tuple(fields), tuple(methods), tuple(done), origin=value)
            obj = low.apply(block, P.pack, Constant(meta), low.apply(
                block, P.make_tuple, *elems, node=node), node=node)
        return obj
    finally:
        _READING.discard(id(value))


def _attribute(low: FunctionLowerer, v: Any, name: str, cls: type, node: ast.AST,
               block: Block) -> Node:
    if isinstance(v, str):
        return Constant(v, low.loc(node))
    try:
        return low.python_value(v, name, node, block)
    except MycError as exc:
        return Constant(Unsupported(f"attribute '{name}' of a '{cls.__name__}' object "
                                    f"cannot be used in compiled code: {exc.message}"),
                        low.loc(node))


def construct(low: FunctionLowerer, cls: type, e: ast.Call, block: Block,
              parse: Callable[[Any], Graph]) -> Node:
    """``Cls(args)`` inside compiled code: a new object holding the class's methods and
    no data attributes, then ``__init__`` called on it (its write-back twin, when it
    assigns attributes of ``self``: the object it returns is the new object), its
    arguments bound by its signature when the program specializes (``call_bound``).
    A class with properties, or with an ``__init__`` myc cannot compile, is refused
    at the call."""
    methods, props = class_members(cls)
    if props:
        raise low.error(MycNameError, f"constructing an object of class '{cls.__name__}' "
                        "(which has properties) inside compiled code is not supported",
                        e, hint=f"build the {cls.__name__} before calling the compiled "
                        "function and pass it in")
    loc = low.loc(e)
    graphs = [Constant(method_graph(cls, m, fn, parse), loc) for m, fn in methods.items()]
    obj = low.apply(block, P.pack, Constant(ObjMeta(cls, (), tuple(methods)), loc),
                    low.apply(block, P.make_tuple, *graphs, node=e), node=e)
    init = getattr(cls, "__init__", object.__init__)
    args, kwargs = low._args(e, block)
    if init is object.__init__:
        if args or kwargs:
            raise low.error(MycTypeError, f"{cls.__name__}() takes no arguments", e)
        return obj
    if not isinstance(init, types.FunctionType):
        raise refuse_construction(low, cls, e)
    qual = f"{cls.__name__}.__init__"
    try:
        g = parse(init)
        twin = writing_self(init, g, qual)
    except MycError as exc:
        where = f" ({exc.loc})" if exc.loc is not None else ""
        raise low.error(MycNameError, f"constructing an object of class '{cls.__name__}' "
                        f"inside compiled code: {qual} cannot be compiled: "
                        f"{exc.message}{where}", e, hint=f"build the {cls.__name__} "
                        "before calling the compiled function and pass it in") from None
    kw = low.apply(block, P.pack, Constant(tuple(kwargs)), low.apply(
        block, P.make_tuple, *kwargs.values(), node=e), node=e)
    called = low.py_call("call_bound", [Constant(twin, loc), low.apply(
        block, P.make_tuple, obj, *args, node=e), kw], e, block)
    if twin is g:  # an __init__ that sets no attribute
        return obj
    return low.apply(block, P.getitem, called, twin.flags["returns_self"], node=e)


def refuse_construction(low: FunctionLowerer, cls: type, node: ast.AST) -> MycError:
    return low.error(
        MycNameError, f"constructing an object of class '{cls.__name__}' inside compiled "
        "code is not supported: myc reads objects made outside it (from a global or a "
        "closure, or passed as an argument)", node,
        hint=f"build the {cls.__name__} before calling the compiled function and capture "
             "it or pass it in")
