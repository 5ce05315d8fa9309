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

    def lookup(self, key: Any) -> Any:
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


def to_python(x: Any, convert_leaf=lambda v: v) -> Any:
    """A value leaving compiled code: lists as ``list``, dicts as ``dict``."""
    if isinstance(x, tuple):
        items = [to_python(v, convert_leaf) for v in x]
        t = type(x)
        if t is ListValue:
            return items
        if t is DictValue:
            return dict(zip(x.keys_, items, strict=True))
        if is_namedtuple(t):
            return t._make(items)
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
    if isinstance(x, tuple):
        return "tuple"
    return "other"


register("container_kind", "x", _container_kind, differentiable=False)


def _field_index(x: Any, name: str) -> int:
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

def _iter_seq(x: Any) -> Any:
    return ListValue(x.keys_) if isinstance(x, DictValue) else x


register("iter_seq", "x", _iter_seq,
         doc="What ``for v in x`` runs over: a dict's keys, any other sequence itself.")

# evaluated during specialization on structures whose leaves may be symbolic: they only
# read the structure (``myc.infer.trace``)
STRUCTURAL = frozenset(["pack", "dict_keys", "sorted_keys", "keys_with", "container_kind",
                        "field_index", "iter_seq"])


def container_meta(x: Any) -> Any:
    """What ``pack`` needs besides the values to rebuild container ``x``."""
    t = type(x)
    if t is DictValue:
        return x.keys_
    return t
