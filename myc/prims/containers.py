"""Lists, dicts and namedtuples as values: static structures built on tuples.

A Python ``list`` or ``dict`` is mutable and its length can change at run time; a myc
program specializes on structure the way it does on shapes, so inside compiled code a
list is a ``ListValue`` and a dict a ``DictValue``: tuple subclasses whose length (and
keys) are part of the signature.  Every stage that handles tuples -- the tracer, AD's
sensitivities, the loop machinery, the output template -- handles them unchanged;
the subclass only matters where Python's semantics differ from a tuple's (a dict is
indexed and iterated by key) and at the boundary, where a list goes back out as a
``list`` and a dict as a ``dict`` (``myc.runtime.args``).  Mutation (``append``,
``d[k] = v``) rebinds the variable to a new value, as ``a += x`` does for arrays.

A namedtuple stays an instance of the user's own class (it is a tuple already).

Reverse-mode sensitivities of these values are plain tuples (positional); forward-mode
tangents keep the class, so a tangent is indexed by the same keys as its primal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from myc.errors import MycIndexError, MycNameError, MycSyntaxError, MycTypeError
from myc.prims.registry import register


class ListValue(tuple):
    """A Python list of static length, as an immutable value."""

    __slots__ = ()

    def __add__(self, other: Any) -> ListValue:
        if not isinstance(other, ListValue):
            raise TypeError(f'can only concatenate list (not "{kind_of(other)}") to list')
        return ListValue(tuple.__add__(self, other))

    def __mul__(self, n: Any) -> ListValue:
        return ListValue(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __getitem__(self, index: Any) -> Any:
        out = tuple.__getitem__(self, index)
        return ListValue(out) if isinstance(index, slice) else out

    def __repr__(self) -> str:
        return "[" + ", ".join(map(repr, self)) + "]"

    def __reduce__(self):
        return (ListValue, (tuple(self),))


class ObjMeta(tuple):
    """What an object of a user's class is besides its values: the class, its data
    attributes, methods and properties (in that order, the ``ObjectValue``'s positions)
    and, for an object read from a global or a closure, the object itself (what a dict
    keyed by objects is looked up by; not part of equality, so a signature does not
    depend on which object of a class was passed)."""

    def __new__(cls, klass: type, fields: tuple, methods: tuple = (), props: tuple = (),
                origin: Any = None) -> ObjMeta:
        obj = super().__new__(cls, ("object", f"{klass.__module__}.{klass.__qualname__}",
                                    tuple(fields), tuple(methods), tuple(props)))
        obj.cls = klass
        obj.fields = tuple(fields)
        obj.methods = tuple(methods)
        obj.props = tuple(props)
        obj.origin = origin
        return obj

    @property
    def names(self) -> tuple:
        return self.fields + self.methods + self.props

    def data_only(self) -> ObjMeta:
        return ObjMeta(self.cls, self.fields)

    def __reduce__(self):
        return (ObjMeta, (self.cls, self.fields, self.methods, self.props))


class ObjectValue(tuple):
    """An object of a user's class as a value: its data attributes (then, for an object
    read from a global or closure, its methods and properties), positionally."""

    def __new__(cls, meta: ObjMeta, values: Any) -> ObjectValue:
        obj = super().__new__(cls, values)
        obj.meta_ = meta
        if len(meta.names) != tuple.__len__(obj):
            raise ValueError("an object needs one value per attribute")
        return obj

    def field(self, name: str) -> Any:
        return tuple.__getitem__(self, self.meta_.names.index(name))

    def __repr__(self) -> str:
        return f"{self.meta_.cls.__name__}(" + ", ".join(
            f"{k}={v!r}" for k, v in zip(self.meta_.fields, self, strict=False)) + ")"

    def __reduce__(self):
        return (ObjectValue, (self.meta_, tuple(self)))

    def to_instance(self, items: list) -> Any:
        """A new instance of the class whose data attributes are ``items``."""
        out = object.__new__(self.meta_.cls)
        for k, v in zip(self.meta_.fields, items, strict=False):
            object.__setattr__(out, k, v)
        return out


class Unsupported:
    """An attribute of an object that compiled code cannot hold (a string it only
    prints, a file...): an error if the program reads it."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message

    def __repr__(self) -> str:
        return "<unsupported attribute>"

    def __eq__(self, other: Any) -> bool:  # a signature depends on the message only
        return isinstance(other, Unsupported) and other.message == self.message

    def __hash__(self) -> int:
        return hash(self.message)


def is_object(x: Any) -> bool:
    return type(x) is ObjectValue


class DictValue(tuple):
    """A Python dict of static keys, as an immutable value: the values, in key order.

    Indexing it positionally (``tuple.__getitem__``) is what myc's own structural code
    does; the user's ``d[k]`` goes through ``lookup``.
    """

    def __new__(cls, keys: tuple, values: Any) -> DictValue:
        obj = super().__new__(cls, values)
        obj.keys_ = tuple(keys)
        if len(obj.keys_) != tuple.__len__(obj):
            raise ValueError("a dict needs one value per key")
        return obj

    def position(self, key: Any) -> int:
        """Where ``key``'s value is (an object key by identity)."""
        if type(key) is ObjectValue and key.meta_.origin is not None:
            key = key.meta_.origin
        return self.keys_.index(key)

    def lookup(self, key: Any) -> Any:
        if type(key) is ObjectValue:  # a dict keyed by objects: by identity, as Python
            if key.meta_.origin is None:
                raise MycTypeError(f"a dict is indexed by an object of class "
                                   f"'{key.meta_.cls.__name__}' that was not read from a "
                                   "global or closure: myc looks objects up by identity, "
                                   "and knows it only for those",
                                   hint="key the dict by a name (a str) instead")
            key = key.meta_.origin
        else:
            check_key(key)
        try:
            pos = self.keys_.index(key)
        except ValueError:
            raise MycIndexError(f"key {key!r} is not in the dict (keys: "
                              f"{', '.join(map(repr, self.keys_))})") from None
        return tuple.__getitem__(self, pos)

    def __contains__(self, key: Any) -> bool:
        return key in self.keys_

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in zip(self.keys_, self,
                                                                 strict=True)) + "}"

    def __reduce__(self):
        return (DictValue, (self.keys_, tuple(self)))


def static_key(k: Any) -> bool:
    """Can ``k`` be a dict key in compiled code (a value known when it specializes)?"""
    if isinstance(k, tuple):
        return all(static_key(x) for x in k)
    return k is None or isinstance(k, (str, int, float, bool))


def check_key(k: Any) -> None:
    if not static_key(k):
        raise MycTypeError("a dict key must be known when the program is compiled (a "
                           "str or int constant, or a loop variable over static keys); "
                           "this one is computed from array or float data",
                           hint="use a list indexed by position, or an array")


def is_namedtuple(x: Any) -> bool:
    t = x if isinstance(x, type) else type(x)
    return issubclass(t, tuple) and t is not tuple and hasattr(t, "_fields") and \
        hasattr(t, "_make")


def is_container(x: Any) -> bool:
    """A list, dict or namedtuple value (a tuple subclass that is not a plain tuple)."""
    return isinstance(x, tuple) and type(x) is not tuple


def like(x: Any, items: Any) -> Any:
    """``items`` in the container kind of ``x`` (same class, same keys)."""
    t = type(x)
    if t is tuple or not isinstance(x, tuple):
        return tuple(items)
    if t is ListValue:
        return ListValue(items)
    if t is ObjectValue:
        items = tuple(items)
        if len(items) != len(x):  # a gradient of the data attributes only
            return ObjectValue(x.meta_.data_only(), items)
        return ObjectValue(x.meta_, items)
    if t is DictValue:
        return DictValue(x.keys_, items)
    if is_namedtuple(t):
        return t._make(items)
    return tuple(items)


def leaves(v: Any) -> Iterator[Any]:
    """The leaves of a value made of tuples (lists, dicts and namedtuples are tuples here)."""
    if isinstance(v, tuple):
        for x in v:
            yield from leaves(x)
    else:
        yield v


def leaves_of(values: Any) -> list[Any]:
    """The leaves of a call's arguments, in order, as a list (tuples -- lists, dicts and
    namedtuples here -- flattened): a compiled program's inputs.  A plain loop rather
    than :func:`leaves`' generators: every call of a compiled function walks them."""
    out: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, tuple):
            for x in v:
                walk(x)
        else:
            out.append(v)

    for a in values:
        walk(a)
    return out


def map_leaves(v: Any, f: Callable[[Any], Any]) -> Any:
    """``f`` on each leaf of ``v``, keeping its containers (lists, dicts, namedtuples)."""
    if isinstance(v, tuple):
        return like(v, [map_leaves(x, f) for x in v])
    return f(v)


def kind_of(x: Any) -> str:
    """The Python type name the user knows a value by."""
    t = type(x)
    if t is ListValue:
        return "list"
    if t is DictValue:
        return "dict"
    if is_namedtuple(t):
        return t.__name__
    if t is ObjectValue:
        return x.meta_.cls.__name__
    a = getattr(x, "abstract", None)  # a value known by type only (specialization)
    if a is not None and hasattr(a, "dtype"):
        return "array" if a.shape else {"f": "float", "i": "int", "b": "bool"}.get(
            a.dtype.kind, "scalar")
    if isinstance(x, tuple):
        return "tuple"
    if hasattr(x, "shape") and hasattr(x, "dtype") and getattr(x, "ndim", 0) > 0:
        return "array"
    if x is None:
        return "None"
    return type(x).__name__ if not isinstance(x, (bool, int, float)) else \
        type(x).__name__


def to_python(x: Any, convert_leaf=lambda v: v, objects: bool = True) -> Any:
    """A value leaving compiled code: lists as ``list``, dicts as ``dict``.  With
    ``objects=False`` an object of the user's class is a leaf (``convert_leaf`` decides:
    NumPy run at compile time cannot be handed one)."""
    if isinstance(x, tuple) and (objects or type(x) is not ObjectValue):
        items = [to_python(v, convert_leaf, objects) for v in x]
        t = type(x)
        if t is ListValue:
            return items
        if t is DictValue:
            return dict(zip(x.keys_, items, strict=True))
        if is_namedtuple(t):
            return t._make(items)
        if t is ObjectValue:
            return x.to_instance(items)
        return tuple(items)
    return convert_leaf(x)


def positional(x: Any) -> Any:
    """Plain tuples all the way down: the form reverse-mode sensitivities take."""
    if isinstance(x, tuple):
        return tuple(positional(v) for v in x)
    return x


# ---------------------------------------------------------------- primitives


def _pack(meta: Any, values: tuple) -> Any:
    if meta is ListValue:
        return ListValue(values)
    if isinstance(meta, type) and is_namedtuple(meta):
        return meta._make(values)
    if type(meta) is ObjMeta:
        return ObjectValue(meta, values)
    return DictValue(meta, values)


register("pack", "meta values", _pack,
         doc="A list (``meta`` = ListValue), a namedtuple (``meta`` = its class) or a "
             "dict (``meta`` = the tuple of keys) made of the tuple ``values``.")


def _need_dict(d: Any, what: str) -> DictValue:
    if not isinstance(d, DictValue):
        raise MycTypeError(f"'{kind_of(d)}' object has no attribute '{what}' (myc supports "
                           f".{what}() on dicts)")
    return d


register("dict_keys", "d", lambda d: ListValue(_need_dict(d, "keys").keys_),
         differentiable=False)


register("sorted_keys", "d",
         lambda d: ListValue(tuple(sorted(_need_dict(d, "keys").keys_))),
         differentiable=False,
         doc="A dict's keys sorted (``myc.misc.flatten``'s order, autograd's).")


def _keys_with(d: Any, key: Any) -> tuple:
    keys = _need_dict(d, "keys").keys_
    check_key(key)
    return keys if key in keys else keys + (key,)


register("keys_with", "d key", _keys_with, differentiable=False,
         doc="The keys of dict ``d`` after ``d[key] = ...`` (a new key goes last).")


def _container_kind(x: Any) -> str:
    t = type(x)
    if t is ListValue:
        return "list"
    if t is DictValue:
        return "dict"
    if is_namedtuple(t):
        return "namedtuple"
    if t is ObjectValue:
        return "object"
    if isinstance(x, tuple):
        return "tuple"
    # a list a loop appends to, carried as stacked arrays (``myc.infer.stacked``)
    return getattr(t, "myc_container_kind", "other")


register("container_kind", "x", _container_kind, differentiable=False)


def _instance_of(x: Any, classes: tuple) -> bool:
    """``isinstance(x, classes)``: each of ``classes`` a container kind the frontend
    named (``"list"``, ...) or a user's class, which an object of the user's classes
    (known by its class when the program specializes) is tested against as Python
    does, subclasses included; an array or a number is no user's class."""
    kind = _container_kind(x)
    for c in classes:
        if isinstance(c, str):
            if kind == c:
                return True
        elif type(x) is ObjectValue and issubclass(x.meta_.cls, c):
            return True
    return False


register("instance_of", "x classes", _instance_of, differentiable=False)


def _signature_of(fn: Any) -> Any:
    """How a call binds arguments to function value ``fn`` (a method of an object whose
    class is known only when the program specializes), as ``bind_args`` takes it:
    ``(name, names, npos, has_default, defaults, varargs, varkw, simple)``; ``None`` for a
    function called positionally (a primitive, a graph without a ``def``'s signature).
    A transformed method (``J``/``F`` image) binds as the ``def`` it came from."""
    graph = getattr(fn, "graph", fn)
    flags = getattr(graph, "flags", None)
    if flags is None:
        return None
    sig = flags.get("primal_signature") or flags.get("signature")
    if sig is None:
        return None
    has_default, defaults = [], []
    for name in sig.names:
        d = sig.defaults.get(name)
        # a default computed when the ``def`` ran has no value here: the call must pass it
        plain = d is not None and d.is_constant and not hasattr(d.value, "flags")
        has_default.append(plain)
        defaults.append(d.value if plain else None)
    return (getattr(graph, "name", "function").split(":")[-1], tuple(sig.names),
            sig.n_positional, tuple(has_default), tuple(defaults),
            sig.varargs is not None, sig.varkw is not None, sig.simple)


register("signature_of", "fn", _signature_of, differentiable=False)


def _with_attribute(x: Any, name: str) -> Any:
    """``obj.name = v`` on an object of a user's class, as a new value (``setattr_value``):
    the new object's ``ObjMeta`` and, per position, where its value comes from (a
    position of ``x``, or -1 for the assigned value).  A new attribute goes after the
    data attributes, as CPython's ``__dict__`` adds it; an instance attribute named as
    a method shadows it (Python's lookup), so the method's slot stays for the class."""
    if type(x) is not ObjectValue:
        raise MycTypeError(f"attribute assignment (.{name} = ...) on a value of kind "
                           f"'{kind_of(x)}' is not supported: only objects of your classes "
                           "take new attributes in compiled code")
    meta = x.meta_
    if name in meta.props:
        raise MycTypeError(f"'{meta.cls.__name__}.{name}' is a property: assigning it in "
                           "compiled code is not supported")
    fields = meta.fields if name in meta.fields else meta.fields + (name,)
    new = ObjMeta(meta.cls, fields, meta.methods, meta.props, meta.origin)
    sources = tuple(-1 if f == name else meta.fields.index(f) for f in fields) + tuple(
        range(len(meta.fields), len(meta.names)))
    return new, sources


register("with_attribute", "x name", _with_attribute, differentiable=False)


def _self_returned(fn: Any) -> int:
    """Where a method's write-back twin returns its final ``self`` (1 + its position
    among the parameters it writes back), or 0: a method that does not assign
    attributes of ``self`` returns its result alone (``myc.frontend.objects``)."""
    graph = getattr(fn, "graph", fn)
    flags = getattr(graph, "flags", None)
    return int(flags.get("returns_self", 0)) if flags is not None else 0


register("self_returned", "fn", _self_returned, differentiable=False)

def _field_index(x: Any, name: str) -> int:
    if type(x) is ObjectValue:
        meta = x.meta_
        if name in meta.methods:
            raise MycSyntaxError(f"'{meta.cls.__name__}.{name}' as a value (a bound method) "
                                 "is not supported", hint=f"call it: obj.{name}(...)")
        if name not in meta.names:
            return _no_attribute(x, name)
        pos = meta.names.index(name)
        v = tuple.__getitem__(x, pos)
        if isinstance(v, Unsupported):
            text, _, hint = v.message.partition("|hint|")
            raise MycTypeError(text, hint=hint or None)
        return pos
    if is_namedtuple(x) and name in type(x)._fields:
        return type(x)._fields.index(name)
    if is_namedtuple(x):
        raise MycTypeError(f"'{type(x).__name__}' object has no attribute '{name}'")
    raise MycSyntaxError(f"attribute '.{name}' is not supported (on a value of kind "
                         f"'{kind_of(x)}')",
                       hint="supported: .T .shape .ndim .size .dtype, a namedtuple's fields, and "
                            "the methods .sum .mean .max .min .argmax .argmin .reshape "
                            ".astype .transpose .dot .clip .copy")


register("field_index", "x name", _field_index, differentiable=False)


def _no_attribute(x: ObjectValue, name: str) -> Any:
    meta = x.meta_
    if meta.origin is None and hasattr(meta.cls, name):
        raise MycSyntaxError(
            f"'{meta.cls.__name__}.{name}' of an object passed as an argument: myc reads "
            "the data attributes of an argument and calls its methods, but computes "
            "properties (and class attributes) only of objects it reads from a global or "
            "a closure",
            hint=f"call a method instead (def {name}(self): ...; obj.{name}()), or capture "
                 "the object in a closure (or a global)")
    raise MycTypeError(f"'{meta.cls.__name__}' object has no attribute '{name}'")


def _method_field(x: Any, name: str) -> int:
    if type(x) is ObjectValue and (name in x.meta_.methods or name in x.meta_.fields):
        # (an instance attribute holding a function, ``self.act = np.tanh``, is called
        # as ``self.act(h)``: ``binds_self`` says it takes no ``self``)
        return x.meta_.names.index(name)
    if type(x) is ObjectValue:
        return _no_attribute(x, name)
    raise MycSyntaxError(f"method '.{name}()' is not supported (on a value of kind "
                         f"'{kind_of(x)}')",
                         hint="supported: the methods of arrays, lists and dicts listed in "
                              "docs/numpy.md and docs/python.md, and those of objects of "
                              "your classes")


register("method_field", "x name", _method_field, differentiable=False,
         doc="The position of method ``name`` in an object of a user's class (its graph "
             "is held there, read when the program was parsed).")
def _binds_self(x: Any, name: str) -> bool:
    """Does ``x.name(...)`` pass ``x`` as ``self``: a method of the class, not an instance
    attribute (Python's lookup: the instance's ``__dict__`` first)?"""
    return type(x) is ObjectValue and name not in x.meta_.fields


register("binds_self", "x name", _binds_self, differentiable=False,
         doc="Does ``x.name(...)`` on an object of a user's class pass the object as "
             "``self`` (a method), or not (an attribute holding a function)?")
register("is_object", "x", is_object, differentiable=False,
         doc="Is ``x`` an object of a user's class (known when the program specializes)?")


def _fail(x: Any, message: str) -> Any:
    message = message.replace("{kind}", x if isinstance(x, str) else kind_of(x))
    text, _, hint = message.partition("|hint|")
    raise MycTypeError(text, hint=hint or None)


def _undefined_name(name: str) -> Any:
    raise MycNameError(f"name '{name}' is not defined")


register("undefined_name", "name", _undefined_name, differentiable=False,
         doc="A name no scope defines, read on a line that runs (Python's NameError).")


def _refused(x: Any, message: str) -> Any:
    text, _, hint = message.partition("|hint|")
    raise MycSyntaxError(text, hint=hint or None)


register("refused", "x message", _refused, differentiable=False,
         doc="Raise ``message`` as a ``MycSyntaxError`` when the line runs (an unsupported "
             "method on a value, in a branch specialization may remove).")


register("fail", "x message", _fail, differentiable=False,
         doc="Raise ``message`` (``{kind}``: the kind of ``x``): a library function's "
             "refusal, at the user's line.")


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, DictValue):
        return item in container.keys_
    return item in container


register("contains", "container item", _contains, differentiable=False)


_SINGLETONS = (None, True, False)


def _is(a: Any, b: Any) -> bool:
    """Python's ``a is b`` where one side is ``None``, ``True`` or ``False`` (the idioms
    ``mask is None``, ``flag is not True``).  A value known only by its type (an array, a
    number computed from data) is never ``None``; whether it *is* ``True`` depends on its
    Python type, which compiled code does not keep, so that is refused."""
    if not any(x is c for x in (a, b) for c in _SINGLETONS):
        raise MycTypeError(f"'is' between a {kind_of(a)} and a {kind_of(b)}: myc compares "
                           "identity only with None, True or False",
                           hint="use == to compare values")
    for x, y in ((a, b), (b, a)):
        if x is None:
            return y is None
    for x in (a, b):
        if getattr(x, "abstract", None) is not None:
            raise MycTypeError(f"'is True'/'is False' on a {kind_of(x)} computed from data: "
                               "its Python type (bool or np.bool_) is not kept",
                               hint="use == True, or the value itself as the condition")
    return a is b


register("is_", "a b", _is, differentiable=False,
         doc="Python's ``a is b`` with ``None``, ``True`` or ``False`` on one side, known "
             "when the program specializes.")

class ConstSet(frozenset):
    """A set of constants read from a global (``HOLES = {5, 7}``): ``in`` and ``len`` as a
    frozenset's; iterated in the order CPython iterated the user's set when it was read."""

    order: tuple = ()


def const_set(value: Any) -> ConstSet:
    out = ConstSet(value)
    out.order = tuple(value)
    return out


def _iter_seq(x: Any) -> Any:
    if isinstance(x, ConstSet):
        return x.order
    return ListValue(x.keys_) if isinstance(x, DictValue) else x


register("iter_seq", "x", _iter_seq,
         doc="What ``for v in x`` runs over: a dict's keys, any other sequence itself.")

# evaluated during specialization on structures whose leaves may be symbolic: they only
# read the structure (``myc.infer.trace``)
STRUCTURAL = frozenset(["pack", "dict_keys", "sorted_keys", "keys_with", "container_kind",
                        "instance_of", "signature_of", "with_attribute", "self_returned",
                        "field_index", "iter_seq", "method_field", "binds_self", "is_object", "is_",
                        "j_lift", "f_lift",  # (registered by myc.ad.reverse, .forward)
                        "transform_value"])  # (by myc.frontend.transform_value)


def container_meta(x: Any) -> Any:
    """What ``pack`` needs besides the values to rebuild container ``x``."""
    t = type(x)
    if t is DictValue:
        return x.keys_
    if t is ObjectValue:
        return x.meta_
    return t
